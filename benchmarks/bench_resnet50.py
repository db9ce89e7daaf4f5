"""Module 4 (issue 17): ResNet-50's layers (224 x 224) timed on the simulated 910B's cube, per layer.

Every conv as host im2col + the Matmul API gemm (fp16 in, fp32 accumulation, bias through BT, fp16 out) on
all cube cores, in timing-only launches (``launch(..., numerics=False)``: the cycles of a computing launch,
tests/migrate/test_resnet50.py); layers of one shape are simulated once. Per layer: shape, MACs, simulated
us, the bound pipe, TFLOPS achieved and its fraction of the chip's fp16 cube peak; then the totals per batch.

    python benchmarks/bench_resnet50.py [--batch 8] [--totals 1 8 32] [--chip Ascend910B]
"""
from __future__ import annotations

import argparse
import time

from ascend_sim.hw.chips import get_chip
from ascend_sim.migrate.resnet50 import cube_peak_tflops, format_table, resnet50_table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=8, help="images of the per-layer table")
    ap.add_argument("--totals", type=int, nargs="*", default=[1, 8, 32], help="batches of the totals table")
    ap.add_argument("--chip", default="Ascend910B")
    args = ap.parse_args()
    chip = get_chip(args.chip)
    print(f"{chip.name}: {chip.aic_count} AIC at {chip.clock_ghz} GHz, fp16 cube peak "
          f"{cube_peak_tflops(chip):.1f} TFLOPS\n")
    t0 = time.time()
    print(f"Per layer, batch {args.batch}:\n")
    print(format_table(resnet50_table(args.batch, chip)))
    print(f"\n(host {time.time() - t0:.0f} s)\n")
    print("| batch | GMAC | simulated us | us per image | images/s | TFLOPS | of fp16 peak | host s |")
    print("|---|---|---|---|---|---|---|---|")
    for b in args.totals:
        t0 = time.time()
        rows = resnet50_table(b, chip)
        macs, us = sum(r.macs for r in rows), sum(r.us for r in rows)
        tf = 2 * macs / (us * 1e-6) / 1e12
        print(f"| {b} | {macs / 1e9:,.2f} | {us:,.1f} | {us / b:,.1f} | {b / us * 1e6:,.0f} | {tf:,.1f} | "
              f"{tf / cube_peak_tflops(chip):.1%} | {time.time() - t0:.0f} |")


if __name__ == "__main__":
    main()
