"""Lab 04 (migration) on the simulator: the solution run, each wrong, slow or too big answer's feedback, the budgets."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ascend_sim
from ascend_sim.course.grading.execute import Limits
from ascend_sim.course.grading.expectations import full_marks, wrong_run_names
from ascend_sim.course.grading.hints import HintLog
from ascend_sim.course.grading.labfiles import find_lab
from ascend_sim.course.grading.solutions import parse_solutions, solve_lab
from ascend_sim.course.labs import lab04_migration as lab04
from ascend_sim.engine.spelling import PYTHON, render
from ascend_sim.trace.table import as_table

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = parse_solutions(ROOT / "solutions" / "lab04_migration.py")
SETUP = ("import math\n"
         "import numpy as np\n"
         "from ascend_sim import *\n"
         "from ascend_sim.course.labs.lab04_migration import split_even, SLOPE\n")


def _namespace(code: str) -> dict:
    ns: dict = {}
    exec(compile(SETUP + code, "<answer>", "exec"), ns)  # noqa: S102 - the instructor's own solutions
    return ns


def test_solution_run_full_marks_blank_zero_wrong_answers_fail(tmp_path):
    outcome = solve_lab(find_lab("lab04", ROOT), limits=Limits(cell_timeout=120), out_dir=tmp_path)
    assert outcome.ok, outcome.all_problems()
    solved, blank, *wrong = outcome.runs
    assert solved.report.score == solved.report.max_score == full_marks(lab04.LAB)
    assert {e.status for e in blank.report.exercises} == {"not_attempted"} and not blank.report.grader_error
    assert [r.name for r in wrong] == wrong_run_names(SOLUTIONS)
    assert [[e.status for e in r.report.exercises].count("fail") for r in wrong] == [1] * len(wrong)


EXPECTED_FEEDBACK = {
    ("ex1", 0): "an illegal combination must stop in the host",         # SEL of every dtype pair
    ("ex1", 1): "LeakyRelu supports half, float on Atlas A2, not bfloat16_t",   # no bfloat16 branch
    ("ex1", 2): "returned tiling key 16",                                # BUFFER_NUM not chosen from the size
    ("ex1", 3): "for 2048 elements this is",                             # the 2,048 boundary on the wrong side
    ("ex2", 0): "both whole DataBlocks",                                 # elements split, not DataBlocks
    ("ex2", 1): "no core without work",                                  # block_dim = cores
    ("ex2", 2): "OutOfBoundsError",                                      # the last core runs past total
    ("ex2", 3): "case 1 elements of 1 bytes on 1 cores",                 # DataBlocks rounded down: 0 cores
    ("ex3", 0): "expected 0",                                            # no ReLU
    ("ex3", 1): "differ beyond the tolerance",                           # the wrong channel per plane
    ("ex3", 2): "the budget is 1,800: fuse",                             # the unfused chain
    ("ex3", 3): "case 4x120x4x4: 808 of 7680 output elements differ",   # p0 - t0: wrong from the second tile
    ("ex4", 0): "differ beyond the tolerance",                           # no rescale of the accumulator
    ("ex4", 1): "UB capacity exceeded",                                  # the naive S x S version (BC = S)
    ("ex4", 2): "the budget is 24,300",                                  # key blocks of 16 floats
    ("ex4", 3): "--cce-auto-sync=off",                                   # no V_S hand-off (the check: auto-sync off)
    ("ex5", 0): "the inverse of the step (hi - lo) / 255",               # the inverse scale
    ("ex5", 1): "one scale per output channel",                          # per input column
    ("ex5", 2): "clips its own calibration values",                      # the offset maps lo to 0, not -128
    ("ex5", 3): "past int8's 127: that weight clips",                    # weight scales of max|w| / 128
    ("ex5", 4): "a zero row still needs a positive scale",               # scale 0 for a row of zeros
    ("ex5", 5): "in 254.0 steps where int8 has 255",                     # 254 steps
    ("ex5", 6): "to code 126.0, short of 127",                           # weight scales of max|w| / 126
    ("ex5", 7): "[-2, -0.5]: act_qparams' grid clips",                   # the offset clipped to 126
}


@pytest.mark.parametrize("ex, k", sorted(EXPECTED_FEEDBACK))
def test_each_wrong_answer_fails_with_a_diagnosis(ex, k, monkeypatch):
    monkeypatch.setattr(lab04.LAB, "hint_log", HintLog())      # a fresh session: no earlier failures
    label, code = SOLUTIONS[ex].wrong[k]
    result = lab04.LAB.run(ex, _namespace(code))
    assert result.status == "fail", label
    assert EXPECTED_FEEDBACK[ex, k] in result.messages[0]
    key, levels = lab04.LAB.hint_log.last[ex]
    assert key != "*" and key in lab04.LAB.get(ex).hints.table, f"{label}: no hint of its own for {key!r}"
    assert result.hints == [render(levels[0], PYTHON)], "the first failure with a diagnosis reveals its nudge only"


def test_expected_feedback_pins_existing_wrong_answers():
    """Message pins of today's wrong answers; a new wrong answer needs none (its [key: ...] label is checked)."""
    assert set(EXPECTED_FEEDBACK) <= {(ex, k) for ex, sol in SOLUTIONS.items() for k in range(len(sol.wrong))}


def test_attention_memory_does_not_grow_with_s():
    """The solution's UB use is the same for every S (it fits the capped UB at S = 8,192), and it writes only out."""
    kern = _namespace(SOLUTIONS["ex4"].code)["flash_row_attention"]
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(0, 1, (1, 16)).astype(np.float32), *rng.normal(0, 1, (2, 8192, 16)).astype(np.float32)
    out = np.zeros((1, 16), np.float32)
    res = ascend_sim.launch(kern, 1, q, np.ascontiguousarray(k.T), np.ascontiguousarray(v.T), out, 1, 8192, 16,
                            chip=lab04.attention_chip())
    np.testing.assert_allclose(out, lab04.attention_ref(q, k, v), rtol=1e-4, atol=1e-5)
    t = as_table(res)
    assert int(t.nbytes[t.dst == "GM"].sum()) == out.nbytes
