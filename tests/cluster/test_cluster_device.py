"""Each device runs real simulator kernels with its own chip profile; their time joins its timeline."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import launch
from ascend_sim.cluster.device import launch_on
from ascend_sim.cluster.errors import HcclError
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.topology import atlas_800_910, atlas_800t_a2
from ascend_sim.kernels.add_custom import AddCustomTilingData, add_custom

N = 2048                          # 8 blocks x 256 half, 8 tiles of 16 elements (32 B)


def shard(rank: int):
    rng = np.random.default_rng(rank)
    x, y = (rng.uniform(-1, 1, N).astype(np.float16) for _ in range(2))
    return x, y, np.zeros(N, np.float16)


@pytest.mark.parametrize("cluster", [atlas_800t_a2(npus_per_server=2), atlas_800_910(npus_per_server=2)],
                         ids=["910B", "910"])
def test_kernels_then_allreduce(cluster):
    comm = HcclComm(cluster)
    zs, kernel_us = [], []
    for r in range(2):
        x, y, z = shard(r)
        res = launch_on(comm.timeline, r, add_custom, 8, x, y, z, AddCustomTilingData(N, 8))
        np.testing.assert_array_equal(z, x + y)
        alone = launch(add_custom, 8, *shard(r)[:2], np.zeros(N, np.float16), AddCustomTilingData(N, 8),
                       chip=cluster.chip)
        assert res.chip.name == cluster.chip.name and res.us == alone.us > 0
        zs.append(z)
        kernel_us.append(res.us)
    assert comm.timeline.clock_us == pytest.approx(kernel_us)
    ar = comm.AllReduce(zs)
    np.testing.assert_array_equal(ar.outputs[1], zs[0] + zs[1])
    assert max(comm.timeline.clock_us) == pytest.approx(max(kernel_us) + ar.time_us)
    assert [e.kind for e in comm.timeline.of(0)][0] == "compute"


def test_launch_on_a_missing_rank():
    comm = HcclComm(atlas_800t_a2(npus_per_server=2))
    with pytest.raises(HcclError, match="rank 2 does not exist"):
        launch_on(comm.timeline, 2, add_custom, 8, *shard(0), AddCustomTilingData(N, 8))
