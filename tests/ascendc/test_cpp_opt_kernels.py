"""The C++ twins of lesson 02's library kernels (ascend_sim/kernels/cpp/*.cpp beside ascend_sim/kernels/opt/) are
exact against numpy and run the same instructions as their Python kernels (same outputs, same cycles), launched
through the host wrappers' ``kernel=``. Each exactness check is also shown to fail on a kernel with one plausible
bug."""
from pathlib import Path

import numpy as np
import pytest

from ascend_sim.ascendc import load
from ascend_sim.kernels.opt.conv_cube import conv2d_cube, conv_bn_relu, conv_gemm_shape
from ascend_sim.kernels.opt.conv_l3d import conv2d_l3d
from ascend_sim.kernels.opt.conv_weights import conv2d_weights
from ascend_sim.kernels.opt.default_matmul import default_matmul
from ascend_sim.kernels.opt.matmul_mix import matmul_add_relu_mix_run
from ascend_sim.kernels.opt.tiled_matmul import choose_tiling
from test_cpp_library_kernels import conv_exact      # the numpy Conv2D of lesson 01's twins

CPP = Path(__file__).resolve().parents[2] / "ascend_sim" / "kernels" / "cpp"
RNG_SEED = 27


def grid(rng, shape, lo, hi, dtype=np.float16):
    """Values on a 1/16 grid: every product and float32 partial sum below is exact, so any summation order gives
    the same float32 value and the single rounding to half is numpy's."""
    return (rng.integers(lo * 16, hi * 16, shape) / 16).astype(dtype)


@pytest.fixture(scope="module")
def kernels():
    return {name: load(CPP / f"{name}.cpp") for name in ("matmul_mix", "conv_weights", "tiled_matmul",
                                                        "default_matmul", "conv_l3d")}


# ----------------------------------------------------------------------------- cases
def run_matmul_mix(mod, case, rng):
    M, N, K, cores = case
    a, b, bias = grid(rng, (M, K), -1, 1), grid(rng, (K, N), -1, 1), grid(rng, N, -2, 2, np.float32)
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0).astype(np.float16)
    return (matmul_add_relu_mix_run(a, b, bias, cores=cores, kernel=mod.matmul_add_relu_mix_cpp),
            matmul_add_relu_mix_run(a, b, bias, cores=cores), ref)


def run_conv_weights(mod, case, rng):
    n, C, H, W, O, K, pad = case
    x, w, b = grid(rng, (n, C, H, W), 0, 2), grid(rng, (O, C, K, K), -1, 1), grid(rng, O, -2, 2)
    return (conv2d_weights(x, w, b, pad, cache=False, kernel=mod.conv2d_reread_cpp),
            conv2d_weights(x, w, b, pad, cache=False), conv_exact(x, w, b, pad))


def run_conv_cube(mod, case, rng):
    n, C, H, W, O, K, pad, relu, cores, stride = case
    x, w, b = grid(rng, (n, C, H, W), 0, 2), grid(rng, (O, C, K, K), -1, 1), grid(rng, O, -2, 2)
    ref = conv_exact(x, w, b, pad)[:, :, ::stride, ::stride]          # stride s: every s-th output of stride 1
    ref = np.maximum(ref, 0) if relu else ref
    b32 = b.astype(np.float32)
    return (conv2d_cube(x, w, b32, pad, stride=stride, relu=relu, cores=cores, kernel=mod.tiled_matmul_cpp),
            conv2d_cube(x, w, b32, pad, stride=stride, relu=relu, cores=cores), ref)


def run_default_matmul(mod, case, rng):
    M, N, K, with_bias, cores = case
    a, b = grid(rng, (M, K), -1, 1), grid(rng, (K, N), -1, 1)
    bias = grid(rng, N, -2, 2, np.float32) if with_bias else None
    ref = a.astype(np.float64) @ b.astype(np.float64) + (bias if with_bias else 0)
    return (default_matmul(a, b, bias, cores=cores, kernel=mod.default_matmul_cpp),
            default_matmul(a, b, bias, cores=cores), ref.astype(np.float16))


def run_conv_l3d(mod, case, rng):
    n, C, H, W, O, K, pad, options = case
    x, w, b = grid(rng, (n, C, H, W), 0, 2), grid(rng, (O, C, K, K), -1, 1), grid(rng, O, -2, 2)
    ref = conv_exact(x, w, b, pad)
    ref = np.maximum(ref, 0) if options.get("relu") else ref
    b32 = b.astype(np.float32)
    return (conv2d_l3d(x, w, b32, pad, kernel=mod.conv_l3d_cpp, **options), conv2d_l3d(x, w, b32, pad, **options),
            ref)


BN_EPS = 2.0 ** -10     # var + eps == 1 exactly below: the folded scale is gamma, on a 1/4 grid


def run_conv_bn_relu(mod, case, rng):
    n, C, H, W, O, K, pad = case
    x, w, b = grid(rng, (n, C, H, W), 0, 2), grid(rng, (O, C, K, K), -1, 1), grid(rng, O, -2, 2)
    gamma, beta, mean = rng.integers(2, 7, O) / 4, grid(rng, O, -1, 1, np.float64), grid(rng, O, -1, 1, np.float64)
    var = np.full(O, 1 - BN_EPS)
    wf = (w.astype(np.float64) * gamma[:, None, None, None]).astype(np.float16)     # exact: few mantissa bits
    bf = (b - mean) * gamma + beta
    ref = np.maximum(conv_exact(x, wf, bf, pad), 0)
    args = (x, w, b, gamma, beta, mean, var, pad)
    return (conv_bn_relu(*args, eps=BN_EPS, kernel=mod.tiled_matmul_cpp), conv_bn_relu(*args, eps=BN_EPS), ref)


CASES = {   # several tiles per core, tail tiles, two column blocks, K in several steps, B resident in L1, odd rows
    "matmul_mix": (run_matmul_mix, [(64, 48, 40, 2), (100, 288, 70, 3), (512, 256, 64, 1), (37, 32, 300, 4),
                                    (256, 256, 256, None)]),
    # lesson 02's conv2 (several chunks: the taps re-read for each), LeNet's conv1, an odd shape with padding
    "conv_weights": (run_conv_weights, [(48, 6, 14, 14, 16, 5, 0), (4, 1, 28, 28, 6, 5, 2), (40, 2, 9, 7, 5, 3, 1)]),
    # lesson 02's conv2 (B and bias resident), one tile (bias streamed per tile), LeNet's conv1, K in several steps,
    # several tiles per core; ReLU on and off; stride 2 (the host keeps every other window)
    "conv_cube": (run_conv_cube, [(8, 6, 14, 14, 16, 5, 0, True, None, 1), (1, 2, 6, 6, 16, 3, 0, True, None, 1),
                                  (4, 1, 28, 28, 6, 5, 2, False, None, 1), (2, 16, 7, 7, 20, 5, 1, True, 2, 1),
                                  (6, 3, 12, 12, 40, 3, 1, False, 1, 1), (5, 6, 15, 13, 16, 3, 1, True, None, 2)]),
    "conv_bn_relu": (run_conv_bn_relu, [(4, 6, 14, 14, 16, 5, 0), (3, 2, 9, 7, 24, 3, 1)]),
    # lesson 02's conv2 (several chunks per image), images packed per C0 group, NC1HWC0 out with ReLU, padding and
    # images split across cores, two channel groups (C > 16) and O not a multiple of 16
    "conv_l3d": (run_conv_l3d, [(8, 6, 14, 14, 16, 5, 0, {"pack": 1}), (9, 6, 14, 14, 16, 5, 0, {}),
                                (4, 6, 14, 14, 16, 5, 0, {"nz_out": True, "relu": True}),
                                (5, 1, 28, 28, 6, 5, 2, {"pack": 1, "cores": 7}),
                                (2, 20, 6, 6, 10, 3, 1, {"relu": True})]),
    # blocks along N with a bias, lesson 02's 256^3 on every core, tails in M and N
    "default_matmul": (run_default_matmul, [(64, 300, 40, True, 2), (256, 256, 256, False, None),
                                            (100, 48, 70, True, 3), (33, 17, 200, False, 4)]),
}


@pytest.mark.parametrize("name,index", [(k, i) for k, (_, cases) in CASES.items() for i in range(len(cases))])
def test_cpp_twin_is_exact_and_matches_the_python_kernel(kernels, name, index):
    runner, cases = CASES[name]
    mod = kernels[KERNEL_FILE.get(name, name)]
    (y_cpp, r_cpp), (y_py, r_py), ref = runner(mod, cases[index], np.random.default_rng(RNG_SEED + index))
    np.testing.assert_array_equal(y_cpp, ref)
    np.testing.assert_array_equal(y_cpp, y_py)
    assert r_cpp.cycles == r_py.cycles


def test_matmul_mix_cases_cover_the_tiling_branches():
    """The cases above reach every branch of the cube side: B resident or streamed, several K steps, several
    column blocks, several tiles per core, a tail tile with an odd number of rows (the two AIVs' halves differ)."""
    tilings = [choose_tiling(M, N, K, cores=cores) for M, N, K, cores in CASES["matmul_mix"][1]]
    assert any(t.resident_b for t in tilings) and any(not t.resident_b for t in tilings)
    assert any(t.K > t.baseK for t in tilings)
    assert any(t.blocks_n > 1 for t in tilings)
    assert any(t.tiles > t.block_dim for t in tilings)
    assert any((t.M % t.singleM) % 2 for t in tilings)


def test_conv_cube_cases_cover_the_epilogue_branches():
    """The conv_cube cases reach B and the bias resident (loaded once per core) and streamed (per tile), several
    K steps and several tiles per core."""
    tilings = []
    for n, C, H, W, O, K, pad, relu, cores, stride in CASES["conv_cube"][1]:
        M, N, Kc = conv_gemm_shape((n, C, H, W), (O, C, K, K), pad, stride)
        tilings.append(choose_tiling(M, N, Kc, cores=cores, bias=True, relu=relu))
    assert any(t.resident_b for t in tilings) and any(not t.resident_b for t in tilings)
    assert any(t.K > t.baseK for t in tilings)
    assert any(t.tiles > t.block_dim for t in tilings)


def inline_includes(source: str) -> str:
    """The source with each `#include "x.cpp"` of a sibling twin replaced by that file's text (a bug may sit there)."""
    for sibling in sorted(CPP.glob("*.cpp")):
        source = source.replace(f'#include "{sibling.name}"', sibling.read_text(encoding="utf-8"))
    return source


KERNEL_FILE = {"conv_cube": "tiled_matmul", "conv_bn_relu": "tiled_matmul"}   # the case's .cpp, when not its name

BUGS = {   # one plausible bug per kernel: (kernel, the correct text, the wrong text)
    "matmul_mix": ("Relu(x, x, nr * cols);", "// ReLU forgotten"),     # the epilogue only adds the bias
    # the re-read starts at output channel 0 in every block, not at the block's first channel
    "conv_cube": ("static_cast<uint16_t>(rp), t.N, t.relu != 0, QuantMode_t::F322F16});",   # ReLU never on
                  "static_cast<uint16_t>(rp), t.N, false, QuantMode_t::F322F16});"),
    "conv_bn_relu": ("if (kk == 0 && t.bias) {", "if (kk == 1 && t.bias) {"),   # the bias at the 2nd K step
    "default_matmul": ("mm.SetBias(biasGm[nIdx * tiling.singleCoreN]);", "mm.SetBias(biasGm);"),  # every block
    "conv_l3d": ("l3d.mStartPt = m0;", "l3d.mStartPt = 0;"),   # every chunk unfolds the image's first pixels
    "conv_weights": ("StageScalars(wLocal, rereadW, oFirst * taps, rereadCount);",
                     "StageScalars(wLocal, rereadW, 0, rereadCount);"),
}


@pytest.mark.parametrize("name", sorted(BUGS))
def test_the_exactness_check_fails_on_a_wrong_kernel(name):
    right, wrong = BUGS[name]
    source = inline_includes((CPP / f"{KERNEL_FILE.get(name, name)}.cpp").read_text(encoding="utf-8"))
    assert source.count(right) == 1
    mod = load(source.replace(right, wrong), name=f"wrong_{name}", include_dirs=[CPP])
    runner, cases = CASES[name]
    (y_cpp, _), _, ref = runner(mod, cases[0], np.random.default_rng(RNG_SEED))
    with pytest.raises(AssertionError):
        np.testing.assert_array_equal(y_cpp, ref)
