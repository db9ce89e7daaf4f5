"""The hybrid planner: layouts, memory, time from the simulator's costs, the pick, MindSpore strategies."""
from __future__ import annotations

import pytest

from ascend_sim.cluster import atlas_800t_a2
from ascend_sim.cluster.errors import PipelineError, ShardError
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.planner import (BYTES_PER_PARAM, GB, RESERVE_BYTES, Transformer, from_shard, layouts,
                                        llama_7b, pick, plan, plan_all)


def test_7b_has_about_7b_parameters_and_pure_dp_does_not_fit():
    m = llama_7b()
    assert 6.5e9 < m.params < 7.0e9
    p = plan(m, atlas_800t_a2(2), 16, 1, 1, 64)
    assert p.state_bytes == BYTES_PER_PARAM * m.params             # every device holds all 16 bytes per parameter
    assert not p.fits and p.memory_bytes > 100 * GB


def test_memory_shrinks_with_tp_and_pp_as_accounted():
    m = llama_7b()
    c = atlas_800t_a2(2)
    a = plan(m, c, 4, 2, 2, 64)
    assert a.state_bytes == pytest.approx(16 * m.params / 4)
    mb = a.micro_batches
    assert a.activation_bytes == pytest.approx(min(2, mb) * 16 * m.seq * m.hidden * (10 + 24 / 2))
    assert a.memory_bytes == pytest.approx(a.state_bytes + a.activation_bytes + RESERVE_BYTES)


def test_times_come_from_the_collectives_and_the_pipeline():
    m = llama_7b()
    c = atlas_800t_a2(2)
    tp = plan(m, c, 2, 8, 1, 64)
    ar = HcclComm(atlas_800t_a2(1)).estimate("AllReduce", m.seq * m.hidden, "fp16").time_us
    assert tp.tp_comm_us == pytest.approx(tp.micro_batches * 4 * m.layers * ar)     # 4 AllReduces per layer
    one = plan(m, c, 16, 1, 1, 64)
    pp = plan(m, c, 4, 1, 4, 64)
    assert one.compute_us == pytest.approx(pp.compute_us)
    # the pipeline's extra time over its compute is the 1F1B bubble (plus p2p), about (p-1)/m of a step
    per_mb = pp.compute_us / pp.micro_batches
    assert pp.pipeline_us == pytest.approx(pp.compute_us + (pp.pp - 1) * per_mb, rel=0.01)


@pytest.mark.parametrize("servers,batch", [(2, 64), (8, 256)])
def test_the_pick_fits_and_is_the_fastest_that_fits(servers, batch):
    plans = plan_all(llama_7b(), servers, batch)
    best = pick(plans)
    assert best.fits and best.memory_bytes <= 64 * GB
    assert all(best.step_us <= p.step_us for p in plans if p.fits)
    assert any(not p.fits and p.step_us < best.step_us for p in plans)     # a faster layout exists but does not fit
    assert {(p.dp, p.tp, p.pp) for p in plans} == set(layouts(llama_7b(), 8 * servers, batch))


def test_no_layout_fits_names_the_memory():
    huge = Transformer("1T", 128, 25600, 160, 2048, 50000)
    with pytest.raises(PipelineError, match="no layout fits"):
        pick(plan_all(huge, 1, 8))
    with pytest.raises(PipelineError, match="does not fit"):
        plan(llama_7b(), atlas_800t_a2(1), 3, 1, 1, 64)


def test_mindspore_strategies_map_onto_dp_tp():
    assert from_shard(((4, 1), (1, 1)), 4) == (4, 1, 1)      # the source's example 2: data parallelism
    assert from_shard(((1, 1), (4, 1)), 4) == (1, 4, 1)      # a real split of the output dimension
    assert from_shard(((2, 2), (2, 2)), 8) == (2, 4, 1)      # data x (column x row)
    assert from_shard(((1, 1), (4, 1)), 8) == (2, 4, 1)      # 2 repeats hold the same slice: data parallel
    with pytest.raises(ShardError):
        from_shard(((3, 1), (1, 1)), 4)
