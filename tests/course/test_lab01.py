"""Lab 01 (LeNet-5 operators) on the simulator: the solution run, each wrong answer's feedback, the host helpers.

The host helpers may convert layouts and pack weights (TransData), never do the operator's work: the tests below
pin that the kernels receive the activations themselves (no gathered windows, no im2col) and the weights as GM
tensors.
"""
from __future__ import annotations

from pathlib import Path

import json

import numpy as np
import pytest

import ascend_sim

from ascend_sim.hw.chips import get_chip
from ascend_sim.course.grading.execute import Limits
from ascend_sim.course.grading.expectations import full_marks, wrong_run_names
from ascend_sim.course.grading.hints import HintLog
from ascend_sim.course.grading.labfiles import find_lab
from ascend_sim.course.grading.runner import _run_cxx
from ascend_sim.course.grading.solutions import parse_solutions, solve_lab
from ascend_sim.course.labs import lab01_lenet_ops as lab01
from ascend_sim.kernels._common import from_chunks, to_chunks
from ascend_sim.models.lenet_reference import linear_ref

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = parse_solutions(ROOT / "solutions" / "lab01_lenet_ops.py")
SETUP = ("import numpy as np\n"
         "from ascend_sim import *\n"
         "from ascend_sim.models.datasets import load_mnist_subset, normalize\n"
         "from ascend_sim.models.lenet_reference import load_lenet_weights\n"
         "from ascend_sim.course.labs.lab01_lenet_ops import *\n")


def _namespace(*codes: str) -> dict:
    ns: dict = {}
    for code in (SETUP, *codes):
        exec(compile(code, "<answer>", "exec"), ns)  # noqa: S102 - the instructor's own solutions
    return ns


def _solved(upto: str) -> list[str]:
    """The solution code of every exercise before ``upto`` (later exercises reuse earlier kernels)."""
    return [s.code for ex, s in sorted(SOLUTIONS.items()) if ex < upto]


def test_solution_run_full_marks_blank_zero_wrong_answers_fail(tmp_path):
    outcome = solve_lab(find_lab("lab01_lenet_ops", ROOT), limits=Limits(cell_timeout=60), out_dir=tmp_path)
    assert outcome.ok, outcome.all_problems()
    solved, solved_cpp, blank, blank_python, *wrong = outcome.runs     # the notebook offers C++ first (ex1-ex6)
    assert (solved.name, solved_cpp.name, blank.name, blank_python.name) == ("solved", "solved-cpp", "blank",
                                                                             "blank-python")
    for run in (solved, solved_cpp):
        assert run.report.score == run.report.max_score == full_marks(lab01.LAB)
    for run in (blank, blank_python):
        assert {e.status for e in run.report.exercises} == {"not_attempted"} and not run.report.grader_error
    failed = {r.name: {e.exercise for e in r.report.exercises if e.status == "fail"} for r in wrong}
    cpp_solutions = parse_solutions(ROOT / "solutions" / "lab01_lenet_ops.cpp")
    assert list(failed) == wrong_run_names(SOLUTIONS) + wrong_run_names(cpp_solutions, "cpp-")
    for name, exercises in failed.items():     # one wrong answer per run; ex6 may fail too: it runs ex1..ex5
        ex = name.removeprefix("cpp-").split("-")[0]
        assert ex in exercises and exercises <= {ex, "ex6"}, (name, exercises)

EXPECTED_FEEDBACK = {
    ("ex1", 0): "GMWriteConflictError",
    ("ex2", 0): "every maximum is the bottom-right corner), 2 blocks: 20 of 24 output elements differ",
    ("ex3", 0): "case all-ones 28x28 image, 5x5 all-ones filter, pad 2, bias 0.5: 784 of 784",
    ("ex3", 1): "RaceError",
    ("ex4", 0): "got 16.5 expected 400.5",
    ("ex4", 1): "got 50.5 expected 400.5",      # B without the fractal transpose: wrong products, as on the device
    ("ex5", 0): "logits up to",
    ("ex6", 0): "accuracy",
    ("ex6", 1): "accuracy",
}


@pytest.mark.parametrize("ex, k", sorted(EXPECTED_FEEDBACK))
def test_each_wrong_answer_fails_with_a_diagnosis(ex, k, monkeypatch):
    monkeypatch.setattr(lab01.LAB, "hint_log", HintLog())      # a fresh session: no earlier failures
    label, code = SOLUTIONS[ex].wrong[k]
    result = lab01.LAB.run(ex, _namespace(*_solved(ex), code))
    assert result.status == "fail", label
    assert EXPECTED_FEEDBACK[ex, k] in result.messages[0]
    key, levels = lab01.LAB.hint_log.last[ex]
    assert key != "*" and key in lab01.LAB.get(ex).hints.table, f"{label}: no hint of its own for {key!r}"
    assert result.hints == [levels[0]], "the first failure with a diagnosis reveals its nudge only"


CPP_SOLUTIONS = parse_solutions(ROOT / "solutions" / "lab01_lenet_ops.cpp")


def _cpp_namespace(answers: dict[str, str]) -> dict:
    """The setup, the Python ex6, then each C++ answer (a %%ascendc cell; its ex6 replaces the Python one) bound as
    the grader binds it."""
    ns = _namespace(SOLUTIONS["ex6"].code)
    for ex, cell in sorted(answers.items()):
        _run_cxx(cell, f"{ex}-answer", ns)
    return ns


@pytest.mark.parametrize("ex, k", [key for key in sorted(EXPECTED_FEEDBACK) if key[0] in CPP_SOLUTIONS])
def test_a_cpp_wrong_answer_gets_the_python_verdict_and_hint(ex, k, monkeypatch):
    # the same mistake written in C++ fails with the same diagnosis, message and first hint as in Python
    answers = {e: s.code for e, s in CPP_SOLUTIONS.items()}
    verdicts = []
    for namespace in (_namespace(*_solved(ex), SOLUTIONS[ex].wrong[k][1]),
                      _cpp_namespace({**answers, ex: CPP_SOLUTIONS[ex].wrong[k][1]})):
        monkeypatch.setattr(lab01.LAB, "hint_log", HintLog())
        result = lab01.LAB.run(ex, namespace)
        assert result.status == "fail" and EXPECTED_FEEDBACK[ex, k] in result.messages[0], result.messages[:1]
        verdicts.append((result.status, lab01.LAB.hint_log.last[ex], result.hints))
    assert verdicts[0] == verdicts[1]


def test_the_cpp_solutions_pass_ex1_to_ex6_and_the_cpp_stubs_are_not_attempted():
    ns = _cpp_namespace({ex: s.code for ex, s in CPP_SOLUTIONS.items()})
    assert {ex: lab01.LAB.run(ex, ns).status for ex in ("ex1", "ex2", "ex3", "ex4", "ex5", "ex6")} == \
        dict.fromkeys(("ex1", "ex2", "ex3", "ex4", "ex5", "ex6"), "pass")     # ex6: LeNet-5 on the C++ kernels
    blank = _cpp_namespace({ex: s.stub for ex, s in CPP_SOLUTIONS.items()})
    assert {ex: lab01.LAB.run(ex, blank).status for ex in CPP_SOLUTIONS} == dict.fromkeys(CPP_SOLUTIONS,
                                                                                         "not_attempted")


def test_ones_conv_golden_is_the_hand_derivation():
    g = lab01.ones_conv_golden(28, 5, 2, 0.0)
    assert g[0, 0] == 9 and g[0, 1] == 12 and g[0, 2] == 15 and g[1, 1] == 16 and g[1, 2] == 20
    assert (g[2:26, 2:26] == 25).all() and sorted(np.unique(g).tolist()) == [9, 12, 15, 16, 20, 25]


def _capture_launch(monkeypatch) -> list:
    """Replace ascend_sim.launch by a recorder: the host helpers' GM arguments, no kernel run."""
    calls: list = []
    monkeypatch.setattr(ascend_sim, "launch", lambda kern, blocks, *args, **kw: calls.append(args))
    return calls


def test_maxpool_kernel_gets_the_activations_not_gathered_windows(monkeypatch):
    calls = _capture_launch(monkeypatch)
    x = np.arange(20 * 3 * 7 * 6, dtype=np.float16).reshape(20, 3, 7, 6)
    lab01.run_maxpool(None, x)
    (xg, y, t), = calls
    assert t == lab01.PoolTiling(planes=2 * 3, H=7, W=6, OH=3, OW=3)
    assert xg.size == 2 * 16 * 3 * 7 * 6                       # the input once (2 chunks of 16 images), no corners
    np.testing.assert_array_equal(from_chunks(xg, 20, 16, (3, 7, 6)), x)
    assert np.isnan(y).all() and y.size == 2 * 3 * 3 * 3 * 16


def test_conv_kernel_gets_the_padded_input_and_gm_weights(monkeypatch):
    calls = _capture_launch(monkeypatch)
    rng = np.random.default_rng(0)
    x, w, b = rng.uniform(0, 1, (5, 2, 9, 8)), rng.uniform(-1, 1, (4, 2, 3, 3)), rng.uniform(-1, 1, 4)
    lab01.run_conv2d(None, x, w, b, pad=1)
    (xg, wg, bg, y, t), = calls
    assert (t.Hp, t.Wp, t.OH, t.OW, t.nb, t.chunks) == (11, 10, 9, 8, 16, 1)
    xp = np.pad(x.astype(np.float16), ((0, 0), (0, 0), (1, 1), (1, 1)))
    np.testing.assert_array_equal(xg, to_chunks(xp, np.float16, 16))           # padded, not unfolded
    assert wg.dtype == bg.dtype == np.float16 and (wg.size, bg.size) == (t.wLength, t.bLength) == (80, 16)
    np.testing.assert_array_equal(wg[:72], w.astype(np.float16).ravel())
    np.testing.assert_array_equal(bg[:4], b.astype(np.float16))


def test_conv_tiling_fits_the_lenet_layers_in_ub():
    for C, H, pad in ((1, 28, 2), (6, 14, 0)):
        t = lab01.conv_tiling(300, C, H, H, 16, 5, 5, pad)
        assert lab01.conv_ub_bytes(t.C, t.Hp, t.Wp, t.OH, t.OW, t.nb, t.O, C * 25) <= get_chip(None).ub_usable_bytes


def test_linear_packing_is_the_fc_layer():
    rng = np.random.default_rng(1)
    x, w, b = (rng.uniform(-1, 1, s).astype(np.float16) for s in ((37, 400), (120, 400), (120,)))
    t = lab01.linear_tiling(37, 400, 120)
    assert (t.M, t.K, t.N, t.baseK, t.nb) == (128, 512, 48, 128, 48) and t.K // t.baseK > 1
    wp, xp = lab01.pack_linear(x, w, b, t)
    w_full = wp.reshape(t.M, t.K)                   # ND: the kernel converts to NZ itself (Nd2Nz)
    y = (w_full.astype(np.float32) @ xp.reshape(t.K, t.N).astype(np.float32))[: t.O, :37].T
    np.testing.assert_allclose(y, linear_ref(x, w, b).astype(np.float32), rtol=2e-3, atol=2e-3)


def test_ex3_scaffold_is_generated_from_the_solution_and_not_attempted():
    # the answer cell holds the C++ scaffold, the alt-stub cell before it the Python one: each generated, each
    # "not attempted" as it stands
    nb = json.loads((ROOT / "labs" / "lab01_lenet_ops.ipynb").read_text())
    scaffold = "".join(next(c for c in nb["cells"] if c.get("id") == "ex3-answer")["source"])
    assert scaffold == CPP_SOLUTIONS["ex3"].stub.rstrip("\n"), "run `ascend-sim clean labs`"
    assert scaffold.count("ASCEND_SIM_TODO(") == 3
    alt = "".join(next(c for c in nb["cells"] if c.get("id") == "ex3-alt-stub")["source"])
    assert SOLUTIONS["ex3"].stub.rstrip("\n") in alt and SOLUTIONS["ex3"].stub.count("raise NotImplementedError") == 3
    for suffix in (".py", ".cpp"):
        text = (ROOT / "solutions" / f"lab01_lenet_ops{suffix}").read_text()
        assert text.count("class KernelConv2d") == 1, "the scaffold exists once, in the solution"
    assert lab01.LAB.run("ex3", _cpp_namespace({"ex3": scaffold})).status == "not_attempted"
    assert lab01.LAB.run("ex3", _namespace(SOLUTIONS["ex3"].stub)).status == "not_attempted"
