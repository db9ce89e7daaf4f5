"""The per-pipe cycle model: what each instruction costs, from chip-profile parameters.

Placement (in order within a pipe, in parallel across pipes, after sync edges)
is in core.Core.issue; this module only prices instructions.
"""
from __future__ import annotations

import math

from ascend_sim.engine.core import Core


def gm_transfer(core: Core, pipe: int, nbytes: int, gm_addr: int, bursts: int = 1) -> tuple:
    """The cost of a GM read (MTE2) or write (MTE3/FIX), priced at its start by ``Core.issue_n``.

    It depends on the start cycle (the HBM share is halved while the core's other
    GM pipe streams), so it is handed to ``issue`` as (pipe, bytes, bursts, 512 B aligned).
    """
    return (pipe, nbytes, bursts, gm_addr % core.chip.gm_burst_align == 0)


def local_transfer(core: Core, nbytes: int, bytes_per_cycle: float, startup: int, bursts: int = 1) -> float:
    """Cost of an on-chip copy (L1->L0A/L0B, UB->L1, UB->UB)."""
    return startup + (bursts - 1) * core.chip.burst_overhead_cycles + nbytes / bytes_per_cycle


def vector(core: Core, repeats: int, klass: str) -> float:
    """Cost of a vector instruction: startup + repeats x cycles per 256 B repeat of its class."""
    return core.chip.vec_startup + repeats * core.chip.vec_cycles_per_repeat[klass]


def vector_repeats(count: int, itemsize: int, repeat_bytes: int = 256) -> int:
    return max(1, math.ceil(count * itemsize / repeat_bytes))


def cube(core: Core, fractals: int) -> float:
    """Cost of Mmad: startup + fractal MACs at ``cube_fractals_per_cycle``."""
    return core.chip.cube_startup + fractals / core.chip.cube_fractals_per_cycle
