"""Rows of a pipeline timeline: which (core, pipe) lanes to draw, in which order.

The browser view recomputes the same rows when the learner expands a core;
this module is the Python side used by the static figures and for defaults.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from ascend_sim.trace.table import TraceTable, parse_cores

#: Above this many pipe rows, cores start collapsed to one summary row each.
MAX_EXPANDED_ROWS = 24


@dataclass(frozen=True)
class Row:
    """One lane: a pipe of a core (``core`` is the table's unit number), or
    (``pipe is None``) a core's summary row."""

    core: int
    pipe: str | None
    label: str


def default_expanded(table: TraceTable, cores: Sequence[int]) -> list[int]:
    """Cores shown pipe by pipe by default: all of them if that stays readable."""
    npipes = len(table.pipes)
    if len(cores) * npipes <= MAX_EXPANDED_ROWS:
        return list(cores)
    return list(cores[:1])


def timeline_rows(table: TraceTable, cores: str | Iterable[int] | None = None,
                  expanded: Iterable[int] | None = None,
                  pipes: Sequence[str] | None = None) -> list[Row]:
    """Rows top to bottom: per chosen core, its pipe rows if expanded, else one summary row."""
    chosen = parse_cores(cores, table.cores, table.unit_blocks())
    names = table.unit_names()
    exp = set(default_expanded(table, chosen) if expanded is None else expanded)
    pipe_order = list(pipes) if pipes is not None else table.pipes
    multi = len(table.cores) > 1
    rows: list[Row] = []
    for c in chosen:
        if c in exp:
            for p in pipe_order:
                rows.append(Row(c, p, f"{names[c]} {p}" if multi else p))
        else:
            rows.append(Row(c, None, f"{names[c]} (all pipes)"))
    return rows
