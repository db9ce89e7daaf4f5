"""plog-style logs (日志) of the simulator, controlled by CANN's environment variables.

* ``ASCEND_GLOBAL_LOG_LEVEL``: 0 DEBUG, 1 INFO, 2 WARNING, 3 ERROR (the default), 4 NULL (nothing).
* ``ASCEND_SLOG_PRINT_TO_STDOUT``: 1 prints the lines on stdout instead of writing a file.
* ``ASCEND_PROCESS_LOG_PATH``: the log root; the files are ``ROOT/plog/plog-<pid>_<timestamp>.log``.
  Unset: ``ASCEND_WORK_PATH``, else ``$HOME/ascend/log`` (CANN's documented order: "ASCEND_PROCESS_LOG_PATH >
  ASCEND_WORK_PATH > 日志默认存储路径($HOME/ascend/log)", envref_07_0120; files ``plog-pid_*.log``, envref_07_0126).

One line per message, in CANN's slog shape ``[LEVEL] MODULE(pid,process):YYYY-MM-DD-hh:mm:ss.mmm.uuu [file:line]
message`` (the shape of the plog lines quoted in public issues; [EST] the simulator's file:line is the caller of
``log``). Everything but the timestamp and the pid is deterministic. The environment is read at each call (a few
dict look-ups): a launch logs twice at INFO, never per instruction, so a level above INFO costs nothing
measurable. A log that cannot be written is dropped silently: logging never fails a launch.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

__all__ = ["DEBUG", "INFO", "WARNING", "ERROR", "NULL", "LEVEL_NAMES", "level", "enabled", "log", "log_dir",
           "log_file", "next_launch_id"]

DEBUG, INFO, WARNING, ERROR, NULL = 0, 1, 2, 3, 4
LEVEL_NAMES = ("DEBUG", "INFO", "WARNING", "ERROR")
DEFAULT_LEVEL = ERROR           # CANN: "3 ERROR (default)"

_state = {"launch": 0, "file": None, "dir": None}


def level() -> int:
    """The active level from ``ASCEND_GLOBAL_LOG_LEVEL`` (an unset or malformed value means ERROR)."""
    v = os.environ.get("ASCEND_GLOBAL_LOG_LEVEL", "")
    return int(v) if v.isdigit() and int(v) <= NULL else DEFAULT_LEVEL


def enabled(lvl: int) -> bool:
    """True when a message of level ``lvl`` would be logged."""
    return lvl >= level() and lvl < NULL


def log_dir() -> Path:
    """``ROOT/plog`` with ROOT from ASCEND_PROCESS_LOG_PATH, ASCEND_WORK_PATH or $HOME/ascend/log."""
    root = os.environ.get("ASCEND_PROCESS_LOG_PATH") or os.environ.get("ASCEND_WORK_PATH") \
        or os.path.join(os.path.expanduser("~"), "ascend", "log")
    return Path(root) / "plog"


def log_file() -> Path:
    """This process's plog file in ``log_dir()`` (created on first write; a new one when the folder changes)."""
    d = log_dir()
    if _state["dir"] != d or _state["file"] is None:
        stamp = time.strftime("%Y%m%d%H%M%S", time.localtime()) + f"{int(time.time() * 1000) % 1000:03d}"
        _state["dir"], _state["file"] = d, d / f"plog-{os.getpid()}_{stamp}.log"
    return _state["file"]


def next_launch_id() -> int:
    """A new launch id (1, 2, ... per process): names one launch in every line it logs."""
    _state["launch"] += 1
    return _state["launch"]


def _timestamp() -> str:
    t = time.time()
    us = int(t * 1_000_000) % 1_000_000
    return time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime(t)) + f".{us // 1000:03d}.{us % 1000:03d}"


def log(lvl: int, module: str, message: str, *, where: str = "") -> None:
    """Log ``message`` (one or more lines) at ``lvl`` for ``module`` (RUNTIME, SANITIZER, ATC ...)."""
    if not enabled(lvl):
        return
    if not where:
        f = sys._getframe(1)
        where = f"{os.path.basename(f.f_code.co_filename)}:{f.f_lineno}"
    head = f"[{LEVEL_NAMES[lvl]}] {module}({os.getpid()},python):{_timestamp()} [{where}] "
    text = "".join(head + line + "\n" for line in message.splitlines() or [""])
    if os.environ.get("ASCEND_SLOG_PRINT_TO_STDOUT") == "1":
        sys.stdout.write(text)
        return
    try:
        path = log_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)
    except OSError:
        pass
