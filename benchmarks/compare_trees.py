"""Simulator speed of two source trees side by side, in one run: a refactor's before/after check.

    python benchmarks/compare_trees.py --base /path/to/old/checkout [--new .] [--rounds 6]

Each round runs one subprocess per tree (alternating which goes first), and each subprocess times the
launches of benchmarks/bench_simulator.py's cases (b) the add_custom kernel (fp32, 8 blocks, 4096-element
tiles, double buffered, trace on) and (d) the 256^3 fp16 cube matmul (64-wide tiles), plus LeNet-5 on 64
images: a warm-up, then five timed runs each. Rounds alternate so both trees see the machine's drifts.
Prints the median and minimum of each case per tree and the ratio new/base, in wall time and, on the
rows marked (CPU), in the process's CPU time (less disturbed when other jobs share the machine).

``--case-f SIZE`` adds benchmarks/scale_matmul.py's case (f) (CATLASS's kernel, SIZE^3 fp16 on 24 AIC; 8192
is the full case) to each round: one launch with numerics on, then one timing-only, in one more
subprocess per tree, each timed once (CPU time, no warm-up: a launch of seconds), and each launch's peak
memory (scale_matmul.py's: the resident set sampled every 20 ms, above the one before the launch, with A,
B and C resident before it).

    python benchmarks/compare_trees.py --base /path/to/old/checkout --rounds 3 --case-f 8192
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r'''
import json, sys, time
import numpy as np
try:
    from ascend_sim.kernels.add_custom import AddCustomTilingData, add_custom
    from ascend_sim.kernels.matmul import MatmulTiling, matmul_custom
    from ascend_sim.models.lenet import LeNetRuntime
except ImportError:                      # trees from before the layered layout
    from ascend_sim.examples.add_custom import AddCustomTilingData, add_custom
    from ascend_sim.examples.matmul import MatmulTiling, matmul_custom
    from ascend_sim.lenet import LeNetRuntime
from ascend_sim import launch

N, TILE = 1 << 20, 4096
rng = np.random.default_rng(0)
x, y = rng.standard_normal(N, np.float32), rng.standard_normal(N, np.float32)
z = np.zeros_like(x)
a = rng.uniform(-1, 1, (256, 256)).astype(np.float16)
b = rng.uniform(-1, 1, (256, 256)).astype(np.float16)
c = np.zeros((256, 256), np.float16)
images = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
rt = LeNetRuntime(dtype="float16")
cases = {
    "add": lambda: launch(add_custom, 8, x, y, z, AddCustomTilingData(N, N // 8 // TILE // 2, 2, np.dtype(np.float32))),
    "matmul": lambda: launch(matmul_custom, 16, a, b, c, MatmulTiling(256, 256, 256, 64, 64, 64)),
    "lenet64": lambda: rt.forward(images),
}
out = {}
for name, fn in cases.items():
    fn()
    ts, cs = [], []
    for _ in range(5):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        ts.append(time.perf_counter() - t0)
        cs.append(time.process_time() - c0)
    out[name] = ts
    out[name + " (CPU)"] = cs
print(json.dumps(out))
'''


CASE_F = r'''
import dataclasses, json, sys, time
sys.path.insert(0, "benchmarks")
import numpy as np
from ascend_sim import launch
from ascend_sim.hw.chips import Ascend910B
from catlass_matmul import Tiling, catlass_matmul
from scale_matmul import PeakRss, inputs
size = int(sys.argv[1])
t = Tiling(128, 256, 256, 64, size, size, size, 24)
chip = dataclasses.replace(Ascend910B(), aic_count=24)
a, b = inputs(t)                               # made in slices: no transient peak before the launch
c = np.full(size * size, 0, np.float16)        # written now: resident before the launch, like the inputs
out = {}
for numerics in (True, False):
    with PeakRss() as mem:                     # the resident set sampled every 20 ms, as scale_matmul.py does
        before = mem.peak
        c0 = time.process_time()
        launch(catlass_matmul, 24, a, b, c, t, chip=chip, gm_names=["a", "b", "c"], numerics=numerics)
        cpu = time.process_time() - c0
    name = "f numerics" if numerics else "f timing"
    out[name + " (CPU)"] = [cpu]
    out[name + " peak MB"] = [mem.peak - before]
print(json.dumps(out))
'''


def run_tree(tree: Path, child: str = CHILD, *args: str) -> dict[str, list[float]]:
    env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", child, *args], cwd=tree, env=env, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, type=Path, help="checkout of the code before the change")
    ap.add_argument("--new", default=Path("."), type=Path, help="checkout of the code after it (default: here)")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--case-f", type=int, metavar="SIZE", help="also case (f) at SIZE^3 (8192: the full case)")
    args = ap.parse_args()
    trees = {"base": args.base.resolve(), "new": args.new.resolve()}
    times: dict[str, dict[str, list[float]]] = {k: {} for k in trees}
    for r in range(args.rounds):
        order = list(trees) if r % 2 == 0 else list(reversed(trees))
        for k in order:
            for case, ts in run_tree(trees[k]).items():
                times[k].setdefault(case, []).extend(ts)
            if args.case_f:
                for case, ts in run_tree(trees[k], CASE_F, str(args.case_f)).items():
                    times[k].setdefault(case, []).extend(ts)
                    print(f"round {r} {k}: {case} {ts[0]:.3f}", file=sys.stderr, flush=True)
    print(f"{'case':<10} {'base median':>12} {'new median':>12} {'ratio':>7} {'base min':>10} {'new min':>10} {'ratio':>7}")
    for case in times["base"]:
        bm, nm = statistics.median(times["base"][case]), statistics.median(times["new"][case])
        bn, nn = min(times["base"][case]), min(times["new"][case])
        unit, scale = ("MB", 1) if case.endswith("MB") else ("ms", 1e3)
        print(f"{case:<10} {bm * scale:>10.2f}{unit} {nm * scale:>10.2f}{unit} {nm / bm:>7.3f} "
              f"{bn * scale:>8.2f}{unit} {nn * scale:>8.2f}{unit} {nn / bn:>7.3f}")


if __name__ == "__main__":
    main()
