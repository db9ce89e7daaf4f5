"""The Module 3 figures: per-device timeline and link traffic on the topology, read back from their artists."""
from __future__ import annotations

import numpy as np

from ascend_sim.cluster import HcclComm, atlas_800t_a2
from ascend_sim.course.cluster_view import cluster_timeline_figure, link_traffic, link_traffic_figure


def _comm():
    comm = HcclComm(atlas_800t_a2(2, npus_per_server=4))
    comm.timeline.compute(0, 5.0, "backward")
    comm.AllReduce([np.ones(4096, np.float32) for _ in range(8)])
    return comm


def test_link_traffic_sums_the_send_events_per_pair():
    comm = _comm()
    traffic = link_traffic(comm.timeline)
    assert sum(traffic.values()) == sum(e.nbytes for e in comm.timeline.events if e.kind == "send")
    assert (0, 4) in traffic and (0, 1) in traffic          # RoCE between the servers, HCCS inside one
    assert all(a < b for a, b in traffic)


def test_timeline_figure_draws_every_kind_on_every_device():
    fig = cluster_timeline_figure(_comm().timeline)
    ax = fig.axes[0]
    gids = {c.get_gid() for c in ax.collections}
    assert {"bars:compute", "bars:send", "bars:recv", "bars:reduce"} <= gids
    assert len(ax.get_yticks()) == 8
    assert fig._repr_png_()[:4] == b"\x89PNG"


def test_link_figure_widths_follow_the_bytes():
    comm = _comm()
    traffic = link_traffic(comm.timeline)
    lines = {ln.get_gid(): ln.get_linewidth() for ln in link_traffic_figure(comm.timeline).axes[0].lines}
    assert set(lines) == {f"link:{a}-{b}" for a, b in traffic}
    big, small = max(traffic, key=traffic.get), min(traffic, key=traffic.get)
    if traffic[big] > traffic[small]:
        assert lines[f"link:{big[0]}-{big[1]}"] > lines[f"link:{small[0]}-{small[1]}"]


# --- the collective explorer -----------------------------------------------------------------------------
def test_collective_run_matches_hccl_estimate():
    from ascend_sim.cluster.hccl import HcclComm
    from ascend_sim.cluster.topology import atlas_800t_a2
    from ascend_sim.course.cluster_view import collective_run

    t, r = collective_run(2, "AllReduce", 2**20)
    est = HcclComm(atlas_800t_a2(servers=2)).estimate("AllReduce", 2**20 // 4, "fp32")
    assert (r.algo, r.time_us, r.steps) == (est.algo, est.time_us, est.steps)
    assert max(t.clock_us) == r.time_us and r.busbw_GBps > 0


def test_explorer_follows_its_controls_and_explains_refusals():
    from ascend_sim.course.cluster_view import collective_explorer

    box = collective_explorer()
    (op, srv), (algo, size) = box.children[0].children, box.children[1].children
    summary, out = box.children[2], box.children[3]
    assert "AllReduce" in summary.value and "8 NPUs" in summary.value
    first = summary.value
    srv.value = 2                                   # 16 NPUs over RoCE: HCCL picks the hierarchical algorithm
    assert "16 NPUs" in summary.value and "hierarchical" in summary.value.lower() and summary.value != first
    size.value = 4 ** 13
    big = float(summary.value.split("steps, ")[1].split(" us")[0].replace(",", ""))
    size.value = 4 ** 6
    small = float(summary.value.split("steps, ")[1].split(" us")[0].replace(",", ""))
    assert big > 20 * small                         # 64 MB takes far longer than 4 KB (4 KB is latency-bound)
    algo.value = "ring"
    assert "ring" in summary.value
    timeline, traffic = box.figures                 # the timeline and the link-traffic figures of the ring
    gids = {a.get_gid() for a in timeline.axes[0].get_children()}
    assert {"bars:send", "bars:recv"} <= gids
    assert any(str(a.get_gid()).startswith("link:") for a in traffic.axes[0].get_children())


def test_explorer_output_carries_a_png_of_both_figures_for_exports():
    """HTML/PDF exports show the PNG in the widget's output: it stacks the timeline over the link traffic."""
    import base64
    import io

    from matplotlib.image import imread

    from ascend_sim.course.cluster_view import collective_explorer
    from ascend_sim.viz.static import figure_png

    box = collective_explorer()
    data, _ = box._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    png = imread(io.BytesIO(base64.b64decode(data["image/png"])), format="png")
    heights = [imread(io.BytesIO(figure_png(f)), format="png").shape[0] for f in box.figures]
    assert len(heights) == 2 and png.shape[0] == sum(heights)
    assert data["text/plain"].startswith("CollectiveExplorer(")
