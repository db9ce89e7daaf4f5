"""Level of detail for large traces (viz/lod.py): bounded bars, the totals kept, small traces untouched."""
from __future__ import annotations

import numpy as np

from ascend_sim.hw.chips import Ascend910B
from ascend_sim.viz.lod import coarsen
from ascend_sim.viz.synthetic import large_matmul_table, matmul_trace
from ascend_sim.viz.timeline import TimelineView
from ascend_sim.viz.traffic import traffic_edges
from ascend_sim.viz.traffic_view import TrafficView
from ascend_sim.trace.table import as_table


def _per_row(t, f):
    out = {}
    for u, p, v in zip(t.unit.tolist(), t.pipe.tolist(), f(t).tolist()):
        out.setdefault((u, p), []).append(v)
    return out


def test_a_large_trace_becomes_at_most_the_bar_budget_and_keeps_its_totals():
    full = large_matmul_table(60_000, cores=6)
    coarse = coarsen(full, 1_000)
    assert len(coarse) <= 1_000 < len(full)
    assert int(coarse.weight.sum()) == len(full)
    assert int(coarse.nbytes.sum()) == int(full.nbytes.sum()) and int(coarse.flops.sum()) == int(full.flops.sum())
    starts, ends = _per_row(full, lambda t: t.start), _per_row(full, lambda t: t.end)
    cs, ce = _per_row(coarse, lambda t: t.start), _per_row(coarse, lambda t: t.end)
    assert set(cs) == set(starts)
    for row in starts:          # each core and pipe still begins and ends where it did
        assert min(cs[row]) == min(starts[row]) and max(ce[row]) == max(ends[row])
    merged = coarse.weight > 1
    assert merged.any() and all(" ×" in o for o in coarse.op[merged])
    assert (coarse.wait_on[merged] == -1).all()


def test_a_small_trace_is_drawn_record_by_record():
    t = as_table(matmul_trace(cores=2))
    assert coarsen(t) is t
    view = TimelineView(t)
    assert view.data["groups"][0]["n"] == len(t)


def test_the_views_of_a_large_trace_send_few_bars_and_the_same_traffic():
    full = large_matmul_table(200_000, cores=24, chip=Ascend910B())
    view = TimelineView(full)
    g = view.data["groups"][0]
    assert g["n"] <= 10_000 and "level of detail" in g["header"]
    traffic = TrafficView(full).traffic
    exact = {e.key: (e.nbytes, e.count) for e in traffic_edges(full)}
    assert {e.key: (e.nbytes, e.count) for e in traffic.edges} == exact       # bytes and transfers per link
    assert len(traffic.table) <= 4_000
    assert all(o.source == "estimate" for o in traffic.occupancy)
