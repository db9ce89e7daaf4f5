"""Run a notebook's cells in a fresh, limited kernel with nbclient.

The kernel starts in an empty temporary directory (also its HOME) with
``MPLBACKEND=Agg``, ``PYTHONHASHSEED=0``, single-threaded BLAS, a memory
limit (RLIMIT_AS, see ``kernel.py``) and a CPU-time backstop. Each cell gets
``cell_timeout`` seconds, bounded by what is left of ``time_limit``. A cell
that times out is interrupted; if the kernel does not answer a probe within
``interrupt_grace`` seconds it is killed and the remaining cells are not run,
as after a crash. Nothing here raises for learner behaviour: every cell ends
as ok, error, timeout, died or not_run.
"""
from __future__ import annotations

import os
import re
import site
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import nbformat
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode

from ascend_sim.course.grading.check import MIME
from ascend_sim.course.grading.jupyter_kernel import CPU_ENV, MEMORY_ENV
from ascend_sim.course.grading.sandbox import Sandbox

__all__ = ["Limits", "CellRun", "Execution", "execute", "kernel_env"]

KERNEL_NAME = "ascend-sim-grader"
TIMEOUT_ENAME = "GraderCellTimeout"
MAX_RESULT_CHARS = 256 * 2**20                        # one check result with its evidence
REPO_ROOT = Path(__file__).resolve().parents[3]      # holds the ascend_sim package the grader runs


@dataclass(frozen=True)
class Limits:
    """Per-cell and overall wall-clock limits (s), memory (MiB) and output size (characters per cell)."""

    cell_timeout: float = 60.0
    time_limit: float = 600.0
    memory_mb: int = 2048
    startup_timeout: float = 60.0
    interrupt_grace: float = 10.0
    max_output_chars: int = 100_000


@dataclass
class CellRun:
    """How one cell ended: ok, error, timeout, died (the kernel died in it) or not_run."""

    status: str
    message: str = ""
    seconds: float = 0.0


@dataclass
class Execution:
    """The executed notebook and the fate of every cell that was asked for."""

    nb: NotebookNode
    runs: dict[str, CellRun] = field(default_factory=dict)
    kernel_error: str = ""
    seconds: float = 0.0


class _SpecManager(KernelSpecManager):
    """Serves the one grader kernel spec, whatever the notebook asks for."""

    def __init__(self, spec: KernelSpec, **kw: Any):
        super().__init__(**kw)
        self._spec = spec

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        return self._spec


class _Client(NotebookClient):
    """NotebookClient that caps each cell's output and remembers the last execute reply."""

    def __init__(self, nb: NotebookNode, max_output_chars: int, **kw: Any):
        super().__init__(nb, on_cell_executed=self._remember, **kw)
        self.max_output_chars = max_output_chars
        self.last_reply: dict[str, Any] = {}
        self._sizes: dict[int, int] = {}

    def _remember(self, cell: NotebookNode, cell_index: int, execute_reply: dict[str, Any]) -> None:
        self.last_reply = execute_reply or {}

    def output(self, outs, msg, display_id, cell_index):  # noqa: ANN001 - nbclient's signature
        content = msg.get("content", {})
        data = content.get("data", {})
        size = len(str(content.get("text", ""))) + sum(len(str(v)) for v in data.values())
        if MIME in data and size > MAX_RESULT_CHARS:      # a check result is exempt from the cap, within reason
            outs.append(nbformat.v4.new_output("stream", name="stderr", text=f"[grader: a check result of {size:,} "
                                                                                 "characters was dropped]\n"))
            return None
        if MIME not in data:
            used = self._sizes.get(cell_index, 0)
            self._sizes[cell_index] = used + size
            if used + size > self.max_output_chars:
                if used <= self.max_output_chars:
                    outs.append(nbformat.v4.new_output(
                        "stream", name="stderr", text=f"[grader: output beyond {self.max_output_chars} "
                                                      "characters dropped]\n"))
                return None
        return super().output(outs, msg, display_id, cell_index)


def kernel_env(home: str, limits: Limits, paths: Iterable[str | os.PathLike] = ()) -> dict[str, str]:
    """The grading kernel's whole environment: nothing else of the grader's is passed on."""
    pythonpath = [str(p) for p in paths] + [str(REPO_ROOT)]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "HOME": home,
        "TMPDIR": home,
        "PYTHONPATH": os.pathsep.join(pythonpath),
        "PYTHONUSERBASE": site.getuserbase(),
        "PYTHONHASHSEED": "0",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": os.path.join(home, ".matplotlib"),
        "IPYTHONDIR": os.path.join(home, ".ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        MEMORY_ENV: str(limits.memory_mb),
        CPU_ENV: str(int(limits.time_limit) + 30),
    }
    return env


def _spec(prefix: Iterable[str] = ()) -> KernelSpec:
    return KernelSpec(argv=[*prefix, sys.executable, "-m", "ascend_sim.course.grading.jupyter_kernel", "-f",
                            "{connection_file}"],
                      display_name="ascend-sim grader (limited)", language="python", env={})


def execute(nb: NotebookNode, run_ids: Iterable[str], *, limits: Limits = Limits(),
            paths: Iterable[str | os.PathLike] = (), extra_env: Mapping[str, str] | None = None,
            sandbox: Sandbox = Sandbox()) -> Execution:
    """Execute the cells of ``nb`` whose ids are in ``run_ids``, in order, in a fresh limited kernel.

    ``paths`` are prepended to the kernel's PYTHONPATH (e.g. the lab's folder); ``extra_env`` is added to
    its environment; ``sandbox`` confines the kernel (see sandbox.py) and is reaped before this returns.
    ``nb`` is modified in place (outputs) and returned in the Execution.
    """
    wanted = set(run_ids)
    cells = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.get("id") in wanted]
    result = Execution(nb)
    start = time.monotonic()
    deadline = start + limits.time_limit
    with tempfile.TemporaryDirectory(prefix="ascend-sim-grade-") as tmp:
        sandbox.own(tmp)
        # ZeroMQ over Unix sockets in the private folder: no TCP port another process can take between
        # choosing and binding it, and the kernel needs no network (sandbox.NAMESPACES has --net)
        km = AsyncKernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=_SpecManager(_spec(sandbox.prefix)),
                                connection_file=os.path.join(tmp, "kernel.json"), transport="ipc",
                                ip=os.path.join(tmp, "zmq"))
        client = _Client(nb, limits.max_output_chars, km=km, timeout=int(limits.cell_timeout),
                         startup_timeout=int(limits.startup_timeout), allow_errors=True,
                         interrupt_on_timeout=True,
                         error_on_timeout={"ename": TIMEOUT_ENAME, "evalue": "timeout", "traceback": []},
                         store_widget_state=False, record_timing=False, shutdown_kernel="immediate",
                         extra_arguments=["--HistoryManager.hist_file=:memory:"],
                         resources={"metadata": {"path": tmp}})
        stop = ""
        log_path = Path(tmp) / "kernel.log"
        process = None
        try:
            with open(log_path, "wb") as log, \
                    client.setup_kernel(env={**kernel_env(tmp, limits, paths), **(extra_env or {}),
                                             **sandbox.env()}, cwd=tmp, stdout=log, stderr=log,
                                        cleanup_kc=True):
                process = getattr(km.provisioner, "process", None)
                for index, cell in cells:
                    stop = stop or _out_of_time(deadline, limits)
                    if stop:
                        result.runs[cell.id] = CellRun("not_run", stop)
                        continue
                    run = _run_cell(client, cell, index, deadline, limits)
                    result.runs[cell.id] = run
                    if run.status == "died":
                        run.message += _log_tail(log_path)
                        stop = f"not run: the kernel died in cell {cell.id}"
                    elif run.status == "timeout" and not _responsive(client, limits):
                        stop = f"not run: the kernel did not recover after interrupting cell {cell.id}"
        except Exception as e:  # noqa: BLE001 - a kernel that cannot start must not lose the report
            result.kernel_error = f"{type(e).__name__}: {e}".strip() + _log_tail(log_path)
            for _, cell in cells:
                result.runs.setdefault(cell.id, CellRun("not_run", f"not run: {result.kernel_error}"))
        finally:
            _kill(process)
            sandbox.reap()
    result.seconds = time.monotonic() - start
    return result


def _kill(process) -> None:
    """Make sure the kernel's own process is gone (SIGKILL; with the sandbox, its whole PID namespace goes too).

    nbclient shuts down a kernel whose manager it was given (``km=``) only with ``cleanup_kc=True``; this
    is the backstop when that shutdown fails.
    """
    if process is not None and process.poll() is None:
        process.kill()
        try:
            process.wait(timeout=10)
        except Exception:  # noqa: BLE001 - a zombie that will not be reaped is not worth a lost report
            pass


def _out_of_time(deadline: float, limits: Limits) -> str:
    if deadline - time.monotonic() < 1:
        return f"not run: the overall time limit of {limits.time_limit:g} s was reached"
    return ""


def _run_cell(client: _Client, cell: NotebookNode, index: int, deadline: float, limits: Limits) -> CellRun:
    timeout = max(1, int(min(limits.cell_timeout, deadline - time.monotonic())))
    client.timeout = timeout
    client.last_reply = {}
    t0 = time.monotonic()
    try:
        client.execute_cell(cell, index)
    except DeadKernelError:
        cell.outputs.append(_error_output("DeadKernelError", "the kernel died (a crash, or the memory limit)"))
        return CellRun("died", "the kernel died while running this cell (a crash, or the memory limit)",
                       time.monotonic() - t0)
    except CellTimeoutError:
        pass
    seconds = time.monotonic() - t0
    content = client.last_reply.get("content", {})
    if content.get("ename") == TIMEOUT_ENAME or not client.last_reply:
        where = interrupted_at(cell, client.nb)
        cell.outputs.append(_error_output("TimeoutError", f"the grader stopped this cell after {timeout} s"))
        return CellRun("timeout", f"did not finish within {timeout} s (an endless loop?)"
                       + (f": your code seems stuck in {where}" if where else ""), seconds)
    errors = [o for o in cell.outputs if o.get("output_type") == "error"]
    if errors:
        e = errors[-1]
        return CellRun("error", f"{e.get('ename', 'Error')}: {e.get('evalue', '')}".strip(), seconds)
    return CellRun("ok", "", seconds)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CELL_LINE = re.compile(r"Cell In\[(\d+)\], line (\d+)")


def interrupted_at(cell: NotebookNode, nb: NotebookNode) -> str:
    """"line 3 of cell ex2-answer `while True:`": the innermost notebook line of the KeyboardInterrupt
    traceback the timeout's interrupt left in ``cell``'s outputs, or ''."""
    for out in cell.get("outputs", []):
        if out.get("output_type") != "error" or out.get("ename") != "KeyboardInterrupt":
            continue
        hits = _CELL_LINE.findall(_ANSI.sub("", "\n".join(out.get("traceback", []))))
        if not hits:
            return ""
        count, line = int(hits[-1][0]), int(hits[-1][1])
        src = next((c for c in nb.cells if c.get("cell_type") == "code" and c.get("execution_count") == count),
                   None)
        if src is None:
            return f"line {line} of In[{count}]"
        lines = src.source.splitlines()
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        return f"line {line} of cell {src.get('id', f'In[{count}]')}" + (f" `{text}`" if text else "")
    return ""


def _responsive(client: _Client, limits: Limits) -> bool:
    """After an interrupt: does the kernel run a trivial cell within the grace period?"""
    probe = nbformat.v4.new_code_cell("pass")
    client.nb.cells.append(probe)          # nbclient stores the executed cell back at its index
    client.timeout = max(1, int(limits.interrupt_grace))
    client.last_reply = {}
    try:
        client.execute_cell(probe, len(client.nb.cells) - 1, store_history=False)
    except (DeadKernelError, CellTimeoutError):
        return False
    finally:
        client.nb.cells.remove(probe)
    return client.last_reply.get("content", {}).get("status") == "ok"


def _log_tail(path: Path, lines: int = 3) -> str:
    """The last lines the kernel wrote to its stderr (a segfault or fatal error message), if any."""
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    text = [t for t in text if "without encryption" not in t]
    return ("; kernel log: " + " | ".join(text[-lines:])) if text else ""


def _error_output(ename: str, evalue: str) -> NotebookNode:
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])
