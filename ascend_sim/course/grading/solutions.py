"""Instructor solution runs: fill a lab from ``solutions/<lab>.py`` (and ``solutions/<lab>.cpp``) and grade it.

The file format (answers with ``BEGIN``/``END SOLUTION`` sentinels, stubs, wrong answers as one
``# replace:`` each) is in ``solution_file.py``. ``solve_lab`` proves the lab in every language it has: the
solved notebook gets full marks (Python answers, then C++ answers), the blank one (and the blank one with the
other language's stubs) grades all ``not_attempted`` with no grader error, and every wrong answer of both files
fails, showing the hint of the diagnosis key its label declares (``expectations.py``); ``lint_lab`` finds what it
can without running anything (conventions, naming, the check registry, solutions coverage, drifted stubs).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from nbformat import NotebookNode

from ascend_sim.course.grading.check import Lab
from ascend_sim.course.grading.execute import Limits
from ascend_sim.course.grading.expectations import hint_problem, wrong_key
from ascend_sim.course.grading.grade import grade_notebook
from ascend_sim.course.grading.judge import load_lab
from ascend_sim.course.grading.labfiles import LabFiles
from ascend_sim.course.grading.notebook import ANSWER, LabTemplate, course, load_template, role
from ascend_sim.course.grading.report import Report, write_report
from ascend_sim.course.grading.solution_file import CPP, PYTHON, Solution, parse_solutions
from ascend_sim.course.grading.stubs import LabSolutions, cell_language, stub_problems

__all__ = ["Solution", "parse_solutions", "load_solutions", "fill", "solved_notebook", "wrong_rounds",
           "other_stubs_notebook", "SolveRun", "SolveOutcome", "solve_lab", "lint_lab"]


def load_solutions(lab: LabFiles) -> dict[str, dict[str, Solution]]:
    """language ('python', 'cpp') -> the parsed solutions file of that language, for the files that exist."""
    return {sol_syntax.language: parse_solutions(path) for sol_syntax, path in
            ((PYTHON, lab.solutions), (CPP, lab.cpp_solutions)) if path.is_file()}


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


def wrong_rounds(template: LabTemplate, sols: Mapping[str, Solution], *, prefix: str = "",
                 others: Mapping[str, Solution] | None = None) -> list[tuple[str, str, str, NotebookNode]]:
    """One round per wrong answer: that answer in its exercise, the solutions everywhere else.

    Returns (run name ``<prefix>exN-wrong-K``, exercise, label, notebook) per round. One wrong answer at a time,
    because a later exercise may run an earlier one's kernel (lab01's ex6 runs ex1..ex5): graded
    together, one wrong answer could fail for another's mistake and hide that it passes on its own.
    ``others`` (the Python solutions, for C++ rounds) fill the exercises ``sols`` has no answer for.
    """
    solved = {ex: s.code for ex, s in {**(others or {}), **sols}.items() if s.code}
    return [(f"{prefix}{ex}-wrong-{k}", ex, label, fill(template, {**solved, ex: code}))
            for ex, s in sols.items() for k, (label, code) in enumerate(s.wrong, 1)]


def other_stubs_notebook(template: LabTemplate, sols: LabSolutions) -> tuple[str, NotebookNode] | None:
    """(language, notebook): the template with every answer cell switched to its other-language stub, if any."""
    for lang in (PYTHON.language, CPP.language):
        stubs = {ex: s.stub for ex, s in sols.get(lang, {}).items() if s.stub is not None}
        if any(role(c) == ANSWER and cell_language(c.source) != lang and course(c)["ex"] in stubs
               for c in template.nb.cells):
            return lang, fill(template, stubs)
    return None


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
    every = load_solutions(lab)
    sols, cpp = every[PYTHON.language], every.get(CPP.language, {})
    outcome.problems += _static_problems(lab, template, every)
    variants: list[tuple[str, NotebookNode, dict[str, str]]] = [("solved", solved_notebook(template, sols), {})]
    if cpp:
        variants.append(("solved-cpp", solved_notebook(template, {**sols, **cpp}), {}))
    if blank:
        variants.append(("blank", copy.deepcopy(template.nb), {}))
        other = other_stubs_notebook(template, every)
        if other is not None:
            variants.append((f"blank-{other[0]}", other[1], {}))
    if wrong:
        variants += [(name, nb, {ex: label}) for name, ex, label, nb in wrong_rounds(template, sols)]
        variants += [(name, nb, {ex: label}) for name, ex, label, nb in
                     wrong_rounds(template, cpp, prefix="cpp-", others=sols)]
    declared = load_lab(template.checks, template.path.parent.resolve())
    for name, nb, labels in variants:
        report = grade_notebook(template, nb, limits=limits, name=f"{template.name}:{name}")
        run = SolveRun(name, report, _expectations(name, report, labels) + _hint_expectations(declared, report, labels))
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
        return problems + lab.naming_problems(course(template.nb)) + [f"no solutions file {lab.solutions}"]
    try:
        return problems + _static_problems(lab, template, load_solutions(lab))
    except ValueError as e:
        return problems + lab.naming_problems(course(template.nb)) + [str(e)]


def _static_problems(lab: LabFiles, template: LabTemplate, every: LabSolutions) -> list[str]:
    """Naming, solutions coverage (Python for every exercise, C++ for those it answers) and drifted stubs."""
    cpp = every.get(CPP.language, {})
    return (lab.naming_problems(course(template.nb)) + _coverage(template, every[PYTHON.language])
            + _coverage(template, cpp, every_exercise=False, comment="//", what="C++ ")
            + _cpp_cells_without_solution(template, cpp) + stub_problems(template.nb, every, lab.solutions))


def _cpp_cells_without_solution(template: LabTemplate, cpp: Mapping[str, Solution]) -> list[str]:
    return [f"{course(c)['ex']}: the answer cell is %%ascendc but solutions/{template.name}.cpp has no "
            f"'// %% {course(c)['ex']}' block" for c in template.nb.cells
            if role(c) == ANSWER and cell_language(c.source) == CPP.language and course(c)["ex"] not in cpp]


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


def _coverage(template: LabTemplate, sols: Mapping[str, Solution], *, every_exercise: bool = True,
              comment: str = "#", what: str = "") -> list[str]:
    """Each exercise (each one ``sols`` answers, unless ``every_exercise``) has an answer, a stub, a wrong answer."""
    problems = []
    c = comment
    for spec in template.exercises:
        s = sols.get(spec.id)
        if s is None and not every_exercise:
            continue
        if s is None or not s.code:
            problems.append(f"{spec.id} has no {what}solution block '{c} %% {spec.id}'")
        elif s.stub is None:
            problems.append(f"{spec.id} has no {what}stub: mark the answer's regions with '{c} --- BEGIN SOLUTION "
                            f"hint=\"...\"' / '{c} --- END SOLUTION' or add a '{c} %% {spec.id} stub' block")
        if s is None or not s.wrong:
            problems.append(f"{spec.id} has no {what}wrong answer '{c} %% {spec.id} wrong: ...' to prove its "
                            "check fails")
        problems += [f"{spec.id} {what}wrong '{label}': end the label with [key: <the diagnosis key whose hint it "
                     "must show>]" for label, _ in (s.wrong if s else []) if wrong_key(label) is None]
    extra = sorted(set(sols) - {e.id for e in template.exercises})
    if extra:
        problems.append(f"{what}solutions for exercises the lab does not have: {', '.join(extra)}")
    return problems


def _hint_expectations(declared: Lab, report: Report, wrong_labels: Mapping[str, str]) -> list[str]:
    """A failed wrong answer shows the nudge of the diagnosis key its label declares (expectations.py)."""
    return [p for e in report.exercises if e.exercise in wrong_labels and e.status == "fail"
            and wrong_key(wrong_labels[e.exercise]) is not None      # a label without a key: _coverage says so
            for p in [hint_problem(declared, e.exercise, wrong_labels[e.exercise], e.hints)] if p]


def _expectations(name: str, report: Report, wrong_labels: Mapping[str, str]) -> list[str]:
    """Solved: every exercise passes; blank (either language's stubs): none attempted; a wrong round: its wrong
    answer fails.

    In a wrong round the other exercises are not judged: the solved run proved them, and one that
    reuses the wrong answer's kernel may rightly fail with it.
    """
    problems = [f"grader error: {report.grader_error}"] if report.grader_error else []
    problems += [f"tampered: {t['cell_id']} {t['kind']}" for t in report.tampered]
    for e in report.exercises:
        if name.startswith("blank"):
            want = "not_attempted"
        elif wrong_labels:
            if e.exercise not in wrong_labels:
                continue
            want = "fail"
        else:
            want = "pass"
        if e.status != want:
            what = f"wrong answer '{wrong_labels[e.exercise]}'" if e.exercise in wrong_labels else "the answer"
            detail = f": {e.messages[0]}" if e.messages else ""
            problems.append(f"{e.exercise} ({what}) graded {e.status}, expected {want}{detail}")
    return problems
