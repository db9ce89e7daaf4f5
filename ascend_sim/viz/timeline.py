"""Pipeline timeline (流水线时间线): one row per (core, pipe), a bar per instruction.

``TimelineView(result)`` is the interactive widget (hover, click, zoom, pan,
core choice); ``timeline_figure(result)`` the static matplotlib figure.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import anywidget
import numpy as np
import traitlets
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ascend_sim.viz._widget import CSS, StaticFallbackMixin, esm
from ascend_sim.viz.layout import default_expanded, timeline_rows
from ascend_sim.viz.lod import coarsen
from ascend_sim.viz.static import draw_timeline, new_figure
from ascend_sim.viz.style import KINDS, MARKS, PIPES, STALL_COLOR
from ascend_sim.trace.table import TraceTable, as_table, kind_index, parse_cores


def _encode(values: np.ndarray) -> tuple[list[str], list[int]]:
    """Dictionary-encode strings: (sorted unique values, index of each)."""
    if len(values) == 0:
        return [], []
    uniq, inv = np.unique(values.astype(str), return_inverse=True)
    return uniq.tolist(), inv.astype(int).tolist()


def _encode_pairs(first: np.ndarray, second: np.ndarray) -> tuple[list[tuple[str, str]], list[int]]:
    """Dictionary-encode (first, second) string pairs: (sorted unique pairs, index of each)."""
    pairs = [(str(a), str(b)) for a, b in zip(first, second)]
    uniq = sorted(set(pairs))
    index = {p: i for i, p in enumerate(uniq)}
    return uniq, [index[p] for p in pairs]


def _rounded(a: np.ndarray) -> list[float]:
    return np.round(a.astype(float), 3).tolist()


def group_payload(table: TraceTable, pipes: Sequence[str]) -> dict[str, Any]:
    """JSON-ready columns of one trace for timeline.js (``pipes`` is the shared pipe list).

    A trace of more than ``lod.MAX_BARS`` records is drawn at a coarser level of detail (viz/lod.py).
    """
    full = len(table)
    table = coarsen(table)
    pipe_ix = {p: i for i, p in enumerate(pipes)}
    ops, o = _encode(table.op)
    tiers, td = _encode(np.concatenate([table.src, table.dst]))
    n = len(table)
    # line and source go together: encode the pair (a tuple: numpy's str arrays would drop an empty source's
    # separator, a trailing NUL), split for display
    pair_vals, li = _encode_pairs(table.line, table.source)
    klasses, x = _encode(table.klass)
    names, blocks = table.unit_names(), table.unit_blocks()
    header = table.label or "trace"
    header += f" · {table.cycles:,.0f} cycles" + (f" ({table.us:.2f} µs)" if table.us else "")
    if len(table) < full:
        header += f" · {full:,} records drawn as {len(table):,} bars (level of detail)"
    return {
        "label": table.label, "header": header, "cycles": float(table.cycles), "n": n,
        "cores": table.cores, "pipes": [pipe_ix[p] for p in table.pipes],
        "core_names": [names[u] for u in table.cores],
        "core_blocks": [blocks[u] for u in table.cores],
        "ops": ops, "tiers": tiers, "klasses": klasses,
        "lines": [line for line, _ in pair_vals],
        "sources": [source for _, source in pair_vals],
        "cols": {
            "i": table.index.tolist(), "c": table.unit.tolist(),
            "p": [pipe_ix[p] for p in table.pipe.tolist()],
            "k": kind_index(table.kind).tolist(),
            "r": _rounded(table.ready), "s": _rounded(table.start), "e": _rounded(table.end),
            "w": table.wait_on.tolist(), "b": table.nbytes.tolist(), "f": table.flops.tolist(),
            "o": o, "t": td[:n], "d": td[n:], "l": li, "x": x,
        },
    }


def timeline_payload(tables: Sequence[TraceTable], title: str = "") -> dict[str, Any]:
    """The ``data`` trait of the timeline widget for one or more traces."""
    present = set().union(*(set(t.pipe.tolist()) for t in tables)) if tables else set()
    pipes = [p for p in PIPES if p in present] + sorted(present - set(PIPES))
    kinds = set().union(*(set(t.kind.tolist()) for t in tables)) if tables else set()
    return {
        "title": title, "pipes": pipes, "stall_color": STALL_COLOR, "colors": dict(MARKS),
        "kinds": [list(c) for c in KINDS], "present": [c[0] for c in KINDS if c[0] in kinds],
        "groups": [group_payload(t, pipes) for t in tables],
    }


def _cores_text(cores: str | Iterable[int] | None) -> str:
    if cores is None or isinstance(cores, str):
        return cores or ""
    return ",".join(str(int(c)) for c in cores)


class TimelineView(StaticFallbackMixin, anywidget.AnyWidget):
    """Interactive pipeline timeline of one launch (or several on one axis, see CompareView).

    Args:
        trace: a LaunchResult, Trace, record list or TraceTable.
        cores: cores to show, e.g. ``"0-3,8"`` or ``[0, 1]``; all by default.
        expanded: cores drawn pipe by pipe; the others get one summary row.
        view_range: ``(first, last)`` cycle to show; the whole launch by default.
        title: text above the timeline.
    """

    _esm = esm("timeline.js")
    _css = CSS
    data = traitlets.Dict().tag(sync=True)
    cores = traitlets.Unicode("").tag(sync=True)
    expanded = traitlets.List(traitlets.Int()).tag(sync=True)
    view_range = traitlets.List(traitlets.Float()).tag(sync=True)
    selected = traitlets.List().tag(sync=True)
    show_arrows = traitlets.Bool(True).tag(sync=True)
    max_height = traitlets.Int(520).tag(sync=True)

    def __init__(self, trace: Any = None, *, cores: str | Iterable[int] | None = None,
                 expanded: Iterable[int] | None = None,
                 view_range: tuple[float, float] | None = None, title: str = "",
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._tables: list[TraceTable] = []
        self._title = title
        self.cores = _cores_text(cores)
        if trace is not None:
            self.set_traces([as_table(trace)], expanded=expanded)
        if view_range is not None:
            self.view_range = [float(view_range[0]), float(view_range[1])]

    @property
    def tables(self) -> list[TraceTable]:
        """The traces shown, as tables."""
        return list(self._tables)

    def set_traces(self, tables: Sequence[TraceTable], expanded: Iterable[int] | None = None,
                   keep_view: bool = False) -> None:
        """Replace the traces shown (the explorer calls this on every re-run)."""
        self._tables = list(tables)
        if expanded is None:
            all_cores = sorted(set().union(*(t.cores for t in tables))) if tables else []
            chosen = parse_cores(self.cores or None, all_cores, tables[0].unit_blocks())
            expanded = default_expanded(self._tables[0], chosen) if tables else []
        with self.hold_sync():
            self.expanded = [int(c) for c in expanded]
            if not keep_view:
                self.view_range = []
            self.selected = []
            self.data = timeline_payload(self._tables, self._title)

    def static_figure(self) -> Figure:
        """The matplotlib figure of what the widget shows (cores, expansion, cycle range)."""
        xlim = tuple(self.view_range) if len(self.view_range) == 2 else None
        return timelines_figure(self._tables, cores=self.cores or None, expanded=self.expanded,
                                xlim=xlim, title=self._title)

    def __repr__(self) -> str:
        n = sum(len(t) for t in self._tables)
        return f"TimelineView({len(self._tables)} trace(s), {n} records)"


def timelines_figure(tables: Sequence[TraceTable], cores: str | Iterable[int] | None = None,
                     expanded: Iterable[int] | None = None,
                     xlim: tuple[float, float] | None = None, title: str = "",
                     width: float = 11.0,
                     footer: Callable[[Axes], None] | None = None,
                     footer_height: float = 2.2) -> Figure:
    """Static timeline of one or more traces, stacked on one shared cycle axis.

    ``footer`` draws into one more axes below the timelines (the comparison uses it).
    """
    rows_per = [timeline_rows(t, cores, expanded) for t in tables]
    heights = [max(len(r), 1) * 0.28 + 0.9 for r in rows_per]
    fig = new_figure(width, sum(heights) + (0.3 if title else 0) + (footer_height if footer else 0))
    grid = fig.add_gridspec(len(tables) + bool(footer), 1,
                            height_ratios=heights + ([footer_height] if footer else []))
    axes: list[Axes] = []
    for i in range(len(tables)):
        axes.append(fig.add_subplot(grid[i, 0], sharex=axes[0] if axes else None))
    if footer:
        footer(fig.add_subplot(grid[len(tables), 0]))
    hi = xlim or (0.0, max((t.cycles for t in tables), default=1.0) or 1.0)
    for i, (ax, t, rows) in enumerate(zip(axes, tables, rows_per)):
        draw_timeline(ax, t, rows, xlim=hi, legend=(i == 0))
        if len(tables) > 1 or t.label:
            us = f" ({t.us:.2f} us)" if t.us else ""
            ax.set_title(f"{t.label or 'trace'}: {t.cycles:,.0f} cycles{us}", fontsize=9, loc="left")
        if i < len(tables) - 1:
            ax.set_xlabel("")
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def timeline_figure(trace: Any, cores: str | Iterable[int] | None = None,
                    expanded: Iterable[int] | None = None,
                    xlim: tuple[float, float] | None = None, title: str = "") -> Figure:
    """Static pipeline timeline of one launch (see :class:`TimelineView` for the arguments)."""
    return timelines_figure([as_table(trace)], cores, expanded, xlim, title)
