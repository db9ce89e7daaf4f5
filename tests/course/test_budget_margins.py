"""Every budget-graded exercise of every lab keeps its margins both ways: the solution under its budget by at least
``MIN_UNDER`` and each slow wrong answer over it by at least ``MIN_OVER`` (ascend_sim/course/grading/margins.py), so
the next timing change that erodes a margin fails here, naming the exercise and its figures, before it lets a slow
answer pass or fails the solution. The figures are the checks' own (``Context.measure``), run on solutions/<lab>.py.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from ascend_sim.course.grading.labfiles import list_labs
from ascend_sim.course.grading.margins import (MIN_OVER, MIN_UNDER, Margin, SlowAnswer, is_slow, lab_margins,
                                               margin_problems, margin_table)
from ascend_sim.course.grading.solution_file import parse_solutions

ROOT = Path(__file__).resolve().parents[2]
LABS = [f.name for f in list_labs(ROOT) if f.solutions.is_file()]


@lru_cache(maxsize=None)
def _margins(lab: str) -> tuple[Margin, ...]:
    return tuple(lab_margins(lab, ROOT))


@pytest.mark.parametrize("lab", LABS)
def test_every_budget_keeps_its_margin_both_ways(lab):
    problems = [p for m in _margins(lab) for p in margin_problems(m)]     # BY_CONSTRUCTION's answers are shown only
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lab", LABS)
def test_every_slow_answer_is_measured_against_its_budget(lab):
    """A slow wrong answer ([key: budget...]) must reach the budget case: failing earlier would teach nothing."""
    margins = _margins(lab)
    files = [(ROOT / "solutions" / f"{lab}.py", ""), (ROOT / "solutions" / f"{lab}.cpp", "C++: ")]
    for path, prefix in (f for f in files if f[0].is_file()):
        for ex, sol in parse_solutions(path).items():
            for label in (prefix + label for label, _ in sol.wrong if is_slow(label)):
                figures = [s.measured for m in margins if m.exercise == ex for s in m.slow if s.label == label]
                assert any(f is not None for f in figures), f"{lab} {ex}: '{label}' never reached a budget case"


def test_a_narrow_margin_is_reported_with_the_exercise_and_its_figures():
    """The rule itself, on lab02 ex4's figures before its redesign (2.6 % over, 4.7 % under): both are caught."""
    slow = SlowAnswer("the weights are read from GM again for every image [key: budget]", 11_694)
    narrow = Margin("lab02_optimization", "ex4", "64 images 16x10x10, 64 filters", "cycles", 11_400, 10_890, (slow,))
    problems = margin_problems(narrow)
    assert len(problems) == 2
    assert "lab02_optimization ex4" in problems[0] and "10,890 cycles, the budget is 11,400" in problems[0]
    assert "4.7 % headroom" in problems[0] and f"at least {100 * MIN_UNDER:.0f} %" in problems[0]
    assert "takes 11,694 cycles against a budget of 11,400: +2.6 %" in problems[1]
    assert f"at least +{100 * MIN_OVER:.0f} %" in problems[1]
    wide = Margin("lab02_optimization", "ex4", "", "cycles", 9_700, 8_426, (SlowAnswer(slow.label, 11_455),))
    assert margin_problems(wide) == []
    passing = Margin("lab02_optimization", "ex4", "", "cycles", 9_700, 8_426, (SlowAnswer(slow.label, 9_000),))
    assert "-7.2 %" in margin_problems(passing)[0]          # a slow answer that passes: a negative margin


def test_only_the_listed_answers_are_exempt_by_construction():
    """lab03 ex1's extra allgather step is +7.1 % of the ring by its step count: shown, not held to MIN_OVER; any
    other slow answer at the same figures is reported."""
    step = SlowAnswer("one allgather step too many (correct sums, 7 % over HCCL's ring) [key: budget]", 318)
    other = SlowAnswer("one extra message per step [key: budget]", 318)
    ring = Margin("lab03_distributed", "ex1", "time budget", "us", 312, 297, (step, other))
    problems = margin_problems(ring)
    assert len(problems) == 1 and "one extra message per step" in problems[0] and "+1.9 %" in problems[0]
    assert "(by construction)" in margin_table([ring])


def test_a_small_figure_keeps_its_digits():
    """lab04b ex2 holds the perplexity increase in per cent: 6.75 against 8 prints as such, not as 7 against 8."""
    slow = SlowAnswer("one group per row [key: budget/perplexity]", 8.4)
    m = Margin("lab04b_llm", "ex2", "", "% more perplexity", 8.0, 7.75, (slow,))
    problems = margin_problems(m)
    assert "the solution takes 7.75 % more perplexity, the budget is 8: only 3.2 % headroom" in problems[0]
    assert "takes 8.4 % more perplexity against a budget of 8: +5.0 %" in problems[1]
