"""Train the small MNIST ResNet deterministically (torch on the CPU, one thread); write resnet_mnist.npz.

The network is ascend_sim/migrate/resnet.py's ``BLOCKS`` (stem 3x3 1 -> 16, basic blocks 16, 16 -> 32 /2,
32 -> 64 /2 with 1x1 stride-2 downsamples, global average pooling, linear 64 -> 10). BN uses batch statistics
in training and running statistics (momentum 0.1) for inference; the npz stores the unfolded parameters
(``name.w``, ``.gamma``, ``.beta``, ``.mean``, ``.var``, ``fc.w``, ``fc.b``) that the simulator folds.

Recipe: the 4,000 shipped *training* images only, each batch augmented by train_lenet.py's seeded affine
warp (rotation, scale, shift); SGD with Nesterov momentum, weight decay, label smoothing, a one-cycle
learning rate (linear warm-up, cosine decay). Determinism: every random draw comes from seeded generators
(numpy for data and initial weights, torch for nothing else), ``torch.use_deterministic_algorithms(True)``
and one thread, so a rerun gives the same weights. The held-out accuracy printed (the shipped 1,000
held-out images) is the validation figure the recipe was chosen by; the weights kept are the last epoch's.
torch is a training-only dependency (``pip install .[train]``), never imported by the library.

    python scripts/train_resnet.py [--epochs N] [--out PATH]
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
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402
import torch_training as tt  # noqa: E402

from ascend_sim.migrate.resnet import (BLOCKS, BN_EPS, CLASSES, CONVS, FEATURES, has_downsample,  # noqa: E402
                                       resnet_predict_ref)
from ascend_sim.models.datasets import load_mnist_subset, normalize  # noqa: E402

SEED = 0
EPOCHS = 40
BATCH = 64
PEAK_LR = 0.1
WARMUP_EPOCHS = 3
MOMENTUM = 0.9
WEIGHT_DECAY = 5e-4
LABEL_SMOOTHING = 0.1
BN_MOMENTUM = 0.1
OUT = Path(__file__).resolve().parents[1] / "ascend_sim" / "models" / "data" / "resnet_mnist.npz"


class ResNet(nn.Module):
    """The training form of migrate/resnet.py's network: conv (no bias) + BN everywhere, built from CONVS."""

    def __init__(self, rng: np.random.Generator) -> None:
        super().__init__()
        self.convs, self.bns = nn.ModuleDict(), nn.ModuleDict()
        for name, (o, c, k, stride) in CONVS.items():
            key = name.replace(".", "_")
            conv = nn.Conv2d(c, o, k, stride=stride, padding=k // 2, bias=False)
            with torch.no_grad():                                      # He-normal init from the numpy rng
                conv.weight.copy_(torch.from_numpy(rng.normal(0, np.sqrt(2.0 / (c * k * k)), (o, c, k, k))))
            self.convs[key], self.bns[key] = conv, nn.BatchNorm2d(o, eps=BN_EPS, momentum=BN_MOMENTUM)
        self.fc = nn.Linear(FEATURES, CLASSES)
        with torch.no_grad():
            bound = 1 / np.sqrt(FEATURES)
            self.fc.weight.copy_(torch.from_numpy(rng.uniform(-bound, bound, (CLASSES, FEATURES))))
            self.fc.bias.zero_()

    def cbn(self, name: str, x: torch.Tensor) -> torch.Tensor:
        key = name.replace(".", "_")
        return self.bns[key](self.convs[key](x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = F.relu(self.cbn("stem", x))
        for name, cin, cout, stride in BLOCKS:
            short = self.cbn(f"{name}.down", a) if has_downsample(cin, cout, stride) else a
            a = F.relu(self.cbn(f"{name}.conv2", F.relu(self.cbn(f"{name}.conv1", a))) + short)
        return self.fc(a.mean(dim=(2, 3)))

    def export(self) -> dict[str, np.ndarray]:
        """The npz dictionary (unfolded BN statistics, float32)."""
        p = {}
        for name in CONVS:
            key = name.replace(".", "_")
            bn = self.bns[key]
            for field, t in (("w", self.convs[key].weight), ("gamma", bn.weight), ("beta", bn.bias),
                             ("mean", bn.running_mean), ("var", bn.running_var)):
                p[f"{name}.{field}"] = t.detach().numpy().astype(np.float32)
        p["fc.w"], p["fc.b"] = (t.detach().numpy().astype(np.float32) for t in (self.fc.weight, self.fc.bias))
        return p


def one_cycle_lr(step: int, total: int, warmup: int) -> float:
    """Linear warm-up to PEAK_LR over ``warmup`` steps, then a half-cosine decay to 0."""
    if step < warmup:
        return PEAK_LR * (step + 1) / warmup
    return PEAK_LR * 0.5 * (1 + np.cos(np.pi * (step - warmup) / max(1, total - warmup)))


def train(epochs: int) -> dict[str, np.ndarray]:
    tt.deterministic_torch(SEED)
    rng = np.random.default_rng(SEED)
    images, labels = tl.train_split_in_row_order()
    held_x, held_y = load_mnist_subset("heldout")
    model = ResNet(rng).float()
    decay = [p for n, p in model.named_parameters() if n.endswith("weight") and p.ndim > 1]
    rest = [p for n, p in model.named_parameters() if not (n.endswith("weight") and p.ndim > 1)]
    opt = torch.optim.SGD([{"params": decay, "weight_decay": WEIGHT_DECAY}, {"params": rest, "weight_decay": 0}],
                          lr=PEAK_LR, momentum=MOMENTUM, nesterov=True)
    per_epoch = -(-len(images) // BATCH)
    total, steps = epochs * per_epoch, 0

    def step(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        nonlocal steps
        for group in opt.param_groups:
            group["lr"] = one_cycle_lr(steps, total, WARMUP_EPOCHS * per_epoch)
        logits = model(x)
        loss = F.cross_entropy(logits, y, label_smoothing=LABEL_SMOOTHING)
        tt.descend(opt, loss)
        steps += 1
        return loss, logits

    start = time.perf_counter()
    for epoch in range(epochs):
        model.train()
        loss_sum, correct = tt.train_epoch(images, labels, rng, BATCH, step)
        line = tt.epoch_line(epoch, epochs, loss_sum, correct, len(images))
        if (epoch + 1) % 5 == 0 or epoch + 1 == epochs:
            held = 100 * float((resnet_predict_ref(model.export(), normalize(held_x)) == held_y).mean())
            line += f"  held-out {held:6.2f}%"
        print(f"{line}  {time.perf_counter() - start:6.1f}s", flush=True)
    return model.export()


if __name__ == "__main__":
    tt.main(__doc__, train, EPOCHS, OUT)
