"""The tiny byte-level language model: its shape, its shipped weights and a float32 numpy reference.

    embed     token embedding ``E [256, 64]`` (one row per byte) plus a learned position embedding ``[128, 64]``
    4 x       pre-LayerNorm decoder layer:  x = x + proj(MHA(LN1(x)));  x = x + fc2(GELU(fc1(LN2(x))))
              MHA: 4 heads of 16, causal ``softmax(Q K^T / 4) V``;  MLP 64 -> 256 -> 64, GELU (tanh form)
    head      final LayerNorm, then logits ``x @ E^T`` (the output layer shares the embedding: tied weights)

Parameter names follow torch (``.w`` = weight ``[out, in]``, ``.b`` = bias). The QKV projection is one
``[3 * 64, 64]`` matrix whose rows are Q, then K, then V, each with head 0's 16 rows first (the BSH layout of
the attention kernels). scripts/train_llm.py trains it on ``corpus.corpus_bytes("train")`` (``lm_bytes.npz``),
and a second set of the same shapes on that text mixed with copy rows and the passkey retrieval task
(``lm_passkey.npz``, passkey.py: what the KV-cache compression is judged on). The weights ship in float16 and
this reference computes in float32 on them.

Decoding with a KV cache (KV缓存): ``prefill`` runs the prompt and returns each layer's keys and values,
``decode_step`` appends one token's keys and values and attends its one query over the cache. Perplexity
uses a strided sliding window (``perplexity``): every held-out token is scored exactly once, with at least
``CONTEXT - stride`` tokens of context once the text is long enough.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from ascend_sim.models.llm.corpus import VOCAB
from ascend_sim.models.transformer import block_param_shapes

D_MODEL = 64
HEADS = 4
HEAD_DIM = D_MODEL // HEADS
D_MLP = 256
LAYERS = 4
CONTEXT = 128
LN_EPS = 1e-5
GELU_C = float(np.sqrt(2.0 / np.pi))
GELU_A = 0.044715
WEIGHTS_FILE = "lm_bytes.npz"
PASSKEY_WEIGHTS_FILE = "lm_passkey.npz"     # the same shapes, trained on the text mixed with the passkey task

Params = Mapping[str, np.ndarray]


def param_shapes() -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape."""
    shapes: dict[str, tuple[int, ...]] = {"embed": (VOCAB, D_MODEL), "pos": (CONTEXT, D_MODEL)}
    for i in range(LAYERS):
        shapes.update(block_param_shapes(f"l{i}.", D_MODEL, D_MLP))
    shapes.update({"ln.w": (D_MODEL,), "ln.b": (D_MODEL,)})
    return shapes


def linear_names() -> list[str]:
    """The weight matrices of the decoder layers (what weight-only quantisation quantises)."""
    return [f"l{i}.{n}.w" for i in range(LAYERS) for n in ("qkv", "proj", "fc1", "fc2")]


def load_lm_weights(name: str = WEIGHTS_FILE) -> dict[str, np.ndarray]:
    """The bundled trained weights (float16, as shipped): the language model, or with ``PASSKEY_WEIGHTS_FILE``
    the variant trained for the passkey retrieval too (passkey.py)."""
    from ascend_sim.models.datasets import bundled_file
    with bundled_file(name).open("rb") as f, np.load(f) as npz:
        params = {k: npz[k] for k in npz.files}
    check_weights(params)
    return params


def check_weights(params: Params) -> None:
    """Raise a ValueError naming the first missing or misshapen parameter."""
    for name, shape in param_shapes().items():
        got = np.shape(params[name]) if name in params else None
        if got != shape:
            raise ValueError(f"LM weight {name!r}: expected shape {shape}, got {got or 'missing'}")


def layer_norm_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = LN_EPS) -> np.ndarray:
    """LayerNorm over the last axis (biased variance), float32."""
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu_ref(x: np.ndarray) -> np.ndarray:
    """GELU, tanh approximation, float32."""
    return 0.5 * x * (1.0 + np.tanh(GELU_C * (x + GELU_A * x ** 3)))


def _f32(params: Params) -> dict[str, np.ndarray]:
    return {k: np.asarray(v, np.float32) for k, v in params.items()}


def split_heads(x: np.ndarray) -> np.ndarray:
    """``[S, 64]`` -> ``[4, S, 16]`` (BSH columns to one block per head)."""
    return x.reshape(len(x), HEADS, HEAD_DIM).transpose(1, 0, 2)


def attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, first: int = 0) -> np.ndarray:
    """Causal attention of queries at positions ``first..`` over keys ``0..``: ``[N, Sq, D]`` x ``[N, Skv, D]``."""
    s = q @ k.transpose(0, 2, 1) / np.sqrt(HEAD_DIM)
    sq, skv = q.shape[1], k.shape[1]
    s = np.where(np.arange(skv)[None, :] > first + np.arange(sq)[:, None], -np.inf, s)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v


@dataclass
class KVCache:
    """Per layer the keys and values of every position so far, ``[HEADS, length, HEAD_DIM]`` float32."""

    k: list[np.ndarray] = field(default_factory=lambda: [np.zeros((HEADS, 0, HEAD_DIM), np.float32)] * LAYERS)
    v: list[np.ndarray] = field(default_factory=lambda: [np.zeros((HEADS, 0, HEAD_DIM), np.float32)] * LAYERS)

    @property
    def length(self) -> int:
        return self.k[0].shape[1]


def forward(params: Params, tokens: np.ndarray, cache: KVCache | None = None,
            record: dict[str, list] | None = None, attention=None) -> np.ndarray:
    """Logits ``[S, 256]`` for ``tokens [S]`` following the ``cache`` (appended to in place), float32.

    ``record``: when given, the input rows of every decoder linear are appended under its weight's name
    (``l0.qkv.w`` ...): the calibration data of a post-training quantiser. ``attention``: when given,
    ``attention(layer, q, k, v, first)`` replaces ``attend`` (a compressed cache, models/llm/kv_compress.py)."""
    p = _f32(params)
    cache = KVCache() if cache is None else cache
    first = cache.length
    tokens = np.asarray(tokens)
    if first + len(tokens) > CONTEXT:
        raise ValueError(f"{first} cached + {len(tokens)} new tokens exceed the model's context of {CONTEXT}")
    h = p["embed"][tokens] + p["pos"][first:first + len(tokens)]
    def linear(name: str, x: np.ndarray) -> np.ndarray:
        if record is not None:
            record.setdefault(name + ".w", []).append(x)
        return x @ p[name + ".w"].T + p[name + ".b"]

    for i in range(LAYERS):
        n = f"l{i}."
        qkv = linear(n + "qkv", layer_norm_ref(h, p[n + "ln1.w"], p[n + "ln1.b"]))
        q, k, v = (split_heads(qkv[:, j * D_MODEL:(j + 1) * D_MODEL]) for j in range(3))
        cache.k[i] = np.concatenate([cache.k[i], k], axis=1)
        cache.v[i] = np.concatenate([cache.v[i], v], axis=1)
        a = (attend(q, cache.k[i], cache.v[i], first) if attention is None else
             attention(i, q, cache.k[i], cache.v[i], first)).transpose(1, 0, 2).reshape(len(tokens), D_MODEL)
        h = h + linear(n + "proj", a)
        m = gelu_ref(linear(n + "fc1", layer_norm_ref(h, p[n + "ln2.w"], p[n + "ln2.b"])))
        h = h + linear(n + "fc2", m)
    return layer_norm_ref(h, p["ln.w"], p["ln.b"]) @ p["embed"].T


def generate(params: Params, prompt: np.ndarray, steps: int, *, top_k: int = 1, temperature: float = 1.0,
             seed: int = 0) -> np.ndarray:
    """Decoding with the KV cache: the prompt's prefill, then one token per step, greedy (``top_k`` 1) or a
    temperature + top-k sample with one uniform per token from ``default_rng(seed)`` (kernels/m4/sampling.py's
    ``sample_reference``: the same arithmetic as the NPU's sampling kernel)."""
    from ascend_sim.kernels.m4.sampling import sample_reference
    rng = np.random.default_rng(seed)
    cache = KVCache()
    logits = forward(params, prompt, cache)
    out = []
    for _ in range(steps):
        u = float(rng.random()) if top_k > 1 else 0.0
        out.append(sample_reference(logits[-1], top_k, temperature, u))
        if len(out) < steps:
            logits = forward(params, np.array(out[-1:]), cache)
    return np.array(out, np.int32)


def greedy_generate(params: Params, prompt: np.ndarray, steps: int) -> np.ndarray:
    """Greedy decoding (贪心解码) with the KV cache: the prompt's prefill, then one token per step."""
    return generate(params, prompt, steps)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def windows(n: int, stride: int) -> list[tuple[int, int, int]]:
    """(start, end, first scored) of the strided sliding windows over ``n`` tokens; tokens 1..n-1 scored once."""
    if not 1 <= stride <= CONTEXT:
        raise ValueError(f"stride {stride}: use 1..{CONTEXT}")
    out, scored = [], 1
    while scored < n:
        end = min(n, scored + stride)
        start = max(0, end - CONTEXT)
        out.append((start, end, scored))
        scored = end
    return out


def perplexity(logits_fn, tokens: np.ndarray, stride: int = CONTEXT // 2) -> float:
    """``exp(mean NLL)`` of ``tokens[1:]``; ``logits_fn(window) -> [len, 256]`` is the model (fp32 log-softmax)."""
    nll, count = 0.0, 0
    for start, end, scored in windows(len(tokens), stride):
        window = tokens[start:end]
        lp = log_softmax(np.asarray(logits_fn(window), np.float64))
        rows = np.arange(scored - start - 1, end - start - 1)        # logits row r predicts window[r + 1]
        nll -= lp[rows, window[rows + 1]].sum()
        count += len(rows)
    return float(np.exp(nll / count))


__all__ = ["D_MODEL", "HEADS", "HEAD_DIM", "D_MLP", "LAYERS", "CONTEXT", "LN_EPS", "GELU_C", "GELU_A", "WEIGHTS_FILE",
           "PASSKEY_WEIGHTS_FILE", "param_shapes", "linear_names", "load_lm_weights", "check_weights", "layer_norm_ref",
           "gelu_ref", "split_heads", "attend", "KVCache", "forward", "generate", "greedy_generate", "log_softmax",
           "windows", "perplexity"]
