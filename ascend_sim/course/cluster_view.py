"""Figures of a simulated cluster for Module 3: the per-device timeline and the link traffic on the topology.

``cluster_timeline_figure(timeline)`` draws one row per NPU with its compute, send, receive and reduce intervals
(计算/通信时间线), so overlap and waiting are visible. ``link_traffic_figure(timeline)`` draws the NPUs grouped by
HCCS domain and server, and every link that carried data with a width proportional to its bytes (链路流量), HCCS
and RoCE in their own colours. Artists carry a ``gid`` ("bars:<kind>", "link:<a>-<b>") so tests can read them back.
They live in the course layer because ``viz`` sits below ``cluster`` in the package's layers.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ascend_sim.cluster.hccl import CollectiveResult, HcclComm, dtype_of, replay
from ascend_sim.cluster.timeline import Timeline
from ascend_sim.cluster.topology import atlas_800t_a2
from ascend_sim.viz.static import new_figure

KINDS = ("compute", "send", "recv", "reduce")
COLORS = {"compute": "#4c72b0", "send": "#dd8452", "recv": "#55a868", "reduce": "#c44e52"}
LANE = {"compute": (0.55, 0.4), "send": (0.3, 0.22), "recv": (0.05, 0.22), "reduce": (0.3, 0.22)}
LINK_COLORS = {"HCCS": "#4c72b0", "RoCE": "#c44e52"}


def link_traffic(timeline: Timeline) -> dict[tuple[int, int], int]:
    """Bytes sent over each device pair (the lower rank first), summed over the timeline's send events."""
    out: dict[tuple[int, int], int] = {}
    for e in timeline.events:
        if e.kind == "send" and e.peer is not None:
            key = (min(e.device, e.peer), max(e.device, e.peer))
            out[key] = out.get(key, 0) + e.nbytes
    return out


def cluster_timeline_figure(timeline: Timeline, title: str = "") -> Figure:
    """One row per device: compute (top lane), send and reduce (middle), receive (bottom), in microseconds."""
    devices = timeline.cluster.world_size
    fig = new_figure(9, 0.45 * devices + 1.2)
    ax = fig.add_subplot()
    for kind in KINDS:
        bars = {}
        for e in timeline.events:
            if e.kind == kind:
                bars.setdefault(e.device, []).append((e.start_us, max(e.end_us - e.start_us, 1e-9)))
        for dev, spans in bars.items():
            y0, h = LANE[kind]
            ax.broken_barh(spans, (dev + y0 - 0.5, h), facecolors=COLORS[kind], gid=f"bars:{kind}")
    ax.set_yticks(range(devices), [f"NPU {d}" for d in range(devices)])
    ax.set_ylim(devices - 0.5, -0.5)
    ax.set_xlabel("time (us)")
    ax.legend(handles=[Patch(color=COLORS[k], label=k) for k in KINDS], loc="upper center", fontsize=8, ncols=4,
              bbox_to_anchor=(0.5, -0.12))
    ax.set_title(title or f"{timeline.cluster.name}: per-device timeline")
    return fig


def _positions(timeline: Timeline) -> dict[int, tuple[float, float]]:
    """Devices on a circle per HCCS domain, the domains side by side."""
    pos = {}
    for k, dom in enumerate(timeline.cluster.domains):
        for i, dev in enumerate(dom):
            a = 2 * math.pi * i / len(dom)
            pos[dev] = (3.0 * k + math.cos(a), math.sin(a))
    return pos


def link_traffic_figure(timeline: Timeline, title: str = "") -> Figure:
    """The topology with every used link drawn with a width proportional to the bytes it carried."""
    traffic = link_traffic(timeline)
    pos = _positions(timeline)
    fig = new_figure(max(4.0, 3.0 * len(timeline.cluster.domains)), 3.6)
    ax = fig.add_subplot()
    top = max(traffic.values(), default=1)
    for (a, b), n in sorted(traffic.items()):
        link = timeline.cluster.link(a, b)
        kind = "RoCE" if link.shared_port else "HCCS"
        (xa, ya), (xb, yb) = pos[a], pos[b]
        t = np.linspace(0, 1, 30)
        bulge = 0.0 if kind == "HCCS" else 0.9 * (1 if a % 2 == 0 else -1) * np.sin(np.pi * t)  # arcs clear the rings
        ax.plot(xa + (xb - xa) * t, ya + (yb - ya) * t + bulge, color=LINK_COLORS[kind], lw=0.5 + 5.5 * n / top, alpha=0.7,
                gid=f"link:{a}-{b}")
    xy = np.array([pos[d] for d in sorted(pos)])
    ax.scatter(xy[:, 0], xy[:, 1], s=260, color="white", edgecolors="black", zorder=3)
    for d, (x, y) in pos.items():
        ax.text(x, y, str(d), ha="center", va="center", fontsize=8, zorder=4)
    ax.legend(handles=[Patch(color=c, label=k) for k, c in LINK_COLORS.items()], loc="lower right", fontsize=8)
    ax.set_title(title or f"link traffic, max {top / 2**20:.2f} MB on one link")
    ax.set_axis_off()
    ax.set_aspect("equal")
    return fig


# --- an explorer over one collective ----------------------------------------------------------------------
EXPLORER_OPS = ("AllReduce", "ReduceScatter", "AllGather", "Broadcast", "AlltoAll")
EXPLORER_ALGOS = ("HCCL's choice", "mesh", "ring", "rhd", "hierarchical")
EXPLORER_SIZES = tuple(4 ** k for k in range(5, 14))          # bytes per rank: 1 KB .. 64 MB


def collective_run(servers: int, op: str, nbytes: int, algo: str | None = None, dtype: str = "fp32"):
    """Plan one collective on ``servers`` Atlas 800T A2 servers and replay it on idle devices (no data).

    Returns (timeline, CollectiveResult): the same plan, times and algbw/busbw that ``HcclComm`` reports.
    """
    comm = HcclComm(atlas_800t_a2(servers=servers))
    d = dtype_of(dtype)
    count = max(1, nbytes // d.itemsize)
    plan = comm.plan(op, count, d, algo)
    t = Timeline(comm.cluster)
    replay(plan, d.itemsize, t)
    return t, CollectiveResult(op, plan.algo, comm.rank_size, count, d, max(t.clock_us), len(plan.steps))


def _size_label(n: int) -> str:
    return f"{n // 2**20} MB" if n >= 2**20 else f"{n // 2**10} KB"


@functools.lru_cache(maxsize=None)
def _explorer_box_class():
    """A VBox whose output also holds a PNG of the figures on show (what HTML/PDF exports display)."""
    import ipywidgets as w

    from ascend_sim.viz import StaticFallbackMixin
    from ascend_sim.viz.static import figure_png, stack_pngs

    class CollectiveExplorerBox(StaticFallbackMixin, w.VBox):
        figures: list = []

        def static_png(self) -> bytes:
            return stack_pngs([figure_png(f) for f in self.figures])

        def __repr__(self) -> str:
            return "CollectiveExplorer(" + ", ".join(f.axes[0].get_title() for f in self.figures if f.axes) + ")"

    return CollectiveExplorerBox


def collective_explorer(servers=(1, 2, 4)):
    """A widget: choose a collective, the server count, the algorithm (or HCCL's choice) and the bytes per rank;
    see the algorithm chosen, its time, algbw and busbw, the per-device timeline and the traffic on every link."""
    import ipywidgets as w
    from IPython.display import display

    _ExplorerBox = _explorer_box_class()
    op = w.Dropdown(options=EXPLORER_OPS, value="AllReduce", description="collective")
    srv = w.Dropdown(options=list(servers), value=servers[0], description="servers")
    algo = w.Dropdown(options=EXPLORER_ALGOS, value=EXPLORER_ALGOS[0], description="algorithm")
    size = w.SelectionSlider(options=[(_size_label(n), n) for n in EXPLORER_SIZES], value=2**20,
                             description="per rank", continuous_update=False)
    summary = w.HTML()
    out = w.Output()

    def update(*_):
        choice = None if algo.value == EXPLORER_ALGOS[0] else algo.value
        try:
            t, r = collective_run(srv.value, op.value, size.value, choice)
        except Exception as exc:        # an algorithm this topology cannot run: say why, keep the widget
            summary.value = f"<b>{type(exc).__name__}</b>: {exc}"
            out.clear_output()
            return
        summary.value = (f"<b>{r.op}</b> of {_size_label(size.value)} per rank on {r.ranks} NPUs: algorithm "
                         f"<b>{r.algo}</b>, {r.steps} steps, {r.time_us:,.1f} us; algbw {r.algbw_GBps:,.1f} GB/s, "
                         f"busbw {r.busbw_GBps:,.1f} GB/s")
        box.figures = [cluster_timeline_figure(t, f"{r.op}, {r.algo}"), link_traffic_figure(t)]
        with out:
            out.clear_output(wait=True)
            for fig in box.figures:
                display(fig)

    box = _ExplorerBox([w.HBox([op, srv]), w.HBox([algo, size]), summary, out])
    box.update = update                 # for tests and notebooks that drive it
    box.figures = []                    # the figures on show
    for control in (op, srv, algo, size):
        control.observe(update, names="value")
    update()
    return box
