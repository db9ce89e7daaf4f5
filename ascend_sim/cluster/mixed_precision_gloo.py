"""The real engine: gradient accumulation with DDP's ``no_sync`` and ``torch.amp.GradScaler`` under DDP, on gloo.

Each rank runs what a torchrun worker runs, with TinyMLP's weights (torch's ``nn.Linear`` layout):
1. accumulation: k micro-batches per rank, ``loss / k``, the first k-1 backwards inside ``ddp.no_sync()``; the
   gradients after the k-th (one AllReduce) are returned for comparison with the big batch;
2. loss scaling: SGD steps with ``GradScaler`` (init scale, growth interval given); in the listed steps rank
   ``inject_rank`` multiplies its loss by inf. DDP's AllReduce carries the inf to every rank, so every rank's
   ``scaler.step`` skips and ``update`` halves the scale. Each rank's scale history and final weights are returned.
"""
from __future__ import annotations

import pickle
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ascend_sim.cluster.errors import HcclError
from ascend_sim.cluster.gloo import available, guarded_worker, init_rank, spawn_ranks
from ascend_sim.cluster.mlp import TinyMLP


def torch_tiny_mlp(params: dict[str, np.ndarray]):
    """TinyMLP as torch modules named fc1, fc2."""
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(params["fc1.weight"].shape[1], params["fc1.weight"].shape[0])
            self.fc2 = nn.Linear(params["fc2.weight"].shape[1], params["fc2.weight"].shape[0])

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))
    net = Net()
    net.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in params.items()})
    return net


def _run(rank: int, world: int, port: int, out: str, spec: dict, timeout_s: float) -> None:
    init_rank(rank, world, port, timeout_s)
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    params, k, mb = spec["params"], spec["k"], spec["micro_batch"]
    x, y = torch.from_numpy(spec["x"]), torch.from_numpy(spec["y"])
    result: dict[str, Any] = {}
    ddp = DDP(torch_tiny_mlp(params))
    for j in range(k):                                   # rank r's micro-batch j: rows (r*k + j)*mb ...
        lo = (rank * k + j) * mb
        loss = F.cross_entropy(ddp(x[lo:lo + mb]), y[lo:lo + mb]) / k
        if j < k - 1:
            with ddp.no_sync():
                loss.backward()
        else:
            loss.backward()
    result["accumulated"] = {n: p.grad.numpy().copy() for n, p in ddp.module.named_parameters()}

    ddp = DDP(torch_tiny_mlp(params))
    opt = torch.optim.SGD(ddp.parameters(), lr=spec["lr"])
    scaler = torch.amp.GradScaler("cpu", init_scale=spec["init_scale"], growth_interval=spec["growth_interval"])
    scales = []
    for step in range(spec["steps"]):
        lo = ((step * world + rank) * mb) % (len(x) - mb + 1)
        opt.zero_grad()
        loss = F.cross_entropy(ddp(x[lo:lo + mb]), y[lo:lo + mb])
        if rank == spec["inject_rank"] and step in spec["inject_steps"]:
            loss = loss * float("inf")
        scales.append(float(scaler.get_scale()))
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    result["scales"] = scales
    result["params"] = {n: p.detach().numpy().copy() for n, p in ddp.module.named_parameters()}
    with open(Path(out).with_name(f"rank{rank}.pkl"), "wb") as f:
        pickle.dump(result, f)
    dist.barrier()
    dist.destroy_process_group()


def run_mixed_precision_gloo(x: np.ndarray, y: np.ndarray, world: int = 2, k: int = 2, micro_batch: int = 16,
                             steps: int = 8, inject_steps: tuple[int, ...] = (2,), inject_rank: int = 1,
                             init_scale: float = 2.0 ** 10, growth_interval: int = 3, lr: float = 0.1, seed: int = 0,
                             deadline_s: float = 90.0) -> list[dict[str, Any]]:
    """Run both parts on ``world`` gloo ranks; returns each rank's results."""
    if not available():
        raise HcclError("the real engine needs torch with torch.distributed (gloo), which is not installed",
                        fix='pip install -e ".[distributed]" (torch CPU), then run again')
    spec = {"params": TinyMLP((x.shape[1], 32, 10), seed).params, "x": x.astype(np.float32),
            "y": y.astype(np.int64), "k": k, "micro_batch": micro_batch, "steps": steps,
            "inject_steps": tuple(inject_steps), "inject_rank": inject_rank, "init_scale": init_scale,
            "growth_interval": growth_interval, "lr": lr}
    with tempfile.TemporaryDirectory(prefix="ascend_sim_amp_") as tmp:
        out = str(Path(tmp) / "rank0.pkl")
        spawn_ranks(world, (_run, out, spec, 30.0), deadline_s, target=guarded_worker)
        return [pickle.loads(Path(tmp, f"rank{r}.pkl").read_bytes()) for r in range(world)]
