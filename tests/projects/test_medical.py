"""Project 2 kernels: each equals its float16 numpy reference on the valid interior; planted bugs are caught."""
from dataclasses import replace

import numpy as np
import pytest

from ascend_sim import TilingError

from ascend_sim.projects import medical_kernels as mk
from ascend_sim.projects.medical_kernels import (MedTiling, gray_kernel, launch_on, ref_gray, ref_stencil,
                                                 ref_threshold, stencil, threshold_kernel, unpack, valid)

H, W = 37, 256          # 37 rows: a short last tile


def _rgb(seed=0):
    return np.random.default_rng(seed).integers(0, 256, (H, W, 3), dtype=np.uint8)


def _gray(t):
    rgb = _rgb()
    buf, _ = launch_on(gray_kernel, np.ascontiguousarray(np.moveaxis(rgb, -1, 0)), t)
    return rgb, buf


def test_gray_is_the_hematoxylin_amount():
    t = MedTiling(H, W)
    rgb, buf = _gray(t)
    got = unpack(buf, t)
    assert np.array_equal(got, ref_gray(rgb, t))
    skc = pytest.importorskip("skimage.color")      # and it is scikit-image's rgb2hed channel, to float16 precision
    assert np.allclose(got, skc.rgb2hed(rgb)[..., 0], atol=2e-3)
    assert np.allclose(mk.HEMATOXYLIN, skc.hed_from_rgb[:, 0] / np.log(1e-6))


@pytest.mark.parametrize("op", ["gauss5", "erode3", "dilate3"])
def test_stencils_equal_the_reference_on_the_interior(op):
    t = MedTiling(H, W, op=op)
    rgb, buf = _gray(t)
    out, res = launch_on(stencil, buf, t)
    inner = valid(t, (op,))
    want = ref_stencil(unpack(buf, t), op)
    assert np.array_equal(unpack(out, t)[inner], want[inner]) and res.us > 0
    assert not np.array_equal(want[inner], unpack(buf, t)[inner])        # the filter changed the image


def test_threshold_equals_the_reference():
    t = MedTiling(H, W, threshold=0.1)
    _, buf = _gray(t)
    out, _ = launch_on(threshold_kernel, buf, t)
    want = ref_threshold(unpack(buf, t), 0.1)
    assert np.array_equal(unpack(out, t), want) and 0.05 < want.mean() < 0.95


def test_a_planted_stencil_bug_is_caught(monkeypatch):
    """A Gaussian whose centre tap weighs 4 instead of 6 must differ from the reference."""
    monkeypatch.setattr(mk, "BINOMIAL", (1.0, 4.0, 4.0, 4.0, 1.0))
    t = MedTiling(H, W, op="gauss5")
    _, buf = _gray(t)
    out, _ = launch_on(stencil, buf, t)
    monkeypatch.undo()
    inner = valid(t, ("gauss5",))
    assert not np.array_equal(unpack(out, t)[inner], ref_stencil(unpack(buf, t), "gauss5")[inner])


def test_segmentation_of_a_crop_matches_the_pipeline_reference_and_scores_dice():
    pytest.importorskip("skimage")
    from ascend_sim.projects import images
    from ascend_sim.projects.medical import reference_mask, reference_pipeline, segment
    from ascend_sim.projects.metrics import dice
    rgb = images.bundled("ihc")[:64, :256]
    out = segment(rgb)
    inner = out["valid"]
    assert np.array_equal(out["mask"][inner], reference_pipeline(rgb, out["threshold"])[inner])
    d = dice(out["mask"][inner], reference_mask(rgb)[inner])
    assert 0.7 < d < 1.0
    assert dice(np.zeros_like(out["mask"][inner]), reference_mask(rgb)[inner]) == 0.0


def test_bad_tilings_are_refused():
    with pytest.raises(TilingError):
        MedTiling(64, 200)
    with pytest.raises(TilingError):
        replace(MedTiling(64, 256), op="median")
