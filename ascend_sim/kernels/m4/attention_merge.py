"""Split-KV's second step for the FlashAttention-style kernel: merge the key-sequence parts of a query block.

When the query blocks of the last round would leave core groups idle, ``attention_flash`` cuts each of them
into ``parts`` key ranges (FlashDecoding's split-KV, migration_engineering.md s2: "FlashDecode splits S2 ...
merges by LSE"); each part leaves its unnormalised accumulator, running max and running sum in GM. This AIV
kernel folds the parts of one query block's half (one AIV each) with the online-softmax rescaling and writes O.
"""
from __future__ import annotations

from dataclasses import dataclass

from ascend_sim import GetBlockIdx, GlobalTensor, TPipe, float32, kernel
from ascend_sim.kernels.m4.attention_softmax import OnlineSoftmaxRows


@dataclass(frozen=True)
class MergeTiling:
    """Per merged query block (in piece order): its output offset and rows; the part layout in GM."""

    blocks: tuple[tuple[int, int], ...]     # (GM offset of the block's row 0 in O, rows)
    parts: int
    br: int
    bc: int
    D: int
    pitch: int
    part_floats: int


@kernel
def merge_parts_kernel(parts_ws, out, t: MergeTiling) -> None:
    """Block 2k + h merges rows ``h * br/2 ..`` of query block k over its ``parts`` pieces."""
    k, h = divmod(GetBlockIdx(), 2)
    base, m = t.blocks[k]
    half_rows = t.br // 2
    r0 = h * half_rows
    n = max(0, min(half_rows, m - r0))
    if not n:
        return
    rows = OnlineSoftmaxRows(TPipe(), half_rows, t.bc, t.D)
    ws = GlobalTensor(float32)
    ws.SetGlobalBuffer(parts_ws)
    for p in range(t.parts):
        rows.merge_partial(ws[(k * t.parts + p) * t.part_floats], n, t.br, r0, first=p == 0)
    o = GlobalTensor(float32)
    o.SetGlobalBuffer(out)
    rows.finish(o[base + r0 * t.pitch], n, t.pitch)


__all__ = ["MergeTiling", "merge_parts_kernel"]
