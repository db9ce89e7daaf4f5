"""What a grading run is limited to, and how each cell of it ended (the re-run is ``rerun.py``).

``Limits``: seconds per cell and overall, memory (RLIMIT_AS, applied by ``confine.apply_limits``), a
CPU-time backstop and one output cap per cell. ``kernel_env``: the re-run's whole environment, rebuilt from
scratch (its own HOME and TMPDIR, ``MPLBACKEND=Agg``, ``PYTHONHASHSEED=0``, single-threaded BLAS): nothing of
the grader's environment is passed on.
"""
from __future__ import annotations

import os
import site
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from nbformat import NotebookNode

from ascend_sim.course.grading.confine import CPU_ENV, MEMORY_ENV

__all__ = ["Limits", "CellRun", "Execution", "kernel_env", "REPO_ROOT"]

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
