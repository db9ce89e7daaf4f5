"""One simulated core: its tiers, pipes, happens-before clocks and the issue path.

The issue path is the seam between the API and the timing model: an op checks
its operands, calls ``core.issue(...)`` (sanitizer checks on local memory,
placement on the pipe after every synchronisation edge, one ``Instr`` record),
then does its numpy work.
"""
from __future__ import annotations

from collections import deque
from operator import itemgetter

from ascend_sim.engine.errors import RaceError, UninitializedReadError, caller_site, format_site
from ascend_sim.engine.instr import PIPES, Instr
from ascend_sim.engine.memory import GRANULE, Tier
from ascend_sim.engine.records import CHUNK
from ascend_sim.engine.shadow import NPIPES, runs
from ascend_sim.engine.timing import gm_cycles

S, V, M, MTE1, MTE2, MTE3, FIX = range(NPIPES)
_NEVER = 1 << 62
_CHUNK_MASK = CHUNK - 1
_VC0 = [0] * NPIPES + [_NEVER]     # a clock before anything: the last entry is the never-written pipe


class Event(tuple):
    """A synchronisation point: the producer pipe's clock, finish time, last record and the call site.

    A tuple, built with ``tuple.__new__`` on the hot path (every EnQue and FreeTensor makes one).
    """

    __slots__ = ()

    def __new__(cls, vc: list, time: float, rec: int, site=None):
        return tuple.__new__(cls, (vc, time, rec, site))

    vc = property(itemgetter(0))
    time = property(itemgetter(1))
    rec = property(itemgetter(2))
    site = property(itemgetter(3))


class Region:
    """One normalised local-memory access of an instruction: granule runs [lo, hi) of one tier.

    It remembers, for the shadow's version then, the segments it touches as a read (all of them, those it
    covers whole and those it covers in part) and, as a write, the segments that are exactly its runs (one
    per run, or a few that tile its one run), so an instruction repeated on the same buffer finds its
    segments without a search.
    """

    __slots__ = ("tier", "shadow", "runs", "single", "lo", "hi", "ver", "segs", "ends", "rver", "rsegs", "wsegs",
                 "psegs", "pkey")

    def __init__(self, tier: Tier, runs: list, ends: list | None = None):
        self.tier = tier
        self.ends = ends            # the byte where each run's access ends, when known (initcheck of padding)
        self.shadow = tier.shadow
        self.runs = runs            # [(first granule, end granule), ...], sorted, non-empty
        self.single = len(runs) == 1
        self.lo = runs[0][0]
        self.hi = runs[-1][1]
        self.ver = -1               # the shadow version ``segs`` is valid for
        self.segs = ()              # as a write: the segment that is exactly each run, in order
        self.rver = -1              # the shadow version the read's segments below are valid for
        self.rsegs = ()             # as a read: every segment it touches, then those it covers whole, in part
        self.wsegs = ()
        self.psegs = None           # (None: it covers every segment it touches whole)
        self.pkey = 0               # the shadow's key of its runs (Shadow.pattern), when it reads segments in part


def region(t, nbytes: int | None = None) -> tuple:
    """(tier, granule slice) touched by the first ``nbytes`` of a LocalTensor; the slice's step is the end byte."""
    n = t.nbytes if nbytes is None else nbytes
    return (t.tier, slice(t.addr // GRANULE, -(-(t.addr + n) // GRANULE), t.addr + n))


class Runs(list):
    """Granule runs [(first, end), ...] that also know the byte where each access ends (``ends``)."""

    ends: list = None


def burst_region(t, count: int, blen: int, pitch: int) -> tuple:
    """(tier, granule runs) of ``count`` bursts of ``blen`` bytes, ``pitch`` bytes apart, from a LocalTensor."""
    if count == 1 or pitch <= blen:
        return region(t, (count - 1) * pitch + blen)
    first = t.addr // GRANULE
    rs = Runs((first + (b * pitch) // GRANULE, -(-(t.addr + b * pitch + blen) // GRANULE)) for b in range(count))
    rs.ends = [t.addr + b * pitch + blen for b in range(count)]
    return (t.tier, rs)


def make_tiers(chip, core_type: str) -> dict[str, Tier]:
    """The on-chip memories of an AIV (UB), an AIC (L1, L0A, L0B, L0C, BT bias table) or a coupled AI Core (all)."""
    tiers: dict[str, Tier] = {}
    if core_type in ("AIV", "CORE"):
        tiers["UB"] = Tier("UB", chip.ub_bytes, chip.ub_usable_bytes, chip.ub_align)
    if core_type in ("AIC", "CORE"):
        tiers["L1"] = Tier("L1", chip.l1_bytes, chip.l1_bytes, chip.l1_align)
        tiers["L0A"] = Tier("L0A", chip.l0a_bytes, chip.l0a_bytes, chip.l0ab_align)
        tiers["L0B"] = Tier("L0B", chip.l0b_bytes, chip.l0b_bytes, chip.l0ab_align)
        tiers["L0C"] = Tier("L0C", chip.l0c_bytes, chip.l0c_bytes, chip.l0c_align)
        tiers["BT"] = Tier("BT", chip.bt_bytes, chip.bt_bytes, chip.bt_align)
    return tiers


class Core:
    """State of one block while it runs on a simulated AIV, AIC or AI Core."""

    __slots__ = ("cmpmask", "launch", "chip", "block_idx", "core_type", "sub_block_idx", "group", "tiers", "buffers", "vc",
                 "start_time", "tail", "busy", "calls", "gate", "gate_rec", "last_rec", "scalar_time", "tick",
                 "event_latency", "gm_paths", "flags", "queues", "pipes_objs", "atomic", "plans", "records", "uid",
                 "epoch", "seen", "vmode", "vmask", "regs", "done", "numerics", "qslots", "qsync", "auto_pairs")

    def __init__(self, launch, block_idx: int, core_type: str, start: float,
                 sub_block_idx: int = 0, group: int = 0):
        chip = launch.chip
        self.launch, self.chip = launch, chip
        self.block_idx, self.core_type = block_idx, core_type
        self.sub_block_idx, self.group = sub_block_idx, group
        self.tiers: dict[str, Tier] = {}          # attached by the launch while the block runs (make_tiers)
        self.buffers: dict[str, list] = {}        # each tier's buffers, kept when the block hands its tiers back
        self.vc = [_VC0[:], _VC0[:], _VC0[:], _VC0[:], _VC0[:], _VC0[:], _VC0[:]]   # vector clock of each pipe
        self.start_time = start
        self.tail = [start] * NPIPES
        self.busy = [0.0] * NPIPES              # cycles each pipe was busy (the scalar's issue slots: calls)
        self.calls = 0                          # API calls the scalar unit issued, tick cycles each
        self.gate = [start] * NPIPES
        self.gate_rec = [-1] * NPIPES
        self.last_rec = [-1] * NPIPES
        self.scalar_time = start
        self.tick = chip.scalar_issue_cycles      # scalar cycles per issued call (hot path: one lookup)
        self.event_latency = chip.event_latency_cycles
        self.gm_paths: dict = {}                  # per GM pipe: the constants issue_n prices a transfer with
        self.flags: dict[tuple, Event] = {}
        self.queues: list = []
        self.pipes_objs: list = []
        self.atomic = None
        self.vmode = False                        # vector mask register (api/ops/mask.py): Counter mode?
        self.vmask = None                         # and its value (None: reset, all lanes)
        self.cmpmask = None                       # the CmpMask register (Compare into the register), 16 bytes
        self.plans: dict = launch.plans           # checked instructions by operands (ops/vector, datacopy, cube)
        self.records = launch.records             # a tuple an instruction, Instr's fields but the index (records.py)
        self.epoch = 0                            # GM happens-before across cores (engine/gmcheck.py)
        self.seen: dict[int, int] = {}
        self.regs: dict = {}                      # registers the kernel sets: "pad" (SetPadValue), "deq" (SetDeqScale)
        self.done = [0] * NPIPES                  # per pipe: its own last instruction known finished (a wait or a
                                                  # barrier): the same-pipe overlap rule of PipeBarrier(ISASI).md
        self.numerics: bool = launch.numerics     # False: timing only, the ops skip their values (context.computing)
        self.qslots = instruction_queues(chip)    # bounded per-pipe instruction queues (issue_n)
        # the queue calls' Set/Wait take entries too (sync_entry): the rings, or None when no pipe has one
        self.qsync = self.qslots if chip.sync_queue_entries and any(self.qslots) else None
        self.auto_pairs = auto_sync_pairs(launch.auto_sync, core_type)     # (producer, consumer) the compiler syncs

    # ------------------------------------------------------------------ sanitizer
    def _read_fault(self, q: int, r: Region, op: str, site) -> None:
        """Raise the first initcheck or racecheck error of a read of ``r`` (segment order)."""
        vcq = self.vc[q]
        for s in r.shadow.touched(r.runs):
            if not s.init and not _padding_ok(r, s):
                self._uninit(q, r.tier, r.runs, op, site)
            if s.ws > vcq[s.wp]:
                self._race_raw(q, s, r.tier, max(r.lo, s.lo), op, site, "reads")

    def _uninit(self, q, tier, rs, op, site):
        lo, hi = rs[0][0], rs[-1][1]
        bad = [s for s in tier.shadow.touched(rs) if not s.init]
        a, b = max(lo, bad[0].lo) * GRANULE, min(hi, bad[-1].hi) * GRANULE - 1
        count = sum(min(hi, s.hi) - max(lo, s.lo) for s in bad)
        total = sum(h - l for l, h in rs)
        pads = sorted(g for s in bad for g in range(max(lo, s.lo), min(hi, s.hi)) if g in tier.holes)
        if pads:
            g = pads[0]
            raise UninitializedReadError(
                f"{op} on {PIPES[q]} reads {tier.name} bytes past {g * GRANULE + tier.holes[g] - 1}: the padding "
                f"of a DataCopyPad burst (bytes {g * GRANULE + tier.holes[g]}..{g * GRANULE + GRANULE - 1}), which "
                f"it left unwritten (isPad false); {len(pads)} such block(s) in this read",
                fix="read only the bytes DataCopyPad copied (its blockLen), or fill the padding: "
                    "«DataCopyPadExtParams(isPad=True, paddingValue=...)|DataCopyPadExtParams<T>{true, leftPadding, "
                    "rightPadding, paddingValue}»", site=site)
        raise UninitializedReadError(
            f"{op} on {PIPES[q]} reads {tier.name} bytes {a}..{b} that nothing wrote "
            f"({min(count, total)} of {total} 32-byte blocks uninitialised)",
            fix="copy data in (DataCopy) or fill it (Duplicate) before reading, and check the "
                "count and offset of the read", site=site)

    def _race_raw(self, q, s, tier, at, op, site, verb):
        if self.auto_sync(s.wp, q):
            return
        rec = Instr(*self.records[s.wr])
        raise RaceError(
            f"{op} on pipe {PIPES[q]} {verb} {tier.name} bytes from {at * GRANULE} that "
            f"pipe {PIPES[s.wp]} wrote at {format_site(rec.site)} ({rec.op}), with no synchronisation "
            f"between the two pipes{self.auto_sync_note(s.wp, q)}",
            fix=_sync_fix(s.wp, q), site=site)

    def _war(self, q: int, s, tier: Tier, at: int, op: str, site) -> None:
        vcq = self.vc[q]
        for p, (seq, r) in s.rd.items():
            if seq > vcq[p]:
                self._war_error(q, p, r, tier, at, op, site)

    def _war_part(self, q: int, s, w: Region, op: str, site) -> None:
        """Raise the write-after-read error, if any, of the write ``w`` over reads of parts of segment ``s``:
        at the first granule that ``w`` and an unsynchronised read share, naming that read."""
        vcq = self.vc[q]
        first = None
        for key, (seq, _, rs) in s.pr.items():
            if seq <= vcq[key & 7]:
                continue
            for a, b in rs:
                a, b = max(a, s.lo), min(b, s.hi)
                for lo, hi in w.runs:
                    g = max(a, lo)
                    if g < min(b, hi) and (first is None or g < first):
                        first = g
        if first is None:
            return
        synced = False
        for p, (seq, r) in s.readers_at(first).items():
            if seq > vcq[p]:
                self._war_error(q, p, r, w.tier, max(w.lo, first), op, site)
                synced = True           # (it returned: auto-sync made the write wait for that read)
        if synced:
            self._war_part(q, s, w, op, site)      # the next unsynchronised read, if any

    def _war_error(self, q: int, p: int, r: int, tier: Tier, at: int, op: str, site) -> None:
        if self.auto_sync(p, q):
            return
        rec = Instr(*self.records[r])
        raise RaceError(
            f"{op} on pipe {PIPES[q]} overwrites {tier.name} bytes from {at * GRANULE} "
            f"that pipe {PIPES[p]} read at {format_site(rec.site)} ({rec.op}) and may still be "
            f"reading, with no synchronisation between them{self.auto_sync_note(p, q)}",
            fix=_sync_fix(p, q, war=True), site=site)

    # ------------------------------------------------------------------ auto-sync (自动同步)
    def auto_sync(self, producer: int, consumer: int) -> bool:
        """The sync the compiler inserts (``--cce-auto-sync``, on by default) for a hazard between the scalar and a
        vector-side pipe: «SetFlag/WaitFlag(producer_consumer)» just before the consumer's instruction, made here
        as the same happens-before edge and wait a manual pair makes (``snapshot`` + ``wait``). True when made;
        False when this launch or this pair has no auto-sync (the caller reports the race)."""
        if (producer, consumer) not in self.auto_pairs:
            return False
        self.wait(consumer, self.snapshot(producer))
        return True

    def auto_sync_note(self, producer: int, consumer: int) -> str:
        """A race message's note when only ``auto_sync=False`` let this pair through unsynchronised."""
        if not self.auto_pairs and (producer, consumer) in auto_sync_pairs(True, self.core_type):
            return (" (the compiler's auto-sync, 自动同步, would insert this flag; this launch has it off: "
                    "auto_sync=False, as --cce-auto-sync=off)")
        return ""

    # ------------------------------------------------------------------ issue
    def issue(self, pipe: int, op: str, cost, *, reads=(), writes=(), nbytes: int = 0,
              src: str = "", dst: str = "", flops: int = 0, klass: str = "", site=None) -> None:
        """Check, place on ``pipe`` and record one instruction; ``cost`` may be a function of start.

        ``reads``/``writes`` are (tier, slice | list of granule runs | granule array) regions.
        """
        if site is None:
            site = caller_site()
        self.issue_n(pipe, op, cost, regions_of(reads), regions_of(writes), nbytes, src, dst, flops, klass, site)

    def issue_n(self, pipe: int, op: str, cost, rd: list, wr: list, nbytes: int, src: str, dst: str,
                flops: int, klass: str, site) -> None:
        """``issue`` with the regions already normalised: lists of ``Region``.

        The hot path of every instruction: the sanitizer checks, the shadow update, the placement
        on the pipe and the record, inlined for the usual access that matches one shadow segment.
        ``cost`` is cycles, a tuple (GM pipe, bytes, bursts, aligned) of a GM transfer,
        or a function of the start cycle.
        """
        vcq = self.vc[pipe]
        seq = vcq[pipe] + 1
        vcq[pipe] = seq         # this instruction is ordered after everything its pipe issued before
        records = self.records
        idx = len(records)
        mark = (seq, idx)
        # sanitizer and shadow in one pass per region. Reads: initcheck and read-after-write, then the
        # read is recorded (on the segments it covers whole, and apart on those it covers in part, which
        # reads never cut: engine/shadow.py). Writes: write-after-write and
        # write-after-read, then the write (exact: the gaps of a strided write stay as they were).
        # The instruction's own marks never trip its own checks: they carry ``seq``, and vcq[pipe] is
        # ``seq`` already. After a failed check the shadow is not used again (the launch ends).
        for r in rd:
            if r.rver != r.shadow.version:
                self._read_segments(r)
            if r.psegs is None:         # the usual read: every segment it touches, whole
                for s in r.rsegs:
                    if not s.init or s.ws > vcq[s.wp]:
                        self._read_fault(pipe, r, op, site)
                    s.rd[pipe] = mark
                continue
            for s in r.rsegs:
                if not s.init or s.ws > vcq[s.wp]:
                    self._read_fault(pipe, r, op, site)
            for s in r.wsegs:
                s.rd[pipe] = mark
            key = r.pkey + pipe     # segments it reads in part (a fractal of an L1 tile): noted apart, not cut
            part = (seq, idx, r.runs)
            for s in r.psegs:
                pm = s.pm
                if pm is None:
                    s.pm = {pipe: seq}
                    s.pr = {key: part}
                else:
                    pm[pipe] = seq
                    s.pr[key] = part
        for r in wr:
            exact = r.ver == r.shadow.version
            if exact:
                segs = r.segs
            else:
                segs = self._segments(r)
                # segments that tile a contiguous r, few enough that Shadow.write keeps them: reset in place
                exact = r.single and segs[0].lo == r.lo and segs[-1].hi == r.hi and len(segs) <= r.shadow.keep
            if exact:   # check and Shadow.write in place, one pass over the segments that are r's runs or tile r
                for s in segs:
                    if s.ws > vcq[s.wp]:
                        self._race_raw(pipe, s, r.tier, max(r.lo, s.lo), op, site, "overwrites")
                    rds = s.rd
                    if rds:
                        for p, m in rds.items():
                            if m[0] > vcq[p]:
                                self._war(pipe, s, r.tier, max(r.lo, s.lo), op, site)
                        s.rd = {}
                    pm = s.pm
                    if pm is not None:
                        for p, m in pm.items():
                            if m > vcq[p]:
                                self._war_part(pipe, s, r, op, site)
                        s.pm = s.pr = None
                    s.init = True
                    s.wp = pipe
                    s.ws = seq
                    s.wr = idx
                continue
            for s in segs:
                if s.ws > vcq[s.wp]:
                    self._race_raw(pipe, s, r.tier, max(r.lo, s.lo), op, site, "overwrites")
                if s.rd:
                    for p, m in s.rd.items():
                        if m[0] > vcq[p]:
                            self._war(pipe, s, r.tier, max(r.lo, s.lo), op, site)
                if s.pm is not None:
                    for p, m in s.pm.items():
                        if m > vcq[p]:
                            self._war_part(pipe, s, r, op, site)
            write = r.shadow.write
            for lo, hi in r.runs:
                write(lo, hi, pipe, seq, idx)
        # timing: in order within the pipe, after the scalar issued it and after any sync gate. A bounded queue
        # (instruction_queues): the scalar stalls until the instruction ``depth`` places back has left it (started)
        issue_t = self.scalar_time
        ring = self.qslots[pipe]
        if ring is not None and ring[0] > issue_t:
            issue_t = ring[0]
        issue_t += self.tick
        self.scalar_time = issue_t
        self.calls += 1
        tail = self.tail[pipe]
        ready = tail if tail > issue_t else issue_t
        start, wait_on = ready, -1
        gate = self.gate[pipe]
        if gate > ready:
            start, wait_on = gate, self.gate_rec[pipe]
        cc = cost.__class__
        if cc is tuple:         # a GM transfer (timing.gm_transfer): L2, HBM share, bursts, alignment
            c = gm_cycles(self, start, cost)
        elif cc is float or cc is int or not callable(cost):
            c = cost
        else:
            c = cost(start)
        end = start + c
        if ring is not None:
            ring.append(start)      # (the oldest entry leaves the ring)
        self.tail[pipe] = end
        self.busy[pipe] += c
        self.last_rec[pipe] = idx
        if pipe == S:
            self.scalar_time = end
        # the record: Instr's fields but the index (its position) as a tuple (the trace makes the Instr objects)
        records.append((self.block_idx, self.core_type, PIPES[pipe], op, ready, start, end, wait_on,
                        nbytes, src, dst, flops, site, klass, rd, wr))
        if idx & _CHUNK_MASK == _CHUNK_MASK:    # a chunk is full: into numpy columns (engine/records.py)
            records.pack()

    def _segments(self, r: Region) -> list:
        """The shadow segments the write ``r`` touches; remembered on ``r`` when each of its runs is exactly one
        segment, or when ``r`` is one run that a few segments (at most the shadow's ``keep``) tile exactly."""
        segs = r.shadow.touched(r.runs)
        rs = r.runs
        if r.single and len(segs) > 1:
            if segs[0].lo == r.lo and segs[-1].hi == r.hi and len(segs) <= r.shadow.keep:
                r.segs = tuple(segs)
                r.ver = r.shadow.version
        elif len(segs) == len(rs):
            for s, run in zip(segs, rs):
                if s.lo != run[0] or s.hi != run[1]:
                    break
            else:
                r.segs = tuple(segs)
                r.ver = r.shadow.version
        return segs

    def _read_segments(self, r: Region) -> None:
        """Remember on the read ``r`` the segments it touches, split into those it covers whole and in part."""
        sh = r.shadow
        r.rsegs, r.wsegs, r.psegs = sh.read_segments(r.runs)
        if r.psegs:
            r.pkey = sh.pattern(r.runs)
        r.rver = sh.version

    def scalar_tick(self) -> None:
        """Bookkeeping the scalar unit does for a queue or flag call."""
        self.scalar_time += self.tick
        self.calls += 1

    def busy_cycles(self) -> list[float]:
        """Busy cycles per pipe; the scalar pipe's include one issue slot (tick) per API call."""
        busy = list(self.busy)
        busy[S] += self.calls * self.tick
        return busy

    # ------------------------------------------------------------------ happens-before
    def snapshot(self, pipe: int, site=None) -> Event:
        """The point after everything ``pipe`` has issued so far (SetFlag, EnQue, FreeTensor)."""
        t = self.scalar_time
        if pipe != S and self.tail[pipe] > t:
            t = self.tail[pipe]
        return _new_tuple(Event, (self.vc[pipe][:], t, self.last_rec[pipe], site))

    def wait(self, pipe: int, ev: Event) -> None:
        """Make ``pipe`` happen after ``ev`` (WaitFlag, DeQue, AllocTensor reuse)."""
        # the clocks' elementwise max, unrolled and in place (each pipe's clock is its own list; events hold
        # copies): a third faster than building a new list, three times faster than a comprehension (every DeQue)
        a = self.vc[pipe]
        evc, t, rec, _ = ev
        b0, b1, b2, b3, b4, b5, b6, _ = evc
        if b0 > a[0]:
            a[0] = b0
        if b1 > a[1]:
            a[1] = b1
        if b2 > a[2]:
            a[2] = b2
        if b3 > a[3]:
            a[3] = b3
        if b4 > a[4]:
            a[4] = b4
        if b5 > a[5]:
            a[5] = b5
        if b6 > a[6]:
            a[6] = b6
        done = self.done
        if evc[pipe] > done[pipe]:      # the event's pipe saw this pipe's work up to there finished
            done[pipe] = evc[pipe]
        t += self.event_latency
        if pipe == S:
            if t > self.scalar_time:
                self.scalar_time = t
        else:
            gate = self.gate
            if t > gate[pipe]:
                gate[pipe] = t
                self.gate_rec[pipe] = rec

    def sync_entry(self, pipe: int) -> None:
        """The Set or Wait a queue call emits (EnQue, FreeTensor: Set; DeQue, AllocTensor of a used buffer: Wait)
        takes an entry in ``pipe``'s bounded instruction queue (``instruction_queues``; only called when the pipe
        has one): the scalar stalls while the queue is full, and the entry leaves once the pipe reaches it, after
        its earlier instructions and, for a Wait, its event (G 编程模型/AI-Core-SIMD编程/基于TPipe-TQue框架编程/
        TPipe-TQue框架编程原理.md: the scalar 发射 every instruction into its unit's 指令队列; EnQue/FreeTensor 发射
        Set, DeQue/AllocTensor 发射 Wait). Off with ``chip.sync_queue_entries`` False."""
        ring = self.qslots[pipe]
        t = self.scalar_time
        if ring[0] > t:
            self.scalar_time = t = ring[0]
        tail, gate = self.tail[pipe], self.gate[pipe]
        if tail > t:
            t = tail
        ring.append(gate if gate > t else t)

    def after_own_work(self, clock: list) -> None:
        """Every pipe happens after this core's work up to ``clock`` (a vector clock of one of its pipes), known
        finished through another core (a cross-core flag whose round saw it: engine/crossflags.py)."""
        for a in self.vc:
            for i, v in enumerate(clock):
                if v > a[i]:
                    a[i] = v
        done = self.done
        for p in range(len(done)):
            if clock[p] > done[p]:
                done[p] = clock[p]

    def barrier_all(self) -> None:
        """PipeBarrier<PIPE_ALL>: every pipe and the scalar wait for everything issued."""
        merged = list(map(max, *self.vc))
        self.vc = [merged[:] for _ in range(NPIPES)]
        self.done = merged[:NPIPES]
        t = max(max(self.tail), self.scalar_time)
        rec = max(self.last_rec)
        for p in range(NPIPES):
            if t > self.gate[p]:
                self.gate[p], self.gate_rec[p] = t, rec
        self.scalar_time = t

    def end_time(self) -> float:
        return max(max(self.tail), self.scalar_time)


_new_tuple = tuple.__new__


_UNBOUNDED_QUEUES = (None,) * NPIPES


def instruction_queues(chip) -> list | tuple:
    """Per pipe: None for an unbounded queue, else the start cycles of its last ``depth`` instructions, oldest
    first (a deque of ``depth``: appending a start drops the oldest), from ``chip.pipe_queue_depth``.

    The scalar unit issues each instruction into its pipe's queue and stalls while that queue is full (G
    编程模型/AI-Core-SIMD编程/抽象硬件架构.md; HW 硬件约束/NPU架构版本2201.md: "对应指令队列容易满，会阻塞其他指令
    下发"). An entry leaves the queue when its instruction starts, so instruction n may be issued once
    instruction n - depth has started: ``issue_n`` reads that start from the ring's oldest entry (O(1)).
    """
    depth = chip.pipe_queue_depth
    if not depth:                   # every queue unbounded: one shared tuple of None, only read
        return _UNBOUNDED_QUEUES
    slots = []
    for name in PIPES:
        d = depth.get(name, 0)
        slots.append(deque([float("-inf")] * d, maxlen=d) if d > 0 and name != "S" else None)
    return slots


# The hazards the compiler's auto-sync covers (API 同步控制/核内同步/关键特性说明.md, 表1, NPU架构2201 AIV): PIPE_S
# with PIPE_V, PIPE_MTE2 and PIPE_MTE3 both ways, "编译器自动同步". The cube side gets none ("Cube侧编译器不支持自动插入
# 任何类型的同步", 表2: PIPE_S 不涉及); vector <-> copy hazards are the TPipe-TQue framework's (EnQue/DeQue).
AUTO_SYNC_PAIRS = frozenset((a, b) for s in (V, MTE2, MTE3) for a, b in ((S, s), (s, S)))


def auto_sync_pairs(on: bool, core_type: str) -> frozenset:
    """The (producer, consumer) pipe pairs a core's launch auto-syncs: none with auto-sync off or on an AIC."""
    return AUTO_SYNC_PAIRS if on and core_type != "AIC" else frozenset()


def regions_of(regions) -> list[Region]:
    """``Region``s of (tier, slice | list of granule runs | granule array) regions (empty ones dropped).

    A slice's step, or a ``Runs`` list's ``ends``, gives the byte where each run's access ends.
    """
    out = []
    for t, g in regions:
        if g.__class__ is slice:
            lo, hi = g.start, g.stop
            if hi > lo:
                out.append(Region(t, [(lo, hi)], None if g.step is None else [g.step]))
        else:
            rs = g if g.__class__ is list else runs(g)
            if rs:
                out.append(Region(t, rs, getattr(rs, "ends", None)))
    return out


def _padding_ok(r: Region, s) -> bool:
    """Whether the uninitialised segment ``s`` is DataCopyPad padding that the read ``r`` stops short of."""
    holes = r.tier.holes
    if not holes or r.ends is None:
        return False
    for (lo, hi), end in zip(r.runs, r.ends):
        for g in range(max(lo, s.lo), min(hi, s.hi)):
            valid = holes.get(g)
            if valid is None or g != hi - 1 or end > g * GRANULE + valid:
                return False
    return True


def _sync_fix(producer: int, consumer: int, war: bool = False) -> str:
    a, b = PIPES[producer], PIPES[consumer]
    ev = f"HardEvent.{a}_{b}"
    if war:
        return (f"release the buffer with FreeTensor after the {a} instruction and AllocTensor it again "
                f"before writing (the queue inserts the {a}->{b} sync), or «SetFlag/WaitFlag({ev}, id)» "
                f"between them")
    return (f"pass the tensor through a queue (EnQue after the {a} instruction, DeQue before the {b} one), "
            f"or put «SetFlag({ev}, id)» after it and «WaitFlag({ev}, id)» before the reader")

