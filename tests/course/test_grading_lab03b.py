"""Lab 03b (parallelism): each solution passes, each wrong answer fails with the hint keyed to its mistake."""
from __future__ import annotations

from pathlib import Path

import pytest

from ascend_sim.course.grading.solutions import parse_solutions
from ascend_sim.course.labs import lab03b_parallelism as lab

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = parse_solutions(ROOT / "solutions" / "lab03b_parallelism.py")
SETUP = "import numpy as np\nfrom ascend_sim.course.labs.lab03b_parallelism import *\n"


def _namespace(code: str) -> dict:
    ns: dict = {}
    exec(compile(SETUP + code, "<answer>", "exec"), ns)  # noqa: S102 - the instructor's own solutions
    return ns


EXPECTED = {   # (exercise, wrong answer) -> (words of the message, the first hint's words)
    ("ex1", 0): ("that is GPipe", "run every forward before any backward"),
    ("ex1", 1): ("micro-batches in flight", "Count the forwards"),
    ("ex1", 2): ("bubble", "Where do your stages wait"),
    ("ex1", 3): ("before its forward", "exactly once"),
    ("ex2", 0): ("must skip the step", "What happens to the weights"),
    ("ex2", 1): ("new scale", "After an overflow the scale was too large"),
    ("ex2", 2): ("not grads / scale", "those of loss x scale"),
    ("ex2", 3): ("clean-step count", "count of clean steps after an overflow"),
    ("ex2", 4): ("new scale", "When does GradScaler grow"),
    ("ex3", 0): ("GB per NPU", "does not fit in 64 GB"),
    ("ex3", 1): ("TP inside the server gives", "slower than the best"),
    ("ex3", 2): ("GB per NPU", "does not fit in 64 GB"),
    ("ex4", 0): ("k times the big batch", "k times too large"),
    ("ex4", 1): ("last micro-batch", "only the last micro-batch"),
    ("ex4", 2): ("bytes sent where one AllReduce", "AllReduced more than once"),
}


def test_every_wrong_answer_is_listed():
    assert sorted(EXPECTED) == sorted((ex, k) for ex, sol in SOLUTIONS.items() for k in range(len(sol.wrong)))


@pytest.mark.parametrize("ex, k", sorted(EXPECTED))
def test_each_wrong_answer_fails_with_its_hint(ex, k):
    label, code = SOLUTIONS[ex].wrong[k]
    result = lab.LAB.run(ex, _namespace(code))
    message, hint = EXPECTED[ex, k]
    assert result.status == "fail", label
    assert message in result.messages[0], result.messages[0]
    assert result.hints and hint in result.hints[0], (label, result.hints)


def test_every_solution_passes_and_blank_is_not_attempted():
    for ex, sol in sorted(SOLUTIONS.items()):
        assert lab.LAB.run(ex, _namespace(sol.code)).status == "pass", ex
        assert lab.LAB.run(ex, _namespace("")).status == "not_attempted", ex


def test_the_budgets_separate_1f1b_from_its_neighbours():
    ns = _namespace(SOLUTIONS["ex1"].code)
    run = lab.run_pipeline(ns["one_f_one_b_rows"](8, 16), 8, 16)
    assert run.mean_bubble <= lab.analytic_bubble(8, 16) + 0.002           # far inside the slack
    no_warmup = [(s, k, i) for s in range(8) for i in range(16) for k in (0, 1)]
    assert lab.run_pipeline(no_warmup, 8, 16).mean_bubble > lab.analytic_bubble(8, 16) + 5 * lab.BUBBLE_SLACK
