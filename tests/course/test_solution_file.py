"""The solutions file format: sentinel regions -> answer and stub, wrong answers as one replacement, naming."""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from ascend_sim.course.grading.labfiles import LabFiles
from ascend_sim.course.grading.solution_file import SolutionsFormatError, parse_solutions

ANSWER = '''\
# %% ex1
class K:
    def Init(self, t):
        self.n = t.n
        # TODO 1: the offset
        # --- BEGIN SOLUTION hint="TODO 1: the offset"
        self.off = t.n * GetBlockIdx()
        # --- END SOLUTION

    def Process(self):
        # --- BEGIN SOLUTION hint="TODO 2: the loop"
        for i in range(self.n):
            Add(i)
        # --- END SOLUTION
        return self.off
'''


def _parse(tmp_path: Path, text: str):
    path = tmp_path / "lab.py"
    path.write_text(textwrap.dedent(text))
    return parse_solutions(path)


def test_sentinels_give_the_answer_and_the_stub(tmp_path):
    sol = _parse(tmp_path, ANSWER + "# %% ex1 wrong: no offset\n# replace: t.n * GetBlockIdx() -> 0\n")["ex1"]
    assert "BEGIN" not in sol.code and "END" not in sol.code and "self.off = t.n * GetBlockIdx()" in sol.code
    assert sol.stub == (
        'class K:\n    def Init(self, t):\n        self.n = t.n\n        # TODO 1: the offset\n'
        '        raise NotImplementedError("ex1: TODO 1: the offset")\n\n    def Process(self):\n'
        '        raise NotImplementedError("ex1: TODO 2: the loop")\n        return self.off\n')
    assert sol.wrong == [("no offset", sol.code.replace("t.n * GetBlockIdx()", "0"))]


def test_multi_line_replacement_deletes_whole_lines(tmp_path):
    wrong = ("# %% ex1 wrong: no loop\n# replace:\n#         for i in range(self.n):\n#             Add(i)\n"
             "# with:\n#         pass\n")
    sol = _parse(tmp_path, ANSWER + wrong)["ex1"]
    (label, code), = sol.wrong
    assert "Add(i)" not in code and "        pass\n        return self.off" in code
    assert code.replace("        pass\n", "        for i in range(self.n):\n            Add(i)\n") == sol.code


@pytest.mark.parametrize("replace, line, found", [
    ("# replace: self.n -> self.m", 17, "matches 2 times"),
    ("# replace: self.nn -> self.m", 17, "matches 0 times (copy the text"),
    ("# replace:\n#     self.n = t.n\n# with:\n#     self.n = 0", 17, "matches 0 times"),   # indentation differs
])
def test_a_replacement_must_match_exactly_once(tmp_path, replace, line, found):
    with pytest.raises(SolutionsFormatError, match=rf"lab.py:{line}: the replacement of ex1 wrong 'bad' must "
                                                    rf"match the answer exactly once; .* {re.escape(found)}"):
        _parse(tmp_path, ANSWER + f"# %% ex1 wrong: bad\n{replace}\n")


@pytest.mark.parametrize("wrong, message", [
    ("def f():\n    return 1\n", r"lab.py:17: a wrong answer is one replacement .* 0 replace lines and 2 code lines"),
    ("# replace: Add(i) -> Sub(i)\n# replace: self.n -> self.m\n", "lab.py:17: a wrong answer is one replacement"),
    ("# replace: Add(i) -> Add(i)\n", "lab.py:17: the replacement of ex1 wrong 'bad' changes nothing"),
    ("# replace: a -> b -> c\n", "lab.py:17: .* takes one line with ' -> ' once"),
    ("# replace:\n#     Add(i)\n", "lab.py:17: a multi-line replacement is"),
])
def test_malformed_wrong_answers_are_rejected(tmp_path, wrong, message):
    with pytest.raises(SolutionsFormatError, match=message):
        _parse(tmp_path, ANSWER + "# %% ex1 wrong: bad\n" + wrong)


@pytest.mark.parametrize("answer, message", [
    ('# %% ex1\nx = 1\n# --- BEGIN SOLUTION hint="set y"\ny = 2\n# --- END SOLUTION\n',
     "lab.py:3: a BEGIN SOLUTION region outside a function"),
    ('# %% ex1\nclass K:\n    # --- BEGIN SOLUTION hint="a class attribute"\n    n = 2\n    # --- END SOLUTION\n',
     "lab.py:3: a BEGIN SOLUTION region outside a function"),
    ('# %% ex1\ndef f():\n    # --- BEGIN SOLUTION\n    return 1\n    # --- END SOLUTION\n',
     'lab.py:3: write the sentinel as # --- BEGIN SOLUTION hint="'),
    ('# %% ex1\ndef f():\n    # --- BEGIN SOLUTION hint="h"\n    return 1\n',
     "lab.py:3: BEGIN SOLUTION without its END SOLUTION"),
    ('# %% ex1\ndef f():\n    return 1\n    # --- END SOLUTION\n', "lab.py:4: END SOLUTION without a BEGIN"),
    ('# %% ex1\ndef f():\n    # --- BEGIN SOLUTION hint="h"\n\n    # --- END SOLUTION\n',
     "lab.py:5: the region opened at line 3 holds no code"),
    ('# %% ex1\ndef f():\n    # --- BEGIN SOLUTION hint="h"\n    return 1\n    # --- END SOLUTION\n'
     '# %% ex1 stub\ndef f():\n    raise NotImplementedError\n', "lab.py:6: ex1 has a stub already"),
    ("# %% ex1 stub\ndef f():\n    raise NotImplementedError\n", "lab.py:1: a stub block for ex1 without its answer"),
])
def test_malformed_answers_are_rejected(tmp_path, answer, message):
    with pytest.raises(SolutionsFormatError, match=message):
        _parse(tmp_path, answer)


def test_an_answer_without_sentinels_takes_its_stub_block(tmp_path):
    sols = _parse(tmp_path, "# %% ex1\nx = 1\n\n# %% ex1 stub\nx = ...\n\n# %% ex2\ny = 2\n")
    assert (sols["ex1"].code, sols["ex1"].stub) == ("x = 1\n", "x = ...\n")
    assert (sols["ex2"].code, sols["ex2"].stub) == ("y = 2\n", None)


def test_a_course_lab_names_its_checks_by_its_stem(tmp_path):
    lab = LabFiles("lab02_cube", tmp_path / "labs" / "lab02_cube.ipynb", tmp_path / "solutions" / "lab02_cube.py")
    assert lab.naming_problems({"lab": "lab02_cube", "checks": "ascend_sim.course.labs.lab02_cube"}) == []
    assert lab.naming_problems({"lab": "lab02", "checks": "ascend_sim.course.labs.lab02"}) == [
        "notebook metadata course.lab is 'lab02'; it must be the file stem 'lab02_cube'",
        "notebook metadata course.checks is 'ascend_sim.course.labs.lab02'; lab02_cube.ipynb must name its checks "
        "module 'ascend_sim.course.labs.lab02_cube' (one stem per lab)"]
    fixture = LabFiles("fix", tmp_path / "fix.ipynb", tmp_path / "solutions" / "fix.py")
    assert fixture.naming_problems({"lab": "fix", "checks": "fixture_checks"}) == []
