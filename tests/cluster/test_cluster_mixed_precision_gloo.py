"""On gloo (2 and 4 ranks): no_sync accumulation equals the big batch and the simulator; GradScaler under DDP skips an
overflow on one rank on every rank, with the scale history of our DynamicLossScaler."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch", reason="the distributed extra (torch CPU) is not installed")

from ascend_sim.cluster import HcclComm, TinyMLP, atlas_800t_a2  # noqa: E402
from ascend_sim.cluster.ddp import DistributedDataParallel  # noqa: E402
from ascend_sim.cluster.loss_scale import DynamicLossScaler  # noqa: E402
from ascend_sim.cluster.mixed_precision_gloo import run_mixed_precision_gloo  # noqa: E402

K, MB = 3, 8


@pytest.fixture(scope="module", params=[2, 4])
def real(request):
    world = request.param
    rng = np.random.default_rng(4)
    x = rng.standard_normal((192, 16)).astype(np.float32)
    y = rng.integers(0, 10, 192)
    return world, x, y, run_mixed_precision_gloo(x, y, world, K, MB, steps=8, inject_steps=(2, 3),
                                                 inject_rank=world - 1, init_scale=2.0 ** 10, growth_interval=2)


def test_no_sync_accumulation_on_gloo_equals_the_big_batch_and_the_simulator(real):
    WORLD, x, y, ranks = real
    n = WORLD * K * MB
    _, big = TinyMLP(seed=0).loss_and_grads(x[:n], y[:n])
    ddp = DistributedDataParallel([TinyMLP(seed=0) for _ in range(WORLD)], HcclComm(atlas_800t_a2(1, WORLD)))
    parts = [[(x[(r * K + j) * MB:(r * K + j + 1) * MB], y[(r * K + j) * MB:(r * K + j + 1) * MB])
              for r in range(WORLD)] for j in range(K)]
    with ddp.no_sync():
        for j in range(K - 1):
            ddp.backward(parts[j], grad_scale=1 / K)
    ddp.backward(parts[-1], grad_scale=1 / K)
    for name in big:
        for r in range(WORLD):
            np.testing.assert_allclose(ranks[r]["accumulated"][name], big[name], rtol=1e-5, atol=1e-7, err_msg=name)
        np.testing.assert_allclose(ddp.grads[0][name], ranks[0]["accumulated"][name], rtol=1e-5, atol=1e-7)
    # the check can fail: one micro-batch's gradient alone is far from the big batch's
    assert not np.allclose(ranks[0]["accumulated"]["fc1.weight"] / K, big["fc1.weight"], rtol=1e-5, atol=1e-7)


def test_an_overflow_on_one_rank_skips_the_step_on_every_rank(real):
    world, _, _, ranks = real
    ours = DynamicLossScaler(init_scale=2.0 ** 10, growth_interval=2)
    want = []
    for step in range(8):
        want.append(ours.scale)
        ours.update(step in (2, 3))
    for r in range(world):                                       # 1024, 1024, 2048, 1024, 512, 512, 1024, 1024
        assert ranks[r]["scales"] == want, r
        for name, p in ranks[0]["params"].items():
            np.testing.assert_array_equal(p, ranks[r]["params"][name])   # the replicas stayed identical
