"""Cast's rules: RoundMode, the Atlas A2 conversion table, SetDeqScale, and int4b_t packing.

Cast.md, "Atlas A2 训练系列产品/Atlas A2 推理系列产品支持的数据类型组合情况": each (src, dst) pair with the
RoundModes it takes; a pair that is not in the table does not exist on the chip, and the error names the
two-step path through the table. int32_t -> half: "roundMode不生效，与SetDeqScale(half scale)接口配合使用".
int4b_t: two values per byte, the first in the low nibble (LoadDataWithTranspose.md: "将7放在高位、6放在低位").
"""
from __future__ import annotations

import enum

import numpy as np

from ascend_sim.api.checks import scalar as scalar_arg
from ascend_sim.engine.context import current_core
from ascend_sim.engine.errors import ArgumentError, DtypeError, kernel_point
from ascend_sim.hw.dtypes import (ascend_name, bfloat16, float32, half, int4b_t, int8, int16, int32, int64, uint8)


class RoundMode(enum.Enum):
    CAST_NONE = "none"      # Cast.md: "在转换有精度损失时表示CAST_RINT模式，不涉及精度损失时表示不舍入"
    CAST_RINT = "rint"      # round half to even
    CAST_FLOOR = "floor"
    CAST_CEIL = "ceil"
    CAST_ROUND = "round"    # round half away from zero
    CAST_TRUNC = "trunc"
    CAST_ODD = "odd"        # von Neumann rounding (float narrowing only)


_R5 = frozenset({RoundMode.CAST_RINT, RoundMode.CAST_FLOOR, RoundMode.CAST_CEIL, RoundMode.CAST_ROUND,
                 RoundMode.CAST_TRUNC})
_NONE = frozenset({RoundMode.CAST_NONE})
DEQ = frozenset(RoundMode)      # int32_t -> half: any mode, the DEQSCALE register decides

#: Cast.md, the Atlas A2 table: (src, dst) -> the RoundModes the pair takes.
CAST_TABLE: dict[tuple, frozenset] = {
    (int4b_t, half): _NONE, (int8, half): _NONE, (uint8, half): _NONE,
    (int16, half): _R5 | _NONE, (int16, float32): _NONE,
    (half, int4b_t): _R5 | _NONE, (half, int8): _R5 | _NONE, (half, uint8): _R5 | _NONE,
    (half, int16): _R5, (half, int32): _R5, (half, float32): _NONE,
    (bfloat16, int32): _R5, (bfloat16, float32): _NONE,
    (int32, int16): _NONE, (int32, half): DEQ, (int32, float32): _R5 | _NONE, (int32, int64): _NONE,
    (float32, int16): _R5, (float32, half): _R5 | {RoundMode.CAST_ODD, RoundMode.CAST_NONE},
    (float32, bfloat16): _R5, (float32, int32): _R5, (float32, float32): _R5, (float32, int64): _R5,
    (int64, int32): _NONE, (int64, float32): _R5,
}


def _modes(ms: frozenset) -> str:
    order = list(RoundMode)
    return "/".join(m.name for m in sorted(ms, key=order.index))


def check_cast(src: np.dtype, dst: np.dtype, mode: RoundMode, site) -> None:
    """The pair and mode are in the A2 table; else DtypeError (pair) or ArgumentError (mode), with the legal path."""
    ms = CAST_TABLE.get((src, dst))
    s, d = ascend_name(src), ascend_name(dst)
    if ms is None:
        paths = [f"{s} -> {ascend_name(mid)} ({_modes(CAST_TABLE[(src, mid)])}), then {ascend_name(mid)} -> {d} "
                 f"({_modes(CAST_TABLE[(mid, dst)])})"
                 for (a, mid) in CAST_TABLE if a == src and (mid, dst) in CAST_TABLE and mid != dst]
        raise DtypeError(f"Cast: {s} -> {d} is not in the Atlas A2 conversion table (Cast.md, 支持的数据类型组合)",
                         fix=("cast in two steps: " + "; or ".join(paths)) if paths else
                         f"{s} converts to: " + ", ".join(ascend_name(b) for a, b in CAST_TABLE if a == src),
                         site=site)
    if mode not in ms:
        raise ArgumentError(f"Cast: {s} -> {d} takes {_modes(ms)}, not {mode.name} (the Atlas A2 conversion table)",
                            fix=f"pass one of {_modes(ms)}" + (" (CAST_RINT rounds half to even, what CAST_NONE "
                                                               "means where it is allowed)" if mode is
                                                               RoundMode.CAST_NONE else ""), site=site)


def SetDeqScale(scale) -> None:
    """``SetDeqScale(half scale)``: the DEQSCALE register that Cast int32_t -> half multiplies by.

    SetDeqScale.md: "Cast ... 的s322fp16场景 | 0~15 | scale | 一个half类型数据".
    """
    site = kernel_point()
    scalar_arg("SetDeqScale", "scale", scale, half, site)
    current_core().regs["deq"] = np.float16(scale)


def deq_scale(site) -> np.float16:
    """The scale SetDeqScale set, or the error that Cast int32_t -> half needs it."""
    v = current_core().regs.get("deq")
    if v is None:
        raise ArgumentError("Cast: int32_t -> half multiplies by the DEQSCALE register, and SetDeqScale was not "
                            "called in this block (Cast.md: roundMode不生效，与SetDeqScale(half scale)接口配合使用)",
                            fix="call SetDeqScale(1.0) (or the dequantisation scale) before the Cast", site=site)
    return v


def pack_int4(values: np.ndarray) -> np.ndarray:
    """int4 values (-8..7, an even count) as bytes: element 2k in the low nibble of byte k, 2k+1 in the high."""
    v = values.astype(np.int8).reshape(-1, 2) & 0x0F
    return (v[:, 0] | (v[:, 1] << 4)).astype(np.uint8)


def unpack_int4(raw: np.ndarray, count: int) -> np.ndarray:
    """The first ``count`` int4 values of packed bytes, as int8 (sign extended)."""
    lo = (raw.astype(np.int16) & 0x0F)
    hi = (raw.astype(np.int16) >> 4) & 0x0F
    v = np.stack([lo, hi], axis=1).reshape(-1)[:count]
    return np.where(v > 7, v - 16, v).astype(np.int8)


__all__ = ["RoundMode", "CAST_TABLE", "check_cast", "SetDeqScale", "deq_scale", "pack_int4", "unpack_int4"]
