"""MatMul + Add + ReLU as a MIX kernel (融合算子, AIC -> AIV): the cube computes, the vector cores finish.

The other way to fuse an epilogue, for epilogues Fixpipe cannot do: per C tile the AIC runs the tiled
matmul (``tiled_matmul.KernelTiledMatmul``) and writes the float accumulator to a GM workspace with
Fixpipe, then ``CrossCoreSetFlag(2, PIPE_FIX, flag)``; each of the group's two AIVs
``CrossCoreWaitFlag(flag)``, reads its half of the tile's rows, adds the bias, applies ReLU, casts and
writes C. Compared with the cube epilogue (bias via BT, ``reluEn`` on Fixpipe) it moves the tile
through GM twice more (workspace write + read): the GM traffic fusion in the cube saves.

Each tile has its own workspace slot, so the AIC never overwrites a tile an AIV still reads.
Requires N a multiple of 16 (whole 32-byte blocks per C row on the vector side). A and B are half, or float
when both are float32 (the cube side then reads B^T, as ``tiled_matmul`` does).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ascend_sim import (PIPE_FIX, ASCEND_IS_AIC, Add, Cast, CrossCoreSetFlag, CrossCoreWaitFlag, DataCopy,
                        DataCopyParams, Fixpipe, FixpipeParamsV220, GetBlockIdx, GetBlockNum, GetSubBlockIdx, GetTaskRatio,
                        GlobalTensor, QuantMode_t, Relu, RoundMode, TPipe, TPosition, TQue, float32, kernel,
                        launch)
from ascend_sim.api.launch import LaunchResult
from ascend_sim.hw.chips import DATA_BLOCK_BYTES
from ascend_sim.kernels.opt.cube_common import ROWS, cube_dtype
from ascend_sim.kernels.opt.tiled_matmul import KernelTiledMatmul, TiledMatmulTiling, b_for_gm, choose_tiling

FLAG = 3                  # the cross-core flag id of the hand-off
CHUNK_BYTES = 32 * 1024   # float rows per vector pass: two in, two out buffers fit UB


class CubeToWorkspace(KernelTiledMatmul):
    """The AIC side: each tile's float accumulator to its workspace slot, then the flag."""

    def CopyOut(self) -> None:
        t = self.t
        co1 = self.qCO1.DeQue(float32)
        Fixpipe(self.cGm[self.tile * t.singleM * t.singleN], co1,
                FixpipeParamsV220(self.cols, self.rows, self.rp, self.np_, False, QuantMode_t.NoQuant))
        self.qCO1.FreeTensor(co1)
        CrossCoreSetFlag(2, PIPE_FIX, FLAG)         # mode 2: AIC -> the AIVs of its group


class VectorEpilogue:
    """One AIV: for each tile of its group, wait, then bias + ReLU (+ cast) on its half of the rows."""

    def Init(self, ws, bias, c, t: TiledMatmulTiling) -> None:
        self.t = t
        self.wsGm, self.biasGm, self.cGm = GlobalTensor(float32), GlobalTensor(float32), GlobalTensor(t.out_dtype)
        self.wsGm.SetGlobalBuffer(ws, t.tiles * t.singleM * t.singleN)
        self.biasGm.SetGlobalBuffer(bias, t.N)
        self.cGm.SetGlobalBuffer(c, t.M * t.N)
        self.pipe = TPipe()
        self.chunk = max(1, min(-(-t.singleM // 2), CHUNK_BYTES // (t.singleN * 4)))    # rows per UB pass
        half_rows = self.chunk
        self.qIn, self.qOut, self.qBias = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2), TQue(TPosition.VECIN, 1)
        self.pipe.InitBuffer(self.qIn, 2, half_rows * t.singleN * 4)
        self.pipe.InitBuffer(self.qOut, 2, half_rows * t.singleN * np.dtype(t.out_dtype).itemsize)
        self.pipe.InitBuffer(self.qBias, 1, t.singleN * 4)

    def Process(self) -> None:
        t = self.t
        # on the AIVs of a MIX kernel GetBlockNum() is numBlocks (the AIC groups) and GetBlockIdx() counts AIVs
        group, groups = GetBlockIdx() // GetTaskRatio(), GetBlockNum()
        for tile in range(group, t.tiles, groups):
            CrossCoreWaitFlag(FLAG)               # every AIV of the group waits for each tile
            mIdx, nIdx = divmod(tile, t.blocks_n)
            rows, cols = min(t.singleM, t.M - mIdx * t.singleM), min(t.singleN, t.N - nIdx * t.singleN)
            top = -(-rows // 2)
            r0, nr = (0, top) if GetSubBlockIdx() == 0 else (top, rows - top)
            for q in range(r0, r0 + nr, self.chunk):
                n = min(self.chunk, r0 + nr - q)
                self.Epilogue(tile, mIdx * t.singleM + q, nIdx * t.singleN, q, n, cols)

    def Epilogue(self, tile: int, row0: int, col0: int, r0: int, nr: int, cols: int) -> None:
        t = self.t
        isz = np.dtype(t.out_dtype).itemsize
        x, bv = self.qIn.AllocTensor(float32), self.qBias.AllocTensor(float32)
        DataCopy(x, self.wsGm[tile * t.singleM * t.singleN + r0 * cols], nr * cols)
        DataCopy(bv, self.biasGm[col0], cols)
        self.qIn.EnQue(x)
        self.qBias.EnQue(bv)
        x, bv = self.qIn.DeQue(float32), self.qBias.DeQue(float32)
        for r in range(nr):
            Add(x[r * cols], x[r * cols], bv, cols)
        self.qBias.FreeTensor(bv)
        y = self.qOut.AllocTensor(t.out_dtype)
        if isz == 2:
            Relu(x, x, nr * cols)
            Cast(y, x, RoundMode.CAST_NONE, nr * cols)
        else:
            Relu(y, x, nr * cols)
        self.qIn.FreeTensor(x)
        self.qOut.EnQue(y)
        y = self.qOut.DeQue(t.out_dtype)
        blk = cols * isz // DATA_BLOCK_BYTES
        DataCopy(self.cGm[row0 * t.N + col0], y, DataCopyParams(nr, blk, 0, (t.N - cols) * isz // DATA_BLOCK_BYTES))
        self.qOut.FreeTensor(y)


@kernel(core="MIX")
def matmul_add_relu_mix(a, b, bias, ws, c, tiling: TiledMatmulTiling) -> None:
    if ASCEND_IS_AIC():
        op = CubeToWorkspace()
        op.Init(a, b, None, ws, replace(tiling, out_dtype=np.dtype(np.float32)))     # the workspace is float
        op.Process()
    else:
        ep = VectorEpilogue()
        ep.Init(ws, bias, c, tiling)
        ep.Process()


def matmul_add_relu_mix_run(a: np.ndarray, b: np.ndarray, bias: np.ndarray, *, out_dtype=np.float16,
                            cores: int | None = None, chip=None, dtype=None,
                            kernel=None) -> tuple[np.ndarray, LaunchResult]:
    """Simulated ``relu(a @ b + bias)`` by the MIX kernel; returns (C, LaunchResult). Inputs as ``tiled_matmul``.

    ``kernel`` launches another MIX kernel with the same arguments (``a, b, bias, workspace, c, tiling``), e.g. the
    C++ twin ``kernels/cpp/matmul_mix.cpp`` (half A, B and C).
    """
    dt = cube_dtype(a, b, dtype=dtype)
    a, b = np.asarray(a, dt), np.asarray(b, dt)
    M, K = a.shape
    N = b.shape[1]
    if N % ROWS:
        raise ValueError(f"matmul_add_relu_mix: N = {N} must be a multiple of 16 (whole 32-byte blocks per row "
                         "on the vector side); use tiled_matmul(..., bias, relu=True) for any N")
    t = choose_tiling(M, N, K, cores=cores, chip=chip, out_dtype=out_dtype, dtype=dt)
    ws = np.zeros(t.tiles * t.singleM * t.singleN, np.float32)
    c = np.zeros((M, N), out_dtype)
    res = launch(kernel or matmul_add_relu_mix, t.block_dim, np.ascontiguousarray(a), b_for_gm(b, dt),
                 np.ascontiguousarray(bias, np.float32).reshape(N), ws, c, t, chip=chip,
                 gm_names=["a", "b", "bias", "workspace", "c"])
    return c, res


__all__ = ["matmul_add_relu_mix", "matmul_add_relu_mix_run", "CubeToWorkspace", "VectorEpilogue"]
