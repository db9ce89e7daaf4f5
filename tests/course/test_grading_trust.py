"""Units of Grader II: the judge's validations, the static screen, the gradebook, the wall-clock guard, wrong labs."""
from __future__ import annotations

import copy
import csv
import io
import json
import time
from pathlib import Path

import nbformat
import pytest

from ascend_sim.course.grading.check import EVIDENCE_ENV, TIMEOUT_ENV, Lab
from ascend_sim.course.grading.grade import submission_slots
from ascend_sim.course.grading.judge import NO_EVIDENCE, judge
from ascend_sim.course.grading.notebook import lab_mismatch, load_template
from ascend_sim.course.grading.report import ExerciseResult, GradebookOptions, Report, safe_cell, write_gradebook
from ascend_sim.course.grading.screen import screen_source
from ascend_sim.course.grading.solutions import parse_solutions
from ascend_sim.course.labs import lab00_warmup as lab00

ROOT = Path(__file__).resolve().parents[2]
SETUP = ("import numpy as np\nfrom ascend_sim import *\n"
         "from ascend_sim.course.labs.lab00_warmup import AddTiling, ReluTiling, relu_tiling, CYCLE_BUDGET\n")


# ----------------------------------------------------------------------------- the judge
@pytest.fixture(scope="module")
def honest_ex1():
    """The evidence of the solution of lab00 ex1, as the grader receives it (JSON)."""
    import os
    ns: dict = {}
    exec(compile(SETUP + parse_solutions(ROOT / "solutions" / "lab00_warmup.py")["ex1"].code, "<answer>", "exec"), ns)
    os.environ[EVIDENCE_ENV] = "1"
    try:
        result = lab00.LAB.run("ex1", ns)
    finally:
        del os.environ[EVIDENCE_ENV]
    assert result.status == "pass"
    return json.loads(json.dumps(result.evidence))


def _first_launch(ev: dict) -> dict:
    return next(e for e in ev["events"] if e["kind"] == "call")["launches"][0]


def test_honest_evidence_passes(honest_ex1):
    verdict, tamper = judge(lab00.LAB, "ex1", copy.deepcopy(honest_ex1))
    assert (verdict.status, verdict.score, tamper) == ("pass", 2, "")


def test_the_judge_is_bounded_in_time_and_records(honest_ex1):
    verdict, tamper = judge(lab00.LAB, "ex1", copy.deepcopy(honest_ex1), seconds=0)
    assert verdict.status == "fail" and "took longer than the judge's" in verdict.messages[0] and tamper == ""
    from ascend_sim.course.grading import judge as judge_module
    big = copy.deepcopy(honest_ex1)
    _first_launch(big)["records"] = _first_launch(big)["records"] * (judge_module.MAX_RECORDS // 4)
    started = time.monotonic()
    verdict, tamper = judge(lab00.LAB, "ex1", big)
    assert "holds more than 2,000,000 records" in verdict.messages[0] and time.monotonic() - started < 5


def _tampered(honest: dict, edit) -> tuple:
    ev = copy.deepcopy(honest)
    edit(ev)
    return judge(lab00.LAB, "ex1", ev)


def test_no_evidence_is_a_forged_result():
    verdict, tamper = judge(lab00.LAB, "ex1", None)
    assert (verdict.status, verdict.messages, tamper) == ("error", [NO_EVIDENCE], "forged_result")


@pytest.mark.parametrize("edit, reason", [
    (lambda ev: _first_launch(ev).update(cycles=_first_launch(ev)["cycles"] / 2), "trace in the evidence is inconsistent"),
    (lambda ev: _first_launch(ev)["outputs"]["2"].update(writers=[[0, 999999]]), "not a DataCopy/DataCopyPad/Fixpipe"),
    (lambda ev: _first_launch(ev).update(inputs=["0" * 32] * 3), "other inputs than the hidden case"),
    (lambda ev: next(e for e in ev["events"] if e["kind"] == "call")["args"].append(1), "other inputs"),
    (lambda ev: ev["events"].pop(), "does not follow the check"),
    (lambda ev: _first_launch(ev)["outputs"]["2"].update(data={"dtype": "object", "shape": [1], "data": ""}),
     "malformed"),
])
def test_tampered_evidence_is_rejected_with_the_reason(honest_ex1, edit, reason):
    verdict, tamper = _tampered(honest_ex1, edit)
    assert verdict.status == "fail" and verdict.score == 0
    assert verdict.messages[0].startswith("rejected: ") and reason in verdict.messages[0], verdict.messages[0]
    assert tamper == "rejected_evidence"


def test_bytes_with_no_writer_keep_the_grader_s_sentinel(honest_ex1):
    """Claiming that no instruction wrote the output: the grader sees its own NaNs, and says they changed."""
    def edit(ev):
        out = _first_launch(ev)["outputs"]["2"]
        out["writers"] = [[0, -1]]
    verdict, tamper = _tampered(honest_ex1, edit)
    assert "changed without any simulated instruction writing them" in verdict.messages[0]
    assert tamper == ""                     # a provenance failure, not a forgery


# ----------------------------------------------------------------------------- the screen
@pytest.mark.parametrize("source, key", [
    ("import os", "import os` is not allowed"), ("import subprocess as sp", "import subprocess"),
    ("from ctypes import CDLL", "ctypes"), ("import ascend_sim.engine.memory", "is not allowed"),
    ("from ascend_sim import engine", "is not allowed"),
    ("from ascend_sim.kernels.add_custom import add_custom", "is not allowed"),
    ("from ascend_sim.models.lenet_reference import lenet_forward_ref", "is not allowed"),
    ("import numpy as np\nnp.isclose = lambda *a, **k: True", "changes something"),
    ("import numpy as np\ndel np.allclose", "changes something"),
    ("z.buf.array[:] = 1", "`.buf`"), ("f = lambda: 0\ng = f.__globals__", "__globals__"),
    ("import numpy as np\no = np.f2py.os", "np.f2py"), ("exec('1')", "exec"), ("!ls /", "get_ipython"),
    ("%env", "get_ipython"), ("import ascend_sim\nascend_sim._private = 1", "private attribute"),
    ("class K:\n    def __init__(self):\n        self._x = 1", "private attribute"),
])
def test_screen_refuses(source, key):
    reasons = screen_source(source, checks_module="ascend_sim.course.labs.lab00_warmup")
    assert reasons and any(key in r for r in reasons), reasons
    assert all(r.startswith("line ") and "(rule: " in r for r in reasons)


@pytest.mark.parametrize("source", [
    "import numpy as np\nfrom ascend_sim import kernel, DataCopy\nx = np.zeros(3)\nx[0] = 1",
    "from ascend_sim.course.labs.lab00_warmup import AddTiling",
    "from ascend_sim.models.lenet_reference import load_lenet_weights",
    "class K:\n    def __init__(self):\n        self.x = 1",
    "def broken(:\n    pass",                     # a syntax error is left to the re-run (it names the line)
])
def test_screen_accepts(source):
    assert screen_source(source, checks_module="ascend_sim.course.labs.lab00_warmup") == []


def test_screen_escape_hatch_is_per_key():
    assert screen_source("import os\nos.getpid()", allow=("os",)) == []
    assert screen_source("import os\nos._exit(1)", allow=("os",))
    assert screen_source("import os\nos._exit(1)", allow=("os", "_exit")) == []


def test_every_solution_passes_the_screen():
    for lab in ("lab00_warmup", "lab01_lenet_ops"):
        for ex, sol in parse_solutions(ROOT / "solutions" / f"{lab}.py").items():
            for code in [sol.code, *(c for _, c in sol.wrong)]:
                assert screen_source(code, checks_module=f"ascend_sim.course.labs.{lab}") == [], (lab, ex)


# ----------------------------------------------------------------------------- gradebook
def _report(sub: str, sid: str = "", message: str = "") -> Report:
    return Report("lab", sub, "ab" * 32, [ExerciseResult("ex1", "fail", 0, 2, [message])], student_id=sid,
                  grader_error=message)


def test_gradebook_student_ids_bom_and_formula_safety(tmp_path):
    reports = [_report("subs/20231234_张伟_lab00.ipynb"), _report("subs/bob.ipynb", sid="s-42"),
               _report("subs/=cmd.ipynb", message="=HYPERLINK(\"x\")")]
    path = write_gradebook(reports, tmp_path / "g.csv", GradebookOptions(r"^(?P<id>\d+)_", bom=True))
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    assert [r["student_id"] for r in rows] == ["20231234", "bob", "'=cmd"]       # metadata ids only on opt-in
    opted = write_gradebook(reports, tmp_path / "m.csv", GradebookOptions(r"^(?P<id>\d+)_", metadata_id=True))
    assert [r["student_id"] for r in csv.DictReader(io.StringIO(opted.read_text()))] == ["20231234", "s-42", "'=cmd"]
    assert rows[0]["submission"] == "subs/20231234_张伟_lab00.ipynb"
    assert rows[2]["grader_error"] == "'=HYPERLINK(\"x\")"
    assert not write_gradebook(reports, tmp_path / "h.csv").read_bytes().startswith(b"\xef\xbb\xbf")


def test_safe_cell():
    assert [safe_cell(v) for v in ("=1+1", "+1", "-1", "@x", "\tx", "plain", 3)] == \
        ["'=1+1", "'+1", "'-1", "'@x", "'\tx", "plain", 3]


def test_submission_slots_keep_unicode_and_are_stable():
    paths = [Path("a/张伟.ipynb"), Path("b/张伟.ipynb"), Path("c/../x:y.ipynb"), Path("d/Zoë.ipynb"), Path("e/.ipynb")]
    assert submission_slots(paths) == ["张伟", "张伟-2", "x_y", "Zoë", "ipynb"]
    assert submission_slots(paths) == submission_slots(list(paths))


# ----------------------------------------------------------------------------- guard and wrong lab
def test_check_reports_a_hang_instead_of_hanging(monkeypatch, capsys):
    lab = Lab("unit")

    @lab.exercise("ex1", points=1)
    def _ex1(ctx):
        ctx.call(ctx.answer("f"))

    def f():
        while True:
            pass
    monkeypatch.setenv(TIMEOUT_ENV, "1")
    t = time.monotonic()
    lab.check("ex1", {"f": f})
    assert time.monotonic() - t < 10
    assert capsys.readouterr().out.startswith("[ex1] ERROR 0/1 points: the check was stopped after 1 s")


def test_wrong_lab_is_named():
    template = load_template(ROOT / "labs" / "lab00_warmup.ipynb")
    other = nbformat.read(ROOT / "labs" / "lab01_lenet_ops.ipynb", as_version=4)
    assert lab_mismatch(template, other).startswith("this notebook is lab01_lenet_ops, not lab00_warmup")
    assert lab_mismatch(template, copy.deepcopy(template.nb)) == ""
    stranger = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    assert "none of lab00_warmup's exercise cells" in lab_mismatch(template, stranger)
