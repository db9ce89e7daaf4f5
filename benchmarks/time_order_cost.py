"""What running the blocks in time order costs the simulator: case (f) three ways, in this tree.

    python benchmarks/time_order_cost.py [--size 4096] [--rounds 3]

benchmarks/scale_matmul.py's case (f) (CATLASS's kernel, SIZE^3 fp16 on 24 AIC, timing only) is launched
(1) as the simulator runs it: the 24 blocks in time order (engine/scheduler.py, TIME_SLICE cycles apart at
most), each with its own local memories and plans; (2) one block after another (TIME_SLICE set to
infinity for the run), handing one set of local memories and its plans from block to block; (3) one
after another, but each block with a fresh set (no hand-over), as in (1); (4) in time order, but every
block on one shared set of local memories, plans and shadow state (each block's buffers at the addresses
its own set would give them; the sanitizer's reports silenced, since the blocks' accesses to the one
shadow look like races to it). Prints the least CPU time of ``--rounds`` launches of each, and, from one
more launch of (1), how often consecutive instructions come from different blocks (the block switches).
(2) and (3) change the launch's cycles (a diagnostic, not the model): (1) - (3) is the cost of
interleaving the blocks, (3) - (2) that of 24 sets of plans. (4) keeps (1)'s cycles (timing only reads
no local memory): (1) - (4) bounds what sharing the per-block plan and shadow state could gain.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from catlass_matmul import Tiling, catlass_matmul     # noqa: E402
from scale_matmul import inputs                       # noqa: E402

from ascend_sim import launch                         # noqa: E402
from ascend_sim.engine import core as core_mod, scheduler   # noqa: E402
from ascend_sim.hw.chips import Ascend910B            # noqa: E402


class _NoHandOver(dict):
    """A ``Launch.tier_pool`` that never hands a block's local memories to the next block."""

    def setdefault(self, key, default=None):
        return []


class _OneSet(list):
    """A ``Launch.tier_pool`` entry that gives every block the same (tiers, plans) and keeps no other."""

    def pop(self, *_):
        return self[0]

    def append(self, _):
        pass


def _one_set(launch_init, start, core_methods: dict):
    """Patches for mode (4): (Launch.__init__, Launch._start, Core's sanitizer reports) on one shared set."""
    def init(self, *args, **kw):
        launch_init(self, *args, **kw)
        self.one_set = (scheduler.make_tiers(self.chip, "AIC"), {})
        self.plan_sets.append(self.one_set[1])
        self.tier_pool = {"AIC": _OneSet([self.one_set])}

    def start_block(self, b):
        for tier in self.one_set[0].values():    # each block allocates its buffers from the start, as on its own set
            tier.next_free, tier.buffers = 0, []
        return start(self, b)
    return init, start_block, {name: (lambda self, *a, **kw: None) for name in core_methods}


def run(size: int, mode: str) -> tuple[float, float]:
    """CPU seconds and cycles of one timing-only launch of case (f) at ``size``^3 run as ``mode``."""
    t = Tiling(128, 256, 256, 64, size, size, size, 24)
    chip = dataclasses.replace(Ascend910B(), aic_count=24)
    a, b = inputs(t)
    c = np.zeros(size * size, np.float16)
    slice_, init, start = scheduler.TIME_SLICE, scheduler.Launch.__init__, scheduler.Launch._start
    reports = {name: getattr(core_mod.Core, name) for name in ("_read_fault", "_race_raw", "_war", "_war_part")}
    if not mode.startswith("time order"):
        scheduler.TIME_SLICE = math.inf
    if mode == "one after another, fresh sets":
        def fresh_init(self, *args, **kw):
            init(self, *args, **kw)
            self.tier_pool = _NoHandOver()
        scheduler.Launch.__init__ = fresh_init
    if mode == "time order, one shared set":
        scheduler.Launch.__init__, scheduler.Launch._start, silenced = _one_set(init, start, reports)
        for name, fn in silenced.items():
            setattr(core_mod.Core, name, fn)
    try:
        c0 = time.process_time()
        r = launch(catlass_matmul, 24, a, b, c, t, chip=chip, gm_names=["a", "b", "c"], numerics=False)
        return time.process_time() - c0, r.cycles
    finally:
        scheduler.TIME_SLICE, scheduler.Launch.__init__, scheduler.Launch._start = slice_, init, start
        for name, fn in reports.items():
            setattr(core_mod.Core, name, fn)


def switches(size: int) -> tuple[int, int]:
    """(instructions, times the next instruction came from another block) in one time-ordered launch."""
    issue, seen = core_mod.Core.issue_n, {"last": None, "switches": 0, "calls": 0}

    def counting(self, *args):
        seen["calls"] += 1
        if self is not seen["last"]:
            seen["switches"] += 1
            seen["last"] = self
        return issue(self, *args)
    core_mod.Core.issue_n = counting
    try:
        run(size, "time order")
    finally:
        core_mod.Core.issue_n = issue
    return seen["calls"], seen["switches"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    modes = ("time order", "one after another", "one after another, fresh sets", "time order, one shared set")
    best = {m: (math.inf, 0.0) for m in modes}
    for _ in range(args.rounds):                 # rounds alternate the modes: all see the machine's drifts
        for m in modes:
            cpu, cycles = run(args.size, m)
            best[m] = (min(best[m][0], cpu), cycles)
    for m in modes:
        print(f"{m:<32} {best[m][0]:7.3f} s CPU   {best[m][1]:12,.0f} cycles")
    calls, n = switches(args.size)
    print(f"block switches: {n:,} in {calls:,} instructions (one per {calls / max(n, 1):.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
