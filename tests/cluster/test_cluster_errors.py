"""Every bad cluster or collective argument raises HcclError: the rule, the numbers, the fix, at the caller's line."""
from __future__ import annotations

import os

import numpy as np
import pytest

from ascend_sim import KernelError
from ascend_sim.cluster.errors import HcclError
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.topology import atlas_800_910, atlas_800t_a2

HERE = os.path.basename(__file__)
COMM = HcclComm(atlas_800t_a2(npus_per_server=6), hccl_algo="")
X = [np.ones(12, np.float32)] * 6


def raises(fn, *words):
    with pytest.raises(HcclError) as e:
        fn()
    err = e.value
    assert isinstance(err, KernelError) and err.fix
    assert os.path.basename(err.site[0]) == HERE, err.site      # the learner's line, not the simulator's
    for w in words:
        assert w in str(err), (w, str(err))
    return err


def test_bad_buffers():
    raises(lambda: COMM.AllReduce(X[:5]), "6 ranks", "got 5 items")
    raises(lambda: COMM.AllReduce(np.ones((6, 12), np.float32)), "one array")
    raises(lambda: COMM.AllReduce(X[:5] + [np.ones(11, np.float32)]), "rank 5", "[11]", "[12]")
    raises(lambda: COMM.AllReduce(X[:5] + [np.ones(12, np.float16)]), "rank 5", "float16")
    raises(lambda: COMM.AllReduce([np.ones(12)] * 6), "float64", "fp32")
    raises(lambda: COMM.ReduceScatter([np.ones(13, np.float32)] * 6), "13 elements", "13 % 6 = 1")
    raises(lambda: COMM.AlltoAll([np.ones(8, np.int32)] * 6), "8 % 6 = 2")


def test_bad_op_root_and_algorithm():
    raises(lambda: COMM.AllReduce(X, op="mean"), "'mean'", "sum")
    raises(lambda: COMM.Broadcast(X, root=6), "root=6", "0..5")
    raises(lambda: COMM.estimate("Reduce", 4, root=-1), "root=-1")
    raises(lambda: COMM.AllGather(X, algo="rhd"), "power-of-two", "there are 6")
    raises(lambda: COMM.AlltoAll(X, algo="rhd"), "AlltoAll")
    raises(lambda: COMM.AllReduce(X, algo="tree"), "'tree'")
    raises(lambda: COMM.estimate("AllToAllV", 4), "AllToAllV")
    raises(lambda: COMM.estimate("AllReduce", 4, dtype="fp64"), "fp64")
    raises(lambda: COMM.estimate("AllReduce", 0), "count=0")


def test_bad_ranks_and_clusters():
    raises(lambda: COMM.Send(X[0], 0, 0), "itself")
    raises(lambda: COMM.Send(X[0], 0, 9), "rank 9", "0..5")
    raises(lambda: atlas_800t_a2(npus_per_server=9), "1 to 8")
    raises(lambda: atlas_800_910(npus_per_server=3), "1, 2, 4 or 8")
    raises(lambda: atlas_800t_a2(servers=0), "servers=0")


def test_bad_hccl_algo():
    raises(lambda: HcclComm(atlas_800t_a2(), hccl_algo="level0:ring;level1:ring"), "level0 only accepts NA")
    raises(lambda: HcclComm(atlas_800t_a2(), hccl_algo="level0:NA;level1:NHR"), "does not model")
    raises(lambda: HcclComm(atlas_800t_a2(), hccl_algo="level0:NA;level1:fast"), "'fast'")
    raises(lambda: HcclComm(atlas_800t_a2(), hccl_algo="ring"), "'ring'", "level0:NA;level1:ring")
    raises(lambda: HcclComm(atlas_800t_a2(), hccl_algo="allreduse=level0:NA;level1:ring"), "'allreduse'")
    comm = HcclComm(atlas_800t_a2(servers=3), hccl_algo="level0:NA;level1:H-D_R")
    raises(lambda: comm.estimate("AllGather", 64), "3 domains")


def test_ddp_jobs_and_the_real_engine_reject_bad_requests_with_the_fix(monkeypatch):
    from ascend_sim.cluster import gloo
    from ascend_sim.cluster.ddp_job import DDPJob
    from ascend_sim.cluster.errors import DataParallelError, HcclError
    with pytest.raises(DataParallelError, match="less than one batch of 16") as e:
        DDPJob(world_size=4, images=32)
    assert "at least 64 images" in e.value.fix
    monkeypatch.setattr(gloo, "available", lambda: True)
    with pytest.raises(HcclError, match="no rank 5 in step 1"):
        gloo.run_gloo(DDPJob(world_size=2), kill=(5, 1))
    monkeypatch.setattr(gloo, "available", lambda: False)
    with pytest.raises(HcclError, match="needs torch") as e:
        gloo.run_gloo(DDPJob(world_size=2))
    assert "[distributed]" in e.value.fix
