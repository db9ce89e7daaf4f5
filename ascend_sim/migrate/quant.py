"""Post-training quantisation (训练后量化, PTQ) in the manner of Huawei's AMCT: the numbers, not the tool.

The failure this exists to prevent: a hand-rolled min-max scale that lets one outlier activation stretch
the int8 grid until most values share a few codes, and accuracy collapses with no hint why.

- Activations: ``minmax`` (the baseline), ``ifmr`` (AMCT's default: clip search around a percentile
  start) and ``hfmg`` (the same search on merged histograms, in bounded memory).
- Weights: ``arq`` (per output channel or per tensor, symmetric).
- Weight-only int4 (W4A16): ``quantize_int4_groups`` with a group size that is a multiple of 32,
  ``pack_int4`` / ``unpack_int4`` two values per byte, and the reference matmul.

Sources (CANN AMCT documentation on hiascend.com, e.g. https://www.hiascend.com/document/detail/zh/canncommercial/
601/devtools/auxiliarydevtool/atlasamcttf_16_0036.html for IFMR, and the operator page of
``aclnnWeightQuantBatchMatmulV2`` in https://gitcode.com/cann/ops-nn for W4A16):
- IFMR: "clip to [clip_min, clip_max], search init·[0.7, 1.3] step 0.01, init from percentile 0.999999"
  [OFF, AMCT docs]. The error the search minimises (the mean squared quantisation error over the
  calibration data) is our choice: AMCT does not publish its criterion.
- HFMG: "merged per-batch histograms, searched clip, num_of_bins, less memory" [OFF].
- ARQ: "channel_wise True = scale per filter (more accurate), False = per layer" [OFF].
- AscendQuant rounds half to even [OFF, 高阶API/量化操作/AscendQuant.md]; so does ``np.rint``.
- W4A16: "weight INT8/INT4 on A2/A3; group size multiple of 32" [OFF, aclnnWeightQuantBatchMatmulV2].
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

__all__ = ["QuantParams", "minmax", "ifmr", "hfmg", "arq", "quantize", "dequantize", "fake_quant",
           "quantize_int4_groups", "pack_int4", "unpack_int4", "dequantize_int4_groups", "w4a16_matmul_ref"]


@dataclass(frozen=True)
class QuantParams:
    """q = clip(rint(x / scale) + offset, qmin, qmax); x ≈ (q - offset) * scale.

    ``scale`` and ``offset`` are scalars (per tensor) or arrays along ``axis`` (per channel).
    """

    scale: np.ndarray
    offset: np.ndarray
    bits: int = 8
    axis: int | None = None

    @property
    def qmin(self) -> int:
        return -(1 << (self.bits - 1))

    @property
    def qmax(self) -> int:
        return (1 << (self.bits - 1)) - 1

    def _shaped(self, v: np.ndarray, ndim: int) -> np.ndarray:
        if self.axis is None:
            return v
        shape = [1] * ndim
        shape[self.axis] = -1
        return np.reshape(v, shape)


def _params(lo: float, hi: float, bits: int, symmetric: bool) -> QuantParams:
    """Scale and offset that map [lo, hi] (widened to hold 0) onto the ``bits`` grid."""
    qmin, qmax = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if symmetric:
        amax = max(abs(lo), abs(hi))
        scale = amax / qmax if amax > 0 else 1.0
        return QuantParams(np.float32(scale), np.int32(0), bits)
    scale = (hi - lo) / (qmax - qmin) if hi > lo else 1.0
    offset = int(np.clip(np.rint(qmin - lo / scale), qmin, qmax))
    return QuantParams(np.float32(scale), np.int32(offset), bits)


def quantize(x: np.ndarray, p: QuantParams) -> np.ndarray:
    """Integer codes of ``x`` (round half to even, then saturate), as int8 (or int8-held int4)."""
    scale = p._shaped(np.asarray(p.scale, np.float32), x.ndim)
    offset = p._shaped(np.asarray(p.offset, np.int32), x.ndim)
    q = np.rint(x.astype(np.float32) / scale) + offset
    return np.clip(q, p.qmin, p.qmax).astype(np.int8)


def dequantize(q: np.ndarray, p: QuantParams) -> np.ndarray:
    scale = p._shaped(np.asarray(p.scale, np.float32), q.ndim)
    offset = p._shaped(np.asarray(p.offset, np.int32), q.ndim)
    return ((q.astype(np.int32) - offset) * scale).astype(np.float32)


def fake_quant(x: np.ndarray, p: QuantParams) -> np.ndarray:
    """``x`` after a round trip through the integer grid: what the int8 model computes with."""
    return dequantize(quantize(x, p), p)


def _as_batches(data) -> list[np.ndarray]:
    if isinstance(data, np.ndarray):
        return [data]
    return [np.asarray(b) for b in data]


def minmax(data, bits: int = 8, symmetric: bool = False) -> QuantParams:
    """Min-max calibration: the grid spans the smallest and largest value seen."""
    batches = _as_batches(data)
    lo = min(float(b.min()) for b in batches)
    hi = max(float(b.max()) for b in batches)
    return _params(lo, hi, bits, symmetric)


def _search(lo0: float, hi0: float, bits: int, symmetric: bool, error) -> QuantParams:
    """IFMR's search: the clip range init·[0.7, 1.3] in steps of 0.01 with the least ``error``."""
    best = None
    for ratio in np.round(np.arange(0.70, 1.3001, 0.01), 2):
        p = _params(lo0 * ratio, hi0 * ratio, bits, symmetric)
        e = error(p)
        if best is None or e < best[0] - 1e-12 * abs(best[0]):
            best = (e, p)
    return best[1]


def ifmr(data, bits: int = 8, symmetric: bool = False, percentile: float = 0.999999) -> QuantParams:
    """AMCT's IFMR: start from the ``percentile`` quantile at each end, search the clip, keep the least MSE."""
    batches = _as_batches(data)
    flat = np.concatenate([b.ravel().astype(np.float32) for b in batches])
    lo0 = float(np.quantile(flat, 1.0 - percentile))
    hi0 = float(np.quantile(flat, percentile))
    if lo0 == hi0 == 0.0:
        return _params(0.0, 0.0, bits, symmetric)
    return _search(lo0, hi0, bits, symmetric, lambda p: float(np.mean((fake_quant(flat, p) - flat) ** 2)))


def hfmg(data, bits: int = 8, symmetric: bool = False, num_of_bins: int = 4096) -> QuantParams:
    """AMCT's HFMG: merge per-batch histograms over one range, then search the clip on the histogram.

    Memory is ``num_of_bins`` counts, whatever the calibration set's size; each bin is represented by its
    centre, so the error is the histogram's estimate of the MSE.
    """
    batches = _as_batches(data)
    lo = min(float(b.min()) for b in batches)
    hi = max(float(b.max()) for b in batches)
    if lo == hi:
        return _params(lo, hi, bits, symmetric)
    edges = np.linspace(lo, hi, num_of_bins + 1, dtype=np.float64)
    counts = np.zeros(num_of_bins, np.float64)
    for b in batches:
        counts += np.histogram(b, bins=edges)[0]
    centres = ((edges[:-1] + edges[1:]) / 2).astype(np.float32)
    weights = counts / counts.sum()
    return _search(lo, hi, bits, symmetric,
                   lambda p: float(np.sum(weights * (fake_quant(centres, p) - centres) ** 2)))


def arq(weight: np.ndarray, bits: int = 8, channel_wise: bool = True, axis: int = 0) -> QuantParams:
    """AMCT's ARQ for weights: symmetric; one scale per output channel (``axis``) or one per tensor."""
    qmax = (1 << (bits - 1)) - 1
    if not channel_wise:
        amax = float(np.abs(weight).max())
        return QuantParams(np.float32(amax / qmax if amax else 1.0), np.int32(0), bits)
    amax = np.abs(np.moveaxis(weight, axis, 0).reshape(weight.shape[axis], -1)).max(axis=1)
    scale = np.where(amax > 0, amax / qmax, 1.0).astype(np.float32)
    return QuantParams(scale, np.zeros_like(scale, np.int32), bits, axis=axis)


# --- int4 weight-only (W4A16) --------------------------------------------------------------------

#: the clip ratios the MSE search tries for an int4 group: amax * r, r = 0.50, 0.51, ..., 1.00
INT4_CLIP_RATIOS = np.round(np.arange(0.50, 1.0001, 0.01), 2)


def _int4_mse_scales(g: np.ndarray, amax: np.ndarray) -> np.ndarray:
    """Per (group, column) the scale ``amax * r / 7`` whose int4 round trip has the least squared error."""
    best_err = np.full(amax.shape, np.inf, np.float64)
    best = np.where(amax > 0, amax / 7.0, 1.0)
    for r in INT4_CLIP_RATIOS:
        s = np.where(amax > 0, amax * r / 7.0, 1.0).astype(np.float16).astype(np.float32)
        err = ((np.clip(np.rint(g / s[:, None, :]), -8, 7) * s[:, None, :] - g) ** 2).sum(axis=1)
        better = err < best_err * (1 - 1e-12)
        best_err, best = np.where(better, err, best_err), np.where(better, s, best)
    return best


def quantize_int4_groups(weight: np.ndarray, group_size: int = 32,
                         clip: str = "minmax") -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int4 codes of a [K, N] weight with one fp16 scale per ``group_size`` rows of K per column.

    ``clip="minmax"``: scale = max|w| / 7 per group; ``clip="mse"``: the clip ``max|w| * r`` (r in
    INT4_CLIP_RATIOS) with the least squared round-trip error of that group (the IFMR idea applied to a
    weight group: a smaller clip saturates one outlier but resolves the other 31 values more finely).
    Returns (codes int8 in [-8, 7], scales float16 [K / group_size, N]).
    """
    if clip not in ("minmax", "mse"):
        raise ValueError(f"int4 clip {clip!r}: use 'minmax' or 'mse'")
    k, n = weight.shape
    if group_size <= 0 or group_size % 32:
        raise ValueError(f"W4A16 group size {group_size}: must be a positive multiple of 32 "
                         "(aclnnWeightQuantBatchMatmulV2); use 32, 64 or 128")
    if k % group_size:
        raise ValueError(f"W4A16: K = {k} is not a multiple of the group size {group_size}; "
                         f"pad K to {-(-k // group_size) * group_size} with zero rows")
    g = weight.astype(np.float32).reshape(k // group_size, group_size, n)
    amax = np.abs(g).max(axis=1)
    if clip == "mse":
        scales = _int4_mse_scales(g, amax).astype(np.float16)
    else:
        scales = np.where(amax > 0, amax / 7.0, 1.0).astype(np.float16)
    codes = np.clip(np.rint(g / scales.astype(np.float32)[:, None, :]), -8, 7).astype(np.int8)
    return codes.reshape(k, n), scales


def dequantize_int4_groups(codes: np.ndarray, scales: np.ndarray) -> np.ndarray:
    groups = scales.shape[0]
    k, n = codes.shape
    g = codes.reshape(groups, k // groups, n).astype(np.float32) * scales.astype(np.float32)[:, None, :]
    return g.reshape(k, n).astype(np.float16)


def pack_int4(codes: np.ndarray) -> np.ndarray:
    """Two int4 values per byte along the last axis, the first in the low nibble (int4b_t order)."""
    if codes.shape[-1] % 2:
        raise ValueError(f"int4b_t packing needs an even inner axis, got {codes.shape[-1]}")
    if codes.min(initial=0) < -8 or codes.max(initial=0) > 7:
        raise ValueError("int4 codes must lie in [-8, 7]")
    u = (codes.astype(np.int16) & 0xF).astype(np.uint8)
    return (u[..., 0::2] | (u[..., 1::2] << 4)).astype(np.uint8)


def unpack_int4(packed: np.ndarray) -> np.ndarray:
    lo = (packed & 0xF).astype(np.int8)
    hi = (packed >> 4).astype(np.int8)
    out = np.empty(packed.shape[:-1] + (packed.shape[-1] * 2,), np.int8)
    out[..., 0::2] = np.where(lo > 7, lo - 16, lo)
    out[..., 1::2] = np.where(hi > 7, hi - 16, hi)
    return out


def w4a16_matmul_ref(x: np.ndarray, codes: np.ndarray, scales: np.ndarray,
                     bias: np.ndarray | None = None) -> np.ndarray:
    """y = x @ (codes * scale) + bias with fp16 activations, fp32 accumulation, fp16 result."""
    w = dequantize_int4_groups(codes, scales).astype(np.float32)
    y = x.astype(np.float16).astype(np.float32) @ w
    if bias is not None:
        y = y + bias.astype(np.float32)
    return y.astype(np.float16)


def calibration_batches(images: np.ndarray, batch: int = 32) -> Iterable[np.ndarray]:
    """The calibration set cut into batches (AMCT's batch_num), in the order given."""
    for i in range(0, len(images), batch):
        yield images[i:i + batch]
