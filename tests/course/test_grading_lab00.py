"""Lab 00 (warm-up) on the simulator: the solution run, and each wrong answer's feedback."""
from __future__ import annotations

from pathlib import Path

import pytest

from ascend_sim.course.grading.execute import Limits
from ascend_sim.course.grading.expectations import full_marks, wrong_run_names
from ascend_sim.course.grading.hints import HintLog
from ascend_sim.course.grading.labfiles import find_lab
from ascend_sim.course.grading.solutions import parse_solutions, solve_lab
from ascend_sim.course.labs import lab00_warmup as lab00

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = parse_solutions(ROOT / "solutions" / "lab00_warmup.py")
SETUP = ("import numpy as np\n"
         "from ascend_sim import *\n"
         "from ascend_sim.course.labs.lab00_warmup import AddTiling, ReluTiling, relu_tiling, CYCLE_BUDGET\n")


def _namespace(code: str) -> dict:
    ns: dict = {}
    exec(compile(SETUP + code, "<answer>", "exec"), ns)  # noqa: S102 - the instructor's own solutions
    return ns


def test_solution_run_full_marks_blank_zero_wrong_answers_fail(tmp_path):
    outcome = solve_lab(find_lab("lab00", ROOT), limits=Limits(cell_timeout=60), out_dir=tmp_path)
    assert outcome.ok, outcome.all_problems()
    solved, solved_cpp, blank, blank_python, *wrong = outcome.runs      # the notebook offers C++ first
    assert (solved.name, solved_cpp.name, blank.name, blank_python.name) == ("solved", "solved-cpp", "blank",
                                                                             "blank-python")
    for run in (solved, solved_cpp):
        assert run.report.score == run.report.max_score == full_marks(lab00.LAB)
    for run in (blank, blank_python):
        assert {e.status for e in run.report.exercises} == {"not_attempted"} and not run.report.grader_error
    cpp = parse_solutions(ROOT / "solutions" / "lab00_warmup.cpp")
    assert [r.name for r in wrong] == wrong_run_names(SOLUTIONS) + wrong_run_names(cpp, prefix="cpp-")
    assert [[e.status for e in r.report.exercises].count("fail") for r in wrong] == [1] * len(wrong)


EXPECTED_FEEDBACK = {
    ("ex1", 0): "GMWriteConflictError",
    ("ex1", 1): "the last tile of a block was skipped",
    ("ex2", 0): "elements 1792..2046 of the output were never written: the tail is not handled",
    ("ex2", 1): "[memcheck] AlignmentError",
    ("ex3", 0): "took 8,614 simulated cycles; the budget is 7,300",
    ("ex3", 1): "copies must move one tile",
}


@pytest.mark.parametrize("ex, k", sorted(EXPECTED_FEEDBACK))
def test_each_wrong_answer_fails_with_a_diagnosis(ex, k, monkeypatch):
    monkeypatch.setattr(lab00.LAB, "hint_log", HintLog())      # a fresh session: no earlier failures
    label, code = SOLUTIONS[ex].wrong[k]
    result = lab00.LAB.run(ex, _namespace(code))
    assert result.status == "fail", label
    assert EXPECTED_FEEDBACK[ex, k] in result.messages[0]
    key, levels = lab00.LAB.hint_log.last[ex]
    assert key != "*" and key in lab00.LAB.get(ex).hints.table, f"{label}: no hint of its own for {key!r}"
    assert result.hints == [levels[0]], "the first failure with a diagnosis reveals its nudge only"


def test_relu_tiling_rejects_empty_blocks():
    assert lab00.relu_tiling(8037, 8, 512) == lab00.ReluTiling(8037, 1008, 512)
    with pytest.raises(ValueError, match="leave some of 8 blocks empty"):
        lab00.relu_tiling(20, 8, 64)
