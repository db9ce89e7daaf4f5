"""Cloud vs edge on one runtime: the int8 cube kernels are exact, PTQ keeps LeNet-5 within a point, W4A16 saves
weight memory; misuse is named."""
import numpy as np
import pytest

from ascend_sim.kernels.m4.qmatmul import int8_linear_rows
from ascend_sim.migrate import quant
from ascend_sim.migrate.int8_ops import int8_conv2d
from ascend_sim.migrate.ptq import QuantLayer
from ascend_sim.migrate.runtime import PROFILES, Runtime, load_model
from ascend_sim.migrate.w4a16 import to_int4
from ascend_sim.models.datasets import load_mnist_subset


@pytest.mark.parametrize("O, K, P, relu", [(6, 25, 784, True), (120, 400, 50, False), (10, 84, 37, True),
                                           (16, 150, 300, False)])
def test_int8_matmul_and_dequant_match_integer_arithmetic(O, K, P, relu):
    rng = np.random.default_rng(O * K + P)
    w = rng.integers(-127, 128, (O, K)).astype(np.int8)
    x = rng.integers(-128, 128, (P, K)).astype(np.int8)
    s = rng.uniform(1e-4, 1e-3, O).astype(np.float32)
    b = rng.normal(size=O).astype(np.float32)
    y, res = int8_linear_rows(w, x, s, b, relu=relu, chip="Ascend310B")
    acc = (w.astype(np.int64) @ x.T.astype(np.int64)).astype(np.float32) * s[:, None] + b[:, None]
    ref = (np.maximum(acc, 0) if relu else acc).astype(np.float16)
    np.testing.assert_array_equal(y, ref)
    ops = set(res[0].trace.table().op.tolist())
    assert "Mmad" in ops and "Fixpipe" in ops            # the product ran on the cube
    assert {"Cast", "Muls", "Adds"} <= set(res[1].trace.table().op.tolist())


def test_int8_conv_folds_the_zero_point_exactly_at_the_padded_border():
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, (2, 1, 8, 8)).astype(np.float32)
    w = rng.normal(size=(4, 1, 3, 3)).astype(np.float32)
    act = quant.minmax(x)                                 # asymmetric: offset -128 for [0, 1]
    assert int(act.offset) != 0
    wp = quant.arq(w.reshape(4, -1))
    layer = QuantLayer(quant.quantize(w.reshape(4, -1), wp), np.asarray(wp.scale, np.float32), act,
                       np.zeros(4, np.float32))
    y, _ = int8_conv2d(x, layer, 3, 3, pad=1)
    xf = quant.fake_quant(x, act)
    wf = quant.fake_quant(w.reshape(4, -1), wp).reshape(w.shape)
    from ascend_sim.models.lenet_reference import conv2d_ref
    ref = conv2d_ref(xf, wf, np.zeros(4, np.float32), pad=1)
    np.testing.assert_allclose(y.astype(np.float32), ref, rtol=2e-3, atol=2e-3)


@pytest.fixture(scope="module")
def data():
    xt, _ = load_mnist_subset("train")
    x, y = load_mnist_subset("heldout")
    return xt[:300], x[:300], y[:300]


@pytest.fixture(scope="module")
def fp32_report(data):
    _, x, y = data
    return Runtime(load_model(), "910B-fp32").evaluate(x, y)


@pytest.mark.parametrize("method", ["minmax", "ifmr"])
def test_int8_ptq_on_310b_keeps_lenet_within_one_point(data, fp32_report, method):
    calib, x, y = data
    rt = Runtime(load_model(), "310B-int8", calibration=calib, act_method=method)
    rep = rt.evaluate(x, y)
    assert fp32_report.accuracy > 0.95
    assert rep.accuracy >= fp32_report.accuracy - 0.01
    assert rep.table.chip == "Ascend310B" and rep.table.total_us > 0
    assert rep.weight_bytes < fp32_report.weight_bytes / 3.5       # int8 codes + fp32 scales/bias vs fp32


def test_w4a16_cuts_weight_memory_and_keeps_accuracy(data, fp32_report):
    _, x, y = data
    fp16 = Runtime(load_model(), "910B-fp16")
    w4 = Runtime(load_model(), "910B-w4a16")
    rep = w4.evaluate(x, y)
    assert rep.accuracy >= fp32_report.accuracy - 0.01
    assert w4.weight_bytes() < 0.35 * fp16.weight_bytes()
    # the codes alone: a [K, O] weight with K a multiple of the group is exactly a quarter of its fp16 bytes
    w = np.random.default_rng(0).normal(size=(64, 128)).astype(np.float32)
    assert to_int4(w, 32).packed.nbytes == w.size * 2 // 4


def test_misuse_is_named():
    with pytest.raises(ValueError, match="calibration images"):
        Runtime(load_model(), "310B-int8")
    with pytest.raises(ValueError, match="choose one of"):
        Runtime(load_model(), "Ascend999-fp8")
    with pytest.raises(ValueError, match="multiple of 32"):
        to_int4(np.ones((4, 40), np.float32), 48)
    assert {"910B-fp32", "910B-fp16", "310B-int8", "910B-w4a16"} <= set(PROFILES)
