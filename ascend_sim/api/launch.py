"""``@kernel`` and ``launch`` (the ``<<<blockDim>>>`` call), and what a launch returns.

A launch runs the kernel on the block scheduler (engine/scheduler.py) and wraps
the finished run in a :class:`LaunchResult`: cycles, the trace, and the analyses
(profile, Chrome export) as methods that call ``ascend_sim.analysis``.
"""
from __future__ import annotations

import contextlib
import warnings
from typing import Callable, Iterator

import numpy as np

from ascend_sim.analysis.chrome import write_chrome_trace
from ascend_sim.analysis.profile import Profile, profile
from ascend_sim.analysis.overwritten import Overwrite, overwritten_reads
from ascend_sim.engine import context, launch_log
from ascend_sim.engine.errors import ArgumentError, LaunchError, SanitizerWarning, format_site
from ascend_sim.engine.scheduler import Launch, collector_paused
from ascend_sim.hw.chips import ChipProfile, get_chip
from ascend_sim.trace.trace import Trace


# ----------------------------------------------------------------------------- kernel
class Kernel:
    """A function marked as a kernel (``__global__ __aicore__``)."""

    source_language = "python"      # the C++ front end's kernels say "cpp" (engine/spelling.py)
    auto_sync = True                # as built: False for a C++ kernel compiled with --cce-auto-sync=off

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


_HOOKS: list[Callable] = []


@contextlib.contextmanager
def launch_hook(hook: Callable) -> Iterator[None]:
    """Inside the block, ``launch(k, block_dim, *args, **kw)`` returns ``hook(run, k, block_dim, *args, **kw)``.

    ``run`` has ``launch``'s signature and does what the launch would have done without this hook (the
    simulation, or an outer hook). The grader uses it to record launches and to replay recorded ones.
    """
    _HOOKS.append(hook)
    try:
        yield
    finally:
        _HOOKS.remove(hook)


def launch(k: Kernel, block_dim: int, *args, chip: ChipProfile | str | None = None,
           gm_names: list[str] | None = None, numerics: bool = True, auto_sync: bool = True, **named):
    """Run ``k`` on ``block_dim`` blocks (the ``<<<blockDim>>>`` launch). Returns a LaunchResult.

    numpy arrays among ``args`` become GM buffers (outputs are written in place);
    other arguments (ints, a tiling dataclass) are passed through unchanged.
    ``numerics=False`` is the timing-only mode: the same checks, cycles and trace, but no op
    computes or moves values (outputs keep what they held). A kernel whose control flow reads
    data values (GetValue) then sees the buffers' old contents.
    ``auto_sync=False`` is the compiler option ``--cce-auto-sync=off`` (on by default in the official projects,
    "auto_sync" in an operator's compile options): a hazard between the scalar (GetValue/SetValue) and the
    V, MTE2 or MTE3 pipe then needs the kernel's own SetFlag/WaitFlag, else a RaceError; with it on, the
    simulator makes the wait the compiler would insert (docs/architecture.md, "Auto-sync"). A C++ kernel built
    with the option off (``%%ascendc --cce-auto-sync=off``, ``load(..., auto_sync=False)``) runs with it off whatever
    ``auto_sync`` says here.
    ``named``: arguments by the parameter names of a C++ kernel (``tiling=...``), after the positional ones.
    """
    if named:
        args = _by_name(k, args, named)
    kw = {} if numerics else {"numerics": False}      # hooks (the grader's) keep launch's old signature
    if auto_sync is not True and auto_sync is not False:
        raise LaunchError(f"auto_sync must be True or False, got {auto_sync!r}",
                          fix="«launch(k, blocks, ..., auto_sync=False)|ascend-sim run prog.asc --cce-auto-sync=off» "
                              "turns the compiler's auto-sync off (the build option --cce-auto-sync=off); leave it out for "
                              "the default (on)", site=("<launch>", 0))
    if auto_sync is False or getattr(k, "auto_sync", True) is False:    # off at launch, or built off (%%ascendc)
        kw["auto_sync"] = False
    if _HOOKS:
        return _hooked(len(_HOOKS), k, block_dim, *args, chip=chip, gm_names=gm_names, **kw)
    return _simulate(k, block_dim, *args, chip=chip, gm_names=gm_names, **kw)


def _by_name(k, args: tuple, named: dict) -> tuple:
    """The positional arguments of a C++ kernel launched with some of them by parameter name."""
    params = [p[0] for p in getattr(k, "params", None) or ()]
    name = getattr(k, "__name__", "kernel")
    if not params:
        raise LaunchError(f"{name} was given arguments by name ({', '.join(named)}), but only a C++ kernel's "
                          "parameters have names here", fix=f"pass them in order: launch({name}, blocks, ...)",
                          site=("<launch>", 0))
    unknown = [n for n in named if n not in params]
    twice = [n for n in named if n in params[:len(args)]]
    missing = [n for n in params[len(args):] if n not in named]
    if unknown or twice or missing:
        problem = (f"no parameter {unknown}" if unknown else f"{twice} given twice (by position and by name)"
                   if twice else f"no value for {missing}")
        raise LaunchError(f"launch of {name}({', '.join(params)}): {problem}",
                          fix=f"give each of {', '.join(params)} once, by position or by name", site=("<launch>", 0))
    return (*args, *(named[n] for n in params[len(args):]))


def _hooked(n: int, k, block_dim, *args, **kw):
    if n == 0:
        return _simulate(k, block_dim, *args, **kw)
    return _HOOKS[n - 1](lambda *a, **kw2: _hooked(n - 1, *a, **kw2), k, block_dim, *args, **kw)


def _simulate(k: Kernel, block_dim: int, *args, chip: ChipProfile | str | None = None,
              gm_names: list[str] | None = None, numerics: bool = True, auto_sync: bool = True):
    if not isinstance(k, Kernel):
        raise LaunchError(f"launch expects a function marked @kernel, got {type(k).__name__}",
                          fix="decorate the kernel function with «@kernel»", site=("<launch>", 0))
    if not isinstance(block_dim, (int, np.integer)) or not 1 <= block_dim <= 65535:
        raise LaunchError(f"block_dim must be an integer in [1, 65535], got {block_dim!r}",
                          fix="pass the number of blocks, e.g. launch(k, 8, ...)", site=("<launch>", 0))
    chip = get_chip(chip)
    if context.current is not None:
        raise LaunchError("launch called from inside a running kernel",
                          fix="launch kernels from host code only")
    with collector_paused():
        warm = _warm_l2(k, int(block_dim), args, chip, gm_names, auto_sync) if chip.l2_warm_launch else None
        run = Launch(k, int(block_dim), args, chip, gm_names, bool(numerics), auto_sync, l2=warm)
        lid = launch_log.begin(run)
        try:
            try:
                run.run()
            except BaseException as e:
                launch_log.fault(run, lid, e)
                raise
            result = LaunchResult(run)
            if getattr(run, "static_tensors", False):     # tensors at raw addresses may share bytes (api/static.py)
                warn_overwrites(result)
            launch_log.end(run, lid, result.cycles)
            return result
        finally:
            run.release()


def _warm_l2(k: Kernel, block_dim: int, args: tuple, chip: ChipProfile, gm_names, auto_sync: bool):
    """The L2 a profiler's measured launch starts with (``l2_warm_launch``): what one earlier run of the same launch
    on the same buffers left, from a timing-only run (no value moves, nothing logged)."""
    first = Launch(k, block_dim, args, chip, gm_names, False, auto_sync)
    try:
        first.run()
        return first.l2.warm()
    finally:
        first.release()


def warn_overwrites(result) -> list[Overwrite]:
    """Static tensors placed over each other's data (analysis/overwritten.py): one SanitizerWarning per distinct
    finding (the same lines on several cores: once), at the line that read the damaged data, naming the two writes'
    lines (their text names the two tensors) and byte ranges."""
    found = overwritten_reads(result)
    if not found:
        return found
    records = result.trace.records
    seen = set()
    for f in found:
        first, second, reader = records[f.first], records[f.second], records[f.reader]
        key = (f.tier, first.site, second.site, reader.site, f.first_span, f.second_span, f.lost)
        if key in seen:
            continue
        seen.add(key)
        span = lambda lo, hi: f"{f.tier} bytes {lo}..{hi - 1}"       # noqa: E731
        err = ArgumentError(
            f"{reader.op} reads {f.tier} data that {first.op} at {format_site(first.site)} wrote "
            f"({span(*f.first_span)}), "
            f"but {second.op} at {format_site(second.site)} wrote {span(*f.second_span)} over {span(*f.lost)} of it "
            "before anything read them: two tensors share those bytes, so this read and any later one get the "
            "second tensor's data there (on the chip too; inputs of zeros hide it)",
            fix=f"place the two tensors apart: the second at {f.tier} address {-(-f.first_span[1] // 32) * 32} or "
                "later (a LocalTensor's addr is in bytes, not elements), or take them from one LocalMemAllocator",
            site=reader.site, kind="tensors-overlap")
        warnings.warn(SanitizerWarning(err, "two tensors placed over each other's data, to judge"), stacklevel=3)
    return found


class LaunchResult:
    """What ``launch`` returns: cycles, microseconds, the trace and per-core timings."""

    def __init__(self, run):
        self.chip = run.chip
        self.kernel_name = run.kernel.__name__
        self.block_dim = run.block_dim
        cores = run.cores
        self.core_times = [(c.block_idx, c.core_type, c.start_time, c.end_time(), c.busy_cycles()) for c in cores]
        self.cycles = max((t[3] for t in self.core_times), default=0.0)
        self.trace = Trace(run.records, run.chip, len(cores))
        self.l2 = run.l2.stats()        # L2 hit rate, bytes L2 and HBM served (engine/l2.py)
        self.buffers = {(c.block_idx, c.core_type): {n: list(b) for n, b in c.buffers.items()} for c in cores}
        # per numpy argument, in order: the instruction (record index) that last wrote each byte, or None
        # when the launch ran outside ``engine.memory.tracking_gm_writes``
        self.gm_written_by = [b.written_by for b in run.gm_buffers]

    @property
    def us(self) -> float:
        """The kernel's time on the device (msprof's task duration): first block start to last block end, plus the
        chip's task head when that what-if is on (``task_head_cycles``)."""
        return self.chip.cycles_to_us(self.cycles + self.chip.task_head_cycles)

    @property
    def launch_us(self) -> float:
        """What a host timer around the launch would see: ``us`` plus the chip's fixed launch overhead."""
        return self.chip.cycles_to_us(self.cycles + self.chip.task_head_cycles + self.chip.launch_overhead_cycles)

    def __repr__(self) -> str:
        return (f"LaunchResult({self.kernel_name}, blocks={self.block_dim}, cycles={self.cycles:,.0f}, "
                f"us={self.us:,.3f}, instructions={len(self.trace)})")

    # ------------------------------------------------------------------ analyses
    def profile(self) -> Profile:
        """msprof op-style summary: pipe utilisation, traffic, the bound pipe and advice."""
        return profile(self)

    def to_chrome_trace(self, path, unit: str = "us") -> None:
        """Write Trace Event Format JSON (Perfetto, chrome://tracing, MindStudio Insight).

        ``unit="cycles"`` puts cycles on the time axis (it reads "us": 1 us = 1 cycle).
        """
        write_chrome_trace(self, path, unit)
