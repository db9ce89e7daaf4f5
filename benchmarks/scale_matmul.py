"""Benchmark case (f) (issue 14, item 5): an 8192^3 fp16 matmul on 24 AIC, base (128, 256, 64), full size.

The kernel is CATLASS's plan of ``catlass_matmul.py`` (L1 tile <128, 256, 256>, L0 tile <128, 256, 64>, L1 and
L0 double buffered), with 24 blocks that each loop over the C tiles block, block + 24, ... Measured in one run,
side by side:

- floor: plain numpy doing the same tiles in the same loop order (each L1 tile of A and B widened to fp32
  once (by table look-up), one ``np.dot`` per L0 tile accumulated in fp32, one fp16 rounding per C tile): the cost of the
  numerics alone;
- the simulator with numerics on (``launch``), its wall time and the launch's peak memory (resident set
  sampled every 20 ms, minus the resident set before the launch: the inputs and outputs, 384 MB at 8192^3,
  are the caller's and not counted; the output is filled before the launch, since ``np.zeros`` pages become
  resident only when the kernel writes them and would count 128 MB of the caller's C as the launch's), the
  trace records, and a check of C against the floor's (bit-identical: the same fp32 sums in the same order);
- the simulator timing-only (``launch(..., numerics=False)``): same cycles and trace, and its speed-up.

    python benchmarks/scale_matmul.py                    # the full case (f): minutes (floor, then two launches)
    python benchmarks/scale_matmul.py --size 2048        # a quick look
    python benchmarks/scale_matmul.py --hash > a.json    # trace hashes of this kernel at small sizes (diff two trees)
    python benchmarks/scale_matmul.py --size 2048 --against /old/checkout [--l2-mb 4] [--rounds 3]
                                                         # CPU time of launches, this tree and another alternately

Exit status 0 when the targets hold: simulator <= 2x the floor, launch memory <= 400 MB, timing-only >= 5x
faster with identical cycles and trace length.
"""
from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import sys
import threading
import time

# one BLAS thread for both sides: on this shared 2-core machine a second OpenBLAS thread spins against the
# other engineers' work and makes a 128x64x256 sgemm 100 times slower (7 ms instead of 64 us)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from ascend_sim import launch  # noqa: E402
from ascend_sim.hw.chips import Ascend910B  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from catlass_matmul import Tiling, catlass_matmul  # noqa: E402

BASE = (128, 256, 64)       # L0 tile m0, n0, k0 (= L1's m1, n1; k1 = 256)


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class PeakRss:
    """The highest resident set seen every ``period`` seconds while the block runs."""

    def __init__(self, period: float = 0.02):
        self.period, self.peak, self._stop = period, 0.0, threading.Event()

    def __enter__(self):
        self.peak = rss_mb()
        self._t = threading.Thread(target=self._watch, daemon=True)
        self._t.start()
        return self

    def _watch(self):
        while not self._stop.wait(self.period):
            self.peak = max(self.peak, rss_mb())

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, rss_mb())


def inputs(t: Tiling, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random fp16 A (M x K, row-major) and B^T (N x K, CATLASS's ColumnMajor B), made in slices."""
    rng = np.random.default_rng(seed)

    def make(n: int) -> np.ndarray:
        out = np.empty(n, np.float16)
        step = 1 << 22
        for i in range(0, n, step):
            out[i:i + step] = rng.random(min(step, n - i), np.float32) * 2 - 1
        return out
    return make(t.m * t.k), make(t.k * t.n)


def floor_matmul(a: np.ndarray, bt: np.ndarray, c: np.ndarray, t: Tiling, blocks: int) -> None:
    """The numerics alone: the kernel's tiles, in its loop order, in plain numpy fp32."""
    m1, n1, k1, k0 = t.m1, t.n1, t.k1, t.k0
    a2, b2 = a.reshape(t.m, t.k), bt.reshape(t.n, t.k)
    c2 = c.reshape(t.m, t.n)
    tiles_n, tiles = t.n // n1, (t.m // m1) * (t.n // n1)
    acc, prod = np.empty((m1, n1), np.float32), np.empty((m1, n1), np.float32)
    # fp16 -> fp32 by a 65,536-entry table: the fastest plain-numpy widening here (astype converts one element
    # at a time, 2.5x slower); the same bits as astype
    widen = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
    a32, b32 = np.empty((m1, k1), np.float32), np.empty((n1, k1), np.float32)
    for blk in range(blocks):
        for tile in range(blk, tiles, blocks):
            mi, ni = divmod(tile, tiles_n)
            for s in range(t.k // k1):
                # widen the L1 tiles once: A's m1 x k1 rows and B^T's n1 x k1 rows
                widen.take(a2[mi * m1:(mi + 1) * m1, s * k1:(s + 1) * k1].view(np.uint16), out=a32, mode="wrap")
                widen.take(b2[ni * n1:(ni + 1) * n1, s * k1:(s + 1) * k1].view(np.uint16), out=b32, mode="wrap")
                for j in range(k1 // k0):
                    lhs, rhs = a32[:, j * k0:(j + 1) * k0], b32[:, j * k0:(j + 1) * k0].T
                    if s == 0 and j == 0:
                        np.dot(lhs, rhs, out=acc)
                    else:
                        np.add(acc, np.dot(lhs, rhs, out=prod), out=acc)
            c2[mi * m1:(mi + 1) * m1, ni * n1:(ni + 1) * n1] = acc


CHILD = r"""
import dataclasses, json, os, sys, time
sys.path.insert(0, "benchmarks")
import numpy as np
from ascend_sim import launch
from ascend_sim.hw.chips import Ascend910B
from catlass_matmul import Tiling, catlass_matmul
size, l2_mb, reps = map(int, sys.argv[1:4])
t = Tiling(128, 256, 256, 64, size, size, size, 24)
chip = dataclasses.replace(Ascend910B(), aic_count=24, l2_bytes=l2_mb << 20)
rng = np.random.default_rng(0)
a, b = (rng.random(size * size, np.float32).astype(np.float16) for _ in range(2))
out = {}
for numerics in (False, True):
    ts = []
    for _ in range(reps):
        c = np.zeros(size * size, np.float16)
        c0 = time.process_time()
        launch(catlass_matmul, 24, a, b, c, t, chip=chip, gm_names=["a", "b", "c"], numerics=numerics)
        ts.append(time.process_time() - c0)
    out["numerics on" if numerics else "timing-only"] = min(ts)
print(json.dumps(out))
"""


def against(base: str, size: int, l2_mb: int, rounds: int) -> None:
    """Print, round by round, the least CPU time of 2 launches per mode in ``base``'s tree and in this one."""
    import json
    import subprocess
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    trees = {"base": os.path.abspath(base), "this": os.path.abspath(here)}
    for r in range(rounds):
        for name in (list(trees) if r % 2 == 0 else list(reversed(trees))):
            env = dict(os.environ, PYTHONPATH=trees[name], PYTHONDONTWRITEBYTECODE="1")
            done = subprocess.run([sys.executable, "-c", CHILD, str(size), str(l2_mb), "2"], cwd=trees[name],
                                  env=env, capture_output=True, text=True, check=True)
            print(f"round {r} {name}: " + ", ".join(f"{k} {v:.3f} s" for k, v in json.loads(done.stdout).items()))


def hashes(chunk_mask: int = 255) -> dict[str, str]:
    """scripts/trace_hash.py's digest (every record field but the kernel line, outputs, cycles, buffers) of this
    kernel at 512^3 (4 blocks) and 1024^3 (24 blocks; 7 blocks on a 1 MB L2, whose LRU path then evicts), numerics
    on and off, with the records packed every ``chunk_mask + 1``; and the L2 counters of each launch."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
    import trace_hash
    from ascend_sim.engine import core as core_mod
    trace_hash.SITES, core_mod._CHUNK_MASK = "none", chunk_mask
    out = {}
    for size, blocks, l2 in ((512, 4, None), (1024, 24, None), (1024, 7, 1 << 20)):
        t = Tiling(128, 256, 256, 64, size, size, size, blocks)
        chip = dataclasses.replace(Ascend910B(), aic_count=24, **({"l2_bytes": l2} if l2 else {}))
        a, b = inputs(t)
        for numerics in (True, False):
            c = np.zeros(size * size, np.float16)
            r = launch(catlass_matmul, blocks, a, b, c, t, chip=chip, gm_names=["a", "b", "c"], numerics=numerics)
            out[f"{size}^3 {blocks} blocks, L2 {l2 or 'default'}, numerics {numerics}"] = (
                f"{trace_hash.digest([r], [c])} {len(r.trace)} records {r.cycles} cycles {r.profile().l2}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--blocks", type=int, default=24)
    ap.add_argument("--hash", action="store_true", help="print the trace hashes of small launches and exit")
    ap.add_argument("--against", help="another checkout: CPU time of launches there and here, alternately, and exit")
    ap.add_argument("--l2-mb", type=int, default=192, help="L2 size for --against (4: evicting, as at 8192^3)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.against:
        against(args.against, args.size, args.l2_mb, args.rounds)
        return 0
    if args.hash:
        import json
        print(json.dumps(hashes(), indent=1, default=str))
        return 0
    size, blocks = args.size, args.blocks
    m0, n0, k0 = BASE
    t = Tiling(m0, n0, 256, k0, size, size, size, blocks)
    chip = dataclasses.replace(Ascend910B(), aic_count=24)
    at, bt = inputs(t)
    c_floor = np.zeros(size * size, np.float16)
    c_sim = np.full(size * size, 0, np.float16)     # written now: resident before the launch, like the inputs
    c_off = np.full(size * size, 7, np.float16)
    print(f"case (f): {size}^3 fp16 matmul, base {BASE}, {blocks} blocks on {chip.aic_count} AIC, "
          f"{(size // m0) * (size // n0) * (size // k0):,} Mmads")

    t0, c0 = time.perf_counter(), time.process_time()
    floor_matmul(at, bt, c_floor, t, blocks)
    floor_s, floor_cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"floor (numpy fp32, same tiles and order): {floor_s:.2f} s (CPU {floor_cpu:.2f} s)")

    gc.collect()
    with PeakRss() as mem:
        base = mem.peak
        t0, c0 = time.perf_counter(), time.process_time()
        res = launch(catlass_matmul, blocks, at, bt, c_sim, t, chip=chip, gm_names=["a", "b", "c"])
        sim_s, sim_cpu = time.perf_counter() - t0, time.process_time() - c0
        n_rec = len(res.trace)
    launch_mb = mem.peak - base
    same = np.array_equal(c_sim, c_floor)
    print(f"simulator, numerics on: {sim_s:.2f} s = {sim_s / floor_s:.2f}x the floor (CPU {sim_cpu:.2f} s = "
          f"{sim_cpu / floor_cpu:.2f}x); launch peak memory "
          f"{launch_mb:.0f} MB above the {base:.0f} MB before it; {n_rec:,} records; {res.cycles:,.0f} cycles "
          f"({res.us:,.0f} us); C equal to the floor's: {same}")
    cycles = res.cycles
    del res
    gc.collect()

    with PeakRss() as mem2:
        base2 = mem2.peak
        t0, c0 = time.perf_counter(), time.process_time()
        off = launch(catlass_matmul, blocks, at, bt, c_off, t, chip=chip, gm_names=["a", "b", "c"], numerics=False)
        off_s, off_cpu = time.perf_counter() - t0, time.process_time() - c0
    untouched = bool((c_off == 7).all())
    print(f"simulator, numerics=False: {off_s:.2f} s ({sim_s / off_s:.1f}x faster than numerics on; CPU "
          f"{off_cpu:.2f} s, {sim_cpu / off_cpu:.1f}x); "
          f"peak {mem2.peak - base2:.0f} MB; cycles identical: {off.cycles == cycles}; records identical in "
          f"number: {len(off.trace) == n_rec}; output untouched: {untouched}")
    ok = (sim_s <= 2 * floor_s and launch_mb <= 400 and sim_s / off_s >= 5 and off.cycles == cycles
          and same and untouched)
    print("targets (<= 2x floor, <= 400 MB, >= 5x timing-only):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
