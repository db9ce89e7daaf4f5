"""Cube-path kernels written from the Ascend C docs in C++ call order (not copied from any sample).

GM (ND) -> DataCopy(Nd2NzParams) -> L1 (NZ) -> LoadData(LoadData2DParams) -> L0A (ZZ) / L0B (ZN)
-> Mmad(MmadParams) -> L0C (NZ) -> Fixpipe(FixpipeParamsV220, NZ2ND) -> GM (ND).
"""
from __future__ import annotations

import numpy as np

from ascend_sim import (DataCopy, Fixpipe, FixpipeParamsV220, GlobalTensor, HardEvent, LoadData, LoadData2DParams,
                        Mmad, MmadParams, Nd2NzParams, QuantMode_t, SetFlag, TBuf, TPipe, TPosition, WaitFlag,
                        float32, half, int8, int32, kernel, launch)

CUBE_BLOCK = 16


def ceil_to(x: int, m: int) -> int:
    return -(-x // m) * m


def local(pipe: TPipe, pos: TPosition, dtype, count: int):
    """A static tensor of ``count`` elements at ``pos`` (a TBuf)."""
    buf = TBuf(pos)
    pipe.InitBuffer(buf, max(512, count * np.dtype(dtype).itemsize))
    return buf.Get(dtype)


def handoff(event: HardEvent) -> None:
    SetFlag(event, 0)
    WaitFlag(event, 0)


def gm(ptr, dtype) -> GlobalTensor:
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(ptr)
    return g


@kernel(core="AIC")
def matmul_nz(a, b, c, bias, scales, cfg):
    """C = A @ B (+ bias) for one tile: half (B given K x N, L0B by transposed loads) or int8 (B given as N x K)."""
    M, N, K, dt, quant, deq, out_dt, relu = cfg
    c0 = 32 // np.dtype(dt).itemsize
    mp, np_, kp = ceil_to(M, CUBE_BLOCK), ceil_to(N, CUBE_BLOCK), ceil_to(K, c0)
    kb16 = ceil_to(K, CUBE_BLOCK)
    acc = int32 if dt == int8 else float32
    pipe = TPipe()
    a1 = local(pipe, TPosition.A1, dt, mp * kp)
    b1 = local(pipe, TPosition.B1, dt, max(kb16, kp) * np_)
    a2 = local(pipe, TPosition.A2, dt, mp * kp)
    b2 = local(pipe, TPosition.B2, dt, kp * np_)
    co1 = local(pipe, TPosition.CO1, acc, mp * np_)
    aGm, bGm, cGm = gm(a, dt), gm(b, dt), gm(c, out_dt)
    # {ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride, dstNzMatrixStride}
    DataCopy(a1, aGm, Nd2NzParams(1, M, K, 0, K, mp, 1, 0))
    if dt == int8:      # B^T (N x K) in GM: its NZ fractals are already L0B's ZN fractals
        DataCopy(b1, bGm, Nd2NzParams(1, N, K, 0, K, np_, 1, 0))
    else:
        DataCopy(b1, bGm, Nd2NzParams(1, K, N, 0, N, kb16, 1, 0))
    handoff(HardEvent.MTE2_MTE1)
    fr = 512 // np.dtype(dt).itemsize
    mB, kB, nB = mp // CUBE_BLOCK, kp // c0, np_ // CUBE_BLOCK
    # {startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode}
    for i in range(mB):                 # A: L1 Nz -> L0A Zz, one 16-row block per call
        LoadData(a2[i * kB * fr], a1[i * fr], LoadData2DParams(0, kB, mB, 0, 0, False, 0))
    if dt == int8:
        LoadData(b2, b1, LoadData2DParams(0, kB * nB, 1, 0, 0, False, 0))
    else:
        for i in range(kb16 // CUBE_BLOCK):     # B: L1 Nz -> L0B Zn, each fractal transposed
            LoadData(b2[i * nB * fr], b1[i * fr], LoadData2DParams(0, nB, kb16 // CUBE_BLOCK, 0, 0, True, 0))
    if bias is not None:                # bias: GM -> L1 (C1) -> BT (C2), then the Mmad form with a bias tensor
        c1 = local(pipe, TPosition.C1, bias.dtype, np_)
        bt = local(pipe, TPosition.C2, acc, np_)
        DataCopy(c1, gm(bias, bias.dtype), np_)
        handoff(HardEvent.MTE2_MTE1)
        DataCopy(bt, c1, np_)
    handoff(HardEvent.MTE1_M)
    # {m, n, k, unitFlag, cmatrixSource, cmatrixInitVal}
    if bias is not None:
        Mmad(co1, a2, b2, bt, MmadParams(M, N, K, 0, True, False))
    else:
        Mmad(co1, a2, b2, MmadParams(M, N, K, 0, False, True))
    handoff(HardEvent.M_FIX)
    # {nSize, mSize, srcStride, dstStride, reluEn, quantPre, deqScalar, ndNum, srcNdStride, dstNdStride, unitFlag}
    params = FixpipeParamsV220(N, M, mp, N, relu, quant, deq, 1, 0, 0, 0)
    if scales is None:
        Fixpipe(cGm, co1, params)
    else:                               # V quant modes: one QUANT_PRE word per column, from L1
        ws = local(pipe, TPosition.C1, scales.dtype, ceil_to(N, 4))
        DataCopy(ws, gm(scales, scales.dtype), ceil_to(N, 4))
        handoff(HardEvent.MTE2_FIX)
        Fixpipe(cGm, co1, ws, params)


def run_matmul_nz(a: np.ndarray, b: np.ndarray, out_dtype, quant=QuantMode_t.NoQuant, deq: int = 0,
                  bias: np.ndarray | None = None, relu: bool = False, scales: np.ndarray | None = None):
    """Host side: C (out_dtype) from the kernel above; int8 B is passed to the device transposed;
    ``bias`` (N values, half or float) is padded to a multiple of 16."""
    (M, K), N = a.shape, b.shape[1]
    c = np.zeros((M, N), out_dtype)
    dt = int8 if a.dtype == np.int8 else half
    b_dev = np.ascontiguousarray(b.T) if dt == int8 else b
    if bias is not None:
        bias = np.concatenate([bias, np.zeros(ceil_to(N, CUBE_BLOCK) - N, bias.dtype)])
    if scales is not None:
        scales = np.concatenate([scales, np.zeros(ceil_to(N, 4) - N, np.int64)])
    launch(matmul_nz, 1, a, b_dev, c, bias, scales, (M, N, K, dt, quant, deq, np.dtype(out_dtype), relu))
    return c


def deq_word(scale: float, offset: int = 0, signed: bool = False) -> int:
    """The uint64 QUANT_PRE word: the float's bits in 0..31, a 9-bit offset at 37, the sign flag at 46."""
    bits = int(np.array([scale], np.float32).view(np.uint32)[0])
    return bits | ((offset & 0x1FF) << 37) | (int(signed) << 46)
