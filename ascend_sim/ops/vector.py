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

from .. import timing
from ..core import V, region
from ..dtypes import ascend_name, as_dtype, is_float
from ..errors import ArgumentError, DtypeError, OutOfBoundsError, PositionError, caller_site
from ..memory import GRANULE, LocalTensor
from ..runtime import current_core


@dataclass
class BinaryRepeatParams:
    dstBlkStride: int = 1
    src0BlkStride: int = 1
    src1BlkStride: int = 1
    dstRepStride: int = 8
    src0RepStride: int = 8
    src1RepStride: int = 8


@dataclass
class UnaryRepeatParams:
    dstBlkStride: int = 1
    srcBlkStride: int = 1
    dstRepStride: int = 8
    srcRepStride: int = 8


class RoundMode(enum.Enum):
    CAST_NONE = "none"      # float->float: round to nearest even; float->int: round to nearest even
    CAST_RINT = "rint"      # round half to even
    CAST_FLOOR = "floor"
    CAST_CEIL = "ceil"
    CAST_ROUND = "round"    # round half away from zero
    CAST_TRUNC = "trunc"
    CAST_ODD = "odd"        # von Neumann rounding (float narrowing only)


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
def _ub(t, op: str, role: str, site) -> LocalTensor:
    if not isinstance(t, LocalTensor):
        raise PositionError(f"{op}: {role} is a {type(t).__name__}; vector instructions work on UB LocalTensors only",
                            fix="DataCopy the data from GM into a VECIN tensor first", site=site)
    if t.tier.name != "UB":
        raise PositionError(f"{op}: {role} lives in {t.tier.name} (TPosition.{t.position.name}); the vector unit "
                            "reads and writes UB only", fix="use a VECIN/VECOUT/VECCALC tensor", site=site)
    if t.addr % 32:
        raise ArgumentError(f"{op}: {role} starts at UB+{t.addr}, not 32-byte aligned ({t.addr} % 32 = {t.addr % 32})",
                            fix="offset sub-tensors by a multiple of 32 bytes "
                                f"({32 // t.dtype.itemsize} {ascend_name(t.dtype)} elements)", site=site)
    return t


def _same(op: str, site, *ts: LocalTensor) -> None:
    d = ts[0].dtype
    for t in ts[1:]:
        if t.dtype != d:
            raise DtypeError(f"{op}: operands mix {ascend_name(d)} and {ascend_name(t.dtype)}",
                             fix="Cast one operand so that all have the same dtype", site=site)


def _count(op: str, count, site, *ts: LocalTensor) -> int:
    n = int(count)
    if n < 0:
        raise ArgumentError(f"{op}: count {n} is negative", fix="pass the number of elements", site=site)
    for t in ts:
        if n > t.size:
            raise OutOfBoundsError(f"{op}: count {n} exceeds the tensor's {t.size} {ascend_name(t.dtype)} elements "
                                   f"(UB+{t.addr}, {t.nbytes} bytes)",
                                   fix="lower the count or allocate a larger buffer", site=site)
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
    return idx[:, _lane_mask(mask_key, lanes)].reshape(-1)


def _lane_mask(mask_key, lanes: int) -> np.ndarray:
    if isinstance(mask_key, int):
        return np.arange(lanes) < mask_key
    lo, hi = mask_key
    bits = np.array([(lo >> i) & 1 for i in range(64)] + [(hi >> i) & 1 for i in range(64)], bool)
    return bits[:lanes]


def _mask_key(op: str, mask, itemsize: int, site):
    lanes = 256 // itemsize
    if isinstance(mask, (list, tuple)):
        if len(mask) != 2:
            raise ArgumentError(f"{op}: a bit mask is a list of two uint64, got {len(mask)} values",
                                fix="mask=[low64, high64]", site=site)
        lo, hi = (int(m) & (2**64 - 1) for m in mask)
        if lanes == 64 and hi:
            raise ArgumentError(f"{op}: {lanes} lanes for a {itemsize}-byte dtype, so mask[1] must be 0, got {hi:#x}",
                                fix="for 32-bit dtypes only mask[0] selects lanes", site=site)
        return (lo, hi)
    m = int(mask)
    if not 1 <= m <= lanes:
        raise ArgumentError(f"{op}: continuous mask {m} outside 1..{lanes} (lanes per 256-byte repeat for "
                            f"{itemsize}-byte elements)", fix=f"use a mask in 1..{lanes}", site=site)
    return m


def _check_repeat(op: str, repeat: int, site, max_repeat: int) -> int:
    r = int(repeat)
    if not 0 <= r <= max_repeat:
        raise ArgumentError(f"{op}: repeatTimes {r} outside 0..{max_repeat}",
                            fix="split the work into several instructions of at most 255 repeats", site=site)
    return r


class _Access:
    """One operand of an instruction: its element indices into the tier and its shadow region."""

    __slots__ = ("t", "idx", "region", "n")

    def __init__(self, t: LocalTensor, idx, op: str, site):
        self.t = t
        isz = t.dtype.itemsize
        if isinstance(idx, int):            # count form: first idx elements
            self.n = idx
            self.idx = None
            self.region = region(t, idx * isz)
        else:
            self.idx = idx
            self.n = idx.size
            if idx.size and int(idx.max()) >= t.size:
                raise OutOfBoundsError(
                    f"{op}: the repeat/stride pattern reaches element {int(idx.max())} but the tensor holds "
                    f"{t.size} {ascend_name(t.dtype)} elements", fix="lower repeatTimes or the strides", site=site)
            g = np.unique((t.addr + idx * isz) // GRANULE)
            self.region = (t.tier, g)

    def get(self) -> np.ndarray:
        if self.idx is None:
            return self.t.view(self.n)
        base = self.t.addr // self.t.dtype.itemsize
        return self.t.tier.arena.view(self.t.dtype)[base + self.idx]

    def put(self, values: np.ndarray) -> None:
        values = np.asarray(values).astype(self.t.dtype, copy=False)
        if self.idx is None:
            self.t.view(self.n)[...] = values
        else:
            base = self.t.addr // self.t.dtype.itemsize
            self.t.tier.arena.view(self.t.dtype)[base + self.idx] = values


def _accesses(op: str, site, dst, srcs, args) -> tuple[_Access, list[_Access], int]:
    """Resolve the count form (args = (count,)) or the repeat form (mask, repeat, params)."""
    if len(args) == 1:
        n = _count(op, args[0], site, dst, *srcs)
        return _Access(dst, n, op, site), [_Access(s, n, op, site) for s in srcs], timing.vector_repeats(
            n, dst.dtype.itemsize)
    if len(args) != 3:
        raise ArgumentError(f"{op}: pass either a count, or mask, repeatTimes and repeat params",
                            fix=f"{op}(dst, src..., count) or {op}(dst, src..., mask, repeatTimes, params)", site=site)
    mask, repeat, params = args
    isz = dst.dtype.itemsize
    key = _mask_key(op, mask, isz, site)
    r = _check_repeat(op, repeat, site, current_core().chip.vec_max_repeat)
    names = ["src0", "src1"] if len(srcs) == 2 else ["src"]
    d_idx = _lane_index(isz, key, r, params.dstBlkStride, params.dstRepStride)
    s_acc = []
    for name, s in zip(names, srcs):
        blk = getattr(params, f"{name}BlkStride")
        rep = getattr(params, f"{name}RepStride")
        s_acc.append(_Access(s, _lane_index(s.dtype.itemsize, key, r, blk, rep), op, site))
    return _Access(dst, d_idx, op, site), s_acc, max(r, 1)


def _issue(op: str, klass: str, dst: _Access, srcs: list[_Access], repeats: int, site, extra_reads=()):
    core = current_core()
    core.issue(V, op, timing.vector(core, repeats, klass), reads=[a.region for a in srcs] + list(extra_reads),
               writes=(dst.region,), nbytes=sum(a.n for a in srcs) * dst.t.dtype.itemsize + dst.n *
               dst.t.dtype.itemsize, src="UB", dst="UB", flops=dst.n, klass=klass, site=site)


def _require_float(op: str, t: LocalTensor, site) -> None:
    if not is_float(t.dtype):
        raise DtypeError(f"{op} supports half, float and bfloat16, not {ascend_name(t.dtype)}",
                         fix="Cast to half or float first", site=site)


# ----------------------------------------------------------------------------- families
def _binary(op: str, fn, klass: str = "simple", float_only: bool = False):
    def instr(dst, src0, src1, *args) -> None:
        site = caller_site()
        for role, t in (("dst", dst), ("src0", src0), ("src1", src1)):
            _ub(t, op, role, site)
        _same(op, site, dst, src0, src1)
        if float_only:
            _require_float(op, dst, site)
        d, (a, b), reps = _accesses(op, site, dst, [src0, src1], args)
        _issue(op, klass, d, [a, b], reps, site)
        d.put(fn(a.get(), b.get()))
    instr.__name__ = op
    instr.__doc__ = f"``{op}(dst, src0, src1, count)``: elementwise {op.lower()} on UB."
    return instr


def _unary(op: str, fn, klass: str = "simple", float_only: bool = False):
    def instr(dst, src, *args) -> None:
        site = caller_site()
        _ub(dst, op, "dst", site)
        _ub(src, op, "src", site)
        _same(op, site, dst, src)
        if float_only:
            _require_float(op, dst, site)
        d, (a,), reps = _accesses(op, site, dst, [src], args)
        _issue(op, klass, d, [a], reps, site)
        with np.errstate(all="ignore"):
            d.put(fn(a.get()))
    instr.__name__ = op
    instr.__doc__ = f"``{op}(dst, src, count)``: elementwise {op.lower()} on UB."
    return instr


def _scalar(op: str, fn, klass: str = "simple"):
    def instr(dst, src, scalar, *args) -> None:
        site = caller_site()
        _ub(dst, op, "dst", site)
        _ub(src, op, "src", site)
        _same(op, site, dst, src)
        d, (a,), reps = _accesses(op, site, dst, [src], args)
        _issue(op, klass, d, [a], reps, site)
        s = np.asarray(scalar).astype(dst.dtype)
        d.put(fn(a.get(), s))
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


def Axpy(dst, src, scalar, count) -> None:
    """``Axpy(dst, src, scalar, count)``: dst = src * scalar + dst (two roundings in the dtype)."""
    site = caller_site()
    _ub(dst, "Axpy", "dst", site)
    _ub(src, "Axpy", "src", site)
    _same("Axpy", site, dst, src)
    d, (a,), reps = _accesses("Axpy", site, dst, [src], (count,))
    _issue("Axpy", "simple", d, [a], reps, site, extra_reads=(d.region,))
    s = np.asarray(scalar).astype(dst.dtype)
    d.put(np.add(np.multiply(a.get(), s), d.get()))


def Duplicate(dst, scalar, *args) -> None:
    """``Duplicate(dst, scalar, count)`` (or mask, repeatTimes, dstBlkStride, dstRepStride): fill."""
    site = caller_site()
    _ub(dst, "Duplicate", "dst", site)
    if len(args) == 4:
        mask, repeat, blk, rep = args
        args = (mask, repeat, UnaryRepeatParams(blk, 1, rep, 8))
    d, _, reps = _accesses("Duplicate", site, dst, [], args)
    _issue("Duplicate", "simple", d, [], reps, site)
    d.put(np.full(d.n, scalar, dst.dtype))


def Cast(dst, src, round_mode: RoundMode, count) -> None:
    """``Cast(dst, src, RoundMode, count)``: convert dtypes with the given rounding."""
    site = caller_site()
    _ub(dst, "Cast", "dst", site)
    _ub(src, "Cast", "src", site)
    if not isinstance(round_mode, RoundMode):
        raise ArgumentError(f"Cast: round mode must be a RoundMode, got {round_mode!r}",
                            fix="e.g. RoundMode.CAST_NONE or RoundMode.CAST_RINT", site=site)
    n = _count("Cast", count, site, dst, src)
    d, a = _Access(dst, n, "Cast", site), _Access(src, n, "Cast", site)
    reps = timing.vector_repeats(n, max(dst.dtype.itemsize, src.dtype.itemsize))
    _issue("Cast", "cast", d, [a], reps, site)
    d.put(cast_values(a.get(), dst.dtype, round_mode))


def cast_values(x: np.ndarray, dtype, mode: RoundMode) -> np.ndarray:
    """Reference conversion used by Cast (and by tests)."""
    dtype = as_dtype(dtype)
    if not is_float(dtype):
        f = x.astype(np.float64)
        rounded = {RoundMode.CAST_FLOOR: np.floor, RoundMode.CAST_CEIL: np.ceil, RoundMode.CAST_TRUNC: np.trunc,
                   RoundMode.CAST_ROUND: lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)}.get(mode, np.rint)(f)
        info = np.iinfo(dtype)
        return np.clip(np.nan_to_num(rounded), info.min, info.max).astype(dtype)
    if not is_float(x.dtype) or np.dtype(dtype).itemsize >= x.dtype.itemsize and mode in (
            RoundMode.CAST_NONE, RoundMode.CAST_RINT):
        return x.astype(dtype)
    return _narrow_float(x, np.dtype(dtype), mode)


def _narrow_float(x: np.ndarray, dtype: np.dtype, mode: RoundMode) -> np.ndarray:
    wide = x.astype(np.float64)
    if mode in (RoundMode.CAST_NONE, RoundMode.CAST_RINT):
        return x.astype(dtype)
    if mode == RoundMode.CAST_ROUND:
        r = x.astype(dtype)
        ties = (r.astype(np.float64) != wide) & (np.abs(r.astype(np.float64) - wide) == np.abs(
            np.nextafter(r, _away(r, wide)).astype(np.float64) - wide))
        return np.where(ties, np.nextafter(r, _away(r, wide)), r).astype(dtype)
    r = x.astype(dtype)
    rw = r.astype(np.float64)
    if mode == RoundMode.CAST_FLOOR:
        return np.where(rw > wide, np.nextafter(r, np.array(-np.inf, dtype)), r).astype(dtype)
    if mode == RoundMode.CAST_CEIL:
        return np.where(rw < wide, np.nextafter(r, np.array(np.inf, dtype)), r).astype(dtype)
    toward_zero = np.where(np.abs(rw) > np.abs(wide), np.nextafter(r, np.zeros((), dtype)), r).astype(dtype)
    if mode == RoundMode.CAST_TRUNC:
        return toward_zero
    # CAST_ODD: truncate, then set the last mantissa bit when the result is inexact
    inexact = toward_zero.astype(np.float64) != wide
    bits = toward_zero.view(np.uint16 if dtype.itemsize == 2 else np.uint32).copy()
    bits[inexact & np.isfinite(wide)] |= 1
    return bits.view(dtype)


def _away(r: np.ndarray, wide: np.ndarray) -> np.ndarray:
    """Direction away from zero, in r's dtype."""
    return np.where(wide >= 0, np.array(np.inf, r.dtype), np.array(-np.inf, r.dtype)).astype(r.dtype)


_CMP = {CMPMODE.LT: np.less, CMPMODE.GT: np.greater, CMPMODE.EQ: np.equal, CMPMODE.LE: np.less_equal,
        CMPMODE.GE: np.greater_equal, CMPMODE.NE: np.not_equal}


def Compare(dst, src0, src1, cmpMode: CMPMODE, count) -> None:
    """``Compare(dst, src0, src1, CMPMODE, count)``: one result bit per element, packed into uint8 ``dst``."""
    site = caller_site()
    for role, t in (("dst", dst), ("src0", src0), ("src1", src1)):
        _ub(t, "Compare", role, site)
    _same("Compare", site, src0, src1)
    n = _count("Compare", count, site, src0, src1)
    if (n * src0.dtype.itemsize) % 256:
        raise ArgumentError(f"Compare: count {n} x {src0.dtype.itemsize} bytes = {n * src0.dtype.itemsize} is not a "
                            "multiple of 256 bytes (one repeat)", fix="pad the data to whole 256-byte repeats",
                            site=site)
    nbytes_out = -(-n // 8)
    if dst.nbytes < nbytes_out:
        raise OutOfBoundsError(f"Compare: {n} result bits need {nbytes_out} bytes but dst holds {dst.nbytes}",
                               fix="allocate count/8 bytes for the mask", site=site)
    out = dst.ReinterpretCast(np.uint8)
    d = _Access(out, nbytes_out, "Compare", site)
    a, b = _Access(src0, n, "Compare", site), _Access(src1, n, "Compare", site)
    _issue("Compare", "simple", d, [a, b], timing.vector_repeats(n, src0.dtype.itemsize), site)
    d.put(np.packbits(_CMP[cmpMode](a.get(), b.get()), bitorder="little"))


def Select(dst, selMask, src0, src1, selMode: SELMODE, count) -> None:
    """``Select(dst, selMask, src0, src1, SELMODE, count)``: src0 where the mask bit is 1, else src1.

    In VSEL_TENSOR_SCALAR_MODE ``src1`` is a scalar.
    """
    site = caller_site()
    for role, t in (("dst", dst), ("selMask", selMask), ("src0", src0)):
        _ub(t, "Select", role, site)
    scalar_mode = selMode == SELMODE.VSEL_TENSOR_SCALAR_MODE
    srcs = [src0] if scalar_mode else [src0, _ub(src1, "Select", "src1", site)]
    _same("Select", site, dst, *srcs)
    n = _count("Select", count, site, dst, *srcs)
    m = _Access(selMask.ReinterpretCast(np.uint8), -(-n // 8), "Select", site)
    d = _Access(dst, n, "Select", site)
    acc = [_Access(s, n, "Select", site) for s in srcs]
    _issue("Select", "simple", d, acc + [m], timing.vector_repeats(n, dst.dtype.itemsize), site)
    bits = np.unpackbits(m.get(), bitorder="little")[:n].astype(bool)
    other = np.asarray(src1).astype(dst.dtype) if scalar_mode else acc[1].get()
    d.put(np.where(bits, acc[0].get(), other))


# ----------------------------------------------------------------------------- reductions
def _reduce(op: str, fn, with_index: bool):
    def instr(dst, src, workLocal, count, calIndex: bool = False) -> None:
        site = caller_site()
        for role, t in (("dst", dst), ("src", src), ("workLocal", workLocal)):
            _ub(t, op, role, site)
        _same(op, site, dst, src)
        n = _count(op, count, site, src)
        if n == 0:
            raise ArgumentError(f"{op}: count must be at least 1", fix="reduce a non-empty range", site=site)
        out_n = 2 if (with_index and calIndex) else 1
        _count(op, out_n, site, dst)
        d, a = _Access(dst, out_n, op, site), _Access(src, n, op, site)
        w = _Access(workLocal, min(workLocal.size, max(1, n)), op, site)
        reps = timing.vector_repeats(n, src.dtype.itemsize)
        _issue(op, "reduction", d, [a], reps, site)
        core = current_core()
        tier, g = w.region
        tier.init[g] = True      # the work buffer is scratch the instruction fills
        vals = a.get()
        res = fn(vals)
        out = np.zeros(out_n, dst.dtype)
        out[0] = res
        if out_n == 2:
            idx = int(np.argmax(vals)) if op == "ReduceMax" else int(np.argmin(vals))
            out[1] = np.array([idx], np.uint32).view(dst.dtype)[0] if dst.dtype.itemsize == 4 else \
                np.array([idx], np.uint16).view(dst.dtype)[0]
        d.put(out)
        del core
    instr.__name__ = op
    instr.__doc__ = f"``{op}(dst, src, workLocal, count, calIndex=False)``: dst[0] = {op[6:].lower()} of src."
    return instr


def _sum_fp32(v: np.ndarray):
    """Sum accumulated in fp32 (integers in int64), rounded once to the dtype."""
    acc = np.float32 if is_float(v.dtype) else np.int64
    return np.sum(v, dtype=acc)


ReduceMax = _reduce("ReduceMax", np.max, True)
ReduceMin = _reduce("ReduceMin", np.min, True)
ReduceSum = _reduce("ReduceSum", _sum_fp32, False)


def _whole(op: str, fn):
    def instr(dst, src, mask, repeatTimes: int, dstRepStride: int = 1, srcBlkStride: int = 1,
              srcRepStride: int = 8) -> None:
        site = caller_site()
        _ub(dst, op, "dst", site)
        _ub(src, op, "src", site)
        _same(op, site, dst, src)
        isz = src.dtype.itemsize
        key = _mask_key(op, mask, isz, site)
        r = _check_repeat(op, repeatTimes, site, current_core().chip.vec_max_repeat)
        idx = _lane_index(isz, key, r, srcBlkStride, srcRepStride)
        a = _Access(src, idx, op, site)
        d = _Access(dst, np.arange(r, dtype=np.int64) * int(dstRepStride), op, site)
        _issue(op, "reduction", d, [a], max(r, 1), site)
        d.put(fn(a.get().reshape(r, -1)) if r else np.zeros(0, dst.dtype))
    instr.__name__ = op
    instr.__doc__ = (f"``{op}(dst, src, mask, repeatTimes, dstRepStride, srcBlkStride, srcRepStride)``: "
                     "one result per repeat (row) of the masked lanes.")
    return instr


WholeReduceSum = _whole("WholeReduceSum", lambda v: np.sum(v, axis=1, dtype=np.float32 if is_float(v.dtype)
                                                              else np.int64).astype(v.dtype))
WholeReduceMax = _whole("WholeReduceMax", lambda v: np.max(v, axis=1))
WholeReduceMin = _whole("WholeReduceMin", lambda v: np.min(v, axis=1))


__all__ = ["Add", "Sub", "Mul", "Div", "Max", "Min", "Adds", "Muls", "Maxs", "Mins", "Exp", "Ln", "Sqrt",
           "Reciprocal", "Abs", "Relu", "Axpy", "Duplicate", "Cast", "Compare", "Select", "ReduceMax", "ReduceMin",
           "ReduceSum", "WholeReduceSum", "WholeReduceMax", "WholeReduceMin", "BinaryRepeatParams",
           "UnaryRepeatParams", "RoundMode", "CMPMODE", "SELMODE", "cast_values", "as_dtype"]
