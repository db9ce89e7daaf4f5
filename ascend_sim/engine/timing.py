"""The per-pipe cycle model: what each instruction costs, from chip-profile parameters.

Placement (in order within a pipe, in parallel across pipes, after sync edges)
is in core.Core.issue; this module only prices instructions.
"""
from __future__ import annotations

import math
from typing import Any

from ascend_sim.engine.instr import PIPE_INDEX
from ascend_sim.engine.l2 import GM_BASE
from ascend_sim.engine.ubbanks import vector_repeat_cycles

Core = Any      # engine/core.Core, which imports this module (so not imported here)

_MTE2, _MTE3, _FIX = PIPE_INDEX["MTE2"], PIPE_INDEX["MTE3"], PIPE_INDEX["FIX"]


def gm_transfer(pipe: int, nbytes: int, aligned: bool, buf, off: int, count: int, blen: int, pitch: int,
                mode: int) -> tuple:
    """The cost of a GM read (MTE2) or write (MTE3/FIX), priced at its start by ``Core.issue_n``.

    ``count`` bursts of ``blen`` bytes, ``pitch`` apart, from byte ``off`` of GM buffer ``buf``;
    ``mode``: the GlobalTensor's L2 cache mode. Priced by :func:`gm_cycles` when it is placed.
    """
    return (pipe, nbytes, count, aligned, buf, off, blen, pitch, mode)


def gm_cycles(core: Core, start: float, cost: tuple) -> float:
    """Cycles of a GM transfer starting at ``start``: startup, then the slower of the core's path and its bandwidth share.

    Path: each burst moves in packages of a 512 B line (a burst's tail rounds up to a 256 B or 128 B
    package, or one package for the rest), each taking ``l2_line_bytes`` / the core's path rate
    [OFF, CANN gemm cycle model ``GetBandwidthUsageNd2Nz``], at ``gm_unaligned_efficiency`` when the
    GM address is not 512 B aligned. A cube core's GM -> L1 copy (MTE2 on an AIC, issue 30) prices each row
    (burst) by its bytes instead, at ``aic_gm_l2_hit_bytes_per_cycle`` for the share L2 serves and
    ``aic_gm_read_bytes_per_cycle`` for the rest, at least ``aic_gm_row_floor_cycles`` a row
    (:func:`aic_row_cycles`); it pays its Nd2Nz start in proportion to the bytes that miss L2
    (``aic_gm_start_on_misses_only``: the start is the HBM access's; a what-if skips it when the copy waited in the
    MTE2 queue, ``aic_gm_start_hidden_when_queued``), and a copy of a tile another core is still bringing in from
    HBM ends with that fill (``aic_gm_wait_for_fill``, :func:`wait_for_fill`). Bandwidth: the bytes L2
    serves (engine/l2.py) at this core's share of the L2 bandwidth, and the bytes that go through HBM (misses, bypassed writes, write-backs
    of dirty victims) at this core's fair share of the HBM bandwidth, within what the blocks simulated
    before left free (engine/bandwidth.py); the slowest of the three. Both shares divide a bandwidth
    evenly among the streams copying at the time, estimated (the other blocks' copies of the same moment
    may not be priced yet: the scheduler keeps them within a time slice) as the cores of this block's
    wave times this core's own GM duty cycle so far (busy GM cycles over elapsed cycles, starting from ``hbm_share_prior_cycles`` of full
    duty), for HBM times the launch's share so far of GM read bytes that missed L2 (the streams reading
    from HBM): two cores streaming from HBM at once get half each, a core alone all of it (up to its path
    rate). When the launch's GM data fits in L2, its first read has no miss share to go by and streams
    alone: when the blocks read one tile, its misses are what the others then hit. Where blocks run one
    after another (engine/scheduler.Launch.time_ordered), every transfer of the first block streams
    alone, for the same reason.
    """
    gp, nb, count, aligned, buf, off, blen, pitch, mode = cost
    launch = core.launch
    if start > launch.horizon:          # other blocks are behind in simulated time: let them catch up first
        launch.time_yield(core, start)
    path = core.gm_paths.get(gp)
    if path is None:
        path = core.gm_paths[gp] = _gm_path(core, gp)
    per_package, startup, active, prior, hbm_bw, l2_bw, transfer, hbm, held, rows = path
    first_read = held is None or (launch.unset < 0.0 and held.fits and not held.read_bytes)   # streams alone
    l2_bytes, hbm_bytes = transfer(gp != _MTE2, buf.base_addr - GM_BASE + off, count, blen, pitch, nb, mode)
    if rows is None:
        packages = _PACKAGES.get(blen)
        if packages is None:
            packages = _PACKAGES[blen] = _packages(blen)
        moving = count * packages * per_package
        if not aligned:
            moving = moving / core.chip.gm_unaligned_efficiency
    else:                               # a cube core's GM -> L1 copy: rows by their bytes (aic_row_cycles)
        hit = l2_bytes / nb if nb else 0.0
        moving = count * aic_row_cycles(rows, blen, hit)
        if not aligned:
            moving = moving / core.chip.gm_unaligned_efficiency
        if rows[3] and start == core.tail[_MTE2] and core.busy[_MTE2] > 0.0:
            startup = 0                 # queued behind the previous copy: its start overlaps that copy's data
        elif rows[4] and hit:
            startup = startup * (1.0 - hit)     # the start is the HBM access's: bytes L2 serves skip it
    busy = core.busy
    streams = active * (busy[_MTE2] + busy[_MTE3] + busy[_FIX] + prior) / (start - core.start_time + prior)
    if streams < 1.0:
        streams = 1.0
    if l2_bytes:
        shared = l2_bytes / l2_bw * streams
        if not aligned:
            shared = shared / core.chip.gm_unaligned_efficiency
        if shared > moving:
            moving = shared
    if hbm_bytes and hbm is not None:
        # fair sharing: the HBM bandwidth split evenly among the streams copying now (a core alone: all of it,
        # up to its path rate), and never more than the bins have left (engine/bandwidth.py)
        rate = nb / moving if moving else hbm_bw
        fair = hbm_bw
        if not first_read:              # the streams reading from HBM: GM streams x the launch's read-miss share
            l2 = held
            on_hbm = streams * (l2.read_bytes - l2.read_hit_bytes) / l2.read_bytes
            if on_hbm > 1.0:
                fair = hbm_bw / on_hbm
        waiting = hbm.reserve(start, hbm_bytes, rate if rate < fair else fair)
        if waiting > moving:
            moving = waiting
    if rows is not None and (rows[5] or rows[6]):
        if rows[6]:
            return after_same_tile(launch.l2, buf.base_addr + off, count, blen, pitch, start, startup + moving)
        return wait_for_fill(launch.l2, buf.base_addr + off, count, blen, pitch, l2_bytes < nb, start,
                             startup + moving)
    return startup + moving


def after_same_tile(l2, addr: int, count: int, blen: int, pitch: int, start: float, cycles: float) -> float:
    """A cube core's copy of a GM tile that another core's copy is reading at the same moment is served after it
    (the address conflict of G Matmul性能调优案例/Matmul高阶API使能多核K轴错峰访问内存.md: cores reading the same GM
    addresses at once slow each other's MTE2): it ends its own cycles after that copy ends. Every copy records when
    it starts and ends."""
    key = (addr, count, blen, pitch)
    fills = l2.fills
    last = fills.get(key)
    if last is not None and start < last[1]:
        if start < last[0]:             # decided out of the chip's order (a time slice): it came first
            cycles = cycles + (last[1] - last[0])
            return cycles
        cycles = cycles + (last[1] - start)
    fills[key] = (start, start + cycles)
    return cycles


def wait_for_fill(l2, addr: int, count: int, blen: int, pitch: int, missed: bool, start: float,
                  cycles: float) -> float:
    """A cube core's copy of a GM tile that another core's copy is still bringing into L2 (its lines are resident,
    their fill is not done) ends no earlier than that fill: it is served when the fill's data arrives, not at the
    L2-hit rate. A copy that missed records when its fill starts and ends. Blocks are decided at most a time slice
    out of the chip's order (engine/scheduler.py), so a copy that starts before the recorded fill would have been
    the miss itself: it takes the miss's time."""
    key = (addr, count, blen, pitch)
    fills = l2.fills
    fill = fills.get(key)
    if fill is not None and start < fill[1]:
        wait = fill[1] - (start if start > fill[0] else fill[0])
        return wait if wait > cycles else cycles
    if missed:
        fills[key] = (start, start + cycles)
    return cycles


_PACKAGES: dict = {}


def _packages(blen: int) -> int:
    """GM packages of one burst: whole 512 B lines, then one 256 B and one 128 B piece, then one for the rest."""
    return blen // 512 + (blen % 512) // 256 + (blen % 256) // 128 + (1 if blen % 128 else 0)


def _gm_path(core: Core, pipe: int) -> tuple:
    """A GM pipe's constants for one block: (cycles per package, startup, cores of its wave, prior, HBM and L2
    bandwidths, the L2 access, the HBM bookings, the L2 when this block is held to a fair share of HBM)."""
    chip, launch = core.chip, core.launch
    if pipe == _MTE2:
        aic = core.core_type == "AIC"
        rate = chip.aic_gm_read_bytes_per_cycle if aic else chip.gm_read_bytes_per_cycle
        startup = chip.aic_gm_read_startup if aic else chip.gm_read_startup
    elif pipe == _FIX:
        rate, startup = chip.fix_gm_bytes_per_cycle, chip.fix_startup
    else:
        rate, startup = chip.gm_write_bytes_per_cycle, chip.gm_write_startup
    wave_first = core.group // launch.physical * launch.physical
    active = min(launch.physical, launch.block_dim - wave_first) * launch.per_group
    # blocks one after another: the first block of a launch whose GM data fits in L2 is not held to a fair
    # share (its misses are the data the other blocks will then find in L2)
    l2 = launch.l2
    alone = launch.unset > 0.0 and l2.fits and not (l2.hbm_read_bytes + l2.hbm_write_bytes)
    rows = None
    if pipe == _MTE2 and core.core_type == "AIC" and chip.aic_gm_row_floor_cycles:
        rows = (chip.aic_gm_row_floor_cycles, 1.0 / chip.aic_gm_l2_hit_bytes_per_cycle, 1.0 / rate,
                chip.aic_gm_start_hidden_when_queued, chip.aic_gm_start_on_misses_only, chip.aic_gm_wait_for_fill,
                chip.aic_gm_same_tile_serial)
    return (chip.l2_line_bytes / rate, startup, active, chip.hbm_share_prior_cycles, chip.hbm_bytes_per_cycle,
            chip.l2_bytes_per_cycle, launch.l2.transfer, launch.hbm, None if alone else l2, rows)


def aic_row_cycles(rows: tuple, blen: int, hit: float) -> float:
    """One row (burst) of a cube core's GM -> L1 copy: its bytes at the L2-hit and the miss rates, in the copy's
    L2 hit share ``hit``, and at least ``aic_gm_row_floor_cycles`` (not whole 512 B packages: a 128 B row costs
    what its bytes cost, or the floor). ``rows``: (floor, cycles per hit byte, cycles per miss byte, hidden start)."""
    floor, per_hit, per_miss = rows[0], rows[1], rows[2]
    cycles = blen * (hit * per_hit + (1.0 - hit) * per_miss)
    return cycles if cycles > floor else floor


def local_transfer(core: Core, nbytes: int, bytes_per_cycle: float, startup: int, bursts: int = 1) -> float:
    """Cost of an on-chip copy (L1->L0A/L0B, UB->L1, UB->UB)."""
    return startup + (bursts - 1) * core.chip.burst_overhead_cycles + nbytes / bytes_per_cycle


def vector(core: Core, repeats: int, klass: str, dst=None, srcs=()) -> float:
    """Cost of a vector instruction: startup + repeats x cycles per 256 B repeat of its class.

    With the operands given as (UB address, itemsize, element count | lane offsets) on a chip with
    the arch-2201 UB banks, each repeat takes the most accesses that collide in a bank or bank group
    (engine/ubbanks.py), at least its class's cycles.
    """
    chip = core.chip
    base = chip.vec_cycles_per_repeat[klass]
    if dst is None or not chip.ub_bank_groups:
        return chip.vec_startup + repeats * base
    return chip.vec_startup + vector_repeat_cycles(repeats, base, dst, srcs)


def vector_repeats(count: int, itemsize: int, repeat_bytes: int = 256) -> int:
    return max(1, math.ceil(count * itemsize / repeat_bytes))


def cube(core: Core, fractals: int) -> float:
    """Cost of Mmad: startup + fractal MACs at ``cube_fractals_per_cycle``."""
    return core.chip.cube_startup + fractals / core.chip.cube_fractals_per_cycle
