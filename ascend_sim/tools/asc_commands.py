"""The Ascend C program subcommands of ``ascend-sim``: ``run`` (a whole .asc program) and ``export`` (a kernel
as an asc-devkit-style project for a real NPU).

``ASC_COMMANDS`` lists them as ``(name, help, [(flags, kwargs), ...], fn)`` for ``tools.cli`` to register. The
front end (libclang) is imported inside each command, so ``ascend-sim --help`` stays fast.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from ascend_sim.tools.eng_commands import arg

__all__ = ["ASC_COMMANDS", "run", "export"]

ASC_COMMANDS: list[tuple[str, str, list, Callable[[argparse.Namespace], int]]] = []


def _command(name: str, *, help: str, args: list) -> Callable:
    def register(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        ASC_COMMANDS.append((name, help, args, fn))
        return fn
    return register


def _compile_error() -> type | tuple:
    """The front end's CompileError (its str is the file:line:col diagnostics), or () before it exists."""
    import ascend_sim.ascendc as front
    return getattr(front, "CompileError", ())


@_command("run", help="run a whole Ascend C program (.asc with a host main()) on the simulator: main's ACL "
                      "calls, <<<>>> launches and file reads/writes, then one summary line per launch (kernel, "
                      "blocks, cycles, time); exits with main's status",
          args=[arg("file", help="the .asc (or .cpp) file with the kernels and main()"),
                arg("--workdir", default=None, help="folder main runs in, where it reads input/ and writes "
                                                    "output/ (default: the file's folder)"),
                arg("--chip", default=None, help="chip profile: Ascend910B (default), Ascend910, Ascend310B"),
                arg("--blocks-profile", action="store_true",
                    help="also print each launch's blocks: core, start and end cycle, busiest pipe")])
def run(args: argparse.Namespace) -> int:
    from ascend_sim import KernelError, get_chip
    from ascend_sim.ascendc.host.run import block_lines, launch_lines, run_file
    path = Path(args.file)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    chip = get_chip(args.chip) if args.chip else None
    try:
        outcome = run_file(path, workdir=args.workdir, chip=chip)
    except KernelError as e:
        print(f"ascend-sim run: {path.name}: the program stopped on an error\n{e}", file=sys.stderr)
        return 1
    except LookupError as e:
        print(f"ascend-sim run: {path.name}: {e}", file=sys.stderr)
        return 2
    except _compile_error() as e:
        print(str(e), file=sys.stderr)
        return 1
    for line in launch_lines(outcome.launches):
        print(line)
    if args.blocks_profile:
        for i, (_, _, result) in enumerate(outcome.launches, 1):
            print(f"  launch {i} blocks:")
            for line in block_lines(result):
                print(line)
    for leak in outcome.leaks:
        print(f"note: {leak} was never freed (aclrtFree / aclrtFreeHost)")
    return outcome.returncode
