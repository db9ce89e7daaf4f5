"""Module 2 cube kernels with float (fp32) inputs: C0 = 8, 16 x 8 fractals, B^T in GM (no b32 transposing load).

Integer-valued data make every product and sum exact in fp32, so those comparisons are bit for bit; random reals
agree within fp32 accumulation order and are far from what half inputs give (the fp32 path is really taken).
"""
from dataclasses import replace

import numpy as np
import pytest

from ascend_sim import KernelError, kernel, launch
from ascend_sim.kernels.opt.conv_cube import conv_bn_relu, conv_reference, fold_bn
from ascend_sim.kernels.opt.tiled_matmul import (KernelTiledMatmul, TiledMatmulTiling, b_for_gm, choose_tiling,
                                                 matmul_reference, tiled_matmul, tiled_matmul_kernel)

F32 = np.dtype(np.float32)


def ints(rng, shape, lo=-4, hi=5):
    return rng.integers(lo, hi, shape).astype(np.float32)


@pytest.mark.parametrize("M, N, K, cores", [(256, 256, 256, None), (100, 70, 90, 3), (33, 300, 130, 5),
                                            (20, 30, 13, None), (64, 48, 8, 1)])
@pytest.mark.parametrize("out", [np.float16, np.float32])
def test_fp32_tiled_matmul_exact_with_tails(M, N, K, cores, out):
    rng = np.random.default_rng(M + N + K)
    a, b = ints(rng, (M, K)), ints(rng, (K, N))
    c, res = tiled_matmul(a, b, out_dtype=out, cores=cores)
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(out)      # exact: small integers
    np.testing.assert_array_equal(c, want)
    np.testing.assert_array_equal(c, matmul_reference(a, b, out_dtype=out))
    mmads = [r for r in res.trace.records if r.op == "Mmad"]
    assert mmads and res.block_dim <= (cores or 24)


def test_fp32_random_reals_within_fp32_rounding_and_not_half():
    rng = np.random.default_rng(1)
    a, b = rng.uniform(-1, 1, (200, 72)).astype(np.float32), rng.uniform(-1, 1, (72, 40)).astype(np.float32)
    t = TiledMatmulTiling(200, 40, 72, 32, 32, 24, F32, cores=3, dtype=F32)      # 7 x 2 tiles, 3 K steps of 24
    c = np.zeros((200, 40), np.float32)
    launch(tiled_matmul_kernel, t.block_dim, a, b_for_gm(b, F32), None, c, t)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, exact, rtol=1e-5, atol=1e-5)
    half = matmul_reference(a, b, out_dtype=np.float32, dtype=np.float16)
    assert np.abs(half - exact).max() > 100 * np.abs(c - exact).max()          # half inputs would be far off


def test_fp32_tiling_checks_c0_of_the_dtype():
    TiledMatmulTiling(64, 64, 64, 16, 64, 8, dtype=F32)                          # baseK 8 = C0 of float
    with pytest.raises(ValueError, match="C0 = 8"):
        TiledMatmulTiling(64, 64, 64, 16, 64, 12, dtype=F32)
    with pytest.raises(ValueError, match="C0 = 16"):
        TiledMatmulTiling(64, 64, 64, 16, 64, 8)                                 # half: 8 is half a fractal row
    with pytest.raises(ValueError, match="half or float"):
        TiledMatmulTiling(64, 64, 64, 16, 64, 32, dtype=np.int8)
    with pytest.raises(ValueError, match="does not describe"):                   # an fp16 tiling for fp32 inputs
        tiled_matmul(np.ones((64, 64), np.float32), np.ones((64, 64), np.float32),
                     tiling=choose_tiling(64, 64, 64), dtype=np.float32)


class HalfFractals(KernelTiledMatmul):
    """The wrong answer: the half fractal width (C0 = 16, 256 elements) kept for float data."""

    def Init(self, *args) -> None:
        super().Init(*args)
        self.c0, self.fr = 16, 256


@kernel(core="AIC")
def half_fractal_kernel(a, b, bias, c, t) -> None:
    op = HalfFractals()
    op.Init(a, b, bias, c, t)
    op.Process()


@pytest.mark.parametrize("M, N, K", [(64, 48, 64), (100, 70, 90)])
def test_wrong_answers_fractal_width_16_and_b_not_transposed_fail(M, N, K):
    rng = np.random.default_rng(K)
    a, b = ints(rng, (M, K)), ints(rng, (K, N))
    t = choose_tiling(M, N, K, out_dtype=np.float32, dtype=F32)
    want = matmul_reference(a, b, out_dtype=np.float32)
    c = np.zeros((M, N), np.float32)
    launch(tiled_matmul_kernel, t.block_dim, a, b_for_gm(b, F32), None, c, t)
    np.testing.assert_array_equal(c, want)                       # the right kernel on the same harness
    with pytest.raises(KernelError, match="L0A bytes .* that nothing wrote"):
        launch(half_fractal_kernel, t.block_dim, a, b_for_gm(b, F32), None, np.zeros((M, N), np.float32), t)
    wrong = np.zeros((M, N), np.float32)
    launch(tiled_matmul_kernel, t.block_dim, a, np.ascontiguousarray(b), None, wrong, t)    # B, not B^T
    assert not np.array_equal(wrong, want)


def test_fp32_fused_matmul_add_relu_resident_streamed_and_single_buffered():
    rng = np.random.default_rng(9)
    a, b, bias = ints(rng, (3000, 150)), ints(rng, (150, 16)), rng.integers(-60, 60, 16).astype(np.float32)
    t = choose_tiling(3000, 16, 150, bias=True, relu=True, dtype=F32)
    assert t.resident_b and t.tiles > t.block_dim and t.dtype == F32
    want = matmul_reference(a, b, bias, relu=True)
    assert (want == 0).any() and not np.array_equal(want, matmul_reference(a, b, bias))      # ReLU bites
    assert not np.array_equal(want, matmul_reference(a, b, None, relu=True))                # bias bites
    for tt in (t, replace(t, resident_b=False), replace(t, depth=1), replace(t, resident_b=False, baseK=32)):
        c, _ = tiled_matmul(a, b, bias, relu=True, tiling=tt)
        np.testing.assert_array_equal(c, want)


# fp32 inputs through the MIX MatMul+Add+ReLU and conv2d_cube: test_opt_kernels.py, parametrized over the input dtype


def test_fp32_conv_bn_relu_random_reals_within_fp32_rounding():
    rng = np.random.default_rng(6)
    x, w = rng.uniform(-1, 1, (2, 3, 10, 10)).astype(np.float32), rng.uniform(-.5, .5, (8, 3, 3, 3)).astype(np.float32)
    b, gamma, beta = rng.uniform(-0.2, 0.2, 8), rng.uniform(0.5, 1.5, 8), rng.uniform(-0.3, 0.3, 8)
    mean, var = rng.uniform(-0.2, 0.2, 8), rng.uniform(0.5, 2.0, 8)
    y, _ = conv_bn_relu(x, w, b, gamma, beta, mean, var, pad=1, out_dtype=np.float32)
    w2, b2 = fold_bn(w, b, gamma, beta, mean, var)
    want = conv_reference(x, w2, b2, 1, relu=True, out_dtype=np.float32, dtype=np.float32)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    as_half = conv_reference(x, w2, b2, 1, relu=True, out_dtype=np.float32)            # float64 folded: half
    assert np.abs(as_half - want).max() > 100 * np.abs(y - want).max()
    s = (gamma / np.sqrt(var + 1e-5))[None, :, None, None]
    z = conv_reference(x, w, None, 1, out_dtype=np.float32).astype(np.float64) + b[None, :, None, None]
    wrong = np.maximum(z * s + beta[None, :, None, None], 0)                        # forgot the mean
    assert np.abs(y - wrong).max() > 5e-2


def test_fp32_mmad_does_twice_the_fractal_work_of_half():
    """16 x 8 float fractals: twice the K fractals of half per Mmad on the same tile (RESULTS 11)."""
    from ascend_sim.hw.chips import get_chip
    rng = np.random.default_rng(5)
    a, b = ints(rng, (256, 256)), ints(rng, (256, 256))
    start = get_chip(None).cube_startup
    work, total = {}, {}
    for dt in (np.float16, np.float32):
        c, res = tiled_matmul(a.astype(dt), b.astype(dt), tiling=TiledMatmulTiling(256, 256, 256, 16, 128, 64,
                                                                                     dtype=dt))
        np.testing.assert_array_equal(c, matmul_reference(a, b))
        work[dt] = {round(r.cycles - start, 6) for r in res.trace.records if r.op == "Mmad"}   # end - start: float
        total[dt] = res.cycles
    assert len(work[np.float16]) == 1 and work[np.float32] == {2 * w for w in work[np.float16]}
    assert total[np.float32] > 1.3 * total[np.float16]


# ============================================================================ LoadData3D (img2col on MTE1) in fp32
@pytest.mark.parametrize("n, C, H, O, k, pad", [(2, 1, 28, 6, 5, 2), (3, 6, 14, 16, 5, 0), (2, 3, 9, 20, 3, 1),
                                                (2, 16, 6, 16, 3, 1)])
@pytest.mark.parametrize("out, nz_out", [(np.float16, False), (np.float32, False), (np.float32, True)])
def test_fp32_conv2d_l3d_exact_with_channel_and_pixel_tails(n, C, H, O, k, pad, out, nz_out):
    from ascend_sim.kernels.opt.conv_l3d import conv2d_l3d
    rng = np.random.default_rng(n * C * H + k)
    x, w, b = ints(rng, (n, C, H, H), -3, 4), ints(rng, (O, C, k, k), -3, 4), rng.integers(-9, 9, O).astype(np.float32)
    y, res = conv2d_l3d(x, w, b, pad, relu=True, out_dtype=out, nz_out=nz_out)
    assert y.dtype == out and y.shape == (n, O, H + 2 * pad - k + 1, H + 2 * pad - k + 1)
    np.testing.assert_array_equal(y, conv_reference(x, w, b, pad, relu=True, out_dtype=out))
    assert {"LoadData3D", "Mmad", "Fixpipe"} <= {r.op for r in res.trace.records}


def test_fp32_conv2d_l3d_random_reals_and_wrong_layouts_fail():
    from ascend_sim.kernels.opt.conv_l3d import choose_conv_tiling, conv2d_l3d, conv_l3d_kernel, to_5hd, weights_fractal_z
    rng = np.random.default_rng(3)
    x, w = rng.uniform(-1, 1, (2, 6, 8, 8)).astype(np.float32), rng.uniform(-.5, .5, (16, 6, 3, 3)).astype(np.float32)
    b = rng.uniform(-.1, .1, 16).astype(np.float32)
    y, _ = conv2d_l3d(x, w, b, 1, out_dtype=np.float32)
    want = conv_reference(x, w, b, 1, out_dtype=np.float32)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    assert np.abs(conv_reference(x, w, b, 1, out_dtype=np.float32, dtype=np.float16) - want).max() > 100 * \
        np.abs(y - want).max()
    t = choose_conv_tiling(2, 6, 8, 8, 16, 3, 3, 1, out_dtype=np.float32, dtype=np.float32)
    assert t.Cp == 8                                                # channels padded to C0 = 8, not 16

    def run(x5, wg):
        out = np.zeros((2, t.OH, t.OW, t.Op), np.float32)
        launch(conv_l3d_kernel, t.block_dim, x5, wg, b, out, t)
        return out.transpose(0, 3, 1, 2)
    wz = weights_fractal_z(w, t.Cp, t.Op, np.float32)
    np.testing.assert_allclose(run(to_5hd(x, t.Cp, np.float32), np.ascontiguousarray(wz.T)), want, rtol=1e-5,
                               atol=1e-6)                          # the right layouts on the same harness
    assert np.abs(run(to_5hd(x, t.Cp, np.float32), wz) - want).max() > 0.1         # weights not transposed
    half_c0 = to_5hd(x.astype(np.float16), 16).astype(np.float32)    # NC1HWC0 with half's C0 = 16 for float
    assert np.abs(run(half_c0, np.ascontiguousarray(wz.T)) - want).max() > 0.1
    with pytest.raises(ValueError, match="packed for half only"):
        conv2d_l3d(x, w, b, 1, pack=2)
