"""Tensor parallelism: column/row-parallel layers, the TP MLP, the conv output-channel split, hybrid DP x TP."""
from __future__ import annotations

import os

import numpy as np
import pytest

from ascend_sim.cluster.errors import ShardError
from ascend_sim.cluster.groups import DeviceMesh, sub_comm
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.hybrid import HybridParallelMLP
from ascend_sim.cluster.mlp import TinyMLP
from ascend_sim.cluster.tp import ColumnParallelLinear, RowParallelLinear, TensorParallelMLP, unshard
from ascend_sim.cluster.tp_conv import OutputChannelParallelConv2d
from ascend_sim.cluster.topology import atlas_800t_a2

F32 = np.float32


def comm(t=4):
    return HcclComm(atlas_800t_a2(npus_per_server=t))


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(F32)


def test_column_parallel_gathered_output_and_gradients_match_one_device():
    x, w, b, dy = rand(6, 8), rand(12, 8, seed=1), rand(12, seed=2), rand(6, 12, seed=3)
    layer = ColumnParallelLinear(w, b, comm(), gather_output=True)
    for y in layer.forward([x] * 4):
        np.testing.assert_allclose(y, x @ w.T + b, rtol=1e-6, atol=1e-6)
    for dx in layer.backward([dy] * 4):
        np.testing.assert_allclose(dx, dy @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.concatenate(layer.dw), dy.T @ x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.concatenate(layer.db), dy.sum(0), rtol=1e-6, atol=1e-6)
    assert [w_.shape for w_ in layer.w] == [(3, 8)] * 4


def test_row_parallel_sum_is_exactly_the_mesh_order():
    """The partial products are summed chunk by chunk: the chunk's owner first, then the others ascending."""
    x = (rand(5, 16) * 10.0 ** np.random.default_rng(9).integers(-3, 4, (5, 16))).astype(F32)
    w, b = rand(8, 16, seed=1), np.zeros(8, F32)
    y = RowParallelLinear(w, b, comm()).forward([x[:, r * 4:(r + 1) * 4] for r in range(4)])
    parts = [(x[:, r * 4:(r + 1) * 4] @ w[:, r * 4:(r + 1) * 4].T).ravel() for r in range(4)]
    want, other = np.empty(40, F32), np.empty(40, F32)
    for c in range(4):
        s = slice(c * 10, (c + 1) * 10)
        acc = parts[c][s].copy()
        for r in [r for r in range(4) if r != c]:
            acc = acc + parts[r][s]
        want[s] = acc
        other[s] = ((parts[0][s] + parts[1][s]) + parts[2][s]) + parts[3][s]
    np.testing.assert_array_equal(y[0].ravel(), want)
    assert not np.array_equal(want, other)          # the order shows in the bits, so the check can fail
    np.testing.assert_allclose(y[2], x @ w.T, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("sp", [False, True], ids=["allreduce", "sequence-parallel"])
def test_tp_mlp_matches_one_device_forward_backward_and_training(sp):
    single = TinyMLP((16, 32, 10), seed=0)
    tp = TensorParallelMLP({k: v.copy() for k, v in single.params.items()}, comm(4), sequence_parallel=sp)
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((8, 16)).astype(F32), rng.integers(0, 10, 8)
    for step in range(3):
        loss, want = single.loss_and_grads(x, y)
        tp_loss, grads = tp.loss_and_grads(x, y)
        assert tp_loss == pytest.approx(loss, rel=1e-6)
        got = unshard(grads)
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)
        for r in range(1, 4):
            np.testing.assert_array_equal(grads[r]["fc2.bias"], grads[0]["fc2.bias"])
        for p, g in zip(tp.shards(), grads):
            for name in p:
                p[name] -= F32(0.5) * g[name]
        for name, g in want.items():
            single.params[name] -= F32(0.5) * g
    for name, p in unshard(tp.shards()).items():
        np.testing.assert_allclose(p, single.params[name], rtol=1e-5, atol=1e-6)


def test_sequence_parallel_moves_the_same_bytes_as_allreduce():
    sent = {}
    for sp in (False, True):
        tp = TensorParallelMLP(TinyMLP().params, comm(4), sequence_parallel=sp)
        tp.loss_and_grads(rand(8, 16), np.arange(8) % 10)
        ev = [e for e in tp.comm.timeline.events if e.kind == "send"]
        sent[sp] = (sum(e.nbytes for e in ev), sorted({e.label.split()[0] for e in ev}))
    # Megatron's MLP: forward fc2 AllReduce, backward fc1 AllReduce; sequence parallel: AG + RS each way
    assert sent[False][1] == ["AllReduce"]
    assert sent[True][1] == ["AllGather", "AllReduce", "ReduceScatter"]   # + the 10-float bias AllReduce
    bias_bytes = 2 * (4 - 1) * 10 * 4          # mesh AllReduce of 10 floats: every rank sends 2(p-1)/p of them
    assert sent[True][0] - sent[False][0] == bias_bytes


def ref_conv(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    co, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))).astype(np.float64)
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, co, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.einsum("nckl,ockl->no", win, w.astype(np.float64)) + b
    return out, xp


def test_conv_output_channel_split_matches_one_device():
    x, w, b = rand(2, 3, 9, 9), rand(8, 3, 3, 3, seed=1), rand(8, seed=2)
    conv = OutputChannelParallelConv2d(w, b, comm(4), stride=2, pad=1)
    assert [v.shape for v in conv.weights] == [(2, 3, 3, 3)] * 4
    want, xp = ref_conv(x, w, b, 2, 1)
    ys = conv.forward(x)
    for y in ys:
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    dy = rand(*want.shape, seed=3)
    dxs = conv.backward([dy] * 4)
    dw = np.zeros((8, 3, 3, 3))
    for i in range(want.shape[2]):
        for j in range(want.shape[3]):
            dw += np.einsum("no,nckl->ockl", dy[:, :, i, j], xp[:, :, i * 2:i * 2 + 3, j * 2:j * 2 + 3])
    np.testing.assert_allclose(np.concatenate(conv.dw), dw, rtol=1e-4, atol=1e-4)
    # conv is linear in x: <dy, conv(x) - b> = <dx, x> (the adjoint identity checks col2im)
    lhs = float((dy.astype(np.float64) * (want - b[None, :, None, None])).sum())
    assert float((dxs[1].astype(np.float64) * x).sum()) == pytest.approx(lhs, rel=1e-4)


def test_hybrid_dp_x_tp_matches_the_global_batch_on_a_2d_mesh():
    cluster = atlas_800t_a2(servers=2, npus_per_server=4)          # tp inside a server (HCCS), dp over RoCE
    mesh = DeviceMesh(cluster, dp=2, tp=4)
    assert mesh.tp_groups == [[0, 1, 2, 3], [4, 5, 6, 7]] and mesh.dp_groups[1] == [1, 5]
    assert mesh.dp_comms[0].cluster.inter is cluster.inter and len(mesh.dp_comms[0].cluster.domains) == 2
    single = TinyMLP(seed=3)
    hyb = HybridParallelMLP(single.params, mesh)
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((16, 16)).astype(F32), rng.integers(0, 10, 16)
    for step in range(2):
        hyb.backward([(x[:8], y[:8]), (x[8:], y[8:])])
        _, want = single.loss_and_grads(x, y)
        got = unshard(hyb.grads[1])
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)
        hyb.sgd_step(0.3)
        for name, g in want.items():
            single.params[name] -= F32(0.3) * g
        for t in range(4):                                           # data-parallel replicas stay bit-identical
            for name, p in hyb.replicas[1].shards()[t].items():
                np.testing.assert_array_equal(p, hyb.replicas[0].shards()[t][name])


def test_bad_tensor_parallel_layouts():
    with pytest.raises(ShardError) as e:
        ColumnParallelLinear(rand(10, 4), rand(10), comm(4))
    assert "10 % 4 = 2" in str(e.value) and e.value.fix
    assert os.path.basename(e.value.site[0]) == os.path.basename(__file__)
    with pytest.raises(ShardError, match="input features"):
        RowParallelLinear(rand(4, 6), rand(4), comm(4))
    with pytest.raises(ShardError, match="needs one input per rank, got 3 arrays"):
        ColumnParallelLinear(rand(8, 4), rand(8), comm(4)).forward([rand(2, 4)] * 3)
    with pytest.raises(ShardError, match=r"rank 0's input has shape \(2, 4\).*\(rows, 2\)"):
        RowParallelLinear(rand(4, 8), rand(4), comm(4)).forward([rand(2, 4)] * 4)
    with pytest.raises(ShardError, match="batch"):
        TensorParallelMLP(TinyMLP().params, comm(4), sequence_parallel=True).forward(rand(6, 16))
    from ascend_sim.cluster.errors import HcclError
    with pytest.raises(HcclError, match="2 x 3 mesh"):
        DeviceMesh(atlas_800t_a2(), 2, 3)
    with pytest.raises(HcclError, match="same number"):
        sub_comm(atlas_800t_a2(servers=2), [0, 1, 8])


def test_tp_mlp_time_is_its_matmuls_plus_its_allreduces():
    from ascend_sim.cluster.cost import flops_us
    c = comm(4)
    tp = TensorParallelMLP(TinyMLP((64, 128, 32)).params, c, efficiency=0.5)
    tp.forward(rand(16, 64))
    chip = c.cluster.chip
    want = (flops_us(chip, 2 * 16 * 64 * 32, 0.5) + flops_us(chip, 2 * 16 * 32 * 32, 0.5)
            + HcclComm(c.cluster).estimate("AllReduce", 16 * 32).time_us)
    assert c.timeline.clock_us == pytest.approx([want] * 4)
