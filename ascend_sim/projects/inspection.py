"""Project 1, industrial inspection (工业质检): the pipeline, its figures and the demo a lesson calls.

Requirements: 1920x1080 camera frames (NV12 from DVPP), flag scratches and spots on a textured part.
Operators (simulated): AIPP-like crop + CSC (YUV -> gray) + normalisation, Sobel |Gx| + |Gy|, threshold;
naive and fused versions (:mod:`ascend_sim.projects.inspection_kernels`). Host: connected defects
(:func:`ascend_sim.projects.metrics.components`) and their precision/recall against the synthetic ground truth.
The threshold is calibrated on a defect-free (golden) part: a quantile of its gradient magnitude.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ascend_sim.analysis.profile import profile
from ascend_sim.projects import images
from ascend_sim.projects.inspection_kernels import InspectTiling, reference, run_fused, run_naive
from ascend_sim.projects.metrics import Detection, components, detection

SOURCE_MS = (17.0, 9.0)     # the seed documents' Sobel on 1080p frames: naive 17 ms -> optimised 9 ms
GOLDEN_QUANTILE = 0.9999    # threshold = this quantile of the golden part's magnitude
MIN_AREA = 10               # components smaller than this (px) are noise


@dataclass
class Timing:
    """Simulated time of one frame and what the profile says about it."""

    name: str
    us: float
    gm_bytes: int
    bound: str
    passes: list[tuple[str, float, int, str]] = field(default_factory=list)   # (pass, us, GM bytes, headline)

    def line(self) -> str:
        return f"{self.name:<6} {self.us:10.2f} us  GM {self.gm_bytes / 1e6:6.2f} MB  {self.bound}"


def _timing(name: str, results, pass_names: tuple[str, ...] = ("kernel",)) -> Timing:
    profs = [profile(r) for r in results]
    passes = [(n, p.us, p.gm_bytes, p.headline) for n, p in zip(pass_names, profs)]
    bound = "; ".join(p.headline for p in profs) if len(profs) == 1 else \
        "; ".join(f"{n}: {h}" for n, _, _, h in passes)
    return Timing(name, sum(p.us for p in profs), sum(p.gm_bytes for p in profs), bound, passes)


def calibrate(height: int, width: int, seed: int = 100, quantile: float = GOLDEN_QUANTILE) -> float:
    """The threshold: ``quantile`` of the gradient magnitude of a defect-free frame (never the test frames).

    The magnitude comes from :func:`reference`, which the kernels equal bit for bit (tests/projects).
    """
    golden = images.synthetic_defects(height, width, seed=seed, scratches=0, spots=0)
    mag, _ = reference(images.gray_to_nv12(golden.gray), InspectTiling(width, height))
    return float(np.quantile(mag, quantile))


def time_frame(nv12: np.ndarray, t: InspectTiling, chip=None) -> tuple[Timing, Timing, bool]:
    """(naive timing, fused timing, whether both gave the same mask) of one frame."""
    _, mask_n, res_n = run_naive(nv12, t, chip=chip)
    _, mask_f, res_f = run_fused(nv12, t, chip=chip)
    naive = _timing("naive", res_n, ("preprocess", "sobel", "threshold"))
    return naive, _timing("fused", [res_f]), bool(np.array_equal(mask_n, mask_f))


def explain(naive: Timing, fused: Timing) -> str:
    """The speedup in words, from the two profiles."""
    return (f"naive {naive.us:.1f} us -> fused {fused.us:.1f} us ({naive.us / fused.us:.1f}x); GM traffic "
            f"{naive.gm_bytes / 1e6:.1f} MB -> {fused.gm_bytes / 1e6:.1f} MB ({naive.gm_bytes / fused.gm_bytes:.1f}x "
            f"less). Naive: {naive.bound}. Fused: {fused.bound}. The fused kernel reads the uint8 frame (3 "
            "shifted copies, a halo row above and below each tile) and writes only the uint8 mask; the naive one "
            "writes a half gray image, reads it 9 times in the Sobel pass, writes and re-reads the half magnitude; "
            "with the data moves the bound, time follows bytes. Double buffering overlaps MTE2 with the vector work.")


def run_demo(seed: int = 2, chip=None, height: int = 1080, width: int = 1920, show: bool = True) -> dict:
    """Run project 1 end to end on one synthetic defect frame and one real picture.

    Returns the figures (simulated us per frame of each version, GM bytes, bound pipes, precision, recall,
    the course outline's 17 ms -> 9 ms) and, with ``show``, a matplotlib figure under ``"figure"``.
    """
    thr = calibrate(height, width)
    share = height * width / (1080 * 1920)                      # fewer defects on a smaller frame
    frame = images.synthetic_defects(height, width, seed=seed, scratches=max(1, round(6 * share)),
                                     spots=max(2, round(10 * share)))
    t = InspectTiling(width, height, threshold=thr, emit_magnitude=False)
    nv12 = images.gray_to_nv12(frame.gray)
    naive, fused, same = time_frame(nv12, t, chip)
    _, mask, _ = run_fused(nv12, t, chip=chip)
    det: Detection = detection(mask, frame.labels, MIN_AREA)
    _, boxes = components(mask, MIN_AREA)
    real = images.resize(images.bundled("camera"), height, width)
    real_mag, _, _ = run_fused(images.gray_to_nv12(real), InspectTiling(width, height, threshold=thr), chip=chip)
    out = {"threshold": thr, "naive_us": naive.us, "fused_us": fused.us, "speedup": naive.us / fused.us,
           "naive_gm_bytes": naive.gm_bytes, "fused_gm_bytes": fused.gm_bytes, "naive_passes": naive.passes,
           "naive_bound": naive.bound, "fused_bound": fused.bound, "same_mask": same,
           "precision": det.precision, "recall": det.recall, "defects": det.defects, "found": det.found,
           "components": det.components, "boxes": boxes, "source_ms": SOURCE_MS,
           "explanation": explain(naive, fused), "frame": f"{height}x{width}",
           "chip": getattr(chip, "name", chip) or "Ascend910B"}
    if show:
        out["figure"] = _figure(frame, mask, boxes, real, real_mag, out)
    return out


def _figure(frame, mask, boxes, real, real_mag, fig_data):
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle
    fig, ax = plt.subplots(1, 3, figsize=(15, 3.6))
    ax[0].imshow(frame.gray, cmap="gray")
    ax[0].set_title(f"surface with {frame.count} synthetic defects")
    ax[1].imshow(mask, cmap="gray")
    for top, left, bottom, right, _ in boxes:
        ax[1].add_patch(Rectangle((left - 4, top - 4), right - left + 8, bottom - top + 8, fill=False, color="r"))
    ax[1].set_title(f"defect mask: precision {fig_data['precision']:.2f}, recall {fig_data['recall']:.2f}")
    ax[2].imshow(real_mag.astype(np.float32), cmap="magma")
    ax[2].set_title(f"|Gx|+|Gy| of a real image; {fig_data['naive_us']:.1f} -> {fig_data['fused_us']:.1f} us")
    for a in ax:
        a.axis("off")
    fig.tight_layout()
    return fig


__all__ = ["GOLDEN_QUANTILE", "MIN_AREA", "SOURCE_MS", "Timing", "calibrate", "explain", "run_demo", "time_frame"]
