"""Cube path: LoadData (L1 -> L0A/L0B, MTE1), Mmad (PIPE_M), Fixpipe (L0C -> GM, PIPE_FIX).

Layout model: the simulator keeps matrices row-major (ND) in L1, L0A, L0B and
L0C; the hardware's NZ/ZZ/ZN fractal layouts are not modelled, but their
rules are: L0A/L0B addresses 512-byte aligned, operands sized in whole
fractals (16 x 16 for fp16/bf16, 16 x 32 for int8), fp32 (int32) accumulation.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from ascend_sim.engine import context
from ascend_sim.engine import timing
from ascend_sim.engine.core import FIX, M, MTE1, regions_of, region
from ascend_sim.hw.dtypes import ascend_name, bfloat16, float32, half, int8, int32
from ascend_sim.engine.errors import ArgumentError, CubeFormatError, DtypeError, PositionError, kernel_point
from ascend_sim.api.checks import int_fields, integer, live, member
from ascend_sim.api.tensor import GlobalTensor, LocalTensor
from ascend_sim.engine.context import current_core
from ascend_sim.api.ops.datacopy import burst_view, BurstPlan
from ascend_sim.engine.gmcheck import gm_write
from ascend_sim.engine.memory import note_gm_write

FRACTAL_BYTES = 512


@dataclass
class LoadData2DParams:
    """``LoadData2DParams``: copy ``repeatTimes`` 512-byte fractals from L1 to L0A/L0B."""

    startIndex: int = 0
    repeatTimes: int = 1
    srcStride: int = 1
    sid: int = 0
    dstGap: int = 0
    ifTranspose: bool = False
    addrMode: int = 0

    def __post_init__(self):
        if (self.startIndex.__class__ is not int or self.repeatTimes.__class__ is not int
                or self.srcStride.__class__ is not int or self.sid.__class__ is not int
                or self.dstGap.__class__ is not int or self.addrMode.__class__ is not int):
            int_fields(self, ("startIndex", "repeatTimes", "srcStride", "sid", "dstGap", "addrMode"))


@dataclass
class MmadParams:
    """``MmadParams``: C[m, n] (+)= A[m, k] @ B[k, n]; ``cmatrixInitVal`` True starts from zero."""

    m: int = 0
    n: int = 0
    k: int = 0
    cmatrixInitVal: bool = True
    cmatrixSource: bool = False
    isBias: bool = False

    def __post_init__(self):
        if self.m.__class__ is not int or self.n.__class__ is not int or self.k.__class__ is not int:
            int_fields(self, ("m", "n", "k"))


class QuantMode_t(enum.Enum):
    __hash__ = object.__hash__      # members are singletons: hash by identity (plan keys hold them)

    NoQuant = "none"
    F322F16 = "f32_to_f16"
    F322BF16 = "f32_to_bf16"


@dataclass
class FixpipeParams:
    """``FixpipeParamsV220``: move an m x n block of L0C to GM, converting and optionally ReLU."""

    nSize: int = 0
    mSize: int = 0
    srcStride: int = 0          # L0C row pitch in elements (0: nSize)
    dstStride: int = 0          # GM row pitch in elements (0: nSize)
    quantPre: QuantMode_t = QuantMode_t.NoQuant
    reluEn: bool = False

    def __post_init__(self):
        if (self.nSize.__class__ is not int or self.mSize.__class__ is not int
                or self.srcStride.__class__ is not int or self.dstStride.__class__ is not int):
            int_fields(self, ("nSize", "mSize", "srcStride", "dstStride"))


FixpipeParamsV220 = FixpipeParams

# input dtype -> (accumulator dtype, fractal m0, k0, n0)
_CUBE = {half: (float32, 16, 16, 16), bfloat16: (float32, 16, 16, 16), int8: (int32, 16, 32, 16)}


def _tier(t, names: tuple[str, ...], op: str, role: str, site) -> LocalTensor:
    if isinstance(t, LocalTensor):
        live(op, role, t, site)
    if not isinstance(t, LocalTensor) or t.tier.name not in names:
        where = getattr(getattr(t, "tier", None), "name", type(t).__name__)
        raise PositionError(f"{op}: {role} must live in {' or '.join(names)}, got {where}",
                            fix={"L0A": "LoadData the left matrix into an A2 (L0A) tensor",
                                 "L0B": "LoadData the right matrix into a B2 (L0B) tensor",
                                 "L0C": "Mmad writes a CO1 (L0C) tensor",
                                 "L1": "DataCopy GM into an A1/B1 (L1) tensor first"}.get(names[0], ""), site=site)
    return t


def _check_l0_address(op: str, t: LocalTensor, site) -> None:
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
                            fix=f"build the parameters with {kind.__name__}(...)", site=site)
    for name in fields:
        integer(op, name, getattr(params, name), site, 0)


def _build_plan(core, key, build, *args):
    """On a plan-cache miss: ``build(*args)`` checks the call and makes the plan, kept under ``key`` (None: not kept).

    Like the vector and DataCopy plans, keys hold the parameters and each operand's (tier, address,
    size, dtype), or for GM its buffer and dtype (the GM offset is checked on every call).
    """
    plan = build(*args)
    if key is not None:
        core.plans[key] = plan
    return plan


class _CubePlan:
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


def LoadData(dst, src, params: LoadData2DParams) -> None:
    """``LoadData(dst L0A/L0B, src L1, LoadData2DParams)``: MTE1 copies whole 512-byte fractals."""
    site = kernel_point()
    core = context.current or current_core()
    try:
        p = params
        key = ("LoadData", p.startIndex, p.repeatTimes, p.srcStride, p.dstGap, p.ifTranspose,
               dst.tier, dst.addr, dst.size, dst.dtype, src.tier, src.addr, src.size, src.dtype)
        plan = core.plans.get(key)
    except (AttributeError, TypeError):     # not tensors, or unhashable parameters: the builder reports it
        key = plan = None
    if plan is None:
        plan = _build_plan(core, key, _loaddata_plan, core, dst, src, params, site)
    core.issue_n(MTE1, "LoadData", plan.cost, plan.rd, plan.wr, plan.nbytes, "L1", dst.tier.name, 0, "copy", site)
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    for d, s in plan.views:
        d[...] = s


def _loaddata_plan(core, dst, src, params, site) -> _CubePlan:
    """LoadData's rules, regions, cost and views."""
    _tier(dst, ("L0A", "L0B"), "LoadData", "dst", site)
    _tier(src, ("L1",), "LoadData", "src", site)
    _struct("LoadData", params, LoadData2DParams, site, ("startIndex", "repeatTimes", "srcStride", "dstGap"))
    if dst.dtype != src.dtype:
        raise DtypeError(f"LoadData from {ascend_name(src.dtype)} to {ascend_name(dst.dtype)}",
                         fix="LoadData does not convert dtypes", site=site)
    if params.ifTranspose:
        raise ArgumentError("LoadData ifTranspose is not modelled (the simulator keeps ND layout)",
                            fix="load B already laid out as k x n", site=site)
    _check_l0_address("LoadData", dst, site)
    reps = int(params.repeatTimes)
    if not 1 <= reps <= 255:
        raise ArgumentError(f"LoadData repeatTimes {reps} outside 1..255",
                            fix="split the load into several LoadData calls", site=site)
    src_off = params.startIndex * FRACTAL_BYTES
    pitch = params.srcStride * FRACTAL_BYTES
    span_src = src_off + (reps - 1) * pitch + FRACTAL_BYTES
    span_dst = reps * (FRACTAL_BYTES + params.dstGap * FRACTAL_BYTES) - params.dstGap * FRACTAL_BYTES
    for t, span, role in ((src, span_src, "source"), (dst, span_dst, "destination")):
        if span > t.nbytes:
            from ascend_sim.engine.errors import OutOfBoundsError
            raise OutOfBoundsError(f"LoadData {role} needs {span} bytes but the {t.tier.name} tensor holds "
                                   f"{t.nbytes}", fix="lower repeatTimes or startIndex", site=site)
    chip = core.chip
    rate = chip.l1_to_l0a_bytes_per_cycle if dst.tier.name == "L0A" else chip.l1_to_l0b_bytes_per_cycle
    nbytes = reps * FRACTAL_BYTES
    s = src.tier.arena
    d = dst.tier.arena
    dpitch = FRACTAL_BYTES * (1 + params.dstGap)
    if pitch == FRACTAL_BYTES and dpitch == FRACTAL_BYTES:      # contiguous fractals: one slice each side
        a = src.addr + src_off
        views = ((d[dst.addr:dst.addr + nbytes], s[a:a + nbytes]),)
    else:
        views = tuple((d[dst.addr + r * dpitch:dst.addr + r * dpitch + FRACTAL_BYTES],
                       s[src.addr + src_off + r * pitch:src.addr + src_off + r * pitch + FRACTAL_BYTES])
                      for r in range(reps))
    return _CubePlan(timing.local_transfer(core, nbytes, rate, chip.mte1_startup),
                     regions_of((region(src[src_off // src.dtype.itemsize:], span_src - src_off),)),
                     regions_of((region(dst, span_dst),)), nbytes, 0, views)


def Mmad(dst, fmA, fmB, params: MmadParams) -> None:
    """``Mmad(c L0C, a L0A, b L0B, MmadParams(m, n, k, cmatrixInitVal))``: the cube's matrix multiply."""
    site = kernel_point()
    core = context.current or current_core()
    try:
        p = params
        key = ("Mmad", p.m, p.n, p.k, p.cmatrixInitVal, p.cmatrixSource, p.isBias, dst.tier, dst.addr, dst.size,
               dst.dtype, fmA.tier, fmA.addr, fmA.size, fmA.dtype, fmB.tier, fmB.addr, fmB.size, fmB.dtype)
        plan = core.plans.get(key)
    except (AttributeError, TypeError):     # not tensors, or unhashable parameters: the builder reports it
        key = plan = None
    if plan is None:
        plan = _build_plan(core, key, _mmad_plan, core, dst, fmA, fmB, params, site)
    core.issue_n(M, "Mmad", plan.cost, plan.rd, plan.wr, plan.nbytes, "L0A", "L0C", plan.flops, "cube", site)
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    av, bv, out, a32, b32, c32 = plan.views
    table, init = plan.extra
    if table is not None:               # widen the inputs to the accumulator dtype (see _widening_table)
        table.take(av, out=a32, mode="wrap")     # av, bv: the raw bits (uint16); the method: np.take adds 3 Python calls
        table.take(bv, out=b32, mode="wrap")
    else:
        a32[...] = av
        b32[...] = bv
    if init:                            # np.dot: the same sgemm as np.matmul, with less call overhead
        np.dot(a32, b32, out=out)
    else:
        np.add(out, np.dot(a32, b32, out=c32), out=out)


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


def _mmad_plan(core, dst, fmA, fmB, params, site) -> _CubePlan:
    """Mmad's rules (positions, dtypes, fractals, sizes), regions, cost and views."""
    _tier(dst, ("L0C",), "Mmad", "dst", site)
    _tier(fmA, ("L0A",), "Mmad", "fmA (left)", site)
    _tier(fmB, ("L0B",), "Mmad", "fmB (right)", site)
    _struct("Mmad", params, MmadParams, site, ("m", "n", "k"))
    if fmA.dtype != fmB.dtype or fmA.dtype not in _CUBE:
        raise DtypeError(f"Mmad inputs are {ascend_name(fmA.dtype)} and {ascend_name(fmB.dtype)}; the cube "
                         "takes two half, two bfloat16_t or two int8_t matrices",
                         fix="Cast in UB before moving the operands to L1", site=site)
    for t in (dst, fmA, fmB):
        _check_l0_address("Mmad", t, site)
    acc, m0, k0, n0 = _CUBE[fmA.dtype]
    if dst.dtype != acc:
        raise DtypeError(f"Mmad of {ascend_name(fmA.dtype)} accumulates in {ascend_name(acc)}, but dst is "
                         f"{ascend_name(dst.dtype)}", fix=f"allocate the CO1 tensor as {ascend_name(acc)}",
                         site=site)
    if params.isBias or params.cmatrixSource:
        raise ArgumentError("Mmad with isBias/cmatrixSource needs the bias table (C2/BT), which the simulator "
                            "does not model", fix="fold the bias into K (a column of ones in A and the bias as "
                            "a row of B), or add it after Fixpipe on the vector unit", site=site)
    m, n, k = int(params.m), int(params.n), int(params.k)
    for name, v in (("m", m), ("n", n), ("k", k)):
        if not 1 <= v <= 4095:
            raise CubeFormatError(f"Mmad {name}={v} outside 1..4095", fix="tile the matmul", site=site)
    if k % k0:
        raise CubeFormatError(f"Mmad k={k} is not a multiple of the {ascend_name(fmA.dtype)} fractal depth {k0} "
                              f"(fractal {m0}x{k0}x{n0})", fix=f"pad K to a multiple of {k0} with zeros",
                              site=site)
    for t, need, what in ((fmA, m * k, "m*k"), (fmB, k * n, "k*n"), (dst, m * n, "m*n")):
        if t.size < need:
            raise CubeFormatError(f"Mmad needs {what} = {need} elements in {t.tier.name} but the tensor holds "
                                  f"{t.size}", fix="check m, n, k against the L0 tensors' sizes", site=site)
    fractals = -(-m // m0) * -(-n // n0) * (k // k0)
    reads = [region(fmA, m * k * fmA.dtype.itemsize), region(fmB, k * n * fmB.dtype.itemsize)]
    if not params.cmatrixInitVal:
        reads.append(region(dst, m * n * dst.dtype.itemsize))
    table = _widening_table(fmA.dtype, acc)
    av, bv = fmA.view(m * k).reshape(m, k), fmB.view(k * n).reshape(k, n)
    if table is not None:                   # the table is indexed by the inputs' raw bits
        av, bv = av.view(np.uint16), bv.view(np.uint16)
    views = (av, bv, dst.view(m * n).reshape(m, n),
             np.empty((m, k), acc), np.empty((k, n), acc), np.empty((m, n), acc))    # + widened inputs, product
    return _CubePlan(timing.cube(core, fractals), regions_of(reads), regions_of((region(dst, m * n * acc.itemsize),)),
                     (m * k + k * n) * fmA.dtype.itemsize, 2 * m * n * k, views, (table, bool(params.cmatrixInitVal)))


def Fixpipe(dst, src, params: FixpipeParams) -> None:
    """``Fixpipe(dst GM, src L0C, FixpipeParams)``: write results out, converting fp32 to fp16 and ReLU on the way."""
    site = kernel_point()
    core = context.current or current_core()
    try:
        p = params
        key = ("Fixpipe", p.nSize, p.mSize, p.srcStride, p.dstStride, p.quantPre, p.reluEn, dst.buf, dst.dtype,
               src.tier, src.addr, src.size, src.dtype)
        plan = core.plans.get(key)
    except (AttributeError, TypeError):     # not tensors, or unhashable parameters: the builder reports it
        key = plan = None
    if plan is None:
        plan = _build_plan(core, key, _fixpipe_plan, core, dst, src, params, site)
    bursts, span, relu = plan.extra
    buf = dst.buf
    off = dst.offset
    if off < 0 or off + span > buf.nbytes:
        dst.check_range(off, span, "Fixpipe write")
    aligned = (buf.base_addr + off) % core.chip.gm_burst_align == 0
    gm_write(core, buf, off, bursts.count, bursts.dst_blen, bursts.dst_pitch, FIX, False, dst.dtype, site)
    core.issue_n(FIX, "Fixpipe", (FIX, plan.nbytes, bursts.count, aligned, buf, off, bursts.blen, bursts.dst_pitch,
                                  dst.l2_mode), plan.rd, plan.wr, plan.nbytes, "L0C", "GM", 0, "copy", site)
    if buf.written_by is not None:
        note_gm_write(buf, off, bursts.count, bursts.blen, bursts.dst_pitch, len(core.records) - 1)
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    rows = plan.views[0]
    if relu:
        rows = np.maximum(rows, 0)
    out = burst_view(buf.raw, off, bursts.count, bursts.blen, bursts.dst_pitch).view(dst.dtype)    # m x n in GM
    np.copyto(out, rows, casting="unsafe")      # fp32 beyond the fp16 range becomes inf, as on the device


def _fixpipe_plan(core, dst, src, params, site) -> _CubePlan:
    """Fixpipe's rules (dtypes, conversion, sizes), its L0C region, bursts and views."""
    _tier(src, ("L0C",), "Fixpipe", "src", site)
    if not isinstance(dst, GlobalTensor):
        raise PositionError("Fixpipe writes to GM here (a GlobalTensor)", fix="pass the output GlobalTensor",
                            site=site)
    _struct("Fixpipe", params, FixpipeParams, site, ("nSize", "mSize", "srcStride", "dstStride"))
    member("Fixpipe", "quantPre", params.quantPre, QuantMode_t, site)
    if int(params.mSize) < 1 or int(params.nSize) < 1:
        raise ArgumentError(f"Fixpipe mSize {params.mSize} and nSize {params.nSize} must be at least 1",
                            fix="pass the block's rows (mSize) and columns (nSize)", site=site)
    m, n = int(params.mSize), int(params.nSize)
    sp = params.srcStride or n
    dp = params.dstStride or n
    if params.quantPre != QuantMode_t.NoQuant and src.dtype != float32:
        raise DtypeError(f"Fixpipe quantPre={params.quantPre.name} converts float L0C results, but this L0C "
                         f"tensor is {ascend_name(src.dtype)}",
                         fix="write int32 results (int8 matmul) with QuantMode_t.NoQuant to an int32_t GM tensor",
                         site=site)
    want = {QuantMode_t.NoQuant: src.dtype, QuantMode_t.F322F16: half,
            QuantMode_t.F322BF16: bfloat16}[params.quantPre]
    if dst.dtype != want:
        raise DtypeError(f"Fixpipe with quantPre={params.quantPre.name} produces {ascend_name(want)} but the GM "
                         f"tensor is {ascend_name(dst.dtype)}",
                         fix="use QuantMode_t.F322F16 to write half from float L0C, or NoQuant for float",
                         site=site)
    if (m - 1) * sp + n > src.size:
        from ascend_sim.engine.errors import OutOfBoundsError
        raise OutOfBoundsError(f"Fixpipe reads {m} rows of {n} (pitch {sp}) but L0C holds {src.size} elements",
                               fix="check mSize, nSize and srcStride", site=site)
    dst._require()
    isz = dst.dtype.itemsize
    vals = src.view((m - 1) * sp + n)
    rows = np.lib.stride_tricks.as_strided(vals, shape=(m, n), strides=(sp * vals.itemsize, vals.itemsize))
    return _CubePlan(None, regions_of((region(src, ((m - 1) * sp + n) * src.dtype.itemsize),)), [], m * n * isz,
                     0, (rows,), (BurstPlan(m, n * isz, sp * isz, dp * isz, n * isz), ((m - 1) * dp + n) * isz,
                                  bool(params.reluEn)))
