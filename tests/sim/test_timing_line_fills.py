"""Same-address reads across cores (engine/bandwidth.LineFills): a read that hits L2 lines another core's miss is
still filling ends with that fill, when the chip's ``gm_hit_waits_for_fill`` is on. Hand-computed on the 910B's
cube-core copy path: a copy of 32 rows of 512 B costs START + 32 x 512 / 64 when it misses L2 and 32 x 512 / the
chip's L2-hit rate when L2 serves it (no start: ``aic_gm_start_on_misses_only``), so with a hit rate of 128 a miss
takes START + 256 cycles and a hit 128.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import (Ascend910B, DataCopy, GetBlockIdx, GlobalTensor, Nd2NzParams, TPipe, TPosition, TQue, half,
                        kernel, launch)

# the windows' turns off: this is the fill rule alone (tests/sim/test_timing_window_turns.py)
CHIP = dataclasses.replace(Ascend910B(), aic_gm_l2_hit_bytes_per_cycle=128.0, gm_window_turns=False)
START, MISS, HIT = CHIP.aic_gm_read_startup, CHIP.aic_gm_read_bytes_per_cycle, 128.0
COLS = 4096                     # halves per GM row: each 512 B row of a tile in its own window
ROWS, TILE_COLS = 32, 256       # a 32 x 256 half tile: 32 rows of 512 B


@kernel(core="AIC")
def copies_per_block(x, offsets: tuple):
    """Block b copies the tiles at ``offsets[b]`` (elements into x) to L1, one after another."""
    xg = GlobalTensor(half)
    xg.SetGlobalBuffer(x, 64 * COLS)
    mine = offsets[GetBlockIdx()]
    pipe = TPipe()
    q = TQue(TPosition.A1, len(mine))
    pipe.InitBuffer(q, len(mine), ROWS * TILE_COLS * 2)
    held = []
    for off in mine:
        held.append(q.AllocTensor(half))
        DataCopy(held[-1], xg[off], Nd2NzParams(1, ROWS, TILE_COLS, 0, COLS, ROWS, 1, 0))
    for t in held:
        q.FreeTensor(t)


def copies(offsets: tuple, rule: bool) -> dict:
    """{block: [(start, end) of each copy]} for the blocks' copies, with the rule on or off."""
    chip = dataclasses.replace(CHIP, gm_hit_waits_for_fill=rule)
    res = launch(copies_per_block, len(offsets), np.zeros(64 * COLS, np.float16), offsets, chip=chip,
                 numerics=False)
    out: dict = {}
    for r in res.trace:
        if r.op == "DataCopy":
            out.setdefault(r.core, []).append((r.start, r.end))
    return out


def test_a_hit_on_lines_still_filling_ends_with_the_fill():
    """Two cores read one tile at the same moment: the first misses (START + 256); the second finds the lines in
    L2, but they are still arriving, so it ends with the fill (START + 256), not at the hit rate (128)."""
    on = copies(((0,), (0,)), rule=True)
    off = copies(((0,), (0,)), rule=False)
    miss = START + ROWS * 512 / MISS
    (t0, _), = on[0]                                                     # both start when the scalar issues them
    assert on[0] == [(t0, pytest.approx(t0 + miss))] and off[0] == on[0]
    assert on[1] == [(t0, pytest.approx(t0 + miss))]
    assert off[1] == [(t0, pytest.approx(t0 + ROWS * 512 / HIT))]      # the rule off: a hit at once


def test_a_hit_after_the_fill_landed_moves_at_the_hit_rate():
    """Core 1 first copies a tile of its own (a miss), then the shared tile, which core 0's fill has landed by
    then: an ordinary hit, rule or not."""
    on = copies(((0,), (32 * COLS, 0)), rule=True)
    miss, hit = START + ROWS * 512 / MISS, ROWS * 512 / HIT
    (t0, _), = on[0]
    first, second = on[1]
    assert first == (t0, pytest.approx(t0 + miss))
    assert second == (pytest.approx(t0 + miss), pytest.approx(t0 + miss + hit))


def test_one_core_rereading_its_own_fill_is_not_held():
    """The rule is about other cores: a core's second read of lines it is itself filling is an ordinary hit."""
    on = copies(((0, 0),), rule=True)
    miss, hit = START + ROWS * 512 / MISS, ROWS * 512 / HIT
    t0 = on[0][0][0]
    assert on[0] == [(t0, pytest.approx(t0 + miss)), (pytest.approx(t0 + miss), pytest.approx(t0 + miss + hit))]


@pytest.mark.parametrize("time_order", [False, True])
def test_a_hit_issued_before_its_filler_waits_one_fill_time_in_time_order(time_order):
    """``gm_fill_wait_in_time_order`` (on by default, engine/bandwidth.LineFills.read). Core 0's read of the lines is
    priced first and misses: issued at cycle 100, start-up to 310, 256 cycles of rows, in L2 at 566. Core 1's read
    of the same lines was issued earlier in simulated time, at 50 (a hit: no start-up, 128 cycles of rows), but
    priced second. Booking order (the rule off): it ends with core 0's fill, 566 - 50 = 516 cycles. Time order:
    the earlier request fetches the lines, one fill time after it: 50 + (566 - 100) = 516 cycles from 50, so it
    takes 466."""
    from ascend_sim.engine.bandwidth import LineFills
    fills = LineFills(time_order)
    key = (4096, 32, 512, 8192)
    assert fills.read(key, 0, 310.0, 256.0, True, 100.0) == 256.0        # the filler: its own time
    took = fills.read(key, 1, 50.0, 128.0, False, 50.0)
    assert took == (466.0 if time_order else 516.0)
    # a hit issued at 200, after both requests: in booking order it waits for core 0's fill, 566 - 200 = 366; in
    # time order core 1's earlier request is the lines' fill, in L2 at 516: 516 - 200 = 316
    assert fills.read(key, 2, 200.0, 128.0, False, 200.0) == (316.0 if time_order else 366.0)


@pytest.mark.parametrize("joins", [False, True])
def test_the_fill_wait_and_the_fillers_window_turns_are_one_wait(joins):
    """``gm_fill_wait_joins_turns`` (on by default, engine/timing.gm_cycles), with the windows' turns on (64 B/cycle a
    window, 210 cycles more for a miss). Two cores read one tile (32 rows of 512 B, a row per 512 B window) at t0.
    Core 0 misses: START + 256 = 466 cycles; its windows are asked at t0 + 8 i (over its 256 cycles of rows) and
    each held 512 / 64 + 210 = 218 cycles, to t0 + 8 i + 218. Core 1 hits (128 cycles of rows) lines still
    filling: it ends with the fill, 466. Summed (the rule off), its windows asked over those 466 cycles
    (t0 + 14.5625 i) find window 0 held 218 cycles more: 466 + 218 = 684. One wait (the rule on): its own 128
    cycles, windows asked at t0 + 4 i; only window 0's turn (asked at t0) began before its request (window i > 0:
    core 0 asks at t0 + 8 i, after core 1's t0 + 4 i), so it waits 218: 128 + 218 = 346, earlier than the fill's
    466: it ends with the fill, 466."""
    chip = dataclasses.replace(CHIP, gm_window_turns=True, gm_window_bytes_per_cycle=64.0,
                               gm_window_miss_hold_cycles=210.0, gm_fill_wait_joins_turns=joins)
    res = launch(copies_per_block, 2, np.zeros(64 * COLS, np.float16), ((0,), (0,)), chip=chip, numerics=False)
    spans = {r.core: (r.start, r.end) for r in res.trace if r.op == "DataCopy"}
    t0 = spans[0][0]
    assert spans[0] == (t0, pytest.approx(t0 + START + 256))
    assert spans[1] == (t0, pytest.approx(t0 + (466 if joins else 684)))
