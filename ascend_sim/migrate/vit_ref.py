"""A tiny vision transformer (ViT, 视觉Transformer) for MNIST: its shape, weights and float32 numpy reference.

    patches   the 28 x 28 image cut into 16 patches of 7 x 7 pixels (tokens), in row-major patch order
    embed     linear 49 -> 64 per patch, plus a learned position embedding per token
    2 x       pre-LayerNorm encoder layer:  x = x + proj(MHA(LN1(x)));  x = x + fc2(GELU(fc1(LN2(x))))
              MHA: 2 heads of 32, softmax(Q K^T / sqrt(32)) V;  MLP: 64 -> 128 -> 64, GELU (tanh form)
    head      final LayerNorm, mean over the 16 tokens, linear 64 -> 10

Parameter names follow torch (``.w`` = weight ``[out, in]``, ``.b`` = bias); the QKV projection is one
``[3 * 64, 64]`` matrix whose rows are Q, then K, then V, each with head 0's 32 rows before head 1's (the BSH
layout of the attention kernel). scripts/train_vit.py trains it; the weights ship in float16.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ascend_sim.models.transformer import block_param_shapes

PATCH = 7
TOKENS = (28 // PATCH) ** 2
D_MODEL = 64
HEADS = 2
D_MLP = 128
LAYERS = 2
CLASSES = 10
LN_EPS = 1e-5
GELU_C = float(np.sqrt(2.0 / np.pi))        # tanh-form GELU: 0.5 x (1 + tanh(c (x + 0.044715 x^3)))
GELU_A = 0.044715
WEIGHTS_FILE = "vit_mnist.npz"


def param_shapes() -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape."""
    shapes: dict[str, tuple[int, ...]] = {"patch.w": (D_MODEL, PATCH * PATCH), "patch.b": (D_MODEL,),
                                          "pos": (TOKENS, D_MODEL)}
    for i in range(LAYERS):
        shapes.update(block_param_shapes(f"l{i}.", D_MODEL, D_MLP))
    shapes.update({"ln.w": (D_MODEL,), "ln.b": (D_MODEL,), "head.w": (CLASSES, D_MODEL), "head.b": (CLASSES,)})
    return shapes


def load_vit_weights() -> dict[str, np.ndarray]:
    """The bundled trained weights (float16, as shipped)."""
    from ascend_sim.models.datasets import bundled_file
    with bundled_file(WEIGHTS_FILE).open("rb") as f, np.load(f) as npz:
        return {k: npz[k] for k in npz.files}


def check_weights(params: Mapping[str, np.ndarray]) -> None:
    """Raise a ValueError naming the first missing or misshapen parameter."""
    for name, shape in param_shapes().items():
        got = np.shape(params[name]) if name in params else None
        if got != shape:
            raise ValueError(f"ViT weight {name!r}: expected shape {shape}, got {got or 'missing'}")


def patchify(x: np.ndarray) -> np.ndarray:
    """Normalized images ``[N, 1, 28, 28]`` -> tokens ``[N, 16, 49]`` (patch rows, row-major patch order)."""
    n = len(x)
    g = 28 // PATCH
    return x.reshape(n, g, PATCH, g, PATCH).transpose(0, 1, 3, 2, 4).reshape(n, g * g, PATCH * PATCH)


def layer_norm_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = LN_EPS) -> np.ndarray:
    """LayerNorm over the last axis (biased variance), float32."""
    x = x.astype(np.float32)
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w.astype(np.float32) + b.astype(np.float32)


def gelu_ref(x: np.ndarray) -> np.ndarray:
    """GELU, tanh approximation, float32."""
    x = x.astype(np.float32)
    return 0.5 * x * (1.0 + np.tanh(GELU_C * (x + GELU_A * x ** 3)))


def mha_ref(x: np.ndarray, qkv_w: np.ndarray, qkv_b: np.ndarray) -> np.ndarray:
    """Multi-head self-attention before the output projection: ``[N, S, 64]`` -> ``[N, S, 64]``."""
    n, s, d = x.shape
    qkv = x @ qkv_w.astype(np.float32).T + qkv_b.astype(np.float32)
    q, k, v = (qkv[..., i * d:(i + 1) * d].reshape(n, s, HEADS, -1).transpose(0, 2, 1, 3) for i in range(3))
    a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // HEADS)
    a = np.exp(a - a.max(axis=-1, keepdims=True))
    a /= a.sum(axis=-1, keepdims=True)
    return (a @ v).transpose(0, 2, 1, 3).reshape(n, s, d)


def vit_logits_ref(params: Mapping[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """Logits ``[N, 10]`` for normalized ``x [N, 1, 28, 28]``, all in float32 numpy."""
    p = {k: np.asarray(v, np.float32) for k, v in params.items()}
    h = patchify(x.astype(np.float32)) @ p["patch.w"].T + p["patch.b"] + p["pos"]
    for i in range(LAYERS):
        q = f"l{i}."
        a = mha_ref(layer_norm_ref(h, p[q + "ln1.w"], p[q + "ln1.b"]), p[q + "qkv.w"], p[q + "qkv.b"])
        h = h + a @ p[q + "proj.w"].T + p[q + "proj.b"]
        m = gelu_ref(layer_norm_ref(h, p[q + "ln2.w"], p[q + "ln2.b"]) @ p[q + "fc1.w"].T + p[q + "fc1.b"])
        h = h + m @ p[q + "fc2.w"].T + p[q + "fc2.b"]
    h = layer_norm_ref(h, p["ln.w"], p["ln.b"]).mean(axis=1)
    return h @ p["head.w"].T + p["head.b"]


def vit_predict_ref(params: Mapping[str, np.ndarray], x: np.ndarray, batch: int = 500) -> np.ndarray:
    """Predicted digits for normalized ``x [N, 1, 28, 28]``."""
    return np.concatenate([vit_logits_ref(params, x[i:i + batch]).argmax(axis=1) for i in range(0, len(x), batch)])


__all__ = ["PATCH", "TOKENS", "D_MODEL", "HEADS", "D_MLP", "LAYERS", "CLASSES", "LN_EPS", "GELU_C", "GELU_A",
           "WEIGHTS_FILE", "param_shapes", "load_vit_weights", "check_weights", "patchify", "layer_norm_ref",
           "gelu_ref", "mha_ref", "vit_logits_ref", "vit_predict_ref"]
