"""Decode attention (解码注意力) over a KV cache (KV缓存) held in GM: append one token, attend its one query.

One decode step of a causal language model has one new token. Its projection row ``qkv [3 * N * D]`` (half,
Q then K then V, head-major inside each, the BSH columns) holds the query, key and value of every head.
The cache is two GM tensors ``k_cache, v_cache [N, S_max, D]`` (half); rows ``0 .. pos-1`` hold the earlier
tokens and ``pos`` is the new token's position.

``decode_attention_kernel`` (AIV, the FlashDecoding split): work items are (head, part), each part a range
of ``chunk`` keys of ``0 .. pos``, one item per block. The part that holds position ``pos`` appends: it
loads the new key and value rows straight into their slots of its UB tiles and writes them to row ``pos`` of
the caches (the append). Every part then computes, in float32 in UB,
``s = scale * K q`` (Mul by the query row, then one WholeReduceSum per key row), ``m = max s``,
``p = exp(s - m)``, ``l = sum p`` and ``acc = sum_j p_j V_j`` (Brcb spreads p over the value rows, a tree of
Adds folds the rows). With one part per head the block writes ``acc / l``; with several each part leaves
``(acc, m, l)`` in a GM workspace and ``decode_merge_kernel`` (one block per head) rescales every part by
``exp(m_p - max m)`` and writes ``sum acc / sum l`` (the log-sum-exp merge).

The output is float32 ``[N * D]`` (the BSH row of the attention output). ``kv_append_kernel`` is prefill's
cache fill: every head's K and V columns of the prompt's projection rows copied into the caches.

This is the role of CANN's IncreFlashAttention operator (decode, one query row per head), which has an
all-vector template and, when batch x KV heads is small against the core count, splits the KV sequence
(FlashDecode) and merges the parts by log-sum-exp (the operator's design notes, ``common/IFA算子设计介绍.md`` of
Huawei's cann-ops-adv documentation). Here the host picks the split itself: parts of at least 64 keys, as many
as fill the AIV cores.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (Add, Adds, BinaryRepeatParams, Brcb, BrcbRepeatParams, Cast, DataCopy, DataCopyParams, Div, Duplicate, Exp,
                        GetBlockIdx, GlobalTensor, HardEvent, LaunchResult, Max, Mul, Muls, ReduceMax, ReduceSum,
                        RoundMode, SetFlag, Sub, TBuf, TilingError, TPipe, WaitFlag, WholeReduceSum, float32, get_chip,
                        half, kernel, launch)
from ascend_sim.hw.chips import DATA_BLOCK_BYTES

FLOAT_BLOCK = DATA_BLOCK_BYTES // 4        # 8 floats in one 32-byte DataBlock
MIN_CHUNK = 64                              # keys per part when the host picks the split
MAX_CHUNK = 248                             # one WholeReduceSum repeat per key row: at most 255 repeats


@dataclass(frozen=True)
class DecodeTiling:
    """N heads of D, the new token at ``pos`` of an ``S_max``-row cache, ``parts`` ranges of ``chunk`` keys."""

    N: int
    D: int
    S_max: int
    pos: int
    chunk: int
    scale: float

    @property
    def length(self) -> int:
        """Keys attended: the earlier tokens and the new one."""
        return self.pos + 1

    @property
    def part_floats(self) -> int:
        """A part's state in the workspace: acc (D floats), then m and l, each in all 8 lanes of a block."""
        return self.D + 2 * FLOAT_BLOCK

    @property
    def parts(self) -> int:
        return -(-self.length // self.chunk)

    @property
    def blocks(self) -> int:
        return self.N * self.parts

    def keys(self, part: int) -> tuple[int, int]:
        """(first key, key count) of ``part``."""
        k0 = part * self.chunk
        return k0, min(self.chunk, self.length - k0)


def decode_tiling(n_heads: int, head_dim: int, s_max: int, pos: int, *, chunk: int | None = None,
                  chip=None) -> DecodeTiling:
    """The host tiling: the shapes checked, ``chunk`` picked to spread the keys over the AIV cores (more
    blocks than cores run in waves, as any launch does)."""
    site = ("<tiling>", 0)
    if head_dim % 16 or not 16 <= head_dim <= 16 * 2:
        raise TilingError(f"decode attention: head size D = {head_dim}; this kernel takes 16 or 32 (whole 32-byte "
                          "half blocks, one or two float blocks a row in UB)",
                          fix="use heads of 16 or 32 values", site=site)
    if not 0 <= pos < s_max:
        raise TilingError(f"decode attention: the new token's position {pos} is outside the cache of {s_max} rows",
                          fix=f"allocate a cache of at least {pos + 1} rows, or stop generating at {s_max} tokens",
                          site=site)
    cores = get_chip(chip)
    cores = cores.aiv_count if cores.separated else cores.aic_count
    if chunk is None:
        per_head = max(1, cores // n_heads)
        chunk = max(MIN_CHUNK, -(-(pos + 1) // per_head))
        chunk = min(MAX_CHUNK, -(-chunk // FLOAT_BLOCK) * FLOAT_BLOCK)
    if chunk % FLOAT_BLOCK or not FLOAT_BLOCK <= chunk <= MAX_CHUNK:
        raise TilingError(f"decode attention: chunk = {chunk} keys per part; it must be a multiple of "
                          f"{FLOAT_BLOCK} from {FLOAT_BLOCK} to {MAX_CHUNK}",
                          fix="round the chunk to a multiple of 8 keys", site=site)
    t = DecodeTiling(n_heads, head_dim, s_max, pos, chunk, 1.0 / float(np.sqrt(head_dim)))
    return t


def _gm(ptr, dtype) -> GlobalTensor:
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(ptr)
    return g


def handoff(event: HardEvent) -> None:
    """Order two pipes inside one AIV (the producer's writes land before the consumer reads)."""
    SetFlag(event, 0)
    WaitFlag(event, 0)


def read_scalar(buf) -> float:
    """Read element 0 of a vector result on the scalar unit (V -> S, then S -> V before the next vector op)."""
    handoff(HardEvent.V_S)
    value = float(buf.GetValue(0))
    handoff(HardEvent.S_V)
    return value


def _buffers(pipe: TPipe, sizes: dict[str, tuple[int, object]]) -> dict:
    out = {}
    for name, (nbytes, dtype) in sizes.items():
        b = TBuf()
        pipe.InitBuffer(b, nbytes)
        out[name] = b.Get(dtype)
    return out


def fold_rows(x, rows: int, width: int) -> None:
    """``x[0, :] = sum of the rows`` of ``rows`` float rows of ``width`` (a tree of Adds, halving each time)."""
    while rows > 1:
        half_rows = rows // 2
        Add(x, x, x[(rows - half_rows) * width], half_rows * width)
        rows -= half_rows


# --- SHOW decode-attention: course/04b_llm.ipynb cell llm-08
@kernel
def decode_attention_kernel(qkv, k_cache, v_cache, out, ws, t: DecodeTiling) -> None:
    """Block ``h * parts + p``: append (the last part), then part ``p`` of head ``h``'s attention."""
    h, part = divmod(GetBlockIdx(), t.parts)
    k0, n = t.keys(part)
    D, row = t.D, h * t.S_max * t.D
    b = _buffers(TPipe(), {"kh": (t.chunk * D * 2, half), "vh": (t.chunk * D * 2, half),
                           "kf": (t.chunk * D * 4, float32), "vf": (t.chunk * D * 4, float32),
                           "qh": (D * 2, half), "qf": (D * 4, float32), "s": (t.chunk * 4, float32),
                           "work": (t.chunk * 4, float32), "red": (DATA_BLOCK_BYTES, float32),
                           "blk": (t.chunk * DATA_BLOCK_BYTES, float32), "state": (t.part_floats * 4, float32)})
    gq, gk, gv = _gm(qkv, half), _gm(k_cache, half), _gm(v_cache, half)
    old = n - 1 if k0 + n == t.length else n        # rows already in the cache (the last part adds the new one)
    if old:
        DataCopy(b["kh"], gk[row + k0 * D], old * D)
        DataCopy(b["vh"], gv[row + k0 * D], old * D)
    DataCopy(b["qh"], gq[h * D], D)
    if old < n:                                     # the append: the new K and V rows into UB, then to the cache
        DataCopy(b["kh"][old * D], gq[(t.N + h) * D], D)
        DataCopy(b["vh"][old * D], gq[(2 * t.N + h) * D], D)
        handoff(HardEvent.MTE2_MTE3)
        DataCopy(gk[row + t.pos * D], b["kh"][old * D], D)
        DataCopy(gv[row + t.pos * D], b["vh"][old * D], D)
    handoff(HardEvent.MTE2_V)
    kf, vf, s = b["kf"], b["vf"], b["s"]
    Cast(kf, b["kh"], RoundMode.CAST_NONE, n * D)
    Cast(b["qf"], b["qh"], RoundMode.CAST_NONE, D)
    rep = D * 4 // DATA_BLOCK_BYTES
    Mul(kf, kf, b["qf"], D, n, BinaryRepeatParams(1, 1, 1, rep, rep, 0))     # each key row times q
    WholeReduceSum(s, kf, D, n, 1, 1, rep)                                   # s_j = k_j . q
    Muls(s, s, t.scale, n)
    ReduceMax(b["red"], s, b["work"], n)
    m = read_scalar(b["red"])
    Adds(s, s, -m, n)
    Exp(s, s, n)                                                             # p_j = exp(s_j - m)
    ReduceSum(b["red"], s, b["work"], n)
    l = read_scalar(b["red"])
    Cast(vf, b["vh"], RoundMode.CAST_NONE, n * D)
    Brcb(b["blk"], s, -(-n // 8), BrcbRepeatParams(1, 8))
    Mul(vf, vf, b["blk"], D, n, BinaryRepeatParams(1, 1, 0, rep, rep, 1))    # p_j V_j
    fold_rows(vf, n, D)                                                      # acc = sum_j p_j V_j
    if t.parts == 1:
        Muls(vf, vf, 1.0 / l if l else 0.0, D)      # l >= 1 with values; 0 in a timing-only launch
        handoff(HardEvent.V_MTE3)
        DataCopy(_gm(out, float32)[h * D], vf, D)
        return
    st = b["state"]
    Adds(st, vf, 0.0, D)
    Duplicate(st[t.part_floats - 2 * FLOAT_BLOCK], m, FLOAT_BLOCK)
    Duplicate(st[t.part_floats - FLOAT_BLOCK], l, FLOAT_BLOCK)
    handoff(HardEvent.V_MTE3)
    DataCopy(_gm(ws, float32)[GetBlockIdx() * t.part_floats], st, t.part_floats)


@kernel
def decode_merge_kernel(ws, out, t: DecodeTiling) -> None:
    """Block ``h``: ``out[h] = sum_p exp(m_p - M) acc_p / sum_p exp(m_p - M) l_p`` with ``M = max_p m_p``."""
    h, D, P = GetBlockIdx(), t.D, t.parts
    b = _buffers(TPipe(), {"parts": (P * t.part_floats * 4, float32), "m": (FLOAT_BLOCK * 4, float32),
                           "e": (FLOAT_BLOCK * 4, float32), "acc": (D * 4, float32), "l": (FLOAT_BLOCK * 4, float32)})
    st = b["parts"]
    DataCopy(st, _gm(ws, float32)[h * P * t.part_floats], P * t.part_floats)
    handoff(HardEvent.MTE2_V)
    mx, e, acc, l = b["m"], b["e"], b["acc"], b["l"]
    Adds(mx, st[t.part_floats - 2 * FLOAT_BLOCK], 0.0, FLOAT_BLOCK)
    for p in range(1, P):                                                    # M = max_p m_p (in all 8 lanes)
        Max(mx, mx, st[p * t.part_floats + t.part_floats - 2 * FLOAT_BLOCK], FLOAT_BLOCK)
    Duplicate(acc, 0.0, D)
    Duplicate(l, 0.0, FLOAT_BLOCK)
    rep = D * 4 // DATA_BLOCK_BYTES
    for p in range(P):
        base = p * t.part_floats
        Sub(e, st[base + t.part_floats - 2 * FLOAT_BLOCK], mx, FLOAT_BLOCK)
        Exp(e, e, FLOAT_BLOCK)                                               # exp(m_p - M), 8 lanes
        Mul(st[base], st[base], e, D, 1, BinaryRepeatParams(1, 1, 0, rep, rep, 0))
        Add(acc, acc, st[base], D)
        Mul(e, e, st[base + t.part_floats - FLOAT_BLOCK], FLOAT_BLOCK)
        Add(l, l, e, FLOAT_BLOCK)
    Div(acc, acc, l, D, 1, BinaryRepeatParams(1, 1, 0, rep, rep, 0))
    handoff(HardEvent.V_MTE3)
    DataCopy(_gm(out, float32)[h * D], acc, D)
# --- END SHOW


@dataclass(frozen=True)
class AppendTiling:
    """``T`` rows of a ``[T, 3 * N * D]`` projection appended at rows ``pos0..`` of ``[N, S_max, D]`` caches."""

    T: int
    N: int
    D: int
    S_max: int
    pos0: int


@kernel
def kv_append_kernel(qkv, k_cache, v_cache, t: AppendTiling) -> None:
    """Block ``h``: head ``h``'s K and V columns of the T rows (one strided copy each) to its cache rows."""
    h, D, w = GetBlockIdx(), t.D, 3 * t.N * t.D
    b = _buffers(TPipe(), {"k": (t.T * D * 2, half), "v": (t.T * D * 2, half)})
    gq = _gm(qkv, half)
    gap = (w - D) * 2 // DATA_BLOCK_BYTES           # the other columns of a projection row, in 32-byte blocks
    blocks = D * 2 // DATA_BLOCK_BYTES
    DataCopy(b["k"], gq[(t.N + h) * D], DataCopyParams(t.T, blocks, gap, 0))
    DataCopy(b["v"], gq[(2 * t.N + h) * D], DataCopyParams(t.T, blocks, gap, 0))
    handoff(HardEvent.MTE2_MTE3)
    row = (h * t.S_max + t.pos0) * D
    DataCopy(_gm(k_cache, half)[row], b["k"], t.T * D)
    DataCopy(_gm(v_cache, half)[row], b["v"], t.T * D)


def kv_append(qkv: np.ndarray, k_cache: np.ndarray, v_cache: np.ndarray, pos0: int, *, chip=None) -> LaunchResult:
    """Prefill's cache fill: the K and V of ``qkv [T, 3 * N * D]`` into rows ``pos0 .. pos0 + T - 1``."""
    qkv = np.ascontiguousarray(qkv, np.float16)
    N, S_max, D = k_cache.shape
    T = len(qkv)
    if qkv.ndim != 2 or qkv.shape[1] != 3 * N * D:
        raise ValueError(f"kv_append: qkv {list(qkv.shape)}; expected [T, {3 * N * D}] for caches {list(k_cache.shape)}")
    if not 0 <= pos0 or pos0 + T > S_max:
        raise TilingError(f"kv_append: rows {pos0}..{pos0 + T - 1} do not fit the cache of {S_max} rows",
                          fix=f"allocate at least {pos0 + T} cache rows", site=("<tiling>", 0))
    t = AppendTiling(T, N, D, S_max, int(pos0))
    return launch(kv_append_kernel, N, qkv, k_cache, v_cache, t, chip=chip, gm_names=["qkv", "k_cache", "v_cache"])


def decode_attention(qkv: np.ndarray, k_cache: np.ndarray, v_cache: np.ndarray, pos: int, *, chunk: int | None = None,
                     chip=None, numerics: bool = True) -> tuple[np.ndarray, list[LaunchResult]]:
    """One decode step: append row ``pos`` of the caches from ``qkv`` and attend; float32 ``[N * D]`` out.

    ``qkv``: half ``[3 * N * D]`` (or ``[1, 3 * N * D]``); ``k_cache``/``v_cache``: half ``[N, S_max, D]``,
    written in place (row ``pos`` of every head). Returns the output and the launches (decode, then the merge
    when the keys were split into several parts).
    """
    qkv = np.ascontiguousarray(qkv, np.float16).reshape(-1)
    for name, c in (("k_cache", k_cache), ("v_cache", v_cache)):
        if not (isinstance(c, np.ndarray) and c.dtype == np.float16 and c.ndim == 3 and c.flags.c_contiguous):
            raise ValueError(f"decode attention: {name} must be a contiguous half array [N, S_max, D] (it is "
                             "written in place), got " + (f"{c.dtype}{list(c.shape)}" if isinstance(c, np.ndarray)
                                                         else type(c).__name__))
    N, S_max, D = k_cache.shape
    if v_cache.shape != k_cache.shape or qkv.size != 3 * N * D:
        raise ValueError(f"decode attention: qkv has {qkv.size} values and the caches are {list(k_cache.shape)}, "
                         f"{list(v_cache.shape)}; expected 3 * N * D = {3 * N * D} and two equal caches")
    t = decode_tiling(N, D, S_max, int(pos), chunk=chunk, chip=chip)
    out = np.zeros(N * D, np.float32)
    ws = np.zeros(max(1, t.blocks * t.part_floats if t.parts > 1 else 1), np.float32)
    names = ["qkv", "k_cache", "v_cache", "out", "ws"]
    res = [launch(decode_attention_kernel, t.blocks, qkv, k_cache, v_cache, out, ws, t, chip=chip, gm_names=names,
                  numerics=numerics)]
    if t.parts > 1:
        res.append(launch(decode_merge_kernel, t.N, ws, out, t, chip=chip, gm_names=["ws", "out"],
                          numerics=numerics))
    return out, res


def decode_attention_ref(qkv: np.ndarray, k_cache: np.ndarray, v_cache: np.ndarray, pos: int) -> np.ndarray:
    """numpy reference in float64 on the half values (the caches are not modified): float32 ``[N * D]``."""
    N, _, D = k_cache.shape
    x = np.asarray(qkv, np.float16).reshape(3, N, D).astype(np.float64)
    k = np.concatenate([k_cache[:, :pos].astype(np.float64), x[1][:, None]], axis=1)
    v = np.concatenate([v_cache[:, :pos].astype(np.float64), x[2][:, None]], axis=1)
    s = np.einsum("nd,nsd->ns", x[0], k) / np.sqrt(D)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (np.einsum("ns,nsd->nd", p / p.sum(axis=1, keepdims=True), v)).reshape(-1).astype(np.float32)


__all__ = ["DecodeTiling", "decode_tiling", "decode_attention_kernel", "decode_merge_kernel", "decode_attention",
           "decode_attention_ref", "fold_rows", "handoff", "read_scalar", "AppendTiling", "kv_append_kernel", "kv_append"]
