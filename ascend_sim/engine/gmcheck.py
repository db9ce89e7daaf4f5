"""The GM sanitizer: who wrote each GM byte and when, checked on the same happens-before edges as the timing.

Every GM write (MTE3 DataCopy, Fixpipe) records, per 32-byte chunk (per byte for chunks written in
part), the id of a write descriptor: the writer's tag ``((epoch << 20) | core uid) + 1``, the writing
pipe with its sequence number, whether the write was an atomic add, and the instruction's record.
A core's ``epoch`` grows each time it
publishes its progress (SyncAll arrival, CrossCoreSetFlag); ``core.seen[uid]`` is the last epoch of
core ``uid`` that this core has synchronised with (SyncAll release, CrossCoreWaitFlag). Then:

- write ownership (memcheck): a write over bytes another block wrote is an error unless that write
  happens before this one (SyncAll or a cross-core flag in between) or both are atomic adds;
- atomic vs plain (racecheck): an atomic add and a plain write of another block on the same bytes
  with no synchronisation between them, also when atomic adds came after the plain write (each chunk under
  atomic adds keeps the id of the plain write they add onto, ``GmShadow.base``);
- GM read-after-write (racecheck): an MTE2 read of bytes written by the same block's MTE3/FIX pipe
  with no flag or barrier between (the pipes' vector clocks), or by another block with no SyncAll or
  cross-core flag between;
- GM write-after-read across blocks (racecheck): a write over bytes another block read with no
  SyncAll or cross-core flag between (blocks advance together in simulated time, so a block that
  reads another's output before that block writes it is caught at the write). Reads are kept per reading core
  (``buf.reads``), checked only when a block writes a buffer another block has read, and only
  those of a core whose reads' bounding box meets the write.
"""
from __future__ import annotations

import numpy as np
from numpy import count_nonzero

from ascend_sim.engine.errors import GMWriteConflictError, RaceError, format_site
from ascend_sim.engine.instr import PIPE_INDEX, PIPES, Instr
from ascend_sim.hw.dtypes import ascend_name

CHUNK = 32
_INF = float("inf")
MTE2 = PIPE_INDEX["MTE2"]
MTE3 = PIPE_INDEX["MTE3"]
SHIFT = 20                      # uid bits of a tag: up to 1,048,575 cores in a launch
UID = (1 << SHIFT) - 1


class GmShadow:
    """The write history of one GM buffer: a write id per 32-byte chunk (per byte for chunks written in part).

    Write ``i`` is ``desc[i] = (tag, (record << 32) | pipe word)``, the pipe word being
    ``(seq << 4) | atomic << 3 | pipe``; id 0 is "never written" (tag 0). One int32 per chunk keeps
    the usual copy-out to one check and one fill of 4 bytes a chunk.
    """

    __slots__ = ("wid", "tags", "words", "kinds", "n", "cap", "partial", "base", "pbase")

    def __init__(self, nbytes: int):
        self.wid = np.zeros(-(-nbytes // CHUNK), np.int32)
        self.tags = np.zeros(64, np.int64)          # descriptor i: tags[i], words[i]
        self.words = np.zeros(64, np.int64)
        self.kinds = np.zeros(64, np.int16)         # an atomic add's dtype code (_KIND), 0 for a plain write
        self.n = 1
        self.cap = 64
        self.partial: dict[int, np.ndarray] = {}    # chunk -> per-byte write ids (32 int32)
        # while a chunk's last write is an atomic add: the plain write the adds accumulate onto (0: none);
        # made on the first atomic add over written bytes (per byte for the chunks in ``partial``)
        self.base: np.ndarray | None = None
        self.pbase: dict[int, np.ndarray] = {}

    def grow(self) -> None:
        self.tags = np.concatenate([self.tags, np.zeros_like(self.tags)])
        self.words = np.concatenate([self.words, np.zeros_like(self.words)])
        self.kinds = np.concatenate([self.kinds, np.zeros_like(self.kinds)])
        self.cap *= 2

    def decode(self, ids: np.ndarray) -> tuple:
        """(written, uid, epoch, pipe word, record) arrays of the writes ``ids`` point to."""
        tags, words = self.tags[ids] - 1, self.words[ids]
        return tags >= 0, tags & UID, tags >> SHIFT, words & 0xFFFFFFFF, words >> 32


_POOL: dict[int, list[GmShadow]] = {}      # chunk count -> shadows of finished launches, write ids zeroed
_POOL_MAX = 4


def shadow_of(buf) -> GmShadow:
    """The buffer's shadow, made on its first write: a pooled one of the same size when there is one.

    Reusing the arrays of earlier launches spares the page faults of fresh memory on every write.
    """
    n = -(-buf.nbytes // CHUNK)
    pool = _POOL.get(n)
    sh = pool.pop() if pool else None
    if sh is None:
        sh = GmShadow(buf.nbytes)
    buf.shadow = sh
    return sh


def release(buf) -> None:
    """At the end of a launch: forget the buffer's reads and writes, and keep its shadow for the next launch."""
    buf.reads = {}
    buf.boxes = {}
    buf.settled = {}
    sh = buf.shadow
    if sh is None:
        return
    buf.shadow = None
    if sh.n > 1:
        sh.wid.fill(0)
    sh.n = 1
    sh.partial = {}
    sh.pbase = {}
    if sh.base is not None:
        sh.base.fill(0)
    pool = _POOL.setdefault(len(sh.wid), [])
    if len(pool) < _POOL_MAX:
        pool.append(sh)


def chunk_runs(off: int, count: int, blen: int, pitch: int) -> list[tuple[int, int]]:
    """Byte ranges [start, end) of ``count`` bursts of ``blen`` bytes, ``pitch`` apart, from ``off``."""
    return [(off + b * pitch, off + b * pitch + blen) for b in range(count)]


# ----------------------------------------------------------------------------- writes
def in_time_order(core, pipe: int) -> None:
    """Before a GM access on ``pipe`` is checked and issued: wait until the blocks behind ``core`` in simulated
    time have caught up (engine/scheduler.Launch.time_yield), so that the blocks' GM accesses meet the
    write history, L2 and the HBM bookings in about the order the chip makes them. The start is the one
    ``Core.issue_n`` will give the access: after the scalar issues it (once the pipe's queue has room), the pipe's
    last instruction and its gate."""
    launch = core.launch
    horizon = launch.horizon
    if horizon == _INF:             # blocks one after another (Launch.time_ordered), or no other block to wait for
        return
    start = core.scalar_time
    ring = core.qslots[pipe]
    if ring is not None and ring[0] > start:
        start = ring[0]
    start += core.tick
    t = core.tail[pipe]
    if t > start:
        start = t
    t = core.gate[pipe]
    if t > start:
        start = t
    if start > horizon:
        launch.time_yield(core, start)


def gm_write(core, buf, off: int, count: int, blen: int, pitch: int, pipe: int, atomic: bool, dtype, site) -> None:
    """Check a GM write by ``core`` on ``pipe`` against earlier writes, then record it (before it is issued)."""
    if core.launch.horizon != _INF:     # blocks in time order (in_time_order's first test, inline)
        in_time_order(core, pipe)
    reads = buf.reads
    if reads:
        if len(reads) > 1 or core.uid not in reads:
            _check_after_reads(core, buf, off, count, blen, pitch, site)
        if core.uid in reads:
            _check_own_reads(core, buf, off, count, blen, pitch, pipe, site)
    sh = buf.shadow
    if sh is None:
        sh = shadow_of(buf)
    buf.written = True
    # a new descriptor: the tag, the record the instruction is about to get, its pipe's next sequence number
    w = sh.n
    if w == sh.cap:
        sh.grow()
    sh.n = w + 1
    sh.tags[w] = ((core.epoch << SHIFT) | core.uid) + 1
    sh.words[w] = (len(core.records) << 32) | ((core.vc[pipe][pipe] + 1) << 4) | (8 if atomic else 0) | pipe
    sh.kinds[w] = _kind(dtype) if atomic else 0
    if count == 1 and not (off | blen) & 31 and not sh.partial:
        seg = sh.wid[off >> 5:(off + blen) >> 5]    # the usual copy-out: one burst of whole chunks
        if count_nonzero(seg):                      # one pass decides the usual case: nobody wrote them
            _check_write(core, buf, sh, seg, off, CHUNK, pipe, atomic, (off, off + blen), dtype, site)
            if atomic:
                _rebase(core, buf, sh, seg, _base(sh)[off >> 5:(off + blen) >> 5], off, CHUNK, (off, off + blen),
                        dtype, site)
        seg.fill(w)
        return
    if not sh.partial and not (off | blen | pitch) & 31:
        # bursts of whole chunks (Fixpipe rows, strided copies): one (bursts, chunks) view
        lo, step = off >> 5, pitch >> 5
        ids = _bursts(sh.wid, lo, count, blen >> 5, step)
        if count_nonzero(ids):
            bases = _bursts(_base(sh), lo, count, blen >> 5, step) if atomic else None
            for b in range(count):
                span = (off + b * pitch, off + b * pitch + blen)
                _check_write(core, buf, sh, ids[b], (lo + b * step) * CHUNK, CHUNK, pipe, atomic, span, dtype, site)
                if atomic:
                    _rebase(core, buf, sh, ids[b], bases[b], (lo + b * step) * CHUNK, CHUNK, span, dtype, site)
        ids[...] = w
        return
    for start, end in chunk_runs(off, count, blen, pitch):
        c0, c1 = -(-start // CHUNK), end // CHUNK   # chunks written whole
        if c1 > c0:
            _check_write(core, buf, sh, sh.wid[c0:c1], c0 * CHUNK, CHUNK, pipe, atomic, (start, end), dtype, site)
            if atomic:
                _rebase(core, buf, sh, sh.wid[c0:c1], _base(sh)[c0:c1], c0 * CHUNK, CHUNK, (start, end), dtype, site)
            for c in _partial_in(sh.partial, c0, c1):
                p = sh.partial.pop(c)
                _check_write(core, buf, sh, p, c * CHUNK, 1, pipe, atomic, (start, end), dtype, site)
                pb = sh.pbase.pop(c, None)
                if atomic:              # the chunk is whole again: keep one of its bytes' plain writes
                    pb = _part_base(sh, c) if pb is None else pb
                    _rebase(core, buf, sh, p, pb, c * CHUNK, 1, (start, end), dtype, site)
                    nz = np.flatnonzero(pb)
                    sh.base[c] = pb[nz[0]] if nz.size else 0
            sh.wid[c0:c1] = w
        for c in {start // CHUNK, (end - 1) // CHUNK} - set(range(c0, c1)):     # chunks written in part
            p = sh.partial.get(c)
            if p is None:
                p = sh.partial[c] = np.full(CHUNK, sh.wid[c], np.int32)
                sh.wid[c] = 0
            a, b = max(start, c * CHUNK) - c * CHUNK, min(end, (c + 1) * CHUNK) - c * CHUNK
            _check_write(core, buf, sh, p[a:b], c * CHUNK + a, 1, pipe, atomic, (start, end), dtype, site)
            if atomic:
                pb = sh.pbase.get(c)
                if pb is None:
                    pb = sh.pbase[c] = _part_base(sh, c)
                _rebase(core, buf, sh, p[a:b], pb[a:b], c * CHUNK + a, 1, (start, end), dtype, site)
            p[a:b] = w


def _partial_in(partial: dict, c0: int, c1: int) -> list[int]:
    """The chunks in ``c0 .. c1 - 1`` written in part, in ``partial``'s order: by lookup when the range is
    shorter than the dict (a launch of unaligned C rows holds hundreds of thousands), else by a scan of it."""
    if c1 - c0 >= len(partial):
        return [c for c in partial if c0 <= c < c1]
    hits = [c for c in range(c0, c1) if c in partial]
    if len(hits) > 1:
        order = {c: i for i, c in enumerate(partial)}
        hits.sort(key=order.__getitem__)
    return hits


def _check_write(core, buf, sh: GmShadow, ids, first: int, unit: int, pipe: int, atomic: bool, span, dtype,
                 site) -> None:
    """Raise on the first earlier write of these units (chunks or bytes) that this write may race with."""
    written, uid, epoch, wps, recs = sh.decode(ids)
    if not written.any():
        return
    mine = written & (uid == core.uid)
    if mine.any():                  # the same block: another pipe's write not ordered before this one
        p = wps & 7
        vc = np.array(core.vc[pipe][:7], np.int64)
        late = mine & (p != pipe) & ((wps >> 4) > vc[p])
        if pipe == MTE3:            # or an earlier copy of this pipe that may still be running (below)
            _same_pipe_overlap(core, buf, mine & (p == pipe), wps, recs, first, unit, pipe, atomic, span, site)
        if late.any():
            late = _after_auto_sync(core, late, p, wps, pipe)
        if late.any():
            i = int(np.flatnonzero(late)[0])
            raise RaceError(
                f"{_what(core, pipe)} writes GM buffer {buf.name!r} bytes {span[0]}..{span[1] - 1}; byte "
                f"{first + i * unit} was written by pipe {PIPES[p[i]]} of this block at {_site(core, recs[i])} "
                f"with no synchronisation between the two pipes (the later write may land first)"
                f"{core.auto_sync_note(int(p[i]), pipe)}",
                fix=f"«SetFlag(HardEvent.{PIPES[p[i]]}_{PIPES[pipe]}, id)» after the first write and WaitFlag before "
                    "the second, or «PipeBarrier(PIPE_ALL)»", site=site)
    other = written & ~mine
    if not other.any():
        return
    # atomic adds of several blocks accumulate: that is their use (in one dtype: adds of two dtypes to the same
    # bytes read each other's bits as their own type)
    kinds = sh.kinds[ids] if atomic else None
    both_atomic = ((wps & 8) != 0) & atomic & (kinds == _kind(dtype) if atomic else False)
    unseen = other & ~both_atomic & (epoch > _seen_of(core, uid))
    if not unseen.any():
        return
    i = int(np.flatnonzero(unseen)[0])
    oc = core.launch.cores[int(uid[i])]
    isz = np.dtype(dtype).itemsize
    at = first + i * unit
    where = (f"GM buffer {buf.name!r} bytes {span[0]}..{span[1] - 1} (elements {span[0] // isz}.."
             f"{(span[1] - 1) // isz}); byte {at} was already written by block {oc.block_idx} ({oc.core_type})")
    if bool(wps[i] & 8) != atomic:
        _atomic_plain_race(core, where, atomic, recs[i], site)
    if atomic:                                  # both atomic: two dtypes
        raise RaceError(
            f"block {core.block_idx} ({core.core_type}) makes an atomic add of {ascend_name(dtype)} to {where} with "
            f"an atomic add of {_KIND_NAME[int(kinds[i])]} at {_site(core, recs[i])}: the two adds read each "
            f"other's bytes as their own type", fix="accumulate every block's contribution in one dtype "
            "(SetAtomicAdd<float> on all of them), or order the two with SyncAll() and convert between", site=site)
    raise GMWriteConflictError(
        f"block {core.block_idx} ({core.core_type}) writes {where} at {_site(core, recs[i])} in this launch, "
        f"with no SyncAll or cross-core flag between the two writes",
        fix="offset each block's GlobalTensor by GetBlockIdx() * blockLength so ranges do not overlap, call "
            "«SetAtomicAdd(dtype)|SetAtomicAdd<T>()» if the blocks are meant to accumulate (with the Matmul API: "
            "«IterateAll(c, enAtomic=1)|IterateAll(c, 1)»), or SyncAll() before rewriting another block's output", site=site)


_KIND: dict = {}            # dtype -> code (1, 2 ...) of atomic adds
_KIND_NAME: dict = {}


def _kind(dtype) -> int:
    d = np.dtype(dtype)
    k = _KIND.get(d)
    if k is None:
        k = _KIND[d] = len(_KIND) + 1
        _KIND_NAME[k] = ascend_name(d)
    return k


def _atomic_plain_race(core, where: str, atomic: bool, rec, site, under: str = "") -> None:
    kinds = ("an atomic add", "a plain write") if atomic else ("a plain write", "an atomic add")
    raise RaceError(
        f"block {core.block_idx} ({core.core_type}) makes {kinds[0]} to {where} with {kinds[1]} at "
        f"{_site(core, rec)}{under}, and nothing orders the two: the accumulation and the overwrite race",
        fix="make every write to these bytes an atomic add (SetAtomicAdd before each), or order them: "
            "SyncAll() between the plain write and the adds", site=site)


def _base(sh: GmShadow) -> np.ndarray:
    """The per-chunk plain write under the atomic adds (made on first use)."""
    if sh.base is None:
        sh.base = np.zeros_like(sh.wid)
    return sh.base


def _part_base(sh: GmShadow, c: int) -> np.ndarray:
    """The per-byte plain writes under the atomic adds of a chunk written in part."""
    return np.full(CHUNK, 0 if sh.base is None else sh.base[c], np.int32)


def _rebase(core, buf, sh: GmShadow, ids, bases, first: int, unit: int, span, dtype, site) -> None:
    """An atomic add over units whose last writes are ``ids``: check it against the plain write the earlier adds
    accumulate onto (``bases``; another block's, not ordered before this add: a race the last write hides), then
    record the plain write these units now accumulate onto (the last write if plain, else the old base)."""
    written, _, _, wps, _ = sh.decode(ids)
    plain = written & ((wps & 8) == 0)
    under = ~plain & (bases != 0)
    if under.any():
        bw, buid, bepoch, _, brecs = sh.decode(bases)
        bad = under & bw & (buid != core.uid) & (bepoch > _seen_of(core, buid))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            oc = core.launch.cores[int(buid[i])]
            isz = np.dtype(dtype).itemsize
            where = (f"GM buffer {buf.name!r} bytes {span[0]}..{span[1] - 1} (elements {span[0] // isz}.."
                     f"{(span[1] - 1) // isz}); byte {first + i * unit} was already written by block "
                     f"{oc.block_idx} ({oc.core_type})")
            _atomic_plain_race(core, where, True, brecs[i], site,
                               " (atomic adds came after it, but none orders it before this one)")
    bases[...] = np.where(plain, ids, bases)


def _same_pipe_overlap(core, buf, same, wps, recs, first: int, unit: int, pipe: int, atomic: bool, span,
                       site) -> None:
    """PipeBarrier(ISASI).md: "PIPE_MTE2/PIPE_MTE3在搬运地址有重叠的情况下需要开发者插入同步 ... 搬运的目的GM地址存在重叠，
    两条搬运指令之间需要通过调用PipeBarrier<PIPE_MTE3>()添加MTE3搬出流水的同步". An earlier write of this pipe to
    these bytes must be known finished (a PipeBarrier, or a wait on a pipe that waited for it); atomic adds
    accumulate and are left alone; the instruction's own earlier bursts are not earlier writes."""
    seq = wps >> 4
    open_ = same & (seq > core.done[pipe]) & (seq != core.vc[pipe][pipe] + 1)
    if atomic:
        open_ &= (wps & 8) == 0
    if not open_.any():
        return
    i = int(np.flatnonzero(open_)[0])
    w = PIPES[pipe]
    raise RaceError(
        f"pipe {w} writes GM buffer {buf.name!r} bytes {span[0]}..{span[1] - 1}; byte {first + i * unit} was written "
        f"by an earlier copy on the same pipe at {_site(core, recs[i])}, with no PipeBarrier between (copies on "
        f"one MTE pipe may overlap in flight: the older bytes may land last)",
        fix=f"PipeBarrier(PIPE_{w}) between the two copies (PipeBarrier(ISASI).md), or write each byte once",
        site=site)


# ----------------------------------------------------------------------------- reads
def gm_read(core, buf, off: int, count: int, blen: int, pitch: int, pipe: int, op: str, site) -> None:
    """racecheck of a GM read on ``pipe`` (MTE2): the bytes' last writes must happen before it.

    Callers skip it while nothing in the launch wrote ``buf`` (``buf.written``), the usual input.
    """
    in_time_order(core, pipe)
    sh = buf.shadow
    for start, end in chunk_runs(off, count, blen, pitch):
        c0, c1 = start // CHUNK, -(-end // CHUNK)
        _check_read(core, buf, sh, sh.wid[c0:c1], c0 * CHUNK, CHUNK, pipe, op, (start, end), site)
        for c in _partial_in(sh.partial, c0, c1):
            a, b = max(start, c * CHUNK) - c * CHUNK, min(end, (c + 1) * CHUNK) - c * CHUNK
            _check_read(core, buf, sh, sh.partial[c][a:b], c * CHUNK + a, 1, pipe, op, (start, end), site)


def record_read(core, buf, off: int, count: int, blen: int, pitch: int, pipe: int = MTE2) -> None:
    """Remember a GM read (before it is issued on ``pipe``) for the write-after-read checks of later writes."""
    if core.launch.horizon != _INF:     # blocks in time order (in_time_order's first test, inline)
        in_time_order(core, pipe)
    read = (core.epoch, off, count, blen, pitch, len(core.records), core.vc[pipe][pipe] + 1, pipe)
    mine = buf.reads.get(core.uid)
    if mine is None:
        buf.reads[core.uid] = [read]
    else:
        mine.append(read)


def _box(buf, uid: int, reads: list) -> tuple:
    """(lowest byte, end byte) of the reads of core ``uid``, extended over the reads added since last time."""
    lo, hi, k = buf.boxes.get(uid, (1 << 62, -1, 0))
    for _, roff, rcount, rblen, rpitch, *_ in reads[k:]:
        lo, hi = min(lo, roff), max(hi, roff + (rcount - 1) * rpitch + rblen)
    buf.boxes[uid] = (lo, hi, len(reads))
    return lo, hi


def _check_after_reads(core, buf, off: int, count: int, blen: int, pitch: int, site) -> None:
    """Raise if this write covers bytes another block read with no synchronisation between."""
    seen = core.seen
    mine = chunk_runs(off, count, blen, pitch)
    lo, hi = mine[0][0], mine[-1][1]
    for uid, reads in buf.reads.items():
        if uid == core.uid:
            continue
        blo, bhi = _box(buf, uid, reads)
        if blo >= hi or bhi <= lo:
            continue
        for epoch, roff, rcount, rblen, rpitch, rec, *_ in reads:
            if epoch <= seen.get(uid, -1) or roff >= hi or roff + (rcount - 1) * rpitch + rblen <= lo:
                continue
            _overlap(core, buf, uid, rec, chunk_runs(roff, rcount, rblen, rpitch), mine, site)


def _check_own_reads(core, buf, off: int, count: int, blen: int, pitch: int, pipe: int, site) -> None:
    """Raise if this write on ``pipe`` covers bytes this block's MTE2 read with no flag or barrier between.

    Reads are kept in issue order; those the writing pipe has synchronised past (its vector clock) are
    skipped for good (``buf.settled``), so a kernel pays for the few reads still in flight.
    """
    reads = buf.reads[core.uid]
    key = (core.uid, pipe)
    k = buf.settled.get(key, 0)
    vc = core.vc[pipe]
    n = len(reads)
    while k < n and reads[k][6] <= vc[reads[k][7]]:
        k += 1
    buf.settled[key] = k
    if k == n:
        return
    mine = chunk_runs(off, count, blen, pitch)
    lo, hi = mine[0][0], mine[-1][1]
    for _, roff, rcount, rblen, rpitch, rec, seq, rp in reads[k:]:
        if seq <= vc[rp] or roff >= hi or roff + (rcount - 1) * rpitch + rblen <= lo:
            continue
        for rs, re_ in chunk_runs(roff, rcount, rblen, rpitch):
            for ws, we in mine:
                if rs < we and ws < re_ and seq > vc[rp] and not core.auto_sync(rp, pipe):
                    r, w = PIPES[rp], PIPES[pipe]
                    raise RaceError(
                        f"pipe {w} writes GM buffer {buf.name!r} bytes {ws}..{we - 1}; byte {max(rs, ws)} was read by "
                        f"pipe {r} of this block at {_site(core, rec)}, with no flag or barrier between that read "
                        f"and this write (the read may still be running and see the new bytes)"
                        f"{core.auto_sync_note(rp, pipe)}",
                        fix=f"«SetFlag(HardEvent.{r}_{w}, id)» after the read and «WaitFlag(HardEvent.{r}_{w}, id)» "
                            "before this write (or the queue hand-off that makes them wait), or «PipeBarrier(PIPE_ALL)»",
                        site=site)


def _overlap(core, buf, uid: int, rec: int, theirs: list, mine: list, site) -> None:
    """The write-after-read error, if a read burst of ``theirs`` meets a write burst of ``mine``."""
    for rs, re_ in theirs:
        for ws, we in mine:
            if rs < we and ws < re_:
                oc = core.launch.cores[uid]
                raise RaceError(
                    f"block {core.block_idx} ({core.core_type}) writes GM buffer {buf.name!r} bytes {ws}..{we - 1}; "
                    f"byte {max(rs, ws)} was read by block {oc.block_idx} ({oc.core_type}) at {_site(core, rec)}, "
                    f"with no SyncAll or cross-core flag between that read and this write (blocks run in parallel: "
                    f"the read may see the old bytes or the new)",
                    fix="call SyncAll() between the phase that writes and the phase that reads, or hand the "
                        "data over with CrossCoreSetFlag after the write and CrossCoreWaitFlag before the read",
                    site=site)


def _check_read(core, buf, sh: GmShadow, ids, first: int, unit: int, pipe: int, op: str, span, site) -> None:
    if not ids.any():
        return
    written, uid, epoch, wps, recs = sh.decode(ids)
    mine = written & (uid == core.uid)
    p = wps & 7
    vc = np.array(core.vc[pipe][:7], np.int64)
    late = mine & ((wps >> 4) > vc[p])
    unseen = written & ~mine & (epoch > _seen_of(core, uid))
    bad = late | unseen
    if not bad.any():
        return
    if late.any():
        late = _after_auto_sync(core, late, p, wps, pipe)
        bad = late | unseen
        if not bad.any():
            return
    i = int(np.flatnonzero(bad)[0])
    at = first + i * unit
    head = (f"{op} on pipe {PIPES[pipe]} reads GM buffer {buf.name!r} bytes {span[0]}..{span[1] - 1}; byte {at} "
            f"was written")
    if late[i]:
        w = PIPES[p[i]]
        raise RaceError(f"{head} by pipe {w} of this block at {_site(core, recs[i])}, with no flag or barrier "
                        f"between the write and this read (the read may see the old bytes)"
                        f"{core.auto_sync_note(int(p[i]), pipe)}",
                        fix=f"«SetFlag(HardEvent.{w}_{PIPES[pipe]}, id)» after the write and «WaitFlag(HardEvent."
                            f"{w}_{PIPES[pipe]}, id)» before this read, or «PipeBarrier(PIPE_ALL)»", site=site)
    oc = core.launch.cores[int(uid[i])]
    raise RaceError(f"{head} by block {oc.block_idx} ({oc.core_type}) at {_site(core, recs[i])}, with no SyncAll "
                    f"or cross-core flag between that write and this read (blocks run in parallel)",
                    fix="call SyncAll() between the phase that writes and the phase that reads, or hand the data "
                        "over with CrossCoreSetFlag after the write and CrossCoreWaitFlag before the read",
                    site=site)


# ----------------------------------------------------------------------------- helpers
def _after_auto_sync(core, late: np.ndarray, p: np.ndarray, wps: np.ndarray, pipe: int) -> np.ndarray:
    """``late`` (this block's accesses on pipes ``p`` not ordered before ``pipe``'s) less those the compiler's
    auto-sync orders: it makes ``pipe`` wait for each such pipe (Core.auto_sync), as for local memory."""
    if not any([core.auto_sync(q, pipe) for q in set(p[late].tolist())]):
        return late
    vc = np.array(core.vc[pipe][:7], np.int64)
    return late & ((wps >> 4) > vc[p])


def _bursts(a: np.ndarray, first: int, count: int, n: int, step: int) -> np.ndarray:
    """A (count, n) view of ``a``: ``count`` runs of ``n`` elements, ``step`` apart, from ``first``."""
    isz = a.itemsize
    return np.ndarray((count, n), a.dtype, a, first * isz, (step * isz, isz))


def _seen_of(core, uid: np.ndarray) -> np.ndarray:
    """The last epoch of each writer in ``uid`` that ``core`` has synchronised with (-1: none)."""
    seen = core.seen
    if not seen:
        return np.full(uid.shape, -1, np.int64)
    u, inv = np.unique(uid, return_inverse=True)
    return np.array([seen.get(x, -1) for x in u.tolist()], np.int64)[inv].reshape(uid.shape)


def _site(core, rec) -> str:
    r = Instr(*core.records[int(rec)]) if int(rec) < len(core.records) else None
    return f"{format_site(r.site)} ({r.op})" if r is not None else "<this instruction>"


def _what(core, pipe: int) -> str:
    return f"block {core.block_idx} ({core.core_type}) pipe {PIPES[pipe]}"


def publish(core) -> dict:
    """What ``core`` hands over when it synchronises (SyncAll arrival, CrossCoreSetFlag): then a new epoch."""
    out = dict(core.seen)
    out[core.uid] = core.epoch
    core.epoch += 1
    return out


def merge_into(seen: dict, published: dict) -> None:
    """Elementwise max of two epoch maps, into ``seen``."""
    for u, e in published.items():
        if seen.get(u, -1) < e:
            seen[u] = e


def merge(core, published: dict) -> None:
    """``core`` has synchronised with ``published`` (SyncAll release, CrossCoreWaitFlag)."""
    seen = core.seen
    for u, e in published.items():
        if u != core.uid and seen.get(u, -1) < e:
            seen[u] = e
