"""Expert parallelism (专家并行): an MoE layer's experts spread over devices, tokens moved by AlltoAll.

With E experts on p devices, device r holds experts r·E/p .. (r+1)·E/p - 1 and its own group of tokens. One
forward (GShard's dispatch and combine):
1. route: each device runs the router on its tokens (top-k, capacity C per expert for its group);
2. dispatch: each device fills a buffer (E, C, d), row (e, c) = the token in slot c of expert e (zeros where no
   token), and ``AlltoAll`` sends expert e's rows to e's device: device r receives (p, E/p, C, d), the tokens of
   every group for its experts;
3. compute: each device runs its experts on everything it received;
4. combine: ``AlltoAll`` sends the results back, and each device adds them into its tokens' outputs, weighted by
   their gates. Dropped tokens receive nothing.
The bytes of each AlltoAll are E·C·d values per device whatever the routing (capacity pads the buffers): a
larger capacity factor costs communication and memory, a smaller one drops tokens.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ascend_sim.cluster.errors import PipelineError
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.moe import MoEClassifier, Routing, route

F32 = np.float32


@dataclass
class ExpertParallelResult:
    outputs: list[np.ndarray]
    routings: list[Routing]
    alltoall_us: float
    bytes_per_device: int


def expert_parallel_forward(model: MoEClassifier, groups: Sequence[np.ndarray], comm: HcclComm,
                            capacity_factor: float) -> ExpertParallelResult:
    """The MoE layer on ``comm``'s p devices, device r holding E/p experts and the tokens ``groups[r]``."""
    p, e_count = comm.rank_size, model.experts
    if len(groups) != p or e_count % p:
        raise PipelineError(f"{len(groups)} token groups and {e_count} experts on {p} devices",
                            fix=f"give one group of tokens per device and a number of experts divisible by {p}")
    local = e_count // p
    routings = [route(x, model.p["router"], model.k, capacity_factor) for x in groups]
    cap = routings[0].capacity
    d = groups[0].shape[1]
    sends = []
    for x, r in zip(groups, routings):
        buf = np.zeros((e_count, cap, d), F32)
        t, j = np.nonzero(r.slot >= 0)
        buf[r.expert[t, j], r.slot[t, j]] = x[t]
        sends.append(buf.ravel())
    t0 = max(comm.timeline.clock_us)
    received = comm.AlltoAll(sends).outputs                     # device r: (p groups, its E/p experts, C, d)
    classes = model.p["w2"].shape[1]
    results = []
    for r, buf in enumerate(received):
        rows = buf.reshape(p, local, cap, d)
        out = np.zeros((p, local, cap, classes), F32)
        for le in range(local):
            y, _ = model.expert_forward(r * local + le, rows[:, le].reshape(-1, d))
            out[:, le] = y.reshape(p, cap, classes)
        results.append(out.ravel())
    back = comm.AlltoAll(results).outputs                       # device r: (E experts, C, classes) of its group
    outputs = []
    for x, r, buf in zip(groups, routings, back):
        ys = buf.reshape(e_count, cap, classes)
        out = np.zeros((len(x), classes), F32)
        t, j = np.nonzero(r.slot >= 0)
        np.add.at(out, t, r.weight[t, j, None] * ys[r.expert[t, j], r.slot[t, j]])
        outputs.append(out)
    return ExpertParallelResult(outputs, routings, max(comm.timeline.clock_us) - t0, e_count * cap * d * 4)
