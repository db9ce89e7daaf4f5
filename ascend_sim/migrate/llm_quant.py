"""Weight-only post-training quantisation (仅权重量化) of the tiny language model: group-wise round-to-nearest.

Each decoder weight ``W [O, K]`` (torch layout) is cut into groups of ``group`` consecutive input channels per
output row; a group keeps one fp16 scale ``s = max|w| / qmax`` (symmetric, ``qmax = 2^(bits-1) - 1``) and
integer codes ``q = clamp(round(w / s), -qmax - 1, qmax)``; the matmul sees ``q * s`` (AntiQuant, then fp16).
W8A16 is ``bits = 8``, W4A16 ``bits = 4``; a group larger than K is one group per row (K = 64 for qkv, proj
and fc1 here, 256 for fc2). The embedding (tied with the output layer), the position table, the LayerNorms
and the biases stay fp16, as most weight-only deployments keep them.

GPTQ (Frantar et al., "GPTQ: Accurate Post-Training Quantization for Generative Pre-trained Transformers",
arXiv 2210.17323) is the calibrated variant: with the Hessian ``H = X^T X`` of a layer's calibration inputs
(plus 1 % of its mean diagonal as damping) it quantises one input column at a time and pushes the column's
rounding error onto the columns not yet quantised through the upper Cholesky factor of ``H^-1`` (the Optimal
Brain Quantization update), so the layer's output error ``||X W^T - X Q^T||`` shrinks, not each weight's error.
Group scales are taken when the quantiser reaches a group's first column (from the already-updated weights), as
the GPTQ code does. Calibration text: ``CALIB_WINDOWS`` windows of the *training* split at seeded offsets (never
the held-out text); every layer's inputs come from the unquantised model (the non-sequential form).

Weight memory counts what a device holds: ``bits / 8`` bytes per code (int4 packed two per byte) plus 2 bytes
per fp16 scale, against 2 bytes per fp16 weight. Perplexity is the float32 numpy reference
(models/llm/reference.py) run on the dequantised weights.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from ascend_sim.models.llm import reference as R


def rtn_groups(w: np.ndarray, bits: int, group: int) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric round-to-nearest codes ``[O, K]`` (int8 holding ``bits``-bit values) and fp16 scales
    ``[O, K / group]`` of a weight ``[O, K]``; ``group`` is capped at K."""
    w = np.asarray(w, np.float32)
    o, k = w.shape
    g = min(group, k)
    if bits not in (4, 8) or g <= 0 or k % g:
        raise ValueError(f"RTN: {bits} bits, group {group} for K = {k}: use 4 or 8 bits and a group that divides K")
    qmax = 2 ** (bits - 1) - 1
    blocks = w.reshape(o, k // g, g)
    amax = np.abs(blocks).max(axis=2)
    scales = np.where(amax > 0, amax / qmax, 1.0).astype(np.float16)
    codes = np.clip(np.rint(blocks / scales.astype(np.float32)[..., None]), -qmax - 1, qmax).astype(np.int8)
    return codes.reshape(o, k), scales


def dequantize_groups(codes: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """``codes * scale`` rounded to fp16 (the weight the fp16 matmul sees)."""
    o, k = codes.shape
    g = k // scales.shape[1]
    return (codes.reshape(o, -1, g).astype(np.float32) * scales.astype(np.float32)[..., None]).reshape(o, k).astype(
        np.float16)


CALIB_WINDOWS = 16
DAMP = 0.01


def calibration_inputs(params: Mapping[str, np.ndarray], windows: int = CALIB_WINDOWS, seed: int = 0
                       ) -> dict[str, np.ndarray]:
    """Input rows ``[windows * 128, K]`` of every decoder linear on training-split text at seeded offsets."""
    from ascend_sim.models.llm.corpus import corpus_bytes, encode
    text = encode(corpus_bytes("train"))
    starts = np.random.default_rng(seed).integers(0, len(text) - R.CONTEXT, windows)
    record: dict[str, list] = {}
    for s in starts:
        R.forward(params, text[s:s + R.CONTEXT], record=record)
    return {name: np.concatenate(rows).astype(np.float64) for name, rows in record.items()}


def gptq_groups(w: np.ndarray, x: np.ndarray, bits: int, group: int) -> tuple[np.ndarray, np.ndarray]:
    """GPTQ codes ``[O, K]`` and fp16 scales ``[O, K / group]`` of ``w [O, K]`` for calibration inputs
    ``x [n, K]`` (symmetric, the same code and scale format as ``rtn_groups``)."""
    W = np.asarray(w, np.float64).copy()
    o, k = W.shape
    g = min(group, k)
    if bits not in (4, 8) or k % g:
        raise ValueError(f"GPTQ: {bits} bits, group {group} for K = {k}: use 4 or 8 bits and a group that divides K")
    qmax = 2 ** (bits - 1) - 1
    H = x.T @ x
    dead = np.diag(H) == 0                       # an input that is always zero: its weights do not matter
    H[dead, dead] = 1.0
    H += DAMP * np.mean(np.diag(H)) * np.eye(k)
    U = np.linalg.cholesky(np.linalg.inv(H)).T   # upper Cholesky factor of H^-1
    codes = np.zeros((o, k), np.int8)
    scales = np.zeros((o, k // g), np.float16)
    for i in range(k):
        if i % g == 0:
            amax = np.abs(W[:, i:i + g]).max(axis=1)
            scales[:, i // g] = np.where(amax > 0, amax / qmax, 1.0).astype(np.float16)
        s = scales[:, i // g].astype(np.float64)
        q = np.clip(np.rint(W[:, i] / s), -qmax - 1, qmax)
        codes[:, i] = q
        err = (W[:, i] - q * s) / U[i, i]
        W[:, i + 1:] -= np.outer(err, U[i, i + 1:])
    return codes, scales


@dataclass(frozen=True)
class Scheme:
    """Bits per decoder weight (16 = kept fp16) and the group size."""

    name: str
    bits: int
    group: int = 64
    keep: Mapping[str, int] = field(default_factory=dict)     # weight name -> bits for the layers kept wider
    method: str = "rtn"                                        # "rtn" or "gptq"

    def bits_of(self, name: str) -> int:
        return self.keep.get(name, self.bits)


@dataclass(frozen=True)
class Quantised:
    """The dequantised parameters, the weight memory in bytes (decoder linears; all parameters) and per
    quantised weight its ``(codes [O, K], scales [O, K / group], bits)``: what a W4A16 kernel reads."""

    params: dict[str, np.ndarray]
    linear_bytes: int
    total_bytes: int
    codes: dict[str, tuple[np.ndarray, np.ndarray, int]] = field(default_factory=dict)

    def int4(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """``{weight name: (codes, scales)}`` of the 4-bit weights (models/llm/npu.NpuLM's ``int4``)."""
        return {name: (c, s) for name, (c, s, bits) in self.codes.items() if bits == 4}


def quantise(params: Mapping[str, np.ndarray], scheme: Scheme,
             calibration: Mapping[str, np.ndarray] | None = None) -> Quantised:
    """Quantise every decoder weight by ``scheme``; the other parameters stay as they are (fp16). GPTQ uses
    ``calibration`` (``calibration_inputs``; computed here when not given)."""
    if scheme.method not in ("rtn", "gptq"):
        raise ValueError(f"quantisation method {scheme.method!r}: use 'rtn' or 'gptq'")
    if scheme.method == "gptq" and calibration is None:
        calibration = calibration_inputs(params)
    out = {k: np.asarray(v) for k, v in params.items()}
    linear, kept = 0, {}
    for name in R.linear_names():
        w, bits = out[name], scheme.bits_of(name)
        if bits >= 16:
            linear += w.size * 2
            continue
        codes, scales = (gptq_groups(w, calibration[name], bits, scheme.group) if scheme.method == "gptq"
                         else rtn_groups(w, bits, scheme.group))
        out[name] = dequantize_groups(codes, scales)
        kept[name] = (codes, scales, bits)
        linear += codes.size * bits // 8 + scales.size * 2
    other = sum(np.asarray(v).size * 2 for k, v in params.items() if k not in R.linear_names())
    return Quantised(out, int(linear), int(linear + other), kept)


def key_layers(bits: int = 8) -> dict[str, int]:
    """The "key layers stay in higher precision" variant: the first and last decoder layers' weights."""
    return {name: bits for name in R.linear_names() if name.startswith((f"l0.", f"l{R.LAYERS - 1}."))}


def schemes() -> list[Scheme]:
    """The table's rows: fp16, W8A16 g64, W4A16 g64 and g32 by RTN and by GPTQ, and W4A16 g32 with the key
    layers at 8 bits (RTN and GPTQ)."""
    return [Scheme("fp16 weights", 16), Scheme("W8A16 RTN g64", 8, 64),
            Scheme("W4A16 RTN g64", 4, 64), Scheme("W4A16 GPTQ g64", 4, 64, method="gptq"),
            Scheme("W4A16 RTN g32", 4, 32), Scheme("W4A16 GPTQ g32", 4, 32, method="gptq"),
            Scheme("W4A16 RTN g32, first+last layer W8", 4, 32, key_layers(8)),
            Scheme("W4A16 GPTQ g32, first+last layer W8", 4, 32, key_layers(8), method="gptq")]


__all__ = ["CALIB_WINDOWS", "calibration_inputs", "gptq_groups", "rtn_groups", "dequantize_groups", "Scheme", "Quantised", "quantise", "key_layers", "schemes"]
