"""Lab 05 (engineering practice, planted bugs): the solution run, each wrong fix and wrong diagnosis failing, and
the checks' expected diagnoses coming from the tools, not from constants."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ascend_sim.course.grading.execute import Limits
from ascend_sim.course.grading.expectations import full_marks, wrong_run_names
from ascend_sim.course.grading.labfiles import find_lab
from ascend_sim.course.grading.solutions import parse_solutions, solve_lab
from ascend_sim.course.labs import lab05_engineering as lab05

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = parse_solutions(ROOT / "solutions" / "lab05_engineering.py")
SETUP = ("import numpy as np\n"
         "from ascend_sim import *\n"
         "from ascend_sim.course.labs.lab05_engineering import Tiling, TailTiling, TILE\n")


def _namespace(code: str) -> dict:
    ns: dict = {}
    exec(compile(SETUP + code, "<answer>", "exec"), ns)  # noqa: S102 - the instructor's own solutions
    return ns


def test_solution_run_full_marks_blank_zero_wrong_answers_fail(tmp_path):
    outcome = solve_lab(find_lab("lab05", ROOT), limits=Limits(cell_timeout=120), out_dir=tmp_path)
    assert outcome.ok, outcome.all_problems()
    solved, blank, *wrong = outcome.runs
    assert solved.report.score == solved.report.max_score == full_marks(lab05.LAB)
    assert {e.status for e in blank.report.exercises} == {"not_attempted"} and not blank.report.grader_error
    assert [r.name for r in wrong] == wrong_run_names(SOLUTIONS)
    assert [[e.status for e in r.report.exercises].count("fail") for r in wrong] == [1] * len(wrong)


EXPECTED_FEEDBACK = {
    ("ex1", 0): "GMWriteConflictError",
    ("ex1", 1): "diagnose_ex1() returned ('OutOfBoundsError', 'UB')",
    ("ex2", 0): "DataCopy touches 512 bytes of a UB tensor that holds 288 bytes",
    ("ex2", 1): "diagnose_ex2() returned ('OutOfBoundsError', 'GM')",
    ("ex3", 0): "[racecheck] RaceError at line 21",
    ("ex3", 1): "diagnose_ex3() returned ('RaceError', 'MTE2_V')",
    ("ex4", 0): "[racecheck] RaceError",
    ("ex4", 1): "diagnose_ex4() returned ('DeadlockError', '1')",
    ("ex4", 2): "DeadlockError",                                  # SyncAll in block 0 only: the planted bug kept
    ("ex4", 3): "were never written",                             # the kernel overwrote its input x instead of y
    ("ex9", 0): "gives Dice 0.8674 against the reference mask, below 0.93",   # the mean of the values
    ("ex9", 1): "is not between the modes",                       # a constant tuned on the picture
    ("ex10", 0): "precision 0.",                                  # mean + 3 sd: the texture is flagged
    ("ex10", 1): "defects found, recall 0.",                      # twice the golden maximum: scratches missed
    ("ex5", 0): "[initcheck] UninitializedReadError",
    ("ex5", 1): "diagnose_ex5() returned ('UninitializedReadError', 'DataCopy')",
    ("ex6", 0): "tileNum=4, lastTileLength=256 broke a rule",
    ("ex6", 1): "diagnose_ex6() returned 1000",
    ("ex7", 0): "first_bad_layer() returned 'relu2'",
    ("ex7", 1): "accumulate_in() returned 'float16'",
    ("ex8", 0): "it is the NHWC layout of the NCHW input",
    ("ex8", 1): "diagnose_ex8() returned 'E10002'",
}


@pytest.mark.parametrize("ex, k", sorted(EXPECTED_FEEDBACK))
def test_each_wrong_fix_and_wrong_diagnosis_fails_with_a_reason(ex, k):
    label, code = SOLUTIONS[ex].wrong[k]
    result = lab05.LAB.run(ex, _namespace(code))
    assert result.status == "fail", label
    assert EXPECTED_FEEDBACK[ex, k] in result.messages[0], result.messages[0]
    assert result.hints


def test_expected_diagnoses_come_from_running_the_planted_bugs():
    got = {ex: lab05.run_planted(ex, **kw) for ex, kw in [
        ("ex1", {}), ("ex2", {"total": 2048, "blocks": 2}), ("ex3", {"total": 1536, "blocks": 2}),
        ("ex4", {"total": 1024, "blocks": 4}), ("ex5", {"total": 1024, "blocks": 1})]}
    assert [type(e).__name__ for e in got.values()] == ["OutOfBoundsError", "OutOfBoundsError", "RaceError",
                                                        "DeadlockError", "UninitializedReadError"]
    assert (lab05.error_tier(got["ex1"]), lab05.error_tier(got["ex2"])) == ("GM", "UB")
    assert lab05.missing_event(got["ex3"]) == "V_MTE3"
    assert "error code = 0x800000" in got["ex1"].aicore_report
    assert lab05.first_unwritten(lab05.planted_tail_tiling, 1000, 256) == 768
    assert lab05.first_unwritten(lab05.planted_tail_tiling, 1024, 256) is None     # no tail: nothing missed


def test_the_solution_kernels_run_clean_where_the_planted_ones_fail():
    ns = _namespace(SOLUTIONS["ex1"].code)
    from ascend_sim import launch
    x = np.ones(2560, np.float16)
    y = np.zeros_like(x)
    launch(ns["scale_blocks"], 3, x, y, lab05.Tiling(2560, 1024, 256))
    assert np.array_equal(y, 2 * x)


def test_evidence_keeps_a_short_string_and_only_names_a_long_one():
    from ascend_sim.course.grading import evidence as ev
    assert ev.decode_value(ev.encode_value(("OutOfBoundsError", "GM"))) == ("OutOfBoundsError", "GM")
    long = ev.decode_value(ev.encode_value("x" * (ev.MAX_STR + 1)))
    assert isinstance(long, ev.Opaque) and long != "x" * (ev.MAX_STR + 1)
    with pytest.raises(ev.Rejected):
        ev.decode_value({"str": "x" * (ev.MAX_STR + 1)})          # forged evidence: refused, not truncated
