"""Grader III, part 3 and 4: a class's results cannot be damaged, and lab versions are graded as released.

Reserved folder names, student ids (pattern, warnings, metadata only on opt-in), one output cap, escaped file
names, SIGTERM leaving no process behind and ``--resume`` finishing the run; a submission of an earlier
release graded against what that release asked.
"""
from __future__ import annotations

import copy
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from ascend_sim.course.grading.grade import submission_slots
from ascend_sim.course.grading.notebook import load_template
from ascend_sim.course.grading.report import (ExerciseResult, GradebookOptions, Report, id_problems, printable)
from ascend_sim.course.grading.sandbox import UID_BASE, isolation_mode
from ascend_sim.course.grading.solutions import parse_solutions, solved_notebook
from ascend_sim.tools import cli

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_LAB = FIXTURES / "fixture_lab.ipynb"
LIMITS = ["--cell-timeout", "20", "--time-limit", "120", "--memory-mb", "1536"]
ROOTED = pytest.mark.skipif(isolation_mode() != "root", reason="the per-submission uid needs root and unshare")


def _solved() -> nbformat.NotebookNode:
    return solved_notebook(load_template(FIXTURE_LAB), parse_solutions(FIXTURES / "solutions" / "fixture_lab.py"))


def _cell(nb, cid):
    return next(c for c in nb.cells if c.get("id") == cid)


# ----------------------------------------------------------------------------- folder names
def test_a_submission_named_like_the_gradebook_cannot_take_its_place(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(load_template(FIXTURE_LAB).nb, subs / "gradebook.csv.ipynb")
    nbformat.write(load_template(FIXTURE_LAB).nb, subs / "GRADEBOOK.CSV.ipynb")
    assert submission_slots(sorted(subs.iterdir())) == ["GRADEBOOK.CSV-submission", "gradebook.csv-submission-2"]
    status = cli.main(["grade", str(FIXTURE_LAB), str(subs), "--out", str(tmp_path / "out"), *LIMITS])
    assert status == 0 and (tmp_path / "out" / "gradebook.csv").is_file()
    assert (tmp_path / "out" / "gradebook.csv-submission-2" / "report.json").is_file()


# ----------------------------------------------------------------------------- student ids
def _report(name: str, sid: str = "") -> Report:
    return Report("lab", f"subs/{name}", "ab" * 32, [ExerciseResult("ex1", "pass", 2, 2)], student_id=sid)


def test_unmatched_files_and_duplicate_ids_are_listed():
    reports = [_report("2023001_a.ipynb"), _report("late.ipynb", sid="2023001"), _report("2023001_b.ipynb"),
               _report("x\nforged.ipynb")]
    pattern = GradebookOptions(r"^(?P<id>\d+)_")
    problems = id_problems(reports, pattern)
    assert problems == [
        "--id-pattern does not match late.ipynb: its student id 'late' comes from its file name",
        "--id-pattern does not match x\\nforged.ipynb: its student id 'x\\\\nforged' comes from its file name",
        "student id '2023001' is given to 2 submissions: 2023001_a.ipynb, 2023001_b.ipynb"]
    opted = id_problems(reports, GradebookOptions(r"^(?P<id>\d+)_", metadata_id=True))
    assert "its student id '2023001' comes from its notebook metadata" in opted[0]
    assert "is given to 3 submissions" in opted[-1]        # the metadata id collides with a real one


def test_the_cli_warns_loudly_about_ids(tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    blank = copy.deepcopy(load_template(FIXTURE_LAB).nb)
    blank.metadata["course"]["student_id"] = "2023001"              # the learner claims someone else's id
    nbformat.write(blank, subs / "2023001_alice.ipynb")
    nbformat.write(blank, subs / "mallory.ipynb")
    cli.main(["grade", str(FIXTURE_LAB), str(subs), "--out", str(tmp_path / "out"), "--id-pattern", r"^(\d+)_",
              *LIMITS])
    err = capsys.readouterr().err
    assert "WARNING: --id-pattern does not match mallory.ipynb" in err and "1 student-id problem(s)" in err
    rows = [r["student_id"] for r in csv.DictReader((tmp_path / "out" / "gradebook.csv").open())]
    assert rows == ["2023001", "mallory"]                            # no second row for the victim


# ----------------------------------------------------------------------------- output and names
def test_one_output_cap_for_every_kind_of_output(tmp_path):
    from ascend_sim.course.grading.check import MIME
    subs = tmp_path / "subs"
    subs.mkdir()
    nb = _solved()
    _cell(nb, "ex3-answer").source += (
        "\nprint('x' * 50_000_000)\n"
        f"display({{{MIME!r}: {{'blob': 'y' * 50_000_000}}, 'text/plain': 'z' * 50_000_000}}, raw=True)\n")
    nbformat.write(nb, subs / "flood.ipynb")
    cli.main(["grade", str(FIXTURE_LAB), str(subs), "--out", str(tmp_path / "out"), *LIMITS])
    report = json.loads((tmp_path / "out" / "flood" / "report.json").read_text())
    assert report["score"] == 5
    assert (tmp_path / "out" / "flood" / "executed.ipynb").stat().st_size < 1_000_000
    assert "output beyond 100,000 characters dropped" in (tmp_path / "out" / "flood" / "executed.ipynb").read_text()


def test_file_names_cannot_forge_lines_of_the_summary(tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    evil = "zz\nvictim.ipynb: full marks (ex1 pass, ex2 pass, ex3 pass)\x1b[2K"
    nbformat.write(load_template(FIXTURE_LAB).nb, subs / f"{evil}.ipynb")
    cli.main(["grade", str(FIXTURE_LAB), str(subs), "--out", str(tmp_path / "out"), *LIMITS])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("zz\\nvictim.ipynb: full marks") and "\\x1b[2K" in lines[0]
    assert lines[0].endswith("0/5 (ex1 not_attempted, ex2 not_attempted, ex3 not_attempted)")
    book = (tmp_path / "out" / "gradebook.csv").read_text()
    assert "\\n" in book and "\x1b" not in book and len(book.splitlines()) == 2
    assert printable("张伟\u202e.ipynb") == "张伟\\u202e.ipynb"


# ----------------------------------------------------------------------------- SIGTERM and --resume
def _runner_pids(grader_pid: int) -> list[int]:
    """Processes of the sandbox users of the grader with this pid (sandbox.sandbox_for's uid range)."""
    base = UID_BASE + (grader_pid % 10_000) * 100_000
    out = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        uid = next((int(ln.split()[1]) for ln in status.splitlines() if ln.startswith("Uid:")), 0)
        if base <= uid < base + 100_000 and "State:\tZ" not in status:
            out.append(int(entry))
    return out


def _children_of(pid: int) -> list[int]:
    out = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(entry))
    return out


@ROOTED
def test_sigterm_leaves_no_process_behind_and_resume_finishes(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    solved = _solved()
    slow = copy.deepcopy(solved)
    _cell(slow, "ex2-answer").source = "def relu_tiled(x, out, tile):\n    while True:\n        pass"
    names = [f"s{i}" for i in range(6)]
    for i, name in enumerate(names):
        nbformat.write(solved if i < 2 else slow, subs / f"{name}.ipynb")
    cmd = [sys.executable, "-m", "ascend_sim", "grade", str(FIXTURE_LAB), str(subs), "--out", str(out),
           "--jobs", "2", "--cell-timeout", "30", "--time-limit", "120"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300          # generous: a loaded 2-core machine grades the two solved ones slowly
    while not (out / "s1" / "report.json").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    while not _runner_pids(proc.pid) and time.monotonic() < deadline:     # a re-run of a slow one is going
        time.sleep(0.2)
    assert _runner_pids(proc.pid), "no re-run was running when the signal came: the test tested nothing"
    workers = _children_of(proc.pid)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "run the same command with --resume" in err
    time.sleep(0.5)
    assert _runner_pids(proc.pid) == [] and not [w for w in workers if Path(f"/proc/{w}").exists()
                                                  and "State:\tZ" not in Path(f"/proc/{w}/status").read_text()]
    done = {n: (out / n / "report.json").stat().st_mtime_ns for n in names if (out / n / "report.json").exists()}
    assert "s0" in done and "s1" in done and len(done) < len(names)
    status = cli.main(["grade", str(FIXTURE_LAB), str(subs), "--out", str(out), "--resume", "--cell-timeout", "2",
                       "--time-limit", "60"])
    assert status == 0
    assert all((out / n / "report.json").stat().st_mtime_ns == t for n, t in done.items())   # not graded again
    rows = {r["submission"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    assert len(rows) == len(names) and rows[str(subs / "s0.ipynb")]["score"] == "5"
    assert rows[str(subs / "s5.ipynb")]["ex2_status"] == "timeout"


# ----------------------------------------------------------------------------- versions
def _versioned_lab(folder: Path) -> Path:
    """The fixture lab as version 1 with ex1, ex2 only, released; then edited into version 2 (setup, ex3)."""
    folder.mkdir()
    shutil.copy(FIXTURES / "fixture_checks.py", folder / "fixture_checks.py")
    full = nbformat.read(FIXTURE_LAB, as_version=4)
    v1 = copy.deepcopy(full)
    v1.metadata["course"]["version"] = "1"
    v1.cells = [c for c in v1.cells if "ex3" not in str(c.get("id")) and c.get("id") != "md-4"]
    path = folder / "fixture_lab.ipynb"
    nbformat.write(v1, path)
    assert cli.main(["release", str(path)]) == 0
    full.metadata["course"]["version"] = "2"
    _cell(full, "setup").source += "\nSCALE = 1.0      # added in version 2"
    nbformat.write(full, path)
    return path


def test_an_earlier_version_is_graded_against_what_it_asked(tmp_path):
    lab = _versioned_lab(tmp_path / "lab")
    learner = solved_notebook(load_template(lab.parent / "releases" / "fixture_lab@1.ipynb"),
                              parse_solutions(FIXTURES / "solutions" / "fixture_lab.py"))
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(learner, subs / "v1.ipynb")
    cli.main(["grade", str(lab), str(subs), "--out", str(tmp_path / "out"), *LIMITS])
    r = json.loads((tmp_path / "out" / "v1" / "report.json").read_text())
    assert (r["score"], r["max_score"], r["tampered"], r["lab_version"]) == (4, 4, [], "1")
    assert any("graded against what version 1 asked" in w for w in r["warnings"])
    (lab.parent / "releases" / "fixture_lab@1.ipynb").unlink()              # without the release: said so
    cli.main(["grade", str(lab), str(subs), "--out", str(tmp_path / "out2"), *LIMITS])
    r = json.loads((tmp_path / "out2" / "v1" / "report.json").read_text())
    assert {"cell_id": "setup", "role": "setup", "kind": "edited"} in r["tampered"]
    assert any("no release releases/fixture_lab@1.ipynb exists" in w for w in r["warnings"])


def test_a_release_cannot_be_overwritten_by_a_different_lab(tmp_path):
    lab = _versioned_lab(tmp_path / "lab")
    nb = nbformat.read(lab, as_version=4)
    nb.metadata["course"]["version"] = "1"                                 # forgot to raise the version
    nbformat.write(nb, lab)
    with pytest.raises(FileExistsError, match="raise course.version"):
        from ascend_sim.course.grading.releases import release
        release(lab)
