"""Reads of data that another tensor's write overwrote before use (two local tensors placed over each other).

Static allocation (``LocalTensor<T>(pos, addr, tileSize)``) lets a kernel place two tensors on shared bytes. Then a
copy into the second lands in the middle of the first's data, and a later read of the first gets some of the
second's bytes: no pipe races (the chip does exactly this every time), so racecheck is silent, and inputs of zeros
hide it (the official cross_core_set_wait_flag sample's scenario 2 places its L1 B tile at byte 512, inside the A
tile's 1,024 bytes). The signature, per core in program order: a write W2 covers bytes that an earlier write W1
wrote and nothing has read since, and W2's range reaches outside W1's (an update of a slice of the same buffer lies
inside it); then an instruction reads what is left of W1's data (so W1's data was meant to be used, and part of it
is gone). Only the granules an instruction writes are known, so it is a finding for a person to judge, not proof.

It reads a launch's records (trace/table.py ``regions()``): writes are known to the 32-byte granule.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.trace.table import as_table

GRANULE = 32


@dataclass(frozen=True)
class Overwrite:
    """One finding in ``tier``: ``second`` (a write of ``second_span``) overwrote bytes ``lost`` of what ``first``
    wrote (``first_span``) before anything read them, and ``reader`` then read ``first``'s data that was left.
    Records are indices into the table; spans are [first byte, end byte)."""

    tier: str
    first: int
    first_span: tuple[int, int]
    second: int
    second_span: tuple[int, int]
    lost: tuple[int, int]
    reader: int


def overwritten_reads(trace) -> list[Overwrite]:
    """Every read of data whose other part a write of another, overlapping range overwrote unread (record order)."""
    table = as_table(trace)
    regions = table.regions()
    if regions is None:
        return []
    found: list[Overwrite] = []
    cores: dict[tuple, _Core] = {}
    for i, (reads, writes) in enumerate(regions):
        core = cores.setdefault((int(table.core[i]), str(table.core_type[i])), _Core())
        for tier, lo, hi in reads:
            found += core.read(tier, lo, hi, i)
        for tier, lo, hi in writes:
            core.write(tier, lo, hi, i)
    return found


class _Core:
    """One core's local memories: per granule the last writer and whether anything read it since."""

    def __init__(self):
        self.writer: dict[str, np.ndarray] = {}     # tier -> last writer record per granule (-1: none)
        self.unread: dict[str, np.ndarray] = {}     # tier -> nothing read the granule since its last write
        self.spans: dict[tuple, tuple] = {}         # (record, tier) -> (first byte, end byte) it wrote
        self.pending: dict[tuple, list] = {}        # (record W1, tier) -> [(W2, lost span)] not yet reported

    def read(self, tier: str, lo: int, hi: int, i: int) -> list[Overwrite]:
        w = self.writer.get(tier)
        if w is None:
            return []
        g = slice(lo // GRANULE, min(hi // GRANULE, w.size))
        out = []
        for first in np.unique(w[g][w[g] >= 0]):
            for second, lost in self.pending.pop((int(first), tier), ()):
                out.append(Overwrite(tier, int(first), self.spans[(int(first), tier)], second,
                                     self.spans[(second, tier)], lost, i))
        self.unread[tier][g] = False
        return out

    def write(self, tier: str, lo: int, hi: int, i: int) -> None:
        w, unread = self._grown(tier, hi // GRANULE)
        g = slice(lo // GRANULE, hi // GRANULE)
        old = self.spans.get((i, tier))
        self.spans[(i, tier)] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
        gone = w[g][(w[g] >= 0) & (w[g] != i) & unread[g]]
        for first in np.unique(gone):
            f_lo, f_hi = self.spans[(int(first), tier)]
            if lo < f_lo or hi > f_hi:          # reaches outside the first write's range: another buffer
                at = np.flatnonzero(w[g] == first) + lo // GRANULE
                self.pending.setdefault((int(first), tier), []).append(
                    (i, (int(at[0]) * GRANULE, (int(at[-1]) + 1) * GRANULE)))
        w[g] = i
        unread[g] = True

    def _grown(self, tier: str, size: int) -> tuple[np.ndarray, np.ndarray]:
        w = self.writer.get(tier)
        if w is None or w.size < size:
            n = max(size, 0 if w is None else 2 * w.size)
            nw, nu = np.full(n, -1, np.int64), np.zeros(n, bool)
            if w is not None:
                nw[:w.size], nu[:w.size] = w, self.unread[tier]
            self.writer[tier], self.unread[tier] = nw, nu
        return self.writer[tier], self.unread[tier]

