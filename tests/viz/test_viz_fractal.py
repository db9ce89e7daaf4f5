"""The fractal-layout picture: its address maps are the simulator's, and it draws one panel per layout."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim.viz.fractal import draw_fractal_layouts, layout_addresses


@pytest.mark.parametrize("dtype, c0", [(np.float16, 16), (np.int8, 32), (np.float32, 8)])
def test_each_layout_is_a_permutation_with_c0_wide_fractal_rows(dtype, c0):
    maps = layout_addresses(64, 64, dtype)
    for a in maps.values():
        assert sorted(a.ravel().tolist()) == list(range(64 * 64))
    nz, zz, zn = (maps[k] for k in ("NZ (L1 after Nd2Nz; L0C)", "ZZ (L0A, left matrix)", "ZN (L0B, right matrix)"))
    assert nz[1, 0] == c0 and nz[0, c0] == 64 * c0          # NZ: down a column block first, C0 per row
    assert zz[0, c0] == 16 * c0 and zz[16, 0] == 64 * 16    # ZZ: the next fractal of the row, then the next row
    assert zn[0, 1] == c0 and zn[1, 0] == 1                 # ZN: each fractal column-major, columns of C0


def test_the_picture_has_four_panels_and_numbers_the_fractals():
    fig = draw_fractal_layouts(32, 32)
    axes = fig.get_axes()
    assert [ax.get_title().split(" ")[0] for ax in axes] == ["ND", "NZ", "ZZ", "ZN"]
    assert [t.get_text() for t in axes[1].texts] == ["0", "2", "1", "3"]     # NZ: down the first column block
    assert [t.get_text() for t in axes[2].texts] == ["0", "1", "2", "3"]


def test_a_shape_that_is_not_whole_fractals_is_refused():
    with pytest.raises(ValueError, match="whole fractals"):
        layout_addresses(20, 32)
