"""LeNet-5 through the simulated kernels classifies MNIST: >= 96 % on the bundled held-out split and,
when the IDX files are available, on the 10,000-image MNIST test set.

The 10k test is marked ``slow`` (about 2-3 minutes on 2 cores); it runs in the
default test command and can be left out with ``-m "not slow"``.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from ascend_sim.models.datasets import MNIST_DIR_ENV, bundled_file, load_mnist_idx, load_mnist_subset
from ascend_sim.models.lenet import LeNetRuntime

ROOT = Path(__file__).resolve().parents[2]
MIN_ACCURACY = 0.96

needs_weights = pytest.mark.skipif(not bundled_file("lenet5_weights.npz").is_file(),
                                   reason="ascend_sim/models/data/lenet5_weights.npz is missing (scripts/train_lenet.py)")


def mnist_dir() -> Path | None:
    """``$ASCEND_SIM_MNIST_DIR``, if it is set and holds the t10k images (data paths from the environment only)."""
    if not os.environ.get(MNIST_DIR_ENV):
        return None
    d = Path(os.environ[MNIST_DIR_ENV])
    found = any((d / f"t10k-images-idx3-ubyte{ext}").is_file() for ext in ("", ".gz"))
    return d if found else None


@needs_weights
def test_heldout_accuracy_fp16():
    from ascend_sim.models.lenet_reference import lenet_predict_ref, load_lenet_weights
    images, labels = load_mnist_subset("heldout")
    rt = LeNetRuntime(dtype="float16", keep_results=False)
    report = rt.evaluate(images, labels, progress=False)
    assert report.total == 1000 and report.accuracy >= MIN_ACCURACY, str(report)
    agree = report.predictions == lenet_predict_ref(load_lenet_weights(), images, np.float16)
    assert agree.mean() >= 0.995                      # the simulated fp16 network is the numpy fp16 network


@needs_weights
def test_heldout_subset_accuracy_fp32():
    images, labels = load_mnist_subset("heldout")
    report = LeNetRuntime(dtype="float32", keep_results=False).evaluate(images[:200], labels[:200], progress=False)
    assert report.accuracy >= MIN_ACCURACY, str(report)


@pytest.mark.slow
@needs_weights
def test_mnist_test_set_accuracy_fp16():
    d = mnist_dir()
    if d is None:
        pytest.skip(f"no MNIST IDX test set: set {MNIST_DIR_ENV} to a folder with t10k-images-idx3-ubyte.gz and "
                    "t10k-labels-idx1-ubyte.gz")
    images, labels = load_mnist_idx(d, "t10k")
    report = LeNetRuntime(dtype="float16", keep_results=False).evaluate(images, labels, progress=False)
    assert report.total == 10000 and report.accuracy >= MIN_ACCURACY, str(report)
