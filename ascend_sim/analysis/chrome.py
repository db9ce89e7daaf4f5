"""Chrome / Perfetto export of a launch: one process per core, one thread per pipe."""
from __future__ import annotations

import json

from ascend_sim.engine.instr import PIPES


def write_chrome_trace(result, path) -> None:
    """Write Trace Event Format JSON (Perfetto, chrome://tracing, MindStudio Insight)."""
    us_per_cycle = 1.0 / (result.chip.clock_ghz * 1e3)
    events: list[dict] = []
    cores = sorted({(r.core_type, r.core) for r in result.trace.records})
    pid_of = {c: i for i, c in enumerate(cores)}
    for (ctype, core), pid in pid_of.items():
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                       "args": {"name": f"{ctype} core {core}"}})
        for tid, pipe in enumerate(PIPES):
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": pipe}})
    for r in result.trace.records:
        events.append({"ph": "X", "name": r.op, "cat": r.klass or r.pipe, "pid": pid_of[(r.core_type, r.core)],
                       "tid": PIPES.index(r.pipe), "ts": r.start * us_per_cycle,
                       "dur": (r.end - r.start) * us_per_cycle,
                       "args": {"cycles": r.end - r.start, "bytes": r.nbytes, "src": r.src, "dst": r.dst,
                                "flops": r.flops, "stall_cycles": r.start - r.ready, "line": r.line,
                                "source": r.source}})
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns",
                   "otherData": {"kernel": result.kernel_name, "chip": result.chip.name,
                                 "cycles": result.cycles}}, f)
