"""One LeNet-5 DDP training job, described once and run on either engine.

``DDPJob`` says what to train (world size, batch per rank, steps, SGD with momentum, sampler seed, how many images
of the shipped MNIST subset); ``run_simulated`` trains it on the simulated cluster (DistributedDataParallel, Trainer);
``ascend_sim.cluster.gloo.run_gloo`` trains the same job with torch.distributed. Both return a ``TrainRecord``: the
mean gradient rank 0 applied at every step, the losses and the final weights, so the two engines can be compared.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ascend_sim.cluster.ddp import DistributedDataParallel
from ascend_sim.cluster.errors import DataParallelError
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.lenet_train import LeNet5Train
from ascend_sim.cluster.loop import Trainer
from ascend_sim.cluster.topology import atlas_800t_a2
from ascend_sim.models.datasets import load_mnist_subset, normalize


@dataclass(frozen=True)
class DDPJob:
    """LeNet-5 data-parallel training: ``steps`` steps of ``batch_per_rank`` images on each of ``world_size`` ranks."""

    world_size: int
    batch_per_rank: int = 16
    steps: int = 4
    images: int = 256                 # the first ``images`` of the shipped 4,000-image MNIST training subset
    lr: float = 0.05
    momentum: float = 0.9
    seed: int = 0                     # DistributedSampler's seed and the initial weights'
    checkpoint_every: int = 0         # gloo: rank 0 snapshots every N steps (0: never)

    def __post_init__(self) -> None:
        if self.world_size < 1 or self.steps < 1:
            raise DataParallelError(f"world_size={self.world_size}, steps={self.steps}: a job has at least one rank "
                                    "and one step", fix="pass positive world_size and steps")
        if self.steps_per_epoch < 1:
            raise DataParallelError(
                f"{self.images} images over {self.world_size} ranks give {self.images // self.world_size} per rank "
                f"(drop_last), less than one batch of {self.batch_per_rank}",
                fix=f"use at least {self.world_size * self.batch_per_rank} images or a smaller batch_per_rank")

    @property
    def steps_per_epoch(self) -> int:
        per_rank = self.images // self.world_size          # drop_last=True
        return per_rank // self.batch_per_rank


@dataclass
class TrainRecord:
    """What one run produced, on rank 0 (every replica is the same)."""

    grads: list[dict[str, np.ndarray]] = field(default_factory=list)   # mean gradient of each step
    losses: list[float] = field(default_factory=list)                   # rank 0's loss of each step
    params: dict[str, np.ndarray] = field(default_factory=dict)        # final weights
    restarts: int = 0
    probe: list | None = None                                          # gloo: AllReduce results
    failures: list[str] = field(default_factory=list)                  # gloo: why each restart was needed


def job_data(job: DDPJob) -> tuple[np.ndarray, np.ndarray]:
    """The job's images (float32 [N, 1, 28, 28] in [0, 1]) and labels (int64)."""
    images, labels = load_mnist_subset("train")
    return normalize(images[:job.images]), labels[:job.images].astype(np.int64)


def simulated_trainer(job: DDPJob, cluster=None) -> Trainer:
    """A Trainer of the job on ``cluster`` (default: one Atlas 800T A2 server with ``world_size`` NPUs)."""
    comm = HcclComm(cluster or atlas_800t_a2(1, npus_per_server=job.world_size))
    replicas = [LeNet5Train(seed=job.seed) for _ in range(job.world_size)]
    x, y = job_data(job)
    return Trainer(DistributedDataParallel(replicas, comm), x, y, job.batch_per_rank, lr=job.lr,
                   momentum=job.momentum, seed=job.seed)


def run_simulated(job: DDPJob) -> TrainRecord:
    """Train the job on the simulated cluster, recording rank 0's mean gradient at every step."""
    trainer, rec = simulated_trainer(job), TrainRecord()
    for _ in range(job.steps):
        trainer.train_step()
        rec.grads.append({k: v.copy() for k, v in trainer.ddp.grads[0].items()})
    rec.losses = list(trainer.losses)
    rec.params = trainer.ddp.replicas[0].state_dict()
    return rec
