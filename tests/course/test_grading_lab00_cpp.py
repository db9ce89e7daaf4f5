"""Lab 00 answered in C++: the grader compiles each %%ascendc answer itself (in its confined re-run) and the
class's gradebook line is the Python answer's; a C++ answer that does not compile is an *error* that quotes the
compiler-style file:line:col message."""
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
from ascend_sim.course.grading.solutions import fill, load_solutions  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LAB = find_lab("lab00", ROOT)


def _row(book: Path, submission: str) -> dict:
    """The gradebook line of a submission without what names the file (id, name, hash)."""
    rows = {Path(r["submission"]).stem: r for r in csv.DictReader(book.open(encoding="utf-8-sig"))}
    return {k: v for k, v in rows[submission].items() if k not in ("student_id", "submission", "sha256")}


def test_a_cpp_submission_gets_the_python_gradebook_line_and_a_compile_error_is_error(tmp_path):
    template = load_template(LAB.template)
    sols = load_solutions(LAB)
    cpp = {ex: s.code for ex, s in sols["cpp"].items()}
    broken = cpp["ex1"].replace("Add(zLocal, xLocal, yLocal, tileLength);", "Add(zLocal, xLocal, yLocal, tileLen);")
    line = broken.splitlines().index("        Add(zLocal, xLocal, yLocal, tileLen);") + 1    # the cell's line
    subs = {"python": {ex: s.code for ex, s in sols["python"].items()}, "cpp": cpp,
            "broken": {**cpp, "ex1": broken}}
    paths = []
    for name, answers in subs.items():
        paths.append(tmp_path / "in" / f"{name}.ipynb")
        paths[-1].parent.mkdir(exist_ok=True)
        nbformat.write(fill(template, answers), paths[-1])
    reports, book = grade_many(template, paths, tmp_path / "out", limits=Limits(cell_timeout=60))
    by_name = {Path(r.submission).stem: r for r in reports}
    assert by_name["cpp"].score == by_name["python"].score == 7
    assert _row(book, "cpp") == _row(book, "python")
    ex1 = next(e for e in by_name["broken"].exercises if e.exercise == "ex1")
    assert ex1.status == "error", ex1
    assert f"<ascendc:ex1-answer>:{line}:" in " ".join(ex1.messages), ex1.messages
    assert "use of undeclared identifier 'tileLen'" in " ".join(ex1.messages), ex1.messages
    assert [e.status for e in by_name["broken"].exercises][1:] == ["pass", "pass"]
