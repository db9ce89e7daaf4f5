"""DDP over the simulated collectives: torch's buckets, the gradient-consistency check (梯度一致性), overlap."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim.cluster.ddp import MB, DistributedDataParallel, bucket_assignment
from ascend_sim.cluster.errors import DataParallelError
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.mlp import TinyMLP
from ascend_sim.cluster.sampler import DistributedSampler
from ascend_sim.cluster.topology import atlas_800_910, atlas_800t_a2

SIZES = [4 * MB, 100, 30 * MB, 2 * MB, MB // 2, 600 * 1024]


def test_buckets_by_hand():
    # reverse order: 5 (0.59 MB) + 4 (0.5 MB) >= 1 MB closes bucket 0; 3 + 2 = 32 MB >= 25 MB; 1 + 0 is left over
    assert bucket_assignment(SIZES) == [[5, 4], [3, 2], [1, 0]]
    # first limit 1 byte: 5 alone; then 1 MB: 4 (0.5 MB) needs 3 to close; 2 alone; 1 + 0
    assert bucket_assignment(SIZES, bucket_cap_mb=1, first_bucket_bytes=1) == [[5], [4, 3], [2], [1, 0]]


def test_buckets_match_torch():
    torch = pytest.importorskip("torch", reason="torch is optional; the hand-derived buckets above always run")
    import torch.distributed as dist
    rng = np.random.default_rng(0)
    for trial in range(30):
        sizes = [int(s) * 4 for s in rng.integers(1, 3 * MB // 4, rng.integers(1, 40))]
        cap = float(rng.choice([0.5, 1, 4, 25]))
        ready_order = [torch.empty(s // 4) for s in reversed(sizes)]          # gradient-ready order
        theirs, _ = dist._compute_bucket_assignment_by_size(ready_order, [MB, int(cap * MB)])
        n = len(sizes)
        assert bucket_assignment(sizes, cap) == [[n - 1 - j for j in b] for b in theirs], (sizes, cap)


def make(world=4, seed=0, cluster=None, **kw):
    comm = HcclComm(cluster or atlas_800t_a2(npus_per_server=world))
    world = comm.rank_size
    replicas = [TinyMLP(seed=seed + r) for r in range(world)]          # different seeds: the broadcast must fix it
    return DistributedDataParallel(replicas, comm, **kw)


def data(n=64, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 16)).astype(np.float32), rng.integers(0, 10, n)


@pytest.mark.parametrize("cluster", [atlas_800t_a2(npus_per_server=4), atlas_800t_a2(servers=2, npus_per_server=2),
                                     atlas_800_910()], ids=["a2x4", "2-servers", "910-two-groups"])
def test_ddp_gradient_equals_the_global_batch_gradient_and_replicas_stay_identical(cluster):
    lr = 0.1
    ddp = make(cluster=cluster)
    world = cluster.world_size
    single = TinyMLP(seed=0)
    for name, p in ddp.replicas[0].parameters():
        np.testing.assert_array_equal(p, single.params[name])
    x, y = data()
    for epoch in range(2):
        samplers = [DistributedSampler(len(x), world, r, seed=3) for r in range(world)]
        for s in samplers:
            s.set_epoch(epoch)
        idx = [s.indices() for s in samplers]
        b = len(idx[0]) // 2
        for step in range(2):                                         # two steps per epoch
            parts = [i[step * b:(step + 1) * b] for i in idx]
            ddp.backward([(x[p], y[p]) for p in parts])
            _, want = single.loss_and_grads(x[sum(parts, [])], y[sum(parts, [])])
            for name in want:
                np.testing.assert_allclose(ddp.grads[0][name], want[name], rtol=1e-5, atol=1e-7)
            ddp.sgd_step(lr)
            for name, g in want.items():
                single.params[name] -= np.float32(lr) * g
            for rep in ddp.replicas[1:]:
                for (name, p), (_, p0) in zip(rep.parameters(), ddp.replicas[0].parameters()):
                    np.testing.assert_array_equal(p, p0)                    # bit-identical replicas
    for name, p in ddp.replicas[0].parameters():
        np.testing.assert_allclose(p, single.params[name], rtol=1e-5, atol=1e-6)


def test_overlap_starts_each_bucket_when_its_last_gradient_is_ready():
    bw = [40.0, 1.0, 30.0, 2.0]                          # us per parameter, in parameters() order
    x, y = data(32)
    batches = [(x[r * 8:(r + 1) * 8], y[r * 8:(r + 1) * 8]) for r in range(4)]
    reports = {}
    for overlap in (True, False):
        ddp = make(bucket_cap_mb=1e-6, first_bucket_bytes=1, overlap=overlap)    # one bucket per parameter
        assert ddp.buckets == [[3], [2], [1], [0]]
        reports[overlap] = ddp.backward(batches, bw)
    comm = HcclComm(atlas_800t_a2(npus_per_server=4))
    sizes = [p.size for _, p in TinyMLP().parameters()]
    c = [comm.estimate("AllReduce", sizes[i]).time_us for i in (3, 2, 1, 0)]
    ready = np.cumsum([bw[i] for i in (3, 2, 1, 0)])
    done, t = [], 0.0
    for b in range(4):
        t = max(t, ready[b]) + c[b]
        done.append(t)
    on, off = reports[True], reports[False]
    assert on.bucket_ready_us == pytest.approx(list(ready))
    assert on.bucket_done_us == pytest.approx(done)
    assert on.step_us == pytest.approx(max(ready[-1], done[-1]))
    assert off.step_us == pytest.approx(ready[-1] + sum(c))
    assert on.compute_us == off.compute_us == pytest.approx(sum(bw))
    assert on.exposed_comm_us < off.exposed_comm_us


def test_bad_ddp_arguments():
    comm = HcclComm(atlas_800t_a2(npus_per_server=4))
    with pytest.raises(DataParallelError, match="3 replicas for a communicator of 4 ranks"):
        DistributedDataParallel([TinyMLP()] * 3, comm)
    with pytest.raises(DataParallelError, match=r"replica 3 has \(.fc1.weight., \(8, 16\)"):
        DistributedDataParallel([TinyMLP()] * 3 + [TinyMLP((16, 8, 10))], comm)
    ddp = make()
    with pytest.raises(DataParallelError, match="2 batches for 4 ranks"):
        ddp.backward([data(8)] * 2)


def test_one_bucket_waits_for_its_last_gradient():
    """TinyMLP's 1.7 KB of gradients fit in the 1 MB first bucket: it can only start when backward ends."""
    bw = [40.0, 1.0, 30.0, 2.0]
    x, y = data(32)
    ddp = make()
    assert ddp.buckets == [[3, 2, 1, 0]]
    rep = ddp.backward([(x[r * 8:(r + 1) * 8], y[r * 8:(r + 1) * 8]) for r in range(4)], bw)
    total = sum(p.size for _, p in TinyMLP().parameters())
    c = HcclComm(atlas_800t_a2(npus_per_server=4)).estimate("AllReduce", total).time_us
    assert rep.bucket_ready_us == [pytest.approx(sum(bw))]
    assert rep.step_us == pytest.approx(sum(bw) + c)


def test_comm_hooks():
    from ascend_sim.cluster.hooks import allreduce_hook, bf16_compress_hook, fp16_compress_hook
    x, y = data(16)
    batches = [(x[:8], y[:8]), (x[8:], y[8:])]
    runs = {}
    for hook in (None, allreduce_hook, fp16_compress_hook, bf16_compress_hook):
        ddp = make(world=2)
        if hook is not None:
            ddp.register_comm_hook(None, hook)
        ddp.backward(batches)
        sent = sum(e.nbytes for e in ddp.comm.timeline.events if e.kind == "send" and "AllReduce" in e.label)
        runs[hook] = (ddp, sent)
    base, base_bytes = runs[None]
    grads = [base.replicas[r].loss_and_grads(*batches[r])[1] for r in range(2)]
    for name, g in base.grads[0].items():
        np.testing.assert_allclose(runs[allreduce_hook][0].grads[0][name], g, rtol=1e-6, atol=1e-9)
        # two ranks: one fp16 add, whatever the algorithm: (fp16(g0) / 2 + fp16(g1) / 2) back in fp32
        halves = [gr[name].astype(np.float16) / np.float16(2) for gr in grads]
        want = (halves[0] + halves[1]).astype(np.float32)
        np.testing.assert_array_equal(runs[fp16_compress_hook][0].grads[1][name], want)
        np.testing.assert_allclose(runs[bf16_compress_hook][0].grads[0][name], g, rtol=2e-2, atol=1e-3)
    assert runs[allreduce_hook][1] == base_bytes
    assert runs[fp16_compress_hook][1] * 2 == base_bytes == runs[bf16_compress_hook][1] * 2
    ddp = runs[fp16_compress_hook][0]
    with pytest.raises(DataParallelError, match="only be called once"):
        ddp.register_comm_hook(None, allreduce_hook)
    bad = make(world=2)
    bad.register_comm_hook(None, lambda state, bucket: [b.astype(np.float16) for b in bucket.buffers])
    with pytest.raises(DataParallelError, match="float16"):
        bad.backward(batches)
