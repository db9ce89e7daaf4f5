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

Two rules of the same pages (约束说明, flagId相关的约束) are checked when the launch ends (``finish_error``), on
each counter's history in simulated time, so the order in which the simulator ran the blocks cannot matter:

- a counter counts 0..15 (``ChipProfile.cross_core_flag_max_count``): a rise that would take it to 16 is an
  exception on the chip ("计数器的值超出该范围，则会异常报错，中断流程");
- every CrossCoreSetFlag needs its CrossCoreWaitFlag ("用户需要确保配套使用CrossCoreSetFlag和CrossCoreWaitFlag，否则会
  出现未定义行为"; 关键特性说明: "CrossCoreSetFlag和CrossCoreWaitFlag都必须配对使用"): a counter still above 0 when
  the kernel ends, or a round some cores reported and the others never did, is a SyncError.
"""
from __future__ import annotations

from ascend_sim.engine import gmcheck
from ascend_sim.engine.errors import ArgumentError, SyncError, format_site

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
        self.history: dict[tuple, list] = {}   # (uid, flag) -> [(cycle, +1 rise or -1 take, site of the set)]
        self.sites: dict[tuple, list] = {}     # (mode, scope, flag) -> the sites of the reports not yet in a round

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
        self.sites.setdefault((mode, scope, flag), []).append((core.uid, site))
        if any(not pending.get(c.uid) for c in must):
            return
        firsts = [pending[c.uid].pop(0) for c in must]
        reported = self.sites[(mode, scope, flag)]
        for c in must:                          # each member's oldest report site leaves with its round
            reported.pop(next(i for i, (uid, _) in enumerate(reported) if uid == c.uid))
        when = max(f[0] for f in firsts)
        seen: dict = {}
        known: dict = {}
        for _, published, reported in firsts:
            gmcheck.merge_into(seen, published)
            known = _merged(known, reported)
        for c in rise:
            self.rises.setdefault((c.uid, flag), []).append((when, seen, known))
            self.history.setdefault((c.uid, flag), []).append((when, 1, site))

    def ready(self, core, flag: int) -> bool:
        return bool(self.rises.get((core.uid, flag)))

    def take(self, core, flag: int) -> tuple[float, dict, list | None]:
        """The oldest rise of ``core``'s counter ``flag``: (cycle, GM epochs it hands over, the clock of
        ``core``'s own pipes that the rise's reports had seen finished, or None)."""
        when, seen, known = self.rises[(core.uid, flag)].pop(0)
        self.history[(core.uid, flag)].append((max(when, core.scalar_time), -1, None))
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


    def finish_error(self) -> SyncError | None:
        """The first breach of the counters' rules over the whole launch (overflow, then a set never waited for,
        then a round never completed), or None."""
        top = self.cores[0].chip.cross_core_flag_max_count if self.cores else 15
        for (uid, flag), events in sorted(self.history.items()):
            count = 0
            for when, step, site in sorted(events, key=lambda e: (e[0], e[1])):   # a take before a rise at one cycle
                count += step
                if count > top:
                    return self._overflow(self.cores[uid], flag, count, top, when, site)
        for (uid, flag), rises in sorted(self.rises.items()):
            if rises:
                return self._left_set(self.cores[uid], flag, rises)
        for (mode, scope, flag), reported in self.sites.items():
            if reported:
                return self._incomplete(mode, flag, reported)
        return None

    def _overflow(self, core, flag: int, count: int, top: int, when: float, site) -> SyncError:
        return SyncError(
            f"cross-core flag {flag} of {_name(core)} would count {count} at cycle {when:,.0f}: the chip's counter of "
            f"one flagId counts 0..{top}, and a rise past {top} raises an exception and stops the kernel (the "
            f"CrossCoreSetFlag page, 约束说明: \"每一个计数器计数范围为0-{top}\"); {count - 1} earlier rises of it "
            "were not yet taken by a CrossCoreWaitFlag",
            fix=f"let {_name(core)} take each rise with «CrossCoreWaitFlag({flag})» before the partner sets the flag "
                f"again (at most {top} sets ahead), e.g. a ping-pong of two flags", site=site)

    def _left_set(self, core, flag: int, rises: list) -> SyncError:
        n = len(rises)
        return SyncError(
            f"cross-core flag {flag} of {_name(core)} is still {n} when the kernel ends: {n} CrossCoreSetFlag "
            f"round(s) raised it and no CrossCoreWaitFlag({flag}) on {_name(core)} took them (the CrossCoreSetFlag "
            "page, 约束说明: every CrossCoreSetFlag needs its CrossCoreWaitFlag, else the behaviour is undefined; "
            "on the chip the counter keeps its value for whatever runs next)",
            fix=f"add «CrossCoreWaitFlag({flag})» on {_name(core)} for each round, or remove the set",
            site=self._set_site(core, flag))

    def _set_site(self, core, flag: int):
        return next((s for w, step, s in reversed(self.history.get((core.uid, flag), [])) if step > 0), None)

    def _incomplete(self, mode: int, flag: int, reported: list) -> SyncError:
        uid, site = reported[0]
        core = self.cores[uid]
        _, must, _ = self.members(core, mode)
        missing = [_name(c) for c in must if all(u != c.uid for u, _ in reported)]
        return SyncError(
            f"CrossCoreSetFlag<{mode}>({flag}) of {_name(core)} at {format_site(site)} never completed its round: "
            f"mode {mode} ({MODES[mode]}) raises the counters only when {len(must)} cores have all set it, and "
            f"{', '.join(missing)} did not before the kernel ended (the CrossCoreSetFlag page, 约束说明: sets and "
            "waits must be paired, else the behaviour is undefined)",
            fix=f"set flag {flag} with mode {mode} on every core of the round, or remove this set", site=site)


def _merged(a: dict, b: dict) -> dict:
    """Two {uid: vector clock} maps joined: each core's clocks elementwise at their maximum (new dict and lists)."""
    out = dict(a)
    for uid, clock in b.items():
        mine = out.get(uid)
        out[uid] = list(clock) if mine is None else [max(x, y) for x, y in zip(mine, clock)]
    return out


def _name(core) -> str:
    return f"block {core.block_idx} ({core.core_type})"
