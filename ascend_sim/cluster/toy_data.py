"""Seeded toy classification data for the parallelism lessons: Gaussian clusters, one or several per class."""
from __future__ import annotations

import numpy as np

F32 = np.float32


def blobs(n: int, seed: int = 0, classes: int = 10, dim: int = 16, clusters: int | None = None,
          spread: float = 1.0, center_scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points around ``clusters`` fixed centres (default one per class); cluster c has class c % classes.

    The centres depend only on (clusters, dim, center_scale), so train and test sets drawn with other seeds match.
    """
    clusters = clusters or classes
    centers = np.random.default_rng([clusters, dim]).standard_normal((clusters, dim)).astype(F32) * F32(center_scale)
    rng = np.random.default_rng(seed)
    c = rng.integers(0, clusters, n)
    return (centers[c] + F32(spread) * rng.standard_normal((n, dim)).astype(F32)).astype(F32), c % classes


def moe_blobs(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """16 clusters in 8 dimensions, 4 classes: each class is 4 separate clusters, work for several experts."""
    return blobs(n, seed, classes=4, dim=8, clusters=16, spread=0.5, center_scale=2.0)
