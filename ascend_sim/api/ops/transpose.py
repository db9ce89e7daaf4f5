"""Data layout on the vector unit (数据排布转换): Transpose of a 16x16 block and TransDataTo5HD.

Transpose page: "16*16的普通转置 ... dst = src.T"; int16/uint16/half on Atlas A2; "普通转置接口支持src和dst复用"
(in place is allowed). Not modelled: the enhanced form (TransposeParamsExt, NCHW <-> NHWC).

TransDataTo5HD page: 16 source and 16 destination addresses of 32-byte DataBlocks; "当数据类型位宽为16位时，
每个DataBlock包含16个数，从指定的16个DataBlock中的对应位置取值，组成1个新的DataBlock放入目的地址中" -- destination
block j = element j of each of the 16 source blocks. Each repeat moves every address on by srcRepStride /
dstRepStride blocks, with the page's quirk: "当repeatTimes为1时，... 有效起始位置为dstList/srcList序列输入的起始
位置加上dstRepStride/srcRepStride" (a single repeat starts one stride in). The lists hold LocalTensors or their
``GetPhyAddr()`` UB addresses. Modelled for 2-byte types; the 8-bit (high/low half blocks) and 32-bit forms,
and the LocalTensor<uint64_t> address-tensor form, are not.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.api.checks import check_fields, dtype_arg, field_spec, integer
from ascend_sim.api.pipe import TPosition
from ascend_sim.api.tensor import LocalTensor
from ascend_sim.api.ops.dtype_table import allowed
from ascend_sim.api.ops.vector import (Access, check_repeat, issue, require_dtype, same_dtype,
                                       ub_operand)
from ascend_sim.engine import context
from ascend_sim.engine.context import current_core
from ascend_sim.engine.errors import ArgumentError, kernel_point

_T16 = allowed("Transpose")
ADDR_LIST = 16                  # NCHW_CONV_ADDR_LIST_SIZE


def Transpose(dst, src) -> None:
    """``Transpose(dst, src)``: the 16x16 block of 2-byte elements at src, transposed into dst (may be src)."""
    site = kernel_point()
    ub_operand(dst, "Transpose", "dst", site)
    ub_operand(src, "Transpose", "src", site)
    same_dtype("Transpose", site, dst, src)
    require_dtype("Transpose", dst, _T16, site)
    d, a = Access(dst, 256, "Transpose", site), Access(src, 256, "Transpose", site)
    issue("Transpose", "simple", d, [a], 2, site)
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    d.put(a.get().reshape(16, 16).T.copy().reshape(-1))


@dataclass
class TransDataTo5HDParams:
    """``TransDataTo5HDParams{dstHighHalf, srcHighHalf, repeatTimes, dstRepStride, srcRepStride}`` (C++ order)."""

    dstHighHalf: bool = False
    srcHighHalf: bool = False
    repeatTimes: int = 1
    dstRepStride: int = 0
    srcRepStride: int = 0

    def __post_init__(self):
        check_fields(self, _5HD_SPEC)


_5HD_SPEC = field_spec(dstHighHalf="bool", srcHighHalf="bool", repeatTimes="uint8_t", dstRepStride="uint16_t",
                       srcRepStride="uint16_t")     # kernel_struct_transpose.h


def TransDataTo5HD(dstList, srcList, nchwconvParams: TransDataTo5HDParams, dtype=None) -> None:
    """``TransDataTo5HD<T>(dstList, srcList, params)``: lists of 16 LocalTensors (the 32-byte blocks), or of 16
    UB addresses from ``GetPhyAddr()`` with ``dtype`` = T (the uint64_t dstList[16] form)."""
    op = "TransDataTo5HD"
    site = kernel_point()
    for name, lst in (("dstList", dstList), ("srcList", srcList)):
        if not isinstance(lst, (list, tuple)) or len(lst) != ADDR_LIST:
            raise ArgumentError(f"{op}: {name} must hold {ADDR_LIST} LocalTensors (NCHW_CONV_ADDR_LIST_SIZE), got "
                                f"{len(lst) if isinstance(lst, (list, tuple)) else type(lst).__name__}",
                                fix=f"pass «[t[i * 16] for i in range({ADDR_LIST})]|an array of {ADDR_LIST}: "
                                    f"LocalTensor<T> list[{ADDR_LIST}] with list[i] = t[i * 16]»", site=site)
    if dtype is not None or any(not isinstance(t, LocalTensor) for t in (*dstList, *srcList)):
        dstList, srcList = (_blocks_at(op, lst, name, dtype, site) for lst, name in
                            ((dstList, "dstList"), (srcList, "srcList")))
    for i, (d, s) in enumerate(zip(dstList, srcList)):
        ub_operand(d, op, f"dstList[{i}]", site)
        ub_operand(s, op, f"srcList[{i}]", site)
        same_dtype(op, site, dstList[0], d, s)
    require_dtype(op, dstList[0], _T16, site)       # the simulator models the 2-byte form
    p = nchwconvParams
    if not isinstance(p, TransDataTo5HDParams):
        raise ArgumentError(f"{op} takes a TransDataTo5HDParams, got {type(p).__name__}",
                            fix="«TransDataTo5HDParams(False, False, repeatTimes, dstRepStride, srcRepStride)»",
                            site=site)
    r = check_repeat(op, p.repeatTimes, site, current_core().chip.vec_max_repeat)
    d_rep = integer(op, "dstRepStride", p.dstRepStride, site, 0, 2**16 - 1)
    s_rep = integer(op, "srcRepStride", p.srcRepStride, site, 0, 2**16 - 1)
    if not r:
        return                                      # repeatTimes 0: a no-op
    steps = [1] if r == 1 else range(r)            # the page: one repeat starts one stride in
    src_span, src_base = _span(srcList)
    dst_span, dst_base = _span(dstList)
    for k in steps:
        a = Access(src_span, ((src_base + k * s_rep * 16)[:, None] + np.arange(16)[None, :]).reshape(-1), op,
                   site)
        d = Access(dst_span, ((dst_base + k * d_rep * 16)[:, None] + np.arange(16)[None, :]).reshape(-1), op,
                   site)
        issue(op, "simple", d, [a], 2, site)
        if not context.computing():      # launch(..., numerics=False): timing only
            continue
        d.put(a.get().reshape(16, 16).T.reshape(-1))    # destination block j = element j of every source block


def _blocks_at(op: str, addrs, name: str, dtype, site) -> list[LocalTensor]:
    """The 32-byte UB blocks at ``GetPhyAddr()`` addresses, as LocalTensors of ``dtype``."""
    if dtype is None:
        raise ArgumentError(f"{op}: {name} holds addresses, so the element type is needed",
                            fix=f"pass dtype=half ({op}<half>(dstList, srcList, params) in C++)", site=site)
    d = dtype_arg(op, dtype, site)
    core = current_core()
    ub = core.tiers["UB"]
    out = []
    for i, a in enumerate(addrs):
        addr = integer(op, f"{name}[{i}] (a UB address from GetPhyAddr())", a, site, 0, len(ub.arena) - 32)
        out.append(LocalTensor(core, ub, addr, d, 32 // d.itemsize, TPosition.VECCALC))
    return out


def _span(blocks) -> tuple[LocalTensor, np.ndarray]:
    """One tensor from the lowest block to the end of UB, and each block's element offset in it."""
    t0 = min(blocks, key=lambda t: t.addr)
    isz = t0.dtype.itemsize
    span = LocalTensor(t0.core, t0.tier, t0.addr, t0.dtype, (len(t0.tier.arena) - t0.addr) // isz, t0.position)
    return span, np.array([(t.addr - t0.addr) // isz for t in blocks])


__all__ = ["Transpose", "TransDataTo5HD", "TransDataTo5HDParams"]
