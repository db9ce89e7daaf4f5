"""The per-pipe cycle model: what each instruction costs, from chip-profile parameters.

Placement (in order within a pipe, in parallel across pipes, after sync edges)
is in core.Core.issue; this module only prices instructions.
"""
from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np

from ascend_sim.engine.instr import PIPE_INDEX
from ascend_sim.engine.l2 import GM_BASE
from ascend_sim.engine.ubbanks import vector_repeat_cycles
from ascend_sim.hw.chips import DATA_BLOCK_BYTES

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
    package, or one package for the rest), each taking ``gm_burst_align`` (512 B) / the core's path rate
    [OFF, CANN gemm cycle model ``GetBandwidthUsageNd2Nz``], at ``gm_unaligned_efficiency`` when the
    GM address is not 512 B aligned; a vector core's bytes that miss L2 instead cost the packages of each row's
    pieces between 512 B windows, a row split across two windows at ``gm_unaligned_efficiency``
    (``aiv_gm_miss_row_packages``, :func:`aiv_miss_rows`), a piece of whole L2 lines through L2 at its share of a
    package (``aiv_gm_miss_line_pieces``, :func:`_line_pieces`; the GM -> L1 twin ``aic_gm_miss_line_pieces`` is a
    what-if), its bytes L2 serves at ``aiv_gm_l2_hit_bytes_per_cycle`` instead of the path rate (0: the path rate),
    and (what-ifs, off) a copy queued behind the previous one paying ``gm_read_queued_head_cycles`` in place
    of its start, or ``gm_read_requests_in_flight`` reads in flight, each paying only the start (a latency) that
    earlier reads' transfers leave (:func:`in_flight_start`). A cube core's GM -> L1 copy (MTE2 on an AIC, issue 30)
    prices each row (burst) by its bytes instead, at ``aic_gm_l2_hit_bytes_per_cycle`` for the share L2 serves and
    ``aic_gm_read_bytes_per_cycle`` for the rest, at least ``aic_gm_row_floor_cycles`` a row
    (:func:`aic_row_cycles`), a row starting off a 32 B block at ``aic_gm_unaligned_row_factor`` times its bytes
    (:func:`unaligned_rows`), except the share that misses L2 (``aic_gm_miss_row_packages``): that costs whole HBM
    packages of the row's pieces between 512 B windows (:func:`aic_miss_packages`, 8 cycles each); it pays its
    start in proportion to the bytes that miss L2 (``aic_gm_start_on_misses_only``: a copy L2 serves whole pays
    none; :func:`aic_copy_start`, with the what-ifs that hide a queued copy's start), and (a what-if, off) starts
    ``aic_gm_miss_latency_cycles`` later when any of its bytes miss L2. Bandwidth: the bytes L2
    serves (engine/l2.py) at this core's share of the L2 bandwidth, and the bytes that go through HBM (misses, bypassed writes, write-backs
    of dirty victims) at this core's fair share of the HBM bandwidth, within what the blocks simulated
    before left free (engine/bandwidth.py); the slowest of the three. Both shares divide a bandwidth
    evenly among the streams copying at the time, estimated (the other blocks' copies of the same moment
    may not be priced yet: the scheduler keeps them within a time slice) as the cores of this block's
    wave times this core's own GM duty cycle so far (busy GM cycles over elapsed cycles, starting from ``hbm_share_prior_cycles`` of full
    duty; with the what-if ``hbm_streams_exclude_starts`` less the starts they paid), for HBM times the launch's share
    so far of GM read bytes that missed L2 (the streams reading from HBM): two cores streaming from HBM at once get
    half each, a core alone all of it (up to its path rate). When the launch's GM data fits in L2, its first read has
    no miss share to go by and streams alone: when the blocks read one tile, its misses are what the others then
    hit. Where blocks run one after another (engine/scheduler.Launch.time_ordered), every transfer of the first block
    streams alone, for the same reason. Last, an MTE2/MTE3 transfer waits for the 512 B windows other cores' requests
    still hold (``gm_window_turns``: engine/bandwidth.WindowTurns).
    """
    gp, nb, count, aligned, buf, off, blen, pitch, mode = cost
    launch = core.launch
    if start > launch.horizon:          # other blocks are behind in simulated time: let them catch up first
        launch.time_yield(core, start)
    path = core.gm_paths.get(gp)
    if path is None:
        path = core.gm_paths[gp] = _gm_path(core, gp)
    per_package, startup, active, prior, hbm_bw, l2_bw, transfer, hbm, held, rows, first_probe, fills, window, \
        overlap, hit_scale, head, line, in_flight, starts_apart, by_pipe, efficiency, turns, joins, what_ifs = path
    if hbm is not None:                 # streams alone (the launch's first read of GM data that fits in L2)?
        first_read = held is None or (first_probe is not None and not first_probe.read_bytes)
    addr = buf.base_addr + off          # the copy's GM address (L2 and the window turns take its offset in the span)
    l2_bytes, hbm_bytes = transfer(gp != _MTE2, addr - GM_BASE, count, blen, pitch, nb, mode)
    if rows is None:
        packages = _PACKAGES.get(blen)
        if packages is None:
            packages = _PACKAGES[blen] = _packages(blen)
        moving = count * packages * per_package
        if not aligned:
            moving = moving / efficiency
        if window or (hit_scale != 1.0 and l2_bytes):   # a vector core's GM -> UB: misses and hits priced apart
            moving = aiv_miss_rows(moving, l2_bytes / nb if nb else 1.0, addr, count, blen, pitch, window,
                                   per_package, efficiency, hit_scale, line if mode else 0)
    else:                               # a cube core's GM -> L1 copy: rows by their bytes (aic_row_cycles)
        hit = l2_bytes / nb if nb else 0.0
        priced = hit                    # the share priced as hits: none off a 32 B block (offblock_hits_as_misses)
        if rows[13] and hit and (addr % DATA_BLOCK_BYTES or pitch % DATA_BLOCK_BYTES):
            priced = 0.0
        if rows[6]:                     # rows crossing a 512 B window cost the windows they touch
            moving = aic_window_rows(rows, off, count, blen, pitch, hit)
        elif rows[8] and priced < 1.0:  # what-if: missing bytes cost HBM packages per window piece
            moving = (1.0 - priced) * aic_miss_packages(addr, count, blen, pitch, rows[8],
                                                        line if mode else 0) * rows[2] * 512
            if priced:
                moving += priced * aic_byte_rows(core, rows, addr, count, blen, pitch, 1.0,
                                                 aligned or rows[10])
        else:
            moving = aic_byte_rows(core, rows, addr, count, blen, pitch, hit,
                                   aligned or (rows[10] and hit == 1.0))
        if rows[11]:                    # what-if: rows of a matrix whose inner axis is off 256 B cost more
            moving += nd2nz_inner_rows(count, blen, pitch, rows[11], rows[12])
        startup = aic_copy_start(core, rows, startup, start, hit)
        if rows[5] and hbm_bytes:       # what-if: bytes missing L2 wait one HBM round trip more
            startup = startup + rows[5]
    busy = core.busy
    duty = busy[_MTE2] + busy[_MTE3] + busy[_FIX]
    if what_ifs:                        # the what-ifs of _what_ifs (all off on the default chip: one test)
        startup, duty = _what_ifs(core, gp, nb, hbm_bytes, start, startup, duty, rows, overlap, head, in_flight,
                                  starts_apart, by_pipe)
        if core.chip.hbm_streams_live_blocks:   # what-if: blocks of the wave that have finished stream no more
            active = live_blocks(core, start, active)
    streams = active * (duty + prior) / (start - core.start_time + prior)
    if streams < 1.0:
        streams = 1.0
    if l2_bytes:
        shared = l2_bytes / l2_bw * streams
        if not aligned:
            shared = shared / efficiency
        if shared > moving:
            moving = shared
    if hbm_bytes and hbm is not None:
        # fair sharing: the HBM bandwidth split evenly among the streams copying now (a core alone: all of it,
        # up to its path rate), and never more than the bins have left (engine/bandwidth.py)
        rate = nb / moving if moving else hbm_bw
        fair = hbm_bw
        if not first_read:              # the streams reading from HBM: GM streams x the launch's read-miss share
            l2 = held
            if by_pipe:                 # what-if: each pipe's duty times its own HBM share
                on_hbm = hbm_streams(core, l2, active, start, prior)
            else:
                on_hbm = streams * (l2.read_bytes - l2.read_hit_bytes) / l2.read_bytes
            if on_hbm > 1.0:
                fair = hbm_bw / on_hbm
        waiting = hbm.reserve(start, hbm_bytes, rate if rate < fair else fair)
        if waiting > moving:
            moving = waiting
    if gp == _FIX:                      # Fixpipe: no line fills, no window turns
        return startup + moving
    uid = core.uid
    own = moving
    if fills is not None:               # MTE2: lines another core is still bringing in: wait for them
        moving = fills.read((addr, count, blen, pitch), uid, start + startup, moving, hbm_bytes > 0, start)
    if turns is not None:               # windows other cores hold: wait for their turns (same-address rule)
        if moving > own and joins:
            # what-if: the fill it waits for is the other core's turn on these windows: one wait, the later end
            turned = own + turns.wait(addr - GM_BASE, count, blen, pitch, nb, uid, start, own,
                                      hbm_bytes / nb if nb else 0.0)
            if turned > moving:
                moving = turned
        else:
            moving += turns.wait(addr - GM_BASE, count, blen, pitch, nb, uid, start, moving,
                                 hbm_bytes / nb if nb else 0.0)
    if what_ifs:
        if overlap:                     # what-if: remember this copy's transfer for the next one's start
            core.gm_paths[_PREVIOUS_COPY] = moving
        elif in_flight:                 # what-if: this read's end, for the read in_flight places later
            core.gm_paths[_IN_FLIGHT].append(start + startup + moving)
    return startup + moving


def _what_ifs(core: Core, gp: int, nb: int, hbm_bytes: float, start: float, startup: float, duty: float,
              rows, overlap: bool, head: float | None, in_flight: int, starts_apart: bool,
              by_pipe: bool) -> tuple[float, float]:
    """:func:`gm_cycles`' what-ifs before the bandwidth shares, with the fields of the transfer's path
    (:func:`_gm_path`) that :func:`gm_cycles` unpacked:
    ``hbm_streams_by_pipe`` (each pipe's bytes and the HBM bytes its transfers moved), a vector core's GM -> UB
    start (``gm_read_requests_in_flight``, ``gm_start_overlaps_previous``, ``gm_read_queued_head_cycles``) and
    ``hbm_streams_exclude_starts`` (a GM pipe moves no bytes during a start: the GM ``duty`` less the starts paid).
    Returns (startup, duty)."""
    if by_pipe:
        moved = core.launch.pipe_bytes
        moved[gp] = moved.get(gp, 0.0) + nb
        moved[-1 - gp] = moved.get(-1 - gp, 0.0) + hbm_bytes
    if rows is None:
        if in_flight:                   # reads in flight, the start a latency under earlier transfers
            startup = in_flight_start(core, startup, start, in_flight)
        elif overlap:                   # a queued GM -> UB copy starts under the previous one's transfer
            startup = overlapped_start(core, startup, start)
        elif head is not None and start == core.tail[_MTE2] and core.busy[_MTE2] > 0.0:
            startup = head              # queued behind the previous copy, only its instruction head
    if starts_apart:
        paid = core.gm_paths.get(_STARTS_PAID, 0.0)
        duty -= paid
        core.gm_paths[_STARTS_PAID] = paid + startup
    return startup, duty


def live_blocks(core: Core, start: float, active: int) -> int:
    """``hbm_streams_live_blocks``: the cores of ``core``'s wave still running at ``start`` (a block whose kernel ended
    before it reads nothing more), at most ``active`` and at least this one."""
    launch = core.launch
    wave = core.group // launch.physical
    live = sum(1 for b in launch.blocks
               if b.core.group // launch.physical == wave and not (b.done and b.core.end_time() <= start))
    return max(1, min(active, live))


def hbm_streams(core: Core, l2, active: int, start: float, prior: float) -> float:
    """The streams moving HBM bytes now, as a core of ``active`` in its wave sees them (``hbm_streams_by_pipe``):
    the wave's cores times each GM pipe's duty on this core (MTE2 from ``prior`` cycles of full duty) times that
    pipe's own HBM share so far in the launch: the HBM bytes its transfers moved (misses, bypassed writes, and the
    write-backs of the dirty victims their allocations evicted) over its bytes, at most 1. Writes that land in L2
    and evict nothing dirty do not compete for HBM: the Add sample's z, written into L2 while x and y bypass it
    ("z 写数据时会命中 L2 Cache，而 L2 的带宽很高", add_high_performance README). 48 cores reading all from HBM,
    writing all into L2: 48 x the MTE2 duty."""
    busy = core.busy
    elapsed = start - core.start_time + prior
    moved = core.launch.pipe_bytes
    total = 0.0
    for pipe, duty in ((_MTE2, busy[_MTE2] + prior), (_MTE3, busy[_MTE3]), (_FIX, busy[_FIX])):
        nb = moved.get(pipe)
        if nb:
            share = moved[-1 - pipe] / nb
            total += duty * (share if share < 1.0 else 1.0)
    return active * total / elapsed


_PREVIOUS_COPY = "mte2_previous_copy"  # core.gm_paths key: the last MTE2 GM read's transfer cycles (what-if)


def aic_copy_start(core: Core, rows: tuple, startup: float, start: float, hit: float) -> float:
    """The start (``aic_gm_read_startup``, CANN's kNd2NzStartCost) a cube core's GM -> L1 copy pays, placed at
    ``start`` with L2 hit share ``hit``; with every rule below off, the whole start. On the default chip only
    ``aic_gm_start_on_misses_only``; the others are what-ifs:
    ``aic_gm_start_hidden_when_queued`` (a copy queued behind the previous one pays none),
    ``gm_start_overlaps_previous`` (:func:`overlapped_start`, both MTE2 paths), ``aic_gm_start_on_misses_only``
    (the start in proportion to the bytes that miss L2: CANN's auto-tiling model prices MoveGmToL1 with a 210-cycle start and
    MoveL2ToL1 with none; a copy's lines are in L2 whole or not at all, so in practice a copy L2 serves pays none)."""
    queued = start == core.tail[_MTE2] and core.busy[_MTE2] > 0.0
    if rows[3] and queued:
        return 0                        # queued behind the previous copy: its start overlaps that copy's data
    if rows[9]:
        startup = overlapped_start(core, startup, start)
    if rows[7] and hit:
        startup = startup * (1.0 - hit)     # the start is the HBM access's; bytes L2 serves skip it
    return startup


def overlapped_start(core: Core, startup: float, start: float) -> float:
    """The start an MTE2 GM read (an AIV's GM -> UB or an AIC's GM -> L1, ``gm_start_overlaps_previous``) pays
    when placed at ``start``: queued behind the previous read (MTE2 busy until ``start``), its start runs under that
    read's transfer, so it pays what the transfer leaves of it, max(0, startup - transfer); issued to an idle MTE2,
    the whole start. A DMA engine with two requests in flight: the next one's address phase under the current one's
    data. 80-cycle start after a 16-cycle 128 B row: 64; after a 1,024-cycle tile: 0."""
    if start == core.tail[_MTE2] and core.busy[_MTE2] > 0.0:
        left = startup - core.gm_paths.get(_PREVIOUS_COPY, 0.0)
        return left if left > 0.0 else 0.0
    return startup


_STARTS_PAID = "gm_starts_paid"      # core.gm_paths key: the start cycles this core's GM pipes paid (what-if)
_IN_FLIGHT = "mte2_reads_in_flight"  # core.gm_paths key: the ends of the last gm_read_requests_in_flight GM reads


def in_flight_start(core: Core, startup: float, start: float, in_flight: int) -> float:
    """The part of its start (``startup``, a latency: request to first data) a vector core's GM -> UB read placed at
    ``start`` pays, with ``in_flight`` reads in flight at once (``gm_read_requests_in_flight``): its request leaves
    when the scalar issues it, after the flag it waits on, and once the read ``in_flight`` places back has ended; its
    data follows the earlier reads' (``start``), so it pays max(0, request + startup - start). With 1 the request
    leaves at ``start``: the whole start. Reads issued faster than they move: (startup + transfer) / in_flight cycles
    a read when that exceeds the transfer (8 in flight, an 80-cycle start, 4-cycle reads: 10.5)."""
    ends = core.gm_paths.get(_IN_FLIGHT)
    if ends is None:
        ends = core.gm_paths[_IN_FLIGHT] = deque(maxlen=in_flight)
    request = core.scalar_time
    gate = core.gate[_MTE2]
    if gate > request:
        request = gate
    if len(ends) == in_flight and ends[0] > request:
        request = ends[0]
    left = request + startup - start
    return left if left > 0.0 else 0.0


_PACKAGES: dict = {}


def _packages(blen: int) -> int:
    """GM packages of one burst: whole 512 B lines, then one 256 B and one 128 B piece, then one for the rest."""
    return blen // 512 + (blen % 512) // 256 + (blen % 256) // 128 + (1 if blen % 128 else 0)


def _gm_path(core: Core, pipe: int) -> tuple:
    """A GM pipe's constants for one block: (cycles per package, startup, cores of its wave, prior, HBM and L2
    bandwidths, the L2 access, the HBM bookings, the L2 when this block is held to a fair share of HBM, the cube
    copy's row constants, the L2 whose first read streams alone (blocks in time order, GM data that fits in L2),
    the launch's fills in flight for MTE2, the 512 B window of a vector core's GM -> UB miss packages or 0, whether
    an MTE2 read's start overlaps the previous read's transfer, the L2-hit rate scale, the queued head, the L2 line of
    the line pieces, the GM -> UB reads in flight (0: off), whether the HBM streams leave out the starts, whether
    they go by pipe, ``gm_unaligned_efficiency``, the launch's window turns (MTE2, MTE3), whether a fill wait joins
    them, whether any what-if of :func:`_what_ifs` is on): looked up once per block, not per transfer."""
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
                chip.aic_gm_start_hidden_when_queued, chip.aic_gm_unaligned_row_factor,
                chip.aic_gm_miss_latency_cycles, chip.gm_burst_align if chip.aic_gm_row_windows else 0,
                chip.aic_gm_start_on_misses_only, chip.gm_burst_align if chip.aic_gm_miss_row_packages else 0,
                chip.gm_start_overlaps_previous, chip.aic_gm_hit_rows_unaligned_free,
                chip.aic_nd2nz_unaligned_inner_row_cycles, chip.aic_nd2nz_inner_align,
                chip.aic_gm_offblock_hits_as_misses)
    held = None if alone else l2
    first_probe = held if launch.unset < 0.0 and l2.fits else None     # both fixed while the launch runs
    window = chip.gm_burst_align if pipe == _MTE2 and rows is None and chip.aiv_gm_miss_row_packages else 0
    hit_scale = 1.0                     # a vector core's GM -> UB bytes L2 serves: at aiv_gm_l2_hit_bytes_per_cycle
    if pipe == _MTE2 and rows is None and chip.aiv_gm_l2_hit_bytes_per_cycle:
        hit_scale = rate / chip.aiv_gm_l2_hit_bytes_per_cycle
    overlap = pipe == _MTE2 and chip.gm_start_overlaps_previous
    head = chip.gm_read_queued_head_cycles if pipe == _MTE2 and rows is None and chip.gm_read_queued_head_cycles \
        else None
    in_flight = chip.gm_read_requests_in_flight if pipe == _MTE2 and rows is None and \
        chip.gm_read_requests_in_flight > 1 else 0
    what_ifs = bool(overlap or head is not None or in_flight or chip.hbm_streams_exclude_starts
                    or chip.hbm_streams_by_pipe or chip.hbm_streams_live_blocks)
    return (chip.gm_burst_align / rate, startup, active, chip.hbm_share_prior_cycles, chip.hbm_bytes_per_cycle,
            chip.l2_bytes_per_cycle, launch.l2.transfer, launch.hbm, held, rows, first_probe,
            launch.fills if pipe == _MTE2 else None, window, overlap, hit_scale, head,
            chip.l2_line_bytes if (chip.aic_gm_miss_line_pieces if core.core_type == "AIC" else
                                   chip.aiv_gm_miss_line_pieces) else 0,
            in_flight, chip.hbm_streams_exclude_starts, chip.hbm_streams_by_pipe, chip.gm_unaligned_efficiency,
            launch.turns if pipe != _FIX else None, chip.gm_fill_wait_joins_turns, what_ifs)


def aiv_miss_rows(moving: float, hit: float, addr: int, count: int, blen: int, pitch: int, window: int,
                  per_package: float, efficiency: float, hit_scale: float = 1.0, line: int = 0) -> float:
    """A vector core's GM -> UB copy whose L2 hit share is ``hit``: the hit share keeps ``moving`` (each burst in
    packages, at ``gm_unaligned_efficiency`` off a 512 B boundary) times ``hit_scale`` (the path rate over
    ``aiv_gm_l2_hit_bytes_per_cycle``; 1: hits at the path rate); with ``window`` (``aiv_gm_miss_row_packages``)
    the share that misses L2 (or bypasses it) costs the HBM packages of each row's pieces between 512 B windows (the
    cube path's rule, :func:`aic_miss_packages`), ``per_package`` cycles each (512 B at the AIV's path rate), a row
    that starts off a window and runs into the next at ``efficiency`` (:func:`aiv_row_packages`; ``line``: pieces of
    whole L2 lines at their share of a package), without it ``moving``. A 32 KB copy on windows, 16 cycles a
    package: 1,024 cycles missing, 1,024 x 32 / 110 = 298 hit."""
    if hit >= 1.0:
        return moving * hit_scale
    served = hit * moving * hit_scale if hit else 0.0
    if window:
        packages = _AIV_PACKAGES.get((addr % window, count, blen, pitch % window, window, efficiency, line))
        if packages is None:        # (aiv_row_packages' own look-up, inline: one call less per copy)
            packages = aiv_row_packages(addr, count, blen, pitch, window, efficiency, line)
        missing = (1.0 - hit) * packages * per_package
    else:
        missing = (1.0 - hit) * moving
    return missing + served


_AIV_PACKAGES: dict = {}


def aiv_row_packages(addr: int, count: int, blen: int, pitch: int, window: int, efficiency: float,
                     line: int = 0) -> float:
    """Packages of ``count`` GM -> UB rows of ``blen`` bytes ``pitch`` apart from GM address ``addr``: each row cut at
    the ``window`` (512 B) boundaries it crosses, each piece in packages of 512, 256, 128 B and one for the rest (as
    :func:`aic_miss_packages`); a row that starts off a window and runs into the next (a split request) at
    ``efficiency`` (``gm_unaligned_efficiency``: the guide's GM地址尽量512B对齐 page, GM -> UB at 32 B alignment as
    little as 70 % of 512 B). A row inside one window or starting on one: its packages. A 2,048 B row on a window: 4;
    2 B past a window's start: (3 + 3 + 1) / 0.7 = 10; a 128 B row at byte 128: 1 (was 1 / 0.7 for the copy), with
    ``line`` (``aiv_gm_miss_line_pieces``) 1/4."""
    first, step = addr % window, pitch % window
    key = (first, count, blen, step, window, efficiency, line)
    got = _AIV_PACKAGES.get(key)
    if got is None:
        period = window // math.gcd(step, window) if step else 1
        starts = (first + np.arange(min(count, period), dtype=np.int64) * step) % window
        head = np.minimum(window - starts, blen)
        rest = blen - head
        per_row = _line_pieces(starts, head, window, line) + rest // window + _line_pieces(0, rest % window, window,
                                                                                          line)
        split = (starts != 0) & (head < blen)
        per_row[split] /= efficiency
        whole, part = divmod(count, len(starts))
        got = _AIV_PACKAGES[key] = float(whole * per_row.sum() + per_row[:part].sum())
    return got


def aic_byte_rows(core: Core, rows: tuple, addr: int, count: int, blen: int, pitch: int, hit: float,
                  aligned: bool) -> float:
    """``count`` rows of a cube core's GM -> L1 copy priced by their bytes (:func:`aic_row_cycles`), a row starting
    off a 32 B block at ``aic_gm_unaligned_row_factor`` times its bytes (:func:`unaligned_rows`), the whole at
    ``gm_unaligned_efficiency`` when the copy's GM start is not 512 B aligned."""
    moving = count * aic_row_cycles(rows, blen, hit)
    if rows[4] != 1.0 and (addr % DATA_BLOCK_BYTES or pitch % DATA_BLOCK_BYTES):
        odd = unaligned_rows(addr, count, pitch)        # rows off a 32 B block take each twice
        if odd:
            moving += odd * (aic_row_cycles(rows, blen * rows[4], hit) - aic_row_cycles(rows, blen, hit))
    if not aligned:
        moving = moving / core.chip.gm_unaligned_efficiency
    return moving


_MISS_PACKAGES: dict = {}


def aic_miss_packages(addr: int, count: int, blen: int, pitch: int, window: int, line: int = 0) -> float:
    """HBM packages of ``count`` rows of ``blen`` bytes ``pitch`` apart from GM address ``addr`` (what-if
    ``aic_gm_miss_row_packages``): each row cut at the ``window`` (512 B) boundaries it crosses (GM requests are
    handled per 512 B window: G 避免同地址访问.md), each piece in packages of 512, 256 and 128 B and one for the
    rest (:func:`_packages`; CANN's ``GetBandwidthUsageNd2Nz``). A 512 B row on a window: 1; a 128 B row inside
    one: 1; a 512 B row 2 B past a window's start: 3 (510 B: 256 + 128 + the rest) + 1 (2 B) = 4."""
    first, step = addr % window, pitch % window
    key = (first, count, blen, step, window, line)
    got = _MISS_PACKAGES.get(key)
    if got is None:
        period = window // math.gcd(step, window) if step else 1
        starts = (first + np.arange(min(count, period), dtype=np.int64) * step) % window
        head = np.minimum(window - starts, blen)                    # the piece up to the first boundary
        rest = blen - head
        full, tail = rest // window, rest % window
        per_row = _line_pieces(starts, head, window, line) + full + _line_pieces(0, tail, window, line)
        whole, part = divmod(count, len(starts))
        got = _MISS_PACKAGES[key] = float(whole * per_row.sum() + per_row[:part].sum())
    return got


def _line_pieces(starts, pieces: np.ndarray, window: int, line: int) -> np.ndarray:
    """Packages of row ``pieces`` (each inside one ``window``) starting at byte ``starts`` of their window: whole
    packages (:func:`_vpackages`), or with ``line`` (what-ifs ``aiv_gm_miss_line_pieces``,
    ``aic_gm_miss_line_pieces``) a piece that starts on an L2 line and covers whole lines at its share of a package
    (a 128 B line: 1/4)."""
    got = _vpackages(pieces).astype(np.float64)
    if line:
        whole = (np.asarray(starts) % line == 0) & (pieces % line == 0)
        got = np.where(whole, pieces / window, got)
    return got


def _vpackages(n: np.ndarray) -> np.ndarray:
    """:func:`_packages` of each length in ``n`` (0 for an empty piece)."""
    return n // 512 + (n % 512) // 256 + (n % 256) // 128 + (n % 128 > 0)


def nd2nz_inner_rows(count: int, blen: int, pitch: int, extra: float, align: int) -> float:
    """Extra cycles of ``count`` Nd2Nz rows of ``blen`` bytes ``pitch`` apart (what-if
    ``aic_nd2nz_unaligned_inner_row_cycles``): ``extra`` a row when the source matrix's inner axis (the pitch) is
    not a multiple of ``align`` (256 B; the guide's AIV核上的ND2NZ格式转换 page: on-path ND2NZ uses the bandwidth
    poorly then); none for a single row or for contiguous rows of 64-256 B, which CANN's gemm cycle model merges
    into one burst. 1,024 contiguous rows of 32 B at 16: 16,384; 16 rows of 128 B, pitch 128: 0; 8 rows of 512 B,
    pitch 8,190: 128."""
    if count < 2 or not pitch % align or (pitch == blen and 64 <= blen <= 256):
        return 0.0
    return count * extra


def aic_row_cycles(rows: tuple, blen: int, hit: float) -> float:
    """One row (burst) of a cube core's GM -> L1 copy: its bytes at the L2-hit and the miss rates, in the copy's
    L2 hit share ``hit``, and at least ``aic_gm_row_floor_cycles`` (not whole 512 B packages: a 128 B row costs
    what its bytes cost, or the floor). ``rows``: (floor, cycles per hit byte, cycles per miss byte, hidden start,
    unaligned row factor, miss latency, 512 B window or 0, start on misses only, 512 B window of the miss packages
    or 0, start overlapping the previous copy, L2-hit rows free of the 512 B alignment efficiency, extra cycles of a
    row of a matrix whose inner axis is off 256 B, that alignment)."""
    floor, per_hit, per_miss = rows[:3]
    cycles = blen * (hit * per_hit + (1.0 - hit) * per_miss)
    return cycles if cycles > floor else floor


_UNALIGNED: dict = {}


def unaligned_rows(addr: int, count: int, pitch: int) -> int:
    """How many of ``count`` rows, ``pitch`` bytes apart from GM address ``addr``, start off a 32 B DataBlock.

    Such a row's 32 B C0 pieces each span two GM blocks, so the Nd2Nz path takes every block twice
    (``aic_gm_unaligned_row_factor``). The starts repeat every 32 / gcd(pitch, 32) rows.
    """
    first, step = addr % DATA_BLOCK_BYTES, pitch % DATA_BLOCK_BYTES
    if not step:
        return count if first else 0
    key = (first, step, count)
    odd = _UNALIGNED.get(key)
    if odd is None:
        period = DATA_BLOCK_BYTES // math.gcd(step, DATA_BLOCK_BYTES)
        starts = [(first + i * step) % DATA_BLOCK_BYTES for i in range(period)]
        full, rest = divmod(count, period)
        odd = _UNALIGNED[key] = count - full * starts.count(0) - starts[:rest].count(0)
    return odd


def aic_window_rows(rows: tuple, off: int, count: int, blen: int, pitch: int, hit: float) -> float:
    """A cube core's GM -> L1 rows under the 512 B window rule (``aic_gm_row_windows``): GM requests are handled
    per 512 B window (G 避免同地址访问.md: "地址请求会按照512字节粒度对齐后进行处理"), so a row that stays in one
    window costs its bytes (:func:`aic_row_cycles`) and a row that crosses window boundaries costs a whole window
    for each window it touches (the data_copy sample: rows of 512 B at N = 12287 instead of 12288 take 1.97x,
    rows of 2 KB in the GM -> UB copy 1.28x: 2 and 5/4 windows). ``off``: the first row's byte in its GM buffer
    (kernel arguments start 512 B aligned)."""
    window = rows[6]
    single, crossing = _windows(off % window, count, blen, pitch % window, window)
    cycles = crossing * aic_row_cycles(rows, window, hit)
    if single:
        cycles += single * aic_row_cycles(rows, blen, hit)
    return cycles


_WINDOWS: dict = {}


def _windows(first: int, count: int, blen: int, step: int, window: int) -> tuple[int, int]:
    """(rows inside one window, windows touched by the rows that cross a boundary) for ``count`` rows of ``blen``
    bytes, the first at byte ``first`` of a window and each ``step`` (the pitch modulo the window) further."""
    key = (first, count, blen, step, window)
    got = _WINDOWS.get(key)
    if got is None:
        if step == 0:                   # every row at the same place in its window
            touched = (first + blen + window - 1) // window
            got = (count, 0) if touched == 1 else (0, count * touched)
        else:
            starts = (first + np.arange(count, dtype=np.int64) * step) % window
            touched = (starts + blen + window - 1) // window
            cross = touched > 1
            got = (int(count - np.count_nonzero(cross)), int(touched[cross].sum()))
        _WINDOWS[key] = got
    return got


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
