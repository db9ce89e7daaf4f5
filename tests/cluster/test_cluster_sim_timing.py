"""LeNet-5 DDP on the simulated cluster with the simulator's compute times, and gradient consistency on it."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim.cluster import atlas_800_910, atlas_800t_a2
from ascend_sim.cluster.ddp_job import DDPJob, job_data
from ascend_sim.cluster.lenet_train import LeNet5Train
from ascend_sim.cluster.resnet_train import SmallResNet
from ascend_sim.cluster.sim_timing import (BACKWARD_FACTOR, conv_us_per_mac, lenet_backward_us, lenet_ddp_timed,
                                         lenet_forward_us, resnet_ddp_timed)


@pytest.fixture(scope="module")
def fwd910b():
    return lenet_forward_us(16, atlas_800t_a2(1).chip)


def test_backward_times_come_from_the_simulated_forward_kernels(fwd910b):
    assert {"conv1", "pool1", "fc3", "softmax"} <= set(fwd910b) and all(v >= 0 for v in fwd910b.values())
    back = dict(zip(LeNet5Train.names(), lenet_backward_us(fwd910b)))
    assert back["conv2.weight"] == BACKWARD_FACTOR * (fwd910b["conv2"] + fwd910b["relu2"] + fwd910b["pool2"])
    assert back["fc1.bias"] == 0.0 and back["conv1.weight"] > 0
    assert lenet_forward_us(16, atlas_800_910(1).chip) != fwd910b        # another chip, other kernel times


def test_ddp_gradients_equal_the_single_process_gradient_and_replicas_stay_identical(fwd910b):
    rep = lenet_ddp_timed(DDPJob(world_size=4, batch_per_rank=8, steps=2, images=64))
    assert rep.max_grad_error < 1e-6 and rep.replicas_identical
    assert rep.forward_us == pytest.approx(sum(lenet_forward_us(8, atlas_800t_a2(1).chip).values()))
    for step, exposed in zip(rep.step_us, rep.exposed_comm_us):
        assert step == pytest.approx(rep.forward_us + rep.compute_us + exposed) and exposed > 0
    assert rep.images_per_s == pytest.approx(4 * 8 / (np.mean(rep.step_us) * 1e-6))


def test_small_resnet_ddp_is_consistent_and_timed_from_the_conv_kernel():
    rep = resnet_ddp_timed(DDPJob(world_size=2, batch_per_rank=4, steps=2, images=16))
    assert rep.max_grad_error < 1e-5 and rep.replicas_identical       # bias gradients sum 28 x 28 x 8 terms
    rate = conv_us_per_mac(4, atlas_800t_a2(1).chip)
    macs = SmallResNet(8, 0).macs()
    assert rep.forward_us == pytest.approx(rate * 4 * sum(macs.values()))
    assert rep.compute_us == pytest.approx(BACKWARD_FACTOR * rep.forward_us)


def test_small_resnet_backward_matches_torch_autograd():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F
    model = SmallResNet(8, seed=1)
    x, y = job_data(DDPJob(world_size=1, images=8, batch_per_rank=8))
    loss, grads = model.loss_and_grads(x, y)
    P = {k: torch.tensor(v, requires_grad=True) for k, v in model.params.items()}

    def conv(a, n):
        return F.conv2d(a, P[n + ".weight"], P[n + ".bias"], padding=1)

    def block(a, n):
        return F.relu(conv(F.relu(conv(a, n + ".conv1")), n + ".conv2") + a)

    a = F.max_pool2d(block(F.relu(conv(torch.tensor(x), "stem")), "block1"), 2)
    z = block(a, "block2").mean((2, 3)) @ P["fc.weight"].T + P["fc.bias"]
    ref = F.cross_entropy(z, torch.tensor(y))
    ref.backward()
    assert loss == pytest.approx(float(ref.detach()), rel=1e-6)
    for name, g in grads.items():
        np.testing.assert_allclose(g, P[name].grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
