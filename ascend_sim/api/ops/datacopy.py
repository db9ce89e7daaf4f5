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
from ascend_sim.engine.core import MTE1, MTE2, MTE3, _ranges, burst_region
from ascend_sim.hw.dtypes import ascend_name, as_dtype
from ascend_sim.engine.errors import (AlignmentError, ArgumentError, DtypeError, GMWriteConflictError,
                                      PositionError, kernel_point)
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


@dataclass
class DataCopyExtParams:
    """DataCopyPad bursts: ``blockLen`` in bytes; GM strides in bytes, UB strides in 32-byte blocks."""

    blockCount: int = 1
    blockLen: int = 0
    srcStride: int = 0
    dstStride: int = 0
    rsv: int = 0


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
    shape = (p.blockCount, p.blockLen, p.srcStride, p.dstStride) if p.__class__ is DataCopyParams else p
    _copy(dst, src, "DataCopy", shape, _datacopy_bursts, p, kernel_point())


def _datacopy_bursts(dst, src, count_or_params, site) -> BurstPlan:
    """DataCopy's bursts (the count form is one burst), after its rules on dtypes, counts and lengths."""
    _same_dtype(dst, src, "DataCopy", site)
    isz = dst.dtype.itemsize
    if isinstance(count_or_params, DataCopyParams):
        p = count_or_params
        _check_params(p.blockCount, p.blockLen, site)
        blen = p.blockLen * BLOCK
        return BurstPlan(p.blockCount, blen, blen + p.srcStride * BLOCK, blen + p.dstStride * BLOCK, blen)
    count = int(count_or_params)
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
    _copy(dst, src, "DataCopyPad", shape, _datacopypad_bursts, params, kernel_point(), pad=padParams)


def _datacopypad_bursts(dst, src, params, site) -> BurstPlan:
    """DataCopyPad's bursts: GM strides in bytes, UB strides in 32-byte blocks, UB bursts padded to 32 bytes."""
    _same_dtype(dst, src, "DataCopyPad", site)
    if not isinstance(params, DataCopyExtParams):
        raise ArgumentError("DataCopyPad takes DataCopyExtParams(blockCount, blockLen_in_bytes, srcStride, "
                            "dstStride, 0)", fix="build the params struct; blockLen is in bytes here", site=site)
    _check_params(params.blockCount, params.blockLen, site, max_len=2**21)
    blen = params.blockLen
    ub_blen = -(-blen // BLOCK) * BLOCK
    if isinstance(src, GlobalTensor):       # GM -> UB
        return BurstPlan(params.blockCount, blen, blen + params.srcStride, ub_blen + params.dstStride * BLOCK, ub_blen)
    return BurstPlan(params.blockCount, blen, ub_blen + params.srcStride * BLOCK, blen + params.dstStride, blen)


def SetAtomicAdd(dtype=None) -> None:
    """Following UB -> GM copies add into GM instead of overwriting (``SetAtomicAdd<T>()``)."""
    core = current_core()
    core.atomic = as_dtype(dtype) if dtype is not None else True
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
        regions = _ranges((burst_region(dst, plan.count, plan.dst_blen, plan.dst_pitch),))
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
        regions = _ranges((burst_region(src, plan.count, plan.blen, plan.src_pitch),))
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
    _check_local_span(src, src_span, op, site)
    _check_local_span(dst, dst_span, op, site)
    regions = (_ranges((burst_region(src, plan.count, plan.blen, plan.src_pitch),)),
               _ranges((burst_region(dst, plan.count, plan.dst_blen, plan.dst_pitch),)))
    return _CopyPlan(_copy_local, plan, pipe, regions, 0, None, key[0], key[1], rate)


def _copy_in(core, dst: LocalTensor, src: GlobalTensor, cp: _CopyPlan, op, site, pad) -> None:
    buf = src.buf
    off = src.offset
    if off < 0 or off + cp.span > buf.nbytes:       # the GM side is the one part a plan cannot check
        src.check_range(off, cp.span, f"{op} read")
    plan = cp.plan
    core.issue_n(MTE2, op, (MTE2, cp.nbytes, plan.count, (buf.base_addr + off) % core.chip.gm_burst_align == 0),
                 (), cp.regions, cp.nbytes, "GM", cp.dst_name, 0, "copy", site)
    if plan.count == 1:
        cp.local[...] = buf.raw[off:off + plan.blen]
    else:
        cp.local[...] = np.ndarray((plan.count,), cp.local.dtype, buf.raw, off, (plan.src_pitch,))   # row by row
    if plan.dst_blen > plan.blen and pad is not None and pad.isPad:
        d = burst_view(dst.tier.arena, dst.addr, plan.count, plan.dst_blen, plan.dst_pitch)
        fill = np.full((plan.dst_blen - plan.blen) // dst.dtype.itemsize, pad.paddingValue, dst.dtype)
        d[:, plan.blen:] = fill.view(np.uint8)


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
    core.issue_n(MTE3, op + "(atomic add)" if atomic else op,
                 (MTE3, cp.nbytes, plan.count, (buf.base_addr + off) % core.chip.gm_burst_align == 0),
                 cp.regions, (), cp.nbytes, "UB", "GM", 0, "copy", site)
    if buf.written_by is not None:
        note_gm_write(buf, off, plan.count, plan.dst_blen if atomic else plan.blen, plan.dst_pitch,
                      len(core.records) - 1)
    if atomic:
        s = burst_view(src.tier.arena, src.addr, plan.count, plan.blen, plan.src_pitch)
        d = burst_view(buf.raw, off, plan.count, plan.dst_blen, plan.dst_pitch)
        dt = dst.dtype
        cur = np.ascontiguousarray(d).view(dt)
        add = np.ascontiguousarray(s).view(dt)
        with np.errstate(all="ignore"):     # an fp16 sum past 65504 is inf on the device too
            d[...] = (cur + add).astype(dt).view(np.uint8)
        return
    claim_gm(core, buf, off, plan, dst.dtype, site)
    if plan.count == 1:
        buf.raw[off:off + plan.blen] = cp.local
    else:
        np.ndarray((plan.count,), cp.local.dtype, buf.raw, off, (plan.dst_pitch,))[...] = cp.local


def _copy_local(core, dst: LocalTensor, src: LocalTensor, cp: _CopyPlan, op, site, pad=None) -> None:
    plan = cp.plan
    core.issue_n(cp.pipe, op, timing.local_transfer(core, cp.nbytes, cp.rate, core.chip.mte1_startup, plan.count),
                 cp.regions[0], cp.regions[1], cp.nbytes, cp.src_name, cp.dst_name, 0, "copy", site)
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


def _check_params(count: int, blen: int, site, max_len: int = 65535) -> None:
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


def claim_gm(core, buf, off: int, plan: BurstPlan, dtype, site) -> None:
    """memcheck: record which core wrote each GM byte; two cores on the same bytes is an error.

    A 32-byte chunk written whole has one owner (``buf.owners()``); a chunk written in part keeps
    an owner per byte (``buf._partial``). Each write is checked against both.
    """
    own = buf._owner
    if own is None:
        own = buf.owners()
    if plan.count == 1 and not (off | plan.dst_blen) & 31 and not buf._partial:
        # the usual copy-out: one burst of whole chunks; one reduction decides it when nobody wrote them yet
        seg = own[off >> 5:(off + plan.dst_blen) >> 5]
        if seg.tobytes() != _UNOWNED[:seg.nbytes]:     # one memcmp decides the usual case: nobody wrote them
            _check_chunks(core, buf, seg, off, plan, dtype, site)
        seg.fill(core.uid)
        return
    _claim_bursts(core, buf, own, off, plan, dtype, site)


_UNOWNED = np.full(1 << 15, -1, np.int16).tobytes()    # the owner bytes of chunks nobody wrote (-1)


def _check_chunks(core, buf, seg: np.ndarray, off: int, plan: BurstPlan, dtype, site) -> None:
    """Raise if a block other than ``core`` owns one of the whole chunks ``seg`` (burst by burst)."""
    seg = seg.reshape(-1)
    clash = (seg >= 0) & (seg != core.uid)
    if clash.any():
        i = int(np.flatnonzero(clash)[0])
        burst, k = divmod(i, plan.dst_blen // BLOCK)
        start = off + burst * plan.dst_pitch
        _conflict(core, buf, int(seg[i]), start + k * BLOCK, start, start + plan.dst_blen, dtype, site)


def _claim_bursts(core, buf, own: np.ndarray, off: int, plan: BurstPlan, dtype, site) -> None:
    """``claim_gm`` for strided copies and copies that cover chunks in part."""
    me = core.uid
    if not buf._partial and off % BLOCK == 0 and plan.dst_blen % BLOCK == 0 and plan.dst_pitch % BLOCK == 0:
        # every burst covers whole chunks: check and claim them through one (bursts, chunks) view
        seg = burst_view(own, off // BLOCK, plan.count, plan.dst_blen // BLOCK, plan.dst_pitch // BLOCK)
        if seg.tobytes() != _UNOWNED[:seg.nbytes]:      # a copy of the owners and one memcmp, as in claim_gm
            _check_chunks(core, buf, seg, off, plan, dtype, site)
        seg[...] = me
        return

    def check(owners: np.ndarray, first_byte: int, unit: int, start: int, end: int) -> None:
        clash = (owners >= 0) & (owners != me)
        if clash.any():
            i = int(np.flatnonzero(clash)[0])
            _conflict(core, buf, int(owners[i]), first_byte + i * unit, start, end, dtype, site)

    for b in range(plan.count):
        start = off + b * plan.dst_pitch
        end = start + plan.dst_blen
        c0, c1 = -(-start // BLOCK), end // BLOCK               # chunks written whole
        if c1 > c0:
            check(own[c0:c1], c0 * BLOCK, BLOCK, start, end)
            for c in [c for c in buf._partial if c0 <= c < c1]:
                check(buf._partial[c], c * BLOCK, 1, start, end)
            own[c0:c1] = me
        for c in {start // BLOCK, (end - 1) // BLOCK} - set(range(c0, c1)):    # chunks written in part
            lo, hi = max(start, c * BLOCK), min(end, (c + 1) * BLOCK)
            if own[c] >= 0 and own[c] != me:
                _conflict(core, buf, int(own[c]), lo, start, end, dtype, site)
            part = buf._partial.setdefault(c, np.full(BLOCK, -1, np.int16))
            check(part[lo - c * BLOCK:hi - c * BLOCK], lo, 1, start, end)
            part[lo - c * BLOCK:hi - c * BLOCK] = me


def _conflict(core, buf, other: int, at: int, start: int, end: int, dtype, site) -> None:
    oc = core.launch.cores[other]
    isz = np.dtype(dtype).itemsize
    raise GMWriteConflictError(
        f"block {core.block_idx} ({core.core_type}) writes GM buffer {buf.name!r} bytes {start}..{end - 1} "
        f"(elements {start // isz}..{(end - 1) // isz}); byte {at} was already written by block {oc.block_idx} "
        f"({oc.core_type}) in this launch",
        fix="offset each block's GlobalTensor by GetBlockIdx() * blockLength so ranges do not overlap, or call "
            "SetAtomicAdd(dtype) if the blocks are meant to accumulate", site=site)
