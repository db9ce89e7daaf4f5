"""Per-device compute time of LeNet-5 and SmallResNet from the simulator, for DDP on the simulated cluster.

The forward pass runs through the simulated Ascend C kernels of Module 1 (``LeNetRuntime``, fp16, the cluster's chip),
one batch per device; each operator's simulated microseconds are read from its time table. Backward has no kernels in
this project, so its time is an estimate [EST]: 2 x the forward time of the layer (one matmul/conv of the forward's
size for dX and one for dW), its ReLU and pooling included, charged to the layer's weight gradient (the bias
gradient is a sum folded into the same pass, 0 us). The result feeds
``DistributedDataParallel.backward(batches, backward_us_per_param=...)`` so that overlap and exposed communication
are measured against the simulator's own compute time, not against peak FLOPs.

SmallResNet's 3x3 convolutions have no kernel of their own here: they are timed at the simulated cost per
multiply-accumulate of LeNet-5's conv2 kernel on the same chip and batch [DER], backward again 2 x forward.
"""
from __future__ import annotations

from dataclasses import dataclass

import copy
from typing import Callable, Sequence

import numpy as np

from ascend_sim.cluster.ddp import DistributedDataParallel
from ascend_sim.cluster.ddp_job import DDPJob, job_data
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.lenet_train import LeNet5Train
from ascend_sim.cluster.loop import Trainer
from ascend_sim.cluster.resnet_train import SmallResNet
from ascend_sim.cluster.topology import Cluster, atlas_800t_a2
from ascend_sim.hw.chips import ChipProfile
from ascend_sim.models.lenet import LeNetRuntime

BACKWARD_FACTOR = 2.0          # [EST] backward = dX + dW, each the size of the forward
LAYER_OPS = {"conv1": ("conv1", "relu1", "pool1"), "conv2": ("conv2", "relu2", "pool2"),
             "fc1": ("fc1", "relu3"), "fc2": ("fc2", "relu4"), "fc3": ("fc3", "softmax")}


def lenet_forward_us(batch: int, chip: ChipProfile) -> dict[str, float]:
    """Simulated forward microseconds of each LeNet-5 operator for one batch of ``batch`` MNIST images."""
    images = job_data(DDPJob(world_size=1, images=batch, batch_per_rank=batch))[0]
    rt = LeNetRuntime(chip=chip, keep_results=False)
    rt.forward(images)
    return {name: s.us for name, s in rt.stats.items()}


def lenet_backward_us(forward_us: dict[str, float]) -> list[float]:
    """Backward microseconds per parameter, in ``LeNet5Train.names()`` order (weights carry their layer's time)."""
    fwd, out = forward_us, []
    for name in LeNet5Train.names():
        layer, kind = name.split(".")
        out.append(BACKWARD_FACTOR * sum(fwd[op] for op in LAYER_OPS[layer]) if kind == "weight" else 0.0)
    return out


@dataclass
class DDPTimedReport:
    """Simulated LeNet-5 DDP training: times per step (us) and the gradient-consistency results."""

    world_size: int
    batch_per_rank: int
    compute_us: float           # backward per step (forward not included)
    forward_us: float
    step_us: list[float]        # forward + backward + exposed communication, per step
    exposed_comm_us: list[float]
    max_grad_error: float       # |DDP mean gradient - single-process gradient of the global batch|
    replicas_identical: bool    # every replica bit-identical after every step
    losses: list[float]

    @property
    def images_per_s(self) -> float:
        return self.world_size * self.batch_per_rank / (float(np.mean(self.step_us)) * 1e-6)


def conv_us_per_mac(batch: int, chip: ChipProfile) -> float:
    """Simulated microseconds per multiply-accumulate of LeNet-5's conv2 kernel (16 x 6 x 5 x 5 over 10 x 10)."""
    return lenet_forward_us(batch, chip)["conv2"] / (batch * 10 * 10 * 16 * 6 * 5 * 5)


def resnet_times(model: SmallResNet, batch: int, chip: ChipProfile) -> tuple[float, list[float]]:
    """Forward microseconds of one batch and backward microseconds per parameter (weights carry their layer)."""
    rate, macs = conv_us_per_mac(batch, chip), model.macs()
    fwd = {k: rate * batch * m for k, m in macs.items()}
    return sum(fwd.values()), [BACKWARD_FACTOR * fwd.get(name, 0.0) for name, _ in model.parameters()]


def ddp_timed(job: DDPJob, make_model: Callable[[], object], forward_us: float, backward_us: Sequence[float],
              cluster: Cluster) -> DDPTimedReport:
    """Train ``job`` with replicas from ``make_model`` on ``cluster``; check gradient consistency at every step.

    Every step compares DDP's averaged gradient with one process's gradient of the whole global batch (the
    concatenation of the ranks' batches) and checks that the replicas stay bit-identical.
    """
    replicas = [make_model() for _ in range(job.world_size)]
    x, y = job_data(job)
    ddp = DistributedDataParallel(replicas, HcclComm(cluster))
    trainer = Trainer(ddp, x, y, job.batch_per_rank, lr=job.lr, momentum=job.momentum, seed=job.seed,
                      backward_us=backward_us)
    steps, exposed, worst, same = [], [], 0.0, True
    for _ in range(job.steps):
        batches = trainer.batches()
        _, g_global = copy.deepcopy(replicas[0]).loss_and_grads(np.concatenate([b[0] for b in batches]),
                                                                np.concatenate([b[1] for b in batches]))
        report = trainer.train_step()
        worst = max(worst, max(float(np.abs(ddp.grads[0][k] - g_global[k]).max()) for k in g_global))
        same &= all(np.array_equal(p, q) for rep in replicas[1:]
                    for (_, p), (_, q) in zip(rep.parameters(), replicas[0].parameters()))
        steps.append(forward_us + report.step_us)
        exposed.append(report.exposed_comm_us)
    return DDPTimedReport(job.world_size, job.batch_per_rank, float(sum(backward_us)), forward_us, steps, exposed,
                          worst, same, list(trainer.losses))


def lenet_ddp_timed(job: DDPJob, cluster: Cluster | None = None) -> DDPTimedReport:
    """LeNet-5 DDP with the simulated kernels' times (see ``ddp_timed``)."""
    cluster = cluster or atlas_800t_a2(1, npus_per_server=job.world_size)
    per_op = lenet_forward_us(job.batch_per_rank, cluster.chip)
    return ddp_timed(job, lambda: LeNet5Train(seed=job.seed), sum(per_op.values()), lenet_backward_us(per_op),
                     cluster)


def resnet_ddp_timed(job: DDPJob, channels: int = 8, cluster: Cluster | None = None) -> DDPTimedReport:
    """SmallResNet DDP, its convolutions timed at the simulated conv kernel's cost per MAC (see ``ddp_timed``)."""
    cluster = cluster or atlas_800t_a2(1, npus_per_server=job.world_size)
    fwd, back = resnet_times(SmallResNet(channels, job.seed), job.batch_per_rank, cluster.chip)
    return ddp_timed(job, lambda: SmallResNet(channels, job.seed), fwd, back, cluster)
