"""Cube path: LoadData (L1 -> L0A/L0B, MTE1), Mmad (PIPE_M), Fixpipe (L0C -> GM, PIPE_FIX).

The data are in the hardware's fractal (分形) layouts (see fractal.py): L1 holds what the copy
in wrote (NZ after DataCopy with Nd2NzParams), L0A is read as ZZ, L0B as ZN, L0C written as NZ,
and Fixpipe converts NZ to ND on the way out. So a layout mistake gives wrong numbers, as on the
device; where the simulator knows the bytes are not fractals (engine/layout.py) Mmad says so.
Field orders are the C++ ones (DK include/basic_api/kernel_struct_mm.h, kernel_struct_fixpipe.h).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from ascend_sim.engine import context, layout
from ascend_sim.engine import timing
from ascend_sim.engine.core import FIX, M, MTE1, regions_of, region
from ascend_sim.hw.dtypes import ascend_name, bfloat16, float32, half, int8, int32, uint8
from ascend_sim.engine.errors import (ArgumentError, CubeFormatError, DtypeError, OutOfBoundsError, PositionError,
                                      format_site, kernel_point, site_outside)
from ascend_sim.api.checks import check_fields, field_spec, integer, live, member
from ascend_sim.api.tensor import GlobalTensor, LocalTensor
from ascend_sim.api.tensor import writable_view
from ascend_sim.engine.context import current_core
from ascend_sim.api.ops.atomic import atomic_mode, combine
from ascend_sim.api.ops.datacopy import burst_view, BurstPlan
from ascend_sim.api.ops.fractal import FRACTAL_BYTES, ROWS, byte_runs
from ascend_sim.api.ops import unitflag
from ascend_sim.engine.atomics import AtomicWrite
from ascend_sim.engine.gmcheck import gm_write
from ascend_sim.engine.memory import GRANULE, note_gm_write


@dataclass(init=False)
class LoadData2DParams:
    """``LoadData2DParams{startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode}``.

    ``repeatTimes`` 512-byte fractals: repeat r reads fractal ``startIndex + r * srcStride`` of src and
    writes fractal slot ``r * (1 + dstGap)`` of dst; ``ifTranspose`` transposes each (b16) fractal.
    """

    startIndex: int = 0
    repeatTimes: int = 0
    srcStride: int = 0
    sid: int = 0
    dstGap: int = 0
    ifTranspose: bool = False
    addrMode: int = 0

    def __init__(self, startIndex: int = 0, repeatTimes: int = 0, srcStride: int = 0, sid: int = 0, dstGap: int = 0,
                 ifTranspose: bool = False, addrMode: int = 0):
        self.startIndex = startIndex        # written out (not the dataclass's __init__ + __post_init__): one
        self.repeatTimes = repeatTimes      # call less for the struct a cube kernel builds per LoadData
        self.srcStride = srcStride
        self.sid = sid
        self.dstGap = dstGap
        self.ifTranspose = ifTranspose
        self.addrMode = addrMode
        if (startIndex.__class__ is not int or repeatTimes.__class__ is not int or srcStride.__class__ is not int
                or sid.__class__ is not int or dstGap.__class__ is not int or addrMode.__class__ is not int
                or ifTranspose.__class__ is not bool or not 0 <= startIndex <= 65535 or not 0 <= repeatTimes <= 255
                or not 0 <= srcStride <= 65535 or not 0 <= sid <= 255 or not 0 <= dstGap <= 65535
                or not 0 <= addrMode <= 255):
            self.__post_init__()

    def __post_init__(self):            # a frame between check_fields and the caller, as in a dataclass's __init__
        check_fields(self, _LOAD2D_SPEC)


class MmadParams:
    """``MmadParams``: C[m, n] = A[m, k] @ B[k, n] (+ C, or + bias) on whole fractals.

    Positional arguments follow the two C++ constructors:
    ``MmadParams(m, n, k, unitFlag, cmatrixSource, cmatrixInitVal)`` and
    ``MmadParams(m, n, k, isBias, fmOffset, enSsparse, enWinogradA, enWinogradB)``; any field by keyword.
    ``cmatrixInitVal`` True (default) starts C from zero; False with ``cmatrixSource`` False adds to
    L0C; ``isBias`` (deprecated) also adds to L0C.
    """

    _SIX = ("unitFlag", "cmatrixSource", "cmatrixInitVal")
    _EIGHT = ("isBias", "fmOffset", "enSsparse", "enWinogradA", "enWinogradB")
    # defaults as class attributes: a kernel builds one MmadParams per Mmad, and usually sets none of these
    isBias, fmOffset, enSsparse, enWinogradA, enWinogradB, kDirectionAlign = False, 0, False, False, False, False
    unitFlag, cmatrixSource, cmatrixInitVal = 0, False, True

    def __init__(self, m: int = 0, n: int = 0, k: int = 0, *args, **kw):
        self.m = m
        self.n = n
        self.k = k
        if len(args) == 3 and not kw:         # the usual form, first
            self.unitFlag, self.cmatrixSource, self.cmatrixInitVal = args
            if (m.__class__ is not int or n.__class__ is not int or k.__class__ is not int or not 0 <= m <= 65535
                    or not 0 <= n <= 65535 or not 0 <= k <= 65535 or args[0].__class__ is not int
                    or args[1].__class__ is not bool or args[2].__class__ is not bool):
                check_fields(self, _MMAD_SPEC, 2)
            return
        if args and (len(args) != 3 or kw):
            names = {3: self._SIX, 5: self._EIGHT}.get(len(args))
            if names is None:
                raise ArgumentError(f"MmadParams takes 3, 6 or 8 positional arguments (the C++ constructors "
                                    f"(m, n, k, unitFlag, cmatrixSource, cmatrixInitVal) and (m, n, k, isBias, "
                                    f"fmOffset, enSsparse, enWinogradA, enWinogradB)), got {3 + len(args)}",
                                    fix="«MmadParams(m, n, k)» or «MmadParams(m, n, k, unitFlag, cmatrixSource, "
                                        "cmatrixInitVal)»", site=site_outside(1))
            kw = {**dict(zip(names, args)), **kw}
        for name, v in kw.items():
            if name not in self._SIX + self._EIGHT + ("kDirectionAlign",):
                raise ArgumentError(f"MmadParams has no field {name!r}", fix="fields: " + ", ".join(
                    ("m", "n", "k") + self._SIX + self._EIGHT + ("kDirectionAlign",)), site=site_outside(1))
            setattr(self, name, v)
        check_fields(self, _MMAD_SPEC, 2)

    def __repr__(self) -> str:
        return (f"MmadParams(m={self.m}, n={self.n}, k={self.k}, unitFlag={self.unitFlag}, "
                f"cmatrixSource={self.cmatrixSource}, cmatrixInitVal={self.cmatrixInitVal}, isBias={self.isBias})")


class QuantMode_t(enum.Enum):
    """Fixpipe's on-the-fly conversion of L0C results (随路量化)."""

    __hash__ = object.__hash__      # members are singletons: hash by identity (plan keys hold them)

    NoQuant = "none"
    F322F16 = "f32_to_f16"
    F322BF16 = "f32_to_bf16"
    DEQF16 = "s32_to_f16_scalar"
    VDEQF16 = "s32_to_f16_vector"
    QF322B8_PRE = "f32_to_b8_scalar"
    VQF322B8_PRE = "f32_to_b8_vector"
    REQ8 = "s32_to_b8_scalar"
    VREQ8 = "s32_to_b8_vector"


@dataclass
class FixpipeParamsV220:
    """``FixpipeParamsV220{nSize, mSize, srcStride, dstStride, reluEn, quantPre, deqScalar, ndNum, srcNdStride,
    dstNdStride, unitFlag, isChannelSplit}`` (C++ order): L0C (NZ) -> GM (ND), converting on the way.

    ``srcStride`` counts C0_Size units (16 elements of L0C) between column blocks: mSize rounded up
    to 16. ``dstStride`` is the GM row length in elements. ``deqScalar``: the uint64 QUANT_PRE word
    (bits 0..31 the float scale) of the scalar quant modes.
    """

    nSize: int = 0
    mSize: int = 0
    srcStride: int = 0
    dstStride: int = 0
    reluEn: bool = False
    quantPre: QuantMode_t = QuantMode_t.NoQuant
    deqScalar: int = 0
    ndNum: int = 1
    srcNdStride: int = 0
    dstNdStride: int = 0
    unitFlag: int = 0
    isChannelSplit: bool = False

    def __post_init__(self):
        check_fields(self, _FIXPIPE_SPEC)


FixpipeParams = FixpipeParamsV220

# the C++ types of the fields (kernel_struct_mm.h, kernel_struct_fixpipe.h)
_LOAD2D_SPEC = field_spec(startIndex="uint16_t", repeatTimes="uint8_t", srcStride="uint16_t", sid="uint8_t",
                          dstGap="uint16_t", ifTranspose="bool", addrMode="uint8_t")
_MMAD_SPEC = field_spec(m="uint16_t", n="uint16_t", k="uint16_t", unitFlag="uint8_t", cmatrixSource="bool",
                        cmatrixInitVal="bool", isBias="bool", fmOffset="int32_t", enSsparse="bool", enWinogradA="bool",
                        enWinogradB="bool", kDirectionAlign="bool")
_FIXPIPE_SPEC = field_spec(nSize="uint16_t", mSize="uint16_t", srcStride="uint16_t", dstStride="uint32_t",
                           reluEn="bool", deqScalar="uint64_t", ndNum="uint16_t", srcNdStride="uint16_t",
                           dstNdStride="uint16_t", unitFlag="uint8_t", isChannelSplit="bool")

# input dtype -> (accumulator dtype, fractal m0, k0 (= C0), n0)  [DK LoadData_2D: b8 16x32, b16 16x16, b32 16x8]
_CUBE = {half: (float32, 16, 16, 16), bfloat16: (float32, 16, 16, 16), int8: (int32, 16, 32, 16),
         float32: (float32, 16, 8, 16)}
LOADERS: dict = {}          # LoadData parameter type -> its form (img2col.py: LoadData3DParamsV2)


def tier_of(t, names: tuple[str, ...], op: str, role: str, site) -> LocalTensor:
    """``t`` is a live LocalTensor in one of the tiers ``names``."""
    if isinstance(t, LocalTensor):
        live(op, role, t, site)
    if not isinstance(t, LocalTensor) or t.tier.name not in names:
        where = getattr(getattr(t, "tier", None), "name", type(t).__name__)
        raise PositionError(f"{op}: {role} must live in {' or '.join(names)}, got {where}",
                            fix={"L0A": "LoadData the left matrix into an A2 (L0A) tensor",
                                 "L0B": "LoadData the right matrix into a B2 (L0B) tensor",
                                 "L0C": "Mmad writes a CO1 (L0C) tensor",
                                 "BT": "DataCopy the bias from L1 (C1) into a C2 (BT) tensor",
                                 "L1": "DataCopy GM into an A1/B1 (L1) tensor first"}.get(names[0], ""), site=site)
    return t


def check_l0_address(op: str, t: LocalTensor, site) -> None:
    """L0A/L0B tensors start on a 512-byte fractal, L0C tensors on 64 bytes."""
    align = t.core.chip.l0c_align if t.tier.name == "L0C" else FRACTAL_BYTES
    if t.addr % align:
        what = "a 64-byte boundary" if t.tier.name == "L0C" else "fractal (512 B) boundaries"
        raise CubeFormatError(f"{op}: {t.tier.name} address {t.addr} is not {align}-byte aligned "
                              f"({t.addr} % {align} = {t.addr % align})",
                              fix=f"{t.tier.name} tensors start on {what}: offset sub-tensors by whole "
                                  f"{align}-byte units", site=site)


def _struct(op: str, params, kind, site, fields: tuple[str, ...]) -> None:
    """``params`` is a ``kind`` whose integer ``fields`` are non-negative ints (again: they may be reassigned)."""
    if not isinstance(params, kind):
        raise ArgumentError(f"{op} takes a {kind.__name__}, got {type(params).__name__}",
                            fix=f"build the parameters with «{kind.__name__}(...)»", site=site)
    for name in fields:
        integer(op, name, getattr(params, name), site, 0)


def cached_plan(core, key, build, *args):
    """The plan under ``key``, or on a miss ``build(*args)`` (checks the call), kept under ``key`` (None: not kept).

    Like the vector and DataCopy plans, keys hold the parameters and each operand's (tier, address,
    size, dtype), or for GM its buffer and dtype (the GM offset is checked on every call).
    """
    plan = core.plans.get(key) if key is not None else None
    if plan is None:
        plan = build(*args)
        if key is not None:
            core.plans[key] = plan
    return plan


class CubePlan:
    """A checked cube instruction: cost, shadow regions, sizes and the numpy views it works on."""

    __slots__ = ("cost", "rd", "wr", "nbytes", "flops", "views", "extra")

    def __init__(self, cost, rd: list, wr: list, nbytes: int, flops: int, views: tuple, extra=None):
        self.cost = cost
        self.rd = rd
        self.wr = wr
        self.nbytes = nbytes
        self.flops = flops
        self.views = views
        self.extra = extra


def issue_load(core, op: str, key, build, dst, src, params, site):
    """Plan (cached by ``key``; None: not cacheable) and issue one L1 -> L0 load on MTE1.

    Returns the plan whose views the caller fills, or None when there is nothing to fill: a NOP (repeat 0,
    "该接口将被视为NOP") or a timing-only launch. Shared by the LoadData forms that live in their own modules.
    """
    try:
        hash(key)
    except TypeError:
        key = None
    plan = cached_plan(core, key, build, core, dst, src, params, site)
    if plan.views is None:
        core.scalar_tick()
        return None
    core.issue_n(MTE1, op, plan.cost, plan.rd, plan.wr, plan.nbytes, "L1", dst.tier.name, 0, "copy", site)
    return plan if context.computing() else None


# ----------------------------------------------------------------------------- LoadData (2D)
def LoadData(dst, src, params, defaultConfig=None) -> None:
    """``LoadData(dst L0A/L0B, src L1, LoadData2DParams)``: MTE1 copies whole 512-byte fractals.

    Other parameter structs select the other documented forms (``LoadData3DParamsV2``: img2col, whose
    template argument ``IsResetLoad3dConfig`` is ``defaultConfig`` here).
    """
    if params.__class__ is not LoadData2DParams and params.__class__ in LOADERS:
        return LOADERS[params.__class__](dst, src, params, kernel_point(), defaultConfig)
    site = kernel_point()
    if defaultConfig is not None:
        raise ArgumentError("LoadData with LoadData2DParams takes no IsResetLoad3dConfig",
                            fix="the config belongs to the LoadData3D (img2col) form", site=site)
    core = context.current or current_core()
    try:
        dtier, stier = dst.tier, src.tier
        p = params
        key = ("LoadData", p.startIndex, p.repeatTimes, p.srcStride, p.dstGap, p.ifTranspose, p.addrMode,
               dtier, dst.addr, dst.size, dst.dtype, stier, src.addr, src.size, src.dtype)
        plan = core.plans[key]              # the hot path: one look-up (hashing the key once)
    except KeyError:
        plan = None
    except (AttributeError, TypeError):     # not tensors, or unhashable parameters: the builder reports it
        key = plan = None
    if plan is None:
        plan = cached_plan(core, key, _loaddata_plan, core, dst, src, params, site)
    if plan.views is None:                  # repeatTimes 0: "该接口将被视为NOP"
        core.scalar_tick()
        return
    core.issue_n(MTE1, "LoadData", plan.cost, plan.rd, plan.wr, plan.nbytes, "L1", dtier.name, 0, "copy", site)
    if stier.layout is not None or dtier.layout is not None:     # else find gives None and mark does nothing
        lo, hi, _, slo, shi = plan.extra
        nd = layout.find(stier, slo, shi, layout.ND_ROWS)
        layout.mark(dtier, lo, hi, layout.FROM_ND if nd else 0, nd)
    if not core.numerics:            # launch(..., numerics=False): timing only (context.computing())
        return
    d, s = plan.views
    d[...] = s


def _loaddata_plan(core, dst, src, params, site) -> CubePlan:
    """LoadData's rules, regions, cost and views (DK LoadData_2D page)."""
    tier_of(dst, ("L0A", "L0B"), "LoadData", "dst", site)
    tier_of(src, ("L1",), "LoadData", "src", site)
    _struct("LoadData", params, LoadData2DParams, site, ("startIndex", "repeatTimes", "srcStride", "dstGap"))
    if dst.dtype != src.dtype:
        raise DtypeError(f"LoadData from {ascend_name(src.dtype)} to {ascend_name(dst.dtype)}",
                         fix="LoadData does not convert dtypes", site=site)
    if params.addrMode != 0:
        raise ArgumentError(f"LoadData addrMode {params.addrMode}: only GM -> L1 supports the decreasing mode",
                            fix="keep addrMode 0 (\"目前仅GM->L1 Buffer通路支持配置，保持默认值0即可\")", site=site)
    isz = dst.dtype.itemsize
    if params.ifTranspose and isz != 2:
        raise DtypeError(f"LoadData ifTranspose with {ascend_name(dst.dtype)}: the fractal transpose works on "
                         "b16 data only (\"开启转置功能时，源操作数、目的操作数仅支持b16数据类型\")",
                         fix="for int8 use LoadDataWithTranspose (32 x 32 squares), or keep B^T (N x K) in GM: its "
                             "NZ fractals load into L0B without a transpose",
                         site=site)
    check_l0_address("LoadData", dst, site)
    if src.addr % 32:
        raise CubeFormatError(f"LoadData: L1 source address {src.addr} is not 32-byte aligned",
                              fix="offset L1 sub-tensors by multiples of 32 bytes", site=site)
    reps = integer("LoadData", "repeatTimes", params.repeatTimes, site, 0, 255,
                   fix="split the load into several LoadData calls (at most 255 fractals each)")
    if reps == 0:
        return CubePlan(0, [], [], 0, 0, None)
    start = params.startIndex * FRACTAL_BYTES
    pitch = params.srcStride * FRACTAL_BYTES
    dpitch = FRACTAL_BYTES * (1 + params.dstGap)
    span_src = start + (reps - 1) * pitch + FRACTAL_BYTES
    span_dst = (reps - 1) * dpitch + FRACTAL_BYTES
    for t, span, role in ((src, span_src, "source"), (dst, span_dst, "destination")):
        if span > t.nbytes:
            raise OutOfBoundsError(f"LoadData {role} needs {span} bytes ({span // FRACTAL_BYTES} fractals' span) "
                                   f"but the {t.tier.name} tensor holds {t.nbytes}",
                                   fix="lower repeatTimes, startIndex or the strides", site=site)
    chip = core.chip
    rate = chip.l1_to_l0a_bytes_per_cycle if dst.tier.name == "L0A" else chip.l1_to_l0b_bytes_per_cycle
    nbytes = reps * FRACTAL_BYTES
    s_arena, d_arena = src.tier.arena, dst.tier.arena
    if params.ifTranspose:      # b16: each 16 x 16 fractal transposed (DK LoadData_2D, 分形转置)
        u16 = np.dtype(np.uint16)
        s = np.ndarray((reps, ROWS, ROWS), u16, s_arena, src.addr + start, (pitch, 32, 2)).transpose(0, 2, 1)
        d = np.ndarray((reps, ROWS, ROWS), u16, d_arena, dst.addr, (dpitch, 32, 2))
    else:
        s = np.ndarray((reps, FRACTAL_BYTES), np.uint8, s_arena, src.addr + start, (pitch, 1))
        d = np.ndarray((reps, FRACTAL_BYTES), np.uint8, d_arena, dst.addr, (dpitch, 1))
    sspans = [(src.addr + start + r * pitch, src.addr + start + r * pitch + FRACTAL_BYTES) for r in range(reps)]
    dspans = [(dst.addr + r * dpitch, dst.addr + r * dpitch + FRACTAL_BYTES) for r in range(reps)]
    return CubePlan(timing.local_transfer(core, nbytes, rate, chip.mte1_startup),
                    regions_of((byte_runs(src.tier, sspans),)), regions_of((byte_runs(dst.tier, dspans),)),
                    nbytes, 0, (d, s), (dst.addr, dst.addr + span_dst, src.tier, src.addr + start,
                                        src.addr + span_src))


# ----------------------------------------------------------------------------- Mmad
def Mmad(dst, fm, filter, *rest) -> None:
    """``Mmad(c L0C, a L0A, b L0B, [bias BT,] MmadParams)``: C = A @ B (+ C or + bias) on the cube.

    A is read as ZZ fractals, B as ZN fractals, C written as NZ fractals (m, k, n rounded up to the
    fractal: the padding is computed but ignored, DK Mmad: "其他无效数据在计算中会被忽略").
    """
    site = kernel_point()
    core = context.current or current_core()
    if len(rest) == 1:
        bias, params = None, rest[0]
    elif len(rest) == 2:
        bias, params = rest
    else:
        raise ArgumentError(f"Mmad takes (dst, fm, filter, mmadParams) or (dst, fm, filter, bias, mmadParams), got "
                            f"{3 + len(rest)} arguments", fix="pass the MmadParams last", site=site)
    try:
        p = params
        key = ("Mmad", p.m, p.n, p.k, p.cmatrixInitVal, p.cmatrixSource, p.isBias, p.unitFlag, dst.tier, dst.addr,
               dst.size, dst.dtype, fm.tier, fm.addr, fm.size, fm.dtype, filter.tier, filter.addr, filter.size,
               filter.dtype) + ((bias.tier, bias.addr, bias.size, bias.dtype) if bias is not None else ())
        plan = core.plans[key]
    except KeyError:
        plan = None
    except (AttributeError, TypeError):     # not tensors, or unhashable parameters: the builder reports it
        key = plan = None
    if plan is None:
        plan = cached_plan(core, key, _mmad_plan, core, dst, fm, filter, bias, params, site)
    if p.unitFlag:                      # the L0C hand-over per 512 B with Fixpipe (unitflag.py)
        _mmad_unit_flag(core, plan, p.unitFlag, site)
    else:
        core.issue_n(M, "Mmad", plan.cost, plan.rd, plan.wr, plan.nbytes, "L0A", "L0C", plan.flops, "cube", site)
    table, mode, bias_v, checks, rows = plan.extra
    dst.tier.regs[dst.addr] = (rows, site)      # L0C here is NZ with column blocks of these rows
    if fm.tier.layout is not None or filter.tier.layout is not None:     # the tiers of ``checks`` (the key holds them)
        for t, lo, hi, what in checks:
            if t.layout is not None:        # engine/layout.py: some ND rows were copied into this core's L1
                nd = layout.find(t, lo, hi, layout.FROM_ND)
                if nd:
                    _not_fractals(what, nd, site)
    if not core.numerics:            # launch(..., numerics=False): timing only (context.computing())
        return
    av, bv, out, a32, b32, c32, a2, b2, res = plan.views
    if table is not None:               # widen the inputs to the accumulator dtype (see _widening_table)
        table.take(av, out=a32, mode="wrap")     # av, bv: the raw bits (uint16) in fractal order
        table.take(bv, out=b32, mode="wrap")
    else:
        a32[...] = av
        b32[...] = bv
    # a2, b2: a32, b32 as matrices (k beyond the fractals' valid part cut). The same sgemm as np.dot, bit for bit,
    # without dot's own zeroing of c32 before OpenBLAS zeroes it again (beta 0) and dot's Python dispatcher
    np.matmul(a2, b2, out=c32)
    if mode == "init":
        out[...] = res
    elif mode == "acc":
        np.add(out, res, out=out)
    else:                               # bias: C = A @ B + bias (broadcast over the rows)
        padded, values = bias_v
        padded.reshape(-1)[:values.size] = values
        np.add(res, padded, out=out)


def _mmad_unit_flag(core, plan, flag: int, site) -> None:
    """Issue a Mmad with unitFlag 2/3: after the Fixpipe that freed its L0C blocks, then its blocks' flags set."""
    lo, hi = plan.wr[0].lo * GRANULE, plan.wr[0].hi * GRANULE
    timed = unitflag.mmad_cost(core, M, plan.cost, lo, hi, flag, site)
    core.issue_n(M, "Mmad", timed, plan.rd, plan.wr, plan.nbytes, "L0A", "L0C", plan.flops, "cube", site)
    unitflag.after(core, M, lo, hi, timed, core.chip.cube_startup, flag, 1, site)


def _scratch(core, role: str, shape: tuple, dtype) -> np.ndarray:
    """Mmad's working array ``role`` (a, b: the inputs widened; c: the product) of ``shape``, one per launch.

    Each Mmad fills it and reads it back within its own call (no block switch in between), so every plan and
    block of the launch shares one: one set stays warm in the host CPU's caches, where one per plan and block
    (24 blocks in time order) made a cold set for each Mmad. Kept with the launch's own plans (cleared by
    ``Launch.release``).
    """
    key = ("Mmad scratch", role, shape, dtype)
    plans = core.launch.plans
    a = plans.get(key)
    if a is None:
        a = plans[key] = np.empty(shape, dtype)
    return a


def _not_fractals(what: str, nd_site, site) -> None:
    raise CubeFormatError(
        f"Mmad reads {what} as fractals, but they were loaded from L1 bytes that the DataCopy at "
        f"{format_site(nd_site)} wrote as ND rows (row-major, rows longer than one 32-byte fractal row): the cube "
        "would multiply a scrambled matrix (on the device: wrong numbers, no error)",
        fix="copy GM -> L1 with DataCopy(x1, xGm, «Nd2NzParams(1, rows, cols, 0, gmCols, rowsRoundedUpTo16, 1, 0)»), "
            "then LoadData the NZ fractals: per 16-row block for L0A (Nz -> Zz), ifTranspose for L0B (Nz -> Zn)",
        site=site)


def _widening_table(dtype: np.dtype, acc: np.dtype) -> np.ndarray | None:
    """The ``acc`` value of every bit pattern of a 2-byte float dtype, or None for other inputs.

    Indexing it with the raw bits gives the same values as ``astype`` and runs faster for half and
    bfloat16: numpy converts half to float32 one element at a time.
    """
    if dtype.itemsize != 2 or acc != float32:
        return None
    table = _TABLES.get(dtype)
    if table is None:
        table = _TABLES[dtype] = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype).astype(acc)
    return table


_TABLES: dict = {}      # 2-byte float dtype -> its float32 value for every bit pattern


def _mmad_plan(core, dst, fm, filt, bias, params, site) -> CubePlan:
    """Mmad's rules (positions, dtypes, fractals, sizes), regions, cost and views."""
    tier_of(dst, ("L0C",), "Mmad", "dst", site)
    tier_of(fm, ("L0A",), "Mmad", "fm (left matrix A)", site)
    tier_of(filt, ("L0B",), "Mmad", "filter (right matrix B)", site)
    _struct("Mmad", params, MmadParams, site, ("m", "n", "k"))
    if fm.dtype != filt.dtype or fm.dtype not in _CUBE:
        raise DtypeError(f"Mmad inputs are {ascend_name(fm.dtype)} and {ascend_name(filt.dtype)}; the cube "
                         "takes two half, two bfloat16_t, two int8_t or two float matrices",
                         fix="Cast in UB before moving the operands to L1", site=site)
    for t in (dst, fm, filt):
        check_l0_address("Mmad", t, site)
    acc, m0, k0, n0 = _CUBE[fm.dtype]
    if dst.dtype != acc:
        raise DtypeError(f"Mmad of {ascend_name(fm.dtype)} accumulates in {ascend_name(acc)}, but dst is "
                         f"{ascend_name(dst.dtype)}", fix=f"allocate the CO1 tensor as {ascend_name(acc)}",
                         site=site)
    if params.unitFlag not in (0, 2, 3):
        raise ArgumentError(f"Mmad unitFlag {params.unitFlag!r} is not 0, 2 or 3",
                            fix="0: off; 2 or 3: Mmad and Fixpipe hand over per 512 B of L0C (2 on the K loop's "
                                "Mmads but the last, 3 on the last and on the Fixpipe)", site=site)
    m, n, k = int(params.m), int(params.n), int(params.k)
    for name, v in (("m", m), ("n", n), ("k", k)):
        if not 1 <= v <= 4095:
            raise CubeFormatError(f"Mmad {name}={v} outside 1..4095", fix="tile the matmul", site=site)
    mb, kb, nb = -(-m // m0), -(-k // k0), -(-n // n0)
    for t, fr, what, dims in ((fm, mb * kb, "L0A", f"ceil(m/16)={mb} x ceil(k/{k0})={kb}"),
                              (filt, kb * nb, "L0B", f"ceil(k/{k0})={kb} x ceil(n/16)={nb}"),
                              (dst, mb * nb, "L0C", f"ceil(m/16)={mb} x ceil(n/16)={nb}")):
        need = fr * m0 * (k0 if what != "L0C" else n0) * t.dtype.itemsize
        if t.nbytes < need:
            raise CubeFormatError(f"Mmad m={m}, n={n}, k={k} works on whole fractals: {dims} = {fr} fractals "
                                  f"({need} bytes) of {what}, but the tensor holds {t.nbytes} bytes",
                                  fix="allocate the L0 tensors with M and N rounded up to 16 and K to "
                                      f"{k0} (C0 = 32 bytes / sizeof(T)), and zero-pad the data", site=site)
    if params.cmatrixSource and not params.cmatrixInitVal and bias is None:
        raise ArgumentError("Mmad with cmatrixSource true takes C's initial value from the bias table, but no "
                            "bias tensor was passed", fix="call Mmad(c, a, b, biasC2Tensor, params)", site=site)
    mode = "init" if params.cmatrixInitVal and not params.isBias else "acc"
    bias_v = None
    reads = [region(fm, mb * kb * FRACTAL_BYTES), region(filt, kb * nb * FRACTAL_BYTES)]
    if bias is not None:
        tier_of(bias, ("BT",), "Mmad", "bias", site)
        if bias.dtype != acc:
            raise DtypeError(f"Mmad bias is {ascend_name(bias.dtype)}; the bias table holds the accumulator dtype "
                             f"{ascend_name(acc)}", fix="DataCopy the bias from L1 into a C2 tensor of "
                                                       f"{ascend_name(acc)} (half converts on the way)", site=site)
        if bias.size < n:
            raise OutOfBoundsError(f"Mmad bias holds {bias.size} values for n={n} columns",
                                   fix="the bias tensor holds one value per output column", site=site)
        mode = "bias"
        bias_v = (np.zeros((nb, 1, 1, n0), acc), bias.view(n))
        reads.append(region(bias, n * acc.itemsize))
    elif mode == "acc":
        reads.append(region(dst, mb * nb * m0 * n0 * acc.itemsize))
    table = _widening_table(fm.dtype, acc)
    raw = np.uint16 if table is not None else fm.dtype
    av = fm.view(mb * kb * m0 * k0).view(raw).reshape(mb, kb, m0, k0).transpose(0, 2, 1, 3)      # ZZ
    bv = filt.view(kb * nb * n0 * k0).view(raw).reshape(kb, nb, n0, k0).transpose(0, 3, 1, 2)    # ZN
    out = writable_view(dst, mb * nb * m0 * n0).reshape(nb, mb, m0, n0)                                    # NZ
    a32, b32, c32 = (_scratch(core, "a", (mb, m0, kb, k0), acc), _scratch(core, "b", (kb, k0, nb, n0), acc),
                     _scratch(core, "c", (mb * m0, nb * n0), acc))
    a2, b2 = a32.reshape(mb * m0, kb * k0)[:, :k], b32.reshape(kb * k0, nb * n0)[:k]    # padding columns ignored
    res = c32.reshape(mb, m0, nb, n0).transpose(2, 0, 1, 3)                             # NZ fractal order
    views = (av, bv, out, a32, b32, c32, a2, b2, res)
    checks = ((fm.tier, fm.addr, fm.addr + mb * kb * FRACTAL_BYTES, "L0A (the left matrix)"),
              (filt.tier, filt.addr, filt.addr + kb * nb * FRACTAL_BYTES, "L0B (the right matrix)"))
    return CubePlan(timing.cube(core, mb * nb * kb), regions_of(reads),
                    regions_of((region(dst, mb * nb * m0 * n0 * acc.itemsize),)),
                    (mb * kb + kb * nb) * FRACTAL_BYTES, 2 * m * n * k, views,
                    (table, mode, bias_v, checks, out.shape[1] * ROWS))


# ----------------------------------------------------------------------------- Fixpipe
# quant mode -> (L0C dtype, allowed GM dtypes)  [DK L0C到GM数据搬运（Fixpipe）, QuantMode_t]
_QUANT = {
    QuantMode_t.NoQuant: ((float32, int32), None),          # None: the L0C dtype itself
    QuantMode_t.F322F16: ((float32,), (half,)),
    QuantMode_t.F322BF16: ((float32,), (bfloat16,)),
    QuantMode_t.DEQF16: ((int32,), (half,)),
    QuantMode_t.VDEQF16: ((int32,), (half,)),
    QuantMode_t.QF322B8_PRE: ((float32,), (int8, uint8)),
    QuantMode_t.VQF322B8_PRE: ((float32,), (int8, uint8)),
    QuantMode_t.REQ8: ((int32,), (int8, uint8)),
    QuantMode_t.VREQ8: ((int32,), (int8, uint8)),
}
_VECTOR = (QuantMode_t.VDEQF16, QuantMode_t.VQF322B8_PRE, QuantMode_t.VREQ8)
_SCALED = (QuantMode_t.DEQF16, QuantMode_t.QF322B8_PRE, QuantMode_t.REQ8) + _VECTOR


class CO2Layout(enum.Enum):
    """Fixpipe's output layout (``FixpipeConfig.format``): NZ keeps the fractals, ROW_MAJOR converts to ND."""

    NZ = 0
    ROW_MAJOR = 1


@dataclass(frozen=True)
class FixpipeConfig:
    """``FixpipeConfig{format, isToUB}``: Fixpipe's template argument (``Fixpipe<T, U, CFG_NZ>``)."""

    format: CO2Layout = CO2Layout.ROW_MAJOR
    isToUB: bool = False


CFG_NZ = FixpipeConfig(CO2Layout.NZ)                # "CFG_NZ：NZ2NZ，输出数据格式为NZ格式"
CFG_ROW_MAJOR = FixpipeConfig(CO2Layout.ROW_MAJOR)  # "CFG_ROW_MAJOR（默认取值）：开启NZ2ND，输出数据格式为ND格式"


def Fixpipe(*args) -> None:
    """``Fixpipe([config,] dst GM, src L0C, [cbufWorkspace L1,] FixpipeParamsV220)``, converting on the way.

    ``config`` is the template argument (first, as the other template arguments here): CFG_ROW_MAJOR
    (default, NZ2ND) writes element (r, c) of the mSize x nSize result, read from L0C at ``(c // 16) *
    srcStride * 16 + r * 16 + c % 16``, to GM row r (``dstStride`` elements long), column c. CFG_NZ
    (NZ2NZ) keeps the fractals: column block k of 16 goes, mSize rows of 16 contiguous, to
    ``dst + k * dstStride * 32`` bytes (dstStride in 32-byte blocks, nSize a multiple of 16).
    """
    site = kernel_point()
    core = context.current or current_core()
    config = CFG_ROW_MAJOR
    if args and isinstance(args[0], FixpipeConfig):
        config, args = args[0], args[1:]
    if len(args) < 2:
        raise ArgumentError(f"Fixpipe takes ([config,] dst, src, params), got {len(args)} tensor/parameter "
                            "arguments", fix="«Fixpipe(CFG_NZ, dst, src, params)|Fixpipe<T, U, CFG_NZ>(dst, src, params)» or "
                                                "Fixpipe(dst, src, params)",
                            site=site)
    dst, src, rest = args[0], args[1], args[2:]
    nz_out = config.format is CO2Layout.NZ
    if config.isToUB or config.format not in (CO2Layout.NZ, CO2Layout.ROW_MAJOR):
        raise ArgumentError(f"Fixpipe config {config}: only CFG_ROW_MAJOR and CFG_NZ to GM are modelled",
                            fix="pass CFG_NZ or CFG_ROW_MAJOR (the default)", site=site)
    if len(rest) == 1:
        ws, params = None, rest[0]
    elif len(rest) == 2:
        ws, params = rest
    else:
        raise ArgumentError(f"Fixpipe takes (dst, src, params) or (dst, src, cbufWorkspace, params), got "
                            f"{2 + len(rest)} arguments", fix="pass the FixpipeParamsV220 last", site=site)
    try:
        p = params
        key = ("Fixpipe", p.nSize, p.mSize, p.srcStride, p.dstStride, p.reluEn, p.quantPre, p.deqScalar, p.ndNum,
               p.unitFlag, p.isChannelSplit, dst.buf, dst.dtype, src.tier, src.addr, src.size, src.dtype, nz_out) + (
            (ws.tier, ws.addr, ws.size, ws.dtype) if ws is not None else ())
        hash(key)
    except (AttributeError, TypeError):     # not tensors, or unhashable parameters: the builder reports it
        key = None
    plan = cached_plan(core, key, _fixpipe_plan, core, dst, src, ws, params, site, nz_out)
    if plan.views is None:                  # mSize 0 or ndNum 0: "该接口将被视为NOP"
        core.scalar_tick()
        return
    bursts, span, convert, stride = plan.extra
    if stride is not None:                  # several column blocks: srcStride must match the Mmad's NZ layout
        written = src.tier.regs.get(src.addr)
        if written is not None and written[0] != stride:
            _wrong_src_stride(stride, written, site)
    buf = dst.buf
    off = dst.offset
    if off < 0 or off + span > buf.nbytes:
        dst.check_range(off, span, "Fixpipe write")
    aligned = (buf.base_addr + off) % core.chip.gm_burst_align == 0
    kind = _fixpipe_atomic(core, dst.dtype, site) if core.atomic is not None else None
    gm_write(core, buf, off, bursts.count, bursts.dst_blen, bursts.dst_pitch, FIX, kind is not None, dst.dtype, site)
    cost = (FIX, plan.nbytes, bursts.count, aligned, buf, off, bursts.blen, bursts.dst_pitch, dst.l2_mode)
    if kind is not None:                # a read-modify-write at L2, after the same windows' atomics (atomics.py)
        cost = AtomicWrite(core, cost)
    flag = params.unitFlag
    if flag:                            # the L0C hand-over per 512 B with the Mmad (unitflag.py)
        nz = plan.views[0]
        lo, hi = src.addr, src.addr + nz.shape[0] * nz.strides[0]       # whole column blocks, padding rows too
        cost = unitflag.fixpipe_cost(core, FIX, cost, plan.nbytes, lo, hi, flag, site)
    core.issue_n(FIX, "Fixpipe" if kind is None else f"Fixpipe(atomic {kind})", cost,
                 plan.rd, plan.wr, plan.nbytes, "L0C", "GM", 0, "copy", site)
    if flag:
        unitflag.after(core, FIX, lo, hi, cost, core.chip.fix_startup, flag, 0, site)
    if buf.written_by is not None:
        note_gm_write(buf, off, bursts.count, bursts.blen, bursts.dst_pitch, len(core.records) - 1)
    if not core.numerics:            # launch(..., numerics=False): timing only (context.computing())
        return
    nz, m, n, rows = plan.views
    gm = burst_view(buf.raw, off, bursts.count, bursts.blen, bursts.dst_pitch).view(dst.dtype)
    out = gm if kind is None else np.empty_like(gm)     # atomic: the converted block first, then combined into GM
    if nz_out:                                                  # NZ2NZ: one burst of m x 16 per column block
        np.copyto(out.reshape(nz.shape), convert(nz), casting="unsafe")
    elif rows is not None:      # whole column blocks, no per-column scales: NZ -> ND and the conversion in one pass
        np.copyto(out.reshape(m, n // ROWS, ROWS), convert(rows), casting="unsafe")
    else:
        vals = nz.transpose(1, 0, 2).reshape(m, -1)[:, :n]      # NZ -> ND (a copy when there are several blocks)
        np.copyto(out, convert(vals), casting="unsafe")         # m x n in GM
    if kind is not None:
        gm[...] = combine(kind, gm, out)


def _fixpipe_atomic(core, dtype, site) -> str:
    """The atomic kind a Fixpipe write takes while SetAtomicAdd/Max/Min is on (L0C -> GM: Atlas A2/A3 and 310B)."""
    if core.chip.npu_arch == 1001:
        raise ArgumentError("Fixpipe with an atomic mode on: on Atlas training products (Ascend910) the atomic unit "
                            "serves UB -> GM copies only (SetAtomicAdd: \"Atlas 训练系列产品，支持的数据通路为UB->GM\")",
                            fix="move the result L0C -> UB, then DataCopy it to GM with the atomic mode on; or "
                                "DisableDmaAtomic() before Fixpipe", site=site)
    return atomic_mode(core, "Fixpipe", dtype, site)


def _wrong_src_stride(stride: int, written, site) -> None:
    rows, mmad_site = written
    raise CubeFormatError(f"Fixpipe srcStride {stride}, but the Mmad at {format_site(mmad_site)} wrote this L0C as NZ "
                          f"with column blocks of {rows} rows (its m rounded up to 16): column blocks 1.. would be "
                          "read from the wrong rows (on the device: wrong numbers, no error)",
                          fix=f"srcStride = {rows} (\"其值应填成mSize对16向上取整\")", site=site,
                          kind="fixpipe-src-stride")


def deq_scale(word: int) -> tuple[np.float32, int, int]:
    """(M1, offset, signed) of a QUANT_PRE word: bits 0..31 a float kept as (1, 8, 10) (bits 13..31),
    bits 37..45 a 9-bit offset, bit 46 the sign flag (DK 随路量化, table 1, arch 2201)."""
    m1 = np.array([word & 0xFFFFE000], np.uint32).view(np.float32)[0]
    off = (word >> 37) & 0x1FF
    return m1, off - 512 if off & 0x100 else off, (word >> 46) & 1


def _converter(mode: QuantMode_t, relu: bool, out_dtype, scales):
    """The function Fixpipe applies to the m x n L0C values: ReLU and the quant mode, as documented.

    DK 随路量化与随路ReLU场景组合: positive values are multiplied by M1, negative ones by M2, where
    M2 = M1 without ReLU and M2 = 0 with it; F322F16/F322BF16 round with CAST_RINT.
    """
    if mode not in _SCALED:
        def plain(v):
            return np.maximum(v, 0) if relu else v
        return plain
    m1, off = scales
    m2 = np.zeros_like(m1) if relu else m1
    info = np.iinfo(out_dtype) if np.dtype(out_dtype).kind in "iu" else None

    def scaled(v):
        x = v.astype(np.float32)
        y = np.where(x < 0, x * m2, x * m1)
        if info is None:
            return y
        return np.clip(np.rint(y) + off, info.min, info.max)
    return scaled


def _fixpipe_plan(core, dst, src, ws, params, site, nz_out: bool = False) -> CubePlan:
    """Fixpipe's rules (positions, dtypes, quant modes, strides), its L0C region, bursts and views."""
    tier_of(src, ("L0C",), "Fixpipe", "src", site)
    if not isinstance(dst, GlobalTensor):
        raise PositionError("Fixpipe writes to GM here (a GlobalTensor)", fix="pass the output GlobalTensor",
                            site=site)
    _struct("Fixpipe", params, FixpipeParamsV220, site, ("nSize", "mSize", "srcStride", "dstStride", "ndNum"))
    member("Fixpipe", "quantPre", params.quantPre, QuantMode_t, site)
    m, n = int(params.mSize), int(params.nSize)
    if m == 0 or params.ndNum == 0:
        return CubePlan(0, [], [], 0, 0, None)
    if params.ndNum != 1 or params.isChannelSplit:
        raise ArgumentError("Fixpipe: ndNum > 1 and isChannelSplit are not modelled",
                            fix="write one NZ matrix per Fixpipe (ndNum 1)", site=site)
    if params.unitFlag not in (0, 2, 3):
        raise ArgumentError(f"Fixpipe unitFlag {params.unitFlag!r} is not 0, 2 or 3",
                            fix="0: off; 3: hand over per 512 B of L0C with the Mmad that ended with unitFlag 3 "
                                "(2: keep the blocks for another Fixpipe)", site=site)
    if not 1 <= n <= 4095 or m > (65535 if nz_out else 8192):
        raise ArgumentError(f"Fixpipe nSize {n} outside 1..4095 or mSize {m} outside 0..{65535 if nz_out else 8192} "
                            f"({'NZ2NZ' if nz_out else 'NZ2ND'})",
                            fix="pass the block's columns (nSize) and rows (mSize)", site=site)
    ss, dp = int(params.srcStride), int(params.dstStride)
    if ss < m:
        raise _src_stride_error(m, n, ss, site)
    if not nz_out and dp < n:
        raise ArgumentError(f"Fixpipe dstStride {dp} < nSize {n}: with NZ2ND dstStride is the GM row length in "
                            "elements (\"目的ND矩阵每一行中的元素个数，取值不为0\")",
                            fix=f"pass the output matrix's row length (at least nSize = {n})", site=site)
    mode = params.quantPre
    srcs, outs = _QUANT[mode]
    if src.dtype not in srcs:
        raise DtypeError(f"Fixpipe quantPre={mode.name} converts {' or '.join(ascend_name(d) for d in srcs)} L0C "
                         f"results, but this L0C tensor is {ascend_name(src.dtype)}",
                         fix="float L0C (half/bf16 matmul): NoQuant, F322F16, F322BF16, QF322B8_PRE; int32 L0C "
                             "(int8 matmul): NoQuant, DEQF16/VDEQF16 (to half), REQ8/VREQ8 (to int8)", site=site)
    outs = outs or (src.dtype,)
    if dst.dtype not in outs:
        raise DtypeError(f"Fixpipe with quantPre={mode.name} produces {' or '.join(ascend_name(d) for d in outs)} "
                         f"but the GM tensor is {ascend_name(dst.dtype)}",
                         fix="choose the quant mode that produces the GM dtype (F322F16 for half from float L0C, "
                             "DEQF16 for half from int32 L0C, NoQuant to keep the L0C dtype)", site=site)
    scales = None
    reads = []
    if mode in _SCALED:
        if mode in _VECTOR:
            if ws is None:
                raise ArgumentError(f"Fixpipe quantPre={mode.name} takes one scale per column from a tensor",
                                    fix="pass the uint64 scales (in L1) as Fixpipe(dst, src, cbufWorkspace, params)",
                                    site=site)
            tier_of(ws, ("L1",), "Fixpipe", "cbufWorkspace", site)
            if ws.dtype.itemsize != 8 or ws.size < n:
                raise DtypeError(f"Fixpipe cbufWorkspace holds {ws.size} {ascend_name(ws.dtype)}; it needs nSize = "
                                 f"{n} uint64 QUANT_PRE words", fix="one 64-bit word per output column", site=site)
            words = [int(w) for w in ws.view(n).view(np.uint64)]
            reads.append(region(ws, n * 8))
        else:
            words = [int(params.deqScalar)]
        decoded = [deq_scale(w) for w in words]
        if any((w >> 36) & 1 for w in words):
            raise ArgumentError("Fixpipe: the QUANT_PRE MCB bit (36, shift before the scale) is not modelled",
                                fix="leave bits 32..36 at 0", site=site)
        signed = {s for _, _, s in decoded}
        if mode not in (QuantMode_t.DEQF16, QuantMode_t.VDEQF16) and signed != {1 if dst.dtype == int8 else 0}:
            raise DtypeError(f"Fixpipe {mode.name}: the QUANT_PRE sign flag (bit 46) says "
                             f"{'int8' if 1 in signed else 'uint8'} but the GM tensor is {ascend_name(dst.dtype)}",
                             fix="set bit 46 for int8 results, clear it for uint8", site=site)
        scales = (np.array([d[0] for d in decoded], np.float32), np.array([d[1] for d in decoded], np.float32))
        if mode not in _VECTOR:     # one word for the whole matrix; V modes: one per column, broadcast over rows
            scales = (scales[0][0], scales[1][0])
    nb = -(-n // ROWS)
    isz = src.dtype.itemsize
    last = (nb - 1) * ss * ROWS + m * ROWS          # elements of L0C read, from the tensor's start
    if last > src.size:
        up = -(-m // ROWS) * ROWS
        fix = (f"srcStride counts the rows of one column block of L0C, mSize rounded up to 16 (\"其值应填成mSize对16"
               f"向上取整\"): {up} for mSize {m}, not {ss}" if ss > up else "check mSize, nSize and srcStride")
        raise OutOfBoundsError(f"Fixpipe reads {nb} column blocks of {m} rows (srcStride {ss}): {last} elements, "
                               f"but the L0C tensor holds {src.size}", fix=fix, site=site,
                               kind="fixpipe-src-stride" if ss > up else "")
    dst._require()
    if nz_out:
        _check_nz_out(dst, m, n, dp, site)
    osz = dst.dtype.itemsize
    nz = np.ndarray((nb, m, ROWS), src.dtype, src.tier.arena, src.addr, (ss * ROWS * isz, ROWS * isz, isz))
    spans = [(src.addr + b * ss * ROWS * isz, src.addr + (b * ss * ROWS + m * ROWS) * isz) for b in range(nb)]
    reads.append(byte_runs(src.tier, spans))
    convert = _converter(mode, bool(params.reluEn), dst.dtype, scales)
    if nz_out:      # NZ2NZ: "dst_block_addr = dst_temp_n_addr + k * dstStride * 32" (dstStride in 32 B blocks)
        blen = m * ROWS * osz
        return CubePlan(None, regions_of(reads), [], m * n * osz, 0, (nz, m, n, None),
                        (BurstPlan(nb, blen, ss * ROWS * isz, dp * 32, blen), (nb - 1) * dp * 32 + blen, convert,
                         ss if nb > 1 else None))
    rows = nz.transpose(1, 0, 2) if n % ROWS == 0 and mode not in _SCALED else None     # m x blocks x 16
    return CubePlan(None, regions_of(reads), [], m * n * osz, 0, (nz, m, n, rows),
                    (BurstPlan(m, n * osz, ss * ROWS * isz, dp * osz, n * osz), ((m - 1) * dp + n) * osz,
                     convert, ss if nb > 1 else None))


def _check_nz_out(dst, m: int, n: int, dp: int, site) -> None:
    """NZ2NZ's rules (DK Fixpipe page): nSize a multiple of 16, dstStride in 32 B blocks with no overlap,
    a 32-byte aligned destination; B8 outputs (channel merge) are not modelled."""
    osz = dst.dtype.itemsize
    if n % ROWS:
        raise ArgumentError(f"Fixpipe CFG_NZ: nSize {n} is not a multiple of 16 (\"若不开启channelSplit功能，nSize"
                            "必须为16的倍数\")", fix=f"round nSize up to {-(-n // ROWS) * ROWS} (the padded columns)",
                            site=site)
    if osz == 1:
        raise ArgumentError("Fixpipe CFG_NZ with an 8-bit result: the channel merge (16x32 fractals) is not "
                            "modelled", fix="write int8 results with CFG_ROW_MAJOR", site=site)
    need = -(-m * ROWS * osz // 32)
    if n > ROWS and dp < need:
        raise ArgumentError(f"Fixpipe CFG_NZ dstStride {dp}: with NZ2NZ it counts 32-byte blocks between the "
                            f"output's column blocks, and one block of {m} rows x 16 takes {need}: they would "
                            "overlap (\"目标操作数地址之间不能重叠\")",
                            fix=f"dstStride >= {need} (mSize x 16 x {osz} B / 32; the M of the whole output for "
                                "NC1HWC0)", site=site)
    if dp < 1:
        raise ArgumentError("Fixpipe CFG_NZ dstStride 0 (\"取值不为0\")", fix=f"dstStride = {need} or more",
                            site=site)
    if (dst.buf.base_addr + dst.offset) % 32:
        raise ArgumentError(f"Fixpipe CFG_NZ: the GM destination at byte {dst.offset} is not 32-byte aligned "
                            "(\"NZ格式地址需要满足32字节对齐\")", fix="start each NZ block on a 32-byte boundary",
                            site=site)


def _src_stride_error(m: int, n: int, ss: int, site) -> CubeFormatError:
    """Fixpipe srcStride < mSize: when nSize would fit srcStride, the likely mistake is nSize and mSize swapped."""
    rule = (f"Fixpipe srcStride {ss} < mSize {m}: srcStride counts 16-element rows of L0C between column blocks, "
            f"so column block 1 would be read from inside block 0")
    if n <= ss:
        return CubeFormatError(
            rule + f"; nSize {n} would fit srcStride {ss}: are nSize and mSize swapped?",
            fix=f"«FixpipeParamsV220(nSize, mSize, srcStride, dstStride, ...)» takes the tile's columns (N) first, then "
                f"its rows (M): pass nSize = {m} and mSize = {n} if the tile has {n} rows, with srcStride the rows "
                f"rounded up to 16", site=site, kind="fixpipe-swapped")
    return CubeFormatError(rule, fix=f"srcStride is mSize rounded up to 16 (\"其值应填成mSize对16向上取整\"): "
                                     f"{-(-m // ROWS) * ROWS}", site=site, kind="fixpipe-src-stride")
