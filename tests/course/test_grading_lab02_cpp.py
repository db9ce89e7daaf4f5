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
