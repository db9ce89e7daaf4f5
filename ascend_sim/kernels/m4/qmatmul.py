"""Int8 matmul on the cube (int8 x int8 -> int32 in L0C) and a per-row dequantisation on the vector unit.

``C[O, P] = Wq[O, K] @ Xq[P, K]^T`` runs through the high-level Matmul API (gemm.py) with B transposed in GM
(int8 needs B as N x K: "int8 needs B transposed"), written out as int32 by Fixpipe (NoQuant). A second,
AIV kernel dequantises each output row o (one output channel): ``y = half(relu?(float(C) * scale[o] +
bias[o]))`` (Cast int32 -> float, Muls, Adds, Relu, Cast float -> half), AscendDequant's arithmetic
("dst = src * deqScale" per channel, then the bias) done with basic vector instructions.

Per-channel weight scales make the dequantisation scale a per-row vector, which is why it is a
second kernel here and not Fixpipe's scalar DEQF16; the zero point of asymmetric activations is folded
into ``bias`` by the host (``- zx * sum_k Wq[o, k]``), so the integer product itself stays exact.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (Adds, Cast, DataCopy, GetBlockIdx, GetBlockNum, GlobalTensor, LaunchResult, Muls, Relu,
                        RoundMode, TBuf, TPipe, TPosition, TQue, float32, half, int32, kernel, launch)
from ascend_sim.kernels.m4.gemm import gemm_bt

K_ALIGN = 32            # int8 fractal: 16 x 32 (32 bytes per fractal row)
P_ALIGN = 16            # columns of C per row rounded to a 32-byte block of half (and of int32 x 2)
DEQ_TILE = 4096         # elements of one row handled per vector step


def _gm(ptr, dtype, size=None) -> GlobalTensor:
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(ptr, size)
    return g


@dataclass(frozen=True)
class DequantTiling:
    """Rows ``O`` of ``P`` int32 values (``P`` a multiple of 16), one scale and bias per row, optional ReLU."""

    O: int
    P: int
    tile: int
    scale: tuple[float, ...]
    bias: tuple[float, ...]
    relu: bool


@kernel
def dequant_rows_kernel(c, y, tiling: DequantTiling) -> None:
    """``y[o, :] = half(relu(float(c[o, :]) * scale[o] + bias[o]))``; blocks take (row, tile) items in turn."""
    t = tiling
    pipe = TPipe()
    q_in, q_out, f_buf = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2), TBuf()
    pipe.InitBuffer(q_in, 2, t.tile * 4)
    pipe.InitBuffer(q_out, 2, t.tile * 2)
    pipe.InitBuffer(f_buf, t.tile * 4)
    f = f_buf.Get(float32)
    cg, yg = _gm(c, int32, t.O * t.P), _gm(y, half, t.O * t.P)
    tiles = -(-t.P // t.tile)
    for item in range(GetBlockIdx(), t.O * tiles, GetBlockNum()):
        o, j = divmod(item, tiles)
        off, n = o * t.P + j * t.tile, min(t.tile, t.P - j * t.tile)
        src = q_in.AllocTensor(int32)
        DataCopy(src, cg[off], n)
        q_in.EnQue(src)
        src = q_in.DeQue(int32)
        Cast(f, src, RoundMode.CAST_NONE, n)
        q_in.FreeTensor(src)
        Muls(f, f, float(t.scale[o]), n)
        Adds(f, f, float(t.bias[o]), n)
        if t.relu:
            Relu(f, f, n)
        out = q_out.AllocTensor(half)
        Cast(out, f, RoundMode.CAST_RINT, n)
        q_out.EnQue(out)
        out = q_out.DeQue(half)
        DataCopy(yg[off], out, n)
        q_out.FreeTensor(out)


def _cores(chip, kind: str) -> int:
    from ascend_sim.hw.chips import get_chip
    return get_chip(chip).cores_for(kind)


def int8_linear_rows(wq: np.ndarray, xq: np.ndarray, scale: np.ndarray, bias: np.ndarray, *, relu: bool = False,
                     chip=None) -> tuple[np.ndarray, list[LaunchResult]]:
    """``half(relu(scale[o] * (Wq @ Xq^T)[o, p] + bias[o]))`` as ``[O, P]``: the cube kernel, then the dequant.

    ``wq [O, K]`` and ``xq [P, K]`` int8 (K is zero-padded to 32 here), ``scale``/``bias`` float per row.
    Returns the half result and the two LaunchResults.
    """
    wq, xq = np.asarray(wq), np.asarray(xq)
    if wq.dtype != np.int8 or xq.dtype != np.int8:
        raise ValueError(f"int8_linear_rows: weights and activations must be int8 codes, got {wq.dtype}, {xq.dtype}")
    (O, K), (P, K2) = wq.shape, xq.shape
    if K != K2:
        raise ValueError(f"int8_linear_rows: weights have K = {K} inputs, activations {K2}")
    Kp, Pp = -(-K // K_ALIGN) * K_ALIGN, -(-P // P_ALIGN) * P_ALIGN
    a = np.zeros((O, Kp), np.int8)
    a[:, :K] = wq
    b = np.zeros((Pp, Kp), np.int8)
    b[:P, :K] = xq
    c, r1 = gemm_bt(a, b, out_dtype=np.int32, chip=chip)
    dt = DequantTiling(O, Pp, min(DEQ_TILE, Pp), tuple(float(s) for s in scale), tuple(float(v) for v in bias),
                       relu)
    y = np.zeros((O, Pp), np.float16)
    blocks = max(1, min(O * -(-Pp // dt.tile), _cores(chip, "AIV")))
    r2 = launch(dequant_rows_kernel, blocks, c, y, dt, chip=chip, gm_names=["c", "y"])
    return y[:, :P], [r1, r2]


__all__ = ["DequantTiling", "dequant_rows_kernel", "int8_linear_rows"]
