"""Module 3, RESULTS.md section 8: the real engine (torch.distributed gloo) against the simulated cluster, and LeNet-5
DDP timed by the simulator.

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/bench_cluster_real.py

Needs the distributed extra (torch CPU) for the first table; the second runs without it.
"""
from __future__ import annotations

import time

import numpy as np

from ascend_sim.cluster import atlas_800t_a2
from ascend_sim.cluster.ddp_job import DDPJob, run_simulated
from ascend_sim.cluster.sim_timing import lenet_ddp_timed, resnet_ddp_timed


def _max_diff(a: dict, b: dict) -> float:
    return max(float(np.abs(a[k] - b[k]).max()) for k in b)


def real_engine() -> None:
    from ascend_sim.cluster import gloo
    if not gloo.available():
        print("torch is not installed: skipped the gloo comparison\n")
        return
    print("### gloo (spawned ranks on 127.0.0.1) against the simulated cluster, LeNet-5, fp32\n")
    print("| run | steps | max abs gradient difference (any step) | max abs final weight difference | wall time |")
    print("|---|---|---|---|---|")
    for name, job, kill in (("2 ranks", DDPJob(world_size=2, steps=4, images=256), None),
                            ("4 ranks, one epoch of 320 images", DDPJob(world_size=4, images=320, steps=5), None)):
        t = time.perf_counter()
        real = gloo.run_gloo(job, kill=kill)
        wall = time.perf_counter() - t
        sim = run_simulated(job)
        grads = max(_max_diff(g, s) for g, s in zip(real.grads, sim.grads))
        print(f"| {name} | {job.steps} | {grads:.1e} | {_max_diff(real.params, sim.params):.1e} | {wall:.1f} s |")
    job = DDPJob(world_size=2, steps=4, images=256)
    t = time.perf_counter()
    killed = gloo.run_gloo(job, kill=(1, 2))
    wall = time.perf_counter() - t
    clean = gloo.run_gloo(job)
    same = all(np.array_equal(killed.params[k], clean.params[k]) for k in clean.params)
    print(f"| 2 ranks, rank 1 killed in step 2, restarted from the step-2 snapshot ({killed.restarts} restart) | "
          f"{job.steps} | | bit-identical to the uninterrupted gloo run: {same} | {wall:.1f} s |\n")


def timed(name: str = "LeNet-5", run=lenet_ddp_timed, batch: int = 32, steps: int = 3) -> None:
    print(f"### {name} DDP on one A2 server, compute from the simulated kernels (batch {batch} per NPU)\n")
    print("| NPUs | forward | backward [EST 2x fwd] | exposed AllReduce | step | images/s | scaling | "
          "max abs DDP - global-batch gradient | replicas identical |")
    print("|---|---|---|---|---|---|---|---|---|")
    base = None
    for world in (1, 2, 4, 8):
        rep = run(DDPJob(world_size=world, batch_per_rank=batch, steps=steps, images=world * batch * steps),
                  cluster=atlas_800t_a2(1, npus_per_server=world))
        base = base or rep.images_per_s
        print(f"| {world} | {rep.forward_us:.1f} us | {rep.compute_us:.1f} us | {rep.exposed_comm_us[-1]:.1f} us | "
              f"{rep.step_us[-1]:.1f} us | {rep.images_per_s:,.0f} | {rep.images_per_s / base:.2f}x | "
              f"{rep.max_grad_error:.1e} | {rep.replicas_identical} |")
    print()


if __name__ == "__main__":
    real_engine()
    timed()
    timed("SmallResNet (8 channels, convs at the simulated conv2 kernel's cost per MAC)", resnet_ddp_timed, 16, 1)
