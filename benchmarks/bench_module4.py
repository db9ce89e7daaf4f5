"""Module 4 (issue 17): LeNet-5 or the small ResNet on one runtime, cloud (910B) and edge (310B) profiles.

Accuracy on the real 10,000-image MNIST test set, simulated time per image and weight bytes per profile.
The int8 profile is calibrated on the first 300 images of the shipped *training* subset (min-max and IFMR);
nothing is chosen by the test-set score (the calibration set, methods and group size are fixed here).

    python benchmarks/bench_module4.py [--model lenet5|resnet] [--limit N] [--mnist-dir DIR]

Prints a markdown table (the one in benchmarks/RESULTS.md, section 12).
"""
from __future__ import annotations

import argparse
import time

from ascend_sim.migrate.runtime import Runtime, load_model
from ascend_sim.migrate.w4a16 import edge_layers
from ascend_sim.models.datasets import load_mnist_subset
from mnist_images import default_mnist_dir, scored_images

RUNS = {"lenet5": [("910B-fp32", None), ("910B-fp16", None), ("910B-w4a16", None), ("310B-fp16", None),
                   ("310B-int8", "minmax"), ("310B-int8", "ifmr")],
        # no float32 convolution on the cube here: the ResNet's fp32 row is its numpy reference (not simulated)
        "resnet": [("910B-fp16", None), ("910B-w4a16", None), ("910B-w4a16", "edges"), ("310B-int8", "ifmr")]}
#: W4A16 variant "edges": the stem and the head stay fp16, the int4 group scales use the searched MSE clip
W4A16_VARIANTS = {"edges": "stem + head fp16, MSE clip"}
CALIBRATION_IMAGES = 300


def antiquant_note(rt: Runtime) -> str:
    """Simulated time of the on-device AntiQuant (kernels/m4/antiquant.py) of each int4 layer, once per load."""
    from ascend_sim.kernels.m4.antiquant import HALF_PER_BLOCK, antiquant
    done = {name: antiquant(w.packed, w.scales, chip=rt.profile.chip)[1].us
            for name, w in rt.int4.items() if w.scales.shape[1] % HALF_PER_BLOCK == 0}
    left = sorted(set(rt.int4) - set(done))
    return (f"AntiQuant on the vector unit (int4b_t -> half Cast, Mul by the group scale), simulated: "
            f"{sum(done.values()):.2f} us for {len(done)} layers"
            + (f" ({', '.join(left)}: O not a multiple of {HALF_PER_BLOCK}, not run)" if left else "") + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="first N test images only (a quick check)")
    ap.add_argument("--model", choices=sorted(RUNS), default="lenet5")
    ap.add_argument("--heldout", action="store_true", help="the shipped 1,000 held-out images instead of the 10k")
    ap.add_argument("--only", default=None, help="comma-separated rows to run, e.g. 910B-fp16,310B-int8:ifmr")
    ap.add_argument("--mnist-dir", default=default_mnist_dir())
    args = ap.parse_args()
    images, labels = scored_images(args)
    calib = load_mnist_subset("train")[0][:CALIBRATION_IMAGES]
    model = load_model(args.model)
    print(f"{args.model}, {len(images):,} {'held-out' if args.heldout else 'MNIST test'} images; int8 calibrated on {CALIBRATION_IMAGES} training "
          "images\n")
    print("| profile | chip | activations calibration | accuracy | simulated us/image | weight bytes | host s |")
    print("|---|---|---|---|---|---|---|")
    note = ""
    if args.model == "resnet":
        from ascend_sim.migrate.resnet import load_resnet_weights, resnet_predict_ref
        from ascend_sim.models.datasets import normalize
        acc = float((resnet_predict_ref(load_resnet_weights(), normalize(images)) == labels).mean())
        print(f"| fp32 numpy reference (not simulated) | - | - | {acc:.2%} | - | - | - |")
    runs = RUNS[args.model]
    if args.only:
        wanted = set(args.only.split(","))
        runs = [(p, m) for p, m in runs if p in wanted or f"{p}:{m}" in wanted]
    for profile, method in runs:
        t0 = time.perf_counter()
        if method in W4A16_VARIANTS:
            rt = Runtime(model, profile, int4_keep=edge_layers(model.graph), int4_clip="mse")
            label, method_col = f"{profile} ({W4A16_VARIANTS[method]})", "-"
        else:
            rt = Runtime(model, profile, calibration=calib if method else None, act_method=method or "ifmr")
            label, method_col = profile, method or "-"
        rep = rt.evaluate(images, labels)
        print(f"| {label} | {rt.profile.chip} | {method_col} | {rep.accuracy:.2%} | {rep.us_per_image:.3f} | "
              f"{rep.weight_bytes:,} | {time.perf_counter() - t0:.0f} |", flush=True)
        if rt.int4:
            codes = sum(w.packed.nbytes for w in rt.int4.values())
            scales = sum(w.scales.nbytes for w in rt.int4.values())
            fp16 = sum(2 * n.params["w"].size for n in model.graph.nodes if n.name in rt.int4)
            note += (f"W4A16 weights: packed int4 codes {codes:,} B + fp16 group scales {scales:,} B vs fp16 "
                    f"weights {fp16:,} B: codes {codes / fp16 - 1:+.1%}, codes + scales "
                    f"{(codes + scales) / fp16 - 1:+.1%} (K padded to the group of 32; {label}: the int4 layers only)\n")
            note += antiquant_note(rt)
    print(f"\n{note}", end="")


if __name__ == "__main__":
    main()
