"""Scalar access to local memory and to GM: GetValue/SetValue on PIPE_S.

The scalar unit reads UB directly, so a value a vector instruction or a copy
wrote must be synchronised to it first. The compiler's auto-sync (自动同步,
``--cce-auto-sync``, on by default: guide 内存访问原理/Scalar读写数据.md, "Scalar读写数据时的同步")
inserts that SetFlag/WaitFlag (V_S, MTE2_S ...; and S_V, S_MTE3 ... before a later pipe's
access): ``Core.auto_sync`` makes the same wait. With ``launch(..., auto_sync=False)`` the kernel
needs its own flags (or PipeBarrier(PIPE_ALL)); the racecheck reports a missing one.

``GlobalTensor.GetValue/SetValue`` ("获取/设置GlobalTensor的相应偏移位置的值", ``__inout_pipe__(S)``) cost
``scalar_gm_cycles`` on PIPE_S and go through the GM sanitizer as a one-element read or write on pipe S:
a read of bytes an MTE3 copy of this block wrote needs a flag (MTE3_S: auto-sync's, or the kernel's when it is
off), a read or write of bytes another block wrote needs SyncAll; two blocks' SetValue in one 64-byte DCache
line is a GMWriteConflictError ("多核操作GM地址时，要求不同核操作的地址至少有Cache Line大小的偏移"). Not modelled: the DCache itself (writes reach GM at
once here; on the device they need DataCacheCleanAndInvalid before a DMA or another core sees them).
"""
from __future__ import annotations

import numpy as np

from ascend_sim.api.checks import integer, live, scalar
from ascend_sim.engine.core import S
from ascend_sim.engine.gmcheck import gm_read, gm_write, record_read
from ascend_sim.engine.memory import note_gm_write
from ascend_sim.engine.errors import GMWriteConflictError, OutOfBoundsError, kernel_point
from ascend_sim.engine.memory import GRANULE
from ascend_sim.hw.dtypes import ascend_name
from ascend_sim.engine.context import current_core


def _check_index(t, index: int, what: str, site) -> int:
    live(what, "the tensor", t, site)
    i = integer(what, "index", index, site)
    if not 0 <= i < t.size:
        raise OutOfBoundsError(f"{what}({i}) outside the tensor's {t.size} {ascend_name(t.dtype)} elements "
                               f"({t.tier.name}+{t.addr})", fix=f"use an index in 0..{t.size - 1}", site=site)
    return i


def local_get_value(t, index: int):
    """Read one element on the scalar pipe."""
    site = kernel_point()
    i = _check_index(t, index, "GetValue", site)
    core = current_core()
    g = (t.addr + i * t.dtype.itemsize) // GRANULE
    end = t.addr + (i + 1) * t.dtype.itemsize            # the slice's step: the byte the read ends at
    core.issue(S, "GetValue", core.chip.scalar_mem_cycles, reads=((t.tier, slice(g, g + 1, end)),),
               nbytes=t.dtype.itemsize, src=t.tier.name, dst="", klass="scalar", site=site)
    return t.view(i + 1)[i].item()


def local_set_value(t, index: int, value) -> None:
    """Write one element on the scalar pipe."""
    site = kernel_point()
    i = _check_index(t, index, "SetValue", site)
    scalar("SetValue", "value", value, t.dtype, site)
    core = current_core()
    g = (t.addr + i * t.dtype.itemsize) // GRANULE
    core.issue(S, "SetValue", core.chip.scalar_mem_cycles, writes=((t.tier, slice(g, g + 1)),),
               nbytes=t.dtype.itemsize, src="", dst=t.tier.name, klass="scalar", site=site)
    isz = t.dtype.itemsize
    t.tier.arena[t.addr + i * isz:t.addr + (i + 1) * isz].view(t.dtype)[0] = np.asarray(value).astype(t.dtype)


def _gm_index(t, index: int, what: str, site) -> int:
    """The byte offset in its GM buffer of element ``index`` of GlobalTensor ``t``, bounds-checked."""
    t.GetPhyAddr()              # the tensor has its buffer
    i = integer(what, "offset", index, site)
    if not 0 <= i < t.size:
        raise OutOfBoundsError(f"GlobalTensor.{what}({i}) outside the tensor's {t.size} {ascend_name(t.dtype)} "
                               f"elements (GM buffer {t.buf.name!r})", fix=f"use an offset in 0..{t.size - 1}",
                               site=site)
    off = t.offset + i * t.dtype.itemsize
    t.check_range(off, t.dtype.itemsize, f"GlobalTensor.{what}")
    return off


def gm_get_value(t, index: int):
    """Read one GM element on the scalar pipe."""
    site = kernel_point()
    off = _gm_index(t, index, "GetValue", site)
    core = current_core()
    isz = t.dtype.itemsize
    if t.buf.written:
        gm_read(core, t.buf, off, 1, isz, isz, S, "GlobalTensor.GetValue", site)
    record_read(core, t.buf, off, 1, isz, isz, S)
    core.issue(S, "GetValue(GM)", core.chip.scalar_gm_cycles, nbytes=isz, src="GM", dst="", klass="scalar",
               site=site)
    return t.buf.raw[off:off + isz].view(t.dtype)[0].item()


DCACHE_LINE = 64     # bytes: the SetValue page, "后续写出时以Cache Line（64B）为单位"


def _check_line(core, t, off: int, site) -> None:
    """Two blocks' SetValue in one 64-byte line with no SyncAll between: the DCache write-backs clobber each other."""
    line = off // DCACHE_LINE
    lines = t.buf.scalar_lines
    prev = lines.get(line)
    lines[line] = (core.uid, core.epoch, off)
    if prev is None or prev[0] == core.uid or prev[1] <= core.seen.get(prev[0], -1) or prev[2] == off:
        return                  # the same element is the ordinary GM write conflict (gm_write reports it)
    other = core.launch.cores[prev[0]]
    raise GMWriteConflictError(
        f"GlobalTensor.SetValue writes GM buffer {t.buf.name!r} byte {off}, and block {other.block_idx} SetValue'd "
        f"byte {prev[2]} of the same {DCACHE_LINE}-byte cache line with no SyncAll between: SetValue writes the "
        f"core's DCache, which goes back to GM in whole lines, so one block's line overwrites the other's value "
        f"(SetValue page: 不同核操作的地址至少有Cache Line大小的偏移)",
        fix=f"give each block its own {DCACHE_LINE}-byte-aligned slot (pad per-block results to {DCACHE_LINE} "
            "bytes), or collect the values in UB and DataCopy them out", site=site)


def gm_set_value(t, index: int, value) -> None:
    """Write one GM element on the scalar pipe."""
    site = kernel_point()
    off = _gm_index(t, index, "SetValue", site)
    scalar("GlobalTensor.SetValue", "value", value, t.dtype, site)
    core = current_core()
    isz = t.dtype.itemsize
    _check_line(core, t, off, site)
    gm_write(core, t.buf, off, 1, isz, isz, S, False, t.dtype, site)
    core.issue(S, "SetValue(GM)", core.chip.scalar_gm_cycles, nbytes=isz, src="", dst="GM", klass="scalar",
               site=site)
    if t.buf.written_by is not None:
        note_gm_write(t.buf, off, 1, isz, isz, len(core.records) - 1)
    t.buf.raw[off:off + isz] = np.asarray(value).astype(t.dtype).reshape(1).view(np.uint8)
