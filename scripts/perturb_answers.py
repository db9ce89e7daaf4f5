"""Search every lab for wrong answers its checks let pass: perturb each correct answer in small ways, list what passes.

Each exercise's answer in ``solutions/<lab>.py`` is parsed and mutated one edit at a time:

* an integer constant +1 or -1 (off-by-one);
* ``+`` <-> ``-`` and a binary operation replaced by one of its operands (a dropped term);
* ``<`` <-> ``<=`` and ``>`` <-> ``>=`` (a boundary);
* the first two positional arguments of a call swapped; ``min`` <-> ``max``.

The report's *part* column says whether the mutated line is the learner's (``answer``: between ``BEGIN`` and ``END
SOLUTION``) or the cell's ``given`` code, which the stub hands out unchanged.

Every mutant runs through the lab's own check (``LAB.run``) with the other exercises solved, as the solved notebook
would run it. A mutant that **passes** is either an equivalent rewrite (a tile one element longer that is still
correct, an unused constant) or a gap in the check: read each line of the report and decide.

    python scripts/perturb_answers.py                         # every lab, at most 80 mutants per exercise
    python scripts/perturb_answers.py lab04_migration --ex ex5 --max 0       # one exercise, every mutant
    python scripts/perturb_answers.py --out perturb.md        # the report as a Markdown table too
    python scripts/perturb_answers.py --margins               # budget margins instead (no mutants), every lab

``--margins`` looks at the other way a wrong answer passes: a correct but slow answer whose cycle budget a timing
change erodes. For every budget case of every exercise it prints the solution's figure, the budget, the budget's
margin over the solution, each slow wrong answer's figure and its margin over the budget
(``ascend_sim/course/grading/margins.py``; ``tests/course/test_budget_margins.py`` holds the minimum margins).

Deterministic: the mutants are enumerated in source order and, over ``--max``, taken evenly spaced.
"""
from __future__ import annotations

import argparse
import ast
import copy
import difflib
import importlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ascend_sim.course.grading.check import TIMEOUT_ENV  # noqa: E402
from ascend_sim.course.grading.hints import HintLog  # noqa: E402
from ascend_sim.course.grading.margins import lab_margins, margin_problems, margin_table  # noqa: E402
from ascend_sim.course.grading.solutions import parse_solutions  # noqa: E402

SWAP_OPS = {ast.Add: ast.Sub, ast.Sub: ast.Add}
SWAP_CMP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}


@dataclass
class Mutant:
    """One small edit of an answer: where (line of the answer), what, and the mutated source."""

    line: int
    what: str
    code: str


def mutants(code: str) -> Iterator[Mutant]:
    """Every single-edit mutant of ``code``, in source order."""
    tree = ast.parse(code)
    nodes = [n for n in ast.walk(tree) if hasattr(n, "lineno")]
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Module)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    for k, node in enumerate(nodes):
        for what, edit in _edits(node, id(node) in docstrings):
            new = copy.deepcopy(tree)
            target = [n for n in ast.walk(new) if hasattr(n, "lineno")][k]
            if edit(target) is False:
                continue
            try:
                yield Mutant(node.lineno, what, ast.unparse(ast.fix_missing_locations(new)))
            except Exception:  # noqa: BLE001 - an edit that makes no valid tree is no mutant
                continue


def _edits(node: ast.AST, docstring: bool):
    src = ast.unparse(node) if not docstring else ""
    if isinstance(node, ast.Constant) and type(node.value) is int and not docstring:
        for d in (1, -1):
            yield f"{node.value} -> {node.value + d}", lambda n, d=d: setattr(n, "value", n.value + d)
    if isinstance(node, ast.BinOp):
        if type(node.op) in SWAP_OPS:
            yield f"`{src}`: {type(node.op).__name__} swapped", lambda n: setattr(n, "op", SWAP_OPS[type(n.op)]())
        for side in ("left", "right"):
            yield f"`{src}` -> its {side} operand", lambda n, side=side: _replace(n, getattr(n, side))
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in SWAP_CMP:
        yield f"`{src}`: boundary", lambda n: setattr(n, "ops", [SWAP_CMP[type(n.ops[0])]()])
    if isinstance(node, ast.Call):
        if len(node.args) >= 2 and not any(isinstance(a, ast.Starred) for a in node.args[:2]):
            yield f"`{src[:60]}`: first two arguments swapped", lambda n: n.args.__setitem__(
                slice(0, 2), [n.args[1], n.args[0]])
        if isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
            other = "max" if node.func.id == "min" else "min"
            yield f"`{src[:60]}`: {node.func.id} -> {other}", lambda n, o=other: setattr(n.func, "id", o)


def _replace(node: ast.AST, by: ast.AST) -> None:
    """Turn ``node`` into a copy of ``by`` in place (the parent keeps its reference)."""
    node.__class__ = by.__class__
    node.__dict__.update(copy.deepcopy(by).__dict__)


def setup_cell(lab: str) -> str:
    nb = json.loads((ROOT / "labs" / f"{lab}.ipynb").read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["metadata"].get("course", {}).get("role") == "setup")


def run_mutant(lab_mod, lab: str, sols: dict, ex: str, code: str) -> str:
    """The check's status for ``code`` as ``ex``'s answer, the other exercises solved."""
    lab_mod.LAB.hint_log = HintLog()
    ns: dict = {}
    try:
        exec(compile(setup_cell(lab), "<setup>", "exec"), ns)  # noqa: S102 - the lab's own setup
        for other, sol in sorted(sols.items()):
            exec(compile(code if other == ex else sol, f"<{other}>", "exec"), ns)  # noqa: S102
    except Exception:  # noqa: BLE001 - the mutant does not even define its names: it fails
        return "error"
    return lab_mod.LAB.run(ex, ns).status


def answer_lines(code: str, stub: str | None) -> set[int]:
    """The lines of ``code`` the stub does not hand out (its BEGIN/END SOLUTION regions): what the learner writes.
    The rest of the cell is given code, the same in the stub. No stub: every line is the learner's."""
    lines = code.splitlines()
    if stub is None:
        return set(range(1, len(lines) + 1))
    ops = difflib.SequenceMatcher(None, lines, stub.splitlines(), autojunk=False).get_opcodes()
    return {k + 1 for tag, i1, i2, _, _ in ops if tag != "equal" for k in range(i1, i2)}


def _line(code: str, line: int) -> str:
    return code.splitlines()[line - 1].strip().replace("|", "/")[:70]


def evenly(items: list, limit: int) -> list:
    if not limit or len(items) <= limit:
        return items
    return [items[round(i * (len(items) - 1) / (limit - 1))] for i in range(limit)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("labs", nargs="*", help="lab names (default: every solutions/lab*.py)")
    ap.add_argument("--ex", action="append", help="only these exercises")
    ap.add_argument("--max", type=int, default=80, help="mutants per exercise, evenly spaced (0: all)")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds one check may run")
    ap.add_argument("--out", help="also write the survivors (or the margins) as a Markdown table to this file")
    ap.add_argument("--margins", action="store_true", help="print every budget's margins instead of mutants")
    args = ap.parse_args(argv)
    os.environ[TIMEOUT_ENV] = str(args.timeout)
    labs = args.labs or sorted(p.stem for p in (ROOT / "solutions").glob("lab*.py"))
    if args.margins:
        return print_margins(labs, tuple(args.ex or ()), args.out)
    survivors: list[tuple[str, str, Mutant]] = []
    sols_of: dict[str, dict] = {}
    stubs_of: dict[str, dict] = {}
    for lab in labs:
        mod = importlib.import_module(f"ascend_sim.course.labs.{lab}")
        parsed = parse_solutions(ROOT / "solutions" / f"{lab}.py")
        sols = sols_of[lab] = {ex: s.code for ex, s in parsed.items()}
        stubs_of[lab] = {ex: s.stub for ex, s in parsed.items()}
        for ex, sol in sorted(sols.items()):
            if args.ex and ex not in args.ex:
                continue
            todo = evenly(list(mutants(sol)), args.max)
            t0 = time.monotonic()
            for m in tqdm(todo, desc=f"{lab} {ex}", unit="mutant", leave=False):
                if run_mutant(mod, lab, sols, ex, m.code) == "pass":
                    survivors.append((lab, ex, m))
            n = sum(1 for s in survivors if s[:2] == (lab, ex))
            print(f"{lab} {ex}: {len(todo)} mutants, {n} pass ({time.monotonic() - t0:.0f} s)", flush=True)
    rows = [f"| {lab} | {ex} | {'answer' if m.line in answer_lines(sols_of[lab][ex], stubs_of[lab][ex]) else 'given'} | "
            f"`{_line(sols_of[lab][ex], m.line)}` | {m.what.replace('|', '/')} |" for lab, ex, m in survivors]
    table = "\n".join(["| lab | exercise | part | line | mutation that still passes |", "|---|---|---|---|---|",
                       *rows])
    print(f"\n{len(survivors)} mutants pass:\n{table}")
    if args.out:
        Path(args.out).write_text(table + "\n")
    return 0


def print_margins(labs: list[str], exercises: tuple[str, ...], out: str | None) -> int:
    """The margins table of ``labs``, then each margin under the minimums; 1 when there is one."""
    margins = []
    for lab in labs:
        t0 = time.monotonic()
        margins += list(lab_margins(lab, ROOT, exercises))
        print(f"{lab}: {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    table = margin_table(margins)
    problems = [p for m in margins for p in margin_problems(m)]
    print(table + "\n\n" + ("\n".join(problems) if problems else "every margin is wide enough"))
    if out:
        Path(out).write_text(table + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
