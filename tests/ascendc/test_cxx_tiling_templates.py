"""Tiling-key templates in C++ (Tiling模板编程): the ASCENDC_TPL_* tables of a translation unit become a TemplateSpace
bound to the kernel template with the declared parameter names; a key launches its instantiation, an unselected
combination stops with the template's TilingError, and the official UINT modes (RANGE, LIST, MIX) decode as documented.
"""
import numpy as np
import pytest

from ascend_sim import TilingError, bfloat16, float32, half, launch
from ascend_sim.ascendc.diagnostics import CompileError
from cxx_util import load_src

KERNEL = """
template <typename D_T_X, int32_t TILE_NUM, int32_t IS_SPLIT>
__global__ __aicore__ void scale(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    GlobalTensor<D_T_X> xGm;
    GlobalTensor<D_T_X> yGm;
    xGm.SetGlobalBuffer((__gm__ D_T_X*)x, n);
    yGm.SetGlobalBuffer((__gm__ D_T_X*)y, n);
    for (uint32_t i = 0; i < n; i++) {
        float v = static_cast<float>(xGm.GetValue(i)) * TILE_NUM + IS_SPLIT;
        if constexpr (IsSameType<D_T_X, bfloat16_t>::value) {
            v = -v;                             // marks the bfloat16 instantiation
        }
        yGm.SetValue(i, static_cast<D_T_X>(v));
    }
}
"""

TABLES = """
ASCENDC_TPL_ARGS_DECL(Scale,
    ASCENDC_TPL_DATATYPE_DECL(D_T_X, C_DT_FLOAT16, C_DT_FLOAT, C_DT_BF16),
    ASCENDC_TPL_UINT_DECL(TILE_NUM, ASCENDC_TPL_8_BW, ASCENDC_TPL_UI_MIX, 2, 0, 2, 4, 5, 8, 10),
    ASCENDC_TPL_BOOL_DECL(IS_SPLIT, 0, 1), );
ASCENDC_TPL_SEL(
    ASCENDC_TPL_ARGS_SEL(ASCENDC_TPL_DATATYPE_SEL(D_T_X, C_DT_FLOAT16),
                         ASCENDC_TPL_UINT_SEL(TILE_NUM, ASCENDC_TPL_UI_RANGE, 1, 1, 2), ASCENDC_TPL_BOOL_SEL(IS_SPLIT, 0)),
    ASCENDC_TPL_ARGS_SEL(ASCENDC_TPL_DATATYPE_SEL(D_T_X, C_DT_FLOAT, C_DT_BF16),
                         ASCENDC_TPL_UINT_SEL(TILE_NUM, ASCENDC_TPL_UI_LIST, 8), ASCENDC_TPL_BOOL_SEL(IS_SPLIT, 1)), );
"""


def test_the_tables_declare_the_space_and_select_its_combinations():
    space = load_src(TABLES + KERNEL, name="tpl_space").tiling_space
    assert space.op == "Scale"
    assert [p.name for p in space.params] == ["D_T_X", "TILE_NUM", "IS_SPLIT"]
    assert space.params[1].options == (0, 1, 2, 4, 5, 8, 10)        # UI_MIX: ranges [0, 2], [4, 5], then 8, 10
    legal = {(str(c["D_T_X"]), c["TILE_NUM"], c["IS_SPLIT"]) for c in space.legal()}
    assert legal == {("float16", 1, 0), ("float16", 2, 0), ("float32", 8, 1), ("bfloat16", 8, 1)}


@pytest.mark.parametrize("dtype, tile, split, sign", [(half, 2, 0, 1), (float32, 8, 1, 1), (bfloat16, 8, 1, -1)])
def test_a_tiling_key_launches_its_instantiation(dtype, tile, split, sign):
    mod = load_src(TABLES + KERNEL, name="tpl_launch")
    assert mod.scale.tiling_space is mod.tiling_space
    key = mod.tiling_space.tiling_key(D_T_X=dtype, TILE_NUM=tile, IS_SPLIT=split)
    x, y = np.arange(8).astype(dtype), np.zeros(8, dtype)
    launch(mod.tiling_space.instance(key), 1, x, y, 8)
    assert np.array_equal(y.astype(np.float32), sign * (np.arange(8, dtype=np.float32) * tile + split))


def test_an_unselected_combination_stops_in_the_host():
    space = load_src(TABLES + KERNEL, name="tpl_unselected").tiling_space
    with pytest.raises(TilingError, match="no kernel is compiled for D_T_X=half, TILE_NUM=8, IS_SPLIT=1"):
        space.tiling_key(D_T_X=half, TILE_NUM=8, IS_SPLIT=1)


def test_tables_without_a_matching_kernel_template_are_a_diagnostic():
    renamed = KERNEL.replace("IS_SPLIT", "SPLIT")
    with pytest.raises(CompileError, match=r"ASCENDC_TPL_ARGS_DECL declares D_T_X, IS_SPLIT, TILE_NUM but no "
                                           r"__global__ kernel template has exactly these template parameters"):
        load_src(TABLES + renamed, name="tpl_nomatch")


def test_a_source_without_tables_has_no_space():
    mod = load_src(KERNEL, name="tpl_none")
    assert mod.tiling_space is None and mod.scale.tiling_space is None
