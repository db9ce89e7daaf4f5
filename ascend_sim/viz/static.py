"""Matplotlib drawing of the pipeline timeline: the static form of the views.

Static figures serve nbval, exported HTML/PDF, GitHub's notebook preview and
front ends without widgets. Artists carry a ``gid`` ("bars:<class>",
"stalls", "waits") so tests can check what was drawn.
"""
from __future__ import annotations

import io
from typing import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ascend_sim.viz.layout import Row
from ascend_sim.viz.style import KIND_COLORS, KIND_NAMES, STALL_COLOR
from ascend_sim.trace.table import TraceTable

#: Draw wait arrows only when at most this many are visible (else the plot is a hairball).
MAX_ARROWS = 150


class VizFigure(Figure):
    """A matplotlib Figure that Jupyter shows as PNG even when pyplot was never imported."""

    def _repr_png_(self) -> bytes:
        return figure_png(self)


def new_figure(width: float, height: float) -> Figure:
    """A figure not attached to pyplot (no global state, nothing to close)."""
    return VizFigure(figsize=(width, height), dpi=100, layout="constrained")


def figure_png(fig: Figure, dpi: int = 100) -> bytes:
    """PNG bytes of ``fig``, without metadata that changes between versions."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def stack_pngs(pngs: Sequence[bytes]) -> bytes:
    """One PNG holding ``pngs`` one under the other (left-aligned, white behind the narrower ones)."""
    from matplotlib.image import imread, imsave

    images = [imread(io.BytesIO(p), format="png")[..., :3] for p in pngs]
    if not images:
        raise ValueError("stack_pngs needs at least one PNG")
    width = max(im.shape[1] for im in images)
    canvas = np.ones((sum(im.shape[0] for im in images), width, 3), dtype=np.float32)
    y = 0
    for im in images:
        canvas[y:y + im.shape[0], :im.shape[1]] = im
        y += im.shape[0]
    buf = io.BytesIO()
    imsave(buf, canvas, format="png", metadata={"Software": None})
    return buf.getvalue()


def _rects(x0: np.ndarray, x1: np.ndarray, y: np.ndarray, h: float | np.ndarray) -> np.ndarray:
    """(n, 4, 2) rectangle vertices from left/right x and centre y."""
    h = np.broadcast_to(np.asarray(h, float), x0.shape)
    lo, hi = y - h / 2, y + h / 2
    return np.stack([np.stack([x0, lo], -1), np.stack([x1, lo], -1),
                     np.stack([x1, hi], -1), np.stack([x0, hi], -1)], 1)


def _row_positions(table: TraceTable, rows: Sequence[Row],
                   pipe_order: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per record: centre y (NaN if not shown), bar height, and whether on a pipe row."""
    y = np.full(len(table), np.nan)
    h = np.full(len(table), 0.7)
    full = np.zeros(len(table), bool)
    npipes = max(len(pipe_order), 1)
    lane = 0.8 / npipes
    for i, row in enumerate(rows):
        on_core = table.unit == row.core
        if row.pipe is not None:
            m = on_core & (table.pipe == row.pipe)
            y[m] = i
            full |= m
        else:
            for j, p in enumerate(pipe_order):
                m = on_core & (table.pipe == p)
                y[m] = i - 0.4 + (j + 0.5) * lane
                h[m] = lane * 0.85
    return y, h, full


def draw_timeline(ax: Axes, table: TraceTable, rows: Sequence[Row],
                  xlim: tuple[float, float] | None = None, arrows: bool | str = "auto",
                  legend: bool = True) -> dict[str, int]:
    """Draw bars (by class), hatched stalls and wait arrows; return what was drawn."""
    x0, x1 = xlim if xlim is not None else (0.0, max(table.cycles, 1.0))
    y, h, full = _row_positions(table, rows, table.pipes)
    shown = ~np.isnan(y) & (table.end >= x0) & (table.start <= x1)
    counts = {"rows": len(rows), "bars": int(shown.sum()), "stalls": 0, "arrows": 0}
    for kind in KIND_NAMES:
        m = shown & (table.kind == kind)
        if m.any():
            pc = PolyCollection(_rects(table.start[m], table.end[m], y[m], h[m]),
                                facecolors=KIND_COLORS[kind], edgecolors="white",
                                linewidths=0.3, gid=f"bars:{kind}", label=kind)
            ax.add_collection(pc)
    st = shown & full & (table.start > table.ready)
    if st.any():
        ax.add_collection(PolyCollection(
            _rects(table.ready[st], table.start[st], y[st], 0.45), facecolors="none",
            edgecolors=STALL_COLOR, hatch="////", linewidths=0.5, gid="stalls"))
        counts["stalls"] = int(st.sum())
    waits = np.flatnonzero(st & (table.wait_on >= 0))
    pos = {int(ix): k for k, ix in enumerate(table.index)}
    segs = [((table.end[pos[w]], y[pos[w]]), (table.start[k], y[k])) for k in waits
            if (w := int(table.wait_on[k])) in pos and not np.isnan(y[pos[w]])]
    if segs and (arrows is True or (arrows == "auto" and len(segs) <= MAX_ARROWS)):
        ax.add_collection(LineCollection(segs, colors=STALL_COLOR, linewidths=0.7, alpha=0.8,
                                         gid="waits"))
        ax.plot([s[1][0] for s in segs], [s[1][1] for s in segs], ">", ms=3,
                color=STALL_COLOR, gid="wait-heads")
        counts["arrows"] = len(segs)
    ax.set_xlim(x0, x1)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_yticks(range(len(rows)), [r.label for r in rows], fontsize=8)
    ax.set_xlabel("cycles")
    ax.grid(axis="x", alpha=0.3)
    if legend:
        present = [c for c in KIND_NAMES if (shown & (table.kind == c)).any()]
        handles = [Patch(color=KIND_COLORS[c], label=c) for c in present]
        if counts["stalls"]:
            handles.append(Patch(facecolor="none", edgecolor=STALL_COLOR, hatch="////",
                                 label="stall (sync wait)"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8,
                  frameon=False)
    return counts
