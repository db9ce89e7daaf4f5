"""The C++ twins of the LeNet-5 library kernels (ascend_sim/kernels/cpp/*.cpp) are exact against numpy and run the
same instructions as their Python kernels (same outputs, same cycles), launched through the host wrappers'
``kernel=``. Each exactness check is also shown to fail on a kernel with one plausible bug."""
from pathlib import Path

import numpy as np
import pytest

from ascend_sim.ascendc import load
from ascend_sim.kernels.conv2d import conv2d
from ascend_sim.kernels.linear import linear
from ascend_sim.kernels.maxpool import maxpool2d
from ascend_sim.kernels.softmax import softmax

CPP = Path(__file__).resolve().parents[2] / "ascend_sim" / "kernels" / "cpp"
RNG_SEED = 27


def grid(rng, shape, lo, hi):
    """Halves on a 1/16 grid: every product and float32 partial sum below is exact, so any summation order gives
    the same float32 value and the single rounding to half is numpy's."""
    return (rng.integers(lo * 16, hi * 16, shape) / 16).astype(np.float16)


# ----------------------------------------------------------------------------- numpy references
def conv_exact(x, w, b, pad):
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, C, Hp, Wp = xp.shape
    O, _, KH, KW = w.shape
    y = np.zeros((n, O, Hp - KH + 1, Wp - KW + 1))
    for i in range(KH):
        for j in range(KW):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + y.shape[2], j:j + y.shape[3]], w[:, :, i, j].astype(float))
    return (y + b.astype(np.float64)[None, :, None, None]).astype(np.float16)


def maxpool_exact(x, k, s):
    n, C, H, W = x.shape
    OH, OW = (H - k) // s + 1, (W - k) // s + 1
    win = [x[:, :, dy:dy + s * (OH - 1) + 1:s, dx:dx + s * (OW - 1) + 1:s] for dy in range(k) for dx in range(k)]
    return np.maximum.reduce(win)


def tree(op, rows):
    """The kernel's halving tree over a list of float32 rows: rows i and n-h+i, an odd middle row kept."""
    rows = list(rows)
    while len(rows) > 1:
        h = len(rows) // 2
        rows = [op(rows[i], rows[len(rows) - h + i]) for i in range(h)] + rows[h:len(rows) - h]
    return rows[0]


def softmax_exact(x):
    """float32 like the kernel: max, sub, np.exp, the Add tree in the kernel's order, div; one rounding to half."""
    z = x.astype(np.float32).T                                  # [K, N]
    e = np.exp(z - tree(np.maximum, z))
    return (e / tree(np.add, e)).T.astype(np.float16)


# ----------------------------------------------------------------------------- cases
@pytest.fixture(scope="module")
def kernels():
    return {name: load(CPP / f"{name}.cpp") for name in ("conv2d", "maxpool", "linear", "softmax")}


def run_conv(mod, case, rng):
    n, C, H, W, O, K, pad, block_dim = case
    x, w, b = grid(rng, (n, C, H, W), 0, 2), grid(rng, (O, C, K, K), -1, 1), grid(rng, O, -2, 2)
    return (conv2d(x, w, b, pad, block_dim=block_dim, kernel=mod.conv2d_cpp),
            conv2d(x, w, b, pad, block_dim=block_dim), conv_exact(x, w, b, pad))


def run_pool(mod, case, rng):
    n, C, H, W, k, s = case
    x = rng.standard_normal((n, C, H, W)).astype(np.float16)
    return maxpool2d(x, k, s, kernel=mod.maxpool2d_cpp), maxpool2d(x, k, s), maxpool_exact(x, k, s)


def run_linear(mod, case, rng):
    n, K, O = case
    x, w, b = grid(rng, (n, K), 0, 1), grid(rng, (O, K), -1, 1), grid(rng, O, -1, 1)
    ref = (x.astype(np.float64) @ w.astype(np.float64).T + b).astype(np.float16)
    return linear(x, w, b, kernel=mod.linear_cube_cpp), linear(x, w, b), ref


def run_softmax(mod, case, rng):
    n, K = case
    x = (rng.standard_normal((n, K)) * 12).astype(np.float16)
    return softmax(x, kernel=mod.softmax_cpp), softmax(x), softmax_exact(x)


CASES = {   # LeNet's shapes, then several chunks and blocks, output-channel groups, bands, odd sizes
    "conv2d": (run_conv, [(4, 1, 28, 28, 6, 5, 2, None), (32, 6, 14, 14, 16, 5, 0, None),
                          (40, 2, 9, 7, 5, 3, 1, 3), (20, 1, 36, 36, 4, 3, 1, 2), (40, 2, 9, 7, 5, 3, 1, 1)]),
    "maxpool": (run_pool, [(4, 6, 28, 28, 2, 2), (40, 16, 10, 10, 2, 2), (3, 2, 9, 9, 3, 2), (5, 3, 7, 8, 2, 3),
                           (2, 1, 4, 300, 2, 2)]),     # rows of 300 pixels: strides too long, one row at a time
    "linear": (run_linear, [(8, 400, 120), (200, 120, 84), (3, 84, 10), (130, 700, 20)]),
    "softmax": (run_softmax, [(8, 10), (100, 10), (3, 7), (70, 1), (20, 33)]),
}


@pytest.mark.parametrize("name,index", [(k, i) for k, (_, cases) in CASES.items() for i in range(len(cases))])
def test_cpp_twin_is_exact_and_matches_the_python_kernel(kernels, name, index):
    runner, cases = CASES[name]
    (y_cpp, r_cpp), (y_py, r_py), ref = runner(kernels[name], cases[index], np.random.default_rng(RNG_SEED + index))
    np.testing.assert_array_equal(y_cpp, ref)
    np.testing.assert_array_equal(y_cpp, y_py)
    assert r_cpp.cycles == r_py.cycles


def test_conv_cases_cover_groups_chunks_and_bands():
    """The conv cases above reach every branch of the kernel's tiling: several output-channel groups, several
    chunks per block and output rows in more than one band."""
    from ascend_sim.kernels.conv2d import choose_tiling
    tilings = [choose_tiling(C, H, W, O, K, K, pad, n, "float16", block_dim=bd)
               for n, C, H, W, O, K, pad, bd in CASES["conv2d"][1]]
    assert any(t.o_groups > 1 for t in tilings) and any(t.o_groups == 1 for t in tilings)
    assert any(t.chunks > 1 for t in tilings)
    assert any(t.rows < t.OH for t in tilings)


BUGS = {   # one plausible bug per kernel: (kernel, the correct text, the wrong text)
    "conv2d": ("Duplicate(acc, bv[k], count);", "Duplicate(acc, 0.0f, count);"),               # forgets the bias
    "maxpool": ("MaxGrid(h, xLocal, xLocal[LANES], channels * H, OW, hRows, xCols, xCols);",
                "MaxGrid(h, xLocal, xLocal[LANES], channels * H, OW, hRows, xCols, hRows);"),    # second tap unstrided
    "linear": ("static_cast<uint16_t>(bk), 0, false, firstStep});",
               "static_cast<uint16_t>(bk), 0, false, true});"),                                 # restarts L0C each step
    "softmax": ("Exp(xf, xf, K * width);", "Exp(xf, xf, width);"),                            # exp of class 0 only
}


@pytest.mark.parametrize("name", sorted(BUGS))
def test_the_exactness_check_fails_on_a_wrong_kernel(name):
    right, wrong = BUGS[name]
    source = (CPP / f"{name}.cpp").read_text(encoding="utf-8")
    assert source.count(right) == 1
    mod = load(source.replace(right, wrong), name=f"wrong_{name}")
    runner, cases = CASES[name]
    (y_cpp, _), _, ref = runner(mod, cases[0], np.random.default_rng(RNG_SEED))
    with pytest.raises(AssertionError):
        np.testing.assert_array_equal(y_cpp, ref)
