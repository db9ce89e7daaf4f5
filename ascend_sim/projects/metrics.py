"""Host-side quality measures of the projects: connected components, detection precision/recall, Dice, Otsu.

These run on the host in numpy/scipy (connected-component labelling is sequential bookkeeping that real
deployments also leave to the CPU); the simulated kernels produce the masks they measure.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Detection:
    """Precision and recall of detected components against ground-truth defects."""

    components: int             # detected components kept (area >= min_area)
    true_components: int        # of those, how many touch a defect (within ``tolerance`` px)
    defects: int                # ground-truth defects
    found: int                  # defects touched by at least one kept component

    @property
    def precision(self) -> float:
        return self.true_components / self.components if self.components else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.defects if self.defects else 1.0


def components(mask: np.ndarray, min_area: int = 1) -> tuple[np.ndarray, list[tuple[int, int, int, int, int]]]:
    """8-connected components of a binary mask with at least ``min_area`` pixels: (label image with the small
    ones removed, [(top, left, bottom, right, area) per kept component])."""
    from scipy.ndimage import find_objects, label
    lab, n = label(np.asarray(mask) > 0, structure=np.ones((3, 3), bool))
    areas = np.bincount(lab.ravel(), minlength=n + 1)
    keep = areas >= min_area
    keep[0] = False
    lab = np.where(keep[lab], lab, 0)
    boxes = [(s[0].start, s[1].start, s[0].stop, s[1].stop, int(areas[k + 1]))
             for k, s in enumerate(find_objects(lab)) if s is not None]
    return lab, boxes


def detection(mask: np.ndarray, truth: np.ndarray, min_area: int = 10, tolerance: int = 2) -> Detection:
    """Match the components of ``mask`` to the labelled defects of ``truth`` (0 = background).

    A component is true if it touches a defect grown by ``tolerance`` px (a Sobel edge lies on both sides of
    a defect's border); a defect is found if a kept component touches it grown the same way.
    """
    from scipy.ndimage import binary_dilation, grey_dilation
    lab, boxes = components(mask, min_area)
    grown = grey_dilation(truth, size=(2 * tolerance + 1,) * 2) if tolerance else truth
    ids = np.unique(lab)
    ids = ids[ids > 0]
    true = sum(bool((grown[lab == k] > 0).any()) for k in ids)
    hit = binary_dilation(lab > 0, iterations=tolerance) if tolerance else lab > 0
    found = np.unique(truth[hit])
    return Detection(len(ids), true, int(truth.max()), int((found > 0).sum()))


def dice(a: np.ndarray, b: np.ndarray) -> float:
    """Dice coefficient 2|A and B| / (|A| + |B|) of two binary masks (1.0 when both are empty)."""
    a, b = np.asarray(a) > 0, np.asarray(b) > 0
    total = a.sum() + b.sum()
    return float(2 * (a & b).sum() / total) if total else 1.0


def otsu(values: np.ndarray, bins: int = 256) -> float:
    """Otsu's threshold: the histogram split that maximises the between-class variance."""
    v = np.asarray(values, np.float64).ravel()
    hist, edges = np.histogram(v, bins=bins)
    centres = (edges[:-1] + edges[1:]) / 2
    w0 = np.cumsum(hist)
    w1 = w0[-1] - w0
    m = np.cumsum(hist * centres)
    with np.errstate(divide="ignore", invalid="ignore"):
        mu0 = m / w0
        mu1 = (m[-1] - m) / w1
        between = w0 * w1 * (mu0 - mu1) ** 2
    return float(centres[int(np.nanargmax(between[:-1]))])


__all__ = ["Detection", "components", "detection", "dice", "otsu"]
