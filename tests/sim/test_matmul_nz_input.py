"""The Matmul API with A or B already NZ in GM (``CubeFormat.NZ``), and the AIV ND2NZ sample built on it (issue 30).

An NZ operand is copied GM -> L1 with one plain DataCopy of its fractal columns (CopyNZ2NZ in asc-devkit's
data_copy_wrapper_nz.h), not with Nd2Nz rows. By hand, on the default 910B (GM -> L1: the bytes that miss L2 in
whole packages of at most 512 B, 8 cycles each, per 512 B window piece of a row; a 210-cycle start), for a
64 (K) x 32 (N) half B, L2 cold:
    NZ:    2 columns of 64 rows x 32 B = 2 bursts of 2,048 B: 210 + 2 x 4 x 8 = 274 cycles
    Nd2Nz: 64 rows of 64 B, one package each:                  210 + 64 x 8 = 722 cycles
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from ascend_sim import (CFG_MDL, REGIST_MATMUL_OBJ, Ascend910B, ArgumentError, GlobalTensor, Matmul, MatmulType, TPipe,
                        TPosition, half, kernel, launch)
from ascend_sim import matmul_tiling as mt

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import matmul_features as mf  # noqa: E402

CHIP = Ascend910B()
START, FLOOR, RATE = CHIP.aic_gm_read_startup, CHIP.aic_gm_row_floor_cycles, CHIP.aic_gm_read_bytes_per_cycle
PACKAGE = 512 / RATE       # a missing row's package (aic_gm_miss_row_packages): 8 cycles
ND, NZ = mt.CubeFormat.ND, mt.CubeFormat.NZ


def to_nz(b: np.ndarray) -> np.ndarray:
    """B (K x N) as NZ in GM: columns of 16 N values, K rounded up to 16 rows high, padded with zeros."""
    k, n = b.shape
    kp, np_ = -(-k // 16) * 16, -(-n // 16) * 16
    p = np.zeros((kp, np_), b.dtype)
    p[:k, :n] = b
    return np.ascontiguousarray(p.reshape(kp, np_ // 16, 16).transpose(1, 0, 2)).reshape(-1)


def _gm(ptr, dtype):
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(ptr)
    return g


@kernel(core="AIC")
def nz_b_matmul(a, b_nz, c, t, b_format):
    mm = Matmul(MatmulType(TPosition.GM, ND, half), MatmulType(TPosition.GM, b_format, half),
                MatmulType(TPosition.GM, ND, np.float32), None, CFG_MDL)
    REGIST_MATMUL_OBJ(TPipe(), None, mm, t)
    mm.SetTensorA(_gm(a, half))
    mm.SetTensorB(_gm(b_nz, half))
    mm.IterateAll(_gm(c, np.float32))
    mm.End()


def run_nz(m: int, n: int, k: int, b_format=NZ, numerics: bool = True, **fields):
    t = mf.tiling_for(m, n, k, 1, **fields)
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    res = launch(nz_b_matmul, 1, a, to_nz(b) if b_format is NZ else b, c, t, b_format, numerics=numerics)
    return res, c, a.astype(np.float32) @ b.astype(np.float32)


@pytest.mark.parametrize("m, n, k", [(32, 48, 64), (64, 200, 120)])    # tails in N and K: NZ padding read
def test_an_nz_b_gives_the_product(m, n, k):
    _, c, want = run_nz(m, n, k, baseM=32, baseN=32, baseK=32, stepKa=2, stepKb=2, depthA1=4, depthB1=4)
    assert np.abs(c - want).max() < 1e-4


def _b_copy_cycles(b_format) -> float:
    res, _, _ = run_nz(16, 32, 64, b_format, numerics=False, baseM=16, baseN=32, baseK=64, stepKa=1, stepKb=1,
                       depthA1=1, depthB1=1)
    (copy,) = [r for r in res.trace if r.op == "DataCopy" and r.nbytes == 64 * 32 * 2]     # B: 4 KB
    return copy.end - copy.start


def test_an_nz_b_is_copied_as_whole_columns():
    assert _b_copy_cycles(NZ) == pytest.approx(START + 2 * 4 * PACKAGE)     # 274: 2,048 B = 4 packages a column


def test_the_same_b_in_nd_pays_a_row_per_k():
    assert _b_copy_cycles(ND) == pytest.approx(START + 64 * PACKAGE)      # 722: one package a 64 B row


@pytest.mark.parametrize("fmt, trans, role", [(NZ, True, "B"), (NZ, False, "C")])
def test_nz_where_it_is_not_modelled_names_the_rule(fmt, trans, role):
    types = {r: MatmulType(TPosition.GM, ND, half) for r in "ABC"}
    types[role] = MatmulType(TPosition.GM, fmt, half, trans)
    with pytest.raises(ArgumentError, match=f"{role} at GM/NZ"):
        Matmul(types["A"], types["B"], types["C"])


# ----------------------------------------------------------------------------- the AIV ND2NZ sample (matmul_nz)
SMALL = dict(singleCoreM=64, singleCoreN=100, baseM=64, baseN=64, baseK=32, stepKa=2, stepKb=2, depthA1=4,
             depthB1=4, usedCoreNum=2)


def test_the_aiv_conversion_writes_nz_and_the_aic_multiplies_it():
    """M64 N200 K120 on 2 AI Cores: the AIV's NZ (N padded 200 -> 208 with zeros, K 120 -> 128) is numpy's, and
    C is A @ B; singleCoreN 100 -> 128 (baseN multiple, as the sample's host code)."""
    t = mf.nd2nz_tiling(64, 200, 120, 2, **SMALL)
    assert t.singleCoreN == 128
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (64, 120)).astype(np.float16)
    b = rng.uniform(-1, 1, (120, 200)).astype(np.float16)
    c = np.zeros((64, 200), np.float32)
    b_nz = np.zeros(128 * 208, np.float16)
    launch(mf.matmul_nz_kernel, 2, a, b, c, b_nz, t)
    assert np.array_equal(b_nz, to_nz(b))
    assert np.abs(c - a.astype(np.float32) @ b.astype(np.float32)).max() < 1e-4


def test_the_aic_starts_its_copies_after_the_last_conversion_and_the_flag():
    """The AIC's first GM -> L1 copy starts no earlier than the last AIV copy out (MTE3) + SyncAll + the flag."""
    t = mf.nd2nz_tiling(64, 200, 120, 2, **SMALL)
    res, _ = mf.run_matmul_nz(t)
    last_out = max(r.end for r in res.trace if r.core_type == "AIV" and r.pipe == "MTE3" and r.op == "DataCopy")
    first_in = min(r.start for r in res.trace if r.core_type == "AIC" and r.op == "DataCopy")
    assert first_in >= last_out + CHIP.sync_all_cycles + CHIP.cross_core_flag_cycles
    assert mf.core_us(res, "max_aic") == pytest.approx(
        res.chip.cycles_to_us(max(e - s for _, kind, s, e, _ in res.core_times if kind == "AIC")))


def test_the_work_split_is_the_samples():
    """MatrixtoNZ: 256 blocks of 64 x 256 over 24 AIV: the first 256 % 24 = 16 take 11, the other 8 take 10."""
    t = mf.nd2nz_tiling(singleCoreM=128, singleCoreN=1408)
    assert (t.singleCoreN, t.usedCoreNum) == (1536, 24)
    res, _ = mf.run_matmul_nz(t)
    per_aiv = {}
    for r in res.trace:
        if r.core_type == "AIV" and r.pipe == "MTE3" and r.op == "DataCopy":
            per_aiv[r.core] = per_aiv.get(r.core, 0) + 1
    assert sorted(per_aiv.values()) == [10] * 8 + [11] * 16


def test_the_table_2_figures_count_the_converting_aiv_only():
    """AIV 1 of each AI Core converts nothing (MTE2 idle); AIV_MTE2 is the mean over the AIV 0s, as __mix__(1, 1)."""
    t = mf.nd2nz_tiling(64, 200, 120, 2, **SMALL)
    res, _ = mf.run_matmul_nz(t)
    mte2 = [b[4] for _, kind, *_, b in res.core_times if kind == "AIV"]       # PIPES: S V M MTE1 MTE2 ...
    assert mte2[1] == mte2[3] == 0 < mte2[0] and mte2[2] > 0
    figs = mf.nd2nz_mte2_figures(res, res)
    assert figs["AIV_MTE2 after"] == pytest.approx(res.chip.cycles_to_us((mte2[0] + mte2[2]) / 2))
