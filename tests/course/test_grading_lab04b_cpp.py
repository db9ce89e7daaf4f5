"""Lab 04b's kernel exercises answered in C++ through the whole grader: a submission whose ex1, ex4 and ex5 answer
cells are `%%ascendc` cells alone (no Python kernel beside them; the grader compiles them in its confined re-run) gets
the gradebook line of the same submission in Python, the cycle figures of ex4 and ex5 included, and a C++ wrong answer
fails there as its Python twin does. ex2 and ex3 (numpy answers, another exercise's business) stay unattempted."""
from __future__ import annotations

import csv
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("clang.cindex")

from ascend_sim.course.grading.execute import Limits  # noqa: E402
from ascend_sim.course.grading.grade import grade_many  # noqa: E402
from ascend_sim.course.grading.labfiles import find_lab  # noqa: E402
from ascend_sim.course.grading.notebook import load_template  # noqa: E402
from ascend_sim.course.grading.solution_file import parse_solutions  # noqa: E402
from ascend_sim.course.grading.solutions import fill, load_solutions  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LAB = find_lab("lab04b_llm", ROOT)
KERNEL_EXERCISES = ("ex1", "ex4", "ex5")


def _rows(book: Path) -> dict[str, dict]:
    """Each submission's gradebook line without what names the file (id, name, hash)."""
    return {Path(r["submission"]).stem: {k: v for k, v in r.items() if k not in ("student_id", "submission", "sha256")}
            for r in csv.DictReader(book.open(encoding="utf-8-sig"))}


def test_cpp_kernel_answers_get_the_python_gradebook_line(tmp_path):
    template = load_template(LAB.template)
    python = load_solutions(LAB)["python"]
    cpp = parse_solutions(ROOT / "tests" / "course" / "cpp_answers" / "lab04b_llm.cpp")
    assert sorted(cpp) == list(KERNEL_EXERCISES)
    label, one_buffer = next((lb, code) for lb, code in cpp["ex4"].wrong if "[key: budget]" in lb)
    subs = {"python": {ex: python[ex].code for ex in KERNEL_EXERCISES},
            "cpp": {ex: cpp[ex].code for ex in KERNEL_EXERCISES}}
    subs["cpp-one-buffer"] = {**subs["cpp"], "ex4": one_buffer}
    paths = []
    for name, answers in subs.items():
        assert all(answers[ex].startswith("%%ascendc") for ex in KERNEL_EXERCISES) == name.startswith("cpp")
        paths.append(tmp_path / "in" / f"{name}.ipynb")
        paths[-1].parent.mkdir(exist_ok=True)
        nbformat.write(fill(template, answers), paths[-1])
    reports, book = grade_many(template, paths, tmp_path / "out", limits=Limits(cell_timeout=120))
    by_name = {Path(r.submission).stem: r for r in reports}
    status = {name: {e.exercise: e.status for e in r.exercises} for name, r in by_name.items()}
    assert [status["cpp"][ex] for ex in KERNEL_EXERCISES] == ["pass"] * 3, by_name["cpp"].exercises
    assert by_name["cpp"].score == by_name["python"].score
    rows = _rows(book)
    assert rows["cpp"] == rows["python"]
    messages = {name: {e.exercise: e.messages for e in r.exercises} for name, r in by_name.items()}
    for ex in ("ex4", "ex5"):                          # "N simulated cycles (budget B)": the same N in C++
        assert messages["cpp"][ex] == messages["python"][ex]
        assert any("simulated cycles" in m for m in messages["cpp"][ex]), messages["cpp"][ex]
    assert status["cpp-one-buffer"]["ex4"] == "fail", (label, messages["cpp-one-buffer"]["ex4"])
    assert any("budget" in m for m in messages["cpp-one-buffer"]["ex4"])
