"""The views on real simulator launches (add_custom, cube matmul)."""
from __future__ import annotations

import pytest

from ascend_sim.viz import (CompareView, TimelineView, TrafficView, WhatIfExplorer, as_table, compare,
                            timeline_figure, traffic_edges, traffic_figure)

demo = pytest.importorskip("ascend_sim.viz.demo")


@pytest.fixture(scope="module")
def adds():
    return demo.launch_add(BUFFER_NUM=1), demo.launch_add(BUFFER_NUM=2)


def test_real_trace_maps_onto_the_table(adds):
    single, double = adds
    t = as_table(double)
    assert len(t) == len(double.trace.records)
    assert t.label == "add_custom" and t.cycles == double.cycles
    assert t.clock_ghz == double.chip.clock_ghz
    assert t.cores == list(range(8)) and t.pipes == ["MTE2", "V", "MTE3"]
    assert t.line[0].startswith("add_custom.py:") and "DataCopy" in t.source[0]


def test_double_buffering_overlaps_and_is_faster(adds):
    cmp = compare(*adds, labels=("BUFFER_NUM=1", "BUFFER_NUM=2"))
    assert cmp.speedup > 1.1
    d = {x.pipe: x for x in cmp.pipes}
    assert d["MTE2"].after.ratio > d["MTE2"].before.ratio
    view = CompareView(*adds, labels=("BUFFER_NUM=1", "BUFFER_NUM=2"))
    assert len(view.timeline.data["groups"]) == 2


def test_add_traffic_matches_the_bytes_moved(adds):
    _, double = adds
    edges = {e.key: e for e in traffic_edges(as_table(double))}
    n = demo.ADD_LENGTH * 2                  # every half value once, 2 bytes each
    assert edges["GM->UB"].nbytes == 2 * n and edges["UB->GM"].nbytes == n
    occ = TrafficView(double).traffic.occupancy
    ub = [o for o in occ if o.unit == 0][0]
    assert ub.allocated == 3 * 2 * 128 * 2   # three queues x BUFFER_NUM x tile bytes
    assert 0 < ub.peak <= ub.allocated


def test_matmul_views():
    mm = demo.launch_matmul()
    t = as_table(mm)
    assert {"MTE2", "MTE1", "M", "FIX"} <= set(t.pipes)
    ax = timeline_figure(mm).axes[0]
    assert len(ax.get_yticklabels()) == len(t.cores) * len(t.pipes)
    fig = traffic_figure(mm)
    assert any(x.get_gid() == "label:L0A->L0C" for x in fig.axes[0].texts)
    w = TimelineView(mm)
    assert w.data["groups"][0]["n"] == len(mm.trace.records)


def test_explorer_on_the_add_kernel():
    e = WhatIfExplorer(demo.launch_add, {"tile_length": [64, 128, 256], "BUFFER_NUM": [1, 2],
                                         "blocks": (1, 48)}, values={"tile_length": 128, "blocks": 8})
    first = e.result.cycles
    e.set(BUFFER_NUM=2)
    assert e.result.cycles < first and e.error is None
    e.set(tile_length=256)
    assert e.timeline.data["groups"][0]["n"] == len(e.result.trace.records)


def test_the_demo_add_keeps_the_problem_fixed_so_more_blocks_is_faster_until_waves():
    from ascend_sim import ArgumentError
    from ascend_sim.viz.summary import placement
    from ascend_sim.trace.table import as_table
    cycles = {b: demo.launch_add(tile_length=512, blocks=b).cycles for b in (8, 16, 48)}
    assert cycles[8] > cycles[16] > cycles[48]                   # the same work on more cores
    one_core = demo.launch_add(tile_length=512, blocks=8, chip="Ascend310B")
    assert "8 blocks on 1 physical core (8 waves)" in placement(as_table(one_core))
    with pytest.raises(ArgumentError, match="do not divide evenly"):
        demo.launch_add(blocks=7)
