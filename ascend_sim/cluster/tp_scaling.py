"""How far tensor parallelism scales: a Megatron MLP's compute against its AllReduces, by TP degree.

One MLP (h -> 4h -> h, ``tokens`` rows, fp16) on a TP group of t devices (Megatron-LM 2019):
- compute: forward 2 matmuls of 2 x tokens x h x 4h FLOPs each, backward twice that, all divided by t,
  at ``efficiency`` of the peak cube rate (cost.py);
- communication: one AllReduce of tokens x h fp16 values forward (after the row-parallel fc2) and one backward
  (the column-parallel fc1's dX), on the group's links with the algorithm HCCL picks; nothing overlaps them,
  since each one's result is the next operation's input.
The TP group is t devices of A2 servers (8 per server), so t = 16 spans two servers and its AllReduces cross RoCE.
"""
from __future__ import annotations

from dataclasses import dataclass

from ascend_sim.cluster.cost import flops_us
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.scaling import cluster_of


@dataclass(frozen=True)
class MlpTime:
    tp: int
    compute_us: float
    comm_us: float

    @property
    def total_us(self) -> float:
        return self.compute_us + self.comm_us


def tp_mlp(tp: int, tokens: int = 8192, hidden: int = 4096, efficiency: float = 0.5) -> MlpTime:
    """Forward + backward time of one tensor-parallel MLP on ``tp`` 910Bs."""
    cluster = cluster_of("a2", tp)
    flops = 3 * 2 * (2.0 * tokens * hidden * 4 * hidden)
    compute = flops_us(cluster.chip, flops / tp, efficiency)
    comm = 2 * HcclComm(cluster).estimate("AllReduce", tokens * hidden, "fp16").time_us if tp > 1 else 0.0
    return MlpTime(tp, compute, comm)


def table(degrees: tuple[int, ...] = (1, 2, 4, 8, 16, 32), **kw) -> str:
    rows = [tp_mlp(t, **kw) for t in degrees]
    lines = ["| TP degree | compute (ms) | AllReduce x2 (ms) | MLP (ms) | speed-up | efficiency |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        s = rows[0].total_us / r.total_us
        lines.append(f"| {r.tp} | {r.compute_us / 1e3:.3f} | {r.comm_us / 1e3:.3f} | {r.total_us / 1e3:.3f} | "
                     f"{s:.2f}x | {s / r.tp:.2f} |")
    return "\n".join(lines)
