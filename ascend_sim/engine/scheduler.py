"""The block scheduler: one launch's cores, GM buffers, records, and the order blocks run in.

Blocks run one at a time, each in a greenlet. In launches that can oversubscribe
the HBM (``Launch.time_ordered``) they advance together in simulated time: before
a GM access a block more than TIME_SLICE cycles ahead of the earliest other block
waits (docs/architecture.md, "Blocks in time
order"); a block also waits for another block (``SyncAll``, ``CrossCoreWaitFlag``).
The earliest block in simulated time runs next (ties: the lowest index; a waiting block
hands over to it directly, or through the hub when it has not started), so the execution, the
results and the trace are deterministic. Other launches
run their blocks one after another (a waiting block's partners first). Blocks beyond
the physical core count run in waves: a block starts when a core is free, at
the cycle that core became free.
"""
from __future__ import annotations

import bisect
import gc
import heapq
import math
import threading     # the collector pause below is shared by launches of several threads
from contextlib import contextmanager
from typing import Any, Callable

import numpy as np
from greenlet import greenlet

from ascend_sim.engine import context, gmcheck
from ascend_sim.engine.core import Core, make_tiers
from ascend_sim.engine.crossflags import SYNCALL_FLAGS, CrossCoreFlags
from ascend_sim.engine.errors import (ArgumentError, DeadlockError, SyncError, caller_site, format_site,
                                      internal_error)
from ascend_sim.engine.bandwidth import HbmTimeline, LineFills, WindowTurns
from ascend_sim.engine.l2 import GM_BASE, L2Cache
from ascend_sim.engine.memory import GmBuffer, GmPtr
from ascend_sim.engine.records import RecordList
from ascend_sim.hw.chips import ChipProfile

# Cycles a block may run ahead of the earliest other block before a GM transfer [EST, ours]: a simulator
# setting, not a chip number. The order of GM accesses is exact to within it (an HBM booking bin is 128
# cycles, a 16 KB copy about 500). Measured against 4,096 and 16,384 (docs/architecture.md, "The slice: speed
# against fidelity"): 16,384 turns the validation step M1 -> M2 the wrong way (-6.1 -> -13.5 points) and
# 4,096 moves Add case 2 by -3 % and the 1024^3 CATLASS launch by +5 % for no measurable speed in case (f).
TIME_SLICE = 1024.0


# ----------------------------------------------------------------------------- launch
class _Block:
    def __init__(self, core: Core, index: int):
        self.core = core
        self.index = index                      # position in Launch.blocks
        self.worker = None                      # the greenlet running it, while it runs or waits
        self.waiting_for: Callable[[], bool] | None = None
        self.started = False
        self.done = False
        self.clock = 0.0                        # its scalar clock when it parked (a lower bound of its resume)


class _Abort(BaseException):
    """Unwinds suspended block threads after another block failed."""


class KernelReturn(BaseException):
    """Ends the running block's kernel function as a C++ ``return`` in a macro would: a normal end.

    ``REGIST_MATMUL_OBJ`` on the AIC of a MIX kernel runs the KFC server loop, then returns from the kernel
    (api/highlevel/matmul_kfc.py); the rest of the kernel runs on the AIVs only.
    """


_ONE_TYPE = {"AIV": "vector-only (AIV)", "AIC": "cube-only (AIC)"}


class _Barrier:
    """One SyncAll barrier's state: who has arrived, when, and the GM epochs they publish."""

    __slots__ = ("size", "gen", "waiting", "arrived", "seen", "released_seen", "release_time")

    def __init__(self, size: int):
        self.size = size                            # blocks that must arrive (finished ones included)
        self.gen = 0                                # completed rounds
        self.waiting: set[int] = set()
        self.arrived: dict[int, float] = {}
        self.seen: dict[int, int] = {}              # GM epochs published by the blocks at the current round
        self.released_seen: dict[int, int] = {}     # ... and at the last round that completed
        self.release_time = 0.0


class Launch:
    """One kernel launch: the cores, GM buffers, records and the scheduler."""

    def __init__(self, k: Kernel, block_dim: int, args: tuple, chip: ChipProfile, gm_names=None,
                 numerics: bool = True, auto_sync: bool = True, l2: L2Cache | None = None):
        self.kernel, self.chip, self.block_dim = k, chip, block_dim
        self.numerics = numerics        # False: timing only (engine/context.computing)
        self.auto_sync = auto_sync      # the compiler's auto-sync of scalar hazards (Core.auto_sync); False: off
        self.records = RecordList()     # one tuple per instruction, packed into numpy chunks (engine/records.py)
        self.plans: dict = {}           # a core's plans until it gets its tiers (then theirs: _start)
        self.tier_pool: dict[str, list] = {}    # core type -> (tiers, their plans) free for the next block to start
        self.plan_sets: list[dict] = []         # the plans of each set of tiers (cleared by release)
        self.gm_buffers: list[GmBuffer] = []
        self.args = [self._wrap_arg(a, i, gm_names) for i, a in enumerate(args)]
        span = max((b.base_addr - GM_BASE + b.nbytes for b in self.gm_buffers), default=0)
        # the chip's L2: cold at launch, or ``l2``, what an earlier run of the same launch left (l2_warm_launch)
        self.l2 = l2 if l2 is not None else L2Cache(chip.l2_line_bytes, chip.l2_bytes, span)
        self.blocks: list[_Block] = []
        self.cores: list[Core] = []
        self.aborting = False
        self.barriers: dict[str, _Barrier] = {}    # SyncAll's barriers: "ALL", or one per core type (isAIVOnly)
        self.cross_flags: CrossCoreFlags | None = None     # the flags' counters (once the cores exist)
        self.syncall_flag_site: tuple | None = None         # the first use of a flag SyncAll owns (11..14)
        self.physical = chip.cores_for(k.core)
        self.concurrency = min(block_dim, self.physical)
        self.hbm = HbmTimeline.needed(chip, k.core, self.concurrency)     # HBM booked by the blocks so far
        self.fills = LineFills.needed(chip, self.concurrency)   # L2 fills in flight (same-address reads)
        self.turns = WindowTurns.needed(chip, self.concurrency, span)     # 512 B windows served in turn
        self.waves = -(-block_dim // self.physical)
        self.pipe_bytes: dict[int, float] = {}     # GM pipe -> bytes, -1 - pipe -> HBM bytes (hbm_streams_by_pipe)

    def _wrap_arg(self, a, i: int, names) -> Any:
        if isinstance(a, np.ndarray):
            name = names[i] if names and i < len(names) else f"arg{i}"
            buf = GmBuffer(a, name, base_addr=GM_BASE + sum(b.nbytes + 4096 for b in self.gm_buffers)
                           // 4096 * 4096)
            self.gm_buffers.append(buf)
            return GmPtr(buf, 0, a.dtype)
        return a

    # --- cores ---------------------------------------------------------------
    def _make_cores(self) -> list[Core]:
        cores: list[Core] = []
        k = self.kernel
        if k.core == "MIX" and self.chip.separated:
            for g in range(self.block_dim):
                cores.append(Core(self, g, "AIC", 0.0, 0, g))
                for sub in range(2):
                    cores.append(Core(self, g * 2 + sub, "AIV", 0.0, sub, g))
            return cores
        ctype = {"AIV": "AIV", "AIC": "AIC", "MIX": "CORE"}[k.core]
        if not self.chip.separated:
            ctype = "CORE"
        for b in range(self.block_dim):
            cores.append(Core(self, b, ctype, 0.0, 0, b))
        return cores

    # --- scheduler -----------------------------------------------------------
    # Each block runs in a greenlet (a worker, reused from block to block); the thread that launched
    # is the hub. Exactly one block runs at any moment. A block runs until it ends or must wait: for
    # another block (SyncAll, CrossCoreWaitFlag: it *parks*) or for simulated time (a GM access that
    # would start more than TIME_SLICE cycles after the earliest other block's clock: it *yields*);
    # then it switches back to the hub, which switches to the earliest block in simulated time.
    def run(self) -> None:
        self.cores = self._make_cores()
        for i, c in enumerate(self.cores):
            c.uid = i
        self.blocks = [_Block(c, i) for i, c in enumerate(self.cores)]    # block i runs on cores[i] (uid i)
        self.per_group = len(self.blocks) // self.block_dim     # cores per block: 3 for MIX on 910B, else 1
        self.next_block = 0                                     # blocks start in order: the first not started
        self.parked: list[_Block] = []                          # started blocks waiting (block_wait), by index
        self.yielded: list[tuple] = []                          # heap: (clock, index) of blocks waiting for time
        self.unset = -1.0 if self.time_ordered() else math.inf
        self.horizon = self.unset                               # a GM access starting later yields (time_yield)
        self.group_start: dict[int, float] = {}                 # block (group) -> the cycle it got its core
        self.free_at: list[float] = []                          # heap: when each released core became free
        self.groups_done = 0                                    # groups whose blocks have all ended
        self.error: BaseException | None = None
        self.failed_core: Core | None = None                    # the core whose block raised first (plog report)
        self.hub = greenlet.getcurrent()
        self.idle: list = []                                    # workers whose block ended, for the next block
        try:
            self._schedule()
        finally:
            context.current = None
            self._abort_all()
            for buf in self.gm_buffers:
                gmcheck.release(buf)
            for tiers, _ in (t for pool in self.tier_pool.values() for t in pool):
                for tier in tiers.values():
                    tier.release()
                    tier.freed_view = None      # it refers back to the tier: a cycle the collector would free
            self.tier_pool.clear()
            self.hub = None
        if self.error is not None:
            raise self.error

    def release(self) -> None:
        """Break the launch's reference cycles (cores and their launch, queues and their buffers).

        Then reference counting frees a finished launch at once, and the cyclic collector has
        nothing of it to walk: its passes over a launch's objects cost about 8 % of the launch.
        """
        for c in self.cores or ():
            for q in c.queues:
                for slot in q.slots:
                    slot.tensors = {}
                    slot.que = None
                    slot.last = None        # the handle refers back to its slot
                    slot.views = []
            c.queues = []
            c.pipes_objs = []
            c.flags = {}
        self.cores = []
        self.blocks = []
        self.turns = self.fills = self.hbm = None     # their per-run and per-line state: freed now, not collected
        self.plans.clear()
        for plans in self.plan_sets:
            plans.clear()
        self.plan_sets = []

    def time_ordered(self) -> bool:
        """Whether the blocks advance together in simulated time, or run one after another.

        Time order where the blocks can oversubscribe the HBM (engine/bandwidth.py needs a timeline)
        and their HBM traffic can last longer than one time slice: GM data that L2 cannot hold, or
        more than TIME_SLICE cycles of it at the HBM's bandwidth. There the order of the bookings and of
        the first touches of L2 lines decides the blocks' copies. Elsewhere the order changes no cost
        beyond what the slice resolves, and the blocks run one after another, handing one set of local
        memories and the plans made on it from block to block (concurrent blocks each need their own,
        and each block then makes its own plans: about 50 us a plan).
        """
        if self.hbm is None:
            return False
        span = max((b.base_addr - GM_BASE + b.nbytes for b in self.gm_buffers), default=0)
        return not self.l2.fits or span / self.chip.hbm_bytes_per_cycle > TIME_SLICE

    def _schedule(self) -> None:
        """The hub: run the earliest block in simulated time (ties: the lowest index) until all have ended.

        A block that waits hands over to the next block itself when that one is already running
        (``_suspend``); the hub starts the blocks, takes back their workers and reports a deadlock.
        """
        while self.error is None:
            b, kind = self._pick()
            if b is None:
                if self.next_block < len(self.blocks) or self.parked:
                    self._fail(self._deadlock(sorted([p.index for p in self.parked]
                                                     + list(range(self.next_block, len(self.blocks))))))
                elif self.cross_flags is not None:      # the counters' rules over the launch (engine/crossflags.py)
                    self._fail(self.cross_flags.finish_error())
                return
            self.horizon = self.unset             # the block's next GM access works out its horizon (time_yield)
            if kind == "s":
                self.next_block = b.index + 1
                worker = self.idle.pop() if self.idle else greenlet(self._worker)
                ended = worker.switch(b)
            else:
                self._take(b, kind)
                context.current = b.core
                ended = b.worker.switch()
            if ended is not None:           # the worker's block ended: it takes a later one
                self.idle.append(ended)

    def _worker(self, b: _Block):
        """A greenlet that runs blocks: one, then the next the hub gives it, until it gets None."""
        me = greenlet.getcurrent()
        with np.errstate(all="ignore"):     # fp16 overflow to inf is the device's behaviour, not a warning
            while b is not None:
                b.worker = me
                try:
                    self._start(b)
                except _Abort:
                    return None
                b = self.hub.switch(me)

    def _pick(self) -> tuple:
        """The block to run next and what it waits in: (block, kind), or (None, None) when none can run.

        The earliest candidate by (clock, index). Kind "y": yielded for time (clock: the start of the GM
        access it waits to make); "p": parked and now free to go on (clock: when it parked, a lower bound
        of where it resumes; -1 when blocks run one after another: parked ones first); "s": the first block
        not started, when a core is free for it (clock: when that core became free).
        """
        best, kind, bt, bi = None, None, 0.0, 0
        if self.yielded:
            bt, bi = self.yielded[0]
            best, kind = self.blocks[bi], "y"
        if self.parked:
            ordered = self.unset < 0.0          # in time order; else blocks run one after another
            for p in self.parked:
                if p.waiting_for():
                    t = p.clock if ordered else -1.0
                    if best is None or t < bt or (t == bt and p.index < bi):
                        best, kind, bt, bi = p, "p", t, p.index
        i = self.next_block
        if i < len(self.blocks):
            b = self.blocks[i]
            if self._can_start(b):
                t = self._start_clock(b)
                if best is None or t < bt or (t == bt and i < bi):
                    best, kind = b, "s"
        return best, kind

    def _take(self, b: _Block, kind: str) -> None:
        """Take the waiting block ``b`` (kind "y" or "p", as ``_pick`` gave it) out of its wait."""
        if kind == "y":
            heapq.heappop(self.yielded)
        else:
            self.parked.remove(b)
            b.waiting_for = None

    def _first_clock(self) -> float:
        """The earliest clock of the blocks ``_pick`` chooses from (inf when there is none)."""
        first = self.yielded[0][0] if self.yielded else math.inf
        for p in self.parked:
            if p.clock < first and p.waiting_for():
                first = p.clock
        i = self.next_block
        if i < len(self.blocks):
            b = self.blocks[i]
            if self._can_start(b):
                t = self._start_clock(b)
                if t < first:
                    first = t
        return first

    def _start_clock(self, b: _Block) -> float:
        """The cycle block ``b`` would start at: its group's, a fresh core's (0) or the first core freed."""
        g = b.index // self.per_group
        t = self.group_start.get(g)
        if t is not None:
            return t
        return 0.0 if len(self.group_start) < self.physical else self.free_at[0]

    def _start(self, b: _Block) -> None:
        i = b.index
        g = i // self.per_group
        if g not in self.group_start:           # a core never used yet, else the one that became free first
            fresh = len(self.group_start) < self.physical
            self.group_start[g] = 0.0 if fresh else heapq.heappop(self.free_at)
        t = self.group_start[g]
        if t:
            c = b.core
            c.__init__(self, c.block_idx, c.core_type, t, c.sub_block_idx, c.group)
            c.uid = i
        b.started = True
        context.current = b.core
        core = b.core
        pool = self.tier_pool.setdefault(core.core_type, [])
        if pool:
            core.tiers, core.plans = pool.pop()
        else:       # plans are kept with the tiers they were made on (their keys hold the tiers): a block
            core.tiers, core.plans = make_tiers(self.chip, core.core_type), {}  # looks up only its own
            self.plan_sets.append(core.plans)
        try:
            try:
                self.kernel.fn(*self.args)      # under np.errstate(all="ignore") (_worker)
            except KernelReturn:
                pass
            self._finish_checks(b.core)
        except _Abort:
            raise
        except BaseException as e:          # delivered to the launching thread; our own bugs named as such
            if self.error is None:
                self.failed_core = core
            self._fail(internal_error(e))
            return
        finally:
            b.done = True
            b.worker = None
            core.buffers = {n: t.buffers for n, t in core.tiers.items()}
            for tier in core.tiers.values():
                tier.reset()
            pool.append((core.tiers, core.plans))   # the next block to start gets these tiers and their plans
        group = self.blocks[g * self.per_group:(g + 1) * self.per_group]
        if all(x.done for x in group):
            heapq.heappush(self.free_at, max(x.core.end_time() for x in group))
            self.groups_done += 1

    def _fail(self, e: BaseException | None) -> None:
        """Keep the launch's first error; the hub then stops and unwinds the waiting blocks (``_abort_all``)."""
        if self.error is None and e is not None:
            self.error = e

    def _can_start(self, b: _Block) -> bool:
        """A block starts when its group already holds a core or a physical core is free."""
        g = b.index // self.per_group
        if g in self.group_start:
            return True
        return len(self.group_start) - self.groups_done < self.physical

    def block_wait(self, ready: Callable[[], bool]) -> None:
        """Called by a running block: park it until ``ready()`` holds."""
        me = self.blocks[context.current.uid]
        if ready():
            return
        me.waiting_for = ready
        me.clock = me.core.scalar_time
        bisect.insort(self.parked, me, key=lambda b: b.index)
        self._suspend(me)

    def posted(self) -> None:
        """A running block posted something a parked block may wait for (a flag, a KFC message): the
        earliest block may change, so the next GM access works out its horizon again."""
        self.horizon = self.unset

    def time_yield(self, core: Core, start: float) -> None:
        """Called before a GM access of ``core`` starting at ``start`` (engine/gmcheck.in_time_order).

        The access goes ahead when no other block's clock is more than TIME_SLICE cycles earlier;
        otherwise this block waits until the blocks behind it in simulated time have caught up, so that
        L2, the HBM bookings and GM's write history see the accesses of a wave in about the chip's order.
        """
        yielded = self.yielded
        if self.parked or self.next_block < len(self.blocks) or not yielded or self.error is not None:
            self._wait_for_time(core, start)
            return
        # the usual turn: only blocks waiting for time to choose from (_pick's choice, in one step)
        first = yielded[0][0]
        if start <= first + TIME_SLICE:
            self.horizon = first + TIME_SLICE
            return
        _, i = heapq.heappushpop(yielded, (start, core.uid))    # the earliest of them: never this block
        b = self.blocks[i]
        self.horizon = self.unset
        context.current = b.core
        b.worker.switch()
        context.current = core
        self._resumed(start)

    def _wait_for_time(self, core: Core, start: float) -> None:
        """``time_yield`` for any state of the launch: the earliest block chosen by ``_pick`` (via ``_suspend``)."""
        horizon = self._first_clock() + TIME_SLICE
        if start <= horizon:
            self.horizon = horizon
            return
        me = self.blocks[core.uid]
        heapq.heappush(self.yielded, (start, me.index))
        self._suspend(me)
        self._resumed(start)

    def _resumed(self, start: float) -> None:
        """Back from a wait for time: the horizon as the access's next check would work it out."""
        horizon = self._first_clock() + TIME_SLICE
        if start <= horizon:
            self.horizon = horizon

    def _suspend(self, me: _Block) -> None:
        """Run the next block until a block switches back to this one (or throws _Abort into it).

        The next block is the hub's choice (``_pick``); one already running is switched to directly
        (one greenlet switch instead of two through the hub), a block to start goes through the hub.
        """
        if self.error is None:
            b, kind = self._pick()
            if kind == "y" or kind == "p":
                self.horizon = self.unset
                self._take(b, kind)
                if b is not me:
                    context.current = b.core
                    b.worker.switch()
                context.current = me.core
                return
        self.hub.switch(None)
        context.current = me.core

    def _abort_all(self) -> None:
        """Unwind the blocks still waiting (after a failure) and end the idle workers."""
        self.aborting = True
        for b in self.blocks:
            w = getattr(b, "worker", None)
            if b.started and not b.done and w is not None and not w.dead:
                w.throw(_Abort())
        for w in self.idle:
            w.switch(None)
        self.idle = []

    def _deadlock(self, pending: list[int]) -> DeadlockError:
        lines, site = [], ("<launch>", 0)
        for i in pending:
            b = self.blocks[i]
            if not b.started:
                lines.append(f"block {b.core.block_idx} ({b.core.core_type}) has not started: all "
                             f"{self.physical} cores are held by waiting blocks")
                continue
            what = getattr(b.waiting_for, "what", "a condition")
            what = what() if callable(what) else what        # worked out only when it is told
            site = getattr(b.waiting_for, "site", None) if site[1] == 0 else site
            site = site or ("<launch>", 0)
            lines.append(f"block {b.core.block_idx} ({b.core.core_type}) waits for {what}")
        done = [str(b.core.block_idx) for b in self.blocks if b.done]
        if done and any(b.waiting for b in self.barriers.values()):
            lines.append(f"block(s) {', '.join(done)} already ended without arriving")
        return DeadlockError("every unfinished block is waiting and none can go on:\n    " + "\n    ".join(lines),
                             fix="every block must reach each SyncAll(), and each CrossCoreWaitFlag needs a "
                                 "matching CrossCoreSetFlag on the partner core (mode 2: on every AIV of the AI Core "
                                 "before the AIC's counter rises; mode 0: on every core of the type)", site=site)

    # --- block synchronisation (SyncAll, cross-core flags) -------------------
    def sync_all(self, core: Core, site: tuple, aiv_only: bool = True) -> None:
        """``core`` arrives at SyncAll's barrier; returns when every block of the barrier has arrived.

        ``SyncAll<true>()`` (the default) joins the cores of the caller's type (all AIV; on an AIC, all AIC),
        ``SyncAll<false>()`` joins every core of a MIX launch (the guide's SyncAll page, isAIVOnly).
        """
        if self.waves > 1:
            raise DeadlockError(
                f"SyncAll with {self.block_dim} blocks on {self.physical} physical cores: the blocks of the second "
                f"wave never start while the first wave waits, so the barrier can never complete",
                fix=f"launch at most {self.physical} blocks when the kernel uses SyncAll")
        key = self._barrier_key(core, aiv_only, site)
        bar = self.barriers.get(key)
        if bar is None:
            members = [i for i, b in enumerate(self.blocks) if key == "ALL" or b.core.core_type == key]
            bar = self.barriers[key] = _Barrier(len(members))
            self._syncall_flag_clash(None, site)
        core.barrier_all()
        gen = bar.gen
        me = core.uid           # its index in self.blocks
        bar.waiting.add(me)
        bar.arrived[me] = core.end_time()
        gmcheck.merge_into(bar.seen, gmcheck.publish(core))
        if len(bar.waiting) == bar.size:     # every block of the barrier, finished ones included, must arrive
            bar.gen += 1
            self.horizon = self.unset         # the blocks waiting at the barrier go on, in time order
            bar.release_time = max(bar.arrived.values()) + self.chip.sync_all_cycles
            bar.waiting, bar.arrived = set(), {}
            bar.released_seen, bar.seen = bar.seen, {}
        else:
            def ready() -> bool:
                return bar.gen > gen
            missing = bar.size - len(bar.waiting)
            who = "block(s)" if key == "ALL" else f"{key} block(s)"
            ready.what = f"SyncAll at {format_site(site)} ({missing} {who} have not arrived)"
            ready.site = site
            self.block_wait(ready)
        gmcheck.merge(core, bar.released_seen)      # every GM write of the barrier's blocks before it happens before
        t = bar.release_time
        for p in range(len(core.tail)):
            core.tail[p] = max(core.tail[p], t)
        core.scalar_time = max(core.scalar_time, t)

    def _barrier_key(self, core: Core, aiv_only: bool, site: tuple) -> str:
        """Which blocks a SyncAll joins: "ALL", or the caller's core type for ``SyncAll<true>()`` in a MIX launch."""
        if core.core_type == "CORE":
            return "ALL"                    # a coupled AI Core: one kind of core
        if self.kernel.core != "MIX":
            if not aiv_only:
                raise DeadlockError(
                    f"SyncAll<false>() in a {_ONE_TYPE[self.kernel.core]} kernel: isAIVOnly = false joins the cube and "
                    f"vector cores of a MIX kernel, and with no {'AIC' if core.core_type == 'AIV' else 'AIV'} cores "
                    "in this launch the chip waits for ever (the SyncAll API page: a pure Vector kernel must use "
                    "isAIVOnly = true)",
                    fix="use SyncAll() (isAIVOnly = true, the default) in a kernel of one core type", site=site)
            return "ALL"
        return core.core_type if aiv_only else "ALL"

    def cross_core_set(self, core: Core, mode: int, pipe: int, flag: int, site: tuple | None = None) -> None:
        """``core`` reports flag ``flag`` (mode 0, 1 or 2) once ``pipe`` has finished (engine/crossflags.py)."""
        self._syncall_flag_clash(flag, site)
        t = max(core.tail[pipe], core.scalar_time) + self.chip.cross_core_flag_cycles
        self.horizon = self.unset             # a partner waiting for it may now be the earliest block
        self._flags().report(core, mode, flag, t, site, core.vc[pipe])
        core.scalar_tick()

    def cross_core_wait(self, core: Core, flag: int, site: tuple) -> None:
        """Park ``core`` until its counter ``flag`` has risen, then take the oldest rise."""
        self._syncall_flag_clash(flag, site)
        flags = self._flags()

        def ready() -> bool:
            return flags.ready(core, flag)
        ready.what = lambda: f"CrossCoreWaitFlag({flag}) at {format_site(site)} ({flags.why_waiting(core, flag)})"
        ready.site = site
        self.block_wait(ready)
        t, seen, own = flags.take(core, flag)
        gmcheck.merge(core, seen)
        core.scalar_time = max(core.scalar_time, t)
        for p in range(len(core.gate)):
            core.gate[p] = max(core.gate[p], t)
        if own is not None:         # this core's work the rise's reports saw finished: before all its later work
            core.after_own_work(own)

    def _syncall_flag_clash(self, flag: int | None, site: tuple | None) -> None:
        """SyncAll is built on cross-core flags 11..14 (the CrossCoreSetFlag page's constraints): a kernel that
        uses both may take SyncAll's rises as its own, or SyncAll its, on the chip."""
        if flag is not None and SYNCALL_FLAGS[0] <= flag <= SYNCALL_FLAGS[1] and self.syncall_flag_site is None:
            self.syncall_flag_site = (flag, site)
        if self.barriers and self.syncall_flag_site is not None:
            used, where = self.syncall_flag_site
            raise SyncError(
                f"cross-core flag {used} (at {format_site(where)}) in a kernel that calls SyncAll: SyncAll uses "
                f"flags {SYNCALL_FLAGS[0]}..{SYNCALL_FLAGS[1]} itself, so on the chip one would consume the "
                "other's counter rises", fix=f"use flag ids 0..{SYNCALL_FLAGS[0] - 1} or {SYNCALL_FLAGS[1] + 1} "
                "for your own hand-offs", site=where)

    def _flags(self) -> CrossCoreFlags:
        if self.cross_flags is None:
            self.cross_flags = CrossCoreFlags(self.cores, self.kernel.core == "MIX" and self.chip.separated,
                                              lambda c: self.blocks[c.uid].done)
        return self.cross_flags

    # --- end-of-kernel checks ---------------------------------------------------
    def _finish_checks(self, core: Core) -> None:
        for (event, eid), ev in core.flags.items():
            raise SyncError(f"«SetFlag({event.name}, {eid})» at {format_site(ev.site)} has no matching WaitFlag "
                            "before the kernel ends", fix=f"add «WaitFlag({event.name}, {eid})» on the "
                            f"consumer side, or remove the SetFlag", site=ev.site)
        for q in core.queues:
            q.check_finished()
        for p in core.pipes_objs:
            p.check_finished()


_gc_lock = threading.Lock()
_gc_holds = 0                   # launches running with the cyclic collector paused
_gc_resume = False              # whether it was on when the first of them started


@contextmanager
def collector_paused():
    """Pause Python's cyclic garbage collector while a launch runs, as ``timeit`` does while it times.

    A launch makes thousands of containers (records, clock snapshots); the collector's passes over
    them while it runs cost a few percent of a launch. Reference counting frees the short-lived
    ones, and ``Launch.release`` breaks the launch's cycles when it ends, so nothing is left for the
    collector. Nested and concurrent launches share one pause.

    What outlives the launch (its records: a tuple per instruction, with region lists) would all sit in
    the youngest generation when the collector resumes, and its next young passes would walk them all (the
    larger part of the collector's time in a LeNet-5 forward). So the pause ends by moving every tracked
    object to the oldest generation (``gc.freeze`` then ``gc.unfreeze``: two list splices), which only the
    full passes walk. Skipped when the program froze objects itself (``gc.get_freeze_count``): its freeze stays.
    """
    global _gc_holds, _gc_resume
    with _gc_lock:
        if _gc_holds == 0:
            _gc_resume = gc.isenabled()
            gc.disable()
        _gc_holds += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_holds -= 1
            if _gc_holds == 0 and _gc_resume:
                if not gc.get_freeze_count():
                    gc.freeze()         # the young generations (the launch's survivors) into the permanent one
                    gc.unfreeze()       # and from there into the oldest
                gc.enable()


