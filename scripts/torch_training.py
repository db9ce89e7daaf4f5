"""What the torch training scripts (train_resnet.py, train_vit.py) share: the deterministic torch setup, one epoch
over the augmented training images, the epoch's line and the command line."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import train_lenet as tl  # noqa: E402  (sets one BLAS thread before numpy loads)
import numpy as np  # noqa: E402
import torch  # noqa: E402

from ascend_sim.models.datasets import normalize, write_npz  # noqa: E402


def deterministic_torch(seed: int) -> None:
    """Seed torch, make its algorithms deterministic and give it one thread (a rerun gives the same weights)."""
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)


def train_epoch(images: np.ndarray, labels: np.ndarray, rng: np.random.Generator, batch: int,
                step: Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]) -> tuple[float, int]:
    """One pass over the images in an order drawn from ``rng``, each batch augmented by train_lenet's warp.

    ``step(x, y)`` trains on one batch and returns its (mean loss, logits). Returns the summed loss and the
    number of correct predictions.
    """
    order = rng.permutation(len(images))
    loss_sum, correct = 0.0, 0
    for i in range(0, len(images), batch):
        rows = order[i:i + batch]
        x = torch.from_numpy(normalize(tl.augment(images[rows], rng)))
        y = torch.from_numpy(labels[rows].astype(np.int64))
        loss, logits = step(x, y)
        loss_sum += float(loss.detach()) * len(rows)
        correct += int((logits.argmax(dim=1) == y).sum())
    return loss_sum, correct


def descend(opt: torch.optim.Optimizer, loss: torch.Tensor) -> None:
    """One optimizer step on ``loss``'s gradients."""
    opt.zero_grad()
    loss.backward()
    opt.step()


def epoch_line(epoch: int, epochs: int, loss_sum: float, correct: int, n: int) -> str:
    """``epoch  E/N  loss L  train(aug) P%`` for the 0-based ``epoch`` over ``n`` images."""
    return f"epoch {epoch + 1:3d}/{epochs}  loss {loss_sum / n:.4f}  train(aug) {100 * correct / n:6.2f}%"


def main(doc: str, train: Callable[[int], dict[str, np.ndarray]], epochs: int, out: Path) -> None:
    """The command line of a training script: ``[--epochs N] [--out PATH]``; train, then write the npz."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=epochs)
    ap.add_argument("--out", default=str(out))
    args = ap.parse_args()
    params = train(args.epochs)
    write_npz(args.out, params)
    print(f"wrote {args.out} ({Path(args.out).stat().st_size:,} bytes)")
