"""Kernels and launches: ``@kernel``, ``launch``, the block scheduler, GetBlockIdx.

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

from .chips import ChipProfile, get_chip
from .core import Core, make_tiers
from .errors import ArgumentError, DeadlockError, LaunchError, SyncError, caller_site, format_site
from .memory import GmBuffer, GmPtr

_current: Core | None = None        # the core whose block holds the baton


def current_core() -> Core:
    """The core running the calling kernel code."""
    c = _current
    if c is None:
        raise LaunchError("this Ascend C API can only be called inside a kernel that is running",
                          fix="call it from a function marked @kernel and started with launch(...)")
    return c


# ----------------------------------------------------------------------------- kernel
class Kernel:
    """A function marked as a kernel (``__global__ __aicore__``)."""

    def __init__(self, fn: Callable, core: str = "AIV"):
        if core not in ("AIV", "AIC", "MIX"):
            raise ValueError(f"core must be 'AIV' (vector), 'AIC' (cube) or 'MIX', got {core!r}")
        self.fn, self.core = fn, core
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __getitem__(self, block_dim):
        """``k[block_dim](*args)`` or ``k[block_dim, chip](*args)``: the ``<<<...>>>`` analog."""
        chip = None
        if isinstance(block_dim, tuple):
            block_dim, chip = block_dim
        return lambda *args, **kw: launch(self, block_dim, *args, chip=chip, **kw)

    def __call__(self, *args, **kwargs):
        raise LaunchError(f"kernel {self.__name__} cannot be called directly",
                          fix=f"launch it: launch({self.__name__}, block_dim, *args) or "
                              f"{self.__name__}[block_dim](*args)")


def kernel(fn: Callable | None = None, *, core: str = "AIV"):
    """Mark a function as a kernel. ``core``: "AIV" vector, "AIC" cube, "MIX" fused."""
    if fn is None:
        return lambda f: Kernel(f, core)
    return Kernel(fn, core)


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

    def __init__(self, k: Kernel, block_dim: int, args: tuple, chip: ChipProfile, gm_names=None):
        self.kernel, self.chip, self.block_dim = k, chip, block_dim
        self.records: list = []
        self.plans: dict = {}           # checked instructions, shared by the blocks (see ops/vector._planned)
        self.tier_pool: dict[str, list] = {}    # core type -> tiers free for the next block to start
        self.gm_buffers: list[GmBuffer] = []
        self.args = [self._wrap_arg(a, i, gm_names) for i, a in enumerate(args)]
        self.blocks: list[_Block] = []
        self.cores: list[Core] = []
        self.aborting = False
        self.barrier_waiting: set[int] = set()
        self.barrier_gen = 0
        self.cross_flags: dict[tuple, list] = {}
        self._arrive_times: dict[int, float] = {}
        self._release_time = 0.0
        self.physical = chip.cores_for(k.core)
        self.concurrency = min(block_dim, self.physical)
        self.waves = -(-block_dim // self.physical)

    def _wrap_arg(self, a, i: int, names) -> Any:
        if isinstance(a, np.ndarray):
            name = names[i] if names and i < len(names) else f"arg{i}"
            buf = GmBuffer(a, name, base_addr=0x1000_0000 + sum(b.nbytes + 4096 for b in self.gm_buffers)
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
        global _current
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
        try:
            try:
                self._drive_errstate()
            except _Abort:          # this thread's block was parked when another block failed
                pass
            self.finished.wait()
        finally:
            _current = None
            self._abort_all()
            for tiers in (t for pool in self.tier_pool.values() for t in pool):
                for tier in tiers.values():
                    tier.release()
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
        global _current
        blocks = self.blocks
        while True:
            if self.parked:
                b = next((p for p in self.parked if p.waiting_for()), None)
                if b is not None:               # wake the parked thread; it drives from here on
                    self.parked.remove(b)
                    b.waiting_for = None
                    _current = b.core
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
        global _current
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
        _current = b.core
        core = b.core
        pool = self.tier_pool.setdefault(core.core_type, [])
        core.tiers = pool.pop() if pool else make_tiers(self.chip, core.core_type)
        try:
            self.kernel.fn(*self.args)          # under _drive_errstate
            self._finish_checks(b.core)
        except _Abort:
            raise
        except BaseException as e:          # delivered to the launching thread
            self._fail(e)
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
        global _current
        me = self.blocks[_current.uid]
        if ready():
            return
        me.waiting_for = ready
        me.resume = threading.Event()
        bisect.insort(self.parked, me, key=lambda b: b.index)
        threading.Thread(target=self._drive_thread, daemon=True).start()
        me.resume.wait()
        if self.aborting:
            raise _Abort()
        _current = me.core

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

    # --- end-of-kernel checks ---------------------------------------------------
    def _finish_checks(self, core: Core) -> None:
        for (event, eid), ev in core.flags.items():
            raise SyncError(f"SetFlag({event.name}, {eid}) at {format_site(ev.site)} has no matching WaitFlag "
                            "before the kernel ends", fix=f"add WaitFlag({event.name}, {eid}) on the "
                            f"consumer side, or remove the SetFlag", site=ev.site)
        for q in core.queues:
            q.check_finished()
        for p in core.pipes_objs:
            p.check_finished()


def launch(k: Kernel, block_dim: int, *args, chip: ChipProfile | str | None = None,
           gm_names: list[str] | None = None):
    """Run ``k`` on ``block_dim`` blocks (the ``<<<blockDim>>>`` launch). Returns a LaunchResult.

    numpy arrays among ``args`` become GM buffers (outputs are written in place);
    other arguments (ints, a tiling dataclass) are passed through unchanged.
    """
    from .trace import LaunchResult
    if not isinstance(k, Kernel):
        raise LaunchError(f"launch expects a function marked @kernel, got {type(k).__name__}",
                          fix="decorate the kernel function with @kernel", site=("<launch>", 0))
    if not isinstance(block_dim, (int, np.integer)) or not 1 <= block_dim <= 65535:
        raise LaunchError(f"block_dim must be an integer in [1, 65535], got {block_dim!r}",
                          fix="pass the number of blocks, e.g. launch(k, 8, ...)", site=("<launch>", 0))
    chip = get_chip(chip)
    if _current is not None:
        raise LaunchError("launch called from inside a running kernel",
                          fix="launch kernels from host code only")
    with _collector_paused():
        run = Launch(k, int(block_dim), args, chip, gm_names)
        try:
            run.run()
            return LaunchResult(run)
        finally:
            run.release()


_gc_lock = threading.Lock()
_gc_holds = 0                   # launches running with the cyclic collector paused
_gc_resume = False              # whether it was on when the first of them started


@contextmanager
def _collector_paused():
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


# ----------------------------------------------------------------------------- block API
def GetBlockIdx() -> int:
    """Index of the block running this code (AIV index in MIX kernels)."""
    return current_core().block_idx


def GetBlockNum() -> int:
    """Number of blocks in the launch (``blockDim``)."""
    c = current_core()
    return c.launch.block_dim * (2 if c.core_type == "AIV" and c.launch.kernel.core == "MIX" else 1)


def GetSubBlockIdx() -> int:
    """0 or 1: which AIV of its AIC group (MIX kernels on separated chips)."""
    return current_core().sub_block_idx


def GetSubBlockNum() -> int:
    c = current_core()
    return 2 if c.launch.kernel.core == "MIX" and c.launch.chip.separated else 1


def ASCEND_IS_AIV() -> bool:
    """True on a vector core (or a coupled AI Core)."""
    return current_core().core_type in ("AIV", "CORE")


def ASCEND_IS_AIC() -> bool:
    """True on a cube core (or a coupled AI Core)."""
    return current_core().core_type in ("AIC", "CORE")


def SyncAll() -> None:
    """Barrier across every block of the launch (all pipes drain first)."""
    core = current_core()
    run: Launch = core.launch
    if run.waves > 1:
        raise DeadlockError(
            f"SyncAll with {run.block_dim} blocks on {run.physical} physical cores: the blocks of the second "
            f"wave never start while the first wave waits, so the barrier can never complete",
            fix=f"launch at most {run.physical} blocks when the kernel uses SyncAll")
    core.barrier_all()
    gen = run.barrier_gen
    me = core.uid           # its index in run.blocks
    run.barrier_waiting.add(me)
    arrived = run._arrive_times
    arrived[me] = core.end_time()
    if len(run.barrier_waiting) == len(run.blocks):     # every block, finished ones included, must arrive
        run.barrier_gen += 1
        run._release_time = max(arrived.values()) + run.chip.sync_all_cycles
        run.barrier_waiting = set()
        run._arrive_times = {}
    else:
        def ready() -> bool:
            return run.barrier_gen > gen
        missing = len(run.blocks) - len(run.barrier_waiting)
        ready.what = f"SyncAll at {format_site(caller_site())} ({missing} block(s) have not arrived)"
        ready.site = caller_site()
        run.block_wait(ready)
    t = run._release_time
    for p in range(len(core.tail)):
        core.tail[p] = max(core.tail[p], t)
    core.scalar_time = max(core.scalar_time, t)


def CrossCoreSetFlag(modeId: int, pipe, flagId: int) -> None:
    """Signal the partner cores (mode 2: AIC <-> AIV of one group) after ``pipe`` finishes."""
    core = current_core()
    from .sync import pipe_index
    p = pipe_index(pipe)
    run: Launch = core.launch
    t = max(core.tail[p], core.scalar_time) + run.chip.cross_core_flag_cycles
    targets = _cross_targets(core, modeId)
    for tgt in targets:
        run.cross_flags.setdefault((tgt, flagId), []).append(t)
    core.scalar_tick()


def CrossCoreWaitFlag(flagId: int) -> None:
    """Wait for a CrossCoreSetFlag from a partner core with the same flag id."""
    core = current_core()
    run: Launch = core.launch
    key = (id(core), flagId)

    def ready() -> bool:
        return bool(run.cross_flags.get(key))
    ready.what = f"CrossCoreWaitFlag({flagId}) at {format_site(caller_site())} (no partner has set it)"
    ready.site = caller_site()
    run.block_wait(ready)
    t = run.cross_flags[key].pop(0)
    core.scalar_time = max(core.scalar_time, t)
    for p in range(len(core.gate)):
        core.gate[p] = max(core.gate[p], t)


def _cross_targets(core: Core, mode: int) -> list[int]:
    run: Launch = core.launch
    if mode == 0:
        return [id(c) for c in run.cores if c is not core]
    if mode == 1:
        return [id(c) for c in run.cores if c is not core and c.group == core.group and c.core_type == core.core_type]
    if mode == 2:
        return [id(c) for c in run.cores if c is not core and c.group == core.group and c.core_type != core.core_type]
    raise ArgumentError(f"CrossCoreSetFlag mode {mode} is not 0, 1 or 2",
                      fix="mode 0: all cores, 1: AIV cores of a group, 2: AIC <-> AIV of a group")
