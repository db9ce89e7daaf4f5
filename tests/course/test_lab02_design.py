"""Lab 02's cube exercises (ex4-ex7) are design tasks (issue 33): the library's own cube kernels, run as the answer
the way a learner copying them would, fail each exercise on its shape/layout or its budget."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import launch
from ascend_sim.course.grading.hints import HintLog
from ascend_sim.course.labs import lab02_optimization as lab02
from ascend_sim.kernels.opt.tiled_matmul import matmul_reference

SETUP = ("import numpy as np\n"
         "from ascend_sim import *\n"
         "from ascend_sim.kernels.opt.tiled_matmul import KernelTiledMatmul, choose_tiling\n")

#: exercise -> (the library's kernel as an answer, the text its failure must contain)
LIBRARY_ANSWERS = {
    # the library's conv: cols @ w as [pixels, O], w taken as B [K, N]; the exercise wants NCHW from w [O, K]
    "ex4": ('''
@kernel(core="AIC")
def conv_nchw_kernel(cols, w, y, images, O, HW, K):
    t = choose_tiling(images * HW, O, K)
    op = KernelTiledMatmul()
    op.Init(cols, w, None, y, t)
    op.Process()
''', "output elements differ beyond the tolerance"),
    # the library's tiling chooser on ex5's shape
    "ex5": ('''
@kernel(core="AIC")
def matmul_wide(a, b, c):
    op = KernelTiledMatmul()
    op.Init(a, b, None, c, choose_tiling(96, 768, 1024))
    op.Process()
''', "took 21,979 simulated cycles; the budget is 15,000"),
    # the library's fused MatMul + Add + ReLU: reads w as B [K, N]
    "ex6": ('''
@kernel(core="AIC")
def linear_relu(x, w, bias, y, M, N, K):
    op = KernelTiledMatmul()
    op.Init(x, w, bias, y, choose_tiling(M, N, K, bias=True, relu=True))
    op.Process()
''', "output elements differ beyond the tolerance"),
    # the library's conv_bn_relu path: its fold (kernels/opt/conv_cube.fold_bn) and weights as [C*KH*KW, O]
    "ex7": ('''
from ascend_sim.kernels.opt.conv_cube import fold_bn


def fold_bn_host(w, b, gamma, beta, mean, var, O, kk, wt, bias, eps=1e-5):
    w2, b2 = fold_bn(w.reshape(O, -1), b, gamma, beta, mean, var, eps)
    wt[:] = np.ascontiguousarray(w2.reshape(O, kk).T).reshape(-1)
    bias[:O] = b2


def conv_tiling(M, N, K, blocks):
    return choose_tiling(M, N, K, bias=True, relu=True)


@kernel(core="AIC")
def conv_bn_relu_kernel(cols, wt, bias, y, tiling):
    op = KernelTiledMatmul()
    op.Init(cols, wt, bias, y, tiling)
    op.Process()
''', "the kernel takes them in their own layout"),
}

def _run(ex: str, code: str, monkeypatch):
    monkeypatch.setattr(lab02.LAB, "hint_log", HintLog())
    ns: dict = {}
    exec(compile(SETUP + code, "<library answer>", "exec"), ns)  # noqa: S102 - the library's own kernels
    return lab02.LAB.run(ex, ns)


@pytest.mark.parametrize("ex", sorted(LIBRARY_ANSWERS))
def test_the_library_kernel_fails_the_exercise(ex, monkeypatch):
    code, why = LIBRARY_ANSWERS[ex]
    result = _run(ex, code, monkeypatch)
    assert result.status == "fail", result.messages
    assert why in result.messages[0]


def test_the_library_kernel_passes_once_the_exercise_is_what_it_computes(monkeypatch):
    """The failures above are the exercises' design, not a broken harness: the same library kernel computes ex6's
    values when w is handed over as B [K, N] (its own layout), which the exercise does not do. (ex5's default
    operator is over the budget too: test_grading_lab02 asserts CUBE_BUDGET <= 0.88 x its measured cycles.)"""
    ns: dict = {}
    exec(compile(SETUP + LIBRARY_ANSWERS["ex6"][0], "<library answer>", "exec"), ns)  # noqa: S102
    rng = np.random.default_rng(1)
    M, N, K = 100, 70, 90
    x, wkn = rng.uniform(-1, 1, (M, K)).astype(np.float16), rng.uniform(-1, 1, (K, N)).astype(np.float16)
    bias = np.zeros(80, np.float32)
    y = np.zeros((M, N), np.float16)
    launch(ns["linear_relu"], 24, x, wkn, bias, y, M, N, K)
    np.testing.assert_allclose(y.astype(np.float32), matmul_reference(x, wkn, bias[:N], relu=True).astype(np.float32),
                               rtol=2e-3, atol=2e-3)
