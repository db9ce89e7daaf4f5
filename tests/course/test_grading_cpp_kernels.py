"""Labs whose kernel exercises stay Python in the notebook (the answer cell also holds Python host code, or the lab is
Python first and a learner may replace a kernel cell by a %%ascendc one, as in lab04b): each C++
kernel of tests/course/cpp_answers/<lab>.cpp, bound beside the Python solution's other names, gets the Python
solution's verdict and message (the same simulated cycles where the check reports them), and each C++ wrong answer
the diagnosis key of its Python twin (the wrong answer of the same label in solutions/<lab>.py)."""
from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

pytest.importorskip("clang.cindex")

from ascend_sim.course.grading.hints import HintLog  # noqa: E402
from ascend_sim.course.grading.runner import _run_cxx  # noqa: E402
from ascend_sim.course.grading.solution_file import parse_solutions  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = Path(__file__).resolve().parent / "cpp_answers"
LABS = sorted(p.stem for p in ANSWERS.glob("lab*.cpp"))


def _setup(lab: str) -> str:
    nb = json.loads((ROOT / "labs" / f"{lab}.ipynb").read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"]
                     if c["metadata"].get("course", {}).get("role") == "setup")


def _run(lab: str, ex: str, python: str, cpp: str | None, monkeypatch):
    """The lab's setup cell, the Python answer cell, then (if given) the C++ cell's kernels over its Python ones."""
    mod = importlib.import_module(f"ascend_sim.course.labs.{lab}")
    monkeypatch.setattr(mod.LAB, "hint_log", HintLog())
    ns: dict = {}
    exec(compile(_setup(lab), "<setup>", "exec"), ns)  # noqa: S102 - the lab's own setup cell
    exec(compile(python, f"<{ex}-answer>", "exec"), ns)  # noqa: S102 - the instructor's own solutions
    if cpp is not None:
        before = dict(ns)
        _run_cxx(cpp, f"{ex}-answer", ns)
        assert any(ns[k] is not before.get(k) for k in ns), "the C++ cell bound no kernel"
    result = mod.LAB.run(ex, ns)
    return result, mod.LAB.hint_log.last.get(ex, (None,))[0]


def _answers() -> list[tuple[str, str]]:
    return [(lab, ex) for lab in LABS for ex in sorted(parse_solutions(ANSWERS / f"{lab}.cpp"))]


def _twins() -> list[tuple[str, str, int, int]]:
    """(lab, ex, k, kp): C++ wrong answer k has the label of Python wrong answer kp of the same exercise."""
    out = []
    for lab in LABS:
        python = parse_solutions(ROOT / "solutions" / f"{lab}.py")
        for ex, sol in sorted(parse_solutions(ANSWERS / f"{lab}.cpp").items()):
            labels = [label for label, _ in python[ex].wrong]
            out += [(lab, ex, k, labels.index(label)) for k, (label, _) in enumerate(sol.wrong) if label in labels]
    return out


def test_every_cpp_wrong_answer_has_a_python_twin():
    for lab in LABS:
        for ex, sol in parse_solutions(ANSWERS / f"{lab}.cpp").items():
            assert sol.wrong, f"{lab} {ex}: at least one C++ wrong answer"
    assert len(_twins()) == sum(len(s.wrong) for lab in LABS
                                for s in parse_solutions(ANSWERS / f"{lab}.cpp").values())


@pytest.mark.parametrize("lab, ex", _answers())
def test_the_cpp_kernel_gets_the_python_verdict_and_message(lab, ex, monkeypatch):
    python = parse_solutions(ROOT / "solutions" / f"{lab}.py")[ex].code
    cpp = parse_solutions(ANSWERS / f"{lab}.cpp")[ex].code
    py, _ = _run(lab, ex, python, None, monkeypatch)
    cx, _ = _run(lab, ex, python, cpp, monkeypatch)
    assert py.status == cx.status == "pass", (py.messages, cx.messages)
    assert cx.messages == py.messages                       # "N simulated cycles (budget B)": the same N


@pytest.mark.parametrize("lab, ex, k, kp", _twins())
def test_a_cpp_wrong_answer_gets_its_python_twins_diagnosis(lab, ex, k, kp, monkeypatch):
    python = parse_solutions(ROOT / "solutions" / f"{lab}.py")[ex]
    cpp = parse_solutions(ANSWERS / f"{lab}.cpp")[ex]
    py, py_key = _run(lab, ex, python.wrong[kp][1], None, monkeypatch)
    cx, cx_key = _run(lab, ex, python.code, cpp.wrong[k][1], monkeypatch)
    assert py.status == cx.status == "fail", (cpp.wrong[k][0], cx.messages)
    assert cx_key == py_key and len(cx.hints) == len(py.hints), (cpp.wrong[k][0], cx_key, py_key, cx.messages[:1])
