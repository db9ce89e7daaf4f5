"""The block scheduler: one launch's cores, GM buffers, records, and the order blocks run in.

Blocks run one at a time in a fixed order (block 0 first), each in its own
thread that hands a baton back to the scheduler when it finishes or must wait
for another block (``SyncAll``, ``CrossCoreWaitFlag``). The execution, the
results and the trace are therefore deterministic. Blocks beyond the physical
core count run in waves: block b starts on core b % cores when block
b - cores has finished.
"""
from __future__ import annotations

import bisect
import gc
import heapq
import threading
from contextlib import contextmanager
from typing import Any, Callable

import numpy as np

from ascend_sim.engine import context, gmcheck
from ascend_sim.engine.core import Core, make_tiers
from ascend_sim.engine.errors import (ArgumentError, DeadlockError, SyncError, caller_site, format_site,
                                      internal_error)
from ascend_sim.engine.bandwidth import HbmTimeline
from ascend_sim.engine.l2 import GM_BASE, L2Cache
from ascend_sim.engine.memory import GmBuffer, GmPtr
from ascend_sim.engine.records import RecordList
from ascend_sim.hw.chips import ChipProfile

# ----------------------------------------------------------------------------- launch
class _Block:
    def __init__(self, core: Core, index: int):
        self.core = core
        self.index = index                      # position in Launch.blocks
        self.resume: threading.Event | None = None     # made when the block parks; set to wake it
        self.waiting_for: Callable[[], bool] | None = None
        self.started = False
        self.done = False


class _Abort(BaseException):
    """Unwinds suspended block threads after another block failed."""


class Launch:
    """One kernel launch: the cores, GM buffers, records and the scheduler."""

    def __init__(self, k: Kernel, block_dim: int, args: tuple, chip: ChipProfile, gm_names=None,
                 numerics: bool = True):
        self.kernel, self.chip, self.block_dim = k, chip, block_dim
        self.numerics = numerics        # False: timing only (engine/context.computing)
        self.records = RecordList()     # one tuple per instruction, packed into numpy chunks (engine/records.py)
        self.plans: dict = {}           # checked instructions, shared by the blocks (see ops/vector._planned)
        self.tier_pool: dict[str, list] = {}    # core type -> tiers free for the next block to start
        self.gm_buffers: list[GmBuffer] = []
        self.args = [self._wrap_arg(a, i, gm_names) for i, a in enumerate(args)]
        span = max((b.base_addr - GM_BASE + b.nbytes for b in self.gm_buffers), default=0)
        self.l2 = L2Cache(chip.l2_line_bytes, chip.l2_bytes, span)     # the chip's L2, cold at launch
        self.blocks: list[_Block] = []
        self.cores: list[Core] = []
        self.aborting = False
        self.barrier_waiting: set[int] = set()
        self.barrier_gen = 0
        self.cross_flags: dict[tuple, list] = {}
        self._arrive_times: dict[int, float] = {}
        self._barrier_seen: dict[int, int] = {}     # GM epochs published by the blocks at the current SyncAll
        self._released_seen: dict[int, int] = {}    # ... and at the last one that completed
        self._release_time = 0.0
        self.physical = chip.cores_for(k.core)
        self.concurrency = min(block_dim, self.physical)
        self.hbm = HbmTimeline.needed(chip, k.core, self.concurrency)     # HBM booked by the blocks so far
        self.waves = -(-block_dim // self.physical)

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
    # Blocks run inline, one after another, in the thread that drives the launch.
    # Only a block that must wait (SyncAll, CrossCoreWaitFlag) parks its thread and
    # hands the driving to a new thread; exactly one thread runs at any moment, and
    # the next block to run is always the lowest-numbered runnable one.
    def run(self) -> None:
        self.cores = self._make_cores()
        for i, c in enumerate(self.cores):
            c.uid = i
        self.blocks = [_Block(c, i) for i, c in enumerate(self.cores)]    # block i runs on cores[i] (uid i)
        self.per_group = len(self.blocks) // self.block_dim     # cores per block: 3 for MIX on 910B, else 1
        self.next_block = 0                                     # blocks start in order: the first not started
        self.parked: list[_Block] = []                          # started blocks waiting (block_wait), by index
        self.group_start: dict[int, float] = {}                 # block (group) -> the cycle it got its core
        self.free_at: list[float] = []                          # heap: when each released core became free
        self.groups_done = 0                                    # groups whose blocks have all ended
        self.finished = threading.Event()
        self.error: BaseException | None = None
        self.failed_core: Core | None = None                    # the core whose block raised first (plog report)
        try:
            try:
                self._drive_errstate()
            except _Abort:          # this thread's block was parked when another block failed
                pass
            self.finished.wait()
        finally:
            context.current = None
            self._abort_all()
            for buf in self.gm_buffers:
                gmcheck.release(buf)
            for tiers in (t for pool in self.tier_pool.values() for t in pool):
                for tier in tiers.values():
                    tier.release()
                    tier.freed_view = None      # it refers back to the tier: a cycle the collector would free
            self.tier_pool.clear()
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
        self.plans.clear()

    def _drive(self) -> None:
        """Run runnable blocks until all are done, or hand over to a parked one.

        The next block to run is always the lowest-numbered runnable one: a parked block whose
        condition now holds (parked blocks started before any block not yet started), else the
        first block not yet started. Without parked blocks each step is O(1), so launches of
        thousands of blocks schedule in linear time.
        """
        blocks = self.blocks
        while True:
            if self.parked:
                b = next((p for p in self.parked if p.waiting_for()), None)
                if b is not None:               # wake the parked thread; it drives from here on
                    self.parked.remove(b)
                    b.waiting_for = None
                    context.current = b.core
                    b.resume.set()
                    return
            i = self.next_block
            if i == len(blocks) and not self.parked:
                self.finished.set()
                return
            if i == len(blocks) or not self._can_start(blocks[i]):
                self._fail(self._deadlock([p.index for p in self.parked] + list(range(i, len(blocks)))))
                return
            self.next_block = i + 1
            self._start(blocks[i])
            if self.error is not None:
                return

    def _drive_errstate(self) -> None:
        """``_drive`` with numpy's floating-point warnings off in this thread (numpy keeps them per thread).

        fp16 overflow to inf is the device's behaviour, not a warning; setting this once per driving
        thread instead of once per block saves a context switch of numpy's state per block.
        """
        with np.errstate(all="ignore"):
            self._drive()

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
        core.tiers = pool.pop() if pool else make_tiers(self.chip, core.core_type)
        try:
            self.kernel.fn(*self.args)          # under _drive_errstate
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
            core.buffers = {n: t.buffers for n, t in core.tiers.items()}
            for tier in core.tiers.values():
                tier.reset()
            pool.append(core.tiers)     # the next block to start gets these tiers, and the plans made on them
        group = self.blocks[g * self.per_group:(g + 1) * self.per_group]
        if all(x.done for x in group):
            heapq.heappush(self.free_at, max(x.core.end_time() for x in group))
            self.groups_done += 1

    def _fail(self, e: BaseException) -> None:
        if self.error is None:
            self.error = e
        self._abort_all()
        self.finished.set()

    def _can_start(self, b: _Block) -> bool:
        """A block starts when its group already holds a core or a physical core is free."""
        g = b.index // self.per_group
        if g in self.group_start:
            return True
        return len(self.group_start) - self.groups_done < self.physical

    def block_wait(self, ready: Callable[[], bool]) -> None:
        """Called by a running block: park this thread until ``ready()`` holds."""
        me = self.blocks[context.current.uid]
        if ready():
            return
        me.waiting_for = ready
        me.resume = threading.Event()
        bisect.insort(self.parked, me, key=lambda b: b.index)
        threading.Thread(target=self._drive_thread, daemon=True).start()
        me.resume.wait()
        if self.aborting:
            raise _Abort()
        context.current = me.core

    def _drive_thread(self) -> None:
        try:
            self._drive_errstate()
        except _Abort:
            pass

    def _abort_all(self) -> None:
        self.aborting = True
        for b in self.blocks:
            if b.started and not b.done and b.resume is not None:
                b.resume.set()

    def _deadlock(self, pending: list[int]) -> DeadlockError:
        lines, site = [], ("<launch>", 0)
        for i in pending:
            b = self.blocks[i]
            if not b.started:
                lines.append(f"block {b.core.block_idx} ({b.core.core_type}) has not started: all "
                             f"{self.physical} cores are held by waiting blocks")
                continue
            what = getattr(b.waiting_for, "what", "a condition")
            site = getattr(b.waiting_for, "site", None) if site[1] == 0 else site
            site = site or ("<launch>", 0)
            lines.append(f"block {b.core.block_idx} ({b.core.core_type}) waits for {what}")
        done = [str(b.core.block_idx) for b in self.blocks if b.done]
        if done and self.barrier_waiting:
            lines.append(f"block(s) {', '.join(done)} already ended without arriving")
        return DeadlockError("every unfinished block is waiting and none can go on:\n    " + "\n    ".join(lines),
                             fix="every block must reach each SyncAll(), and each CrossCoreWaitFlag needs a "
                                 "matching CrossCoreSetFlag on the partner core", site=site)

    # --- block synchronisation (SyncAll, cross-core flags) -------------------
    def sync_all(self, core: Core, site: tuple) -> None:
        """``core`` arrives at the all-block barrier; returns when every block has arrived."""
        if self.waves > 1:
            raise DeadlockError(
                f"SyncAll with {self.block_dim} blocks on {self.physical} physical cores: the blocks of the second "
                f"wave never start while the first wave waits, so the barrier can never complete",
                fix=f"launch at most {self.physical} blocks when the kernel uses SyncAll")
        core.barrier_all()
        gen = self.barrier_gen
        me = core.uid           # its index in self.blocks
        self.barrier_waiting.add(me)
        arrived = self._arrive_times
        arrived[me] = core.end_time()
        gmcheck.merge_into(self._barrier_seen, gmcheck.publish(core))
        if len(self.barrier_waiting) == len(self.blocks):     # every block, finished ones included, must arrive
            self.barrier_gen += 1
            self._release_time = max(arrived.values()) + self.chip.sync_all_cycles
            self.barrier_waiting = set()
            self._arrive_times = {}
            self._released_seen, self._barrier_seen = self._barrier_seen, {}
        else:
            def ready() -> bool:
                return self.barrier_gen > gen
            missing = len(self.blocks) - len(self.barrier_waiting)
            ready.what = f"SyncAll at {format_site(site)} ({missing} block(s) have not arrived)"
            ready.site = site
            self.block_wait(ready)
        gmcheck.merge(core, self._released_seen)      # every block's GM writes before the barrier happen before
        t = self._release_time
        for p in range(len(core.tail)):
            core.tail[p] = max(core.tail[p], t)
        core.scalar_time = max(core.scalar_time, t)

    def cross_core_set(self, core: Core, mode: int, pipe: int, flag: int) -> None:
        """Post flag ``flag`` to the partners of ``core`` (mode 0, 1 or 2) once ``pipe`` has finished."""
        t = max(core.tail[pipe], core.scalar_time) + self.chip.cross_core_flag_cycles
        seen = gmcheck.publish(core)
        for tgt in self._cross_targets(core, mode):
            self.cross_flags.setdefault((tgt, flag), []).append((t, seen))
        core.scalar_tick()

    def cross_core_wait(self, core: Core, flag: int, site: tuple) -> None:
        """Park ``core`` until a partner has posted ``flag``, then take the oldest posting."""
        key = (id(core), flag)

        def ready() -> bool:
            return bool(self.cross_flags.get(key))
        ready.what = f"CrossCoreWaitFlag({flag}) at {format_site(site)} (no partner has set it)"
        ready.site = site
        self.block_wait(ready)
        t, seen = self.cross_flags[key].pop(0)
        gmcheck.merge(core, seen)
        core.scalar_time = max(core.scalar_time, t)
        for p in range(len(core.gate)):
            core.gate[p] = max(core.gate[p], t)

    def _cross_targets(self, core: Core, mode: int) -> list[int]:
        if mode == 0:
            return [id(c) for c in self.cores if c is not core]
        if mode == 1:
            return [id(c) for c in self.cores if c is not core and c.group == core.group
                    and c.core_type == core.core_type]
        if mode == 2:
            return [id(c) for c in self.cores if c is not core and c.group == core.group
                    and c.core_type != core.core_type]
        raise ArgumentError(f"CrossCoreSetFlag mode {mode} is not 0, 1 or 2",
                            fix="mode 0: all cores, 1: AIV cores of a group, 2: AIC <-> AIV of a group")

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
                gc.enable()


