"""HBM bandwidth booked by the cores actually copying, over the time of one launch.

The blocks of a wave advance together in simulated time (engine/scheduler.py: a GM transfer is
booked only when no other block is more than TIME_SLICE cycles behind), so a block finds the HBM
traffic of the transfers that start before its own (to within that slice) already booked, bin by
bin, and takes what is left: a transfer's HBM bytes move at its own path rate while a bin has room,
and wait for the next bins when it has not. The chip's HBM bandwidth is never exceeded, and a core
whose tiles nobody else is fetching at that moment (the first block to touch data that others then
find in L2) streams at its path rate. In an HBM-bound launch the blocks share the bins and end
together; the launch's length is the HBM's [EST, ours].
"""
from __future__ import annotations

BIN = 128       # cycles per booking bin


class HbmTimeline:
    """Bytes of HBM traffic booked per ``BIN`` cycles, against ``bytes_per_cycle``."""

    __slots__ = ("cap", "booked")

    def __init__(self, bytes_per_cycle: float):
        self.cap = bytes_per_cycle * BIN
        self.booked: list[float] = []

    @staticmethod
    def needed(chip, core_type: str, groups: int) -> "HbmTimeline | None":
        """A timeline for ``groups`` concurrent blocks of ``core_type``, or None when all their GM pipes
        streaming at once stay within the HBM bandwidth (then no booking can ever slow a transfer)."""
        aiv = chip.gm_read_bytes_per_cycle + chip.gm_write_bytes_per_cycle           # MTE2 + MTE3
        aic = chip.aic_gm_read_bytes_per_cycle + chip.fix_gm_bytes_per_cycle         # MTE2 + Fixpipe
        per_block = {"AIV": aiv, "AIC": aic}.get(core_type, aic + 2 * aiv if chip.separated else aic + aiv)
        return HbmTimeline(chip.hbm_bytes_per_cycle) if groups * per_block > chip.hbm_bytes_per_cycle else None

    def reserve(self, start: float, nbytes: float, rate: float) -> float:
        """Book ``nbytes`` from cycle ``start`` at up to ``rate`` bytes per cycle; returns the cycles it takes."""
        booked, cap = self.booked, self.cap
        t = start
        b = int(t) // BIN
        left = nbytes
        span = (b + 1) * BIN - t                    # cycles of this bin from t: all of it after the first
        top, most = cap * span / BIN, rate * span   # the bin's bytes over that span; this transfer's most
        while True:
            if b >= len(booked):
                booked.extend([0.0] * (b + 64 - len(booked)))
            room = cap - booked[b]                  # the bin's bytes not booked, spread evenly over it
            if room > top:
                room = top
            can = most
            if room < can:
                can = room if room > 0.0 else 0.0
            if can >= left:
                booked[b] += left
                return t + left * span / can - start
            booked[b] += can
            left -= can
            b += 1
            t = b * BIN
            if span != BIN:                         # the first bin done: whole bins from now on
                span = BIN
                top, most = cap * span / BIN, rate * span
