"""The naive attention baseline: three launches with the whole score matrix in GM (memory and traffic ~ S^2).

1. AIC ``S = Q K^T`` (Matmul, B transposed), float32 ``[B*N, S, S]``; 2. AIV row softmax (scale, causal and
padding masks by counting only the row's valid keys, P in half, zeros past them); 3. AIC ``O = P V``.
Same layouts, masks and reference as ``attention.py``; used to measure what FlashAttention saves.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (Adds, Cast, DataCopy, Duplicate, Exp, GetBlockIdx, GetBlockNum, GlobalTensor, HardEvent,
                        LaunchResult, Muls, ReduceMax, ReduceSum, RoundMode, SetFlag, TBuf, TPipe, TPosition,
                        WaitFlag, float32, half, kernel, launch, matmul_tiling)
from ascend_sim import CFG_MDL, REGIST_MATMUL_OBJ, GetSysWorkSpacePtr, Matmul, MatmulType
from ascend_sim.hw.chips import get_chip
from ascend_sim.kernels.m4.attention import AttentionTiling, attention_tiling
from ascend_sim.kernels.m4.gemm import gemm_tiling

ND = matmul_tiling.CubeFormat.ND
ROWS = 128              # rows of C per cube work item


@dataclass(frozen=True)
class GemmItems:
    """Row-block work items of one batched matmul: (A offset, B offset, C offset, rows) and the org shape."""

    items: tuple[tuple[int, int, int, int], ...]
    org: tuple[int, int, int]          # (M, N, Ka): the GM pitches as the Matmul reads them
    n: int
    k: int
    trans_b: bool
    tiling: object


def _gm(ptr, dtype, size=None) -> GlobalTensor:
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(ptr, size)
    return g


@kernel(core="AIC")
def batched_gemm_kernel(a, b, c, g: GemmItems) -> None:
    """Each core takes every GetBlockNum()-th item: C rows = A rows @ B (or B^T), float32 out."""
    pipe = TPipe()
    mm = Matmul(MatmulType(TPosition.GM, ND, half, False), MatmulType(TPosition.GM, ND, half, g.trans_b),
                MatmulType(TPosition.GM, ND, float32), None, CFG_MDL)   # MDL: the large-shape template
    REGIST_MATMUL_OBJ(pipe, GetSysWorkSpacePtr(), mm, g.tiling)
    for a_off, b_off, c_off, m in g.items[GetBlockIdx()::GetBlockNum()]:
        mm.SetOrgShape(*g.org)
        mm.SetTail(m, g.n, g.k)
        mm.SetTensorA(_gm(a, half)[a_off])
        mm.SetTensorB(_gm(b, half)[b_off], g.trans_b)
        mm.IterateAll(_gm(c, float32)[c_off])
    mm.End()


def _padded(s: int) -> int:
    """Score-row pitch: S rounded up to 16 so every half or float row starts on a 32-byte boundary."""
    return -(-s // 16) * 16


def _gemm(t: AttentionTiling, qk: bool, chip) -> GemmItems:
    S, p, sp = t.S, t.pitch, _padded(t.S)
    items = []
    for bh in range(t.B * t.N):
        base = t.head_offset(bh)
        for r0 in range(0, S, ROWS):
            m = min(ROWS, S - r0)
            if qk:      # S[bh, r0:] = Q rows @ K^T
                items.append((base + r0 * p, base, bh * S * sp + r0 * sp, m))
            else:       # O rows = P[bh, r0:] @ V
                items.append((bh * S * sp + r0 * sp, base, base + r0 * p, m))
    n, k = (S, t.D) if qk else (t.D, S)
    org = (ROWS, sp, p) if qk else (ROWS, p, sp)
    return GemmItems(tuple(items), org, n, k, qk, gemm_tiling(ROWS, n, k, half, float32, 1, False, qk))


@dataclass(frozen=True)
class RowSoftmaxTiling:
    rows: int               # B * N * S
    S: int
    SP: int                 # row pitch in GM (S rounded up to 16)
    N: int
    scale: float
    causal: bool
    kv_len: tuple[int, ...]


def _handoff(event: HardEvent) -> None:
    SetFlag(event, 0)
    WaitFlag(event, 0)


@kernel
def row_softmax_kernel(s, p, t: RowSoftmaxTiling) -> None:
    """p[row, :valid] = softmax(scale * s[row, :valid]), p[row, valid:] = 0, valid from the masks."""
    pipe = TPipe()
    bufs = {}
    for name, nbytes in (("x", t.SP * 4), ("w", t.SP * 4), ("r", 64), ("p", t.SP * 2)):
        bufs[name] = TBuf()
        pipe.InitBuffer(bufs[name], nbytes)
    x, work, red, out = (bufs["x"].Get(float32), bufs["w"].Get(float32), bufs["r"].Get(float32),
                         bufs["p"].Get(half))
    sg, pg = _gm(s, float32), _gm(p, half)
    for row in range(GetBlockIdx(), t.rows, GetBlockNum()):
        i, b = row % t.S, row // (t.S * t.N)
        valid = min(t.kv_len[b], i + 1) if t.causal else t.kv_len[b]
        _handoff(HardEvent.V_MTE2)
        DataCopy(x, sg[row * t.SP], t.SP)
        _handoff(HardEvent.MTE2_V)
        Muls(x, x, t.scale, valid)
        ReduceMax(red, x, work, valid)
        _handoff(HardEvent.V_S)
        row_max = float(red.GetValue(0))
        _handoff(HardEvent.S_V)
        Adds(x, x, -row_max, valid)
        Exp(x, x, valid)
        ReduceSum(red, x, work, valid)
        _handoff(HardEvent.V_S)
        row_sum = float(red.GetValue(0))
        _handoff(HardEvent.S_V)
        Muls(x, x, 1.0 / row_sum if row_sum else 0.0, valid)   # >= 1 with values; 0 in a timing-only launch
        _handoff(HardEvent.MTE3_V)
        Duplicate(out, 0.0, t.SP)
        Cast(out, x, RoundMode.CAST_RINT, valid)
        _handoff(HardEvent.V_MTE3)
        DataCopy(pg[row * t.SP], out, t.SP)


def attention_naive(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, layout: str = "BNSD", num_heads: int = 1,
                    causal: bool = False, kv_len=None, chip=None,
                    numerics: bool = True) -> tuple[np.ndarray, list[LaunchResult]]:
    """QK^T to GM, softmax, PV: float32 output in the input layout and the three LaunchResults.

    ``numerics=False``: the timing-only launches (same cycles and traces; the output stays zero)."""
    q, k, v = (np.ascontiguousarray(a, np.float16) for a in (q, k, v))
    if not q.shape == k.shape == v.shape:
        raise ValueError(f"attention: Q {q.shape}, K {k.shape} and V {v.shape} must have one shape here")
    t = attention_tiling(q, layout, num_heads, causal=causal, kv_len=kv_len, chip=chip)
    if _padded(t.S) * 10 > get_chip(chip).ub_usable_bytes:
        raise ValueError(f"naive attention keeps a whole score row in UB: S = {t.S} needs {t.S * 10} bytes")
    heads = t.B * t.N
    sp = _padded(t.S)
    scores = np.zeros(heads * t.S * sp, np.float32)
    probs = np.zeros(heads * t.S * sp, np.float16)
    out = np.zeros(q.shape, np.float32)
    aic, aiv = get_chip(chip).aic_count, get_chip(chip).aiv_count
    g1 = _gemm(t, True, chip)
    r1 = launch(batched_gemm_kernel, min(aic, len(g1.items)), q, k, scores, g1, chip=chip,
                gm_names=["q", "k", "scores"], numerics=numerics)
    st = RowSoftmaxTiling(heads * t.S, t.S, sp, t.N, t.scale, t.causal, t.kv_len)
    r2 = launch(row_softmax_kernel, min(aiv, st.rows), scores, probs, st, chip=chip, gm_names=["scores", "probs"],
                numerics=numerics)
    g3 = _gemm(t, False, chip)
    r3 = launch(batched_gemm_kernel, min(aic, len(g3.items)), probs, v, out, g3, chip=chip,
                gm_names=["probs", "v", "out"], numerics=numerics)
    return out, [r1, r2, r3]


__all__ = ["GemmItems", "batched_gemm_kernel", "RowSoftmaxTiling", "row_softmax_kernel", "attention_naive"]
