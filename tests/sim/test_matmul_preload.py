"""``doMTE2Preload`` (MDL; 1: M, 2: N): right after a C block's L1 tiles, before its L0 loads, the next A (M) or B
(N) tile is copied into the other L1 buffer (the official DoPreloadLoad, scheduler_mdl_base.h in
cannmirror/asc-devkit), so the copy is issued before the MTE1 and M instructions whose full queues (32 deep on Atlas
A2) would otherwise stall the scalar. Same numbers; the K-not-whole tiling and the Norm template are refused."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import (CFG_MDL, ArgumentError, Ascend910B, GetMDLConfig, Matmul, MatmulConfig, TilingError, float32,
                        half, launch)

from ascend_sim.hw.chips import ATLAS_A2_QUEUE_DEPTH

from test_matmul_api import host_tiling, matmul_api_kernel, types

CFG = (half, float32, False, False, float32, False, 0.0)
A2_QUEUES = dataclasses.replace(Ascend910B(), pipe_queue_depth=ATLAS_A2_QUEUE_DEPTH)    # MTE1, M 32 (the default)
UNBOUNDED = dataclasses.replace(Ascend910B(), pipe_queue_depth={})


def _tiling(mode: int, steps_k: int = 8, base_k: int = 64):
    """One core, K = steps_k * base_k whole in L1. Mode 2: M64 N256, base 64 x 64, four B tiles double-buffered;
    mode 1: M512 N64, base 128 x 64, four A tiles double-buffered. Two LoadData a K step (one per operand, as the
    official Matmul on Atlas A2)."""
    M, N, bm = (64, 256, 64) if mode == 2 else (512, 64, 128)
    K = steps_k * base_k
    t = host_tiling(M, N, K, half, float32, 1)
    return dataclasses.replace(t, Ka=K, Kb=K, singleCoreM=M, singleCoreN=N, singleCoreK=K, baseM=bm, baseN=64,
                               baseK=base_k,
                               stepM=1, stepN=1, stepKa=steps_k, stepKb=steps_k,
                               depthA1=steps_k * (2 if mode == 1 else 1), depthB1=steps_k * (2 if mode == 2 else 1),
                               usedCoreNum=1, iterateOrder=0)


def _run(mode: int, preload: bool, chip=None, steps_k: int = 8, base_k: int = 64):
    t = _tiling(mode, steps_k, base_k)
    rng = np.random.default_rng(0)
    a = rng.integers(-4, 5, (t.M, t.Ka)).astype(np.float16)
    b = rng.integers(-4, 5, (t.Kb, t.N)).astype(np.float16)
    c = np.zeros((t.M, t.N), np.float32)
    cfg = GetMDLConfig(doMTE2Preload=mode) if preload else CFG_MDL
    res = launch(matmul_api_kernel, 1, a, b, None, c, t, CFG, cfg, chip=chip)
    return res, c, a.astype(np.float64) @ b.astype(np.float64)


@pytest.mark.parametrize("mode", [1, 2])
def test_the_next_tile_is_copied_before_this_blocks_l0_loads(mode):
    res, c, ref = _run(mode, True)
    np.testing.assert_array_equal(c, ref)
    ops = [r.op for r in res.trace if r.op in ("DataCopy", "LoadData3D")]
    assert ops[:4] == ["DataCopy"] * 3 + ["LoadData3D"]     # A tile, B tile, the next tile, then the first load
    plain, _, _ = _run(mode, False)
    assert [r.op for r in plain.trace if r.op in ("DataCopy", "LoadData3D")][:3] == ["DataCopy"] * 2 + ["LoadData3D"]


@pytest.mark.parametrize("mode", [1, 2])
def test_preload_gains_only_through_a_full_mte1_queue(mode):
    """48 MTE1 instructions a C block (24 K steps of 2 LoadData): with Atlas A2's 32-deep queues and no preload,
    the next tile's copy is issued once the scalar got past them, i.e. after MTE1 started this block's loads;
    unbounded queues issue it at once, so preload changes nothing there. With 8 K steps (16
    MTE1 instructions a block) the instructions alone never fill the queue and preload gains nothing either; with the
    queue calls' Set/Wait entries (``sync_queue_entries``: AllocTensor's Wait, LoadData, EnQue's Set per operand, 48
    entries a block) it fills and preload gains."""
    deep = dict(steps_k=24, base_k=32)
    plain, _, _ = _run(mode, False, A2_QUEUES, **deep)
    pre, _, _ = _run(mode, True, A2_QUEUES, **deep)
    assert pre.cycles < plain.cycles
    assert _run(mode, True, UNBOUNDED, **deep)[0].cycles == _run(mode, False, UNBOUNDED, **deep)[0].cycles
    bare = dataclasses.replace(A2_QUEUES, sync_queue_entries=False)
    assert _run(mode, True, bare)[0].cycles == _run(mode, False, bare)[0].cycles
    assert _run(mode, True, A2_QUEUES)[0].cycles < _run(mode, False, A2_QUEUES)[0].cycles


def test_k_not_whole_in_l1_is_refused_with_the_fix():
    t = dataclasses.replace(_tiling(2), stepKb=4, depthB1=8)
    with pytest.raises(TilingError, match="stepKb = 4") as err:
        launch(matmul_api_kernel, 1, np.zeros((64, 512), np.float16), np.zeros((512, 256), np.float16), None,
               np.zeros((64, 256), np.float32), t, CFG, GetMDLConfig(doMTE2Preload=2), numerics=False)
    assert "stepKb >= 8" in err.value.fix


def test_norm_and_k_preload_are_refused():
    with pytest.raises(ArgumentError, match="MDL template only"):
        Matmul(*types(half, float32), MatmulConfig(doNorm=True, doMTE2Preload=2))
    with pytest.raises(ArgumentError, match="doMTE2Preload=3"):
        GetMDLConfig(doMTE2Preload=3)
