"""Device memory per card under data parallelism and ``shard`` splits: what halves and what does not.

Per card, in bytes [EST: no framework workspace, no fragmentation, no HCCL buffers]:
- weights, gradients and optimizer state (fp32; momentum SGD keeps one slot): a parameter cut t ways by
  ``shard`` costs 1/t of it on each card; a replicated one costs all of it, however many cards there are;
- activations saved for backward (fp16 under mixed precision): per sample, so they follow the per-card
  batch. A conv cut by output channel keeps 1/t of its own output, but the BatchNorm after it needs all
  channels (AllGather), so its BN and ReLU outputs stay whole.
"""
from __future__ import annotations

from dataclasses import dataclass

from ascend_sim.cluster.models_zoo import Net


@dataclass(frozen=True)
class Memory:
    """Bytes per card by kind."""

    weights: float
    gradients: float
    optimizer: float
    activations: float

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations


def per_card(net: Net, batch_per_card: int, split: dict[str, int] | None = None, param_bytes: int = 4,
             optimizer_slots: int = 1, act_bytes: int = 2) -> Memory:
    """Memory of one card; ``split`` maps a layer name prefix (a conv or 'fc') to how many ways it is cut."""
    split = split or {}

    def ways(name: str) -> int:
        return next((t for prefix, t in split.items() if name == prefix or name.startswith(prefix + ".")), 1)
    params = sum(n / ways(name.removesuffix(".weight")) for (name, _), n in zip(net.params, net.sizes))
    acts = sum(n / ways(name) + 2 * n for name, n in net.conv_outputs) * batch_per_card * act_bytes
    return Memory(params * param_bytes, params * param_bytes, params * param_bytes * optimizer_slots, acts)


def source_split(net: Net, ways: int = 4) -> dict[str, int]:
    """The source's example 2: conv1 and conv2 of every residual unit cut by output channel (fc is cut by batch only)."""
    return {name: ways for name, _ in net.conv_outputs if name.endswith((".conv1", ".conv2"))}
