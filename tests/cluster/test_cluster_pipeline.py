"""Pipeline parallelism on the simulated cluster: schedules, bubble, activation memory, numerics."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim.cluster import HcclComm, atlas_800t_a2
from ascend_sim.cluster.errors import PipelineError
from ascend_sim.cluster.pipeline_schedule import analytic_bubble, one_f_one_b, schedule
from ascend_sim.cluster.pipeline_time import play
from ascend_sim.cluster.pipeline_train import DeepMLP, pipeline_step, stage_bounds

SLOW = 1e6          # microseconds per stage: links (2 us) are negligible, so the analytic bubble is exact


@pytest.mark.parametrize("name,chunks", [("gpipe", 1), ("1f1b", 1), ("interleaved", 2), ("interleaved", 4)])
@pytest.mark.parametrize("p,m", [(2, 4), (4, 8), (4, 16), (8, 8)])
def test_bubble_equals_the_analytic_fraction(name, chunks, p, m):
    ops = schedule(name, p, m, chunks)
    run = play(atlas_800t_a2(1), ops, m, SLOW / chunks, 2 * SLOW / chunks, 0, chunks=chunks)
    want = analytic_bubble(p, m, chunks)
    assert run.bubble == pytest.approx([want] * p, rel=1e-4)
    # the check can fail: the common slip (p-1)/(v m) is outside its tolerance
    assert run.mean_bubble != pytest.approx((p - 1) / (chunks * m), rel=1e-4)


def test_1f1b_keeps_p_minus_s_micro_batches_gpipe_keeps_all():
    p, m = 4, 12
    g = play(atlas_800t_a2(1), schedule("gpipe", p, m), m, 1000, 2000, 1024)
    f = play(atlas_800t_a2(1), schedule("1f1b", p, m), m, 1000, 2000, 1024)
    assert g.peak_in_flight == [m] * p
    assert f.peak_in_flight == [p - s for s in range(p)]
    assert f.peak_activation_bytes == [1024 * (p - s) for s in range(p)]
    assert g.step_us == pytest.approx(f.step_us, rel=0.02)        # same bubble, far less memory


def test_links_cost_time_roce_more_than_hccs():
    p, m, act = 4, 8, 64 << 20
    ops = schedule("1f1b", p, m)
    one_server = play(atlas_800t_a2(1), ops, m, 1000, 2000, act)
    free = play(atlas_800t_a2(1), ops, m, 1000, 2000, 0)
    two = atlas_800t_a2(2)
    # stages 0,1 on server 0 and 2,3 on server 1: the 1 -> 2 hop crosses RoCE
    import dataclasses
    spread = dataclasses.replace(two, devices=tuple(two.devices[i] for i in (0, 1, 8, 9)))
    spread = dataclasses.replace(spread, devices=tuple(dataclasses.replace(d, rank=r) for r, d in enumerate(spread.devices)))
    cross = play(spread, ops, m, 1000, 2000, act)
    assert free.step_us < one_server.step_us < cross.step_us
    assert one_server.messages == cross.messages == 2 * (p - 1) * m
    sends = [e for e in one_server.timeline.events if e.kind == "send"]
    hccs = atlas_800t_a2(1).intra
    assert sends[0].end_us - sends[0].start_us == pytest.approx(hccs.alpha_us + act * hccs.beta_s_per_byte * 1e6)


@pytest.mark.parametrize("p,m,name", [(2, 4, "1f1b"), (4, 4, "gpipe"), (4, 8, "1f1b"), (3, 6, "1f1b")])
def test_pipeline_gradients_equal_one_device(p, m, name):
    model = DeepMLP((12, 24, 24, 20, 16, 10), seed=1)
    rng = np.random.default_rng(p * 10 + m)
    x = rng.standard_normal((8 * m, 12)).astype(np.float32)
    y = rng.integers(0, 10, 8 * m)
    comm = HcclComm(atlas_800t_a2(1, npus_per_server=p) if p in (1, 2, 4, 8) else atlas_800t_a2(1))
    step = pipeline_step(model, x, y, schedule(name, p, m), m, comm)
    loss, ref = model.loss_and_grads(x, y)
    assert step.loss == pytest.approx(loss, rel=1e-6)
    for k in ref:
        np.testing.assert_allclose(step.grads[k], ref[k], rtol=1e-5, atol=1e-6, err_msg=k)
    # the comparison can fail: forgetting the 1/m of the batch mean is far outside it
    assert not np.allclose(step.grads["layers.0.weight"] * m, ref["layers.0.weight"], rtol=1e-5, atol=1e-6)


def test_stage_bounds_split_layers_evenly():
    assert stage_bounds(5, 2) == [(0, 3), (3, 5)]
    assert stage_bounds(4, 4) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    with pytest.raises(PipelineError, match="at least one layer"):
        stage_bounds(3, 4)


@pytest.mark.parametrize("ops,match", [
    ([[("B", 0, 0), ("F", 0, 0)], [("F", 0, 0), ("B", 0, 0)]], "before its forward"),
    ([[("F", 0, 0)], [("F", 0, 0), ("B", 0, 0)]], "never runs"),
    ([[("F", 0, 0), ("F", 0, 0), ("B", 0, 0)], [("F", 0, 0), ("B", 0, 0)]], "twice"),
])
def test_malformed_schedules_are_refused(ops, match):
    with pytest.raises(PipelineError, match=match):
        play(atlas_800t_a2(1), ops, 1, 1, 2, 0)


def test_a_schedule_that_deadlocks_names_the_stage():
    ops = one_f_one_b(2, 2)
    ops[1] = [("F", 1, 0), ("B", 1, 0), ("F", 0, 0), ("B", 0, 0)]     # waits for micro-batch 1 first: fine
    play(atlas_800t_a2(1), ops, 2, 1, 2, 0)
    ops[0] = [("F", 0, 0), ("B", 0, 0), ("F", 1, 0), ("B", 1, 0)]     # stage 0 waits for B0, stage 1 for F1
    with pytest.raises(PipelineError, match="deadlock: stage"):
        play(atlas_800t_a2(1), ops, 2, 1, 2, 0)


def test_interleaving_needs_a_multiple_of_p():
    with pytest.raises(PipelineError, match="multiple of 4"):
        schedule("interleaved", 4, 6, 2)
