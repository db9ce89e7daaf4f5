"""Chrome / Perfetto export of a launch, laid out like the timeline widget (a client of the trace table).

One process per core (cube cores first, in the widget's order), one thread per pipe the core used (the
widget's pipe order; no empty tracks), a slice per instruction, a flow arrow from the instruction whose end
released a stall to the instruction that waited, and chip-wide counter tracks of GM read and write
bandwidth. Times are microseconds by default, or cycles (``unit="cycles"``: 1 "us" on the axis = 1 cycle).
"""
from __future__ import annotations

import json

import numpy as np

from ascend_sim.trace.table import PIPE_ORDER, TraceTable, as_table

UNITS = ("us", "cycles")


def chrome_trace_events(result, unit: str = "us") -> dict:
    """The Trace Event Format document of a ``LaunchResult`` (see :func:`write_chrome_trace`)."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    t = as_table(result)
    scale = 1.0 if unit == "cycles" else 1.0 / (result.chip.clock_ghz * 1e3)
    units = t.cores                          # the widget's row order: AIC before AIV, then by block
    events: list[dict] = []
    for pid in units:
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": _core_name(t, pid)}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
        used = set(t.pipe[t.unit == pid].tolist())
        for tid, pipe in enumerate(PIPE_ORDER):
            if pipe in used:
                events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": pipe}})
                events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                               "args": {"sort_index": tid}})
    tid_of = {p: i for i, p in enumerate(PIPE_ORDER)}
    for u, op, klass, pipe, ready, start, end, nbytes, src, dst, flops, line, source in zip(
            t.unit.tolist(), t.op.tolist(), t.klass.tolist(), t.pipe.tolist(), t.ready.tolist(), t.start.tolist(),
            t.end.tolist(), t.nbytes.tolist(), t.src.tolist(), t.dst.tolist(), t.flops.tolist(), t.line.tolist(),
            t.source.tolist()):
        events.append({"ph": "X", "name": op, "cat": klass or pipe, "pid": u, "tid": tid_of.get(pipe, len(PIPE_ORDER)),
                       "ts": start * scale, "dur": (end - start) * scale,
                       "args": {"cycles": end - start, "bytes": nbytes, "src": src, "dst": dst,
                                "flops": flops, "stall_cycles": start - ready, "line": line, "source": source}})
    events += _wait_flows(t, tid_of, scale)
    chip_pid = max(units, default=-1) + 1      # the counters' own process, after the cores
    counters = _bandwidth_counters(t, scale, result.chip.clock_ghz, chip_pid)
    if counters:
        events.append({"ph": "M", "name": "process_name", "pid": chip_pid, "tid": 0,
                       "args": {"name": f"{result.chip.name} GM bandwidth"}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": chip_pid, "tid": 0,
                       "args": {"sort_index": chip_pid}})
    events += counters
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"kernel": result.kernel_name, "chip": result.chip.name, "cycles": result.cycles,
                          "time_unit": "1 us on the axis = 1 cycle" if unit == "cycles" else "microseconds"}}


def write_chrome_trace(result, path, unit: str = "us") -> None:
    """Write Trace Event Format JSON (Perfetto, chrome://tracing, MindStudio Insight)."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(chrome_trace_events(result, unit), f)


def _core_name(t: TraceTable, unit: int) -> str:
    """``"AIV core 3"``: the core type and block index of a unit."""
    i = int(np.flatnonzero(t.unit == unit)[0])
    return f"{t.core_type[i]} core {t.core[i]}"


def _wait_flows(t: TraceTable, tid_of: dict[str, int], scale: float) -> list[dict]:
    """A flow arrow per stalled instruction: from the end of the record that released it to its start."""
    out: list[dict] = []
    pos = {int(ix): i for i, ix in enumerate(t.index.tolist())}
    stalled = np.flatnonzero((t.wait_on >= 0) & (t.start > t.ready))
    for n, i in enumerate(stalled.tolist()):
        j = pos.get(int(t.wait_on[i]))
        if j is None:
            continue
        end_j = float(t.end[j])
        out.append({"ph": "s", "id": n, "name": "wait", "cat": "wait", "pid": int(t.unit[j]),
                    "tid": tid_of.get(t.pipe[j], len(PIPE_ORDER)),
                    "ts": (end_j - min(1e-3, (end_j - float(t.start[j])) / 2)) * scale})
        out.append({"ph": "f", "bp": "e", "id": n, "name": "wait", "cat": "wait", "pid": int(t.unit[i]),
                    "tid": tid_of.get(t.pipe[i], len(PIPE_ORDER)), "ts": float(t.start[i]) * scale})
    return out


def _bandwidth_counters(t: TraceTable, scale: float, clock_ghz: float, pid: int) -> list[dict]:
    """Chip-wide GM read and write bandwidth (GB/s) as step counters over the copies' spans."""
    out: list[dict] = []
    for name, side in (("GM read GB/s", t.src), ("GM write GB/s", t.dst)):
        m = (side == "GM") & (t.end > t.start)
        if not m.any():
            continue
        rate = t.nbytes[m] / (t.end[m] - t.start[m]) * clock_ghz       # bytes/cycle * Gcycles/s = GB/s
        times = np.concatenate([t.start[m], t.end[m]])
        deltas = np.concatenate([rate, -rate])
        order = np.lexsort((deltas, times))          # at equal times, ends before starts
        steps = np.cumsum(deltas[order])
        ts = times[order]
        last = np.r_[ts[1:] != ts[:-1], True]        # one value per distinct time: the level after it
        for when, level in zip(ts[last].tolist(), steps[last].tolist()):
            out.append({"ph": "C", "name": name, "pid": pid, "ts": when * scale,
                        "args": {"GB/s": round(max(level, 0.0), 6)}})
    return out
