"""Small HTML tables: the profile summary of one launch and a before/after comparison."""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from ascend_sim.viz.style import format_bytes
from ascend_sim.trace.table import PipeStats, TraceTable, pipe_stats


@dataclass(frozen=True)
class PipeDelta:
    """One pipe before and after: busy and stall cycles (summed over cores), ratios."""

    pipe: str
    before: PipeStats | None
    after: PipeStats | None

    @property
    def busy_delta(self) -> float:
        return (self.after.busy if self.after else 0.0) - (self.before.busy if self.before else 0.0)

    @property
    def stall_delta(self) -> float:
        return (self.after.stall if self.after else 0.0) - (self.before.stall if self.before else 0.0)


@dataclass(frozen=True)
class Comparison:
    """Two launches of (usually) the same kernel: speedup and per-pipe deltas."""

    before: TraceTable
    after: TraceTable
    pipes: list[PipeDelta]

    @property
    def speedup(self) -> float:
        """before.cycles / after.cycles: above 1 means "after" is faster."""
        return self.before.cycles / self.after.cycles if self.after.cycles else float("inf")


def compare_tables(before: TraceTable, after: TraceTable) -> Comparison:
    """Speedup and per-pipe deltas of two traces."""
    a = {s.pipe: s for s in pipe_stats(before)}
    b = {s.pipe: s for s in pipe_stats(after)}
    order = [p for p in before.pipes if p in a] + [p for p in after.pipes if p not in a]
    return Comparison(before, after, [PipeDelta(p, a.get(p), b.get(p)) for p in order])


def _f(x: float) -> str:
    return f"{x:,.0f}"


def _signed(x: float) -> str:
    return f"{x:+,.0f}" if round(x) else "0"


def placement(table: TraceTable) -> str:
    """``on 8 cores`` or ``48 blocks on 1 physical core (48 waves)``: blocks, the chip's cores, waves."""
    blocks = len(table.cores)
    types = set(table.core_type.tolist())
    chip = table.chip
    if chip is None or not types or not hasattr(chip, "cores_for"):
        return f"on {blocks} core{'s' * (blocks != 1)}"
    physical = sum(chip.cores_for(t) for t in types) if types <= {"AIV", "AIC"} else chip.cores_for("AIC")
    if blocks <= physical:
        return f"on {blocks} core{'s' * (blocks != 1)} (of {physical})"
    waves = -(-blocks // physical)
    return f"{blocks} blocks on {physical} physical core{'s' * (physical != 1)} ({waves} waves)"


def profile_html(table: TraceTable, result: Any = None) -> str:
    """Cycles, time, per-pipe busy share and stalls; the bound and advice when ``result.profile()`` exists."""
    head = f"<b>{_f(table.cycles)} cycles</b>"
    if table.us:
        head += f" = <b>{table.us:,.2f} µs</b>"
    head += f" {placement(table)}, {len(table):,} instructions"
    advice = ""
    prof = getattr(result, "profile", None)
    if callable(prof):
        p = prof()
        head += f"; <b>{html.escape(str(getattr(p, 'headline', getattr(p, 'bound', '?'))))}</b>"
        items = "".join(f"<li>{html.escape(a)}</li>" for a in getattr(p, "advice", []))
        advice = f"<ul style='margin:2px 0'>{items}</ul>" if items else ""
    rows = "".join(
        f"<tr><td>{s.pipe}</td><td>{s.count:,}</td><td>{_f(s.busy)}</td><td>{s.ratio:.1%}</td>"
        f"<td>{_f(s.stall)}</td><td>{format_bytes(s.nbytes)}</td></tr>" for s in pipe_stats(table))
    return (f"<div class='asim-summary'>{head}<table class='asim-stats'><tr><th>pipe</th>"
            "<th>instructions</th><th>busy cycles</th><th>busy share</th><th>stall cycles</th>"
            f"<th>bytes</th></tr>{rows}</table>{advice}</div>")


def comparison_html(cmp: Comparison) -> str:
    """Before → after: the speedup line, what the table sums, and per-pipe busy and stall cycles."""
    a, b = cmp.before, cmp.after
    word = "faster" if cmp.speedup >= 1 else "slower"
    head = (f"<b>{html.escape(a.label or 'before')}</b> → <b>{html.escape(b.label or 'after')}</b>: "
            f"{_f(a.cycles)} → {_f(b.cycles)} cycles, <b>speedup ×{cmp.speedup:.2f}</b> ({word})")
    scope = (f"The table sums every core of each launch ({len(a.cores)} → {len(b.cores)} cores); "
             "the timeline below shows the cores you expand.")
    rows = []
    for d in cmp.pipes:
        bb, ab = (d.before.busy if d.before else 0), (d.after.busy if d.after else 0)
        bs, as_ = (d.before.stall if d.before else 0), (d.after.stall if d.after else 0)
        br, ar = (d.before.ratio if d.before else 0), (d.after.ratio if d.after else 0)
        rows.append(f"<tr><td>{d.pipe}</td><td>{_f(bb)} → {_f(ab)}</td><td>{_signed(d.busy_delta)}</td>"
                    f"<td>{br:.1%} → {ar:.1%}</td><td>{_f(bs)} → {_f(as_)}</td>"
                    f"<td>{_signed(d.stall_delta)}</td></tr>")
    same_work = all(abs(d.busy_delta) < 0.5 for d in cmp.pipes) and cmp.speedup != 1
    note = ("<p class='asim-hint'>Busy cycles are the same: both versions do the same work, and the time saved "
            "is time the pipes spent waiting (overlap, 流水并行).</p>") if same_work else ""
    return (f"<div class='asim-summary'>{head}<br><span class='asim-hint'>{scope}</span>"
            "<table class='asim-stats'><tr><th>pipe</th><th>busy cycles</th><th>Δ busy</th>"
            "<th>busy share</th><th>stall cycles</th><th>Δ stall</th></tr>"
            + "".join(rows) + f"</table>{note}</div>")
