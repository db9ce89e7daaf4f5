"""A data-parallel training loop that can be checkpointed: DDP, DistributedSampler, momentum SGD, per-rank RNG.

``Trainer`` owns everything a restart must restore (检查点, checkpoint): the model (rank 0's parameters; DDP
keeps the replicas identical), the optimizer state (momentum buffers), the global step, the sampler epoch and
every rank's random generator (used here for input-noise augmentation, so a lost RNG state changes the
run). ``state_dict`` / ``load_state_dict`` copy them; ``steps_per_epoch`` comes from ``DistributedSampler``
with ``drop_last`` (every rank the same number of full batches).
"""
from __future__ import annotations

import copy
from typing import Callable, Sequence

import numpy as np

from ascend_sim.cluster.ddp import DistributedDataParallel, StepReport
from ascend_sim.cluster.errors import DataParallelError
from ascend_sim.cluster.sampler import DistributedSampler

F32 = np.float32


class Trainer:
    """SGD with momentum (torch's form: v = m v + g; p -= lr v) over ``x, y`` on every rank of ``ddp``."""

    def __init__(self, ddp: DistributedDataParallel, x: np.ndarray, y: np.ndarray, batch_per_rank: int,
                 lr: float = 0.1, momentum: float = 0.9, seed: int = 0, noise: float = 0.0,
                 backward_us: Sequence[float] | None = None):
        """``backward_us``: backward microseconds per parameter for DDP's timeline (default: DDP's FLOP estimate)."""
        self.ddp, self.x, self.y, self.backward_us = ddp, x, y, backward_us
        w = len(ddp.replicas)
        self.samplers = [DistributedSampler(len(x), w, r, seed=seed, drop_last=True) for r in range(w)]
        self.batch = batch_per_rank
        self.steps_per_epoch = len(self.samplers[0]) // batch_per_rank
        if self.steps_per_epoch < 1:
            raise DataParallelError(f"{len(self.samplers[0])} samples per rank do not fill one batch of "
                                    f"{batch_per_rank}", fix="use a smaller batch_per_rank or more data")
        self.lr, self.momentum, self.noise = F32(lr), F32(momentum), F32(noise)
        self.velocity = [{n: np.zeros_like(p) for n, p in rep.parameters()} for rep in ddp.replicas]
        self.rngs = [np.random.default_rng([seed, r]) for r in range(w)]
        self.step = 0
        self.losses: list[float] = []

    @property
    def epoch(self) -> int:
        return self.step // self.steps_per_epoch

    def batches(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Every rank's batch for the current step (its sampler's slice, plus its own noise)."""
        i = self.step % self.steps_per_epoch
        out = []
        for s, rng in zip(self.samplers, self.rngs):
            s.set_epoch(self.epoch)
            idx = s.indices()[i * self.batch:(i + 1) * self.batch]
            x = self.x[idx]
            if self.noise:
                x = x + self.noise * rng.standard_normal(x.shape).astype(F32)
            out.append((x, self.y[idx]))
        return out

    def train_step(self, before_allreduce: Callable[[], None] | None = None) -> StepReport:
        """One step on every rank. ``before_allreduce`` runs between backward and the gradient AllReduce."""
        batches = self.batches()
        if before_allreduce is not None:
            before_allreduce()
        report = self.ddp.backward(batches, self.backward_us)
        for rep, g, v in zip(self.ddp.replicas, self.ddp.grads, self.velocity):
            for name, p in rep.parameters():
                v[name] *= self.momentum
                v[name] += g[name]
                p -= self.lr * v[name]
        self.losses.append(float(np.mean(report.losses)))
        self.step += 1
        return report

    def state_dict(self) -> dict:
        """A deep copy of everything a restart needs (rank 0's model and optimizer; every rank's RNG)."""
        return copy.deepcopy({"model": dict(self.ddp.replicas[0].parameters()), "velocity": self.velocity[0],
                              "step": self.step, "epoch": self.epoch,
                              "rng": [g.bit_generator.state for g in self.rngs]})

    def load_state_dict(self, state: dict) -> None:
        """Every rank takes the snapshot: the same model and optimizer, its own RNG, the step and epoch."""
        for rep, v in zip(self.ddp.replicas, self.velocity):
            for name, p in rep.parameters():
                p[...] = state["model"][name]
                v[name][...] = state["velocity"][name]
        for g, s in zip(self.rngs, state["rng"]):
            g.bit_generator.state = copy.deepcopy(s)
        self.step = state["step"]
        for s in self.samplers:
            s.set_epoch(state["epoch"])

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        """Rank 0's model on (x, y): the share of argmax predictions that are right."""
        return float(np.mean(self.ddp.replicas[0].predict(x) == y))
