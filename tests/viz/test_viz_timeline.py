"""Pipeline timeline: trace adapter, rows, static figure and widget payload."""
from __future__ import annotations

import base64

import numpy as np
import pytest

from ascend_sim.viz import TimelineView, as_table, figure_png, pipe_stats, timeline_figure, timeline_rows
from ascend_sim.viz.synthetic import FakeTraceBuilder, add_trace, matmul_trace
from ascend_sim.viz.timeline import timeline_payload
from ascend_sim.trace.table import parse_cores


def _yticks(ax) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels()]


def _bars(ax) -> dict[str, int]:
    """Number of rectangles per class collection (gid "bars:<class>")."""
    return {c.get_gid()[5:]: len(c.get_paths()) for c in ax.collections
            if (c.get_gid() or "").startswith("bars:")}


def test_table_reads_the_record_format():
    t = as_table(add_trace(cores=2, tiles=4, buffer_num=2))
    assert len(t) == 2 * 4 * 4
    assert t.cores == [0, 1]
    assert t.pipes == ["MTE2", "V", "MTE3"]
    assert set(t.kind) == {"copy-in", "vector", "copy-out"}
    assert t.cycles == pytest.approx(float(t.end.max()))
    assert (t.wait_on[t.pipe == "V"] >= 0).all()


def test_mixed_core_types_get_distinct_units():
    b = FakeTraceBuilder()
    b.issue(0, "M", "Mmad", 10, core_type="AIC")
    b.issue(0, "V", "Add", 10, core_type="AIV")
    b.issue(1, "V", "Add", 10, core_type="AIV")
    t = as_table(b.result())
    assert t.cores == [0, 1, 2]
    assert t.unit_names() == {0: "AIC 0", 1: "AIV 0", 2: "AIV 1"}
    assert parse_cores("0", t.cores, t.unit_blocks()) == [0, 1]


def test_parse_cores():
    assert parse_cores("0-2, 5", list(range(8))) == [0, 1, 2, 5]
    assert parse_cores(None, [3, 4]) == [3, 4]
    assert parse_cores([4, 9], [3, 4]) == [4]


def test_rows_expand_small_launches_and_summarise_large_ones():
    small = as_table(add_trace(cores=2, tiles=2))
    rows = timeline_rows(small)
    assert [r.label for r in rows] == ["core 0 MTE2", "core 0 V", "core 0 MTE3",
                                       "core 1 MTE2", "core 1 V", "core 1 MTE3"]
    big = as_table(add_trace(cores=48, tiles=2))
    rows = timeline_rows(big)
    assert len(rows) == 3 + 47          # core 0 expanded, 47 summary rows
    assert rows[3].label == "core 1 (all pipes)" and rows[3].pipe is None
    assert len(timeline_rows(big, cores="10-11", expanded=[])) == 2


def test_static_timeline_draws_every_bar_stall_and_label():
    result = add_trace(cores=1, tiles=6, buffer_num=1)
    t = as_table(result)
    fig = timeline_figure(result)
    ax = fig.axes[0]
    assert _yticks(ax) == ["MTE2", "V", "MTE3"]
    assert _bars(ax) == {"copy-in": 12, "vector": 6, "copy-out": 6}
    stalls = [c for c in ax.collections if c.get_gid() == "stalls"]
    n_stalled = int((t.start > t.ready).sum())
    assert n_stalled > 0 and len(stalls[0].get_paths()) == n_stalled
    waits = [c for c in ax.collections if c.get_gid() == "waits"]
    assert len(waits[0].get_segments()) == int(((t.start > t.ready) & (t.wait_on >= 0)).sum())
    legend = [x.get_text() for x in ax.get_legend().get_texts()]
    assert legend == ["copy-in", "vector", "copy-out", "stall (sync wait)"]
    assert ax.get_xlabel() == "cycles"
    assert "1 trace" not in ax.get_title()


def test_static_timeline_cycle_range_and_summary_rows():
    result = add_trace(cores=30, tiles=8)
    fig = timeline_figure(result, cores="0-3", expanded=[1], xlim=(0, 400))
    ax = fig.axes[0]
    assert _yticks(ax) == ["core 0 (all pipes)", "core 1 MTE2", "core 1 V", "core 1 MTE3",
                           "core 2 (all pipes)", "core 3 (all pipes)"]
    assert ax.get_xlim() == (0, 400)
    t = as_table(result)
    visible = (t.unit <= 3) & (t.start <= 400)
    assert sum(_bars(ax).values()) == int(visible.sum())


def test_cube_timeline_has_cube_pipes():
    fig = timeline_figure(matmul_trace(k_steps=3))
    ax = fig.axes[0]
    assert _yticks(ax) == ["MTE2", "M", "MTE1", "FIX", "S"]
    assert _bars(ax)["cube"] == 3 and _bars(ax)["sync"] == 3


def test_pipe_stats():
    t = as_table(add_trace(cores=2, tiles=4, buffer_num=2))
    stats = {s.pipe: s for s in pipe_stats(t)}
    assert stats["MTE2"].count == 16
    assert stats["MTE2"].busy == pytest.approx(float((t.end - t.start)[t.pipe == "MTE2"].sum()))
    assert 0 < stats["V"].ratio < stats["MTE2"].ratio <= 1


def test_payload_columns_are_aligned_and_decodable():
    t = as_table(add_trace(cores=2, tiles=3))
    data = timeline_payload([t], "add")
    g = data["groups"][0]
    assert data["pipes"] == ["MTE2", "V", "MTE3"]
    assert all(len(col) == g["n"] == len(t) for col in g["cols"].values())
    k = int(np.flatnonzero(t.pipe == "V")[0])
    assert g["ops"][g["cols"]["o"][k]] == "Add"
    assert g["lines"][g["cols"]["l"][k]] == "kernel.py:40"
    assert g["sources"][g["cols"]["l"][k]].startswith("Add(zLocal")
    assert g["tiers"][g["cols"]["t"][k]] == "UB"
    assert data["kinds"][g["cols"]["k"][k]][0] == "vector"


def test_payload_keeps_a_record_without_source_text():
    """A record whose source text is unknown (a kernel compiled from a notebook cell the kernel process cannot
    read back) still pairs with its line: numpy string arrays used to drop the empty source's separator."""
    b = FakeTraceBuilder()
    b.issue(0, "V", "Add", 10, line=7, source="")
    b.issue(0, "V", "Mul", 10, line=8, source="Mul(z, x, y, n);")
    g = timeline_payload([as_table(b.result())], "k")["groups"][0]
    assert [(g["lines"][i], g["sources"][i]) for i in g["cols"]["l"]] == [("kernel.py:7", ""),
                                                                           ("kernel.py:8", "Mul(z, x, y, n);")]


def test_widget_state_and_static_fallback():
    result = add_trace(cores=8, tiles=4)
    w = TimelineView(result, cores="0-5", view_range=(0, 500), title="add")
    assert w.cores == "0-5"
    assert w.view_range == [0.0, 500.0]
    assert w.expanded == [0, 1, 2, 3, 4, 5]
    data, _ = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    png = base64.b64decode(data["image/png"])
    assert png.startswith(b"\x89PNG")
    assert data["text/plain"] == "TimelineView(1 trace(s), 128 records)"
    ax = w.static_figure().axes[0]
    assert ax.get_xlim() == (0, 500) and len(_yticks(ax)) == 18


def test_png_is_deterministic():
    a = figure_png(timeline_figure(add_trace(cores=2, tiles=3)))
    b = figure_png(timeline_figure(add_trace(cores=2, tiles=3)))
    assert a == b
