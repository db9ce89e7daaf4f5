"""Mixture of experts (混合专家, MoE): top-k gating, expert capacity, load-balance loss, and a trainable classifier.

A router (门控) scores every token against E experts (softmax of ``x Wg^T``); each token goes to its k best
experts, weighted by their router probabilities (GShard, Lepikhin et al. 2020; Switch Transformer, Fedus et al. 2021).
An expert takes at most C = ceil(capacity_factor x tokens x k / E) tokens of a group (a device's tokens); the
tokens beyond C, in token order, are **dropped** (丢弃) by that expert: they get nothing from it (the layer's
residual path, here the zero vector, passes them on). The load-balance loss (负载均衡损失) is Switch's
E x sum_e f_e P_e: f_e the share of tokens whose first choice is e, P_e the mean router probability of e; it is 1
when routing is uniform and grows as the router favours some experts.

``MoEClassifier`` is one MoE layer whose experts are two-layer MLPs producing class logits, trained in numpy fp32
with its backward written out (router included). ``expert_parallel.py`` runs the same layer with the experts spread
over devices and AlltoAll dispatch and combine.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ascend_sim.cluster.errors import PipelineError
from ascend_sim.cluster.nn_ops import softmax_xent

F32 = np.float32


def capacity(tokens: int, experts: int, k: int, capacity_factor: float) -> int:
    """Slots per expert for a group of ``tokens``: ceil(cf x tokens x k / E)."""
    if capacity_factor <= 0:
        raise PipelineError(f"capacity_factor={capacity_factor}: an expert needs room for some tokens",
                            fix="use a capacity factor > 0 (1.0 to 1.25 is usual; 2.0 drops almost nothing)")
    return max(1, math.ceil(capacity_factor * tokens * k / experts))


@dataclass
class Routing:
    """Where each token goes: ``expert[t, j]`` its j-th choice, ``weight[t, j]`` the gate, ``slot[t, j]`` its position
    in that expert's buffer or -1 if dropped."""

    probs: np.ndarray
    expert: np.ndarray
    weight: np.ndarray
    slot: np.ndarray
    capacity: int

    @property
    def dropped_share(self) -> float:
        return float(np.mean(self.slot < 0))


def route(x: np.ndarray, wg: np.ndarray, k: int, capacity_factor: float) -> Routing:
    """Top-k gating of tokens ``x`` (T, d) by router ``wg`` (E, d), with capacity slots assigned in token order."""
    e_count = wg.shape[0]
    if not 1 <= k <= e_count:
        raise PipelineError(f"top-k with k={k} among {e_count} experts", fix=f"use 1 <= k <= {e_count}")
    z = x @ wg.T
    z = z - z.max(axis=1, keepdims=True)
    probs = (np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)).astype(F32)
    expert = np.argsort(-probs, axis=1, kind="stable")[:, :k]
    weight = np.take_along_axis(probs, expert, axis=1)
    cap = capacity(len(x), e_count, k, capacity_factor)
    slot = np.full(expert.shape, -1)
    used = np.zeros(e_count, int)
    for j in range(k):                        # first choices take their slots before second choices (GShard)
        for t in range(len(x)):
            e = expert[t, j]
            if used[e] < cap:
                slot[t, j] = used[e]
                used[e] += 1
    return Routing(probs, expert, weight, slot, cap)


def load_balance_loss(r: Routing) -> float:
    """Switch Transformer's auxiliary loss E x sum_e f_e P_e (1.0 when perfectly balanced)."""
    e_count = r.probs.shape[1]
    f = np.bincount(r.expert[:, 0], minlength=e_count) / len(r.expert)
    return float(e_count * np.sum(f * r.probs.mean(axis=0)))


class MoEClassifier:
    """Router + E expert MLPs (d -> hidden -> classes); the output is the gate-weighted sum of the kept experts."""

    def __init__(self, d: int = 8, hidden: int = 16, classes: int = 4, experts: int = 4, k: int = 1, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.k = k
        self.p = {"router": (rng.standard_normal((experts, d)) * 0.5).astype(F32),
                  "w1": (rng.standard_normal((experts, hidden, d)) / np.sqrt(d)).astype(F32),
                  "b1": np.zeros((experts, hidden), F32),
                  "w2": (rng.standard_normal((experts, classes, hidden)) / np.sqrt(hidden)).astype(F32),
                  "b2": np.zeros((experts, classes), F32)}

    @property
    def experts(self) -> int:
        return self.p["router"].shape[0]

    def expert_forward(self, e: int, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        h = np.maximum(x @ self.p["w1"][e].T + self.p["b1"][e], F32(0))
        return h @ self.p["w2"][e].T + self.p["b2"][e], h

    def forward(self, x: np.ndarray, capacity_factor: float) -> tuple[np.ndarray, Routing]:
        r = route(x, self.p["router"], self.k, capacity_factor)
        out = np.zeros((len(x), self.p["w2"].shape[1]), F32)
        for e in range(self.experts):
            t, j = np.nonzero((r.expert == e) & (r.slot >= 0))
            if len(t):
                y, _ = self.expert_forward(e, x[t])
                out[t] += r.weight[t, j, None] * y
        return out, r

    def predict(self, x: np.ndarray, capacity_factor: float) -> np.ndarray:
        return np.argmax(self.forward(x, capacity_factor)[0], axis=1)

    def loss_and_grads(self, x: np.ndarray, y: np.ndarray, capacity_factor: float,
                       aux_weight: float = 0.01) -> tuple[float, dict[str, np.ndarray], Routing]:
        """Cross-entropy + aux_weight x load-balance loss, and the gradient of every parameter."""
        r = route(x, self.p["router"], self.k, capacity_factor)
        g = {k: np.zeros_like(v) for k, v in self.p.items()}
        out = np.zeros((len(x), self.p["w2"].shape[1]), F32)
        kept = []
        for e in range(self.experts):
            t, j = np.nonzero((r.expert == e) & (r.slot >= 0))
            if len(t):
                ye, h = self.expert_forward(e, x[t])
                out[t] += r.weight[t, j, None] * ye
                kept.append((e, t, j, ye, h))
        loss, dout = softmax_xent(out, y)
        dprobs = np.zeros_like(r.probs)
        for e, t, j, ye, h in kept:
            dprobs[t, e] += np.sum(dout[t] * ye, axis=1)               # d loss / d gate
            dye = dout[t] * r.weight[t, j, None]
            g["w2"][e] += dye.T @ h
            g["b2"][e] += dye.sum(axis=0)
            dh = (dye @ self.p["w2"][e]) * (h > 0)
            g["w1"][e] += dh.T @ x[t]
            g["b1"][e] += dh.sum(axis=0)
        e_count, n = self.experts, len(x)
        f = np.bincount(r.expert[:, 0], minlength=e_count) / n
        aux = load_balance_loss(r)
        dprobs += F32(aux_weight * e_count) * (f / n).astype(F32)[None, :]   # f is not differentiated (Switch)
        dz = r.probs * (dprobs - np.sum(dprobs * r.probs, axis=1, keepdims=True))
        g["router"] = (dz.T @ x).astype(F32)
        return loss + aux_weight * aux, g, r

    def sgd_step(self, grads: dict[str, np.ndarray], lr: float) -> None:
        for k, v in self.p.items():
            v -= F32(lr) * grads[k]
