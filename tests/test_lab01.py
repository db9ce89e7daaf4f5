"""Lab 01 (LeNet-5 operators) on the simulator: the solution run, each wrong answer's feedback, the host helpers."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ascend_sim.grading.execute import Limits
from ascend_sim.grading.labfiles import find_lab
from ascend_sim.grading.solutions import parse_solutions, solve_lab
from ascend_sim.labs import lab01
from ascend_sim.lenet_reference import maxpool2d_ref

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = parse_solutions(ROOT / "solutions" / "lab01_lenet_ops.py")
SETUP = ("import numpy as np\n"
         "from ascend_sim import *\n"
         "from ascend_sim.datasets import load_mnist_subset, normalize\n"
         "from ascend_sim.lenet_reference import load_lenet_weights\n"
         "from ascend_sim.labs.lab01 import *\n")


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
    solved, blank, *wrong = outcome.runs
    assert (solved.report.score, solved.report.max_score) == (17, 17)
    assert {e.status for e in blank.report.exercises} == {"not_attempted"} and not blank.report.grader_error
    assert len(wrong) == 1 and all(e.status == "fail" for r in wrong for e in r.report.exercises)


EXPECTED_FEEDBACK = {
    ("ex1", 0): "GMWriteConflictError",
    ("ex2", 0): "differ beyond the tolerance",
    ("ex3", 0): "case all-ones 28x28 image",
    ("ex4", 0): "case all-ones x [2, 400]",
    ("ex5", 0): "logits up to",
    ("ex6", 0): "accuracy",
}


@pytest.mark.parametrize("ex, k", sorted(EXPECTED_FEEDBACK))
def test_each_wrong_answer_fails_with_a_diagnosis(ex, k):
    label, code = SOLUTIONS[ex].wrong[k]
    result = lab01.LAB.run(ex, _namespace(*_solved(ex), code))
    assert result.status == "fail", label
    assert EXPECTED_FEEDBACK[ex, k] in result.messages[0]
    assert result.hints, "a failure reveals the first hint"


def test_ones_conv_golden_is_the_hand_derivation():
    g = lab01.ones_conv_golden(28, 5, 2, 0.0)
    assert g[0, 0] == 9 and g[0, 1] == 12 and g[0, 2] == 15 and g[1, 1] == 16 and g[1, 2] == 20
    assert (g[2:26, 2:26] == 25).all() and sorted(np.unique(g).tolist()) == [9, 12, 15, 16, 20, 25]


def test_pool_corners_cover_every_window():
    x = np.arange(2 * 3 * 7 * 6, dtype=np.float16).reshape(2, 3, 7, 6)
    corners = lab01.pool_corners(x)
    np.testing.assert_array_equal(np.maximum.reduce(corners), maxpool2d_ref(x))
