"""Several cores' GM requests to one 512 B window served in turn (engine/bandwidth.WindowTurns, the chip's
``gm_window_turns``). Hand-computed on the 910B's cube-core copy path with L2 off for the data (CACHE_MODE_DISABLE:
every byte from HBM): a copy of one 512 B row costs START + 512 / 64 = 218 cycles, and holds its window for
512 / ``gm_window_bytes_per_cycle`` + ``gm_window_miss_hold_cycles`` = 8 + 210 = 218 cycles from its request.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import (PIPE_ALL, Ascend910B, CacheMode, DataCopy, Duplicate, GetBlockIdx, GlobalTensor, LocalTensor,
                        Nd2NzParams, PipeBarrier, TPosition, half, kernel, launch)

CHIP = dataclasses.replace(Ascend910B(), gm_hit_waits_for_fill=False)
START, RATE = CHIP.aic_gm_read_startup, CHIP.aic_gm_read_bytes_per_cycle
HOLD = 512 / CHIP.gm_window_bytes_per_cycle + CHIP.gm_window_miss_hold_cycles
COLS = 1024                     # halves per GM row: a row is 2 KB, four windows


@kernel(core="AIC")
def row_per_block(x, offsets: tuple, rows: int):
    """Block b copies ``rows`` rows of 512 B (256 halves), one per GM row, from element ``offsets[b]`` to L1."""
    xg = GlobalTensor(half)
    xg.SetGlobalBuffer(x, 16 * COLS)
    xg.SetL2CacheHint(CacheMode.CACHE_MODE_DISABLE)
    l1 = LocalTensor[half](TPosition.A1, 0, 16 * 256)
    DataCopy(l1, xg[offsets[GetBlockIdx()]], Nd2NzParams(1, rows, 256, 0, COLS, 16, 1, 0))


def copies(offsets: tuple, rule: bool, rows: int = 1) -> list[tuple[float, float]]:
    """(start, end) of each block's copy, in block order, with the rule on or off."""
    chip = dataclasses.replace(CHIP, gm_window_turns=rule)
    res = launch(row_per_block, len(offsets), np.zeros(16 * COLS, np.float16), offsets, rows, chip=chip,
                 numerics=False)
    return [(r.start, r.end) for r in sorted((r for r in res.trace if r.op == "DataCopy"), key=lambda r: r.core)]


def test_two_cores_in_one_window_are_served_in_turn():
    """Both request window 0 at the same cycle: the first is served at once (218 cycles); the second waits for
    the first's turn (218) and then takes its own: it ends 436 cycles after its start."""
    (s0, e0), (s1, e1) = copies((0, 0), rule=True)
    copy = START + 512 / RATE
    assert s0 == s1
    assert sorted([e0 - s0, e1 - s1]) == [pytest.approx(copy), pytest.approx(HOLD + copy)]
    (_, f0), (_, f1) = copies((0, 0), rule=False)       # the rule off: side by side
    assert [f0 - s0, f1 - s1] == [pytest.approx(copy)] * 2


def test_two_cores_in_two_windows_run_side_by_side():
    """The second core reads the next 512 B (window 1): no turn to wait for, both take 218 cycles."""
    (s0, e0), (s1, e1) = copies((0, 256), rule=True)
    assert [e0 - s0, e1 - s1] == [pytest.approx(START + 512 / RATE)] * 2


def test_cores_in_step_over_many_windows_wait_one_turn():
    """Two cores read the same 8 rows (8 windows, 2 KB apart) at once: the second requests each window one turn
    after the first (a stream behind it), so it ends one hold later, not eight."""
    (s0, e0), (s1, e1) = copies((0, 0), rule=True, rows=8)
    copy = START + 8 * 512 / RATE
    assert sorted([e0 - s0, e1 - s1]) == [pytest.approx(copy), pytest.approx(HOLD + copy)]


@kernel(core="AIV")
def write_per_block(y, offsets: tuple):
    """Block b writes 256 B (128 halves) from UB to GM at element ``offsets[b]`` (MTE3)."""
    yg = GlobalTensor(half)
    yg.SetGlobalBuffer(y, 16 * COLS)
    ub = LocalTensor[half](TPosition.VECOUT, 0, 128)
    Duplicate(ub, 1.0, 128)
    PipeBarrier(PIPE_ALL)
    DataCopy(yg[offsets[GetBlockIdx()]], ub, 128)


def writes(offsets: tuple, rule: bool) -> list[float]:
    """The cycles of each block's write, shortest first, with the rule on or off."""
    chip = dataclasses.replace(CHIP, gm_window_turns=rule)
    res = launch(write_per_block, len(offsets), np.zeros(16 * COLS, np.float16), offsets, chip=chip,
                 numerics=False)
    return sorted(r.end - r.start for r in res.trace if r.op == "DataCopy")


def test_writes_of_two_cores_to_one_window_take_turns():
    """MTE3 too: two AIV write the two halves of one 512 B window at once (one 256 B package each: 80 + 512 / 32 =
    96 cycles; the second finds the line L2 just allocated, which the model without the rule prices a little
    longer). A write lands in L2 (no miss), so its turn is its bytes at the window's rate, 256 / 64 = 4 cycles:
    the rule adds exactly that to the second write. Halves of two windows go side by side."""
    one = CHIP.gm_write_startup + 512 / CHIP.gm_write_bytes_per_cycle
    turn = 256 / CHIP.gm_window_bytes_per_cycle
    first, second = writes((0, 128), rule=False)
    assert first == pytest.approx(one)
    assert writes((0, 128), rule=True) == [pytest.approx(one), pytest.approx(second + turn)]
    assert writes((0, 256), rule=True) == [pytest.approx(one)] * 2


def replay(requests: list[tuple], max_pending: int, runs: bool = True, switch_at: int | None = None,
           max_runs: int = 1 << 16, missed: float = 0.5) -> tuple[list[float], np.ndarray, np.ndarray, np.ndarray]:
    """Feed ``requests`` (addr, count, blen, pitch, core, start[, moving: count * blen / 64 if not given]) to a
    WindowTurns; the lags and its final arrays.
    ``runs=False``: per window from the start; ``switch_at``: how many requests it must keep per run (then it
    must have switched to per window by the end); ``max_runs``: runs kept at most; ``missed``: each request's
    share of bytes from HBM."""
    from ascend_sim.engine.bandwidth import WindowTurns
    turns = WindowTurns(512, 1 << 20, 64.0, 210.0, runs=runs)
    turns.max_pending = max_pending
    turns.max_runs = max_runs
    lags = []
    for i, (a, n, b, p, core, t, *moving) in enumerate(requests):
        if i == switch_at:
            assert turns.runs, "the requests before the switch were kept per run"
        lags.append(turns.wait(a, n, b, p, n * b, core, t, moving[0] if moving else n * b / 64, missed))
    if switch_at is not None:
        assert turns.runs is None, "a request overlapping a run in part switched the bookkeeping to per window"
    turns.settle()
    return lags, turns.since.copy(), turns.free.copy(), turns.owner.copy()


def test_requests_kept_unwritten_give_what_writing_each_at_once_gives():
    """The lazy bookkeeping (a page only one core has used keeps its requests unwritten) changes no wait and no
    window: three cores, each first in its own pages, then in each other's, in one window and in strided rows."""
    rng = np.random.default_rng(7)
    requests = []
    t = 0.0
    for i in range(400):
        core = int(rng.integers(3))
        own = i < 150                                   # first each core in its own 64 KB, then anywhere
        base = core * 65536 if own else 0
        addr = base + int(rng.integers(0, 60000 if own else 190000)) // 32 * 32
        count, blen = int(rng.integers(1, 9)), int(rng.choice([32, 128, 512, 2048]))
        pitch = blen + int(rng.choice([0, 0, 512, 1536]))
        t += float(rng.integers(0, 40))
        requests.append((addr, count, blen, pitch, core, t))
    lazy, eager = replay(requests, 4096), replay(requests, 0, runs=False)
    assert sum(lag > 0 for lag in eager[0]) > 20           # the requests meet: many waits to agree on
    assert lazy[0] == eager[0]
    for a, b in zip(lazy[1:], eager[1:]):
        assert np.array_equal(a, b)


def test_requests_kept_per_run_give_what_the_windows_arrays_give():
    """The bookkeeping per run (every request asks for the windows of an earlier one or for new ones: a tiled
    matmul's cores reading shared tiles) changes no wait and no window, then switches to per window at the first
    request that overlaps a run in part (or at too many runs): four cores read strided 512 B rows (Nd2Nz tiles, rows
    8 KB apart), runs of whole windows and single windows, each tile several times, at nearby times so that turns
    meet and queue."""
    rng = np.random.default_rng(11)
    tiles = [(k * 512, 64, 512, 8192) for k in range(8)]               # 64 rows of 512 B, one window each
    tiles += [(1 << 19 | k * 4096, 4, 1024, 1024) for k in range(4)]   # 4 KB runs of windows
    tiles += [(3 << 18 | k * 512, 1, 256, 256) for k in range(4)]      # one window each
    requests = []
    t = 0.0
    for i in range(600):
        if i == 500:                                    # from here: parts of runs (a window in the middle, two runs)
            tiles += [(1 << 19 | 1024, 1, 512, 512), (3 << 18 | 256, 2, 128, 512)]
        a, n, b, p = tiles[int(rng.integers(len(tiles)))]
        t += float(rng.integers(0, 60))
        requests.append((a, n, b, p, int(rng.integers(4)), t, n * b / float(rng.choice([16, 64, 256]))))
    first_part = next(i for i, r in enumerate(requests) if r[:4] in [(1 << 19 | 1024, 1, 512, 512),
                                                                    (3 << 18 | 256, 2, 128, 512)])
    per_window = replay(requests, 0, runs=False)
    assert sum(lag > 0 for lag in per_window[0][:first_part]) > 50    # the turns meet: waits to agree on
    for kept in (replay(requests, 4096, switch_at=first_part),
                 replay(requests, 4096, switch_at=12, max_runs=12)):    # more tiles than runs it may keep
        assert kept[0] == per_window[0]
        for a, b in zip(kept[1:], per_window[1:]):
            assert np.array_equal(a, b)


def test_a_new_run_kept_as_its_request_gives_what_the_windows_arrays_give():
    """A request for windows no request asked for before is kept as its request (core, start, moving, hold) until
    another request asks for the same windows: a second core asking for them during the first one's turns waits
    exactly as with the per-window arrays (a run of 8 windows and a run of one, each asked for again within and
    after the turns), and so does a request overlapping them in part (the switch to per window)."""
    requests = [(0, 4, 1024, 1024, 0, 0.0, 256.0),         # core 0: windows 0-7 (4 KB), turns until ~369
                (1 << 19, 1, 256, 256, 0, 0.0, 4.0),        # core 0: one window
                (0, 4, 1024, 1024, 1, 50.0, 256.0),         # core 1, the same windows during core 0's turns
                (1 << 19, 1, 256, 256, 1, 10.0, 4.0),       # core 1, the one window during core 0's turn
                (1 << 12, 2, 512, 512, 2, 60.0, 16.0),      # core 2: windows 8-9, a new run
                (1 << 12, 2, 512, 512, 3, 70.0, 16.0),      # core 3: the same, during core 2's turns
                (512 * 9, 1, 512, 512, 0, 80.0, 8.0)]       # window 9 alone: part of a run, the switch
    kept = replay(requests, 4096, switch_at=6)
    per_window = replay(requests, 0, runs=False)
    assert all(lag > 0 for lag in per_window[0][2:4]), "the second requests meet the first ones' turns"
    assert kept[0] == per_window[0]
    for a, b in zip(kept[1:], per_window[1:]):
        assert np.array_equal(a, b)


def test_a_page_two_cores_held_keeps_their_turns_after_the_switch():
    """When the bookkeeping switches to per window, a page whose windows two cores last held is shared: core 1's
    later request to core 0's window waits out core 0's turn (218 cycles from 0, asked at 100: 118) instead of
    being kept unwritten as if the page were core 1's."""
    hold = 512 / 64 + 210                               # 512 B of one window, all from HBM: 218 cycles
    requests = [(0, 1, 512, 512, 0, 0.0, 8.0),          # core 0: window 0 (a run), its turn 0 .. 218
                (512, 1, 512, 512, 1, 0.0, 8.0),        # core 1: window 1, same page
                (8 * 512, 2, 512, 512, 2, 0.0, 16.0),   # core 2: windows 8-9 (the next page)
                (9 * 512, 1, 512, 512, 2, 50.0, 8.0),   # window 9 alone: part of a run, the switch
                (0, 1, 512, 512, 1, 100.0, 8.0)]        # core 1 in core 0's window 0 during its turn
    for runs in (True, False):
        lags = replay(requests, 4096, runs=runs, switch_at=3 if runs else None, missed=1.0)[0]
        assert lags[4] == pytest.approx(hold - 100)


def test_the_units_a_strided_copy_touches_for_windows_and_lines():
    """One helper gives the 512 B windows (WindowTurns) and the L2 lines (L2Cache) a copy touches: a slice for a
    run of units or one unit per burst, else the unit numbers, by hand for 512 B and 128 B units."""
    from ascend_sim.engine.l2 import strided_units

    def units(addr, count, blen, pitch, unit):
        got = strided_units(addr, count, blen, pitch, unit, {})
        return list(range(got.start, got.stop, got.step or 1)) if isinstance(got, slice) else got.tolist()

    assert units(0, 4, 512, 512, 512) == [0, 1, 2, 3]                  # one run
    assert units(512, 3, 512, 2048, 512) == [1, 5, 9]                  # one window per row, 4 apart
    assert units(512, 3, 512, 2048, 128) == [4, 5, 6, 7, 20, 21, 22, 23, 36, 37, 38, 39]
    assert units(450, 3, 100, 1024, 512) == [0, 1, 2, 3, 4, 5]         # rows across window edges
    assert units(450, 3, 100, 1024, 128) == [3, 4, 11, 12, 19, 20]
