"""Hybrid data x tensor parallelism (混合并行) on a 2-D device mesh.

Each row of the mesh (a tensor-parallel group of tp neighbours) holds one replica of the model, split
Megatron-style (``TensorParallelMLP``); the dp rows train on different parts of the global batch. After
backward, shard t of every replica is averaged across the data-parallel group of column t: scaled by 1/dp
and summed with AllReduce, as DDP does. Tensor parallelism splits the parameters, data parallelism the samples.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ascend_sim.cluster.errors import DataParallelError
from ascend_sim.cluster.groups import DeviceMesh
from ascend_sim.cluster.tp import TensorParallelMLP


class HybridParallelMLP:
    """dp replicas of a tensor-parallel MLP; ``grads[d][t]`` are the averaged gradients of shard t."""

    def __init__(self, params: dict[str, np.ndarray], mesh: DeviceMesh, sequence_parallel: bool = False):
        self.mesh = mesh
        self.replicas = [TensorParallelMLP(params, c, sequence_parallel) for c in mesh.tp_comms]

    def backward(self, batches: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[float]:
        """Each replica's loss on its batch; then the data-parallel mean of every shard's gradients."""
        dp, tp = self.mesh.dp, self.mesh.tp
        if len(batches) != dp:
            raise DataParallelError(f"{len(batches)} batches for {dp} data-parallel replicas",
                                    fix="give each row of the mesh its own part of the global batch")
        runs = [rep.loss_and_grads(x, y) for rep, (x, y) in zip(self.replicas, batches)]
        scale = np.float32(1.0 / dp)
        self.grads = [[{} for _ in range(tp)] for _ in range(dp)]
        for t, comm in enumerate(self.mesh.dp_comms):
            for name in runs[0][1][t]:
                out = comm.AllReduce([runs[d][1][t][name] * scale for d in range(dp)]).outputs
                for d in range(dp):
                    self.grads[d][t][name] = out[d]
        return [loss for loss, _ in runs]

    def sgd_step(self, lr: float) -> None:
        lr32 = np.float32(lr)
        for d, rep in enumerate(self.replicas):
            for t, shard in enumerate(rep.shards()):
                for name, p in shard.items():
                    p -= lr32 * self.grads[d][t][name]
