"""The real engine: the same LeNet-5 DDP job trained by torch.distributed (gloo on CPU, spawned processes).

Needs the ``distributed`` extra (``pip install -e ".[distributed]"``: torch CPU). Each rank is a process started
with the ``spawn`` method; rank r runs exactly what a torchrun worker would run:
``dist.init_process_group(backend, ...)``, ``DistributedDataParallel(model)``, ``DistributedSampler``, SGD with
momentum. On Ascend the one change is ``backend="hccl"`` with ``torch_npu`` imported and the model on ``"npu"``;
across machines ``torchrun --nnodes N --nproc-per-node 8 --rdzv-endpoint HOST:PORT train.py`` starts the workers.

Safe ports and no hangs: the parent process opens the rendezvous store itself on port 0 (the kernel picks a free
port and the parent keeps it bound), so no port is guessed; gloo is pinned to the loopback interface; every
collective has a timeout and the parent stops all ranks as soon as one exits with an error or the deadline passes,
as torchrun does. ``run_gloo(job, kill=(rank, step))`` kills a rank mid-step (after forward, before the gradient
AllReduce), then restarts every rank from rank 0's last snapshot (``job.checkpoint_every``), as
``torchrun --max-restarts`` would.
"""
from __future__ import annotations

import os
import pickle
import sys
import tempfile
import time
import traceback
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ascend_sim.cluster.ddp_job import DDPJob, TrainRecord, job_data
from ascend_sim.cluster.errors import HcclError
from ascend_sim.cluster.lenet_train import LeNet5Train

HOST = "127.0.0.1"
KILLED_EXIT = 17


class WorkerFailed(HcclError):
    """A rank of the real run exited with an error or did not finish before the deadline."""


def available() -> bool:
    """True when torch with torch.distributed (gloo) can be imported."""
    try:
        import torch.distributed as dist
    except ImportError:
        return False
    return dist.is_available() and dist.is_gloo_available()


def init_rank(rank: int, world: int, port: int, timeout_s: float, backend: str = "gloo") -> None:
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    store = dist.TCPStore(HOST, port, world, is_master=False, timeout=timedelta(seconds=timeout_s))
    dist.init_process_group(backend, store=store, rank=rank, world_size=world,
                            timeout=timedelta(seconds=timeout_s))


def torch_lenet():
    """LeNet-5 as a torch.nn.Module with the parameter names of LeNet5Train."""
    import torch.nn as nn
    import torch.nn.functional as F

    class LeNet5(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 6, 5, padding=2), nn.Conv2d(6, 16, 5)
            self.fc1, self.fc2, self.fc3 = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2).flatten(1)
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))

    return LeNet5()


def error_file(out: str, rank: int) -> Path:
    """Where rank ``rank`` leaves the last lines of its traceback when it fails."""
    return Path(out).with_name(f"rank{rank}.err")


def _train_worker(rank: int, world: int, port: int, job: DDPJob, out: str, *rest: Any) -> None:
    """One rank of the DDP job; an exception's traceback is kept beside rank 0's output for the launcher."""
    try:
        _train_rank(rank, world, port, job, out, *rest)
    except BaseException:
        error_file(out, rank).write_text("".join(traceback.format_exc().splitlines(True)[-6:]))
        raise
    _leave_rank()


def guarded_worker(rank: int, world: int, port: int, body: Any, out: str, *rest: Any) -> None:
    """Run ``body(rank, world, port, out, *rest)`` in a spawned rank; its traceback's tail lands beside ``out`` on error.

    Pass ``target=guarded_worker`` and ``args=(body, out, ...)`` to ``spawn_ranks`` (``body`` a module-level function).
    """
    try:
        body(rank, world, port, out, *rest)
    except BaseException:
        error_file(out, rank).write_text("".join(traceback.format_exc().splitlines(True)[-6:]))
        raise
    _leave_rank()


def _leave_rank() -> None:
    """End a spawned rank that finished its work with exit code 0, skipping interpreter finalisation.

    Gloo's worker threads can still hold tensors when CPython tears down; freeing them then aborts the process
    (SIGABRT, "terminate called without an active exception": pytorch/pytorch#190489 and PR #179291). A rank that
    wrote its results and destroyed its process group has nothing left to clean up, so it leaves as torchrun's
    workers effectively do. In the launcher's own process (a test calling the worker directly) it does nothing.
    """
    import multiprocessing
    if multiprocessing.parent_process() is None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _train_rank(rank: int, world: int, port: int, job: DDPJob, out: str, snapshot: str,
                kill: tuple[int, int] | None, probe: Any, timeout_s: float) -> None:
    """One rank of the DDP job (the body a torchrun worker runs)."""
    init_rank(rank, world, port, timeout_s)
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data.distributed import DistributedSampler

    result: dict[str, Any] = {"grads": [], "losses": []}
    if probe is not None:                       # AllReduce (sum) of rank r's probe arrays
        outs = []
        for arr in probe[rank]:
            t = torch.from_numpy(np.array(arr))
            dist.all_reduce(t)
            outs.append(t.numpy())
        result["probe"] = outs
    model = torch_lenet()
    model.load_state_dict({k: torch.from_numpy(v) for k, v in LeNet5Train(seed=job.seed).params.items()})
    opt = torch.optim.SGD(model.parameters(), lr=job.lr, momentum=job.momentum)
    step = 0
    if os.path.exists(snapshot):
        state = torch.load(snapshot, weights_only=True)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optim"])
        step = int(state["step"])
    ddp = DDP(model)                            # broadcasts rank 0's weights
    x, y = job_data(job)
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    sampler = DistributedSampler(range(len(x)), world, rank, shuffle=True, seed=job.seed, drop_last=True)
    spe = job.steps_per_epoch
    while step < job.steps:
        sampler.set_epoch(step // spe)
        idx = list(sampler)[(step % spe) * job.batch_per_rank:(step % spe + 1) * job.batch_per_rank]
        loss = F.cross_entropy(ddp(x[idx]), y[idx])
        if kill == (rank, step):
            os._exit(KILLED_EXIT)               # dies mid-step: the others wait in the gradient AllReduce
        opt.zero_grad()
        loss.backward()                         # DDP's bucketed AllReduce of the mean gradient
        mean_loss = loss.detach().clone()
        dist.all_reduce(mean_loss)
        result["losses"].append(float(mean_loss) / world)
        if rank == 0:
            result["grads"].append({n: p.grad.numpy().copy() for n, p in model.named_parameters()})
        opt.step()
        step += 1
        if rank == 0 and job.checkpoint_every and step % job.checkpoint_every == 0:
            tmp = snapshot + ".tmp"
            torch.save({"model": model.state_dict(), "optim": opt.state_dict(), "step": step}, tmp)
            os.replace(tmp, snapshot)           # atomic: a restart sees the old or the new snapshot, never half
    if rank == 0:
        result["params"] = {n: p.detach().numpy().copy() for n, p in model.named_parameters()}
        with open(out, "wb") as f:
            pickle.dump(result, f)
    dist.destroy_process_group()


def spawn_ranks(world: int, args: tuple, deadline_s: float, target: Any = None) -> None:
    """Start ``world`` ranks of ``target`` (default _train_worker) and wait; raise WorkerFailed (after stopping all)
    on an error. ``target(rank, world, port, *args)``; ``args[1]`` is rank 0's output path (errors land beside it)."""
    import torch.distributed as dist
    import torch.multiprocessing as mp
    store = dist.TCPStore(HOST, 0, world, is_master=True, wait_for_workers=False,
                          timeout=timedelta(seconds=deadline_s))
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=target or _train_worker, args=(r, world, store.port) + args, daemon=True)
             for r in range(world)]
    for p in procs:
        p.start()
    end = time.monotonic() + deadline_s
    try:
        while True:
            codes = [p.exitcode for p in procs]
            bad = [(r, c) for r, c in enumerate(codes) if c not in (None, 0)]
            if bad:
                err = error_file(args[1], bad[0][0])
                why = f": {err.read_text().strip()}" if err.exists() else ""
                raise WorkerFailed(f"rank {bad[0][0]} exited with code {bad[0][1]}{why}; every rank is stopped, as "
                                   "torchrun stops the group", fix="restart all ranks from the last snapshot")
            if all(c == 0 for c in codes):
                return
            if time.monotonic() > end:
                raise WorkerFailed(f"ranks {[r for r, c in enumerate(codes) if c is None]} did not finish in "
                                   f"{deadline_s:.0f} s", fix="look for a rank that skipped a collective")
            time.sleep(0.05)
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
            p.join(5)


def run_gloo(job: DDPJob, kill: tuple[int, int] | None = None, probe: Sequence[Sequence[np.ndarray]] | None = None,
             max_restarts: int = 1, timeout_s: float = 120.0, deadline_s: float = 240.0) -> TrainRecord:
    """Train ``job`` with torch.distributed gloo on 127.0.0.1; ``kill=(rank, step)`` kills that rank once mid-step.

    After a failure all ranks restart from rank 0's last snapshot (or from the start). ``probe``: per-rank lists of
    arrays to AllReduce (sum) before training; their results land in ``record.probe``.
    """
    if not available():
        raise HcclError("the real engine needs torch with torch.distributed (gloo), which is not installed",
                        fix='pip install -e ".[distributed]" (torch CPU), then run again')
    if kill is not None and not (0 <= kill[0] < job.world_size and 0 <= kill[1] < job.steps):
        raise HcclError(f"kill={kill}: there is no rank {kill[0]} in step {kill[1]} of a job of {job.world_size} "
                        f"ranks and {job.steps} steps", fix=f"kill=(rank, step) with rank < {job.world_size} and "
                        f"step < {job.steps}")
    if kill is not None and not job.checkpoint_every:
        job = replace(job, checkpoint_every=1)
    with tempfile.TemporaryDirectory(prefix="ascend_sim_gloo_") as tmp:
        out, snapshot = str(Path(tmp) / "rank0.pkl"), str(Path(tmp) / "snapshot.pt")
        failures: list[str] = []
        while True:
            for r in range(job.world_size):
                error_file(out, r).unlink(missing_ok=True)
            try:
                spawn_ranks(job.world_size, (job, out, snapshot, kill, probe, timeout_s), deadline_s)
                break
            except WorkerFailed as e:
                if len(failures) >= max_restarts:
                    raise
                # the kill happens once; the probe AllReduce runs again, its results live only in rank 0's output
                failures.append(str(e))
                kill = None
        with open(out, "rb") as f:
            result = pickle.load(f)
    return TrainRecord(result["grads"], result["losses"], result["params"], len(failures), result.get("probe"),
                       failures)
