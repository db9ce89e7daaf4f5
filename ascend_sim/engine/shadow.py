"""Shadow memory of one on-chip tier for the initcheck and the racecheck.

The tier is split into segments of 32-byte granules that share one write history:
whether they were written and the last writer (pipe, sequence number, record).
Writes cut segments at their bounds; reads never do. A segment keeps, per pipe,
its last read of the whole segment (``rd``: pipe -> (sequence number, record),
usually one entry, so the write-after-read check is short) and, apart, the reads
of a part of it (``pm``: each pipe's latest such sequence number, the quick test;
``pr``: the latest read per pipe and access pattern with its granule runs, for
the exact answer). A cube kernel's LoadData reads its L1 tile fractal by fractal
after every copy-in: the tile stays one segment, so the next copy-in checks one
segment, not the 128 fractals the reads would have cut it into.

A write gives every segment it covers the same history; it keeps their boundaries
when they are few (``KEEP``) and merges them into one segment otherwise. Adjacent
segments with the same history mean the same as one, so the two choices give the
same checks, errors and records. Per granule the history is the same as if reads
cut segments too: a granule's readers are the whole-segment reads and the partial
reads whose runs cover it (:meth:`Shadow.granule_history`).
"""
from __future__ import annotations

from bisect import bisect_right

import numpy as np

NPIPES = 7
NO_PIPE = NPIPES          # "never written": its clock entry is always ahead
KEEP = 256                # a write over at most this many segments resets them in place (no merge)


class Seg:
    """Granules [lo, hi) with one write history and the reads since that write."""

    __slots__ = ("lo", "hi", "init", "wp", "ws", "wr", "rd", "pm", "pr")

    def __init__(self, lo: int, hi: int, init: bool, wp: int, ws: int, wr: int, rd: dict):
        self.lo = lo            # one statement each: faster than tuple unpacking into slots
        self.hi = hi
        self.init = init
        self.wp = wp            # last writer: pipe, its sequence number, its record index
        self.ws = ws
        self.wr = wr
        self.rd = rd            # {reading pipe: (sequence number, record index)}: reads of the whole segment
        self.pm = None          # None, or {reading pipe: its latest sequence number} of reads of a part of it
        self.pr = None          # and those reads: {pattern key * 8 + pipe: (sequence number, record, runs)}

    def split_copy(self, at: int) -> "Seg":
        """The part from granule ``at`` on, as its own segment (this one is cut there by the caller)."""
        t = Seg(at, self.hi, self.init, self.wp, self.ws, self.wr, dict(self.rd))
        if self.pr is not None:
            t.pm, t.pr = _parts(self.pr, at, self.hi)
            self.pm, self.pr = _parts(self.pr, self.lo, at)
        return t

    def clear_reads(self) -> None:
        self.rd = {}
        self.pm = self.pr = None

    def read_part(self, key: int, pipe: int, seq: int, rec: int, rs: list) -> None:
        """Record a read by ``pipe`` of the granules of runs ``rs`` that lie in this segment (not all of it)."""
        if self.pm is None:
            self.pm = {pipe: seq}
            self.pr = {key: (seq, rec, rs)}
        else:
            self.pm[pipe] = seq
            self.pr[key] = (seq, rec, rs)

    def readers_at(self, g: int) -> dict:
        """{pipe: (sequence number, record)}: the latest read of granule ``g`` by each pipe, in first-read order."""
        out = dict(self.rd)
        if self.pr:
            for key, (seq, rec, rs) in self.pr.items():
                p = key & 7
                if any(lo <= g < hi for lo, hi in rs) and (p not in out or out[p][0] < seq):
                    out[p] = (seq, rec)
        return out


def _parts(pr: dict, lo: int, hi: int) -> tuple:
    """The partial reads of ``pr`` that touch granules [lo, hi), with their per-pipe maximum (None: none)."""
    kept = {k: v for k, v in pr.items() if any(a < hi and b > lo for a, b in v[2])}
    if not kept:
        return None, None
    pm: dict = {}
    for k, (seq, _, _) in kept.items():
        if seq > pm.get(k & 7, -1):
            pm[k & 7] = seq
    return pm, kept


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

    __slots__ = ("size", "keep", "version", "starts", "segs", "patterns")   # every issue reads ``version``

    def __init__(self, granules: int, keep: int = KEEP):
        self.size = granules
        self.keep = keep        # KEEP (tests compare against 0: always merge)
        self.version = 0        # bumped whenever segments are split or merged (core.Region caches one)
        self.starts = [0]
        self.segs = [Seg(0, granules, False, NO_PIPE, 0, -1, {})]
        self.patterns: dict = {}    # a partial read's runs (tuple) -> its pattern key (reads of one pattern replace)

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
            s.pm = s.pr = None

    def pattern(self, rs: list) -> int:
        """The key of a read's granule runs: reads with the same runs by one pipe keep only the latest."""
        k = tuple(rs)
        p = self.patterns.get(k)
        if p is None:
            p = self.patterns[k] = len(self.patterns) * 8
        return p

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
        if s is not None:               # same result as the cut below, reusing the segment
            segs = (s,)
        else:
            i = self._cut(lo)
            j = self._cut(hi)
            if j - i > self.keep:       # many segments: merged into one
                self.version += 1
                self.segs[i:j] = [Seg(lo, hi, True, pipe, seq, rec, {})]
                self.starts[i:j] = [lo]
                return
            segs = self.segs[i:j]       # the same histories, the boundaries kept for the writes to come
        for s in segs:
            s.init = True
            s.wp = pipe
            s.ws = seq
            s.wr = rec
            s.rd = {}
            s.pm = s.pr = None

    def touched(self, rs: list) -> list[Seg]:
        """The segments that overlap granule runs ``rs`` (sorted, disjoint): one bisection, then a merge walk."""
        if len(rs) == 1:        # contiguous (the common case): peek inlined
            lo, hi = rs[0]
            starts = self.starts
            i = bisect_right(starts, lo) - 1
            return self.segs[i if i > 0 else 0:bisect_right(starts, hi - 1)]
        out, k = [], 0
        for s in self.peek(rs[0][0], rs[-1][1]):
            while k < len(rs) and rs[k][1] <= s.lo:
                k += 1
            if k < len(rs) and rs[k][0] < s.hi:
                out.append(s)
        return out

    def read_segments(self, rs: list) -> tuple:
        """(every segment a read of runs ``rs`` touches, those it covers whole, those it covers in part or None)."""
        segs = self.touched(rs)
        whole, part = [], []
        for s in segs:
            covered = False
            for lo, hi in rs:
                if lo <= s.lo and s.hi <= hi:
                    covered = True
                    break
            (whole if covered else part).append(s)
        return tuple(segs), tuple(whole), tuple(part) if part else None

    def read(self, rs: list, pipe: int, seq: int, rec: int) -> None:
        """Record a read of granule runs ``rs`` by ``pipe``; segments are not cut (``Core.issue_n`` does the same
        inline on the segments ``read_segments`` gives)."""
        _, whole, part = self.read_segments(rs)
        for s in whole:
            s.rd[pipe] = (seq, rec)
        if part:
            key = self.pattern(rs) + pipe
            for s in part:
                s.read_part(key, pipe, seq, rec, rs)

    def granule_history(self, g: int) -> tuple:
        """Granule ``g``'s history: written?, last writer (pipe, seq, record), its readers in first-read order."""
        s = self.segs[bisect_right(self.starts, g) - 1]
        return (s.init, s.wp, s.ws, s.wr, tuple(s.readers_at(g).items()))

    def mark_init(self, lo: int, hi: int) -> None:
        """Scratch an instruction fills as a side effect (reduction work buffers)."""
        for s in self.span(lo, hi):
            s.init = True
