"""The atomic write's cost (engine/atomics.py), hand-computed on the default 910B.

An atomic write first reads its destination through L2 (what L2 lacks is filled from HBM at 865 B/cycle), then
writes as a plain write does; atomic writes of several cores to one 512 B window go one after another.
A plain UB -> GM write of 8 KB on one AIV: 80 + 16 packages x 512 B / 32 B/cycle = 336 cycles.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import Ascend910B, DataCopy, GetBlockIdx, HardEvent, SetAtomicAdd, SetAtomicNone, float32, kernel, launch
from kernels_util import gm, handoff, scratch

CHIP = Ascend910B()
N = 2048                            # floats: 8 KB, 16 windows of 512 B


@kernel
def write_out(x, z, atomic: bool, times: int, own_window: bool):
    """Each block: x -> UB, then ``times`` writes of it to z (its own 8 KB of z if ``own_window``, else all to
    the same 8 KB), atomic adds when ``atomic``."""
    t = scratch(N * 4, float32)
    DataCopy(t, gm(x), N)
    handoff(HardEvent.MTE2_MTE3)
    if atomic:
        SetAtomicAdd(float32)
    dst = gm(z)[GetBlockIdx() * N if own_window else 0]
    for _ in range(times):
        DataCopy(dst, t, N)
    SetAtomicNone()


def _writes(blocks: int, atomic: bool, times: int = 1, own_window: bool = False, chip=CHIP):
    x = np.ones(N, np.float32)
    z = np.zeros(blocks * N, np.float32)
    res = launch(write_out, blocks, x, z, atomic, times, own_window, chip=chip)
    return z, [r for r in res.trace if r.op.startswith("DataCopy") and r.dst == "GM"]


def test_an_atomic_write_first_fills_its_lines_from_hbm():
    _, (plain,) = _writes(1, False)
    z, (first, second) = _writes(1, True, times=2)
    np.testing.assert_array_equal(z, 2.0)
    own = plain.end - plain.start
    assert own == 80 + 16 * 512 / 32                                    # 336 cycles
    assert first.end - first.start == pytest.approx(own + N * 4 / CHIP.hbm_bytes_per_cycle)    # + 9.5: the fill
    assert second.end - second.start == pytest.approx(own)             # its lines are in L2 now: no fill


def test_without_the_read_modify_write_an_atomic_costs_a_plain_write():
    _, (plain,) = _writes(1, False)
    _, (first,) = _writes(1, True, chip=dataclasses.replace(CHIP, atomic_rmw_at_l2=False))
    assert first.end - first.start == pytest.approx(plain.end - plain.start)


def test_atomics_of_two_cores_to_the_same_windows_go_one_after_another():
    z, (a, b) = _writes(2, True)
    np.testing.assert_array_equal(z[:N], 2.0)
    own = 80 + 16 * 512 / 32
    assert b.start < a.end                                              # issued while the other one ran
    assert b.end == pytest.approx(a.end + own)                          # it waited for it (no fill: L2 holds them)
    _, (c, d) = _writes(2, True, own_window=True)                       # different windows: side by side
    fill = N * 4 / CHIP.hbm_bytes_per_cycle
    assert (c.end - c.start, d.end - d.start) == (pytest.approx(own + fill), pytest.approx(own + fill))
