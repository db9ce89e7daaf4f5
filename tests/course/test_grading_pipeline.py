"""End to end on the fixture lab: `ascend-sim grade` over a class of submissions, and solution runs.

One module-scoped grading run covers: full marks, the blank lab, a forged check cell, a deleted check
cell, an endless loop, a memory hog, a crashing kernel, a syntax error and a file that is not a notebook.
"""
from __future__ import annotations

import copy
import csv
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from ascend_sim.tools import cli
from ascend_sim.course.grading.check import MIME
from ascend_sim.course.grading.execute import Limits
from ascend_sim.course.grading.labfiles import find_lab
from ascend_sim.course.grading.notebook import load_template
from ascend_sim.course.grading.solutions import parse_solutions, solve_lab, solved_notebook

FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_LAB = FIXTURES / "fixture_lab.ipynb"
LIMITS = ["--cell-timeout", "4", "--time-limit", "120", "--memory-mb", "1024"]


def _cell(nb, cid):
    return next(c for c in nb.cells if c.get("id") == cid)


def _submissions(folder: Path) -> dict[str, Path]:
    template = load_template(FIXTURE_LAB)
    solved = solved_notebook(template, parse_solutions(FIXTURES / "solutions" / "fixture_lab.py"))
    subs: dict[str, nbformat.NotebookNode] = {"solved": solved, "blank": copy.deepcopy(template.nb)}

    forged = copy.deepcopy(template.nb)              # blank answers, check cell edited to print a pass
    _cell(forged, "ex1-check").source = (
        'from IPython.display import display\nprint("[ex1] PASS 2/2 points")\n'
        f'display({{"{MIME}": {{"exercise": "ex1", "status": "pass", "score": 2, "max": 2}}}}, raw=True)')
    _cell(forged, "ex3-answer").source = (           # a fake result from an answer cell is ignored too
        f'display({{"{MIME}": {{"exercise": "ex3", "status": "pass", "score": 1, "max": 1}}}}, raw=True)')
    subs["forged"] = forged

    redefined = copy.deepcopy(template.nb)           # an answer cell replaces `check` with a fake
    _cell(redefined, "ex1-answer").source = (        # IPython's own `display`: no import for the screen to refuse
        "def check(ex):\n"
        f'    display({{"{MIME}": {{"exercise": ex, "status": "pass", "score": 2, "max": 2}}}}, raw=True)')
    subs["redefined"] = redefined

    deleted = copy.deepcopy(solved)
    deleted.cells.remove(_cell(deleted, "ex2-check"))
    subs["deleted"] = deleted

    loop = copy.deepcopy(solved)
    _cell(loop, "ex2-answer").source = "def relu_tiled(x, out, tile):\n    while True:\n        pass"
    subs["loop"] = loop

    hog = copy.deepcopy(solved)
    _cell(hog, "ex1-answer").source = "def add(x, y):\n    hoard = bytearray(4 * 2**30)\n    return x + y"
    subs["hog"] = hog

    crash = copy.deepcopy(solved)
    _cell(crash, "ex2-answer").source = "import os\ndef relu_tiled(x, out, tile):\n    os._exit(3)"
    subs["crash"] = crash

    syntax = copy.deepcopy(solved)
    _cell(syntax, "ex3-answer").source = "def count_positive(x)\n    return 2"
    subs["syntax"] = syntax

    paths = {}
    for name, nb in subs.items():
        paths[name] = folder / f"{name}.ipynb"
        nbformat.write(nb, paths[name])
    paths["garbage"] = folder / "garbage.ipynb"
    paths["garbage"].write_text("{ this is not json")
    return paths


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade every submission through the CLI; keep the file bytes from before."""
    root = tmp_path_factory.mktemp("class")
    subs_dir = root / "submissions"
    subs_dir.mkdir()
    paths = _submissions(subs_dir)
    before = {name: (p.read_bytes(), p.stat().st_mtime_ns) for name, p in paths.items()}
    out = root / "out"
    status = cli.main(["grade", str(FIXTURE_LAB), str(subs_dir), "--out", str(out), *LIMITS])
    reports = {name: json.loads((out / name / "report.json").read_text()) for name in paths}
    return {"status": status, "paths": paths, "before": before, "out": out, "reports": reports}


def _statuses(report: dict) -> dict[str, str]:
    return {e["exercise"]: e["status"] for e in report["exercises"]}


def test_solved_gets_full_marks_and_blank_gets_zero(graded):
    solved, blank = graded["reports"]["solved"], graded["reports"]["blank"]
    assert (solved["score"], solved["max_score"], solved["tampered"], solved["grader_error"]) == (5, 5, [], "")
    assert _statuses(blank) == {"ex1": "not_attempted", "ex2": "not_attempted", "ex3": "not_attempted"}
    assert (blank["score"], blank["grader_error"], blank["tampered"]) == (0, "", [])


def test_a_forged_check_cell_gets_no_credit_and_is_reported(graded):
    r = graded["reports"]["forged"]
    assert r["score"] == 0 and _statuses(r)["ex1"] == "not_attempted" and _statuses(r)["ex3"] == "not_attempted"
    assert r["tampered"] == [{"cell_id": "ex1-check", "role": "check", "kind": "edited"}]


def test_a_redefined_check_function_changes_nothing(graded):
    r = graded["reports"]["redefined"]          # the grader runs the lab's own checks in its re-run
    assert r["score"] == 0 and set(_statuses(r).values()) == {"not_attempted"}


def test_a_deleted_check_cell_is_restored(graded):
    r = graded["reports"]["deleted"]
    assert r["tampered"] == [{"cell_id": "ex2-check", "role": "check", "kind": "deleted"}]
    assert _statuses(r) == {"ex1": "pass", "ex2": "pass", "ex3": "pass"}
    executed = nbformat.read(graded["out"] / "deleted" / "executed.ipynb", as_version=4)
    assert any(MIME in o.get("data", {}) for o in _cell(executed, "ex2-check").outputs)


def test_an_endless_loop_times_out_and_the_rest_is_graded(graded):
    r = graded["reports"]["loop"]
    assert _statuses(r) == {"ex1": "pass", "ex2": "timeout", "ex3": "pass"}
    assert r["score"] == 3 and "did not finish within 4 s" in r["exercises"][1]["messages"][0]
    assert ("your code seems stuck in line 3 of cell ex2-answer `pass`" in r["exercises"][1]["messages"][0]
            or "your code seems stuck in line 2 of cell ex2-answer `while True:`" in r["exercises"][1]["messages"][0])


def test_a_memory_hog_costs_only_its_exercise(graded):
    r = graded["reports"]["hog"]
    assert _statuses(r) == {"ex1": "error", "ex2": "pass", "ex3": "pass"}
    assert "MemoryError" in r["exercises"][0]["messages"][0]


def test_a_crash_marks_the_rest_not_run(graded):
    r = graded["reports"]["crash"]
    assert _statuses(r) == {"ex1": "pass", "ex2": "error", "ex3": "not_run"}
    assert "kernel died" in r["exercises"][1]["messages"][0]
    assert r["score"] == 2 and r["grader_error"] == ""


def test_a_syntax_error_is_an_error_not_a_silent_zero(graded):
    r = graded["reports"]["syntax"]
    assert _statuses(r)["ex3"] == "error"
    assert r["exercises"][2]["messages"][0].startswith("your answer cell raised SyntaxError")


def test_an_unreadable_file_still_gets_a_report(graded):
    r = graded["reports"]["garbage"]
    assert r["grader_error"].startswith("the submission is not a readable notebook")
    assert set(_statuses(r).values()) == {"not_run"} and len(r["sha256"]) == 64
    assert graded["status"] == 1                    # the CLI flags grader errors in its exit status


def test_learner_files_are_never_written(graded):
    import hashlib
    for name, path in graded["paths"].items():
        data, mtime = graded["before"][name]
        assert path.read_bytes() == data and path.stat().st_mtime_ns == mtime
        assert graded["reports"][name]["sha256"] == hashlib.sha256(data).hexdigest()


def test_gradebook_lists_every_submission(graded):
    rows = list(csv.DictReader((graded["out"] / "gradebook.csv").open()))
    by = {Path(r["submission"]).stem: r for r in rows}
    assert set(by) == set(graded["paths"])
    assert (by["solved"]["score"], by["loop"]["ex2_status"], by["crash"]["ex3_status"]) == ("5", "timeout", "not_run")
    assert by["forged"]["tampered"] == "ex1-check:edited"
    per_ex = list(csv.DictReader((graded["out"] / "loop" / "report.csv").open()))
    assert [r["status"] for r in per_ex] == ["pass", "timeout", "pass"]


def test_fixture_solution_run_is_clean(tmp_path):
    outcome = solve_lab(find_lab(FIXTURE_LAB), limits=Limits(cell_timeout=10), out_dir=tmp_path)
    assert outcome.ok, outcome.all_problems()
    assert [r.name for r in outcome.runs] == ["solved", "blank", "ex1-wrong-1", "ex2-wrong-1", "ex3-wrong-1"]
    assert [{e.exercise: e.status for e in r.report.exercises} for r in outcome.runs[2:]] == [
        {"ex1": "fail", "ex2": "pass", "ex3": "pass"}, {"ex1": "pass", "ex2": "fail", "ex3": "pass"},
        {"ex1": "pass", "ex2": "pass", "ex3": "fail"}]
    assert (tmp_path / "solved" / "report.json").is_file()


def test_solve_reports_a_wrong_answer_that_passes(tmp_path, capsys):
    lab = tmp_path / "lab"
    (lab / "solutions").mkdir(parents=True)
    shutil.copy(FIXTURE_LAB, lab / "fixture_lab.ipynb")
    shutil.copy(FIXTURES / "fixture_checks.py", lab / "fixture_checks.py")
    text = (FIXTURES / "solutions" / "fixture_lab.py").read_text()
    text = text.replace("(x > 0) -> (x >= 0)", "(x > 0) -> (0 < x)")                # the "wrong" ex3 is right
    (lab / "solutions" / "fixture_lab.py").write_text(text)
    status = cli.main(["solve", str(lab / "fixture_lab.ipynb"), "--no-blank", "--out", str(tmp_path / "out"),
                       "--cell-timeout", "10"])
    out = capsys.readouterr().out
    assert status == 1 and "fixture_lab: FAILED" in out
    assert "PROBLEM ex3-wrong-1: ex3 (wrong answer 'counts zeros too [key: *]') graded pass, expected fail" in out

def _comparable(report: dict) -> dict:
    """A report without what legitimately differs between runs (times, folders)."""
    drop = {"graded_at", "seconds", "submission"}
    out = {k: v for k, v in report.items() if k not in drop}
    out["exercises"] = [{k: v for k, v in e.items() if k != "seconds"} for e in report["exercises"]]
    return out


def test_parallel_grading_gives_identical_reports(graded, tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    names = ["solved", "blank", "forged", "syntax", "garbage"]
    for name in names:
        shutil.copy(graded["paths"][name], subs / f"{name}.ipynb")
    cli.main(["grade", str(FIXTURE_LAB), str(subs), "--out", str(tmp_path / "out"), "--jobs", "2", *LIMITS])
    for name in names:
        parallel = json.loads((tmp_path / "out" / name / "report.json").read_text())
        assert _comparable(parallel) == _comparable(graded["reports"][name]), name
    rows = [r["student_id"] for r in csv.DictReader((tmp_path / "out" / "gradebook.csv").open())]
    assert rows == sorted(names)
