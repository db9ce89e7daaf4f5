"""Grading machinery without a kernel: checks, diagnoses, rebuild and tamper detection, reports, CLI wiring."""
from __future__ import annotations

import copy
import csv
import json
import os
import shutil
from pathlib import Path

import nbformat
import numpy as np
import pytest

from ascend_sim.engine.errors import AlignmentError
from ascend_sim.course.grading.check import MIME, STRICT_ENV, CheckResult, Lab
from ascend_sim.course.grading.clean import KEEP_TAG, strip, strip_problems
from ascend_sim.analysis.diagnose import diagnose, misplaced_segments
from ascend_sim.course.grading.labfiles import find_lab
from ascend_sim.course.grading.notebook import lab_problems, load_template, normalize_lab, read_notebook, rebuild
from ascend_sim.course.grading.report import ExerciseResult, Report, read_report, write_gradebook, write_report
from ascend_sim.course.grading.solutions import parse_solutions, solved_notebook, wrong_rounds
from ascend_sim.analysis.verify import compare

FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_LAB = FIXTURES / "fixture_lab.ipynb"


# ----------------------------------------------------------------------------- checks
def _lab() -> Lab:
    lab = Lab("unit")

    @lab.exercise("ex1", points=2, hints=["first", "second", "third"])
    def _ex1(ctx):
        f = ctx.answer("f")
        with ctx.case("x=3"):
            got = ctx.call(f, 3)
            if got != 9:
                ctx.fail(f"f(3) returned {got!r}, expected 9")
        ctx.note("all good")

    @lab.exercise("ex2", points=1)
    def _ex2(ctx):
        ctx.answer("g")
        raise KeyError("a bug in the check")

    return lab


def test_the_sandbox_runs_the_graders_own_package():
    import ascend_sim
    from ascend_sim.course.grading.execute import REPO_ROOT
    assert REPO_ROOT / "ascend_sim" == Path(ascend_sim.__file__).resolve().parent


def test_learner_line_skips_every_frame_of_the_package():
    from ascend_sim.course.grading.check import learner_line
    from ascend_sim.hw.dtypes import as_dtype
    with pytest.raises(TypeError) as e:
        as_dtype("no-such-dtype")                  # raises in numpy, called from ascend_sim/hw/dtypes.py
    assert learner_line(e.tb).endswith('`as_dtype("no-such-dtype")                  # raises in numpy, called '
                                       'from ascend_sim/hw/dtypes.py`')


def test_check_statuses():
    lab = _lab()
    assert lab.run("ex1", {}).status == "not_attempted"
    assert lab.run("ex1", {"f": ...}).status == "not_attempted"

    def stub(x):
        raise NotImplementedError
    assert lab.run("ex1", {"f": stub}).status == "not_attempted"
    ok = lab.run("ex1", {"f": lambda x: x * x})
    assert (ok.status, ok.score, ok.max, ok.messages) == ("pass", 2, 2, ["all good"])
    bad = lab.run("ex1", {"f": lambda x: x + 1})
    assert bad.status == "fail" and bad.score == 0
    assert bad.messages == ["case x=3: f(3) returned 4, expected 9"]
    err = lab.run("ex1", {"f": lambda x: x / 0})
    assert err.status == "error" and err.messages[0].startswith("ZeroDivisionError: division by zero (line ")
    crash = lab.run("ex2", {"g": 1})
    assert crash.status == "error" and "the check could not run your answer: KeyError" in crash.messages[0]


def test_kernel_errors_become_failures_with_their_line():
    lab = Lab("unit")

    @lab.exercise("ex1", points=1)
    def _ex1(ctx):
        ctx.call(ctx.answer("k"))

    def k():
        raise AlignmentError("510 bytes is not a multiple of 32", fix="use DataCopyPad", site=("cell.py", 12))
    r = lab.run("ex1", {"k": k})
    assert r.status == "fail"
    assert r.messages[0] == ("[memcheck] AlignmentError at line 12: 510 bytes is not a multiple of 32\n"
                             "Fix: use DataCopyPad")
    assert r.line() == ("[ex1] FAIL 0/1 points: [memcheck] AlignmentError at line 12: 510 bytes is not a multiple "
                        "of 32 Fix: use DataCopyPad")
    assert r.details()[0].startswith("Hint 1: DataCopy moves whole 32-byte DataBlocks"), "the Fix is in the line"


def test_hints_are_revealed_one_per_failure_up_to_three():
    lab = _lab()
    wrong = {"f": lambda x: 0}
    assert [len(lab.run("ex1", wrong).hints) for _ in range(5)] == [1, 2, 3, 3, 3]
    assert lab.run("ex1", wrong).hints == ["first", "second", "third"]
    with pytest.raises(ValueError, match="at most 3 hints"):
        lab.exercise("ex9", points=1, hints=["a", "b", "c", "d"])
    with pytest.raises(ValueError, match="registered twice"):
        lab.exercise("ex1", points=1)(lambda ctx: None)
    with pytest.raises(KeyError, match="known: ex1, ex2"):
        lab.run("ex7", {})


def test_check_prints_one_line_and_strict_mode_raises(capsys, monkeypatch):
    lab = _lab()
    f = lambda x: x * x  # noqa: E731 - the learner's answer, looked up in the caller's globals
    lab.check("ex1", {"f": f})
    assert capsys.readouterr().out == "[ex1] PASS 2/2 points: all good\n"
    monkeypatch.setenv(STRICT_ENV, "1")
    with pytest.raises(AssertionError, match="did not pass"):
        lab.check("ex1", {})
    assert capsys.readouterr().out.startswith("[ex1] not attempted (0/2 points): `f` is not defined")


def test_long_messages_are_cut_from_the_line_but_kept_in_the_details():
    r = CheckResult("unit", "ex1", "fail", 0, 1, ["word " * 100 + "\nFix: something"])
    assert len(r.line()) <= 202 and r.line().endswith(" … Fix: something"), "the rule is cut, never the Fix"
    assert r.details() == [r.messages[0]]
    long_fix = CheckResult("unit", "ex1", "fail", 0, 1, ["rule " * 30 + "\nFix: " + "do this " * 30])
    assert long_fix.line().endswith("Fix: " + ("do this " * 30).strip()) and " … " in long_fix.line()
    assert CheckResult("unit", "ex1", "pass", 1, 1, [""]).line() == "[ex1] PASS 1/1 points"


def test_bundle_carries_the_machine_readable_result():
    r = _lab().run("ex1", {"f": lambda x: 1})
    b = r.bundle()
    assert b[MIME] == {"schema": 1, "lab": "unit", "exercise": "ex1", "status": "fail", "score": 0, "max": 2,
                       "messages": ["case x=3: f(3) returned 1, expected 9"], "hints": ["first"]}
    assert b["text/plain"] == "Hint 1: first\n(another run, or hint('ex1'), shows the next hint)"
    assert "Hint 1: first" in b["text/html"]
    json.dumps(b)


# ----------------------------------------------------------------------------- diagnoses
def test_diagnose_names_the_mistake():
    g = np.arange(64, dtype=np.float32)
    tail = g.copy()
    tail[60:] = np.nan
    msg = diagnose(tail, g, compare(tail, g), sentinel=np.nan, segment=32, tile=16)
    assert msg.startswith("elements 60..63 of the output were never written: the tail is not handled")
    block = g.copy()
    block[32:] = np.nan
    assert "block 1 wrote nothing in its own range" in diagnose(block, g, compare(block, g), sentinel=np.nan,
                                                                segment=32)
    skipped = g.copy()
    skipped[16:32] = np.nan
    assert "the last tile of a block was skipped" in diagnose(skipped, g, compare(skipped, g), sentinel=np.nan,
                                                              segment=32, tile=16)
    nothing = np.full(64, np.nan, np.float32)
    assert "nothing was written" in diagnose(nothing, g, compare(nothing, g), sentinel=np.nan)
    moved = np.concatenate([g[:32], g[:32]])
    assert misplaced_segments(moved, g, 32) == [(1, 0)]
    assert "block 1's range of the output holds block 0's results" in diagnose(moved, g, compare(moved, g),
                                                                              segment=32)
    noisy = g + 1
    assert diagnose(noisy, g, compare(noisy, g)).startswith("64 of 64 output elements differ beyond the tolerance")


# ----------------------------------------------------------------------------- templates and rebuild
@pytest.fixture()
def template():
    return load_template(FIXTURE_LAB)


def _cell(nb, cid):
    return next(c for c in nb.cells if c.get("id") == cid)


def test_fixture_template_is_valid(template):
    assert template.name == "fixture_lab" and template.checks == "fixture_checks"
    assert [(e.id, e.points) for e in template.exercises] == [("ex1", 2), ("ex2", 2), ("ex3", 1)]
    assert template.max_score == 5


def test_lab_problems_catch_broken_conventions(template):
    nb = copy.deepcopy(template.nb)
    _cell(nb, "ex1-check").source = "check('ex1')  # edited"
    _cell(nb, "ex2-check").metadata.course.points = 5
    nb.cells.remove(_cell(nb, "ex3-check"))
    problems = lab_problems(nb)
    assert 'ex1-check: source must be exactly check("ex1")' in problems
    assert "ex2: answer and check cells disagree on points" in problems
    assert "ex3 has an answer cell but no check cell" in problems
    nb.metadata.course.pop("checks")
    assert "notebook metadata course.checks is missing" in lab_problems(nb)


def test_normalize_lab_sets_ids_tags_and_locks(template):
    nb = copy.deepcopy(template.nb)
    for i, c in enumerate(nb.cells):
        c["id"] = f"random-{i}"
        c.metadata.pop("tags", None)
        c.metadata.pop("editable", None)
    normalize_lab(nb)
    assert lab_problems(nb) == []
    check = _cell(nb, "ex2-check")
    assert check.metadata.tags == ["check"] and check.metadata.editable is False
    assert _cell(nb, "ex2-answer").metadata.tags == ["exercise"]


def test_rebuild_takes_only_answers_and_restores_locked_cells(template):
    learner = solved_notebook(template, parse_solutions(FIXTURES / "solutions" / "fixture_lab.py"))
    _cell(learner, "ex1-check").source = 'print("[ex1] PASS 2/2 points")'
    learner.cells.remove(_cell(learner, "ex2-check"))
    _cell(learner, "setup").cell_type = "markdown"
    _cell(learner, "md-2").source = "my notes"                         # markdown edits are not tampering
    at = learner.cells.index(_cell(learner, "ex3-answer")) + 1
    learner.cells.insert(at, nbformat.v4.new_code_cell("helper = 1", id="mine"))
    learner.cells.insert(0, nbformat.v4.new_code_cell("import os", id="early"))
    out = rebuild(template, learner)
    kinds = {(t.cell_id, t.kind) for t in out.tampered}
    assert kinds == {("ex1-check", "edited"), ("ex2-check", "deleted"), ("setup", "type_changed")}
    for cid in ("ex1-check", "ex2-check", "setup", "md-2"):
        assert _cell(out.nb, cid).source == _cell(template.nb, cid).source
    assert _cell(out.nb, "ex1-answer").source == _cell(learner, "ex1-answer").source
    assert out.exercise_cells["ex3"] == ["ex3-answer", "ex3-added-mine"]
    assert "ignored 1 code cell(s) added outside an exercise" in out.warnings[0]
    assert "try-ex2" not in out.run_ids and "ex3-added-mine" in out.run_ids
    assert [c.id for c in out.nb.cells if c.id in out.run_ids] == out.run_ids


def test_rebuild_matches_cells_without_ids_by_metadata(template):
    learner = copy.deepcopy(template.nb)
    learner.nbformat_minor = 4
    for c in learner.cells:
        del c["id"]
    _cell_src = next(c for c in learner.cells if c.metadata.get("course", {}).get("ex") == "ex1"
                     and c.metadata.course.role == "answer")
    _cell_src.source = "def add(x, y):\n    return x + y"
    out = rebuild(template, learner)
    assert out.tampered == []
    assert _cell(out.nb, "ex1-answer").source == "def add(x, y):\n    return x + y"


def test_duplicate_ids_are_renamed_and_reported(template):
    data = json.loads(nbformat.writes(template.nb))
    data["cells"].insert(5, copy.deepcopy(data["cells"][3]))          # a copy of ex1-answer after ex1-check
    learner, warnings = read_notebook(json.dumps(data))
    assert any("Non-unique cell id 'ex1-answer'" in w for w in warnings)
    out = rebuild(template, learner)
    assert out.exercise_cells["ex1"] == ["ex1-answer"] and "ignored 1 code cell(s)" in out.warnings[0]


def test_missing_answer_cell_is_graded_as_the_stub(template):
    learner = copy.deepcopy(template.nb)
    learner.cells.remove(_cell(learner, "ex2-answer"))
    out = rebuild(template, learner)
    assert _cell(out.nb, "ex2-answer").source == _cell(template.nb, "ex2-answer").source
    assert any("ex2-answer is missing" in w for w in out.warnings)


# ----------------------------------------------------------------------------- solutions
def test_parse_solutions(tmp_path, template):
    sols = parse_solutions(FIXTURES / "solutions" / "fixture_lab.py")
    assert sorted(sols) == ["ex1", "ex2", "ex3"]
    assert sols["ex2"].wrong[0][0] == "forgets the tail [key: tail]"
    assert sols["ex1"].code.startswith("def add(x, y):")
    rounds = wrong_rounds(template, sols)
    assert [(name, ex, label) for name, ex, label, _ in rounds] == [
        ("ex1-wrong-1", "ex1", "subtracts [key: values]"), ("ex2-wrong-1", "ex2", "forgets the tail [key: tail]"),
        ("ex3-wrong-1", "ex3", "counts zeros too [key: *]")]
    nb = rounds[0][3]                                   # one wrong answer, the solutions elsewhere
    assert "x - y" in _cell(nb, "ex1-answer").source and _cell(nb, "ex2-answer").source == sols["ex2"].code.rstrip()
    bad = tmp_path / "bad.py"
    bad.write_text("# %% ex1 right\nx = 1\n")
    with pytest.raises(ValueError, match="bad.py:1: a block marker is"):
        parse_solutions(bad)


# ----------------------------------------------------------------------------- reports
def _report(name: str, statuses: list[str]) -> Report:
    return Report("fixture_lab", name, "0" * 64,
                  [ExerciseResult(f"ex{i + 1}", s, 2 if s == "pass" else 0, 2, [f"{s} message"])
                   for i, s in enumerate(statuses)],
                  tampered=[{"cell_id": "ex2-check", "role": "check", "kind": "edited"}])


def test_report_files_round_trip(tmp_path):
    r = _report("alice.ipynb", ["pass", "fail"])
    jpath, cpath = write_report(r, tmp_path / "alice")
    assert read_report(jpath) == r
    data = json.loads(jpath.read_text())
    assert data["schema_version"] == 1 and data["score"] == 2 and data["max_score"] == 4
    rows = list(csv.DictReader(cpath.open()))
    assert [(x["exercise"], x["status"], x["check_tampered"]) for x in rows] == [("ex1", "pass", "no"),
                                                                                  ("ex2", "fail", "yes")]
    with pytest.raises(ValueError, match="unknown exercise status"):
        ExerciseResult("ex1", "passed", 0, 1)


def test_gradebook_lists_every_submission(tmp_path):
    path = write_gradebook([_report("a.ipynb", ["pass", "pass"]), _report("b.ipynb", ["timeout", "not_run"])],
                           tmp_path / "gradebook.csv")
    rows = list(csv.DictReader(path.open()))
    assert [(r["submission"], r["score"], r["ex1_status"], r["ex2_status"]) for r in rows] == [
        ("a.ipynb", "4", "pass", "pass"), ("b.ipynb", "0", "timeout", "not_run")]
    assert rows[0]["tampered"] == "ex2-check:edited"


# ----------------------------------------------------------------------------- files, stripping, CLI
def test_find_lab(tmp_path):
    assert find_lab(FIXTURE_LAB).solutions == FIXTURES / "solutions" / "fixture_lab.py"
    (tmp_path / "labs").mkdir()
    for name in ("lab01_vec", "lab02_cube", "lab02b_more"):
        (tmp_path / "labs" / f"{name}.ipynb").write_text("{}")
    assert find_lab("lab01", tmp_path).name == "lab01_vec"
    assert find_lab("lab02", tmp_path).name == "lab02_cube"          # lab02_..., not lab02b_...
    assert find_lab("lab02b", tmp_path).name == "lab02b_more"
    assert find_lab("lab02_cube", tmp_path).solutions == tmp_path / "solutions" / "lab02_cube.py"
    with pytest.raises(FileNotFoundError, match="is ambiguous"):
        find_lab("lab0", tmp_path)
    with pytest.raises(FileNotFoundError, match="matches no lab; labs: lab01_vec, lab02_cube, lab02b_more"):
        find_lab("lab09", tmp_path)


def test_strip_keeps_only_tagged_outputs():
    nb = nbformat.v4.new_notebook(metadata={"widgets": {"state": {}}})
    out = nbformat.v4.new_output("stream", name="stdout", text="hi\n")
    nb.cells = [nbformat.v4.new_code_cell("1", id="a", outputs=[out], execution_count=1),
                nbformat.v4.new_code_cell("2", id="b", outputs=[out], execution_count=2,
                                          metadata={"tags": [KEEP_TAG]}),
                nbformat.v4.new_code_cell("3", id="c",
                                          metadata={"execution": {"iopub.status.busy": "2024-01-01T00:00:00Z"}})]
    assert strip_problems(nb) == ["notebook metadata holds widget state ('widgets')",
                                  "cell a has outputs (tag it 'keep_output' to keep them)",
                                  "cell a has an execution count", "cell c has volatile metadata: execution"]
    strip(nb)
    assert strip_problems(nb) == []
    assert nb.cells[1].outputs and not nb.cells[0].outputs


def test_cli_registers_one_function_per_subcommand(capsys):
    from ascend_sim.tools import cli
    parser = cli.build_parser()
    assert {"grade", "solve", "clean"} <= set(cli.COMMANDS)
    args = parser.parse_args(["grade", "lab00", "a.ipynb", "b.ipynb", "--cell-timeout", "5"])
    assert args._fn is cli.grade and args.submissions == ["a.ipynb", "b.ipynb"] and args.cell_timeout == 5
    with pytest.raises(ValueError, match="defined twice"):
        cli.command("grade", help="again")(lambda args: 0)
    assert cli.main([]) == 2
    assert cli.main(["solve", "no_such_lab", "--root", str(FIXTURES)]) == 2
    assert "matches no lab" in capsys.readouterr().err


def test_cli_clean_check_reports_dirty_notebooks(tmp_path, capsys):
    from ascend_sim.tools import cli
    nb = load_template(FIXTURE_LAB).nb
    _cell(nb, "ex1-answer").outputs = [nbformat.v4.new_output("stream", name="stdout", text="x\n")]
    path = tmp_path / "dirty.ipynb"
    nbformat.write(nb, path)
    shutil.copy(FIXTURES / "fixture_checks.py", tmp_path)         # clean derives the exercise cells from it
    before = path.read_bytes()
    assert cli.main(["clean", "--check", str(path)]) == 1
    assert "cell ex1-answer has outputs" in capsys.readouterr().out
    assert path.read_bytes() == before
    assert cli.main(["clean", str(path)]) == 0
    assert cli.main(["clean", "--check", str(path)]) == 0


def test_the_grading_kernel_imports_this_checkout_of_ascend_sim(tmp_path):
    from ascend_sim.course.grading.execute import Limits, kernel_env
    root = Path(kernel_env(str(tmp_path), Limits())["PYTHONPATH"].split(os.pathsep)[-1])
    assert root == Path(__file__).resolve().parents[2] and (root / "ascend_sim" / "__init__.py").is_file()
