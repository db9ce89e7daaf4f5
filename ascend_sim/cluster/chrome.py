"""Chrome / Perfetto export of a cluster timeline: one process per NPU, one thread per kind of event."""
from __future__ import annotations

import json

from ascend_sim.cluster.timeline import Timeline

KINDS = ("compute", "send", "recv", "reduce")


def chrome_events(timeline: Timeline) -> list[dict]:
    """Trace Event Format dicts (times in microseconds, as the format wants)."""
    events: list[dict] = []
    for dev in timeline.cluster.devices:
        events.append({"ph": "M", "name": "process_name", "pid": dev.rank, "tid": 0,
                       "args": {"name": f"NPU {dev.rank} (server {dev.server}, HCCS domain {dev.domain})"}})
        for tid, kind in enumerate(KINDS):
            events.append({"ph": "M", "name": "thread_name", "pid": dev.rank, "tid": tid, "args": {"name": kind}})
    for e in timeline.events:
        events.append({"ph": "X", "name": e.label, "cat": e.kind, "pid": e.device, "tid": KINDS.index(e.kind),
                       "ts": e.start_us, "dur": e.end_us - e.start_us,
                       "args": {"peer": e.peer, "bytes": e.nbytes}})
    return events


def write_chrome_trace(timeline: Timeline, path: str) -> None:
    """Write the timeline for chrome://tracing, Perfetto or MindStudio Insight."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"traceEvents": chrome_events(timeline), "displayTimeUnit": "ns",
                   "otherData": {"cluster": timeline.cluster.describe()}}, f)
