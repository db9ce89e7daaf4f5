"""Module 3, part two, figures: pipeline bubbles against (p-1)/(m+p-1), the hybrid planner for a 7B transformer on
2 and 8 Atlas 800T A2 servers, the loss-scaling rescue of an fp16 run, and MoE token dropping by capacity factor.

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/bench_parallelism.py
"""
from __future__ import annotations

import numpy as np

from ascend_sim.cluster import atlas_800t_a2
from ascend_sim.cluster.loss_scale import DynamicLossScaler
from ascend_sim.cluster.mixed_precision import MixedPrecisionMLP, train
from ascend_sim.cluster.moe import MoEClassifier
from ascend_sim.cluster.pipeline_schedule import analytic_bubble, schedule
from ascend_sim.cluster.pipeline_time import play
from ascend_sim.cluster.planner import GB, llama_7b, pick, plan_all, table
from ascend_sim.cluster.toy_data import blobs, moe_blobs


def bubbles() -> None:
    print("### Pipeline bubbles: simulated against (p-1)/(v m + p-1)\n")
    print("One A2 server, p stages on p NPUs, forward 1 ms and backward 2 ms per stage (split over v chunks). "
          "Messages cost HCCS's alpha (2 us) alone, or alpha + 8 MB of activations (0.3 ms); peak = micro-batch "
          "chunks in flight on stage 0 (a chunk holds 1/v of a stage's activations).\n")
    print("| schedule | p | m | analytic | simulated, alpha only | simulated, 8 MB messages | step (ms), 8 MB | "
          "peak in flight (stage 0) |\n|---|---|---|---|---|---|---|---|")
    for name, v in (("gpipe", 1), ("1f1b", 1), ("interleaved", 2)):
        for p, m in ((4, 4), (4, 8), (4, 16), (8, 8), (8, 32)):
            ops = schedule(name, p, m, v)
            light = play(atlas_800t_a2(1), ops, m, 1000 / v, 2000 / v, 0, chunks=v)
            run = play(atlas_800t_a2(1), ops, m, 1000 / v, 2000 / v, 8 << 20, chunks=v)
            label = name if v == 1 else f"{name} v={v}"
            print(f"| {label} | {p} | {m} | {analytic_bubble(p, m, v):.4f} | {light.mean_bubble:.4f} | "
                  f"{run.mean_bubble:.4f} | {run.step_us / 1e3:.2f} | {run.peak_in_flight[0]} |")
    print()


def planner() -> None:
    model = llama_7b()
    for servers, batch in ((2, 64), (8, 256)):
        plans = plan_all(model, servers, batch)
        best = pick(plans)
        print(f"### Hybrid planner: {model.name} ({model.params / 1e9:.2f} B parameters, seq {model.seq}) on "
              f"{servers} x A2 ({8 * servers} NPUs), global batch {batch} sequences, micro-batch 1, MFU 0.5\n")
        print(table(plans))
        print(f"\npick: dp={best.dp} tp={best.tp} pp={best.pp}, {best.memory_bytes / GB:.1f} GB per NPU, "
              f"step {best.step_us / 1e3:.0f} ms\n")


def rescue() -> None:
    x, y = blobs(4096, seed=0)
    xt, yt = blobs(2000, seed=7)
    print("### Loss scaling rescue: TinyMLP 16-32-10, loss a mean over G = 2^25 tokens (per-token output gradients "
          "below fp16's 2^-24), 40 steps of 256, lr 0.5 x G/256\n")
    print("| run | held-out accuracy | share of zero gradient values (first 10 steps) | skipped steps | "
          "final scale |\n|---|---|---|---|---|")
    for name, kw, scaler in (("fp32", dict(compute="fp32"), None),
                             ("pure fp16 (fp16 weights, no scaling)", dict(compute="fp16", pure=True), None),
                             ("fp16 compute, fp32 masters, no scaling", dict(compute="fp16"), None),
                             ("fp16 + dynamic loss scaling (2^16)", dict(compute="fp16"),
                              DynamicLossScaler(2.0 ** 16, growth_interval=10)),
                             ("fp16 + scaling from 2^40 (overflows first)", dict(compute="fp16"),
                              DynamicLossScaler(2.0 ** 40, growth_interval=10)),
                             ("bf16 compute, no scaling", dict(compute="bf16"), None)):
        m = MixedPrecisionMLP(seed=0, **kw)
        log = train(m, x, y, 40, 256, 0.5, scaler, global_tokens=2 ** 25)
        acc = float(np.mean(m.predict(xt) == yt))
        print(f"| {name} | {acc:.3f} | {np.mean(log.zero_grad_share[:10]):.2f} | {len(log.skipped)} | "
              f"{scaler.scale if scaler else '-'} |")
    print()


def moe() -> None:
    x, y = moe_blobs(4096, 1)
    xt, yt = moe_blobs(2000, 2)
    print("### MoE token dropping: 4 experts (8-16-4 MLPs), trained 300 steps with capacity factor 2.0; "
          "evaluated at other capacity factors\n")
    print("| k | capacity factor | dropped token choices | held-out accuracy |\n|---|---|---|---|")
    for k in (1, 2):
        m = MoEClassifier(k=k, seed=0)
        for s in range(300):
            i = (s * 64) % 4000
            _, g, _ = m.loss_and_grads(x[i:i + 64], y[i:i + 64], 2.0, 0.01)
            m.sgd_step(g, 0.5)
        for cf in (0.5, 1.0, 1.25, 2.0):
            _, r = m.forward(xt[:256], cf)
            print(f"| {k} | {cf} | {r.dropped_share:.3f} | {np.mean(m.predict(xt, cf) == yt):.3f} |")
    print()


if __name__ == "__main__":
    bubbles()
    planner()
    rescue()
    moe()
