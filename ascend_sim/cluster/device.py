"""Kernels on cluster devices: ``launch`` with the device's chip profile, timed on its timeline."""
from __future__ import annotations

from ascend_sim import Kernel, LaunchResult, launch
from ascend_sim.cluster.errors import HcclError
from ascend_sim.cluster.timeline import Timeline


def launch_on(timeline: Timeline, rank: int, k: Kernel, block_dim: int, *args, **kwargs) -> LaunchResult:
    """Run ``k`` on device ``rank`` (its chip, ``launch``'s numerics and cycles); its time becomes a compute event."""
    n = timeline.cluster.world_size
    if not isinstance(rank, int) or not 0 <= rank < n:
        raise HcclError(f"rank {rank!r} does not exist: this cluster has ranks 0..{n - 1}",
                        fix=f"launch on a rank in range({n})")
    result = launch(k, block_dim, *args, chip=timeline.cluster.devices[rank].chip, **kwargs)
    timeline.compute(rank, result.us, f"kernel {result.kernel_name}")
    return result
