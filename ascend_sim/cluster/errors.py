"""HcclError: the one error the cluster model raises for a bad cluster, collective or sampler argument."""
from __future__ import annotations

from ascend_sim.engine.errors import KernelError


class HcclError(KernelError):
    """A cluster or collective used against HCCL's rules (ranks, counts, dtypes, ops, algorithms)."""

    check = "hccl"


class DataParallelError(KernelError):
    """A sampler or data-parallel wrapper used against torch's rules (ranks, epochs, buckets, gradients)."""

    check = "ddp"


class ShardError(KernelError):
    """A tensor-parallel layout or a MindSpore ``shard`` strategy that cannot split these tensors on these devices."""

    check = "shard"


class PipelineError(KernelError):
    """A pipeline, mixed-precision or expert-parallel setting that cannot run (schedules, stages, scales, experts)."""

    check = "pipeline"
