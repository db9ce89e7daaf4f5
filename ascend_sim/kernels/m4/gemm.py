"""``C = A @ B^T (+ bias)`` on the cube through the high-level Matmul API, split over the AIC cores.

A ``[M, K]`` and B ``[N, K]`` (B stored transposed, as int8 requires and as conv weights ``[O, C*k*k]`` are
laid out anyway) in half or int8; C in float32/half (half inputs) or int32 (int8); the bias (float32 for
half, int32 for int8) rides through L1 -> BT. One kernel for every use in module 4: the int8 PTQ layers,
the ResNet convolutions (im2col rows x folded weights) and the attention baselines' batched products.
The MDL template (CFG_MDL: one GM -> L1 copy per L1 tile), which MatmulConfig.md recommends for large shapes
("大shape场景"), as these are; module 4's figures were measured with it.
"""
from __future__ import annotations

import numpy as np

from ascend_sim import (GetBlockIdx, GlobalTensor, LaunchResult, TPipe, TPosition, float32, int8, int32, kernel,
                        launch, matmul_tiling)
from ascend_sim import CFG_MDL, REGIST_MATMUL_OBJ, GetSysWorkSpacePtr, Matmul, MatmulType
from ascend_sim.hw.chips import get_chip

ND = matmul_tiling.CubeFormat.ND


def _gm(ptr, dtype, size=None) -> GlobalTensor:
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(ptr, size)
    return g


@kernel(core="AIC")
def gemm_bt_kernel(a, b, bias, c, tiling, cfg) -> None:
    """One core's block of C, located from GetBlockIdx as the Matmul samples do (offsets + SetTail)."""
    in_dt, out_dt, bias_dt = cfg
    t = tiling
    pipe = TPipe()
    mm = Matmul(MatmulType(TPosition.GM, ND, in_dt, False), MatmulType(TPosition.GM, ND, in_dt, True),
                MatmulType(TPosition.GM, ND, out_dt), MatmulType(TPosition.GM, ND, bias_dt), CFG_MDL)
    REGIST_MATMUL_OBJ(pipe, GetSysWorkSpacePtr(), mm, t)
    blocks_m = -(-t.M // t.singleCoreM)
    m_idx, n_idx = GetBlockIdx() % blocks_m, GetBlockIdx() // blocks_m
    mm.SetTail(min(t.singleCoreM, t.M - m_idx * t.singleCoreM), min(t.singleCoreN, t.N - n_idx * t.singleCoreN))
    mm.SetTensorA(_gm(a, in_dt)[m_idx * t.singleCoreM * t.Ka], False)
    mm.SetTensorB(_gm(b, in_dt)[n_idx * t.singleCoreN * t.Kb], True)
    if bias is not None:
        mm.SetBias(_gm(bias, bias_dt)[n_idx * t.singleCoreN])
    mm.IterateAll(_gm(c, out_dt)[m_idx * t.singleCoreM * t.N + n_idx * t.singleCoreN])
    mm.End()


def gemm_tiling(M: int, N: int, K: int, in_dt, out_dt, cores: int, bias: bool, trans_b: bool = True):
    """The Matmul host tiling (GetTiling) for A ``[M, K]`` and B^T ``[N, K]`` (or B ``[K, N]``)."""
    tiler = matmul_tiling.MultiCoreMatmulTiling()
    tiler.SetDim(cores)
    tiler.SetAType("GM", ND, in_dt, False)
    tiler.SetBType("GM", ND, in_dt, trans_b)
    tiler.SetCType("GM", ND, out_dt)
    tiler.SetBiasType("GM", ND, int32 if np.dtype(in_dt) == int8 else float32)
    tiler.SetShape(M, N, K)
    tiler.SetOrgShape(M, N, K)
    tiler.EnableBias(bias)
    return tiler.tiling_or_raise()


def gemm_bt(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None = None, *, out_dtype=float32,
            chip=None) -> tuple[np.ndarray, LaunchResult]:
    """``a @ b.T (+ bias)`` on the simulated cube; ``a`` and ``b`` half (or int8), same K."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    if a.dtype != b.dtype or a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"gemm_bt: A {a.dtype}{list(a.shape)} and B^T {b.dtype}{list(b.shape)} must be 2-D, of one "
                         "dtype, with the same K (columns)")
    (M, K), N = a.shape, b.shape[0]
    bias_dt = np.dtype(np.int32) if a.dtype == np.int8 else np.dtype(np.float32)
    bv = None
    if bias is not None:
        bv = np.zeros(-(-N // 16) * 16 + 16, bias_dt)     # whole 16-value rows for the BT copy
        bv[:N] = bias
    t = gemm_tiling(M, N, K, a.dtype, out_dtype, get_chip(chip).aic_count, bias is not None)
    c = np.zeros((M, N), out_dtype)
    res = launch(gemm_bt_kernel, t.usedCoreNum, a, b, bv, c, t, (a.dtype, np.dtype(out_dtype), bias_dt),
                 chip=chip, gm_names=["a", "b", "bias", "c"])
    return c, res


def time_gemm_bt(M: int, N: int, K: int, chip=None) -> LaunchResult:
    """Timing-only launch (``numerics=False``) of ``gemm_bt`` ``[M, K] x [N, K]^T + bias``, fp16 in and out, on
    every AIC: the cycles of the computing launch without its values or its host buffers' contents."""
    c = get_chip(chip)
    t = gemm_tiling(M, N, K, np.float16, np.float16, c.aic_count, True)
    a, b = np.zeros((M, K), np.float16), np.zeros((N, K), np.float16)
    bias, out = np.zeros(-(-N // 16) * 16 + 16, np.float32), np.zeros((M, N), np.float16)
    cfg = (np.dtype(np.float16), np.dtype(np.float16), np.dtype(np.float32))
    return launch(gemm_bt_kernel, t.usedCoreNum, a, b, bias, out, t, cfg, chip=c,
                  gm_names=["a", "b", "bias", "c"], numerics=False)


__all__ = ["gemm_bt_kernel", "gemm_tiling", "gemm_bt", "time_gemm_bt"]
