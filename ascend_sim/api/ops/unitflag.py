"""The L0C unit flags (unitFlag 2/3 of Mmad and Fixpipe): the cube's hardware hand-over per 512 B of L0C.

Failure it prevents: a Fixpipe with unitFlag timed as if it waited for the whole Mmad (no gain from the feature),
or a Fixpipe that on the chip would wait forever for flags no Mmad sets, silently run.

The rule (Mmad API page, 关键特性说明/UnitFlag.md, in https://github.com/cannmirror/asc-devkit ``docs/zh/api/``):
each 512 B block of L0C has a unit flag. A Mmad with unitFlag 2 or 3 writes a block only while its flag is 0
(2 leaves it, 3 sets it to 1 when done); a Fixpipe with unitFlag 2 or 3 reads a block only while its flag is 1
(2 leaves it, 3 clears it to 0). The Matmul tuning case ``Matmul高阶API使能UnitFlag.md`` (guide, 优秀实践/
Matmul性能调优案例/) describes the effect: "每当完成一个512B数据结果的计算，FIXPIPE立即开始搬出该512B的数据".

Model: the hand-over is a synchronisation edge (the reader's pipe gets the writer's clock: the sanitizer sees
the Fixpipe ordered after the Mmad, and the next Mmad after the Fixpipe), and a pipelined overlap in time. The
writer produces its blocks evenly over its cycles after its start-up, in the order the reader takes them (the
Matmul API sets the Mmad direction to match Fixpipe's NZ2ND, SetMMLayoutTransform); so the reader starts once
the first block it reads is done, and ends no earlier than the writer's last block plus one block of the
reader's own time. The same holds the other way (a Mmad refilling blocks a Fixpipe with unitFlag 3 frees).
The instructions still run in program order: a Mmad that needs flags a later Fixpipe would clear, or a Fixpipe
whose blocks no Mmad with unitFlag 3 filled, is reported (on the chip: a pipe that waits forever). Not modelled:
SetFixPipeConfig's reset of the flags (the sample's optional clean-up) and SetMMRowMajor/ColumnMajor (the order is
assumed to match).
"""
from __future__ import annotations

from ascend_sim.engine.core import Event
from ascend_sim.engine.errors import SyncError, format_site
from ascend_sim.engine.timing import gm_cycles

UNIT_BYTES = 512        # [OFF] UnitFlag.md: "对于L0C Buffer中的每个内存块（512B），提供一个单元标志位"


class _Held:
    """What an instruction with unitFlag left on the blocks it touched: its pipe's clock after it, its start,
    cycles and start-up, the L0C bytes [lo, hi) it covered, its record, its site."""

    __slots__ = ("vc", "start", "cycles", "startup", "lo", "hi", "rec", "site")

    def __init__(self, vc, start: float, cycles: float, startup: float, lo: int, hi: int, rec: int, site):
        self.vc, self.start, self.cycles, self.startup = vc, start, cycles, startup
        self.lo, self.hi, self.rec, self.site = lo, hi, rec, site

    def done_at(self, offset: int) -> float:
        """When this instruction has finished the L0C bytes up to ``offset`` past its ``lo`` (evenly, after its
        start-up)."""
        span = self.hi - self.lo
        share = min(1.0, offset / span) if span else 1.0
        return self.start + self.startup + (self.cycles - self.startup) * share


class UnitFlags:
    """One core's L0C unit flags: a flag per 512 B block and what the last instruction with unitFlag left there."""

    def __init__(self, l0c_bytes: int):
        n = -(-l0c_bytes // UNIT_BYTES)
        self.flag = bytearray(n)
        self.held: list = [None] * n


def flags_of(core) -> UnitFlags:
    uf = core.regs.get("unitflag")
    if uf is None:
        uf = core.regs["unitflag"] = UnitFlags(core.chip.l0c_bytes)
    return uf


class _Timed:
    """An instruction's cost as a function of its start (engine/core.issue_n calls it once): the base cost (cycles,
    or a GM transfer priced by ``gm_cycles``), held to end no earlier than ``not_before``; it keeps the start and
    the cycles it gave."""

    __slots__ = ("core", "base", "not_before", "start", "cycles")

    def __init__(self, core, base, not_before: float):
        self.core, self.base, self.not_before = core, base, not_before
        self.start = self.cycles = 0.0

    def __call__(self, start: float) -> float:
        base = self.base
        if base.__class__ is tuple:
            c = gm_cycles(self.core, start, base)
        elif callable(base):            # an atomic write (engine/atomics.AtomicWrite)
            c = base(start)
        else:
            c = base
        if self.not_before > start + c:
            c = self.not_before - start
        self.start, self.cycles = start, c
        return c


def _blocks(lo: int, hi: int) -> range:
    return range(lo // UNIT_BYTES, -(-hi // UNIT_BYTES))


def _wait_on(core, pipe: int, blocks: range, uf: UnitFlags, lo: int, hi: int, unit_cycles_after) -> float:
    """Make ``pipe`` wait for what the instructions held on ``blocks`` left (the first block this instruction
    touches done), and return the cycle it may end at the earliest (their last block done, plus one block of this
    instruction's own time, ``unit_cycles_after``)."""
    not_before = 0.0
    for h in {id(h): h for h in (uf.held[b] for b in blocks) if h is not None}.values():
        first = max(lo, h.lo) - h.lo + UNIT_BYTES
        last = min(hi, h.hi) - h.lo
        ready = h.done_at(first)
        # core.wait adds the flag latency of SetFlag/WaitFlag; the unit flag is the hardware's own hand-over
        core.wait(pipe, Event(h.vc, ready - core.event_latency, h.rec, h.site))
        end = h.done_at(last) + unit_cycles_after
        if end > not_before:
            not_before = end
    for b in blocks:
        uf.held[b] = None
    return not_before


def mmad_cost(core, pipe: int, cost: float, lo: int, hi: int, unit_flag: int, site):
    """Before a Mmad with ``unit_flag`` 2 or 3 writing L0C bytes [lo, hi) is issued: wait for the Fixpipe that
    freed those blocks; returns the cost to issue (a ``_Timed`` of ``cost``)."""
    uf = flags_of(core)
    blocks = _blocks(lo, hi)
    full = [b for b in blocks if uf.flag[b]]
    if full:
        h = uf.held[full[0]]
        raise SyncError(
            f"Mmad with unitFlag {unit_flag} writes L0C bytes {lo}..{hi}, but {len(full)} of their 512 B blocks "
            f"still hold the result of the Mmad with unitFlag 3 at {_where(h)}, which no Fixpipe with unitFlag has "
            "read yet: the unit flag is 1, so this Mmad would wait for a Fixpipe that comes after it in the kernel "
            "(the simulator runs the instructions in program order)",
            fix="move the result out first (Fixpipe with unitFlag 3 on those blocks), or write this Mmad to "
                "another L0C buffer", site=site, kind="unitflag-full")
    per_unit = (cost - core.chip.cube_startup) * UNIT_BYTES / (hi - lo) if hi > lo else 0.0
    return _Timed(core, cost, _wait_on(core, pipe, blocks, uf, lo, hi, per_unit))


def fixpipe_cost(core, pipe: int, transfer: tuple, out_bytes: int, lo: int, hi: int, unit_flag: int, site):
    """Before a Fixpipe with ``unit_flag`` 2 or 3 reading L0C bytes [lo, hi) (whole column blocks, their padding
    rows included) and writing ``out_bytes`` is issued: wait for the Mmad that filled those blocks (its first
    block done); returns the cost to issue (a ``_Timed``: the transfer, ending after the Mmad's last block plus
    one block out)."""
    uf = flags_of(core)
    blocks = _blocks(lo, hi)
    empty = [b for b in blocks if not uf.flag[b]]
    if empty:
        raise SyncError(
            f"Fixpipe with unitFlag {unit_flag} reads L0C bytes {lo}..{hi}, but {len(empty)} of their 512 B blocks "
            "have unit flag 0: only a Mmad with unitFlag 3 sets it to 1, and none wrote them since they were last "
            "read or reset, so this Fixpipe would wait forever (on the chip: the FIX pipe hangs)",
            fix="give the last Mmad of the K loop unitFlag 3 (the others 2), or pass unitFlag 0 to this Fixpipe "
                "and synchronise with SetFlag/WaitFlag<HardEvent::M_FIX>", site=site, kind="unitflag-empty")
    # one block's share of this Fixpipe's own time: its cost as priced at the Mmad's end (a GM write, so an
    # estimate before it is placed: the bytes of one block of its output at the Fixpipe rate)
    per_unit = out_bytes * UNIT_BYTES / (hi - lo) / core.chip.fix_gm_bytes_per_cycle if hi > lo else 0.0
    return _Timed(core, transfer, _wait_on(core, pipe, blocks, uf, lo, hi, per_unit))


def after(core, pipe: int, lo: int, hi: int, timed: _Timed, startup: float, unit_flag: int, fill: int,
          site) -> None:
    """After the instruction on L0C bytes [lo, hi) is issued: with ``unit_flag`` 3 its blocks' flags become
    ``fill`` (Mmad: 1, Fixpipe: 0) and hold what it did, for the instruction on the other pipe to wait for."""
    if unit_flag != 3:
        return
    uf = flags_of(core)
    held = _Held(core.snapshot(pipe)[0], timed.start, timed.cycles, startup, lo, hi, core.last_rec[pipe], site)
    for b in _blocks(lo, hi):
        uf.flag[b] = fill
        uf.held[b] = held


def _where(h: _Held | None) -> str:
    return format_site(h.site) if h is not None and h.site is not None else "an earlier line"
