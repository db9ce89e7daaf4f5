"""LeNet-5 speed, side by side in one process (issue 6, Module 1).

(a) numpy forward pass (``lenet_reference``, float16 and float32) of 1,000 MNIST images
(b) simulated float16 inference of the same 1,000 images (``LeNetRuntime``: every operator a
    kernel launch on the simulated 910B, timing and trace on); target <= 30 s
(c) with ``--full``: the simulated float16 evaluation of the 10,000-image MNIST test set;
    target <= 5 min. ``--fp32`` adds the simulated float32 runs of (b) and (c).

    python benchmarks/bench_lenet.py [--full] [--fp32] [--mnist-dir DIR]

Images: the bundled 1,000 held-out digits for (a)/(b); the IDX test set from ``--mnist-dir``,
or ``$ASCEND_SIM_MNIST_DIR`` for (c). Prints one table (host seconds,
images per second, accuracy, simulated time per image).
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from ascend_sim.models.datasets import MNIST_DIR_ENV, load_mnist_idx, load_mnist_subset
from ascend_sim.models.lenet import LeNetRuntime
from ascend_sim.models.lenet_reference import lenet_predict_ref, load_lenet_weights

ROOT = Path(__file__).resolve().parents[1]
TARGET_1K_S, TARGET_10K_S = 30.0, 300.0


def row(what: str, n: int, seconds: float, accuracy: float, sim_us: float | None, target: float | None) -> tuple:
    ok = "" if target is None else ("yes" if seconds <= target else "NO")
    sim = "-" if sim_us is None else f"{sim_us / n:.3f}"
    return (what, f"{n:,}", f"{seconds:.2f}", f"{n / seconds:,.0f}", f"{accuracy:.2%}", sim,
            "-" if target is None else f"<= {target:.0f} s {ok}")


def numpy_run(params, images, labels, dtype) -> tuple:
    t0 = time.perf_counter()
    pred = lenet_predict_ref(params, images, dtype)
    return time.perf_counter() - t0, float((pred == labels).mean())


def sim_run(images, labels, dtype: str):
    rt = LeNetRuntime(dtype=dtype, keep_results=False)
    report = rt.evaluate(images, labels, progress=False)
    return report.wall_seconds, report.accuracy, report.table


def mnist_dir(arg: str | None) -> Path:
    """``--mnist-dir``, else ``$ASCEND_SIM_MNIST_DIR``: data paths from an argument or the environment only."""
    d = arg or os.environ.get(MNIST_DIR_ENV)
    if not d:
        raise SystemExit(f"--full needs the MNIST IDX test set: pass --mnist-dir DIR or set {MNIST_DIR_ENV}")
    return Path(d)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="also evaluate the 10,000-image MNIST test set")
    ap.add_argument("--fp32", action="store_true", help="also run the simulated float32 network")
    ap.add_argument("--mnist-dir", default=None, help="folder with the MNIST IDX test files")
    args = ap.parse_args(argv)

    params = load_lenet_weights()
    images, labels = load_mnist_subset("heldout")
    rows, tables = [], []
    for dt in (np.float32, np.float16):
        s, acc = numpy_run(params, images, labels, dt)
        rows.append(row(f"numpy reference {np.dtype(dt).name}", len(images), s, acc, None, None))
    s, acc, table = sim_run(images, labels, "float16")
    rows.append(row("simulated float16", len(images), s, acc, table.total_us, TARGET_1K_S))
    tables.append(table)
    if args.fp32:
        s, acc, table = sim_run(images, labels, "float32")
        rows.append(row("simulated float32", len(images), s, acc, table.total_us, None))
        tables.append(table)
    if args.full:
        big, big_labels = load_mnist_idx(mnist_dir(args.mnist_dir), "t10k")
        s, acc = numpy_run(params, big, big_labels, np.float16)
        rows.append(row("numpy reference float16 (10k)", len(big), s, acc, None, None))
        s, acc, table = sim_run(big, big_labels, "float16")
        rows.append(row("simulated float16 (10k)", len(big), s, acc, table.total_us, TARGET_10K_S))
        tables.append(table)
        if args.fp32:
            s, acc, table = sim_run(big, big_labels, "float32")
            rows.append(row("simulated float32 (10k)", len(big), s, acc, table.total_us, None))

    header = ("run", "images", "host s", "images/s", "accuracy", "sim us/image", "target")
    print(f"LeNet-5 on {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {sys.version.split()[0]}, numpy {np.__version__}\n")
    print(markdown([header] + rows))
    for t in tables:
        print(f"\n{t}")
    return 0


def markdown(lines: list[tuple]) -> str:
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(lines[0]))]
    fmt = lambda line: "| " + " | ".join(str(c).ljust(w) for c, w in zip(line, widths)) + " |"  # noqa: E731
    return "\n".join([fmt(lines[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] +
                     [fmt(line) for line in lines[1:]])


if __name__ == "__main__":
    sys.exit(main())
