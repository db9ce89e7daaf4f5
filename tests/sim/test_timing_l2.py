"""Timing model II, what-if checks with hand-computed expectations: the L2 cache and copy sizes."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import (ArgumentError, Ascend910B, CacheMode, DataCopy, GetBlockIdx, HardEvent, half, kernel,
                        launch)
from kernels_util import gm, handoff, scratch

CHIP = Ascend910B()
N = 32768                       # halves: 64 KB per copy
NB = N * 2
# per-core path rates (and the AIV's L2-hit rate) far above the chip's bandwidths: a single core then sees the
# bandwidths themselves
WIDE = dataclasses.replace(CHIP, gm_read_bytes_per_cycle=1e9, gm_write_bytes_per_cycle=1e9,
                           aiv_gm_l2_hit_bytes_per_cycle=1e9)


@kernel
def read_twice(x, hint_first):
    """Two copies of the same 64 KB of GM into UB; the first with ``hint_first`` as its cache mode."""
    xg = gm(x)
    t = scratch(NB, half)
    if hint_first is not None:
        first = gm(x)
        first.SetL2CacheHint(hint_first)
        DataCopy(t, first, N)
    else:
        DataCopy(t, xg, N)
    DataCopy(t, xg, N)


def _copy_cycles(res) -> list[float]:
    return [r.end - r.start for r in res.trace if r.op == "DataCopy"]


def test_l2_resident_reread_is_faster_by_the_bandwidth_ratio():
    res = launch(read_twice, 1, np.zeros(N, half), None, chip=WIDE)
    first, second = _copy_cycles(res)
    assert first == pytest.approx(WIDE.gm_read_startup + NB / WIDE.hbm_bytes_per_cycle)    # a miss: HBM
    assert second == pytest.approx(WIDE.gm_read_startup + NB / WIDE.l2_bytes_per_cycle)   # a hit: L2
    ratio = (first - WIDE.gm_read_startup) / (second - WIDE.gm_read_startup)
    assert ratio == pytest.approx(WIDE.l2_bytes_per_cycle / WIDE.hbm_bytes_per_cycle)      # 3784 / 760 = 4.98
    assert res.l2["l2_hit_rate"] == pytest.approx(0.5)
    assert res.l2["hbm_read_bytes"] == NB and res.l2["l2_bytes"] == NB


def test_a_bypassed_stream_leaves_l2_untouched():
    res = launch(read_twice, 1, np.zeros(N, half), CacheMode.CACHE_MODE_DISABLE, chip=WIDE)
    first, second = _copy_cycles(res)
    miss = WIDE.gm_read_startup + NB / WIDE.hbm_bytes_per_cycle
    assert first == pytest.approx(miss) and second == pytest.approx(miss)     # nothing was allocated
    assert res.l2["l2_hit_rate"] == 0 and res.l2["hbm_read_bytes"] == 2 * NB


def test_cache_hint_must_be_a_cache_mode():
    @kernel
    def bad(x):
        gm(x).SetL2CacheHint(1)

    with pytest.raises(ArgumentError, match="CacheMode"):
        launch(bad, 1, np.zeros(16, half))


@kernel
def write_then_read(z, x):
    """Write 64 KB of z from UB (dirty in L2), then read 64 KB of x: with a 64 KB L2 it evicts z."""
    t = scratch(NB, half)
    zg, xg = gm(z), gm(x)
    from ascend_sim import Duplicate
    Duplicate(t, 1.0, N)
    handoff(HardEvent.V_MTE3)
    DataCopy(zg, t, N)
    handoff(HardEvent.MTE3_MTE2)
    DataCopy(t, xg, N)


def test_dirty_victims_are_written_back_at_hbm_bandwidth():
    small = dataclasses.replace(WIDE, l2_bytes=NB)
    res = launch(write_then_read, 1, np.zeros(N, half), np.zeros(N, half), chip=small)
    write, read = _copy_cycles(res)
    assert write == pytest.approx(small.gm_write_startup + NB / small.l2_bytes_per_cycle)  # into L2
    # the read misses (64 KB from HBM) and evicts all of z, dirty: 64 KB more through HBM
    assert read == pytest.approx(small.gm_read_startup + 2 * NB / small.hbm_bytes_per_cycle)
    assert res.l2["writeback_bytes"] == NB and res.l2["dirty_bytes_left"] == 0
    big = launch(write_then_read, 1, np.zeros(N, half), np.zeros(N, half), chip=WIDE)
    assert _copy_cycles(big)[1] == pytest.approx(WIDE.gm_read_startup + NB / WIDE.hbm_bytes_per_cycle)
    assert big.l2["writeback_bytes"] == 0 and big.l2["dirty_bytes_left"] == NB


@kernel
def shared_tile(x):
    DataCopy(scratch(NB, half), gm(x), N)


@pytest.mark.parametrize("wait_for_fill", [True, False])
def test_reuse_across_cores_shows_as_hits(wait_for_fill):
    """Four blocks read the same tile: the first misses, the other three hit (blocks run in order). They read it at
    the same moment, so with ``gm_hit_waits_for_fill`` (the default) the hits end with the first block's fill; without
    it they move at their share of the L2 bandwidth."""
    # the windows' turns (gm_window_turns) off: this is the fill rule alone (tests/sim/test_timing_window_turns.py)
    chip = dataclasses.replace(WIDE, gm_hit_waits_for_fill=wait_for_fill, gm_window_turns=False)
    res = launch(shared_tile, 4, np.zeros(N, half), chip=chip)
    assert res.l2["l2_hit_rate"] == pytest.approx(0.75)
    assert res.l2["hbm_read_bytes"] == NB and res.l2["l2_bytes"] == 3 * NB
    (first, *rest) = _copy_cycles(res)
    assert first == pytest.approx(WIDE.gm_read_startup + NB / WIDE.hbm_bytes_per_cycle)   # HBM all its own
    share = 4 * (WIDE.hbm_share_prior_cycles + 0) / (WIDE.hbm_share_prior_cycles + 2)   # 4 cores copying at cycle 2
    hit = WIDE.gm_read_startup + NB / (WIDE.l2_bytes_per_cycle / share)
    assert rest == [pytest.approx(first if wait_for_fill else hit)] * 3
    assert "L2: read hit rate 75.0%" in str(res.profile())


def test_lru_evicts_the_least_recently_used_line():
    from ascend_sim.engine.l2 import L2Cache
    l2 = L2Cache(512, 2 * 512, 8 * 512)         # two lines
    assert l2.transfer(False, 0, 1, 512, 512, 512, 1) == (0.0, 512)          # line 0: miss
    assert l2.transfer(False, 512, 1, 512, 512, 512, 1) == (0.0, 512)        # line 1: miss
    assert l2.transfer(False, 0, 1, 512, 512, 512, 1) == (512.0, 0.0)        # line 0: hit, now most recent
    assert l2.transfer(False, 1024, 1, 512, 512, 512, 1) == (0.0, 512)       # line 2 evicts line 1
    assert l2.transfer(False, 0, 1, 512, 512, 512, 1) == (512.0, 0.0)        # line 0 stayed
    assert l2.transfer(False, 512, 1, 512, 512, 512, 1) == (0.0, 512)        # line 1 was the victim
    # strided bursts: 4 bursts of 64 B, 2 KB apart, touch 4 lines (not the 7 of their span)
    assert np.arange(64)[l2.lines(0, 4, 64, 2048)].tolist() == [0, 4, 8, 12]


def test_the_lines_of_strided_bursts_are_the_lines_their_bytes_touch():
    """L2Cache.lines (a run, a strided slice or an index array) against the lines of every byte, by brute force;
    and an LRU cache given strided slices counts and evicts as one given the same lines as an index array."""
    from ascend_sim.engine.l2 import L2Cache
    rng = np.random.default_rng(0)
    l2 = L2Cache(512, 1 << 20, 1 << 22)
    for _ in range(300):
        addr, count = int(rng.integers(0, 1 << 14)), int(rng.integers(1, 40))
        blen = int(rng.choice([32, 64, 480, 512, 1024, int(rng.integers(1, 2000))]))
        pitch = blen + int(rng.choice([0, 512, 1024, 16384 - blen % 512, int(rng.integers(0, 5000))]))
        want = sorted({(addr + k * pitch + b) // 512 for k in range(count) for b in range(blen)})
        assert np.arange(1 << 13)[l2.lines(addr, count, blen, pitch)].tolist() == want, (addr, count, blen, pitch)
    a, b, c = (L2Cache(512, 40 * 512, 1 << 20) for _ in range(3))
    every = np.arange(b.stamp.size)
    b.lines = lambda *args: every[L2Cache.lines(b, *args)]      # b: strided lines as an index array
    c.lines = lambda *args: every[L2Cache.lines(c, *args)]      # c: the same, bookkept per line from the start
    c._spell_out()
    for k in range(60):
        addr, write = int(rng.integers(0, 1 << 8)) * 512, bool(k % 3 == 0)
        assert a.lines(addr, 16, 512, 8192).__class__ is slice
        args = (write, addr, 16, 512, 8192, 16 * 512, 1)
        assert a.transfer(*args) == b.transfer(*args) == c.transfer(*args)
    assert a.stats() == b.stats() == c.stats() and a.resident == b.resident == c.resident <= 40


@kernel
def one_copy(x, n):
    DataCopy(scratch(n * 2, half), gm(x), n)


@pytest.mark.parametrize("small, big", [(2048, 16384)])
def test_a_4kb_copy_reaches_a_lower_fraction_of_peak_than_a_32kb_copy(small, big):
    """Fraction of peak = bytes / rate over the copy's cycles: the fixed startup weighs on short copies."""
    frac = {}
    for n in (small, big):
        (c,) = _copy_cycles(launch(one_copy, 1, np.zeros(n, half), n))
        frac[n] = n * 2 / CHIP.gm_read_bytes_per_cycle / c
    peak = CHIP.gm_read_bytes_per_cycle
    assert frac[small] == pytest.approx((4096 / peak) / (CHIP.gm_read_startup + 4096 / peak))     # 128/208 = 62 %
    assert frac[big] == pytest.approx((32768 / peak) / (CHIP.gm_read_startup + 32768 / peak))     # 1024/1104 = 93 %
    assert frac[small] < 0.7 < 0.9 < frac[big]


def test_the_no_eviction_fast_path_accounts_like_the_lru_path():
    """A launch whose GM fits in L2 keeps byte flags instead of LRU stamps: the same bytes either way."""
    from ascend_sim.engine.l2 import L2Cache
    fits = L2Cache(512, 1 << 20, 64 * 512)
    lru = L2Cache(512, 63 * 512, 64 * 512)         # one line short of the span: the LRU path, never evicting
    assert fits.fits and not lru.fits
    seq = [(False, 0, 1, 4096, 4096, 4096, 1), (True, 8192, 4, 128, 2048, 512, 1), (False, 0, 8, 512, 1024, 4096, 1),
           (False, 4096, 1, 8192, 8192, 8192, 0), (True, 0, 1, 1024, 1024, 1024, 0), (False, 8192, 4, 128, 2048, 512, 1)]
    for t in seq:
        assert fits.transfer(*t) == lru.transfer(*t), t
    assert fits.stats() == lru.stats()
    assert all(type(v) in (int, float) for v in lru.stats().values())    # plain numbers: no np.float64 in a profile


@pytest.mark.parametrize("line", [128, 512])
def test_the_fits_path_on_strided_slices_counts_as_numpy(line, monkeypatch):
    """``_transfer_fits`` takes bursts a whole number of lines apart (each over one line or a few: case (f)'s 512 B
    rows of four 128 B lines) as one bytearray slice per line of the burst; with ``_COLUMNS`` 0 every such transfer
    goes through numpy's index arrays instead. Random transfers (reads, writes, bypassed ones; rows starting
    mid-line, partly resident lines): the same (L2 bytes, HBM bytes) for each, the same counters, the same
    resident and dirty lines."""
    from ascend_sim.engine import l2 as l2_module
    from ascend_sim.engine.l2 import L2Cache
    rng = np.random.default_rng(7)
    seq = []
    for _ in range(400):
        count, pitch = int(rng.integers(2, 20)), line * int(rng.integers(2, 24))
        blen = int(rng.integers(1, pitch - line + 1))
        addr = int(rng.integers(0, 64 * line))
        mode = CacheMode.CACHE_MODE_DISABLE if rng.random() < 0.1 else CacheMode.CACHE_MODE_NORMAL
        seq.append((bool(rng.random() < 0.3), addr, count, blen, pitch, count * blen, mode))
    caches = []
    for columns in (l2_module._COLUMNS, 0):
        monkeypatch.setattr(l2_module, "_COLUMNS", columns)
        l2 = L2Cache(line, 1 << 24, 1 << 20)
        assert l2.fits
        caches.append((l2, [l2.transfer(*t) for t in seq]))
    (fast, got), (ref, want) = caches
    assert got == want
    assert fast.stats() == ref.stats() and fast.res == ref.res and fast.dirt == ref.dirt
    assert 0 < sum(fast.res) < len(fast.res)


def test_rows_of_one_line_mark_the_lines_they_touch():
    """The fits path's strided slices for rows inside one line each (an Nd2Nz tile's 128 B rows, 512 B apart): the
    four lines 0, 4, 8 and 12 (128 B lines) become resident, and only those: a read of line 0 then hits whole, one
    of line 1 misses whole. Hand-computed: 4 rows x 128 B miss (0, 512), then (128, 0), then (0, 128)."""
    from ascend_sim.engine.l2 import L2Cache
    l2 = L2Cache(128, 1 << 24, 1 << 20)
    assert l2.fits
    assert l2.transfer(False, 0, 4, 128, 512, 512, CacheMode.CACHE_MODE_NORMAL) == (0.0, 512)
    assert bytes(l2.res[:16]) == b"\x01\x00\x00\x00" * 4
    assert l2.transfer(False, 0, 1, 128, 128, 128, CacheMode.CACHE_MODE_NORMAL) == (128.0, 0)
    assert l2.transfer(False, 128, 1, 128, 128, 128, CacheMode.CACHE_MODE_NORMAL) == (0.0, 128)


@kernel
def strided_read(x, count, blen_blocks, gap_blocks):
    from ascend_sim import DataCopyParams
    DataCopy(scratch(count * blen_blocks * 32, half), gm(x), DataCopyParams(count, blen_blocks, gap_blocks, 0))


@pytest.mark.parametrize("blen, packages", [(128, 1), (256, 1), (512, 1), (640, 2), (1024, 2), (896, 3), (1056, 3)])
def test_each_burst_moves_whole_gm_packages(blen, packages):
    """A burst costs one 512 B package per whole line, one each for a 256 B and a 128 B piece, one for the rest (the
    rule without ``aiv_gm_miss_line_pieces``, which prices pieces of whole 128 B lines by their lines:
    tests/sim/test_timing_small_copies.py)."""
    count = 16
    x = np.zeros(count * 4096, half)
    whole = dataclasses.replace(CHIP, aiv_gm_miss_line_pieces=False)
    res = launch(strided_read, 1, x, count, blen // 32, (2048 - blen) // 32,   # bursts 2 KB apart: no two share a line
                 chip=whole)
    (c,) = _copy_cycles(res)
    assert c == CHIP.gm_read_startup + count * packages * 512 / CHIP.gm_read_bytes_per_cycle


@kernel
def own_tile(x):
    DataCopy(scratch(8192, half), gm(x)[GetBlockIdx() * 4096], 4096)


def test_hbm_is_booked_by_the_blocks_copying():
    """50 blocks on 48 AIV, each reading its own 8 KB (all misses). Block 0 finds HBM free and streams at
    its path rate; the first wave's blocks together ask for 48 x 32 B/cycle, more than the 865 HBM gives,
    so the last of them wait for bandwidth; the 2 blocks of the second wave find HBM free again."""
    cores = CHIP.aiv_count
    res = launch(own_tile, cores + 2, np.zeros((cores + 2) * 4096, half))
    cyc = {r.core: r.end - r.start for r in res.trace if r.op == "DataCopy"}
    alone = CHIP.gm_read_startup + 8192 / CHIP.gm_read_bytes_per_cycle            # 80 + 256 = 336
    assert cyc[0] == alone
    assert cyc[cores - 1] > alone * 1.5                                             # waited for HBM
    assert cyc[cores] == cyc[cores + 1] == alone
    busy_rate = sum(8192 for _ in range(cores)) / max(e for b, _, s, e, _ in res.core_times if b < cores)
    assert busy_rate <= CHIP.hbm_bytes_per_cycle * 1.001                            # never above HBM


class _ReferenceLru:
    """LRU by the book, one line at a time: an ordered dict of resident line -> dirty, least recent first
    (a transfer's lines are used in ascending order)."""

    def __init__(self, capacity: int):
        from collections import OrderedDict
        self.capacity, self.held = capacity, OrderedDict()

    def transfer(self, write, addr, count, blen, pitch, nbytes, mode):
        lines = sorted({(addr + k * pitch + b) // 512 for k in range(count) for b in range(blen)})
        hit = sum(line in self.held for line in lines)
        l2 = nbytes * hit / len(lines) if hit else 0.0
        if mode == CacheMode.CACHE_MODE_DISABLE:       # no allocation, no refresh: a write dirties what is held
            for line in lines:
                if write and line in self.held:
                    self.held[line] = True
            return l2, nbytes - l2
        for line in lines:
            self.held[line] = self.held.pop(line, False) or write
        written_back = 0
        while len(self.held) > self.capacity:
            written_back += 512 * self.held.popitem(last=False)[1]
        return (nbytes, written_back) if write else (l2, nbytes - l2 + written_back)


def _held_lines(l2) -> dict:
    """The resident lines of an LRU-path L2Cache -> whether each is dirty, from either bookkeeping."""
    if l2.per_line:
        held = np.flatnonzero(l2.stamp)
        return dict(zip(held.tolist(), l2.dirty[held].tolist()))
    out = {}
    for lines in l2.by_lines.values():
        where = lines.where
        every = np.arange(where.start, where.stop, where.step or 1) if where.__class__ is slice else where[0] + where[1]
        out.update((int(every[i]), i >= lines.dirty) for i in range(lines.live, lines.n))
    return out


@pytest.mark.parametrize("max_sets", [None, 20])
def test_the_per_set_lru_evicts_like_a_reference_lru(max_sets, monkeypatch):
    """Random transfers on tiles (strided rows of one line each or of two, and runs) whose lines are a tile's or no
    one's keep the LRU per set of lines; then transfers that overlap tiles in part switch it to per-line bookkeeping
    (or, with ``max_sets``, the 21st distinct transfer does). Every transfer's (L2 bytes, HBM bytes), the
    resident and dirty lines, against a per-line reference LRU: a wrong victim (order within a set, or between
    sets), a lost dirty bit or write-back shows, and so does a set whose lines (a pattern's) are kept in the wrong
    order."""
    from ascend_sim.engine import l2 as l2_module
    from ascend_sim.engine.l2 import L2Cache
    if max_sets:
        monkeypatch.setattr(l2_module, "MAX_SETS", max_sets)
    rng = np.random.default_rng(1)
    tiles = [((rows * 16 + col) * 512, 8, blen, 16 * 512)                      # 8 rows of 16 lines: a column
             for rows in (0, 8) for col in range(8) for blen in (512, 256)]    # (blen 256: the same lines)
    tiles += [((256 + 5 * j) * 512, 1, 5 * 512 - 100, 5 * 512) for j in range(6)]    # runs of 5 lines
    # rows of two lines each (an index array of lines: a pattern and a first line), the same lines by a second
    # shape (rows starting mid-line), and four lines asked for as two bursts (an index array that is a run) or one
    tiles += [((288 + 16 * rows + col) * 512 + skip, 8, blen, 16 * 512)
              for rows in (0, 8) for col in range(0, 16, 2) for skip, blen in ((0, 1024), (256, 768))]
    tiles += [(560 * 512 + 4 * 512 * j + 256, 2, 512, 1024) for j in range(4)]
    tiles += [(560 * 512 + 4 * 512 * j, 1, 2048, 2048) for j in range(4)]
    for capacity in (37, 50, 64):
        l2, ref = L2Cache(512, capacity * 512, 720 * 512), _ReferenceLru(capacity)
        for k in range(1200):
            if k < 1000:
                addr, count, blen, pitch = tiles[rng.integers(len(tiles))]
            else:                       # anywhere: overlaps tiles in part
                addr, count, blen, pitch = int(rng.integers(0, 580 * 512)), int(rng.integers(1, 9)), 512, 16 * 512
            write = bool(rng.random() < 0.3)
            mode = CacheMode.CACHE_MODE_DISABLE if rng.random() < 0.1 else CacheMode.CACHE_MODE_NORMAL
            args = (write, addr, count, blen, pitch, count * blen, mode)
            assert l2.transfer(*args) == ref.transfer(*args), (capacity, k, args)
            assert l2.resident == len(ref.held)
            assert l2.stats()["dirty_bytes_left"] == 512 * sum(ref.held.values())
            assert _held_lines(l2) == ref.held, (capacity, k, args)     # the same lines, the same dirty ones
            if k == 999:
                assert l2.per_line == bool(max_sets)        # the tiles kept the bookkeeping per set
                kinds = {lines.where.__class__ for lines in l2.by_lines.values()}
                assert max_sets or kinds == {slice, tuple}  # of both kinds: slices, patterns and first lines
        assert l2.per_line
