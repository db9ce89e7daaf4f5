"""Autograded course exercises: checks, lab templates, sandboxed grading, reports.

Learner side (imported by lab notebooks, light): ``Lab``, ``Context``, ``MIME``.
Instructor side (imported on use): ``grade_submission``, ``grade_many``,
``solve_lab``, ``load_template``, ``find_lab``, ``Limits``.

| module | one job |
|---|---|
| ``check.py`` | check registry per lab, results, hints, the notebook output (custom MIME), evidence recording |
| ``hints.py`` | hints chosen by the diagnosed mistake: per-exercise tables, shared defaults, levels revealed |
| ``stale.py`` | is the failing code an older definition than the notebook's cells (IPython history, saved notebook) |
| ``evidence.py`` | the evidence format that crosses from the re-run to the grader |
| ``judge.py`` | the trusted side: replay a check on the evidence in the grader's process |
| ``screen.py`` | the allowlist an answer cell must keep to be run (AST) |
| ``rerun.py`` / ``runner.py`` | the trusted re-run: answers + the lab's checks in a fresh confined process |
| ``sandbox.py`` / ``confine.py`` | per-submission confinement (namespaces, a root holding only an allowlist, own uid) |
| ``releases.py`` | lab versions: a submission is graded against the release it was made from |
| ``diagnose.py`` | a failed comparison -> the likely mistake (tail, block offset, precision) |
| ``notebook.py`` | lab cell conventions, template validation, rebuild + tamper detection |
| ``execute.py`` | limits, how each cell ended, the re-run's environment |
| ``grade.py`` | one or many submissions -> Report |
| ``distribute.py`` | ``--dask``: submissions graded on Dask workers, each as ``--jobs`` does |
| ``shards.py`` | ``--shard i/n`` and merging the shards' gradebooks |
| ``report.py`` | report.json, report.csv, gradebook.csv |
| ``solution_file.py`` | the solutions files (.py, and .cpp for C++ answers): answers, sentinel stubs, wrong answers |
| ``stubs.py`` | answer-cell stubs of a notebook (either language) against the generated ones, the alt-stub cells |
| ``exercise_cells.py`` | a notebook's exercise cells and points, derived from the checks module's declarations |
| ``expectations.py`` | what the declarations promise: full marks, solve's runs, each wrong answer's hint key |
| ``solutions.py`` | solved / blank / wrong-answer runs of both languages, ``lint_lab`` |
| ``labfiles.py`` | lab name -> template and solutions paths |
| ``clean.py`` | output stripping of committed notebooks |
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

from ascend_sim.course.grading.check import MIME, CheckResult, Context, Lab

__all__ = ["MIME", "CheckResult", "Context", "Lab", "grade_submission", "grade_many", "grade_notebook",
           "solve_lab", "load_template", "find_lab", "Limits", "Report"]

_LAZY = {"grade_submission": "grade", "grade_many": "grade", "grade_notebook": "grade",
         "solve_lab": "solutions", "load_template": "notebook", "find_lab": "labfiles",
         "Limits": "execute", "Report": "report"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
