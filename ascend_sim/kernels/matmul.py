"""A small cube matmul in the hardware's data formats: GM (ND) -> L1 (NZ) -> L0A (ZZ) / L0B (ZN) -> Mmad
-> L0C (NZ) -> Fixpipe (NZ2ND) -> GM (ND).

C[M, N] (half) = A[M, K] (half) @ B[K, N] (half), accumulated in fp32 in L0C,
tiled over K in steps of ``baseK`` (the accumulate flag adds each K step).
One AIC block per (baseM x baseN) output tile; base sizes are multiples of 16.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (DataCopy, Fixpipe, FixpipeParamsV220, GetBlockIdx, GlobalTensor, HardEvent, LoadData,
                        LoadData2DParams, Mmad, MmadParams, Nd2NzParams, QuantMode_t, TPipe, TPosition, TQue, float32,
                        half, kernel, launch)

CUBE_BLOCK = 16                     # fractal rows; half: C0 = 16 columns too
FRACTAL = CUBE_BLOCK * CUBE_BLOCK   # half elements per 512-byte fractal


@dataclass
class MatmulTiling:
    M: int
    N: int
    K: int
    baseM: int = 64
    baseN: int = 64
    baseK: int = 64


class KernelMatmul:
    def Init(self, a, b, c, t: MatmulTiling) -> None:
        self.t = t
        tilesN = t.N // t.baseN
        self.mIdx, self.nIdx = divmod(GetBlockIdx(), tilesN)
        self.aGm, self.bGm, self.cGm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
        self.aGm.SetGlobalBuffer(a, t.M * t.K)
        self.bGm.SetGlobalBuffer(b, t.K * t.N)
        self.cGm.SetGlobalBuffer(c, t.M * t.N)
        self.pipe = TPipe()
        self.inQueueA1 = TQue(TPosition.A1, 1)
        self.inQueueB1 = TQue(TPosition.B1, 1)
        self.inQueueA2 = TQue(TPosition.A2, 1)
        self.inQueueB2 = TQue(TPosition.B2, 1)
        self.outQueueCO1 = TQue(TPosition.CO1, 1)
        self.pipe.InitBuffer(self.inQueueA1, 1, t.baseM * t.baseK * 2)
        self.pipe.InitBuffer(self.inQueueB1, 1, t.baseK * t.baseN * 2)
        self.pipe.InitBuffer(self.inQueueA2, 1, t.baseM * t.baseK * 2)
        self.pipe.InitBuffer(self.inQueueB2, 1, t.baseK * t.baseN * 2)
        self.pipe.InitBuffer(self.outQueueCO1, 1, t.baseM * t.baseN * 4)

    def Process(self) -> None:
        t = self.t
        c1 = self.outQueueCO1.AllocTensor(float32)
        for kIdx in range(t.K // t.baseK):
            self.CopyIn(kIdx)
            self.SplitLoad()
            self.Compute(c1, first=kIdx == 0)
        self.outQueueCO1.EnQue(c1)
        self.CopyOut()

    def CopyIn(self, kIdx: int) -> None:
        t = self.t
        a1 = self.inQueueA1.AllocTensor(half)
        b1 = self.inQueueB1.AllocTensor(half)
        # ND tile -> L1 as 16-row slabs (ndNum = rows / 16), each slab NZ: 16 x 16 fractals one after another,
        # so the slabs' fractals are already in the row-by-row order LoadData copies into L0A (ZZ) / L0B (ZN)
        # {ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride, dstNzMatrixStride}
        DataCopy(a1, self.aGm[self.mIdx * t.baseM * t.K + kIdx * t.baseK],
                 Nd2NzParams(t.baseM // CUBE_BLOCK, CUBE_BLOCK, t.baseK, CUBE_BLOCK * t.K, t.K, CUBE_BLOCK, 1,
                             CUBE_BLOCK * t.baseK))
        DataCopy(b1, self.bGm[kIdx * t.baseK * t.N + self.nIdx * t.baseN],
                 Nd2NzParams(t.baseK // CUBE_BLOCK, CUBE_BLOCK, t.baseN, CUBE_BLOCK * t.N, t.N, CUBE_BLOCK, 1,
                             CUBE_BLOCK * t.baseN))
        self.inQueueA1.EnQue(a1)
        self.inQueueB1.EnQue(b1)

    def SplitLoad(self) -> None:
        t = self.t
        a1, b1 = self.inQueueA1.DeQue(half), self.inQueueB1.DeQue(half)
        a2, b2 = self.inQueueA2.AllocTensor(half), self.inQueueB2.AllocTensor(half)
        # {startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode}
        LoadData(a2, a1, LoadData2DParams(0, t.baseM * t.baseK // FRACTAL, 1, 0, 0, False, 0))   # slabs -> ZZ
        LoadData(b2, b1, LoadData2DParams(0, t.baseK * t.baseN // FRACTAL, 1, 0, 0, True, 0))    # -> ZN: transposed
        self.inQueueA2.EnQue(a2)
        self.inQueueB2.EnQue(b2)
        self.inQueueA1.FreeTensor(a1)
        self.inQueueB1.FreeTensor(b1)

    def Compute(self, c1, first: bool) -> None:
        t = self.t
        a2, b2 = self.inQueueA2.DeQue(half), self.inQueueB2.DeQue(half)
        Mmad(c1, a2, b2, MmadParams(t.baseM, t.baseN, t.baseK, 0, False, first))   # {m, n, k, unitFlag, ...}
        self.inQueueA2.FreeTensor(a2)
        self.inQueueB2.FreeTensor(b2)

    def CopyOut(self) -> None:
        t = self.t
        c1 = self.outQueueCO1.DeQue(float32)
        # NZ -> ND: srcStride = baseM (rounded up to 16) rows between column blocks, dstStride = N elements
        Fixpipe(self.cGm[self.mIdx * t.baseM * t.N + self.nIdx * t.baseN], c1,
                FixpipeParamsV220(t.baseN, t.baseM, t.baseM, t.N, False, QuantMode_t.F322F16))
        self.outQueueCO1.FreeTensor(c1)


@kernel(core="AIC")
def matmul_custom(a, b, c, tiling: MatmulTiling) -> None:
    op = KernelMatmul()
    op.Init(a, b, c, tiling)
    op.Process()


def run_matmul(M: int = 128, N: int = 128, K: int = 128, base: int = 64, seed: int = 0, chip=None):
    """Host side: random half inputs, one block per output tile; returns (a, b, c, result)."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    t = MatmulTiling(M, N, K, base, base, base)
    result = launch(matmul_custom, (M // base) * (N // base), a, b, c, t, chip=chip, gm_names=["a", "b", "c"])
    return a, b, c, result


def matmul_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """fp32 accumulation of fp16 inputs, rounded to fp16 once (what Mmad + Fixpipe F322F16 give).

    The K loop accumulates per baseK step in L0C; summation order inside numpy's
    matmul can differ in the last fp32 bit, so compare with the fp16 tolerance.
    """
    return (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)


__all__ = ["matmul_custom", "run_matmul", "matmul_reference", "MatmulTiling", "HardEvent"]
