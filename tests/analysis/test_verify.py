"""ascend_sim.analysis.verify: the verify-convention comparison and the unwritten-range helper."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_sim.analysis.verify import compare, format_ranges, tolerance_for, unwritten_ranges


def test_tolerances_follow_the_verify_convention():
    fp16, fp32 = tolerance_for(np.float16), tolerance_for("float")
    assert (fp16.rtol, fp16.atol, fp16.max_mismatch_ratio) == (1e-3, 1e-5, 1e-3)
    assert (fp32.rtol, fp32.atol, fp32.max_mismatch_ratio) == (1e-4, 1e-5, 1e-4)
    assert "official" in fp16.source and "official" in fp32.source
    bf16 = tolerance_for(ml_dtypes.bfloat16)
    assert bf16.rtol == 4e-3 and "estimate" in bf16.source
    assert tolerance_for(np.int8).exact and tolerance_for("int32").exact and tolerance_for(bool).exact
    assert tolerance_for("half") == fp16 and tolerance_for("bf16") == bf16


def test_unknown_dtype_is_a_clear_error():
    with pytest.raises(ValueError, match="no verify tolerance"):
        tolerance_for(np.complex64)


def test_mismatch_ratio_decides_pass_or_fail():
    golden = np.ones(2000, np.float16)
    actual = golden.copy()
    actual[:2] = 2                                      # 2 / 2000 = 1e-3: at the limit, passes
    r = compare(actual, golden)
    assert r.passed and r.mismatches == 2 and r.first_mismatches == [(0,), (1,)]
    actual[2] = 2                                       # 3 / 2000 > 1e-3
    r = compare(actual, golden)
    assert not r.passed and r.mismatches == 3
    assert r.max_abs_err == 1.0 and r.max_rel_err == 1.0
    assert "FAIL" in str(r) and "index 0: got 2 expected 1" in str(r)


def test_rtol_and_atol_per_element():
    golden = np.full(10, 100.0, np.float32)
    assert compare(golden * (1 + 5e-5), golden).passed            # within rtol 1e-4
    assert not compare(golden * (1 + 5e-4), golden).passed
    assert compare(np.full(10, 5e-6, np.float32), np.zeros(10, np.float32)).passed   # within atol
    assert compare(golden * (1 + 5e-4), golden, rtol=1e-3).passed                  # explicit override


def test_integers_are_exact_and_nan_matches_nan():
    assert not compare(np.array([1, 2, 3], np.int32), np.array([1, 2, 4], np.int32)).passed
    g = np.array([1.0, np.nan, 3.0], np.float32)
    assert compare(g.copy(), g).passed
    r = compare(np.array([1.0, 2.0, 3.0], np.float32), g)
    assert not r.passed and r.first_mismatches == [(1,)]


def test_structural_problems():
    g = np.ones(4, np.float16)
    assert "shape (3,)" in compare(g[:3], g).summary()
    assert "no output" in compare(None, g).summary()
    assert not compare(None, g)


def test_bf16_is_compared_in_float64():
    g = np.linspace(-3, 3, 256).astype(ml_dtypes.bfloat16)
    assert compare(g.copy(), g).passed
    assert "bfloat16" in compare(g, g).summary()


def test_html_repr_lists_first_mismatches():
    g = np.zeros(8, np.float16)
    a = g.copy()
    a[3] = 1
    html = compare(a, g)._repr_html_()
    assert "<table>" in html and "<td>3</td>" in html and "tolerance source" in html


def test_unwritten_ranges_with_a_nan_sentinel():
    out = np.full(2048, np.nan, np.float16)
    out[:2011] = 1
    assert unwritten_ranges(out, np.nan) == [(2011, 2047)]
    assert format_ranges(unwritten_ranges(out, np.nan)) == "elements 2011..2047"
    out[5] = np.nan
    assert unwritten_ranges(out, np.nan) == [(5, 5), (2011, 2047)]
    assert unwritten_ranges(np.zeros(4, np.int32), -1) == []
    assert format_ranges([(7, 7)]) == "element 7"
    assert format_ranges([(0, 1), (4, 5), (8, 9), (12, 13)]) == "elements 0..1, 4..5, 8..9 and 1 more ranges"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1e4, 1e4, width=16), min_size=1, max_size=300))
def test_identical_arrays_always_pass(values):
    x = np.array(values, np.float16)
    r = compare(x, x.copy())
    assert r.passed and r.mismatches == 0 and r.max_abs_err == 0


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 4000), st.integers(0, 4000))
def test_unwritten_ranges_find_any_tail(n, start):
    start = min(start, n)
    out = np.arange(n, dtype=np.float32)
    out[start:] = np.nan
    assert unwritten_ranges(out, np.nan) == ([(start, n - 1)] if start < n else [])
