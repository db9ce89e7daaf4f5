"""Compression hooks: top-k and PowerSGD with error feedback, their bytes and times, and MNIST training accuracy."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim.cluster.compress import (PowerSGDState, TopKState, bytes_sent, compressed_bytes, compressed_time_us,
                                         powersgd_hook, topk_hook)
from ascend_sim.cluster.ddp import DistributedDataParallel
from ascend_sim.cluster.errors import DataParallelError
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.hooks import GradBucket
from ascend_sim.cluster.loop import Trainer
from ascend_sim.cluster.mlp import TinyMLP
from ascend_sim.cluster.topology import atlas_800t_a2
from ascend_sim.models.datasets import load_mnist_subset, normalize

F32 = np.float32


def bucket(bufs, shapes=None, comm=None):
    comm = comm or HcclComm(atlas_800t_a2(npus_per_server=len(bufs)))
    return GradBucket(0, [np.asarray(b, F32) for b in bufs], ["p"], comm, True, shapes)


def test_topk_by_hand_with_error_feedback():
    st = TopKState(ratio=0.4)                                    # k = 2 of 5
    out = topk_hook(st, bucket([[5, -1, 0.5, -4, 2], [0, 3, -2, 1, 6]]))
    np.testing.assert_array_equal(out[0], F32([5, 3, 0, -4, 6]) / F32(2))   # rank 0 sends {0, 3}, rank 1 {1, 4}
    np.testing.assert_array_equal(out[1], out[0])
    np.testing.assert_array_equal(st.residuals[0][0], F32([0, -1, 0.5, 0, 2]))
    np.testing.assert_array_equal(st.residuals[0][1], F32([0, 0, -2, 1, 0]))
    out = topk_hook(st, bucket([[0, 0, 0, 0, 0.1], [0, 0, 0, 0, 0]]))       # the residuals come back
    np.testing.assert_allclose(out[0], F32([0, -1, -2, 1, 2.1]) / 2, rtol=1e-6)   # {1, 4} and {2, 3}


def test_powersgd_recovers_a_rank_one_mean_and_error_feedback_keeps_the_sum():
    rng = np.random.default_rng(0)
    u = rng.standard_normal(12).astype(F32)
    ms = [np.outer(u, rng.standard_normal(8)).astype(F32) for _ in range(4)]
    out = powersgd_hook(PowerSGDState(rank=1), bucket([m.ravel() for m in ms], [(12, 8)]))
    np.testing.assert_allclose(out[2].reshape(12, 8), sum(ms) / 4, rtol=1e-4, atol=1e-5)
    # a rank-3 gradient, the same every step: with error feedback the updates add up to k * G anyway
    g = [rng.standard_normal((12, 8)).astype(F32) for _ in range(4)]
    mean = sum(g) / 4
    for ef in (True, False):
        st, comm, total = PowerSGDState(rank=1, error_feedback=ef), HcclComm(atlas_800t_a2(npus_per_server=4)), 0
        for _ in range(100):
            total = total + powersgd_hook(st, bucket([x.ravel() for x in g], [(12, 8)], comm))[0].reshape(12, 8)
        rel = np.linalg.norm(total - 100 * mean) / np.linalg.norm(100 * mean)
        assert (rel < 0.1) if ef else (rel > 0.3), (ef, rel)


def test_bytes_on_the_links_match_the_formulas():
    shapes = [(64, 196), (64,), (10, 64), (10,)]
    n = sum(int(np.prod(s)) for s in shapes)
    g = [np.random.default_rng(r).standard_normal(n).astype(F32) for r in range(4)]
    for method, hook, st in (("topk", topk_hook, TopKState(0.01)), ("powersgd", powersgd_hook, PowerSGDState(2))):
        comm = HcclComm(atlas_800t_a2(npus_per_server=4))
        hook(st, bucket(g, shapes, comm))
        # mesh AllGather: each rank sends its part to 3 peers; mesh AllReduce: 2 (p-1)/p of it (here p | each size)
        factor = 3 if method == "topk" else 2 * 3 / 4
        assert bytes_sent(comm) == pytest.approx(4 * factor * compressed_bytes(shapes, method, 0.01, 2), rel=0.01)
        assert comm.timeline.clock_us[0] == pytest.approx(compressed_time_us(comm, shapes, method, 0.01, 2))
    assert compressed_bytes(shapes, "fp32") == 4 * n == 2 * compressed_bytes(shapes, "fp16")
    assert compressed_bytes(shapes, "topk", 0.01) == 8 * round(0.01 * n)
    assert compressed_bytes(shapes, "powersgd", rank=2) == 4 * ((64 + 196) * 2 + 64 + (10 + 64) * 2 + 10)


def test_compression_saves_time_where_bytes_dominate():
    comm = HcclComm(atlas_800t_a2(servers=2))                       # 16 NPUs, RoCE between the servers
    shapes = [(4096, 4096), (4096,)]
    t = {m: compressed_time_us(comm, shapes, m, 0.01, 4) for m in ("fp32", "fp16", "topk", "powersgd")}
    assert t["powersgd"] < t["topk"] < t["fp16"] < t["fp32"]
    tiny = [(10, 32), (10,)]                                        # latency-bound: three AllReduces lose to one
    assert compressed_time_us(comm, tiny, "powersgd") > compressed_time_us(comm, tiny, "fp32")


def test_bad_compression_settings():
    with pytest.raises(DataParallelError, match="ratio=0"):
        TopKState(ratio=0)
    with pytest.raises(DataParallelError, match="rank=0"):
        PowerSGDState(rank=0)
    with pytest.raises(DataParallelError, match="'zip'"):
        compressed_bytes([(4,)], "zip")


def mnist():
    def feats(im):                                       # 14 x 14 average-pooled pixels: 196 features
        return normalize(im).reshape(len(im), 14, 2, 14, 2).mean((2, 4)).reshape(len(im), 196)
    (xi, yi), (xh, yh) = load_mnist_subset("train"), load_mnist_subset("heldout")
    return feats(xi), yi, feats(xh), yh


def train(hook, state, data):
    x, y, xt, yt = data
    comm = HcclComm(atlas_800t_a2(npus_per_server=4))
    ddp = DistributedDataParallel([TinyMLP((196, 32, 10), seed=0) for _ in range(4)], comm)
    if hook is not None:
        ddp.register_comm_hook(state, hook)
    comm.reset()
    tr = Trainer(ddp, x, y, 32, lr=0.05)
    for _ in range(2 * tr.steps_per_epoch):
        tr.train_step()
    return tr.accuracy(xt, yt), bytes_sent(comm)


def test_mnist_accuracy_against_uncompressed():
    data = mnist()
    base, base_bytes = train(None, None, data)
    assert base > 0.75
    runs = {name: train(hook, st, data) for name, hook, st in [
        ("topk", topk_hook, TopKState(0.01)), ("topk-no-ef", topk_hook, TopKState(0.01, error_feedback=False)),
        ("psgd", powersgd_hook, PowerSGDState(2)),
        ("psgd-no-ef", powersgd_hook, PowerSGDState(2, error_feedback=False))]}
    for name in ("topk", "psgd"):
        acc, sent = runs[name]
        assert acc >= base - 0.05, (name, acc, base)                    # within 5 points of uncompressed
        assert acc > runs[f"{name}-no-ef"][0] + 0.05                     # error feedback is what keeps it
        assert sent * 10 < base_bytes                                    # 10x fewer bytes at least
