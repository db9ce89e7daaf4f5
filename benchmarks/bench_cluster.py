"""Module 3 figures for RESULTS.md: gradient compression on MNIST (bytes, link time, accuracy) and scaling.

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/bench_cluster.py
"""
from __future__ import annotations

import numpy as np

from ascend_sim.cluster import (DistributedDataParallel, HcclComm, PowerSGDState, TinyMLP, TopKState, Trainer,
                                atlas_800t_a2, fp16_compress_hook, powersgd_hook, topk_hook)
from ascend_sim.cluster.compress import bytes_sent, compressed_bytes, compressed_time_us
from ascend_sim.cluster.scaling import report
from ascend_sim.cluster.tp_scaling import table
from ascend_sim.models.datasets import load_mnist_subset, normalize


def features(images: np.ndarray) -> np.ndarray:
    """14 x 14 average-pooled MNIST pixels: 196 features."""
    return normalize(images).reshape(len(images), 14, 2, 14, 2).mean((2, 4)).reshape(len(images), 196)


def compression() -> None:
    (xi, yi), (xh, yh) = load_mnist_subset("train"), load_mnist_subset("heldout")
    x, xt = features(xi), features(xh)
    print("### Compression hooks: TinyMLP 196-32-10 on the bundled MNIST subset, 4 x 910B (one A2 server)\n")
    print("4,000 training images, 2 epochs of 31 steps, batch 32 per rank, SGD lr 0.05 momentum 0.9; "
          "accuracy on the 1,000 held-out images\n")
    print("| hook | held-out accuracy | bytes sent (all ranks) | fp32 bytes / these |\n|---|---|---|---|")
    base = None
    for name, hook, state in (("none (fp32 AllReduce)", None, None), ("fp16", fp16_compress_hook, None),
                              ("top-k 1%, error feedback", topk_hook, TopKState(0.01)),
                              ("top-k 1%, no error feedback", topk_hook, TopKState(0.01, error_feedback=False)),
                              ("PowerSGD rank 2, error feedback", powersgd_hook, PowerSGDState(2)),
                              ("PowerSGD rank 2, no error feedback", powersgd_hook,
                               PowerSGDState(2, error_feedback=False))):
        comm = HcclComm(atlas_800t_a2(npus_per_server=4))
        ddp = DistributedDataParallel([TinyMLP((196, 32, 10), seed=0) for _ in range(4)], comm)
        if hook is not None:
            ddp.register_comm_hook(state, hook)
        comm.reset()
        tr = Trainer(ddp, x, yi, 32, lr=0.05)
        for _ in range(2 * tr.steps_per_epoch):
            tr.train_step()
        sent = bytes_sent(comm)
        base = base or sent
        print(f"| {name} | {tr.accuracy(xt, yh):.3f} | {sent:,} | {base / sent:.1f} |")
    print("\n### Link time of one bucket per step (no data; the collectives HCCL picks), 2 x A2 = 16 x 910B\n")
    print("| gradients | fp32 AllReduce | fp16 | top-k 1% | PowerSGD r=4 | bytes/rank fp32 -> PowerSGD |")
    print("|---|---|---|---|---|---|")
    comm = HcclComm(atlas_800t_a2(servers=2))
    for label, shapes in (("TinyMLP 196-32-10", [(32, 196), (32,), (10, 32), (10,)]),
                          ("one 4096 x 4096 linear layer", [(4096, 4096), (4096,)]),
                          ("ResNet-50 fc 1000 x 2048", [(1000, 2048), (1000,)])):
        t = [compressed_time_us(comm, shapes, m, 0.01, 4) for m in ("fp32", "fp16", "topk", "powersgd")]
        b = (compressed_bytes(shapes, "fp32"), compressed_bytes(shapes, "powersgd", rank=4))
        print(f"| {label} | " + " | ".join(f"{v:,.1f} us" for v in t) + f" | {b[0]:,} -> {b[1]:,} |")


if __name__ == "__main__":
    compression()
    print("\n## Scaling (python -m ascend_sim.cluster.scaling)\n")
    report()
    print("\n### Tensor parallelism: one Megatron MLP (h = 4096, 8192 tokens, fp16), efficiency 0.5, 910B\n")
    print(table())
