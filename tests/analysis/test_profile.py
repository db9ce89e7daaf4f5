"""The profile's headline and its advice agree: "bound by" only for a saturated pipe, never beside "no pipe saturates"."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import launch
from ascend_sim.analysis.profile import SATURATED
from ascend_sim.kernels.add_custom import AddCustomTilingData, add_custom
from ascend_sim.kernels.matmul import run_matmul


def _launches():
    n = 8 * 2048
    x = np.ones(n, np.float16)
    for tiles, buffers in ((8, 2), (8, 1), (1, 1)):
        yield launch(add_custom, 8, x, x, np.zeros_like(x), AddCustomTilingData(n, tiles, buffers))
    yield run_matmul(128, 128, 128, 32)[3]
    yield run_matmul(256, 256, 256, 64)[3]


@pytest.mark.parametrize("result", list(_launches()), ids=lambda r: f"{r.kernel_name}-{r.cycles:.0f}")
def test_headline_and_advice_never_disagree(result):
    prof = result.profile()
    text = str(prof)
    assert prof.bound_ratio == pytest.approx(max(prof.ratios.values()))
    if prof.bound_ratio >= SATURATED:
        assert f"bound by {prof.bound}" in text and not any("No single pipe saturates" in a for a in prof.advice)
    else:
        assert "bound by" not in text and f"busiest {prof.bound}" in text


def test_a_memory_bound_add_says_so():
    n = 8 * 2048 * 16
    x = np.ones(n, np.float16)
    prof = launch(add_custom, 8, x, x, np.zeros_like(x), AddCustomTilingData(n, 16, 2)).profile()
    assert prof.saturated and prof.bound == "MTE2" and "memory-bound" in " ".join(prof.advice)


def test_a_memory_bound_cube_kernel_is_told_about_l1_and_the_cube():
    """A pure cube launch copies GM -> L1 and has no vector pipe: the advice must say so, not 'GM -> UB'."""
    prof = run_matmul(256, 256, 256, 64)[3].profile()
    assert prof.bound == "MTE2" and prof.saturated, str(prof)
    advice = " ".join(prof.advice)
    assert "memory-bound" in advice and "GM -> L1" in advice and "cube idles" in advice
    assert "UB" not in advice and "vector" not in advice
