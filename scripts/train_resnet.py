"""Train the small MNIST ResNet with numpy only, deterministically; write ascend_sim/models/data/resnet_mnist.npz.

The network (ascend_sim/migrate/resnet.py): a 3x3 stem (1 -> 16) + BN + ReLU, a basic block at 16 channels,
a basic block 16 -> 32 with stride 2 and the 1x1 stride-2 downsample, global average pooling, a linear
layer. BN uses batch statistics in training and running statistics (momentum 0.1) for inference. The
building blocks of train_lenet.py are reused: its seeded affine augmentation, im2col convolutions, col2im,
AdamW with cosine decay, and its one-BLAS-thread determinism. Training data: the bundled 4,000 training
images only; the held-out accuracy printed per epoch is for watching (the last epoch is kept).

    python scripts/train_resnet.py [--epochs N]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import train_lenet as tl  # noqa: E402  (sets one BLAS thread before numpy loads)
import numpy as np  # noqa: E402

from ascend_sim.migrate.resnet import BN_EPS, CONVS, resnet_predict_ref  # noqa: E402
from ascend_sim.models.datasets import load_mnist_subset, normalize, write_npz  # noqa: E402

SEED = 0
EPOCHS = 20
MOMENTUM = 0.1
OUT = Path(__file__).resolve().parents[1] / "ascend_sim" / "models" / "data" / "resnet_mnist.npz"


def init_params(rng: np.random.Generator) -> dict[str, np.ndarray]:
    p = {}
    for name, (o, c, k, _stride) in CONVS.items():
        bound = np.sqrt(6.0 / (c * k * k))
        p[f"{name}.w"] = rng.uniform(-bound, bound, (o, c, k, k)).astype(np.float32)
        p[f"{name}.gamma"], p[f"{name}.beta"] = np.ones(o, np.float32), np.zeros(o, np.float32)
        p[f"{name}.mean"], p[f"{name}.var"] = np.zeros(o, np.float32), np.ones(o, np.float32)
    bound = np.sqrt(6.0 / 32)
    p["fc.w"], p["fc.b"] = rng.uniform(-bound, bound, (10, 32)).astype(np.float32), np.zeros(10, np.float32)
    return p


def conv(x, w, stride):
    """Stride-1 convolution (pad k // 2), then every stride-th output pixel; returns y and the backward cache."""
    k = w.shape[2]
    y, cols = tl.conv_forward(x, w, np.zeros(w.shape[0], np.float32), pad=k // 2)
    return y[:, :, ::stride, ::stride], (cols, x.shape, y.shape, stride, k)


def conv_back(dy, cache, w):
    cols, x_shape, y_shape, stride, k = cache
    full = np.zeros(y_shape, dy.dtype)
    full[:, :, ::stride, ::stride] = dy
    dcols, dw, _ = tl.conv_backward(full, cols, w)
    return tl.col2im(dcols, x_shape, k, k, pad=k // 2), dw


def bn(x, p, name, stats):
    mu, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    stats[name] = (mu, var)
    inv = 1.0 / np.sqrt(var + BN_EPS)
    xhat = (x - mu[None, :, None, None]) * inv[None, :, None, None]
    return p[f"{name}.gamma"][None, :, None, None] * xhat + p[f"{name}.beta"][None, :, None, None], (xhat, inv)


def bn_back(dy, cache, p, name, g):
    xhat, inv = cache
    m = dy.shape[0] * dy.shape[2] * dy.shape[3]
    g[f"{name}.gamma"], g[f"{name}.beta"] = (dy * xhat).sum(axis=(0, 2, 3)), dy.sum(axis=(0, 2, 3))
    dxh = dy * p[f"{name}.gamma"][None, :, None, None]
    s1, s2 = dxh.sum(axis=(0, 2, 3)), (dxh * xhat).sum(axis=(0, 2, 3))
    return (m * dxh - s1[None, :, None, None] - xhat * s2[None, :, None, None]) * inv[None, :, None, None] / m


def cbn(x, p, name, stats, caches):
    y, c1 = conv(x, p[f"{name}.w"], CONVS[name][3])
    z, c2 = bn(y, p, name, stats)
    caches[name] = (c1, c2)
    return z


def cbn_back(dz, p, name, caches, g):
    c1, c2 = caches[name]
    dy = bn_back(dz, c2, p, name, g)
    dx, g[f"{name}.w"] = conv_back(dy, c1, p[f"{name}.w"])
    return dx


def loss_and_grads(p, x, labels):
    stats, caches = {}, {}
    a0 = np.maximum(cbn(x, p, "stem", stats, caches), 0)
    t1 = np.maximum(cbn(a0, p, "b1.conv1", stats, caches), 0)
    s1 = cbn(t1, p, "b1.conv2", stats, caches) + a0
    a1 = np.maximum(s1, 0)
    t2 = np.maximum(cbn(a1, p, "b2.conv1", stats, caches), 0)
    s2 = cbn(t2, p, "b2.conv2", stats, caches) + cbn(a1, p, "b2.down", stats, caches)
    a2 = np.maximum(s2, 0)
    f = a2.mean(axis=(2, 3))
    logits = f @ p["fc.w"].T + p["fc.b"]
    sh = logits - logits.max(axis=1, keepdims=True)
    logp = sh - np.log(np.exp(sh).sum(axis=1, keepdims=True))
    rows = np.arange(len(x))
    loss = float(-logp[rows, labels].mean())
    dl = np.exp(logp)
    dl[rows, labels] -= 1
    dl /= np.float32(len(x))
    g = {"fc.w": dl.T @ f, "fc.b": dl.sum(axis=0)}
    da2 = np.broadcast_to((dl @ p["fc.w"])[:, :, None, None] / (a2.shape[2] * a2.shape[3]), a2.shape)
    ds2 = da2 * (s2 > 0)
    da1 = cbn_back(ds2, p, "b2.down", caches, g)
    dt2 = cbn_back(ds2, p, "b2.conv2", caches, g) * (t2 > 0)
    da1 = da1 + cbn_back(dt2, p, "b2.conv1", caches, g)
    ds1 = da1 * (s1 > 0)
    dt1 = cbn_back(ds1, p, "b1.conv2", caches, g) * (t1 > 0)
    da0 = ds1 + cbn_back(dt1, p, "b1.conv1", caches, g)
    cbn_back(da0 * (a0 > 0), p, "stem", caches, g)
    return loss, int((logits.argmax(axis=1) == labels).sum()), g, stats


def train(epochs: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(SEED)
    images, labels = tl.train_split_in_row_order()
    held_x, held_y = load_mnist_subset("heldout")
    p = init_params(rng)
    trainable = {k: v for k, v in p.items() if not k.endswith((".mean", ".var"))}
    adam = tl.Adam(trainable)
    steps = epochs * -(-len(images) // tl.BATCH)
    start = time.perf_counter()
    for epoch in range(epochs):
        order = rng.permutation(len(images))
        loss_sum, correct = 0.0, 0
        for i in range(0, len(images), tl.BATCH):
            batch = order[i:i + tl.BATCH]
            x = normalize(tl.augment(images[batch], rng))
            loss, hits, grads, stats = loss_and_grads(p, x, labels[batch].astype(np.int64))
            adam.step(trainable, grads, tl.cosine_lr(adam.t, steps))
            for name, (mu, var) in stats.items():
                p[f"{name}.mean"] = ((1 - MOMENTUM) * p[f"{name}.mean"] + MOMENTUM * mu).astype(np.float32)
                p[f"{name}.var"] = ((1 - MOMENTUM) * p[f"{name}.var"] + MOMENTUM * var).astype(np.float32)
            loss_sum, correct = loss_sum + loss * len(batch), correct + hits
        held = 100 * float((resnet_predict_ref(p, normalize(held_x)) == held_y).mean())
        print(f"epoch {epoch + 1:3d}/{epochs}  loss {loss_sum / len(images):.4f}  train(aug) "
              f"{100 * correct / len(images):6.2f}%  held-out {held:6.2f}%  {time.perf_counter() - start:6.1f}s",
              flush=True)
    return p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    params = train(args.epochs)
    write_npz(args.out, {k: v.astype(np.float32) for k, v in params.items()})
    print(f"wrote {args.out} ({Path(args.out).stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
