"""The chip's shared L2 cache (二级缓存) for one launch: which GM bytes a transfer finds in L2.

Model [EST, ../shared/reference/optimisation.md section 3; no official model was found]: LRU over
``chip.l2_line_bytes`` lines of every GM buffer of the launch, ``chip.l2_bytes`` in all. MTE2 reads
and MTE3/Fixpipe writes go through it: a read hit is served from L2, a miss from HBM and the line is
allocated; a write allocates its lines dirty (write-back). Making room evicts the least recently
used lines; a dirty victim is written back to HBM, and the transfer that evicted it pays for that.
A GlobalTensor in ``CacheMode.CACHE_MODE_DISABLE`` neither allocates nor refreshes lines: its
misses go straight to HBM and it leaves L2 as it was (its hits are still served from L2).

Blocks run one after another (engine/scheduler.py), so L2 sees each block's transfers in that
order: the first block to read a line misses and the others hit, as when cores share tiles.
Bookkeeping is per line with numpy: a last-use stamp (0: not resident) and a dirty bit per line,
and a queue of (stamp, lines) per transfer in use order, from which victims are taken.
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


class L2Cache:
    """LRU, write-allocate, write-back L2 over the GM span of one launch, with byte counters."""

    def __init__(self, line_bytes: int, capacity_bytes: int, span_bytes: int):
        self.line = line_bytes
        self.capacity = max(1, capacity_bytes // line_bytes)   # lines
        n = -(-span_bytes // line_bytes) + 1
        self.stamp = np.zeros(n, np.int64)      # last use of each line; 0: not resident
        self.dirty = np.zeros(n, np.bool_)
        self.resident = 0
        self.clock = 0
        self.order: deque = deque()             # (stamp, slice | line indices) in use order
        self.patterns: dict = {}                # (first line offset, count, blen, pitch) -> relative lines
        self.hit_bytes = 0          # transfer bytes served by L2 (read hits and writes into L2)
        self.hbm_read_bytes = 0     # read misses (allocated or not)
        self.hbm_write_bytes = 0    # bypassed writes and dirty write-backs
        self.writeback_bytes = 0    # of which write-backs of evicted dirty lines
        self.read_bytes = 0
        self.read_hit_bytes = 0

    # ------------------------------------------------------------------ lines
    def lines(self, addr: int, count: int, blen: int, pitch: int):
        """The lines ``count`` bursts of ``blen`` bytes ``pitch`` apart from GM offset ``addr`` touch.

        A slice when they cover a run of lines (one burst, or gaps shorter than a line), else an index array.
        """
        sh = self.line
        if count == 1 or pitch - blen < sh:
            return slice(addr // sh, -(-(addr + (count - 1) * pitch + blen) // sh))
        key = (addr % sh, count, blen, pitch)
        rel = self.patterns.get(key)
        if rel is None:
            starts = addr % sh + np.arange(count, dtype=np.int64) * pitch
            first, end = starts // sh, -(-(starts + blen) // sh)
            width = int((end - first).max())
            grid = first[:, None] + np.arange(width)[None, :]
            rel = self.patterns[key] = np.unique(grid[grid < end[:, None]])
        return rel + addr // sh

    # ------------------------------------------------------------------ transfers
    def transfer(self, write: bool, addr: int, count: int, blen: int, pitch: int, nbytes: int,
                 mode: int) -> tuple[float, float]:
        """Account one transfer; returns (bytes served by L2, bytes through HBM, write-backs included)."""
        where = self.lines(addr, count, blen, pitch)
        seg = self.stamp[where]
        n = seg.size
        hit = int(np.count_nonzero(seg))
        l2 = nbytes * hit / n if n else 0.0
        if mode == DISABLE:             # no allocation, no refresh; resident lines are still used
            if write and hit:
                self.dirty[where] |= seg > 0
            hbm = nbytes - l2
            if write:
                self.hbm_write_bytes += hbm
            else:
                self.hbm_read_bytes += hbm
                self.read_bytes += nbytes
                self.read_hit_bytes += l2
            self.hit_bytes += l2
            return l2, hbm
        self.clock += 1
        self.stamp[where] = self.clock
        self.order.append((self.clock, where))
        self.resident += n - hit
        if write:
            self.dirty[where] = True
            l2, hbm = float(nbytes), 0.0
        else:
            hbm = nbytes - l2
            self.hbm_read_bytes += hbm
            self.read_bytes += nbytes
            self.read_hit_bytes += l2
        self.hit_bytes += l2
        if self.resident > self.capacity:
            wb = self._evict(self.resident - self.capacity)
            self.hbm_write_bytes += wb
            self.writeback_bytes += wb
            hbm += wb
        return l2, hbm

    def _evict(self, k: int) -> int:
        """Evict the ``k`` least recently used lines; returns the bytes written back."""
        wb = 0
        order, stamp = self.order, self.stamp
        while k > 0 and order:
            s, where = order[0]
            live = stamp[where] == s
            pos = (np.arange(where.start, where.stop) if where.__class__ is slice else where)[live]
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

    def stats(self) -> dict:
        """Launch totals: L2 hit rate of reads and the bytes L2 and HBM served."""
        return {"l2_hit_rate": self.read_hit_bytes / self.read_bytes if self.read_bytes else 0.0,
                "l2_bytes": int(self.hit_bytes), "hbm_read_bytes": int(self.hbm_read_bytes),
                "hbm_write_bytes": int(self.hbm_write_bytes), "writeback_bytes": int(self.writeback_bytes),
                "dirty_bytes_left": int(np.count_nonzero(self.dirty)) * self.line}
