"""Pipeline parallelism on the real engine: DeepMLP over 2 and 4 gloo ranks equals one process (fp32)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch", reason="the distributed extra (torch CPU) is not installed")

from ascend_sim.cluster import HcclComm, atlas_800t_a2  # noqa: E402
from ascend_sim.cluster.pipeline_gloo import run_pipeline_gloo, torch_deep_mlp  # noqa: E402
from ascend_sim.cluster.pipeline_schedule import schedule  # noqa: E402
from ascend_sim.cluster.pipeline_train import DeepMLP, pipeline_step  # noqa: E402

TOL = dict(rtol=1e-5, atol=1e-6)          # fp32: summation order differs between micro-batched and whole batch


def single_process_torch(model, x, y):
    import torch
    import torch.nn.functional as F
    net = torch_deep_mlp(model)
    h = torch.from_numpy(x)
    for j, layer in enumerate(net.layers):
        h = layer(h)
        if j < model.depth - 1:
            h = F.relu(h)
    loss = F.cross_entropy(h, torch.from_numpy(y))
    loss.backward()
    return float(loss.detach()), {n: p.grad.numpy() for n, p in net.named_parameters()}


@pytest.mark.parametrize("world,m,name", [(2, 4, "1f1b"), (4, 8, "1f1b")])
def test_gloo_pipeline_equals_one_process_and_the_simulator(world, m, name):
    model = DeepMLP((12, 24, 24, 20, 10), seed=2)
    rng = np.random.default_rng(world)
    x = rng.standard_normal((4 * m, 12)).astype(np.float32)
    y = rng.integers(0, 10, 4 * m).astype(np.int64)
    ops = schedule(name, world, m)
    loss, grads = run_pipeline_gloo(model, x, y, ops, m, deadline_s=90)
    ref_loss, ref = single_process_torch(model, x, y)
    sim = pipeline_step(model, x, y, ops, m, HcclComm(atlas_800t_a2(1, npus_per_server=world)))
    assert loss == pytest.approx(ref_loss, rel=1e-6)
    for k in ref:
        np.testing.assert_allclose(grads[k], ref[k], **TOL, err_msg=k)
        np.testing.assert_allclose(sim.grads[k], grads[k], **TOL, err_msg=k)
    # the comparison can fail: a stage that forgets the 1/m of the batch mean is m times off
    assert not np.allclose(grads["layers.0.weight"] * m, ref["layers.0.weight"], **TOL)
