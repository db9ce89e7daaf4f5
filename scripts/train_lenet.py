"""Train LeNet-5 with numpy only, deterministically, and write ascend_sim/models/data/lenet5_weights.npz.

Trains on the bundled 4,000-image training split only (``load_mnist_subset("train")``,
taken in csv row order, the order the shipped weights were trained in; the npz stores
it shuffled and stratified),
with seeded random affine augmentation (rotation, scale, shift), AdamW and a
cosine learning-rate decay. Everything random comes from one
``numpy.random.default_rng(SEED)``, the batch order included, and BLAS runs on
one thread, so a rerun on the same machine gives bit-identical weights. The
held-out accuracy printed each epoch is for watching only: the weights kept are
those after the last epoch (no early stopping on held-out or test images).

Usage::

    python scripts/train_lenet.py                                   # ~2 min on 2 cores
    python scripts/train_lenet.py --eval-10k "$ASCEND_SIM_MNIST_DIR"   # also score the MNIST test set
"""

from __future__ import annotations

import os

# One BLAS thread: the reduction order, and so the weights, cannot depend on threading.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import hashlib  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ascend_sim.models.datasets import bundled_file, load_mnist_idx, load_mnist_subset, normalize, write_npz  # noqa: E402
from ascend_sim.models.lenet_reference import LENET_PARAM_SHAPES, im2col, lenet_predict_ref  # noqa: E402

SEED = 0
EPOCHS = 60
BATCH = 32
LR = 2e-3
WEIGHT_DECAY = 1e-2
BETAS = (0.9, 0.999)
EPS = 1e-8
MAX_ROTATION_DEG = 12.0
MAX_SCALE = 0.10
MAX_SHIFT = 2.5
OUT = Path(__file__).resolve().parents[1] / "ascend_sim" / "models" / "data" / "lenet5_weights.npz"

Params = dict[str, np.ndarray]


def init_params(rng: np.random.Generator) -> Params:
    """He-uniform weights, zero biases, float32."""
    params = {}
    for name, shape in LENET_PARAM_SHAPES.items():
        if name.endswith(".b"):
            params[name] = np.zeros(shape, np.float32)
        else:
            bound = np.sqrt(6.0 / np.prod(shape[1:]))
            params[name] = rng.uniform(-bound, bound, shape).astype(np.float32)
    return params


def augment(images: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random rotation, scale and shift of uint8 images [B, 28, 28] (bilinear, zero fill)."""
    b = len(images)
    angle = np.deg2rad(rng.uniform(-MAX_ROTATION_DEG, MAX_ROTATION_DEG, (b, 1, 1)))
    scale = rng.uniform(1 - MAX_SCALE, 1 + MAX_SCALE, (b, 1, 1))
    shift = rng.uniform(-MAX_SHIFT, MAX_SHIFT, (2, b, 1, 1))
    centre = 13.5
    grid_y, grid_x = np.mgrid[0:28, 0:28] - centre
    py, px = grid_y - shift[0], grid_x - shift[1]
    src_y = (np.cos(angle) * py + np.sin(angle) * px) / scale + centre
    src_x = (np.cos(angle) * px - np.sin(angle) * py) / scale + centre
    return bilinear_sample(images, src_y, src_x)


def bilinear_sample(images: np.ndarray, src_y: np.ndarray, src_x: np.ndarray) -> np.ndarray:
    """Sample images [B, 28, 28] at float coordinates [B, 28, 28]; outside counts as 0."""
    padded = np.pad(images.astype(np.float64), ((0, 0), (1, 1), (1, 1)))
    y0, x0 = np.floor(src_y), np.floor(src_x)
    fy, fx = src_y - y0, src_x - x0
    batch = np.arange(len(images))[:, None, None]

    def at(y: np.ndarray, x: np.ndarray) -> np.ndarray:
        return padded[batch, np.clip(y, -1, 28).astype(np.int64) + 1, np.clip(x, -1, 28).astype(np.int64) + 1]

    top = at(y0, x0) * (1 - fx) + at(y0, x0 + 1) * fx
    bottom = at(y0 + 1, x0) * (1 - fx) + at(y0 + 1, x0 + 1) * fx
    return np.rint(np.clip(top * (1 - fy) + bottom * fy, 0, 255)).astype(np.uint8)


def conv_forward(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> tuple[np.ndarray, np.ndarray]:
    """Convolution as im2col @ W^T; returns the output [N, O, OH, OW] and the columns."""
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    cols = im2col(x, kh, kw, pad)
    y = cols @ w.reshape(o, -1).T + b
    return y.reshape(n, h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1, o).transpose(0, 3, 1, 2), cols


def conv_backward(
    dy: np.ndarray, cols: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients of conv_forward: (dcols [N*OH*OW, C*kh*kw], dw, db)."""
    o = w.shape[0]
    dy_rows = dy.transpose(0, 2, 3, 1).reshape(-1, o)
    dw = (dy_rows.T @ cols).reshape(w.shape)
    return dy_rows @ w.reshape(o, -1), dw, dy_rows.sum(axis=0)


def col2im(dcols: np.ndarray, x_shape: tuple[int, ...], kh: int, kw: int, pad: int) -> np.ndarray:
    """Adjoint of im2col (stride 1): sum the column gradients back into [N, C, H, W]."""
    n, c, h, w = x_shape
    oh, ow = h + 2 * pad - kh + 1, w + 2 * pad - kw + 1
    patches = dcols.reshape(n, oh, ow, c, kh, kw).transpose(0, 3, 4, 5, 1, 2)  # [N, C, kh, kw, OH, OW]
    dxp = np.zeros((n, c, h + 2 * pad, w + 2 * pad), dcols.dtype)
    for i in range(kh):
        for j in range(kw):
            dxp[:, :, i : i + oh, j : j + ow] += patches[:, :, i, j]
    return dxp[:, :, pad : pad + h, pad : pad + w]


def pool_forward(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2x2 stride-2 max pooling; returns the output and the argmax within each window."""
    n, c, h, w = x.shape
    windows = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h // 2, w // 2, 4)
    idx = windows.argmax(axis=-1)
    return np.take_along_axis(windows, idx[..., None], axis=-1)[..., 0], idx


def pool_backward(dy: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Route each pooled gradient to the window element that was the max."""
    n, c, oh, ow = dy.shape
    dwin = np.zeros((n, c, oh, ow, 4), dy.dtype)
    np.put_along_axis(dwin, idx[..., None], dy[..., None], axis=-1)
    return dwin.reshape(n, c, oh, ow, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, 2 * oh, 2 * ow)


def loss_and_grads(params: Params, x: np.ndarray, labels: np.ndarray) -> tuple[float, int, Params]:
    """Forward and backward pass: (mean cross-entropy, correct count, gradients)."""
    p = params
    z1, cols1 = conv_forward(x, p["conv1.w"], p["conv1.b"], pad=2)
    h1, idx1 = pool_forward(np.maximum(z1, 0))
    z2, cols2 = conv_forward(h1, p["conv2.w"], p["conv2.b"], pad=0)
    h2, idx2 = pool_forward(np.maximum(z2, 0))
    f0 = h2.reshape(len(x), -1)
    f1 = np.maximum(f0 @ p["fc1.w"].T + p["fc1.b"], 0)
    f2 = np.maximum(f1 @ p["fc2.w"].T + p["fc2.b"], 0)
    logits = f2 @ p["fc3.w"].T + p["fc3.b"]

    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    rows = np.arange(len(x))
    loss = float(-log_probs[rows, labels].mean())
    dlogits = np.exp(log_probs)
    dlogits[rows, labels] -= 1
    dlogits /= np.float32(len(x))

    g: Params = {"fc3.w": dlogits.T @ f2, "fc3.b": dlogits.sum(axis=0)}
    df2 = (dlogits @ p["fc3.w"]) * (f2 > 0)
    g["fc2.w"], g["fc2.b"] = df2.T @ f1, df2.sum(axis=0)
    df1 = (df2 @ p["fc2.w"]) * (f1 > 0)
    g["fc1.w"], g["fc1.b"] = df1.T @ f0, df1.sum(axis=0)
    dz2 = pool_backward((df1 @ p["fc1.w"]).reshape(h2.shape), idx2) * (z2 > 0)
    dcols2, g["conv2.w"], g["conv2.b"] = conv_backward(dz2, cols2, p["conv2.w"])
    dz1 = pool_backward(col2im(dcols2, h1.shape, 5, 5, pad=0), idx1) * (z1 > 0)
    _, g["conv1.w"], g["conv1.b"] = conv_backward(dz1, cols1, p["conv1.w"])
    return loss, int((logits.argmax(axis=1) == labels).sum()), g


class Adam:
    """Adam with decoupled weight decay on the weights (not the biases)."""

    def __init__(self, params: Params) -> None:
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def step(self, params: Params, grads: Params, lr: float) -> None:
        """Update ``params`` in place."""
        self.t += 1
        b1, b2 = BETAS
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        for k, g in grads.items():
            self.m[k] = b1 * self.m[k] + (1 - b1) * g
            self.v[k] = b2 * self.v[k] + (1 - b2) * g * g
            update = (self.m[k] / c1) / (np.sqrt(self.v[k] / c2) + EPS)
            if k.endswith(".w"):
                update = update + WEIGHT_DECAY * params[k]
            params[k] -= np.float32(lr) * update.astype(np.float32)


def cosine_lr(step: int, total: int) -> float:
    """Learning rate decaying from LR to 0 along a half cosine."""
    return LR * 0.5 * (1 + np.cos(np.pi * step / total))


def accuracy(params: Params, images: np.ndarray, labels: np.ndarray, dtype: type = np.float32) -> float:
    """Percent correct of the numpy reference forward."""
    return 100.0 * float((lenet_predict_ref(params, images, dtype) == labels).mean())


def train_split_in_row_order() -> tuple[np.ndarray, np.ndarray]:
    """The training split in csv row order (the batch order, and so the weights, depend on it)."""
    images, labels = load_mnist_subset("train")
    with bundled_file("mnist_5k.npz").open("rb") as f, np.load(f) as npz:
        order = np.argsort(npz["train_rows"], kind="stable")
    return images[order], labels[order]


def train(epochs: int) -> Params:
    """Run the whole deterministic training; print one line per epoch."""
    rng = np.random.default_rng(SEED)
    images, labels = train_split_in_row_order()
    held_images, held_labels = load_mnist_subset("heldout")
    params = init_params(rng)
    adam = Adam(params)
    steps_per_epoch = -(-len(images) // BATCH)
    start = time.perf_counter()
    for epoch in range(epochs):
        order = rng.permutation(len(images))
        loss_sum, correct = 0.0, 0
        for i in range(0, len(images), BATCH):
            batch = order[i : i + BATCH]
            x = normalize(augment(images[batch], rng))
            loss, hits, grads = loss_and_grads(params, x, labels[batch].astype(np.int64))
            adam.step(params, grads, cosine_lr(adam.t, epochs * steps_per_epoch))
            loss_sum, correct = loss_sum + loss * len(batch), correct + hits
        print(f"epoch {epoch + 1:3d}/{epochs}  loss {loss_sum / len(images):.4f}  "
              f"train(augmented) {100 * correct / len(images):6.2f}%  "
              f"held-out {accuracy(params, held_images, held_labels):6.2f}%  "
              f"{time.perf_counter() - start:6.1f}s", flush=True)
    return params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--out", type=Path, default=OUT, help=f"weights file (default: {OUT})")
    parser.add_argument("--eval-10k", type=Path, metavar="DIR", help="MNIST IDX directory: also score the 10k test set")
    args = parser.parse_args()

    start = time.perf_counter()
    params = train(args.epochs)
    print(f"training time {time.perf_counter() - start:.1f}s")
    write_npz(args.out, params)
    print(f"wrote {args.out}  sha256 {hashlib.sha256(args.out.read_bytes()).hexdigest()}")

    held_images, held_labels = load_mnist_subset("heldout")
    sets = [("held-out (1,000)", held_images, held_labels)]
    if args.eval_10k is not None:
        sets.append(("MNIST test (10,000)", *load_mnist_idx(args.eval_10k, "t10k")))
    for name, images, labels in sets:
        for dtype in (np.float32, np.float16):
            print(f"{name:20s} {np.dtype(dtype).name:8s} accuracy {accuracy(params, images, labels, dtype):6.2f}%")


if __name__ == "__main__":
    main()
