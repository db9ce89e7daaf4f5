"""The shipped examples: add_custom equals x + y exactly, matmul the fp32-accumulate reference."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import float32, half, kernel, launch
from ascend_sim.kernels.add_custom import TOTAL_LENGTH, AddCustomTilingData, add_custom, run_add_custom
from ascend_sim.kernels.matmul import KernelMatmul, MatmulTiling, matmul_custom, matmul_reference, run_matmul
from kernels_util import assert_same, exact_reference, no_warnings


@pytest.mark.parametrize("block_dim", [8, 4, 1])
def test_add_custom_is_exactly_x_plus_y(block_dim):
    with no_warnings():
        x, y, z, result = run_add_custom(seed=block_dim, block_dim=block_dim)
    assert_same(z, exact_reference(np.add, half, x, y))
    assert {r.core for r in result.trace} == set(range(block_dim))


def run_add(total: int, tiles: int, buffers: int = 2, dtype=half, block_dim: int = 8):
    rng = np.random.default_rng(0)
    x, y = (rng.uniform(-1, 1, total).astype(dtype) for _ in range(2))
    z = np.zeros_like(x)
    result = launch(add_custom, block_dim, x, y, z, AddCustomTilingData(total, tiles, buffers, np.dtype(dtype)))
    return x, y, z, result


def test_add_custom_float_and_single_buffer():
    x, y, z, _ = run_add(TOTAL_LENGTH, 4, buffers=1, dtype=np.float32)
    assert_same(z, exact_reference(np.add, float32, x, y))


def test_double_buffering_overlaps_copies_with_compute():
    single, double = run_add(TOTAL_LENGTH, 8, buffers=1)[3], run_add(TOTAL_LENGTH, 4, buffers=2)[3]
    assert double.cycles < single.cycles


def test_reference_check_catches_a_tiling_that_drops_the_tail():
    """8 * 2048 + 64 elements: each block rounds its tile down and never touches its last elements."""
    x, y, z, _ = run_add(TOTAL_LENGTH + 64, 8)
    with pytest.raises(AssertionError, match="elements differ"):
        assert_same(z, exact_reference(np.add, half, x, y))


def assert_matmul_close(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    """c = fp16(fp32 sum of a @ b): within one fp16 ulp of the reference, plus what fp32 summation in
    another order may change (K * 2**-24 * |a| @ |b|, which only matters where terms cancel)."""
    ref = matmul_reference(a, b)
    ulp = np.abs(np.nextafter(ref, np.float16(np.inf)).astype(np.float64) - ref)
    order = a.shape[1] * 2.0 ** -24 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    err = np.abs(c.astype(np.float64) - ref)
    bad = np.flatnonzero(err > ulp + order)
    assert bad.size == 0, f"{bad.size} elements outside the fp16 tolerance, first at {bad[0]}"


@pytest.mark.parametrize("M, N, K, base", [(128, 128, 128, 64), (64, 128, 256, 64), (32, 32, 96, 32)])
def test_matmul_matches_fp32_accumulation_within_fp16_tolerance(M, N, K, base):
    with no_warnings():
        a, b, c, result = run_matmul(M, N, K, base, seed=M + K)
    assert_matmul_close(c, a, b)
    assert {r.core_type for r in result.trace} == {"AIC"} and len({r.core for r in result.trace}) == M * N // base ** 2


class ForgetsToAccumulate(KernelMatmul):
    """A classic bug: every K step starts L0C from zero (cmatrixInitVal always True)."""

    def Compute(self, c1, first: bool) -> None:
        super().Compute(c1, first=True)


@kernel(core="AIC")
def matmul_without_accumulate(a, b, c, tiling):
    op = ForgetsToAccumulate()
    op.Init(a, b, c, tiling)
    op.Process()


def test_reference_check_catches_a_matmul_that_forgets_to_accumulate():
    rng = np.random.default_rng(5)
    a, b = rng.uniform(-1, 1, (64, 128)).astype(half), rng.uniform(-1, 1, (128, 64)).astype(half)
    c, wrong = np.zeros((64, 64), half), np.zeros((64, 64), half)
    t = MatmulTiling(64, 64, 128, 64, 64, 64)
    launch(matmul_custom, 1, a, b, c, t)
    launch(matmul_without_accumulate, 1, a, b, wrong, t)
    assert_matmul_close(c, a, b)
    with pytest.raises(AssertionError, match="outside the fp16 tolerance"):
        assert_matmul_close(wrong, a, b)
