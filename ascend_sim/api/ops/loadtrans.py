"""``LoadDataWithTranspose(dst A2/B2, src A1/B1, LoadData2dTransposeParams)``: L1 -> L0 with square transposes (MTE1).

Documented behaviour implemented (DK "LoadDataWithTranspose" and its pseudo-code load_data_with_transpose.py):
each repeat transposes one square: 32 x 32 for b8 (two 16 x 32 fractals), 16 x 16 for b16 (one fractal). Repeat
r reads the square ``startIndex + r * srcStride`` (in squares) and writes its transpose, cut into fractals of 16
rows, at ``r * (dstGap + 1) * 512`` bytes, fractal j ``j * (dstFracGap + 1) * 512`` bytes further ("相邻迭代间，
目的操作数前一个迭代第一个分形的结束地址到下一个迭代第一个分形起始地址的间隔"). This is how an int8 B (K x N, NZ in L1)
becomes L0B's ZN fractals. b32 and int4 squares are not modelled.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.engine import context, timing
from ascend_sim.engine.context import current_core
from ascend_sim.engine.core import regions_of
from ascend_sim.engine.errors import ArgumentError, CubeFormatError, DtypeError, OutOfBoundsError, kernel_point
from ascend_sim.hw.dtypes import ascend_name
from ascend_sim.api.checks import check_fields, field_spec, integer
from ascend_sim.api.ops.cube import CubePlan, check_l0_address, issue_load, tier_of
from ascend_sim.api.ops.fractal import FRACTAL_BYTES, ROWS, byte_runs

_FIELDS = ("startIndex", "repeatTimes", "srcStride", "dstGap", "dstFracGap", "addrMode")


@dataclass
class LoadData2dTransposeParams:
    """``LoadData2dTransposeParams{startIndex, repeatTimes, srcStride, dstGap, dstFracGap, addrMode}`` (C++ order);
    startIndex and srcStride count squares (32 x 32 b8, 16 x 16 b16), the gaps 512-byte fractals."""

    startIndex: int = 0
    repeatTimes: int = 0
    srcStride: int = 0
    dstGap: int = 0
    dstFracGap: int = 0
    addrMode: int = 0

    def __post_init__(self):
        check_fields(self, _SPEC)


_SPEC = field_spec(startIndex="uint16_t", repeatTimes="uint8_t", srcStride="uint16_t", dstGap="uint16_t",
                   dstFracGap="uint16_t", addrMode="uint8_t")      # kernel_struct_mm.h


def LoadDataWithTranspose(dst, src, params: LoadData2dTransposeParams) -> None:
    """Load ``repeatTimes`` squares from L1, each transposed, into L0A/L0B fractals."""
    site = kernel_point()
    core = context.current or current_core()
    try:
        key = ("LoadDataWithTranspose",) + tuple(getattr(params, f) for f in _FIELDS) + (
            dst.tier, dst.addr, dst.size, dst.dtype, src.tier, src.addr, src.size, src.dtype)
    except (AttributeError, TypeError):
        key = None
    plan = issue_load(core, "LoadDataWithTranspose", key, _plan, dst, src, params, site)
    if plan is None:                # a NOP, or launch(..., numerics=False): nothing to compute
        return
    d, s = plan.views
    d[...] = s


def _plan(core, dst, src, p, site) -> CubePlan:
    op = "LoadDataWithTranspose"
    tier_of(dst, ("L0A", "L0B"), op, "dst", site)
    tier_of(src, ("L1",), op, "src", site)
    if not isinstance(p, LoadData2dTransposeParams):
        raise ArgumentError(f"{op} takes a LoadData2dTransposeParams", fix="«LoadData2dTransposeParams(...)»",
                            site=site)
    v = {f: integer(op, f, getattr(p, f), site, 0, 255 if f == "repeatTimes" else 65535) for f in _FIELDS}
    if dst.dtype != src.dtype:
        raise DtypeError(f"{op} from {ascend_name(src.dtype)} to {ascend_name(dst.dtype)}",
                         fix="LoadData does not convert dtypes", site=site)
    isz = dst.dtype.itemsize
    if isz not in (1, 2):
        raise ArgumentError(f"{op} of {ascend_name(dst.dtype)}: only the b8 and b16 squares are modelled",
                            fix="use int8/uint8 or half/bfloat16_t data", site=site)
    if v["addrMode"]:
        raise ArgumentError(f"{op} addrMode 1 (decreasing) is not modelled", fix="keep addrMode 0", site=site)
    if v["repeatTimes"] == 0:
        return CubePlan(0, [], [], 0, 0, None)                  # documented: a NOP
    check_l0_address(op, dst, site)
    if src.addr % 32:
        raise CubeFormatError(f"{op}: L1 source address {src.addr} is not 32-byte aligned",
                              fix="offset L1 sub-tensors by multiples of 32 bytes", site=site)
    side = 32 if isz == 1 else ROWS                     # the square: 32 x 32 b8, 16 x 16 b16
    sq = side * side * isz                              # its bytes
    nfr = sq // FRACTAL_BYTES                           # destination fractals per square
    reps, start, sstride = v["repeatTimes"], v["startIndex"] * sq, v["srcStride"] * sq
    dpitch, fpitch = (v["dstGap"] + 1) * FRACTAL_BYTES, (v["dstFracGap"] + 1) * FRACTAL_BYTES
    span_src = start + (reps - 1) * sstride + sq
    span_dst = (reps - 1) * dpitch + (nfr - 1) * fpitch + FRACTAL_BYTES
    for t, span, role in ((src, span_src, "source"), (dst, span_dst, "destination")):
        if span > t.nbytes:
            raise OutOfBoundsError(f"{op} {role} needs {span} bytes but the {t.tier.name} tensor holds {t.nbytes}",
                                   fix="lower repeatTimes, startIndex or the strides", site=site)
    raw = np.dtype(np.uint8 if isz == 1 else np.uint16)
    s = np.ndarray((reps, side, side), raw, src.tier.arena, src.addr + start, (sstride, side * isz, isz))
    d = np.ndarray((reps, nfr, ROWS, side), raw, dst.tier.arena, dst.addr, (dpitch, fpitch, side * isz, isz))
    sspans = [(src.addr + start + r * sstride, src.addr + start + r * sstride + sq) for r in range(reps)]
    dspans = [(dst.addr + r * dpitch + j * fpitch, dst.addr + r * dpitch + j * fpitch + FRACTAL_BYTES)
              for r in range(reps) for j in range(nfr)]
    rate = core.chip.l1_to_l0a_bytes_per_cycle if dst.tier.name == "L0A" else core.chip.l1_to_l0b_bytes_per_cycle
    return CubePlan(timing.local_transfer(core, reps * sq, rate, core.chip.mte1_startup),
                    regions_of((byte_runs(src.tier, sspans),)), regions_of((byte_runs(dst.tier, dspans),)),
                    reps * sq, 0, (d, s.transpose(0, 2, 1).reshape(reps, nfr, ROWS, side)))
