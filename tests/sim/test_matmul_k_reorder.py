"""``MatmulConfig.enableKdimReorderLoad`` (K轴错峰加载, MDL only): each core starts its K loop at L1 tile
``GetBlockIdx() % tiles`` and wraps round (the official KLoop, k_loop_mdl_reorder.h in cannmirror/asc-devkit),
with the same numbers; Norm with it is refused with the fix."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import ascend_sim.api.highlevel.matmul as matmul_module
from ascend_sim import (CFG_MDL, ArgumentError, GetBlockIdx, GetMDLConfig, Matmul, MatmulConfig, float32, half)

from test_matmul_api import host_tiling, run, types

REORDER = GetMDLConfig(enableKdimReorderLoad=True)


def _tiling():
    """M64 N32 K512 on 2 cores: singleCore 32 x 32 x 512, base 32 x 32 x 32, stepKa = stepKb = 2: K in 8 L1 tiles
    of 64 (the base K steps 0-1, 2-3, ... 14-15), A and B each copied tile by tile."""
    t = host_tiling(64, 32, 512, half, float32, 2)
    return dataclasses.replace(t, singleCoreM=32, singleCoreN=32, baseM=32, baseN=32, baseK=32, stepM=1, stepN=1,
                               stepKa=2, stepKb=2, depthA1=4, depthB1=4, usedCoreNum=2)


def _a_copies(monkeypatch, mm_cfg):
    """Run the problem; {block: [K start (elements) of each A tile copied to L1, in order]} and the result."""
    seen: dict = {}
    copy = matmul_module.DataCopy

    def spy(dst, src, params):
        if params.dValue == 64 and params.nValue == 32:        # an A tile: 32 rows x 64 of K (B: 64 x 32)
            seen.setdefault(GetBlockIdx(), []).append((src.offset // 2) % 512)
        return copy(dst, src, params)

    monkeypatch.setattr(matmul_module, "DataCopy", spy)
    c, ref, _, _ = run(64, 32, 512, cores=2, tiling=_tiling(), mm_cfg=mm_cfg)
    return seen, c, ref


def test_each_core_starts_at_its_own_k_tile_and_wraps(monkeypatch):
    """Block 0 starts at tile 0 (K 0), block 1 at tile 1 (K 64), then 128 ... 448, 0: eight tiles each."""
    seen, c, ref = _a_copies(monkeypatch, REORDER)
    assert seen[0] == [64 * i for i in range(8)]
    assert seen[1] == [64 * ((1 + i) % 8) for i in range(8)]
    np.testing.assert_array_equal(c, ref.astype(np.float32))      # integer inputs: exact in any K order


def test_without_it_every_core_starts_at_k_zero(monkeypatch):
    seen, c, ref = _a_copies(monkeypatch, CFG_MDL)
    assert seen[0] == seen[1] == [64 * i for i in range(8)]
    np.testing.assert_array_equal(c, ref.astype(np.float32))


def test_norm_with_it_is_refused_and_other_mdl_switches_are_named():
    with pytest.raises(ArgumentError, match="MDL template only") as err:
        Matmul(*types(half, float32), MatmulConfig(doNorm=True, enableKdimReorderLoad=True))
    assert "enableKdimReorderLoad=True" in err.value.fix      # the Python spelling of the fix
    with pytest.raises(ArgumentError, match="doMTE2Preload=3"):       # K preload: not modelled (M and N are)
        GetMDLConfig(False, False, 3)
