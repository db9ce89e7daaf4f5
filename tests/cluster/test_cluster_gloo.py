"""The real engine: the same LeNet-5 DDP job on torch.distributed (gloo, spawned ranks) and on the simulated cluster.

Needs the ``distributed`` extra (torch CPU); CI installs it. Four spawned runs in all (world sizes 2 and 4), each with
a deadline, so a hang fails instead of blocking.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch", reason="the distributed extra (torch CPU) is not installed")

from ascend_sim.cluster import HcclComm, atlas_800t_a2  # noqa: E402
from ascend_sim.cluster.ddp_job import DDPJob, run_simulated  # noqa: E402
from ascend_sim.cluster import gloo  # noqa: E402
from ascend_sim.cluster.gloo import run_gloo  # noqa: E402
from ascend_sim.cluster.lenet_train import LeNet5Train  # noqa: E402

TOL = dict(rtol=1e-6, atol=1e-6)                     # fp32, as the issue asks
JOB2 = DDPJob(world_size=2, steps=4, images=256)
EPOCH4 = DDPJob(world_size=4, batch_per_rank=16, images=320, steps=5)   # one epoch: 320 / 4 / 16 = 5 steps


def probe(world: int) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(world)
    return [[rng.standard_normal(n).astype(np.float32) for n in (1, 7, 1000, 4099)] for _ in range(world)]


@pytest.fixture(scope="module")
def gloo2():
    return run_gloo(JOB2, probe=probe(2))


@pytest.fixture(scope="module")
def gloo4():
    return run_gloo(EPOCH4, probe=probe(4))


@pytest.mark.parametrize("world", [2, 4])
def test_allreduce_matches_the_simulated_hccl_allreduce(world, gloo2, gloo4):
    real = (gloo2 if world == 2 else gloo4).probe
    comm = HcclComm(atlas_800t_a2(1, npus_per_server=world))
    for i, arrays in enumerate(zip(*probe(world))):
        sim = comm.AllReduce(list(arrays)).outputs[0]
        np.testing.assert_allclose(real[i], sim, **TOL)
        assert not np.allclose(real[i], arrays[0], **TOL) or real[i].size == 0   # a sum, not rank 0's input


@pytest.mark.parametrize("world", [2, 4])
def test_every_step_gradient_matches_the_simulated_ddp(world, gloo2, gloo4):
    job, real = (JOB2, gloo2) if world == 2 else (EPOCH4, gloo4)
    sim = run_simulated(job)
    assert len(real.grads) == len(sim.grads) == job.steps
    for step, (g_real, g_sim) in enumerate(zip(real.grads, sim.grads)):
        for name in g_sim:
            np.testing.assert_allclose(g_real[name], g_sim[name], **TOL, err_msg=f"step {step} {name}")
    np.testing.assert_allclose(real.losses, sim.losses, rtol=1e-6)
    # the comparison can fail: a gradient one step late is far outside the tolerance
    assert not np.allclose(real.grads[1]["fc3.weight"], sim.grads[0]["fc3.weight"], **TOL)


def test_a_four_rank_epoch_ends_with_the_same_weights_on_both_engines(gloo4):
    sim = run_simulated(EPOCH4)
    for name, w in sim.params.items():
        np.testing.assert_allclose(gloo4.params[name], w, rtol=1e-5, atol=1e-6, err_msg=name)
    start = LeNet5Train(seed=EPOCH4.seed).params
    assert max(float(np.abs(w - start[name]).max()) for name, w in sim.params.items()) > 1e-3   # it trained


def test_a_rank_killed_mid_step_restarts_from_the_snapshot_and_ends_identical(gloo2):
    killed = run_gloo(JOB2, kill=(1, 2), probe=probe(2))   # rank 1 dies in step 2; snapshots every step
    assert killed.restarts == 1
    assert len(killed.failures) == 1 and "rank 1 exited with code" in killed.failures[0]   # why it restarted
    for got, want in zip(killed.probe, gloo2.probe):         # the probe AllReduce ran again after the restart
        np.testing.assert_array_equal(got, want)
    for name, w in gloo2.params.items():
        np.testing.assert_array_equal(killed.params[name], w, err_msg=name)


def test_a_failing_rank_leaves_its_traceback_for_the_launcher(tmp_path, monkeypatch):
    def broken(*args):
        raise ValueError("rank 3 broke on purpose")
    monkeypatch.setattr(gloo, "_train_rank", broken)
    out = str(tmp_path / "rank0.pkl")
    with pytest.raises(ValueError):
        gloo._train_worker(3, 4, 0, JOB2, out)
    assert "ValueError: rank 3 broke on purpose" in (tmp_path / "rank3.err").read_text()
