"""DistributedDataParallel (数据并行) over the simulated collectives, bucketed and overlapped as torch does it.

What is mirrored from torch (``torch/nn/parallel/distributed.py``, ``c10d/reducer.cpp``):
- the constructor broadcasts rank 0's parameters, so every replica starts identical;
- gradients are packed into buckets in gradient-ready order (the reverse of ``parameters()``),
  the first bucket closing at 1 MB (``dist._DEFAULT_FIRST_BUCKET_BYTES``) and the rest at
  ``bucket_cap_mb`` (25); a bucket closes once it reaches its limit, so it may exceed it. These
  are the buckets torch rebuilds after iteration 1 (iteration 1 itself runs one bucket when
  ``find_unused_parameters=False``; that first iteration is not modelled);
- each gradient is multiplied by 1/world_size as it is copied into its bucket, and buckets are
  all-reduced (sum) in bucket order, one at a time, on a communication stream;
- with ``overlap`` a bucket's AllReduce starts as soon as its last gradient is computed on every
  rank, while backward goes on; without it, all of them wait for the end of backward.
- a parameter that got no gradient is torch's unused-parameter hang, raised here as a DataParallelError naming
  the rank and the bucket; with ``find_unused_parameters=True`` it counts as zeros in the average;
- ``no_sync()`` keeps gradients local for gradient accumulation; the next synced backward AllReduces the sum.
A model needs ``parameters()``, ``loss_and_grads(x, y)`` and ``backward_flops(batch)`` (see mlp.py).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ascend_sim.cluster.cost import flops_us
from ascend_sim.cluster.errors import DataParallelError
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.hooks import GradBucket
from ascend_sim.cluster.timeline import Event
from ascend_sim.hw.chips import ChipProfile

FIRST_BUCKET_BYTES = 1024 * 1024          # torch.distributed._DEFAULT_FIRST_BUCKET_BYTES
BUCKET_CAP_MB = 25                        # DistributedDataParallel(bucket_cap_mb=25)
MB = 1024 * 1024


def bucket_assignment(nbytes: Sequence[int], bucket_cap_mb: float = BUCKET_CAP_MB,
                      first_bucket_bytes: int = FIRST_BUCKET_BYTES) -> list[list[int]]:
    """Parameter indices per bucket, bucket 0 first: reverse parameter order, closing at 1 MB then at the cap."""
    limits = [first_bucket_bytes, int(bucket_cap_mb * MB)]
    buckets, current, size = [], [], 0
    for i in reversed(range(len(nbytes))):
        current.append(i)
        size += nbytes[i]
        if size >= limits[0]:
            buckets.append(current)
            current, size = [], 0
            limits = limits[1:] or limits
    if current:
        buckets.append(current)
    return buckets


def backward_us(chip: ChipProfile, flops: float) -> float:
    """Microseconds of ``flops`` at the chip's peak fp16 cube rate (an optimistic estimate)."""
    return flops_us(chip, flops)


@dataclass
class StepReport:
    """One backward pass with its gradient AllReduces, in microseconds from the step's start."""

    losses: list[float]
    compute_us: float           # backward on the slowest rank
    step_us: float              # until the last gradient is averaged on every rank
    bucket_ready_us: list[float]
    bucket_done_us: list[float]

    @property
    def exposed_comm_us(self) -> float:
        """Communication not hidden behind backward."""
        return self.step_us - self.compute_us


class DistributedDataParallel:
    """Replicas of one model, one per rank of ``comm``, kept identical by averaging gradients."""

    def __init__(self, replicas: Sequence, comm: HcclComm, bucket_cap_mb: float = BUCKET_CAP_MB,
                 first_bucket_bytes: int = FIRST_BUCKET_BYTES, overlap: bool = True,
                 find_unused_parameters: bool = False):
        if len(replicas) != comm.rank_size:
            raise DataParallelError(f"{len(replicas)} replicas for a communicator of {comm.rank_size} ranks",
                                    fix="build one model replica per rank")
        self.replicas, self.comm, self.overlap = list(replicas), comm, overlap
        self.find_unused_parameters = find_unused_parameters
        self.names = [n for n, _ in self.replicas[0].parameters()]
        layout0 = [(n, p.shape, p.dtype) for n, p in self.replicas[0].parameters()]
        for r, rep in enumerate(self.replicas):
            layout = [(n, p.shape, p.dtype) for n, p in rep.parameters()]
            if layout != layout0:
                diff = next((a, b) for a, b in zip(layout + [None] * len(layout0), layout0 + [None] * len(layout))
                            if a != b)
                raise DataParallelError(f"DDP expects the same model on every rank, but replica {r} has {diff[0]} "
                                        f"where rank 0 has {diff[1]} (name, shape, dtype)",
                                        fix="build every replica from the same model class and sizes")
        for name in self.names:      # DDP's constructor: broadcast rank 0's state
            res = comm.Broadcast([dict(rep.parameters())[name] for rep in self.replicas], root=0)
            for rep, value in zip(self.replicas, res.outputs):
                dict(rep.parameters())[name][...] = value
        sizes = [p.nbytes for _, p in self.replicas[0].parameters()]
        self.buckets = bucket_assignment(sizes, bucket_cap_mb, first_bucket_bytes)
        self.grads: list[dict[str, np.ndarray]] = [{} for _ in self.replicas]
        self._hook = self._state = None
        self._sync = True
        self._accumulated: list[dict[str, np.ndarray]] | None = None     # local gradients kept under no_sync

    @contextmanager
    def no_sync(self):
        """torch's ``no_sync``: backward passes inside keep their gradients local (no AllReduce) and add them up;
        the first backward outside adds them to its own and AllReduces the sum (gradient accumulation, 梯度累积)."""
        self._sync = False
        try:
            yield
        finally:
            self._sync = True

    def register_comm_hook(self, state, hook) -> None:
        """Average buckets with ``hook(state, bucket)`` (see hooks.py) instead of the built-in 1/W and AllReduce."""
        if self._hook is not None:
            raise DataParallelError("register_comm_hook can only be called once",
                                    fix="build a new DistributedDataParallel to change the hook")
        self._hook, self._state = hook, state

    def backward(self, batches: Sequence[tuple[np.ndarray, np.ndarray]],
                 backward_us_per_param: Sequence[float] | None = None, grad_scale: float = 1.0) -> StepReport:
        """Every rank's loss and gradients on its batch, then the bucketed AllReduce of the mean gradient.

        ``grad_scale`` multiplies each rank's local gradients (torch: ``(loss * grad_scale).backward()``, e.g. 1/k
        for k accumulation steps). Under ``no_sync`` the gradients are only added to the local accumulation."""
        W = len(self.replicas)
        if len(batches) != W:
            raise DataParallelError(f"{len(batches)} batches for {W} ranks: each rank trains on its own batch",
                                    fix="split the global batch with DistributedSampler, one part per rank")
        results = [rep.loss_and_grads(x, y) for rep, (x, y) in zip(self.replicas, batches)]
        self._check_unused([set(self.names) - set(g) for _, g in results])
        for r, (_, g) in enumerate(results):   # find_unused_parameters: an unused gradient counts as zeros
            for name, p in self.replicas[0].parameters():
                g.setdefault(name, np.zeros_like(p))
                if grad_scale != 1.0:
                    g[name] = g[name] * np.float32(grad_scale)
                if self._accumulated is not None:
                    g[name] = self._accumulated[r][name] + g[name]
        self._accumulated = None
        if backward_us_per_param is None:
            flops = self.replicas[0].backward_flops(len(batches[0][0]))
            backward_us_per_param = [backward_us(self.comm.cluster.chip, flops[n]) for n in self.names]
        tl = self.comm.timeline
        t0 = tl.sync()
        ready = {}                           # parameter index -> time its gradient exists (same on every rank)
        t = t0
        for i in reversed(range(len(self.names))):
            for d in range(W):
                tl.record(Event(d, "compute", t, t + backward_us_per_param[i], None, 0, f"backward {self.names[i]}"))
            t += backward_us_per_param[i]
            ready[i] = t
        compute_end = t
        if not self._sync:
            self._accumulated = [g for _, g in results]
            for d in range(W):
                tl.wait_until(d, compute_end)
            return StepReport([loss for loss, _ in results], compute_end - t0, compute_end - t0, [], [])
        scale = np.float32(1.0 / W)
        bucket_ready, bucket_done = [], []
        for b, bucket in enumerate(self.buckets):
            start = max(ready[i] for i in bucket) if self.overlap else compute_end
            for d in range(W):
                tl.wait_until(d, start)
            if self._hook is None:
                flat = [np.concatenate([(g[self.names[i]] * scale).ravel() for i in bucket]) for _, g in results]
                out = self.comm.AllReduce(flat).outputs
            else:
                flat = [np.concatenate([g[self.names[i]].ravel() for i in bucket]) for _, g in results]
                shapes = [results[0][1][self.names[i]].shape for i in bucket]
                out = self._hook(self._state, GradBucket(b, flat, [self.names[i] for i in bucket], self.comm,
                                                         b == len(self.buckets) - 1, shapes))
                self._check_hook_output(out, flat)
            for r, vec in enumerate(out):
                at = 0
                for i in bucket:
                    shape = results[r][1][self.names[i]].shape
                    n = int(np.prod(shape))
                    self.grads[r][self.names[i]] = vec[at:at + n].reshape(shape).copy()
                    at += n
            bucket_ready.append(start - t0)
            bucket_done.append(max(tl.clock_us) - t0)
        end = max(compute_end, tl.sync())
        for d in range(W):
            tl.wait_until(d, end)
        return StepReport([loss for loss, _ in results], compute_end - t0, end - t0, bucket_ready, bucket_done)

    def _check_unused(self, missing: list[set[str]]) -> None:
        """torch's behaviour with parameters that got no gradient, as a clear error instead of a hang."""
        if self.find_unused_parameters or not any(missing):
            return
        order = {n: i for i, n in enumerate(self.names)}
        r = next(r for r, m in enumerate(missing) if m)
        names = sorted(missing[r], key=order.get)
        b = next(b for b, bucket in enumerate(self.buckets) if order[names[0]] in bucket)
        fix = ("pass find_unused_parameters=True to DistributedDataParallel (one graph traversal per step), "
               "or use every parameter in every rank's forward")
        if all(m == missing[r] for m in missing):
            raise DataParallelError(
                f"no rank computed a gradient for {names} (not used in forward). DDP waits for it before bucket "
                f"{b} is ready; torch raises at the next step: 'Expected to have finished reduction in the "
                "prior iteration before starting a new one'", fix=fix)
        waiting = [q for q, m in enumerate(missing) if not m & missing[r]]
        raise DataParallelError(
            f"rank {r} computed no gradient for {names} (unused in its forward) while ranks {waiting} did. "
            f"Bucket {b} ({[self.names[i] for i in self.buckets[b]]}) never becomes ready on rank {r}, so rank {r} "
            f"never launches AllReduce #{b} and ranks {waiting} wait in it: torch hangs until the collective "
            "timeout (HCCL_EXEC_TIMEOUT, 1800 s by default)", fix=fix)

    def _check_hook_output(self, out, flat: list[np.ndarray]) -> None:
        ok = (isinstance(out, (list, tuple)) and len(out) == len(flat)
              and all(isinstance(o, np.ndarray) and o.shape == f.shape and o.dtype == np.float32
                      for o, f in zip(out, flat)))
        if not ok:
            got = [(getattr(o, "dtype", type(o).__name__), getattr(o, "shape", None)) for o in out] \
                if isinstance(out, (list, tuple)) else type(out).__name__
            raise DataParallelError(f"the comm hook returned {got}; DDP needs {len(flat)} float32 arrays of "
                                    f"shape {flat[0].shape}, one averaged bucket per rank",
                                    fix="return [averaged_bucket_rank0, ...] as float32, like allreduce_hook")

    def sgd_step(self, lr: float) -> None:
        """p -= lr * grad on every replica (the same arithmetic on the same numbers keeps them identical)."""
        lr32 = np.float32(lr)
        for rep, g in zip(self.replicas, self.grads):
            for name, p in rep.parameters():
                p -= lr32 * g[name]
