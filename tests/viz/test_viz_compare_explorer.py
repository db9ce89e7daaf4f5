"""Before/after comparison and the what-if explorer."""
from __future__ import annotations

import ipywidgets as W
import pytest

from ascend_sim.viz import CompareView, WhatIfExplorer, compare, compare_figure, make_control
from ascend_sim.viz.synthetic import add_trace


def test_compare_speedup_and_pipe_deltas():
    before, after = add_trace(cores=1, tiles=8, buffer_num=1), add_trace(cores=1, tiles=8, buffer_num=2)
    cmp = compare(before, after, labels=("single", "double"))
    assert cmp.speedup == pytest.approx(before.cycles / after.cycles)
    assert cmp.speedup > 1
    d = {x.pipe: x for x in cmp.pipes}
    assert list(d) == ["MTE2", "V", "MTE3"]
    assert d["MTE2"].busy_delta == pytest.approx(0)          # same copies, just overlapped
    assert d["V"].stall_delta < 0                             # less waiting with two buffers
    assert d["MTE2"].after.ratio > d["MTE2"].before.ratio


def test_compare_figure_shares_one_axis():
    before, after = add_trace(cores=2, tiles=4, buffer_num=1), add_trace(cores=2, tiles=4, buffer_num=2)
    fig = compare_figure(before, after, labels=("BUFFER_NUM=1", "BUFFER_NUM=2"))
    t1, t2, bars = fig.axes[:3]
    assert t1.get_title(loc="left").startswith("BUFFER_NUM=1:")
    assert t2.get_title(loc="left").startswith("BUFFER_NUM=2:")
    assert t1.get_xlim() == t2.get_xlim() == (0, before.cycles)
    assert len([t for t in t2.get_yticklabels()]) == 6
    assert "speedup x" in bars.get_title(loc="left")
    assert [t.get_text() for t in bars.get_xticklabels()] == ["MTE2", "V", "MTE3"]
    assert {c.get_gid() for c in bars.containers[0]} == {"delta:before"}
    assert any(t.get_text().endswith(" pp") for t in bars.texts)


def test_compare_view():
    v = CompareView(add_trace(tiles=4, buffer_num=1), add_trace(tiles=4, buffer_num=2))
    assert [g["label"] for g in v.timeline.data["groups"]] == ["add BUFFER_NUM=1", "add BUFFER_NUM=2"]
    same = CompareView(add_trace(tiles=2), add_trace(tiles=4))
    assert [g["label"] for g in same.timeline.data["groups"]] == ["before: add BUFFER_NUM=2",
                                                                  "after: add BUFFER_NUM=2"]
    assert "speedup" in v.summary.value
    data, _ = v._repr_mimebundle_()
    assert data["text/plain"].startswith("CompareView(speedup x") and "image/png" in data


def test_make_control_kinds():
    assert isinstance(make_control("tile", [64, 128, 256]), W.SelectionSlider)
    assert isinstance(make_control("chip", ["Ascend910B", "Ascend910"]), W.Dropdown)
    s = make_control("blocks", (1, 48), 8)
    assert isinstance(s, W.IntSlider) and s.value == 8 and s.max == 48
    assert isinstance(make_control("x", (0.0, 1.0, 0.1)), W.FloatSlider)
    assert isinstance(make_control("db", True), W.Checkbox)
    with pytest.raises(TypeError):
        make_control("bad", object())


def _build(tiles: int = 4, BUFFER_NUM: int = 2):
    if tiles > 16:
        raise ValueError("tile does not fit in UB")
    return add_trace(cores=2, tiles=tiles, buffer_num=BUFFER_NUM)


def test_explorer_reruns_and_updates_views():
    e = WhatIfExplorer(_build, {"tiles": [2, 4, 8, 32], "BUFFER_NUM": [1, 2]}, traffic=True)
    assert e.values == {"tiles": 2, "BUFFER_NUM": 1}
    assert e.timeline.data["groups"][0]["n"] == 2 * 2 * 4
    e.controls["tiles"].value = 8                       # as if the learner moved the slider
    assert e.timeline.data["groups"][0]["n"] == 2 * 8 * 4
    assert "cycles" in e.summary.value and e.last_update_ms > 0
    assert e.traffic is not None and e.traffic.data["edges"]
    e.set(tiles=32)
    assert "ValueError: tile does not fit in UB" in e.status.value
    assert e.timeline.data["groups"][0]["n"] == 2 * 8 * 4   # the last good run stays
    e.set(tiles=4)
    e.pin()
    e.set(BUFFER_NUM=2)
    assert len(e.timeline.data["groups"]) == 2 and "speedup" in e.summary.value
    fig = e.static_figure()
    assert len([a for a in fig.axes if a.get_yticklabels()]) == 2
    e.unpin()
    assert len(e.timeline.data["groups"]) == 1


def test_comparison_reads_before_to_after_and_says_what_it_sums():
    from ascend_sim.viz.summary import comparison_html
    before, after = add_trace(buffer_num=1), add_trace(buffer_num=2)
    html = comparison_html(compare(before, after, labels=("BUFFER_NUM=1", "BUFFER_NUM=2")))
    head = html.split("<br>")[0]
    assert head.index("BUFFER_NUM=1") < head.index("BUFFER_NUM=2")          # before, then after
    b, a = compare(before, after).before.cycles, compare(before, after).after.cycles
    assert f"{b:,.0f} → {a:,.0f} cycles" in head
    assert "sums every core" in html
    assert "Busy cycles are the same" in html        # double buffering: same work, less waiting
