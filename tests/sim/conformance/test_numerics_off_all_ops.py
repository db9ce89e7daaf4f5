"""``launch(..., numerics=False)`` over the conformance kernels: every instruction family added for issue 13
(cube formats, Matmul API, vector/mask/bitwise/gather/reduce/transpose, static allocation, Cast, DataCopyPad)
gives the same records, cycles and layout timing-only, and leaves its arguments untouched."""
from __future__ import annotations

import importlib
import inspect

import pytest

from ascend_sim import CFG_MDL, CFG_NORM
from ascend_sim.api.launch import launch_hook
from test_numerics_off import _Twice

CASES = [
    ("test_cube_path", "test_fp16_matmul_random_values_round_once_through_f322f16"),
    ("test_cube_path", "test_int8_matmul_dequantises_per_column_with_vdeqf16"),
    ("test_cube_mix", "test_matmul_leaky_relu_mix_1_2_is_exact"),
    ("test_conf_vec_bitwise", "test_the_pages_examples"),
    ("test_conf_vec_brcb_duplicate", "test_row_scaling_with_duplicate_and_brcb"),
    ("test_conf_vec_gather", "test_gather_mask_block_stride"),
    ("test_conf_vec_reduce_tilings", "test_pair_reduce_sum"),
    ("test_conf_vec_reduce_tilings", "test_block_reduce_sum_float_dst_rep_stride"),
    ("test_conf_vec_transpose", "test_nchw_to_nc1hwc0"),
    ("test_conf_vec_mask_forms", "test_counter_mode_with_strides_and_set_mask_true"),
    ("test_conf_vec_compares_rsqrt", "test_compares_skips_the_partial_repeat"),
    ("test_conf_vec_leakyrelu_tbuf", "test_leaky_relu_repeat_form_masks_lanes"),
    ("test_conf_static", "test_static_add_double_buffered_multi_core_is_exact"),
    ("test_conf_cast", "test_int4_quantise_packs_two_values_per_byte_low_nibble_first"),
    ("test_conf_cast", "test_mask_form_selects_lanes_by_the_wider_type"),
    ("test_conf_datacopypad", "test_set_pad_value_fills_the_padding_when_is_pad_is_false"),
    ("test_matmul_api", "test_bias_through_the_bias_table_and_half_output"),
]


@pytest.mark.parametrize("module, name", CASES, ids=[f"{m}::{n}" for m, n in CASES])
def test_timing_only_matches_on_every_new_instruction_family(module, name):
    test = getattr(importlib.import_module(module), name)
    twice = _Twice()
    with launch_hook(twice):
        if "mm_cfg" in inspect.signature(test).parameters:     # test_matmul_api's fixture: both Matmul templates
            for mm_cfg in (CFG_NORM, CFG_MDL):
                test(mm_cfg=mm_cfg)
        else:
            test()
    assert twice.launches > 0
    assert twice.changed > 0            # the real launches computed something the byte check would have seen


@pytest.mark.parametrize("name", ["test_gather_base_address_and_repeat_form",
                                  "test_gather_mask_user_pattern_with_src1_repeat_stride"])
def test_data_dependent_addressing_is_refused_timing_only(name):
    """Gather's offsets and GatherMask's pattern tensor are data: a timing-only launch would time wrong addresses."""
    from ascend_sim import KernelError
    test = getattr(importlib.import_module("test_conf_vec_gather"), name)
    with launch_hook(_Twice()), pytest.raises(KernelError, match="numerics=False"):
        test()
