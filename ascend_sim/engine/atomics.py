"""The cost of an atomic write to GM (SetAtomicAdd/Max/Min, then Fixpipe or DataCopy to GM).

Failure it prevents: split-K's atomic add priced as a plain write, and several cores adding into one C at the same
moment overlapping as if they wrote different bytes.

Model [EST: no public figure of the atomic unit's own cost was found]: the atomic unit combines the data with
what GM holds ("将待拷贝的内容和GM已有内容进行求和，然后将求和结果写入GM", SetAtomicAdd's API page in
https://github.com/cannmirror/asc-devkit ``docs/zh/api/``), a read-modify-write where the writes meet, at L2:

1. the destination bytes are read first, through L2 (engine/l2.py): what L2 does not hold is filled from HBM,
   booked on the launch's HBM timeline (engine/bandwidth.py) before the write, which then lands in L2 as a plain
   write does (``atomic_rmw_at_l2``);
2. same-address rule (guide, SIMD算子性能优化/内存访问/避免同地址访问.md: requests of several cores within one
   512 B window "会被串行处理"): an atomic write starts on its windows only once the previous atomic write to
   any of them has finished, in the time order the scheduler decides (engine/scheduler.py).
"""
from __future__ import annotations

import weakref

from ascend_sim.engine.l2 import GM_BASE
from ascend_sim.engine.timing import gm_cycles

_BUSY: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()     # launch -> {window: cycle it is free}


class AtomicWrite:
    """A GM write under an atomic mode, as a cost of its start (engine/core.issue_n calls it once): the wait for
    its windows, the fill of what L2 lacks, then the write (``transfer``: timing.gm_transfer's tuple)."""

    __slots__ = ("core", "transfer")

    def __init__(self, core, transfer: tuple):
        self.core, self.transfer = core, transfer

    def __call__(self, start: float) -> float:
        core = self.core
        launch, chip = core.launch, core.chip
        if start > launch.horizon:      # other blocks behind in simulated time decide their GM accesses first
            launch.time_yield(core, start)
        _, nb, count, _, buf, off, blen, pitch, mode = self.transfer
        addr = buf.base_addr - GM_BASE + off
        busy = _BUSY.get(launch)
        if busy is None:
            busy = _BUSY[launch] = {}
        windows = _windows(addr, count, blen, pitch, chip.gm_burst_align)
        free = max(busy.get(w, 0.0) for w in windows)
        begin = free if free > start else start
        fill = 0.0
        if chip.atomic_rmw_at_l2:
            _, hbm = launch.l2.transfer(False, addr, count, blen, pitch, nb, mode)
            if hbm:
                rate = chip.hbm_bytes_per_cycle
                fill = launch.hbm.reserve(begin, hbm, rate) if launch.hbm is not None else hbm / rate
        end = begin + fill
        end += gm_cycles(core, end, self.transfer)
        for w in windows:
            busy[w] = end
        return end - start


def _windows(addr: int, count: int, blen: int, pitch: int, window: int) -> range | list:
    """The ``window``-byte GM windows ``count`` bursts of ``blen`` bytes ``pitch`` apart from ``addr`` touch."""
    if count == 1 or pitch - blen < window:
        return range(addr // window, -(-(addr + (count - 1) * pitch + blen) // window))
    seen: dict = {}
    for i in range(count):
        a = addr + i * pitch
        for w in range(a // window, -(-(a + blen) // window)):
            seen[w] = None
    return list(seen)
