"""Audit: what a cube core's MTE2 moves and what the model charges for it (issue 30, large cube launches).

Runs one configuration of ``matmul_tiling_case.py`` (timing only) with the GM -> L1 pricing instrumented, and
prints, per AIC: the bytes copied GM -> L1, the Nd2Nz copies and their rows (by row length), the L2 hit share,
and the MTE2 time split into the copy starts, the rows at the path rates (floor included), the wait for the L2 /
HBM share, the wait for lines another core is filling, and the window turns (same-address rule). Beside it: the
bytes the official Matmul moves for the same tiling (the Tiling-strategy document's formula
totalCnt = N / baseN * M * K + M / baseM * K * N, counted over this run's core split) and the cycles the path needs
at its published rates.

    python benchmarks/mte2_audit.py T3 [T4 ...] [--what-if FIELD=VALUE ...]
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

        def t_read(self, key, reader, start, moving, missed):
            got = read(self, key, reader, start, moving, missed)
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
        turns = self.last.get("turns", 0.0)
        moving = total - startup - turns
        fills_in, fills_out = self.last.get("fills", (moving, moving))
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
    p.add_argument("names", nargs="+")
    p.add_argument("--what-if", action="append", default=[])
    a = p.parse_args(argv)
    what_if = {}
    for item in a.what_if:
        key, value = item.split("=", 1)
        what_if[key] = eval(value, {})  # noqa: S307 (a developer's command line)
    for name in a.names:
        run(name, what_if)
    return 0


if __name__ == "__main__":
    sys.exit(main())
