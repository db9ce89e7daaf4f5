"""Vector instructions (PIPE_V, UB only), in the count form and the mask/repeat form.

Count form: ``Add(dst, src0, src1, count)``. Mask/repeat form (高维切分):
``Add(dst, src0, src1, mask, repeatTimes, BinaryRepeatParams(...))``: each
repeat reads 8 DataBlocks of 32 bytes (256 bytes) per operand; ``mask`` picks
lanes (an int: the first ``mask`` lanes; a list of two uint64: bit mode);
block strides and repeat strides are counted in 32-byte blocks.
Results are computed by numpy in the operands' dtype, so fp16 rounds per
instruction exactly as the vector unit does.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ascend_sim.engine import context
from ascend_sim.engine import timing
from ascend_sim.engine.core import V, Runs, regions_of, region
from ascend_sim.hw.dtypes import ascend_name, as_dtype, int4b_t, int8, is_float
from ascend_sim.engine.errors import (AlignmentError, ArgumentError, DtypeError, OutOfBoundsError, PositionError,
                                      kernel_point)
from ascend_sim.engine.memory import GRANULE
from ascend_sim.api.checks import check_fields, field_spec, integer, live, member, scalar as scalar_arg
from ascend_sim.api.ops.mask import count_form_done, counter_count, lane_mask, normal_key
from ascend_sim.api.ops.reduce_rows import (Lanes, check_counter_dst, count_lanes, count_sum, extremes,
                                            no_elements, overall_extreme, repeat_lanes, repeat_tree_sum, tree_sum)
from ascend_sim.api.ops.dtype_table import A2, allowed, require as require_a2
from ascend_sim.api.ops.conversion import RoundMode, check_cast, deq_scale, pack_int4, unpack_int4
from ascend_sim.api.ops import overlap
from ascend_sim.api.tensor import LocalTensor
from ascend_sim.api.tensor import writable_view
from ascend_sim.engine.context import current_core
from ascend_sim.engine.shadow import runs


@dataclass
class BinaryRepeatParams:
    """``BinaryRepeatParams{dstBlkStride, src0BlkStride, src1BlkStride, dstRepStride, src0RepStride, src1RepStride}``:
    uint8_t fields (kernel_struct_binary.h)."""

    dstBlkStride: int = 1
    src0BlkStride: int = 1
    src1BlkStride: int = 1
    dstRepStride: int = 8
    src0RepStride: int = 8
    src1RepStride: int = 8

    def __post_init__(self):
        check_fields(self, _BINARY_FIELDS)


@dataclass
class UnaryRepeatParams:
    """``UnaryRepeatParams{dstBlkStride, srcBlkStride, dstRepStride, srcRepStride}``: uint16_t block strides,
    uint8_t repeat strides (kernel_struct_unary.h); the vector ops take block strides up to 255 (MAX_STRIDE)."""

    dstBlkStride: int = 1
    srcBlkStride: int = 1
    dstRepStride: int = 8
    srcRepStride: int = 8

    def __post_init__(self):
        check_fields(self, _UNARY_FIELDS)


_BINARY_FIELDS = field_spec(**{f: "uint8_t" for f in ("dstBlkStride", "src0BlkStride", "src1BlkStride", "dstRepStride",
                                                       "src0RepStride", "src1RepStride")})
_UNARY_FIELDS = field_spec(dstBlkStride="uint16_t", srcBlkStride="uint16_t", dstRepStride="uint8_t",
                           srcRepStride="uint8_t")


class CMPMODE(enum.Enum):
    LT = "lt"
    GT = "gt"
    EQ = "eq"
    LE = "le"
    GE = "ge"
    NE = "ne"


class SELMODE(enum.Enum):
    VSEL_CMPMASK_SPR = 0
    VSEL_TENSOR_SCALAR_MODE = 1
    VSEL_TENSOR_TENSOR_MODE = 2


# ----------------------------------------------------------------------------- operand checks
def _ub(t, op: str, role: str, site, align: int = 32) -> LocalTensor:
    """``t`` is a live UB LocalTensor starting on an ``align``-byte boundary (32 unless the op's page says less)."""
    if not isinstance(t, LocalTensor):
        raise PositionError(f"{op}: {role} is a {type(t).__name__}; vector instructions work on UB LocalTensors only",
                            fix="DataCopy the data from GM into a VECIN tensor first", site=site)
    live(op, role, t, site)
    if t.dtype is int4b_t and op != "Cast":
        raise DtypeError(f"{op}: {role} holds int4b_t, packed two per byte; of the vector instructions only Cast "
                         "takes it (Cast.md: int4b_t -> half, half -> int4b_t)",
                         fix="Cast the int4b_t data to half first (and back with Cast after the arithmetic)", site=site)
    if t.tier.name != "UB":
        raise PositionError(f"{op}: {role} lives in {t.tier.name} («TPosition.{t.position.name}»); the vector unit "
                            "reads and writes UB only", fix="use a VECIN/VECOUT/VECCALC tensor", site=site)
    if t.addr % align:
        raise AlignmentError(f"{op}: {role} starts at UB+{t.addr}, not {align}-byte aligned "
                             f"({t.addr} % {align} = {t.addr % align})",
                             fix=f"offset sub-tensors by a multiple of {align} bytes "
                                 f"({max(1, align // t.dtype.itemsize)} {ascend_name(t.dtype)} elements)", site=site)
    return t


def _same(op: str, site, *ts: LocalTensor) -> None:
    d = ts[0].dtype
    for t in ts[1:]:
        if t.dtype != d:
            raise DtypeError(f"{op}: operands mix {ascend_name(d)} and {ascend_name(t.dtype)}",
                             fix="Cast one operand so that all have the same dtype", site=site)


def _count(op: str, count, site, *ts: LocalTensor) -> int:
    n = integer(op, "count", count, site)
    if n < 0:
        raise ArgumentError(f"{op}: count {n} is negative", fix="pass the number of elements", site=site)
    for t in ts:
        if n > t.size:
            from ascend_sim.api.tensor import bytes_not_elements      # the error path only
            rule, fix = bytes_not_elements(t, n) or ("", "")
            raise OutOfBoundsError(f"{rule}{op}: count {n} exceeds the tensor's {t.size} {ascend_name(t.dtype)} "
                                   f"elements (UB+{t.addr}, {t.nbytes} bytes)",
                                   fix=fix or "lower the count or allocate a larger buffer", site=site,
                                   kind="init-bytes" if rule else "")
    return n


# ----------------------------------------------------------------------------- repeat form
@lru_cache(maxsize=4096)
def _lane_index(itemsize: int, mask_key, repeat: int, blk: int, rep: int) -> np.ndarray:
    """Element offsets (relative) of the active lanes of ``repeat`` repeats."""
    epb = 32 // itemsize
    lanes = 8 * epb
    r = np.arange(repeat)[:, None, None] * rep * epb
    j = np.arange(8)[None, :, None] * blk * epb
    e = np.arange(epb)[None, None, :]
    idx = (r + j + e).reshape(repeat, lanes)
    return idx[:, lane_mask(mask_key, lanes)].reshape(-1)


@lru_cache(maxsize=1024)
def _counter_index(itemsize: int, n: int, blk: int, rep: int) -> np.ndarray:
    """Counter mode: the offsets of ``n`` elements, in whole repeats of every lane and a partial last one."""
    lanes = 256 // itemsize
    return _lane_index(itemsize, lanes, -(-n // lanes), blk, rep)[:n]


def _check_repeat(op: str, repeat: int, site, max_repeat: int) -> int:
    r = integer(op, "repeatTimes", repeat, site)
    if not 0 <= r <= max_repeat:
        raise ArgumentError(f"{op}: repeatTimes {r} outside 0..{max_repeat}",
                            fix="split the work into several instructions of at most 255 repeats", site=site)
    return r


_PATTERNS: dict = {}


def _pattern(idx: np.ndarray, itemsize: int) -> tuple[int, list, list]:
    """(largest element index, granule runs relative to the operand, the byte each run's access ends at)
    of a lane pattern, cached."""
    key = (id(idx), itemsize)
    hit = _PATTERNS.get(key)
    if hit is None or hit[0] is not idx:
        if len(_PATTERNS) > 4096:       # data-dependent patterns (Gather, GatherMask ...) are new arrays each call
            _PATTERNS.clear()
        g = idx * itemsize // GRANULE
        rel = _split_at_short_granules(runs(np.unique(g)), idx, g, itemsize) if idx.size else []
        ends = [int(idx[g == hi - 1].max()) * itemsize + itemsize for _, hi in rel]
        hit = _PATTERNS[key] = (idx, int(idx.max()) if idx.size else -1, rel, ends)
    return hit[1], hit[2], hit[3]


def _split_at_short_granules(rel: list, idx: np.ndarray, g: np.ndarray, itemsize: int) -> list:
    """End a granule run after every granule the lanes leave before its last byte (a tail mask: lanes 0..56 of 64
    floats in rows 256 bytes apart), so each such granule is a run's last and its ``ends`` byte tells the initcheck
    that the read stops short of DataCopyPad's unwritten padding there. Whole granules keep their runs as they are."""
    last = np.zeros(int(g.max()) + 1, np.int64)
    np.maximum.at(last, g, idx * itemsize + itemsize)
    short = np.flatnonzero(last[:-1] % GRANULE != 0)            # read, ending inside the granule, not the last one
    if not short.size:
        return rel
    out = []
    for lo, hi in rel:
        cut = short[(short >= lo) & (short < hi - 1)]
        for c in cut.tolist():
            out.append((lo, c + 1))
            lo = c + 1
        out.append((lo, hi))
    return out


class _Access:
    """One operand of an instruction: its element indices into the tier and its shadow region."""

    __slots__ = ("t", "idx", "region", "n", "_view")

    def __init__(self, t: LocalTensor, idx, op: str, site):
        self.t = t
        self._view = None
        isz = t.dtype.itemsize
        if isinstance(idx, int):            # count form: first idx elements
            self.n = idx
            self.idx = None
            self.region = region(t, idx * isz)
        else:
            self.idx = idx
            self.n = idx.size
            top, rel, ends = _pattern(idx, isz)
            if top >= t.size or (idx.size and idx.min() < 0):
                raise OutOfBoundsError(
                    f"{op}: the repeat/stride pattern reaches element {top} but the tensor holds "
                    f"{t.size} {ascend_name(t.dtype)} elements", fix="lower repeatTimes or the strides", site=site)
            base = t.addr // GRANULE            # operands are 32-byte aligned (checked in _ub)
            rs = Runs((base + lo, base + hi) for lo, hi in rel)
            rs.ends = [t.addr + e for e in ends]
            self.region = (t.tier, rs)

    def get(self) -> np.ndarray:
        if self.idx is None:                # count form: a view, made once (plans reuse their operands)
            v = self._view
            if v is None:
                v = self._view = writable_view(self.t, self.n)
            return v
        base = self.t.addr // self.t.dtype.itemsize
        return self.t.tier.arena.view(self.t.dtype)[base + self.idx]

    def put(self, values: np.ndarray) -> None:
        values = np.asarray(values).astype(self.t.dtype, copy=False)
        if self.idx is None:
            self.get()[...] = values
        else:
            base = self.t.addr // self.t.dtype.itemsize
            self.t.tier.arena.view(self.t.dtype)[base + self.idx] = values


def _accesses(op: str, site, dst, srcs, args) -> tuple[_Access, list[_Access], int]:
    """Resolve the count form (args = (count,)) or the repeat form (mask, repeat, params)."""
    if len(args) == 1:
        n = _count(op, args[0], site, dst, *srcs)
        return _Access(dst, n, op, site), [_Access(s, n, op, site) for s in srcs], timing.vector_repeats(
            n, dst.dtype.itemsize)
    if len(args) not in (3, 4):
        raise ArgumentError(f"{op}: pass either a count, or mask, repeatTimes and repeat params",
                            fix=f"{op}(dst, src..., count) or {op}(dst, src..., mask, repeatTimes, params)", site=site)
    mask, repeat, params, set_mask = args if len(args) == 4 else (*args, True)
    isz = dst.dtype.itemsize
    core = current_core()
    r = _check_repeat(op, repeat, site, core.chip.vec_max_repeat)
    n = 0
    if core.vmode:          # Counter mode: the mask is the element count, repeatTimes is ignored
        n = counter_count(op, core, mask, isz, set_mask, site)
        r, key = -(-n // (256 // isz)), None
    else:
        key = normal_key(op, core, mask, isz, set_mask, site)
    names = ["src0", "src1"] if len(srcs) == 2 else ["src"]
    kind = BinaryRepeatParams if len(srcs) == 2 else UnaryRepeatParams
    if not isinstance(params, kind):
        raise ArgumentError(f"{op}: the repeat form takes a {kind.__name__}, got {type(params).__name__}",
                            fix=f"{op}(dst, ..., mask, repeatTimes, «{kind.__name__}(...)»)", site=site)
    def index(itemsize: int, blk: str, rep: str) -> np.ndarray:
        b, p = _stride(op, params, blk, site), _stride(op, params, rep, site)
        return _counter_index(itemsize, n, b, p) if key is None else _lane_index(itemsize, key, r, b, p)

    d_idx = index(isz, "dstBlkStride", "dstRepStride")
    s_acc = [_Access(s, index(s.dtype.itemsize, f"{name}BlkStride", f"{name}RepStride"), op, site)
             for name, s in zip(names, srcs)]
    return _Access(dst, d_idx, op, site), s_acc, max(r, 1)


MAX_STRIDE = 255       # block and repeat strides: uint8_t fields of the repeat params (assumption: docs/sanitizer.md)


def _stride(op: str, params, name: str, site) -> int:
    """A block or repeat stride of a repeat-params struct: an integer in 0..255, in 32-byte blocks."""
    return integer(op, name, getattr(params, name), site, 0, MAX_STRIDE,
                   fix=f"strides count 32-byte blocks forward (uint8_t: 0..{MAX_STRIDE}); to walk backwards, "
                       "start the operand later and issue the repeats in separate calls")


class _VecPlan:
    """A checked vector instruction: its operands, shadow regions, cost and size, ready to issue.

    Count-form plans are cached per core under the operands' (tier, address, size, dtype) and
    the count, so an instruction repeated every tile is checked once and then only issued.
    """

    __slots__ = ("d", "srcs", "rd", "wr", "cost", "nbytes", "flops", "views")

    def __init__(self, core, d: _Access, srcs: list[_Access], repeats: int, klass: str, extra_reads=()):
        self.d = d
        self.srcs = srcs
        self.rd = regions_of([a.region for a in srcs] + list(extra_reads))
        self.wr = regions_of((d.region,))
        self.cost = timing.vector(core, repeats, klass, _bank_operand(d), [_bank_operand(a) for a in srcs])
        isz = d.t.dtype.itemsize
        self.nbytes = sum(a.n for a in srcs) * isz + d.n * isz
        self.flops = d.n
        count_form = d.idx is None and all(a.idx is None for a in srcs)
        self.views = (d.get(), *(a.get() for a in srcs)) if count_form else None    # dst, srcs...


def _bank_operand(a: _Access) -> tuple:
    """(UB address, itemsize, count | lane offsets) of an operand, for the bank-conflict cost."""
    return (a.t.addr, a.t.dtype.itemsize, a.n if a.idx is None else a.idx)


def _planned(op: str, count, ts: tuple, build, *args):
    """The cached plan of a count-form instruction on tensors ``ts``; ``build(*args)`` checks and makes it.

    The key: the op, the count and each operand's (tier, address, size, dtype).
    """
    core = context.current
    try:
        if len(ts) == 3:
            a, b, c = ts
            key = (op, count, a.tier, a.addr, a.size, a.dtype, b.tier, b.addr, b.size, b.dtype,
                   c.tier, c.addr, c.size, c.dtype)
        else:
            key = (op, count) + tuple(x for t in ts for x in (t.tier, t.addr, t.size, t.dtype))
        plan = core.plans.get(key)
    except (AttributeError, TypeError):     # not LocalTensors, an unhashable count, or no core: build() says
        return build(*args)
    if plan is None:
        plan = core.plans[key] = build(*args)
    return plan


def _issue(op: str, klass: str, dst: _Access, srcs: list[_Access], repeats: int, site, extra_reads=()):
    core = current_core()
    _run(_VecPlan(core, dst, srcs, repeats, klass, extra_reads), op, klass, site)


def _issued(op: str, klass: str, build, site, ts: tuple, args: tuple, set_mask: bool = True) -> _VecPlan:
    """Plan (cached in the count form) and issue an instruction on tensors ``ts``; ``build(site, *ts, args)``.

    ``set_mask``: the isSetMask template parameter (False: the mask register gives the mask or count).
    """
    core = context.current
    if len(args) == 1:
        if set_mask is not True:
            args = (_register_count(op, core, set_mask, site),)
        c = args[0]
        if c.__class__ is not int:      # a plan key holds the count: 16.0 must not find the plan of 16
            args = (_count(op, c, site),)
        plan = _planned(op, args[0], ts, build, site, *ts, args)
        if set_mask is True and (core.vmode or core.vmask is not None):
            count_form_done(core)
    else:
        if len(args) != 3:
            raise ArgumentError(f"{op}: pass either a count, or mask, repeatTimes and repeat params",
                                fix=f"{op}(dst, src..., count) or {op}(dst, src..., mask, repeatTimes, params)",
                                site=site)
        plan = build(site, *ts, (*args, set_mask))
    core.issue_n(V, op, plan.cost, plan.rd, plan.wr, plan.nbytes, "UB", "UB", plan.flops, klass, site)
    return plan


def _register_count(op: str, core, set_mask, site) -> int:
    """The count of a count-form call with isSetMask=False: the Counter-mode register."""
    if set_mask is not False:
        raise ArgumentError(f"{op}: isSetMask must be «True» or «False», got {set_mask!r}",
                            fix=f"«isSetMask=False|{op}<T, false>(...)» uses the mask register SetVectorMask set", site=site)
    if not core.vmode:
        raise ArgumentError(f"{op}: the count form with isSetMask=False reads its count from the mask register in "
                            "Counter mode, but the mode is Normal",
                            fix="call SetMaskCount() and «SetVectorMask(count, mode=MaskMode.COUNTER)|"
                                "SetVectorMask<T, MaskMode::COUNTER>(count)» first", site=site)
    return counter_count(op, core, None, 0, False, site)


def _run(plan: _VecPlan, op: str, klass: str, site) -> None:
    context.current.issue_n(V, op, plan.cost, plan.rd, plan.wr, plan.nbytes, "UB", "UB", plan.flops, klass, site)


def _require_float(op: str, t: LocalTensor, site) -> None:
    if not is_float(t.dtype):
        raise DtypeError(f"{op} supports half, float and bfloat16, not {ascend_name(t.dtype)}",
                         fix="Cast to half or float first", site=site)


def dtypes_of(*names: str) -> tuple:
    """The np.dtypes of Ascend C type names ("half", "int16_t" ...): an instruction's documented dtypes."""
    return tuple(as_dtype(n) for n in names)


def require_dtype(op: str, t: LocalTensor, dtypes: tuple | None, site) -> None:
    """DtypeError unless ``t`` has one of the documented (Atlas A2) ``dtypes`` (None: ``op``'s row of dtype_table)."""
    require_a2(op, t.dtype, site, dtypes)


def _check_dtype(op: str, t: LocalTensor, float_only: bool, dtypes, site) -> None:
    if dtypes is not None:
        require_dtype(op, t, dtypes, site)
    elif float_only:
        _require_float(op, t, site)


def _a2(op: str, dtypes: tuple | None) -> tuple | None:
    """An instruction's documented dtypes: its own list, else its row of the A2 table (dtype_table.py)."""
    return dtypes if dtypes is not None else (allowed(op) if op in A2 else None)


# ----------------------------------------------------------------------------- families
def _binary(op: str, fn, klass: str = "simple", float_only: bool = False, dtypes: tuple | None = None):
    ufunc = isinstance(fn, np.ufunc)
    dtypes = _a2(op, dtypes)

    def build(site, dst, src0, src1, args) -> _VecPlan:
        for role, t in (("dst", dst), ("src0", src0), ("src1", src1)):
            _ub(t, op, role, site)
        _same(op, site, dst, src0, src1)
        _check_dtype(op, dst, float_only, dtypes, site)
        d, (a, b), reps = _accesses(op, site, dst, [src0, src1], args)
        return _VecPlan(current_core(), d, [a, b], reps, klass)

    def instr(dst, src0, src1, *args, isSetMask: bool = True) -> None:
        plan = _issued(op, klass, build, kernel_point(), (dst, src0, src1), args, isSetMask)
        if not context.computing():      # launch(..., numerics=False): timing only
            return
        views = plan.views
        if views is not None and ufunc:     # count form: compute straight into UB
            fn(views[1], views[2], out=views[0])
        else:
            d, (a, b) = plan.d, plan.srcs
            d.put(fn(a.get(), b.get()))
    instr.__name__ = op
    instr.__doc__ = f"``{op}(dst, src0, src1, count)``: elementwise {op.lower()} on UB."
    return instr


def _one_source_build(op: str, klass: str, float_only: bool, dtypes: tuple | None):
    """The plan builder of a one-source instruction (``dst``, ``src``): UB operands, one dtype, its accesses."""
    dtypes = _a2(op, dtypes)
    def build(site, dst, src, args) -> _VecPlan:
        _ub(dst, op, "dst", site)
        _ub(src, op, "src", site)
        _same(op, site, dst, src)
        _check_dtype(op, dst, float_only, dtypes, site)
        d, (a,), reps = _accesses(op, site, dst, [src], args)
        return _VecPlan(current_core(), d, [a], reps, klass)
    return build


def _unary(op: str, fn, klass: str = "simple", float_only: bool = False, dtypes: tuple | None = None):
    build = _one_source_build(op, klass, float_only, dtypes)

    def instr(dst, src, *args, isSetMask: bool = True) -> None:
        plan = _issued(op, klass, build, kernel_point(), (dst, src), args, isSetMask)
        if not context.computing():      # launch(..., numerics=False): timing only
            return
        plan.d.put(fn(plan.srcs[0].get()))
    instr.__name__ = op
    instr.__doc__ = f"``{op}(dst, src, count)``: elementwise {op.lower()} on UB."
    return instr


def _scalar(op: str, fn, klass: str = "simple", float_only: bool = False, dtypes: tuple | None = None):
    build = _one_source_build(op, klass, float_only, dtypes)

    def instr(dst, src, scalar, *args, isSetMask: bool = True) -> None:
        site = kernel_point()
        if dst.__class__ is not LocalTensor:
            _ub(dst, op, "dst", site)
        if scalar.__class__ is not float or dst.dtype.kind != "f":     # before the instruction has any effect
            scalar_arg(op, "scalar", scalar, dst.dtype, site)
        plan = _issued(op, klass, build, site, (dst, src), args, isSetMask)
        if not context.computing():      # launch(..., numerics=False): timing only
            return
        plan.d.put(fn(plan.srcs[0].get(), np.asarray(scalar).astype(dst.dtype)))
    instr.__name__ = op
    instr.__doc__ = f"``{op}(dst, src, scalar, count)``: elementwise with a scalar on UB."
    return instr


def _div(a, b):
    with np.errstate(all="ignore"):
        return np.divide(a, b)


Add = _binary("Add", np.add)
Sub = _binary("Sub", np.subtract)
Mul = _binary("Mul", np.multiply)
Div = _binary("Div", _div, "transcendental", float_only=True)
Max = _binary("Max", np.maximum)
Min = _binary("Min", np.minimum)
Adds = _scalar("Adds", np.add)
Muls = _scalar("Muls", np.multiply)
Maxs = _scalar("Maxs", np.maximum)
Mins = _scalar("Mins", np.minimum)
Exp = _unary("Exp", np.exp, "transcendental", float_only=True)
Ln = _unary("Ln", np.log, "transcendental", float_only=True)
Sqrt = _unary("Sqrt", np.sqrt, "transcendental", float_only=True)
Reciprocal = _unary("Reciprocal", lambda x: np.divide(np.ones((), x.dtype), x), "transcendental", float_only=True)
Abs = _unary("Abs", np.abs)
Relu = _unary("Relu", lambda x: np.maximum(x, np.zeros((), x.dtype)))
# "dst_i = src_i if src_i >= 0 else scalarValue x src_i" (LeakyRelu page); half and float on Atlas A2
LeakyRelu = _scalar("LeakyRelu", lambda x, a: np.where(x >= 0, x, np.multiply(x, a)), dtypes=dtypes_of("half", "float"))
LeakyRelu.__doc__ = "``LeakyRelu(dst, src, scalarValue, count)``: src where src >= 0, else scalarValue * src."


def _rsqrt(x: np.ndarray) -> np.ndarray:
    """1/sqrt(x) from the exact (float64) value, rounded once to the dtype."""
    with np.errstate(all="ignore"):
        return (1.0 / np.sqrt(x.astype(np.float64))).astype(x.dtype)


Rsqrt = _unary("Rsqrt", _rsqrt, "transcendental", dtypes=dtypes_of("half", "float"))   # Rsqrt page: half, float

# the shared machinery, for the instruction families in the sibling modules (bitwise, gather, reduce ...)
binary_instr, unary_instr, scalar_instr = _binary, _unary, _scalar
ub_operand, Access, issue, same_dtype = _ub, _Access, _issue, _same
stride, bank_operand = _stride, _bank_operand
check_repeat, lane_index = _check_repeat, _lane_index


def Axpy(dst, src, scalar, count) -> None:
    """``Axpy(dst, src, scalar, count)``: dst = src * scalar + dst (two roundings in the dtype).

    Axpy.md's A2 table also has a half src and scalar with a float dst (PAR 64): computed in float (src and the
    half scalar widened exactly, then a float multiply and a float add; the page gives no finer rounding)."""
    site = kernel_point()
    if count.__class__ is not int:
        count = _count("Axpy", count, site)
    scalar_arg("Axpy", "scalar", scalar, getattr(dst, "dtype", np.dtype(np.float32)), site)
    plan = _planned("Axpy", count, (dst, src), _axpy_plan, site, dst, src, count)
    _run(plan, "Axpy", "simple", site)
    count_form_done(context.current)
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    d = plan.d
    s = np.asarray(scalar).astype(src.dtype)
    x = plan.srcs[0].get()
    if x.dtype != dst.dtype:            # half src, float dst
        x, s = x.astype(dst.dtype), s.astype(dst.dtype)
    d.put(np.add(np.multiply(x, s), d.get()))


def _axpy_plan(site, dst, src, count) -> _VecPlan:
    _ub(dst, "Axpy", "dst", site)
    _ub(src, "Axpy", "src", site)
    if not (src.dtype == np.float16 and dst.dtype == np.float32):      # Axpy.md: half src -> float dst
        _same("Axpy", site, dst, src)
    require_dtype("Axpy", dst, None, site)
    d, (a,), reps = _accesses("Axpy", site, dst, [src], (count,))
    return _VecPlan(current_core(), d, [a], reps, "simple", extra_reads=(d.region,))


def Duplicate(dst, scalar, *args, isSetMask: bool = True) -> None:
    """``Duplicate(dst, scalar, count)`` (or mask, repeatTimes, dstBlkStride, dstRepStride): fill."""
    site = kernel_point()
    _ub(dst, "Duplicate", "dst", site)
    require_dtype("Duplicate", dst, None, site)
    scalar_arg("Duplicate", "scalar", scalar, dst.dtype, site)
    core = current_core()
    if len(args) == 4:
        mask, repeat, blk, rep = args
        args = (mask, repeat, UnaryRepeatParams(blk, 1, rep, 8), isSetMask)
    elif len(args) == 1 and isSetMask is not True:
        args = (_register_count("Duplicate", core, isSetMask, site),)
    d, _, reps = _accesses("Duplicate", site, dst, [], args)
    if len(args) == 1 and isSetMask is True:
        count_form_done(core)
    _issue("Duplicate", "simple", d, [], reps, site)
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    d.put(np.full(d.n, scalar, dst.dtype))


def Cast(dst, src, round_mode: RoundMode, *args) -> None:
    """``Cast(dst, src, RoundMode, count)`` or ``Cast(dst, src, RoundMode, mask, repeatTime, UnaryRepeatParams)``.

    Only the (src, dst, RoundMode) triples of the Atlas A2 table convert (conversion.py). The repeat form:
    "数据类型转换的mask会按照输入和输出类型中sizeof(dtype)较大的来筛选" (one repeat covers 256 bytes of the wider
    type; each operand's blocks and strides count its own 32-byte blocks). int4b_t: "count必须为偶数".
    """
    site = kernel_point()
    _ub(dst, "Cast", "dst", site)
    _ub(src, "Cast", "src", site)
    if not isinstance(round_mode, RoundMode):
        raise ArgumentError(f"Cast: round mode must be a RoundMode, got {round_mode!r}",
                            fix="e.g. «RoundMode.CAST_NONE» or «RoundMode.CAST_RINT»", site=site)
    sd, dd = src.dtype, dst.dtype
    check_cast(sd, dd, round_mode, site)
    wide = max(sd.itemsize, dd.itemsize)
    if len(args) == 1:
        n = _count("Cast", args[0], site, dst, src)
        if (sd is int4b_t or dd is int4b_t) and n % 2:
            raise ArgumentError(f"Cast: count {n} is odd, but int4b_t packs two elements per byte (count必须为偶数)",
                                fix="convert an even number of elements", site=site)
        d = _Access(dst.ReinterpretCast(np.uint8), n // 2, "Cast", site) if dd is int4b_t else _Access(dst, n, "Cast",
                                                                                                        site)
        a = _Access(src.ReinterpretCast(np.uint8), n // 2, "Cast", site) if sd is int4b_t else _Access(src, n, "Cast",
                                                                                                         site)
        reps = timing.vector_repeats(n, wide)
    elif len(args) == 3:
        mask, repeat, params = args
        if not isinstance(params, UnaryRepeatParams):
            raise ArgumentError(f"Cast: the repeat form takes a UnaryRepeatParams, got {type(params).__name__}",
                                fix="Cast(dst, src, mode, mask, repeatTimes, «UnaryRepeatParams(1, 1, 8, 4)»)", site=site)
        key = normal_key("Cast", current_core(), mask, wide, True, site)
        r = _check_repeat("Cast", repeat, site, current_core().chip.vec_max_repeat)
        d_el = _cast_lanes(_per_block(dd), wide, key, r, _stride("Cast", params, "dstBlkStride", site),
                           _stride("Cast", params, "dstRepStride", site))
        s_el = _cast_lanes(_per_block(sd), wide, key, r, _stride("Cast", params, "srcBlkStride", site),
                           _stride("Cast", params, "srcRepStride", site))
        d = _Int4Access(dst, d_el, site) if dd is int4b_t else _Access(dst, d_el, "Cast", site)
        a = _Int4Access(src, s_el, site) if sd is int4b_t else _Access(src, s_el, "Cast", site)
        n, reps = d_el.size, max(r, 1)
    else:
        raise ArgumentError("Cast: pass either a count, or mask, repeatTimes and UnaryRepeatParams",
                            fix="Cast(dst, src, mode, count)", site=site)
    shared = _cast_overlap(dst, src, d, a, n, wide, len(args) == 3 and reps)
    _issue("Cast", "cast", d, [a], reps, site)
    if not context.computing():      # launch(..., numerics=False): timing only
        if shared is not None:
            shared.report(None, site)
        return
    x = a.nibbles() if isinstance(a, _Int4Access) else unpack_int4(a.get(), n) if sd is int4b_t else a.get()
    if sd == np.int32 and dd == np.float16:     # s322fp16: x * DEQSCALE, rounded once (the mode has no effect)
        v = cast_values(x.astype(np.float64) * np.float64(deq_scale(site)), dd, RoundMode.CAST_RINT)
    elif dd is int4b_t:                          # round, saturate to -8..7, pack
        v = np.clip(cast_values(x, int8, round_mode), -8, 7)
    else:
        v = cast_values(x, dd, round_mode)
    if shared is not None:                       # raises, or warns when these bytes hide it (api/ops/overlap.py)
        shared.report(None if dd is int4b_t else np.asarray(v, dd).view(np.uint8), site)
    if dd is not int4b_t:
        d.put(v)
    elif isinstance(d, _Int4Access):
        d.put_nibbles(v)
    else:
        d.put(pack_int4(v))


def _cast_overlap(dst, src, d, a, n: int, wide: int, repeats) -> overlap.Overlap | None:
    """Cast's operands sharing bytes against the address-overlap rules (api/ops/overlap.py), or None. One span
    comparison unless the operands' spans meet."""
    if dst.tier is not src.tier:
        return None
    if not repeats:                              # count form: lanes 0..n-1, 256 // wide of them per iteration
        if not overlap.spans_meet(dst, src, dst.addr, dst.addr + _nbytes(dst.dtype, n),
                                  src.addr, src.addr + _nbytes(src.dtype, n)):
            return None
        lanes = np.arange(n)
        return overlap.check(overlap.Operand(dst, lanes, lanes // (256 // wide)),
                             overlap.Operand(src, lanes, lanes // (256 // wide)))
    d_el, s_el = (x.el if isinstance(x, _Int4Access) else x.idx for x in (d, a))
    if not d_el.size or not overlap.spans_meet(dst, src, *_el_span(dst, d_el), *_el_span(src, s_el)):
        return None
    iters = np.arange(d_el.size) // (d_el.size // repeats)     # the same active lanes in every repeat
    return overlap.check(overlap.Operand(dst, d_el, iters), overlap.Operand(src, s_el, iters))


def _nbytes(dtype, n: int) -> int:
    return (n + 1) // 2 if dtype is int4b_t else n * dtype.itemsize


def _el_span(t, el: np.ndarray) -> tuple[int, int]:
    """The byte span [lo, hi) of elements ``el`` of ``t`` (nibbles for int4b_t)."""
    if t.dtype is int4b_t:
        return t.addr + int(el.min()) // 2, t.addr + int(el.max()) // 2 + 1
    return t.addr + int(el.min()) * t.dtype.itemsize, t.addr + (int(el.max()) + 1) * t.dtype.itemsize


def _per_block(dtype: np.dtype) -> int:
    """Elements of ``dtype`` in a 32-byte block (int4b_t: 64, two per byte)."""
    return 64 if dtype is int4b_t else 32 // dtype.itemsize


class _Int4Access(_Access):
    """An int4b_t operand of the repeat-form Cast: its element offsets ``el`` are nibbles (element 2k in the low
    nibble of byte k, as in the count form); the access covers the bytes they live in."""

    __slots__ = ("el",)

    def __init__(self, t: LocalTensor, el: np.ndarray, site):
        self.el = el
        super().__init__(t.ReinterpretCast(np.uint8), np.unique(el // 2), "Cast", site)

    def _bytes(self) -> tuple[np.ndarray, np.ndarray]:
        return self.t.tier.arena.view(np.uint8), self.t.addr + self.el // 2

    def nibbles(self) -> np.ndarray:
        """The int4 values at ``el``, sign-extended to int8."""
        arena, at = self._bytes()
        b = arena[at].astype(np.int16)
        v = np.where(self.el % 2, b >> 4, b & 0x0F)
        return np.where(v > 7, v - 16, v).astype(np.int8)

    def put_nibbles(self, v: np.ndarray) -> None:
        """Write int4 values (-8..7) at ``el``, leaving the other nibble of each byte as it was."""
        arena, at = self._bytes()
        v = v.astype(np.int16) & 0x0F
        for odd, keep, shift in ((0, 0xF0, 0), (1, 0x0F, 4)):
            sel = self.el % 2 == odd
            arena[at[sel]] = (arena[at[sel]] & keep) | (v[sel] << shift).astype(np.uint8)


@lru_cache(maxsize=1024)
def _cast_lanes(epb: int, wide: int, mask_key, repeat: int, blk: int, rep: int) -> np.ndarray:
    """Element offsets of one Cast operand's active lanes: 256 // ``wide`` lanes per repeat, ``epb`` per block."""
    j = np.flatnonzero(lane_mask(mask_key, 256 // wide))
    r = np.arange(repeat)[:, None] * rep * epb
    return (r + (j // epb) * blk * epb + j % epb).reshape(-1)


def cast_values(x: np.ndarray, dtype, mode: RoundMode) -> np.ndarray:
    """Reference conversion used by Cast (and by tests).

    To an integer: round by ``mode`` (CAST_NONE and CAST_RINT: half to even), saturate to the
    range, NaN gives 0. To a float (from a float or an integer): one correct rounding of the
    exact value by ``mode``; CAST_NONE is CAST_RINT.
    """
    dtype = as_dtype(dtype)
    if not is_float(dtype):
        f = x.astype(np.float64)
        rounded = {RoundMode.CAST_FLOOR: np.floor, RoundMode.CAST_CEIL: np.ceil, RoundMode.CAST_TRUNC: np.trunc,
                   RoundMode.CAST_ROUND: lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)}.get(mode, np.rint)(f)
        info = np.iinfo(dtype)
        return np.clip(np.nan_to_num(rounded), info.min, info.max).astype(dtype)
    if (mode is RoundMode.CAST_NONE or mode is RoundMode.CAST_RINT) and is_float(x.dtype):
        return x.astype(dtype)      # between these floats the IEEE cast is one rounding to nearest even
    return _round_float(x, dtype, mode)


def _round_float(x: np.ndarray, dtype: np.dtype, mode: RoundMode) -> np.ndarray:
    """``x`` rounded once to the float ``dtype`` by ``mode``, from its exact (float64) value.

    numpy's own cast gives the nearest value, except that an integer source may be rounded
    twice (int -> float32 -> bfloat16); so take its two neighbours ``lo <= x <= hi`` and choose.
    """
    wide = x.astype(np.float64)
    r0 = x.astype(dtype) if is_float(x.dtype) else wide.astype(dtype)
    r0w = r0.astype(np.float64)
    lo = np.where(r0w <= wide, r0, np.nextafter(r0, np.array(-np.inf, dtype))).astype(dtype)
    hi = np.where(r0w >= wide, r0, np.nextafter(r0, np.array(np.inf, dtype))).astype(dtype)
    if mode == RoundMode.CAST_FLOOR:
        return lo
    if mode == RoundMode.CAST_CEIL:
        return hi
    toward_zero = np.where(wide >= 0, lo, hi).astype(dtype)
    if mode == RoundMode.CAST_TRUNC:
        return toward_zero
    if mode == RoundMode.CAST_ODD:       # von Neumann: truncate, then set the last mantissa bit when inexact
        bits = toward_zero.view(np.uint16 if dtype.itemsize == 2 else np.uint32).copy()
        bits[(toward_zero.astype(np.float64) != wide) & np.isfinite(wide)] |= 1
        return bits.view(dtype)
    below, above = wide - lo.astype(np.float64), hi.astype(np.float64) - wide
    if mode == RoundMode.CAST_ROUND:     # ties away from zero
        tie = np.where(wide >= 0, hi, lo)
    else:                                # CAST_RINT / CAST_NONE: ties to the even mantissa
        tie = np.where(lo.view(np.uint16 if dtype.itemsize == 2 else np.uint32) & 1, hi, lo)
    nearest = np.where(below < above, lo, np.where(above < below, hi, tie))
    return np.where(np.isinf(r0) | np.isnan(r0), r0, nearest).astype(dtype)   # overflow as the IEEE cast


_CMP = {CMPMODE.LT: np.less, CMPMODE.GT: np.greater, CMPMODE.EQ: np.equal, CMPMODE.LE: np.less_equal,
        CMPMODE.GE: np.greater_equal, CMPMODE.NE: np.not_equal}


def compare_to_tensor(dst, src0, src1, cmpMode: CMPMODE, count) -> None:
    """``Compare(dst, src0, src1, CMPMODE, count)``: one result bit per element, packed into uint8 ``dst``.

    Compare.md: "设置count时，需要保证count个元素所占空间256字节对齐。未对齐部分元素不参与计算，仅完整对齐块有效" (only
    whole 256-byte repeats are compared; the tail's bits are not written) and "当参数count ... 取值为0时 ... 该接口将被
    视为NOP"; on Atlas A2 T is half, float (every CMPMODE) or int32_t (CMPMODE::EQ only).
    """
    site = kernel_point()
    for role, t in (("dst", dst), ("src0", src0), ("src1", src1)):
        _ub(t, "Compare", role, site)
    _same("Compare", site, src0, src1)
    member("Compare", "cmpMode", cmpMode, CMPMODE, site)
    dt = src0.dtype
    if dt not in _CMP_DTYPES or (dt == np.int32 and cmpMode is not CMPMODE.EQ):
        raise DtypeError(f"Compare: {ascend_name(dt)} with CMPMODE.{cmpMode.name} is not in the Atlas A2 table (half "
                         "and float: every CMPMODE; int32_t: EQ only)",
                         fix="Cast the operands to half or float first", site=site)
    n = _count("Compare", count, site, src0, src1)
    lanes = 256 // dt.itemsize
    n = n // lanes * lanes                  # the unaligned tail takes no part
    if not n:
        return
    nbytes_out = n // 8
    if dst.nbytes < nbytes_out:
        raise OutOfBoundsError(f"Compare: {n} result bits need {nbytes_out} bytes but dst holds {dst.nbytes}",
                               fix="allocate count/8 bytes for the mask", site=site)
    out = dst.ReinterpretCast(np.uint8)
    d = _Access(out, nbytes_out, "Compare", site)
    a, b = _Access(src0, n, "Compare", site), _Access(src1, n, "Compare", site)
    _issue("Compare", "simple", d, [a, b], timing.vector_repeats(n, dt.itemsize), site)
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    d.put(np.packbits(_CMP[cmpMode](a.get(), b.get()), bitorder="little"))


_CMP_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.int32))
compare_fns = _CMP
def Select(dst, selMask, src0, src1, selMode: SELMODE, *args) -> None:
    """``Select(dst, selMask, src0, src1, SELMODE, count)`` or ``(..., mask, repeatTime, BinaryRepeatParams)``.

    src0 where the selMask bit is 1, else src1 (a scalar in VSEL_TENSOR_SCALAR_MODE). Select.md: mode 0 "selMask的
    有效位数限制为256/sizeof(T)，多轮迭代均使用相同的selMask有效数值" (every repeat reuses the same first
    256/sizeof(T) bits); modes 1 and 2 "每次迭代使用selMask的位数为256/sizeof(T)，多轮迭代连续消耗selMask的不同部分";
    in the repeat form, lanes the mask switches off keep dst's value ("无效位...则保持dst原始值").
    """
    site = kernel_point()
    for role, t in (("dst", dst), ("selMask", selMask), ("src0", src0)):
        _ub(t, "Select", role, site)
    member("Select", "selMode", selMode, SELMODE, site)
    scalar_mode = selMode is SELMODE.VSEL_TENSOR_SCALAR_MODE
    if scalar_mode:
        scalar_arg("Select", "src1 (the scalar of VSEL_TENSOR_SCALAR_MODE)", src1, dst.dtype, site)
    srcs = [src0] if scalar_mode else [src0, _ub(src1, "Select", "src1", site)]
    _same("Select", site, dst, *srcs)
    require_dtype("Select", dst, None, site)
    lanes = 256 // dst.dtype.itemsize
    if len(args) == 1:
        d, acc, reps = _accesses("Select", site, dst, srcs, args)
        bit = np.arange(d.n)
    else:
        if scalar_mode and len(args) == 3 and isinstance(args[2], BinaryRepeatParams):    # src1 is the scalar
            p = args[2]
            args = (args[0], args[1], UnaryRepeatParams(p.dstBlkStride, p.src0BlkStride, p.dstRepStride,
                                                        p.src0RepStride))
        d, acc, reps = _accesses("Select", site, dst, srcs, args)
        key = normal_key("Select", current_core(), args[0], dst.dtype.itemsize, True, site)
        bit = _lane_index(dst.dtype.itemsize, key, _check_repeat("Select", args[1], site, 255), 1, 8)
    if selMode is SELMODE.VSEL_CMPMASK_SPR:
        bit = bit % lanes                   # every repeat: the same first 256/sizeof(T) bits
    nbytes = int(bit.max()) // 8 + 1 if bit.size else 0
    if nbytes > selMask.nbytes:
        raise OutOfBoundsError(f"Select: {selMode.name} reads selMask bits 0..{int(bit.max())} ({nbytes} bytes) but "
                               f"selMask holds {selMask.nbytes} bytes", fix="make selMask one bit per selected "
                               "element (mode 0: 256/sizeof(T) bits, reused by every repeat)", site=site)
    m = _Access(selMask.ReinterpretCast(np.uint8), nbytes, "Select", site)
    _issue("Select", "simple", d, acc + [m], reps, site)
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    if not bit.size:
        return
    bits = np.unpackbits(m.get(), bitorder="little")[bit].astype(bool)
    other = np.asarray(src1).astype(dst.dtype) if scalar_mode else acc[1].get()
    d.put(np.where(bits, acc[0].get(), other))


# ----------------------------------------------------------------------------- reductions
MAX_REDUCE_REPEAT = 2**31 - 1     # ReduceSum/Max/Min repeatTime: "保证不超过int32_t的最大值即可" (ReduceSum.md)
MAX_REDUCE_STRIDE = 2**16 - 1     # their srcRepStride: "取值范围为[0, 2^16-1]"


def _reduce_lanes(op: str, src, first, more: tuple, site) -> tuple[np.ndarray | None, _Access | None, object]:
    """(``on[repeats, lanes]``, the src access, calIndex) of ReduceSum/Max/Min: the count form ``(count[,
    calIndex])`` or the mask/repeat form ``(mask, repeatTime, srcRepStride[, calIndex])``; ``on`` is None for
    repeatTime 0 (a NOP on Atlas A2: "不会执行计算操作，不会对目的操作数进行写入")."""
    lanes = 256 // src.dtype.itemsize
    if len(more) <= 1:
        n = _count(op, first, site, src)
        if n == 0:
            raise ArgumentError(f"{op}: count must be at least 1", fix="reduce a non-empty range", site=site)
        return count_lanes(n, lanes), _Access(src, n, op, site), (more[0] if more else None)
    if len(more) > 3:
        raise ArgumentError(f"{op}: takes (dst, src, sharedTmpBuffer, count[, calIndex]) or (dst, src, "
                            f"sharedTmpBuffer, mask, repeatTime, srcRepStride[, calIndex]), got {3 + 1 + len(more)} "
                            "arguments", fix="drop the extra arguments", site=site)
    r = integer(op, "repeatTime", more[0], site, 0, MAX_REDUCE_REPEAT)
    rep = integer(op, "srcRepStride", more[1], site, 0, MAX_REDUCE_STRIDE)
    key = normal_key(op, current_core(), first, src.dtype.itemsize, True, site)
    cal = more[2] if len(more) == 3 else None
    if r == 0:
        return None, None, cal
    on = np.broadcast_to(lane_mask(key, lanes), (r, lanes))
    return on, _Access(src, _lane_index(src.dtype.itemsize, key, r, 1, rep), op, site), cal


def _reduce(op: str, pick=None):
    with_index = pick is not None

    def instr(dst, src, workLocal, count, *more, calIndex: bool = False) -> None:
        site = kernel_point()
        # dst needs element alignment only: 2 elements with the index (ReduceMax/Min), 1 for ReduceSum
        # (the ReduceMax API page: 4 bytes for half, 8 for float); src and workLocal 32 bytes
        _ub(dst, op, "dst", site, align=dst.dtype.itemsize * (2 if with_index else 1)
            if isinstance(dst, LocalTensor) else 32)
        _ub(src, op, "src", site)
        _ub(workLocal, op, "workLocal", site)
        _same(op, site, dst, src)
        require_dtype(op, src, None, site)
        on, a, positional = _reduce_lanes(op, src, count, more, site)
        count_form = len(more) <= 1
        calIndex = calIndex if positional is None else positional
        if calIndex.__class__ is not bool:
            raise ArgumentError(f"{op}: calIndex must be «True» or «False», got {calIndex!r}",
                                fix="pass «calIndex=True|calIndex true» to also get the index (the mask/repeat "
                                    "form takes mask, repeatTime and srcRepStride before it)", site=site)
        if on is None:
            return                                      # repeatTime 0: a NOP
        no_elements(op, current_core(), int(on.sum()), site)
        out_n = 2 if (with_index and calIndex) else 1
        top = (on.shape[0] - 1) * on.shape[1] + int(np.flatnonzero(on[-1])[-1])     # the largest index possible
        if out_n == 2 and dst.dtype.itemsize == 2 and top > 65535:
            raise ArgumentError(
                f"{op}: with calIndex on half the index is a uint16_t, but these {on.shape[0]} repeat(s) of "
                f"{on.shape[1]} lanes reach index {top}: \"只支持获取最大不超过65535（uint16_t能表示的最大值）的索引值\"",
                fix="reduce at most 65536 half elements per call, or use float", site=site)
        _count(op, out_n, site, dst)
        d = _Access(dst, out_n, op, site)
        w = _Access(workLocal, min(workLocal.size, max(1, a.n)), op, site)
        reps = timing.vector_repeats(a.n, src.dtype.itemsize) if count_form else on.shape[0]
        _issue(op, "reduction", d, [a], reps, site)
        if count_form:
            count_form_done(current_core())
        if not context.computing():      # launch(..., numerics=False): timing only
            return
        tier, g = w.region
        for lo, hi in runs(g):   # the work buffer is scratch the instruction fills
            tier.shadow.mark_init(lo, hi)
        vals = a.get()
        out = np.zeros(out_n, dst.dtype)
        if pick is None:        # ReduceSum.md on Atlas A2: count form 方式一, mask/repeat form 方式二
            out[0] = count_sum(vals) if count_form else repeat_tree_sum(vals, on)
            if count_form:
                current_core().regs["reduce_sum"] = out[0]      # GetReduceRepeatSumSpr reads it
        else:
            out[0], idx = overall_extreme(vals, on, pick)
            if out_n == 2:       # the index of the extreme value, stored in the bits of a dst element
                out[1] = np.array([idx], np.uint32 if dst.dtype.itemsize == 4 else np.uint16).view(dst.dtype)[0]
        d.put(out)
    instr.__name__ = op
    instr.__doc__ = (f"``{op}(dst, src, sharedTmpBuffer, count{'' if pick is None else ', calIndex=False'})`` or "
                     f"``{op}(dst, src, sharedTmpBuffer, mask, repeatTime, srcRepStride"
                     f"{'' if pick is None else ', calIndex=False'})``: dst[0] = the {op[6:].lower()} of src"
                     f"{'' if pick is None else ', dst[1] its index (calIndex)'}.")
    return instr


ReduceMax = _reduce("ReduceMax", np.max)
ReduceMin = _reduce("ReduceMin", np.min)
ReduceSum = _reduce("ReduceSum")


def GetReduceRepeatSumSpr(dtype=None):
    """``GetReduceRepeatSumSpr<T>()``: the result of the last count-form ReduceSum ("计算结果以全局变量形式存储，可以
    随时调用获取"; "仅支持配合ReduceSum的tensor前n个数据连续计算接口使用", GetReduceRepeatSumSpr(ISASI).md)."""
    site = kernel_point()
    core = current_core()
    value = core.regs.get("reduce_sum")
    if value is None:
        if not context.computing():
            return np.zeros((), dtype or np.float16)[()]
        raise ArgumentError("GetReduceRepeatSumSpr: no count-form ReduceSum ran on this core before it",
                            fix="call «ReduceSum(dst, src, sharedTmpBuffer, count)|ReduceSum<T>(dst, src, "
                                "sharedTmpBuffer, count)» (the count form) first", site=site)
    want = value.dtype if dtype is None else as_dtype(dtype)
    if want != value.dtype:
        raise DtypeError(f"GetReduceRepeatSumSpr<{ascend_name(want)}>: the last ReduceSum summed "
                         f"{ascend_name(value.dtype)}", fix=f"read it as «{ascend_name(value.dtype)}»", site=site)
    return value


class ReduceOrder(enum.Enum):
    """What WholeReduceMax/Min write per repeat: value and index (the default), or one of them."""

    ORDER_VALUE_INDEX = 0
    ORDER_INDEX_VALUE = 1
    ORDER_ONLY_VALUE = 2
    ORDER_ONLY_INDEX = 3


def _index_bits(idx: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Lane indices stored in ``dtype`` slots as raw unsigned bits (read back with ReinterpretCast)."""
    return idx.astype(np.uint16 if dtype.itemsize == 2 else np.uint32).view(dtype)


def reduce_lanes(op: str, core, src, mask, repeatTimes, set_mask, blk: int, rep: int, site) -> tuple[Lanes, _Access]:
    """A repeat-form reduction's lanes (Normal mask, or Counter count) and its src access, in lane order."""
    r = _check_repeat(op, repeatTimes, site, core.chip.vec_max_repeat)
    lanes = repeat_lanes(op, core, mask, src, r, set_mask, blk, rep, site)
    isz = src.dtype.itemsize
    idx = (_lane_index(isz, lanes.key, r, blk, rep) if lanes.key is not None else
           _counter_index(isz, lanes.selected, blk, rep))
    return lanes, _Access(src, idx, op, site)


def _whole(op: str, pick=None):
    def instr(dst, src, mask, repeatTimes: int, dstRepStride: int = 1, srcBlkStride: int = 1,
              srcRepStride: int = 8, order: ReduceOrder = ReduceOrder.ORDER_VALUE_INDEX, *,
              isSetMask: bool = True) -> None:
        site = kernel_point()
        member(op, "order", order, ReduceOrder, site)
        # dst alignment (ReduceRepeat page, table 3): the element size for a sum or ORDER_ONLY_VALUE, 4 bytes for
        # ORDER_ONLY_INDEX, a (value, index) pair otherwise
        isz = getattr(dst, "dtype", np.dtype(np.float32)).itemsize
        _ub(dst, op, "dst", site, align=isz if pick is None or order == ReduceOrder.ORDER_ONLY_VALUE else
            4 if order == ReduceOrder.ORDER_ONLY_INDEX else 2 * isz)
        _ub(src, op, "src", site)
        _same(op, site, dst, src)
        require_dtype(op, src, None, site)
        dstRepStride = integer(op, "dstRepStride", dstRepStride, site, 0, MAX_STRIDE)
        srcBlkStride = integer(op, "srcBlkStride", srcBlkStride, site, 0, MAX_STRIDE)
        srcRepStride = integer(op, "srcRepStride", srcRepStride, site, 0, MAX_STRIDE)
        core = current_core()
        lanes, a = reduce_lanes(op, core, src, mask, repeatTimes, isSetMask, srcBlkStride, srcRepStride, site)
        no_elements(op, core, lanes.selected, site)
        r, on = lanes.repeats, lanes.on
        if pick is None or order == ReduceOrder.ORDER_ONLY_VALUE:     # one value per repeat
            out, slots = dst, (0,)
            step = int(dstRepStride)
        elif order == ReduceOrder.ORDER_ONLY_INDEX:                   # one uint32 index per repeat
            out, slots = dst.ReinterpretCast(np.uint32), (0,)
            step = int(dstRepStride)
        else:                                                         # (value, index) pairs
            out, slots = dst, (0, 1)
            step = 2 * int(dstRepStride)
        pos = (np.arange(r, dtype=np.int64)[:, None] * step + np.array(slots)).reshape(-1)
        if core.vmode and r:
            what = "one value" if len(slots) == 1 else "a (value, index) pair"
            check_counter_dst(op, out, lanes.selected, r,
                              f"{what} per repeat at dstRepStride {dstRepStride}", int(pos[-1]), site)
        d = _Access(out, pos, op, site)
        _issue(op, "reduction", d, [a], max(r, 1), site)
        if not context.computing():      # launch(..., numerics=False): timing only
            return
        if not r:
            return
        if pick is None:
            d.put(tree_sum(a.get(), on))
            return
        value, index = extremes(a.get(), on, pick)
        if order == ReduceOrder.ORDER_ONLY_VALUE:
            d.put(value)
            return
        if order == ReduceOrder.ORDER_ONLY_INDEX:
            d.put(index.astype(np.uint32))
            return
        pair = (value, _index_bits(index, dst.dtype))
        if order == ReduceOrder.ORDER_INDEX_VALUE:
            pair = pair[::-1]
        d.put(np.stack(pair, axis=1).reshape(-1))
    instr.__name__ = op
    what = ("the sum (a binary tree in the dtype)" if pick is None else
            f"the {op[11:].lower()} and its lane index (``order``)")
    instr.__doc__ = (f"``{op}(dst, src, mask, repeatTimes, dstRepStride, srcBlkStride, srcRepStride"
                     f"{'' if pick is None else ', order'})``: {what} of the masked lanes of each repeat "
                     "(Normal mode), or of ``count`` elements in whole repeats (Counter mode).")
    return instr


WholeReduceSum = _whole("WholeReduceSum")
WholeReduceMax = _whole("WholeReduceMax", np.max)
WholeReduceMin = _whole("WholeReduceMin", np.min)


__all__ = ["Add", "Sub", "Mul", "Div", "Max", "Min", "Adds", "Muls", "Maxs", "Mins", "Exp", "Ln", "Sqrt",
           "Reciprocal", "Abs", "Relu", "LeakyRelu", "Rsqrt", "Axpy", "Duplicate", "Cast", "Select",
           "ReduceMax", "ReduceMin",
           "ReduceSum", "GetReduceRepeatSumSpr", "WholeReduceSum", "WholeReduceMax", "WholeReduceMin", "ReduceOrder", "BinaryRepeatParams",
           "UnaryRepeatParams", "RoundMode", "CMPMODE", "SELMODE", "cast_values", "as_dtype"]
