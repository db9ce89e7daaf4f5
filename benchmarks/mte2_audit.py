"""Audit: what a cube core's MTE2 moves and what the model charges for it (issue 30, large cube launches).

Runs one configuration of ``matmul_tiling_case.py`` (timing only) with the GM -> L1 pricing instrumented, and
prints, per AIC: the bytes copied GM -> L1, the Nd2Nz copies and their rows (by row length), the L2 hit share,
and the MTE2 time split into the copy starts, the rows at the path rates (floor included), the wait for the L2 /
HBM share, the wait for lines another core is filling, and the window turns (same-address rule). Beside it: the
bytes the official Matmul moves for the same tiling (the Tiling-strategy document's formula
totalCnt = N / baseN * M * K + M / baseM * K * N, counted over this run's core split) and the cycles the path needs
at its published rates.

Small launches (the single-feature documents of ``matmul_features.py`` and CATLASS) are audited the same way,
with a per-pipe table beside it: instructions, bytes, the model's busy time and the first start / last end of
each pipe on one core, against the measured figure: ``split-K:before``, ``split-K:after``, ``Preload:before``,
``ND2NZ:before``, ``ND2NZ:after``, ``CATLASS:128x256``, ``CATLASS:256x128`` (``--list`` prints them all).

    python benchmarks/mte2_audit.py T3 [T4 ...] [--what-if FIELD=VALUE ...] [--paired-waves]
    python benchmarks/mte2_audit.py split-K:before Preload:before CATLASS:128x256
    python benchmarks/mte2_audit.py --small          # all eight small launches
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import os
import sys

import numpy as np

import ascend_sim.engine.core as core_mod
from ascend_sim.engine import bandwidth, timing
from ascend_sim.engine.instr import PIPE_INDEX

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matmul_tiling_case as case  # noqa: E402

_MTE2 = PIPE_INDEX["MTE2"]


class Recorder:
    """Per-AIC sums of one launch's GM -> L1 copies and the parts of their MTE2 cycles."""

    def __init__(self):
        self.per_core = collections.defaultdict(lambda: collections.Counter())
        self.rows = collections.Counter()          # (row bytes) -> rows
        self.last: dict = {}

    def install(self):
        """Wrap the pricing functions (restored by ``uninstall``)."""
        rec = self
        self.saved = (core_mod.gm_cycles, bandwidth.WindowTurns.wait, bandwidth.LineFills.read,
                      bandwidth.HbmTimeline.reserve)
        gm_cycles, wait, read, reserve = self.saved

        def t_wait(self, *a, **k):
            got = wait(self, *a, **k)
            rec.last["turns"] = got
            return got

        def t_read(self, key, reader, start, moving, missed, *a):
            got = read(self, key, reader, start, moving, missed, *a)
            rec.last["fills"] = (moving, got)
            return got

        def t_reserve(self, *a, **k):
            got = reserve(self, *a, **k)
            rec.last["hbm_wait"] = got
            return got

        def t_gm_cycles(core, start, cost):
            rec.last = {}
            l2 = core.launch.l2
            if "transfer" in l2.__dict__ and not hasattr(l2.transfer, "_audit"):
                inner = l2.transfer

                def t_transfer(*a, **k):
                    got = inner(*a, **k)
                    rec.last["split"] = got
                    return got
                t_transfer._audit = True
                l2.transfer = t_transfer
                core.gm_paths.clear()
            total = gm_cycles(core, start, cost)
            if cost[0] == _MTE2 and core.core_type == "AIC":
                rec.add(core, cost, total)
            return total

        core_mod.gm_cycles = t_gm_cycles
        bandwidth.WindowTurns.wait = t_wait
        bandwidth.LineFills.read = t_read
        bandwidth.HbmTimeline.reserve = t_reserve

    def uninstall(self):
        (core_mod.gm_cycles, bandwidth.WindowTurns.wait, bandwidth.LineFills.read,
         bandwidth.HbmTimeline.reserve) = self.saved

    def add(self, core, cost, total):
        _, nb, count, aligned, buf, off, blen, pitch, _mode = cost
        path = core.gm_paths[_MTE2]
        startup, rows = path[1], path[9]
        l2b, hbmb = self.last.get("split", (0, nb))
        hit = l2b / nb if nb else 0.0
        addr = buf.base_addr + off
        odd = timing.unaligned_rows(addr, count, pitch) if (addr % 32 or pitch % 32) else 0
        if rows[8] and hit < 1.0:       # the missing share in whole packages per 512 B window piece (timing.gm_cycles)
            row_cycles = (1.0 - hit) * timing.aic_miss_packages(addr, count, blen, pitch, rows[8]) * rows[2] * 512
            if hit:
                row_cycles += hit * timing.aic_byte_rows(core, rows, addr, count, blen, pitch, 1.0, aligned)
        else:
            row_cycles = timing.aic_byte_rows(core, rows, addr, count, blen, pitch, hit, aligned)
        if rows[7]:                     # the start paid by the share that misses L2 (aic_gm_start_on_misses_only)
            startup = startup * (1.0 - hit)
        fills = self.last.get("fills")
        if fills is None:
            turns = self.last.get("turns", 0.0)
            fills_in = fills_out = total - startup - turns
        else:                           # the turns' share: what they added after the fill wait (joined or summed)
            fills_in, fills_out = fills
            turns = total - startup - fills_out
        c = self.per_core[(core.block_idx, core.uid)]
        c["copies"] += 1
        c["rows"] += count
        c["bytes"] += nb
        c["l2_bytes"] += l2b
        c["odd_rows"] += odd
        c["start"] += startup
        c["row_cost"] += row_cycles
        c["share_wait"] += fills_in - row_cycles
        c["fill_wait"] += fills_out - fills_in
        c["turns"] += turns
        c["total"] += total
        self.rows[(blen, buf.name if hasattr(buf, "name") else "?")] += count


def _small_launches() -> dict:
    """name -> (the run, the measured figure in us, how it is taken: matmul_features.core_us's ``how``, what it is)."""
    import catlass_matmul as catlass
    import matmul_features as features
    return {
        "split-K:before": (lambda: features.run_split_k(1)[0], 19.60, "mean", "aic_time, 1 AIC (aic_mte2_time 13.72)"),
        "split-K:after": (lambda: features.run_split_k(2)[0], 13.70, "mean", "aic_time, mean of 2 AIC"),
        "Preload:before": (lambda: features.run_matmul_api(features.preload_tiling()), 30.88, "mean",
                           "aic_time, mean of 24 AIC"),
        "Preload:after": (lambda: features.run_matmul_api(features.preload_tiling(),
                                                          mm_cfg=features.GetMDLConfig(doMTE2Preload=2)),
                          28.50, "mean", "aic_time, mean of 24 AIC"),
        "ND2NZ:before": (next(c for c in features.CASES if c.name.startswith("ND2NZ")).before, 149.04, "max",
                         "aic_time, max over 24 AIC (AIC_MTE2 mean 130.77)"),
        "ND2NZ:after": (next(c for c in features.CASES if c.name.startswith("ND2NZ")).after, 90.95, "max_aic",
                        "aic_time, max over 24 AIC (AIC_MTE2 mean 22.85, AIV_MTE2 mean 10.31)"),
        "CATLASS:128x256": (lambda: catlass.run_case(128, 256)[0], 72.5, "task", "task time, 24 tiles on 20 AIC"),
        "CATLASS:256x128": (lambda: catlass.run_case(256, 128)[0], 48.6, "task", "task time, 20 tiles on 20 AIC"),
    }


def pipe_table(res) -> None:
    """Per core type and pipe, the mean over that type's cores: instructions, bytes, the model's busy time (the sum
    of the instructions' spans: a pipe runs one at a time), and the pipe's first start / last end after the core's
    start."""
    us = res.chip.cycles_to_us
    core_start = {(b, k): s for b, k, s, _e, _busy in res.core_times}
    n_cores = collections.Counter(k for _b, k, *_ in res.core_times)
    acc = collections.defaultdict(collections.Counter)
    spans = collections.defaultdict(dict)        # (type, pipe) -> core -> [first start, last end]
    for r in res.trace.records:
        key = (r.core_type, r.pipe)
        acc[key]["instr"] += 1
        acc[key]["bytes"] += r.nbytes or 0
        acc[key]["busy"] += r.end - r.start
        span = spans[key].setdefault(r.core, [r.start, r.end])
        span[0], span[1] = min(span[0], r.start), max(span[1], r.end)
    print(f"  {'type':4s} {'pipe':6s} {'instr':>8s} {'bytes':>12s} {'busy us':>9s} {'first us':>9s} {'last us':>9s}"
          "   (mean per core)")
    for (kind, pipe), c in sorted(acc.items()):
        k = n_cores[kind] or 1
        rel = [(lo - core_start.get((core, kind), 0.0), hi - core_start.get((core, kind), 0.0))
               for core, (lo, hi) in spans[(kind, pipe)].items()]
        first, last = (sum(x[i] for x in rel) / len(rel) for i in (0, 1))
        print(f"  {kind:4s} {pipe:6s} {c['instr'] / k:8.1f} {c['bytes'] / k:12,.0f} {us(c['busy'] / k):9.2f} "
              f"{us(first):9.2f} {us(last):9.2f}")


def run_small(name: str, what_if: dict) -> None:
    """The audit of one small launch (``_small_launches``): the model's per-pipe picture and the MTE2 breakdown."""
    import matmul_features as features
    if what_if:
        import validate_timing
        validate_timing.use_chip_fields(what_if)
    launch_fn, measured, how, figure = _small_launches()[name]
    rec = Recorder()
    rec.install()
    try:
        res = launch_fn()
    finally:
        rec.uninstall()
    us = res.chip.cycles_to_us
    sim = features.core_us(res, how)
    print(f"== {name}: {res.kernel_name}, {res.block_dim} blocks; {figure}: measured {measured:.2f} us, simulated "
          f"{sim:.2f} us ({sim / measured - 1:+.1%}); launch {res.us:.2f} us")
    times = sorted((e - s, b, k) for b, k, s, e, _ in res.core_times)
    print(f"  core times (us): min {us(times[0][0]):.2f} max {us(times[-1][0]):.2f} over {len(times)} cores")
    pipe_table(res)
    aic = list(rec.per_core.values())
    if not aic:
        return
    tot = collections.Counter()
    for c in aic:
        tot.update(c)
    per = {k: v / len(aic) for k, v in tot.items()}
    print(f"  GM -> L1 per AIC: {per['copies']:.1f} copies, {per['rows']:.0f} rows ({per['odd_rows']:.0f} off a 32 B "
          f"block), {per['bytes']:,.0f} B, L2 hit share {tot['l2_bytes'] / max(tot['bytes'], 1):.3f}; rows by length: "
          + ", ".join(f"{b} B x {r / len(aic):.0f}" for (b, _n), r in sorted(rec.rows.items())))
    mte2 = per["total"] or 1.0
    for part in ("start", "row_cost", "share_wait", "fill_wait", "turns"):
        print(f"    {part:10s} {per[part]:>10,.0f} cycles {us(per[part]):>8,.2f} us {per[part] / mte2:6.1%}")


def run(name: str, what_if: dict) -> None:
    cfg = next(c for c in case.CONFIGS if c.name.startswith(name + " "))
    if what_if:
        base = case.launch_chip
        case.launch_chip = lambda cores: dataclasses.replace(base(cores), **what_if)
    rec = Recorder()
    rec.install()
    try:
        res, t, _ = case.simulate(cfg)
    finally:
        rec.uninstall()
    chip = res.chip
    us = chip.cycles_to_us
    print(f"== {cfg.name}: {t.usedCoreNum} blocks on {cfg.cores} AIC, singleCore [{t.singleCoreM}, {t.singleCoreN}, "
          f"{t.singleCoreK}], base [{t.baseM}, {t.baseN}, {t.baseK}], stepKa/Kb {t.stepKa}/{t.stepKb}, "
          f"depthA1/B1 {t.depthA1}/{t.depthB1}, stepM/N {t.stepM}/{t.stepN}, iterateOrder {t.iterateOrder}, "
          f"{cfg.template}")
    tot = collections.Counter()
    for c in rec.per_core.values():
        tot.update(c)
    per = {k: v / cfg.cores for k, v in tot.items()}
    doc_bytes = 2 * (cfg.n / cfg.base[1] * cfg.m * cfg.k + cfg.m / cfg.base[0] * cfg.k * cfg.n) / cfg.cores
    print(f"per AIC: {per['bytes'] / 1e6:.2f} MB GM->L1 (the document's totalCnt: {doc_bytes / 1e6:.2f} MB, "
          f"x{per['bytes'] / doc_bytes:.3f}); {per['copies']:.0f} copies, {per['rows']:.0f} rows "
          f"({per['odd_rows']:.0f} off a 32 B block), L2 hit share {tot['l2_bytes'] / tot['bytes']:.3f}")
    print("rows by length and operand: " + ", ".join(f"{b} B {n}: {r / cfg.cores:.0f}"
                                                   for (b, n), r in sorted(rec.rows.items())))
    mte2 = per["total"]
    print(f"MTE2 per AIC {mte2:,.0f} cycles = {us(mte2):,.1f} us (measured: {cfg.measured.get('aic_mte2_time', '-')}); "
          f"{per['bytes'] / mte2:.1f} B/cycle")
    for part in ("start", "row_cost", "share_wait", "fill_wait", "turns"):
        print(f"  {part:10s} {per[part]:>14,.0f} cycles {us(per[part]):>9,.1f} us {per[part] / mte2:6.1%}")
    totals = [c["total"] for c in rec.per_core.values()]
    print(f"  blocks: MTE2 min {us(min(totals)):,.1f} max {us(max(totals)):,.1f} us; launch {res.us:,.1f} us")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*")
    p.add_argument("--list", action="store_true", help="the launches this audit can run")
    p.add_argument("--small", action="store_true", help="every small launch (split-K, Preload, ND2NZ, CATLASS)")
    p.add_argument("--what-if", action="append", default=[])
    p.add_argument("--paired-waves", action="store_true",
                   help="T1-T4: each AIC serves its two AIVs' tiles 2i, 2i+1 (matmul_tiling_case.mix_pairs)")
    a = p.parse_args(argv)
    case.PAIRED_WAVES = a.paired_waves
    what_if = {}
    for item in a.what_if:
        key, value = item.split("=", 1)
        what_if[key] = eval(value, {})  # noqa: S307 (a developer's command line)
    if a.list:
        print("T1..T4, M1, M2 (matmul_tiling_case.py); " + ", ".join(_small_launches()))
        return 0
    for name in a.names + (list(_small_launches()) if a.small else []):
        if ":" in name:
            run_small(name, what_if)
        else:
            run(name, what_if)
    return 0


if __name__ == "__main__":
    sys.exit(main())
