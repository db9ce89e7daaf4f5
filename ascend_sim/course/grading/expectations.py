"""What a lab's declarations promise, for ``ascend-sim solve`` and the tests: totals and wrong answers' hints.

An exercise is declared in its checks module (points, check, hints) and its solutions file (answer, wrong
answers). Every expectation about it is derived from those two files, never typed again elsewhere:

* the lab's full marks are the sum of the declared points (``full_marks``), and ``ascend-sim solve`` runs one
  round per wrong answer of the solutions file (``wrong_run_names``);
* each wrong answer names, at the end of its label, the diagnosis key whose hint its failure must show::

      # %% ex2 wrong: forgets the tail (the last, shorter tile is skipped) [key: tail]

  (``wrong_key``); ``hint_problem`` says when a graded failure showed another hint, and
  ``tests/course/test_hints_every_wrong_answer.py`` checks the key itself for every wrong answer.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Mapping

from ascend_sim.course.grading.check import Lab
from ascend_sim.course.grading.hints import DEFAULT_HINTS
from ascend_sim.engine.spelling import CPP, PYTHON, render

if TYPE_CHECKING:
    from ascend_sim.course.grading.solution_file import Solution

__all__ = ["KEY_RE", "full_marks", "wrong_run_names", "wrong_key", "key_levels", "hint_problem"]

KEY_RE = re.compile(r"\s*\[key:\s*(?P<key>[^\]\s]+)\s*\]\s*$")


def full_marks(lab: Lab) -> float:
    """The lab's maximum score: the sum of its declared points."""
    return float(sum(ex.points for ex in lab.exercises.values()))


def wrong_run_names(sols: Mapping[str, "Solution"], prefix: str = "") -> list[str]:
    """The wrong-answer runs of ``ascend-sim solve``, in order: ``<prefix>exN-wrong-K`` per wrong answer of the
    solutions (``cpp-`` for the C++ file's)."""
    return [f"{prefix}{ex}-wrong-{k}" for ex, s in sols.items() for k in range(1, len(s.wrong) + 1)]


def wrong_key(label: str) -> str | None:
    """The diagnosis key a wrong answer's label declares (``... [key: tail]``), or None."""
    found = KEY_RE.search(label)
    return found["key"] if found else None


def key_levels(lab: Lab, ex_id: str, key: str) -> tuple[str, ...] | None:
    """The hint levels of ``key`` for ``ex_id``: its own table's entry, else the shared one (None: neither)."""
    return lab.get(ex_id).hints.table.get(key) or DEFAULT_HINTS.get(key)


def hint_problem(lab: Lab, ex_id: str, label: str, hints: list[str]) -> str:
    """Why a failed wrong answer's shown hints are not its declared key's nudge ('' when they are)."""
    key = wrong_key(label)
    if key is None:
        return (f"wrong answer '{label}' declares no diagnosis key: end its label with [key: <the key whose hint "
                "it must show>] (CONTRIBUTING.md, 'Hints keyed to diagnoses')")
    levels = key_levels(lab, ex_id, key)
    if levels is None:
        return (f"wrong answer '{label}' declares key {key!r}, which neither {ex_id}'s hint table nor the shared "
                "hints have: add it to the exercise's hints")
    nudges = {render(levels[0], language) for language in (PYTHON, CPP)}   # shown in the answer's language
    if not hints or hints[0] not in nudges:
        shown = hints[0] if hints else "no hint"
        return (f"wrong answer '{label}' showed {shown!r}, not the nudge of its key {key!r}: "
                f"{render(levels[0], PYTHON)!r}")
    return ""
