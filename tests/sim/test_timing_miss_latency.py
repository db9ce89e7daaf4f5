"""The what-if ``aic_gm_miss_latency_cycles``: a cube core's GM -> L1 copy whose bytes miss L2 starts later.

Off on the default 910B (0: judged on benchmarks/validate_timing.py, it helps split-K but breaks pure Cube). With
it set to L, a copy of 32 rows of 512 B (8 cycles each at 64 B/cycle) costs 210 + L + 256 cycles the first time
(every line misses L2) and 256 the second time (every line hits: no HBM access, no start either,
``aic_gm_start_on_misses_only``).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import Ascend910B, DataCopy, GlobalTensor, Nd2NzParams, TPipe, TPosition, TQue, half, kernel, launch

CHIP = dataclasses.replace(Ascend910B(), aic_gm_l2_hit_bytes_per_cycle=64.0)   # hits at the path rate, as misses
START, MISS = CHIP.aic_gm_read_startup, CHIP.aic_gm_read_bytes_per_cycle
COLS = 4096


@kernel(core="AIC")
def same_tile_twice(x):
    xg = GlobalTensor(half)
    xg.SetGlobalBuffer(x, 32 * COLS)
    pipe = TPipe()
    q = TQue(TPosition.A1, 2)
    pipe.InitBuffer(q, 2, 32 * 256 * 2)
    held = [q.AllocTensor(half), q.AllocTensor(half)]
    for t in held:
        DataCopy(t, xg, Nd2NzParams(1, 32, 256, 0, COLS, 32, 1, 0))
    for t in held:
        q.FreeTensor(t)


def copy_cycles(chip) -> list[float]:
    res = launch(same_tile_twice, 1, np.zeros(32 * COLS, np.float16), chip=chip, numerics=False)
    return [r.end - r.start for r in res.trace if r.op == "DataCopy"]


def test_off_by_default():
    assert CHIP.aic_gm_miss_latency_cycles == 0
    assert copy_cycles(CHIP) == [pytest.approx(START + 32 * 512 / MISS), pytest.approx(32 * 512 / MISS)]


@pytest.mark.parametrize("latency", [450, 100])
def test_a_copy_that_misses_l2_waits_the_latency_and_a_hit_does_not(latency):
    chip = dataclasses.replace(CHIP, aic_gm_miss_latency_cycles=latency)
    miss, hit = copy_cycles(chip)
    assert miss == pytest.approx(START + latency + 32 * 512 / MISS)
    assert hit == pytest.approx(32 * 512 / MISS)
