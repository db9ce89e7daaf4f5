"""CATLASS's Matmul tuning page, the cases beyond 案例一: tile shapes for load balance and the swizzle offset.

Public source: hicann/catlass, https://github.com/hicann/catlass, ``docs/zh/1_Practice/11_matmul_optimization.md``,
sections "TileShape调整" (案例二, 案例三, ⚠️ 注意点) and "Swizzle调整" (案例一). Every case is fp16 or fp32 on an
Atlas A2 part; the page gives the AIC count (20: the 910B3-like profile ``catlass_matmul.chip_20aic()``; 24: the
default ``Ascend910B()``). MEASURED are the page's task times (耗时, us); the simulated figure is the launch's device
time (``LaunchResult.us``), as for 案例一 (``catlass_matmul.py``).

The cases, each run with the kernel of ``catlass_matmul.py`` configured as the example the page names:

* 案例二: A RowMajor, B zN, M 20 N 6144 K 16384, fp16, 20 AIC, ``examples/21_basic_matmul_preload_zN``
  (``MmadAtlasA2Preload<true, true>``: preload, unit flag, shuffle K; ``GemmIdentityBlockSwizzle<3, 0>``):
  L1 <128,256,256> L0 <128,256,64>: 24 tiles on 20 AIC, 181.4 us; L1 <32,320,128> L0 <32,320,32>: 20 tiles, 139.6 us.
* ⚠️ 注意点: the same with B RowMajor: 238.8 us and 252.4 us ("负载均衡并没有带来收益").
* 案例三: A RowMajor, B ColumnMajor, M 1 N 768 K 5120, fp32 in and out, 24 AIC, ``examples/00_basic_matmul``
  (``MmadAtlasA2Pingpong<true>``: no cross-tile preload, no shuffle K): L1 <128,128,256> L0 <128,128,64>: 6 tiles on
  24 AIC, 36.3 us; L1 <16,32,1024> L0 <16,32,256>: 24 tiles, 15.5 us.
* Swizzle 案例一: A RowMajor, B zN, M 160 N 6144 K 2048, fp16, 20 AIC, 21_basic_matmul_preload_zN, tiles
  <128,256,256> / <128,256,64> (48 tiles: M 128 + 32, N 24 x 256): ``GemmIdentityBlockSwizzle<3, 1>`` 40.6 us,
  ``<4, 1>`` 35.3 us.

How the examples launch (``examples/00_basic_matmul/basic_matmul.cpp``, ``21_basic_matmul_preload_zN/
basic_matmul_preload_zN.cpp``; ``include/catlass/gemm/kernel/basic_matmul.hpp``, ``basic_matmul_preload.hpp``):
``matmulOp(stream, aicCoreNum)``: one block per AIC even when there are fewer tiles (案例三's 6 tiles on 24 blocks),
each taking tiles ``GetBlockIdx(), + GetBlockNum(), ...`` in the swizzle's order. The block's copies follow
``tile/atlasa2/copy_gm_to_l1.hpp`` (A RowMajor -> Nd2Nz of ``m`` rows of ``k1``; B zN -> one DataCopy of N / 16
strips of k1 x 32 B; B RowMajor -> Nd2Nz of k1 rows of ``n``; B ColumnMajor -> Nd2Nz of ``n`` rows of ``k1``);
rows are rounded up to 16 in L0 (``mRound``: M 20 -> 32, M 1 -> 16); B zN / RowMajor reach L0B through LoadData's
fractal transpose, one LoadData per 16-row K block (``copy_l1_to_l0b.hpp``, zN -> nZ).

    python benchmarks/catlass_tuning.py          # measured vs simulated, and each pair's gain
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from ascend_sim import float32, half, launch
from ascend_sim.hw import chips

import catlass_matmul as catlass


@dataclass(frozen=True)
class Case:
    """One measured configuration of the page: problem, layout, dtype, example (policy), tiles, swizzle."""

    key: str            # short name (validation point and run key)
    text: str           # what it is, for the table
    m: int
    n: int
    k: int
    l1: tuple[int, int, int]
    k0: int
    b_layout: str       # "zN", "row", "col"
    aic: int            # 20 or 24
    measured_us: float
    preload: bool = True            # 21_basic_matmul_preload_zN (MmadAtlasA2Preload<true, true>); False: 00 (Pingpong)
    swizzle: tuple[int, int] = (3, 0)
    dtype: object = half

    @property
    def tiles(self) -> int:
        return -(-self.m // self.l1[0]) * -(-self.n // self.l1[1])


CASES = (
    Case("case2 zN <128,256,256>", "案例二: B zN, M 20 N 6144 K 16384, fp16, 20 AIC", 20, 6144, 16384,
         (128, 256, 256), 64, "zN", 20, 181.4),
    Case("case2 zN <32,320,128>", "案例二: B zN, M 20 N 6144 K 16384, fp16, 20 AIC", 20, 6144, 16384,
         (32, 320, 128), 32, "zN", 20, 139.6),
    Case("case2 RowMajor <128,256,256>", "注意点: B RowMajor, M 20 N 6144 K 16384, fp16, 20 AIC", 20, 6144, 16384,
         (128, 256, 256), 64, "row", 20, 238.8),
    Case("case2 RowMajor <32,320,128>", "注意点: B RowMajor, M 20 N 6144 K 16384, fp16, 20 AIC", 20, 6144, 16384,
         (32, 320, 128), 32, "row", 20, 252.4),
    Case("case3 fp32 <128,128,256>", "案例三: B ColumnMajor, M 1 N 768 K 5120, fp32, 24 AIC, 00_basic_matmul", 1, 768,
         5120, (128, 128, 256), 64, "col", 24, 36.3, preload=False, dtype=float32),
    Case("case3 fp32 <16,32,1024>", "案例三: B ColumnMajor, M 1 N 768 K 5120, fp32, 24 AIC, 00_basic_matmul", 1, 768,
         5120, (16, 32, 1024), 256, "col", 24, 15.5, preload=False, dtype=float32),
    Case("swizzle <3,1>", "Swizzle 案例一: B zN, M 160 N 6144 K 2048, fp16, 20 AIC", 160, 6144, 2048,
         (128, 256, 256), 64, "zN", 20, 40.6, swizzle=(3, 1)),
    Case("swizzle <4,1>", "Swizzle 案例一: B zN, M 160 N 6144 K 2048, fp16, 20 AIC", 160, 6144, 2048,
         (128, 256, 256), 64, "zN", 20, 35.3, swizzle=(4, 1)),
)
BY_KEY = {c.key: c for c in CASES}
#: the page's tuning steps (before, after, what): the RowMajor pair's measured gain is negative (238.8 -> 252.4 us)
STEPS = (("case2 zN <128,256,256>", "case2 zN <32,320,128>", "案例二 B zN: tiles <32,320,128> (20 tiles on 20 AIC)"),
         ("case2 RowMajor <128,256,256>", "case2 RowMajor <32,320,128>",
          "注意点 B RowMajor: tiles <32,320,128> (no gain measured)"),
         ("case3 fp32 <128,128,256>", "case3 fp32 <16,32,1024>", "案例三 fp32 M 1: tiles <16,32,1024> (24 tiles)"),
         ("swizzle <3,1>", "swizzle <4,1>", "Swizzle 案例一: GemmIdentityBlockSwizzle <3,1> -> <4,1>"))


def chip_of(case: Case):
    """The page's part: 24 AIC -> the default 910B; 20 AIC -> catlass_matmul's 20-AIC profile (both read the
    current ``chips.Ascend910B``, so ``validate_timing.py --what-if`` reaches them)."""
    return catlass.chip_20aic() if case.aic == 20 else chips.Ascend910B()


def zn_of(b: np.ndarray) -> np.ndarray:
    """B (K x N) in layout::zN: N / 16 strips, each K rows of 16 contiguous elements (32 B for half)."""
    k, n = b.shape
    c0 = 32 // b.dtype.itemsize
    return np.ascontiguousarray(b.reshape(k, n // c0, c0).transpose(1, 0, 2))


def tiling_of(case: Case, blocks: int, m: int | None = None, n: int | None = None, k: int | None = None):
    """The kernel's Tiling for ``case`` (optionally on a smaller problem)."""
    m1, n1, k1 = case.l1
    return catlass.Tiling(m1, n1, k1, case.k0, m or case.m, n or case.n, k or case.k, blocks=blocks,
                          swizzle=case.swizzle, shuffle_k=case.preload, unit_flag=True, b_layout=case.b_layout,
                          preload=case.preload, dtype=case.dtype)


def inputs(case: Case, t, seed: int = 0, exact: bool = False):
    """Random A, B (in the case's GM layout) and a zero C; ``exact``: small integers (exact sums in fp32)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(case.dtype)

    def draw(shape):
        return (rng.integers(-4, 5, shape) if exact else rng.uniform(-1, 1, shape)).astype(dt)
    a, b = draw((t.m, t.k)), draw((t.k, t.n))
    gm_b = {"col": lambda: np.ascontiguousarray(b.T), "row": lambda: b, "zN": lambda: zn_of(b)}[case.b_layout]()
    return a, b, gm_b, np.zeros((t.m, t.n), dt)


def run_case(case: Case, numerics: bool = False, chip=None, **small):
    """Launch ``case`` as its example does (one block per AIC); ``small``: m, n, k of a smaller problem (tests).
    Returns (LaunchResult, C, reference C)."""
    chip = chip or chip_of(case)
    t = tiling_of(case, chip.aic_count, **small)
    a, b, gm_b, c = inputs(case, t, exact=bool(small))
    res = launch(catlass.catlass_matmul, chip.aic_count, a, gm_b, c, t, chip=chip, gm_names=["a", "b", "c"],
                 numerics=numerics)
    return res, c, (a.astype(np.float32) @ b.astype(np.float32)).astype(np.dtype(case.dtype))


def run(key: str) -> float:
    """The simulated task time (us) of case ``key``."""
    return run_case(BY_KEY[key])[0].us


def main() -> int:
    sim = {c.key: run(c.key) for c in CASES}
    print("| case | tiles | measured (us) | simulated (us) | error |")
    print("|---|---|---|---|---|")
    for c in CASES:
        print(f"| {c.key}: {c.text} | {c.tiles} | {c.measured_us:.1f} | {sim[c.key]:.1f} | "
              f"{sim[c.key] / c.measured_us - 1:+.1%} |")
    print("\n| step | measured gain | simulated gain |\n|---|---|---|")
    for before, after, what in STEPS:
        mb, ma = BY_KEY[before].measured_us, BY_KEY[after].measured_us
        print(f"| {what} | {1 - ma / mb:+.1%} | {1 - sim[after] / sim[before]:+.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
