"""Mixed precision (fp16/bf16 compute, fp32 masters, dynamic loss scaling), gradient accumulation, 2:4 compression."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim.cluster import HcclComm, TinyMLP, atlas_800t_a2
from ascend_sim.cluster.compress import bytes_sent
from ascend_sim.cluster.ddp import DistributedDataParallel
from ascend_sim.cluster.errors import PipelineError
from ascend_sim.cluster.hooks import GradBucket
from ascend_sim.cluster.loss_scale import DynamicLossScaler
from ascend_sim.cluster.mixed_precision import MixedPrecisionMLP, train
from ascend_sim.cluster.sparse24 import Sparse24State, sparse24_bytes, sparse24_hook

F32 = np.float32


def blobs(n, seed=0):
    rng = np.random.default_rng(seed)
    centers = np.random.default_rng(99).standard_normal((10, 16)).astype(F32)
    y = rng.integers(0, 10, n)
    return (centers[y] + rng.standard_normal((n, 16))).astype(F32), y


def accuracy(model, n=1000):
    x, y = blobs(n, seed=7)
    return float(np.mean(model.predict(x) == y))


# --- the loss scaler: torch GradScaler's rules -------------------------------------------------------------
def test_scaler_backs_off_on_overflow_and_grows_after_clean_steps():
    s = DynamicLossScaler(init_scale=1024, growth_interval=3)
    for inf in (False, False, True, False, False, False, False):
        s.update(inf)
    assert [sc for sc, _ in s.history] == [1024, 1024, 1024, 512, 512, 512, 1024]
    assert s.scale == 1024 and s.skipped == 1


def test_scaler_matches_torch_gradscaler():
    torch = pytest.importorskip("torch")
    ours = DynamicLossScaler(init_scale=256.0, growth_interval=2)
    theirs = torch.amp.GradScaler("cpu", init_scale=256.0, growth_interval=2)
    w = torch.nn.Parameter(torch.ones(3))
    opt = torch.optim.SGD([w], lr=0.1)
    for step, inf in enumerate([False, True, True, False, False, False, True, False]):
        opt.zero_grad()
        theirs.scale((w * (float("inf") if inf else 1.0)).sum()).backward()
        before = w.detach().clone()
        theirs.step(opt)
        theirs.update()
        g, found = ours.unscale({"w": np.full(3, np.inf if inf else ours.scale, F32)})
        ours.update(found)
        assert found == inf and bool(torch.equal(before, w.detach())) == inf, step
        assert ours.scale == theirs.get_scale(), step


def test_an_injected_overflow_skips_the_step_and_halves_the_scale():
    x, y = blobs(512)
    m = MixedPrecisionMLP(compute="fp16")
    s = DynamicLossScaler(2.0 ** 10, growth_interval=100)
    train(m, x, y, 2, 64, 0.5, s)
    before = {k: v.copy() for k, v in m.params.items()}
    log = train(m, x, y, 1, 64, 0.5, s, inject_overflow=(0,))
    assert log.skipped == [0] and s.scale == 2.0 ** 9
    for k in before:
        np.testing.assert_array_equal(m.params[k], before[k])   # a skipped step changes nothing


def test_loss_scaling_rescues_a_run_that_underflows_in_fp16():
    x, y = blobs(4096)
    G = 2 ** 25                        # the loss is a mean over 32M tokens: (p - y) / G < 2^-24 flushes in fp16
    runs = {}
    for name, kw, scaler in [("fp32", dict(compute="fp32"), None), ("pure fp16", dict(compute="fp16", pure=True), None),
                             ("fp16, no scaling", dict(compute="fp16"), None),
                             ("fp16 + scaler", dict(compute="fp16"), DynamicLossScaler(2.0 ** 16, growth_interval=10)),
                             ("bf16", dict(compute="bf16"), None)]:
        m = MixedPrecisionMLP(seed=0, **kw)
        log = train(m, x, y, 40, 256, 0.5, scaler, global_tokens=G)
        runs[name] = (accuracy(m), log)
    assert runs["fp32"][0] > 0.85
    assert runs["pure fp16"][0] < 0.3 and runs["fp16, no scaling"][0] < 0.3        # every gradient flushed
    assert min(runs["pure fp16"][1].zero_grad_share) == 1.0
    assert abs(runs["fp16 + scaler"][0] - runs["fp32"][0]) < 0.02                  # rescued
    assert abs(runs["bf16"][0] - runs["fp32"][0]) < 0.02                           # fp32's exponent range


def test_a_too_large_scale_overflows_then_backs_off():
    x, y = blobs(2048)
    s = DynamicLossScaler(2.0 ** 40, growth_interval=1000)
    m = MixedPrecisionMLP(compute="fp16")
    log = train(m, x, y, 30, 256, 0.5, s, global_tokens=2 ** 25)
    assert log.skipped[:3] == [0, 1, 2] and 3 <= len(log.skipped) < 12
    assert s.scale < 2.0 ** 40 and accuracy(m) > 0.8


def test_pure_fp16_loses_small_updates_fp32_masters_keep_them():
    x, y = blobs(2048)
    pure, mixed = MixedPrecisionMLP(compute="fp16", pure=True), MixedPrecisionMLP(compute="fp16")
    w0 = mixed.params["fc1.weight"].copy()
    train(pure, x, y, 20, 256, 1e-4, None)
    train(mixed, x, y, 20, 256, 1e-4, DynamicLossScaler(2.0 ** 8))
    moved_pure = np.mean(pure.params["fc1.weight"] != w0.astype(np.float16))          # share of weights that moved
    moved_mixed = np.mean(mixed.params["fc1.weight"].astype(np.float16) != w0.astype(np.float16))
    assert moved_mixed > 0.3 and moved_pure < moved_mixed / 5            # measured 0.41 and 0.02


def test_bad_scaler_settings():
    with pytest.raises(PipelineError, match="cannot adapt"):
        DynamicLossScaler(backoff_factor=2.0)
    with pytest.raises(PipelineError, match="compute="):
        MixedPrecisionMLP(compute="fp8")


# --- gradient accumulation with no_sync --------------------------------------------------------------------
@pytest.mark.parametrize("world,k", [(2, 4), (4, 2)])
def test_no_sync_accumulation_equals_the_big_batch(world, k):
    x, y = blobs(world * k * 16, seed=3)
    ddp = DistributedDataParallel([TinyMLP(seed=1) for _ in range(world)], HcclComm(atlas_800t_a2(1, world)))
    parts = [[(x[(r * k + j) * 16:(r * k + j + 1) * 16], y[(r * k + j) * 16:(r * k + j + 1) * 16])
              for r in range(world)] for j in range(k)]
    with ddp.no_sync():
        for j in range(k - 1):
            rep = ddp.backward(parts[j], grad_scale=1 / k)
            assert rep.bucket_done_us == []                     # no AllReduce inside no_sync
    sent_before = bytes_sent(ddp.comm)
    ddp.backward(parts[-1], grad_scale=1 / k)
    assert bytes_sent(ddp.comm) > sent_before                # one AllReduce for the k micro-batches
    _, ref = TinyMLP(seed=1).loss_and_grads(x, y)
    for name in ref:
        np.testing.assert_allclose(ddp.grads[0][name], ref[name], rtol=1e-5, atol=1e-7, err_msg=name)
    # the check can fail: forgetting grad_scale=1/k gives k times the gradient
    assert not np.allclose(ddp.grads[0]["fc1.weight"] * k, ref["fc1.weight"], rtol=1e-5, atol=1e-7)


# --- 2:4 sparsification hook -------------------------------------------------------------------------------
def bucket(bufs):
    comm = HcclComm(atlas_800t_a2(npus_per_server=len(bufs)))
    return GradBucket(0, [np.asarray(b, F32) for b in bufs], ["p"], comm, True, None)


def test_sparse24_by_hand_with_error_feedback():
    st = Sparse24State()
    b = bucket([[5, -1, 0.5, -4, 1, 2, 3, 0], [0, 3, -2, 1, 0, 0, 0, 6]])
    out = sparse24_hook(st, b)
    # rank 0's pattern: positions {0, 3} and {1, 2}; both ranks send their values there, averaged
    np.testing.assert_array_equal(out[0], F32([2.5, 0, 0, -1.5, 0, 1, 1.5, 0]))
    np.testing.assert_array_equal(out[1], out[0])
    np.testing.assert_array_equal(st.residuals[0][0], F32([0, -1, 0.5, 0, 1, 0, 0, 0]))
    np.testing.assert_array_equal(st.residuals[0][1], F32([0, 3, -2, 0, 0, 0, 0, 6]))     # kept for the next step
    out = sparse24_hook(st, bucket([[0] * 8, [0] * 8]))                                 # the residuals come back
    np.testing.assert_array_equal(out[0], F32([0, 1, -0.75, 0, 0.5, 0, 0, 0]))    # rank 0's pattern: {1, 2}, {0, 1}
    assert st.residuals[0][1][7] == 6                                                # rank 1's 6 waits for its turn


def test_sparse24_moves_about_half_the_bytes_of_a_dense_allreduce_at_any_size():
    for p in (2, 4, 8):
        n = 4096
        dense = HcclComm(atlas_800t_a2(1, p))
        dense.AllReduce([np.zeros(n, F32)] * p)
        b = bucket([np.ones(n, F32)] * p)
        sparse24_hook(Sparse24State(), b)
        ratio = bytes_sent(b.comm) / bytes_sent(dense)
        assert 0.5 < ratio < 0.56, (p, ratio)       # n/2 values AllReduced + n/8 bytes broadcast


def test_sparse24_sends_1_88x_fewer_bytes_and_trains():
    assert 4 * 4096 / sparse24_bytes(4096) == pytest.approx(128 / 68)
    x, y = blobs(2048, seed=5)
    accs = {}
    for name, hook in [("plain", None), ("2:4", sparse24_hook)]:
        ddp = DistributedDataParallel([TinyMLP(seed=0) for _ in range(4)], HcclComm(atlas_800t_a2(1, 4)))
        if hook:
            ddp.register_comm_hook(Sparse24State(), hook)
        for s in range(60):
            i = (s * 128) % 2048
            ddp.backward([(x[i + 32 * r:i + 32 * (r + 1)], y[i + 32 * r:i + 32 * (r + 1)]) for r in range(4)])
            ddp.sgd_step(0.3)
        accs[name] = float(np.mean(ddp.replicas[0].predict(*blobs(1000, 7)[:1]) == blobs(1000, 7)[1]))
    assert accs["2:4"] > accs["plain"] - 0.03 and accs["plain"] > 0.8
