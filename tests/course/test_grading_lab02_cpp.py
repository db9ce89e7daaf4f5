"""Lab 02 answered in C++: each exercise's C++ solution gets the Python solution's verdict and message (the same
simulated cycles), and each C++ wrong answer the diagnosis of its Python twin (same label in both files)."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("clang.cindex")

from ascend_sim.course.grading.hints import HintLog  # noqa: E402
from ascend_sim.course.grading.runner import _run_cxx  # noqa: E402
from ascend_sim.course.grading.solution_file import parse_solutions  # noqa: E402
from ascend_sim.course.labs import lab02_optimization as lab02  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PYTHON = parse_solutions(ROOT / "solutions" / "lab02_optimization.py")
CPP = parse_solutions(ROOT / "solutions" / "lab02_optimization.cpp")
SETUP = ("import numpy as np\n"
         "from ascend_sim import *\n"
         "from ascend_sim.course.labs.lab02_optimization import TiledMatmulTiling, KernelTiledMatmul, choose_tiling, "
         "im2col\n")


def _run(ex: str, code: str, cpp: bool, monkeypatch):
    monkeypatch.setattr(lab02.LAB, "hint_log", HintLog())
    ns: dict = {}
    if cpp:
        _run_cxx(code, f"{ex}-answer", ns)
    else:
        exec(compile(SETUP + code, "<answer>", "exec"), ns)  # noqa: S102 - the instructor's own solutions
    result = lab02.LAB.run(ex, ns)
    return result, lab02.LAB.hint_log.last.get(ex, (None,))[0]


def test_every_exercise_has_a_cpp_answer():
    assert sorted(CPP) == sorted(PYTHON)      # ex7 too: its host fold and tiling function are C++ in the cell


def test_ex7_cpp_cell_binds_its_host_functions_and_tiling_struct():
    """The grader binds a %%ascendc cell's host functions and structs as JupyterLab does (magic.run_cell), so the
    check calls the C++ fold and tiling function like the Python answer's."""
    ns: dict = {}
    _run_cxx(CPP["ex7"].code, "ex7-answer", ns)
    assert {"fold_bn_host", "conv_tiling", "CubeTiling", "conv_bn_relu_kernel"} <= set(ns)
    t = ns["conv_tiling"](800, 16, 150, 24)
    assert (t.singleM, t.singleN, t.baseK, t.depth) == (48, 16, 160, 2)      # what choose_tiling gives Python


@pytest.mark.parametrize("ex", sorted(CPP))
def test_the_cpp_solution_gets_the_python_verdict_and_cycles(ex, monkeypatch):
    py, _ = _run(ex, PYTHON[ex].code, False, monkeypatch)
    cpp, _ = _run(ex, CPP[ex].code, True, monkeypatch)
    assert py.status == cpp.status == "pass", (py.messages, cpp.messages)
    assert cpp.messages == py.messages                      # "N simulated cycles (budget B)": the same N


def _twins():
    """(ex, k) of C++ wrong answers whose label is a Python wrong answer's of the same exercise."""
    out = []
    for ex, sol in sorted(CPP.items()):
        py_labels = [label for label, _ in PYTHON[ex].wrong]
        out += [(ex, k, py_labels.index(label)) for k, (label, _) in enumerate(sol.wrong) if label in py_labels]
    return out


@pytest.mark.parametrize("ex, k, kp", _twins())
def test_a_cpp_wrong_answer_gets_its_python_twins_diagnosis(ex, k, kp, monkeypatch):
    py, py_key = _run(ex, PYTHON[ex].wrong[kp][1], False, monkeypatch)
    cpp, cpp_key = _run(ex, CPP[ex].wrong[k][1], True, monkeypatch)
    assert py.status == cpp.status == "fail"
    # the same diagnosis and as many hint levels; the texts differ only in their code's spelling (C++ vs Python)
    assert cpp_key == py_key and len(cpp.hints) == len(py.hints), CPP[ex].wrong[k][0]


def test_ex7_graded_in_cpp_gets_the_python_gradebook_line(tmp_path):
    """The grader compiles the C++ ex7 cell itself (host fold, host tiling function, kernel) in its confined re-run:
    the C++ submission's gradebook line is the Python one's, solved or with the fold's mean term left out."""
    import csv

    import nbformat

    from ascend_sim.course.grading.execute import Limits
    from ascend_sim.course.grading.grade import grade_many
    from ascend_sim.course.grading.labfiles import find_lab
    from ascend_sim.course.grading.notebook import load_template
    from ascend_sim.course.grading.solutions import fill

    template = load_template(find_lab("lab02", ROOT).template)
    subs = {"python": PYTHON["ex7"].code, "cpp": CPP["ex7"].code,
            "python-wrong": PYTHON["ex7"].wrong[0][1], "cpp-wrong": CPP["ex7"].wrong[0][1]}
    (tmp_path / "in").mkdir()
    paths = []
    for name, code in subs.items():
        paths.append(tmp_path / "in" / f"{name}.ipynb")
        nbformat.write(fill(template, {"ex7": code}), paths[-1])
    reports, book = grade_many(template, paths, tmp_path / "out", limits=Limits(cell_timeout=120))
    rows = {Path(r["submission"]).stem: {k: v for k, v in r.items() if k not in ("student_id", "submission", "sha256")}
            for r in csv.DictReader(book.open(encoding="utf-8-sig"))}
    by_name = {Path(r.submission).stem: r for r in reports}
    assert by_name["cpp"].score == by_name["python"].score == 3          # ex7's points; the rest not attempted
    assert by_name["cpp-wrong"].score == by_name["python-wrong"].score == 0
    assert rows["cpp"] == rows["python"] and rows["cpp-wrong"] == rows["python-wrong"]
    ex7 = [next(e for e in by_name[n].exercises if e.exercise == "ex7") for n in ("cpp-wrong", "python-wrong")]
    assert ex7[0].status == ex7[1].status == "fail" and ex7[0].messages == ex7[1].messages


def _judged(code: str, cpp: bool, monkeypatch):
    """ex7 run in the learner's process with evidence on, then replayed by the grader's judge (learner code is
    never called there): the judge's verdict and tamper kind."""
    import json

    from ascend_sim.course.grading.check import EVIDENCE_ENV
    from ascend_sim.course.grading.judge import judge

    monkeypatch.setenv(EVIDENCE_ENV, "1")
    result, _ = _run("ex7", code, cpp, monkeypatch)
    monkeypatch.delenv(EVIDENCE_ENV)
    verdict, tamper = judge(lab02.LAB, "ex7", json.loads(json.dumps(result.evidence)))
    return result, verdict, tamper


@pytest.mark.parametrize("cpp", [False, True], ids=["python", "cpp"])
def test_ex7_judge_replays_the_host_fold_and_the_returned_tiling(cpp, monkeypatch):
    """The fold writes the check's buffers (replayed as mutated arguments) and the tiling function returns a
    dataclass or a C++ struct (replayed as a record the launch must describe the same way): the judge agrees with
    the learner-side check, for the solution and for every wrong answer."""
    sols = CPP if cpp else PYTHON
    for code in [sols["ex7"].code] + [c for _, c in sols["ex7"].wrong]:
        result, verdict, tamper = _judged(code, cpp, monkeypatch)
        assert tamper == "" and (verdict.status, verdict.messages) == (result.status, result.messages)


def test_ex7_judge_rejects_a_tiling_record_the_launch_did_not_get(monkeypatch):
    """The record of the returned tiling is not trusted blindly: changed in the evidence, the launch that follows no
    longer matches it and the judge rejects the evidence."""
    import json

    from ascend_sim.course.grading.check import EVIDENCE_ENV
    from ascend_sim.course.grading.judge import judge

    monkeypatch.setenv(EVIDENCE_ENV, "1")
    result, _ = _run("ex7", CPP["ex7"].code, True, monkeypatch)
    evidence = json.loads(json.dumps(result.evidence))
    tilings = [e for e in evidence["events"] if e["kind"] == "call" and e.get("learner")
               and "record" in (e.get("result") or {})]
    assert len(tilings) == 4                       # one conv_tiling call per case
    tilings[-1]["result"]["record"]["singleM"] += 16
    verdict, tamper = judge(lab02.LAB, "ex7", evidence)
    assert tamper == "rejected_evidence" and verdict.status == "fail", verdict.messages
