"""Grade submissions: read (never write) the learner's file, rebuild, execute, report.

``grade_submission`` always returns a Report: an unreadable file, a sandbox that
will not start or a bug in the grader becomes ``grader_error`` with every
exercise ``not_run``, never an exception that loses the class's reports.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import os
import re
import signal
import sys
import threading
import time
import traceback
import unicodedata
from pathlib import Path
from typing import Iterable

import nbformat

from ascend_sim.course.grading.check import EVIDENCE_ENV, MIME, TIMEOUT_ENV, Lab
from ascend_sim.course.grading.distribute import DaskTarget, check_course, grade_on_dask
from ascend_sim.course.grading.execute import REPO_ROOT, CellRun, Execution, Limits
from ascend_sim.course.grading.judge import judge, load_lab
from ascend_sim.course.grading.notebook import (SETUP, LabTemplate, Rebuilt, lab_mismatch, read_notebook, rebuild,
                                                role, student_id)
from ascend_sim.course.grading.report import (GRADEBOOK, RESERVED_NAMES, ExerciseResult, GradebookOptions, Report,
                                              atomic_write, fmt_points, read_report, versions, write_gradebook,
                                              write_report)
from ascend_sim.course.grading.sandbox import Sandbox, sandbox_for
from ascend_sim.course.grading.shards import Shard, write_manifest
from ascend_sim.course.grading.releases import template_for, version_of
from ascend_sim.course.grading.rerun import answer_steps, kill_active, language_of, rerun
from ascend_sim.course.grading.screen import import_bindings, screen_source

__all__ = ["grade_submission", "grade_bytes", "grade_on_worker", "write_outputs", "grade_many", "exercise_results",
           "grade_notebook", "submission_slots", "failed_report", "sandbox_keep", "GradingInterrupted"]


def grade_submission(template: LabTemplate, submission: str | Path, *, limits: Limits = Limits(),
                     out_dir: str | Path | None = None, sandbox: Sandbox | None = None) -> Report:
    """Grade one learner notebook file; write report.json, report.csv and executed.ipynb to ``out_dir``.

    The files are written by the grader alone, atomically, after the learner's processes are gone.
    """
    report, executed = grade_bytes(template, submission, None, limits=limits, sandbox=sandbox)
    if out_dir is not None:
        write_outputs(report, executed, out_dir)
    return report


def grade_bytes(template: LabTemplate, submission: str | Path, data: bytes | None, *, limits: Limits = Limits(),
                sandbox: Sandbox | None = None) -> tuple[Report, str | None]:
    """Grade one submission whose bytes are ``data`` (None: read the file ``submission`` once, here), writing
    nothing: the report and the executed notebook's text (None when nothing ran). A Dask worker runs this on
    bytes the grader read (``distribute.py``); ``grade_submission`` on the file."""
    submission = Path(submission)
    started = time.monotonic()
    report = Report(template.name, str(submission), "", graded_at=_now(), versions=versions())
    executed = None
    try:
        if data is None:
            data = submission.read_bytes()          # the only access to the learner's file
        report.sha256 = _sha(data)
        try:
            learner, report.warnings = read_notebook(data)
        except Exception as e:  # noqa: BLE001 - any parse failure is the submission's problem
            _all_not_run(report, template, f"the submission is not a readable notebook: {_short(e)}")
        else:
            report.student_id = student_id(learner)
            executed = _grade_into(report, template, learner, limits,
                                   sandbox or sandbox_for(0, sandbox_keep(template)))
    except Exception as e:  # noqa: BLE001 - a grader bug must still leave a report
        _all_not_run(report, template, f"internal grader error: {_short(e)}")
        report.warnings.append(traceback.format_exc(limit=5))
    report.seconds = round(time.monotonic() - started, 3)
    return report, (nbformat.writes(executed) if executed is not None else None)


def grade_on_worker(template: LabTemplate, submission: str, data: bytes, limits: Limits, index: int,
                    fingerprint: str) -> tuple[Report, str | None]:
    """On a Dask worker (``distribute.py``): grade one submission's bytes as ``--jobs`` does, confined by this
    machine's own sandbox, once the worker has shown it holds the grader's course."""
    check_course(template, fingerprint)
    return grade_bytes(template, submission, data, limits=limits, sandbox=sandbox_for(index, sandbox_keep(template)))


def write_outputs(report: Report, executed: str | None, out_dir: str | Path) -> None:
    """report.json, report.csv and (when the re-run ran) executed.ipynb into ``out_dir``, each atomically."""
    write_report(report, out_dir)
    if executed is not None:
        atomic_write(Path(out_dir) / "executed.ipynb", executed.encode("utf-8"))


def grade_notebook(template: LabTemplate, learner: nbformat.NotebookNode, *, limits: Limits = Limits(),
                   name: str = "<in memory>") -> Report:
    """Grade an in-memory notebook (solution runs and tests): same pipeline, no files."""
    report = Report(template.name, name, _sha(nbformat.writes(learner).encode()), graded_at=_now(),
                    versions=versions())
    started = time.monotonic()
    _grade_into(report, template, learner, limits, sandbox_for(0, sandbox_keep(template)))
    report.seconds = round(time.monotonic() - started, 3)
    return report


def _grade_into(report: Report, template: LabTemplate, learner: nbformat.NotebookNode,
                limits: Limits, sandbox: Sandbox) -> nbformat.NotebookNode | None:
    wrong = lab_mismatch(template, learner)
    if wrong:
        _all_not_run(report, template, wrong)
        return None
    folder = template.path.parent.resolve()                 # the checks module lives next to the current lab
    template, notes = template_for(template, learner)      # an earlier release is graded as it was released
    report.warnings += notes
    report.lab_version = version_of(template.nb)
    rebuilt = rebuild(template, learner)
    report.tampered = [{"cell_id": t.cell_id, "role": t.role, "kind": t.kind} for t in rebuilt.tampered]
    report.warnings += rebuilt.warnings + list(sandbox.warnings)
    lab = load_lab(template.checks, folder)
    refused = _screen(rebuilt, lab, template.checks)
    execution = rerun(rebuilt.nb, answer_steps(rebuilt), checks=template.checks, folder=folder, limits=limits,
                      extra_env={EVIDENCE_ENV: "1", TIMEOUT_ENV: "0"}, sandbox=sandbox)
    report.exercises, tampers = exercise_results(template, rebuilt, execution, lab)
    report.tampered += tampers
    for e in report.exercises:
        if e.exercise in refused:
            e.status, e.score, e.messages, e.hints = "error", 0.0, refused[e.exercise], []
    _drop_evidence(execution.nb)
    _show_verdicts(execution.nb, report.exercises)
    problems = [f"{c.id}: {execution.runs[c.id].status} {execution.runs[c.id].message}".strip()
                for c in rebuilt.nb.cells if role(c) == SETUP and c.id in execution.runs
                and execution.runs[c.id].status != "ok"]
    if execution.kernel_error:
        report.grader_error = f"the grading sandbox failed: {execution.kernel_error}"
    elif problems:
        report.grader_error = "a setup cell of the lab failed: " + "; ".join(problems)
    return execution.nb


REFUSED = "refused by the grader's allowlist (the cell was not run): "


def _screen(rebuilt: Rebuilt, lab: Lab, checks: str) -> dict[str, list[str]]:
    """Check every Python answer (and added) cell against the allowlist; a refused cell is replaced by a
    comment. Returns ex -> reasons. A C++ (``%%ascendc``) cell is compiled by the simulator's own front end."""
    cells = {c.get("id"): c for c in rebuilt.nb.cells}
    bound: dict = {}
    for c in rebuilt.nb.cells:
        if role(c) == SETUP:
            bound.update(import_bindings(c.source, checks))
    refused: dict[str, list[str]] = {}
    for ex, ids in rebuilt.exercise_cells.items():
        allow = lab.exercises[ex].allow if ex in lab.exercises else ()
        for cid in ids:
            if language_of(cells[cid].source) != "python":
                continue
            reasons = screen_source(cells[cid].source, checks_module=checks, allow=allow, bound=bound)
            if reasons:
                refused.setdefault(ex, []).extend(f"{cid} {r}" for r in reasons)
                cells[cid].source = "# " + REFUSED.strip() + "\n" + "".join(f"# {r}\n" for r in reasons)
    return {ex: [REFUSED + "; ".join(reasons)] for ex, reasons in refused.items()}


def exercise_results(template: LabTemplate, rebuilt: Rebuilt, execution: Execution,
                     lab: Lab) -> tuple[list[ExerciseResult], list[dict]]:
    """Per exercise: the grader's own verdict on the check's evidence, overridden by what happened to its cells.

    Also returns the tamper entries of results without usable evidence (``forged_result``) or with evidence
    that does not hold together (``rejected_evidence``).
    """
    cells = {c.id: c for c in execution.nb.cells}
    out, tampers = [], []
    for spec in template.exercises:
        answer_runs = [execution.runs.get(cid, CellRun("not_run")) for cid in rebuilt.exercise_cells[spec.id]]
        check_run = execution.runs.get(spec.check_id, CellRun("not_run", "not run"))
        status, messages, hints, tamper = _check_verdict(lab, spec.id, check_run, cells.get(spec.check_id))
        if tamper:
            tampers.append({"cell_id": spec.check_id, "role": "check", "kind": tamper})
        status, messages = _answer_override(status, messages, answer_runs)
        seconds = sum(r.seconds for r in answer_runs) + check_run.seconds
        out.append(ExerciseResult(spec.id, status, spec.points if status == "pass" else 0.0, spec.points,
                                  messages, hints, round(seconds, 3)))
    return out, tampers


def _check_verdict(lab: Lab, ex: str, run: CellRun, cell) -> tuple[str, list[str], list[str], str]:
    if run.status == "not_run":
        return "not_run", [run.message or "not run"], [], ""
    if run.status == "timeout":
        return "timeout", [f"the check {run.message}: the answer probably loops forever"], [], ""
    if run.status == "died":
        return "error", [run.message], [], ""
    if run.status == "error":
        return "error", [f"the check cell raised {run.message}"], [], ""
    payloads = [o["data"][MIME] for o in (cell.outputs if cell is not None else [])
                if o.get("output_type") == "display_data" and MIME in o.get("data", {})]
    payloads = [p for p in payloads if isinstance(p, dict) and p.get("exercise") == ex]
    if not payloads:
        return "error", ["the check produced no result"], [], ""
    result, tamper = judge(lab, ex, payloads[-1].get("evidence"))
    return result.status, result.messages, result.hints, tamper


def _drop_evidence(nb: nbformat.NotebookNode) -> None:
    """executed.ipynb keeps each check's result, not the (large) evidence the grader has judged."""
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            payload = o.get("data", {}).get(MIME)
            if isinstance(payload, dict) and "evidence" in payload:
                payload["evidence"] = "judged by the grader"


def _show_verdicts(nb: nbformat.NotebookNode, results: list[ExerciseResult]) -> None:
    """Under each check cell of executed.ipynb, the grader's own verdict (what the report says), after the
    re-run's output: the learner sees why a check that passed in the re-run was rejected by the judge."""
    cells = {c.get("id"): c for c in nb.cells}
    for e in results:
        cell = cells.get(f"{e.exercise}-check")
        if cell is None:
            continue
        text = f"[grader] {e.exercise}: {e.status} {fmt_points(e.score)}/{fmt_points(e.max)} points"
        text += "".join(f"\n  {m}" for m in e.messages[:3]) + "".join(f"\n  Hint: {h}" for h in e.hints[:1])
        cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=text + "\n"))


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
               limits: Limits = Limits(), progress=None, jobs: int = 1,
               gradebook: GradebookOptions = GradebookOptions(), resume: bool = False,
               dask: DaskTarget | None = None, shard: Shard | None = None) -> tuple[list[Report], Path]:
    """Grade each submission into ``out_dir/<name>/`` and write ``out_dir/gradebook.csv``.

    ``jobs`` submissions are graded at a time (separate processes; the reports do not depend on it); ``dask``:
    by the workers of a Dask cluster instead, each grading as here (``distribute.py``). ``shard``: only the
    submissions of that shard, in the whole class's folder names, with ``shard.json`` for ``merge_shards``
    (``shards.py``). Each re-run is confined (``sandbox.py``): its root holds the system, Python and the package,
    nothing else. ``resume``: a submission whose ``report.json`` is already there for
    the same bytes and lab is not graded again. SIGTERM or SIGINT stops the run cleanly: every worker and
    sandboxed process is killed, the finished reports stay, and ``GradingInterrupted`` says how to resume.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(out_dir, 0o700)
    subs = [Path(s) for s in submissions]
    slots = submission_slots(subs)                 # the whole class's folder names, also in a shard
    chosen = [i for i, sub in enumerate(subs) if shard is None or shard.holds(sub)]
    if shard is not None:
        write_manifest(out_dir, template.name, subs, slots, chosen, shard, gradebook)
    needed = sandbox_keep(template)
    reports: dict[int, Report] = {}
    pending: list[tuple[int, Path, Path]] = []
    for i in chosen:
        done = _finished(out_dir / slots[i], subs[i], template) if resume else None
        if done is not None:
            reports[i] = done
            if progress is not None:
                progress(done)
        else:
            pending.append((i, subs[i], out_dir / slots[i]))
    tasks = [] if dask is not None else [(i, (template, sub, limits, out, sandbox_for(i + 1, needed)))
                                         for i, sub, out in pending]
    with _interruptible() as stopped:
        try:
            if dask is not None:
                grade_on_dask(template, pending, limits, dask, reports, progress, task=grade_on_worker,
                              local=lambda sub: grade_bytes(template, sub, None, limits=limits),
                              write=write_outputs, failed=failed_report)
            elif jobs <= 1 or len(tasks) <= 1:
                for i, t in tasks:
                    reports[i] = _grade_task(t)
                    if progress is not None:
                        progress(reports[i])
            else:
                _grade_parallel(tasks, jobs, reports, progress)
        except KeyboardInterrupt:
            stopped.append(True)
    ordered = [reports[i] for i in sorted(reports)]
    book = write_gradebook(ordered, out_dir / GRADEBOOK, gradebook)
    if stopped:
        raise GradingInterrupted(len(ordered), len(chosen), book)
    return ordered, book


class GradingInterrupted(Exception):
    """SIGTERM/SIGINT stopped the run; finished reports and a partial gradebook are written."""

    def __init__(self, graded: int, total: int, gradebook: Path):
        super().__init__(f"interrupted after {graded} of {total} submissions (every grading process was stopped; "
                         f"the gradebook {gradebook} lists the finished ones): run the same command with --resume "
                         "to grade the rest")
        self.graded, self.total, self.gradebook = graded, total, gradebook


def _finished(folder: Path, sub: Path, template: LabTemplate) -> Report | None:
    """The report already written for ``sub`` (same bytes, same lab), else None."""
    try:
        report = read_report(folder / "report.json")
        same = report.sha256 == _sha(sub.read_bytes()) and report.lab == template.name
    except Exception:  # noqa: BLE001 - a missing or half-written report is graded again
        return None
    return report if same else None


@contextlib.contextmanager
def _interruptible():
    """SIGTERM becomes KeyboardInterrupt (like SIGINT) in the grader's main thread while grading."""
    stopped: list[bool] = []
    if threading.current_thread() is not threading.main_thread():
        yield stopped
        return

    def stop(signum, frame):  # noqa: ANN001 - signal handler signature
        raise KeyboardInterrupt
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield stopped
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        kill_active()


def _grade_parallel(tasks: list, jobs: int, reports: dict, progress) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_signals)
    futures = {pool.submit(_grade_task, t): i for i, t in tasks}
    try:
        for future, i in futures.items():          # in command-line order
            reports[i] = future.result()
            if progress is not None:
                progress(reports[i])
    except BaseException:
        workers = list((getattr(pool, "_processes", None) or {}).values())
        for future in futures:
            future.cancel()
        for w in workers:                          # each worker kills its re-run on SIGTERM, then exits
            if w.is_alive():
                os.kill(w.pid, signal.SIGTERM)
        for w in workers:
            w.join(timeout=15)
            if w.is_alive():
                w.kill()
        for future, i in futures.items():
            if future.done() and not future.cancelled() and future.exception() is None:
                reports[i] = future.result()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def _worker_signals() -> None:
    """In a worker: SIGTERM or SIGINT kills its re-run (with its whole PID namespace) and ends the worker at
    once, before the pool can hand it another submission."""
    def stop(signum, frame):  # noqa: ANN001 - signal handler signature
        kill_active()
        os._exit(128 + signum)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)


def _grade_task(task: tuple) -> Report:
    template, sub, limits, out, sandbox = task
    return grade_submission(template, sub, limits=limits, out_dir=out, sandbox=sandbox)


def sandbox_keep(template: LabTemplate) -> list[Path]:
    """All the re-run may read besides the system's software: Python, the ascend_sim package, and the lab's
    checks module when it lives outside the package (a single file: never the folder, which holds solutions)."""
    import importlib.util
    beside = template.path.parent.resolve() / (template.checks.replace(".", "/") + ".py")
    spec = importlib.util.find_spec(template.checks) if not beside.is_file() else None
    checks = beside if beside.is_file() else Path(spec.origin).resolve()
    package = REPO_ROOT / "ascend_sim"
    extra = [] if package in checks.parents else [checks]
    return [package, Path(sys.prefix), Path(sys.base_prefix), *extra]


def submission_slots(paths: list[Path]) -> list[str]:
    """Stable readable folder names, one per submission: the file stem with only path-unsafe characters
    replaced (Unicode kept, NFC), de-duplicated by ``-2``, ``-3`` in the given order."""
    used: set[str] = set()
    out = []
    for path in paths:
        base = unicodedata.normalize("NFC", path.stem)
        base = re.sub(r'[\x00-\x1f\x7f/\\:*?"<>|]+', "_", base).strip(" .")[:100] or "submission"
        if base.casefold() in {r.casefold() for r in RESERVED_NAMES}:
            base += "-submission"                # never the grader's own files (gradebook.csv)
        name, n = base, 2
        while name.casefold() in used:
            name, n = f"{base}-{n}", n + 1
        used.add(name.casefold())
        out.append(name)
    return out


def failed_report(template: LabTemplate, submission: str | Path, reason: str) -> Report:
    """The report of a submission the grader could not grade (``reason``): every exercise ``not_run``."""
    report = Report(template.name, str(submission), "", graded_at=_now(), versions=versions())
    _all_not_run(report, template, reason)
    return report


def _all_not_run(report: Report, template: LabTemplate, reason: str) -> None:
    report.grader_error = reason
    report.exercises = [ExerciseResult(e.id, "not_run", 0.0, e.points, [reason]) for e in template.exercises]


def _short(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".splitlines()[0][:300]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
