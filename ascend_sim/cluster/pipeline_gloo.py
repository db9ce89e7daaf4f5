"""The real engine: ``DeepMLP`` pipelined over gloo ranks with torch.distributed send/recv (one stage per rank).

Rank s builds the torch model from the same weights, keeps its layers (``stage_bounds``) and runs its op list of
the schedule in order:
- forward: receive the activation from rank s-1 (or slice the batch), run its layers, ``isend`` the output on;
- backward: the last rank's loss is ``cross_entropy / m`` (the mean over the whole batch); the others receive
  the output gradient from rank s+1, call ``out.backward(grad)`` and ``isend`` the input gradient back.
Sends are non-blocking (``isend``, waited at the end) and every message is tagged with its micro-batch, so any
schedule whose dependencies hold runs without deadlock, as Megatron's batched p2p does. Each rank writes its
own gradients; the parent merges them. ``torch.distributed.pipelining`` does the same with a traced model; the
explicit send/recv shows what moves.
"""
from __future__ import annotations

import pickle
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ascend_sim.cluster.errors import HcclError
from ascend_sim.cluster.gloo import available, guarded_worker, init_rank, spawn_ranks
from ascend_sim.cluster.pipeline_schedule import Op
from ascend_sim.cluster.pipeline_train import DeepMLP, stage_bounds


def torch_deep_mlp(model: DeepMLP):
    """``model`` as a torch ModuleList of Linear layers with the same weights and names."""
    import torch
    import torch.nn as nn
    layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(model.sizes[:-1], model.sizes[1:]))
    holder = nn.Module()
    holder.layers = layers
    holder.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in model.params.items()})
    return holder


def _stage(rank: int, world: int, port: int, out: str, spec: dict, timeout_s: float) -> None:
    """One pipeline stage: the body a torchrun worker would run."""
    init_rank(rank, world, port, timeout_s)
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    model: DeepMLP = spec["model"]
    m, x, y = spec["micro_batches"], torch.from_numpy(spec["x"]), torch.from_numpy(spec["y"])
    mb = len(x) // m
    lo, hi = stage_bounds(model.depth, world)[rank]
    net = torch_deep_mlp(model).layers
    width_in = model.sizes[lo]

    def run(h):
        for j in range(lo, hi):
            h = net[j](h)
            if j < model.depth - 1:
                h = F.relu(h)
        return h
    kept, sends, losses = {}, [], []
    for kind, i, _ in spec["ops"][rank]:
        if kind == "F":
            if rank == 0:
                inp = x[i * mb:(i + 1) * mb]
            else:
                inp = torch.empty(mb, width_in)
                dist.recv(inp, rank - 1, tag=i)
                inp.requires_grad_(True)
            h = run(inp)
            kept[i] = (inp, h)
            if rank < world - 1:
                sends.append(dist.isend(h.detach().contiguous(), rank + 1, tag=i))
        else:
            inp, h = kept.pop(i)
            if rank == world - 1:
                loss = F.cross_entropy(h, y[i * mb:(i + 1) * mb]) / m
                losses.append(float(loss.detach()) * m)
                loss.backward()
            else:
                grad = torch.empty_like(h)
                dist.recv(grad, rank + 1, tag=m + i)
                h.backward(grad)
            if rank > 0:
                sends.append(dist.isend(inp.grad.contiguous(), rank - 1, tag=m + i))
    for s in sends:
        s.wait()
    grads = {f"layers.{j}.{n}": p.grad.numpy().copy() for j in range(lo, hi) for n, p in net[j].named_parameters()}
    with open(Path(out).with_name(f"stage{rank}.pkl"), "wb") as f:
        pickle.dump({"grads": grads, "losses": losses}, f)
    dist.barrier()
    dist.destroy_process_group()


def run_pipeline_gloo(model: DeepMLP, x: np.ndarray, y: np.ndarray, ops: list[list[Op]], micro_batches: int,
                      timeout_s: float = 30.0, deadline_s: float = 120.0) -> tuple[float, dict[str, np.ndarray]]:
    """Run one pipelined step on ``len(ops)`` gloo ranks; returns the batch's mean loss and every gradient."""
    if not available():
        raise HcclError("the real engine needs torch with torch.distributed (gloo), which is not installed",
                        fix='pip install -e ".[distributed]" (torch CPU), then run again')
    world = len(ops)
    spec: dict[str, Any] = {"model": model, "x": x.astype(np.float32), "y": y.astype(np.int64),
                            "ops": ops, "micro_batches": micro_batches}
    with tempfile.TemporaryDirectory(prefix="ascend_sim_pipe_") as tmp:
        out = str(Path(tmp) / "stage0.pkl")
        spawn_ranks(world, (_stage, out, spec, timeout_s), deadline_s, target=guarded_worker)
        parts = [pickle.loads(Path(tmp, f"stage{r}.pkl").read_bytes()) for r in range(world)]
    grads: dict[str, np.ndarray] = {}
    for part in parts:
        grads.update(part["grads"])
    return float(np.mean(parts[-1]["losses"])), {k: grads[k] for k in model.params}
