"""Strong and weak scaling (强/弱扩展) of data-parallel training on the simulated cluster.

Per-step cost, documented so that every number can be re-derived:
- compute: ``Net.train_flops`` x per-device batch at ``efficiency`` x the chip's peak cube rate (cost.py);
  forward is 1/3 of it, backward 2/3; backward produces the gradients in reverse parameter order, each
  parameter's share proportional to its size [EST: FLOPs follow activations, not parameters];
- communication: DDP's buckets (reverse order, 1 MB then 25 MB) all-reduced in ``grad_dtype`` with the
  algorithm HCCL picks on that cluster (hccl.py's timing), one bucket at a time, each starting when its last
  gradient exists (overlap) or after backward (no overlap);
- step = the later of backward's end and the last AllReduce's end; not modelled: the optimizer step, data
  loading, stragglers, framework overheads.
Strong scaling keeps the global batch (E = T1 / (N T_N)); weak scaling keeps the per-device batch (E = T1 / T_N).

    python -m ascend_sim.cluster.scaling          # the tables of benchmarks/RESULTS.md
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ascend_sim.cluster.cost import flops_us
from ascend_sim.cluster.ddp import bucket_assignment
from ascend_sim.cluster.hccl import HcclComm, dtype_of
from ascend_sim.cluster.memory import per_card, source_split
from ascend_sim.cluster.models_zoo import Net, resnet50, source_resnet
from ascend_sim.cluster.topology import Cluster, atlas_800_910, atlas_800t_a2

MINDSPORE_1DEV, MINDSPORE_8DEV = 2115.0, 16600.0     # img/s, MindSpore r0.6 benchmark.md, ResNet-50 on Ascend 910
MINDSPORE_FUSION = [85, 160]      # model_zoo resnet train.py all_reduce_fusion_config for ResNet-50 [unverified]


@dataclass(frozen=True)
class Step:
    """One training step on n devices, in microseconds."""

    devices: int
    batch_per_device: int
    compute_us: float
    comm_us: float            # all AllReduces, back to back
    step_us: float

    @property
    def exposed_comm_us(self) -> float:
        return self.step_us - self.compute_us

    @property
    def throughput(self) -> float:
        """Samples per second over all devices."""
        return self.devices * self.batch_per_device / (self.step_us * 1e-6)


def cluster_of(kind: str, n: int) -> Cluster:
    """n devices as real servers hold them: up to 8 in one server, then whole servers of 8."""
    make = {"a2": atlas_800t_a2, "910": atlas_800_910}[kind]
    return make(1, n) if n <= 8 else make(n // 8, 8)


def step(net: Net, cluster: Cluster, batch_per_device: int, efficiency: float, grad_dtype: str = "fp32",
         overlap: bool = True, fusion: list[int] | None = None) -> Step:
    """The modelled step time of data-parallel training of ``net`` on every device of ``cluster``.

    ``fusion`` replaces DDP's buckets by MindSpore's ``all_reduce_fusion_config``: parameter indices where
    a new AllReduce group starts (MindSpore's ResNet-50 script uses [85, 160]).
    """
    compute = flops_us(cluster.chip, net.train_flops * batch_per_device, efficiency)
    n = cluster.world_size
    if n == 1:
        return Step(1, batch_per_device, compute, 0.0, compute)
    item = dtype_of(grad_dtype).itemsize
    sizes = net.sizes
    if fusion is None:
        buckets = bucket_assignment([k * item for k in sizes])
    else:
        edges = [0, *fusion, len(sizes)]
        buckets = [list(range(a, b)) for a, b in zip(edges, edges[1:])][::-1]
    total = sum(sizes)
    t_fwd = compute / 3
    ready, t = {}, t_fwd
    for i in reversed(range(len(sizes))):
        t += (2 * compute / 3) * sizes[i] / total
        ready[i] = t
    comm = HcclComm(cluster)
    free, comm_sum = 0.0, 0.0
    for b in buckets:
        dur = comm.estimate("AllReduce", sum(sizes[i] for i in b), grad_dtype).time_us
        start = max(ready[i] for i in b) if overlap else compute
        free = max(free, start) + dur
        comm_sum += dur
    return Step(n, batch_per_device, compute, comm_sum, max(compute, free))


def efficiency_for(net: Net, cluster_kind: str, images_per_s: float) -> float:
    """The compute efficiency (MFU) that makes one device train ``images_per_s`` samples per second."""
    chip = cluster_of(cluster_kind, 1).chip
    return flops_us(chip, net.train_flops * images_per_s) / 1e6


def scaling(net: Net, kind: str, devices: list[int], batch: int, efficiency: float, strong: bool,
            **kw) -> list[tuple[Step, float]]:
    """(step, efficiency) per device count: strong keeps ``batch`` global, weak keeps it per device."""
    rows, base = [], None
    for n in devices:
        b = batch // n if strong else batch
        s = step(net, cluster_of(kind, n), b, efficiency, **kw)
        base = base or s
        e = base.step_us / (n * s.step_us) if strong else base.step_us / s.step_us
        rows.append((s, e))
    return rows


def table(rows: list[tuple[Step, float]]) -> str:
    lines = ["| devices | batch/device | compute (ms) | AllReduce (ms) | exposed comm (ms) | step (ms) | "
             "img/s | speed-up | efficiency |", "|---|---|---|---|---|---|---|---|---|"]
    t1 = rows[0][0].throughput
    for s, e in rows:
        lines.append(f"| {s.devices} | {s.batch_per_device} | {s.compute_us / 1e3:.2f} | {s.comm_us / 1e3:.2f} | "
                     f"{s.exposed_comm_us / 1e3:.2f} | {s.step_us / 1e3:.2f} | {s.throughput:,.0f} | "
                     f"{s.throughput / t1:.2f}x | {e:.3f} |")
    return "\n".join(lines)


def report(out: Callable[[str], None] = print) -> None:
    """Every table of benchmarks/RESULTS.md's scaling section."""
    r50 = resnet50()
    eff = efficiency_for(r50, "910", MINDSPORE_1DEV)
    out(f"ResNet-50 v1.5: {r50.num_params:,} parameters, {r50.train_flops / 1e9:.1f} GFLOP per image (train)")
    out(f"efficiency fitted to MindSpore's 1-device 2,115 img/s on the 910: {eff:.3f} of peak\n")
    devs = [1, 2, 4, 8, 16, 32, 64]
    out("### MindSpore anchor: ResNet-50 on Atlas 800 (910), batch 256 per device, fp32 gradients\n")
    for label, kw in (("DDP buckets, overlap", {}), ("MindSpore fusion groups [85, 160], overlap",
                                                     {"fusion": MINDSPORE_FUSION}),
                      ("one AllReduce after backward (no overlap)", {"overlap": False})):
        rows = scaling(r50, "910", devs, 256, eff, strong=False, **kw)
        if not kw:
            out(table(rows) + "\n")
        s8 = rows[3][0]
        out(f"- {label}: 8 devices {s8.throughput:,.0f} img/s against MindSpore's {MINDSPORE_8DEV:,.0f} "
            f"({s8.throughput / MINDSPORE_8DEV - 1:+.1%}); linearity {rows[3][1]:.3f} (published 0.98); "
            f"16 devices {rows[4][1]:.3f} (published 0.96)")
    out("")
    out("### Strong scaling: ResNet-50, global batch 1024, Atlas 800T A2 (910B), same efficiency\n")
    out(table(scaling(r50, "a2", devs, 1024, eff, strong=True)))
    out("\n### Weak scaling: ResNet-50, batch 64 per device, Atlas 800T A2 (910B)\n")
    out(table(scaling(r50, "a2", devs, 64, eff, strong=False)))
    src = source_resnet()
    out(f"\n### The source's 4-card example: {src.name}, batch 64 per card, 910B\n")
    for label, kw in (("DDP buckets, overlap, fp32 gradients", {}),
                      ("one AllReduce after backward, fp16 gradients", {"overlap": False, "grad_dtype": "fp16"}),
                      ("one AllReduce after backward, fp32 gradients", {"overlap": False})):
        rows = scaling(src, "a2", [1, 4], 64, eff, strong=False, **kw)
        out(f"- {label}: 4 cards = {rows[1][0].throughput / rows[0][0].throughput:.2f}x one card")
    one = per_card(src, 64)
    out("\n### The source's memory claim (per card, MiB; weights, gradients, momentum fp32; activations fp16)\n")
    out("| setting | weights+grads+momentum | activations | total | vs one card |\n|---|---|---|---|---|")
    for label, m in (("1 card, batch 64", one), ("4 cards, batch 64 each, data parallel only", per_card(src, 64)),
                     ("4 cards, batch 64 each, the source's shard strategies", per_card(src, 64, source_split(src))),
                     ("4 cards, global batch 64 (16 each), data parallel only", per_card(src, 16))):
        states = m.weights + m.gradients + m.optimizer
        out(f"| {label} | {states / 2**20:,.0f} | {m.activations / 2**20:,.0f} | {m.total / 2**20:,.0f} | "
            f"{m.total / one.total:.0%} |")


if __name__ == "__main__":
    import argparse
    argparse.ArgumentParser(prog="python -m ascend_sim.cluster.scaling",
                            description="Print the strong and weak scaling tables of benchmarks/RESULTS.md "
                                        "(section 8) from the cluster model.").parse_args()
    report()
