"""Shadow memory of one on-chip tier for the initcheck and the racecheck.

The tier is split into segments of 32-byte granules that share one history:
whether they were written, the last writer (pipe, sequence number, record)
and, per pipe that read them since, its last read (a dict pipe -> (sequence
number, record): usually one entry, so the write-after-read check is short).
Kernels touch a handful of buffers, so a short sorted list of segments is far
cheaper than state per granule: an access looks up its segments by bisection
and splits at most two of them. A write gives every segment it covers the same
history; it keeps their boundaries when they are few (``KEEP``), because the
reads that cut them usually come back (a cube kernel's LoadData reads its L1
tile fractal by fractal after every copy-in), and merges them into one segment
otherwise. Adjacent segments with the same history mean the same as one, so
the two choices give the same checks, errors and records.
"""
from __future__ import annotations

from bisect import bisect_right

import numpy as np

NPIPES = 7
NO_PIPE = NPIPES          # "never written": its clock entry is always ahead
KEEP = 256                # a write over at most this many segments resets them in place (no merge)


class Seg:
    """Granules [lo, hi) with one access history."""

    __slots__ = ("lo", "hi", "init", "wp", "ws", "wr", "rd")

    def __init__(self, lo: int, hi: int, init: bool, wp: int, ws: int, wr: int, rd: dict):
        self.lo = lo            # one statement each: faster than tuple unpacking into slots
        self.hi = hi
        self.init = init
        self.wp = wp            # last writer: pipe, its sequence number, its record index
        self.ws = ws
        self.wr = wr
        self.rd = rd            # {reading pipe: (sequence number, record index)} since that write

    def split_copy(self, at: int) -> "Seg":
        return Seg(at, self.hi, self.init, self.wp, self.ws, self.wr, dict(self.rd))


def runs(g) -> list[tuple[int, int]]:
    """Granule ranges of a region given as a slice, a list of runs or a sorted array of granule indices."""
    if isinstance(g, slice):
        return [(g.start, g.stop)] if g.stop > g.start else []
    if isinstance(g, list):
        return g
    g = np.asarray(g)
    if g.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(g) != 1)
    lo = np.concatenate(([g[0]], g[breaks + 1]))
    hi = np.concatenate((g[breaks], [g[-1]])) + 1
    return list(zip(lo.tolist(), hi.tolist()))


class Shadow:
    """The access history of one tier, as sorted non-overlapping segments."""

    def __init__(self, granules: int, keep: int = KEEP):
        self.size = granules
        self.keep = keep        # KEEP (tests compare against 0: always merge)
        self.version = 0        # bumped whenever segments are split or merged (core.Region caches one)
        self.starts = [0]
        self.segs = [Seg(0, granules, False, NO_PIPE, 0, -1, {})]

    def reset(self) -> None:
        """Nothing written, nothing read, for the next block on this tier.

        The segment boundaries stay (adjacent blank segments mean the same as one), so the next
        block, which usually allocates the same buffers, finds its segments where they were.
        """
        for s in self.segs:
            s.init = False
            s.wp = NO_PIPE
            s.ws = 0
            s.wr = -1
            s.rd = {}

    def _cut(self, g: int) -> int:
        """Make a segment start at granule ``g``; return its index (len(segs) at the end)."""
        if g >= self.size:
            return len(self.segs)
        i = bisect_right(self.starts, g) - 1
        s = self.segs[i]
        if s.lo == g:
            return i
        t = s.split_copy(g)
        self.version += 1
        s.hi = g
        self.segs.insert(i + 1, t)
        self.starts.insert(i + 1, g)
        return i + 1

    def span(self, lo: int, hi: int) -> list[Seg]:
        """The segments that cover exactly [lo, hi)."""
        i = self._cut(lo)
        j = self._cut(hi)
        return self.segs[i:j]

    def peek(self, lo: int, hi: int) -> list[Seg]:
        """The segments overlapping [lo, hi), without splitting (for checks only)."""
        i = bisect_right(self.starts, lo) - 1
        j = bisect_right(self.starts, hi - 1)
        return self.segs[max(i, 0):j]

    def _exact(self, lo: int, hi: int) -> Seg | None:
        """The segment that is exactly [lo, hi), if there is one.

        Fast path: kernels re-access the same buffers, so most accesses match one
        segment and need no cut, no insert and no list splice.
        """
        i = bisect_right(self.starts, lo) - 1
        s = self.segs[i]
        return s if s.lo == lo and s.hi == hi else None

    def write(self, lo: int, hi: int, pipe: int, seq: int, rec: int) -> None:
        """Record a write: every granule of [lo, hi) gets one history, written by ``pipe``."""
        s = self._exact(lo, hi)
        if s is not None:               # same result as the splice below, reusing the segment
            s.init = True
            s.wp = pipe
            s.ws = seq
            s.wr = rec
            s.rd = {}
            return
        i = self._cut(lo)
        j = self._cut(hi)
        if j - i <= self.keep:          # the same histories, the boundaries kept for the reads to come
            for s in self.segs[i:j]:
                s.init = True
                s.wp = pipe
                s.ws = seq
                s.wr = rec
                s.rd = {}
            return
        self.version += 1
        self.segs[i:j] = [Seg(lo, hi, True, pipe, seq, rec, {})]
        self.starts[i:j] = [lo]

    def read(self, lo: int, hi: int, pipe: int, seq: int, rec: int) -> None:
        """Record a read of [lo, hi) by ``pipe``."""
        s = self._exact(lo, hi)
        if s is not None:
            s.rd[pipe] = (seq, rec)
            return
        mark = (seq, rec)
        for s in self.span(lo, hi):
            s.rd[pipe] = mark

    def mark_init(self, lo: int, hi: int) -> None:
        """Scratch an instruction fills as a side effect (reduction work buffers)."""
        for s in self.span(lo, hi):
            s.init = True
