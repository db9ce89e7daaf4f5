"""scripts/perturb_answers.py: its mutants, and the part column that tells the learner's lines from the given code."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from ascend_sim.course.grading.solutions import parse_solutions

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("perturb_answers", ROOT / "scripts" / "perturb_answers.py")
perturb = sys.modules.setdefault("perturb_answers", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(perturb)


def test_answer_lines_are_the_solution_region_only():
    sol = parse_solutions(ROOT / "solutions" / "lab02_optimization.py")["ex8"]
    lines = sol.code.splitlines()
    picked = [lines[k - 1].strip() for k in sorted(perturb.answer_lines(sol.code, sol.stub))]
    assert picked == ["addrs = (0x0, 0x10100, 0x20000)       # y: another bank_id and the other 8 groups; "
                      "z: a third bank_id"]


def test_without_a_stub_every_line_is_the_learners():
    assert perturb.answer_lines("a = 1\nb = 2\n", None) == {1, 2}


def test_mutants_cover_each_kind_of_edit():
    whats = [m.what for m in perturb.mutants("x = min(a + 1, b)\nif x < 3:\n    f(x, y)\n")]
    assert "1 -> 2" in whats and "`a + 1`: Add swapped" in whats and "`x < 3`: boundary" in whats
    assert "`min(a + 1, b)`: min -> max" in whats and "`f(x, y)`: first two arguments swapped" in whats
