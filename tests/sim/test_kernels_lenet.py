"""The LeNet-5 operator kernels (ascend_sim.kernels) against the numpy reference, in float16 and float32.

Goldens: float16 runs compare with ``lenet_reference`` on the same float16
inputs (float32 compute, one rounding to float16 per op); float32 runs with
the reference computed in float64 and rounded to float32. The comparison is
``verify.compare`` with the dtype's tolerance. Every kernel also has a
wrong-answer case the same comparison must reject.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from ascend_sim import kernel
from ascend_sim.kernels import conv2d, linear, maxpool2d, relu, softmax
from ascend_sim.kernels._common import block_range, run, to_lanes, from_lanes
from ascend_sim.kernels.conv2d import Conv2dTiling, choose_tiling, pad_runs
from ascend_sim.kernels.relu import KernelRelu, ReluTiling
from ascend_sim.models.lenet_reference import conv2d_ref, linear_ref, maxpool2d_ref, relu_ref, softmax_ref
from ascend_sim.analysis.verify import compare

DTYPES = ["float16", "float32"]


def golden(ref, dtype: str, *arrays, **kw) -> np.ndarray:
    """The reference op on the kernel's inputs (already in ``dtype``), as the kernel's dtype."""
    if dtype == "float16":
        return ref(*arrays, **kw)
    return ref(*[a.astype(np.float64) for a in arrays], **kw).astype(np.float32)


def check(out: np.ndarray, gold: np.ndarray, dtype: str) -> None:
    assert out.dtype == np.dtype(dtype) and out.shape == gold.shape
    res = compare(out, gold, dtype)
    assert res.passed, str(res)


def rand(rng, shape, dtype, lo=-1.0, hi=1.0) -> np.ndarray:
    return rng.uniform(lo, hi, shape).astype(dtype)


# ----------------------------------------------------------------------------- conv2d
CONV_CASES = [   # n, C, H, W, O, K, pad, block_dim
    (3, 1, 28, 28, 6, 5, 2, None),       # LeNet conv1
    (17, 6, 14, 14, 16, 5, 0, 3),        # LeNet conv2, batch not a multiple of a chunk
    (1, 2, 7, 9, 3, 3, 1, 1),            # batch 1, odd sizes
    (5, 3, 11, 6, 4, 3, 2, 2),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n, C, H, W, O, K, pad, blocks", CONV_CASES)
def test_conv2d_matches_reference(dtype, n, C, H, W, O, K, pad, blocks):
    rng = np.random.default_rng(n * 100 + C)
    x, w, b = rand(rng, (n, C, H, W), dtype, 0, 1), rand(rng, (O, C, K, K), dtype, -.3, .3), rand(rng, O, dtype)
    y, res = conv2d(x, w, b, pad, dtype=dtype, block_dim=blocks)
    check(y, golden(conv2d_ref, dtype, x, w, b, pad=pad), dtype)
    assert res.cycles > 0 and res.block_dim == (blocks or res.block_dim)


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv2d_narrow_tail_chunk_and_tail_band(dtype):
    """Chunks of 2 blocks of lanes over 40 images (the last one narrower), bands of 3 rows over 8 (last 2)."""
    rng = np.random.default_rng(7)
    x, w, b = rand(rng, (40, 2, 8, 8), dtype), rand(rng, (3, 2, 3, 3), dtype), rand(rng, 3, dtype)
    g = 16 if dtype == "float16" else 8
    t = Conv2dTiling(2, 8, 8, 3, 3, 3, 1, -(-40 // g) * g, 2 * g, 3, 2, np.dtype(dtype))
    y, res = conv2d(x, w, b, 1, dtype=dtype, block_dim=2, tiling=t)
    check(y, golden(conv2d_ref, dtype, x, w, b, pad=1), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv2d_all_ones_hand_derived(dtype):
    """5x5 ones over a 28x28 ones image, pad 2: taps inside = rows inside x columns inside."""
    y, _ = conv2d(np.ones((2, 1, 28, 28), dtype), np.ones((1, 1, 5, 5), dtype), np.array([0.5], dtype), 2,
                  dtype=dtype)
    inside = np.array([min(i, 2) + min(27 - i, 2) + 1 for i in range(28)])     # 3, 4, 5, ..., 5, 4, 3
    want = (np.outer(inside, inside) + 0.5).astype(dtype)
    assert np.array_equal(y[0, 0], want) and np.array_equal(y[1, 0], want)
    assert y[0, 0, 0, 0] == 9.5 and y[0, 0, 0, 1] == 12.5 and y[0, 0, 0, 2] == 15.5       # corner, edges
    assert y[0, 0, 1, 1] == 16.5 and y[0, 0, 1, 2] == 20.5 and y[0, 0, 14, 14] == 25.5    # interior: 25 + bias


def test_conv2d_wrong_answers_are_caught():
    rng = np.random.default_rng(1)
    x, w, b = rand(rng, (4, 2, 9, 9), "float16", 0, 1), rand(rng, (3, 2, 5, 5), "float16"), rand(rng, 3, "float16")
    y, _ = conv2d(x, w, b, 2, dtype="float16")
    bad_w = w.copy()
    bad_w[0, 0, 2, 2] += np.float16(0.25)                               # one perturbed weight
    assert not compare(y, conv2d_ref(x, bad_w, b, pad=2))
    assert not compare(y, conv2d_ref(x, w, np.zeros_like(b), pad=2))   # bias forgotten
    assert not compare(y[:, :, :, 1:], conv2d_ref(x, w, b, pad=2)[:, :, :, :-1])   # off by one column


def test_conv2d_tiling_fits_ub_and_pads_runs():
    from ascend_sim.hw.chips import Ascend910B
    from ascend_sim.kernels.conv2d import conv_ub_bytes
    for args in ((1, 28, 28, 6, 5, 5, 2), (6, 14, 14, 16, 5, 5, 0)):
        for dt in DTYPES:
            t = choose_tiling(*args, 1000, dt)
            assert conv_ub_bytes(*args, t.nb, t.rows, t.in_depth, t.dtype, t.out_depth) <= \
                Ascend910B().ub_usable_bytes
    runs = pad_runs(1, 2, 3, 1)          # 4 x 5 padded plane around a 2 x 3 image
    assert runs == [(0, 6), (9, 2), (14, 6)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv2d_output_channel_groups_split_the_weights(dtype):
    """4 groups of output channels x 2 batch parts: each block reads only its group's weights."""
    rng = np.random.default_rng(9)
    x, w, b = rand(rng, (20, 3, 6, 6), dtype), rand(rng, (7, 3, 3, 3), dtype), rand(rng, 7, dtype)
    g = 16 if dtype == "float16" else 8
    t = Conv2dTiling(3, 6, 6, 7, 3, 3, 0, -(-20 // g) * g, g, 4, 1, np.dtype(dtype), 2, 4)
    y, res = conv2d(x, w, b, dtype=dtype, block_dim=8, tiling=t)
    check(y, golden(conv2d_ref, dtype, x, w, b), dtype)
    reads = [sum(r.op == "GetValue" for r in res.trace.for_core(blk)) for blk in range(8)]
    assert reads == [2 * 27 + 2, 2 * 27 + 2, 2 * 27 + 2, 27 + 1] * 2          # 7 channels as 2, 2, 2, 1
    with pytest.raises(ValueError, match="multiple of the tiling's 4"):
        conv2d(x, w, b, dtype=dtype, block_dim=6, tiling=t)


def test_conv2d_rejects_bad_arguments():
    x = np.zeros((1, 2, 8, 8), np.float16)
    with pytest.raises(ValueError, match="float16 or float32"):
        conv2d(x, np.zeros((1, 2, 3, 3)), np.zeros(1), dtype="int8")
    with pytest.raises(ValueError, match="do not match"):
        conv2d(x, np.zeros((1, 3, 3, 3)), np.zeros(1))
    with pytest.raises(ValueError, match="does not fit"):
        conv2d(x, np.zeros((1, 2, 9, 9)), np.zeros(1))


# ----------------------------------------------------------------------------- maxpool2d
POOL_CASES = [   # n, C, H, W, k, s, block_dim
    (3, 6, 28, 28, 2, 2, None),          # LeNet pool1
    (40, 16, 10, 10, 2, 2, 3),           # LeNet pool2, 3 chunks over 3 blocks
    (1, 3, 7, 9, 2, 2, 1),               # odd sizes: floor, per-row column gathers
    (17, 2, 9, 8, 3, 2, 2),              # 3x3 windows, rows not a multiple of the stride
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n, C, H, W, k, s, blocks", POOL_CASES)
def test_maxpool2d_matches_reference_exactly(dtype, n, C, H, W, k, s, blocks):
    x = rand(np.random.default_rng(n + C), (n, C, H, W), dtype)
    y, _ = maxpool2d(x, k, s, dtype=dtype, block_dim=blocks)
    check(y, maxpool2d_ref(x, k, s), dtype)
    assert np.array_equal(y, maxpool2d_ref(x, k, s))


def test_maxpool2d_wrong_answer_is_caught():
    x = rand(np.random.default_rng(3), (4, 2, 10, 10), "float16")
    y, _ = maxpool2d(x, dtype="float16")
    assert not compare(y, maxpool2d_ref(np.roll(x, 1, axis=3)))      # windows off by one column
    assert not compare(y, -maxpool2d_ref(-x))                        # min pooling


def test_maxpool2d_rejects_a_window_larger_than_the_image():
    with pytest.raises(ValueError, match="must fit"):
        maxpool2d(np.zeros((1, 1, 3, 3), np.float16), 4, 2)


# ----------------------------------------------------------------------------- relu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, blocks, tile_bytes", [
    ((3, 6, 28, 28), None, 32 * 1024),
    ((1, 7), None, 32 * 1024),           # one image, a tail shorter than a 32-byte block
    ((5, 120), 3, 96),                   # many tiles over 3 blocks, last tile partial
])
def test_relu_matches_reference(dtype, shape, blocks, tile_bytes):
    x = rand(np.random.default_rng(5), shape, dtype)
    y, _ = relu(x, dtype=dtype, block_dim=blocks, tile_bytes=tile_bytes)
    check(y, relu_ref(x), dtype)
    assert np.array_equal(y, relu_ref(x))


class _KernelReluFloorTiles(KernelRelu):
    """An off-by-one bug: the tile count rounds down, so the tail tile is never processed."""

    def Process(self) -> None:
        t = self.t
        for i in block_range(t.total // t.tile):
            self.CopyIn(i, t.tile)
            self.Compute(t.tile)
            self.CopyOut(i, t.tile)


@kernel
def _relu_floor_tiles(x, y, tiling):
    op = _KernelReluFloorTiles()
    op.Init(x, y, tiling)
    op.Process()


def test_relu_wrong_answer_is_caught():
    x = rand(np.random.default_rng(6), (3, 100), "float16", 0.1, 1.0)
    y = np.zeros_like(x)
    run(_relu_floor_tiles, 2, x, y, ReluTiling(x.size, 64, np.dtype(np.float16)))
    res = compare(y, relu_ref(x))
    assert not res and res.mismatches == x.size % 64


# ----------------------------------------------------------------------------- linear
LINEAR_CASES = [   # n, K, O, block_dim
    (3, 400, 120, None),                 # LeNet fc1
    (17, 120, 84, 2),                    # LeNet fc2
    (1, 84, 10, 1),                      # LeNet fc3, one image
    (150, 33, 20, 3),                    # several chunks, the last narrower
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n, K, O, blocks", LINEAR_CASES)
def test_linear_matches_reference(dtype, n, K, O, blocks):
    rng = np.random.default_rng(n + K)
    x, w, b = rand(rng, (n, K), dtype, 0, 1), rand(rng, (O, K), dtype, -.2, .2), rand(rng, O, dtype)
    y, res = linear(x, w, b, dtype=dtype, block_dim=blocks)
    check(y, golden(linear_ref, dtype, x, w, b), dtype)
    want_core = "AIC" if dtype == "float16" else "AIV"
    assert {r.core_type for r in res.trace.records} == {want_core}


def test_linear_wrong_answers_are_caught():
    rng = np.random.default_rng(2)
    x, w, b = rand(rng, (20, 84), "float16", 0, 1), rand(rng, (10, 84), "float16"), rand(rng, 10, "float16")
    y, _ = linear(x, w, b, dtype="float16")
    bad_w = w.copy()
    bad_w[3, 40] += np.float16(0.5)
    assert not compare(y, linear_ref(x, bad_w, b))
    assert not compare(y, linear_ref(x, w, np.zeros_like(b)))


def test_linear_engine_and_dtype_must_agree():
    with pytest.raises(ValueError, match="cube takes half"):
        linear(np.zeros((1, 16)), np.zeros((4, 16)), np.zeros(4), dtype="float32", engine="cube")


# ----------------------------------------------------------------------------- softmax
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n, K, blocks", [(3, 10, None), (70, 10, 2), (1, 10, 1), (33, 7, 3)])
def test_softmax_matches_reference(dtype, n, K, blocks):
    x = rand(np.random.default_rng(n * K), (n, K), dtype, -8, 8)
    y, _ = softmax(x, dtype=dtype, block_dim=blocks)
    check(y, golden(softmax_ref, dtype, x), dtype)


def test_softmax_is_stable_for_large_logits():
    x = np.array([[60000.0, 59990.0, -60000.0]], np.float16)        # exp would overflow without the max
    y, _ = softmax(x, dtype="float16")
    assert np.isfinite(y).all() and abs(float(y.astype(np.float32).sum()) - 1) < 1e-3


def test_softmax_wrong_answer_is_caught():
    x = rand(np.random.default_rng(4), (20, 10), "float16", -4, 4)
    y, _ = softmax(x, dtype="float16")
    assert not compare(y, softmax_ref(x.T).T)                         # normalized over the batch instead


# ----------------------------------------------------------------------------- layout helpers
def test_lane_layout_round_trips_and_pads_with_zeros():
    x = np.arange(3 * 2 * 5, dtype=np.float16).reshape(3, 2, 5)
    lanes = to_lanes(x, np.float16)
    assert lanes.shape == (2, 5, 16) and not lanes[..., 3:].any()
    assert np.array_equal(from_lanes(lanes, 3), x)


# ----------------------------------------------------------------------------- random shapes (hypothesis)
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402


@settings(max_examples=int(os.environ.get("LENET_HYPOTHESIS_EXAMPLES", 12)), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 40), C=st.integers(1, 3), H=st.integers(3, 12), W=st.integers(3, 12), O=st.integers(1, 4),
       K=st.sampled_from([1, 3, 5]), pad=st.integers(0, 2), dtype=st.sampled_from(DTYPES),
       blocks=st.sampled_from([None, 1, 2, 5]), seed=st.integers(0, 2**16))
def test_conv2d_random_shapes(n, C, H, W, O, K, pad, dtype, blocks, seed):
    if H + 2 * pad < K or W + 2 * pad < K:
        return
    rng = np.random.default_rng(seed)
    x, w, b = rand(rng, (n, C, H, W), dtype), rand(rng, (O, C, K, K), dtype), rand(rng, O, dtype)
    y, _ = conv2d(x, w, b, pad, dtype=dtype, block_dim=blocks)
    check(y, golden(conv2d_ref, dtype, x, w, b, pad=pad), dtype)


@settings(max_examples=int(os.environ.get("LENET_HYPOTHESIS_EXAMPLES", 12)), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 40), C=st.integers(1, 4), H=st.integers(2, 15), W=st.integers(2, 15),
       k=st.integers(2, 3), s=st.integers(1, 3), dtype=st.sampled_from(DTYPES), blocks=st.sampled_from([None, 1, 3]),
       seed=st.integers(0, 2**16))
def test_maxpool2d_random_shapes(n, C, H, W, k, s, dtype, blocks, seed):
    if H < k or W < k:
        return
    x = rand(np.random.default_rng(seed), (n, C, H, W), dtype)
    y, _ = maxpool2d(x, k, s, dtype=dtype, block_dim=blocks)
    assert np.array_equal(y, maxpool2d_ref(x, k, s))
