"""Chrome / Perfetto export of a launch: one process per core, one thread per pipe (a client of the trace table)."""
from __future__ import annotations

import json

from ascend_sim.engine.instr import PIPES
from ascend_sim.trace.table import as_table


def write_chrome_trace(result, path) -> None:
    """Write Trace Event Format JSON (Perfetto, chrome://tracing, MindStudio Insight)."""
    us_per_cycle = 1.0 / (result.chip.clock_ghz * 1e3)
    t = as_table(result)
    events: list[dict] = []
    core_type, core = t.core_type.tolist(), t.core.tolist()
    pid_of = {c: i for i, c in enumerate(sorted(set(zip(core_type, core))))}
    for (ctype, c), pid in pid_of.items():
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                       "args": {"name": f"{ctype} core {c}"}})
        for tid, pipe in enumerate(PIPES):
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": pipe}})
    tid_of = {p: i for i, p in enumerate(PIPES)}
    for ct, c, op, klass, pipe, ready, start, end, nbytes, src, dst, flops, line, source in zip(
            core_type, core, t.op.tolist(), t.klass.tolist(), t.pipe.tolist(), t.ready.tolist(), t.start.tolist(),
            t.end.tolist(), t.nbytes.tolist(), t.src.tolist(), t.dst.tolist(), t.flops.tolist(), t.line.tolist(),
            t.source.tolist()):
        events.append({"ph": "X", "name": op, "cat": klass or pipe, "pid": pid_of[(ct, c)],
                       "tid": tid_of[pipe], "ts": start * us_per_cycle, "dur": (end - start) * us_per_cycle,
                       "args": {"cycles": end - start, "bytes": nbytes, "src": src, "dst": dst,
                                "flops": flops, "stall_cycles": start - ready, "line": line, "source": source}})
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns",
                   "otherData": {"kernel": result.kernel_name, "chip": result.chip.name,
                                 "cycles": result.cycles}}, f)
