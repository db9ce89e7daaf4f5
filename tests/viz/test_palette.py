"""Every colour the views draw stands out in JupyterLab's light and dark themes (WCAG 2.1, non-text 3:1)."""
from __future__ import annotations

import re

import pytest

from ascend_sim.viz import as_table
from ascend_sim.viz.style import (BACKGROUNDS, KIND_COLORS, MARKS, MIN_CONTRAST, STALL_COLOR, contrast_ratio,
                                  relative_luminance)
from ascend_sim.viz.synthetic import add_trace
from ascend_sim.viz.timeline import timeline_payload
from ascend_sim.viz.traffic_view import NODE_TEXT, TrafficData, _NODE_COLOR
from ascend_sim.viz._widget import HERE

PALETTE = {**{f"kind {k}": c for k, c in KIND_COLORS.items()}, **{f"mark {k}": c for k, c in MARKS.items()},
           "stall": STALL_COLOR}


def test_contrast_ratio_matches_wcag_reference_values() -> None:
    assert contrast_ratio("#000000", "#FFFFFF") == pytest.approx(21.0)
    assert contrast_ratio("#FFFFFF", "#FFFFFF") == pytest.approx(1.0)
    assert contrast_ratio("#767676", "#FFFFFF") == pytest.approx(4.54, abs=0.01)   # the classic AA grey
    assert contrast_ratio("#777777", "#FFFFFF") == pytest.approx(4.48, abs=0.01)
    assert relative_luminance("#808080") == pytest.approx(0.2159, abs=1e-4)
    with pytest.raises(ValueError, match="#RRGGBB"):
        relative_luminance("#abc")


@pytest.mark.parametrize("theme", sorted(BACKGROUNDS))
def test_every_colour_meets_3_to_1_on_every_background(theme: str) -> None:
    bg = BACKGROUNDS[theme]
    low = {name: round(contrast_ratio(c, bg), 2) for name, c in PALETTE.items()
           if contrast_ratio(c, bg) < MIN_CONTRAST}
    assert not low, f"below {MIN_CONTRAST}:1 on the {theme} background {bg}: {low}"


def test_backgrounds_are_jupyterlabs() -> None:
    """The light and the dark theme's page colours, so the check above covers both themes."""
    assert relative_luminance(BACKGROUNDS["light"]) == 1.0
    assert all(relative_luminance(BACKGROUNDS[k]) < 0.02 for k in ("dark", "dark-surface"))


def test_kinds_stay_apart_and_tier_labels_read_on_their_boxes() -> None:
    colours = list(KIND_COLORS.values())
    assert len(set(colours)) == len(colours), "two instruction kinds share a colour"
    assert KIND_COLORS["sync"] != KIND_COLORS["scalar"]
    for tier, fill in _NODE_COLOR.items():            # text on a box: WCAG text contrast 4.5:1
        assert contrast_ratio(NODE_TEXT, fill) >= 4.5, tier


def test_the_browser_gets_its_colours_from_the_palette() -> None:
    """The ES modules hard-code no colour (dom.js's theme() fallbacks aside): a palette change reaches them."""
    for name in ("timeline.js", "traffic.js"):
        found = re.findall(r"#[0-9a-fA-F]{3,8}\b", (HERE / name).read_text(encoding="utf-8"))
        assert not found, f"{name} hard-codes {found}"
    table = as_table(add_trace(cores=1, tiles=2))
    assert timeline_payload([table])["colors"] == MARKS
    assert TrafficData.from_trace(table).payload()["colors"] == MARKS
