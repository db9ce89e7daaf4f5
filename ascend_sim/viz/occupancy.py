"""On-chip tier occupancy over time (片上存储占用), per core, against capacity.

Three sources, best first:

* ``regions``: records carrying ``writes``/``reads`` as ``(tier, first_byte,
  end_byte)`` tuples give exact liveness: bytes are live from the write that
  fills them until the last read before they are overwritten.
* ``estimate``: from record bytes alone, data copied into a tier (by a move
  pipe: MTE1/MTE2/MTE3/FIX) is live from the copy's start until the end of the
  first later record on that core that reads the tier (Mmad reads L0A and
  L0B). Results that compute (V, M) writes are not counted.
* ``allocated``: the buffers ``TPipe.InitBuffer`` reserved (``LaunchResult.buffers``),
  drawn as a flat line: they stay reserved for the whole kernel.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from ascend_sim.hw.chips import DATA_BLOCK_BYTES
from ascend_sim.viz.style import ONCHIP_CAPACITY_FIELD
from ascend_sim.trace.table import TraceTable


@dataclass(frozen=True)
class Occupancy:
    """Live bytes of one tier of one core as a step function of cycles."""

    tier: str
    unit: int
    times: np.ndarray        # step points, ascending
    live: np.ndarray         # bytes live from times[i] until times[i+1]
    capacity: int | None
    allocated: int           # bytes reserved by InitBuffer (0 if unknown)
    source: str              # "regions" or "estimate"

    @property
    def peak(self) -> int:
        return int(self.live.max()) if len(self.live) else 0


def _steps(intervals: Iterable[tuple[float, float, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Sweep (start, end, bytes) intervals into a step function."""
    ev: dict[float, int] = {}
    for a, b, n in intervals:
        if n <= 0 or b < a:
            continue
        ev[a] = ev.get(a, 0) + n
        ev[b] = ev.get(b, 0) - n
    if not ev:
        return np.zeros(0), np.zeros(0, np.int64)
    t = np.asarray(sorted(ev))
    return t, np.cumsum([ev[x] for x in t]).astype(np.int64)


_MOVE_PIPES = frozenset({"MTE1", "MTE2", "MTE3", "FIX"})


def _reads(table: TraceTable, i: int, tier: str) -> bool:
    if table.src[i] == tier:
        return True
    return tier == "L0B" and table.pipe[i] == "M" and table.src[i] == "L0A"


def _estimate(table: TraceTable, unit: int, tier: str) -> list[tuple[float, float, int]]:
    m = np.flatnonzero(table.unit == unit)
    order = m[np.argsort(table.start[m], kind="stable")]
    readers = [i for i in order if _reads(table, i, tier)]
    reader_starts = np.asarray([table.start[i] for i in readers])
    out = []
    for i in order:
        if (table.dst[i] == tier and table.src[i] != tier and table.pipe[i] in _MOVE_PIPES
                and table.nbytes[i] > 0):
            j = int(np.searchsorted(reader_starts, table.end[i], side="left"))
            end = table.end[readers[j]] if j < len(readers) else table.cycles
            out.append((float(table.start[i]), float(end), int(table.nbytes[i])))
    return out


def _regions(table: TraceTable, regions: list[tuple[tuple, tuple]], unit: int, tier: str,
             capacity: int) -> list[tuple[float, float, int]]:
    """Exact liveness from per-record (tier, lo, hi) read and write regions, tracked per DataBlock."""
    ng = -(-capacity // DATA_BLOCK_BYTES)
    born = np.full(ng, np.nan)
    used = np.full(ng, np.nan)
    out: list[tuple[float, float, int]] = []

    def close(g: slice, upto: float = np.inf) -> None:
        """End the values held in granules ``g``; a value overwritten at ``upto`` ends there at the latest
        (an in-place update, like an accumulating Mmad, reads the old value and writes the new one into the
        same bytes: the storage is held once, not twice)."""
        b, u = born[g], used[g]
        live = ~np.isnan(b)
        if live.any():
            ends = np.minimum(np.where(np.isnan(u[live]), b[live], u[live]), upto)
            pairs, counts = np.unique(np.stack([b[live], ends], 1), axis=0, return_counts=True)
            out.extend((float(a), float(e), int(c) * DATA_BLOCK_BYTES) for (a, e), c in zip(pairs, counts))
        born[g] = np.nan
        used[g] = np.nan

    idx = np.flatnonzero(table.unit == unit)
    for i in idx[np.argsort(table.start[idx], kind="stable")].tolist():
        start, end = float(table.start[i]), float(table.end[i])
        reads, writes = regions[i]
        for t, lo, hi in reads:
            if t == tier:
                g = slice(lo // DATA_BLOCK_BYTES, -(-hi // DATA_BLOCK_BYTES))
                used[g] = np.fmax(used[g], end)
        for t, lo, hi in writes:
            if t == tier:
                g = slice(lo // DATA_BLOCK_BYTES, -(-hi // DATA_BLOCK_BYTES))
                close(g, start)
                born[g] = start
                used[g] = end
    close(slice(0, ng))
    return out


def _allocated(buffers: Any, block: int, core_type: str, tier: str) -> int:
    """Bytes InitBuffer reserved: ``buffers[(block, type)][tier] = [(name, addr, bytes)]``."""
    if not isinstance(buffers, dict):
        return 0
    per = buffers.get((block, core_type)) or buffers.get(block) or {}
    return int(sum(b[2] for b in per.get(tier, ())))


def occupancy(table: TraceTable, buffers: Any = None, units: Iterable[int] | None = None) -> list[Occupancy]:
    """Occupancy of every on-chip tier each chosen core used, in tier then core order.

    Exact liveness when the table's records carry read/write regions (``table.regions()``), else an
    estimate from record bytes; ``buffers`` (``LaunchResult.buffers``) adds the InitBuffer reservations.
    """
    chip = table.chip
    units = sorted(units) if units is not None else table.cores
    blocks = table.unit_blocks()
    types = {int(u): str(t) for u, t in zip(table.unit.tolist(), table.core_type.tolist())}
    regions = table.regions()
    has_regions = regions is not None and len(regions) == len(table)
    out = []
    for tier, field in ONCHIP_CAPACITY_FIELD.items():
        cap = getattr(chip, field, None) if chip is not None else None
        for u in units:
            alloc = _allocated(buffers, blocks.get(u, u), types.get(u, ""), tier)
            on_unit = table.unit == u
            touched = bool(((table.src == tier) | (table.dst == tier))[on_unit].any())
            if not touched and not alloc:
                continue
            if has_regions and cap:
                iv, source = _regions(table, regions, u, tier, cap), "regions"
            else:
                iv, source = _estimate(table, u, tier), "estimate"
            t, live = _steps(iv)
            out.append(Occupancy(tier, u, t, live, int(cap) if cap else None, alloc, source))
    return out
