"""The tiny MNIST ViT (vit_ref.py) as a runtime Graph whose every operator is a simulated kernel launch.

==========  ==============================================================================================
node        kernel
==========  ==============================================================================================
tokens      host: cut the image into 16 patch rows of 49 pixels and append a one-hot token index (16 columns)
embed       cube (kernels/m4/gemm.py): ``tokens @ [patch.w | pos^T]^T + patch.b``: the one-hot columns pick
            each token's position embedding, so patch embedding and position add are one matmul
lN.ln1/ln2  vector: LayerNorm (kernels/m4/layernorm.py)
lN.qkv      cube: the fused Q, K, V projection ``[64 -> 192]``
lN.attn     MIX: the FlashAttention-style kernel (kernels/m4/attention.py), BSH, 2 heads of 32; the host
            slices Q, K and V out of the fused projection and rounds the float32 output to half
lN.proj     cube: the output projection; lN.res1 / lN.res2: vector Add (kernels/add_template.py)
lN.fc1/fc2  cube: the MLP; lN.gelu: vector GELU, tanh form (kernels/m4/gelu.py)
ln          vector: the final LayerNorm
head        cube: mean over the 16 tokens folded into the head (``W'[o, t*64 + c] = W[o, c] / 16``) over
            the token rows of each image read as one 1,024-value row (a reshape, no copy)
==========  ==============================================================================================

Activations are half, cube accumulation float32 (Fixpipe rounds to half), vector arithmetic float32 inside.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ascend_sim.api.launch import LaunchResult
from ascend_sim.kernels.add_template import add
from ascend_sim.kernels.m4.attention import attention_flash
from ascend_sim.kernels.m4.gelu import gelu
from ascend_sim.kernels.m4.gemm import gemm_bt
from ascend_sim.kernels.m4.layernorm import layer_norm
from ascend_sim.migrate.vit_ref import HEADS, LAYERS, LN_EPS, TOKENS, check_weights, load_vit_weights, patchify
from ascend_sim.models.lenet import Graph, Node

__all__ = ["vit_graph", "VIT_OPS", "load_vit_weights", "tokens", "cube_linear", "vector_layer_norm", "vector_gelu",
           "vector_add", "flash_mha", "pool_rows"]


def tokens(x: np.ndarray, **_: object) -> tuple[np.ndarray, None]:
    """Host: ``[N, 1, 28, 28]`` -> half ``[N * 16, 49 + 16]``: patch pixels, then the token's one-hot index."""
    p = patchify(np.asarray(x, np.float32))
    n = len(p)
    onehot = np.broadcast_to(np.eye(TOKENS, dtype=np.float32), (n, TOKENS, TOKENS))
    return np.concatenate([p, onehot], axis=2).reshape(n * TOKENS, -1).astype(np.float16), None


def cube_linear(x: np.ndarray, w: np.ndarray, b: np.ndarray, *, chip=None, **_: object
                ) -> tuple[np.ndarray, LaunchResult]:
    """``x [M, K] @ w[O, K]^T + b`` on the cube, half in and out."""
    return gemm_bt(np.asarray(x, np.float16), np.asarray(w, np.float16), np.asarray(b, np.float32),
                   out_dtype=np.float16, chip=chip)


def vector_layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, *, chip=None, **_: object
                      ) -> tuple[np.ndarray, LaunchResult]:
    return layer_norm(x, np.asarray(w, np.float32), np.asarray(b, np.float32), eps=LN_EPS, chip=chip)


def vector_gelu(x: np.ndarray, *, chip=None, **_: object) -> tuple[np.ndarray, LaunchResult]:
    return gelu(x, chip=chip)


def vector_add(x: np.ndarray, y: np.ndarray, *, chip=None, **_: object) -> tuple[np.ndarray, LaunchResult]:
    return add(np.asarray(x, np.float16), np.asarray(y, np.float16), chip=chip)


def flash_mha(qkv: np.ndarray, *, heads: int = HEADS, tokens_per_image: int = TOKENS, chip=None, **_: object
              ) -> tuple[np.ndarray, list[LaunchResult]]:
    """Self-attention of the fused projection ``[N * S, 3 * H]`` (Q, K, V column blocks) -> half ``[N * S, H]``."""
    m, h3 = qkv.shape
    h, n = h3 // 3, m // tokens_per_image
    q, k, v = (np.ascontiguousarray(qkv[:, i * h:(i + 1) * h].reshape(n, tokens_per_image, h)) for i in range(3))
    out, results = attention_flash(q, k, v, layout="BSH", num_heads=heads, chip=chip)   # the MIX launch (+ a merge)
    return out.reshape(m, h).astype(np.float16), results


def pool_rows(x: np.ndarray, *, tokens_per_image: int = TOKENS, **_: object) -> tuple[np.ndarray, None]:
    """Host view: ``[N * S, H]`` -> ``[N, S * H]`` (each image's token rows side by side; no data moves)."""
    return x.reshape(len(x) // tokens_per_image, -1), None


VIT_OPS = {"tokens": tokens, "cube_linear": cube_linear, "layer_norm": vector_layer_norm, "gelu": vector_gelu,
           "add": vector_add, "flash_mha": flash_mha, "pool_rows": pool_rows}


def vit_graph(params: Mapping[str, np.ndarray]) -> Graph:
    """The ViT as a Graph of VIT_OPS nodes over ``params`` (vit_ref.param_shapes)."""
    check_weights(params)
    p = {k: np.asarray(v, np.float32) for k, v in params.items()}

    def lin(name: str, src: str, key: str) -> Node:
        return Node(name, "cube_linear", (src,), {"w": p[key + ".w"], "b": p[key + ".b"]})

    def ln(name: str, src: str, key: str) -> Node:
        return Node(name, "layer_norm", (src,), {"w": p[key + ".w"], "b": p[key + ".b"]})

    nodes = [Node("tokens", "tokens", ("input",)),
             Node("embed", "cube_linear", ("tokens",),
                  {"w": np.concatenate([p["patch.w"], p["pos"].T], axis=1), "b": p["patch.b"]})]
    h = "embed"
    for i in range(LAYERS):
        q = f"l{i}."
        nodes += [ln(q + "ln1", h, q + "ln1"), lin(q + "qkv", q + "ln1", q + "qkv"),
                  Node(q + "attn", "flash_mha", (q + "qkv",), {"heads": HEADS}),
                  lin(q + "proj", q + "attn", q + "proj"), Node(q + "res1", "add", (h, q + "proj")),
                  ln(q + "ln2", q + "res1", q + "ln2"), lin(q + "fc1", q + "ln2", q + "fc1"),
                  Node(q + "gelu", "gelu", (q + "fc1",)), lin(q + "fc2", q + "gelu", q + "fc2"),
                  Node(q + "res2", "add", (q + "res1", q + "fc2"))]
        h = q + "res2"
    head_w = np.tile(p["head.w"], (1, TOKENS)) / TOKENS          # column t*64 + c carries head.w[:, c] / 16
    nodes += [ln("ln", h, "ln"), Node("pool", "pool_rows", ("ln",)),
              Node("head", "cube_linear", ("pool",), {"w": head_w, "b": p["head.b"]})]
    return Graph(nodes)
