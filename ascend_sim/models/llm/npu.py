"""The tiny language model on the simulated NPU: every layer a kernel launch, the KV cache held in GM.

==============  ===========================================================================================
step            kernel
==============  ===========================================================================================
embed           vector: embedding gather plus position row (kernels/m4/embedding.py), token ids read in GM
lN.ln1 / ln2    vector: LayerNorm (kernels/m4/layernorm.py)
lN.qkv          cube: the fused Q, K, V projection ``[64 -> 192]`` (Matmul API, kernels/m4/gemm.py)
lN.cache        prefill: the K and V columns of every prompt row into the GM caches (kv_append_kernel)
lN.attn         prefill: the FlashAttention-style MIX kernel, BSH, 4 heads of 16, causal
                (kernels/m4/attention.py) on a separated chip (910B); on a coupled chip (310B: no AIC/AIV
                pair to flag) the three-launch version (cube Q K^T, vector softmax, cube P V,
                kernels/m4/attention_naive.py); decode: append + one query over the cache, split over the AIV
                cores by head and key range (kernels/m4/decode_attention.py). The host rounds the float32
                output to half.
lN.proj, fc1,   cube: the projections; lN.gelu: vector GELU, tanh form (kernels/m4/gelu.py);
fc2             residual adds: vector Add (kernels/add_template.py)
ln, head        vector LayerNorm, then cube ``logits = x @ E^T`` (the tied embedding), float32 out
sample          vector: greedy argmax, or temperature + top-k sampling with a uniform from the host
                (kernels/m4/sampling.py), in ``generate``
==============  ===========================================================================================

W4A16 (``int4``: ``{weight name: (codes [O, K], scales [O, K / group])}``, e.g. migrate/llm_quant's
``quantise(...).int4()``): those linears run the fused W4A16 kernel instead (kernels/m4/w4a16_matmul.py:
int4 codes dequantised in UB, copied to L1, multiplied on the cube, bias from BT), which needs a coupled chip
(310B); the other weights stay fp16.

Activations are half, cube accumulation float32, vector arithmetic float32 inside. ``generate`` picks each
token on the NPU: the argmax of the float32 logits, or a seeded temperature / top-k sample. ``NpuLM`` keeps the caches ``[HEADS, CONTEXT, HEAD_DIM]`` half per
layer and the launches of the last step (``results``), for timing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from ascend_sim.api.launch import LaunchResult
from ascend_sim.kernels.add_template import add
from ascend_sim.hw.chips import get_chip
from ascend_sim.kernels.m4.attention import attention_flash
from ascend_sim.kernels.m4.attention_naive import attention_naive
from ascend_sim.kernels.m4.decode_attention import decode_attention, kv_append
from ascend_sim.kernels.m4.embedding import embedding
from ascend_sim.kernels.m4.gelu import gelu
from ascend_sim.kernels.m4.gemm import gemm_bt
from ascend_sim.kernels.m4.layernorm import layer_norm
from ascend_sim.kernels.m4.sampling import sample
from ascend_sim.kernels.m4.w4a16_matmul import w4a16_matmul
from ascend_sim.models.llm.reference import CONTEXT, HEAD_DIM, HEADS, LAYERS, LN_EPS, Params, check_weights


@dataclass
class NpuLM:
    """The model's weights in the kernels' dtypes, the GM KV caches and the launches of the last call."""

    params: Params
    chip: object = None
    int4: Mapping[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    k_cache: list[np.ndarray] = field(init=False)
    v_cache: list[np.ndarray] = field(init=False)
    length: int = field(init=False, default=0)
    results: list[tuple[str, LaunchResult]] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        check_weights(self.params)
        self.w = {k: np.asarray(v, np.float32 if k.endswith(".b") or ".ln" in f".{k}" else np.float16)
                  for k, v in self.params.items()}
        self.reset()

    def reset(self) -> None:
        """Empty caches (a new sequence)."""
        shape = (HEADS, CONTEXT, HEAD_DIM)
        self.k_cache = [np.zeros(shape, np.float16) for _ in range(LAYERS)]
        self.v_cache = [np.zeros(shape, np.float16) for _ in range(LAYERS)]
        self.length = 0

    # ------------------------------------------------------------------ one launch each, recorded
    def _run(self, name: str, out):
        y, res = out
        for r in res if isinstance(res, list) else [res]:
            self.results.append((name, r))
        return y

    def _linear(self, name: str, x: np.ndarray, out_dtype=np.float16) -> np.ndarray:
        w, b = self.w[name + ".w"], self.w.get(name + ".b")
        if name + ".w" in self.int4:
            codes, scales = self.int4[name + ".w"]
            return self._run(name, w4a16_matmul(x, codes, scales, b, chip=self.chip))
        return self._run(name, gemm_bt(x, w, b, out_dtype=out_dtype, chip=self.chip))

    def _norm(self, name: str, x: np.ndarray) -> np.ndarray:
        return self._run(name, layer_norm(x, self.w[name + ".w"], self.w[name + ".b"], eps=LN_EPS, chip=self.chip))

    def _add(self, name: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self._run(name, add(x, y, chip=self.chip))

    def _attention(self, i: int, qkv: np.ndarray, first: int) -> np.ndarray:
        """Prefill (``first == 0``, several rows): cache fill + flash; decode (one row): decode attention."""
        name, d = f"l{i}.attn", HEADS * HEAD_DIM
        if len(qkv) == 1 and first > 0:
            out = self._run(name, decode_attention(qkv[0], self.k_cache[i], self.v_cache[i], first, chip=self.chip))
            return out.reshape(1, d).astype(np.float16)
        if first:
            raise ValueError(f"prefill of {len(qkv)} tokens after {first} cached ones: this path prefills an "
                             "empty cache, then decodes one token at a time (call reset() first)")
        self.results.append((f"l{i}.cache", kv_append(qkv, self.k_cache[i], self.v_cache[i], 0, chip=self.chip)))
        q, k, v = (np.ascontiguousarray(qkv[:, j * d:(j + 1) * d])[None] for j in range(3))
        prefill = attention_flash if get_chip(self.chip).separated else attention_naive
        out = self._run(name, prefill(q, k, v, layout="BSH", num_heads=HEADS, causal=True, chip=self.chip))
        return out[0].astype(np.float16)

    # ------------------------------------------------------------------ the model
    def forward(self, tokens: np.ndarray) -> np.ndarray:
        """float32 logits ``[len(tokens), 256]`` of the tokens following the cache (which they are appended to)."""
        tokens = np.asarray(tokens, np.int32).reshape(-1)
        first = self.length
        if first + len(tokens) > CONTEXT:
            raise ValueError(f"{first} cached + {len(tokens)} new tokens exceed the model's context of {CONTEXT}")
        self.results = []
        h = self._run("embed", embedding(tokens, self.w["embed"], self.w["pos"], first, chip=self.chip))
        for i in range(LAYERS):
            n = f"l{i}."
            qkv = self._linear(n + "qkv", self._norm(n + "ln1", h))
            a = self._attention(i, qkv, first)
            h = self._add(n + "res1", h, self._linear(n + "proj", a))
            m = self._run(n + "gelu", gelu(self._linear(n + "fc1", self._norm(n + "ln2", h)), chip=self.chip))
            h = self._add(n + "res2", h, self._linear(n + "fc2", m))
        self.length = first + len(tokens)
        x = self._norm("ln", h)
        return self._run("head", gemm_bt(x, self.w["embed"], None, out_dtype=np.float32, chip=self.chip))

    def generate(self, prompt: np.ndarray, steps: int, *, top_k: int = 1, temperature: float = 1.0,
                 seed: int = 0) -> np.ndarray:
        """Prefill the prompt (flash attention), then one decode step per new token; each token picked on the NPU
        (kernels/m4/sampling.py): greedy for ``top_k`` 1, else temperature + top-k with uniforms drawn from
        ``default_rng(seed)`` (the draws of ``reference.generate`` with the same arguments)."""
        self.reset()
        rng = np.random.default_rng(seed)
        logits = self.forward(prompt)
        out = []
        for _ in range(steps):
            u = float(rng.random()) if top_k > 1 else 0.0
            out.append(self._run("sample", sample(logits[-1], top_k=top_k, temperature=temperature, u=u,
                                                  chip=self.chip)))
            if len(out) < steps:
                logits = self.forward(np.array(out[-1:]))
        return np.array(out, np.int32)


def launch_cycles(results: list[tuple[str, LaunchResult]]) -> dict[str, float]:
    """Simulated cycles per step name (summed over layers: ``l0.qkv`` and ``l3.qkv`` both count as ``qkv``)."""
    out: dict[str, float] = {}
    for name, r in results:
        key = name.split(".", 1)[1] if name.startswith("l") and "." in name else name
        out[key] = out.get(key, 0.0) + float(r.cycles)
    return out


__all__ = ["NpuLM", "launch_cycles"]
