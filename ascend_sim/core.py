"""One simulated core: its tiers, pipes, happens-before clocks and the issue path.

The issue path is the seam between the API and the timing model: an op checks
its operands, calls ``core.issue(...)`` (sanitizer checks on local memory,
placement on the pipe after every synchronisation edge, one ``Instr`` record),
then does its numpy work.
"""
from __future__ import annotations

import numpy as np

from .errors import RaceError, UninitializedReadError, caller_site, format_site
from .instr import PIPE_INDEX, PIPES, Instr
from .memory import GRANULE, NO_PIPE, NPIPES, Tier

S, V, M, MTE1, MTE2, MTE3, FIX = range(NPIPES)
_NEVER = np.iinfo(np.int64).max // 2


class Event:
    """A synchronisation point: the producer pipe's clock, finish time and last record."""

    __slots__ = ("vc", "time", "rec", "site")

    def __init__(self, vc: np.ndarray, time: float, rec: int, site=None):
        self.vc, self.time, self.rec, self.site = vc, time, rec, site


def region(t, nbytes: int | None = None) -> tuple:
    """(tier, granule slice) touched by the first ``nbytes`` of a LocalTensor."""
    n = t.nbytes if nbytes is None else nbytes
    return (t.tier, slice(t.addr // GRANULE, -(-(t.addr + n) // GRANULE)))


class Core:
    """State of one block while it runs on a simulated AIV, AIC or AI Core."""

    def __init__(self, launch, block_idx: int, core_type: str, start: float,
                 sub_block_idx: int = 0, group: int = 0):
        chip = launch.chip
        self.launch, self.chip = launch, chip
        self.block_idx, self.core_type = block_idx, core_type
        self.sub_block_idx, self.group = sub_block_idx, group
        self.tiers: dict[str, Tier] = {}
        if core_type in ("AIV", "CORE"):
            self.tiers["UB"] = Tier("UB", chip.ub_bytes, chip.ub_usable_bytes, chip.ub_align)
        if core_type in ("AIC", "CORE"):
            self.tiers["L1"] = Tier("L1", chip.l1_bytes, chip.l1_bytes, chip.l1_align)
            self.tiers["L0A"] = Tier("L0A", chip.l0a_bytes, chip.l0a_bytes, chip.l0ab_align)
            self.tiers["L0B"] = Tier("L0B", chip.l0b_bytes, chip.l0b_bytes, chip.l0ab_align)
            self.tiers["L0C"] = Tier("L0C", chip.l0c_bytes, chip.l0c_bytes, chip.l0c_align)
        self.vc = np.zeros((NPIPES, NPIPES + 1), np.int64)
        self.vc[:, NO_PIPE] = _NEVER
        self.start_time = start
        self.tail = [start] * NPIPES
        self.busy = [0.0] * NPIPES
        self.gate = [start] * NPIPES
        self.gate_rec = [-1] * NPIPES
        self.last_rec = [-1] * NPIPES
        self.scalar_time = start
        self.flags: dict[tuple, Event] = {}
        self.queues: list = []
        self.pipes_objs: list = []
        self.atomic = None
        self.records: list[Instr] = launch.records

    # ------------------------------------------------------------------ sanitizer
    def _check_read(self, q: int, tier: Tier, g: slice, op: str, site) -> None:
        if not tier.init[g].all():
            bad = np.flatnonzero(~tier.init[g]) + g.start
            lo, hi = bad[0] * GRANULE, (bad[-1] + 1) * GRANULE - 1
            raise UninitializedReadError(
                f"{op} on {PIPES[q]} reads {tier.name} bytes {lo}..{hi} that nothing wrote "
                f"({len(bad)} of {g.stop - g.start} 32-byte blocks uninitialised)",
                fix="copy data in (DataCopy) or fill it (Duplicate) before reading, and check the "
                    "count and offset of the read", site=site)
        self._check_writer(q, tier, g, op, site, "reads")

    def _check_writer(self, q, tier, g, op, site, verb) -> None:
        wp = tier.w_pipe[g]
        bad = tier.w_seq[g] > self.vc[q][wp]
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            p = int(wp[i])
            rec = self.records[int(tier.w_rec[g][i])]
            raise RaceError(
                f"{op} on pipe {PIPES[q]} {verb} {tier.name} bytes from {(g.start + i) * GRANULE} that "
                f"pipe {PIPES[p]} wrote at {format_site(rec.site)} ({rec.op}), with no synchronisation "
                f"between the two pipes",
                fix=_sync_fix(p, q), site=site)

    def _check_write(self, q: int, tier: Tier, g: slice, op: str, site) -> None:
        self._check_writer(q, tier, g, op, site, "overwrites")
        rs = tier.r_seq[g]
        bad = rs > self.vc[q][:NPIPES]
        if bad.any():
            gi, p = (int(v[0]) for v in np.nonzero(bad))
            raise RaceError(
                f"{op} on pipe {PIPES[q]} overwrites {tier.name} bytes from {(g.start + gi) * GRANULE} "
                f"that pipe {PIPES[p]} may still be reading, with no synchronisation between them",
                fix=_sync_fix(p, q, war=True), site=site)

    # ------------------------------------------------------------------ issue
    def issue(self, pipe: int, op: str, cost, *, reads=(), writes=(), nbytes: int = 0,
              src: str = "", dst: str = "", flops: int = 0, klass: str = "", site=None) -> Instr:
        """Check, place on ``pipe`` and record one instruction; ``cost`` may be a function of start."""
        if site is None:
            site = caller_site()
        for tier, g in reads:
            self._check_read(pipe, tier, g, op, site)
        for tier, g in writes:
            self._check_write(pipe, tier, g, op, site)
        vc = self.vc[pipe]
        vc[pipe] += 1
        seq = vc[pipe]
        idx = len(self.records)
        for tier, g in reads:
            tier.r_seq[g, pipe] = seq
        for tier, g in writes:
            tier.init[g] = True
            tier.w_pipe[g] = pipe
            tier.w_seq[g] = seq
            tier.w_rec[g] = idx
        # timing: in order within the pipe, after the scalar issued it and after any sync gate
        issue_t = self.scalar_time + self.chip.scalar_issue_cycles
        self.scalar_time = issue_t
        ready = max(self.tail[pipe], issue_t)
        start, wait_on = ready, -1
        if self.gate[pipe] > ready:
            start, wait_on = self.gate[pipe], self.gate_rec[pipe]
        c = cost(start) if callable(cost) else cost
        end = start + c
        self.tail[pipe] = end
        self.busy[pipe] += c
        self.last_rec[pipe] = idx
        if pipe == S:
            self.scalar_time = end
        rec = Instr(idx, self.block_idx, self.core_type, PIPES[pipe], op, ready, start, end, wait_on,
                    nbytes, src, dst, flops, site, klass)
        self.records.append(rec)
        return rec

    def scalar_tick(self) -> None:
        """Bookkeeping the scalar unit does for a queue or flag call."""
        self.scalar_time += self.chip.scalar_issue_cycles

    # ------------------------------------------------------------------ happens-before
    def snapshot(self, pipe: int, site=None) -> Event:
        """The point after everything ``pipe`` has issued so far (SetFlag, EnQue, FreeTensor)."""
        t = self.scalar_time if pipe == S else max(self.tail[pipe], self.scalar_time)
        return Event(self.vc[pipe].copy(), t, self.last_rec[pipe], site)

    def wait(self, pipe: int, ev: Event) -> None:
        """Make ``pipe`` happen after ``ev`` (WaitFlag, DeQue, AllocTensor reuse)."""
        np.maximum(self.vc[pipe], ev.vc, out=self.vc[pipe])
        t = ev.time + self.chip.event_latency_cycles
        if pipe == S:
            self.scalar_time = max(self.scalar_time, t)
        elif t > self.gate[pipe]:
            self.gate[pipe] = t
            self.gate_rec[pipe] = ev.rec

    def barrier_all(self) -> None:
        """PipeBarrier<PIPE_ALL>: every pipe and the scalar wait for everything issued."""
        merged = self.vc.max(axis=0)
        self.vc[:] = merged
        t = max(max(self.tail), self.scalar_time)
        rec = max(self.last_rec)
        for p in range(NPIPES):
            if t > self.gate[p]:
                self.gate[p], self.gate_rec[p] = t, rec
        self.scalar_time = t

    def end_time(self) -> float:
        return max(max(self.tail), self.scalar_time)


def _sync_fix(producer: int, consumer: int, war: bool = False) -> str:
    a, b = PIPES[producer], PIPES[consumer]
    ev = f"HardEvent.{a}_{b}"
    if war:
        return (f"release the buffer with FreeTensor after the {a} instruction and AllocTensor it again "
                f"before writing (the queue inserts the {a}->{b} sync), or SetFlag/WaitFlag({ev}, id) "
                f"between them")
    return (f"pass the tensor through a queue (EnQue after the {a} instruction, DeQue before the {b} one), "
            f"or put SetFlag({ev}, id) after it and WaitFlag({ev}, id) before the reader")


PIPE_NAMES = PIPE_INDEX
