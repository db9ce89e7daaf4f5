"""Goodput (有效训练时间占比) against the checkpoint interval: Young's and Daly's formulas, checked by simulation.

With failures arriving at random (exponential, mean time between failures M), a checkpoint costing C seconds
every tau seconds of work, and a restart costing R, Daly (2006, "A higher order estimate of the optimum
checkpoint interval for restart dumps", eq. 13) gives the expected wall time of T_s seconds of work:

    T_w = M e^(R/M) (e^((tau + C)/M) - 1) T_s / tau,      goodput = T_s / T_w.

Its optimum is near Young's tau = sqrt(2 C M) (1974) and closer still to Daly's
tau = sqrt(2 C M) (1 + sqrt(C / 2M) / 3 + C / 18M) - C (for C < 2M).
``simulate_goodput`` plays failures from a seeded generator to check the formula.
"""
from __future__ import annotations

import math

import numpy as np

from ascend_sim.cluster.errors import HcclError


def _check(**values: float) -> None:
    for name, v in values.items():
        if not v > 0:
            raise HcclError(f"{name}={v!r}: times in the goodput model are positive seconds",
                            fix=f"pass {name} as a positive number of seconds")


def young_interval(C: float, M: float) -> float:
    """Young's optimum work time between checkpoints: sqrt(2 C M)."""
    _check(C=C, M=M)
    return math.sqrt(2 * C * M)


def daly_interval(C: float, M: float) -> float:
    """Daly's higher-order optimum (for C < 2M; M otherwise)."""
    _check(C=C, M=M)
    if C >= 2 * M:
        return M
    return math.sqrt(2 * C * M) * (1 + math.sqrt(C / (2 * M)) / 3 + C / (18 * M)) - C


def goodput(tau: float | np.ndarray, C: float, R: float, M: float) -> float | np.ndarray:
    """Expected useful fraction of wall time for work interval(s) ``tau`` (a float or an array, seconds)."""
    _check(C=C, M=M)
    tau = np.asarray(tau, dtype=float)
    g = tau / (M * math.exp(R / M) * np.expm1((tau + C) / M))
    return float(g) if g.ndim == 0 else g


def simulate_goodput(tau: float, C: float, R: float, M: float, segments: int = 20000, seed: int = 0) -> float:
    """Goodput of ``segments`` checkpoint intervals with exponential failures (restarts can fail too)."""
    _check(tau=tau, C=C, M=M)
    rng = np.random.default_rng(seed)
    wall = 0.0
    for _ in range(segments):
        while True:
            f = rng.exponential(M)
            if f >= tau + C:
                wall += tau + C
                break
            wall += f
            while True:                                  # restart, which a failure can interrupt
                f = rng.exponential(M)
                if f >= R:
                    wall += R
                    break
                wall += f
    return segments * tau / wall
