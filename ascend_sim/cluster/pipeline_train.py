"""Pipeline-parallel training numerics: a deep MLP cut into stages, micro-batches moved over the modelled links.

``DeepMLP`` is Linear -> ReLU -> ... -> Linear -> softmax cross-entropy in numpy fp32, torch's layouts and names
(``layers.j.weight``, ``layers.j.bias``). ``pipeline_step`` runs one step of a schedule on the simulated cluster:
each stage owns a run of layers; a forward sends its output activation to the next stage and a backward sends the
input gradient to the previous one (``HcclComm.Send`` over HCCS or RoCE); the ops run in the order the timed
schedule finishes them. The loss is the mean over the whole batch, so each micro-batch's gradient is scaled by
1/m and the stages accumulate them: the result equals one device's gradient of the whole batch (fp32 tolerance,
tested, and on torch.distributed in ``pipeline_gloo.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.cluster.errors import PipelineError
from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.cluster.nn_ops import softmax_xent
from ascend_sim.cluster.pipeline_schedule import Op
from ascend_sim.cluster.pipeline_time import PipelineRun, play

F32 = np.float32


class DeepMLP:
    """``len(sizes) - 1`` Linear layers with ReLU between them; seeded, torch's (out, in) weight layout."""

    def __init__(self, sizes: tuple[int, ...] = (16, 32, 32, 32, 10), seed: int = 0):
        rng = np.random.default_rng(seed)
        self.sizes = tuple(sizes)
        self.params: dict[str, np.ndarray] = {}
        for j, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            self.params[f"layers.{j}.weight"] = (rng.standard_normal((b, a)) / np.sqrt(a)).astype(F32)
            self.params[f"layers.{j}.bias"] = (rng.standard_normal(b) * 0.1).astype(F32)

    @property
    def depth(self) -> int:
        return len(self.sizes) - 1

    def forward_layers(self, x: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, list[np.ndarray]]:
        """Layers lo..hi-1 on x; returns the output and each layer's input (kept for backward)."""
        saved = []
        for j in range(lo, hi):
            saved.append(x)
            x = x @ self.params[f"layers.{j}.weight"].T + self.params[f"layers.{j}.bias"]
            if j < self.depth - 1:
                x = np.maximum(x, F32(0))
        return x, saved

    def backward_layers(self, dy: np.ndarray, saved: list[np.ndarray], out: np.ndarray, lo: int, hi: int,
                        grads: dict[str, np.ndarray]) -> np.ndarray:
        """Back through layers hi-1..lo, adding into ``grads``; returns the gradient of layer lo's input."""
        for j in reversed(range(lo, hi)):
            if j < self.depth - 1:
                dy = dy * (out > 0)
            x = saved[j - lo]
            grads[f"layers.{j}.weight"] += dy.T @ x
            grads[f"layers.{j}.bias"] += dy.sum(axis=0)
            dy = dy @ self.params[f"layers.{j}.weight"]
            out = x
        return dy

    def loss_and_grads(self, x: np.ndarray, y: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
        """One device, the whole batch: the reference the pipeline must equal."""
        z, saved = self.forward_layers(x, 0, self.depth)
        loss, dz = softmax_xent(z, y)
        grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.backward_layers(dz, saved, z, 0, self.depth, grads)
        return loss, grads


def stage_bounds(depth: int, stages: int) -> list[tuple[int, int]]:
    """Layers [lo, hi) of each stage: as equal as possible, earlier stages take the extra layer."""
    if not isinstance(stages, int) or not 1 <= stages <= depth:
        raise PipelineError(f"{stages!r} stages for a model of {depth} layers: each stage needs at least one layer",
                            fix=f"use 1..{depth} stages")
    q, r = divmod(depth, stages)
    out, lo = [], 0
    for s in range(stages):
        hi = lo + q + (s < r)
        out.append((lo, hi))
        lo = hi
    return out


@dataclass
class PipelineStep:
    loss: float
    grads: dict[str, np.ndarray]
    run: PipelineRun


def pipeline_step(model: DeepMLP, x: np.ndarray, y: np.ndarray, ops: list[list[Op]], micro_batches: int,
                  comm: HcclComm, layer_us: float = 10.0) -> PipelineStep:
    """One training step of ``model`` pipelined over ranks 0..p-1 of ``comm`` by the schedule ``ops``."""
    p, m = len(ops), micro_batches
    if len(x) % m:
        raise PipelineError(f"a batch of {len(x)} does not split into {m} equal micro-batches "
                            f"({len(x)} % {m} = {len(x) % m})", fix=f"use a batch that is a multiple of {m}")
    bounds = stage_bounds(model.depth, p)
    mb = len(x) // m
    act_bytes = mb * max(model.sizes[hi] for _, hi in bounds[:-1]) * 4 if p > 1 else 0
    run = play(comm.cluster, ops, m, [layer_us * (hi - lo) for lo, hi in bounds],
               [2 * layer_us * (hi - lo) for lo, hi in bounds], act_bytes)
    order = sorted(((run.finish[(k, i, s)], s, k, i) for s in range(p) for k, i, _ in ops[s]))
    grads = {k: np.zeros_like(v) for k, v in model.params.items()}
    inbox: dict[tuple[str, int, int], np.ndarray] = {}
    kept: dict[tuple[int, int], tuple[np.ndarray, list[np.ndarray]]] = {}
    losses = [0.0] * m
    for _, s, kind, i in order:
        lo, hi = bounds[s]
        if kind == "F":
            inp = x[i * mb:(i + 1) * mb] if s == 0 else inbox.pop(("F", i, s))
            out, saved = model.forward_layers(inp, lo, hi)
            kept[(s, i)] = (out, saved)
            if s < p - 1:
                inbox[("F", i, s + 1)] = comm.Send(out, s, s + 1)
        else:
            out, saved = kept.pop((s, i))
            if s == p - 1:
                losses[i], dy = softmax_xent(out, y[i * mb:(i + 1) * mb])
                dy = dy / F32(m)
            else:
                dy = inbox.pop(("B", i, s))
            dx = model.backward_layers(dy, saved, out, lo, hi, grads)
            if s > 0:
                inbox[("B", i, s - 1)] = comm.Send(dx, s, s - 1)
    return PipelineStep(float(np.mean(losses)), grads, run)
