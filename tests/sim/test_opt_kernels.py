"""Module 2 library kernels (ascend_sim/kernels/opt): exact against numpy, tails, fusion, and the 256^2 exercise."""
from dataclasses import replace

import numpy as np
import pytest

from ascend_sim import launch
from ascend_sim.kernels.opt.conv_cube import conv2d_cube, conv_bn_relu, conv_reference, fold_bn, im2col
from ascend_sim.kernels.opt.mlp_cube import mlp_cube
from ascend_sim.kernels.opt.softmax_rows import softmax_rows
from ascend_sim.kernels.opt.default_matmul import default_matmul, default_tiling
from ascend_sim.kernels.opt.tiled_matmul import (TiledMatmulTiling, choose_tiling, matmul_reference, tiled_matmul,
                                                 tiled_matmul_kernel)


def ints(rng, shape, lo=-4, hi=5, dtype=np.float16):
    return rng.integers(lo, hi, shape).astype(dtype)


@pytest.mark.parametrize("M, N, K, cores", [(256, 256, 256, None), (100, 70, 90, 3), (33, 300, 130, 5),
                                            (64, 48, 16, 1)])
@pytest.mark.parametrize("out", [np.float16, np.float32])
def test_tiled_matmul_exact_with_tails(M, N, K, cores, out):
    rng = np.random.default_rng(M + N + K)
    a, b = ints(rng, (M, K)), ints(rng, (K, N))
    c, res = tiled_matmul(a, b, out_dtype=out, cores=cores)
    np.testing.assert_array_equal(c, matmul_reference(a, b, out_dtype=out))
    assert res.block_dim <= (cores or 24)


def test_tiled_matmul_several_tiles_per_core_random_values():
    rng = np.random.default_rng(1)
    a, b = rng.uniform(-1, 1, (200, 64)).astype(np.float16), rng.uniform(-1, 1, (64, 40)).astype(np.float16)
    t = TiledMatmulTiling(200, 40, 64, 32, 32, 32, np.dtype(np.float32), cores=3)     # 7 x 2 tiles on 3 cores
    c = np.zeros((200, 40), np.float32)
    launch(tiled_matmul_kernel, t.block_dim, a, b, None, c, t)
    np.testing.assert_allclose(c, matmul_reference(a, b, out_dtype=np.float32), rtol=1e-6, atol=1e-6)


def test_fused_matmul_add_relu_exact_and_each_part_matters():
    rng = np.random.default_rng(2)
    a, b, bias = ints(rng, (96, 80)), ints(rng, (80, 64)), rng.integers(-60, 60, 64).astype(np.float32)
    c, _ = tiled_matmul(a, b, bias, relu=True, out_dtype=np.float32)
    want = matmul_reference(a, b, bias, relu=True, out_dtype=np.float32)
    np.testing.assert_array_equal(c, want)
    assert (want == 0).any() and (want > 0).any()
    assert not np.array_equal(matmul_reference(a, b, bias, relu=False, out_dtype=np.float32), want)   # ReLU bites
    assert not np.array_equal(matmul_reference(a, b, None, relu=True, out_dtype=np.float32), want)    # bias bites


def test_wrong_tiling_is_caught():
    """A kernel that skips the last K step (a tiling with a shorter K) does not match numpy."""
    rng = np.random.default_rng(3)
    a, b = ints(rng, (64, 128)), ints(rng, (128, 64))
    t = TiledMatmulTiling(64, 64, 128, 16, 64, 64)
    short = TiledMatmulTiling(64, 64, 64, 16, 64, 64)
    c = np.zeros((64, 64), np.float16)
    launch(tiled_matmul_kernel, t.block_dim, a, np.ascontiguousarray(b), None, c, short)
    assert not np.array_equal(c, matmul_reference(a, b))
    with pytest.raises(ValueError, match="does not describe"):
        tiled_matmul(a, b, tiling=short)
    with pytest.raises(ValueError, match="multiples of the 16"):
        TiledMatmulTiling(64, 64, 64, 24, 64, 64)


def test_default_operator_is_the_matmul_api_with_default_tiling_and_exact():
    rng = np.random.default_rng(4)
    a, b, bias = ints(rng, (100, 90)), ints(rng, (90, 70)), rng.integers(-9, 9, 70).astype(np.float32)
    c, res = default_matmul(a, b, bias, out_dtype=np.float32)
    np.testing.assert_array_equal(c, matmul_reference(a, b, bias, out_dtype=np.float32))
    assert res.block_dim == default_tiling(100, 70, 90, bias=True, out_dtype=np.float32).usedCoreNum


def test_256_cube_exercise_at_least_30_percent_faster_than_the_default():
    rng = np.random.default_rng(5)
    a, b = rng.uniform(-1, 1, (256, 256)).astype(np.float16), rng.uniform(-1, 1, (256, 256)).astype(np.float16)
    c0, base = default_matmul(a, b)
    c1, fast = tiled_matmul(a, b)
    np.testing.assert_array_equal(c1, c0)
    assert fast.cycles <= 0.70 * base.cycles, (fast.cycles, base.cycles)
    slow = TiledMatmulTiling(256, 256, 256, 64, 64, 32)     # square tiles, short K steps: B as 256 short rows
    _, res = tiled_matmul(a, b, tiling=slow)
    # slower than the default's body: the default also pays the Matmul API's kernel head (Matmul.Init, issue 30),
    # which a hand-tiled kernel does not
    chip = base.chip
    assert res.cycles > base.cycles - (chip.matmul_tiling_copy_cycles + chip.matmul_init_cycles)


def test_choose_tiling_fits_the_buffers():
    t = choose_tiling(50176, 16, 32)
    assert t.block_dim == 24 and t.singleM * t.singleN * 4 <= 128 * 1024


@pytest.mark.parametrize("n, C, H, O, k, pad", [(2, 1, 28, 6, 5, 2), (3, 6, 14, 16, 5, 0), (2, 3, 9, 20, 3, 1)])
@pytest.mark.parametrize("out", [np.float16, np.float32])
@pytest.mark.parametrize("src", [np.float16, np.float32])        # float32 inputs: C0 = 8 on the cube
def test_conv2d_cube_exact(n, C, H, O, k, pad, out, src):
    rng = np.random.default_rng(n * C * H)
    x, w = ints(rng, (n, C, H, H), -3, 4, src), ints(rng, (O, C, k, k), -3, 4, src)
    b = rng.integers(-9, 9, O).astype(np.float32)
    y, _ = conv2d_cube(x, w, b, pad, out_dtype=out)
    np.testing.assert_array_equal(y, conv_reference(x, w, b, pad, out_dtype=out))
    direct = np.zeros_like(y, np.float64)                 # an independent direct convolution
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    for i in range(k):
        for j in range(k):
            direct += np.einsum("nchw,oc->nohw", xp[:, :, i:i + y.shape[2], j:j + y.shape[3]], w[:, :, i, j])
    np.testing.assert_array_equal(y, (direct + b[:, None, None]).astype(np.float32).astype(out))


def test_im2col_rows_are_receptive_fields():
    x = np.arange(2 * 2 * 4 * 4, dtype=np.float32).reshape(2, 2, 4, 4)
    cols = im2col(x, 3, 3)
    assert cols.shape == (2 * 2 * 2, 18)
    np.testing.assert_array_equal(cols[3], x[0, :, 1:4, 1:4].ravel())


def test_conv_bn_relu_fused_matches_unfused_numpy():
    rng = np.random.default_rng(6)
    x, w = rng.uniform(-1, 1, (2, 3, 10, 10)), rng.uniform(-0.5, 0.5, (8, 3, 3, 3))
    b, gamma, beta = rng.uniform(-0.2, 0.2, 8), rng.uniform(0.5, 1.5, 8), rng.uniform(-0.3, 0.3, 8)
    mean, var = rng.uniform(-0.2, 0.2, 8), rng.uniform(0.5, 2.0, 8)
    y, res = conv_bn_relu(x, w, b, gamma, beta, mean, var, pad=1, out_dtype=np.float32)
    w2, b2 = fold_bn(w, b, gamma, beta, mean, var)
    # random reals: fp32 accumulation order differs from the float64 reference in the last bit (exact on integers)
    np.testing.assert_allclose(y, conv_reference(x, w2, b2, 1, relu=True, out_dtype=np.float32), rtol=1e-6, atol=1e-6)
    z = conv_reference(x, w, b, 1, out_dtype=np.float32).astype(np.float64)       # conv, then BN, then ReLU
    s = (gamma / np.sqrt(var + 1e-5))[None, :, None, None]
    unfused = np.maximum((z - b[None, :, None, None] + b[None, :, None, None] - mean[None, :, None, None]) * s
                         + beta[None, :, None, None], 0)
    np.testing.assert_allclose(y, unfused, atol=2e-2)
    wrong = np.maximum(z * s + beta[None, :, None, None], 0)                       # forgot the mean
    assert np.abs(y - wrong).max() > 5e-2
    assert res.block_dim >= 1


@pytest.mark.parametrize("M, N, K", [(256, 256, 256), (100, 64, 90)])
@pytest.mark.parametrize("out", [np.float16, np.float32])
@pytest.mark.parametrize("src", [np.float16, np.float32])
def test_mix_matmul_add_relu_exact_and_costs_the_workspace_round_trip(M, N, K, out, src):
    from ascend_sim.kernels.opt.matmul_mix import matmul_add_relu_mix_run
    rng = np.random.default_rng(7)
    a, b = ints(rng, (M, K), dtype=src), ints(rng, (K, N), dtype=src)
    bias = rng.integers(-60, 60, N).astype(np.float32)
    c, mix = matmul_add_relu_mix_run(a, b, bias, out_dtype=out)
    np.testing.assert_array_equal(c, matmul_reference(a, b, bias, relu=True, out_dtype=out))
    _, fused = tiled_matmul(a, b, bias, relu=True, out_dtype=out)
    assert mix.cycles > fused.cycles                                  # the epilogue on Fixpipe is cheaper
    with pytest.raises(ValueError, match="multiple of 16"):
        matmul_add_relu_mix_run(a[:, :K], b[:, :N - 1], bias[:N - 1])


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_conv_weights_cached_or_reread_give_the_same_numbers(dtype):
    from ascend_sim.kernels.opt.conv_weights import conv2d_weights
    from ascend_sim.models.lenet_reference import conv2d_ref
    rng = np.random.default_rng(8)
    d = np.dtype(dtype)
    x, w, b = rng.uniform(-1, 1, (40, 3, 8, 8)).astype(d), rng.uniform(-.3, .3, (5, 3, 3, 3)).astype(d), \
        rng.uniform(-.1, .1, 5).astype(d)
    y1, cached = conv2d_weights(x, w, b, 1, cache=True, dtype=dtype)
    y0, reread = conv2d_weights(x, w, b, 1, cache=False, dtype=dtype)
    np.testing.assert_array_equal(y0, y1)
    np.testing.assert_allclose(y1.astype(np.float64), conv2d_ref(x, w, b, 1).astype(np.float64),
                               rtol=1e-2 if d == np.float16 else 1e-5, atol=1e-3 if d == np.float16 else 1e-6)
    mte2 = [sum(1 for r in res.trace if r.pipe == "MTE2") for res in (cached, reread)]
    assert mte2[1] > mte2[0]                  # the re-read costs one more GM copy per chunk


def test_resident_weights_and_depth_one_are_exact_and_the_knobs_matter():
    """B (the weights) kept in L1 across a core's tiles, and single buffering: same numbers, other times."""
    rng = np.random.default_rng(9)
    # 6,000 rows: 63 tiles of 96 on 24 cores, 2-3 a core, so keeping B resident saves 1-2 re-reads a core (with
    # 3,000, 1-2 tiles a core, resident and streamed were 7 cycles apart and the order hung on the row floor)
    a, b, bias = ints(rng, (6000, 150)), ints(rng, (150, 16)), rng.integers(-9, 9, 16).astype(np.float32)
    t = choose_tiling(6000, 16, 150, bias=True, relu=True)
    assert t.resident_b and t.tiles > t.block_dim
    want = matmul_reference(a, b, bias, relu=True)
    times = {}
    variants = {"resident": t, "streamed": replace(t, resident_b=False), "single": replace(t, depth=1),
                "streamed single": replace(t, resident_b=False, depth=1)}
    for name, tt in variants.items():
        c, res = tiled_matmul(a, b, bias, relu=True, tiling=tt)
        np.testing.assert_array_equal(c, want)
        times[name] = res.cycles
    assert times["resident"] < times["streamed"] < times["streamed single"] and times["resident"] < times["single"]


def test_conv2d_relu_vector_fused_equals_conv_then_relu():
    from ascend_sim.kernels import conv2d, relu
    from ascend_sim.kernels.opt.conv_relu_vec import conv2d_relu
    rng = np.random.default_rng(10)
    for dtype in ("float16", "float32"):
        x, w, b = rng.uniform(-1, 1, (20, 2, 9, 9)), rng.uniform(-.4, .4, (4, 2, 3, 3)), rng.uniform(-.1, .1, 4)
        y0, r0 = conv2d(x, w, b, 1, dtype=dtype)
        y1, r1 = relu(y0, dtype=dtype)
        y2, r2 = conv2d_relu(x, w, b, 1, dtype=dtype)
        np.testing.assert_array_equal(y2, y1)
        assert (y1 == 0).any() and not np.array_equal(y0, y1)
        assert r2.cycles < r0.cycles + r1.cycles


@pytest.mark.parametrize("depth", [1, 2])
def test_bias_tiles_fit_the_bias_table(depth):
    rng = np.random.default_rng(11)
    a, b, bias = ints(rng, (33, 130)), ints(rng, (130, 300)), rng.integers(-9, 9, 300).astype(np.float32)
    t = choose_tiling(33, 300, 130, bias=True, relu=True, depth=depth)
    assert t.singleN * 4 <= 1024
    c, _ = tiled_matmul(a, b, bias, relu=True, tiling=t)
    np.testing.assert_array_equal(c, matmul_reference(a, b, bias, relu=True))


# ============================================================================ fc1 -> fc2 -> fc3 in one kernel
def mlp_layers(rng, dims, lo=-2, hi=3):
    return [(rng.integers(lo, hi, (dims[i], dims[i + 1])).astype(np.float16),
             rng.integers(-4, 5, dims[i + 1]).astype(np.float32)) for i in range(len(dims) - 1)]


def mlp_reference(x, layers, relus):
    h = x
    for (w, b), r in zip(layers, relus):
        h = matmul_reference(h, w, b, relu=r)
    return h


@pytest.mark.parametrize("M, dims, cores", [(100, [400, 120, 84, 10], None), (37, [40, 20, 30], 3),
                                            (64, [16, 16], 2), (40, [32, 32, 16], 2)],
                         ids=["lenet-fc", "tail-rows", "one-layer", "short-last-core"])
def test_mlp_cube_chain_is_exact_and_one_launch(M, dims, cores):
    rng = np.random.default_rng(M)
    x = rng.integers(-2, 3, (M, dims[0])).astype(np.float16)
    layers = mlp_layers(rng, dims, -1, 2)
    relus = [True] * (len(layers) - 1) + [False]
    y, res = mlp_cube(x, layers, cores=cores)
    np.testing.assert_array_equal(y, mlp_reference(x, layers, relus))
    fix = [r for r in res.trace.records if r.op == "Fixpipe"]
    assert len(fix) == res.block_dim * len(layers)          # one Fixpipe per layer and core, one launch


def test_mlp_cube_each_relu_and_layer_matters():
    rng = np.random.default_rng(7)
    x = rng.integers(-2, 3, (48, 64)).astype(np.float16)
    layers = mlp_layers(rng, [64, 32, 16])
    y, _ = mlp_cube(x, layers)
    assert not np.array_equal(y, mlp_reference(x, layers, [False, False]))      # the hidden ReLU is applied
    assert not np.array_equal(y, mlp_reference(x, layers[:1] + [(layers[1][0], 0 * layers[1][1])], [True, False]))
    np.testing.assert_array_equal(y, mlp_reference(x, layers, [True, False]))


def test_mlp_cube_activations_go_back_as_nz_in_one_copy():
    rng = np.random.default_rng(8)
    x = rng.integers(-2, 3, (96, 400)).astype(np.float16)
    _, res = mlp_cube(x, mlp_layers(rng, [400, 120, 84, 10]), cores=2)
    nz = [r for r in res.trace.records if r.op == "Fixpipe" and r.nbytes == 48 * 128 * 2]
    assert len(nz) == 2                                  # fc1's 48 x 128 activation, one NZ write per core
    back = [r for r in res.trace.records if r.op == "DataCopy" and r.nbytes == 48 * 128 * 2]
    assert len(back) == 2 and all(r.src == "GM" and r.dst == "L1" for r in back)    # and one plain copy back
    with pytest.raises(ValueError, match="BT buffer"):
        mlp_cube(x[:, :16], mlp_layers(rng, [16, 512, 16]))


# ============================================================================ softmax in the MLP's row layout
@pytest.mark.parametrize("M", [1000, 37, 5])
def test_softmax_rows_matches_numpy_and_ignores_the_padded_classes(M):
    rng = np.random.default_rng(M)
    x = np.zeros((M, 16), np.float16)
    x[:, :10] = rng.standard_normal((M, 10)) * 4
    x[:, 10:] = 30                                   # padded classes: must not count
    p, res = softmax_rows(x, 10)
    xf = x[:, :10].astype(np.float64)
    e = np.exp(xf - xf.max(1, keepdims=True))
    ref = e / e.sum(1, keepdims=True)
    assert p.shape == (M, 10) and np.abs(p - ref).max() < 4e-3
    wrong, _ = softmax_rows(x, 16)                   # the padding counted: far off
    assert np.abs(wrong[:, :10] - ref).max() > 0.5
    assert {"BlockReduceMax", "BlockReduceSum", "Brcb", "Exp"} <= {r.op for r in res.trace.records}
    with pytest.raises(ValueError, match="float16"):
        softmax_rows(x[:, :10], 10)


def test_mlp_cube_pad_out_writes_whole_blocks_per_row():
    rng = np.random.default_rng(9)
    x = rng.integers(-2, 3, (40, 64)).astype(np.float16)
    layers = mlp_layers(rng, [64, 32, 10], -1, 2)
    y, _ = mlp_cube(x, layers)
    yp, _ = mlp_cube(x, layers, pad_out=True)
    assert yp.shape == (40, 16) and y.shape == (40, 10)
    np.testing.assert_array_equal(yp[:, :10], y)
    assert not yp[:, 10:].any()
