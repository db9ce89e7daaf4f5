"""The memory-tier view: a diagram of traffic between tiers and occupancy per tier.

Python lays out the diagram (nodes, arrow paths, labels) once; the browser
(traffic.js) and matplotlib (:func:`traffic_figure`) only draw it, so both
show the same picture.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import anywidget
import numpy as np
import traitlets
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Polygon
from matplotlib.ticker import MultipleLocator

from ascend_sim.viz._widget import CSS, StaticFallbackMixin, esm
from ascend_sim.viz.lod import coarsen
from ascend_sim.viz.occupancy import Occupancy, occupancy
from ascend_sim.viz.static import new_figure
from ascend_sim.viz.style import MARKS, format_bytes
from ascend_sim.viz.traffic import CUBE_EDGE, Edge, traffic_edges
from ascend_sim.trace.table import TraceTable, as_table

LOD_RECORDS = 20_000    # records up to which occupancy is exact (from every record's regions)
#: Diagram canvas and node centres (px); boxes are NODE_W x NODE_H.
WIDTH, HEIGHT = 800, 360
NODE_W, NODE_H = 84, 34
NODES: dict[str, tuple[float, float, str]] = {
    "HBM": (70, 40, "GM (HBM)"),
    "L2": (70, 190, "L2 cache"),
    "L1": (330, 110, "L1"),
    "UB": (330, 300, "UB"),
    "L0A": (520, 40, "L0A"),
    "L0B": (680, 40, "L0B"),
    "L0C": (600, 210, "L0C"),
}
#: Links drawn along a bent path instead of a straight line (interior points).
_BENDS: dict[tuple[str, str], list[tuple[float, float]]] = {
    ("L0C", "L2"): [(600, 345), (18, 345), (18, 190)],
}
#: Hand-placed label positions (left edge, centre line) so labels never overlap.
_LABEL_AT: dict[tuple[str, str], tuple[float, float]] = {
    ("HBM", "L2"): (88, 92), ("L2", "HBM"): (88, 124),
    ("L2", "L1"): (190, 176),
    ("L2", "UB"): (60, 262), ("UB", "L2"): (60, 292),
    ("L1", "L0A"): (330, 42), ("L1", "L0B"): (396, 106),
    ("L0A", "L0C"): (672, 128), ("L0B", "L0C"): (672, 128),
    ("L0C", "L2"): (300, 332), ("L0C", "L1"): (450, 182),
    ("UB", "L1"): (346, 190), ("L1", "UB"): (346, 222),
}
#: Fill of a used tier's box, light in both themes: its label is always :data:`NODE_TEXT` on it.
_NODE_COLOR = {"HBM": "#dfe7f1", "L2": "#dfe7f1", "L1": "#f3e6d3", "UB": "#dcefe6",
               "L0A": "#f6dcd2", "L0B": "#f6dcd2", "L0C": "#f6dcd2"}
NODE_TEXT = "#111111"


@dataclass(frozen=True)
class DrawnEdge:
    """One link ready to draw: polylines (several for the cube), width, label."""

    edge: Edge
    paths: list[list[tuple[float, float]]]
    width: float
    label: tuple[str, str]
    at: tuple[float, float]

    @property
    def head(self) -> float:
        """Arrowhead length in diagram units."""
        return round(6 + 1.5 * self.width, 1)

    def lines_and_heads(self) -> tuple[list[list[tuple[float, float]]], list[list[tuple[float, float]]]]:
        """Each path shortened so its arrowhead covers the line's end, and the arrowhead triangles."""
        lines, heads = [], []
        for pts in self.paths:
            (x0, y0), (x1, y1) = pts[-2], pts[-1]
            ang = math.atan2(y1 - y0, x1 - x0)
            k, back = self.head, self.head * 0.7
            end = (round(x1 - back * math.cos(ang), 1), round(y1 - back * math.sin(ang), 1))
            lines.append([*pts[:-1], end])
            heads.append([(x1, y1)] + [(round(x1 - k * math.cos(ang + da), 1), round(y1 - k * math.sin(ang + da), 1))
                                       for da in (-0.45, 0.45)])
        return lines, heads


def _node(tier: str) -> str:
    return "L2" if tier == "GM" else tier


def _clip(center: tuple[float, float], toward: tuple[float, float]) -> tuple[float, float]:
    """Where the segment from a box centre toward a point leaves the box."""
    (cx, cy), (tx, ty) = center, toward
    dx, dy = tx - cx, ty - cy
    if dx == 0 and dy == 0:
        return center
    s = min((NODE_W / 2 + 3) / abs(dx) if dx else math.inf, (NODE_H / 2 + 3) / abs(dy) if dy else math.inf)
    return (cx + dx * s, cy + dy * s)


def _path(a: str, b: str, shift: float) -> list[tuple[float, float]]:
    pa, pb = NODES[a][:2], NODES[b][:2]
    mid = _BENDS.get((a, b), [])
    pts = [pa, *mid, pb]
    start = _clip(pa, pts[1])
    end = _clip(pb, pts[-2])
    pts = [start, *mid, end]
    if shift and not mid:
        (x0, y0), (x1, y1) = pts[0], pts[-1]
        L = math.hypot(x1 - x0, y1 - y0) or 1.0
        nx, ny = -(y1 - y0) / L * shift, (x1 - x0) / L * shift
        pts = [(x + nx, y + ny) for x, y in pts]
    return [(round(x, 1), round(y, 1)) for x, y in pts]


def _midpoint(p: list[tuple[float, float]]) -> tuple[float, float]:
    """A label spot beside the middle of a path's longest segment."""
    seg = max(range(len(p) - 1), key=lambda i: math.dist(p[i], p[i + 1]))
    return (round((p[seg][0] + p[seg + 1][0]) / 2 + 8, 1), round((p[seg][1] + p[seg + 1][1]) / 2, 1))


def _label(e: Edge) -> tuple[str, str]:
    name = "Mmad → L0C" if (e.src, e.dst) == CUBE_EDGE else f"{e.src} → {e.dst}"
    first = f"{name}  {format_bytes(e.nbytes)}"
    if e.tflops is not None:
        peak = f" of {e.peak_tflops:,.0f}" if e.peak_tflops else ""
        pct = f" ({e.utilisation:.0%})" if e.utilisation is not None else ""
        return first, f"{e.tflops:.2f}{peak} TFLOPS{pct}"
    if e.gbps is None:
        return first, f"{e.count} transfers"
    peak = f" of {e.peak_gbps:,.0f}" if e.peak_gbps else ""
    pct = f" ({e.utilisation:.0%})" if e.utilisation is not None else ""
    return first, f"{e.gbps:,.1f}{peak} GB/s{pct}"


def layout_edges(edges: list[Edge]) -> list[DrawnEdge]:
    """Geometry of every link: arrows sized by bytes (square root), twin links side by side."""
    biggest = max((e.nbytes for e in edges), default=1) or 1
    keys = {(_node(e.src), _node(e.dst)) for e in edges}
    out = []
    for e in edges:
        a, b = _node(e.src), _node(e.dst)
        if a == b or a not in NODES or b not in NODES:
            continue
        shift = 7.0 if (b, a) in keys else 0.0
        if (e.src, e.dst) == CUBE_EDGE:
            paths = [_path("L0A", "L0C", 0.0), _path("L0B", "L0C", 0.0)]
        else:
            paths = [_path(a, b, shift)]
        at = _LABEL_AT.get((a, b)) or _midpoint(paths[0])
        out.append(DrawnEdge(e, paths, round(1.5 + 9.0 * math.sqrt(e.nbytes / biggest), 2), _label(e), at))
    return out


def _occ_payload(o: Occupancy, names: dict[int, str]) -> dict[str, Any]:
    return {"tier": o.tier, "unit": o.unit, "name": names.get(o.unit, str(o.unit)),
            "t": np.round(o.times, 2).tolist(), "v": o.live.tolist(), "capacity": o.capacity,
            "allocated": o.allocated, "peak": o.peak, "source": o.source}


def _buffers_of(trace: Any) -> Any:
    return getattr(trace, "buffers", None)


@dataclass
class TrafficData:
    """Everything the traffic view shows, computed once from a trace."""

    table: TraceTable
    edges: list[Edge]
    drawn: list[DrawnEdge]
    occupancy: list[Occupancy]
    l2: dict | None = None          # a LaunchResult's L2 totals (engine/l2.py), when given one

    @classmethod
    def from_trace(cls, trace: Any, peaks: Mapping[str, float] | None = None) -> "TrafficData":
        # above 20,000 records, level of detail (viz/lod.py): occupancy estimated from 4,000 merged bars
        table = coarsen(as_table(trace), 4000, ("pipe", "src", "dst"), above=LOD_RECORDS)
        edges = traffic_edges(table, peaks)
        occ = occupancy(table, _buffers_of(trace))
        return cls(table, edges, layout_edges(edges), occ, getattr(trace, "l2", None))

    def used_nodes(self) -> set[str]:
        """Diagram nodes with traffic (HBM whenever anything touched GM)."""
        used = {_node(t) for e in self.edges for t in (e.src, e.dst)}
        return used | {"HBM"} if "L2" in used else used

    def payload(self, title: str = "") -> dict[str, Any]:
        """The ``data`` trait of :class:`TrafficView`."""
        names = self.table.unit_names()
        used = self.used_nodes()
        return {
            "title": title or (self.table.label and f"{self.table.label}: memory tiers") or "memory tiers",
            "width": WIDTH, "height": HEIGHT, "node_w": NODE_W, "node_h": NODE_H,
            "cycles": self.table.cycles,
            "nodes": [{"id": k, "x": x, "y": y, "label": lab, "used": k in used, "fill": _NODE_COLOR[k]}
                      for k, (x, y, lab) in NODES.items()],
            "edges": [{"key": d.edge.key, "lines": lh[0], "heads": lh[1], "width": d.width,
                       "label": list(d.label), "at": list(d.at), "nbytes": d.edge.nbytes,
                       "count": d.edge.count, "cores": d.edge.cores}
                      for d, lh in ((d, d.lines_and_heads()) for d in self.drawn)],
            "occupancy": [_occ_payload(o, names) for o in self.occupancy],
            "units": sorted({o.unit for o in self.occupancy}),
            "unit_names": {str(u): n for u, n in names.items()},
            "note": _l2_note(self.l2),
            "colors": dict(MARKS),
        }


def _l2_note(l2: dict | None) -> str:
    """The diagram's note: what L2 served and what reached HBM (when the launch's L2 totals are known)."""
    if not l2:
        return "GM traffic reaches HBM through L2. Achieved bandwidth is averaged over the whole launch."
    return (f"GM traffic goes through L2: read hit rate {l2['l2_hit_rate']:.0%}; L2 served {l2['l2_bytes']:,} B, "
            f"HBM read {l2['hbm_read_bytes']:,} B and wrote {l2['hbm_write_bytes']:,} B. Achieved bandwidth is "
            "averaged over the whole launch.")


class TrafficView(StaticFallbackMixin, anywidget.AnyWidget):
    """Memory-tier traffic diagram and per-tier occupancy of one launch.

    Args:
        trace: a LaunchResult, Trace, record list or TraceTable.
        peaks: peak bandwidth overrides in GB/s by link, e.g. ``{"GM->UB": 1600}``;
            by default peaks come from the chip profile.
        core: the core whose occupancy is shown first.
    """

    _esm = esm("traffic.js")
    _css = CSS
    data = traitlets.Dict().tag(sync=True)
    core = traitlets.Int(-1).tag(sync=True)

    def __init__(self, trace: Any = None, *, peaks: Mapping[str, float] | None = None,
                 core: int | None = None, title: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._peaks = peaks
        self._title = title
        self._data: TrafficData | None = None
        if trace is not None:
            self.update(trace)
        if core is not None:
            self.core = int(core)

    def update(self, trace: Any) -> None:
        """Show another launch (the explorer calls this on every re-run)."""
        self._data = TrafficData.from_trace(trace, self._peaks)
        units = self._data.table.cores
        with self.hold_sync():
            if self.core not in units:
                self.core = units[0] if units else -1
            self.data = self._data.payload(self._title)

    @property
    def traffic(self) -> TrafficData | None:
        """The computed edges and occupancy."""
        return self._data

    def static_figure(self) -> Figure:
        assert self._data is not None, "no trace shown yet"
        return draw_traffic_figure(self._data, core=self.core, title=self._title)

    def __repr__(self) -> str:
        n = len(self._data.edges) if self._data else 0
        return f"TrafficView({n} links)"


def _draw_diagram(ax: Any, data: TrafficData) -> None:
    ax.set_xlim(0, WIDTH)
    ax.set_ylim(HEIGHT, 0)
    ax.set_aspect("equal")
    ax.axis("off")
    nodes_used = data.used_nodes()
    for k, (x, y, lab) in NODES.items():
        used = k in nodes_used
        ax.add_patch(FancyBboxPatch((x - NODE_W / 2, y - NODE_H / 2), NODE_W, NODE_H,
                                    boxstyle="round,pad=0,rounding_size=5", gid=f"tier:{k}",
                                    facecolor=_NODE_COLOR[k] if used else "white",
                                    edgecolor=MARKS["tier-stroke"] if used else "#bbb", linewidth=1,
                                    linestyle="-" if used else (0, (3, 2))))
        ax.text(x, y, lab, ha="center", va="center", fontsize=8, color=NODE_TEXT if used else "#767676")
    for d in data.drawn:
        lines, heads = d.lines_and_heads()
        for pts, head in zip(lines, heads):
            xs, ys = zip(*pts)
            ax.plot(xs, ys, color=MARKS["link"], linewidth=d.width * 0.75, alpha=0.75,
                    solid_capstyle="butt", gid=f"edge:{d.edge.key}")
            ax.add_patch(Polygon(head, closed=True, color=MARKS["link"]))
        ax.text(d.at[0], d.at[1], "\n".join(d.label), fontsize=6.5, ha="left", va="center",
                gid=f"label:{d.edge.key}",
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85})


def _draw_occupancy(ax: Any, o: Occupancy, cycles: float) -> None:
    t = np.concatenate([[0.0], o.times, [cycles]]) if len(o.times) else np.asarray([0.0, cycles])
    v = np.concatenate([[0], o.live, [0]]) if len(o.live) else np.asarray([0, 0])
    ax.fill_between(t, v, step="post", alpha=0.35, color=MARKS["live"], gid=f"occ:{o.tier}")
    ax.step(t, v, where="post", color=MARKS["live"], linewidth=1)
    top = max(o.peak, o.allocated, 1) * 1.25
    if o.allocated:
        ax.axhline(o.allocated, color=MARKS["reserved"], linestyle="--", linewidth=1, gid=f"alloc:{o.tier}")
    if o.capacity and o.capacity <= top:
        ax.axhline(o.capacity, color=MARKS["stall"], linewidth=1.2, gid=f"cap:{o.tier}")
    ax.set_ylim(0, top)
    ax.set_xlim(0, max(cycles, 1))
    cap = f" of {format_bytes(o.capacity)}" if o.capacity else ""
    pct = f" ({max(o.peak, o.allocated) / o.capacity:.1%})" if o.capacity else ""
    alloc = f", {format_bytes(o.allocated)} reserved" if o.allocated else ""
    est = " [estimate]" if o.source == "estimate" else ""
    ax.set_title(f"{o.tier}: peak {format_bytes(o.peak)} live{alloc}{cap}{pct}{est}", fontsize=8, loc="left")
    ax.yaxis.set_major_locator(MultipleLocator(2 ** max(0, math.floor(math.log2(top / 3)))))
    ax.yaxis.set_major_formatter(lambda y, _: format_bytes(y))
    ax.tick_params(labelsize=7)
    ax.set_xlabel("cycles", fontsize=7)


def draw_traffic_figure(data: TrafficData, core: int | None = None, title: str = "") -> Figure:
    """Static traffic view: the tier diagram, then the chosen core's occupancy per tier."""
    unit = core if core is not None and core >= 0 else (data.table.cores[0] if data.table.cores else 0)
    occ = [o for o in data.occupancy if o.unit == unit]
    fig = new_figure(9.5, 4.8 + 1.7 * ((len(occ) + 1) // 2))
    grid = fig.add_gridspec(1 + (len(occ) + 1) // 2, 2, height_ratios=[4.6] + [1.6] * ((len(occ) + 1) // 2))
    ax = fig.add_subplot(grid[0, :])
    _draw_diagram(ax, data)
    ax.set_title(title or f"{data.table.label or 'launch'}: traffic between memory tiers", fontsize=10)
    name = data.table.unit_names().get(unit, str(unit))
    for i, o in enumerate(occ):
        sub = fig.add_subplot(grid[1 + i // 2, i % 2])
        _draw_occupancy(sub, o, data.table.cycles)
        if i == 0:
            sub.text(0, 1.32, f"occupancy over time, {name}", transform=sub.transAxes, fontsize=8,
                     style="italic")
    return fig


def traffic_figure(trace: Any, peaks: Mapping[str, float] | None = None, core: int | None = None,
                   title: str = "") -> Figure:
    """Static memory-tier traffic and occupancy of one launch (see :class:`TrafficView`)."""
    return draw_traffic_figure(TrafficData.from_trace(trace, peaks), core, title)
