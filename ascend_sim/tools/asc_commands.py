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


def _program_line(exc: BaseException, path: Path) -> str:
    """``file:line: `text`  `` of the innermost traceback frame in the program's own file, or ""."""
    import linecache
    target, found, tb = str(path.resolve()), "", exc.__traceback__
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        if fn == target:
            text = linecache.getline(fn, tb.tb_lineno).strip()
            found = f"{path.name}:{tb.tb_lineno}: `{text}`: "
        tb = tb.tb_next
    return found


def _compile_error() -> type | tuple:
    """The front end's CompileError (its str is the file:line:col diagnostics), or () before it exists."""
    import ascend_sim.ascendc as front
    return getattr(front, "CompileError", ())


@_command("run", help="run a whole Ascend C program (.asc with a host main()) on the simulator: main's ACL "
                      "calls, <<<>>> launches and file reads/writes, then one summary line per launch (kernel, "
                      "blocks, cycles, time); exits with main's status",
          args=[arg("file", help="the .asc (or .cpp) file with the kernels and main()"),
                arg("--workdir", default=None, help="folder main runs in, where it reads input/ and writes "
                                                    "output/ (default: the file's folder; from an example's build/ "
                                                    "folder, as its README runs ./demo, pass --workdir .)"),
                arg("--chip", default=None, help="chip profile: Ascend910B (default), Ascend910, Ascend310B"),
                arg("-D", "--define", dest="defines", action="append", default=None, metavar="NAME[=VALUE]",
                    help="a preprocessor macro, as a compiler's -D (e.g. -D SCENARIO_NUM=1)"),
                arg("--cce-auto-sync", dest="auto_sync", choices=["on", "off"], default="on",
                    help="the compiler's auto-sync of the scalar's GetValue/SetValue with the V, MTE2 and MTE3 "
                         "pipes, as bisheng's option: on (the default of the official projects) or off (the "
                         "kernels' own SetFlag/WaitFlag, else a RaceError); write --cce-auto-sync=off"),
                arg("--profile", action="store_true",
                    help="also print each launch's msprof-style profile (pipe utilisation, bound pipe, advice)"),
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
        defines = dict((d.split("=", 1) + ["1"])[:2] for d in args.defines or [])
        outcome = run_file(path, workdir=args.workdir, chip=chip, defines=defines, auto_sync=args.auto_sync == "on")
    except KernelError as e:
        print(f"ascend-sim run: {path.name}: the program stopped on an error\n{e}", file=sys.stderr)
        return 1
    except LookupError as e:
        print(f"ascend-sim run: {path.name}: {e}", file=sys.stderr)
        return 2
    except _compile_error() as e:
        print(str(e), file=sys.stderr)
        return 1
    except Exception as e:      # not a rule of the simulator: name the program's line, then the exception
        print(f"ascend-sim run: {path.name}: {_program_line(e, path)}{type(e).__name__}: {e}\n  (not a rule "
              "the simulator checks: a construct the C++ front end or the host runtime does not handle yet, or a "
              "bug of ascend_sim; please report it with the program)", file=sys.stderr)
        return 1
    for line in launch_lines(outcome.launches):
        print(line)
    if args.profile:
        for i, (_, _, result) in enumerate(outcome.launches, 1):
            print(f"  launch {i} profile:\n{result.profile()}")
    if args.blocks_profile:
        for i, (_, _, result) in enumerate(outcome.launches, 1):
            print(f"  launch {i} blocks:")
            for line in block_lines(result):
                print(line)
    for leak in outcome.leaks:
        print(f"note: {leak} was never freed (aclrtFree / aclrtFreeHost)")
    return outcome.returncode


def _key_values(items: list[str], what: str) -> dict:
    """NAME=VALUE pairs; VALUE is read as JSON when it parses (numbers, true), else kept as text."""
    import json
    out = {}
    for item in items or []:
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise ValueError(f"{what} {item!r}: write NAME=VALUE")
        try:
            out[name.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[name.strip()] = value.strip()
    return out


@_command("export", help="write a kernel as a project for a real NPU in the layout of the asc-devkit examples: "
                         "<kernel>.asc (kernel + host main with the ACL calls and the <<<>>> launch), CMakeLists.txt "
                         "(ASC language), data_utils.h, scripts/gen_data.py, scripts/verify_result.py, README.md",
          args=[arg("kernel", help="the C++ kernel file (a __global__ function)"),
                arg("--out", required=True, help="folder to write the project into"),
                arg("--spec", default=None, help="JSON spec (a file or an inline object) with any of: kernel, blocks, "
                                                 "length, dtype, buffers, outputs, values, tiling, tiling_struct, "
                                                 "golden, range, seed"),
                arg("--kernel-name", dest="kernel_name", default=None, help="which kernel, when the file has several"),
                arg("--blocks", type=int, default=None, help="numBlocks of the launch (default 8)"),
                arg("--length", type=int, default=None, help="elements of each GM buffer (default 16384)"),
                arg("--dtype", default=None, help="element type of GM_ADDR buffers (default float)"),
                arg("--output", action="append", default=None, help="an output buffer (default: the last GM one)"),
                arg("--set", action="append", default=None, metavar="NAME=VALUE",
                    help="a template argument, scalar parameter or tiling field, e.g. --set blockLength=2048"),
                arg("--golden", action="append", default=None, metavar="OUT=EXPR",
                    help="numpy expression of an output over the inputs and values, e.g. --golden 'z=x + y'"),
                arg("--tiling-struct", dest="tiling_struct", default=None,
                    help="the struct a GM_ADDR tiling parameter carries (default: the file's only struct)")])
def export(args: argparse.Namespace) -> int:
    from ascend_sim.ascendc.export import ExportSpec, export as write_project
    spec = ExportSpec.from_json(args.spec) if args.spec else ExportSpec()
    for key, value in (("kernel", args.kernel_name), ("blocks", args.blocks), ("length", args.length),
                       ("dtype", args.dtype), ("outputs", args.output), ("tiling_struct", args.tiling_struct)):
        if value is not None:
            setattr(spec, key, value)
    spec.values.update(_key_values(args.set, "--set"))
    golden = _key_values(args.golden, "--golden")
    spec.golden.update({k: str(v) for k, v in golden.items()})
    if not Path(args.kernel).is_file():
        raise FileNotFoundError(f"{args.kernel} does not exist")
    for path in write_project(args.kernel, args.out, spec):
        print(path)
    return 0
