"""The ResNet path: cube convolution (stride 1 and 2, 1x1 downsample), BN folding, the fused residual add+ReLU,
and the whole folded network on the runtime agreeing with its numpy reference (fp16, int8, W4A16)."""
import numpy as np
import pytest

from ascend_sim.kernels.opt.conv_cube import conv_cube
from ascend_sim.kernels.m4.residual import add_relu
from ascend_sim.migrate.resnet import (BLOCKS, BN_EPS, CLASSES, CONVS, FEATURES, conv_ref, fold_bn,
                                      load_resnet_weights, resnet_graph, resnet_logits_ref, resnet_predict_ref)
from ascend_sim.migrate.runtime import Runtime, load_model
from ascend_sim.models.datasets import load_mnist_subset, normalize


def random_params(seed=0):
    rng = np.random.default_rng(seed)
    p = {}
    for name, (o, c, k, _) in CONVS.items():
        p[f"{name}.w"] = rng.uniform(-1, 1, (o, c, k, k)).astype(np.float32) * np.sqrt(3.0 / (c * k * k))
        p[f"{name}.gamma"] = rng.uniform(0.5, 1.5, o).astype(np.float32)
        p[f"{name}.beta"] = rng.normal(0, 0.1, o).astype(np.float32)
        p[f"{name}.mean"] = rng.normal(0, 0.1, o).astype(np.float32)
        p[f"{name}.var"] = rng.uniform(0.5, 2.0, o).astype(np.float32)
    p["fc.w"] = rng.normal(0, 0.3, (CLASSES, FEATURES)).astype(np.float32)
    p["fc.b"] = np.zeros(CLASSES, np.float32)
    return p


@pytest.mark.parametrize("c, o, k, stride", [(1, 16, 3, 1), (16, 32, 3, 2), (16, 32, 1, 2), (5, 7, 3, 1)])
def test_cube_convolution_matches_numpy(c, o, k, stride):
    rng = np.random.default_rng(c * o + k)
    x = rng.uniform(-1, 1, (3, c, 13, 11)).astype(np.float16)
    w = rng.uniform(-0.3, 0.3, (o, c, k, k)).astype(np.float16)
    b = rng.uniform(-1, 1, o).astype(np.float32)
    y, res = conv_cube(x, w, b, stride=stride)
    ref = conv_ref(x.astype(np.float32), w.astype(np.float32), b, stride)
    assert y.dtype == np.float16 and y.shape == ref.shape
    np.testing.assert_allclose(y.astype(np.float32), ref, atol=2e-3, rtol=1e-3)   # one fp16 rounding
    assert "Mmad" in set(res.trace.table().op.tolist())


def test_bn_folding_equals_conv_then_bn():
    p = random_params(1)
    x = np.random.default_rng(2).uniform(0, 1, (2, 16, 9, 9)).astype(np.float32)
    name = "b1.conv1"
    y = conv_ref(x, p[f"{name}.w"], np.zeros(16, np.float32), 1)
    bn = (y - p[f"{name}.mean"][None, :, None, None]) / np.sqrt(p[f"{name}.var"] + BN_EPS)[None, :, None, None]
    bn = bn * p[f"{name}.gamma"][None, :, None, None] + p[f"{name}.beta"][None, :, None, None]
    w, b = fold_bn(p, name)
    np.testing.assert_allclose(conv_ref(x, w, b, 1), bn, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(3, 5, 7, 9), (1000,), (2, 16, 28, 28)])
def test_fused_residual_add_relu_is_exact(shape):
    rng = np.random.default_rng(len(shape))
    a, c = (rng.uniform(-1, 1, shape).astype(np.float16) for _ in range(2))
    z, res = add_relu(a, c)
    np.testing.assert_array_equal(z, np.maximum(a + c, 0))
    ops = res.trace.table().op.tolist()
    assert ops.count("Add") == ops.count("Relu") > 0        # one pass: each tile added and rectified in UB
    with pytest.raises(ValueError, match="downsample"):
        add_relu(a, a[..., :1] if a.ndim > 1 else a[:1])


@pytest.fixture(scope="module")
def images():
    x, _ = load_mnist_subset("heldout")
    return x[:40]


@pytest.mark.parametrize("profile, tol", [("910B-fp16", 0.02), ("310B-int8", 0.06), ("910B-w4a16", 0.3)])
def test_folded_resnet_on_the_runtime_matches_its_reference(images, profile, tol):
    p = random_params(3)
    calib = load_mnist_subset("train")[0][:64]
    rt = Runtime(load_model("resnet", p), profile, calibration=calib)
    out = rt.run(images).astype(np.float32)
    ref = resnet_logits_ref(p, normalize(images))
    assert np.abs(out - ref).max() <= tol * np.abs(ref).max()
    if profile == "910B-fp16":
        assert (out.argmax(1) == ref.argmax(1)).mean() >= 0.95
        assert {"conv_cube", "add_relu"} <= {r.op for r in rt.time_rows()}


def test_the_graph_has_one_fused_residual_per_block_and_a_downsample_where_the_shape_changes():
    nodes = resnet_graph(random_params(4)).nodes
    assert [n.name for n in nodes if n.op == "add_relu"] == [f"{b[0]}.out" for b in BLOCKS]
    downs = [n for n in nodes if n.name.endswith(".down")]
    assert [n.name for n in downs] == [f"{b[0]}.down" for b in BLOCKS if b[3] != 1 or b[1] != b[2]]
    assert all(n.params["w"].shape[2:] == (1, 1) and n.params["stride"] == 2 for n in downs)


@pytest.fixture(scope="module")
def heldout():
    x, y = load_mnist_subset("heldout")
    return normalize(x), y


def test_the_shipped_resnet_reaches_98_5_percent_on_the_held_out_images(heldout):
    """The 1,000 shipped held-out digits were never trained on (the validation split of
    scripts/train_resnet.py); the weights shipped before the wider, longer-trained network got 96.8 % here."""
    x, y = heldout
    p = load_resnet_weights()
    assert sum(v.nbytes for v in p.values()) < 500_000                     # small weights shipped
    assert set(p) == {f"{c}.{f}" for c in CONVS for f in ("w", "gamma", "beta", "mean", "var")} | {"fc.w", "fc.b"}
    assert float((resnet_predict_ref(p, x) == y).mean()) >= 0.985


def test_the_shipped_resnet_classifies_held_out_digits_through_the_simulator(heldout):
    x, y = load_mnist_subset("heldout")
    rep = Runtime(load_model("resnet"), "910B-fp16").evaluate(x[:100], y[:100])
    ref = resnet_predict_ref(load_resnet_weights(), normalize(x[:100]))
    assert (rep.predictions == ref).mean() >= 0.98                         # fp16 cube kernels vs fp32 numpy
    assert rep.accuracy >= 0.97 and rep.table.total_us > 0
