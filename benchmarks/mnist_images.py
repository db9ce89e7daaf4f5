"""The MNIST images a benchmark scores: the 10,000 test images (IDX files) or the 1,000 shipped held-out ones."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from ascend_sim.models.datasets import load_mnist_idx, load_mnist_subset

ROOT = Path(__file__).resolve().parents[1]


def default_mnist_dir() -> str:
    """``$ASCEND_SIM_MNIST_DIR`` (empty when unset: pass ``--mnist-dir``)."""
    return os.environ.get("ASCEND_SIM_MNIST_DIR", "")


def scored_images(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray]:
    """(images, labels): the held-out set with ``args.heldout``, else the t10k set in ``args.mnist_dir``;
    the first ``args.limit`` of them when a limit is given."""
    images, labels = load_mnist_subset("heldout") if args.heldout else load_mnist_idx(args.mnist_dir, "t10k")
    if args.limit:
        images, labels = images[:args.limit], labels[:args.limit]
    return images, labels
