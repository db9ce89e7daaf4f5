"""ddp_debug: the first divergent parameter, the unused-parameter hang and the mismatched-bucket-order hang."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim.cluster.ddp import DistributedDataParallel
from ascend_sim.cluster.debug import check_bucket_order, ddp_debug, first_divergence
from ascend_sim.cluster.errors import DataParallelError
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.hooks import allreduce_hook
from ascend_sim.cluster.mlp import TinyMLP
from ascend_sim.cluster.topology import atlas_800t_a2


class Skips(TinyMLP):
    """A model whose forward does not use some parameters (their gradients never appear)."""

    def __init__(self, unused=(), **kw):
        super().__init__(**kw)
        self.unused = unused

    def loss_and_grads(self, x, y):
        loss, g = super().loss_and_grads(x, y)
        return loss, {k: v for k, v in g.items() if k not in self.unused}


def setup(world=4, models=None):
    comm = HcclComm(atlas_800t_a2(npus_per_server=world))
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8 * world, 16)).astype(np.float32), rng.integers(0, 10, 8 * world)
    return comm, models or [TinyMLP() for _ in range(world)], [(x[r::world], y[r::world]) for r in range(world)]


def test_a_healthy_step_passes_every_check():
    comm, reps, batches = setup()
    assert "bit-identical" in ddp_debug(reps, comm, batches)[-1]


def test_first_divergent_parameter_is_found():
    comm, reps, batches = setup()

    def local_on_rank_2(state, bucket):           # rank 2 "forgot" to all-reduce (e.g. no_sync on one rank)
        out = allreduce_hook(state, bucket)
        out[2] = bucket.buffers[2].copy()
        return out
    with pytest.raises(DataParallelError) as e:
        ddp_debug(reps, comm, batches, hook=local_on_rank_2)
    assert "gradients diverge" in str(e.value) and "fc1.weight: ranks [2]" in str(e.value) and e.value.fix
    a = [{"w": np.zeros(3), "b": np.zeros((2, 2))} for _ in range(3)]
    a[1]["b"][1, 0] = 0.5
    d = first_divergence(a, ["w", "b"])
    assert (d.parameter, d.ranks, d.max_abs_diff, d.first_index) == ("b", [1], 0.5, (1, 0))
    assert first_divergence(a[:1] + a[2:], ["w", "b"]) is None
    nan = [{"w": np.array([np.nan, 1.0])}, {"w": np.array([np.nan, 1.0])}, {"w": np.array([np.nan, 2.0])}]
    assert first_divergence(nan[:2], ["w"]) is None                  # the same NaN on every rank is no divergence
    assert first_divergence(nan, ["w"]).first_index == (1,)


def test_unused_parameter_on_one_rank_is_the_hang_torch_would_have():
    comm, _, batches = setup()
    reps = [Skips(("fc2.bias",) if r == 1 else ()) for r in range(4)]
    with pytest.raises(DataParallelError) as e:
        ddp_debug(reps, comm, batches)
    msg = str(e.value)
    for w in ("rank 1 computed no gradient for ['fc2.bias']", "ranks [0, 2, 3] wait", "Bucket 0",
              "HCCL_EXEC_TIMEOUT"):
        assert w in msg, (w, msg)
    assert "find_unused_parameters=True" in e.value.fix
    everyone = [Skips(("fc1.bias",)) for _ in range(4)]
    with pytest.raises(DataParallelError, match="no rank computed a gradient for \\['fc1.bias'\\]"):
        ddp_debug(everyone, comm, batches)
    assert ddp_debug(reps, comm, batches, find_unused_parameters=True)        # locally unused: zeros are averaged


def test_find_unused_parameters_averages_zeros_for_the_rank_that_skipped():
    comm, _, batches = setup()
    reps = [Skips(("fc2.bias",) if r == 1 else ()) for r in range(4)]
    ddp = DistributedDataParallel(reps, comm, find_unused_parameters=True)
    ddp.backward(batches)
    want = sum(TinyMLP().loss_and_grads(*batches[r])[1]["fc2.bias"] for r in (0, 2, 3)) / 4
    np.testing.assert_allclose(ddp.grads[1]["fc2.bias"], want, rtol=1e-6, atol=1e-8)


def test_mismatched_bucket_order():
    comm = HcclComm(atlas_800t_a2(npus_per_server=2))
    reps = [TinyMLP((256, 1024, 1024)) for _ in range(2)]    # fc2.weight (4 MB) closes bucket 0; then fc1.*
    batches = [(np.zeros((4, 256), np.float32), np.zeros(4, int))] * 2
    with pytest.raises(DataParallelError) as e:               # rank 1 reads another cap: fc1.bias closes alone
        ddp_debug(reps, comm, batches, bucket_cap_mb=[25, 0.001])
    msg = str(e.value)
    assert "AllReduce #1" in msg and "counts differ" in msg and "HCCL_EXEC_TIMEOUT" in msg and e.value.fix
    sizes = {"a": 4, "b": 4, "c": 2}
    err = check_bucket_order([[["a"], ["b", "c"]], [["b"], ["a", "c"]]], sizes)
    assert "AllReduce #0" in str(err) and "silently wrong" in str(err)
    assert check_bucket_order([[["a", "b"]], [["a", "b"]]], sizes) is None
