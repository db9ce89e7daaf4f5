"""The notebook's exercise cells and points, derived from the checks module (exercise_cells.py), without a kernel."""
from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import nbformat
import pytest

from ascend_sim.course.grading.check import Context, Lab
from ascend_sim.course.grading.exercise_cells import (declared_lab, exercise_cell_problems, heading,
                                                      write_exercise_cells)
from ascend_sim.course.grading.expectations import hint_problem, wrong_key
from ascend_sim.course.grading.notebook import lab_problems
from ascend_sim.course.labs import lab00_warmup as lab00

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_LAB = ROOT / "tests" / "course" / "fixtures" / "fixture_lab.ipynb"


def _ids(nb) -> list[str]:
    return [c.get("id") for c in nb.cells]


def _cell(nb, cell_id: str):
    return next(c for c in nb.cells if c.get("id") == cell_id)


def _fixture_lab(points: dict[str, float] | None = None) -> Lab:
    """The fixture's declarations (ex1 2, ex2 2, ex3 1 points), with some points changed."""
    lab = Lab("fixture_lab")
    for ex, p in {"ex1": 2, "ex2": 2, "ex3": 1, **(points or {})}.items():
        def fn(ctx: Context) -> None:
            """Count the positive values.

            Return how many elements of `x` are greater than zero."""
        lab.exercise(ex, points=p)(fn)
    return lab


@pytest.fixture
def fixture_nb():
    return nbformat.read(FIXTURE_LAB, as_version=4)


def test_a_derived_notebook_has_no_problems(fixture_nb):
    assert exercise_cell_problems(fixture_nb, _fixture_lab()) == []
    assert write_exercise_cells(fixture_nb, _fixture_lab()) == []


def test_points_come_from_the_checks_module(fixture_nb):
    lab = _fixture_lab({"ex2": 3})
    problems = exercise_cell_problems(fixture_nb, lab)
    assert problems == [f"cell ex2-{r}: 2 points in the notebook, 3 declared by fixture_lab's checks module "
                        "(`ascend-sim clean` writes the declared points)" for r in ("answer", "check")]
    assert write_exercise_cells(fixture_nb, lab) == ["cell ex2-answer: points 2 -> 3", "cell ex2-check: points 2 -> 3"]
    assert [_cell(fixture_nb, f"ex2-{r}").metadata.course.points for r in ("answer", "check")] == [3, 3]
    assert exercise_cell_problems(fixture_nb, lab) == [] and lab_problems(fixture_nb) == []


def test_the_heading_points_follow_the_declaration():
    nb = nbformat.read(ROOT / "labs" / "lab00_warmup.ipynb", as_version=4)
    lab = Lab("lab00_warmup")
    for ex in lab00.LAB.exercises.values():
        lab.exercises[ex.id] = dataclasses.replace(ex, points=1.5 if ex.id == "ex3" else ex.points)
    assert "cell ex3-text: its heading says 3 points, the checks module 1.5 (`ascend-sim clean` rewrites the heading)" \
        in exercise_cell_problems(nb, lab)
    body = _cell(nb, "ex3-text").source.partition("\n")[2]
    assert "cell ex3-text: heading points 3 -> 1.5" in write_exercise_cells(nb, lab)
    assert _cell(nb, "ex3-text").source == "## Exercise 3 — Add under a cycle budget (1.5 points)\n" + body
    assert exercise_cell_problems(nb, lab) == []


def test_a_missing_exercise_gets_its_cells_after_the_one_declared_before_it(fixture_nb):
    fixture_nb.cells = [c for c in fixture_nb.cells if c.get("id") not in ("ex2-answer", "ex2-check")]
    lab = _fixture_lab()
    assert exercise_cell_problems(fixture_nb, lab) == [
        "ex2 is declared in the checks module but the notebook has no cells for it (`ascend-sim clean` adds them)"]
    assert write_exercise_cells(fixture_nb, lab) == ["ex2: added cells ex2-text, ex2-answer, ex2-check (declared in "
                                                     "the checks module)"]
    ids = _ids(fixture_nb)
    assert ids[ids.index("ex1-check") + 1:][:3] == ["ex2-text", "ex2-answer", "ex2-check"]
    assert _cell(fixture_nb, "ex2-text").source == ("## Exercise 2 — Count the positive values (2 points)\n\n"
                                                    "Return how many elements of `x` are greater than zero.")
    assert exercise_cell_problems(fixture_nb, lab) == [] and lab_problems(fixture_nb) == []


def test_the_first_declared_exercise_goes_before_the_next_ones_heading(fixture_nb):
    fixture_nb.cells = [c for c in fixture_nb.cells if c.get("id") not in ("md-2", "ex1-answer", "ex1-check")]
    write_exercise_cells(fixture_nb, _fixture_lab())
    ids = _ids(fixture_nb)
    assert ids[ids.index("setup") + 1:][:5] == ["ex1-text", "ex1-answer", "ex1-check", "md-3", "ex2-answer"], ids


def test_an_authors_heading_is_kept_and_the_cells_follow_it(fixture_nb):
    fixture_nb.cells.append(nbformat.v4.new_markdown_cell("## Exercise 4: my own words", id="ex4-text"))
    fixture_nb.cells.append(nbformat.v4.new_markdown_cell("## The end", id="end"))
    lab = _fixture_lab({"ex4": 1})
    write_exercise_cells(fixture_nb, lab)
    assert _ids(fixture_nb)[-4:] == ["ex4-text", "ex4-answer", "ex4-check", "end"]
    assert _cell(fixture_nb, "ex4-text").source == "## Exercise 4: my own words"


def test_what_cannot_be_derived_is_reported_and_left_alone(fixture_nb):
    lab = Lab("fixture_lab")
    for ex, p in (("ex2", 2), ("ex1", 2)):                    # ex3 undeclared, ex1 and ex2 swapped
        lab.exercise(ex, points=p)(lambda ctx: None)
    before = copy.deepcopy(fixture_nb)
    assert write_exercise_cells(fixture_nb, lab) == [] and fixture_nb == before
    assert exercise_cell_problems(fixture_nb, lab) == [
        "ex3 has cells in the notebook but no check declared in fixture_lab's checks module: declare it with "
        "@LAB.exercise('ex3', points=...) or delete its cells",
        "the notebook's exercises are in the order ex1, ex2; the checks module declares ex2, ex1: move the cells or "
        "the declarations to agree"]


def test_a_release_is_frozen_and_a_broken_checks_module_is_reported(tmp_path, fixture_nb):
    assert declared_lab(tmp_path / "releases" / "fixture_lab@1.ipynb", fixture_nb) == (None, [])
    fixture_nb.metadata.course.checks = "no_such_checks_module"
    lab, problems = declared_lab(tmp_path / "fixture_lab.ipynb", fixture_nb)
    assert lab is None and problems[0].startswith("exercise cells not derived: checks module no_such_checks_module "
                                                  "does not load: ModuleNotFoundError")


def test_heading_uses_the_title_then_the_docstring():
    ex = lab00.LAB.get("ex2")
    assert heading(ex).startswith("## Exercise 2 — ReLU with a tail (2 points)")
    assert heading(dataclasses.replace(ex, title="", fn=lambda ctx: None)) == "## Exercise 2 (2 points)"


def test_a_wrong_answer_declares_its_key_and_solve_checks_the_hint():
    assert wrong_key("forgets the tail [key: tail]") == "tail" and wrong_key("forgets the tail") is None
    assert wrong_key("budget [key: budget/small-copies]") == "budget/small-copies"
    lab = lab00.LAB
    tail = lab.get("ex2").hints.table["tail"]
    assert hint_problem(lab, "ex2", "no tail [key: tail]", [tail[0]]) == ""
    assert "not the nudge of its key 'tail'" in hint_problem(lab, "ex2", "no tail [key: tail]", ["something else"])
    assert "which neither ex2's hint table nor the shared hints have" in hint_problem(lab, "ex2", "x [key: nope]", [])
    assert "declares no diagnosis key" in hint_problem(lab, "ex2", "no tail", [tail[0]])
