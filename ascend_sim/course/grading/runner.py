"""The sandbox side of the trusted re-run: ``python -m ascend_sim.course.grading.runner`` (started by ``rerun.py``).

In order, before any learner code: confine itself (namespaces, working root, uid: ``confine.confine``),
apply the memory and CPU limits, keep its stdout as the private result channel and point descriptor 1 at
/dev/null, read the job (one JSON line on stdin, which is then closed), import numpy, the simulator and the
lab's checks. Then each step of the job, in notebook order:

* ``setup``: the template's setup cell (trusted, from the lab, never from the submission);
* ``answer``: an answer cell the grader screened (``screen.py``); Python is executed, a ``%%ascendc`` cell is
  compiled by ``ascend_sim.ascendc.load`` and its kernels bound by name;
* ``check``: the lab's own check function with a fresh ``Context`` (hidden inputs generated here, the
  launches made by the check, evidence recorded by the simulator) — the grader judges that evidence.

Each step's printed output is captured up to one cap, and a step gets ``cell_timeout`` seconds (an alarm that
names the learner's line; the grader kills the process if the alarm is swallowed). Every message on the
channel starts with the job's nonce, which learner code cannot read: a line without it is not believed.
"""
from __future__ import annotations

import builtins
import json
import linecache
import os
import signal
import sys
import time
from typing import Any

from ascend_sim.course.grading.confine import CPU_ENV, MEMORY_ENV, apply_limits, confine
from ascend_sim.course.grading.solution_file import CXX_MAGIC

__all__ = ["main", "cell_filename", "CXX_MAGIC"]


class StepTimeout(BaseException):
    """The step ran longer than its cell timeout; ``where`` is the learner's line that was running."""

    def __init__(self, where: str):
        super().__init__(where)
        self.where = where


class _Capture:
    """A stdout/stderr stand-in that keeps at most ``cap`` characters of what a step printed."""

    def __init__(self, cap: int):
        self.cap, self.parts, self.size, self.dropped = cap, [], 0, False

    def write(self, text: Any) -> int:
        text = str(text)
        room = self.cap - self.size
        if len(text) > room:
            text, self.dropped = text[:max(room, 0)], True
        self.parts.append(text)
        self.size += len(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        tail = f"\n[grader: output beyond {self.cap:,} characters dropped]\n" if self.dropped else ""
        return "".join(self.parts) + tail


def cell_filename(cell_id: str) -> str:
    """The file name a cell's code runs under (tracebacks and the timeout name it)."""
    return f"<{cell_id}>"


def main() -> None:
    try:
        confine(sys.argv)
    except Exception as e:  # noqa: BLE001 - never run less confined than asked
        print(f"ascend-sim grading runner: confinement failed: {e}", file=sys.stderr, flush=True)
        os._exit(70)
    apply_limits(int(os.environ.get(MEMORY_ENV, "0") or 0), int(os.environ.get(CPU_ENV, "0") or 0))
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    job = json.loads(sys.stdin.readline())
    os.dup2(null, 0)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - stays open for the process's life
    nonce = job.pop("nonce")

    def send(message: dict) -> None:
        channel.write(nonce + " " + json.dumps(message, ensure_ascii=False, default=str) + "\n")
        channel.flush()

    import numpy  # noqa: F401 - the simulator and numpy are imported before any learner code
    import ascend_sim  # noqa: F401
    from ascend_sim.course.grading.judge import load_lab
    lab = load_lab(job["checks"], job.get("folder") or None)
    run_steps(lab, job, send)
    channel.close()
    os._exit(0)


def run_steps(lab, job: dict, send) -> None:
    """Run every step of ``job`` in one namespace, sending one message per step."""
    from ascend_sim.course.grading.check import frame_line

    def expire(signum, frame):  # noqa: ANN001 - signal handler signature
        raise StepTimeout(frame_line(frame, with_file=True))

    signal.signal(signal.SIGALRM, expire)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    cap, timeout = int(job["max_output"]), float(job["cell_timeout"])
    send({"ready": True})
    for i, step in enumerate(job["steps"]):
        out = _Capture(cap)
        namespace["display"] = lambda *objs, **_: print(*objs, file=out)
        t0 = time.monotonic()
        msg: dict[str, Any] = {"step": i, "status": "ok"}
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = out
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            if step["kind"] == "check":
                result = lab.run(step["ex"], namespace)
                msg["result"], msg["line"] = result.payload(), result.line()
            else:
                _run_cell(step, namespace)
        except StepTimeout as e:
            msg.update(status="timeout", where=e.where)
        except BaseException as e:  # noqa: BLE001 - the learner's exception is the cell's outcome
            msg.update(status="error", message=_error_text(e))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            sys.stdout, sys.stderr = saved
        msg["output"], msg["seconds"] = out.text(), round(time.monotonic() - t0, 3)
        send(msg)


def _run_cell(step: dict, namespace: dict) -> None:
    source, cell_id = step["source"], step["id"]
    if step.get("language") == "ascendc":
        _run_cxx(source, cell_id, namespace)
        return
    name = cell_filename(cell_id)
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    exec(compile(source, name, "exec"), namespace)  # noqa: S102 - screened learner code, in the sandbox


def _run_cxx(source: str, cell_id: str, namespace: dict) -> None:
    """A ``%%ascendc`` answer: the C++ below the magic line is the answer; its functions, structs and kernels become
    names.

    As in JupyterLab (``magic.run_cell``): line numbers are the cell's; ``-D`` macros and ``--cce-auto-sync=off`` apply;
    the cell's name is its id, and ``-I`` folders are refused (the grader reads no learner-named files).
    """
    try:
        from ascend_sim.ascendc import load
        from ascend_sim.ascendc.magic import cell_text, parse_line
    except ImportError:
        raise RuntimeError("this grader cannot grade C++ answers yet (ascend_sim.ascendc is not installed)") from None
    head, _, body = source.lstrip().partition("\n")
    opts = parse_line(head[len(CXX_MAGIC):])
    if opts.includes:
        raise RuntimeError(f"the grader does not take -I folders on the {CXX_MAGIC} line: put the code in the cell")
    module = load(cell_text(body), name=cell_id, defines=opts.defines, externs=namespace, auto_sync=opts.auto_sync)
    bind_module(module, namespace)


def bind_module(module, namespace: dict) -> None:
    """The names a ``%%ascendc`` cell defines, as JupyterLab binds them (``magic.run_cell``): its host functions (a
    BN fold, a tiling function: checks call them like a Python answer's), its structs, then its kernels."""
    for table in (getattr(module, "functions", {}), vars(getattr(module, "structs", object())),
                  getattr(module, "kernels", {})):
        if isinstance(table, dict):
            namespace.update(table)


def _error_text(e: BaseException) -> str:
    from ascend_sim.course.grading.check import learner_line
    where = learner_line(e.__traceback__)
    if isinstance(e, SyntaxError):
        where = f"line {e.lineno}" + (f" `{(e.text or '').strip()}`" if e.text else "")
        return f"SyntaxError: {e.msg} ({where})"
    return f"{type(e).__name__}: {e}".strip() + (f" ({where})" if where else "")


if __name__ == "__main__":
    main()
