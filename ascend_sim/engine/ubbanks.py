"""UB bank conflicts (bank 冲突) of a vector instruction, arch 2201 (Atlas A2/A3).

Layout [OFF, asc-devkit examples/.../04_memory_access/bank_conflict_ub/README; optimisation.md section 3]:
48 banks of 128 rows x 32 B in 16 bank groups of 3; a UB address decodes as bank_id = addr[17:16],
row = addr[15:9], group = addr[8:5], so bank = bank_id * 16 + group. Per cycle each group serves
one read row and one write row, so in one repeat:

- two reads of different 32 B blocks in one group take a cycle each (read/read conflict);
- two writes in one group likewise (write/write);
- a read and a write on the same bank take a cycle each (read/write); in different banks of a
  group they go together. When the destination's blocks fall on the same banks as a source's,
  block for block, the hardware delays the write by one repeat (the README's scenarios 4 and 6),
  so it meets the next repeat's reads instead.

A repeat then takes as many cycles as the most accesses that collide [EST, optimisation.md s7],
and never fewer than the instruction class's cycles per repeat. A block read twice in one
repeat (a block stride of 0, or two operands on the same data) is read once.
"""
from __future__ import annotations

import numpy as np

GROUPS = 16
BANKS = 48
_CACHE: dict = {}


def operand_blocks(addr: int, itemsize: int, lanes, repeats: int) -> np.ndarray:
    """The 32 B UB blocks an operand touches, one row per repeat (-1 pads).

    ``lanes``: an element count (count form: contiguous from ``addr``) or the element offsets of
    every active lane, repeat after repeat (the mask/repeat form).
    """
    if isinstance(lanes, (int, np.integer)):
        first = addr // 32
        blocks = first + np.arange(-(-int(lanes) * itemsize // 32), dtype=np.int64)
    else:
        blocks = (addr + np.asarray(lanes, np.int64) * itemsize) // 32
    per = -(-blocks.size // repeats) if blocks.size else 1
    out = np.full(repeats * per, -1, np.int64)
    out[:blocks.size] = blocks
    rows = out.reshape(repeats, per)
    rows.sort(axis=1)                               # a block twice in a repeat is read once
    dup = np.zeros_like(rows, bool)
    dup[:, 1:] = rows[:, 1:] == rows[:, :-1]
    rows[dup] = -1
    return rows


def _counts(rows: np.ndarray, key: np.ndarray, width: int) -> np.ndarray:
    """(repeats, width) counts of ``key`` (a bank or a group) of the valid blocks of ``rows``."""
    r = np.broadcast_to(np.arange(rows.shape[0])[:, None], rows.shape)
    ok = rows >= 0
    return np.bincount((r[ok] * width + key[ok]), minlength=rows.shape[0] * width).reshape(rows.shape[0], width)


def repeat_cycles(reads: list[np.ndarray], write: np.ndarray | None, base: float) -> float:
    """Cycles of all repeats: per repeat the most colliding accesses, at least ``base``."""
    repeats = (write if write is not None else reads[0]).shape[0]
    rd = np.concatenate(reads, axis=1) if reads else np.full((repeats, 1), -1, np.int64)
    rd = np.sort(rd, axis=1)
    rd[:, 1:][rd[:, 1:] == rd[:, :-1]] = -1         # two operands reading one block: one read
    group = rd % GROUPS
    bank = (rd >> 11) * GROUPS + group
    worst = _counts(rd, group, GROUPS).max(axis=1)
    rbank = _counts(rd, bank, BANKS)
    if write is not None:
        wgroup = write % GROUPS
        wbank = (write >> 11) * GROUPS + wgroup
        worst = np.maximum(worst, _counts(write, wgroup, GROUPS).max(axis=1))
        wb = _counts(write, wbank, BANKS)
        if any(r.shape == write.shape and np.array_equal(np.where(r >= 0, (r >> 11) * GROUPS + r % GROUPS, -1),
                                                         np.where(write >= 0, wbank, -1)) for r in reads):
            wb = np.vstack([np.zeros((1, BANKS), wb.dtype), wb[:-1]])     # the write meets the next repeat's reads
        rw = rbank + wb
        worst = np.maximum(worst, np.where((rbank > 0) & (wb > 0), rw, 0).max(axis=1))
    return float(np.maximum(worst, base).sum())


def vector_repeat_cycles(repeats: int, base: float, dst, srcs) -> float:
    """Cycles of ``repeats`` repeats of a vector instruction on UB operands (addr, itemsize, lanes), cached."""
    key = (repeats, base, _key(dst), tuple(_key(s) for s in srcs))
    hit = _CACHE.get(key)
    if len(_CACHE) > 65536:
        _CACHE.clear()
    # a lane array is keyed by its id, so the hit must hold that very array (ids are reused once it is freed);
    # a lane count is keyed by its value, which is enough (large ints are new objects on every call)
    if hit is None or any(a is not b for a, b in zip(hit[1], _lane_objs(dst, srcs))
                          if b.__class__ is not int and not isinstance(b, np.integer)):
        reads = [operand_blocks(a, i, n, repeats) for a, i, n in srcs]
        write = operand_blocks(*dst, repeats) if dst is not None else None
        hit = _CACHE[key] = (repeat_cycles(reads, write, base), _lane_objs(dst, srcs))
    return hit[0]


def _key(op) -> tuple | None:
    if op is None:
        return None
    a, i, n = op
    return (a, i, n if isinstance(n, (int, np.integer)) else id(n))


def _lane_objs(dst, srcs) -> list:
    return [op[2] for op in ([dst] if dst is not None else []) + list(srcs)]
