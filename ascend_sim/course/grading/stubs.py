"""Answer-cell stubs of a lab notebook, kept equal to the ones generated from its solutions file.

``ascend-sim clean`` rewrites them (``write_stubs``); ``ascend-sim clean --check``, ``lint_lab`` and
``ascend-sim solve`` report a drifted one with a short diff (``stub_problems``).
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Mapping

from nbformat import NotebookNode

from ascend_sim.course.grading.notebook import ANSWER, course, role
from ascend_sim.course.grading.solution_file import Solution

__all__ = ["DIFF_LINES", "stub_problems", "write_stubs"]

DIFF_LINES = 12          # diff lines shown per drifted cell


def _generated(sols: Mapping[str, Solution]) -> dict[str, str]:
    return {ex: s.stub.rstrip("\n") for ex, s in sols.items() if s.stub is not None}


def _answer_cells(nb: NotebookNode):
    return [(course(c).get("ex"), c) for c in nb.cells if role(c) == ANSWER]


def stub_problems(nb: NotebookNode, sols: Mapping[str, Solution], solutions: str | Path) -> list[str]:
    """One message (with a short diff) per answer cell whose source is not the generated stub."""
    problems = []
    stubs = _generated(sols)
    for ex, cell in _answer_cells(nb):
        want = stubs.get(ex)
        if want is None or cell.source == want:
            continue
        diff = list(difflib.unified_diff(cell.source.splitlines(), want.splitlines(), "notebook",
                                         f"generated from {Path(solutions).name}", n=1, lineterm=""))
        more = f"\n    ... ({len(diff) - DIFF_LINES} more diff lines)" if len(diff) > DIFF_LINES else ""
        problems.append(f"cell {cell.get('id', ex)}: the stub differs from the one generated from {solutions} "
                        "(`ascend-sim clean` rewrites it):\n    " + "\n    ".join(diff[:DIFF_LINES]) + more)
    return problems


def write_stubs(nb: NotebookNode, sols: Mapping[str, Solution]) -> list[str]:
    """Set every answer cell that has a generated stub to it (in place); returns the ids of changed cells."""
    stubs = _generated(sols)
    changed = []
    for ex, cell in _answer_cells(nb):
        if ex in stubs and cell.source != stubs[ex]:
            cell.source = stubs[ex]
            changed.append(cell.get("id", ex))
    return changed
