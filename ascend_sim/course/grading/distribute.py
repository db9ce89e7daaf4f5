"""Grade a class on Dask workers (``ascend-sim grade ... --dask tcp://scheduler:8786`` or ``--dask local[:N]``).

Each worker runs the very grading of ``--jobs``: ``grade.grade_bytes`` with a sandbox made on the worker
(``sandbox.sandbox_for``: its namespaces, its own uid per submission, a root holding only the worker's Python and
package), so the re-run is confined exactly as on one machine. What crosses the network is data:

* the grader (the Dask client) reads each submission's bytes once and sends them with the lab template;
* the worker (``grade.grade_on_worker``) sends back the Report and the executed notebook's text; the grader
  writes report.json, report.csv, executed.ipynb and gradebook.csv itself, in the class's order, as the sequential
  run does.

A worker grades only with the same course as the grader: ``course_fingerprint`` (every file of the ``ascend_sim``
package, the lab template, its releases and checks module, the Python, numpy and nbformat versions) must be equal
on both sides, else the run stops with ``CourseMismatch`` naming what differs. So a remote worker needs the
course installed at the same path as on the grader's machine (one image or one checkout path for all of them).

Dask (``pip install -e ".[dask]"``, docs/dependencies.md) is imported only here, only when ``--dask`` is given.
"""
from __future__ import annotations

import hashlib
import logging
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ascend_sim.course.grading.execute import REPO_ROOT, Limits
from ascend_sim.course.grading.notebook import LabTemplate
from ascend_sim.course.grading.report import Report, versions

__all__ = ["DaskTarget", "grade_on_dask", "check_course", "course_fingerprint", "CourseMismatch"]

SCHEMES = ("tcp://", "tls://", "ws://", "wss://")
WORKER_WAIT_SECONDS = 60.0          # a scheduler with no worker after this long is an error, not a hang
CONNECT_SECONDS = 30.0              # a scheduler that does not answer within this long is an error


class CourseMismatch(ValueError):
    """A Dask worker has another course (files or versions) than the grader: its grades could differ."""


@dataclass(frozen=True)
class DaskTarget:
    """Where to grade: a LocalCluster of ``workers`` processes (``address`` empty) or a scheduler's address."""

    address: str = ""
    workers: int = 0

    @classmethod
    def parse(cls, text: str) -> "DaskTarget":
        """``local`` (one worker per core), ``local:N``, or a scheduler address ``tcp://host:8786``."""
        m = re.fullmatch(r"local(?::(\d+))?", text.strip())
        if m:
            workers = int(m.group(1)) if m.group(1) else (os.cpu_count() or 1)
            if workers >= 1:
                return cls("", workers)
        elif text.startswith(SCHEMES) and len(text) > text.index("//") + 2:
            return cls(text, 0)
        raise ValueError(f"--dask {text!r}: expected local, local:N (N >= 1 worker processes on this machine) or a "
                         f"scheduler address starting with {', '.join(SCHEMES)}. Fix: e.g. --dask local:2 or "
                         "--dask tcp://scheduler:8786 (the address `dask scheduler` prints)")

    def __str__(self) -> str:
        return self.address or f"a LocalCluster of {self.workers} worker process(es)"


# ----------------------------------------------------------------------------- the worker's side
def course_fingerprint(template: LabTemplate) -> str:
    """sha-256 of everything that can change a grade: the ``ascend_sim`` package's files, the lab template, its
    releases, a checks module beside it, and the versions in every report (Python, numpy, nbformat)."""
    lab_dir = template.path.parent.resolve()
    data = [template.path.resolve(), *sorted((lab_dir / "releases").glob(f"{template.name}@*.ipynb"))]
    parts = [*sorted(_code_digests(template).items()), ("lab", _digest(data)), ("versions", sorted(versions().items()))]
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def _code_digests(template: LabTemplate) -> dict[str, str]:
    """The code a worker imports once and keeps: the package, and a checks module beside the lab."""
    package = REPO_ROOT / "ascend_sim"
    out = {str(package): _digest(sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts))}
    beside = template.path.parent.resolve() / (template.checks.replace(".", "/") + ".py")
    if beside.is_file():
        out[str(beside)] = _digest([beside])
    return out


def _digest(files: list[Path]) -> str:
    h = hashlib.sha256()
    for path in files:
        data = path.read_bytes()
        h.update(f"{path}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def check_course(template: LabTemplate, expected: str) -> None:
    """On a worker: raise ``CourseMismatch`` unless this machine's course is the grader's (``expected``) and its code
    has not changed since this worker process first checked it."""
    where = f"worker pid {os.getpid()} on {os.uname().nodename}"
    if not template.path.is_file():
        raise CourseMismatch(f"{where} has no lab template at {template.path}: every worker needs the course at the "
                             "same path as the grader. Fix: install the same checkout at that path on every worker "
                             "machine (or one image for all), then start the workers again")
    if course_fingerprint(template) != expected:
        raise CourseMismatch(f"{where} has another course than the grader (package files, lab {template.name}, its "
                             f"releases, or Python/numpy/nbformat versions {versions()}): its grades could differ. "
                             "Fix: install the grader's commit and versions on every worker and restart the workers "
                             "(a running worker keeps the code it imported)")
    for path, digest in _code_digests(template).items():
        if _FIRST_SEEN.setdefault(path, digest) != digest:
            raise CourseMismatch(f"{where}: {path} changed while the worker was running (it still runs the code it "
                                 "imported before). Fix: restart the Dask workers")


_FIRST_SEEN: dict[str, str] = {}       # per worker process: the code digests of its first submission


# ----------------------------------------------------------------------------- the grader's side
def grade_on_dask(template: LabTemplate, pending: list[tuple[int, Path, Path]], limits: Limits, target: DaskTarget,
                  reports: dict[int, Report], progress: Callable[[Report], None] | None, *,
                  task: Callable[..., tuple[Report, str | None]], local: Callable[[Path], tuple[Report, str | None]],
                  write: Callable[[Report, str | None, Path], None],
                  failed: Callable[[LabTemplate, Path, str], Report]) -> None:
    """Grade ``pending`` (index, submission, report folder) on Dask; write each report as it arrives.

    On a worker: ``task(template, name, data, limits, index, fingerprint)`` (``grade.grade_on_worker``). Here:
    ``local(sub)`` grades a submission this process cannot read (no bytes to send: the sequential run's report,
    without a worker), ``write`` writes a report's files, ``failed`` makes the report of a submission whose workers
    all died. On any interruption the futures are cancelled and a LocalCluster is closed (its workers die, and
    each re-run with them: ``PR_SET_PDEATHSIG``); on a remote cluster a submission already running ends within
    ``--time-limit`` and its result is dropped.
    """
    client, cluster = _connect(target)               # first: a missing Dask is named with the fix there
    from distributed import KilledWorker, as_completed
    futures = {}
    run = uuid.uuid4().hex[:12]

    def finish(i: int, result: tuple[Report, str | None], out: Path) -> None:
        reports[i] = result[0]
        write(result[0], result[1], out)
        if progress is not None:
            progress(result[0])
    try:
        fingerprint = course_fingerprint(template)
        for i, sub, out in pending:
            try:
                data = sub.read_bytes()                 # the grader's only read of the learner's file
            except OSError:
                finish(i, local(sub), out)
                continue
            future = client.submit(task, template, str(sub), data, limits, i + 1, fingerprint, pure=False,
                                   key=f"grade-{template.name}-{run}-{i}")
            futures[future] = (i, sub, out)
        for future in as_completed(list(futures)):
            i, sub, out = futures[future]
            try:
                result = future.result()
            except KilledWorker as e:
                result = failed(template, sub, f"every Dask worker that graded this submission died ({e}): grade "
                                               "it again alone (without --dask) to see why"), None
            finish(i, result, out)
    except BaseException:
        client.cancel(list(futures), force=True)
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _connect(target: DaskTarget):
    """A Client on ``target`` with at least one worker (a LocalCluster is started and returned too)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ValueError("--dask needs Dask's distributed scheduler, which is not installed. Fix: pip install -e "
                         "\".[dask]\" (docs/dependencies.md), or grade with --jobs N on one machine") from None
    cluster = None
    if not target.address:
        cluster = LocalCluster(n_workers=target.workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.CRITICAL)
        return Client(cluster), cluster
    try:
        client = Client(target.address, timeout=CONNECT_SECONDS)
    except OSError as e:
        raise ValueError(f"--dask {target.address}: no Dask scheduler answered ({e}). Fix: start one with `dask "
                         "scheduler` and workers with `dask worker ADDRESS --nthreads 1 --nworkers CORES` on each "
                         "machine holding the course (docs/grading.md, 'Grading beyond one machine')") from None
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_SECONDS)
    except Exception:  # noqa: BLE001 - distributed raises TimeoutError subclasses that vary by version
        client.close()
        raise ValueError(f"--dask {target.address}: the scheduler has no worker after {WORKER_WAIT_SECONDS:g} s. "
                         "Fix: start workers with `dask worker ADDRESS --nthreads 1 --nworkers CORES` on each machine "
                         "holding the course at the grader's path") from None
    return client, None
