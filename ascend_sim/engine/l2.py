"""The chip's shared L2 cache (二级缓存) for one launch: which GM bytes a transfer finds in L2.

Model [EST; no official model was found. The facts it rests on: CANN's Ascend C programming guide, "L2 Cache
切分" and "设置合理的L2 CacheMode" (the public asc-devkit repository, https://github.com/cannmirror/asc-devkit,
``docs/zh/guide/``): MTE2 reads and MTE3/Fixpipe writes go through L2, victims are written back to GM]: LRU over
``chip.l2_line_bytes`` lines of every GM buffer of the launch, ``chip.l2_bytes`` in all. MTE2 reads
and MTE3/Fixpipe writes go through it: a read hit is served from L2, a miss from HBM and the line is
allocated; a write allocates its lines dirty (write-back). Making room evicts the least recently
used lines; a dirty victim is written back to HBM, and the transfer that evicted it pays for that.
A GlobalTensor in ``CacheMode.CACHE_MODE_DISABLE`` neither allocates nor refreshes lines: its
misses go straight to HBM and it leaves L2 as it was (its hits are still served from L2).

The blocks of a wave advance together in simulated time (engine/scheduler.py), so L2 sees their
transfers in about the chip's order: the first block to read a line misses and the others hit, as
when cores share tiles.
Bookkeeping is per transfer while every transfer's lines are those of an earlier one or lines no
transfer touched before (a tiled kernel's tiles, e.g. every copy of case (f), whose 512 B rows are four
128 B lines each): the lines of one such set (a ``_Lines``: a slice of lines, or a shared pattern and
a first line) were used together, so they share one last-use stamp, and since victims are taken in
line order from the oldest set its resident and its dirty lines are each a suffix of its lines; a few
Python ints per set say it all. The first transfer that overlaps another's lines
in part switches the cache, for good, to per-line bookkeeping with numpy (the same state, spelled
out): a last-use stamp (0: not resident) and a dirty bit per line. Either way a queue of (stamp,
lines) per transfer in use order gives the victims.
"""
from __future__ import annotations

import enum
from collections import deque

import numpy as np

GM_BASE = 0x1000_0000       # GM address of the first launch buffer (engine/scheduler.Launch._wrap_arg)


class CacheMode(enum.IntEnum):
    """``AscendC::CacheMode``: how a GlobalTensor's transfers use L2 (``SetL2CacheHint``)."""

    CACHE_MODE_DISABLE = 0      # do not allocate: read-once or write-once streams
    CACHE_MODE_NORMAL = 1       # allocate on read and write (the default)
    CACHE_MODE_LAST = 2         # treated as NORMAL
    CACHE_MODE_PERSISTENT = 4   # treated as NORMAL


DISABLE = CacheMode.CACHE_MODE_DISABLE
_count_nonzero = np.count_nonzero
_ONES = memoryview(b"\x01" * (1 << 20))
_F64 = np.float64
_COLUMNS = 16          # lines per burst at most for the strided-slice path of _transfer_fits (more: numpy)
MAX_SETS = 1 << 16      # distinct transfers kept per set of lines at most (memory); beyond, bookkeeping per line


def strided_units(addr: int, count: int, blen: int, pitch: int, unit: int, patterns: dict):
    """The units of ``unit`` bytes (L2 lines, 512 B windows) that ``count`` bursts of ``blen`` bytes ``pitch``
    apart from GM offset ``addr`` touch, in order.

    A slice when they cover a run of units (one burst, or gaps shorter than a unit) or one unit per burst a whole
    number of units apart (a strided slice: an Nd2Nz copy's 512-byte rows), else an index array. ``patterns``
    caches the index arrays by (first unit offset, count, blen, pitch), relative to the first unit.
    """
    if count == 1 or pitch - blen < unit:
        return slice(addr // unit, -(-(addr + (count - 1) * pitch + blen) // unit))
    if pitch % unit == 0 and addr % unit + blen <= unit:
        return slice(addr // unit, addr // unit + (count - 1) * (pitch // unit) + 1, pitch // unit)
    key = (addr % unit, count, blen, pitch)
    rel = patterns.get(key)
    if rel is None:
        starts = addr % unit + np.arange(count, dtype=np.int64) * pitch
        first, end = starts // unit, -(-(starts + blen) // unit)
        width = int((end - first).max())
        grid = first[:, None] + np.arange(width)[None, :]
        rel = patterns[key] = np.unique(grid[grid < end[:, None]])
    return rel + addr // unit


class _Lines:
    """The lines of one or more transfers, all used together: ``where`` (a slice of line numbers, or a pair (pattern,
    first line): the ascending lines ``pattern + first``, one pattern array per shape of lines), their count, the
    stamp of their last use, and the first of them still resident and the first dirty one (the lines before ``live``
    were evicted; those from ``dirty`` on are dirty, and ``dirty >= live``)."""

    __slots__ = ("where", "n", "stamp", "live", "dirty")

    def __init__(self, where: slice | tuple, n: int):
        self.where, self.n = where, n
        self.stamp, self.live, self.dirty = 0, n, n        # not resident, clean


class L2Cache:
    """LRU, write-allocate, write-back L2 over the GM span of one launch, with byte counters."""

    def __init__(self, line_bytes: int, capacity_bytes: int, span_bytes: int):
        self.line = line_bytes
        self.capacity = max(1, capacity_bytes // line_bytes)   # lines
        n = -(-span_bytes // line_bytes) + 1
        # when every GM byte of the launch fits in L2 nothing is ever evicted and use order does not
        # matter: residency and dirtiness are then byte flags, tested and set without numpy calls
        self.fits = n <= self.capacity
        self.stamp = np.zeros(0 if self.fits else n, np.int64)   # last use of each line; 0: not resident
        self.dirty = np.zeros(0 if self.fits else n, np.bool_)
        self.resident = 0
        self.clock = 0
        self.order: deque = deque()             # (stamp, _Lines | slice | (pattern, first line)) in use order
        self.patterns: dict = {}                # (first line offset, count, blen, pitch) -> relative lines
        self.hit_bytes = 0          # transfer bytes served by L2 (read hits and writes into L2)
        self.hbm_read_bytes = 0     # read misses (allocated or not)
        self.hbm_write_bytes = 0    # bypassed writes and dirty write-backs
        self.writeback_bytes = 0    # of which write-backs of evicted dirty lines
        self.read_bytes = 0
        self.read_hit_bytes = 0
        if self.fits:
            self.res = bytearray(n)
            self.dirt = bytearray(n)
            self.transfer = self._transfer_fits
        else:
            self.per_line = False               # True once a transfer overlapped another's lines in part
            self.sets: dict = {}                # (addr, count, blen, pitch) -> _Lines
            self.by_lines: dict = {}            # (start, stop, step) of the lines -> _Lines
            self.claimed = bytearray(n)         # 1: the line belongs to a _Lines
            self.pattern_ids: dict = {}         # a set's lines from its first (bytes) -> (number, those lines)
            self.transfer = self._transfer_sets

    # ------------------------------------------------------------------ lines
    def lines(self, addr: int, count: int, blen: int, pitch: int):
        """The lines ``count`` bursts of ``blen`` bytes ``pitch`` apart from GM offset ``addr`` touch
        (``strided_units`` with this cache's line size)."""
        return strided_units(addr, count, blen, pitch, self.line, self.patterns)

    # ------------------------------------------------------------------ transfers
    def _transfer_fits(self, write: bool, addr: int, count: int, blen: int, pitch: int, nbytes: int,
                       mode: int) -> tuple[float, float]:
        """``transfer`` when the launch's GM fits in L2 (no evictions): the same accounting on byte flags."""
        line = self.line
        res = self.res
        if count == 1 or pitch - blen < line:
            lo = addr // line
            hi = -(-(addr + (count - 1) * pitch + blen) // line)
            n = hi - lo
            if res.find(1, lo, hi) < 0:     # none resident (the usual streaming copy): a memchr, not a count
                hit = 0
            else:
                hit = n - res.count(0, lo, hi)
            if mode:                        # not CACHE_MODE_DISABLE (0)
                if hit < n:
                    res[lo:hi] = _ONES[:n]
                if write:
                    self.dirt[lo:hi] = _ONES[:n]
                    self.hit_bytes += nbytes
                    return nbytes, 0
                if not hit:                 # the usual streaming read: all misses
                    self.hbm_read_bytes += nbytes
                    self.read_bytes += nbytes
                    return 0.0, nbytes
            elif write and hit:             # a bypassed write still updates the lines L2 holds
                dirt = np.frombuffer(self.dirt, np.uint8)
                dirt[lo:hi] |= np.frombuffer(res, np.uint8)[lo:hi]
        elif mode and pitch % line == 0 and -(-(addr % line + blen) // line) <= _COLUMNS:
            # bursts a whole number of lines apart, each over ``width`` lines (Nd2Nz rows of one line or a few),
            # allocated: line ``j`` of every burst is one strided slice, so bytearray extended slices, no numpy call
            # (the lines are distinct: the gaps are a line or more)
            width, step, lo = -(-(addr % line + blen) // line), pitch // line, addr // line
            stop = lo + (count - 1) * step + 1
            cols = [slice(lo, stop, step)] if width == 1 else [slice(lo + j, stop + j, step) for j in range(width)]
            n = count * width
            hit = n
            for col in cols:
                hit -= res[col].count(0)
            ones = _ONES[:count]
            if hit < n:
                for col in cols:
                    res[col] = ones
            if write:
                dirt = self.dirt
                for col in cols:
                    dirt[col] = ones
        else:
            idx = strided_units(addr, count, blen, pitch, line, self.patterns)      # self.lines, one call less
            flags = np.frombuffer(res, np.uint8)
            n = count if idx.__class__ is slice else idx.size
            hit = int(_count_nonzero(flags[idx]))
            dirt = np.frombuffer(self.dirt, np.uint8)
            if mode != DISABLE:
                flags[idx] = 1
                if write:
                    dirt[idx] = 1
            elif write and hit:
                dirt[idx] |= flags[idx]
        if write and mode != DISABLE:       # write-allocate: the write lands in L2
            self.hit_bytes += nbytes
            return nbytes, 0
        l2 = nbytes * hit / n if hit else 0.0
        return l2, self._account(write, nbytes, l2)

    def _transfer_sets(self, write: bool, addr: int, count: int, blen: int, pitch: int, nbytes: int,
                       mode: int) -> tuple[float, float]:
        """``transfer`` with the bookkeeping per set of lines (module docstring): Python ints, no numpy calls."""
        if self.per_line:               # (for cores that bound this method before the switch)
            return L2Cache.transfer(self, write, addr, count, blen, pitch, nbytes, mode)
        lines = self.sets.get((addr, count, blen, pitch))
        if lines is None:
            lines = self._lines_of(addr, count, blen, pitch)
            if lines is None:           # overlaps another transfer's lines in part: per line from now on
                self._spell_out()
                return L2Cache.transfer(self, write, addr, count, blen, pitch, nbytes, mode)
        n = lines.n
        hit = n - lines.live
        l2 = _F64(nbytes * hit / n) if hit else 0.0     # float64, as the per-line path's numpy count gives
        if mode == DISABLE:             # no allocation, no refresh; resident lines are still used
            if write and hit:
                lines.dirty = lines.live
            return l2, self._account(write, nbytes, l2)
        self.clock = clock = self.clock + 1
        lines.stamp = clock
        lines.live = 0
        self.order.append((clock, lines))
        self.resident += n - hit
        if write:
            lines.dirty = 0
            self.hit_bytes += nbytes
            l2, hbm = nbytes, 0
        else:
            hbm = self._account(False, nbytes, l2)
        if self.resident > self.capacity:
            hbm += self._make_room(self._evict_sets)
        return l2, hbm

    def _lines_of(self, addr: int, count: int, blen: int, pitch: int) -> _Lines | None:
        """The set of a transfer's lines, made when no transfer touched them before; None when some but not all
        of them are another set's, or when there are too many sets."""
        if len(self.sets) >= MAX_SETS:
            return None
        where = self.lines(addr, count, blen, pitch)
        if where.__class__ is slice:
            key = (where.start, where.stop, where.step or 1)
        else:                           # ascending lines: a pattern (lines from 0) shared by shape, and a first line
            first = int(where[0])
            rel = where - first
            if int(rel[-1]) == rel.size - 1:        # distinct lines from 0 to n - 1: a run, as a slice
                where = slice(first, first + rel.size)
                key = (first, where.stop, 1)
            else:
                pid, rel = self.pattern_ids.setdefault(rel.tobytes(), (len(self.pattern_ids), rel))
                key = (-1 - pid, first)             # no slice key has a negative start
                where = (rel, first)
        lines = self.by_lines.get(key)
        if lines is None:
            if where.__class__ is slice:
                mine = self.claimed[where]
                if mine.count(1):
                    return None
                self.claimed[where] = _ONES[:len(mine)]
                n = len(mine)
            else:
                claimed = np.frombuffer(self.claimed, np.uint8)
                idx = where[0] + where[1]
                if claimed[idx].any():
                    return None
                claimed[idx] = 1
                n = idx.size
            lines = self.by_lines[key] = _Lines(where, n)
        self.sets[(addr, count, blen, pitch)] = lines
        return lines

    def _evict_sets(self, k: int) -> int:
        """``_evict`` on sets of lines: each set's first resident lines go first; returns the bytes written back."""
        wb = 0
        order = self.order
        while k > 0 and order:
            s, lines = order[0]
            left = lines.n - lines.live
            if lines.stamp != s or not left:    # used again since, or evicted already
                order.popleft()
                continue
            if left <= k:
                order.popleft()
            else:
                left = k
            cut = lines.live = lines.live + left
            if cut > lines.dirty:           # dirty lines among the evicted ones
                wb += (cut - lines.dirty) * self.line
                lines.dirty = cut
            self.resident -= left
            k -= left
        return wb

    def _spell_out(self) -> None:
        """Switch to per-line bookkeeping: each set's stamps and dirty bits written into the line arrays."""
        for lines in self.by_lines.values():
            if lines.live < lines.n:
                where = lines.where
                if where.__class__ is tuple:        # (pattern, first line)
                    rel, first = where
                    self.stamp[rel[lines.live:] + first] = lines.stamp
                    self.dirty[rel[lines.dirty:] + first] = True
                else:
                    self.stamp[where][lines.live:] = lines.stamp
                    self.dirty[where][lines.dirty:] = True
        self.order = deque((s, lines.where) for s, lines in self.order)
        self.per_line = True
        self.sets = self.by_lines = {}
        del self.transfer               # the class's per-line method from now on

    def _make_room(self, evict) -> int:
        """Evict what the lines resident beyond capacity need; count and return the bytes written back."""
        wb = evict(self.resident - self.capacity)
        self.hbm_write_bytes += wb
        self.writeback_bytes += wb
        return wb

    def _account(self, write: bool, nbytes: int, l2: float) -> float:
        """Count a transfer that L2 served ``l2`` bytes of and HBM the rest; returns the HBM bytes."""
        hbm = nbytes - l2
        if write:
            self.hbm_write_bytes += hbm
        else:
            self.hbm_read_bytes += hbm
            self.read_bytes += nbytes
            self.read_hit_bytes += l2
        self.hit_bytes += l2
        return hbm

    def transfer(self, write: bool, addr: int, count: int, blen: int, pitch: int, nbytes: int,
                 mode: int) -> tuple[float, float]:
        """Account one transfer; returns (bytes served by L2, bytes through HBM, write-backs included).

        Per line, on the numpy arrays: the LRU path once ``_spell_out`` ran (``_transfer_sets`` before)."""
        line = self.line
        if count == 1 or pitch - blen < line:       # a run of lines (the usual copy): views, no index arrays
            lo = addr // line
            where = slice(lo, -(-(addr + (count - 1) * pitch + blen) // line))
            seg = self.stamp[where]
        else:
            where = self.lines(addr, count, blen, pitch)
            seg = self.stamp[where]
        n = seg.size
        hit = _count_nonzero(seg)
        l2 = nbytes * hit / n if hit else 0.0
        if mode == DISABLE:             # no allocation, no refresh; resident lines are still used
            if write and hit:
                self.dirty[where] |= seg > 0
            return l2, self._account(write, nbytes, l2)
        self.clock = clock = self.clock + 1
        if where.__class__ is slice:
            seg.fill(clock)
        else:
            self.stamp[where] = clock
        # an index array is kept as its cached pattern and first line (patterns are shared: an Nd2Nz copy of
        # rows several lines long, 128 B lines, would otherwise hold one array per transfer: 190 MB at 8192^3)
        kept = where
        if where.__class__ is not slice:
            rel = self.patterns.get((addr % line, count, blen, pitch))
            if rel is not None and rel.size == where.size:
                kept = (rel, addr // line)
        self.order.append((clock, kept))
        self.resident += n - hit
        if write:
            if where.__class__ is slice:
                self.dirty[where].fill(True)
            else:
                self.dirty[where] = True
            l2, hbm = nbytes, 0
            self.hit_bytes += nbytes
        else:
            hbm = self._account(False, nbytes, l2)
        if self.resident > self.capacity:
            hbm += self._make_room(self._evict)
        return l2, hbm

    def _evict(self, k: int) -> int:
        """Evict the ``k`` least recently used lines; returns the bytes written back."""
        wb = 0
        order, stamp = self.order, self.stamp
        while k > 0 and order:
            s, where = order[0]
            if where.__class__ is tuple:    # (pattern, first line): the transfer's line indices
                where = where[0] + where[1]
            seg = stamp[where]          # a view when ``where`` is a slice
            live = seg == s
            n = int(_count_nonzero(live))
            if n == 0:                  # every line used again since: nothing of this transfer to evict
                order.popleft()
                continue
            if n == live.size and n <= k and where.__class__ is slice:     # all of it: views, no index arrays
                order.popleft()
                seg.fill(0)
                d = self.dirty[where]
                wb += int(_count_nonzero(d)) * self.line
                d.fill(False)
                self.resident -= n
                k -= n
                continue
            pos = (np.arange(where.start, where.stop, where.step or 1) if where.__class__ is slice else where)[live]
            if pos.size > k:
                pos = pos[:k]
            else:
                order.popleft()
            if pos.size:
                stamp[pos] = 0
                d = self.dirty[pos]
                wb += int(np.count_nonzero(d)) * self.line
                self.dirty[pos] = False
                self.resident -= pos.size
                k -= pos.size
        return wb

    def warm(self) -> "L2Cache":
        """This cache as the next run of the same launch finds it (``l2_warm_launch``): the lines, their use order
        and dirty bits kept, the byte counters back to 0."""
        self.hit_bytes = self.hbm_read_bytes = self.hbm_write_bytes = self.writeback_bytes = 0
        self.read_bytes = self.read_hit_bytes = 0
        return self

    def stats(self) -> dict:
        """Launch totals: L2 hit rate of reads and the bytes L2 and HBM served."""
        return {"l2_hit_rate": float(self.read_hit_bytes / self.read_bytes) if self.read_bytes else 0.0,
                "l2_bytes": int(self.hit_bytes), "hbm_read_bytes": int(self.hbm_read_bytes),
                "hbm_write_bytes": int(self.hbm_write_bytes), "writeback_bytes": int(self.writeback_bytes),
                "dirty_bytes_left": self._dirty_lines() * self.line}

    def _dirty_lines(self) -> int:
        if self.fits:                   # byte flags 0 / 1: numpy counts them faster than bytearray.count
            return int(_count_nonzero(np.frombuffer(self.dirt, np.uint8)))
        if self.per_line:
            return int(np.count_nonzero(self.dirty))
        return sum(lines.n - lines.dirty for lines in self.by_lines.values())
