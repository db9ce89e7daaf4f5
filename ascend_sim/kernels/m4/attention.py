"""Scaled dot-product attention (注意力机制): a naive three-kernel version and a FlashAttention-style MIX kernel.

``out = softmax(scale * Q K^T + mask) V`` per (batch, head), layouts BSH (``[B, S, N*D]``) and BNSD
(``[B, N, S, D]``), half inputs, float32 output; masks: causal (key j > query i hidden) and padding (keys
at or beyond ``kv_len[b]`` hidden).

naive (``attention_naive``)
    1. AIC: ``S = Q K^T`` for every head to GM (float32, B*N*S*S values), 2. AIV: row softmax with the scale
    and masks, P to GM in half, 3. AIC: ``O = P V``. GM traffic and memory grow with S^2.

flash (``attention_flash``, one MIX launch)
    Per (head, block of BR query rows) the AIC computes ``S_j = Q_i K_j^T`` for one BC-column key block into a
    per-group workspace (two slots: S_{j+1} is computed while the AIVs work on S_j) and flags the two AIVs (CrossCoreSetFlag); each AIV takes half of the rows and runs
    the online softmax with SoftmaxFlashV2's update (migration_engineering.md s2, SoftmaxFlashV2.md):
    "x_max = max(inmax, rowmax(src)), dst = exp(src - x_max), exp_max = exp(inmax - x_max),
    x_sum = exp_max * insum + sum(dst)"; it writes ``P_j`` (half) and flags the AIC, which computes
    ``P_j V_j``; the AIV rescales its accumulator by exp_max and adds. After the last key block the
    accumulator is divided by x_sum. Workspaces are BR x BC and BR x pitch per group: memory grows with S,
    not S^2. Causal: key blocks right of the diagonal are skipped, the diagonal block adds a BR x BC
    triangle; padding: the last valid key block adds a row that hides the columns past ``kv_len``.

Masked scores get ``NEG = -1e30`` (finite, so ``exp(NEG - m)`` is 0 and no row ever computes inf - inf).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (ASCEND_IS_AIC, PIPE_FIX, PIPE_MTE3, Add, Adds, BinaryRepeatParams, Brcb, BrcbRepeatParams, Cast,
                        CrossCoreSetFlag, CrossCoreWaitFlag, DataCopy, DataCopyParams, Div, Exp, GetBlockIdx,
                        GetBlockNum, GetSubBlockIdx, GetSubBlockNum, GlobalTensor, HardEvent, LaunchResult, Max, Mul, Muls,
                        ReduceOrder, RoundMode, SetFlag, Sub, TBuf, TPipe, TPosition, WaitFlag, WholeReduceMax, WholeReduceSum, float32,
                        half, kernel, launch, matmul_tiling)
from ascend_sim.hw.chips import DATA_BLOCK_BYTES
from ascend_sim import REGIST_MATMUL_OBJ, GetSysWorkSpacePtr, Matmul, MatmulType
from ascend_sim.kernels.m4.gemm import gemm_tiling

ND = matmul_tiling.CubeFormat.ND
BR = 64                 # query rows per block (32 per AIV)
BC = 64                 # key columns per block: one 256-byte repeat of float32 per row
NEG = -1e30
FLAG_S, FLAG_P, FLAG_O = 1, 2, 3
LAYOUTS = ("BSH", "BNSD")


# ----------------------------------------------------------------------------- host side
@dataclass(frozen=True)
class AttentionTiling:
    """Shapes, layout strides, the masks and the per-group workspace layout."""

    B: int
    N: int
    S: int
    D: int
    layout: str
    scale: float
    causal: bool
    kv_len: tuple[int, ...]
    blocks: int
    qk: object = None           # TCubeTiling of S_j = Q_i K_j^T (BR x BC x D)
    pv: object = None           # TCubeTiling of P_j V_j (BR x D x BC)

    @property
    def pitch(self) -> int:
        """GM row pitch of Q, K, V and O in elements."""
        return self.N * self.D if self.layout == "BSH" else self.D

    def head_offset(self, bh: int) -> int:
        b, n = divmod(bh, self.N)
        return b * self.S * self.N * self.D + n * self.D if self.layout == "BSH" else bh * self.S * self.D

    @property
    def workspace_bytes(self) -> int:
        """GM the kernel needs beyond Q, K, V and O: per group S_j (float), P_j (half) and O_j (float) tiles."""
        return self.blocks * (2 * BR * BC * 4 + BR * BC * 2 + BR * self.pitch * 4)

    @property
    def q_blocks(self) -> int:
        return -(-self.S // BR)

    def kv_blocks(self, b: int, i: int) -> int:
        """Key blocks query block ``i`` of batch ``b`` visits (causal: up to the diagonal; padding: to kv_len)."""
        last = self.kv_len[b]
        if self.causal:
            last = min(last, (i + 1) * BR)
        return -(-last // BC)


def _mm_tiling(M: int, N: int, K: int, trans_b: bool):
    return gemm_tiling(M, N, K, half, float32, 1, False, trans_b)


def attention_tiling(q: np.ndarray, layout: str, num_heads: int, *, causal: bool = False,
                     kv_len=None, chip=None) -> AttentionTiling:
    """The host tiling from the runtime shapes: B, N, S, D from ``q`` and ``layout``, the masks checked."""
    from ascend_sim.hw.chips import get_chip
    if layout not in LAYOUTS:
        raise ValueError(f"attention layout {layout!r}: use one of {LAYOUTS}")
    if layout == "BSH":
        B, S, H = q.shape
        if H % num_heads:
            raise ValueError(f"BSH: hidden size {H} is not a multiple of num_heads = {num_heads}")
        N, D = num_heads, H // num_heads
    else:
        B, N, S, D = q.shape
    if D % 16 or not 16 <= D <= 128:
        raise ValueError(f"attention head size D = {D}: this kernel takes a multiple of 16 up to 128")
    lens = tuple([S] * B if kv_len is None else (int(v) for v in kv_len))
    if len(lens) != B or not all(1 <= v <= S for v in lens):
        raise ValueError(f"kv_len must give 1..{S} valid keys for each of the {B} batches, got {kv_len}")
    items = B * N * -(-S // BR)
    blocks = max(1, min(items, get_chip(chip).aic_count))
    return AttentionTiling(B, N, S, D, layout, 1.0 / float(np.sqrt(D)), bool(causal), lens, blocks,
                           _mm_tiling(BR, BC, D, True), _mm_tiling(BR, D, BC, False))


def mask_tables() -> tuple[np.ndarray, np.ndarray]:
    """(triangle ``[BR, BC]``: NEG above the diagonal; column rows ``[BC + 1, BC]``: row c hides columns >= c)."""
    tri = np.where(np.arange(BC)[None, :] > np.arange(BR)[:, None], NEG, 0.0).astype(np.float32)
    cols = np.where(np.arange(BC)[None, :] >= np.arange(BC + 1)[:, None], NEG, 0.0).astype(np.float32)
    return tri, cols


def _gm(ptr, dtype, size=None) -> GlobalTensor:
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(ptr, size)
    return g


# ----------------------------------------------------------------------------- vector side
def _handoff(event: HardEvent) -> None:
    """Order two pipes inside one AIV (the producer's writes land before the consumer reads)."""
    SetFlag(event, 0)
    WaitFlag(event, 0)


class OnlineSoftmaxRows:
    """One AIV's rows of a query block: running max ``m``, running sum ``l`` and the output accumulator."""

    def __init__(self, pipe: TPipe, rows: int, d: int):
        self.rows, self.d = rows, d
        names = {"s": rows * BC * 4, "p": rows * BC * 2, "o": rows * d * 4, "acc": rows * d * 4, "bias": rows * BC * 4,
                 "m": 64 * 4, "m_new": 64 * 4, "l": 64 * 4, "red": 64 * 4, "e": 64 * 4, "blk": rows * 8 * 4}
        self.buf = {}
        for name, nbytes in names.items():
            b = TBuf()
            pipe.InitBuffer(b, nbytes)
            self.buf[name] = b.Get(half if name == "p" else float32)

    def start(self, n: int) -> None:
        from ascend_sim import Duplicate
        b = self.buf
        Duplicate(b["m"], NEG, 64)
        Duplicate(b["l"], 0.0, 64)
        Duplicate(b["acc"], 0.0, n * self.d)

    def _row_broadcast(self, op, dst, src, per_row, n: int, width: int) -> None:
        """``dst[r, :] = op(src[r, :], per_row[r])`` for ``n`` rows of ``width`` floats (Brcb, then stride 0)."""
        blk = self.buf["blk"]
        Brcb(blk, per_row, -(-n // 8), BrcbRepeatParams(1, 8))
        rep = width * 4 // DATA_BLOCK_BYTES
        for c0 in range(0, width, 64):
            op(dst[c0], src[c0], blk, min(64, width - c0), n, BinaryRepeatParams(1, 1, 0, rep, rep, 1))

    def scores(self, s_gm, n: int, scale: float, bias_rows=None, bias_gm=None) -> None:
        """Load ``n`` score rows, scale them and add the mask rows (full tile or one broadcast row)."""
        b = self.buf
        _handoff(HardEvent.V_MTE2)                  # the last block's vector reads of s and bias are done
        DataCopy(b["s"], s_gm, n * BC)
        _handoff(HardEvent.MTE2_V)
        Muls(b["s"], b["s"], scale, n * BC)
        if bias_gm is not None:
            DataCopy(b["bias"], bias_gm, (n if bias_rows else 1) * BC)
            _handoff(HardEvent.MTE2_V)
            if bias_rows:
                Add(b["s"], b["s"], b["bias"], n * BC)
            else:
                Add(b["s"], b["s"], b["bias"], BC, n, BinaryRepeatParams(1, 1, 1, 8, 8, 0))

    def add_row_mask(self, row_gm, n: int) -> None:
        """Add one mask row to every loaded score row (the padding columns of a diagonal block)."""
        b = self.buf
        _handoff(HardEvent.V_MTE2)
        DataCopy(b["bias"], row_gm, BC)
        _handoff(HardEvent.MTE2_V)
        Add(b["s"], b["s"], b["bias"], BC, n, BinaryRepeatParams(1, 1, 1, 8, 8, 0))

    def softmax_flash_v2(self, n: int) -> None:
        """SoftmaxFlashV2 on the loaded rows: new max, exp(src - max), exp_max, the running sum."""
        b = self.buf
        WholeReduceMax(b["red"], b["s"], 64, n, 1, 1, 8, ReduceOrder.ORDER_ONLY_VALUE)
        Max(b["m_new"], b["m"], b["red"], n)                        # x_max = max(inmax, rowmax(src))
        self._row_broadcast(Sub, b["s"], b["s"], b["m_new"], n, BC)
        Exp(b["s"], b["s"], n * BC)                                 # dst = exp(src - x_max)
        Sub(b["e"], b["m"], b["m_new"], n)
        Exp(b["e"], b["e"], n)                                      # exp_max = exp(inmax - x_max)
        WholeReduceSum(b["red"], b["s"], 64, n, 1, 1, 8)
        Mul(b["l"], b["l"], b["e"], n)
        Add(b["l"], b["l"], b["red"], n)                            # x_sum = exp_max * insum + sum(dst)
        Adds(b["m"], b["m_new"], 0.0, n)                          # inmax for the next block

    def store_p(self, p_gm, n: int) -> None:
        b = self.buf
        Cast(b["p"], b["s"], RoundMode.CAST_RINT, n * BC)
        _handoff(HardEvent.V_MTE3)
        DataCopy(p_gm, b["p"], n * BC)
        _handoff(HardEvent.MTE3_V)                  # p is read out before the next block's Cast

    def accumulate(self, o_gm, n: int, pitch: int) -> None:
        """acc = acc * exp_max + P_j V_j (the rows of O_j read with the GM pitch)."""
        b, d = self.buf, self.d
        _handoff(HardEvent.V_MTE2)
        _copy_rows(b["o"], o_gm, n, d, pitch, to_gm=False)
        _handoff(HardEvent.MTE2_V)
        self._row_broadcast(Mul, b["acc"], b["acc"], b["e"], n, d)
        Add(b["acc"], b["acc"], b["o"], n * d)

    def finish(self, out_gm, n: int, pitch: int) -> None:
        b = self.buf
        self._row_broadcast(Div, b["acc"], b["acc"], b["l"], n, self.d)
        _handoff(HardEvent.V_MTE3)
        _copy_rows(out_gm, b["acc"], n, self.d, pitch, to_gm=True)
        _handoff(HardEvent.MTE3_V)


def _copy_rows(dst, src, n: int, d: int, pitch: int, to_gm: bool) -> None:
    """``n`` rows of ``d`` floats between UB (packed) and GM (row pitch ``pitch``)."""
    gap = (pitch - d) * 4 // DATA_BLOCK_BYTES
    if to_gm:
        DataCopy(dst, src, DataCopyParams(n, d * 4 // DATA_BLOCK_BYTES, 0, gap))
    else:
        DataCopy(dst, src, DataCopyParams(n, d * 4 // DATA_BLOCK_BYTES, gap, 0))


# ----------------------------------------------------------------------------- the MIX kernel
def _scores_on_cube(qk, q, k, base: int, i: int, j: int, m_i: int, n_j: int, pitch: int, d: int, dst) -> None:
    """AIC: S_j = Q_i K_j^T (float32) into a workspace slot, then flag the AIVs."""
    qk.SetOrgShape(BR, BC, pitch)
    qk.SetTail(m_i, n_j, d)
    qk.SetTensorA(_gm(q, half)[base + i * BR * pitch])
    qk.SetTensorB(_gm(k, half)[base + j * BC * pitch], True)
    qk.IterateAll(dst)
    CrossCoreSetFlag(2, PIPE_FIX, FLAG_S)


@kernel(core="MIX")
def flash_attention_kernel(q, k, v, out, ws_s, ws_p, ws_o, tri, cols, t: AttentionTiling) -> None:
    """One group (AIC + 2 AIV) per work item (head, query block), items dealt round robin."""
    pitch = t.pitch
    is_aic = ASCEND_IS_AIC()
    group = GetBlockIdx() if is_aic else GetBlockIdx() // GetSubBlockNum()
    groups = GetBlockNum()      # numBlocks on both sides of a MIX kernel (GetBlockNum.md); AIVs count GetSubBlockNum per group
    pipe = TPipe()
    if is_aic:
        qk = Matmul(MatmulType(TPosition.GM, ND, half, False), MatmulType(TPosition.GM, ND, half, True),
                    MatmulType(TPosition.GM, ND, float32))
        pv = Matmul(MatmulType(TPosition.GM, ND, half, False), MatmulType(TPosition.GM, ND, half, False),
                    MatmulType(TPosition.GM, ND, float32))
        REGIST_MATMUL_OBJ(pipe, GetSysWorkSpacePtr(), qk, t.qk, pv, t.pv)
    else:
        half_rows = BR // 2
        rows = OnlineSoftmaxRows(pipe, half_rows, t.D)
    s_ws = _gm(ws_s, float32)[group * 2 * BR * BC]
    p_ws = _gm(ws_p, half)[group * BR * BC]
    o_ws = _gm(ws_o, float32)[group * BR * pitch]
    for item in range(group, t.B * t.N * t.q_blocks, groups):
        bh, i = divmod(item, t.q_blocks)
        b = bh // t.N
        base = t.head_offset(bh)
        m_i = min(BR, t.S - i * BR)
        if not is_aic:
            r0 = GetSubBlockIdx() * half_rows
            n = max(0, min(half_rows, m_i - r0))
            if n:
                rows.start(n)
        nkv = t.kv_blocks(b, i)

        def n_cols(j: int) -> int:
            return min(BC, t.S - j * BC, t.kv_len[b] - j * BC)
        if is_aic:
            _scores_on_cube(qk, q, k, base, i, 0, m_i, n_cols(0), pitch, t.D, s_ws)
        for j in range(nkv):
            n_j = n_cols(j)
            s_slot = s_ws[(j % 2) * BR * BC]
            if is_aic:      # S_{j+1} into the other slot while the vector cores work on S_j
                if j + 1 < nkv:
                    _scores_on_cube(qk, q, k, base, i, j + 1, m_i, n_cols(j + 1), pitch, t.D,
                                    s_ws[((j + 1) % 2) * BR * BC])
                CrossCoreWaitFlag(FLAG_P)
                CrossCoreWaitFlag(FLAG_P)
                pv.SetOrgShape(BR, pitch, BC)
                pv.SetTail(m_i, t.D, n_j)
                pv.SetTensorA(p_ws)
                pv.SetTensorB(_gm(v, half)[base + j * BC * pitch])
                pv.IterateAll(o_ws)
                CrossCoreSetFlag(2, PIPE_FIX, FLAG_O)
                continue
            CrossCoreWaitFlag(FLAG_S)
            if n:
                diag = t.causal and j == i
                col_row = n_j if n_j < BC else None
                rows.scores(s_slot[r0 * BC], n, t.scale, bias_rows=diag,
                            bias_gm=_gm(tri, float32)[r0 * BC] if diag else
                            (_gm(cols, float32)[col_row * BC] if col_row is not None else None))
                if diag and col_row is not None:
                    rows.add_row_mask(_gm(cols, float32)[col_row * BC], n)
                rows.softmax_flash_v2(n)
                rows.store_p(p_ws[r0 * BC], n)
            CrossCoreSetFlag(2, PIPE_MTE3, FLAG_P)
            CrossCoreWaitFlag(FLAG_O)
            if n:
                rows.accumulate(o_ws[r0 * pitch], n, pitch)
        if not is_aic and n:
            rows.finish(_gm(out, float32)[base + (i * BR + r0) * pitch], n, pitch)


def _workspaces(t: AttentionTiling) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (np.zeros(t.blocks * 2 * BR * BC, np.float32), np.zeros(t.blocks * BR * BC, np.float16),  # workspace_bytes
            np.zeros(t.blocks * BR * t.pitch, np.float32))


def attention_flash(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, layout: str = "BNSD", num_heads: int = 1,
                    causal: bool = False, kv_len=None, chip=None) -> tuple[np.ndarray, LaunchResult]:
    """FlashAttention-style MIX kernel: half Q, K, V (same shape) -> float32 output of that shape."""
    q, k, v = (np.ascontiguousarray(a, np.float16) for a in (q, k, v))
    if not q.shape == k.shape == v.shape:
        raise ValueError(f"attention: Q {q.shape}, K {k.shape} and V {v.shape} must have one shape here "
                         "(self-attention, Sq = Skv)")
    t = attention_tiling(q, layout, num_heads, causal=causal, kv_len=kv_len, chip=chip)
    out = np.zeros(q.shape, np.float32)
    tri, cols = mask_tables()
    res = launch(flash_attention_kernel, t.blocks, q, k, v, out, *_workspaces(t), tri, cols, t, chip=chip,
                 gm_names=["q", "k", "v", "out", "ws_s", "ws_p", "ws_o", "tri", "cols"])
    return out, res


def attention_ref(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, layout: str = "BNSD", num_heads: int = 1,
                  causal: bool = False, kv_len=None) -> np.ndarray:
    """numpy reference in float64 on the half inputs, returned as float32 in the input layout."""
    def to_bnsd(a):
        a = a.astype(np.float64)
        if layout == "BSH":
            B, S, H = a.shape
            return a.reshape(B, S, num_heads, H // num_heads).transpose(0, 2, 1, 3)
        return a
    qq, kk, vv = (to_bnsd(np.asarray(a, np.float16)) for a in (q, k, v))
    B, N, S, D = qq.shape
    s = qq @ kk.transpose(0, 1, 3, 2) / np.sqrt(D)
    mask = np.zeros((B, 1, S, S), bool)
    if causal:
        mask |= np.triu(np.ones((S, S), bool), 1)[None, None]
    if kv_len is not None:
        mask |= (np.arange(S)[None, :] >= np.asarray(kv_len)[:, None])[:, None, None, :]
    s = np.where(mask, -np.inf, s)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    o = (p / p.sum(axis=-1, keepdims=True)) @ vv
    if layout == "BSH":
        o = o.transpose(0, 2, 1, 3).reshape(B, S, N * D)
    return o.astype(np.float32)


__all__ = ["BR", "BC", "NEG", "LAYOUTS", "AttentionTiling", "attention_tiling", "mask_tables", "OnlineSoftmaxRows",
           "flash_attention_kernel", "attention_flash", "attention_ref"]
