"""The chip facts Module 0 shows, read from the simulator itself: tiers, bandwidths and each number's source tag.

Every number comes from a ``ChipProfile`` (``ascend_sim.hw.chips``) and the engine's own tier set-up,
so the lesson cannot drift from the model. The source tag of a parameter ([OFF] official, [DER]
derived, [EST] estimate, [CAL] calibrated) is read from the comment beside it in ``chips.py``: the
profile function's line when it sets the value, else the ``ChipProfile`` default's line.
"""
from __future__ import annotations

import inspect
import re
from dataclasses import dataclass

from ascend_sim.api.pipe import FLOW, TIER_OF
from ascend_sim.engine.core import make_tiers
from ascend_sim.engine.instr import PIPES
from ascend_sim.hw import chips
from ascend_sim.hw.chips import ChipProfile

__all__ = ["BandwidthRow", "TierRow", "bandwidths", "parameter_tags", "queue_flows", "tiers"]

_TAGGED = re.compile(r"^[ \t]*\"?(\w+)\"?[ \t]*[:=][^#\n]*#[ \t]*\[(OFF|DER|EST|CAL)\b", re.M)


def parameter_tags(chip: ChipProfile) -> dict[str, str]:
    """``{field: tag}`` for ``chip``'s profile: OFF, DER, EST or CAL, from the comments in chips.py."""
    tags = {name: tag for name, tag in _TAGGED.findall(inspect.getsource(ChipProfile))}
    factory = getattr(chips, chip.name, None)
    if factory is not None:
        tags.update(_TAGGED.findall(inspect.getsource(factory)))
    return tags


@dataclass(frozen=True)
class TierRow:
    """One on-chip buffer: which core has it, its size, what TPipe may hand out, its alignment, its positions."""

    name: str
    core: str
    capacity: int
    usable: int
    align: int
    positions: tuple[str, ...]
    tag: str


def tiers(chip: ChipProfile) -> list[TierRow]:
    """The on-chip buffers of an AIV and an AIC core of ``chip``, as the engine builds them."""
    tags = parameter_tags(chip)
    rows = []
    for core in ("AIV", "AIC"):
        for name, tier in make_tiers(chip, core).items():
            positions = tuple(p.name for p, t in TIER_OF.items() if t == name)
            rows.append(TierRow(name, core, tier.capacity, tier.usable, tier.align, positions,
                                tags.get(f"{name.lower()}_bytes", "?")))
            tier.release()
    return rows


@dataclass(frozen=True)
class BandwidthRow:
    """One data path of the cycle model: its pipe, its rate in bytes per cycle and GB/s, and the source tag."""

    path: str
    pipe: str
    field: str
    bytes_per_cycle: float
    gb_per_s: float
    tag: str


# (path, pipe, ChipProfile field): the rates the cycle model charges, one core unless said otherwise
_PATHS = (
    ("GM -> UB / L1 (one core)", "MTE2", "gm_read_bytes_per_cycle"),
    ("UB -> GM (one core)", "MTE3", "gm_write_bytes_per_cycle"),
    ("HBM, the whole chip", "MTE2 + MTE3", "hbm_bytes_per_cycle"),
    ("L1 -> L0A", "MTE1", "l1_to_l0a_bytes_per_cycle"),
    ("L1 -> L0B", "MTE1", "l1_to_l0b_bytes_per_cycle"),
    ("L0C -> GM", "FIX", "fix_gm_bytes_per_cycle"),
    ("UB -> vector unit -> UB", "V", "vec_repeat_bytes"),
)


def bandwidths(chip: ChipProfile) -> list[BandwidthRow]:
    """The modelled rate of each data path of ``chip`` (GB/s = bytes per cycle x clock)."""
    tags = parameter_tags(chip)
    rows = []
    for path, pipe, name in _PATHS:
        rate, tag = float(getattr(chip, name)), tags.get(name, "?")
        if name == "vec_repeat_bytes":      # one repeat per vec_cycles_per_repeat["simple"] cycles (Add, Mul ...)
            rate, tag = rate / chip.vec_cycles_per_repeat["simple"], tags.get("simple", "?")
        rows.append(BandwidthRow(path, pipe, name, rate, rate * chip.clock_ghz, tag))
    return rows


def queue_flows() -> list[tuple[str, str, str, str]]:
    """``(position, buffer, producer pipe, consumer pipe)`` of every queue position, from the API's tables."""
    return [(p.name, TIER_OF[p], PIPES[src], PIPES[dst]) for p, (src, dst) in FLOW.items()]
