"""The per-pipe cycle model: what each instruction costs, from chip-profile parameters.

Placement (in order within a pipe, in parallel across pipes, after sync edges)
is in core.Core.issue; this module only prices instructions.
"""
from __future__ import annotations

import math

from .core import MTE2, MTE3, Core


def gm_transfer(core: Core, pipe: int, nbytes: int, gm_addr: int, bursts: int = 1):
    """Cost function of a GM read (MTE2) or write (MTE3/FIX) of ``nbytes`` in ``bursts`` bursts.

    Rate = min(the core's path rate, its share of the chip's HBM bandwidth).
    The share is the HBM limit over the cores of the wave, halved while the
    core's other GM pipe is streaming too. GM addresses that are not 512 B
    aligned run at ``gm_unaligned_efficiency`` of the rate.
    """
    chip = core.chip
    path, startup, share, other = _gm_path(core, pipe)
    eff = 1.0 if gm_addr % chip.gm_burst_align == 0 else chip.gm_unaligned_efficiency
    tail = core.tail

    def cost(start: float) -> float:
        s = share / 2 if tail[other] > start else share
        rate = min(path, s) * eff
        return startup + (bursts - 1) * chip.burst_overhead_cycles + nbytes / rate
    return cost


def _gm_path(core: Core, pipe: int) -> tuple:
    """(path rate, startup, HBM share, the other GM pipe) of a GM pipe, fixed for a launch: cached on the core."""
    cache = core.gm_paths
    hit = cache.get(pipe)
    if hit is None:
        chip = core.chip
        write = pipe != MTE2
        hit = cache[pipe] = (chip.gm_write_bytes_per_cycle if write else chip.gm_read_bytes_per_cycle,
                             chip.gm_write_startup if write else chip.gm_read_startup,
                             chip.hbm_bytes_per_cycle / core.launch.concurrency,
                             MTE2 if write else MTE3)
    return hit


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
