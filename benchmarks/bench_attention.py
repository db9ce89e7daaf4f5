"""Module 4 (issue 17): naive attention vs the FlashAttention-style MIX kernel, S = 128 .. 8,192, on the 910B.

One head (B = N = 1), D = 64, BNSD, no mask, half inputs from a fixed seed. Per S and version: simulated
time, bytes moved to or from GM addresses (the sum over copy instructions; workspaces included), the bytes
the L2 model sent to or took from HBM, and the GM the launch allocates beyond Q, K, V and O (naive: the score
and probability matrices; flash: the per-group workspaces), the flash kernel's query block (br rows) and core
groups. Also the largest error against numpy. ``--timing-only-from S`` runs the sizes from S on with
``numerics=False`` (same cycles and trace, no values: error column "-"); the cycles are the same by construction
(tests/sim/test_attention.py::test_timing_only_launch_gives_the_same_cycles).

    python benchmarks/bench_attention.py [--min-s 128] [--max-s 8192] [--timing-only-from S]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from ascend_sim.kernels.m4.attention import attention_flash, attention_ref, attention_tiling
from ascend_sim.kernels.m4.attention_naive import attention_naive


def gm_bytes(results) -> int:
    total = 0
    for r in results:
        t = r.trace.table()
        total += int(t.nbytes[(t.src == "GM") | (t.dst == "GM")].sum())
    return total


def hbm_bytes(results) -> int:
    return sum(r.l2["hbm_read_bytes"] + r.l2["hbm_write_bytes"] + r.l2["writeback_bytes"] for r in results)


def pipe_busy(res) -> str:
    """The busiest AIC's and AIV's pipes: busy cycles / the launch's cycles (where the flash kernel is bound)."""
    from ascend_sim.engine.instr import PIPE_INDEX
    parts = []
    for kind in ("AIC", "AIV"):
        busy = max((t[4] for t in res.core_times if t[1] == kind), key=sum)
        pipes = {p: busy[i] for p, i in PIPE_INDEX.items() if p != "S" and i < len(busy) and busy[i]}
        parts.append(kind + " " + ", ".join(f"{p} {c / res.cycles:.0%}" for p, c in pipes.items()))
    return "; ".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-s", type=int, default=128)
    ap.add_argument("--max-s", type=int, default=8192)
    ap.add_argument("--timing-only-from", type=int, default=1 << 30)
    ap.add_argument("--pipes", action="store_true", help="print the flash kernel's busiest pipes per S")
    args = ap.parse_args()
    print("| S | version | simulated us | GM bytes moved | HBM bytes | extra GM allocated | tiles | max abs error "
          "| host s |")
    print("|---|---|---|---|---|---|---|---|---|")
    s = args.min_s
    while s <= args.max_s:
        rng = np.random.default_rng(s)
        q, k, v = (rng.uniform(-2, 2, (1, 1, s, 64)).astype(np.float16) for _ in range(3))
        ref = attention_ref(q, k, v)
        t = attention_tiling(q, "BNSD", 1)
        extra = {"naive": s * (-(-s // 16) * 16) * 6,
                 "flash": t.workspace_bytes}
        split = f", last {t.tail} blocks in {t.parts} key parts + merge" if t.tail else ""
        tiles = {"naive": "3 launches", "flash": f"br {t.br}, {t.blocks} groups{split}"}
        dry = s >= args.timing_only_from
        for name, fn in (("naive", attention_naive), ("flash", attention_flash)):
            t0 = time.perf_counter()
            out, res = fn(q, k, v, numerics=not dry)
            res = res if isinstance(res, list) else [res]
            err = "-" if dry else f"{float(np.abs(out - ref).max()):.1e}"
            print(f"| {s:,} | {name} | {sum(r.us for r in res):,.1f} | {gm_bytes(res):,} | {hbm_bytes(res):,} | "
                  f"{extra[name]:,} | {tiles[name]} | {err} | {time.perf_counter() - t0:.0f} |", flush=True)
            if args.pipes and name == "flash":
                print(f"|  | pipes busy | {pipe_busy(res[0])} |", flush=True)
        s *= 2


if __name__ == "__main__":
    main()
