"""Simulator-only timings of the two bench_simulator cases, to compare the checks' cost between two trees.

    PYTHONPATH=<tree> python benchmarks/bench_sanitizer_overhead.py [--runs 40]

Prints the minimum and the lower-quartile CPU time (time.process_time) of one launch of (b) the
add_custom bench add (2^20 fp32, 8 blocks, double buffered) and (d) the 256^3 fp16 cube matmul,
for the ascend_sim found on the path. Run it alternately on the two trees: the machine drifts.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_simulator as bench  # noqa: E402


def cpu_times(fn, runs: int) -> list[float]:
    fn()
    out = []
    for _ in range(runs):
        t = time.process_time()
        fn()
        out.append(time.process_time() - t)
    return sorted(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    runs = ap.parse_args().runs
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(bench.N, np.float32), rng.standard_normal(bench.N, np.float32)
    a, b = (rng.standard_normal((256, 256)).astype(np.float16) for _ in range(2))
    add, add_check = bench.sim_add(x, y)
    mm, mm_check = bench.sim_matmul(a, b)
    import ascend_sim
    print(f"ascend_sim from {os.path.dirname(ascend_sim.__file__)}")
    for name, fn, check in (("(b) add 2^20 fp32", add, add_check), ("(d) matmul 256^3 fp16", mm, mm_check)):
        ts = cpu_times(fn, runs)
        check()
        print(f"  {name}: min {ts[0] * 1e3:.2f} ms, lower quartile {ts[len(ts) // 4] * 1e3:.2f} ms ({runs} runs)")


if __name__ == "__main__":
    main()
