"""Instructor solution runs: fill a lab from ``solutions/<lab>.py`` and grade it.

A solutions file is Python in percent-cell format, one block per exercise and
one per deliberately wrong answer::

    # %% ex1
    @kernel
    def add_custom(x, y, z, tiling): ...

    # %% ex1 wrong: every block writes block 0's range
    @kernel
    def add_custom(x, y, z, tiling): ...

Each block's text replaces the answer cell verbatim. ``solve_lab`` proves the
lab: the solved notebook gets full marks, the blank one grades all
``not_attempted`` with no grader error, and every wrong answer fails.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from nbformat import NotebookNode

from ascend_sim.course.grading.execute import Limits
from ascend_sim.course.grading.grade import grade_notebook
from ascend_sim.course.grading.labfiles import LabFiles
from ascend_sim.course.grading.notebook import ANSWER, LabTemplate, course, load_template, role
from ascend_sim.course.grading.report import Report, write_report

__all__ = ["Solution", "parse_solutions", "fill", "solved_notebook", "wrong_rounds", "SolveRun",
           "SolveOutcome", "solve_lab", "lint_lab"]

MARKER = re.compile(r"^# %%\s*(?P<ex>\S+)?(?P<rest>.*)$")
WRONG = re.compile(r"^\s*wrong\s*(?::\s*(?P<label>.*))?$")


@dataclass
class Solution:
    """The answer of one exercise and its deliberately wrong variants (label, code)."""

    ex: str
    code: str = ""
    wrong: list[tuple[str, str]] = field(default_factory=list)


def parse_solutions(path: str | Path) -> dict[str, Solution]:
    """Read a solutions file into {exercise: Solution}; raises ValueError on a malformed marker."""
    path = Path(path)
    blocks: list[tuple[str, str, list[str], int]] = []        # ex, label ('' = the solution), lines, line no
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = MARKER.match(line)
        if m:
            ex, rest = m.group("ex") or "", m.group("rest")
            w = WRONG.match(rest)
            if not re.fullmatch(r"ex[0-9]+[a-z]?", ex) or (rest.strip() and not w):
                raise ValueError(f"{path}:{n}: a block marker is '# %% exN' or '# %% exN wrong: what is wrong', "
                                 f"got {line!r}")
            label = "" if not rest.strip() else (w.group("label") or "wrong answer").strip()
            blocks.append((ex, label, [], n))
        elif blocks:
            blocks[-1][2].append(line)
    sols: dict[str, Solution] = {}
    for ex, label, lines, n in blocks:
        code = "\n".join(lines).strip("\n") + "\n"
        sol = sols.setdefault(ex, Solution(ex))
        if label:
            sol.wrong.append((label, code))
        elif sol.code:
            raise ValueError(f"{path}:{n}: a second solution block for {ex}")
        else:
            sol.code = code
    return sols


def fill(template: LabTemplate, answers: Mapping[str, str]) -> NotebookNode:
    """A copy of the template whose answer cells hold ``answers[ex]`` (others keep the stub)."""
    nb = copy.deepcopy(template.nb)
    for cell in nb.cells:
        if role(cell) == ANSWER and course(cell)["ex"] in answers:
            cell.source = answers[course(cell)["ex"]].rstrip("\n")
    return nb


def solved_notebook(template: LabTemplate, sols: Mapping[str, Solution]) -> NotebookNode:
    """The template filled with every solution."""
    return fill(template, {ex: s.code for ex, s in sols.items() if s.code})


def wrong_rounds(template: LabTemplate, sols: Mapping[str, Solution]) -> list[tuple[dict[str, str], NotebookNode]]:
    """Round k: the k-th wrong answer of every exercise that has one, solutions elsewhere.

    Returns (ex -> label of the wrong answer used, notebook) per round.
    """
    rounds = max((len(s.wrong) for s in sols.values()), default=0)
    out = []
    for k in range(rounds):
        answers = {ex: s.code for ex, s in sols.items() if s.code}
        labels = {}
        for ex, s in sols.items():
            if k < len(s.wrong):
                labels[ex], answers[ex] = s.wrong[k]
        out.append((labels, fill(template, answers)))
    return out


@dataclass
class SolveRun:
    """One graded variant of the lab and what went against expectations."""

    name: str
    report: Report
    problems: list[str] = field(default_factory=list)


@dataclass
class SolveOutcome:
    """All runs of ``solve_lab``; ``ok`` when nothing went against expectations."""

    lab: str
    runs: list[SolveRun] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)    # about the solutions file itself

    @property
    def ok(self) -> bool:
        return not self.problems and not any(r.problems for r in self.runs)

    def all_problems(self) -> list[str]:
        return self.problems + [f"{r.name}: {p}" for r in self.runs for p in r.problems]


def solve_lab(lab: LabFiles, *, limits: Limits = Limits(), out_dir: str | Path | None = None,
              blank: bool = True, wrong: bool = True) -> SolveOutcome:
    """Grade the solved lab (full marks expected), the blank lab and each round of wrong answers."""
    template = load_template(lab.template)
    outcome = SolveOutcome(template.name)
    if not lab.solutions.is_file():
        outcome.problems.append(f"no solutions file {lab.solutions}")
        return outcome
    sols = parse_solutions(lab.solutions)
    outcome.problems += _coverage(template, sols)
    variants: list[tuple[str, NotebookNode, dict[str, str]]] = [("solved", solved_notebook(template, sols), {})]
    if blank:
        variants.append(("blank", copy.deepcopy(template.nb), {}))
    if wrong:
        variants += [(f"wrong-{k + 1}", nb, labels)
                     for k, (labels, nb) in enumerate(wrong_rounds(template, sols))]
    for name, nb, labels in variants:
        report = grade_notebook(template, nb, limits=limits, name=f"{template.name}:{name}")
        run = SolveRun(name, report, _expectations(name, report, labels))
        outcome.runs.append(run)
        if out_dir is not None:
            write_report(report, Path(out_dir) / name)
    return outcome


def lint_lab(lab: LabFiles) -> list[str]:
    """Problems of a lab found without running it: conventions, stripping, the check registry, solutions."""
    from ascend_sim.course.grading.clean import strip_problems
    from ascend_sim.course.grading.notebook import LabFormatError
    try:
        template = load_template(lab.template)
    except LabFormatError as e:
        return [str(e)]
    problems = strip_problems(template.nb) + _registry(template)
    if not lab.solutions.is_file():
        return problems + [f"no solutions file {lab.solutions}"]
    try:
        return problems + _coverage(template, parse_solutions(lab.solutions))
    except ValueError as e:
        return problems + [str(e)]


def _registry(template: LabTemplate) -> list[str]:
    """The checks module named in the notebook registers exactly the template's exercises and points."""
    import importlib
    import sys
    sys.path.insert(0, str(template.path.parent))
    try:
        module = importlib.import_module(template.checks)
    except Exception as e:  # noqa: BLE001 - report any import failure of the checks module
        return [f"checks module {template.checks} does not import: {type(e).__name__}: {e}"]
    finally:
        sys.path.remove(str(template.path.parent))
    lab = getattr(module, "LAB", None)
    if lab is None or not hasattr(module, "check"):
        return [f"checks module {template.checks} must define LAB (a Lab) and check = LAB.check"]
    problems = []
    registered = {e.id: e.points for e in lab.exercises.values()}
    for spec in template.exercises:
        if spec.id not in registered:
            problems.append(f"{spec.id} has no check registered in {template.checks}")
        elif registered[spec.id] != spec.points:
            problems.append(f"{spec.id}: {spec.points:g} points in the notebook, {registered[spec.id]:g} in "
                            f"{template.checks}")
    for ex in sorted(set(registered) - {e.id for e in template.exercises}):
        problems.append(f"{template.checks} registers {ex}, which the notebook does not have")
    if lab.name != template.name:
        problems.append(f"{template.checks} names its lab {lab.name!r}, the notebook {template.name!r}")
    return problems


def _coverage(template: LabTemplate, sols: Mapping[str, Solution]) -> list[str]:
    problems = []
    for spec in template.exercises:
        s = sols.get(spec.id)
        if s is None or not s.code:
            problems.append(f"{spec.id} has no solution block '# %% {spec.id}'")
        if s is None or not s.wrong:
            problems.append(f"{spec.id} has no wrong answer '# %% {spec.id} wrong: ...' to prove its check fails")
    extra = sorted(set(sols) - {e.id for e in template.exercises})
    if extra:
        problems.append(f"solutions for exercises the lab does not have: {', '.join(extra)}")
    return problems


def _expectations(name: str, report: Report, wrong_labels: Mapping[str, str]) -> list[str]:
    problems = [f"grader error: {report.grader_error}"] if report.grader_error else []
    problems += [f"tampered: {t['cell_id']} {t['kind']}" for t in report.tampered]
    for e in report.exercises:
        if name == "blank":
            want = ("not_attempted",)
        elif e.exercise in wrong_labels:
            want = ("fail",)
        else:
            want = ("pass",)
        if e.status not in want:
            what = f"wrong answer '{wrong_labels[e.exercise]}'" if e.exercise in wrong_labels else "the answer"
            detail = f": {e.messages[0]}" if e.messages else ""
            problems.append(f"{e.exercise} ({what}) graded {e.status}, expected {' or '.join(want)}{detail}")
    return problems
