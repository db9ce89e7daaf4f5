"""kernels/opt/conv_l3d: Conv2D on the cube with LoadData3D (feature map once in L1), exact against numpy."""
import numpy as np
import pytest

from ascend_sim import (ASCEND_IS_AIC, GetBlockIdx, GetBlockNum, GetTaskRatio, RaceError, kernel, launch)
from ascend_sim.kernels.opt.conv_cube import conv2d_cube, conv_reference
from ascend_sim.kernels.opt.conv_pool_mix import (ConvToWorkspace, PoolFromWorkspace, PoolPlan, conv_pool_mix_5hd,
                                                  conv_relu_pool, image_range)
from ascend_sim.kernels.opt.conv_s2d import (conv2d_s2d, conv_relu_pool_s2d, depth_to_space, pool_order, pooled_channels,
                                             s2d_pool_weights, space_to_depth, weights_s2d)
from ascend_sim.kernels.opt.s2d_transdata import S2DTiling, s2d_kernel, s2d_offsets, s2d_transdata
from ascend_sim.kernels.opt.conv_l3d import (choose_conv_tiling, choose_pack, conv2d_l3d, conv_l3d_kernel, to_5hd,
                                             weights_fractal_z)


def ints(rng, shape, lo=-3, hi=4):
    return rng.integers(lo, hi, shape).astype(np.float16)


def direct_conv(x, w, b, pad):
    """An independent direct convolution (float64, one tap at a time)."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    k = w.shape[2]
    oh, ow = xp.shape[2] - k + 1, xp.shape[3] - w.shape[3] + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(k):
        for j in range(w.shape[3]):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j].astype(np.float64))
    return out + np.asarray(b, np.float64)[None, :, None, None]


@pytest.mark.parametrize("n, C, H, O, k, pad", [(5, 1, 28, 6, 5, 2), (3, 6, 14, 16, 5, 0), (5, 20, 9, 40, 3, 1),
                                                (7, 3, 8, 5, 3, 1)], ids=["conv1", "conv2", "C20-C1x2", "C3-pack5"])
@pytest.mark.parametrize("out", [np.float16, np.float32])
def test_conv2d_l3d_exact(n, C, H, O, k, pad, out):
    rng = np.random.default_rng(n * C * H)
    x, w, b = ints(rng, (n, C, H, H)), ints(rng, (O, C, k, k)), rng.integers(-9, 9, O).astype(np.float32)
    y, res = conv2d_l3d(x, w, b, pad, relu=True, out_dtype=out)
    assert y.dtype == out and y.shape == (n, O, H + 2 * pad - k + 1, H + 2 * pad - k + 1)
    np.testing.assert_array_equal(y, np.maximum(direct_conv(x, w, b, pad), 0).astype(np.float32).astype(out))
    assert any(r.op == "LoadData3D" for r in res.trace.records)


@pytest.mark.parametrize("pack", [1, 2])
def test_random_reals_match_to_fp32_rounding_and_the_host_img2col_version(pack):
    rng = np.random.default_rng(4)
    x, w = rng.uniform(-1, 1, (4, 6, 14, 14)).astype(np.float16), rng.uniform(-.3, .3, (16, 6, 5, 5)).astype(np.float16)
    b = rng.uniform(-.1, .1, 16).astype(np.float32)
    y, _ = conv2d_l3d(x, w, b, 0, out_dtype=np.float32, pack=pack)
    # the cube sums K in float32 in its own order: equal to the float64 reference up to the last bits
    np.testing.assert_allclose(y, conv_reference(x, w, b, 0, out_dtype=np.float32), rtol=1e-5, atol=1e-5)
    y0, _ = conv2d_cube(x, w, b, 0, out_dtype=np.float32)
    np.testing.assert_allclose(y, y0, rtol=1e-5, atol=1e-5)


def test_wrong_weight_layout_or_padding_is_caught():
    """The weights in NCHW column order ((c, kh, kw) instead of LoadData3D's (c1, kh, kw, c0)), or a wrong
    bias, give numbers that differ from numpy: the exact test above can fail."""
    rng = np.random.default_rng(5)
    x, w, b = ints(rng, (2, 16, 6, 6)), ints(rng, (16, 16, 3, 3)), np.zeros(16, np.float32)
    want = direct_conv(x, w, b, 1).astype(np.float16)
    t = choose_conv_tiling(2, 16, 6, 6, 16, 3, 3, 1, out_dtype=np.float16)
    wrong_w = np.ascontiguousarray(w.reshape(16, -1).T)                   # (c, kh, kw) rows: not FRACTAL_Z
    y = np.zeros((2, t.OH, t.OW, t.Op), np.float16)
    launch(conv_l3d_kernel, t.block_dim, to_5hd(x, 16), wrong_w, b, y, t)
    assert not np.array_equal(y.transpose(0, 3, 1, 2), want)
    y[...] = 0
    launch(conv_l3d_kernel, t.block_dim, to_5hd(x, 16), weights_fractal_z(w, 16, 16), b, y, t)
    np.testing.assert_array_equal(y.transpose(0, 3, 1, 2), want)       # the right layout: equal
    nobias = np.full(16, 0.0, np.float32)
    nobias[0] = 1.0                                                          # a bias the reference lacks
    y[...] = 0
    launch(conv_l3d_kernel, t.block_dim, to_5hd(x, 16), weights_fractal_z(w, 16, 16), nobias, y, t)
    assert not np.array_equal(y.transpose(0, 3, 1, 2), want)


def test_packing_and_the_feature_map_read_once():
    assert choose_pack(1, 6, 5, 5) > 1 and choose_pack(6, 16, 5, 5) == 2 and choose_pack(20, 40, 3, 3) == 1
    rng = np.random.default_rng(6)
    x, w = ints(rng, (48, 6, 14, 14)), ints(rng, (16, 6, 5, 5))
    _, res = conv2d_l3d(x, w, None, 0, pack=1)
    _, host = conv2d_cube(x, w, None, 0)
    gm_read = lambda r: sum(rec.nbytes for rec in r.trace.records if rec.pipe == "MTE2")  # noqa: E731
    once = 48 * 16 * 14 * 14 * 2 + res.block_dim * (400 * 16 * 2 + 16 * 4)   # 5HD input once, weights+bias per core
    assert gm_read(res) == once
    assert gm_read(host) > 48 * 100 * 150 * 2                                 # the host img2col matrix (12.8x input)
    # time: since issue 30 a GM -> L1 row costs its bytes (not whole 512 B packages), so the img2col matrix's 300 B
    # rows got cheaper and one image per C0 group only ties with it (5,585 vs 5,491 cycles); two images per C0
    # group (the lesson's comparison, course/02_optimization.ipynb) still win: 4,389
    _, packed = conv2d_l3d(x, w, None, 0)
    assert packed.cycles < 0.85 * host.cycles and packed.cycles < res.cycles
    assert res.cycles < 1.05 * host.cycles


def test_weights_too_large_for_l0b_are_refused():
    with pytest.raises(ValueError, match="must stay in L0B"):
        choose_conv_tiling(1, 64, 8, 8, 64, 5, 5)


@pytest.mark.parametrize("n, C, H, O, k, pad", [(5, 1, 28, 6, 5, 2), (3, 6, 14, 16, 5, 0), (2, 20, 9, 40, 3, 1)],
                         ids=["conv1", "conv2", "C20-C1x2"])
def test_nz_output_is_exact_and_writes_one_run_per_16_channels(n, C, H, O, k, pad):
    rng = np.random.default_rng(n * C * H + 1)
    x, w, b = ints(rng, (n, C, H, H)), ints(rng, (O, C, k, k)), rng.integers(-9, 9, O).astype(np.float32)
    y, res = conv2d_l3d(x, w, b, pad, relu=True, nz_out=True)
    np.testing.assert_array_equal(y, np.maximum(direct_conv(x, w, b, pad), 0).astype(np.float16))
    _, nd = conv2d_l3d(x, w, b, pad, relu=True)
    fix = lambda r: [rec for rec in r.trace.records if rec.op == "Fixpipe"]  # noqa: E731
    assert sum(r.nbytes for r in fix(res)) == sum(r.nbytes for r in fix(nd))
    assert sum(r.cycles for r in fix(res)) < sum(r.cycles for r in fix(nd))


@pytest.mark.parametrize("n, C, H, O, k, pad", [(3, 1, 28, 6, 5, 2), (2, 1, 11, 3, 3, 0), (2, 4, 9, 5, 3, 1)],
                         ids=["conv1", "odd-3x3", "C4-b2"])
def test_space_to_depth_conv_is_exact(n, C, H, O, k, pad):
    rng = np.random.default_rng(n * H + k)
    x, w, b = ints(rng, (n, C, H, H)), ints(rng, (O, C, k, k)), rng.integers(-9, 9, O).astype(np.float32)
    y, res = conv2d_s2d(x, w, b, pad, relu=True, out_dtype=np.float32)
    np.testing.assert_array_equal(y, np.maximum(direct_conv(x, w, b, pad), 0).astype(np.float32))
    assert any(r.op == "LoadData3D" for r in res.trace.records)


def test_space_to_depth_with_a_wrong_tap_map_is_caught():
    rng = np.random.default_rng(5)
    x, w = ints(rng, (2, 1, 28, 28)), ints(rng, (6, 1, 5, 5))
    xs = space_to_depth(x, 2, 4, 5, 5)
    ref = direct_conv(x, w, np.zeros(6), 2).astype(np.float32)
    for ws, right in ((weights_s2d(w, 4), True), (weights_s2d(w[:, :, ::-1], 4), False),
                      (weights_s2d(w, 4)[:, :, ::-1], False)):
        ys, _ = conv2d_l3d(xs, ws, None, 0, out_dtype=np.float32, pack=1)
        assert np.array_equal(depth_to_space(ys, 4, 28, 28), ref) == right


def pool_ref(y):
    n, c, h, w = y.shape
    return y.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


@pytest.mark.parametrize("n, C, H, O, pad, pack", [(6, 6, 14, 16, 0, None), (3, 3, 8, 20, 1, 1)],
                         ids=["conv2-packed", "C3-Op32"])
def test_conv_relu_pool_mix_is_exact_in_one_launch(n, C, H, O, pad, pack):
    rng = np.random.default_rng(n + H)
    x, w, b = ints(rng, (n, C, H, H)), ints(rng, (O, C, 5 if H > 8 else 3, 5 if H > 8 else 3)), \
        rng.integers(-9, 9, O).astype(np.float32)
    y, res = conv_relu_pool(x, w, b, pad, pack=pack)
    ref = pool_ref(np.maximum(direct_conv(x, w, b, pad), 0).astype(np.float16))
    np.testing.assert_array_equal(y, ref)
    assert not np.array_equal(y, pool_ref(direct_conv(x, w, b, pad).astype(np.float16)))    # ReLU applied
    ops = {(r.core_type, r.op) for r in res.trace.records}
    assert {("AIC", "LoadData3D"), ("AIC", "Fixpipe"), ("AIV", "Max")} <= ops      # one MIX launch


def test_s2d_conv_relu_pool_groups_mode_is_exact():
    rng = np.random.default_rng(11)
    x, w, b = ints(rng, (4, 1, 28, 28)), ints(rng, (6, 1, 5, 5)), rng.integers(-9, 9, 6).astype(np.float32)
    y, res = conv_relu_pool_s2d(x, w, b, 2)
    np.testing.assert_array_equal(y, pool_ref(np.maximum(direct_conv(x, w, b, 2), 0).astype(np.float16)))
    order = pool_order(6, 4)
    assert sorted(order[order >= 0]) == list(range(96)) and order.size == 128     # 4 groups of 32 channels
    assert res.trace.records and any(r.op == "Max" for r in res.trace.records)


def test_conv_pool_mix_refuses_odd_outputs():
    with pytest.raises(ValueError, match="even sides"):
        conv_relu_pool(np.zeros((2, 6, 13, 13), np.float16), np.zeros((16, 6, 5, 5), np.float16), None, 1)


class _PoolWithoutWaiting(PoolFromWorkspace):
    """The wrong AIV side: reads each image without CrossCoreWaitFlag."""

    def Process(self) -> None:
        lo, hi = image_range(self.n, GetBlockNum(), GetBlockIdx() // GetTaskRatio())
        for img in range(lo, hi):
            if self.count == 0:         # an AIV with no share of the image (as PoolFromWorkspace skips it)
                continue
            self.CopyInBlocks(img)
            self.Compute(self.count)
            self.CopyOutShare(img)


@kernel(core="MIX")
def _mix_without_flags(x, w, bias, ws, y, t, plan):
    if ASCEND_IS_AIC():
        op = ConvToWorkspace()
        op.Init(x, w, bias, ws, t)
        op.Process()
    else:
        pool = _PoolWithoutWaiting()
        pool.InitMix(ws, y, t.N, plan)
        pool.Process()


def test_pool_reading_the_workspace_without_the_cross_core_flag_is_a_race():
    rng = np.random.default_rng(2)
    x, w = ints(rng, (4, 16, 6, 6)), ints(rng, (16, 16, 3, 3))
    t = choose_conv_tiling(4, 16, 6, 6, 16, 3, 3, 0, relu=True, nz_out=True, cores=2)
    plan = PoolPlan("spatial", 1, 4, 4)
    with pytest.raises(RaceError, match="no SyncAll or cross-core flag"):
        launch(_mix_without_flags, 2, to_5hd(x, 16), weights_fractal_z(w, 16, 16), np.zeros(16, np.float32),
               np.zeros(4 * plan.per_image, np.float16), np.zeros(4 * plan.out_per_image, np.float16), t, plan)


# ============================================================================ the layouts made by kernels (LeNet)
@pytest.mark.parametrize("n, C, H, pad, b, k", [(50, 1, 28, 2, 4, 5), (7, 1, 16, 1, 4, 3), (5, 4, 8, 0, 2, 3)],
                         ids=["lenet-conv1", "pad1", "C4-b2"])
def test_s2d_transdata_kernel_is_the_host_space_to_depth(n, C, H, pad, b, k):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, C, H, H)).astype(np.float16)
    y, res = s2d_transdata(x, pad, b, k, k)
    np.testing.assert_array_equal(y, to_5hd(space_to_depth(x, pad, b, k, k), 16))
    assert {r.op for r in res.trace.records} >= {"Gather", "DataCopy"} and res.block_dim > 1


def test_s2d_transdata_with_a_wrong_offset_table_is_caught():
    x = np.random.default_rng(3).standard_normal((8, 1, 28, 28)).astype(np.float16)
    good = s2d_offsets(1, 28, 28, 2, 4, 5, 5, 1)
    ry_rx = good.reshape(8, 8, 16)[:, :, [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15]].ravel()
    for tab, right in ((good, True), (s2d_offsets(1, 28, 28, 1, 4, 5, 5, 1), False), (ry_rx, False)):
        y = np.zeros_like(right_y := to_5hd(space_to_depth(x, 2, 4, 5, 5), 16))
        launch(s2d_kernel, 8, x, np.ascontiguousarray(tab), y, S2DTiling(8, 784, 1024, 1, 8))
        assert np.array_equal(y, right_y) == right
    with pytest.raises(ValueError, match="C0 group"):
        s2d_transdata(np.zeros((2, 2, 28, 28), np.float16), 2, 4, 5, 5)


def test_lenet_convs_chain_through_the_kernels_own_layouts():
    """s2d TransData -> conv1+pool1 (MIX) -> conv2+pool2 (MIX) on pool1's map as it lies: the 5x5x16 pooled
    maps of the direct NCHW convolutions, exactly; reading pool1's channels in NCHW order instead is wrong."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 2, (6, 1, 28, 28)).astype(np.float16)
    w1, b1 = ints(rng, (6, 1, 5, 5), -1, 2), rng.integers(-3, 4, 6).astype(np.float32)
    w2, b2 = ints(rng, (16, 6, 5, 5), -1, 2), rng.integers(-3, 4, 16).astype(np.float32)
    p1 = pool_ref(np.maximum(direct_conv(x, w1, b1, 2), 0).astype(np.float16))
    p2 = pool_ref(np.maximum(direct_conv(p1, w2, b2, 0), 0).astype(np.float16))
    x5, _ = s2d_transdata(x, 2, 4, 5, 5)
    wa, ba = s2d_pool_weights(w1, b1, 4)
    y1, _ = conv_pool_mix_5hd(x5, wa, ba, mode="groups")
    assert y1.shape == (6, 2, 7, 7, 16)
    for chans, right in ((pooled_channels(6, 2), True), (np.where(np.arange(32) < 24, np.arange(32), -1), False)):
        wb, bb = s2d_pool_weights(w2, b2, 2, chans)
        y2, res = conv_pool_mix_5hd(y1, wb, bb, mode="groups")
        assert y2.shape == (6, 1, 5, 5, 16) and res.trace.records
        assert np.array_equal(y2[:, 0].transpose(0, 3, 1, 2), p2) == right
