"""The "default operator" Module 2's cube exercise must beat: the Matmul high-level API with GetTiling's tiling.

Named explicitly: ``default_matmul`` runs ``Matmul<A half ND, B half ND, C, bias float, CFG_MDL>`` with the
TCubeTiling that ``MultiCoreMatmulTiling`` returns for the problem with ``SetDim(core count)`` (by default
the chip's cube-core count) and nothing else set (no SetFixSplit, no SetBufferSpace): what a learner gets
by calling the library without tuning. Each core locates its C block and sets its tail as the Matmul
samples do (CalcOffset + SetTail).

The template: ``default_matmul_kernel`` takes ``mm_cfg`` (CFG_NORM, the C++ default, unless given);
``default_matmul``, Module 2's "default operator", asks for CFG_MDL, the template MatmulConfig.md recommends
for large shapes and the one the tuning guide's finished kernels use: the bar a learner's kernel must beat is
the library's fast path, not its untuned one (at 256^3 on 24 cores CFG_NORM is about 8 % slower than MDL:
``default_matmul(a, b, mm_cfg=CFG_NORM)`` prints it; both pay the API's kernel head).
"""
from __future__ import annotations

import numpy as np

from ascend_sim import (CFG_MDL, CFG_NORM, REGIST_MATMUL_OBJ, GetBlockIdx, GetSysWorkSpacePtr, GlobalTensor, Matmul,
                        MatmulType, TPipe, TPosition, float32, half, kernel, launch)
from ascend_sim import matmul_tiling as mt
from ascend_sim.api.launch import LaunchResult
from ascend_sim.hw.chips import get_chip

ND = mt.CubeFormat.ND


def default_tiling(M: int, N: int, K: int, *, cores: int | None = None, out_dtype=np.float16, bias: bool = False,
                   chip=None, fix_split: tuple[int, int] | None = None) -> mt.TCubeTiling:
    """GetTiling's default for this problem on ``cores`` cube cores (default: all of the chip's).

    ``fix_split=(baseM, baseN)`` adds ``SetFixSplit(baseM, baseN, -1)`` (a tuned tiling, no longer the default).
    """
    tiler = mt.MultiCoreMatmulTiling(chip)
    tiler.SetDim(cores or get_chip(chip).aic_count)
    tiler.SetAType("GM", ND, half)
    tiler.SetBType("GM", ND, half)
    tiler.SetCType("GM", ND, np.dtype(out_dtype))
    tiler.SetBiasType("GM", ND, float32)
    tiler.SetShape(M, N, K)
    tiler.SetOrgShape(M, N, K)
    tiler.EnableBias(bias)
    if fix_split:
        tiler.SetFixSplit(*fix_split, -1)
    return tiler.tiling_or_raise()


def _gm(ptr, dtype) -> GlobalTensor:
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(ptr)
    return g


@kernel(core="AIC")
def default_matmul_kernel(a, b, bias, c, tiling: mt.TCubeTiling, out_dtype, mm_cfg=CFG_NORM,
                          block_tiles: tuple | None = None) -> None:
    """One block's C tile (``block_tiles[block]`` when given, else the block's index) through the Matmul API."""
    t = tiling
    pipe = TPipe()
    mm = Matmul(MatmulType(TPosition.GM, ND, half), MatmulType(TPosition.GM, ND, half),
                MatmulType(TPosition.GM, ND, out_dtype), MatmulType(TPosition.GM, ND, float32), mm_cfg)
    REGIST_MATMUL_OBJ(pipe, GetSysWorkSpacePtr(), mm, t)
    blocks_m = -(-t.M // t.singleCoreM)
    tile = GetBlockIdx() if block_tiles is None else block_tiles[GetBlockIdx()]
    mIdx, nIdx = tile % blocks_m, tile // blocks_m
    mm.SetTail(min(t.singleCoreM, t.M - mIdx * t.singleCoreM), min(t.singleCoreN, t.N - nIdx * t.singleCoreN))
    mm.SetTensorA(_gm(a, half)[mIdx * t.singleCoreM * t.Ka])
    mm.SetTensorB(_gm(b, half)[nIdx * t.singleCoreN])
    if bias is not None:
        mm.SetBias(_gm(bias, float32)[nIdx * t.singleCoreN])
    mm.IterateAll(_gm(c, out_dtype)[mIdx * t.singleCoreM * t.N + nIdx * t.singleCoreN])
    mm.End()


def default_matmul(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None = None, *, out_dtype=np.float16,
                   cores: int | None = None, chip=None, mm_cfg=CFG_MDL, kernel=None) -> tuple[np.ndarray, LaunchResult]:
    """Simulated ``a @ b (+ bias)`` through the Matmul API with the default tiling (and template ``mm_cfg``);
    returns (C, LaunchResult).

    ``kernel`` launches another kernel in place of the library's with ``a, b, bias, c, tiling`` (its C type and
    template are its own), e.g. the C++ twin ``kernels/cpp/default_matmul.cpp`` (half C, CFG_MDL).
    """
    a, b = np.asarray(a, np.float16), np.asarray(b, np.float16)
    M, K = a.shape
    N = b.shape[1]
    t = default_tiling(M, N, K, cores=cores, out_dtype=out_dtype, bias=bias is not None, chip=chip)
    bv = None
    if bias is not None:
        bv = np.zeros(-(-N // 16) * 16 + 16, np.float32)
        bv[:N] = np.asarray(bias, np.float32).reshape(N)
    c = np.zeros((M, N), out_dtype)
    extra = () if kernel else (np.dtype(out_dtype), mm_cfg)
    res = launch(kernel or default_matmul_kernel, t.usedCoreNum, np.ascontiguousarray(a), np.ascontiguousarray(b),
                 bv, c, t, *extra, chip=chip, gm_names=["a", "b", "bias", "c"])
    return c, res


__all__ = ["default_tiling", "default_matmul", "default_matmul_kernel"]
