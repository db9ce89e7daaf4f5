"""Level of detail (细节层次) for large traces: at most a few thousand bars per view, whatever the record count.

A production-size launch has about a million records (the 8192^3 matmul: 920,000); drawn one bar each, the
widgets would send and draw them all. :func:`coarsen` merges, per core and pipe, the records that start in one
time bin (the launch's cycles cut into equal bins, as many as the bar budget allows per row) into one bar from
the first start to the last end, with the bytes and FLOPs summed and the op marked ``Mmad ×512``; traces
within the budget pass through unchanged. The merged table is a :class:`TraceTable`, so the views draw it
as they draw any trace. Zooming in on a coarse view shows the merged bars: instruction-level detail
needs a trace within the budget (a smaller problem or fewer blocks).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ascend_sim.trace.table import TraceTable

MAX_BARS = 10_000       # bars a view draws at most (about 80 per core and pipe on 24 cores)


def _codes(col: np.ndarray) -> tuple[np.ndarray, int]:
    """Small integer codes of a string column with a handful of values (one comparison pass per value)."""
    names = sorted(set(col.tolist()))
    code = np.zeros(len(col), np.int64)
    for i, v in enumerate(names[1:], 1):
        code[col == v] = i
    return code, len(names)


def coarsen(table: TraceTable, max_bars: int = MAX_BARS, by: tuple[str, ...] = ("pipe",),
            above: int | None = None) -> TraceTable:
    """``table`` with the records of each (core, ``by`` columns, time bin) merged into about ``max_bars`` bars
    when it has more than ``above`` records (default ``max_bars``); the table itself otherwise. The result's
    ``weight`` counts the records of each bar. ``by=("pipe", "src", "dst")`` keeps every link's bytes apart."""
    n = len(table)
    if n <= (max_bars if above is None else above):
        return table
    row = table.unit.astype(np.int64)
    for name in by:
        code, k = _codes(getattr(table, name))
        row = row * k + code
    rows = int(np.count_nonzero(np.bincount(row)))
    bins = max(1, max_bars // rows)
    span = float(max(table.cycles, table.end.max(), 1.0))
    b = np.minimum((table.start * (bins / span)).astype(np.int64), bins - 1)
    key = row * bins + b
    # group by key without sorting (a million records: sorting alone took seconds on a loaded machine)
    size = int(key.max()) + 1
    count_all = np.bincount(key, minlength=size)
    keys = np.flatnonzero(count_all)
    first_of = np.full(size, n, np.int64)
    first_of[key[::-1]] = np.arange(n - 1, -1, -1)          # the last assignment wins: each key's first record
    rep = first_of[keys]
    count = count_all[keys]
    merged = count > 1

    def reduce(ufunc, col: np.ndarray, empty: float) -> np.ndarray:
        out = np.full(size, empty, col.dtype)
        ufunc.at(out, key, col)
        return out[keys]

    def take(col: np.ndarray) -> np.ndarray:
        return col[rep]

    op = take(table.op).copy()
    line = take(table.line).copy()
    source = take(table.source).copy()
    for i in np.flatnonzero(merged).tolist():
        op[i] = f"{op[i]} ×{count[i]}"
        line[i] = f"{count[i]} instructions"
        source[i] = f"level of detail: {count[i]} instructions of this core and pipe merged into one bar"
    wait_on = take(table.wait_on).copy()
    wait_on[merged] = -1
    return replace(
        table, index=take(table.index), unit=take(table.unit), core=take(table.core),
        core_type=take(table.core_type), pipe=take(table.pipe), op=op, klass=take(table.klass),
        kind=take(table.kind), src=take(table.src), dst=take(table.dst), line=line, source=source,
        ready=reduce(np.minimum, table.ready, np.inf), start=reduce(np.minimum, table.start, np.inf),
        end=reduce(np.maximum, table.end, -np.inf), wait_on=wait_on,
        nbytes=np.bincount(key, table.nbytes, size)[keys].astype(np.int64),
        flops=np.bincount(key, table.flops, size)[keys].astype(np.int64), region_source=None,
        weight=count if table.weight is None else np.bincount(key, table.weight, size)[keys].astype(np.int64))
