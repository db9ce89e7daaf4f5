"""Memory-tier traffic: edges and bandwidth, occupancy, the diagram figure and widget."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from ascend_sim.hw.chips import Ascend910B
from ascend_sim.viz import TrafficView, as_table, occupancy, traffic_edges, traffic_figure
from ascend_sim.viz.synthetic import FakeTraceBuilder, add_trace, matmul_trace


def test_add_edges_bytes_and_bandwidth():
    chip = Ascend910B()
    result = add_trace(cores=2, tiles=4, tile_bytes=256, chip=chip)
    t = as_table(result)
    edges = {e.key: e for e in traffic_edges(t)}
    assert set(edges) == {"HBM->L2", "L2->HBM", "GM->UB", "UB->GM"}
    assert edges["GM->UB"].nbytes == 2 * 4 * 2 * 256
    assert edges["UB->GM"].nbytes == 2 * 4 * 256
    assert edges["HBM->L2"].nbytes == edges["GM->UB"].nbytes
    seconds = t.cycles / (chip.clock_ghz * 1e9)
    assert edges["GM->UB"].gbps == pytest.approx(4096 / seconds / 1e9)
    # peak: two cores' MTE2 rate, under the chip's HBM limit
    assert edges["GM->UB"].peak_gbps == pytest.approx(2 * chip.gm_read_bytes_per_cycle * chip.clock_ghz)
    assert 0 < edges["GM->UB"].utilisation < 1


def test_peaks_can_be_passed_in():
    t = as_table(add_trace(cores=1, tiles=2, chip=Ascend910B()))
    e = {e.key: e for e in traffic_edges(t, peaks={"GM->UB": 100.0})}
    assert e["GM->UB"].peak_gbps == 100.0


def test_cube_edges_and_flops():
    chip = Ascend910B()
    t = as_table(matmul_trace(k_steps=2, chip=chip))
    edges = {e.key: e for e in traffic_edges(t)}
    assert {"GM->L1", "L1->L0A", "L1->L0B", "L0A->L0C", "L0C->GM"} <= set(edges)
    mm = edges["L0A->L0C"]
    assert mm.flops == 2 * 2 * 64 ** 3
    assert mm.tflops is not None and 0 < mm.utilisation < 1


def test_occupancy_estimate_from_record_bytes():
    t = as_table(add_trace(cores=1, tiles=3, buffer_num=1, tile_bytes=256, chip=Ascend910B()))
    (ub,) = occupancy(t)
    assert ub.tier == "UB" and ub.source == "estimate"
    assert ub.capacity == 192 * 1024
    assert ub.peak == 512           # x and y tiles live until Add reads them
    assert ub.live[-1] == 0


def test_occupancy_exact_with_regions_and_allocations():
    b = FakeTraceBuilder()
    x = b.issue(0, "MTE2", "DataCopy", 100, nbytes=256, src="GM", dst="UB")
    v = b.issue(0, "V", "Add", 20, [x], nbytes=512, src="UB", dst="UB")
    o = b.issue(0, "MTE3", "DataCopy", 100, [v], nbytes=256, src="UB", dst="GM")
    recs = b.records
    recs[x].writes, recs[x].reads = [("UB", 0, 256)], []
    recs[v].writes, recs[v].reads = [("UB", 256, 512)], [("UB", 0, 256)]
    recs[o].writes, recs[o].reads = [], [("UB", 256, 512)]
    result = b.result(Ascend910B())
    result.buffers = {(0, "AIV"): {"UB": [("inX", 0, 256), ("outZ", 256, 256)]}}
    t = as_table(result)
    (ub,) = occupancy(t, result.buffers)
    assert ub.source == "regions" and ub.allocated == 512
    # x lives from its copy's start to Add's end, z from Add's start to the copy-out's end
    assert ub.times.tolist() == [recs[x].start, recs[v].start, recs[v].end, recs[o].end]
    assert ub.live.tolist() == [256, 512, 256, 0]


def test_traffic_figure_draws_tiers_arrows_labels_and_occupancy():
    result = matmul_trace(k_steps=2, chip=Ascend910B())
    fig = traffic_figure(result)
    diagram = fig.axes[0]
    tiers = {p.get_gid() for p in diagram.patches if (p.get_gid() or "").startswith("tier:")}
    assert tiers == {f"tier:{k}" for k in ("HBM", "L2", "L1", "UB", "L0A", "L0B", "L0C")}
    edges = {ln.get_gid() for ln in diagram.lines}
    assert {"edge:GM->L1", "edge:L1->L0A", "edge:L0A->L0C", "edge:L0C->GM"} <= edges
    labels = {x.get_gid(): x.get_text() for x in diagram.texts if x.get_gid()}
    assert "GB/s" in labels["label:GM->L1"] and " of " in labels["label:GM->L1"]
    assert "TFLOPS" in labels["label:L0A->L0C"]
    titles = [ax.get_title(loc="left") for ax in fig.axes[1:]]
    assert [x.split(":")[0] for x in titles] == ["L1", "L0A", "L0B", "L0C"]
    assert all("of " in x for x in titles)


def test_traffic_widget_payload_and_fallback():
    w = TrafficView(add_trace(cores=3, tiles=2, chip=Ascend910B()))
    d = w.data
    assert w.core == 0 and d["units"] == [0, 1, 2]
    assert {e["key"] for e in d["edges"]} == {"HBM->L2", "L2->HBM", "GM->UB", "UB->GM"}
    assert [n["id"] for n in d["nodes"] if n["used"]] == ["HBM", "L2", "UB"]
    assert len(d["occupancy"]) == 3
    data, _ = w._repr_mimebundle_()
    assert data["text/plain"] == "TrafficView(4 links)" and "image/png" in data


def test_unknown_clock_still_counts_bytes():
    b = FakeTraceBuilder()
    b.issue(0, "MTE2", "DataCopy", 10, nbytes=64, src="GM", dst="UB")
    t = as_table(SimpleNamespace(records=b.records))
    (e,) = [e for e in traffic_edges(t) if e.key == "GM->UB"]
    assert e.nbytes == 64 and e.gbps is None and e.peak_gbps is None


def test_an_accumulating_mmad_holds_its_l0c_bytes_once():
    """Live bytes never exceed what InitBuffer reserved: an in-place update is not counted twice."""
    from ascend_sim.viz.demo import launch_matmul
    from ascend_sim.viz.occupancy import occupancy
    from ascend_sim.trace.table import as_table
    r = launch_matmul()
    occ = occupancy(as_table(r), r.buffers)
    assert {o.tier for o in occ} >= {"L1", "L0A", "L0B", "L0C"}
    for o in occ:
        assert o.source == "regions" and 0 < o.peak <= o.allocated, (o.tier, o.unit, o.peak, o.allocated)
