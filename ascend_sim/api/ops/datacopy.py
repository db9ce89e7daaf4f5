"""Data movement: DataCopy, DataCopyPad and their parameter structs, atomic add.

Paths: GM -> UB and GM -> L1 on MTE2, UB -> GM, UB -> L1 and UB -> UB on MTE3,
L1 -> UB on MTE1 (coupled chips). DataCopy moves whole 32-byte DataBlocks;
DataCopyPad moves any byte length.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.engine import context, layout
from ascend_sim.engine import timing
from ascend_sim.engine.core import MTE1, MTE2, MTE3, regions_of, burst_region
from ascend_sim.hw.dtypes import ascend_name, bytes_of, int4b_t
from ascend_sim.engine.errors import AlignmentError, ArgumentError, DtypeError, PositionError, kernel_point, site_outside
from ascend_sim.api.ops.atomic import SetAtomicAdd, SetAtomicNone, atomic_mode, combine  # noqa: F401 (re-exported)
from ascend_sim.engine.atomics import AtomicWrite
from ascend_sim.engine.gmcheck import gm_read, gm_write, record_read
from ascend_sim.api.checks import check_fields, dtype_arg, field_spec, integer, live, scalar as scalar_arg
from ascend_sim.api.tensor import GlobalTensor, LocalTensor, bytes_not_elements, check_aligned
from ascend_sim.engine.context import current_core
from ascend_sim.engine.memory import note_gm_write
from ascend_sim.api.ops.fractal import FRACTAL_BYTES

BLOCK = 32  # bytes per DataBlock


@dataclass
class DataCopyParams:
    """Strided copy: ``blockCount`` bursts of ``blockLen`` 32-byte blocks; gaps in 32-byte blocks."""

    blockCount: int = 1
    blockLen: int = 0
    srcStride: int = 0
    dstStride: int = 0

    def __post_init__(self):
        check_fields(self, _COPY_FIELDS)


@dataclass
class DataCopyExtParams:
    """DataCopyPad bursts: ``blockLen`` in bytes; GM strides in bytes, UB strides in 32-byte blocks."""

    blockCount: int = 1
    blockLen: int = 0
    srcStride: int = 0
    dstStride: int = 0
    rsv: int = 0

    def __post_init__(self):
        check_fields(self, _EXT_FIELDS)


@dataclass
class DataCopyPadExtParams:
    """Padding of each burst up to 32 bytes in UB (GM -> UB only)."""

    isPad: bool = False
    leftPadding: int = 0
    rightPadding: int = 0
    paddingValue: float = 0

    def __post_init__(self):
        check_fields(self, _PAD_FIELDS)
        v = self.paddingValue
        if v.__class__ is not int and v.__class__ is not float:
            scalar_arg("DataCopyPadExtParams", "paddingValue", v, np.dtype(np.float32), site_outside(2))


# the C++ types of the fields (kernel_struct_data_copy.h)
_COPY_FIELDS = field_spec(blockCount="uint16_t", blockLen="uint16_t", srcStride="uint16_t", dstStride="uint16_t")
_EXT_FIELDS = field_spec(blockCount="uint16_t", blockLen="uint32_t", srcStride="uint32_t", dstStride="uint32_t",
                         rsv="uint32_t")
_PAD_FIELDS = field_spec(isPad="bool", leftPadding="uint8_t", rightPadding="uint8_t")


DataCopyPadParams = DataCopyPadExtParams


class BurstPlan:
    """A copy as bursts: ``count`` bursts of ``blen`` bytes read, ``dst_blen`` (>= blen) written.

    ``lead``: bytes of left padding before the data in each written burst (DataCopyPad's leftPadding).
    """

    __slots__ = ("count", "blen", "src_pitch", "dst_pitch", "dst_blen", "lead")

    def __init__(self, count: int, blen: int, src_pitch: int, dst_pitch: int, dst_blen: int, lead: int = 0):
        self.count = count
        self.blen = blen
        self.src_pitch = src_pitch
        self.dst_pitch = dst_pitch
        self.dst_blen = dst_blen
        self.lead = lead


# ----------------------------------------------------------------------------- entry points
PARAM_COPIES: dict = {}     # parameter struct type -> its DataCopy form (nd2nz.py: Nd2NzParams)
TIER_COPIES: dict = {}      # destination tier name -> its DataCopy form (bias.py: L1 -> BT)


def DataCopy(dst, src, count_or_params) -> None:
    """``DataCopy(dst, src, count)``, ``DataCopy(dst, src, DataCopyParams(...))`` or another documented form
    (``Nd2NzParams``: GM -> L1 in NZ; a C2 (BT) destination: the bias table)."""
    p = count_or_params
    c = p.__class__
    if c in PARAM_COPIES:
        return PARAM_COPIES[c](dst, src, p, kernel_point())
    if dst.__class__ is LocalTensor and dst.tier.name in TIER_COPIES:
        return TIER_COPIES[dst.tier.name](dst, src, p, kernel_point())
    shape = (p.blockCount, p.blockLen, p.srcStride, p.dstStride) if c is DataCopyParams else (
        p if c is int else None)        # anything else is checked on every call (16.0 must not find 16's plan)
    _copy(dst, src, "DataCopy", shape, _datacopy_bursts, p, kernel_point())


def _datacopy_bursts(dst, src, count_or_params, site) -> BurstPlan:
    """DataCopy's bursts (the count form is one burst), after its rules on dtypes, counts and lengths."""
    _operands(dst, src, "DataCopy", site)
    _cube_tiers(dst, src, "DataCopy", site)
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
    nbytes = bytes_of(count, dst.dtype)         # int4b_t: two elements per byte
    if nbytes % BLOCK or (dst.dtype is int4b_t and count % 2):
        per = BLOCK * 2 if dst.dtype is int4b_t else BLOCK // isz
        raise AlignmentError(
            f"DataCopy moves whole 32-byte blocks: {count} {ascend_name(dst.dtype)} elements = {nbytes} "
            f"bytes, and {nbytes} % 32 = {nbytes % 32}",
            fix=f"copy a multiple of {per} elements, or use DataCopyPad for a tail of any length",
            site=site)
    return BurstPlan(1, nbytes, nbytes, nbytes, nbytes)


_OMITTED = object()     # DataCopyPad's padParams, not given (no padding)


def DataCopyPad(dst, src, params: DataCopyExtParams, padParams=_OMITTED) -> None:
    """Copy bursts of any byte length between GM and UB; GM -> UB bursts get left/right padding up to 32 bytes.

    GMToUB非对齐数据搬运(DataCopyPad).md: "blockCount∈[0, 4095]", "blockLen∈[0, 2097151]" (0 moves nothing),
    "leftPadding、rightPadding所占的字节数均不能超过32字节", and each UB burst is leftPadding, the data,
    rightPadding and dummy up to 32 bytes (see ``_fill_padding``).
    """
    p = params
    site = kernel_point()
    left = right = 0
    if padParams is _OMITTED:
        padParams = None
    elif padParams is None:
        raise ArgumentError("DataCopyPad: padParams is None", fix="pass a «DataCopyPadExtParams(isPad, leftPadding, "
                            "rightPadding, paddingValue)», or leave it out for no padding", site=site)
    if padParams is not None:
        _check_pad(padParams, dst, site)
        left, right = padParams.leftPadding, padParams.rightPadding
    if p.__class__ is DataCopyExtParams:
        if not p.blockCount or not p.blockLen:      # a documented NOP (checked for range first)
            _check_params(p.blockCount, p.blockLen, site, max_len=2**21 - 1, lo=0)
            return
        shape = (p.blockCount, p.blockLen, p.srcStride, p.dstStride, left, right)
    else:
        shape = None
    _copy(dst, src, "DataCopyPad", shape, _datacopypad_bursts, (params, left, right), site, pad=padParams)


def SetPadValue(paddingValue) -> None:
    """``SetPadValue<T>(v)``: DataCopyPad GM -> UB calls with isPad false fill their padding with ``v``.

    SetPadValue(ISASI).md: "SetPadValue用于设置DataCopyPad需要填充的数值" (used with isPad = false).
    """
    site = kernel_point()
    scalar_arg("SetPadValue", "paddingValue", paddingValue, np.dtype(np.float64), site)
    current_core().regs["pad"] = paddingValue


def _check_pad(pad, dst, site) -> None:
    """DataCopyPadExtParams: isPad a bool, paddings of at most 32 bytes, a padding value for dst's dtype."""
    if not isinstance(pad, DataCopyPadExtParams):
        raise ArgumentError(f"DataCopyPad padParams must be a DataCopyPadExtParams, got {type(pad).__name__}",
                            fix="«DataCopyPadExtParams(isPad, leftPadding, rightPadding, paddingValue)»", site=site)
    if pad.isPad.__class__ is not bool:
        raise ArgumentError(f"DataCopyPad isPad must be «True» or «False», got {pad.isPad!r}",
                            fix="«isPad=True|isPad true» fills the padding with paddingValue", site=site)
    isz = getattr(getattr(dst, "dtype", None), "itemsize", 1)
    for name in ("leftPadding", "rightPadding"):
        v = integer("DataCopyPad", name, getattr(pad, name), site, 0)
        if v * isz > 32:
            raise ArgumentError(f"DataCopyPad {name} = {v} elements = {v * isz} bytes, but each padding may take at "
                                "most 32 bytes (leftPadding、rightPadding所占的字节数均不能超过32字节)",
                                fix=f"pad at most {32 // isz} elements on each side", site=site)
    if isinstance(dst, LocalTensor):
        scalar_arg("DataCopyPad", "paddingValue", pad.paddingValue, dst.dtype, site)


def _datacopypad_bursts(dst, src, pp, site) -> BurstPlan:
    """DataCopyPad's bursts: GM strides in bytes, UB strides in 32-byte blocks, UB bursts padded to 32 bytes."""
    params, left, right = pp
    _operands(dst, src, "DataCopyPad", site)
    _cube_tiers(dst, src, "DataCopyPad", site)
    _same_dtype(dst, src, "DataCopyPad", site)
    if not isinstance(params, DataCopyExtParams):
        raise ArgumentError("DataCopyPad takes DataCopyExtParams(blockCount, blockLen_in_bytes, srcStride, "
                            "dstStride, 0)", fix="build the params struct; blockLen is in bytes here", site=site)
    _check_params(params.blockCount, params.blockLen, site, max_len=2**21 - 1)
    for name in ("srcStride", "dstStride"):
        integer("DataCopyPad", name, getattr(params, name), site, 0, fix="strides are gaps, never negative")
    blen = params.blockLen
    isz = dst.dtype.itemsize
    if blen % isz:
        raise AlignmentError(f"DataCopyPad blockLen {blen} bytes is not a whole number of "
                             f"{ascend_name(dst.dtype)} elements ({isz} bytes each; {blen} % {isz} = {blen % isz})",
                             fix=f"blockLen is in bytes: pass elements * {isz}", site=site)
    if isinstance(src, GlobalTensor):       # GM -> UB: [left padding][data][right padding][dummy] per burst
        lead = left * isz
        ub_blen = -(-(lead + blen + right * isz) // BLOCK) * BLOCK
        return BurstPlan(params.blockCount, blen, blen + params.srcStride, ub_blen + params.dstStride * BLOCK,
                         ub_blen, lead)
    ub_blen = -(-blen // BLOCK) * BLOCK
    return BurstPlan(params.blockCount, blen, ub_blen + params.srcStride * BLOCK, blen + params.dstStride, blen)


# ----------------------------------------------------------------------------- the copy
# A copy is checked once per shape: the operands' local side (tier, address, size, dtype), the GM
# buffer and dtype, and the count or parameters key a _CopyPlan cached on the core. Each call then
# only checks its GM offset, issues the instruction and moves the bytes.
class _CopyPlan:
    """A checked copy: its bursts, local region, pipe, cost parameters and the local side's bytes."""

    __slots__ = ("run", "plan", "pipe", "rate", "regions", "nbytes", "span", "local", "src_name", "dst_name", "tag")

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
        self.tag = None             # (lo, hi, code): the layout a copy into L1 leaves (engine/layout.py)


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


def _nd_rows(plan: BurstPlan) -> bool:
    """Whether a GM -> L1 copy's bursts look like ND rows (layout.ND_ROWS): several bursts wider than 32 B, unless
    the bursts and the gaps between them are whole 512 B fractals with a gap: strips of a zN / nZ matrix (CATLASS's
    CopyGmToL1<zN>, tile/atlasa2/copy_gm_to_l1.hpp: one DataCopy of N / 16 strips of k rows x 32 B)."""
    if plan.count <= 1 or plan.blen <= BLOCK:
        return False
    gap = plan.src_pitch - plan.blen
    return not (plan.blen % FRACTAL_BYTES == 0 and gap > 0 and gap % FRACTAL_BYTES == 0)


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
        local = _local_bursts(dst, plan.count, plan.blen, plan.dst_pitch, plan.lead)
        cp = _CopyPlan(_copy_in, plan, MTE2, regions, src_span, local, "GM", dst.tier.name)
        if dst.tier.name == "L1":       # rows wider than one fractal row (32 B) copied as they are: ND, not NZ
            cp.tag = (dst.addr, dst.addr + dst_span, layout.ND_ROWS if _nd_rows(plan) else 0)
        return cp
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
    padded = plan.dst_blen > plan.blen
    if padded:
        value = pad.paddingValue if pad is not None and pad.isPad else core.regs.get("pad")
        tail = value is None and plan.lead + plan.blen < plan.dst_blen
        holes = _blank_padding(dst, plan) if tail else None    # right-side garbage blocks nothing wrote before
    core.issue_n(MTE2, op, (MTE2, cp.nbytes, plan.count, (buf.base_addr + off) % core.chip.gm_burst_align == 0,
                            buf, off, plan.blen, plan.src_pitch, src.l2_mode),      # timing.gm_transfer
                 (), cp.regions, cp.nbytes, "GM", cp.dst_name, 0, "copy", site)
    computing = core.numerics       # context.computing(): False under launch(..., numerics=False), timing only
    if not computing:
        pass
    elif plan.count == 1:
        cp.local[...] = buf.raw[off:off + plan.blen]
    else:
        cp.local[...] = np.ndarray((plan.count,), cp.local.dtype, buf.raw, off, (plan.src_pitch,))   # row by row
    if cp.tag is not None:
        layout.mark(dst.tier, *cp.tag, site)
    if padded:
        if computing:
            _fill_padding(dst, plan, value, pad)
        if holes:
            _leave_padding(dst.tier, holes, (plan.lead + plan.blen) % BLOCK)


def _fill_padding(dst: LocalTensor, plan: BurstPlan, value, pad) -> None:
    """The padding bytes of each UB burst, as DataCopyPad documents them.

    With isPad (paddingValue) or after SetPadValue: that value. Otherwise "若leftPadding、rightPadding都为0：dummy
    会默认填充待搬运数据块的第一个元素值" (the dummy repeats the burst's first element); with padding and isPad false
    the bytes are "随机值" (left as they were; the initcheck reports reads of the right side).
    """
    d = burst_view(dst.tier.arena, dst.addr, plan.count, plan.dst_blen, plan.dst_pitch)
    isz = dst.dtype.itemsize
    lead, end = plan.lead, plan.lead + plan.blen
    if value is not None:
        row = np.full(plan.dst_blen // isz, value, dst.dtype).view(np.uint8)
        d[:, :lead] = row[:lead]
        d[:, end:] = row[end:]
    elif pad is None or (pad.leftPadding == 0 and pad.rightPadding == 0):
        first = d[:, :isz]
        d[:, end:] = np.tile(first, (plan.dst_blen - end) // isz)


def _blank_padding(dst: LocalTensor, plan: BurstPlan) -> list[int]:
    """The 32-byte blocks holding a burst's padding that nothing has written yet (before the copy)."""
    sh = dst.tier.shadow
    gs = [(dst.addr + b * plan.dst_pitch + plan.lead + plan.blen) // BLOCK for b in range(plan.count)]
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
    kind = atomic_mode(core, op, dst.dtype, site) if atomic else None
    gm_write(core, buf, off, plan.count, plan.dst_blen, plan.dst_pitch, MTE3, atomic, dst.dtype, site)
    cost = (MTE3, cp.nbytes, plan.count, (buf.base_addr + off) % core.chip.gm_burst_align == 0,
            buf, off, plan.dst_blen, plan.dst_pitch, dst.l2_mode)                       # timing.gm_transfer
    if atomic:                          # a read-modify-write at L2, after the same windows' atomics (atomics.py)
        cost = AtomicWrite(core, cost)
    core.issue_n(MTE3, f"{op}(atomic {kind})" if atomic else op, cost, cp.regions, (), cp.nbytes, "UB", "GM", 0,
                 "copy", site)
    if buf.written_by is not None:
        note_gm_write(buf, off, plan.count, plan.dst_blen if atomic else plan.blen, plan.dst_pitch,
                      len(core.records) - 1)
    if not core.numerics:       # context.computing(): launch(..., numerics=False), timing only
        return
    if atomic:
        s = burst_view(src.tier.arena, src.addr, plan.count, plan.blen, plan.src_pitch)
        d = burst_view(buf.raw, off, plan.count, plan.dst_blen, plan.dst_pitch)
        dt = dst.dtype
        cur = np.ascontiguousarray(d).view(dt)
        new = np.ascontiguousarray(s).view(dt)
        d[...] = combine(kind, cur, new).view(np.uint8)
        return
    if plan.count == 1:
        buf.raw[off:off + plan.blen] = cp.local
    else:
        np.ndarray((plan.count,), cp.local.dtype, buf.raw, off, (plan.dst_pitch,))[...] = cp.local


def _copy_local(core, dst: LocalTensor, src: LocalTensor, cp: _CopyPlan, op, site, pad=None) -> None:
    plan = cp.plan
    core.issue_n(cp.pipe, op, timing.local_transfer(core, cp.nbytes, cp.rate, core.chip.mte1_startup, plan.count),
                 cp.regions[0], cp.regions[1], cp.nbytes, cp.src_name, cp.dst_name, 0, "copy", site)
    if not core.numerics:            # launch(..., numerics=False): timing only (context.computing())
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


def _local_bursts(t: LocalTensor, count: int, blen: int, pitch: int, lead: int = 0) -> np.ndarray:
    """The local side of a copy: one burst as a 1-D byte view, several as one row (void of blen bytes) each.

    Copying whole rows moves each burst with one memcpy: a third faster than a (count, blen) byte view.
    ``lead``: bytes before the data in each burst (left padding).
    """
    arena = t.tier.arena
    a = t.addr + lead
    if count == 1:
        return arena[a:a + blen]
    return np.ndarray((count,), np.dtype((np.void, blen)), arena, a, (pitch,))


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


def _check_params(count: int, blen: int, site, max_len: int = 65535, lo: int = 1) -> None:
    integer("DataCopy", "blockCount", count, site)
    integer("DataCopy", "blockLen", blen, site)
    if not lo <= count <= 4095:
        raise ArgumentError(f"blockCount must be in {lo}..4095, got {count}", fix="split the copy in several calls",
                            site=site)
    if not lo <= blen <= max_len:
        raise ArgumentError(f"blockLen must be in {lo}..{max_len}, got {blen}",
                            fix="blockLen counts 32-byte blocks for DataCopy and bytes for DataCopyPad", site=site)


def _check_local_span(t: LocalTensor, span: int, op: str, site) -> None:
    if span > t.nbytes:
        from ascend_sim.engine.errors import OutOfBoundsError
        rule, fix = bytes_not_elements(t, span // t.dtype.itemsize) or ("", "")
        raise OutOfBoundsError(
            f"{rule}{op} touches {span} bytes of a {t.tier.name} tensor that holds {t.nbytes} bytes "
            f"({t.size} {ascend_name(t.dtype)} elements at {t.tier.name}+{t.addr})",
            fix=fix or "copy fewer elements or allocate a larger buffer in InitBuffer", site=site,
            kind="init-bytes" if rule else "")


_CUBE_PATHS = {
    "L0C": "L0C results leave through Fixpipe, which converts on the way: Fixpipe(dstGm, c, FixpipeParamsV220(nSize, "
           "mSize, srcStride, dstStride, reluEn, QuantMode_t.F322F16)) (F322F16 to half, F322BF16 to bfloat16_t, "
           "NoQuant to keep float, DEQF16 for int32_t results to half)",
    "L0A": "L0A is filled by LoadData from L1 (A1), not by DataCopy",
    "L0B": "L0B is filled by LoadData from L1 (B1), not by DataCopy",
}


def _cube_tiers(dst, src, op: str, site) -> None:
    """A DataCopy touching L0A/L0B/L0C gets the cube path's instruction as its fix (before any dtype advice)."""
    for t, role in ((src, "source"), (dst, "destination")):
        name = t.tier.name if t.__class__ is LocalTensor else None
        if name in _CUBE_PATHS:
            raise PositionError(f"{op} with an {name} {role} is not a DataCopy path", fix=_CUBE_PATHS[name],
                                site=site)


def _same_dtype(dst, src, op: str, site) -> None:
    if dst.dtype != src.dtype:
        raise DtypeError(f"{op} between {ascend_name(src.dtype)} source and {ascend_name(dst.dtype)} destination",
                         fix="copies do not convert: use the same dtype on both sides and Cast in UB", site=site)
