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
