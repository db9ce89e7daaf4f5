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

import numpy as np

from ascend_sim.engine.l2 import strided_units

BIN = 128       # cycles per booking bin
_putmask = np.putmask


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

    __slots__ = ("fills", "time_order")

    def __init__(self, time_order: bool = False):
        self.fills: dict = {}           # lines -> (reader, end cycle, request cycle) of the latest read that missed
        self.time_order = time_order    # gm_fill_wait_in_time_order (causal order; on by default)

    @staticmethod
    def needed(chip, concurrency: int) -> "LineFills | None":
        """A tracker when several blocks run at once and the chip's rule is on (``gm_hit_waits_for_fill``)."""
        if not chip.gm_hit_waits_for_fill or concurrency <= 1:
            return None
        return LineFills(chip.gm_fill_wait_in_time_order)

    def read(self, key, reader: int, start: float, moving: float, missed: bool, request: float | None = None) -> float:
        """The cycles a read of lines ``key`` takes from ``start`` (``moving``: its own time), given the fills in
        flight; a read that ``missed`` (some bytes from HBM) is recorded as the lines' fill. ``request``: the cycle
        the read was issued (before its start-up; default ``start``).

        With ``time_order`` (``gm_fill_wait_in_time_order``, on by default): L2 decides hit and miss in the order
        the reads are priced, which runs up to a scheduler time slice ahead of simulated time, so a "hit" may have
        been issued before the read that filled its lines. In the chip's order the earlier request fetches them:
        the lines are there one fill time (the filler's request to its end) after the earlier of the two requests,
        so a waiter issued first waits at most that long from its own request, and it becomes the lines' fill that
        reads issued after it wait for (the filler priced first keeps its own time: it is already booked)."""
        if request is None:
            request = start
        fill = self.fills.get(key)
        if fill is not None and fill[0] != reader:
            end = fill[1]                   # the lines it hit are still arriving: it ends with that fill
            if self.time_order and request < fill[2]:
                # issued first: on the chip this request fetched the lines, one fill time from its own request,
                # and it is the fill a read issued after it waits for
                end = request + (fill[1] - fill[2])
                if not missed:
                    self.fills[key] = (reader, end, request)
            if end > start + moving:
                moving = end - start
        if missed:
            self.fills[key] = (reader, start + moving, request)
        return moving


class _Run:
    """The windows of one request shape that every request to them asks for whole (a tiled kernel's tile: the
    same rows, the same windows), while ``WindowTurns`` keeps its state per run: the core that last held them
    and their busy periods, as the parameters of the idle request that set them (``rec``: start, moving, hold;
    window ``i`` of ``n`` was asked for, and its turn began, at ``i / n * moving + start``), else in WindowTurns'
    per-window arrays at its windows (``since`` and ``free`` here: two floats for a run of one window); ``top``:
    the latest end of a turn among them."""

    __slots__ = ("where", "n", "owner", "rec", "since", "free", "top")

    def __init__(self, where: slice, n: int, owner: int = -1, rec: tuple | None = None, since: float = 0.0,
                 free: float = 0.0, top: float = 0.0):
        self.where, self.n = where, n
        self.owner, self.rec, self.since, self.free, self.top = owner, rec, since, free, top


def _idle_run(where: slice, n: int, request: tuple) -> _Run:
    """The run of ``n`` windows ``where`` that one idle request (core, start, moving, hold) set, as
    ``WindowTurns.wait`` sets it."""
    core, start, moving, hold = request
    if n == 1:
        return _Run(where, 1, core, None, start, start + hold, start + hold)
    return _Run(where, n, core, (start, moving, hold), 0.0, 0.0, (n - 1) / n * moving + start + hold)


class WindowTurns:
    """GM requests of several cores to one 512 B window at the same time, served in turn (the same-address rule).

    The rule [OFF, CANN Ascend C guide, "避免同地址访问" (docs/zh/guide/算子实践参考/SIMD算子性能优化/内存访问/ in
    https://github.com/cannmirror/asc-devkit)]: MTE2/MTE3/Scalar GM requests are handled per 512 B-aligned window;
    requests of several cores to one window at the same time are processed serially, for data consistency, and the
    more cores hit one window at once the worse. Model [EST, ours]: each window keeps its busy period (the cycles
    its turns, back to back, began and end) and the core that last held it. A transfer's windows are requested in
    order at its own pace, evenly over its moving time from its start; one that finds a window in another core's
    busy period waits for its end, and the whole transfer ends that much later (it stalls once, by its longest
    wait: a stream of requests behind the other core's). Each window's turn then lasts its bytes there at
    ``gm_window_bytes_per_cycle`` plus, in proportion to the bytes that missed L2, ``gm_window_miss_hold_cycles``
    (a request that goes to HBM holds the window for the HBM round trip). A core's own earlier turn does not make it
    wait (its pipe keeps its order). Blocks advance together in simulated time (engine/scheduler.py), so requests
    meet here in about the chip's order, to within a time slice: a request priced after a turn that began later in
    simulated time goes first and that period grows by its turn (the other's transfer, already priced, is not
    moved).

    Bookkeeping, two forms with the same results. Per run (``_Run``) while every request asks for the windows of
    an earlier one or windows no request asked for before (a tiled matmul whose cores read the same tiles):
    a request that finds its run last held by itself, or every turn there over before it starts, waits for nothing
    and sets the run's windows as an idle request would, a few Python floats; only a request that meets another
    core's turns works on arrays (the run's own). The first request that overlaps a run in part writes every run
    into the per-window arrays (``since``, ``free``, ``owner``) and the per-window form goes on from there: numpy over
    the windows a transfer touches (a slice in the usual cases), paid only where cores share pages of windows (a
    page of windows only one core has used keeps its requests unwritten, ``pending``). Speed, the same results: a new
    run of contiguous windows (a vector core's copy of a tile: each add_custom copy) is kept as its request, a tuple,
    until another request asks for its windows (``_idle_run``), and the per-window arrays are made only when first
    needed (``_arrays``).
    """

    __slots__ = ("window", "windows_count", "since", "free", "owner", "per_byte", "miss_hold", "ramps", "patterns", "page_owner",
                 "pending", "max_pending", "runs", "claimed", "max_runs")

    PAGE_SHIFT = 3      # 8 windows (4 KB, as GM buffers are aligned) a page: the unit of the lazy bookkeeping below
    SHARED = [-2] * 64
    MAX_PENDING = 4096  # a core's kept requests are written out beyond this many (memory only: the same results)
    MAX_RUNS = 1 << 16  # runs kept at most (memory); beyond, per window

    def __init__(self, window: int, span_bytes: int, bytes_per_cycle: float, miss_hold: float, runs: bool = True):
        self.window = window
        n = span_bytes // window + 2
        self.windows_count = n
        self.since = self.free = self.owner = None  # per-window arrays, made when first needed (_arrays)
        if not runs:
            self._arrays()
        self.per_byte, self.miss_hold = 1.0 / bytes_per_cycle, miss_hold
        self.ramps: dict = {}                       # windows touched -> their request offsets, 0 .. (n-1)/n
        self.patterns: dict = {}                    # (first offset, count, blen, pitch) -> relative windows
        # Per run (class docstring) while ``runs`` is a dict: (start, stop, step) of the windows -> _Run; None
        # once a request overlapped a run in part (``runs=False``: per window from the start, the reference form)
        self.runs: dict | None = {} if runs else None
        self.claimed = bytearray(n if runs else 0)  # 1: the window belongs to a run
        self.max_runs = self.MAX_RUNS
        # Lazy bookkeeping, the same results: while every window of a page was last held by one core (or by none),
        # that core's requests there never wait and set each window as an idle request would, so they are kept
        # as a list (``pending``) and written to the arrays only when another core's request reaches such a page.
        # page_owner: -1 untouched, a core uid (its requests there maybe pending), -2 shared (arrays exact).
        self.page_owner: list[int] = [-1] * ((n >> self.PAGE_SHIFT) + 1)
        self.pending: dict[int, list] = {}          # core uid -> its unwritten requests (where, start, moving, hold)
        self.max_pending = self.MAX_PENDING

    def _arrays(self) -> None:
        """Make the per-window arrays (a launch whose requests all stay per run, such as add_custom's one copy per
        tile, never needs them)."""
        if self.since is None:
            n = self.windows_count
            self.since = np.zeros(n, np.float64)        # cycle each window's last turn began
            self.free = np.zeros(n, np.float64)         # cycle it ends
            self.owner = np.full(n, -1, np.int64)       # core uid that last held it

    @staticmethod
    def needed(chip, concurrency: int, span_bytes: int) -> "WindowTurns | None":
        """The windows' turns when several blocks run at once and the rule is on (``gm_window_turns``)."""
        if not chip.gm_window_turns or concurrency <= 1:
            return None
        return WindowTurns(chip.gm_burst_align, span_bytes, chip.gm_window_bytes_per_cycle,
                           chip.gm_window_miss_hold_cycles)

    def windows(self, addr: int, count: int, blen: int, pitch: int):
        """The windows ``count`` bursts of ``blen`` bytes ``pitch`` apart from GM offset ``addr`` touch, in order
        (``strided_units`` with the window size)."""
        return strided_units(addr, count, blen, pitch, self.window, self.patterns)

    def wait(self, addr: int, count: int, blen: int, pitch: int, nbytes: int, core: int, start: float,
             moving: float, missed: float) -> float:
        """The cycles a transfer (GM offset ``addr``, its bursts) requested from ``start`` and moving for ``moving``
        cycles waits for windows other cores hold; records its own turns. ``missed``: its share of bytes from HBM."""
        window = self.window
        runs = self.runs
        if runs is not None and (count == 1 or pitch - blen < window):
            # one run of windows (strided_units' first case, worked out here: a vector core's copy of a tile)
            first, stop = addr // window, -(-(addr + (count - 1) * pitch + blen) // window)
            if self.claimed.find(1, first, stop) < 0 and len(runs) < self.max_runs:
                # windows no request asked for before (so no run has them): a new run as the idle request below sets
                # it, kept as its request (core, start, moving, hold) until another request asks for it (_idle_run)
                n = stop - first
                self.claimed[first:stop] = b"\x01" * n
                runs[first, stop, 1] = (core, float(start), float(moving),
                                        float(nbytes / n * self.per_byte + missed * self.miss_hold))
                return 0.0
            where, step = slice(first, stop), 1
        else:
            where = strided_units(addr, count, blen, pitch, window, self.patterns)
            if where.__class__ is slice:
                first, stop, step = where.start, where.stop, where.step or 1
        if where.__class__ is slice:
            last, n = stop - 1, (stop - first - 1) // step + 1
            if runs is not None:
                run = runs.get((first, stop, step))
                if run is None:
                    run = self._new_run(where, first, stop, step, n)
                elif run.__class__ is tuple:
                    run = runs[first, stop, step] = _idle_run(where, n, run)
                if run is not None:
                    start, moving = float(start), float(moving)
                    hold = float(nbytes / n * self.per_byte + missed * self.miss_hold)
                    if run.owner == core or run.top < start or run.owner < 0:     # as idle: no wait, no queue
                        run.owner = core
                        if n == 1:
                            run.since, run.free = start, start + hold
                            run.top = run.free
                        else:
                            run.rec = (start, moving, hold)
                            run.top = (n - 1) / n * moving + start + hold
                        return 0.0
                    return self._run_wait(run, core, start, moving, hold)
        else:
            first, last, n = int(where[0]), int(where[-1]), where.size
        if self.runs is not None:
            self._spell_out()
        hold = nbytes / n * self.per_byte + missed * self.miss_hold
        if self._own_pages(first, last, core):
            reqs = self.pending.get(core)
            if reqs is None:
                reqs = self.pending[core] = []
            reqs.append((where, n, start, moving, hold))
            if len(reqs) > self.max_pending:
                self._write_pending()
            return 0.0
        if self.pending:
            self._write_pending()
        self._share_pages(first, last)
        if n == 1:
            return self._wait_one(first, core, start, hold)
        since, free = self.since[where], self.free[where]
        asked = self._ramp(n) * moving
        asked += start
        late = free - asked
        if late.max() < 0.0:                            # every window idle when asked: no wait, no queue to join
            self.since[where] = asked
            asked += hold
            self.free[where] = asked
            self.owner[where] = core
            return 0.0
        others = self.owner[where] != core
        late = np.where(others & (since <= asked), late, 0.0)     # in another core's turns: wait them out
        lag = float(late.max())
        if lag < 0.0:
            lag = 0.0
        asked += lag                                    # each window's turn begins
        queued = others & (free >= asked)               # joins turns still running (priced before, begun after)
        self.since[where] = np.where(queued, np.minimum(since, asked), asked)
        self.free[where] = np.where(queued, free, asked) + hold
        self.owner[where] = core
        return lag

    def settle(self) -> None:
        """Write every run and kept request into the per-window arrays (then they are exact; per window from now)."""
        self._arrays()
        if self.runs is not None:
            self._spell_out()
        self._write_pending()

    # ------------------------------------------------------------------ per run
    def _new_run(self, where: slice, first: int, stop: int, step: int, n: int) -> _Run | None:
        """A run for windows no request asked for before; None when some of them belong to a run already (or
        there are too many runs): then the bookkeeping goes per window."""
        claimed = self.claimed
        if len(self.runs) >= self.max_runs or (claimed.find(1, first, stop) >= 0 if step == 1
                                               else claimed[where].count(1)):
            return None
        claimed[where] = b"\x01" * n
        run = self.runs[(first, stop, step)] = _Run(where, n)
        return run

    def _run_wait(self, run: _Run, core: int, start: float, moving: float, hold: float) -> float:
        """``wait`` on a run that another core holds and whose turns may still run when the request starts (``wait``
        took the other cases: as an idle request, on Python floats, which give numpy's float64 results operation by
        operation; each window asks at ``i / n * moving + start``, non-decreasing in ``i``): the per-window
        algorithm on the run's state."""
        n = run.n
        if n == 1:
            return self._run_wait_one(run, core, start, hold)
        if self.since is None:
            self._arrays()
        ramp = self.ramps.get(n)                        # (self._ramp inline, and the run's arrays: their views, or
                                                        # made from its request's parameters when it has them)
        if ramp is None:
            ramp = self._ramp(n)
        rec = run.rec                                   # another core's turns (owner != core for every window)
        if rec is None:
            since, free = self.since[run.where], self.free[run.where]
        else:
            since = ramp * rec[1]
            since += rec[0]
            free = since + rec[2]
        asked = ramp * moving
        asked += start
        late = free - asked
        run.owner = core
        if late.item(late.argmax()) < 0.0:              # every window idle when asked (argmax: the maximum without
                                                        # a ufunc reduction, a third of its cost)
            run.rec = (start, moving, hold)
            run.top = (n - 1) / n * moving + start + hold
            return 0.0
        _putmask(late, since > asked, 0.0)              # waits out the turns it is in (or none)
        lag = late.item(late.argmax())
        if lag < 0.0:
            lag = 0.0
        if lag:
            asked += lag
        # a window whose turns still run when asked joins them (its turn begins with theirs, ends after them),
        # else its turn begins when asked: the per-window form's np.where(queued, free, asked) is the maximum
        run.rec = None                                  # the state in the per-window arrays from now
        where = run.where
        joins = free >= asked
        last = asked.item(-1)                           # the latest request (they are non-decreasing)
        ends = self.free[where]                         # a view (``free`` itself when the run was in the arrays)
        np.maximum(free, asked, out=ends)
        ends += hold
        _putmask(asked, joins, np.minimum(since, asked))     # each window's turn begins: ``asked`` from here
        self.since[where] = asked
        run.top = (run.top if run.top > last else last) + hold
        return lag

    def _run_wait_one(self, run: _Run, core: int, asked: float, hold: float) -> float:
        """``_wait_one`` on a run of one window (its state as two floats)."""
        free = run.free
        other = run.owner != core
        lag = free - asked if other and free > asked and run.since <= asked else 0.0
        asked += lag
        if other and free >= asked:
            run.since = min(run.since, asked)
            run.free = free + hold
        else:
            run.since = asked
            run.free = asked + hold
        run.owner = core
        run.top = run.free
        return lag

    def _spell_out(self) -> None:
        """Write every run into the per-window arrays; per window from now on. Runs set as idle requests are
        written together, one numpy pass per run length. A page whose runs one core last held becomes that core's
        (its next requests there may be kept unwritten), one where several did, shared (``_page_owners``)."""
        self._arrays()
        idle: dict[int, list] = {}                      # run length -> (first, step, start, moving, hold, owner)
        held = []                                       # (windows, owner) of every run
        for (first, stop, step), run in self.runs.items():
            if run.__class__ is tuple:
                run = _idle_run(slice(first, stop), stop - first, run)
            where = run.where
            if run.rec is not None:
                idle.setdefault(run.n, []).append((where.start, where.step or 1, *run.rec, run.owner))
            else:                                       # in the arrays already, or two floats for one window
                if run.n == 1:
                    self.since[where], self.free[where] = run.since, run.free
                self.owner[where] = run.owner
                held.append((np.arange(where.start, where.stop, where.step or 1), np.full(run.n, run.owner)))
        for n, rows in idle.items():
            first, step, start, moving, hold, owner = (np.array(col) for col in zip(*rows))
            where = first[:, None] + step[:, None] * np.arange(n)
            asked = self._ramp(n)[None, :] * moving[:, None]       # element by element as _run_wait
            asked += start[:, None]
            self.since[where] = asked
            asked += hold[:, None]
            self.free[where] = asked
            owners = np.broadcast_to(owner[:, None], where.shape)
            self.owner[where] = owners
            held.append((where.ravel(), owners.ravel()))
        if held:
            self._page_owners(np.concatenate([w for w, _ in held]), np.concatenate([o for _, o in held]))
        self.runs = None
        self.claimed = bytearray(0)

    def _page_owners(self, windows: np.ndarray, owners: np.ndarray) -> None:
        """``page_owner`` of the pages of ``windows`` (every page untouched before): the one core that last held
        every window of the page that was held, else shared."""
        pages = windows >> self.PAGE_SHIFT
        n = len(self.page_owner)
        low, high = np.full(n, np.iinfo(np.int64).max), np.full(n, -1)
        np.minimum.at(low, pages, owners)
        np.maximum.at(high, pages, owners)
        page_owner = np.array(self.page_owner)
        touched = high >= 0
        page_owner[touched] = np.where(low[touched] == high[touched], high[touched], -2)
        self.page_owner = page_owner.tolist()

    # ------------------------------------------------------------------ per window
    def _ramp(self, n: int):
        """Request offsets of ``n`` windows over a transfer's moving time: 0, 1/n, ..., (n-1)/n."""
        ramp = self.ramps.get(n)
        if ramp is None:
            ramp = self.ramps[n] = np.arange(n, dtype=np.float64) / n
        return ramp

    def _own_pages(self, first: int, last: int, core: int) -> bool:
        """Whether every page of windows ``first..last`` is untouched or only ``core``'s; then they become its."""
        owners = self.page_owner
        lo, hi = first >> self.PAGE_SHIFT, last >> self.PAGE_SHIFT
        for p in range(lo, hi + 1):
            o = owners[p]
            if o != core and o != -1:
                return False
        for p in range(lo, hi + 1):
            owners[p] = core
        return True

    def _share_pages(self, first: int, last: int) -> None:
        """The pages of windows ``first..last`` become shared: their requests go to the arrays from now on."""
        lo, hi = first >> self.PAGE_SHIFT, (last >> self.PAGE_SHIFT) + 1
        self.page_owner[lo:hi] = self.SHARED[:hi - lo] if hi - lo <= 64 else [-2] * (hi - lo)

    def _write_pending(self) -> None:
        """Write every kept request to the arrays, in order (each as an idle request: no wait, its own turn)."""
        if not self.pending:
            return
        for core, reqs in self.pending.items():
            for where, n, start, moving, hold in reqs:
                asked = self._ramp(n) * moving
                asked += start
                self.since[where] = asked
                asked += hold
                self.free[where] = asked
                self.owner[where] = core
        self.pending = {}

    def _wait_one(self, w: int, core: int, asked: float, hold: float) -> float:
        """``wait`` for a transfer within one window ``w`` (a vector core's small copy), on scalars."""
        free = float(self.free[w])
        other = int(self.owner[w]) != core
        lag = free - asked if other and free > asked and self.since[w] <= asked else 0.0
        asked += lag
        if other and free >= asked:                     # joins a turn still running
            self.since[w] = min(float(self.since[w]), asked)
            self.free[w] = free + hold
        else:
            self.since[w] = asked
            self.free[w] = asked + hold
        self.owner[w] = core
        return lag
