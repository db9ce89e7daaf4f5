"""Host Matmul tiling (TCubeTiling): GetTiling gives legal tilings, and each documented constraint is named."""
from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st

from ascend_sim import TilingError
from ascend_sim.api.highlevel import matmul_tiling as mt
from ascend_sim.hw.chips import Ascend910B


def _tiler(m, n, k, *, dim=None, a="float16", c="float32", bias=False, trans_b=False):
    t = mt.MultiCoreMatmulTiling() if dim else mt.MatmulApiTiling()
    if dim:
        t.SetDim(dim)
    t.SetAType("GM", mt.CubeFormat.ND, a)
    t.SetBType("GM", mt.CubeFormat.ND, a, trans_b)
    t.SetCType("GM", mt.CubeFormat.ND, c)
    t.SetBiasType("GM", mt.CubeFormat.ND, "int32" if a == "int8" else "float32")
    t.SetShape(m, n, k)
    t.SetOrgShape(m, n, k)
    t.EnableBias(bias)
    return t


def test_cxx_field_order():
    names = [f for f in mt.TCubeTiling().as_dict()]
    assert names[:17] == ["usedCoreNum", "M", "N", "Ka", "Kb", "singleCoreM", "singleCoreN", "singleCoreK",
                          "baseM", "baseN", "baseK", "depthA1", "depthB1", "stepM", "stepN", "isBias",
                          "transLength"]
    assert names[-3:] == ["dbL0A", "dbL0B", "dbL0C"]
    t = mt.TCubeTiling(1, 64, 32)           # positional, as in C++ aggregate initialisation
    assert (t.usedCoreNum, t.M, t.N) == (1, 64, 32)


def test_recommended_base_for_a_large_fp16_matmul():
    tiler = _tiler(8192, 8192, 8192, dim=24, bias=True)
    t = mt.TCubeTiling()
    assert tiler.GetTiling(t) == 0
    assert (t.baseM, t.baseN, t.baseK) == (128, 256, 64)
    assert (t.dbL0A, t.dbL0B) == (2, 2)
    assert t.depthA1 == 2 * t.stepM * t.stepKa and t.depthB1 == 2 * t.stepN * t.stepKb
    assert t.usedCoreNum == tiler.GetCoreNum() <= 24
    assert t.singleCoreK == 8192
    assert mt.tiling_violations(t, tiler.context()) == []


def test_k_is_loaded_whole_in_l1_when_it_fits():
    t = _tiler(256, 256, 256).tiling_or_raise()
    assert t.stepKa * t.baseK >= 256 and t.stepKb * t.baseK >= 256


@pytest.mark.parametrize("field, value, words", [
    ("baseN", 512, "L0C: baseM * baseN"),
    ("baseK", 256, "L0A: baseM * baseK"),
    ("baseM", 120, "multiples of 16"),
    ("depthA1", 3, "depthA1 = 3 but stepM * stepKa * db"),
    ("depthB1", 5, "depthB1 = 5 but stepN * stepKb * db"),
    ("dbL0C", 3, "dbL0C = 3: must be 1"),
    ("usedCoreNum", 7, "usedCoreNum = 7 but (M / singleCoreM)"),
    ("singleCoreK", 128, "singleCoreK = 128 but K = 256"),
    ("stepKa", 0, "stepKa = 0"),
])
def test_each_broken_constraint_is_named(field, value, words):
    tiler = _tiler(256, 256, 256)
    good = tiler.tiling_or_raise()
    assert mt.tiling_violations(good, tiler.context()) == []
    bad = replace(good, **{field: value})
    with pytest.raises(TilingError) as err:
        mt.check_tiling(bad, tiler.context())
    assert words in str(err.value)
    assert "Fix:" in str(err.value)


def test_l1_overflow_is_named_with_the_bytes():
    tiler = _tiler(256, 256, 4096)
    good = tiler.tiling_or_raise()
    bad = replace(good, stepKa=32, stepKb=32, depthA1=64, depthB1=64)
    msg = "\n".join(mt.tiling_violations(bad, tiler.context()))
    assert "L1: AL1Size + BL1Size" in msg and "> L1_size 524288 B" in msg


def test_bias_table_limit():
    tiler = _tiler(64, 512, 64, bias=True, c="float32")
    ctx = tiler.context()
    t = tiler.tiling_or_raise()
    assert t.baseN * 4 <= ctx.bt                      # the search shrank baseN to the 1 KB BiasTable
    assert any("BiasTable" in v for v in mt.tiling_violations(replace(t, baseN=512), ctx))


def test_set_fix_split_is_kept_and_checked():
    tiler = _tiler(512, 512, 512)
    assert tiler.SetFixSplit(64, 128) == 0
    t = tiler.tiling_or_raise()
    assert (t.baseM, t.baseN) == (64, 128)
    tiler.SetFixSplit(48, 1024)
    assert tiler.GetTiling(mt.TCubeTiling()) == -1            # C++: -1 means the tiling failed
    assert "baseN = 1024" in str(tiler.failure)


def test_illegal_type_pairs_fail_with_the_legal_ones():
    tiler = _tiler(64, 64, 64, a="int8", c="float32")
    with pytest.raises(TilingError, match="legal C types: float16, int32, int8"):
        tiler.tiling_or_raise()


def test_int8_uses_c0_32_for_base_k_when_b_is_transposed():
    t = _tiler(128, 128, 1024, a="int8", c="int32", trans_b=True).tiling_or_raise()
    assert t.baseK % 32 == 0 and t.baseK == 128


def test_buffer_space_limits_the_search():
    tiler = _tiler(1024, 1024, 1024)
    assert tiler.SetBufferSpace(128 * 1024, 64 * 1024) == 0
    t = tiler.tiling_or_raise()
    assert t.baseM * t.baseN * 4 * t.dbL0C <= 64 * 1024
    assert sum(mt.l1_bytes(t, tiler.context())) <= 128 * 1024
    assert tiler.SetBufferSpace(2 * Ascend910B().l1_bytes) == -1


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 3000), n=st.integers(1, 3000), k=st.integers(1, 5000), dim=st.integers(1, 24),
       a=st.sampled_from(["float16", "float32", "int8", "bfloat16"]))
def test_get_tiling_is_always_legal(m, n, k, dim, a):
    c = {"int8": "int32"}.get(a, "float32")
    tiler = _tiler(m, n, k, dim=dim, a=a, c=c)
    t = mt.TCubeTiling()
    assert tiler.GetTiling(t) == 0, tiler.failure
    assert mt.tiling_violations(t, tiler.context()) == []
    assert t.usedCoreNum <= dim
    assert t.singleCoreM * -(-m // t.singleCoreM) >= m and t.singleCoreN * -(-n // t.singleCoreN) >= n
