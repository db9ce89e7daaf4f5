"""Project 2, medical imaging (医疗影像): nuclei segmentation of a stained tissue section, and the lesson demo.

Requirements: segment the cell nuclei of scikit-image's bundled immunohistochemistry picture (``ihc``,
512x512 RGB, human tissue stained with DAB and counterstained with hematoxylin; public domain, see
scikit-image's data/README.txt) and report a quality metric and each operator's simulated time.

Operators (simulated, :mod:`ascend_sim.projects.medical_kernels`): stain separation (colour deconvolution,
Ruifrok and Johnston: the hematoxylin amount from the optical densities -ln(I) of R, G, B; hematoxylin stains
nuclei), 5x5 Gaussian denoise, threshold, morphological opening (3x3 erosion then 3x3 dilation), all float16.
Host: Otsu's threshold from the histogram of the blurred image (one scalar between two kernels).

Two checks. Exactness: the kernels equal :func:`reference_pipeline` (numpy, the same float16 operations in the
same order) on the valid interior. Quality: Dice against :func:`reference_mask`, made on the host in float64
with scikit-image (``rgb2hed`` hematoxylin channel, Otsu, objects under 30 px removed), with no denoise and no
opening. No expert annotation is bundled, so the Dice score measures agreement with that classical float64
method (what a deployment check (部署验证) compares against), not clinical accuracy.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ascend_sim.analysis.profile import profile
from ascend_sim.projects import images
from ascend_sim.projects.medical_kernels import (MedTiling, gray_kernel, launch_on, ref_gray, ref_stencil,
                                                 ref_threshold, stencil, threshold_kernel, unpack, valid)
from ascend_sim.projects.metrics import dice, otsu

CHAIN = ("gauss5", "erode3", "dilate3")
MIN_OBJECT = 30             # px: smaller specks are dropped from the reference mask


def planar(rgb: np.ndarray) -> np.ndarray:
    """HWC uint8 -> CHW (the planar layout the gray kernel reads)."""
    return np.ascontiguousarray(np.moveaxis(np.asarray(rgb, np.uint8), -1, 0))


def segment(rgb: np.ndarray, *, chip=None, tile_rows: int = 8, threshold=None) -> dict:
    """Run the five kernels on an RGB image; the mask, the threshold and each operator's LaunchResult.

    ``threshold``: the host's rule, blurred values -> one scalar (default: Otsu; lab05 ex9 passes the learner's)."""
    h, w = rgb.shape[:2]
    t = MedTiling(h, w, tile_rows)
    results = {}
    gray, results["gray"] = launch_on(gray_kernel, planar(rgb), t, chip=chip)
    blur, results["gauss5"] = launch_on(stencil, gray, replace(t, op="gauss5"), chip=chip)
    inner = valid(t, ("gauss5",))
    thr = float((threshold or otsu)(unpack(blur, t)[inner]))          # host: one scalar from a histogram
    fg, results["threshold"] = launch_on(threshold_kernel, blur, replace(t, threshold=thr), chip=chip)
    er, results["erode3"] = launch_on(stencil, fg, replace(t, op="erode3"), chip=chip)
    op, results["dilate3"] = launch_on(stencil, er, replace(t, op="dilate3"), chip=chip)
    return {"mask": unpack(op, t), "blur": unpack(blur, t), "threshold": thr, "results": results,
            "valid": valid(t, CHAIN)}


def reference_pipeline(rgb: np.ndarray, threshold: float) -> np.ndarray:
    """The same operators in numpy, in the kernels' float16 order (exact on the valid interior)."""
    t = MedTiling(*rgb.shape[:2])
    x = ref_threshold(ref_stencil(ref_gray(rgb, t), "gauss5"), threshold)
    return ref_stencil(ref_stencil(x, "erode3"), "dilate3")


def reference_mask(rgb: np.ndarray) -> np.ndarray:
    """The independent reference: hematoxylin by colour deconvolution, Otsu, objects >= MIN_OBJECT px."""
    from skimage.color import rgb2hed
    from skimage.filters import threshold_otsu
    from skimage.morphology import remove_small_objects
    hema = rgb2hed(rgb)[..., 0]
    return remove_small_objects(hema > threshold_otsu(hema), max_size=MIN_OBJECT - 1)


def run_demo(chip=None, show: bool = True) -> dict:
    """Project 2 end to end on the bundled IHC image: Dice, per-operator simulated us, and a figure."""
    rgb = images.bundled("ihc")
    out = segment(rgb, chip=chip)
    inner = out["valid"]
    ref = reference_mask(rgb)
    times = {name: profile(r).us for name, r in out["results"].items()}
    figures = {"dice": dice(out["mask"][inner], ref[inner]), "otsu_threshold": out["threshold"],
               "times_us": times, "total_us": sum(times.values()),
               "bound": {name: profile(r).headline for name, r in out["results"].items()},
               "foreground": float(out["mask"][inner].mean()), "reference_foreground": float(ref[inner].mean()),
               "image": f"ihc {rgb.shape[0]}x{rgb.shape[1]}", "chip": getattr(chip, "name", chip) or "Ascend910B"}
    if show:
        figures["figure"] = _figure(rgb, out["mask"], ref, figures)
    return figures


def _figure(rgb, mask, ref, f):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(13, 4.4))
    ax[0].imshow(rgb)
    ax[0].set_title("IHC tissue (scikit-image, public domain)")
    ax[1].imshow(mask.astype(np.float32), cmap="gray")
    ax[1].set_title(f"simulated kernels: nuclei ({f['total_us']:.1f} us)")
    ax[2].imshow(ref, cmap="gray")
    ax[2].set_title(f"colour-deconvolution reference; Dice {f['dice']:.3f}")
    for a in ax:
        a.axis("off")
    fig.tight_layout()
    return fig


__all__ = ["CHAIN", "MIN_OBJECT", "planar", "reference_mask", "reference_pipeline", "run_demo", "segment"]
