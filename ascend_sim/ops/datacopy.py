"""Data movement: DataCopy, DataCopyPad and their parameter structs, atomic add.

Paths: GM -> UB and GM -> L1 on MTE2, UB -> GM, UB -> L1 and UB -> UB on MTE3,
L1 -> UB on MTE1 (coupled chips). DataCopy moves whole 32-byte DataBlocks;
DataCopyPad moves any byte length.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import timing
from ..core import MTE1, MTE2, MTE3, burst_region
from ..dtypes import ascend_name, as_dtype
from ..errors import AlignmentError, ArgumentError, DtypeError, GMWriteConflictError, PositionError, caller_site
from ..memory import GlobalTensor, LocalTensor, check_aligned
from ..runtime import current_core

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


class _Plan:
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
    site = caller_site()
    _same_dtype(dst, src, "DataCopy", site)
    isz = dst.dtype.itemsize
    if isinstance(count_or_params, DataCopyParams):
        p = count_or_params
        _check_params(p.blockCount, p.blockLen, site)
        blen = p.blockLen * BLOCK
        plan = _Plan(p.blockCount, blen, blen + p.srcStride * BLOCK, blen + p.dstStride * BLOCK, blen)
    else:
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
        plan = _Plan(1, count * isz, count * isz, count * isz, count * isz)
    _copy(dst, src, plan, "DataCopy", site)


def DataCopyPad(dst, src, params: DataCopyExtParams, padParams: DataCopyPadExtParams | None = None) -> None:
    """Copy bursts of any byte length between GM and UB, padding UB bursts to 32 bytes."""
    site = caller_site()
    _same_dtype(dst, src, "DataCopyPad", site)
    if not isinstance(params, DataCopyExtParams):
        raise ArgumentError("DataCopyPad takes DataCopyExtParams(blockCount, blockLen_in_bytes, srcStride, "
                            "dstStride, 0)", fix="build the params struct; blockLen is in bytes here", site=site)
    _check_params(params.blockCount, params.blockLen, site, max_len=2**21)
    blen = params.blockLen
    ub_blen = -(-blen // BLOCK) * BLOCK
    if isinstance(src, GlobalTensor):       # GM -> UB: GM stride in bytes, UB stride in blocks
        plan = _Plan(params.blockCount, blen, blen + params.srcStride, ub_blen + params.dstStride * BLOCK, ub_blen)
    else:                                   # UB -> GM
        plan = _Plan(params.blockCount, blen, ub_blen + params.srcStride * BLOCK, blen + params.dstStride, blen)
    _copy(dst, src, plan, "DataCopyPad", site, pad=padParams)


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
def _copy(dst, src, plan: _Plan, op: str, site, pad: DataCopyPadExtParams | None = None) -> None:
    core = current_core()
    dst_gm, src_gm = isinstance(dst, GlobalTensor), isinstance(src, GlobalTensor)
    if dst_gm and src_gm:
        raise PositionError(f"{op} from GM to GM is not a hardware path", fix="stage the data through UB", site=site)
    if src_gm:
        _gm_to_local(core, dst, src, plan, op, site, pad)
    elif dst_gm:
        _local_to_gm(core, dst, src, plan, op, site)
    else:
        _local_to_local(core, dst, src, plan, op, site)


def _gm_to_local(core, dst: LocalTensor, src: GlobalTensor, plan: _Plan, op, site, pad) -> None:
    if not isinstance(dst, LocalTensor) or dst.tier.name not in ("UB", "L1"):
        raise PositionError(f"{op} from GM goes to UB (VECIN/VECCALC) or L1 (A1/B1), not "
                            f"{getattr(dst, 'tier', None) and dst.tier.name}",
                            fix="copy into a tensor from a VECIN queue or an A1/B1 queue", site=site)
    if dst.addr % 32:       # test first: the message is only formatted when it fails (hot path)
        check_aligned(dst.addr, 32, f"{op} destination {dst.tier.name}",
                      "UB/L1 tensors must start on a 32-byte boundary: offset sub-tensors by multiples of 32 bytes")
    src_off = src._require().offset
    src_span = (plan.count - 1) * plan.src_pitch + plan.blen
    src.check_range(src_off, src_span, f"{op} read")
    dst_span = (plan.count - 1) * plan.dst_pitch + plan.dst_blen
    _check_local_span(dst, dst_span, op, site)
    g = burst_region(dst, plan.count, plan.dst_blen, plan.dst_pitch)
    core.issue(MTE2, op, timing.gm_transfer(core, MTE2, plan.count * plan.blen, src.address, plan.count),
               writes=(g,), nbytes=plan.count * plan.blen, src="GM", dst=dst.tier.name, site=site, klass="copy")
    _move(dst.tier.arena, dst.addr, plan.dst_pitch, src.ptr.buf.raw, src_off, plan.src_pitch, plan.count, plan.blen)
    if plan.dst_blen > plan.blen and pad is not None and pad.isPad:
        d = _bursts(dst.tier.arena, dst.addr, plan.count, plan.dst_blen, plan.dst_pitch)
        fill = np.full((plan.dst_blen - plan.blen) // dst.dtype.itemsize, pad.paddingValue, dst.dtype)
        d[:, plan.blen:] = fill.view(np.uint8)


def _local_to_gm(core, dst: GlobalTensor, src: LocalTensor, plan: _Plan, op, site) -> None:
    if not isinstance(src, LocalTensor) or src.tier.name != "UB":
        raise PositionError(f"{op} to GM reads UB (VECOUT); {getattr(src, 'tier', None) and src.tier.name} "
                            "results leave through Fixpipe (L0C) or via UB",
                            fix="copy out of a VECOUT tensor, or use Fixpipe for L0C", site=site)
    if src.addr % 32:       # as above
        check_aligned(src.addr, 32, f"{op} source UB", "UB tensors must start on a 32-byte boundary")
    src_span = (plan.count - 1) * plan.src_pitch + plan.blen
    _check_local_span(src, src_span, op, site)
    dst_off = dst._require().offset
    dst_span = (plan.count - 1) * plan.dst_pitch + plan.dst_blen
    dst.check_range(dst_off, dst_span, f"{op} write")
    g = burst_region(src, plan.count, plan.blen, plan.src_pitch)
    atomic = core.atomic is not None
    if atomic and core.atomic is not True and core.atomic != dst.dtype:
        raise DtypeError(f"{op} of {ascend_name(dst.dtype)} data while SetAtomicAdd({ascend_name(core.atomic)}) is "
                         f"active: the atomic unit would add the bytes as {ascend_name(core.atomic)}",
                         fix=f"call SetAtomicAdd({ascend_name(dst.dtype)}) before this copy, or SetAtomicNone() "
                             "if it should overwrite", site=site)
    core.issue(MTE3, op + ("(atomic add)" if atomic else ""),
               timing.gm_transfer(core, MTE3, plan.count * plan.blen, dst.address, plan.count),
               reads=(g,), nbytes=plan.count * plan.blen, src="UB", dst="GM", site=site, klass="copy")
    buf = dst.ptr.buf
    if atomic:
        s = _bursts(src.tier.arena, src.addr, plan.count, plan.blen, plan.src_pitch)
        d = _bursts(buf.raw, dst_off, plan.count, plan.dst_blen, plan.dst_pitch)
        dt = dst.dtype
        cur = np.ascontiguousarray(d).view(dt)
        add = np.ascontiguousarray(s).view(dt)
        with np.errstate(all="ignore"):     # an fp16 sum past 65504 is inf on the device too
            d[...] = (cur + add).astype(dt).view(np.uint8)
    else:
        _claim(core, buf, dst_off, plan, dst.dtype, site)
        _move(buf.raw, dst_off, plan.dst_pitch, src.tier.arena, src.addr, plan.src_pitch, plan.count, plan.blen)


def _local_to_local(core, dst: LocalTensor, src: LocalTensor, plan: _Plan, op, site) -> None:
    paths = {("UB", "UB"): (MTE3, core.chip.ub_to_ub_bytes_per_cycle),
             ("UB", "L1"): (MTE3, core.chip.ub_to_l1_bytes_per_cycle),
             ("L1", "UB"): (MTE1, core.chip.ub_to_l1_bytes_per_cycle)}
    key = (src.tier.name, dst.tier.name)
    if key not in paths:
        raise PositionError(f"{op} from {key[0]} to {key[1]} is not a DataCopy path",
                            fix="L1 -> L0A/L0B is LoadData; L0C -> GM is Fixpipe; GM <-> UB/L1 is DataCopy",
                            site=site)
    pipe, rate = paths[key]
    src_span = (plan.count - 1) * plan.src_pitch + plan.blen
    dst_span = (plan.count - 1) * plan.dst_pitch + plan.dst_blen
    _check_local_span(src, src_span, op, site)
    _check_local_span(dst, dst_span, op, site)
    core.issue(pipe, op, timing.local_transfer(core, plan.count * plan.blen, rate, core.chip.mte1_startup,
                                               plan.count),
               reads=(burst_region(src, plan.count, plan.blen, plan.src_pitch),),
               writes=(burst_region(dst, plan.count, plan.dst_blen, plan.dst_pitch),), nbytes=plan.count * plan.blen,
               src=key[0], dst=key[1], site=site, klass="copy")
    s = _bursts(src.tier.arena, src.addr, plan.count, plan.blen, plan.src_pitch).copy()
    _bursts(dst.tier.arena, dst.addr, plan.count, plan.dst_blen, plan.dst_pitch)[:, :plan.blen] = s


# ----------------------------------------------------------------------------- helpers
def _bursts(raw: np.ndarray, off: int, count: int, blen: int, pitch: int) -> np.ndarray:
    """A (count, blen) byte view of ``count`` bursts starting at ``off``, ``pitch`` bytes apart."""
    if count == 1:
        return raw[off:off + blen].reshape(1, blen)
    end = off + count * pitch
    if blen <= pitch and end <= raw.size:   # the same view by slicing: several times cheaper than as_strided
        return raw[off:end].reshape(count, pitch)[:, :blen]
    return as_strided(raw[off:], shape=(count, blen), strides=(pitch, 1), writeable=True)


def _move(dst_raw: np.ndarray, dst_off: int, dst_pitch: int, src_raw: np.ndarray, src_off: int, src_pitch: int,
          count: int, blen: int) -> None:
    """Copy ``count`` bursts of ``blen`` bytes between two byte arrays (GM and a tier: never overlapping)."""
    if count == 1:      # fast path, most copies: one slice assignment, no 2-D views
        dst_raw[dst_off:dst_off + blen] = src_raw[src_off:src_off + blen]
    else:
        _bursts(dst_raw, dst_off, count, blen, dst_pitch)[...] = _bursts(src_raw, src_off, count, blen, src_pitch)


def _check_params(count: int, blen: int, site, max_len: int = 65535) -> None:
    if not 1 <= count <= 4095:
        raise ArgumentError(f"blockCount must be in 1..4095, got {count}", fix="split the copy in several calls",
                            site=site)
    if not 1 <= blen <= max_len:
        raise ArgumentError(f"blockLen must be in 1..{max_len}, got {blen}",
                            fix="blockLen counts 32-byte blocks for DataCopy and bytes for DataCopyPad", site=site)


def _check_local_span(t: LocalTensor, span: int, op: str, site) -> None:
    if span > t.nbytes:
        from ..errors import OutOfBoundsError
        raise OutOfBoundsError(
            f"{op} touches {span} bytes of a {t.tier.name} tensor that holds {t.nbytes} bytes "
            f"({t.size} {ascend_name(t.dtype)} elements at {t.tier.name}+{t.addr})",
            fix="copy fewer elements or allocate a larger buffer in InitBuffer", site=site)


def _same_dtype(dst, src, op: str, site) -> None:
    if dst.dtype != src.dtype:
        raise DtypeError(f"{op} between {ascend_name(src.dtype)} source and {ascend_name(dst.dtype)} destination",
                         fix="copies do not convert: use the same dtype on both sides and Cast in UB", site=site)


def _claim(core, buf, off: int, plan: _Plan, dtype, site) -> None:
    """memcheck: record which core wrote each GM byte; two cores on the same bytes is an error.

    A 32-byte chunk written whole has one owner (``buf.owners()``); a chunk written in part keeps
    an owner per byte (``buf._partial``). Each write is checked against both.
    """
    own = buf.owners()
    me = core.uid
    if not buf._partial and off % BLOCK == 0 and plan.dst_blen % BLOCK == 0 and plan.dst_pitch % BLOCK == 0:
        # fast path: every burst covers whole chunks; check and claim them in one vectorised step
        chunks = (off // BLOCK + np.arange(plan.count)[:, None] * (plan.dst_pitch // BLOCK)
                  + np.arange(plan.dst_blen // BLOCK)).ravel() if plan.count > 1 else \
            slice(off // BLOCK, (off + plan.dst_blen) // BLOCK)
        seg = own[chunks]
        if seg.max() >= 0:      # one reduction decides the usual case: chunks no block has written yet
            clash = (seg >= 0) & (seg != me)
            if clash.any():
                i = int(np.flatnonzero(clash)[0])
                burst, k = divmod(i, plan.dst_blen // BLOCK)
                start = off + burst * plan.dst_pitch
                _conflict(core, buf, int(seg[i]), start + k * BLOCK, start, start + plan.dst_blen, dtype, site)
        own[chunks] = me
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
