"""Weight-only post-training quantisation (仅权重量化) of the tiny language model: group-wise round-to-nearest.

Each decoder weight ``W [O, K]`` (torch layout) is cut into groups of ``group`` consecutive input channels per
output row; a group keeps one fp16 scale ``s = max|w| / qmax`` (symmetric, ``qmax = 2^(bits-1) - 1``) and
integer codes ``q = clamp(round(w / s), -qmax - 1, qmax)``; the matmul sees ``q * s`` (AntiQuant, then fp16).
W8A16 is ``bits = 8``, W4A16 ``bits = 4``; a group larger than K is one group per row (K = 64 for qkv, proj
and fc1 here, 256 for fc2). The embedding (tied with the output layer), the position table, the LayerNorms
and the biases stay fp16, as most weight-only deployments keep them.

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


@dataclass(frozen=True)
class Scheme:
    """Bits per decoder weight (16 = kept fp16) and the group size."""

    name: str
    bits: int
    group: int = 64
    keep: Mapping[str, int] = field(default_factory=dict)     # weight name -> bits for the layers kept wider

    def bits_of(self, name: str) -> int:
        return self.keep.get(name, self.bits)


@dataclass(frozen=True)
class Quantised:
    """The dequantised parameters and the weight memory in bytes (decoder linears; all parameters)."""

    params: dict[str, np.ndarray]
    linear_bytes: int
    total_bytes: int


def quantise(params: Mapping[str, np.ndarray], scheme: Scheme) -> Quantised:
    """Quantise every decoder weight by ``scheme``; the other parameters stay as they are (fp16)."""
    out = {k: np.asarray(v) for k, v in params.items()}
    linear = 0
    for name in R.linear_names():
        w, bits = out[name], scheme.bits_of(name)
        if bits >= 16:
            linear += w.size * 2
            continue
        codes, scales = rtn_groups(w, bits, scheme.group)
        out[name] = dequantize_groups(codes, scales)
        linear += codes.size * bits // 8 + scales.size * 2
    other = sum(np.asarray(v).size * 2 for k, v in params.items() if k not in R.linear_names())
    return Quantised(out, int(linear), int(linear + other))


def key_layers(bits: int = 8) -> dict[str, int]:
    """The "key layers stay in higher precision" variant: the first and last decoder layers' weights."""
    return {name: bits for name in R.linear_names() if name.startswith((f"l0.", f"l{R.LAYERS - 1}."))}


def schemes() -> list[Scheme]:
    """The table's rows: fp16, W8A16 g64, W4A16 g64 and g32, and W4A16 g32 with the key layers at 8 bits."""
    return [Scheme("fp16 weights", 16), Scheme("W8A16 RTN g64", 8, 64), Scheme("W4A16 RTN g64", 4, 64),
            Scheme("W4A16 RTN g32", 4, 32), Scheme("W4A16 RTN g32, first+last layer W8", 4, 32, key_layers(8))]


__all__ = ["rtn_groups", "dequantize_groups", "Scheme", "Quantised", "quantise", "key_layers", "schemes"]
