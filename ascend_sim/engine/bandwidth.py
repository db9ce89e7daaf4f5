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


class LineFills:
    """GM reads of the same 512 B windows by several cores at once: a read that finds its lines in L2 while another
    core's read is still bringing them from HBM gets them only as that fill arrives.

    The rule [OFF, CANN Ascend C guide, "避免同地址访问" (docs/zh/guide/算子实践参考/SIMD算子性能优化/内存访问/ in
    https://github.com/cannmirror/asc-devkit)]: MTE2/MTE3/Scalar GM requests are handled in 512 B-aligned windows,
    and requests from several cores to one window at the same time are processed serially, for data consistency.
    Model [EST, ours]: the L2 (engine/l2.py) marks a line resident as soon as the first reader's miss is decided, so
    without this rule a second core reading the same lines a moment later would "hit" data still on its way from
    HBM. Here a read that hits lines whose fill by another core is in flight ends no earlier than that fill: cores
    reading one tile together move at the pace of the one that misses, and only a core reading the tile after the
    fill has landed gets L2's hit rate. Only reads of exactly the same lines are seen (a matmul's cores sharing a
    tile: the same GM address, bursts, burst length and pitch); one dict lookup per read.
    """

    __slots__ = ("fills",)

    def __init__(self):
        self.fills: dict = {}           # lines -> (reader, end cycle) of the latest read that missed in L2

    @staticmethod
    def needed(chip, concurrency: int) -> "LineFills | None":
        """A tracker when several blocks run at once and the chip's rule is on (``gm_hit_waits_for_fill``)."""
        return LineFills() if chip.gm_hit_waits_for_fill and concurrency > 1 else None

    def read(self, key, reader: int, start: float, moving: float, missed: bool) -> float:
        """The cycles a read of lines ``key`` takes from ``start`` (``moving``: its own time), given the fills in
        flight; a read that ``missed`` (some bytes from HBM) is recorded as the lines' fill."""
        fill = self.fills.get(key)
        if fill is not None and fill[0] != reader and fill[1] > start + moving:
            moving = fill[1] - start        # the lines it hit are still arriving: it ends with that fill
        if missed:
            self.fills[key] = (reader, start + moving)
        return moving
