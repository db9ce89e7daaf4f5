"""Scaling model: step times from FLOPs and the collectives, efficiencies, the published anchors, memory."""
from __future__ import annotations

import pytest

from ascend_sim.cluster.cost import flops_us, peak_flops
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.memory import per_card, source_split
from ascend_sim.cluster.models_zoo import resnet50, source_resnet
from ascend_sim.cluster.scaling import (MINDSPORE_1DEV, MINDSPORE_8DEV, MINDSPORE_FUSION, cluster_of,
                                        efficiency_for, scaling, step)

R50 = resnet50()
EFF = efficiency_for(R50, "910", MINDSPORE_1DEV)


def test_resnet50_shapes_and_flops():
    assert R50.num_params == 25_557_032                            # torchvision's count
    assert R50.forward_macs == pytest.approx(4.09e9, rel=0.01)     # torchvision's 4.09 GMACs
    assert len(R50.params) == 161


def test_one_device_is_the_fitted_anchor_and_no_overlap_is_compute_plus_comm():
    one = step(R50, cluster_of("910", 1), 256, EFF)
    assert one.throughput == pytest.approx(MINDSPORE_1DEV, rel=1e-9)
    assert one.compute_us == pytest.approx(R50.train_flops * 256 / (EFF * peak_flops(cluster_of("910", 1).chip))
                                           * 1e6)
    c8 = cluster_of("910", 8)
    off = step(R50, c8, 256, EFF, overlap=False)
    whole = HcclComm(c8).estimate("AllReduce", R50.num_params).time_us    # buckets vs one AllReduce: alphas only
    assert off.step_us == pytest.approx(off.compute_us + off.comm_us)
    assert off.comm_us == pytest.approx(whole, rel=0.1) and off.comm_us > whole
    on = step(R50, c8, 256, EFF)
    assert off.compute_us < on.step_us < off.step_us
    fused = step(R50, c8, 256, EFF, overlap=False, fusion=MINDSPORE_FUSION)
    assert fused.comm_us < off.comm_us                                   # 3 AllReduces instead of DDP's buckets


def test_mindspore_resnet50_on_eight_910s_within_ten_percent():
    for kw in ({}, {"overlap": False}, {"fusion": MINDSPORE_FUSION}):
        rows = scaling(R50, "910", [1, 8], 256, EFF, strong=False, **kw)
        assert rows[1][0].throughput == pytest.approx(MINDSPORE_8DEV, rel=0.10)
        assert 0.9 < rows[1][1] <= 1.0


def test_strong_scaling_loses_efficiency_as_the_batch_per_device_shrinks():
    rows = scaling(R50, "a2", [1, 2, 4, 8, 16, 32, 64], 1024, EFF, strong=True)
    effs = [e for _, e in rows]
    assert effs[0] == 1.0 and effs[-1] < effs[3] < 1.0 and effs[-1] < 0.95
    weak = scaling(R50, "a2", [1, 8, 64], 64, EFF, strong=False)
    assert weak[2][1] > effs[-1]                                        # weak scaling keeps compute per device
    assert [s.devices for s, _ in rows] == [1, 2, 4, 8, 16, 32, 64] and cluster_of("a2", 64).servers == 8


def test_the_source_four_card_speedup_and_what_it_takes():
    src = source_resnet()
    speed = {}
    for label, kw in (("overlap", {}), ("fp16-no-overlap", {"overlap": False, "grad_dtype": "fp16"})):
        rows = scaling(src, "a2", [1, 4], 64, EFF, strong=False, **kw)
        speed[label] = rows[1][0].throughput / rows[0][0].throughput
    assert speed["fp16-no-overlap"] == pytest.approx(3.8, abs=0.05)
    assert speed["overlap"] > 3.85


def test_memory_what_halves_and_what_does_not():
    src = source_resnet()
    one, shard = per_card(src, 64), per_card(src, 64, source_split(src))
    assert shard.weights < 0.3 * one.weights                            # the cut convs hold most parameters
    assert shard.activations > 0.75 * one.activations                   # BN and ReLU outputs stay whole
    assert 0.6 < shard.total / one.total < 0.8                          # so not the claimed 50%
    assert per_card(src, 16).activations == pytest.approx(one.activations / 4)
    assert flops_us(cluster_of("a2", 1).chip, peak_flops(cluster_of("a2", 1).chip)) == pytest.approx(1e6)


def test_tensor_parallelism_stops_paying_once_it_leaves_the_server():
    from ascend_sim.cluster.tp_scaling import tp_mlp
    rows = {t: tp_mlp(t) for t in (1, 2, 8, 16)}
    assert rows[8].compute_us == pytest.approx(rows[1].compute_us / 8)
    assert rows[16].comm_us == pytest.approx(
        2 * HcclComm(cluster_of("a2", 16)).estimate("AllReduce", 8192 * 4096, "fp16").time_us)
    assert rows[16].comm_us > rows[8].comm_us                          # 16 spans two servers: RoCE
    eff = {t: rows[1].total_us / (t * r.total_us) for t, r in rows.items()}
    assert eff[8] > 0.7 and eff[16] < 0.55
