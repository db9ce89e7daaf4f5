"""UB bank conflicts (arch 2201): hand-computed cycles of layouts that do and do not collide."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from ascend_sim import (Add, Ascend910, Ascend910B, BinaryRepeatParams, Duplicate, TBuf, TPipe, TPosition, UnaryRepeatParams,
                        Adds, float32, kernel, launch)

CHIP = Ascend910B()
N = 4096                                    # float32: 64 repeats of 256 B
START = CHIP.vec_startup


@kernel
def add_layout(addrs, log):
    """Fill UB, then one count-form Add(z, x, y, N) with x, y, z at the given UB byte addresses."""
    ub = TBuf(TPosition.VECCALC)
    TPipe().InitBuffer(ub, 0x24000)
    whole = ub.Get(float32)
    Duplicate(whole, 1.0, 0x24000 // 4)
    x, y, z = (whole[a // 4:a // 4 + N] for a in addrs)
    Add(z, x, y, N)


def _add_cycles(addrs, chip=CHIP) -> float:
    res = launch(add_layout, 1, addrs, [], chip=chip)
    (rec,) = [r for r in res.trace if r.op == "Add"]
    return rec.end - rec.start


@pytest.mark.parametrize("addrs, per_repeat", [
    ((0x0, 0x10100, 0x20000), 1),       # groups 0-7 / 8-15 / banks 32-39: no conflict
    ((0x0, 0x4000, 0x10000), 2),        # x and y in the same bank, rows apart: read/read, 2 cycles a repeat
    ((0x0, 0x10000, 0x14100), 2),       # x and y in one group, other banks: read/read still
    ((0x0, 0x0100, 0x10000), 1),        # y shifted by 256 B: the Add case's fix
    ((0x0, 0x10100, 0x4020), 2),        # z on x's banks shifted by one block: read/write
    ((0x0, 0x10100, 0x4000), 1),        # z on exactly x's banks: the write waits one repeat, no conflict
    ((0x0, 0x10100, 0x10100), 1),       # in place (z = y)
])
def test_add_layouts_cost_the_most_colliding_accesses(addrs, per_repeat):
    assert _add_cycles(addrs) == START + 64 * per_repeat


def test_no_bank_model_on_a_chip_without_the_2201_layout():
    assert _add_cycles((0x0, 0x4000, 0x10000), Ascend910()) == Ascend910().vec_startup + 64


@kernel
def strided_dst(blk, log):
    ub = TBuf(TPosition.VECCALC)
    TPipe().InitBuffer(ub, 0x11000)
    t = ub.Get(float32)
    Duplicate(t, 1.0, 0x11000 // 4)
    # dst from UB 0 (bank_id 0), the source from 0x10000 (bank_id 1): no read/write bank in common
    Adds(t, t[0x10000 // 4:], 1.0, 64, 4, UnaryRepeatParams(blk, 1, 8 * blk, 8))


@pytest.mark.parametrize("blk, per_repeat", [(1, 1), (8, 4), (16, 8)])
def test_dst_block_stride_16_puts_all_8_blocks_in_one_group(blk, per_repeat):
    """optimisation.md s3 [OFF]: dst blkStride 16 -> 8 cycles per repeat, 8 -> 4 (write/write on a group)."""
    res = launch(strided_dst, 1, blk, [])
    (rec,) = [r for r in res.trace if r.op == "Adds"]
    assert rec.end - rec.start == START + 4 * per_repeat


def test_bank_sample_benchmark_lands_within_15_percent():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
    import bank_conflicts
    for k in bank_conflicts.NAMED:
        sim, _ = bank_conflicts.run_scenario(k, times=20)
        ticks = bank_conflicts.SCENARIOS[k][5] * 20 / 1000
        measured = ticks / bank_conflicts.TICK_HZ * CHIP.clock_hz
        assert abs(sim / measured - 1) <= 0.15, (k, sim, measured)


def test_the_bank_cost_is_cached_for_count_form_operands(monkeypatch):
    """A count is keyed by its value: the same operands with a large count (a new int object each call) hit."""
    from ascend_sim.engine import ubbanks
    calls = []
    real = ubbanks.repeat_cycles
    monkeypatch.setattr(ubbanks, "repeat_cycles", lambda *a: calls.append(1) or real(*a))
    ubbanks._CACHE.clear()
    n = int("4096")                                    # not a small-int singleton
    first = ubbanks.vector_repeat_cycles(64, 1.0, (0, 4, n), [(16384, 4, int("4096")), (32768, 4, int("4096"))])
    again = ubbanks.vector_repeat_cycles(64, 1.0, (0, 4, int("4096")), [(16384, 4, int("4096")),
                                                                       (32768, 4, int("4096"))])
    assert first == again and len(calls) == 1
