"""Train the tiny MNIST vision transformer with torch on the CPU, deterministically; write vit_mnist.npz.

The network is ascend_sim/migrate/vit_ref.py's (7 x 7 patches, d_model 64, 2 heads, 2 pre-LN encoder layers,
tanh GELU, mean pooling, linear head). Determinism: fixed seeds, one torch thread,
``torch.use_deterministic_algorithms(True)``, and the batch order and the augmentation (train_lenet.py's
seeded rotation/scale/shift) drawn from one numpy generator. Training data: the bundled 4,000 training
images only; the held-out accuracy printed per epoch (through the float32 numpy reference, so the shipped
weights are the ones checked) is for watching: the last epoch is kept. The weights ship in float16.

    python scripts/train_vit.py [--epochs N]

Needs torch (the ``distributed`` extra's CPU build); the package itself does not.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import train_lenet as tl  # noqa: E402  (sets one BLAS thread before numpy loads)
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch_training as tt  # noqa: E402

from ascend_sim.migrate import vit_ref as V  # noqa: E402
from ascend_sim.models.datasets import load_mnist_subset, normalize  # noqa: E402

SEED = 0
EPOCHS = 200
BATCH = 64
LR = 2e-3
WEIGHT_DECAY = 0.05
WARMUP_EPOCHS = 3
OUT = Path(__file__).resolve().parents[1] / "ascend_sim" / "models" / "data" / V.WEIGHTS_FILE


def init_params(gen: torch.Generator) -> dict[str, torch.Tensor]:
    """Truncated-normal(0.02) matrices and position embedding, zero biases, unit LayerNorm scales."""
    p = {}
    for name, shape in V.param_shapes().items():
        if name.endswith(".w") and len(shape) == 2 or name == "pos":
            t = torch.empty(shape)
            with torch.no_grad():
                t.normal_(0.0, 0.02, generator=gen).clamp_(-0.04, 0.04)
        elif ".ln" in f".{name}" and name.endswith(".w"):
            t = torch.ones(shape)
        else:
            t = torch.zeros(shape)
        p[name] = t.requires_grad_(True)
    return p


def forward(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """The same network as vit_ref.vit_logits_ref, in torch."""
    n, d, hd = len(x), V.D_MODEL, V.D_MODEL // V.HEADS
    g = 28 // V.PATCH
    tok = x.reshape(n, g, V.PATCH, g, V.PATCH).permute(0, 1, 3, 2, 4).reshape(n, V.TOKENS, -1)
    h = tok @ p["patch.w"].T + p["patch.b"] + p["pos"]
    for i in range(V.LAYERS):
        q = f"l{i}."
        y = F.layer_norm(h, (d,), p[q + "ln1.w"], p[q + "ln1.b"], V.LN_EPS)
        qkv = y @ p[q + "qkv.w"].T + p[q + "qkv.b"]
        qs, ks, vs = (qkv[..., j * d:(j + 1) * d].reshape(n, V.TOKENS, V.HEADS, hd).transpose(1, 2) for j in range(3))
        a = torch.softmax(qs @ ks.transpose(-1, -2) / hd ** 0.5, dim=-1) @ vs
        h = h + a.transpose(1, 2).reshape(n, V.TOKENS, d) @ p[q + "proj.w"].T + p[q + "proj.b"]
        y = F.layer_norm(h, (d,), p[q + "ln2.w"], p[q + "ln2.b"], V.LN_EPS)
        y = F.gelu(y @ p[q + "fc1.w"].T + p[q + "fc1.b"], approximate="tanh")
        h = h + y @ p[q + "fc2.w"].T + p[q + "fc2.b"]
    h = F.layer_norm(h, (d,), p["ln.w"], p["ln.b"], V.LN_EPS).mean(dim=1)
    return h @ p["head.w"].T + p["head.b"]


def shipped(p: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
    return {k: v.detach().numpy().astype(np.float16) for k, v in p.items()}


def train(epochs: int) -> dict[str, np.ndarray]:
    tt.deterministic_torch(SEED)
    rng = np.random.default_rng(SEED)
    images, labels = tl.train_split_in_row_order()
    held_x, held_y = load_mnist_subset("heldout")
    p = init_params(torch.Generator().manual_seed(SEED))
    decay = [v for k, v in p.items() if k.endswith(".w") and v.ndim == 2]
    rest = [v for k, v in p.items() if not (k.endswith(".w") and v.ndim == 2)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY}, {"params": rest, "weight_decay": 0.0}],
                            lr=LR)
    per_epoch = -(-len(images) // BATCH)
    total, warm = epochs * per_epoch, WARMUP_EPOCHS * per_epoch
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else 0.5 * (1 + np.cos(np.pi * (s - warm) / max(1, total - warm))))

    def step(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits = forward(p, x)
        loss = F.cross_entropy(logits, y)
        tt.descend(opt, loss)
        sched.step()
        return loss, logits

    start = time.perf_counter()
    for epoch in range(epochs):
        loss_sum, correct = tt.train_epoch(images, labels, rng, BATCH, step)
        held = 100 * float((V.vit_predict_ref(shipped(p), normalize(held_x)) == held_y).mean())
        print(f"{tt.epoch_line(epoch, epochs, loss_sum, correct, len(images))}  held-out {held:6.2f}%  "
              f"{time.perf_counter() - start:6.1f}s", flush=True)
    return shipped(p)


if __name__ == "__main__":
    tt.main(__doc__, train, EPOCHS, OUT)
