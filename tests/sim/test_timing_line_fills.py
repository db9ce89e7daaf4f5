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
