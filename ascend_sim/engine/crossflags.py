"""Cross-core flags: who a CrossCoreSetFlag raises, and when (the counters of the chip's scheduling module).

On Atlas A2 every AIC and every AIV has a counter per flagId. CrossCoreSetFlag<mode, pipe>(id) reports to the
scheduling module once ``pipe`` has finished its earlier work; the module raises counters only when *every core
that takes part* has reported (the API reference, 同步控制/核间同步/关键特性说明, in
https://github.com/cannmirror/asc-devkit docs/zh/api/SIMD-API/基础API/同步控制/核间同步/关键特性说明.md):

- mode 0: all AICs of the launch (or all AIVs) report; then each of them gets +1. A barrier of one core type.
- mode 1: the AIVs of one AI Core report; then each of them gets +1.
- mode 2: the AIC reports -> each AIV of its AI Core gets +1; *all* the AIVs of the AI Core report -> the AIC
  gets +1 once (two AIVs, one rise: the AIC waits once for both).

CrossCoreWaitFlag(id) blocks the core until its counter is non-zero, then takes 1. A report is a *round*: a
core's n-th report of one (mode, scope, flag) belongs to round n, which completes when every member has made its
n-th report, at the latest of their times.

A rise also hands over what happened before the reports (vector clocks across cores): each report carries the
reporting pipe's clock of its own core and every clock its core learnt from the rises it took, so a waiter learns
the clocks of the pipes whose work is finished before its counter rose. On Atlas A2 the wait blocks *all* the
waiter's pipes (the CrossCoreWaitFlag page: modeId and pipe do not take effect, 阻塞全部流水), so its own clocks
among them order its later instructions after that work: an AIV that set <2, PIPE_MTE3> after copying out a UB
buffer, and then waits for the AIC's answer, may overwrite that buffer (the official cross_core_set_wait_flag
sample's AIVs do), though no SetFlag/WaitFlag of its own joins the two pipes.
"""
from __future__ import annotations

from ascend_sim.engine import gmcheck
from ascend_sim.engine.errors import ArgumentError

SYNCALL_FLAGS = (11, 14)    # the flag ids SyncAll uses itself (the CrossCoreSetFlag page's constraints)
MODES = {0: "all cores of one type", 1: "the AIVs of one AI Core", 2: "an AIC and the AIVs of its AI Core"}


class CrossCoreFlags:
    """The counters of one launch: posted rises per (core uid, flag), and the rounds still collecting reports."""

    def __init__(self, cores: list, mix: bool, ended):
        self.cores = cores
        self.mix = mix
        self.ended = ended                     # ended(core) -> whether its block has finished
        self.rises: dict[tuple, list] = {}     # (uid, flag) -> [(time, published GM epochs)], oldest first
        self.rounds: dict[tuple, dict] = {}    # (mode, scope, flag) -> {uid: [(time, epochs, clocks)] not used}
        self.known: dict[int, dict] = {}       # uid -> {uid: a pipe clock of that core} learnt from rises taken

    def members(self, core, mode: int, site: tuple | None = None) -> tuple[tuple, list, list]:
        """(scope, the cores that must all report, the cores whose counters then rise) for ``core``'s report."""
        if mode == 0:
            same = [c for c in self.cores if c.core_type == core.core_type]
            return (core.core_type,), same, same
        if not self.mix:
            raise ArgumentError(
                f"CrossCoreSetFlag mode {mode} syncs {MODES[mode]}, but this kernel has one core type: mode 1 and 2 "
                "need a MIX kernel (KERNEL_TYPE_MIX_AIC_1_2; the CrossCoreSetFlag page, table 3)",
                fix="launch the kernel as MIX («@kernel(core=\"MIX\")|__mix__(1, 2)»), or use mode 0 to sync every "
                    "core of this type", site=site)
        group = [c for c in self.cores if c.group == core.group]
        aivs = [c for c in group if c.core_type == "AIV"]
        if mode == 1:
            if core.core_type != "AIV":
                raise ArgumentError(
                    "CrossCoreSetFlag mode 1 syncs the AIVs of one AI Core, and this is the AIC",
                    fix="on the AIC use mode 2 (AIC -> its AIVs) or mode 0 (all AICs)", site=site)
            return (1, core.group), aivs, aivs
        if core.core_type == "AIC":
            return (2, core.group, "AIC"), [core], aivs
        return (2, core.group, "AIV"), aivs, [c for c in group if c.core_type == "AIC"]

    def report(self, core, mode: int, flag: int, t: float, site: tuple | None = None, clock: list | None = None) -> None:
        """``core`` reports flag ``flag`` at cycle ``t`` (``clock``: the reporting pipe's vector clock); raise the
        counters of a round it completes."""
        scope, must, rise = self.members(core, mode, site)
        pending = self.rounds.setdefault((mode, scope, flag), {})
        clocks = _merged(self.known.get(core.uid, {}), {core.uid: clock} if clock is not None else {})
        pending.setdefault(core.uid, []).append((t, gmcheck.publish(core), clocks))
        if any(not pending.get(c.uid) for c in must):
            return
        firsts = [pending[c.uid].pop(0) for c in must]
        when = max(f[0] for f in firsts)
        seen: dict = {}
        known: dict = {}
        for _, published, reported in firsts:
            gmcheck.merge_into(seen, published)
            known = _merged(known, reported)
        for c in rise:
            self.rises.setdefault((c.uid, flag), []).append((when, seen, known))

    def ready(self, core, flag: int) -> bool:
        return bool(self.rises.get((core.uid, flag)))

    def take(self, core, flag: int) -> tuple[float, dict, list | None]:
        """The oldest rise of ``core``'s counter ``flag``: (cycle, GM epochs it hands over, the clock of
        ``core``'s own pipes that the rise's reports had seen finished, or None)."""
        when, seen, known = self.rises[(core.uid, flag)].pop(0)
        self.known[core.uid] = _merged(self.known.get(core.uid, {}), known)
        return when, seen, known.get(core.uid)

    def why_waiting(self, core, flag: int) -> str:
        """Why ``core``'s counter ``flag`` has not risen: the rounds that would raise it and who has not reported."""
        notes = []
        for (mode, scope, f), pending in self.rounds.items():
            if f != flag or not any(pending.values()):
                continue
            some = next(c for c in self.cores if pending.get(c.uid))
            _, must, rise = self.members(some, mode)
            if core not in rise:
                continue
            missing = [_name(c) + (" (it ended)" if self.ended(c) else "") for c in must if not pending.get(c.uid)]
            done = [_name(c) for c in must if pending.get(c.uid)]
            notes.append(f"mode {mode} ({MODES[mode]}) raises it only when {len(must)} cores have all reported: "
                         f"{', '.join(done)} did, {', '.join(missing)} did not")
        return "; ".join(notes) if notes else "no partner has set it"


def _merged(a: dict, b: dict) -> dict:
    """Two {uid: vector clock} maps joined: each core's clocks elementwise at their maximum (new dict and lists)."""
    out = dict(a)
    for uid, clock in b.items():
        mine = out.get(uid)
        out[uid] = list(clock) if mine is None else [max(x, y) for x, y in zip(mine, clock)]
    return out


def _name(core) -> str:
    return f"block {core.block_idx} ({core.core_type})"
