"""MultiCoreMatmulTiling's split of a large problem over SetDim cores: CANN's CalcMultiCoreDims (matmul_split.py).

Hand-computed from the published host tiling (asc-devkit impl/adv_api/tiling/matmul/matmul_tiling_algorithm.cpp):
the Tiling-strategy case M 4096, N 5120, K 4096 half, SetDim 40, SetFixSplit(128, 256, -1).
A base block [128, 256, 64] is 128 * 256 * 64 / (16 * 16 * 16) = 512 cube cycles for 128 * 64 * 2 + 256 * 64 * 2
= 49,152 bytes. mDim x nDim = 8 x 5 gives tiles of 512 x 1024: 4 x 4 whole blocks, intensity 512 / 49,152;
5 x 8 gives 820 x 640 (the squarest-tile rule's choice, 832 x 640 rounded to 16): 6 + 52 rows by 2 + 128 columns,
8,200 cycles for 888,320 bytes, a lower intensity; among the whole-block pairs (2 x 20, 4 x 10, 8 x 5; 1 x 40 has
128-column tails) the band ratio ((40 - mDim) * 128 + (40 - nDim) * 256) / (384 * 40) is highest for 8 x 5 (0.85).
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim.api.highlevel import matmul_split as ms
from ascend_sim.kernels.opt.default_matmul import default_tiling
from ascend_sim.hw.chips import Ascend910B


def test_tiling_case_split_is_cann_s():
    """T3's tiling: 8 x 5 tiles of 512 x 1024 (no tail block); the squarest-tile rule gave 832 x 640."""
    t = default_tiling(4096, 5120, 4096, cores=40, out_dtype=np.float32, fix_split=(128, 256),
                       chip=_chip(40))
    assert (t.singleCoreM, t.singleCoreN, t.usedCoreNum) == (512, 1024, 40)


def test_intensity_by_hand():
    """The 5 x 8 pair's cycles and bytes, main and tail blocks counted apart (module docstring)."""
    block, sizes, trans = (128, 256, 64), (2.0, 2.0), (False, False)
    got = ms._intensity(4096, 5120, 40, 5, 8, block, sizes, trans)
    cycles = 12 * 512 + 6 * (128 * 128 * 64 / 4096) + 2 * (52 * 256 * 64 / 4096) + 52 * 128 * 64 / 4096
    nbytes = 12 * 49152 + 6 * (16384 + 16384) + 2 * (52 * 128 + 32768) + (52 * 128 + 16384)
    assert (got[1], got[3], got[4]) == (cycles, 820, 640) and got[1] == 8200
    assert got[0] == pytest.approx(8200 / 888320)
    whole = ms._intensity(4096, 5120, 40, 8, 5, block, sizes, trans)
    assert whole[0] == pytest.approx(16 * 512 / (16 * 49152)) and whole[2] == pytest.approx(0.85)


def test_band_ratio_breaks_ties():
    """Equal intensity and cycles: 8 x 5 (band 0.85) before 4 x 10 (0.80) and 2 x 20 (0.65)."""
    assert ms.split_mn(4096, 5120, 40, (128, 256, 64), (2.0, 2.0), (False, False)) == (512, 1024)
    assert ms._intensity(4096, 5120, 40, 4, 10, (128, 256, 64), (2.0, 2.0), (False, False))[2] == pytest.approx(0.8)


def test_small_problem_keeps_the_squarest_split():
    """M * N <= 26,214 * dim is not SPLIT_MN: 256^3 on 24 cores keeps this model's own split."""
    assert not ms.is_split_mn(256, 256, 24, 2201)
    assert ms.is_split_mn(4096, 5120, 40, 2201) and not ms.is_split_mn(4096, 5120, 40, 1001)
    t = default_tiling(256, 256, 256, cores=24, out_dtype=np.float32)
    assert (t.singleCoreM, t.singleCoreN, t.usedCoreNum) == (64, 48, 24)      # 4 x 6 cores, the most used


def _chip(cores: int):
    import dataclasses
    return dataclasses.replace(Ascend910B(), aic_count=cores, aiv_count=2 * cores)
