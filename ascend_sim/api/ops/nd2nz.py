"""``DataCopy(dst L1, src GM, Nd2NzParams)``: GM (ND, row-major) -> L1 (NZ fractals) on MTE2.

Documented behaviour implemented (DK 基础API/矩阵计算 "GMToL1随路转换-ND2NZ搬运（DataCopy）"):
for each of ``ndNum`` ND matrices (``srcNdMatrixStride`` elements apart in GM, ``dstNzMatrixStride``
elements apart in L1), each of its ``nValue`` rows of ``dValue`` elements (a row is ``srcDValue``
elements long in GM) is cut into C0-element pieces; piece j of row r goes to
``j * dstNzC0Stride * 32 B + r * dstNzNStride * 32 B``. "当dValue * sizeof(T)不满足32字节对齐时，
在目的矩阵中会补0对齐到32字节" (the last piece is zero-padded to 32 bytes); ndNum, nValue or dValue 0 is a NOP.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.engine import context, layout
from ascend_sim.engine.core import MTE2, regions_of
from ascend_sim.engine.context import current_core
from ascend_sim.engine.errors import ArgumentError, CubeFormatError, DtypeError, OutOfBoundsError, PositionError
from ascend_sim.engine.gmcheck import gm_read, record_read
from ascend_sim.hw.dtypes import ascend_name
from ascend_sim.api.checks import check_fields, field_spec, integer, live
from ascend_sim.api.ops.datacopy import PARAM_COPIES
from ascend_sim.api.ops.fractal import C0_BYTES, ROWS, byte_runs
from ascend_sim.api.tensor import GlobalTensor, LocalTensor, check_aligned

_FIELDS = ("ndNum", "nValue", "dValue", "srcNdMatrixStride", "srcDValue", "dstNzC0Stride", "dstNzNStride",
           "dstNzMatrixStride")


@dataclass
class Nd2NzParams:
    """``Nd2NzParams{ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride,
    dstNzMatrixStride}`` (C++ field order): ND matrices in GM to NZ fractals in L1.

    GM strides count elements; ``dstNzC0Stride`` and ``dstNzNStride`` count 32-byte blocks
    (C0_SIZE); ``dstNzMatrixStride`` counts elements.
    """

    ndNum: int = 0
    nValue: int = 0
    dValue: int = 0
    srcNdMatrixStride: int = 0
    srcDValue: int = 0
    dstNzC0Stride: int = 0
    dstNzNStride: int = 0
    dstNzMatrixStride: int = 0

    def __post_init__(self):
        check_fields(self, _SPEC)


_SPEC = field_spec(ndNum="uint16_t", nValue="uint16_t", dValue="uint32_t", srcNdMatrixStride="uint64_t",
                   srcDValue="uint64_t", dstNzC0Stride="uint16_t", dstNzNStride="uint16_t",
                   dstNzMatrixStride="uint32_t")      # kernel_struct_data_copy.h


_PIECE = np.dtype((np.void, C0_BYTES))     # one C0 piece: a 32-byte memcpy, not 32 one-byte copies


class _Nd2NzPlan:
    __slots__ = ("nop", "views", "sview", "regions", "nbytes", "bursts", "span", "lo", "hi")


def nd2nz_copy(dst, src, p: Nd2NzParams, site) -> None:
    """Run one Nd2Nz DataCopy (checked once per parameters and operands)."""
    core = context.current or current_core()
    try:
        key = ("Nd2Nz", p.ndNum, p.nValue, p.dValue, p.srcNdMatrixStride, p.srcDValue, p.dstNzC0Stride,
               p.dstNzNStride, p.dstNzMatrixStride, dst.tier, dst.addr, dst.size, dst.dtype, src.buf, src.dtype)
        plan = core.plans.get(key)
    except (AttributeError, TypeError):
        key = plan = None
    if plan is None:
        plan = _plan(dst, src, p, site)
        if key is not None:
            core.plans[key] = plan
    if plan.nop:
        core.scalar_tick()
        return
    buf, off = src.buf, src.offset
    if off < 0 or off + plan.span > buf.nbytes:
        src.check_range(off, plan.span, "DataCopy (Nd2Nz) read")
    count, blen, pitch = plan.bursts
    if buf.written:
        gm_read(core, buf, off, count, blen, pitch, MTE2, "DataCopy", site)
    record_read(core, buf, off, count, blen, pitch)
    core.issue_n(MTE2, "DataCopy", (MTE2, plan.nbytes, count, (buf.base_addr + off) % core.chip.gm_burst_align == 0,
                                    buf, off, blen, pitch, src.l2_mode),      # timing.gm_transfer: one burst per row
                 (), plan.regions, plan.nbytes, "GM", "L1", 0, "copy", site)
    layout.mark(dst.tier, plan.lo, plan.hi, 0)
    if not core.numerics:            # launch(..., numerics=False): timing only (context.computing())
        return
    shape, strides, tail_at = plan.sview
    full, tail, pad = plan.views
    if full is not None:
        full[...] = np.ndarray(shape, _PIECE, buf.raw, off, strides)
    if tail is not None:
        tail[...] = np.ndarray(tail.shape, np.uint8, buf.raw, off + tail_at, strides[:2] + (1,))
        pad[...] = 0


def _plan(dst, src, p, site) -> _Nd2NzPlan:
    """Nd2Nz's rules (positions, dtypes, ranges, sizes), its L1 region and the byte views it moves."""
    op = "DataCopy(Nd2NzParams)"
    if not isinstance(p, Nd2NzParams):
        raise ArgumentError(f"{op} takes an Nd2NzParams", fix="«Nd2NzParams(ndNum, nValue, dValue, ...)»", site=site)
    if not isinstance(dst, LocalTensor) or dst.tier.name != "L1":
        raise PositionError(f"{op}: dst must be an L1 tensor (A1/B1), got "
                            f"{getattr(getattr(dst, 'tier', None), 'name', type(dst).__name__)}",
                            fix="Nd2Nz copies GM into an A1/B1 queue's tensor; GM -> UB copies take DataCopyParams",
                            site=site)
    live(op, "dst", dst, site)
    if not isinstance(src, GlobalTensor) or src.buf is None:
        raise PositionError(f"{op}: src must be a GlobalTensor with its buffer set",
                            fix="pass the GM matrix (SetGlobalBuffer first)", site=site)
    if dst.dtype != src.dtype:
        raise DtypeError(f"{op} from {ascend_name(src.dtype)} to {ascend_name(dst.dtype)}",
                         fix="Nd2Nz does not convert dtypes: allocate the L1 tensor with the GM dtype", site=site)
    check_aligned(dst.addr, 32, f"{op} destination L1", "L1 tensors start on a 32-byte boundary")
    lim = {"ndNum": 4095, "nValue": 16384, "dValue": 65535, "srcNdMatrixStride": 65535, "srcDValue": 65535,
           "dstNzC0Stride": 16384, "dstNzNStride": 16384, "dstNzMatrixStride": 16384}
    v = {f: integer(op, f, getattr(p, f), site, 0, lim[f]) for f in _FIELDS}
    plan = _Nd2NzPlan()
    plan.nop = not (v["ndNum"] and v["nValue"] and v["dValue"])     # documented: a NOP
    if plan.nop:
        return plan
    for f in ("srcDValue", "dstNzC0Stride", "dstNzNStride"):
        if v[f] < 1:
            raise ArgumentError(f"{op}: {f} is 0; its range is 1..{lim[f]}",
                                fix="srcDValue: elements per GM row; dstNzC0Stride: 32-byte blocks between column "
                                    "blocks (usually the rows padded to 16); dstNzNStride: 1", site=site)
    isz = dst.dtype.itemsize
    c0 = C0_BYTES // isz
    nd, n, d = v["ndNum"], v["nValue"], v["dValue"]
    cb, tail = divmod(d, c0)                         # whole C0 pieces per row, elements in the last piece
    c0s, ns, ms = v["dstNzC0Stride"] * C0_BYTES, v["dstNzNStride"] * C0_BYTES, v["dstNzMatrixStride"] * isz
    blocks = cb + (1 if tail else 0)
    if blocks > 1 and c0s < n * ns:
        raise CubeFormatError(f"{op}: dstNzC0Stride {v['dstNzC0Stride']} < nValue {n} x dstNzNStride "
                              f"{v['dstNzNStride']}: column block 1 would overwrite rows {c0s // ns}.. of column "
                              f"block 0 (dstNzC0Stride counts 32-byte rows between column blocks)",
                              fix=f"dstNzC0Stride is the rows of one column block: nValue rounded up to 16 = "
                                  f"{-(-n // ROWS) * ROWS} (with dstNzNStride 1)", site=site)
    rows = -(-n // ROWS) * ROWS                      # the fractal rows the cube will read (padding counts as written)
    end = dst.addr + dst.nbytes
    spans = []
    for i in range(nd):
        for j in range(blocks):
            lo = dst.addr + i * ms + j * c0s
            last = lo + (n - 1) * ns + C0_BYTES
            if last > end:
                raise OutOfBoundsError(f"{op} writes {last - dst.addr} bytes into an L1 tensor of {dst.nbytes} "
                                       f"(ND matrix {i}, column block {j} of {blocks}, {n} rows)",
                                       fix="allocate rows rounded up to 16 x columns rounded up to C0 per matrix, "
                                           "or check dstNzC0Stride/dstNzMatrixStride", site=site)
            spans.append((lo, min(end, max(last, lo + (rows - 1) * ns + C0_BYTES))))
    plan.lo, plan.hi = min(s[0] for s in spans), max(s[1] for s in spans)
    plan.regions = regions_of((byte_runs(dst.tier, spans),))
    arena = dst.tier.arena
    sm, sd = v["srcNdMatrixStride"] * isz, v["srcDValue"] * isz
    plan.sview = ((nd, n, cb), (sm, sd, C0_BYTES), cb * C0_BYTES)
    full = np.ndarray((nd, n, cb), _PIECE, arena, dst.addr, (ms, ns, c0s)) if cb else None
    if tail:
        base = dst.addr + cb * c0s
        plan.views = (full, np.ndarray((nd, n, tail * isz), np.uint8, arena, base, (ms, ns, 1)),
                      np.ndarray((nd, n, C0_BYTES - tail * isz), np.uint8, arena, base + tail * isz, (ms, ns, 1)))
    else:
        plan.views = (full, None, None)
    plan.nbytes = nd * n * d * isz
    plan.bursts = (nd * n, d * isz, sd)
    plan.span = ((nd - 1) * sm + (n - 1) * sd + d * isz)
    return plan


PARAM_COPIES[Nd2NzParams] = nd2nz_copy
