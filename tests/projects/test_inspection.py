"""Project 1 kernels: naive and fused equal the integer numpy reference bit for bit; a planted bug is caught."""
import numpy as np
import pytest

from ascend_sim import TilingError

from ascend_sim.projects import inspection_kernels as ik
from ascend_sim.projects.inspection_kernels import InspectTiling, reference, run_fused, run_naive


def _frame(h=36, w=256, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (h * 3 // 2, w), dtype=np.uint8)


CASES = [  # whole frame with a short last row tile; a crop inside the frame; one column tile
    dict(tile_rows=8, tile_cols=128),
    dict(top=3, left=128, height=21, width=128, tile_rows=5, tile_cols=128),
    dict(tile_rows=16, tile_cols=256),
]


@pytest.mark.parametrize("case", CASES)
def test_fused_and_naive_equal_the_reference(case):
    nv12 = _frame()
    t = InspectTiling(256, 36, threshold=3.0, **case)
    want_mag, want_mask = reference(nv12, t)
    assert 0.2 < want_mask.mean() < 0.8            # the threshold splits the data: the mask is not trivial
    mag, mask, res = run_fused(nv12, t)
    assert np.array_equal(mag, want_mag) and np.array_equal(mask, want_mask)
    mag, mask, results = run_naive(nv12, t)
    assert np.array_equal(mag, want_mag) and np.array_equal(mask, want_mask)
    assert res.us > 0 and len(results) == 3


def test_fused_mask_only_skips_the_magnitude_write():
    nv12 = _frame()
    t = InspectTiling(256, 36, threshold=3.0, tile_cols=128, emit_magnitude=False)
    mag, mask, res = run_fused(nv12, t)
    assert np.array_equal(mask, reference(nv12, t)[1]) and not mag.any()


def test_reference_matches_a_float_sobel():
    """The integer reference is the textbook Sobel (checked against scipy's)."""
    ndimage = pytest.importorskip("scipy.ndimage")
    nv12 = _frame(seed=3)
    t = InspectTiling(256, 36, tile_cols=128)
    y = nv12[:36].astype(np.float64)
    l1 = np.abs(ndimage.sobel(y, axis=1)) + np.abs(ndimage.sobel(y, axis=0))
    assert np.array_equal(reference(nv12, t)[0][1:-1, 1:-1].astype(np.float64), l1[1:-1, 1:-1] / 128)


def test_a_planted_sobel_bug_is_caught(monkeypatch):
    """Weight 1 instead of 2 on the centre row of Gx: both versions must then differ from the reference."""
    right = ik.sobel_l1

    def wrong(mag, L, C, R, D, n, w):
        right(mag, L, C, R, D, n, w)
        ik.Sub(mag, mag, D[w], n)           # (|Gx| + |Gy|) - D: a wrong answer of the same shape

    monkeypatch.setattr(ik, "sobel_l1", wrong)
    nv12 = _frame()
    t = InspectTiling(256, 36, threshold=3.0, tile_cols=128)
    want = reference(nv12, t)[0]
    assert not np.array_equal(run_fused(nv12, t)[0], want)
    assert not np.array_equal(run_naive(nv12, t)[0], want)


@pytest.mark.parametrize("bad", [dict(width=200), dict(scale=0.01), dict(tile_cols=96), dict(height=2),
                                 dict(top=30, height=10)])
def test_bad_tilings_are_refused(bad):
    with pytest.raises(TilingError):
        InspectTiling(256, 36, **bad)


def test_the_host_tiling_fills_the_ub_and_one_row_more_does_not_fit():
    from ascend_sim import CapacityError, get_chip
    from ascend_sim.projects.inspection_kernels import fit_tile_rows, fused_ub_bytes
    from dataclasses import replace
    nv12 = _frame(h=12, w=1920)
    t = InspectTiling(1920, 12, threshold=3.0, tile_cols=1920)
    rows = fit_tile_rows(t)
    assert fused_ub_bytes(rows, 1920) <= get_chip(None).ub_usable_bytes < fused_ub_bytes(rows + 1, 1920)
    assert np.array_equal(run_fused(nv12, t)[1], reference(nv12, t)[1])       # tile_rows=0: filled in
    with pytest.raises(CapacityError):                                         # the formula is the kernel's
        run_fused(nv12, replace(t, tile_rows=rows + 1))
    assert fit_tile_rows(t, "Ascend310B") > rows                               # a larger UB, taller tiles
