"""A 1.5B-parameter language model's decode step and prefill on the simulated 310B, layer by layer (边缘部署).

The shapes are those of Qwen2-1.5B and DeepSeek-R1-Distill-Qwen-1.5B (their Hugging Face ``config.json``: 28
layers, hidden 1536, 12 query heads and 2 KV heads of 128 (GQA), SwiGLU MLP 8960, vocabulary 151936). As for
ResNet-50's table (migrate/resnet50.py) every launch runs timing-only (``launch(..., numerics=False)``: the
instructions, checks and cycles of a computing launch, no values) and a shape shared by the 28 layers is
simulated once.

Decode, batch 1: every linear is a GEMV streaming its weights once, kernels/m4/weight_gemv.py, fp16 weights
or group-wise int4 (group 128, one fp16 scale per group and column: 4.125 bits a weight) dequantised on the
fly; attention is kernels/m4/decode_attention.py over the cache of the 2 KV heads (the KV bytes read are
exact; the 6 query heads sharing each KV head are simulated as one, each head of 128 as 4 of 32). Prefill (time to first token,
首字时延): the linears are the cube gemm of the ResNet-50 table (Matmul API, fp16) on the prompt's rows, or with
int4 weights the fused W4A16 kernel (kernels/m4/w4a16_matmul.py: codes dequantised in UB, copied to L1, Mmad;
a coupled chip's data path), the logits only for the last row (a GEMV). Norms, RoPE, SwiGLU's product and the residual adds (vector work on
1536-wide rows, < 1 % of the bytes) are not simulated; neither is prefill attention (for 128 prompt tokens
under 1 % of prefill's FLOPs). Columns not a multiple of a tile are padded (the lm_head's 151936 to 152576).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.hw.chips import ChipProfile, get_chip
from ascend_sim.api.launch import LaunchResult
from ascend_sim.kernels.m4.decode_attention import decode_attention
from ascend_sim.kernels.m4.w4a16_matmul import w4a16_matmul
from ascend_sim.kernels.m4.weight_gemv import weight_gemv
from ascend_sim.migrate.resnet50 import time_gemm

LAYERS, HIDDEN, HEADS, KV_HEADS, HEAD_DIM, MLP, VOCAB = 28, 1536, 12, 2, 128, 8960, 151936
GROUP = 128
ATTN_HEAD_DIM = 32          # decode_attention's widest head
TILES = (2048, 1792, 1536, 1280, 1024, 768, 512)


@dataclass(frozen=True)
class Linear:
    """One weight matrix ``[K, O]`` and how many times a token uses it (28 for a decoder layer's)."""

    name: str
    K: int
    O: int
    count: int

    def bytes(self, bits: int) -> int:
        """Weight bytes: fp16, or int4 codes plus one fp16 scale per group of 128 rows and column."""
        return self.K * self.O * 2 if bits == 16 else self.K * self.O // 2 + self.K // GROUP * self.O * 2


def linears() -> list[Linear]:
    """The 1.5B model's matrices: fused QKV (q 1536 + k, v 2 x 256), output, fused gate/up, down, lm_head."""
    qkv = HIDDEN + 2 * KV_HEADS * HEAD_DIM
    return [Linear("qkv_proj", HIDDEN, qkv, LAYERS), Linear("o_proj", HIDDEN, HIDDEN, LAYERS),
            Linear("gate_up_proj", HIDDEN, 2 * MLP, LAYERS), Linear("down_proj", MLP, HIDDEN, LAYERS),
            Linear("lm_head", HIDDEN, VOCAB, 1)]


def tile_for(O: int) -> tuple[int, int]:
    """(tile, padded O): the widest tile that divides O, else O padded to whole 1024-column tiles."""
    for t in TILES:
        if O % t == 0:
            return t, O
    return 1024, -(-O // 1024) * 1024


@dataclass(frozen=True)
class Row:
    """One row of a table: a step's launch, its count per token, bytes and simulated us per launch."""

    name: str
    shape: str
    count: int
    bytes: int
    us: float
    bound: str

    @property
    def total_us(self) -> float:
        return self.us * self.count

    @property
    def gbps(self) -> float:
        return self.bytes / (self.us * 1e3) if self.us else 0.0


def time_linear_gemv(lin: Linear, bits: int, chip: ChipProfile | str | None = None) -> Row:
    """One decode GEMV of ``lin`` streamed as fp16 (16) or int4 (4), timing-only."""
    tile, O = tile_for(lin.O)
    _, res = weight_gemv(np.zeros(lin.K, np.float16), np.zeros((lin.K, O), np.float32), bits, numerics=False,
                         tile=tile, rows=16, chip=chip)
    return Row(lin.name, f"{lin.K} x {lin.O}", lin.count, Linear(lin.name, lin.K, O, 1).bytes(bits), res.us,
               res.profile().bound)


def time_decode_attention(context: int, chip: ChipProfile | str | None = None) -> Row:
    """One layer's decode attention over ``context`` cached tokens of the 2 KV heads, timing-only.

    The kernel takes heads of 16 or 32 values: the 2 heads of 128 run as 8 of 32 (the same cache bytes)."""
    n = KV_HEADS * HEAD_DIM // ATTN_HEAD_DIM
    cache = np.zeros((n, context + 1, ATTN_HEAD_DIM), np.float16)
    _, res = decode_attention(np.zeros(3 * n * ATTN_HEAD_DIM, np.float16), cache, cache.copy(), context,
                              chip=chip, numerics=False)
    us = sum(r.us for r in res)
    bound = max(res, key=lambda r: r.us).profile().bound
    return Row("attention", f"{KV_HEADS} KV heads x {context} tokens", LAYERS,
               2 * KV_HEADS * (context + 1) * HEAD_DIM * 2, us, bound)


def decode_table(bits: int, context: int, chip: ChipProfile | str | None = "Ascend310B") -> list[Row]:
    """Every launch of one decode step (batch 1) with weights of ``bits`` and ``context`` cached tokens."""
    c = get_chip(chip)
    return [time_linear_gemv(lin, bits, c) for lin in linears()] + [time_decode_attention(context, c)]


def time_linear_w4a16(lin: Linear, prompt: int, chip: ChipProfile | str | None = "Ascend310B") -> LaunchResult:
    """One prefill linear with int4-g128 weights through the fused W4A16 cube kernel, timing-only."""
    codes = np.zeros((lin.O, lin.K), np.int8)
    scales = np.zeros((lin.O, lin.K // GROUP), np.float16)
    _, res = w4a16_matmul(np.zeros((prompt, lin.K), np.float16), codes, scales, np.zeros(lin.O, np.float32),
                          chip=chip, numerics=False)
    return res


def prefill_table(prompt: int, chip: ChipProfile | str | None = "Ascend310B", bits: int = 16) -> list[Row]:
    """The prompt's linears on the cube (``prompt`` rows; fp16 weights through the Matmul API, or int4-g128
    through the fused W4A16 kernel, kernels/m4/w4a16_matmul.py), then the last row's logits (GEMV)."""
    c = get_chip(chip)
    rows = []
    for lin in linears()[:-1]:
        res = time_gemm(prompt, lin.O, lin.K, chip=c) if bits == 16 else time_linear_w4a16(lin, prompt, c)
        rows.append(Row(lin.name, f"{prompt} x {lin.K} x {lin.O}", lin.count, lin.bytes(bits), res.us,
                        res.profile().bound))
    return rows + [time_linear_gemv(linears()[-1], bits, c)]


def total_ms(rows: list[Row]) -> float:
    """A step's simulated time: every launch times its count, in ms (launch overheads not included)."""
    return sum(r.total_us for r in rows) / 1e3


def format_rows(rows: list[Row]) -> str:
    """A markdown table of the rows and their total."""
    out = ["| launch | shape | per token | MB each | us each | GB/s | bound | ms per token |",
           "|---|---|---:|---:|---:|---:|---|---:|"]
    for r in rows:
        out.append(f"| {r.name} | {r.shape} | {r.count} | {r.bytes / 1e6:,.2f} | {r.us:,.1f} | {r.gbps:.1f} | "
                   f"{r.bound} | {r.total_us / 1e3:,.2f} |")
    mb = sum(r.bytes * r.count for r in rows) / 1e6
    out.append(f"| **total** | | | {mb:,.0f} (all) | | | | **{total_ms(rows):,.1f}** |")
    return "\n".join(out)


__all__ = ["LAYERS", "HIDDEN", "HEADS", "KV_HEADS", "HEAD_DIM", "MLP", "VOCAB", "GROUP", "Linear", "Row",
           "linears", "tile_for", "time_linear_gemv", "time_linear_w4a16", "time_decode_attention", "decode_table", "prefill_table",
           "total_ms", "format_rows"]
