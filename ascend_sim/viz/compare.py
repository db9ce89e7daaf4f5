"""Before/after comparison (前后对比): two traces on one cycle axis, speedup, per-pipe deltas."""
from __future__ import annotations

from typing import Any, Iterable

import ipywidgets as W
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ascend_sim.viz._widget import StaticFallbackMixin
from ascend_sim.viz.style import MARKS
from ascend_sim.viz.summary import Comparison, compare_tables, comparison_html
from ascend_sim.viz.timeline import TimelineView, timelines_figure
from ascend_sim.trace.table import as_table


def _labels(before: Any, after: Any, labels: tuple[str, str] | None):
    a, b = as_table(before), as_table(after)
    la, lb = labels or (a.label, b.label)
    if la == lb or not la or not lb:
        la, lb = f"before: {la or 'trace'}", f"after: {lb or 'trace'}"
    return as_table(a, la), as_table(b, lb)


def compare(before: Any, after: Any, labels: tuple[str, str] | None = None) -> Comparison:
    """Speedup and per-pipe busy/stall deltas of two launches."""
    return compare_tables(*_labels(before, after, labels))


def draw_pipe_deltas(ax: Axes, cmp: Comparison) -> None:
    """Grouped bars of each pipe's busy share (busy / total cycles), before and after."""
    pipes = [d.pipe for d in cmp.pipes]
    x = np.arange(len(pipes))
    before = [100 * d.before.ratio if d.before else 0.0 for d in cmp.pipes]
    after = [100 * d.after.ratio if d.after else 0.0 for d in cmp.pipes]
    ax.bar(x - 0.2, before, 0.4, label=cmp.before.label, color=MARKS["before"], gid="delta:before")
    ax.bar(x + 0.2, after, 0.4, label=cmp.after.label, color=MARKS["after"], gid="delta:after")
    for i in range(len(pipes)):
        ax.annotate(f"{after[i] - before[i]:+.1f} pp", (x[i] + 0.2, after[i]), ha="center", va="bottom",
                    fontsize=7, xytext=(0, 2), textcoords="offset points", gid=f"delta:{pipes[i]}")
    ax.set_xticks(x, pipes)
    ax.set_ylabel("busy share (%)", fontsize=8)
    ax.set_ylim(0, max(before + after + [1.0]) * 1.25)
    ax.legend(fontsize=7, frameon=False, loc="upper right")
    ax.set_title(f"speedup x{cmp.speedup:.2f}: {cmp.before.cycles:,.0f} -> {cmp.after.cycles:,.0f} "
                 "cycles; busy share per pipe (busy cycles / total, mean over cores)", fontsize=9, loc="left")
    ax.tick_params(labelsize=8)


def compare_figure(before: Any, after: Any, labels: tuple[str, str] | None = None,
                   cores: str | Iterable[int] | None = None,
                   expanded: Iterable[int] | None = None) -> Figure:
    """Static comparison: both timelines on one cycle axis, then busy cycles per pipe."""
    a, b = _labels(before, after, labels)
    cmp = compare_tables(a, b)
    return timelines_figure([a, b], cores=cores, expanded=expanded,
                            footer=lambda ax: draw_pipe_deltas(ax, cmp))


class CompareView(StaticFallbackMixin, W.VBox):
    """Two launches side by side on one time axis, with the speedup and per-pipe deltas.

    Args:
        before, after: LaunchResults (or traces) of the two versions.
        labels: names for the two, e.g. ``("BUFFER_NUM=1", "BUFFER_NUM=2")``.
        cores, expanded: as for :class:`TimelineView`.
    """

    def __init__(self, before: Any, after: Any, labels: tuple[str, str] | None = None,
                 cores: str | Iterable[int] | None = None, expanded: Iterable[int] | None = None,
                 **kwargs: Any) -> None:
        a, b = _labels(before, after, labels)
        self.comparison = compare_tables(a, b)
        self.summary = W.HTML(comparison_html(self.comparison))
        self.timeline = TimelineView(cores=cores, title="before / after on one cycle axis")
        self.timeline.set_traces([a, b], expanded=expanded)
        super().__init__([self.summary, self.timeline], **kwargs)
        self.add_class("asim-compare")

    def static_figure(self) -> Figure:
        t = self.timeline
        return timelines_figure(t.tables, cores=t.cores or None, expanded=t.expanded,
                                footer=lambda ax: draw_pipe_deltas(ax, self.comparison))

    def __repr__(self) -> str:
        return f"CompareView(speedup x{self.comparison.speedup:.2f})"

