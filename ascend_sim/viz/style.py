"""Names, order and colours shared by every view (Python and the browser side).

Colours follow the Okabe-Ito palette, which stays distinguishable for the
common forms of colour blindness, with the lightness of some moved so that every
colour keeps a WCAG 2.1 non-text contrast of at least 3:1 against both the light
and the dark theme's backgrounds (:data:`BACKGROUNDS`; tests/viz/test_palette.py
computes it). The browser side receives these colours with the data and never
hard-codes one: text and row backgrounds come from the theme (viz.css).
"""
from __future__ import annotations

from ascend_sim.trace.table import PIPE_ORDER

#: Pipe rows in display order (流水线: one in-order queue per unit).
PIPES: tuple[str, ...] = PIPE_ORDER

#: Memory tiers from far to near (存储层级).
TIERS: tuple[str, ...] = ("GM", "L2", "L1", "L0A", "L0B", "L0C", "UB")

#: On-chip tiers with a per-core capacity, and the ChipProfile field holding it.
ONCHIP_CAPACITY_FIELD: dict[str, str] = {
    "UB": "ub_bytes",
    "L1": "l1_bytes",
    "L0A": "l0a_bytes",
    "L0B": "l0b_bytes",
    "L0C": "l0c_bytes",
}

#: Instruction kinds (指令种类), the colour key of the timeline: (name, colour, meaning). A kind follows from the
#: pipe and op (``kind_of`` in trace/table.py); it is not the record's instruction class ``klass`` (its cost class,
#: docs/glossary.md).
KINDS: tuple[tuple[str, str, str], ...] = (
    ("copy-in", "#0072B2", "MTE2: GM -> UB/L1 (搬入)"),
    ("vector", "#009E73", "V: vector compute (矢量计算)"),
    ("cube", "#D55E00", "M: cube matmul (矩阵计算)"),
    ("l1-to-l0", "#1D98DE", "MTE1: L1 -> L0A/L0B"),
    ("copy-out", "#C08500", "MTE3: UB -> GM (搬出)"),
    ("fixpipe", "#CA75A4", "FIX: L0C -> GM/L1"),
    ("scalar", "#8C8C8C", "S: scalar (标量)"),
    ("sync", "#9467BD", "SetFlag/WaitFlag/barriers (同步)"),
)
KIND_NAMES: tuple[str, ...] = tuple(c[0] for c in KINDS)
KIND_COLORS: dict[str, str] = {c[0]: c[1] for c in KINDS}

#: Colour of the hatched stall region (waiting on a sync edge), and of the wait arrows that explain it.
STALL_COLOR = "#D62929"

#: Every other colour a view draws on the page's background (not text: text follows the theme).
MARKS: dict[str, str] = {
    "stall": STALL_COLOR,           # hatched stalls, wait arrows, a tier's capacity line
    "link": "#3D72AC",              # traffic diagram: a link between memory tiers
    "link-hover": "#D55E00",        # the link under the pointer
    "tier-stroke": "#707070",       # outline of a used tier's box
    "live": "#009E73",              # occupancy: bytes live in a tier
    "reserved": "#707070",          # occupancy: the InitBuffer reservation (dashed)
    "axis": "#707070",              # occupancy chart axes
    "before": "#6F8FB8",            # comparison: the launch before
    "after": "#0072B2",             # comparison: the launch after
}

#: The backgrounds the views are drawn on: JupyterLab Light's --jp-layout-color0 and JupyterLab Dark's
#: --jp-layout-color0 and --jp-layout-color1 (the lightest dark surface an output can sit on).
BACKGROUNDS: dict[str, str] = {"light": "#FFFFFF", "dark": "#111111", "dark-surface": "#212121"}

#: WCAG 2.1 success criterion 1.4.11 (non-text contrast): graphics need 3:1 against what is next to them.
MIN_CONTRAST = 3.0


def relative_luminance(color: str) -> float:
    """WCAG 2.1 relative luminance of ``#RRGGBB`` (0 black .. 1 white)."""
    h = color.lstrip("#")
    if len(h) != 6:
        raise ValueError(f"colour {color!r} is not #RRGGBB")
    channels = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2.1 contrast ratio of two colours, 1 (same) .. 21 (black on white)."""
    la, lb = relative_luminance(a), relative_luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def format_bytes(n: float) -> str:
    """``1536 -> '1.5 KiB'``: binary units, at most one decimal."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" or n == int(n) else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover
