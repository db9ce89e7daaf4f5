"""Lab 02 (optimisation) on the simulator: the solution run, each wrong or slow answer's feedback, the budgets."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ascend_sim.course.grading.execute import Limits
from ascend_sim.course.grading.expectations import full_marks, wrong_run_names
from ascend_sim.course.grading.hints import HintLog
from ascend_sim.course.grading.labfiles import find_lab
from ascend_sim.course.grading.solutions import parse_solutions, solve_lab
from ascend_sim.course.labs import lab02_optimization as lab02
from ascend_sim.kernels.opt.default_matmul import default_matmul

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = parse_solutions(ROOT / "solutions" / "lab02_optimization.py")
SETUP = ("import numpy as np\n"
         "from ascend_sim import *\n"
         "from ascend_sim.course.labs.lab02_optimization import TiledMatmulTiling, KernelTiledMatmul, choose_tiling, "
         "im2col\n")


def _namespace(code: str) -> dict:
    ns: dict = {}
    exec(compile(SETUP + code, "<answer>", "exec"), ns)  # noqa: S102 - the instructor's own solutions
    return ns


def test_solution_run_full_marks_blank_zero_wrong_answers_fail(tmp_path):
    outcome = solve_lab(find_lab("lab02", ROOT), limits=Limits(cell_timeout=120), out_dir=tmp_path)
    assert outcome.ok, outcome.all_problems()
    solved, solved_cpp, blank, blank_python, *wrong = outcome.runs      # the notebook offers C++ first
    assert (solved.name, solved_cpp.name, blank.name, blank_python.name) == ("solved", "solved-cpp", "blank",
                                                                             "blank-python")
    for run in (solved, solved_cpp):
        assert run.report.score == run.report.max_score == full_marks(lab02.LAB)
    for run in (blank, blank_python):
        assert {e.status for e in run.report.exercises} == {"not_attempted"} and not run.report.grader_error
    cpp_solutions = parse_solutions(ROOT / "solutions" / "lab02_optimization.cpp")
    assert [r.name for r in wrong] == wrong_run_names(SOLUTIONS) + wrong_run_names(cpp_solutions, "cpp-")
    assert [[e.status for e in r.report.exercises].count("fail") for r in wrong] == [1] * len(wrong)


EXPECTED_FEEDBACK = {
    ("ex1", 0): "index 2032: got",                                  # the last DataBlock missed by Relu
    ("ex1", 1): "the budget is 2,400: replace the scalar loop",     # correct but slow
    ("ex2", 0): "GMWriteConflictError",                             # a tail core starts inside the former cores
    ("ex2", 1): "2068 % 32 = 20",                                   # elements split, not 32-byte DataBlocks
    ("ex2", 2): "the budget is 2,700: balance the cores",           # whole tiles per core, the rest on the last
    ("ex3", 0): "were never written",                               # the last, shorter tile skipped
    ("ex3", 1): "took 2,790 simulated cycles",                      # one buffer per queue
    ("ex3", 2): "took 7,874 simulated cycles",                      # 512-byte tiles
    ("ex3", 3): "the first copy in and the last copy out overlap nothing",   # 32 KB tiles: two per block
    ("ex3", 4): "CapacityError",                                    # 64 KB tiles do not fit UB
    ("ex4", 0): "GMWriteConflictError",                             # every image's tile at image 0
    ("ex4", 1): "took 62,141 simulated cycles; the budget is 52,900",  # the weights re-read for every image
    ("ex4", 2): "GMWriteConflictError",                             # dstStride = padded tile width, not HW
    ("ex4", 3): "is in the library's tiled_matmul.py; your call: line",   # rp/np_ not rounded up to 16
    ("ex5", 0): "output elements differ beyond the tolerance",      # K = 128
    ("ex5", 1): "Fixpipe dstStride 16 < nSize 128",                 # the copy out's row length
    ("ex5", 2): "took 21,979 simulated cycles; the budget is 15,000",  # choose_tiling: slower than the default
    ("ex5", 3): "took 16,708 simulated cycles",                     # no double buffering
    ("ex5", 4): "are nSize and mSize swapped?",                     # Fixpipe nSize/mSize swapped
    ("ex5", 5): "32 for mSize 32, not 48",                          # srcStride above the rounded rows
    ("ex6", 0): "got -1.02441 expected 0",                          # no reluEn: negatives pass through
    ("ex6", 1): "output elements differ beyond the tolerance",      # no bias in BT
    ("ex6", 2): "took 10,685 simulated cycles; the budget is 5,500",  # choose_tiling: 128-byte copies of w's rows
    ("ex6", 3): "got 0 expected 2.4707",                            # w read as [K, N]
    ("ex6", 4): "wrote this L0C as NZ with column blocks of 48 rows",  # srcStride above the Mmad's rows
    ("ex7", 0): "the running mean is not subtracted",               # BN folded without the running mean
    ("ex7", 1): "got -0.464844 expected 0",                         # no reluEn
    ("ex7", 2): "the budget is 3,780: split M over every cube core",  # a tiling for 4 of 24 cores
    ("ex7", 3): "transposed, as a [C*KH*KW, O] = [27, 16] matrix",  # weights transposed as for the library
    ("ex8", 0): "output elements differ beyond the tolerance",      # y overlaps x
    ("ex8", 1): "the budget is 3,900",                              # x and y in one bank group
    ("ex8", 2): "bufOffset is a byte offset and must be 32-byte aligned (65791 % 32 = 31)",   # y unaligned
}


@pytest.mark.parametrize("ex, k", sorted(EXPECTED_FEEDBACK))
def test_each_wrong_answer_fails_with_a_diagnosis(ex, k, monkeypatch):
    monkeypatch.setattr(lab02.LAB, "hint_log", HintLog())      # a fresh session: no earlier failures
    label, code = SOLUTIONS[ex].wrong[k]
    result = lab02.LAB.run(ex, _namespace(code))
    assert result.status == "fail", label
    assert EXPECTED_FEEDBACK[ex, k] in result.messages[0]
    key, levels = lab02.LAB.hint_log.last[ex]
    assert key != "*" and key in lab02.LAB.get(ex).hints.table, f"{label}: no hint of its own for {key!r}"
    assert result.hints == [levels[0]], "the first failure with a diagnosis reveals its nudge only"


def test_every_wrong_answer_has_an_expected_feedback():
    assert {(ex, k) for ex, sol in SOLUTIONS.items() for k in range(len(sol.wrong))} == set(EXPECTED_FEEDBACK)


def test_the_default_operator_is_still_measured_as_documented():
    """ex5's target is relative to the default operator: its cycles as documented, and the budget at most 88 % of
    them. (Every budget's margins over the solution and under the slow answers: tests/course/test_budget_margins.py.)"""
    M, N, K = lab02.CUBE_CASE
    a, b = np.ones((M, K), np.float16), np.ones((K, N), np.float16)
    _, base = default_matmul(a, b)
    assert base.cycles == pytest.approx(lab02.DEFAULT_CUBE_CYCLES, abs=1)
    assert lab02.CUBE_BUDGET <= lab02.SPEEDUP_TARGET * base.cycles
