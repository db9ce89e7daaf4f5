"""MindSpore shard strategies: the source's example, the legal layouts run on the mesh, and illegal strategies."""
from __future__ import annotations

import os

import numpy as np
import pytest

from ascend_sim.cluster.errors import ShardError
from ascend_sim.cluster.shard import layout, run_dense
from ascend_sim.cluster.topology import atlas_800t_a2


def test_the_source_example_on_four_cards():
    conv = layout("Conv2D", ((1, 1), (4, 1)), 4, (64, 64, 56, 56), (64, 64, 3, 3))
    assert (conv.data, conv.column, conv.row, conv.weight_fraction) == (1, 4, 1, 0.25)
    assert "column parallel x4" in conv.describe() and "AllReduce of dX" in conv.describe()
    fc = layout("MatMul", ((4, 1), (1, 1)), 4, (256, 512), (1000, 512))
    assert (fc.data, fc.column, fc.row, fc.weight_fraction) == (4, 1, 1, 1.0)    # data parallel, not a weight split
    assert "the weight is not split" in fc.describe()
    full = layout("Conv2D", ((2, 1, 1, 1), (2, 1, 1, 1)), 8)
    assert (full.data, full.column, full.repeat) == (2, 2, 2)


@pytest.mark.parametrize("strategy", [((8, 1), (1, 1)), ((1, 1), (8, 1)), ((1, 8), (1, 8)), ((2, 1), (4, 1)),
                                      ((2, 4), (1, 4)), ((4, 2), (1, 2))])
def test_legal_dense_strategies_give_the_one_device_result(strategy):
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((16, 32), (24, 32), (24,)))
    dy = rng.standard_normal((16, 24)).astype(np.float32)
    y, dw = run_dense(strategy, x, w, b, dy, atlas_800t_a2())
    np.testing.assert_allclose(y, x @ w.T + b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dw, dy.T @ x, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("op,strategy,shapes,words", [
    ("MatMul", ((2, 4), (1, 2)), (None, None), ["shared dimension k", "4 ways in x but 2"]),
    ("MatMul", ((4, 1), (4, 1)), (None, None), ["16 parts", "8 devices"]),
    ("MatMul", ((3, 1), (1, 1)), (None, None), ["3 parts", "8 devices"]),
    ("MatMul", ((1, 1), (8, 1)), ((16, 32), (20, 32)), ["dimension n has 20", "8 equal parts"]),
    ("MatMul", ((1, 1, 1), (8, 1)), (None, None), ["3 numbers", "2 dimensions"]),
    ("MatMul", ((1, 1),), (None, None), ["one tuple per input"]),
    ("MatMul", ((0, 1), (1, 1)), (None, None), ["positive ints"]),
    ("Conv2D", ((1, 1, 2, 1), (1, 1, 1, 1)), (None, None), ["image height", "halo"]),
    ("Conv2D", ((1, 1, 1, 1), (1, 1, 2, 1)), (None, None), ["kernel height"]),
    ("Softmax", ((1,),), (None, None), ["no shard rules"]),
])
def test_illegal_strategies_are_refused_with_the_rule_and_the_numbers(op, strategy, shapes, words):
    with pytest.raises(ShardError) as e:
        layout(op, strategy, 8, *shapes)
    for word in words:
        assert word in str(e.value), (word, str(e.value))
    assert e.value.fix and os.path.basename(e.value.site[0]) == os.path.basename(__file__)


def test_two_d_model_parallel_is_described_but_not_run():
    assert layout("MatMul", ((1, 2), (4, 2)), 8).weight_fraction == 1 / 8
    with pytest.raises(ShardError, match="2-D model parallelism"):
        run_dense(((1, 2), (4, 2)), *(np.ones(s, np.float32) for s in ((8, 8), (8, 8), (8,), (8, 8))),
                  atlas_800t_a2())


@pytest.mark.parametrize("strategy", [((1, 1), (4, 1)), ((8, 1), (1, 1)), ((2, 1, 1, 1), (4, 1, 1, 1)),
                                      ((1, 4, 1, 1), (1, 4, 1, 1)), ((2, 2), (1, 2))])
def test_conv_strategies_give_the_one_device_result(strategy):
    from ascend_sim.cluster.shard import run_conv2d
    from ascend_sim.cluster.tp_conv import im2col
    rng = np.random.default_rng(1)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((8, 4, 7, 7), (8, 4, 3, 3), (8,)))
    dy = rng.standard_normal((8, 8, 4, 4)).astype(np.float32)
    y, dw = run_conv2d(strategy, x, w, b, dy, atlas_800t_a2(), stride=2, pad=1)
    cols = im2col(x, 3, 3, 2, 1)                                  # checked against a direct conv in test_cluster_tp
    want = (cols @ w.reshape(8, -1).T + b).reshape(8, 4, 4, 8).transpose(0, 3, 1, 2)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    dyc = dy.transpose(0, 2, 3, 1).reshape(-1, 8)
    np.testing.assert_allclose(dw, (dyc.T @ cols).reshape(w.shape), rtol=1e-4, atol=1e-4)
