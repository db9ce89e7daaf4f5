"""Compute time from FLOPs: the one per-step cost model the cluster code uses (tensor-parallel layers, scaling).

``flops_us(chip, flops, efficiency)`` = flops / (efficiency x the chip's peak fp16 cube rate). The peak is
[DER] from chips.py: AI cores x fractals per cycle x 16^3 MACs x 2 x clock. ``efficiency`` (model FLOPs
utilisation, MFU) is a stated assumption of each caller, never a measurement; 1.0 is the optimistic bound.
"""
from __future__ import annotations

from ascend_sim.hw.chips import ChipProfile

CUBE_FRACTAL_MACS = 16 * 16 * 16          # one fp16 fractal per cube cycle (chips.py cube_fractals_per_cycle)


def peak_flops(chip: ChipProfile) -> float:
    """The chip's peak fp16 cube rate in FLOP/s."""
    return chip.aic_count * chip.cube_fractals_per_cycle * CUBE_FRACTAL_MACS * 2 * chip.clock_hz


def flops_us(chip: ChipProfile, flops: float, efficiency: float = 1.0) -> float:
    """Microseconds of ``flops`` at ``efficiency`` x the peak cube rate."""
    return flops / (peak_flops(chip) * efficiency) * 1e6
