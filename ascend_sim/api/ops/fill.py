"""Data fill (数据填充): Brcb (each of 8 source elements to a whole 32-byte DataBlock) and CreateVecIndex.

CreateVecIndex page: "创建指定起始值的向量索引 ... dst = np.arange(firstValue, firstValue + count)"; int16/half/
int32/float on Atlas A2; "firstValue需保证不超出dst中元素数据类型对应的大小范围"; count 0 is a no-op. Only the
count form is modelled (the mask/repeat form is not).

The Brcb page: each repeat reads 8 consecutive source elements ("源操作数不支持Stride参数配置，始终采用连续读")
and fills 8 destination DataBlocks with them, ``dstBlkStride`` blocks apart within a repeat and
``dstRepStride`` blocks between repeats; dstBlkStride 0 is undefined; src and dst may not be the
same memory. Atlas A2: int16/uint16/half/bfloat16/int32/uint32/float.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.api.checks import check_fields, field_spec, integer, scalar as scalar_arg
from ascend_sim.api.ops.mask import count_form_done
from ascend_sim.api.ops.dtype_table import allowed
from ascend_sim.api.ops.vector import (MAX_STRIDE, Access, check_repeat, issue, require_dtype,
                                       same_dtype, ub_operand)
from ascend_sim.engine import timing
from ascend_sim.engine import context
from ascend_sim.engine.context import current_core
from ascend_sim.engine.errors import ArgumentError, kernel_point

_TYPES = allowed("Brcb")


@dataclass
class BrcbRepeatParams:
    """``BrcbRepeatParams(dstBlkStride, dstRepStride)``, in 32-byte blocks (the other C++ fields are unused)."""

    dstBlkStride: int = 1
    dstRepStride: int = 8

    def __post_init__(self):
        check_fields(self, _BRCB_SPEC)


_BRCB_SPEC = field_spec(dstBlkStride="uint16_t", dstRepStride="uint16_t")       # kernel_struct_brcb.h


def Brcb(dst, src, repeatTime: int, repeatParams: BrcbRepeatParams) -> None:
    """``Brcb(dst, src, repeatTime, BrcbRepeatParams)``: dst block (r, k) = 8 copies... of src[8r + k]."""
    site = kernel_point()
    ub_operand(dst, "Brcb", "dst", site)
    ub_operand(src, "Brcb", "src", site)
    same_dtype("Brcb", site, dst, src)
    require_dtype("Brcb", dst, _TYPES, site)
    if not isinstance(repeatParams, BrcbRepeatParams):
        raise ArgumentError(f"Brcb takes a BrcbRepeatParams, got {type(repeatParams).__name__}",
                            fix="Brcb(dst, src, repeatTime, «BrcbRepeatParams(dstBlkStride, dstRepStride)»)", site=site)
    r = check_repeat("Brcb", repeatTime, site, current_core().chip.vec_max_repeat)
    blk = integer("Brcb", "dstBlkStride", repeatParams.dstBlkStride, site, 1, MAX_STRIDE,
                  fix="dstBlkStride 0 is undefined on the device: use 1 for consecutive blocks")
    rep = integer("Brcb", "dstRepStride", repeatParams.dstRepStride, site, 0, MAX_STRIDE)
    if dst.tier is src.tier and dst.addr == src.addr:
        raise ArgumentError("Brcb: src and dst are the same memory, which the Brcb page does not allow",
                            fix="broadcast into another buffer", site=site)
    if not r:
        return                      # repeatTime 0: a no-op on Atlas A2
    epb = 32 // dst.dtype.itemsize
    blocks = (np.arange(r)[:, None] * rep + np.arange(8)[None, :] * blk).reshape(-1) * epb
    d = Access(dst, (blocks[:, None] + np.arange(epb)[None, :]).reshape(-1), "Brcb", site)
    a = Access(src, 8 * r, "Brcb", site)
    issue("Brcb", "simple", d, [a], r, site)
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    d.put(np.repeat(a.get(), epb))


_INDEX_TYPES = allowed("CreateVecIndex")


def CreateVecIndex(dst, firstValue, count: int) -> None:
    """``CreateVecIndex(dst, firstValue, count)``: dst[i] = firstValue + i for i < count, in dst's dtype."""
    site = kernel_point()
    ub_operand(dst, "CreateVecIndex", "dst", site)
    require_dtype("CreateVecIndex", dst, _INDEX_TYPES, site)
    scalar_arg("CreateVecIndex", "firstValue", firstValue, dst.dtype, site)
    n = integer("CreateVecIndex", "count", count, site, 0, dst.size,
                fix=f"count in 0..{dst.size} (the elements dst holds)")
    if not n:
        return
    d = Access(dst, n, "CreateVecIndex", site)
    issue("CreateVecIndex", "simple", d, [], timing.vector_repeats(n, dst.dtype.itemsize), site)
    count_form_done(current_core())
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    d.put(np.arange(firstValue, firstValue + n, dtype=dst.dtype))


__all__ = ["Brcb", "BrcbRepeatParams", "CreateVecIndex"]
