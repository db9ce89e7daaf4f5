"""Lab 04b (a language model): the solution run, each wrong answer's feedback, the budgets of exercise 2."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ascend_sim.course.grading.execute import Limits
from ascend_sim.course.grading.labfiles import find_lab
from ascend_sim.course.grading.solutions import solve_lab
from ascend_sim.course.labs import lab04b_llm as lab

ROOT = Path(__file__).resolve().parents[2]

EXPECTED_FEEDBACK = {
    "ex1-wrong-1": "the append is missing",
    "ex1-wrong-2": "key 36 is left out",
    "ex1-wrong-3": "scaled by 1 / D",
    "ex2-wrong-1": "over the budget of +8 %",
    "ex2-wrong-2": "past 7: it clips",
    "ex2-wrong-3": "not round-to-nearest",
    "ex2-wrong-4": "6.000 bits per weight",
    "ex3-wrong-1": "induction scores differ",
    "ex3-wrong-2": "the planted retrieval heads are",
}


def test_solution_full_marks_blank_zero_each_wrong_answer_fails_its_own_exercise(tmp_path):
    outcome = solve_lab(find_lab("lab04b", ROOT), limits=Limits(cell_timeout=120), out_dir=tmp_path)
    assert outcome.ok, outcome.all_problems()
    solved, blank, *wrong = outcome.runs
    assert (solved.report.score, solved.report.max_score) == (8, 8)
    assert {e.status for e in blank.report.exercises} == {"not_attempted"}
    assert [r.name for r in wrong] == list(EXPECTED_FEEDBACK)
    for run in wrong:
        failed = [e for e in run.report.exercises if e.status == "fail"]
        assert [e.exercise for e in failed] == [run.name.split("-")[0]], run.name
        assert EXPECTED_FEEDBACK[run.name] in " ".join(failed[0].messages), (run.name, failed[0].messages)


def test_the_int4_budgets_sit_between_groups_of_16_and_32():
    """The stated budget: groups of 16 are within +8 % perplexity at 5 bits a weight; groups of 32 are not (so the
    learner must find the finer group), and groups of 8 are over the bits budget."""
    from ascend_sim.migrate.llm_quant import dequantize_groups, rtn_groups
    weights = lab.decoder_weights()
    base = lab._perplexity(None)
    ppl = {}
    for g in (16, 32):
        ppl[g] = lab._perplexity({n: dequantize_groups(*rtn_groups(w, 4, g)) for n, w in weights.items()})
    assert ppl[16] <= base * (1 + lab.PPL_BUDGET) < ppl[32]
    assert 4 + 16 / 16 <= lab.BITS_BUDGET < 4 + 16 / 8
    assert np.isfinite(base)
