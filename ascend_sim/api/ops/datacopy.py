"""Data movement: DataCopy, DataCopyPad and their parameter structs, atomic add.

Paths: GM -> UB and GM -> L1 on MTE2, UB -> GM, UB -> L1 and UB -> UB on MTE3,
L1 -> UB on MTE1 (coupled chips). DataCopy moves whole 32-byte DataBlocks;
DataCopyPad moves any byte length.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.engine import context
from ascend_sim.engine import timing
from ascend_sim.engine.core import MTE1, MTE2, MTE3, regions_of, burst_region
from ascend_sim.hw.dtypes import ascend_name
from ascend_sim.engine.errors import AlignmentError, ArgumentError, DtypeError, PositionError, kernel_point
from ascend_sim.engine.gmcheck import gm_read, gm_write, record_read
from ascend_sim.api.checks import dtype_arg, int_fields, integer, live, scalar as scalar_arg
from ascend_sim.api.tensor import GlobalTensor, LocalTensor, check_aligned
from ascend_sim.engine.context import current_core
from ascend_sim.engine.memory import note_gm_write

BLOCK = 32  # bytes per DataBlock


@dataclass
class DataCopyParams:
    """Strided copy: ``blockCount`` bursts of ``blockLen`` 32-byte blocks; gaps in 32-byte blocks."""

    blockCount: int = 1
    blockLen: int = 0
    srcStride: int = 0
    dstStride: int = 0

    def __post_init__(self):
        if (self.blockCount.__class__ is not int or self.blockLen.__class__ is not int
                or self.srcStride.__class__ is not int or self.dstStride.__class__ is not int):
            int_fields(self, ("blockCount", "blockLen", "srcStride", "dstStride"))


@dataclass
class DataCopyExtParams:
    """DataCopyPad bursts: ``blockLen`` in bytes; GM strides in bytes, UB strides in 32-byte blocks."""

    blockCount: int = 1
    blockLen: int = 0
    srcStride: int = 0
    dstStride: int = 0
    rsv: int = 0

    def __post_init__(self):
        if (self.blockCount.__class__ is not int or self.blockLen.__class__ is not int
                or self.srcStride.__class__ is not int or self.dstStride.__class__ is not int
                or self.rsv.__class__ is not int):
            int_fields(self, ("blockCount", "blockLen", "srcStride", "dstStride", "rsv"))


@dataclass
class DataCopyPadExtParams:
    """Padding of each burst up to 32 bytes in UB (GM -> UB only)."""

    isPad: bool = False
    leftPadding: int = 0
    rightPadding: int = 0
    paddingValue: float = 0


DataCopyPadParams = DataCopyPadExtParams


class BurstPlan:
    """A copy as bursts: ``count`` bursts of ``blen`` bytes read, ``dst_blen`` (>= blen) written."""

    __slots__ = ("count", "blen", "src_pitch", "dst_pitch", "dst_blen")

    def __init__(self, count: int, blen: int, src_pitch: int, dst_pitch: int, dst_blen: int):
        self.count = count
        self.blen = blen
        self.src_pitch = src_pitch
        self.dst_pitch = dst_pitch
        self.dst_blen = dst_blen


# ----------------------------------------------------------------------------- entry points
def DataCopy(dst, src, count_or_params) -> None:
    """``DataCopy(dst, src, count)`` or ``DataCopy(dst, src, DataCopyParams(...))``."""
    p = count_or_params
    c = p.__class__
    shape = (p.blockCount, p.blockLen, p.srcStride, p.dstStride) if c is DataCopyParams else (
        p if c is int else None)        # anything else is checked on every call (16.0 must not find 16's plan)
    _copy(dst, src, "DataCopy", shape, _datacopy_bursts, p, kernel_point())


def _datacopy_bursts(dst, src, count_or_params, site) -> BurstPlan:
    """DataCopy's bursts (the count form is one burst), after its rules on dtypes, counts and lengths."""
    _operands(dst, src, "DataCopy", site)
    _same_dtype(dst, src, "DataCopy", site)
    isz = dst.dtype.itemsize
    if isinstance(count_or_params, DataCopyParams):
        p = count_or_params
        _check_params(p.blockCount, p.blockLen, site)
        for name in ("srcStride", "dstStride"):
            integer("DataCopy", name, getattr(p, name), site, 0, 65535,
                    fix="strides are gaps in 32-byte blocks (uint16)")
        blen = p.blockLen * BLOCK
        return BurstPlan(p.blockCount, blen, blen + p.srcStride * BLOCK, blen + p.dstStride * BLOCK, blen)
    count = integer("DataCopy", "count", count_or_params, site,
                    fix="pass the number of elements (an int), or a DataCopyParams for a strided copy")
    if count <= 0:
        raise ArgumentError(f"DataCopy count must be positive, got {count}", fix="pass the number of elements",
                            site=site)
    if (count * isz) % BLOCK:
        raise AlignmentError(
            f"DataCopy moves whole 32-byte blocks: {count} {ascend_name(dst.dtype)} elements = {count * isz} "
            f"bytes, and {count * isz} % 32 = {count * isz % 32}",
            fix=f"copy a multiple of {BLOCK // isz} elements, or use DataCopyPad for a tail of any length",
            site=site)
    return BurstPlan(1, count * isz, count * isz, count * isz, count * isz)


def DataCopyPad(dst, src, params: DataCopyExtParams, padParams: DataCopyPadExtParams | None = None) -> None:
    """Copy bursts of any byte length between GM and UB, padding UB bursts to 32 bytes."""
    p = params
    shape = ((p.blockCount, p.blockLen, p.srcStride, p.dstStride) if p.__class__ is DataCopyExtParams
             else None)
    site = kernel_point()
    if padParams is not None:
        _check_pad(padParams, dst, site)
    _copy(dst, src, "DataCopyPad", shape, _datacopypad_bursts, params, site, pad=padParams)


def _check_pad(pad, dst, site) -> None:
    """DataCopyPadExtParams: isPad a bool, paddings 0..32 bytes' worth of elements, a padding value for dst's dtype."""
    if not isinstance(pad, DataCopyPadExtParams):
        raise ArgumentError(f"DataCopyPad padParams must be a DataCopyPadExtParams, got {type(pad).__name__}",
                            fix="DataCopyPadExtParams(isPad, leftPadding, rightPadding, paddingValue)", site=site)
    if pad.isPad.__class__ is not bool:
        raise ArgumentError(f"DataCopyPad isPad must be True or False, got {pad.isPad!r}",
                            fix="isPad=True fills the padding with paddingValue", site=site)
    for name in ("leftPadding", "rightPadding"):
        integer("DataCopyPad", name, getattr(pad, name), site, 0, 32)
    if isinstance(dst, LocalTensor):
        scalar_arg("DataCopyPad", "paddingValue", pad.paddingValue, dst.dtype, site)


def _datacopypad_bursts(dst, src, params, site) -> BurstPlan:
    """DataCopyPad's bursts: GM strides in bytes, UB strides in 32-byte blocks, UB bursts padded to 32 bytes."""
    _operands(dst, src, "DataCopyPad", site)
    _same_dtype(dst, src, "DataCopyPad", site)
    if not isinstance(params, DataCopyExtParams):
        raise ArgumentError("DataCopyPad takes DataCopyExtParams(blockCount, blockLen_in_bytes, srcStride, "
                            "dstStride, 0)", fix="build the params struct; blockLen is in bytes here", site=site)
    _check_params(params.blockCount, params.blockLen, site, max_len=2**21)
    for name in ("srcStride", "dstStride"):
        integer("DataCopyPad", name, getattr(params, name), site, 0, fix="strides are gaps, never negative")
    blen = params.blockLen
    isz = dst.dtype.itemsize
    if blen % isz:
        raise AlignmentError(f"DataCopyPad blockLen {blen} bytes is not a whole number of "
                             f"{ascend_name(dst.dtype)} elements ({isz} bytes each; {blen} % {isz} = {blen % isz})",
                             fix=f"blockLen is in bytes: pass elements * {isz}", site=site)
    ub_blen = -(-blen // BLOCK) * BLOCK
    if isinstance(src, GlobalTensor):       # GM -> UB
        return BurstPlan(params.blockCount, blen, blen + params.srcStride, ub_blen + params.dstStride * BLOCK, ub_blen)
    return BurstPlan(params.blockCount, blen, ub_blen + params.srcStride * BLOCK, blen + params.dstStride, blen)


def SetAtomicAdd(dtype=None) -> None:
    """Following UB -> GM copies add into GM instead of overwriting (``SetAtomicAdd<T>()``)."""
    core = current_core()
    core.atomic = dtype_arg("SetAtomicAdd", dtype, kernel_point()) if dtype is not None else True
    core.scalar_tick()


def SetAtomicNone() -> None:
    """Back to plain overwriting copies."""
    core = current_core()
    core.atomic = None
    core.scalar_tick()


# ----------------------------------------------------------------------------- the copy
# A copy is checked once per shape: the operands' local side (tier, address, size, dtype), the GM
# buffer and dtype, and the count or parameters key a _CopyPlan cached on the core. Each call then
# only checks its GM offset, issues the instruction and moves the bytes.
class _CopyPlan:
    """A checked copy: its bursts, local region, pipe, cost parameters and the local side's bytes."""

    __slots__ = ("run", "plan", "pipe", "rate", "regions", "nbytes", "span", "local", "src_name", "dst_name")

    def __init__(self, run, plan: BurstPlan, pipe: int, regions: list, span: int, local,
                 src_name: str, dst_name: str, rate: float = 0.0):
        self.run = run              # _copy_in (GM -> local), _copy_out (local -> GM) or _copy_local
        self.plan = plan
        self.pipe = pipe
        self.rate = rate            # bytes per cycle of a local path
        self.regions = regions      # normalised shadow regions: the local side (written in, read out)
        self.nbytes = plan.count * plan.blen
        self.span = span            # bytes the GM side spans
        self.local = local          # the bytes in the tier: a 1-D view (one burst), or one row per burst
        self.src_name = src_name
        self.dst_name = dst_name


def _side(t):
    """The cache-key part of one operand: where a LocalTensor is, or which GM buffer (its offset varies)."""
    c = t.__class__
    if c is LocalTensor:
        return (t.tier, t.addr, t.size, t.dtype)
    if c is GlobalTensor and t.buf is not None:
        return (t.buf, t.dtype)
    return None


def _copy(dst, src, op: str, shape, bursts, params, site, pad: DataCopyPadExtParams | None = None) -> None:
    """Check (once per plan key) and run a copy; ``bursts(dst, src, params, site)`` checks the parameters."""
    core = context.current
    if core is None:
        core = current_core()       # raises: not inside a running kernel
    dc, sc = dst.__class__, src.__class__
    key = None
    if shape is not None:       # the two usual directions inline, anything else through _side
        if dc is LocalTensor and sc is GlobalTensor and src.buf is not None:
            key = (op, shape, dst.tier, dst.addr, dst.size, dst.dtype, src.buf, src.dtype)
        elif dc is GlobalTensor and sc is LocalTensor and dst.buf is not None:
            key = (op, shape, dst.buf, dst.dtype, src.tier, src.addr, src.size, src.dtype)
        else:
            ds, ss = _side(dst), _side(src)
            if ds is not None and ss is not None:
                key = (op, shape, ds, ss)
    cp = None
    if key is not None:
        try:
            cp = core.plans.get(key)
        except TypeError:           # an unhashable count: checked (and reported) by bursts()
            key = None
    if cp is None:
        cp = _check_copy(core, dst, src, op, bursts(dst, src, params, site), site)
        if key is not None:
            core.plans[key] = cp
    cp.run(core, dst, src, cp, op, site, pad)


def _check_copy(core, dst, src, op: str, plan: BurstPlan, site) -> _CopyPlan:
    """Every rule of the copy that does not depend on the GM offset; the plan of the copy."""
    dst_gm, src_gm = isinstance(dst, GlobalTensor), isinstance(src, GlobalTensor)
    if dst_gm and src_gm:
        raise PositionError(f"{op} from GM to GM is not a hardware path", fix="stage the data through UB", site=site)
    src_span = (plan.count - 1) * plan.src_pitch + plan.blen
    dst_span = (plan.count - 1) * plan.dst_pitch + plan.dst_blen
    if src_gm:
        if not isinstance(dst, LocalTensor) or dst.tier.name not in ("UB", "L1"):
            raise PositionError(f"{op} from GM goes to UB (VECIN/VECCALC) or L1 (A1/B1), not "
                                f"{getattr(dst, 'tier', None) and dst.tier.name}",
                                fix="copy into a tensor from a VECIN queue or an A1/B1 queue", site=site)
        check_aligned(dst.addr, 32, f"{op} destination {dst.tier.name}",
                      "UB/L1 tensors must start on a 32-byte boundary: offset sub-tensors by multiples of 32 bytes")
        src._require()
        _check_local_span(dst, dst_span, op, site)
        regions = regions_of((burst_region(dst, plan.count, plan.dst_blen, plan.dst_pitch),))
        local = _local_bursts(dst, plan.count, plan.blen, plan.dst_pitch)
        return _CopyPlan(_copy_in, plan, MTE2, regions, src_span, local, "GM", dst.tier.name)
    if dst_gm:
        if not isinstance(src, LocalTensor) or src.tier.name != "UB":
            raise PositionError(f"{op} to GM reads UB (VECOUT); {getattr(src, 'tier', None) and src.tier.name} "
                                "results leave through Fixpipe (L0C) or via UB",
                                fix="copy out of a VECOUT tensor, or use Fixpipe for L0C", site=site)
        check_aligned(src.addr, 32, f"{op} source UB", "UB tensors must start on a 32-byte boundary")
        _check_local_span(src, src_span, op, site)
        dst._require()
        regions = regions_of((burst_region(src, plan.count, plan.blen, plan.src_pitch),))
        local = _local_bursts(src, plan.count, plan.blen, plan.src_pitch)
        return _CopyPlan(_copy_out, plan, MTE3, regions, dst_span, local, "UB", "GM")
    paths = {("UB", "UB"): (MTE3, core.chip.ub_to_ub_bytes_per_cycle),
             ("UB", "L1"): (MTE3, core.chip.ub_to_l1_bytes_per_cycle),
             ("L1", "UB"): (MTE1, core.chip.ub_to_l1_bytes_per_cycle)}
    key = (src.tier.name, dst.tier.name)
    if key not in paths:
        raise PositionError(f"{op} from {key[0]} to {key[1]} is not a DataCopy path",
                            fix="L1 -> L0A/L0B is LoadData; L0C -> GM is Fixpipe; GM <-> UB/L1 is DataCopy",
                            site=site)
    pipe, rate = paths[key]
    for t, role in ((src, "source"), (dst, "destination")):
        check_aligned(t.addr, 32, f"{op} {role} {t.tier.name}",
                      f"{t.tier.name} tensors start on a 32-byte boundary: offset sub-tensors by multiples of 32 bytes")
    _check_local_span(src, src_span, op, site)
    _check_local_span(dst, dst_span, op, site)
    regions = (regions_of((burst_region(src, plan.count, plan.blen, plan.src_pitch),)),
               regions_of((burst_region(dst, plan.count, plan.dst_blen, plan.dst_pitch),)))
    return _CopyPlan(_copy_local, plan, pipe, regions, 0, None, key[0], key[1], rate)


def _copy_in(core, dst: LocalTensor, src: GlobalTensor, cp: _CopyPlan, op, site, pad) -> None:
    buf = src.buf
    off = src.offset
    if off < 0 or off + cp.span > buf.nbytes:       # the GM side is the one part a plan cannot check
        src.check_range(off, cp.span, f"{op} read")
    plan = cp.plan
    if buf.written:                 # racecheck: a GM read of bytes this launch wrote (inputs never are)
        gm_read(core, buf, off, plan.count, plan.blen, plan.src_pitch, MTE2, op, site)
    record_read(core, buf, off, plan.count, plan.blen, plan.src_pitch)     # for the write-after-read check
    holes = None
    if plan.dst_blen > plan.blen and (pad is None or not pad.isPad):
        holes = _blank_padding(dst, plan)       # padding blocks nothing wrote before this copy
    core.issue_n(MTE2, op, (MTE2, cp.nbytes, plan.count, (buf.base_addr + off) % core.chip.gm_burst_align == 0,
                            buf, off, plan.blen, plan.src_pitch, src.l2_mode),      # timing.gm_transfer
                 (), cp.regions, cp.nbytes, "GM", cp.dst_name, 0, "copy", site)
    computing = context.computing()         # False: launch(..., numerics=False), timing only
    if not computing:
        pass
    elif plan.count == 1:
        cp.local[...] = buf.raw[off:off + plan.blen]
    else:
        cp.local[...] = np.ndarray((plan.count,), cp.local.dtype, buf.raw, off, (plan.src_pitch,))   # row by row
    if plan.dst_blen > plan.blen:
        if holes is None:                   # isPad: the padding is written
            if not computing:
                return
            d = burst_view(dst.tier.arena, dst.addr, plan.count, plan.dst_blen, plan.dst_pitch)
            fill = np.full((plan.dst_blen - plan.blen) // dst.dtype.itemsize, pad.paddingValue, dst.dtype)
            d[:, plan.blen:] = fill.view(np.uint8)
        elif holes:
            _leave_padding(dst.tier, holes, plan.blen % BLOCK)


def _blank_padding(dst: LocalTensor, plan: BurstPlan) -> list[int]:
    """The 32-byte blocks holding a burst's padding that nothing has written yet (before the copy)."""
    sh = dst.tier.shadow
    gs = [(dst.addr + b * plan.dst_pitch + plan.blen) // BLOCK for b in range(plan.count)]
    return [g for g in gs if not all(s.init for s in sh.peek(g, g + 1))]


def _leave_padding(tier, granules: list[int], valid: int) -> None:
    """initcheck: DataCopyPad (isPad false) wrote only the first ``valid`` bytes of these blocks; reads past them
    are reported."""
    for g in granules:
        tier.holes[g] = valid
        for s in tier.shadow.span(g, g + 1):
            s.init = False


def _copy_out(core, dst: GlobalTensor, src: LocalTensor, cp: _CopyPlan, op, site, pad=None) -> None:
    buf = dst.buf
    off = dst.offset
    if off < 0 or off + cp.span > buf.nbytes:
        dst.check_range(off, cp.span, f"{op} write")
    plan = cp.plan
    atomic = core.atomic is not None
    if atomic and core.atomic is not True and core.atomic != dst.dtype:
        raise DtypeError(f"{op} of {ascend_name(dst.dtype)} data while SetAtomicAdd({ascend_name(core.atomic)}) is "
                         f"active: the atomic unit would add the bytes as {ascend_name(core.atomic)}",
                         fix=f"call SetAtomicAdd({ascend_name(dst.dtype)}) before this copy, or SetAtomicNone() "
                             "if it should overwrite", site=site)
    gm_write(core, buf, off, plan.count, plan.dst_blen, plan.dst_pitch, MTE3, atomic, dst.dtype, site)
    core.issue_n(MTE3, op + "(atomic add)" if atomic else op,
                 (MTE3, cp.nbytes, plan.count, (buf.base_addr + off) % core.chip.gm_burst_align == 0,
                  buf, off, plan.dst_blen, plan.dst_pitch, dst.l2_mode),                # timing.gm_transfer
                 cp.regions, (), cp.nbytes, "UB", "GM", 0, "copy", site)
    if buf.written_by is not None:
        note_gm_write(buf, off, plan.count, plan.dst_blen if atomic else plan.blen, plan.dst_pitch,
                      len(core.records) - 1)
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    if atomic:
        s = burst_view(src.tier.arena, src.addr, plan.count, plan.blen, plan.src_pitch)
        d = burst_view(buf.raw, off, plan.count, plan.dst_blen, plan.dst_pitch)
        dt = dst.dtype
        cur = np.ascontiguousarray(d).view(dt)
        add = np.ascontiguousarray(s).view(dt)
        with np.errstate(all="ignore"):     # an fp16 sum past 65504 is inf on the device too
            d[...] = (cur + add).astype(dt).view(np.uint8)
        return
    if plan.count == 1:
        buf.raw[off:off + plan.blen] = cp.local
    else:
        np.ndarray((plan.count,), cp.local.dtype, buf.raw, off, (plan.dst_pitch,))[...] = cp.local


def _copy_local(core, dst: LocalTensor, src: LocalTensor, cp: _CopyPlan, op, site, pad=None) -> None:
    plan = cp.plan
    core.issue_n(cp.pipe, op, timing.local_transfer(core, cp.nbytes, cp.rate, core.chip.mte1_startup, plan.count),
                 cp.regions[0], cp.regions[1], cp.nbytes, cp.src_name, cp.dst_name, 0, "copy", site)
    if not context.computing():      # launch(..., numerics=False): timing only
        return
    s = burst_view(src.tier.arena, src.addr, plan.count, plan.blen, plan.src_pitch).copy()
    burst_view(dst.tier.arena, dst.addr, plan.count, plan.dst_blen, plan.dst_pitch)[:, :plan.blen] = s


# ----------------------------------------------------------------------------- helpers
def burst_view(raw: np.ndarray, off: int, count: int, blen: int, pitch: int) -> np.ndarray:
    """A (count, blen) view of ``count`` bursts of ``raw`` starting at ``off``, ``pitch`` apart (all in elements)."""
    if count == 1:
        return raw[off:off + blen].reshape(1, blen)
    isz = raw.itemsize          # one constructor call: faster than slicing, reshaping and slicing again
    return np.ndarray((count, blen), raw.dtype, raw, off * isz, (pitch * isz, isz))


def _local_bursts(t: LocalTensor, count: int, blen: int, pitch: int) -> np.ndarray:
    """The local side of a copy: one burst as a 1-D byte view, several as one row (void of blen bytes) each.

    Copying whole rows moves each burst with one memcpy: a third faster than a (count, blen) byte view.
    """
    arena = t.tier.arena
    if count == 1:
        return arena[t.addr:t.addr + blen]
    return np.ndarray((count,), np.dtype((np.void, blen)), arena, t.addr, (pitch,))


def _operands(dst, src, op: str, site) -> None:
    """Both operands are tensors: a live LocalTensor, or a GlobalTensor with its buffer set."""
    for t, role in ((dst, "dst"), (src, "src")):
        if t.__class__ is LocalTensor:
            live(op, role, t, site)
        elif t.__class__ is GlobalTensor:
            if t.buf is None:
                raise ArgumentError(f"{op}: {role} GlobalTensor used before SetGlobalBuffer",
                                    fix="call xGm.SetGlobalBuffer(x + offset, length) in Init", site=site)
        else:
            raise PositionError(f"{op}: {role} must be a LocalTensor or a GlobalTensor, got {type(t).__name__}",
                                fix=f"{op}(dst, src, ...) takes tensors: a queue's tensor and a GlobalTensor",
                                site=site)


def _check_params(count: int, blen: int, site, max_len: int = 65535) -> None:
    integer("DataCopy", "blockCount", count, site)
    integer("DataCopy", "blockLen", blen, site)
    if not 1 <= count <= 4095:
        raise ArgumentError(f"blockCount must be in 1..4095, got {count}", fix="split the copy in several calls",
                            site=site)
    if not 1 <= blen <= max_len:
        raise ArgumentError(f"blockLen must be in 1..{max_len}, got {blen}",
                            fix="blockLen counts 32-byte blocks for DataCopy and bytes for DataCopyPad", site=site)


def _check_local_span(t: LocalTensor, span: int, op: str, site) -> None:
    if span > t.nbytes:
        from ascend_sim.engine.errors import OutOfBoundsError
        raise OutOfBoundsError(
            f"{op} touches {span} bytes of a {t.tier.name} tensor that holds {t.nbytes} bytes "
            f"({t.size} {ascend_name(t.dtype)} elements at {t.tier.name}+{t.addr})",
            fix="copy fewer elements or allocate a larger buffer in InitBuffer", site=site)


def _same_dtype(dst, src, op: str, site) -> None:
    if dst.dtype != src.dtype:
        raise DtypeError(f"{op} between {ascend_name(src.dtype)} source and {ascend_name(dst.dtype)} destination",
                         fix="copies do not convert: use the same dtype on both sides and Cast in UB", site=site)
