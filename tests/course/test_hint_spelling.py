"""Hints speak the learner's language: a C++ answer's hints spell their code in C++, a Python answer's in Python
(unchanged), in JupyterLab (check, hint) and in the grader's replay of the evidence (ascend_sim/engine/spelling.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascend_sim.course.grading.check import Context, Lab
from ascend_sim.course.grading.evidence import EVIDENCE_SCHEMA
from ascend_sim.course.grading.hints import DEFAULT_HINTS, HintLog
from ascend_sim.course.grading.judge import judge
from ascend_sim.course.grading.runner import _run_cxx
from ascend_sim.course.grading.solutions import parse_solutions
from ascend_sim.course.labs import lab00_warmup as lab00
from ascend_sim.course.labs import lab01_lenet_ops as lab01
from ascend_sim.course.labs import lab02_optimization as lab02
from ascend_sim.engine.spelling import CPP, PYTHON_ONLY, render

ROOT = Path(__file__).resolve().parents[2]
SETUP = "\n".join("".join(c["source"]) for c in json.loads((ROOT / "labs" / "lab00_warmup.ipynb").read_text())["cells"]
                  if c["metadata"].get("course", {}).get("role") == "setup")


def _wrong(suffix: str, ex: str, k: int) -> dict:
    """The namespace of lab00's setup cell and wrong answer k of ex in solutions/lab00_warmup<suffix>."""
    label, code = parse_solutions(ROOT / "solutions" / f"lab00_warmup{suffix}")[ex].wrong[k]
    ns: dict = {}
    exec(compile(SETUP, "<setup>", "exec"), ns)  # noqa: S102 - the lab's own setup cell
    if suffix == ".cpp":
        _run_cxx(code, f"{ex}-answer", ns)
    else:
        exec(compile(code, f"<{ex}-answer>", "exec"), ns)  # noqa: S102 - the lab's own wrong answer
    return ns


def _hints_after_failing(ex: str, ns: dict, capsys, asks: int = 2) -> str:
    result = lab00.LAB.run(ex, ns)
    assert result.status == "fail", result.messages
    capsys.readouterr()
    for _ in range(asks):
        lab00.LAB.hint(ex, ns)
    return capsys.readouterr().out


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(lab00.LAB, "hint_log", HintLog())


@pytest.mark.parametrize("ex, k, cpp, python", [
    ("ex1", 1, "for (uint32_t i = 0; i < blockLength / tileLength; ++i)", "range(blockLength // tileLength)"),
    ("ex2", 0, "for (uint32_t offset = 0; offset < length; offset += tileLength)", "range(0, length, tileLength)"),
    ("ex2", 1, "DataCopyPadExtParams<half>{false, 0, 0, 0}", "DataCopyPadExtParams(False, 0, 0, 0)"),
])
def test_a_cpp_wrong_answer_gets_its_hints_in_cpp_and_a_python_one_in_python(ex, k, cpp, python, capsys):
    shown = _hints_after_failing(ex, _wrong(".cpp", ex, k), capsys)
    assert cpp in shown and python not in shown and "«" not in shown, shown
    lab00.LAB.hint_log = HintLog()
    shown = _hints_after_failing(ex, _wrong(".py", ex, k), capsys)
    assert python in shown and cpp not in shown and "«" not in shown, shown


def test_the_grader_replay_spells_the_hint_in_the_answer_language(monkeypatch):
    monkeypatch.setenv("ASCEND_SIM_EVIDENCE", "1")
    result = lab00.LAB.run("ex1", _wrong(".cpp", "ex1", 0))
    answers = [e for e in result.evidence["events"] if e["kind"] == "answer"]
    assert answers == [{"kind": "answer", "name": "add_custom", "state": "ok", "language": "cpp"}]
    python = lab00.LAB.run("ex1", _wrong(".py", "ex1", 0))
    assert "language" not in python.evidence["events"][0], "a Python answer's evidence is unchanged"

    lab = Lab("spelling_unit")          # a nudge with code in it, chosen by a check's own diagnosis

    @lab.exercise("ex1", points=1, hints={"values": ("Compute starts with «que.DeQue(half)».",)})
    def _ex1(ctx: Context) -> None:
        ctx.answer("add_custom")
        ctx.fail("wrong values", ("values",))

    for run, hint in [(result, "Compute starts with que.DeQue<half>()."),
                      (python, "Compute starts with que.DeQue(half).")]:
        events = [e for e in run.evidence["events"] if e["kind"] == "answer"]
        graded, tamper = judge(lab, "ex1", {"schema": EVIDENCE_SCHEMA, "events": events})
        assert tamper == "" and graded.status == "fail" and graded.hints == [hint]


def test_hint_before_any_check_speaks_the_notebook_language(capsys):
    lab = Lab("spelling_start")
    lab.exercise("ex1", points=1, hints=("Start with «que.AllocTensor(half)».",))(lambda ctx: None)
    lab.hint("ex1", _wrong(".cpp", "ex1", 0))
    assert "To start: Start with que.AllocTensor<half>()." in capsys.readouterr().out
    lab.hint("ex1", _wrong(".py", "ex1", 0))
    assert "To start: Start with que.AllocTensor(half)." in capsys.readouterr().out


#: the labs whose exercises take a C++ answer: each exercise of solutions/<lab>.cpp is checked
CPP_LABS = {"lab00_warmup": lab00, "lab01_lenet_ops": lab01, "lab02_optimization": lab02}


def _tables():
    yield "DEFAULT_HINTS", DEFAULT_HINTS
    for name, mod in CPP_LABS.items():
        for ex in parse_solutions(ROOT / "solutions" / f"{name}.cpp"):
            yield f"{name} {ex}", mod.LAB.get(ex).hints.table


@pytest.mark.parametrize("where, table", list(_tables()), ids=lambda v: v if isinstance(v, str) else "")
def test_no_hint_shows_python_spelling_to_a_cpp_learner(where, table):
    for key, levels in table.items():
        for level in levels:
            text = render(level, CPP)
            assert not PYTHON_ONLY.search(text), f"{where}[{key!r}]: mark the code span «...»: {text}"


def test_every_lab_with_cpp_answers_is_checked():
    assert sorted(CPP_LABS) == sorted(p.stem for p in (ROOT / "solutions").glob("lab*.cpp"))
