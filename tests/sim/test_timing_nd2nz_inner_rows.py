"""The what-if ``aic_nd2nz_unaligned_inner_row_cycles`` (off on the default 910B): an Nd2Nz GM -> L1 row of a matrix
whose inner axis (the row pitch) is not a multiple of 256 B costs that many cycles more (the guide's
AIV核上的ND2NZ格式转换 page), except a single row and contiguous rows of 64-256 B (CANN's gemm cycle model merges
those into one burst). Expectations by hand: extra = rows x cycles when the rule applies, else 0.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import Ascend910B, DataCopy, GlobalTensor, Nd2NzParams, TPipe, TPosition, TQue, half, kernel, launch
from ascend_sim.engine.timing import nd2nz_inner_rows

CHIP = Ascend910B()


def test_off_on_the_default_chip():
    assert CHIP.aic_nd2nz_unaligned_inner_row_cycles == 0.0
    assert CHIP.aic_nd2nz_inner_align == 256


@pytest.mark.parametrize("count, blen, pitch, expected", [
    (1024, 32, 32, 1024 * 16.0),    # split-K's B: 1,024 contiguous rows of 32 B (inner axis 32 B): 16,384
    (64, 512, 8190, 64 * 16.0),     # the ND2NZ page's B (1024 x 4095 half): pitch 8,190 B, off 256 B: 1,024
    (128, 128, 384, 128 * 16.0),    # NBuffer33's A (K 192 half): 128 B rows 384 B apart: 2,048
    (16, 128, 128, 0.0),            # contiguous 128 B rows: one merged burst (CANN), nothing more
    (16, 64, 64, 0.0),              # contiguous 64 B rows: merged too
    (16, 512, 512, 0.0),            # pitch 512: a multiple of 256
    (256, 128, 10240, 0.0),         # T2's B (N 5120 half): pitch 10,240 = 40 x 256
    (1, 32, 8190, 0.0),             # one row: no pitch
])
def test_extra_cycles(count, blen, pitch, expected):
    assert nd2nz_inner_rows(count, blen, pitch, 16.0, 256) == expected


def test_turned_on_prices_a_copy_higher():
    """Through gm_cycles: split-K's B copy on a chip with the rule at 16 costs 1,024 x 16 cycles more."""
    @kernel(core="AIC")
    def copy_b(x):
        xg = GlobalTensor(half)
        xg.SetGlobalBuffer(x, 1024 * 16)
        pipe = TPipe()
        q = TQue(TPosition.B1, 1)
        pipe.InitBuffer(q, 1, 1024 * 16 * 2)
        t = q.AllocTensor(half)
        DataCopy(t, xg, Nd2NzParams(1, 1024, 16, 0, 16, 1024, 1, 0))
        q.FreeTensor(t)

    x = np.zeros(1024 * 16, np.float16)
    off = launch(copy_b, 1, x, chip=CHIP, numerics=False).cycles
    on = launch(copy_b, 1, x, chip=dataclasses.replace(CHIP, aic_nd2nz_unaligned_inner_row_cycles=16.0),
                numerics=False).cycles
    assert on - off == pytest.approx(1024 * 16.0)
