"""Module 5's projects on whole frames: simulated time per frame, the profile, and the quality figures.

    python benchmarks/bench_projects.py            # both chips, ~1-2 minutes
    python benchmarks/bench_projects.py --quick    # the default chip only

Project 1 runs on whole 1920x1080 NV12 frames (no band scaling: a frame takes about 1.5 s of wall time to
simulate). Precision and recall are over held-out synthetic frames (seeds 2-5); the threshold comes from the
defect-free frame (seed 100) and was never chosen on the frames it is reported on.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np

from ascend_sim.analysis.profile import profile
from ascend_sim.projects import images, inspection, medical
from ascend_sim.projects.inspection_kernels import InspectTiling, fit_tile_rows, run_fused
from ascend_sim.projects.metrics import Detection, detection

H, W = 1080, 1920


def project1(chip, seeds=(2, 3, 4, 5)) -> None:
    name = chip or "Ascend910B"
    thr = inspection.calibrate(H, W)
    print(f"\n== Project 1, industrial inspection, {H}x{W} NV12 frame, {name}; threshold {thr:.4f} "
          f"(quantile {inspection.GOLDEN_QUANTILE} of a defect-free frame)")
    frame = images.synthetic_defects(H, W, seed=seeds[0])
    nv12 = images.gray_to_nv12(frame.gray)
    t = InspectTiling(W, H, threshold=thr, emit_magnitude=False)
    w0 = time.perf_counter()
    naive, fused, same = inspection.time_frame(nv12, t, chip)
    wall = time.perf_counter() - w0
    print(f"{naive.line()}\n{fused.line()}\nsame mask from both: {same}; wall time to simulate both: {wall:.1f} s")
    for p, us, b, head in naive.passes:
        print(f"   naive pass {p:<11} {us:9.2f} us  GM {b / 1e6:6.2f} MB  {head}")
    rows = fit_tile_rows(t, chip)
    print(f"   fused tiles: {rows} rows (the most that fit in {name}'s UB) x {t.tile_cols} columns")
    variants = {"fused, single-buffered (buffers=1), same tiles": replace(t, tile_rows=rows, buffers=1),
                "fused, also writing the float16 magnitude": replace(t, emit_magnitude=True),
                "fused, hand-picked 8 x 640 tiles": replace(t, tile_rows=8),
                "fused, 4 x 640 tiles": replace(t, tile_rows=4),
                "fused, full-row tiles (x 1920, rows that fit)": replace(t, tile_cols=1920),
                "fused, 384-column tiles (rows that fit)": replace(t, tile_cols=384)}
    for label, tv in variants.items():
        r = tv.tile_rows or fit_tile_rows(tv, chip)
        p = profile(run_fused(nv12, tv, chip=chip)[2])
        print(f"   {label:<46} {r:2d} rows {p.us:9.2f} us  GM {p.gm_bytes / 1e6:6.2f} MB  {p.headline}")
    print(f"speedup {naive.us / fused.us:.2f}x (source: {inspection.SOURCE_MS[0]:.0f} ms -> "
          f"{inspection.SOURCE_MS[1]:.0f} ms = {inspection.SOURCE_MS[0] / inspection.SOURCE_MS[1]:.2f}x)")
    for contrast in ((18, 50), (6, 20)):
        total = Detection(0, 0, 0, 0)
        for s in seeds:
            f = images.synthetic_defects(H, W, seed=s, contrast=contrast)
            _, mask, _ = run_fused(images.gray_to_nv12(f.gray), t, chip=chip)
            d = detection(mask, f.labels, inspection.MIN_AREA)
            total = Detection(total.components + d.components, total.true_components + d.true_components,
                              total.defects + d.defects, total.found + d.found)
        print(f"defects of contrast {contrast[0]}-{contrast[1]} levels over seeds {list(seeds)}: {total.found}/"
              f"{total.defects} found, {total.true_components}/{total.components} components true -> "
              f"precision {total.precision:.3f}, recall {total.recall:.3f}")
    real = images.resize(images.bundled("camera"), H, W)
    p = profile(run_fused(images.gray_to_nv12(real), replace(t, emit_magnitude=True), chip=chip)[2])
    print(f"real picture (scikit-image camera, resized to {H}x{W}), fused with magnitude: {p.us:.2f} us")


def project2(chip) -> None:
    name = chip or "Ascend910B"
    rgb = images.bundled("ihc")
    w0 = time.perf_counter()
    out = medical.segment(rgb, chip=chip)
    wall = time.perf_counter() - w0
    inner = out["valid"]
    ref = medical.reference_mask(rgb)
    exact = np.array_equal(out["mask"][inner], medical.reference_pipeline(rgb, out["threshold"])[inner])
    from ascend_sim.projects.metrics import dice
    print(f"\n== Project 2, medical imaging, ihc {rgb.shape[0]}x{rgb.shape[1]}, {name} "
          f"(wall {wall:.1f} s); Otsu threshold {out['threshold']:.5f}")
    total = 0.0
    for op, r in out["results"].items():
        p = profile(r)
        total += p.us
        print(f"   {op:<10} {p.us:9.2f} us  GM {p.gm_bytes / 1e6:5.2f} MB  {p.headline}")
    print(f"   total      {total:9.2f} us")
    print(f"exact vs float16 numpy pipeline on the interior: {exact}; Dice vs float64 rgb2hed+Otsu reference: "
          f"{dice(out['mask'][inner], ref[inner]):.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the default chip (Ascend910B) only")
    args = ap.parse_args()
    for chip in ([None] if args.quick else [None, "Ascend310B"]):
        project1(chip)
        project2(chip)


if __name__ == "__main__":
    main()
