"""How ``MultiCoreMatmulTiling`` splits M and N over ``SetDim`` cores for a large problem on Atlas A2.

Source: CANN's host tiling, published in https://github.com/cannmirror/asc-devkit,
``impl/adv_api/tiling/matmul/matmul_tiling_algorithm.cpp`` (``GetMultiCoreScenario``, ``CalcMultiCoreDims``,
``CalcComputeIntensity``, ``CalcTotalCycleMemory``, ``CalcBaseBlockBandRatio``, ``AlignSingleShape``,
``GetMultiCoreBasicBlock``) and ``matmul_tiling_algorithm.h`` (``ComputeIntensity::operator<``). Restated, not
copied: on the 910B (A2), with neither split-K nor SetSingleShape, a problem with M >= 128 and
M * N > 26,214 * dim ("SPLIT_MN") is split into mDim x nDim = dim cores, trying every factor pair of dim; each
pair is scored by its compute intensity (cube cycles over GM -> L1 bytes of its base blocks, main and tail blocks
counted apart, bytes doubled when a single shape cannot be aligned), and the best wins: the highest intensity,
then (same intensity and cube cycles within 1 %) the higher band ratio, then the fewer cube cycles.

Why it matters for timing: the Tiling-strategy case (M 4096, N 5120, base [128, 256], SetDim 40) gets
8 x 5 tiles of 512 x 1024, with no tail base block; the squarest-tile rule this replaced gave 5 x 8 tiles of
832 x 640, whose tail blocks copy 11 % more bytes GM -> L1 in 27 % more copies than the document's count
(benchmarks/mte2_audit.py prints both).
"""
from __future__ import annotations

import functools

SPLIT_MN_LIMIT = 26214          # 128 * 256 * 0.8: GetMultiCoreScenario's M * N per core
DATA_COPY_ALIGN_BYTES = 256     # DATA_COPY_ALIGN_SIZE: a single shape's GM alignment
EPSILON = 1.0e-4                # MATMUL_EPSILON: intensities closer than this tie


def is_split_mn(m: int, n: int, dim: int, npu_arch: int) -> bool:
    """``GetMultiCoreScenario`` is SPLIT_MN (910B = arch 2201; split-K and SetSingleShape already excluded)."""
    return npu_arch == 2201 and m >= 128 and m * n > SPLIT_MN_LIMIT * dim


def basic_block(base_m: int, base_n: int, a_size: float, l0c_bytes: int, trans_a: bool,
                trans_b: bool) -> tuple[int, int, int]:
    """``GetMultiCoreBasicBlock``: [128 (256 with a 256 KB L0C), 256, 128 bytes of K], SetFixSplit's baseM/N
    where set (-1: not set), [256, 128] for unset ones when both A and B are transposed."""
    bm, bn = (256 if l0c_bytes == 256 * 1024 else 128), 256
    if trans_a and trans_b:
        bm, bn = 256, 128
    return (base_m if base_m != -1 else bm), (base_n if base_n != -1 else bn), int(128 / a_size)


def _align_single(need: bool, org: int, factor: int, align: int) -> tuple[int, bool]:
    """``AlignSingleShape``: (single shape, aligned) for ``org`` over ``factor`` cores."""
    single = -(-org // factor)
    if not need or factor <= 1:
        return single, True
    aligned = -(-single // align) * align
    if aligned >= -(-org // (factor - 1)):
        return single, False
    return aligned, True


def _intensity(m: int, n: int, dim: int, mf: int, nf: int, block: tuple, sizes: tuple, trans: tuple):
    """``CalcComputeIntensity`` for mDim = mf, nDim = nf: (intensity, cube cycles, band ratio, sm, sn)."""
    bm, bn, bk = block
    a_size, b_size = sizes
    a_align, b_align = int(DATA_COPY_ALIGN_BYTES / a_size), int(DATA_COPY_ALIGN_BYTES / b_size)
    sm, ok_a = _align_single(trans[0] and m % a_align == 0, m, mf, a_align)
    sn, ok_b = _align_single(not trans[1] and n % b_align == 0, n, nf, b_align)
    ratio = 1 if ok_a and ok_b else 2
    reduce = 32 / a_size                    # C0 bytes over the element size: K elements a cube cycle
    cycles = memory = 0.0
    main_m, tail_m = divmod(sm, bm)
    main_n, tail_n = divmod(sn, bn)
    for rows, cols, count in ((bm, bn, main_m * main_n), (bm, tail_n, main_m if tail_n else 0),
                              (tail_m, bn, main_n if tail_m else 0), (tail_m, tail_n, 1 if tail_m and tail_n else 0)):
        if count and rows and cols:
            cycles += rows * cols * bk / (16 * 16 * reduce) * count
            memory += ratio * (rows * bk * a_size + cols * bk * b_size) * count
    band = ((dim - mf) * bm + (dim - nf) * bn) / ((bm + bn) * dim)
    return (cycles / memory if memory else 0.0), cycles, band, sm, sn


def _better(x, y) -> int:
    """``ComputeIntensity::operator<`` as a comparison (negative: ``x`` first)."""
    if abs(x[0] - y[0]) > EPSILON:
        return -1 if x[0] > y[0] else 1
    if abs(x[1] - y[1]) < 0.01 * y[1]:
        return -1 if x[2] > y[2] else (1 if x[2] < y[2] else 0)
    return -1 if x[1] < y[1] else 1


def split_mn(m: int, n: int, dim: int, block: tuple, sizes: tuple, trans: tuple) -> tuple[int, int]:
    """``CalcMultiCoreDims``: (singleCoreM, singleCoreN) of the best mDim x nDim factor pair of ``dim``.

    Ties keep the factor order (mDim ascending); CANN's std::sort leaves the order of exact ties unspecified.
    """
    scored = [_intensity(m, n, dim, mf, dim // mf, block, sizes, trans) for mf in range(1, dim + 1) if dim % mf == 0]
    best = sorted(scored, key=functools.cmp_to_key(_better))[0]
    return best[3], best[4]
