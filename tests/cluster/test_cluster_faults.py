"""Faults: a rank killed mid-step, restart of all ranks from the snapshot, identical weights; goodput."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim.cluster.ddp import DistributedDataParallel
from ascend_sim.cluster.errors import HcclError
from ascend_sim.cluster.faults import RankFailed, run_with_recovery
from ascend_sim.cluster.goodput import daly_interval, goodput, simulate_goodput, young_interval
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.loop import Trainer
from ascend_sim.cluster.mlp import TinyMLP
from ascend_sim.cluster.topology import atlas_800t_a2

RNG = np.random.default_rng(7)
X, Y = RNG.standard_normal((96, 16)).astype(np.float32), RNG.integers(0, 10, 96)


def make():
    comm = HcclComm(atlas_800t_a2(npus_per_server=4))
    return Trainer(DistributedDataParallel([TinyMLP(seed=r) for r in range(4)], comm), X, Y, 8, lr=0.05,
                   noise=0.1)                                   # 3 steps per epoch: restarts cross epochs


def params(tr):
    return {n: p.copy() for n, p in tr.ddp.replicas[0].parameters()}


def test_recovered_run_ends_bit_identical_to_an_uninterrupted_one():
    clean, clean_log = run_with_recovery(make, 14, checkpoint_every=4)
    tr, log = run_with_recovery(make, 14, checkpoint_every=4, failures={6: 2, 13: 0})
    assert log.failures == [(6, 2, 4), (13, 0, 12)] and log.redone_steps == 3
    assert "rank 2 died in step 6" in log.messages[0] and "HCCL_EXEC_TIMEOUT" in log.messages[0]
    for name, p in params(clean).items():
        np.testing.assert_array_equal(params(tr)[name], p)
    for rep in tr.ddp.replicas[1:]:
        for name, p in rep.parameters():
            np.testing.assert_array_equal(p, tr.ddp.replicas[0].params[name])
    assert tr.step == 14 and tr.epoch == 4
    # simulated wall time: the clean run's, plus 3 redone steps, plus per failure a timeout, a restart and the
    # restarted DDP's broadcast of rank 0's parameters
    bcast = max(make().ddp.comm.timeline.clock_us)
    per_step = (clean_log.wall_us - bcast) / 14
    want = clean_log.wall_us + 3 * per_step + 2 * ((1800 + 60) * 1e6 + bcast)
    assert bcast > 0 and log.wall_us == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("forget", ["velocity", "rng", "step"])
def test_a_snapshot_missing_any_part_does_not_reproduce_the_run(forget):
    clean, _ = run_with_recovery(make, 10, checkpoint_every=5)

    def lossy():
        tr = make()
        real = tr.load_state_dict

        def load(state):
            state = dict(state)
            fresh = make().state_dict()
            state[forget] = fresh[forget] if forget != "step" else state["step"] - 1
            real(state)
        tr.load_state_dict = load
        return tr
    tr, _ = run_with_recovery(lossy, 10, checkpoint_every=5, failures={7: 1})
    assert any(not np.array_equal(params(tr)[n], p) for n, p in params(clean).items())


def test_failures_beyond_max_restarts_propagate():
    with pytest.raises(RankFailed, match="rank 3 died in step 2"):
        run_with_recovery(make, 6, 2, failures={1: 0, 2: 3}, max_restarts=1)
    with pytest.raises(HcclError, match="checkpoint_every=0"):
        run_with_recovery(make, 6, 0)


def test_goodput_formula_matches_simulation_and_its_optimum_is_daly():
    C, R, M = 60.0, 120.0, 4 * 3600.0               # 1 min checkpoint, 2 min restart, 4 h MTBF
    for tau in (300.0, young_interval(C, M), 7200.0):
        assert simulate_goodput(tau, C, R, M) == pytest.approx(goodput(tau, C, R, M), rel=0.01)
    taus = np.linspace(60, 8000, 4000)
    best = taus[np.argmax(goodput(taus, C, R, M))]
    assert best == pytest.approx(daly_interval(C, M), rel=0.01)
    assert young_interval(C, M) == pytest.approx(1314.5, abs=0.1) and abs(best - 1314.5) / 1314.5 < 0.05
    assert goodput(best, C, R, M) > goodput(300.0, C, R, M) > goodput(7200.0, C, R, M)
    with pytest.raises(HcclError, match="M=0"):
        goodput(100, C, R, 0)
