"""Grade submissions: read (never write) the learner's file, rebuild, execute, report.

``grade_submission`` always returns a Report: an unreadable file, a sandbox that
will not start or a bug in the grader becomes ``grader_error`` with every
exercise ``not_run``, never an exception that loses the class's reports.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import re
import secrets
import time
import traceback
from pathlib import Path
from typing import Iterable

import nbformat

from ascend_sim.course.grading.check import CHECK_STATUSES, KEY_ENV, MIME, authentic
from ascend_sim.course.grading.execute import CellRun, Execution, Limits, execute
from ascend_sim.course.grading.notebook import SETUP, LabTemplate, Rebuilt, read_notebook, rebuild, role
from ascend_sim.course.grading.report import ExerciseResult, Report, versions, write_gradebook, write_report

__all__ = ["grade_submission", "grade_many", "exercise_results", "grade_notebook"]


def grade_submission(template: LabTemplate, submission: str | Path, *, limits: Limits = Limits(),
                     out_dir: str | Path | None = None) -> Report:
    """Grade one learner notebook file; write report.json, report.csv and executed.ipynb to ``out_dir``."""
    submission = Path(submission)
    started = time.monotonic()
    report = Report(template.name, str(submission), "", graded_at=_now(), versions=versions())
    executed = None
    try:
        data = submission.read_bytes()              # the only access to the learner's file
        report.sha256 = _sha(data)
        try:
            learner, report.warnings = read_notebook(data)
        except Exception as e:  # noqa: BLE001 - any parse failure is the submission's problem
            _all_not_run(report, template, f"the submission is not a readable notebook: {_short(e)}")
        else:
            executed = _grade_into(report, template, learner, limits)
    except Exception as e:  # noqa: BLE001 - a grader bug must still leave a report
        _all_not_run(report, template, f"internal grader error: {_short(e)}")
        report.warnings.append(traceback.format_exc(limit=5))
    report.seconds = round(time.monotonic() - started, 3)
    if out_dir is not None:
        write_report(report, out_dir)
        if executed is not None:
            nbformat.write(executed, Path(out_dir) / "executed.ipynb")
    return report


def grade_notebook(template: LabTemplate, learner: nbformat.NotebookNode, *, limits: Limits = Limits(),
                   name: str = "<in memory>") -> Report:
    """Grade an in-memory notebook (solution runs and tests): same pipeline, no files."""
    report = Report(template.name, name, _sha(nbformat.writes(learner).encode()), graded_at=_now(),
                    versions=versions())
    started = time.monotonic()
    _grade_into(report, template, learner, limits)
    report.seconds = round(time.monotonic() - started, 3)
    return report


def _grade_into(report: Report, template: LabTemplate, learner: nbformat.NotebookNode,
                limits: Limits) -> nbformat.NotebookNode:
    rebuilt = rebuild(template, learner)
    report.tampered = [{"cell_id": t.cell_id, "role": t.role, "kind": t.kind} for t in rebuilt.tampered]
    report.warnings += rebuilt.warnings
    key = secrets.token_hex(16)
    execution = execute(rebuilt.nb, rebuilt.run_ids, limits=limits, paths=[template.path.parent],
                        extra_env={KEY_ENV: key})
    report.exercises = exercise_results(template, rebuilt, execution, key.encode())
    report.tampered += [{"cell_id": f"{e.exercise}-check", "role": "check", "kind": "forged_result"}
                        for e in report.exercises if e.messages and e.messages[0] == FORGED]
    problems = [f"{c.id}: {execution.runs[c.id].status} {execution.runs[c.id].message}".strip()
                for c in rebuilt.nb.cells if role(c) == SETUP and c.id in execution.runs
                and execution.runs[c.id].status != "ok"]
    if execution.sandbox_error:
        report.grader_error = f"the grading sandbox failed: {execution.sandbox_error}"
    elif problems:
        report.grader_error = "a setup cell of the lab failed: " + "; ".join(problems)
    return execution.nb


FORGED = "the check result is not authentic: `check` was redefined or its output forged"


def exercise_results(template: LabTemplate, rebuilt: Rebuilt, execution: Execution,
                     key: bytes = b"") -> list[ExerciseResult]:
    """Per exercise: the check's own verdict, overridden by what happened to its cells.

    With ``key``, a result without a valid signature counts as an error (FORGED).
    """
    cells = {c.id: c for c in execution.nb.cells}
    out = []
    for spec in template.exercises:
        answer_runs = [execution.runs.get(cid, CellRun("not_run")) for cid in rebuilt.exercise_cells[spec.id]]
        check_run = execution.runs.get(spec.check_id, CellRun("not_run", "not run"))
        status, messages, hints = _check_verdict(spec.id, check_run, cells.get(spec.check_id), key)
        status, messages = _answer_override(status, messages, answer_runs)
        seconds = sum(r.seconds for r in answer_runs) + check_run.seconds
        out.append(ExerciseResult(spec.id, status, spec.points if status == "pass" else 0.0, spec.points,
                                  messages, hints, round(seconds, 3)))
    return out


def _check_verdict(ex: str, run: CellRun, cell, key: bytes) -> tuple[str, list[str], list[str]]:
    if run.status == "not_run":
        return "not_run", [run.message or "not run"], []
    if run.status == "timeout":
        return "timeout", [f"the check {run.message}: the answer probably loops forever"], []
    if run.status == "died":
        return "error", [run.message], []
    if run.status == "error":
        return "error", [f"the check cell raised {run.message}"], []
    payloads = [o["data"][MIME] for o in (cell.outputs if cell is not None else [])
                if o.get("output_type") == "display_data" and MIME in o.get("data", {})]
    payloads = [p for p in payloads if isinstance(p, dict) and p.get("exercise") == ex]
    if not payloads:
        return "error", ["the check produced no result"], []
    p = payloads[-1]
    if key and not authentic(p, key):
        return "error", [FORGED], []
    status = p.get("status") if p.get("status") in CHECK_STATUSES else "error"
    return status, [str(m) for m in p.get("messages", [])], [str(h) for h in p.get("hints", [])]


def _answer_override(status: str, messages: list[str], runs: list[CellRun]) -> tuple[str, list[str]]:
    """A timed-out or crashed answer cell decides; an answer cell that raised explains 'not attempted'."""
    for r in runs:
        if r.status == "timeout":
            return "timeout", [f"your answer cell {r.message}"]
        if r.status == "died":
            return "error", [f"your answer cell crashed the sandbox: {r.message}"]
    errors = [r for r in runs if r.status == "error"]
    if errors and status in ("not_attempted", "error"):
        return "error", [f"your answer cell raised {errors[0].message}"] + messages
    return status, messages


def grade_many(template: LabTemplate, submissions: Iterable[str | Path], out_dir: str | Path, *,
               limits: Limits = Limits(), progress=None) -> tuple[list[Report], Path]:
    """Grade each submission into ``out_dir/<name>/`` and write ``out_dir/gradebook.csv``."""
    out_dir = Path(out_dir)
    reports, used = [], set()
    for sub in submissions:
        report = grade_submission(template, sub, limits=limits, out_dir=out_dir / _slot(Path(sub), used))
        reports.append(report)
        if progress is not None:
            progress(report)
    return reports, write_gradebook(reports, out_dir / "gradebook.csv")


def _slot(path: Path, used: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", path.stem) or "submission"
    name, n = base, 2
    while name in used:
        name, n = f"{base}-{n}", n + 1
    used.add(name)
    return name


def _all_not_run(report: Report, template: LabTemplate, reason: str) -> None:
    report.grader_error = reason
    report.exercises = [ExerciseResult(e.id, "not_run", 0.0, e.points, [reason]) for e in template.exercises]


def _short(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".splitlines()[0][:300]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
