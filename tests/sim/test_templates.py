"""Kernel templates and tiling keys (ASCENDC_TPL_*), and host tiling for any shape (kernels/tiling.py)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascend_sim import (ASCENDC_TPL_ARGS_DECL, ASCENDC_TPL_ARGS_SEL, ASCENDC_TPL_BOOL_DECL, ASCENDC_TPL_DATATYPE_DECL,
                        ASCENDC_TPL_SEL, ASCENDC_TPL_UINT_DECL, AlignmentError, TilingError, bfloat16, float32, half,
                        int8, int16, int32, launch)
from ascend_sim.kernels.add_template import ADD_TEMPLATE, DTYPES, AddTemplateTilingData, add, add_template_tiling
from ascend_sim.kernels.tiling import split_even

PER_BLOCK = {np.dtype(d).itemsize: 32 // np.dtype(d).itemsize for d in DTYPES}


def _inputs(dtype, n, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "i":
        return (rng.integers(-1000, 1000, n).astype(dtype), rng.integers(-1000, 1000, n).astype(dtype))
    return rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)


def _golden(x, y):
    if x.dtype == bfloat16:         # the kernel adds in float and rounds once
        return (x.astype(np.float32) + y.astype(np.float32)).astype(bfloat16)
    return x + y


@pytest.mark.parametrize("combo", ADD_TEMPLATE.legal(), ids=lambda c: ADD_TEMPLATE.describe(ADD_TEMPLATE.tiling_key(**c)))
def test_every_selected_combination_runs_exactly(combo):
    d = combo["D_T_X"]
    n = 8 * 1024 + (5 if combo["HAS_TAIL"] else 0)          # a shape whose split needs (or not) the pad branch
    x, y = _inputs(d, n)
    z = np.zeros_like(x)
    split = split_even(n, d, cores=8, buffers=combo["BUFFER_NUM"], max_tile_bytes=2048)
    assert split.has_tail == bool(combo["HAS_TAIL"])
    key = ADD_TEMPLATE.tiling_key(**combo)
    res = launch(ADD_TEMPLATE.instance(key), split.block_dim, x, y, z, AddTemplateTilingData(split))
    assert np.array_equal(z, _golden(x, y))
    assert res.kernel_name.startswith("add_custom_template<D_T_X=")


def test_keys_are_unique_and_decode_back():
    keys = [ADD_TEMPLATE.tiling_key(**c) for c in ADD_TEMPLATE.legal()]
    assert len(keys) == len(set(keys)) == len(DTYPES) * 2 * 2
    for k in keys:
        assert ADD_TEMPLATE.tiling_key(**ADD_TEMPLATE.decode(k)) == k
    assert ADD_TEMPLATE.instance(keys[0]) is ADD_TEMPLATE.instance(keys[0])      # instantiated once


def test_a_combination_that_is_not_selected_names_the_legal_ones():
    with pytest.raises(TilingError, match=r"no kernel is compiled for D_T_X=half, D_T_Y=float.*ASCENDC_TPL_SEL") as e:
        ADD_TEMPLATE.tiling_key(D_T_X=half, D_T_Y=float32, D_T_Z=half, BUFFER_NUM=2, HAS_TAIL=0)
    assert "Fix:" in str(e.value) and "D_T_X=half, D_T_Y=half, D_T_Z=half" in str(e.value)
    x = np.ones(64, np.float16)
    with pytest.raises(TilingError, match="no kernel is compiled"):
        add_template_tiling(x, x.astype(np.float32), x)


def test_undeclared_values_and_wrong_names_are_refused():
    with pytest.raises(TilingError, match="D_T_X = int8_t is not declared"):
        ADD_TEMPLATE.tiling_key(D_T_X=int8, D_T_Y=int8, D_T_Z=int8, BUFFER_NUM=1, HAS_TAIL=0)
    with pytest.raises(TilingError, match="BUFFER_NUM = 3 is not declared"):
        ADD_TEMPLATE.tiling_key(D_T_X=half, D_T_Y=half, D_T_Z=half, BUFFER_NUM=3, HAS_TAIL=0)
    with pytest.raises(TilingError, match="missing"):
        ADD_TEMPLATE.tiling_key(D_T_X=half, D_T_Y=half, D_T_Z=half, BUFFER_NUM=1)
    with pytest.raises(TilingError, match="outside the declared space"):
        ADD_TEMPLATE.decode(10**9)


def test_declarations_are_checked():
    with pytest.raises(TilingError, match="declared twice"):
        ASCENDC_TPL_ARGS_DECL("Op", ASCENDC_TPL_UINT_DECL("N", 1), ASCENDC_TPL_UINT_DECL("N", 2))
    with pytest.raises(TilingError, match="unsigned integers"):
        ASCENDC_TPL_UINT_DECL("N", -1)
    space = ASCENDC_TPL_ARGS_DECL("Op", ASCENDC_TPL_DATATYPE_DECL("T", half, float32), ASCENDC_TPL_BOOL_DECL("B"))
    with pytest.raises(TilingError, match="undeclared parameters"):
        ASCENDC_TPL_SEL(space, ASCENDC_TPL_ARGS_SEL(T=half, X=1))
    ASCENDC_TPL_SEL(space, ASCENDC_TPL_ARGS_SEL(T=half))                 # B unnamed: both values
    assert space.legal() == [{"T": np.dtype(np.float16), "B": 0}, {"T": np.dtype(np.float16), "B": 1}]


def test_the_key_must_match_the_shape():
    """The aligned instance on a shape with a tail breaks the 32-byte rule: the key is not a detail."""
    n = 8 * 1024 + 5
    x, y = _inputs(half, n)
    split = split_even(n, half, cores=8)
    key = ADD_TEMPLATE.tiling_key(D_T_X=half, D_T_Y=half, D_T_Z=half, BUFFER_NUM=2, HAS_TAIL=0)
    with pytest.raises(AlignmentError):
        launch(ADD_TEMPLATE.instance(key), split.block_dim, x, y, np.zeros_like(x), AddTemplateTilingData(split))


@settings(max_examples=150, deadline=None)
@given(total=st.integers(1, 1_000_000), itemsize=st.sampled_from([1, 2, 4, 8]), cores=st.integers(1, 64),
       buffers=st.sampled_from([1, 2]))
def test_the_split_covers_every_element_once_on_32_byte_boundaries(total, itemsize, cores, buffers):
    dtype = {1: np.int8, 2: np.float16, 4: np.float32, 8: np.int64}[itemsize]
    s = split_even(total, dtype, cores=cores, buffers=buffers)
    per_block = 32 // itemsize
    assert 1 <= s.block_dim <= cores and s.former_length - s.tail_length == per_block
    covered = 0
    for i in range(s.block_dim):
        start, n = s.core_range(i)
        assert start == covered and start % per_block == 0 and n > 0
        tiles = s.tiles(n)
        assert sum(c for _, c in tiles) == n and all(c <= s.tile_length for _, c in tiles)
        assert all(o % per_block == 0 for o, _ in tiles)
        covered += n
    assert covered == total
    assert s.tile_length % per_block == 0 or s.tile_length == s.former_length
    assert 3 * buffers * s.tile_length * itemsize <= 192 * 1024


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 6000), dtype=st.sampled_from(DTYPES), cores=st.integers(1, 48), seed=st.integers(0, 99))
def test_add_is_exact_for_any_length_dtype_and_core_count(n, dtype, cores, seed):
    x, y = _inputs(dtype, n, seed)
    z, res = add(x, y, cores=cores)
    assert np.array_equal(z, _golden(x, y))
    assert res.block_dim <= cores


def test_shape_mismatch_and_empty_inputs_are_refused():
    with pytest.raises(TilingError, match="shapes"):
        add_template_tiling(np.ones(4, np.float16), np.ones(5, np.float16), np.ones(4, np.float16))
    with pytest.raises(TilingError, match="positive element count"):
        split_even(0, np.float16)
    with pytest.raises(TilingError, match="32-byte data block"):
        split_even(10, np.dtype("V3"))
    assert split_even(5, int16, cores=4).block_dim == 1 and split_even(5, int32, cores=4).block_dim == 1
