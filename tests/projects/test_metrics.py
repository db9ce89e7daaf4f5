"""Host-side measures: components, precision/recall, Dice, Otsu; project 1 on a small synthetic crop."""
import numpy as np
import pytest

from ascend_sim.projects.metrics import components, detection, dice, otsu

pytest.importorskip("scipy")


def _truth():
    t = np.zeros((40, 40), np.int32)
    t[5:8, 5:20] = 1            # a scratch
    t[25:30, 25:30] = 2         # a spot
    return t


def test_detection_counts_true_and_false_components():
    mask = np.zeros((40, 40), np.uint8)
    mask[4:9, 4:21] = 1         # around defect 1
    mask[30:38, 2:10] = 1       # nowhere near a defect
    d = detection(mask, _truth(), min_area=1)
    assert (d.components, d.true_components, d.defects, d.found) == (2, 1, 2, 1)
    assert d.precision == 0.5 and d.recall == 0.5


def test_min_area_drops_specks_and_empty_masks_find_nothing():
    mask = np.zeros((40, 40), np.uint8)
    mask[35, 35] = 1
    assert components(mask, 2)[1] == [] and components(mask, 1)[1] == [(35, 35, 36, 36, 1)]
    d = detection(np.zeros((40, 40)), _truth())
    assert d.recall == 0.0 and d.precision == 1.0


def test_dice():
    a = np.zeros((4, 4)); a[:2] = 1
    b = np.zeros((4, 4)); b[1:3] = 1
    assert dice(a, b) == pytest.approx(0.5) and dice(a, a) == 1.0 and dice(a, 1 - a) == 0.0


def test_otsu_agrees_with_scikit_image():
    filters = pytest.importorskip("skimage.filters")
    rng = np.random.default_rng(0)
    v = np.concatenate([rng.normal(0.2, 0.05, 3000), rng.normal(0.7, 0.08, 1000)])
    assert otsu(v) == pytest.approx(filters.threshold_otsu(v, nbins=256), abs=(v.max() - v.min()) / 256)
    assert otsu(v) != pytest.approx(float(np.median(v)), abs=0.05)


def test_inspection_on_a_small_crop_finds_the_synthetic_defects():
    pytest.importorskip("skimage")
    from ascend_sim.projects import images
    from ascend_sim.projects.inspection import MIN_AREA, calibrate
    from ascend_sim.projects.inspection_kernels import InspectTiling, run_fused
    thr = calibrate(240, 384)
    frame = images.synthetic_defects(240, 384, seed=5, scratches=1, spots=2)
    _, mask, _ = run_fused(images.gray_to_nv12(frame.gray), InspectTiling(384, 240, threshold=thr, tile_cols=128))
    d = detection(mask, frame.labels, MIN_AREA)
    assert d.defects == 3 and d.recall == 1.0 and d.precision >= 0.75
    blank = detection(np.zeros_like(mask), frame.labels, MIN_AREA)      # the measure is not always 1
    assert blank.recall == 0.0


def test_too_many_defects_for_the_frame_is_an_error_not_a_hang():
    pytest.importorskip("skimage")
    from ascend_sim.projects import images
    with pytest.raises(ValueError, match="could not place"):
        images.synthetic_defects(64, 128, scratches=10, spots=20)
