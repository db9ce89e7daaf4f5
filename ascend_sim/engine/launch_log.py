"""What one launch writes to the plog: its start and end (INFO), each block (DEBUG), a fault (ERROR).

``api/launch.py`` calls these three around ``Launch.run``; nothing here runs per instruction.
"""
from __future__ import annotations

from ascend_sim.engine import plog
from ascend_sim.engine.aicore_exception import report_lines
from ascend_sim.engine.errors import KernelError

__all__ = ["begin", "end", "fault"]

_WHERE = "launch.py"


def begin(run) -> int:
    """Log the start of ``run`` (a scheduler Launch); returns its launch id."""
    lid = plog.next_launch_id()
    if plog.enabled(plog.INFO):
        names = ", ".join(f"{b.name}[{b.nbytes} B]" for b in run.gm_buffers)
        plog.log(plog.INFO, "RUNTIME", f"launch={lid} kernel {run.kernel.__name__} starts: block_dim="
                 f"{run.block_dim}, core {run.kernel.core}, chip {run.chip.name}, GM: {names or 'none'}",
                 where=_WHERE)
    return lid


def end(run, lid: int, cycles: float) -> None:
    """Log the end of a launch that succeeded: cycles, and at DEBUG one line per core."""
    lvl = plog.level()
    if lvl > plog.INFO:                 # the default (ERROR): one environment read per launch end, nothing else
        return
    if lvl == plog.DEBUG:
        for c in run.cores:
            plog.log(plog.DEBUG, "RUNTIME", f"launch={lid} block {c.block_idx} ({c.core_type}) ran cycles "
                     f"{c.start_time:,.0f}..{c.end_time():,.0f}, {c.calls} API calls", where=_WHERE)
    plog.log(plog.INFO, "RUNTIME", f"launch={lid} kernel {run.kernel.__name__} done: {cycles:,.0f} cycles, "
             f"{len(run.records)} instructions", where=_WHERE)


def fault(run, lid: int, err: BaseException) -> None:
    """Log a failed launch: the aicore-exception report of a KernelError, else one ERROR line."""
    if not plog.enabled(plog.ERROR):
        return
    if isinstance(err, KernelError):
        c = getattr(run, "failed_core", None)
        core = (c.block_idx, c.core_type, c.calls) if c is not None else None
        text = "\n".join(report_lines(err, run.kernel.__name__, lid, core))
        err.aicore_report = text
    else:
        text = f"launch={lid} kernel {run.kernel.__name__} raised {type(err).__name__}: {err}"
    plog.log(plog.ERROR, "RUNTIME", text, where=_WHERE)
