"""The tiny MNIST ViT end to end through the simulated kernels (issue 17, item 4): accuracy and time per layer.

Accuracy on the real 10,000-image MNIST test set (or the shipped held-out images) of the float32 numpy
reference and of the 910B fp16 run through the kernels (cube matmuls, flash attention, vector LayerNorm,
GELU and adds), the agreement of the two, simulated us per image and the per-node time table. Nothing is
chosen by the test-set score: the weights are the last epoch of scripts/train_vit.py.

    python benchmarks/bench_vit.py [--limit N] [--heldout] [--profile 910B-fp16] [--batch 1000] [--mnist-dir DIR]

Prints markdown (the ViT subsection of benchmarks/RESULTS.md section 12).
"""
from __future__ import annotations

import argparse
import time


from ascend_sim.migrate.runtime import Runtime, load_model
from ascend_sim.migrate.vit_ref import load_vit_weights, vit_predict_ref
from ascend_sim.models.datasets import normalize
from mnist_images import default_mnist_dir, scored_images


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="first N images only (a quick check)")
    ap.add_argument("--heldout", action="store_true", help="the shipped 1,000 held-out images instead of the 10k")
    ap.add_argument("--profile", default="910B-fp16")
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--mnist-dir", default=default_mnist_dir())
    args = ap.parse_args()
    images, labels = scored_images(args)
    what = "held-out" if args.heldout else "MNIST test"
    ref = vit_predict_ref(load_vit_weights(), normalize(images))
    print(f"ViT, {len(images):,} {what} images, batch {args.batch}\n")
    print("| run | accuracy | simulated us/image | weight bytes | host s |")
    print("|---|---|---|---|---|")
    print(f"| fp32 numpy reference (not simulated) | {float((ref == labels).mean()):.2%} | - | - | - |")
    t0 = time.perf_counter()
    rt = Runtime(load_model("vit"), args.profile)
    rep = rt.evaluate(images, labels, batch=args.batch)
    print(f"| {rep.profile} through the kernels | {rep.accuracy:.2%} | {rep.us_per_image:.3f} | "
          f"{rep.weight_bytes:,} | {time.perf_counter() - t0:.0f} |")
    agree = float((rep.predictions == ref).mean())
    print(f"\nkernel path and fp32 reference predict the same digit on {agree:.2%} of the images\n")
    table = rep.table
    per = max(table.images, 1)
    print("| node | op | simulated us/image | share |")
    print("|---|---|---|---|")
    for row in table.rows:
        print(f"| {row.name} | {row.op} | {row.us / per:.3f} | {table.share(row):.1%} |")
    print(f"| total | | {table.total_us / per:.3f} | 100% |")
    by_op: dict[str, float] = {}
    for row in table.rows:
        by_op[row.op] = by_op.get(row.op, 0.0) + row.us / per
    print("\nby operator: " + ", ".join(f"{op} {us:.3f} us ({us / (table.total_us / per):.0%})"
                                        for op, us in sorted(by_op.items(), key=lambda kv: -kv[1])))


if __name__ == "__main__":
    main()
