"""A lab notebook's exercise cells, derived from what its checks module declares.

An exercise is declared in two files: its check in the checks module (``@LAB.exercise("exN", points=...,
title=...)``, the check function's docstring) and its answer and wrong answers in the solutions file. The
notebook's part follows from them (``ascend-sim clean`` writes it, ``ascend-sim clean --check`` reports drift):

* an exercise the checks module declares and the notebook lacks gets its cells, in declaration order:
  a markdown heading ``exN-text`` (``## Exercise N — <title> (P points)`` and the check's docstring), the
  answer cell ``exN-answer`` (where ``write_stubs`` puts the stub generated from the solutions file) and the
  locked check cell ``exN-check``, right after the cells of the exercise declared before it. A heading
  ``exN-text`` written by the author beforehand is kept: the two code cells go right after it;
* every answer and check cell carries the declared points (``course.points``), and the heading's first line
  ends with them: ``(P points)`` or ``(..., P points)``.

What cannot be derived is reported, never guessed: cells of an exercise the checks module does not declare,
and exercises in another order than declared. Released copies (``releases/``) are frozen and left alone.
"""
from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Iterator

import nbformat
from nbformat import NotebookNode

from ascend_sim.course.grading.check import Exercise, Lab
from ascend_sim.course.grading.notebook import ANSWER, CHECK, CHECK_SOURCE, course, role
from ascend_sim.course.grading.report import fmt_points

__all__ = ["declared_lab", "exercise_cell_problems", "write_exercise_cells", "heading"]

HEADING_POINTS = re.compile(r"(?P<points>[0-9]+(?:\.[0-9]+)?) points?\)\s*$")
TEXT = "text"


def declared_lab(path: str | Path, nb: NotebookNode) -> tuple[Lab | None, list[str]]:
    """The ``Lab`` registered by the notebook's checks module (None for a release, or with why it did not load)."""
    from ascend_sim.course.grading.judge import load_lab
    path = Path(path).resolve()
    checks = course(nb).get("checks")
    if not checks or path.parent.name == "releases":
        return None, []
    try:
        return load_lab(str(checks), path.parent), []
    except Exception as e:  # noqa: BLE001 - any failure of the author's module is reported, not raised
        return None, [f"exercise cells not derived: checks module {checks} does not load: {type(e).__name__}: {e}"]


def heading(ex: Exercise) -> str:
    """The markdown of a new exercise: ``## Exercise N — title (P points)`` and the check's docstring."""
    doc = inspect.cleandoc(ex.fn.__doc__ or "")
    title, body = ex.title, doc
    if not title and doc:
        title, _, body = doc.partition("\n")
    number = ex.id[2:]
    name = f" — {title.strip().rstrip('.')}" if title.strip() else ""
    return f"## Exercise {number}{name} ({_points(ex.points)})" + (f"\n\n{body.strip()}" if body.strip() else "")


def exercise_cell_problems(nb: NotebookNode, lab: Lab) -> list[str]:
    """Where the notebook's exercise cells differ from the checks module's declarations (empty when derived)."""
    problems = [f"{ex.id} is declared in the checks module but the notebook has no cells for it "
                "(`ascend-sim clean` adds them)" for ex in lab.exercises.values() if _answer(nb, ex.id) is None]
    for cell, ex, found in _point_drift(nb, lab):
        if found is None:
            problems.append(f"cell {cell.get('id')}: {course(cell).get('points')} points in the notebook, "
                            f"{fmt_points(ex.points)} declared by {lab.name}'s checks module "
                            "(`ascend-sim clean` writes the declared points)")
        else:
            problems.append(f"cell {cell.get('id')}: its heading says {found['points']} points, the checks module "
                            f"{fmt_points(ex.points)} (`ascend-sim clean` rewrites the heading)")
    return problems + _unresolvable(nb, lab)


def write_exercise_cells(nb: NotebookNode, lab: Lab) -> list[str]:
    """Add the missing exercises' cells and write the declared points (in place); returns what changed.

    A new answer cell is empty: ``write_stubs`` then puts the stub generated from the solutions file in it.
    """
    changed = []
    for ex in lab.exercises.values():
        if _answer(nb, ex.id) is None:
            at = _insertion_index(nb, lab, ex.id)
            cells = _new_cells(nb, lab.name, ex)
            nb.cells[at:at] = cells
            changed.append(f"{ex.id}: added cells {', '.join(c.id for c in cells)} (declared in the checks module)")
    for cell, ex, found in list(_point_drift(nb, lab)):
        if found is None:
            changed.append(f"cell {cell.get('id')}: points {course(cell).get('points')} -> {fmt_points(ex.points)}")
            cell.metadata.course["points"] = _json_points(ex.points)
        else:
            first, nl, rest = cell.source.partition("\n")
            cell.source = first[:found.start()] + _points(ex.points) + ")" + nl + rest
            changed.append(f"cell {cell.get('id')}: heading points {found['points']} -> {fmt_points(ex.points)}")
    return changed


def _point_drift(nb: NotebookNode, lab: Lab) -> Iterator[tuple[NotebookNode, Exercise, re.Match | None]]:
    """Answer and check cells whose points differ from the declared ones (match None), then such headings."""
    for cell in nb.cells:
        ex = lab.exercises.get(course(cell).get("ex", ""))
        if ex is not None and role(cell) in (ANSWER, CHECK) and not _same(course(cell).get("points"), ex.points):
            yield cell, ex, None
    for ex in lab.exercises.values():
        text = _cell(nb, f"{ex.id}-{TEXT}")
        found = HEADING_POINTS.search(text.source.partition("\n")[0]) if text is not None else None
        if found and not _same(float(found["points"]), ex.points):
            yield text, ex, found


# ----------------------------------------------------------------------------- helpers
def _same(points, declared: float) -> bool:
    return isinstance(points, (int, float)) and not isinstance(points, bool) and float(points) == float(declared)


def _points(points: float) -> str:
    return f"{fmt_points(points)} point{'' if float(points) == 1 else 's'}"


def _json_points(points: float) -> int | float:
    return int(points) if float(points).is_integer() else float(points)


def _cell(nb: NotebookNode, cell_id: str) -> NotebookNode | None:
    return next((c for c in nb.cells if c.get("id") == cell_id), None)


def _answer(nb: NotebookNode, ex_id: str) -> NotebookNode | None:
    return next((c for c in nb.cells if role(c) == ANSWER and course(c).get("ex") == ex_id), None)


def _index(nb: NotebookNode, cell: NotebookNode) -> int:
    return next(i for i, c in enumerate(nb.cells) if c is cell)


def _insertion_index(nb: NotebookNode, lab: Lab, ex_id: str) -> int:
    """After the author's heading, else after the previous declared exercise's cells, else before the next one's
    heading (``exN-text``, or the markdown cells right above its answer cell), else at the end."""
    text = _cell(nb, f"{ex_id}-{TEXT}")
    if text is not None:
        return _index(nb, text) + 1
    order = list(lab.exercises)
    k = order.index(ex_id)
    for prev in reversed(order[:k]):
        last = [i for i, c in enumerate(nb.cells) if course(c).get("ex") == prev and role(c) in (ANSWER, CHECK)]
        if last:
            return max(last) + 1
    for nxt in order[k + 1:]:
        text, answer = _cell(nb, f"{nxt}-{TEXT}"), _answer(nb, nxt)
        if text is not None:
            return _index(nb, text)
        if answer is not None:              # before the markdown right above it (its unnamed heading)
            at = _index(nb, answer)
            while at > 0 and nb.cells[at - 1].cell_type == "markdown":
                at -= 1
            return at
    return len(nb.cells)


def _new_cells(nb: NotebookNode, lab: str, ex: Exercise) -> list[NotebookNode]:
    meta = {"lab": lab, "ex": ex.id, "points": _json_points(ex.points)}
    cells = []
    if _cell(nb, f"{ex.id}-{TEXT}") is None:
        cells.append(nbformat.v4.new_markdown_cell(heading(ex), id=f"{ex.id}-{TEXT}"))
    cells.append(nbformat.v4.new_code_cell("", id=f"{ex.id}-answer", metadata={
        "course": {**meta, "role": ANSWER}, "tags": ["exercise"]}))
    cells.append(nbformat.v4.new_code_cell(CHECK_SOURCE.format(ex=ex.id), id=f"{ex.id}-check", metadata={
        "course": {**meta, "role": CHECK}, "tags": ["check"], "editable": False, "deletable": False}))
    return cells


def _unresolvable(nb: NotebookNode, lab: Lab) -> list[str]:
    """Cells of undeclared exercises, and exercises out of declaration order: the author decides."""
    problems = []
    seen = [course(c)["ex"] for c in nb.cells if role(c) == ANSWER and course(c).get("ex")]
    for ex in sorted(set(seen) - set(lab.exercises)):
        problems.append(f"{ex} has cells in the notebook but no check declared in {lab.name}'s checks module: "
                        f"declare it with @LAB.exercise({ex!r}, points=...) or delete its cells")
    declared = [ex for ex in lab.exercises if ex in seen]
    present = [ex for ex in seen if ex in lab.exercises]
    if declared != present:
        problems.append(f"the notebook's exercises are in the order {', '.join(present)}; the checks module "
                        f"declares {', '.join(declared)}: move the cells or the declarations to agree")
    return problems
