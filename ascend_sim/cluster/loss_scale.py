"""Dynamic loss scaling (动态损失缩放) with torch's ``GradScaler`` rules.

fp16 has 5 exponent bits: gradients below 2^-24 (6e-8) flush to zero and values above 65504 overflow to inf.
Multiplying the loss by a scale S moves the backward pass's values up by S, out of the underflow range;
the fp32 optimizer divides them by S again ("unscale") before the step. The scale adapts
(``torch.amp.GradScaler``, Micikevicius et al. 2018, "Mixed Precision Training"):
- a step whose gradients hold an inf or NaN is skipped (the weights do not change) and S *= backoff (0.5);
- after ``growth_interval`` clean steps in a row, S *= growth (2).
Under data parallelism the check runs after the gradient AllReduce, so an overflow on one rank reaches every rank
and all of them skip the same step.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from ascend_sim.cluster.errors import PipelineError


class DynamicLossScaler:
    """torch.amp.GradScaler's scale, backoff and growth (defaults: 2^16, 2.0, 0.5, 2000)."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000):
        if not (init_scale > 0 and growth_factor > 1 and 0 < backoff_factor < 1 and growth_interval >= 1):
            raise PipelineError(f"scaler settings init_scale={init_scale}, growth_factor={growth_factor}, "
                                f"backoff_factor={backoff_factor}, growth_interval={growth_interval} cannot adapt",
                                fix="init_scale > 0, growth_factor > 1, 0 < backoff_factor < 1, growth_interval >= 1")
        self.scale = float(init_scale)
        self.growth_factor, self.backoff_factor, self.growth_interval = growth_factor, backoff_factor, growth_interval
        self.clean_steps = 0
        self.history: list[tuple[float, bool]] = []      # (scale used, step skipped) per step

    def unscale(self, grads: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], bool]:
        """fp32 gradients divided by the scale, and whether any of them is inf or NaN."""
        inv = np.float32(1.0 / self.scale)
        out = {k: g.astype(np.float32) * inv for k, g in grads.items()}
        return out, not all(np.isfinite(g).all() for g in out.values())

    def update(self, found_inf: bool) -> None:
        """After a step: back off on an overflow, grow after ``growth_interval`` clean steps."""
        self.history.append((self.scale, found_inf))
        if found_inf:
            self.scale *= self.backoff_factor
            self.clean_steps = 0
        else:
            self.clean_steps += 1
            if self.clean_steps == self.growth_interval:
                self.scale *= self.growth_factor
                self.clean_steps = 0

    @property
    def skipped(self) -> int:
        return sum(s for _, s in self.history)


def has_overflow(grads: Iterable[np.ndarray]) -> bool:
    """True when any gradient holds an inf or a NaN."""
    return not all(np.isfinite(np.asarray(g, np.float32)).all() for g in grads)
