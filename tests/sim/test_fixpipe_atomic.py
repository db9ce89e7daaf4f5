"""Fixpipe under SetAtomicAdd/Max/Min, and the Matmul API's enAtomic (split-K).

SetAtomicAdd page: "Atlas A2 训练系列产品/Atlas A2 推理系列产品，支持的数据通路为UB/L0C Buffer/L1 Buffer->GM";
"Atlas 训练系列产品，支持的数据通路为UB->GM". The Matmul API sets the mode around its copy-out and clears it after
(impl/adv_api/detail/matmul/scheduler/base/scheduler_base.h: SetAtomic(enAtomic), Copy, ClearAtomic).
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (ArgumentError, DataCopy, GMWriteConflictError, GetBlockIdx, GetBlockNum, SetAtomicAdd, SetAtomicMax,
                        SetAtomicNone, TPipe, TPosition, float32, get_chip, half, kernel, launch)
from ascend_sim.api.highlevel.matmul import GetSysWorkSpacePtr, Matmul, MatmulType
from ascend_sim.api.highlevel.matmul_kfc import REGIST_MATMUL_OBJ
from ascend_sim.api.highlevel.matmul_tiling import CubeFormat, MultiCoreMatmulTiling, TCubeTiling
from kernels_util import cube_16x16, gm, raises_rule, scratch


def every_block_writes_c(a, b, c, mode):
    """Block i: C (16 x 16 float) = A_i @ B_i through L1, L0, Mmad and Fixpipe, under ``mode`` (None: plain)."""
    pipe = TPipe()
    i = GetBlockIdx()
    a1, b1 = scratch(512, half, TPosition.A1, pipe), scratch(512, half, TPosition.B1, pipe)
    DataCopy(a1, gm(a)[i * 256], 256)
    DataCopy(b1, gm(b)[i * 256], 256)
    if mode is not None:
        mode(float32)
    cube_16x16(a1, b1, c, pipe)     # <- Fixpipe into the same C from every block
    SetAtomicNone()


blocks_into_c = kernel(every_block_writes_c, core="AIC")


def _inputs(blocks: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, (blocks, 16, 16)).astype(np.float16)
    b = rng.integers(-4, 5, (blocks, 16, 16)).astype(np.float16)
    return a, b, [x.astype(np.float32) @ y.astype(np.float32) for x, y in zip(a, b)]


def test_fixpipe_adds_into_gm_under_set_atomic_add():
    a, b, parts = _inputs(3)
    c = np.full((16, 16), 2.0, np.float32)          # what GM held before: added to, not overwritten
    res = launch(blocks_into_c, 3, a, b, c, SetAtomicAdd, gm_names=["a", "b", "c"])
    np.testing.assert_array_equal(c, 2.0 + sum(parts))
    assert [r.op for r in res.trace if r.op.startswith("Fixpipe")] == ["Fixpipe(atomic add)"] * 3


def test_fixpipe_takes_the_max_under_set_atomic_max():
    a, b, parts = _inputs(2, seed=1)
    c = np.zeros((16, 16), np.float32)
    launch(blocks_into_c, 2, a, b, c, SetAtomicMax, gm_names=["a", "b", "c"])
    np.testing.assert_array_equal(c, np.maximum(np.maximum(parts[0], parts[1]), 0.0))


def test_plain_fixpipes_of_two_blocks_into_one_c_are_refused():
    a, b, _ = _inputs(2)
    with raises_rule(GMWriteConflictError, "block 1 (AIC) writes GM buffer 'c'", "SetAtomicAdd(dtype)", at=None):
        launch(blocks_into_c, 2, a, b, np.zeros((16, 16), np.float32), None, gm_names=["a", "b", "c"])


def test_fixpipe_atomic_on_ascend910_is_refused_with_the_path_it_has():
    a, b, _ = _inputs(1)
    with raises_rule(ArgumentError, "UB -> GM copies only", "DisableDmaAtomic() before Fixpipe", at=None):
        launch(blocks_into_c, 1, a, b, np.zeros((16, 16), np.float32), SetAtomicAdd, chip=get_chip("Ascend910"),
               gm_names=["a", "b", "c"])


# ----------------------------------------------------------------------------- Matmul API: split-K with enAtomic
@kernel(core="AIC")
def split_k(a, b, c, t: TCubeTiling, en_atomic: int) -> None:
    """Block i multiplies its K slice and adds the partial C into one C (Matmul高阶API使能多核切K)."""
    mm = Matmul(MatmulType(TPosition.GM, CubeFormat.ND, half), MatmulType(TPosition.GM, CubeFormat.ND, half),
                MatmulType(TPosition.GM, CubeFormat.ND, float32))
    REGIST_MATMUL_OBJ(TPipe(), GetSysWorkSpacePtr(), mm, t)
    k = t.Ka // GetBlockNum()
    mm.SetTail(-1, -1, k)
    mm.SetTensorA(gm(a)[GetBlockIdx() * k])
    mm.SetTensorB(gm(b)[GetBlockIdx() * k * t.N])
    mm.IterateAll(gm(c), enAtomic=en_atomic)      # <- the partial C of this block
    mm.End()


def _split_k_tiling(m: int, n: int, k: int) -> TCubeTiling:
    tiler = MultiCoreMatmulTiling()
    tiler.SetDim(1)
    tiler.SetAType("GM", CubeFormat.ND, half)
    tiler.SetBType("GM", CubeFormat.ND, half)
    tiler.SetCType("GM", CubeFormat.ND, float32)
    tiler.SetShape(m, n, k)
    tiler.SetOrgShape(m, n, k)
    return tiler.tiling_or_raise()


@pytest.mark.parametrize("cores", [1, 2, 4])
def test_matmul_enatomic_adds_the_k_slices_of_every_core(cores):
    m, n, k = 32, 32, 512
    rng = np.random.default_rng(cores)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    launch(split_k, cores, a, b, c, _split_k_tiling(m, n, k), 1)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-4)


def test_matmul_without_enatomic_on_split_k_is_refused_at_the_learners_line():
    m, n, k = 32, 32, 512
    a, b = np.ones((m, k), np.float16), np.ones((k, n), np.float16)
    with raises_rule(GMWriteConflictError, "block 1 (AIC) writes GM buffer", at="<- the partial C of this block"):
        launch(split_k, 2, a, b, np.zeros((m, n), np.float32), _split_k_tiling(m, n, k), 0)


def test_matmul_enatomic_outside_0_to_3_is_named():
    m, n, k = 32, 32, 512
    a, b = np.ones((m, k), np.float16), np.ones((k, n), np.float16)
    with raises_rule(ArgumentError, "enAtomic 5 is not 0, 1, 2 or 3"):
        launch(split_k, 1, a, b, np.zeros((m, n), np.float32), _split_k_tiling(m, n, k), 5)


def test_set_atomic_add_is_cleared_after_the_matmul_copy_out():
    """After IterateAll(enAtomic=1) the mode is off again: a later plain copy overwrites."""
    seen = {}

    @kernel(core="AIC")
    def probe(a, b, c, t):
        split_k.__wrapped__(a, b, c, t, 1)
        from ascend_sim.engine.context import current_core
        seen["atomic"] = current_core().atomic

    m, n, k = 32, 32, 512
    launch(probe, 1, np.ones((m, k), np.float16), np.ones((k, n), np.float16), np.zeros((m, n), np.float32),
           _split_k_tiling(m, n, k))
    assert seen["atomic"] is None
