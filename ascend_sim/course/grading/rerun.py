"""The grader side of the trusted re-run: answers extracted from the rebuilt notebook, run in a fresh process.

``answer_steps(rebuilt)`` lists, in notebook order, the template's setup cells, the learner's answer cells
(Python, or C++ in a ``%%ascendc`` cell: the cell's source is the answer either way) and the checks.
``rerun(steps, ...)`` starts ``runner.py`` confined by the sandbox (``sandbox.py``), sends it the job with a
nonce, and reads one message per step under a wall-clock bound per step and overall; a process that stops
answering is killed with its whole PID namespace. It returns an ``Execution`` (the rebuilt notebook with each
cell's captured output, and how each cell ended) that ``grade.py`` judges exactly as before; the check
results it carries were produced by the lab's checks in the runner, never by the learner's notebook.
"""
from __future__ import annotations

import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import nbformat
from nbformat import NotebookNode

from ascend_sim.course.grading.check import MIME
from ascend_sim.course.grading.execute import CellRun, Execution, Limits, kernel_env
from ascend_sim.course.grading.notebook import ANSWER, CHECK, SETUP, Rebuilt, course, role
from ascend_sim.course.grading.runner import CXX_MAGIC
from ascend_sim.course.grading.sandbox import Sandbox

__all__ = ["Step", "answer_steps", "language_of", "rerun", "MAX_MESSAGE_CHARS"]

MAX_MESSAGE_CHARS = 256 * 2**20      # one step's message (a check's evidence); beyond it the step is an error


@dataclass(frozen=True)
class Step:
    """One thing the runner does: run a setup or answer cell, or run an exercise's check."""

    kind: str            # setup | answer | check
    cell_id: str
    ex: str = ""
    source: str = ""
    language: str = "python"

    def job(self) -> dict:
        return {"kind": self.kind, "id": self.cell_id, "ex": self.ex, "source": self.source,
                "language": self.language}


def language_of(source: str) -> str:
    """'ascendc' for a ``%%ascendc`` cell (the C++ below the magic line is the answer), else 'python'."""
    return "ascendc" if source.lstrip().startswith(CXX_MAGIC) else "python"


def answer_steps(rebuilt: Rebuilt) -> list[Step]:
    """The re-run's steps in notebook order: setup cells (the template's), answer and added cells, checks."""
    steps: list[Step] = []
    for cell in rebuilt.nb.cells:
        r, cid = role(cell), cell.get("id", "")
        if cid not in rebuilt.run_ids and r != CHECK:
            continue
        if r == SETUP:
            steps.append(Step("setup", cid, source=cell.source))
        elif r == CHECK:
            steps.append(Step("check", cid, ex=str(course(cell).get("ex", ""))))
        elif cid in rebuilt.run_ids:
            ex = str(course(cell).get("ex", "")) if r in (ANSWER, "added") else ""
            steps.append(Step("answer", cid, ex=ex, source=cell.source, language=language_of(cell.source)))
    return steps


def rerun(nb: NotebookNode, steps: list[Step], *, checks: str, folder: str | Path | None = None,
          limits: Limits = Limits(), paths: Iterable[str | os.PathLike] = (), extra_env: dict | None = None,
          sandbox: Sandbox = Sandbox()) -> Execution:
    """Run ``steps`` in a fresh confined runner; fill ``nb``'s cells with their outputs and results."""
    result = Execution(nb)
    cells = {c.get("id"): c for c in nb.cells}
    start = time.monotonic()
    deadline = start + limits.time_limit
    nonce = secrets.token_hex(16)
    job = {"nonce": nonce, "checks": checks, "folder": str(folder) if folder else "",
           "cell_timeout": limits.cell_timeout, "max_output": limits.max_output_chars,
           "steps": [s.job() for s in steps]}
    with tempfile.TemporaryDirectory(prefix="ascend-sim-grade-") as tmp:
        sandbox.own(tmp)
        work, root = Path(tmp) / "work", Path(tmp) / "root"
        work.mkdir()
        root.mkdir()
        sandbox.own(work)
        env = {**kernel_env(str(work), limits, paths), **(extra_env or {}), **sandbox.env(str(root), str(work))}
        log_path = Path(tmp) / "runner.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([*sandbox.prefix, sys.executable, "-m", "ascend_sim.course.grading.runner"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, cwd=work, env=env,
                                    start_new_session=True, preexec_fn=_die_with_parent)
        _ACTIVE.add(proc)
        try:
            lines = _reader(proc)
            try:
                proc.stdin.write((json.dumps(job) + "\n").encode("utf-8"))
                proc.stdin.close()
            except OSError:
                pass
            stop = ""
            ready = _next(lines, nonce, min(deadline, time.monotonic() + limits.startup_timeout))
            if not (isinstance(ready, dict) and ready.get("ready")):
                result.kernel_error = "the grading process did not start" + _log_tail(log_path)
                stop = f"not run: {result.kernel_error}"
            for i, step in enumerate(steps):
                if stop:
                    result.runs[step.cell_id] = CellRun("not_run", stop)
                    continue
                if deadline - time.monotonic() < 1:
                    stop = f"not run: the overall time limit of {limits.time_limit:g} s was reached"
                    result.runs[step.cell_id] = CellRun("not_run", stop)
                    continue
                t0 = time.monotonic()
                msg = _next(lines, nonce, min(deadline, t0 + limits.cell_timeout + limits.interrupt_grace))
                if msg is None or msg == "eof":
                    status = "died" if msg == "eof" else "timeout"
                    text = ("the kernel died while running this cell (a crash, or the memory limit)"
                            + _log_tail(log_path) if status == "died"
                            else f"did not finish within {limits.cell_timeout:g} s (an endless loop?)")
                    result.runs[step.cell_id] = CellRun(status, text, time.monotonic() - t0)
                    _error(cells.get(step.cell_id), "DeadKernelError" if status == "died" else "TimeoutError", text)
                    stop = (f"not run: the kernel died in cell {step.cell_id}" if status == "died" else
                            f"not run: the kernel did not recover after interrupting cell {step.cell_id}")
                    _kill(proc)
                    continue
                result.runs[step.cell_id] = _apply(step, msg, cells.get(step.cell_id), limits)
        finally:
            _kill(proc)
            _ACTIVE.discard(proc)
            sandbox.reap()
    result.seconds = time.monotonic() - start
    return result


def _apply(step: Step, msg: dict, cell: NotebookNode | None, limits: Limits) -> CellRun:
    """Turn one runner message into the cell's outputs and its CellRun."""
    status, seconds = str(msg.get("status", "error")), float(msg.get("seconds", 0) or 0)
    if cell is not None and msg.get("output"):
        cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=str(msg["output"])))
    if status == "timeout":
        where = str(msg.get("where", ""))
        text = (f"did not finish within {limits.cell_timeout:g} s (an endless loop?)"
                + (f": your code seems stuck in {where}" if where else ""))
        _error(cell, "TimeoutError", f"the grader stopped this cell after {limits.cell_timeout:g} s")
        return CellRun("timeout", text, seconds)
    if status == "error":
        text = str(msg.get("message", "Error"))
        name, _, value = text.partition(": ")
        _error(cell, name or "Error", value)
        return CellRun("error", text, seconds)
    if step.kind == "check" and cell is not None and isinstance(msg.get("result"), dict):
        payload = msg["result"]
        cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=str(msg.get("line", "")) + "\n"))
        details = [m for m in payload.get("messages", []) if isinstance(m, str)]
        cell.outputs.append(nbformat.v4.new_output("display_data", data={MIME: payload,
                                                                          "text/plain": "\n".join(details)}))
    return CellRun("ok", "", seconds)


def _error(cell: NotebookNode | None, ename: str, evalue: str) -> None:
    if cell is not None:
        cell.outputs.append(nbformat.v4.new_output("error", ename=ename, evalue=evalue,
                                                   traceback=[f"{ename}: {evalue}"]))


def _reader(proc: subprocess.Popen) -> "queue.Queue":
    """Lines of the runner's channel, read by a thread (so every wait has a timeout); 'eof' at the end."""
    q: queue.Queue = queue.Queue()

    def pump() -> None:
        stream = proc.stdout
        while True:
            line = stream.readline(MAX_MESSAGE_CHARS + 64)
            if not line:
                break
            q.put(line)
        q.put(b"")
    threading.Thread(target=pump, daemon=True).start()
    return q


def _next(lines: "queue.Queue", nonce: str, until: float):
    """The next message carrying ``nonce`` (dict), 'eof', or None when ``until`` passed first."""
    prefix = (nonce + " ").encode()
    while True:
        left = until - time.monotonic()
        if left <= 0:
            return None
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            return None
        if not line:
            return "eof"
        if not line.startswith(prefix):
            continue                           # not the runner's: learner output never carries the nonce
        try:
            msg = json.loads(line[len(prefix):])
        except ValueError:
            msg = {"status": "error", "message": "the step's result was too large or malformed"}
        return msg if isinstance(msg, dict) else None


def _kill(proc: subprocess.Popen) -> None:
    """SIGKILL the runner's process group (with the sandbox, its PID namespace goes with it) and reap it."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass


_ACTIVE: set[subprocess.Popen] = set()


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the grader (or its worker) dies, however it dies; ``unshare
    --kill-child`` then takes the re-run's whole PID namespace with it."""
    try:
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)        # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - not Linux: the grader's own kill is the only one
        pass


def kill_active() -> None:
    """Kill every runner this process started (the grader's SIGTERM/SIGINT handler calls this)."""
    for proc in list(_ACTIVE):
        _kill(proc)


def _log_tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return ("; log: " + " | ".join(text[-lines:])) if text else ""
