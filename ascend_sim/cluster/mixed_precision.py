"""Mixed-precision training (混合精度训练) of TinyMLP: fp16/bf16 compute, fp32 master weights, loss scaling.

``MixedPrecisionMLP`` is a TinyMLP replica whose ``parameters()`` are the fp32 master weights (主权重). Each
``loss_and_grads`` casts them to the compute type (fp16 or bf16, as ``torch.autocast`` casts a matmul's
operands), runs the matmuls and ReLU in that type, the softmax cross-entropy in fp32 (autocast's fp32 list); each matmul sums in fp32 and rounds its result to the
compute type, as the cube unit does (fp16 operands, fp32 L0C), multiplies
the output gradient by the loss scale, and returns the backward's gradients as fp32 values of the compute type:
what fell below the compute type's range is already 0, what rose above it is inf. The optimizer then unscales
and updates the fp32 masters (``loss_scale.py``).

``pure=True`` is the baseline that fails: weights kept in the compute type, no loss scale, updates added in it,
so small updates round away and small gradients flush to zero. ``train`` runs either, on one device or under DDP.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ascend_sim.cluster.errors import PipelineError
from ascend_sim.cluster.loss_scale import DynamicLossScaler
from ascend_sim.cluster.mlp import TinyMLP
from ascend_sim.hw.dtypes import bfloat16

F32 = np.float32
COMPUTE = {"fp16": np.dtype(np.float16), "bf16": np.dtype(bfloat16), "fp32": np.dtype(np.float32)}


def mm(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None, out) -> np.ndarray:
    """A cube matmul: operands in the compute type, products summed in fp32 (L0C), the result cast to ``out``."""
    r = a.astype(F32) @ b.astype(F32)
    if bias is not None:
        r += bias.astype(F32)
    with np.errstate(over="ignore"):            # an overflow becomes inf, which the loss scaler looks for
        return r.astype(out)


class MixedPrecisionMLP:
    """A TinyMLP with fp32 master weights computed in ``compute`` ('fp16', 'bf16' or 'fp32')."""

    def __init__(self, sizes: tuple[int, int, int] = (16, 32, 10), seed: int = 0, compute: str = "fp16",
                 pure: bool = False):
        if compute not in COMPUTE:
            raise PipelineError(f"compute={compute!r} is not a training type here", fix=f"use one of {list(COMPUTE)}")
        self.dtype = COMPUTE[compute]
        self.pure = pure
        base = TinyMLP(sizes, seed).params
        self.params = {k: v.astype(self.dtype) if pure else v.copy() for k, v in base.items()}
        self.loss_scale = 1.0
        self.global_tokens: int | None = None     # the loss is a mean over this many samples (None: the batch)

    def parameters(self) -> list[tuple[str, np.ndarray]]:
        return list(self.params.items())

    def predict(self, x: np.ndarray) -> np.ndarray:
        p = {k: v.astype(F32) for k, v in self.params.items()}
        h = np.maximum(x @ p["fc1.weight"].T + p["fc1.bias"], F32(0))
        return np.argmax(h @ p["fc2.weight"].T + p["fc2.bias"], axis=1)

    def loss_and_grads(self, x: np.ndarray, y: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
        """Loss (fp32) and the gradients of ``loss x loss_scale``, computed in the compute type, as fp32 arrays."""
        t = self.dtype
        w1, b1, w2, b2 = (self.params[k].astype(t) for k in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"))
        xt = x.astype(t)
        h = mm(xt, w1.T, b1, t)
        a = np.maximum(h, t.type(0))
        z = mm(a, w2.T, b2, F32)                                 # logits to fp32 for the softmax (autocast)
        z = z - z.max(axis=1, keepdims=True)
        prob = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        n = len(x)
        loss = float(-np.log(np.maximum(prob[np.arange(n), y], 1e-30)).mean())
        dz = prob
        dz[np.arange(n), y] -= F32(1)
        with np.errstate(over="ignore", invalid="ignore"):       # overflow -> inf: the loss scaler's business
            return loss, self._backward(dz * F32(self.loss_scale / (self.global_tokens or n)), xt, h, a, w2)

    def _backward(self, dz32: np.ndarray, xt: np.ndarray, h: np.ndarray, a: np.ndarray,
                  w2: np.ndarray) -> dict[str, np.ndarray]:
        t = self.dtype
        dz = dz32.astype(t)                                      # the scaled output gradient, in the compute type
        da = mm(dz, w2, None, t)
        dh = (da * (h > 0)).astype(t)
        grads = {"fc2.bias": dz.astype(F32).sum(axis=0).astype(t), "fc2.weight": mm(dz.T, a, None, t),
                 "fc1.bias": dh.astype(F32).sum(axis=0).astype(t), "fc1.weight": mm(dh.T, xt, None, t)}
        return {k: grads[k].astype(F32) for k in self.params}

    def backward_flops(self, batch: int) -> dict[str, float]:
        return {k: (4.0 * batch * v.size if v.ndim == 2 else float(batch * v.size)) for k, v in self.params.items()}

    def apply(self, grads: dict[str, np.ndarray], lr: float) -> None:
        """p -= lr x g: in fp32 on the masters, or in the compute type for the pure baseline."""
        for k, p in self.params.items():
            if self.pure:
                with np.errstate(over="ignore", invalid="ignore"):
                    p[...] = (p - (np.float32(lr) * grads[k]).astype(self.dtype)).astype(self.dtype)
            else:
                p -= np.float32(lr) * grads[k]


@dataclass
class TrainLog:
    losses: list[float] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    scales: list[float] = field(default_factory=list)
    zero_grad_share: list[float] = field(default_factory=list)    # share of gradient values that are exactly 0


def train_step(model: MixedPrecisionMLP, x: np.ndarray, y: np.ndarray, lr: float,
               scaler: DynamicLossScaler | None, log: TrainLog, grads: dict[str, np.ndarray] | None = None) -> None:
    """One step: gradients (given, e.g. DDP's averaged ones, or computed), unscale, skip on overflow, update."""
    if grads is None:
        model.loss_scale = scaler.scale if scaler else 1.0
        loss, grads = model.loss_and_grads(x, y)
        log.losses.append(loss)
    zeros = sum(int((g == 0).sum()) for g in grads.values()) / sum(g.size for g in grads.values())
    log.zero_grad_share.append(zeros)
    if scaler is None:
        model.apply(grads, lr)
        return
    unscaled, found_inf = scaler.unscale(grads)
    log.scales.append(scaler.scale)
    if found_inf:
        log.skipped.append(len(log.scales) - 1)
    else:
        model.apply(unscaled, lr)
    scaler.update(found_inf)


def train(model: MixedPrecisionMLP, x: np.ndarray, y: np.ndarray, steps: int, batch: int, lr: float,
          scaler: DynamicLossScaler | None = None, inject_overflow: tuple[int, ...] = (),
          global_tokens: int | None = None) -> TrainLog:
    """``steps`` of SGD on (x, y) in order; ``inject_overflow``: steps whose first gradient is made inf.

    ``global_tokens`` G: the loss is a mean over G samples, of which each step computes ``batch`` (the rest would
    come from gradient accumulation and the data-parallel ranks). Each sample's output gradient is then (p - y)/G,
    which for G = 2^24 (a 16M-token LLM batch) is below fp16's smallest subnormal (2^-24). The learning rate is
    multiplied by G / batch so that an exact run takes the same steps as with G = batch.
    """
    log = TrainLog()
    model.global_tokens = global_tokens
    lr = lr * (global_tokens / batch if global_tokens else 1.0)
    for s in range(steps):
        i = (s * batch) % (len(x) - batch + 1)
        xb, yb = x[i:i + batch], y[i:i + batch]
        if s in inject_overflow:
            model.loss_scale = scaler.scale if scaler else 1.0
            loss, g = model.loss_and_grads(xb, yb)
            g["fc1.weight"] = g["fc1.weight"].copy()
            g["fc1.weight"].flat[0] = np.inf
            log.losses.append(loss)
            train_step(model, xb, yb, lr, scaler, log, g)
        else:
            train_step(model, xb, yb, lr, scaler, log)
    return log
