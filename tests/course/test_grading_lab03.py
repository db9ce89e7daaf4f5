"""Lab 03 (distributed): the solution run, each wrong answer's feedback, and the targets' margins."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ascend_sim.course.grading.execute import Limits
from ascend_sim.course.grading.expectations import full_marks, wrong_run_names
from ascend_sim.course.grading.labfiles import find_lab
from ascend_sim.course.grading.solutions import parse_solutions, solve_lab
from ascend_sim.course.labs import lab03_distributed as lab03

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = parse_solutions(ROOT / "solutions" / "lab03_distributed.py")
SETUP = ("import math\n"
         "import numpy as np\n"
         "from ascend_sim.course.labs.lab03_distributed import *\n")


def _namespace(code: str) -> dict:
    ns: dict = {}
    exec(compile(SETUP + code, "<answer>", "exec"), ns)  # noqa: S102 - the instructor's own solutions
    return ns


def test_solution_run_full_marks_blank_zero_wrong_answers_fail(tmp_path):
    outcome = solve_lab(find_lab("lab03", ROOT), limits=Limits(cell_timeout=120), out_dir=tmp_path)
    assert outcome.ok, outcome.all_problems()
    solved, blank, *wrong = outcome.runs
    assert solved.report.score == solved.report.max_score == full_marks(lab03.LAB)
    assert {e.status for e in blank.report.exercises} == {"not_attempted"} and not blank.report.grader_error
    assert [r.name for r in wrong] == wrong_run_names(SOLUTIONS)
    assert [[e.status for e in r.report.exercises].count("fail") for r in wrong] == [1] * len(wrong)


EXPECTED_FEEDBACK = {
    ("ex1", 0): "added more often than once per rank",
    ("ex1", 1): "over the time budget",
    ("ex1", 2): "over the time budget of 311.9 us (1.05 x HCCL's ring",       # one allgather step too many
    ("ex1", 3): "reduce 1 (add) or 0 (overwrite)",                          # reduce = 2
    ("ex2", 0): "rank r takes order[r::R] (strided)",
    ("ex2", 1): "seed the permutation with seed + epoch",
    ("ex2", 2): "without drop_last the order is padded",
    ("ex2", 3): "drop_last cuts the order to num_samples * R",             # drop_last when R divides n
    ("ex2", 4): "the order ignores the seed (7)",                          # seeded with the epoch alone
    ("ex3", 0): "bucket 0 must hold the last parameters",
    ("ex3", 1): "one bucket can only start after the whole backward",
    ("ex4", 0): "the bias was added on every rank before the AllReduce",
    ("ex4", 1): "only this rank's partial sum",
    ("ex5", 0): "over the bytes target",
    ("ex5", 1): "the accuracy target is missed",
    ("ex6", 0): "differ from the uninterrupted run",
    ("ex6", 1): "differ from the uninterrupted run",
    ("ex6", 2): "reservation is used up",
}


@pytest.mark.parametrize("ex, k", sorted(EXPECTED_FEEDBACK))
def test_each_wrong_answer_fails_with_a_diagnosis(ex, k):
    label, code = SOLUTIONS[ex].wrong[k]
    result = lab03.LAB.run(ex, _namespace(code))
    assert result.status == "fail", label
    assert EXPECTED_FEEDBACK[ex, k] in result.messages[0], result.messages[0]
    assert result.hints, "a failure reveals the first hint"


def test_every_solution_passes_in_process():
    for ex, sol in sorted(SOLUTIONS.items()):
        assert lab03.LAB.run(ex, _namespace(sol.code)).status == "pass", ex


def test_the_time_and_overlap_targets_have_margin_on_both_sides():
    ns = _namespace(SOLUTIONS["ex1"].code)
    comm = lab03.HcclComm(lab03.atlas_800t_a2(1))
    _, t = lab03.run_schedule(ns["ring_allreduce_schedule"](8, 1 << 20), [np.zeros(1 << 20, np.float32)] * 8, comm)
    ring = comm.estimate("AllReduce", 1 << 20, algo="ring").time_us
    assert t <= ring * 1.001 and lab03.RING_SLACK * ring < 2 * ring      # the solution is HCCL's ring
    ns = _namespace(SOLUTIONS["ex3"].code)
    nb, bw = lab03.BUCKET_MODEL["nbytes"], lab03.BUCKET_MODEL["backward_us"]
    comm = lab03.HcclComm(lab03.atlas_800t_a2(2, npus_per_server=4))
    base = lab03.ddp_step_us([0] * len(nb), nb, bw, comm)
    overlap = lab03.ddp_step_us(ns["assign_buckets"](nb, 8 << 20), nb, bw, comm)
    assert overlap < 0.75 * base < lab03.OVERLAP_TARGET * base


def test_run_schedule_rejects_a_malformed_schedule_with_the_rule():
    comm = lab03.HcclComm(lab03.atlas_800t_a2(1, npus_per_server=2))
    with pytest.raises(ValueError, match="two different ranks"):
        lab03.run_schedule([(0, 0, 0, 0, 4, 1)], [np.zeros(4, np.float32)] * 2, comm)
    with pytest.raises(ValueError, match="integer rows"):
        lab03.run_schedule([(0.5, 0, 1, 0, 4, 1)], [np.zeros(4, np.float32)] * 2, comm)
