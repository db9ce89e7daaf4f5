"""Lab 01 ex6 answered in C++: the grader compiles the host code cell itself, links its extern kernel declarations
to the C++ kernels of ex1-ex5, and the submission's gradebook line is the Python one's, solved or with the ReLU
after conv2 left out."""
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


def test_ex6_graded_in_cpp_gets_the_python_gradebook_line(tmp_path):
    lab = find_lab("lab01", ROOT)
    template = load_template(lab.template)
    sols = load_solutions(lab)
    python = {ex: s.code for ex, s in sols["python"].items()}
    cpp = {ex: s.code for ex, s in sols["cpp"].items()}
    assert "ex6" in cpp and cpp["ex6"].lstrip().startswith("%%ascendc")
    subs = {"python": python, "cpp": cpp,
            "python-wrong": {**python, "ex6": sols["python"]["ex6"].wrong[0][1]},
            "cpp-wrong": {**cpp, "ex6": sols["cpp"]["ex6"].wrong[0][1]}}
    (tmp_path / "in").mkdir()
    paths = []
    for name, answers in subs.items():
        paths.append(tmp_path / "in" / f"{name}.ipynb")
        nbformat.write(fill(template, answers), paths[-1])
    reports, book = grade_many(template, paths, tmp_path / "out", limits=Limits(cell_timeout=240))
    rows = {Path(r["submission"]).stem: {k: v for k, v in r.items() if k not in ("student_id", "submission", "sha256")}
            for r in csv.DictReader(book.open(encoding="utf-8-sig"))}
    by_name = {Path(r.submission).stem: r for r in reports}
    ex6 = {n: next(e for e in by_name[n].exercises if e.exercise == "ex6") for n in subs}
    assert ex6["cpp"].status == ex6["python"].status == "pass", (ex6["cpp"].messages, ex6["python"].messages)
    assert ex6["cpp"].messages == ex6["python"].messages          # "accuracy 98.0% on 300 held-out digits ..."
    assert rows["cpp"] == rows["python"] and rows["cpp-wrong"] == rows["python-wrong"]
    assert ex6["cpp-wrong"].status == ex6["python-wrong"].status == "fail"
    assert ex6["cpp-wrong"].messages == ex6["python-wrong"].messages


def _judged_cpp_ex6(ex6: str, monkeypatch):
    """ex6 in C++ (with the C++ kernels of ex1-ex5) run with evidence on, then the grader's judge replays it."""
    import json

    from ascend_sim.course.grading.check import EVIDENCE_ENV
    from ascend_sim.course.grading.judge import judge
    from ascend_sim.course.grading.runner import _run_cxx
    from ascend_sim.course.labs import lab01_lenet_ops as lab01

    monkeypatch.setenv(EVIDENCE_ENV, "1")
    cpp = {ex: s.code for ex, s in load_solutions(find_lab("lab01", ROOT))["cpp"].items()}
    ns: dict = {}
    for ex in ("ex1", "ex2", "ex3", "ex4", "ex5"):
        _run_cxx(cpp[ex], f"{ex}-answer", ns)
    _run_cxx(ex6, "ex6-answer", ns)
    learner = lab01.LAB.run("ex6", ns)
    verdict, tamper = judge(lab01.LAB, "ex6", json.loads(json.dumps(learner.evidence)))
    return learner, verdict, tamper


def test_the_judge_takes_the_probabilities_the_cpp_host_code_wrote_from_its_softmax(monkeypatch):
    cpp6 = load_solutions(find_lab("lab01", ROOT))["cpp"]["ex6"].code
    learner, verdict, tamper = _judged_cpp_ex6(cpp6, monkeypatch)
    assert learner.status == verdict.status == "pass", (learner.messages, verdict.messages)
    # probabilities that are not the softmax kernel's output (two of image 0's swapped on the host: still
    # probabilities, still accurate enough) are rejected
    call = "    Softmax(h1, 10, n, probs, stream);\n"
    assert call in cpp6
    forged = cpp6.replace(call, call + "    half first = probs[0];\n    probs[0] = probs[1];\n    probs[1] = first;\n")
    learner, verdict, tamper = _judged_cpp_ex6(forged, monkeypatch)
    assert learner.status == "pass"                  # the learner's own process is fooled ...
    assert verdict.status == "fail" and tamper == ""     # ... the grader is not
    assert "are not the output of your `softmax_custom` kernel" in verdict.messages[0], verdict.messages
