"""The engineering subcommands of ``ascend-sim``: dump, compare, overflow, optest, atc, logs.

``ENG_COMMANDS`` lists them as ``(name, help, [(flags, kwargs), ...], fn)``; ``tools.cli`` registers
them (this module does not import the cli: no import cycle). Heavy modules are imported inside each command. Tool
errors (KernelError subclasses with a fix) print as a message and exit status 2; a failing comparison,
a failing op test or a failed conversion exits 1.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from typing import Any, Callable

__all__ = ["ENG_COMMANDS", "dump", "compare", "overflow", "optest", "atc", "logs"]

#: (name, help, [(flags, add_argument kwargs), ...], fn) of every command here, in help order.
ENG_COMMANDS: list[tuple[str, str, list, Callable[[argparse.Namespace], int]]] = []


def arg(*flags: str, **kwargs: Any) -> tuple[tuple[str, ...], dict[str, Any]]:
    return flags, kwargs


def command(name: str, *, help: str, args: list) -> Callable:
    def register(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        ENG_COMMANDS.append((name, help, args, fn))
        return fn
    return register


def _fail(tool: str, e) -> int:
    print(f"ascend-sim {tool}: {e.rule_message}\n  Fix: {e.fix}", file=sys.stderr)
    return 2


@command("dump", help="dump every layer's input and output of a LeNet-5 run (simulated or numpy reference)",
         args=[arg("--out", required=True, help="dump folder (index.json + one .npz per layer)"),
               arg("--mode", choices=("sim", "ref"), default="sim",
                   help="sim: the simulated kernels; ref: the numpy reference (default: sim)"),
               arg("--dtype", default=None, help="float16 or float32 (default: float16 for sim, float32 for ref)"),
               arg("--images", type=int, default=16, help="first N images of the bundled held-out MNIST (default 16)"),
               arg("--scale", type=float, default=1.0, help="multiply the normalized input (plant an overflow)")])
def dump(args: argparse.Namespace) -> int:
    from ascend_sim.engine.errors import KernelError
    from ascend_sim.models.datasets import load_mnist_subset, normalize
    from ascend_sim.tools.dump import dump_lenet
    x = normalize(load_mnist_subset("heldout")[0][:max(1, args.images)]) * args.scale
    try:
        out = dump_lenet(x, args.out, mode=args.mode, dtype=args.dtype)
    except KernelError as e:
        return _fail("dump", e)
    print(f"dumped {len(x)} images through LeNet-5 ({args.mode}) to {out}")
    return 0


@command("compare", help="compare two layer dumps node by node (cosine, errors, RMSE, KL, ait/msprobe rules); "
                         "flags the first failing node",
         args=[arg("dump_a", help="the dump under test (e.g. the simulated fp16 run)"),
               arg("dump_b", help="the golden dump (e.g. the fp32 reference)"),
               arg("--out", default=None, help="CSV report path (one row per node)"),
               arg("--benchmark", default=None, help="a benchmark dump (the ideal network in A's dtype: "
                   "dump --mode ref --dtype float16); then the dual-benchmark rule decides"),
               arg("--bisect", action="store_true",
                   help="only find the first failing layer, in log2(nodes) comparisons")])
def compare(args: argparse.Namespace) -> int:
    from ascend_sim.engine.errors import KernelError
    from ascend_sim.tools.bisection import first_bad_layer
    from ascend_sim.tools.compare import compare_dumps
    try:
        if args.bisect:
            found = first_bad_layer(args.dump_a, args.dump_b, args.benchmark)
            print(found)
            return 1 if found.index is not None else 0
        report = compare_dumps(args.dump_a, args.dump_b, args.benchmark)
    except KernelError as e:
        return _fail("compare", e)
    print(report)
    if args.out:
        print(f"report: {report.write_csv(args.out)}")
    return 0 if report.passed else 1


@command("overflow", help="name the first layer of a dump that produced inf/NaN from finite inputs",
         args=[arg("dump", help="a layer dump folder")])
def overflow(args: argparse.Namespace) -> int:
    from ascend_sim.engine.errors import KernelError
    from ascend_sim.tools.overflow import first_nonfinite_node
    try:
        found = first_nonfinite_node(args.dump)
    except KernelError as e:
        return _fail("overflow", e)
    print(found or "no inf or NaN in the dump")
    return 1 if found else 0


@command("optest", help="run op-test specs (JSON) through the simulator against their references",
         args=[arg("specs", nargs="*", help="spec files or folders of them"),
               arg("--library", action="store_true", help="also run the library operators' own specs"),
               arg("--out", default=None, help="JSON report path (one entry per case)")])
def optest(args: argparse.Namespace) -> int:
    from ascend_sim.engine.errors import KernelError
    from ascend_sim.tools.optest import run_specs
    from ascend_sim.tools.optest_spec import library_specs
    paths: list[Path] = []
    for p in map(Path, args.specs):
        paths += sorted(p.glob("*.json")) if p.is_dir() else [p]
    paths += library_specs() if args.library else []
    if not paths:
        print("ascend-sim optest: no specs given (pass spec files, or --library)", file=sys.stderr)
        return 2
    try:
        report = run_specs(paths, progress=lambda r: print(r.summary(), flush=True))
    except KernelError as e:
        return _fail("optest", e)
    print(f"{len(report.results) - len(report.failed)}/{len(report.results)} cases passed")
    if args.out:
        print(f"report: {report.write_json(args.out)}")
    return 0 if report.passed else 1


@command("atc", help="convert a course model graph like ATC (checks --input_format, --input_shape, --soc_version)",
         args=[arg("--model", default="lenet", help="the course model graph (default: lenet)"),
               arg("--input_format", default="NCHW", help="NCHW (default), NCDHW, ND; NHWC is TensorFlow's"),
               arg("--input_shape", default=None, help='e.g. "input:1,1,28,28"'),
               arg("--soc_version", required=True, help="e.g. Ascend910B"),
               arg("--output", default=None, help="write OUTPUT.om.json describing the converted model")])
def atc(args: argparse.Namespace) -> int:
    from ascend_sim.tools.atc import AtcError, atc as convert
    try:
        om = convert(args.model, input_format=args.input_format, input_shape=args.input_shape,
                     soc_version=args.soc_version)
    except AtcError as e:
        print(f"ATC run failed\n{e.rule_message}\n  Fix: {e.fix}", file=sys.stderr)
        return 1
    if args.output:
        print(f"wrote {om.save(args.output + '.om.json')}")
    print(f"{om.model}: input {om.input_name} {om.input_format} {list(om.input_shape)} -> "
          f"{list(om.shapes[om.graph.output])} on {om.soc_version}")
    print("ATC run success")
    return 0


@command("logs", help="analyse plog files (a file or a folder such as $ASCEND_PROCESS_LOG_PATH/plog): the first "
                      "error with its aicore report, and repeated errors grouped",
         args=[arg("path", help="a plog-<pid>_<time>.log file or a folder of them")])
def logs(args: argparse.Namespace) -> int:
    from ascend_sim.tools.logs import analyse
    summary = analyse(args.path)
    print(summary.render())
    return 1 if summary.first_error else 0
