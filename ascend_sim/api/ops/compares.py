"""Compares: compare each element with a scalar, one result bit per element (比较与选择).

The Compares page: "设置count时，需要保证count个元素所占空间256字节对齐。未对齐部分元素不参与计算，仅
完整对齐块有效" (only whole 256-byte repeats take part; a tail is skipped and its bits left as they
were). "dst按照小端顺序排序成二进制结果": bit i of the little-endian bit string is element i.
Atlas A2: half and float with every CMPMODE, int32 with CMPMODE.EQ only.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.api.checks import integer, member, scalar as scalar_arg
from ascend_sim.api.ops.mask import count_form_done
from ascend_sim.api.ops.dtype_table import allowed
from ascend_sim.api.ops.vector import CMPMODE, Access, issue, require_dtype, ub_operand
from ascend_sim.engine import timing
from ascend_sim.engine import context
from ascend_sim.engine.context import current_core
from ascend_sim.engine.errors import ArgumentError, DtypeError, OutOfBoundsError, kernel_point
from ascend_sim.hw.dtypes import ascend_name

_TYPES = allowed("Compares")
_CMP = {CMPMODE.LT: np.less, CMPMODE.GT: np.greater, CMPMODE.EQ: np.equal, CMPMODE.LE: np.less_equal,
        CMPMODE.GE: np.greater_equal, CMPMODE.NE: np.not_equal}


def Compares(dst, src0, src1Scalar, cmpMode: CMPMODE, count) -> None:
    """``Compares(dst, src0, src1Scalar, CMPMODE, count)``: bit i of uint8 ``dst`` = src0[i] <cmp> scalar."""
    site = kernel_point()
    ub_operand(dst, "Compares", "dst", site)
    ub_operand(src0, "Compares", "src0", site)
    require_dtype("Compares", src0, _TYPES, site)
    member("Compares", "cmpMode", cmpMode, CMPMODE, site)
    if src0.dtype.kind == "i" and cmpMode is not CMPMODE.EQ:
        raise DtypeError(f"Compares: int32_t supports CMPMODE.EQ only on Atlas A2, not {cmpMode.name}",
                         fix="Cast to float first, or compare for equality", site=site)
    scalar_arg("Compares", "src1Scalar", src1Scalar, src0.dtype, site)
    n = integer("Compares", "count", count, site, 0, src0.size,
                fix=f"count in 0..{src0.size} (the elements src0 holds)")
    lanes = 256 // src0.dtype.itemsize
    whole = n // lanes * lanes              # the tail of a partial repeat takes no part
    if dst.nbytes < whole // 8:
        raise OutOfBoundsError(f"Compares: {whole} result bits need {whole // 8} bytes but dst holds {dst.nbytes}",
                               fix="allocate count/8 bytes for the result", site=site)
    if not whole:
        if n:
            raise ArgumentError(f"Compares: count {n} x {src0.dtype.itemsize} bytes is less than one 256-byte "
                                f"repeat ({lanes} {ascend_name(src0.dtype)} elements), and a partial repeat takes "
                                "no part, so nothing is compared", fix=f"compare at least {lanes} elements "
                                                                        "(pad the data)", site=site)
        return
    d = Access(dst.ReinterpretCast(np.uint8), whole // 8, "Compares", site)
    a = Access(src0, whole, "Compares", site)
    issue("Compares", "simple", d, [a], timing.vector_repeats(whole, src0.dtype.itemsize), site)
    count_form_done(current_core())
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    bits = _CMP[cmpMode](a.get(), np.asarray(src1Scalar).astype(src0.dtype))
    d.put(np.packbits(bits, bitorder="little"))


__all__ = ["Compares"]
