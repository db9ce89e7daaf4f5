"""The Chrome/Perfetto export: the widget's layout, wait arrows, bandwidth counters, and a cycles time axis."""
from __future__ import annotations

import json

import numpy as np
import pytest

from ascend_sim import launch
from ascend_sim.analysis.chrome import chrome_trace_events
from ascend_sim.kernels.add_custom import AddCustomTilingData, add_custom
from ascend_sim.kernels.matmul import run_matmul
from ascend_sim.trace.table import PIPE_ORDER, as_table


@pytest.fixture(scope="module")
def add_result():
    n = 8 * 2048
    x, y = np.ones(n, np.float16), np.ones(n, np.float16)
    return launch(add_custom, 8, x, y, np.zeros_like(x), AddCustomTilingData(totalLength=n, tileNum=8))


def _threads(doc, pid):
    return {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M"
            and e["name"] == "thread_name" and e["pid"] == pid}


def test_tracks_only_for_pipes_a_core_used_in_the_widgets_order(add_result):
    doc = chrome_trace_events(add_result)
    used = set(as_table(add_result).pipe[as_table(add_result).unit == 0].tolist())
    threads = _threads(doc, 0)
    assert set(threads.values()) == used and "M" not in threads.values() and "FIX" not in threads.values()
    assert all(PIPE_ORDER[tid] == name for tid, name in threads.items())
    sort = {e["tid"]: e["args"]["sort_index"] for e in doc["traceEvents"]
            if e["name"] == "thread_sort_index" and e["pid"] == 0}
    assert sorted(threads, key=sort.get) == sorted(threads)


def test_cube_cores_come_first_like_the_widget():
    res = run_matmul(128, 128, 128, 32)[3]
    doc = chrome_trace_events(res)
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    table = as_table(res)
    assert [names[u] for u in table.cores] == [f"{table.core_type[table.unit == u][0]} core {table.core[table.unit == u][0]}"
                                               for u in table.cores]


def test_every_stall_gets_a_flow_arrow_from_the_record_that_released_it(add_result):
    doc = chrome_trace_events(add_result)
    t = as_table(add_result)
    stalled = int(((t.wait_on >= 0) & (t.start > t.ready)).sum())
    starts = [e for e in doc["traceEvents"] if e["ph"] == "s"]
    ends = {e["id"]: e for e in doc["traceEvents"] if e["ph"] == "f"}
    assert stalled > 0 and len(starts) == len(ends) == stalled
    for s in starts:            # the arrow starts inside the releasing slice and ends where the waiter starts
        f = ends[s["id"]]
        assert s["ts"] <= f["ts"] + 1e-9
        slices = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == s["pid"] and e["tid"] == s["tid"]
                  and e["ts"] <= s["ts"] <= e["ts"] + e["dur"]]
        assert slices, "a flow start must bind to the slice that released the wait"


def test_bandwidth_counters_integrate_to_the_bytes_copied(add_result):
    doc = chrome_trace_events(add_result, unit="cycles")
    t = as_table(add_result)
    for name, side in (("GM read GB/s", t.src), ("GM write GB/s", t.dst)):
        pts = [(e["ts"], e["args"]["GB/s"]) for e in doc["traceEvents"] if e["ph"] == "C" and e["name"] == name]
        ts = np.array([p[0] for p in pts])
        level = np.array([p[1] for p in pts])
        area = float((level[:-1] * np.diff(ts)).sum()) / add_result.chip.clock_ghz     # GB/s * cycles / (Gcycle/s)
        assert level[-1] == pytest.approx(0.0, abs=1e-6)
        assert area == pytest.approx(float(t.nbytes[side == "GM"].sum()), rel=1e-6)


def test_time_axis_in_cycles_or_microseconds(add_result):
    t = as_table(add_result)
    first = int(np.argmax(t.end - t.start))
    for unit, scale in (("cycles", 1.0), ("us", 1.0 / (add_result.chip.clock_ghz * 1e3))):
        spans = [e for e in chrome_trace_events(add_result, unit)["traceEvents"] if e["ph"] == "X"]
        assert spans[first]["ts"] == pytest.approx(t.start[first] * scale)
        assert spans[first]["dur"] == pytest.approx((t.end[first] - t.start[first]) * scale)
    with pytest.raises(ValueError, match="unit must be one of"):
        chrome_trace_events(add_result, "ms")


def test_write_round_trips(add_result, tmp_path):
    path = tmp_path / "t.json"
    add_result.to_chrome_trace(path, unit="cycles")
    assert json.loads(path.read_text())["otherData"]["time_unit"].startswith("1 us on the axis = 1 cycle")
