"""W4A16's AntiQuant (伪量化/反量化) on the vector unit: packed int4 weight codes -> fp16 weights in UB.

AscendAntiQuant's semantics (高阶API/量化操作/AscendAntiQuant.md, PER_CHANNEL, no transpose): "groupSize =
src.shape[0] / offset.shape[0]", "dst[i][j] = scale[i / groupSize][j] * (src[i][j] + offset[i / groupSize][j])",
here symmetric (offset 0), src int4b_t (on Atlas A2 "支持的数据类型为：int8_t、int4b_t"), in the layout of
migrate/w4a16.py (codes ``[K, O]`` packed two per byte along O, low nibble first: int4b_t order; scales
``[K / group, O]`` fp16). Each core takes whole groups (former cores one more): per group it copies in
``group * O / 2`` bytes of codes and the group's ``O`` scales, converts the codes with
``Cast(half <- int4b_t)`` ("int4b_t -> half" is in Cast's A2 table; the values -8..7 are exact in half),
multiplies each of the ``group`` rows by the scale row (``Mul``, one rounding to half: the same value as
migrate/w4a16's host dequantisation), and copies the ``[group, O]`` half tile out. The cube then runs the
ordinary fp16 matmul on the result, as aclnnWeightQuantBatchMatmulV2 does after its antiquant step.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import (ArgumentError, Cast, DataCopy, GetBlockIdx, GlobalTensor, LaunchResult, Mul, RoundMode,
                        TPipe, TPosition, TQue, get_chip, half, int4b_t, int8, kernel, launch)
from ascend_sim.hw.chips import DATA_BLOCK_BYTES

HALF_PER_BLOCK = DATA_BLOCK_BYTES // 2        # a scale row and every weight row start on a 32-byte block


@dataclass(frozen=True)
class AntiQuantTiling:
    """``groups`` groups of ``group`` rows x ``cols`` columns over ``block_dim`` cores (former cores +1)."""

    groups: int
    group: int
    cols: int
    block_dim: int

    def core_groups(self, i: int) -> tuple[int, int]:
        """(first group, group count) of core ``i``."""
        base, former = divmod(self.groups, self.block_dim)
        return i * base + min(i, former), base + (i < former)


@kernel
def antiquant_kernel(packed, scales, out, s: AntiQuantTiling) -> None:
    """This core's groups, one at a time: CopyIn codes and scales, Cast int4b_t -> half, Mul rows, CopyOut."""
    first, count = s.core_groups(GetBlockIdx())
    n = s.group * s.cols                                     # weights of one group
    gp, gs, go = GlobalTensor(int8), GlobalTensor(half), GlobalTensor(half)
    gp.SetGlobalBuffer(packed + first * n // 2, max(count * n // 2, 1))
    gs.SetGlobalBuffer(scales + first * s.cols, max(count * s.cols, 1))
    go.SetGlobalBuffer(out + first * n, max(count * n, 1))
    pipe = TPipe()
    qc, qs, qw = TQue(TPosition.VECIN, 2), TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
    pipe.InitBuffer(qc, 2, n // 2)
    pipe.InitBuffer(qs, 2, s.cols * 2)
    pipe.InitBuffer(qw, 2, n * 2)
    for g in range(count):
        codes, scale = qc.AllocTensor(int8), qs.AllocTensor(half)
        DataCopy(codes, gp[g * n // 2], n // 2)
        DataCopy(scale, gs[g * s.cols], s.cols)
        qc.EnQue(codes)
        qs.EnQue(scale)
        codes, scale, w = qc.DeQue(int8), qs.DeQue(half), qw.AllocTensor(half)
        Cast(w, codes.ReinterpretCast(int4b_t), RoundMode.CAST_NONE, n)     # exact: -8..7 in half
        for r in range(s.group):
            Mul(w[r * s.cols], w[r * s.cols], scale, s.cols)             # dst = scale * src (offset 0)
        qc.FreeTensor(codes)
        qs.FreeTensor(scale)
        qw.EnQue(w)
        w = qw.DeQue(half)
        DataCopy(go[g * n], w, n)
        qw.FreeTensor(w)


def antiquant(packed: np.ndarray, scales: np.ndarray, *, chip=None) -> tuple[np.ndarray, LaunchResult]:
    """fp16 weights ``[K, O]`` from packed int4 codes ``[K, O / 2]`` (uint8) and fp16 scales ``[K / group, O]``."""
    packed, scales = np.ascontiguousarray(packed), np.ascontiguousarray(scales, np.float16)
    groups, cols = scales.shape
    k = packed.shape[0]
    site = ("<host antiquant>", 0)
    if packed.ndim != 2 or packed.shape[1] * 2 != cols or k % groups:
        raise ArgumentError(f"antiquant: codes {packed.shape} (bytes) and scales {scales.shape} do not match: "
                            "codes must be [K, O / 2] with K a multiple of the scales' rows [K / group, O]",
                            fix="pass Int4Weight.packed and Int4Weight.scales of one weight", site=site)
    if cols % HALF_PER_BLOCK:
        raise ArgumentError(f"antiquant: {cols} output columns; each scale and weight row must fill whole "
                            f"32-byte blocks ({HALF_PER_BLOCK} halves)",
                            fix=f"pad O to {-(-cols // HALF_PER_BLOCK) * HALF_PER_BLOCK}", site=site)
    c = get_chip(chip)
    cores = c.aiv_count if c.separated else c.aic_count
    s = AntiQuantTiling(groups, k // groups, cols, min(cores, groups))
    out = np.zeros((k, cols), np.float16)
    res = launch(antiquant_kernel, s.block_dim, packed.view(np.int8), scales, out, s, chip=chip,
                 gm_names=["packed", "scales", "out"])
    return out, res


__all__ = ["AntiQuantTiling", "antiquant_kernel", "antiquant"]
