"""A vector core's GM -> UB bytes that L2 serves move at ``aiv_gm_l2_hit_bytes_per_cycle`` (hand-computed cycles).

One AIV alone (no HBM booking, its L2 bandwidth share all its own), 64 KB copies on 512 B windows: 128 packages of
512 B at the path rate gm_read_bytes_per_cycle = 32, 16 cycles each, after the 80-cycle start.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import Ascend910B, DataCopy, half, kernel, launch
from kernels_util import gm, scratch

N = 32768                       # halves: 64 KB
NB = N * 2
CHIP = dataclasses.replace(Ascend910B(), aiv_gm_l2_hit_bytes_per_cycle=110.0)
START = CHIP.gm_read_startup    # 80
MISS = NB / 512 * 16            # 128 packages x 16 cycles = 2,048


@kernel(core="AIV")
def read_twice(x, first_halves: int):
    """Copy the first ``first_halves`` of x into UB, then all 64 KB of it."""
    t = scratch(NB, half)
    DataCopy(t, gm(x), first_halves)
    DataCopy(t, gm(x), N)


def _copies(chip, first_halves: int = N) -> list[float]:
    res = launch(read_twice, 1, np.zeros(N, half), first_halves, chip=chip, numerics=False)
    return [r.end - r.start for r in res.trace if r.op == "DataCopy"]


def test_an_l2_hit_moves_at_the_hit_rate():
    first, second = _copies(CHIP)
    assert first == pytest.approx(START + MISS)                 # 80 + 2,048 = 2,128: from HBM
    assert second == pytest.approx(START + MISS * 32 / 110)     # 80 + 2,048 x 32 / 110 = 675.8: from L2


def test_without_the_rate_a_hit_costs_a_miss():
    off = dataclasses.replace(CHIP, aiv_gm_l2_hit_bytes_per_cycle=0.0)
    first, second = _copies(off)
    assert first == pytest.approx(START + MISS) and second == pytest.approx(START + MISS)     # 2,128 each


def test_a_half_hit_copy_pays_each_share_at_its_rate():
    # the first copy brings 32 KB into L2: the second finds half its bytes there
    _, second = _copies(CHIP, N // 2)
    assert second == pytest.approx(START + 0.5 * MISS + 0.5 * MISS * 32 / 110)     # 80 + 1,024 + 297.9 = 1,401.9


def test_the_hits_still_share_the_l2_bandwidth():
    # an L2 of 64 B/cycle: 65,536 / 64 = 1,024 cycles, slower than the hit rate's 595.8
    narrow = dataclasses.replace(CHIP, l2_bytes_per_cycle=64.0)
    _, second = _copies(narrow)
    assert second == pytest.approx(START + NB / 64.0)           # 80 + 1,024 = 1,104
