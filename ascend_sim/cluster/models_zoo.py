"""Parameter shapes and FLOPs of the networks the scaling study uses (no weights: shapes only).

- ``resnet50``: torchvision / MindSpore ResNet-50 v1.5 (bottlenecks [3, 4, 6, 3], stride on the 3x3 conv):
  25,557,032 parameters; 4.09 GMACs per 224 x 224 image forward (the figure torchvision publishes).
- ``source_resnet``: the network of the source's example 2 as written: basic residual units (its ``ResNetBlock``)
  of two 3x3 convs, [3, 4, 6, 4] units of 64/128/256/512 channels (its layer4 has 1 + 3), a 7x7 stem and a 1000-way fc.
  Its ``shard`` calls cut conv1 and conv2 of every unit by output channel, and the fc by batch.
A shape list is in ``parameters()`` order (conv weight, then its BN's gamma and beta), as DDP buckets it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Net:
    """A network for the scaling model: parameter shapes (with names) and training FLOPs per sample."""

    name: str
    params: tuple[tuple[str, tuple[int, ...]], ...]
    forward_macs: float                     # per sample
    conv_outputs: tuple[tuple[str, int], ...] = ()   # (conv name, output elements per sample)

    @property
    def activations(self) -> int:
        """Elements saved for backward per sample [EST]: each conv's output, its BN's and its ReLU's."""
        return 3 * sum(n for _, n in self.conv_outputs)

    @property
    def sizes(self) -> list[int]:
        """Elements of each parameter, in order."""
        return [math.prod(s) for _, s in self.params]

    @property
    def num_params(self) -> int:
        return sum(self.sizes)

    @property
    def train_flops(self) -> float:
        """Forward + backward: 3 x forward, 2 FLOPs per MAC."""
        return 3 * 2 * self.forward_macs


class _Builder:
    def __init__(self):
        self.params: list[tuple[str, tuple[int, ...]]] = []
        self.macs = 0.0
        self.outs: list[tuple[str, int]] = []

    def conv(self, name: str, cin: int, cout: int, k: int, out_hw: int, bn: bool = True) -> None:
        self.params.append((f"{name}.weight", (cout, cin, k, k)))
        self.macs += cout * cin * k * k * out_hw * out_hw
        self.outs.append((name, cout * out_hw * out_hw))
        if bn:
            self.params += [(f"{name}.bn.gamma", (cout,)), (f"{name}.bn.beta", (cout,))]

    def fc(self, cin: int, cout: int) -> None:
        self.params += [("fc.weight", (cout, cin)), ("fc.bias", (cout,))]
        self.macs += cin * cout


def _residual_stages(b: _Builder, blocks: tuple[int, ...], unit) -> int:
    """Add ResNet's four stages after the 7x7 stem; `unit(b, name, cin, width, hw, stride)` adds one
    residual unit and returns its output channels. Returns the channels of the last stage."""
    hw, cin = 56, 64
    b.conv("stem", 3, 64, 7, 112)
    for li, (n, width) in enumerate(zip(blocks, (64, 128, 256, 512))):
        for i in range(n):
            stride = 2 if i == 0 and li > 0 else 1
            cin = unit(b, f"layer{li + 1}.{i}", cin, width, hw, stride)
            hw //= stride
    return cin


def _bottleneck(b: _Builder, name: str, cin: int, width: int, hw: int, stride: int) -> int:
    out_hw = hw // stride
    b.conv(f"{name}.conv1", cin, width, 1, hw)
    b.conv(f"{name}.conv2", width, width, 3, out_hw)
    b.conv(f"{name}.conv3", width, 4 * width, 1, out_hw)
    if cin != 4 * width or stride != 1:
        b.conv(f"{name}.downsample", cin, 4 * width, 1, out_hw)
    return 4 * width


def _basic(b: _Builder, name: str, cin: int, width: int, hw: int, stride: int) -> int:
    out_hw = hw // stride
    b.conv(f"{name}.conv1", cin, width, 3, out_hw)
    b.conv(f"{name}.conv2", width, width, 3, out_hw)
    if stride != 1 or cin != width:
        b.conv(f"{name}.downsample", cin, width, 1, out_hw)
    return width


def resnet50() -> Net:
    b = _Builder()
    b.fc(_residual_stages(b, (3, 4, 6, 3), _bottleneck), 1000)
    return Net("ResNet-50 v1.5", tuple(b.params), b.macs, tuple(b.outs))


def source_resnet() -> Net:
    b = _Builder()
    b.fc(_residual_stages(b, (3, 4, 6, 4), _basic), 1000)
    return Net("source example 2 'ResNet50' (basic residual units)", tuple(b.params), b.macs, tuple(b.outs))
