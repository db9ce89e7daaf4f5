"""The one conv-on-cube module (kernels/opt/conv_cube.py): stride on both matmuls (Module 2's hand-tiled kernel
and Module 4's Matmul API) against an independent direct convolution, the Matmul API path's rules, and the
timing-only launch keeping the computing launch's cycles."""
import numpy as np
import pytest

from ascend_sim.engine.errors import ArgumentError, DtypeError
from ascend_sim.kernels.opt.conv_cube import (conv2d_cube, conv2d_cube_int8, conv_bn_relu, conv_cube,
                                              conv_gemm_shape, conv_out_hw, conv_reference, fold_bn, im2col,
                                              matmul_api_tiling, time_conv_cube)


def direct_conv(x, w, b, pad, stride):
    """Independent of im2col: sum over taps of strided slices (float64)."""
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    y = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride],
                           w[:, :, i, j].astype(np.float64))
    return y + b[None, :, None, None]


@pytest.mark.parametrize("matmul", ["tiled", "api"])
@pytest.mark.parametrize("n, C, H, W, O, k, pad, stride", [(2, 3, 9, 9, 20, 3, 1, 2), (1, 16, 13, 11, 32, 1, 0, 2),
                                                           (2, 4, 12, 10, 8, 5, 2, 3), (3, 5, 7, 7, 7, 3, 1, 1)])
def test_strided_conv_is_exact_on_both_matmuls(matmul, n, C, H, W, O, k, pad, stride):
    rng = np.random.default_rng(n * C * H + stride)
    x = rng.integers(-3, 4, (n, C, H, W)).astype(np.float16)       # integers: exact in fp16 and fp32
    w = rng.integers(-3, 4, (O, C, k, k)).astype(np.float16)
    b = rng.integers(-9, 9, O).astype(np.float32)
    y, res = conv2d_cube(x, w, b, pad, stride=stride, matmul=matmul)
    want = direct_conv(x, w, b, pad, stride).astype(np.float32).astype(np.float16)
    assert y.shape == want.shape == (n, O, *conv_out_hw(H, W, k, k, pad, stride))
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(y, conv_reference(x, w, b, pad, stride=stride))
    assert "Mmad" in set(res.trace.table().op.tolist())


def test_the_two_matmuls_are_different_kernels_with_the_same_answer():
    rng = np.random.default_rng(4)
    x, w = rng.uniform(-1, 1, (2, 8, 10, 10)).astype(np.float16), rng.uniform(-.3, .3, (16, 8, 3, 3)).astype(np.float16)
    b = rng.uniform(-1, 1, 16).astype(np.float32)
    (y1, r1), (y2, r2) = (conv2d_cube(x, w, b, 1, stride=2, matmul=m) for m in ("tiled", "api"))
    np.testing.assert_allclose(y1.astype(np.float32), y2.astype(np.float32), atol=2e-3, rtol=1e-3)
    assert r1.kernel_name != r2.kernel_name


def test_conv_cube_is_same_padding_on_the_matmul_api():
    rng = np.random.default_rng(5)
    x, w = rng.uniform(-1, 1, (2, 4, 9, 7)).astype(np.float16), rng.uniform(-.3, .3, (6, 4, 3, 3)).astype(np.float16)
    b = rng.uniform(-1, 1, 6).astype(np.float32)
    y, res = conv_cube(x, w, b, stride=2)
    y2, res2 = conv2d_cube(x, w, b, 1, stride=2, matmul="api")
    assert y.shape == (2, 6, 5, 4)
    np.testing.assert_array_equal(y, y2)
    assert res.cycles == res2.cycles


def test_strided_bn_relu_folds_and_rectifies():
    rng = np.random.default_rng(6)
    x = rng.uniform(-1, 1, (2, 3, 11, 11)).astype(np.float32)               # float32: the cube runs float
    w = rng.uniform(-0.5, 0.5, (8, 3, 3, 3)).astype(np.float32)
    b, gamma, beta = rng.uniform(-0.2, 0.2, 8), rng.uniform(0.5, 1.5, 8), rng.uniform(-0.3, 0.3, 8)
    mean, var = rng.uniform(-0.2, 0.2, 8), rng.uniform(0.5, 2.0, 8)
    y, _ = conv_bn_relu(x, w, b, gamma, beta, mean, var, pad=1, stride=2, out_dtype=np.float32)
    w2, b2 = fold_bn(w, b, gamma, beta, mean, var)
    assert y.shape == (2, 8, 6, 6) and (y >= 0).all() and (y == 0).any()
    np.testing.assert_allclose(y, np.maximum(direct_conv(x, w2.astype(np.float32), b2.astype(np.float32), 1, 2), 0),
                               rtol=1e-5, atol=1e-5)


def test_im2col_stride_keeps_every_stride_th_window():
    x = np.arange(1 * 2 * 7 * 7, dtype=np.float32).reshape(1, 2, 7, 7)
    cols = im2col(x, 3, 3, pad=0, stride=2)
    assert cols.shape == (3 * 3, 18)
    np.testing.assert_array_equal(cols[4], x[0, :, 2:5, 2:5].ravel())          # output (1, 1): rows/cols 2..4
    np.testing.assert_array_equal(cols, im2col(x, 3, 3).reshape(5, 5, 18)[::2, ::2].reshape(9, 18))


def test_timing_only_launch_keeps_the_cycles_of_the_computing_launch():
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (2, 16, 12, 12)).astype(np.float16)
    w = rng.uniform(-.3, .3, (32, 16, 3, 3)).astype(np.float16)
    _, full = conv2d_cube(x, w, np.zeros(32, np.float32), 1, stride=2, matmul="api")
    timed = time_conv_cube(x.shape, w.shape, 1, stride=2)
    assert conv_gemm_shape(x.shape, w.shape, 1, 2) == (2 * 6 * 6, 32, 16 * 9)
    assert timed.cycles == full.cycles and len(timed.trace) == len(full.trace)
    assert time_conv_cube(x.shape, w.shape, 1, stride=1).cycles > timed.cycles      # 4x the output pixels
    t = matmul_api_tiling(x.shape, w.shape, 1, stride=2)                               # the tiling it launched with
    assert t.usedCoreNum == full.block_dim and (t.M, t.N, t.Ka) == conv_gemm_shape(x.shape, w.shape, 1, 2)


@pytest.mark.parametrize("kwargs, error, words", [
    ({"matmul": "gemm"}, ArgumentError, "not one of"),
    ({"matmul": "api", "dtype": "float32"}, DtypeError, "half inputs"),
    ({"matmul": "api", "relu": True}, ArgumentError, "no relu"),
    ({"matmul": "api", "cores": 2}, ArgumentError, "no cores"),
    ({"stride": 0}, ArgumentError, "stride must be >= 1"),
    ({"pad": -1}, ArgumentError, "pad >= 0"),
])
def test_bad_calls_name_the_rule_and_the_fix(kwargs, error, words):
    x, w = np.zeros((1, 2, 5, 5), np.float16), np.zeros((4, 2, 3, 3), np.float16)
    with pytest.raises(error, match=words) as e:
        conv2d_cube(x, w, np.zeros(4, np.float32), **kwargs)
    assert e.value.fix


def test_a_filter_larger_than_the_padded_input_is_refused():
    with pytest.raises(ArgumentError, match="does not fit") as e:
        conv2d_cube(np.zeros((1, 2, 3, 3), np.float16), np.zeros((4, 2, 5, 5), np.float16))
    assert "pad" in e.value.fix


@pytest.mark.parametrize("pad, stride, code, relu", [(1, 1, 0, False), (1, 2, -7, True), (0, 2, 3, False)])
def test_int8_conv_dequantises_per_channel_with_the_border_code(pad, stride, code, relu):
    rng = np.random.default_rng(pad * 10 + stride)
    xq = rng.integers(-128, 128, (2, 5, 9, 8)).astype(np.int8)
    wq = rng.integers(-128, 128, (6, 5, 3, 3)).astype(np.int8)
    scale = rng.uniform(1e-4, 1e-3, 6).astype(np.float32)             # per output channel
    bias = rng.uniform(-2, 2, 6).astype(np.float32)
    y, (cube, dequant) = conv2d_cube_int8(xq, wq, scale, bias, pad, stride=stride, pad_code=code, relu=relu)
    xp = np.pad(xq.astype(np.int64), ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=code)
    acc = direct_conv(xp, wq.astype(np.int64), np.zeros(6), 0, stride)              # exact integers in float64
    want = acc.astype(np.float32) * scale[None, :, None, None] + bias[None, :, None, None]
    want = np.maximum(want, 0) if relu else want
    assert y.dtype == np.float16 and y.shape == want.shape
    np.testing.assert_allclose(y.astype(np.float32), want.astype(np.float16).astype(np.float32), rtol=1e-3, atol=1e-3)
    assert cube.kernel_name != dequant.kernel_name


def test_int8_conv_takes_codes_only():
    with pytest.raises(DtypeError, match="int8 codes") as e:
        conv2d_cube_int8(np.zeros((1, 2, 5, 5), np.float16), np.zeros((4, 2, 3, 3), np.int8), np.ones(4),
                         np.zeros(4))
    assert "quantise" in e.value.fix
