"""``ascend-sim run FILE.asc``: a whole Ascend C program, host ``main()`` included, on the simulator.

The file is loaded with ``ascend_sim.ascendc.load``; its ``main`` runs in the working folder (the file's folder
by default, where the example's ``scripts/gen_data.py`` wrote ``input/``) on a fresh simulated ACL runtime
(``host/acl.py``). What ``main`` prints is printed; after it, one line per ``<<<...>>>`` launch (kernel, blocks,
cycles, time at the chip's clock); the exit status is ``main``'s return value, as a process's would be.
"""
from __future__ import annotations

import contextlib
import inspect
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ascend_sim.ascendc.host import acl

__all__ = ["RunOutcome", "run_file", "launch_lines", "block_lines"]


@dataclass
class RunOutcome:
    """What running a program gave: the exit status, the launches (name, blocks, LaunchResult), the leaks."""

    returncode: int
    launches: list = field(default_factory=list)
    leaks: list = field(default_factory=list)
    error: BaseException | None = None


@contextlib.contextmanager
def _working_folder(path: Path):
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _entry(module: Any) -> Callable:
    """The lowered ``main`` of a loaded translation unit."""
    for get in (lambda: getattr(module, "main"), lambda: module.functions["main"]):
        with contextlib.suppress(AttributeError, KeyError, TypeError):
            fn = get()
            if callable(fn):
                return fn
    raise LookupError("the file has no host main(): `ascend-sim run` runs whole programs (an .asc with main); "
                      "launch a kernel-only file from Python with ascend_sim.ascendc.load(path) and launch(...)")


def _call_main(main: Callable, path: Path) -> Any:
    """``main()`` or ``main(argc, argv)`` with argv = [the program's path], as a shell would call it."""
    try:
        nparams = len(inspect.signature(main).parameters)
    except (TypeError, ValueError):
        nparams = 0
    return main(1, [str(path)]) if nparams >= 2 else main()


def _status(value: Any) -> int:
    """A process's exit status from main's return value (C: the low 8 bits; no return means 0)."""
    return 0 if value is None else int(value) & 0xFF


def run_file(path: str | Path, *, workdir: str | Path | None = None, chip: Any = None,
             defines: dict | None = None, auto_sync: bool = True) -> RunOutcome:
    """Load ``path`` (with the macros ``defines``), run its ``main`` in ``workdir`` (default: the file's folder).
    ``auto_sync=False``: every launch as built with ``--cce-auto-sync=off`` (docs/architecture.md, "Auto-sync").

    Errors of the program (a KernelError in a kernel, an AclError in main, a CompileError) propagate.
    """
    from ascend_sim.ascendc import load     # the front end (libclang) is loaded only when a program runs
    path = Path(path).resolve()
    module = load(str(path), defines=defines or None)
    main = _entry(module)
    with acl.session(chip=chip, auto_sync=auto_sync) as state, _working_folder(Path(workdir or path.parent).resolve()):
        code = _status(_call_main(main, path))
        sys.stdout.flush()
    return RunOutcome(code, list(state.launches), state.leaks())


def launch_lines(launches: list, chip: Any = None) -> list[str]:
    """One line per launch: ``kernel<<<blocks>>>  cycles  time at the chip's clock``."""
    out = []
    for i, (name, blocks, result) in enumerate(launches, 1):
        c = result.chip
        out.append(f"launch {i}: {name}<<<{blocks}>>>  {result.cycles:,.0f} cycles  {result.us:,.2f} us "
                   f"at {c.clock_ghz:g} GHz ({c.name}), {len(result.trace):,} instructions")
    return out


def block_lines(result: Any) -> list[str]:
    """Per block of one launch: core type, start, end, and its busiest pipe with that pipe's busy cycles."""
    from ascend_sim.engine.instr import PIPES
    rows = [f"    {'block':>5} {'core':>4} {'start':>10} {'end':>10}  busiest pipe"]
    for block, ctype, start, end, busy in result.core_times:
        top = max(range(len(busy)), key=busy.__getitem__)
        rows.append(f"    {block:>5} {ctype:>4} {start:>10,.0f} {end:>10,.0f}  {PIPES[top]} {busy[top]:,.0f} cycles")
    return rows
