"""The ``ascend-sim`` command line: one function per subcommand.

To add a subcommand, write one function and register it::

    @command("demo", help="run a demo kernel", args=[arg("name"), arg("--blocks", type=int, default=8)])
    def demo(args: argparse.Namespace) -> int:
        ...
        return 0                      # the exit status

Import heavy modules inside the function so ``ascend-sim --help`` stays fast.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

__all__ = ["main", "command", "arg", "build_parser", "COMMANDS"]


@dataclass(frozen=True)
class Arg:
    """One ``add_argument`` call."""

    flags: tuple[str, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Command:
    """A registered subcommand."""

    name: str
    help: str
    fn: Callable[[argparse.Namespace], int]
    args: tuple[Arg, ...] = ()


COMMANDS: dict[str, Command] = {}


def arg(*flags: str, **kwargs: Any) -> Arg:
    """Describe one argument exactly as ``ArgumentParser.add_argument(*flags, **kwargs)``."""
    return Arg(flags, kwargs)


def command(name: str, *, help: str, args: Sequence[Arg] = ()) -> Callable:
    """Register the decorated ``fn(args) -> exit status`` as ``ascend-sim <name>``."""
    def register(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        if name in COMMANDS:
            raise ValueError(f"ascend-sim subcommand {name!r} is defined twice")
        COMMANDS[name] = Command(name, help, fn, tuple(args))
        return fn
    return register


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ascend-sim",
                                     description="Ascend C on a simulated Da Vinci AI Core: course tools.")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND")
    for cmd in COMMANDS.values():
        p = subs.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        for a in cmd.args:
            p.add_argument(*a.flags, **a.kwargs)
        p.set_defaults(_fn=cmd.fn)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ascend-sim`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "_fn", None) is None:
        parser.print_help()
        return 2
    try:
        return int(args._fn(args) or 0)
    except (FileNotFoundError, ValueError) as e:    # bad lab names, malformed labs: a message, not a traceback
        print(f"ascend-sim {args.command}: {e}{_root_hint(args)}", file=sys.stderr)
        return 2


def _root_hint(args: argparse.Namespace) -> str:
    """When the course root has no labs/ folder: say so and suggest --root."""
    if not hasattr(args, "root") or (Path(args.root) / "labs").is_dir():
        return ""
    return (f"\nFix: {Path(args.root).resolve()} has no labs/ folder. Run ascend-sim from the repository's root "
            f"(the folder with labs/ and solutions/) or pass --root /path/to/that/folder.")


# ----------------------------------------------------------------------------- shared options
LIMIT_ARGS = (
    arg("--root", default=".", help="course root holding labs/ and solutions/ (default: .)"),
    arg("--cell-timeout", type=float, default=60.0, help="seconds per cell (default: 60)"),
    arg("--time-limit", type=float, default=600.0, help="seconds per notebook (default: 600)"),
    arg("--memory-mb", type=int, default=2048, help="address-space limit of the kernel in MiB (default: 2048)"),
)


def _limits(args: argparse.Namespace):
    from ascend_sim.course.grading.execute import Limits
    return Limits(cell_timeout=args.cell_timeout, time_limit=args.time_limit, memory_mb=args.memory_mb)


def _notebooks(paths: Sequence[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(q for q in p.rglob("*.ipynb") if ".ipynb_checkpoints" not in q.parts)
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"{p} does not exist")
    return out


# ----------------------------------------------------------------------------- grade
@command("grade", help="grade learner notebooks against a lab (the learner's files are never written)",
         args=[arg("lab", help="lab name (lab00, lab00_warmup) or path to the lab template .ipynb"),
               arg("submissions", nargs="+", help="learner notebooks, or folders of them"),
               arg("--out", default="out/grade", help="report folder (default: out/grade)"),
               arg("--jobs", "-j", type=int, default=1, help="submissions graded at a time (default: 1)"),
               arg("--id-pattern", default="", help="regular expression on the file name giving the student id "
                                                    "(group 'id' or 1), e.g. '^(?P<id>[0-9]+)_'"),
               arg("--id-from-metadata", action="store_true",
                   help="for files --id-pattern does not match, take the id the learner wrote in the notebook's "
                        "metadata (learner-editable: off by default)"),
               arg("--resume", action="store_true", help="skip submissions already graded into --out (same bytes)"),
               arg("--bom", action="store_true", help="write gradebook.csv as UTF-8 with a BOM (Excel)"),
               arg("--dask", default="", metavar="ADDRESS",
                   help="grade on Dask workers: a scheduler address (tcp://host:8786) or local[:N] for a LocalCluster "
                        "of N worker processes (needs the dask extra; see docs/grading.md)"),
               arg("--shard", default="", metavar="I/N",
                   help="grade only shard I of N (split by file name; merge with `ascend-sim gradebook merge`)"),
               *LIMIT_ARGS])
def grade(args: argparse.Namespace) -> int:
    from ascend_sim.course.grading.distribute import DaskTarget
    from ascend_sim.course.grading.grade import GradingInterrupted, grade_many
    from ascend_sim.course.grading.labfiles import find_lab
    from ascend_sim.course.grading.notebook import load_template
    from ascend_sim.course.grading.report import GradebookOptions, printable
    from ascend_sim.course.grading.sandbox import isolation_mode
    from ascend_sim.course.grading.shards import Shard
    dask = DaskTarget.parse(args.dask) if args.dask else None
    shard = Shard.parse(args.shard) if args.shard else None
    if dask is not None and args.jobs > 1:
        raise ValueError(f"--dask and --jobs {args.jobs} both say how many submissions to grade at a time. Fix: "
                         "drop --jobs (with --dask local:N, N is the number of workers)")
    lab = find_lab(args.lab, args.root)
    template = load_template(lab.template)
    out = Path(args.out).resolve()
    subs = [p for p in _notebooks(args.submissions) if out not in p.resolve().parents]   # not our own output
    if not subs:
        raise FileNotFoundError("no notebooks to grade")
    if isolation_mode() != "root":
        print(f"warning: isolation is '{isolation_mode()}' (root gives each submission its own user): see "
              "docs/grading.md", file=sys.stderr)
    options = GradebookOptions(args.id_pattern, args.bom, args.id_from_metadata)
    try:
        reports, gradebook = grade_many(template, subs, args.out, limits=_limits(args), jobs=max(1, args.jobs),
                                        gradebook=options, resume=args.resume, dask=dask, shard=shard,
                                        progress=lambda r: print(r.summary(), flush=True))
    except GradingInterrupted as e:
        print(f"ascend-sim grade: {e}", file=sys.stderr)
        return 130
    _warn_ids(reports, options)
    part = f", shard {shard} of {len(subs)}" if shard else ""
    print(f"gradebook: {printable(str(gradebook))} ({len(reports)} submissions{part})")
    return 1 if any(r.grader_error for r in reports) else 0


def _warn_ids(reports, options) -> None:
    """Print a loud WARNING for every student-id problem (unmatched file names, ids given twice)."""
    from ascend_sim.course.grading.report import id_problems
    problems = id_problems(reports, options)
    for p in problems:
        print(f"WARNING: {p}", file=sys.stderr)
    if problems:
        print(f"WARNING: {len(problems)} student-id problem(s) above: check the gradebook's student_id column "
              "before you publish it", file=sys.stderr)


# ----------------------------------------------------------------------------- gradebook merge
@command("gradebook", help="merge the --out folders of `ascend-sim grade --shard i/n` runs into one class",
         args=[arg("action", choices=["merge"], help="merge: OUT gets every shard's reports and one gradebook.csv"),
               arg("out", help="the merged folder (as the unsharded run's --out)"),
               arg("dirs", nargs="+", help="the --out folder of every shard")])
def gradebook(args: argparse.Namespace) -> int:
    from ascend_sim.course.grading.report import printable
    from ascend_sim.course.grading.shards import merge_shards
    reports, book, options = merge_shards(args.out, args.dirs)
    _warn_ids(reports, options)
    print(f"gradebook: {printable(str(book))} ({len(reports)} submissions from {len(args.dirs)} shards)")
    return 1 if any(r.grader_error for r in reports) else 0


# ----------------------------------------------------------------------------- release
@command("release", help="keep a lab as released to learners (labs/releases/LAB@VERSION.ipynb), so submissions of "
                         "this version are graded against it after the lab is edited",
         args=[arg("lab", help="lab name (lab00, lab00_warmup) or path to the lab template .ipynb"), LIMIT_ARGS[0]])
def release(args: argparse.Namespace) -> int:
    from ascend_sim.course.grading.labfiles import find_lab
    from ascend_sim.course.grading.releases import release as keep
    print(f"released: {keep(find_lab(args.lab, args.root).template)}")
    return 0


# ----------------------------------------------------------------------------- solve
@command("solve", help="fill a lab from solutions/ (Python and C++) and grade it: full marks, blank all not attempted, "
                       "every wrong answer failing",
         args=[arg("labs", nargs="+", metavar="LAB", help="lab names or template paths"),
               arg("--out", default="out/solve", help="report folder (default: out/solve)"),
               arg("--no-blank", action="store_true", help="skip grading the blank lab"),
               arg("--no-wrong", action="store_true", help="skip the deliberately wrong answers"),
               *LIMIT_ARGS])
def solve(args: argparse.Namespace) -> int:
    from ascend_sim.course.grading.labfiles import find_lab
    from ascend_sim.course.grading.solutions import solve_lab
    failed = False
    for spec in args.labs:
        lab = find_lab(spec, args.root)
        outcome = solve_lab(lab, limits=_limits(args), out_dir=Path(args.out) / lab.name,
                            blank=not args.no_blank, wrong=not args.no_wrong)
        for run in outcome.runs:
            print(f"{run.name:>14}  {run.report.summary()}")
        problems = outcome.all_problems()
        for p in problems:
            print(f"  PROBLEM {p}")
        print(f"{lab.name}: {'OK' if outcome.ok else 'FAILED'} (reports in {Path(args.out) / lab.name})")
        failed |= not outcome.ok
    return 1 if failed else 0


# ----------------------------------------------------------------------------- clean
@command("clean", help="strip outputs from committed notebooks; in labs add the cells and points of the exercises the "
                       "checks module declares, fix cell ids/tags/locks and regenerate answer-cell stubs from "
                       "solutions/ (--check: only report)",
         args=[arg("paths", nargs="+", help="notebooks or folders (e.g. course labs)"),
               arg("--check", action="store_true", help="change nothing; exit 1 if anything needs cleaning")])
def clean(args: argparse.Namespace) -> int:
    import nbformat

    from ascend_sim.course.grading.clean import strip, strip_problems
    from ascend_sim.course.grading.exercise_cells import declared_lab, exercise_cell_problems, write_exercise_cells
    from ascend_sim.course.grading.notebook import course, lab_problems, normalize_lab
    from ascend_sim.course.grading.stubs import stub_problems, write_stubs
    dirty = 0
    for path in _notebooks(args.paths):
        nb = nbformat.read(path, as_version=4)
        is_lab = bool(course(nb).get("lab"))
        sols, solutions, problems = _lab_solutions(path) if is_lab else (None, None, [])
        declared, declared_problems = declared_lab(path, nb) if is_lab else (None, [])
        problems += declared_problems
        if args.check:
            problems += strip_problems(nb) + (exercise_cell_problems(nb, declared) if declared else [])
            problems += lab_problems(nb) if is_lab else []
            problems += stub_problems(nb, sols, solutions) if sols else []
            for p in problems:
                print(f"{path}: {p}")
            dirty += bool(problems)
            continue
        before = nbformat.writes(nb)
        strip(nb)
        for change in write_exercise_cells(nb, declared) if declared else []:
            print(f"{path}: {change}")
        if is_lab:
            normalize_lab(nb)
        for cid in write_stubs(nb, sols) if sols else []:
            print(f"{path}: cell {cid}: stub regenerated from {solutions.with_suffix('')}.py/.cpp")
        if nbformat.writes(nb) != before:
            nbformat.write(nb, path)
            print(f"cleaned {path}")
        problems += exercise_cell_problems(nb, declared) if declared else []     # what clean cannot derive
        for p in problems + (lab_problems(nb) if is_lab else []):
            print(f"{path}: {p}")
            dirty += 1
    return 1 if dirty else 0


def _lab_solutions(path: Path) -> tuple[dict | None, Path | None, list[str]]:
    """The parsed solutions of a lab notebook, by language (None when it has no solutions file), the Python
    solutions file, and why they failed to parse."""
    from ascend_sim.course.grading.labfiles import find_lab
    from ascend_sim.course.grading.solution_file import SolutionsFormatError
    from ascend_sim.course.grading.solutions import load_solutions
    lab = find_lab(path)
    solutions = lab.solutions
    if solutions.is_relative_to(Path.cwd()):
        solutions = solutions.relative_to(Path.cwd())
    if not solutions.is_file():
        return None, None, []
    try:
        return load_solutions(lab), solutions, []
    except SolutionsFormatError as e:
        return None, solutions, [f"stubs not checked: {e}"]


from ascend_sim.tools.demo import DEMO_ARGS, DEMO_HELP, run_demo  # noqa: E402  (argparse only; the demo imports inside run_demo)
command("demo", help=DEMO_HELP, args=[arg(*flags, **kw) for flags, kw in DEMO_ARGS])(run_demo)
from ascend_sim.tools.notebook_export import EXPORT_ARGS, EXPORT_HELP, run_export  # noqa: E402  (imports inside run_export)
command("export-notebook", help=EXPORT_HELP, args=[arg(*flags, **kw) for flags, kw in EXPORT_ARGS])(run_export)
from ascend_sim.tools.eng_commands import ENG_COMMANDS  # noqa: E402  (dump, compare, overflow, optest, atc)
for _name, _help, _args, _fn in ENG_COMMANDS:
    command(_name, help=_help, args=[arg(*flags, **kw) for flags, kw in _args])(_fn)
from ascend_sim.tools.asc_commands import ASC_COMMANDS  # noqa: E402  (run, export: the front end loads inside)
for _name, _help, _args, _fn in ASC_COMMANDS:
    command(_name, help=_help, args=[arg(*flags, **kw) for flags, kw in _args])(_fn)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
