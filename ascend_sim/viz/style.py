"""Names, order and colours shared by every view (Python and the browser side).

Colours follow the Okabe-Ito palette, which stays distinguishable for the
common forms of colour blindness.
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
    ("l1-to-l0", "#56B4E9", "MTE1: L1 -> L0A/L0B"),
    ("copy-out", "#E69F00", "MTE3: UB -> GM (搬出)"),
    ("fixpipe", "#CC79A7", "FIX: L0C -> GM/L1"),
    ("scalar", "#8C8C8C", "S: scalar (标量)"),
    ("sync", "#222222", "SetFlag/WaitFlag/barriers (同步)"),
)
KIND_NAMES: tuple[str, ...] = tuple(c[0] for c in KINDS)
KIND_COLORS: dict[str, str] = {c[0]: c[1] for c in KINDS}

#: Colour of the hatched stall region (waiting on a sync edge).
STALL_COLOR = "#B22222"


def format_bytes(n: float) -> str:
    """``1536 -> '1.5 KiB'``: binary units, at most one decimal."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" or n == int(n) else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover
