"""What the C++ front end costs: parse + first launch of add_custom in C++, and a later launch against Python.

Issue 27 asks a C++ kernel's launch after the first to cost at most 1.5x the same kernel written in Python. The
C++ kernel is tests/ascendc/kernels/add_tque.cpp, the twin of ascend_sim/kernels/add_custom.py (same calls in the
same order, so the same records and cycles). Printed side by side, CPU time, alternating rounds:

- translate: libclang parse + lowering + compile (the in-memory cache cleared first), and the first launch;
- a cached load() (the translation cache hit);
- one launch of each kernel (median of the rounds), and their ratio.

    python benchmarks/bench_ascendc.py [--rounds 15] [--blocks 8]
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from ascend_sim import launch
from ascend_sim.ascendc import load, module
from ascend_sim.kernels.add_custom import AddCustomTilingData, add_custom

KERNEL = Path(__file__).resolve().parents[1] / "tests" / "ascendc" / "kernels" / "add_tque.cpp"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--blocks", type=int, default=8)
    args = ap.parse_args()
    n = args.blocks * 2048
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-1, 1, (2, n)).astype(np.float16)

    module._CACHE.clear()
    w0, t0 = time.perf_counter(), time.process_time()
    mod = load(KERNEL)
    w1, t1 = time.perf_counter(), time.process_time()
    z = np.zeros_like(x)
    launch(mod.add_tque, args.blocks, x, y, z, None, mod.structs.AddTqueTilingData(totalLength=n, tileNum=8))
    w2, t2 = time.perf_counter(), time.process_time()
    assert np.array_equal(z, x + y)
    t3 = time.process_time()
    load(KERNEL)
    t4 = time.process_time()
    print(f"add_tque.cpp: translate (parse + lower + compile) {1e3 * (t1 - t0):7.1f} ms CPU "
          f"({1e3 * (w1 - w0):.1f} ms wall), first launch {1e3 * (t2 - t1):6.1f} ms CPU "
          f"({1e3 * (w2 - w1):.1f} ms wall), cached load() {1e3 * (t4 - t3):5.2f} ms")

    cpp_tiling = mod.structs.AddTqueTilingData(totalLength=n, tileNum=8)
    py_tiling = AddCustomTilingData(totalLength=n, tileNum=8)
    launch(add_custom, args.blocks, x, y, z, py_tiling)             # warm both paths
    cpp, py = [], []
    for _ in range(args.rounds):
        t = time.process_time()
        launch(mod.add_tque, args.blocks, x, y, z, None, cpp_tiling)
        cpp.append(time.process_time() - t)
        t = time.process_time()
        launch(add_custom, args.blocks, x, y, z, py_tiling)
        py.append(time.process_time() - t)
    c, p = statistics.median(cpp), statistics.median(py)
    print(f"one launch of {args.blocks} blocks (median of {args.rounds}): C++ {1e3 * c:6.2f} ms, "
          f"Python {1e3 * p:6.2f} ms, C++/Python {c / p:4.2f}x (issue 27: at most 1.50x)")


if __name__ == "__main__":
    main()
