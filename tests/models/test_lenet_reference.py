"""The numpy reference LeNet-5: each op against a plain loop version, and the shipped weights' accuracy."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from ascend_sim.models.datasets import MNIST_DIR_ENV, load_mnist_idx, load_mnist_subset
from ascend_sim.models.lenet_reference import (LENET_PARAM_SHAPES, conv2d_ref, lenet_forward_ref, lenet_predict_ref,
                                               linear_ref, load_lenet_weights, maxpool2d_ref, relu_ref, softmax_ref)

REPO_ROOT = Path(__file__).resolve().parents[2]


# ---- straightforward loop implementations (float64) -------------------------------------------


def conv2d_loop(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> np.ndarray:
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad))
    xp[:, :, pad : pad + h, pad : pad + wd] = x
    out = np.zeros((n, o, h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1))
    for ni in range(n):
        for oi in range(o):
            for i in range(out.shape[2]):
                for j in range(out.shape[3]):
                    acc = b[oi]
                    for ci in range(c):
                        for di in range(kh):
                            for dj in range(kw):
                                acc += xp[ni, ci, i + di, j + dj] * w[oi, ci, di, dj]
                    out[ni, oi, i, j] = acc
    return out


def maxpool2d_loop(x: np.ndarray, k: int, s: int) -> np.ndarray:
    n, c, h, w = x.shape
    out = np.zeros((n, c, (h - k) // s + 1, (w - k) // s + 1), x.dtype)
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            out[:, :, i, j] = x[:, :, i * s : i * s + k, j * s : j * s + k].max(axis=(2, 3))
    return out


def linear_loop(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros((x.shape[0], w.shape[0]))
    for n in range(x.shape[0]):
        for o in range(w.shape[0]):
            out[n, o] = b[o] + sum(x[n, k] * w[o, k] for k in range(x.shape[1]))
    return out


def softmax_loop(x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    for r, row in enumerate(x):
        e = [np.exp(v - max(row)) for v in row]
        out[r] = [v / sum(e) for v in e]
    return out


def assert_matches(actual: np.ndarray, expected: np.ndarray) -> None:
    """The comparison the course uses: same shape, and close within float64 round-off."""
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-12)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


# ---- ops vs loops ----------------------------------------------------------------------------


@pytest.mark.parametrize(("shape", "kernel", "pad"), [((2, 3, 7, 6), 3, 0), ((1, 1, 6, 6), 5, 2), ((2, 2, 5, 5), 2, 1)])
def test_conv2d_matches_loops(rng: np.random.Generator, shape: tuple[int, ...], kernel: int, pad: int) -> None:
    x = rng.normal(size=shape)
    w = rng.normal(size=(4, shape[1], kernel, kernel))
    b = rng.normal(size=4)
    assert_matches(conv2d_ref(x, w, b, pad=pad), conv2d_loop(x, w, b, pad))


@pytest.mark.parametrize(("size", "k", "s"), [(6, 2, 2), (7, 3, 2), (5, 2, 1)])
def test_maxpool2d_matches_loops(rng: np.random.Generator, size: int, k: int, s: int) -> None:
    x = rng.normal(size=(2, 3, size, size))
    assert_matches(maxpool2d_ref(x, k, s), maxpool2d_loop(x, k, s))


def test_linear_matches_loops(rng: np.random.Generator) -> None:
    x, w, b = rng.normal(size=(3, 7)), rng.normal(size=(5, 7)), rng.normal(size=5)
    assert_matches(linear_ref(x, w, b), linear_loop(x, w, b))


def test_relu_matches_definition(rng: np.random.Generator) -> None:
    x = rng.normal(size=(4, 9))
    assert_matches(relu_ref(x), np.array([[v if v > 0 else 0.0 for v in row] for row in x]))


def test_softmax_matches_loops_and_is_stable(rng: np.random.Generator) -> None:
    x = rng.normal(size=(3, 10)) * 5
    assert_matches(softmax_ref(x), softmax_loop(x))
    big = softmax_ref(np.array([[1000.0, 1000.0, -1000.0]], dtype=np.float32))
    np.testing.assert_allclose(big, [[0.5, 0.5, 0.0]])


def test_comparison_detects_a_wrong_answer(rng: np.random.Generator) -> None:
    x, w, b = rng.normal(size=(1, 2, 6, 6)), rng.normal(size=(3, 2, 3, 3)), rng.normal(size=3)
    expected = conv2d_loop(x, w, b, pad=1)
    wrong = conv2d_ref(x, w, b, pad=1)
    wrong[0, 1, 2, 3] += 1e-3  # one element off
    with pytest.raises(AssertionError, match="Mismatched elements: 1 /"):
        assert_matches(wrong, expected)
    flipped = conv2d_ref(x, w[:, :, ::-1, ::-1], b, pad=1)  # true convolution instead of cross-correlation
    with pytest.raises(AssertionError):
        assert_matches(flipped, expected)


def test_fp16_rounds_once_per_op(rng: np.random.Generator) -> None:
    x = rng.normal(size=(2, 3, 8, 8)).astype(np.float16)
    w = rng.normal(size=(4, 3, 5, 5)).astype(np.float16)
    b = rng.normal(size=4).astype(np.float16)
    y = conv2d_ref(x, w, b, pad=2)
    assert y.dtype == np.float16
    f32 = conv2d_ref(x.astype(np.float32), w.astype(np.float32), b.astype(np.float32), pad=2)
    np.testing.assert_array_equal(y, f32.astype(np.float16))
    assert softmax_ref(y.reshape(2, -1)).dtype == np.float16


# ---- the shipped weights -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def weights() -> dict[str, np.ndarray]:
    return load_lenet_weights()


@pytest.fixture(scope="module")
def heldout() -> tuple[np.ndarray, np.ndarray]:
    return load_mnist_subset("heldout")


def accuracy(weights: dict[str, np.ndarray], images: np.ndarray, labels: np.ndarray, dtype: type) -> float:
    return 100.0 * float((lenet_predict_ref(weights, images, dtype) == labels).mean())


def mnist_test_dir() -> Path | None:
    """The MNIST 10k IDX directory, if this machine has one."""
    for candidate in filter(None, [os.environ.get(MNIST_DIR_ENV)]):      # data paths from the environment only
        if (Path(candidate) / "t10k-images-idx3-ubyte.gz").is_file() or (
            Path(candidate) / "t10k-images-idx3-ubyte"
        ).is_file():
            return Path(candidate)
    return None


def test_weights_file_layout(weights: dict[str, np.ndarray]) -> None:
    assert set(weights) == set(LENET_PARAM_SHAPES)
    for name, shape in LENET_PARAM_SHAPES.items():
        assert weights[name].shape == shape and weights[name].dtype == np.float32


def test_forward_returns_probabilities(weights: dict[str, np.ndarray], heldout: tuple[np.ndarray, np.ndarray]) -> None:
    probs = lenet_forward_ref(weights, heldout[0][:16])
    assert probs.shape == (16, 10) and probs.dtype == np.float32
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    assert lenet_forward_ref(weights, heldout[0][:4], np.float16).dtype == np.float16


def test_heldout_accuracy_fp32_and_fp16(weights: dict[str, np.ndarray], heldout: tuple[np.ndarray, np.ndarray]) -> None:
    fp32 = accuracy(weights, *heldout, np.float32)
    fp16 = accuracy(weights, *heldout, np.float16)
    assert fp32 >= 96.0, f"held-out accuracy {fp32:.2f}% < 96%"
    assert abs(fp16 - fp32) <= 0.5, f"fp16 {fp16:.2f}% vs fp32 {fp32:.2f}%"


def test_mnist_10k_accuracy(weights: dict[str, np.ndarray]) -> None:
    directory = mnist_test_dir()
    if directory is None:
        pytest.skip(f"MNIST 10k test set not found: set {MNIST_DIR_ENV} to the folder of the IDX files")
    fp32 = accuracy(weights, *load_mnist_idx(directory, "t10k"), np.float32)
    assert fp32 >= 97.0, f"MNIST 10k accuracy {fp32:.2f}% < 97%"
