"""Vector instructions against numpy references in the operands' dtype.

Count form for every op and dtype, the mask/repeat form (continuous mask, bit mask,
block and repeat strides, 255 repeats) for Add, Mul, Adds and Muls, Cast with every
RoundMode, Compare/Select, the reductions, and the argument errors.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (SetDeqScale, CMPMODE, SELMODE, Abs, Add, Adds, AlignmentError, ArgumentError, Axpy, BinaryRepeatParams,
                        Cast, Compare, Div, Duplicate, DtypeError, Exp, Ln, Max, Maxs, Min, Mins, Mul, Muls,
                        OutOfBoundsError, Reciprocal, ReduceMax, ReduceMin, ReduceSum, Relu, RoundMode, Select,
                        Sqrt, Sub, UnaryRepeatParams, WholeReduceMax, WholeReduceMin, WholeReduceSum, bfloat16,
                        float32, half, int8, int16, int32, uint8)
from ascend_sim.api.ops.conversion import CAST_TABLE
from ascend_sim.api.ops.vector import ReduceOrder
from ascend_sim.api.ops.dtype_table import allowed
from kernels_util import (FLOAT_DTYPES, assert_same, assert_within_ulp, exact_reference, no_warnings, raises_rule,
                          random_array, repeat_lanes, round_to, run_on_ub, vector_result)

N = 200                     # not a whole number of 256-byte repeats: the tail matters
INT_DTYPES = (int16, int32)


def ids(dtype) -> str:
    return np.dtype(dtype).name


# ============================================================================ count form
BINARY = {"Add": (Add, np.add), "Sub": (Sub, np.subtract), "Mul": (Mul, np.multiply), "Div": (Div, np.divide),
          "Max": (Max, np.maximum), "Min": (Min, np.minimum)}
UNARY = {"Abs": (Abs, np.abs, 0), "Relu": (Relu, lambda v: np.maximum(v, 0), 0), "Sqrt": (Sqrt, np.sqrt, 0),
         "Reciprocal": (Reciprocal, lambda v: 1 / v, 0), "Exp": (Exp, np.exp, 4), "Ln": (Ln, np.log, 4)}
SCALAR = {"Adds": (Adds, np.add), "Muls": (Muls, np.multiply), "Maxs": (Maxs, np.maximum),
          "Mins": (Mins, np.minimum)}
FLOAT_ONLY = {"Div", "Sqrt", "Reciprocal", "Exp", "Ln"}


def op_dtypes(table):
    """The dtypes each op takes on Atlas A2 (its row of dtype_table; test_dtype_table.py checks the rows)."""
    return [pytest.param(name, dt, id=f"{name}-{ids(dt)}") for name in table
            for dt in FLOAT_DTYPES + (() if name in FLOAT_ONLY else INT_DTYPES) if np.dtype(dt) in allowed(name)]


@pytest.mark.parametrize("name, dtype", op_dtypes(BINARY))
def test_binary_op_matches_numpy(name, dtype):
    instr, ref = BINARY[name]
    rng = np.random.default_rng(1)
    x, y = random_array(rng, dtype, N), random_array(rng, dtype, N, 1, 9)
    z = vector_result(lambda x, y, z: instr(z, x, y, N), x, y, out_like=np.zeros(N, dtype))
    assert_same(z, exact_reference(ref, dtype, x, y))


@pytest.mark.parametrize("name, dtype", op_dtypes(UNARY))
def test_unary_op_matches_numpy(name, dtype):
    instr, ref, ulps = UNARY[name]           # ulps: Exp/Ln are approximations (numpy's float32 ones to < 4 ulp)
    x = random_array(np.random.default_rng(2), dtype, N, -4, 4)
    if name in ("Sqrt", "Ln"):
        x = np.abs(x) + np.ones((), dtype)
    z = vector_result(lambda x, z: instr(z, x, N), x, out_like=np.zeros(N, dtype))
    if ulps:
        assert_within_ulp(z, exact_reference(ref, dtype, x), ulps)
    else:
        assert_same(z, exact_reference(ref, dtype, x))


@pytest.mark.parametrize("name, dtype", op_dtypes(SCALAR))
def test_scalar_op_matches_numpy(name, dtype):
    instr, ref = SCALAR[name]
    x = random_array(np.random.default_rng(3), dtype, N)
    s = np.asarray(1.5 if np.dtype(dtype).kind == "f" else 3).astype(dtype)
    z = vector_result(lambda x, z: instr(z, x, s.item(), N), x, out_like=np.zeros(N, dtype))
    assert_same(z, exact_reference(lambda v: ref(v, s.astype(v.dtype)), dtype, x))


@pytest.mark.parametrize("dtype", (half, float32), ids=ids)
def test_axpy_adds_scaled_src_to_dst_with_two_roundings(dtype):
    rng = np.random.default_rng(4)
    x, acc = random_array(rng, dtype, N), random_array(rng, dtype, N)
    z = vector_result(lambda x, z: Axpy(z, x, 0.75, N), x, out_like=acc)
    assert_same(z, exact_reference(np.add, dtype, exact_reference(lambda v: v * 0.75, dtype, x), acc))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES, ids=ids)
def test_duplicate_fills_count_elements(dtype):
    z = vector_result(lambda z: Duplicate(z, 7, N - 8), out_like=np.full(N, 3, dtype))
    assert_same(z, np.array([7] * (N - 8) + [3] * 8, dtype))


def test_duplicate_repeat_form_uses_block_and_repeat_strides():
    start = np.zeros(512, half)
    z = vector_result(lambda z: Duplicate(z, 5.0, 64, 2, 2, 16), out_like=start)
    expected = start.copy()
    expected[repeat_lanes(2, 64, 2, 2, 16)] = 5
    assert_same(z, expected)


def test_reference_check_catches_a_missing_tail_and_an_offset():
    rng = np.random.default_rng(5)
    x, y = random_array(rng, half, N), random_array(rng, half, N)
    ref = exact_reference(np.add, half, x, y)
    no_tail = vector_result(lambda x, y, z: Add(z, x, y, N - 8), x, y, out_like=np.zeros(N, half))
    with pytest.raises(AssertionError, match="8 of 200 elements differ, first at 192"):
        assert_same(no_tail, ref)
    shifted = vector_result(lambda x, y, z: Add(z, x[16], y, N - 16), x, y, out_like=np.zeros(N, half))
    with pytest.raises(AssertionError, match="first at 0"):
        assert_same(shifted, ref)


def test_fp16_overflow_gives_inf_without_python_warnings():
    x = np.full(16, 60000, half)
    with no_warnings():
        z = vector_result(lambda x, z: Add(z, x, x, 16), x, out_like=np.zeros(16, half))
        q = vector_result(lambda x, z: Muls(z, x, 1e6, 16), x, out_like=np.zeros(16, half))
    assert np.isposinf(z).all() and np.isposinf(q).all()


# ============================================================================ mask / repeat form
# (mask, repeat, {operand: (block stride, repeat stride)}) -- half uses the 16-bit lanes, float the 32-bit ones
REPEAT_CASES = {
    "continuous-mask": (lambda lanes: lanes - 27, 3, {}),
    "bit-mask": (lambda lanes: [0xF0F0_0000_FFFF_1234, 0x8000_0000_0000_0001 if lanes == 128 else 0], 2, {}),
    "block-strides": (lambda lanes: lanes, 2, {"dst": (2, 16), "src0": (1, 8), "src1": (3, 24)}),
    "repeat-strides": (lambda lanes: lanes, 3, {"dst": (1, 10), "src0": (1, 0), "src1": (1, 4)}),
    "255-repeats": (lambda lanes: lanes, 255, {"src0": (1, 0), "src1": (1, 1)}),
}
REPEAT_OPS = {"Add": (Add, np.add, False), "Mul": (Mul, np.multiply, False),           # (instr, numpy, with scalar)
              "Adds": (Adds, np.add, True), "Muls": (Muls, np.multiply, True)}


def _strides(case: dict, operand: str) -> tuple[int, int]:
    return case.get(operand, (1, 8))


@pytest.mark.parametrize("case", REPEAT_CASES)
@pytest.mark.parametrize("dtype", (half, float32), ids=ids)
@pytest.mark.parametrize("name", REPEAT_OPS)
def test_repeat_form_touches_exactly_the_masked_strided_lanes(name, dtype, case):
    instr, ref, with_scalar = REPEAT_OPS[name]
    isz = np.dtype(dtype).itemsize
    make_mask, repeat, strides = REPEAT_CASES[case]
    mask = make_mask(256 // isz)
    lanes = {op: repeat_lanes(isz, mask, repeat, *_strides(strides, op)) for op in ("dst", "src0", "src1")}
    rng = np.random.default_rng(6)
    x, y = (random_array(rng, dtype, int(lanes[op].max()) + 1 + 16) for op in ("src0", "src1"))
    start = np.full(int(lanes["dst"].max()) + 1 + 16, -7, dtype)          # untouched lanes keep -7
    (db, dr), (ab, ar), (bb, br) = (_strides(strides, op) for op in ("dst", "src0", "src1"))
    if with_scalar:                                                       # Adds / Muls with the scalar 2
        body = (lambda x, y, z: instr(z, x, 2.0, mask, repeat, UnaryRepeatParams(db, ab, dr, ar)))
        second = np.full(lanes["src0"].size, 2, dtype)
    else:
        body = (lambda x, y, z: instr(z, x, y, mask, repeat, BinaryRepeatParams(db, ab, bb, dr, ar, br)))
        second = y[lanes["src1"]]
    expected = start.copy()
    expected[lanes["dst"]] = exact_reference(ref, dtype, x[lanes["src0"]], second)
    assert_same(vector_result(body, x, y, out_like=start), expected)


def test_repeat_zero_is_a_no_op():
    z = vector_result(lambda x, z: Add(z, x, x, 128, 0, BinaryRepeatParams()), np.ones(128, half),
                      out_like=np.full(128, 3, half))
    assert_same(z, np.full(128, 3, half))


# ============================================================================ Cast
def tricky_floats(dtype) -> np.ndarray:
    """float32 values on, a quarter, half and three quarters between neighbours of ``dtype``, both signs,
    plus subnormals, overflow and infinities."""
    rng = np.random.default_rng(8)
    base = np.concatenate([random_array(rng, dtype, 40, -3, 3), np.array([1, 2048, 0.5], dtype)]).astype(np.float64)
    nxt = np.nextafter(base.astype(dtype), np.array(np.inf, dtype)).astype(np.float64)
    steps = [base + (nxt - base) * k / 4 for k in range(4)]
    special = [6e-8, -6e-8, 3e-8, 65519, 65520, 70000, -70000, 3.3e38, np.inf, -np.inf]
    return np.concatenate(steps + [-s for s in steps] + [np.array(special)]).astype(np.float32)


NARROWING = {RoundMode.CAST_NONE: "rint", RoundMode.CAST_RINT: "rint", RoundMode.CAST_FLOOR: "floor",
             RoundMode.CAST_CEIL: "ceil", RoundMode.CAST_ROUND: "round", RoundMode.CAST_TRUNC: "trunc",
             RoundMode.CAST_ODD: "odd"}


def cast_result(x: np.ndarray, dtype, mode: RoundMode) -> np.ndarray:
    """Cast x to dtype; a (src, dst, mode) outside the Atlas A2 table must be refused (then None)."""
    n = x.size
    if mode not in CAST_TABLE.get((x.dtype, np.dtype(dtype)), ()):
        with pytest.raises((ArgumentError, DtypeError), match="Cast: "):
            vector_result(lambda x, z: Cast(z, x, mode, n), x, out_like=np.zeros(n, dtype))
        return None
    return vector_result(lambda x, z: (SetDeqScale(1.0), Cast(z, x, mode, n)), x, out_like=np.zeros(n, dtype))


@pytest.mark.parametrize("mode", list(RoundMode), ids=lambda m: m.name)
@pytest.mark.parametrize("dtype", (half, bfloat16), ids=ids)
def test_cast_float32_narrowing_rounds_by_mode(dtype, mode):
    x = tricky_floats(dtype)
    with no_warnings():
        z = cast_result(x, dtype, mode)
    if z is not None:
        assert_same(z, round_to(x, dtype, NARROWING[mode]))


@pytest.mark.parametrize("dtype", (half, bfloat16), ids=ids)
def test_cast_to_nearest_takes_the_ieee_cast_only_where_it_is_one_correct_rounding(dtype):
    """CAST_NONE/CAST_RINT between floats use numpy's cast (fast); it must equal the exact rounding.

    Inputs: every midpoint between neighbouring ``dtype`` values (the ties), random float32 bit
    patterns (subnormals, inf, NaN) and, to ``dtype``, every 2-byte pattern of the other 2-byte float.
    """
    from ascend_sim.api.ops.vector import _round_float, cast_values
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    with np.errstate(all="ignore"):
        here, up = bits.view(dtype).astype(np.float64), np.nextafter(bits.view(dtype), np.array(np.inf, dtype))
        ties = ((here + up.astype(np.float64)) / 2).astype(np.float32)
        noise = np.random.default_rng(3).integers(0, 2**32, 100_000, dtype=np.uint64).astype(np.uint32)
        other = bits.view(bfloat16 if dtype == half else half)
        for x in (ties[np.isfinite(ties)], noise.view(np.float32), other):
            for mode in (RoundMode.CAST_NONE, RoundMode.CAST_RINT):
                fast, exact = cast_values(x, dtype, mode), _round_float(x, np.dtype(dtype), mode)
                both_nan = np.isnan(fast.astype(np.float32)) & np.isnan(exact.astype(np.float32))
                assert np.array_equal(fast.view(np.uint16)[~both_nan], exact.view(np.uint16)[~both_nan])


@pytest.mark.parametrize("mode", list(RoundMode), ids=lambda m: m.name)
def test_cast_widening_is_exact_and_takes_cast_none_only(mode):
    x = random_array(np.random.default_rng(9), half, 64, -100, 100)
    z = cast_result(x, float32, mode)
    assert (z is None) == (mode is not RoundMode.CAST_NONE)
    if z is not None:
        assert_same(z, x.astype(np.float32))


#                   2.5 -2.5  0.5 -0.5  1.7 -1.7  (then +big, -big, inf, -inf saturate)
TO_INT = {RoundMode.CAST_RINT: [2, -2, 0, 0, 2, -2], RoundMode.CAST_NONE: [2, -2, 0, 0, 2, -2],
          RoundMode.CAST_FLOOR: [2, -3, 0, -1, 1, -2], RoundMode.CAST_CEIL: [3, -2, 1, 0, 2, -1],
          RoundMode.CAST_ROUND: [3, -3, 1, -1, 2, -2], RoundMode.CAST_TRUNC: [2, -2, 0, 0, 1, -1]}


@pytest.mark.parametrize("mode", TO_INT, ids=lambda m: m.name)
@pytest.mark.parametrize("src, dst", [(float32, int32), (half, int16), (float32, int16), (half, int8)],
                         ids=lambda d: ids(d))
def test_cast_float_to_int_rounds_by_mode_and_saturates(src, dst, mode):
    big = 60000.0 if src == half else 3e9
    x = np.array([2.5, -2.5, 0.5, -0.5, 1.7, -1.7, big, -big, np.inf, -np.inf, np.nan], src)
    info = np.iinfo(dst)
    with no_warnings():
        z = cast_result(x, dst, mode)
    if z is not None:
        assert_same(z, np.array(TO_INT[mode] + [info.max, info.min, info.max, info.min, 0], dst))


INT_TO_FLOAT = {                 # 2**24+1   2**24+3  -(2**24+1)   (float32 has a 24-bit mantissa)
    RoundMode.CAST_RINT: [16777216, 16777220, -16777216],
    RoundMode.CAST_FLOOR: [16777216, 16777218, -16777218],
    RoundMode.CAST_CEIL: [16777218, 16777220, -16777216],
    RoundMode.CAST_ROUND: [16777218, 16777220, -16777218],
    RoundMode.CAST_TRUNC: [16777216, 16777218, -16777216],
}


@pytest.mark.parametrize("mode", INT_TO_FLOAT, ids=lambda m: m.name)
def test_cast_int32_to_float_rounds_by_mode(mode):
    x = np.array([2**24 + 1, 2**24 + 3, -(2**24 + 1)], np.int32)
    assert_same(cast_result(x, float32, mode), np.array(INT_TO_FLOAT[mode], np.float32))
    # to half: x * SetDeqScale's scale (1.0), "roundMode不生效": 2049 is a tie between 2048 and 2050 (to even);
    # 70000 overflows
    got = cast_result(np.array([2049, 70000], np.int32), half, mode)
    assert_same(got, round_to(np.array([2049.0, 70000.0]), half, "rint"))


def test_cast_rejects_a_round_mode_that_is_not_a_roundmode():
    with raises_rule(ArgumentError, "round mode must be a RoundMode", at='Cast(z, x, "rint", 16)'):
        run_on_ub(lambda x, z: Cast(z, x, "rint", 16), np.ones(16, float32), np.zeros(16, half))


# ============================================================================ Compare / Select
@pytest.mark.parametrize("mode", list(CMPMODE), ids=lambda m: m.name)
@pytest.mark.parametrize("dtype", (half, float32), ids=ids)
def test_compare_packs_one_bit_per_element_little_endian(dtype, mode):
    n = 256 // np.dtype(dtype).itemsize * 2
    rng = np.random.default_rng(10)
    x, y = (rng.integers(-2, 3, n).astype(dtype) for _ in range(2))
    bits = vector_result(lambda x, y, z: Compare(z, x, y, mode, n), x, y, out_like=np.zeros(n // 8, uint8))
    fn = {"lt": np.less, "gt": np.greater, "eq": np.equal, "le": np.less_equal, "ge": np.greater_equal,
          "ne": np.not_equal}[mode.value]
    assert_same(bits, np.packbits(fn(x, y), bitorder="little"))


@pytest.mark.parametrize("scalar_mode", [False, True], ids=["tensor-tensor", "tensor-scalar"])
def test_select_takes_src0_where_the_bit_is_set(scalar_mode):
    n = 256
    rng = np.random.default_rng(11)
    mask = rng.integers(0, 256, n // 8).astype(np.uint8)
    x, y = random_array(rng, half, n), random_array(rng, half, n)

    def body(m, x, y, z):
        if scalar_mode:
            Select(z, m, x, 9.0, SELMODE.VSEL_TENSOR_SCALAR_MODE, n)
        else:
            Select(z, m, x, y, SELMODE.VSEL_TENSOR_TENSOR_MODE, n)
    z = vector_result(body, mask, x, y, out_like=np.zeros(n, half))
    other = np.full(n, 9, half) if scalar_mode else y
    assert_same(z, np.where(np.unpackbits(mask, bitorder="little").astype(bool), x, other))


def test_compare_needs_room_for_the_bits():
    x = np.ones(256, half)        # a count with a partial last repeat: tests/sim/conformance (the tail is skipped)
    with raises_rule(OutOfBoundsError, "256 result bits need 32 bytes but dst holds 16",
                     at="Compare(z, x, x, CMPMODE.GT, 256)"):
        run_on_ub(lambda x, z: Compare(z, x, x, CMPMODE.GT, 256), x, np.zeros(16, uint8))


# ============================================================================ reductions
@pytest.mark.parametrize("cal_index", [False, True])
@pytest.mark.parametrize("dtype", (half, float32), ids=ids)
@pytest.mark.parametrize("instr, fn, arg", [(ReduceMax, np.max, np.argmax), (ReduceMin, np.min, np.argmin)],
                         ids=["ReduceMax", "ReduceMin"])
def test_reduce_max_min_value_and_index(instr, fn, arg, dtype, cal_index):
    x = random_array(np.random.default_rng(12), dtype, N)
    start = np.full(16, -7, dtype)
    z = vector_result(lambda x, w, z: instr(z, x, w, N, cal_index), x, np.zeros(N, dtype), out_like=start)
    index_bits = np.array([arg(x)], np.uint16 if dtype == half else np.uint32).view(dtype)
    assert_same(z, np.concatenate([[fn(x)], index_bits if cal_index else [start[1]], start[2:]]).astype(dtype))


@pytest.mark.parametrize("dtype", (half, float32), ids=ids)
def test_reduce_sum_of_exact_values(dtype):
    x = (np.random.default_rng(13).integers(-64, 64, N) / 8).astype(dtype)
    z = vector_result(lambda x, w, z: ReduceSum(z, x, w, N), x, np.zeros(N, dtype), out_like=np.zeros(16, dtype))
    assert_same(z, exact_reference(lambda v: np.concatenate([[v.sum()], np.zeros(15)]), dtype, x))


def test_reduce_sum_adds_in_half_as_the_page_orders():
    # ReduceSum.md, Atlas A2 count form: a binary tree in the repeat, every add in half. The tree adds 2048 + 1
    # (rounds back to 2048: 2049 is a tie between 2048 and 2050, even wins) and 1 + 0, then 2048 + 1 again: 2048.
    # An fp32 sum rounded once gives 2050. tests/sim/test_reduce_counter_mode.py checks the order in general.
    x = np.array([2048, 1, 1] + [0] * 13, half)
    z = vector_result(lambda x, w, z: ReduceSum(z, x, w, 16), x, np.zeros(16, half), out_like=np.zeros(16, half))
    assert z[0] == 2048


def test_reduce_needs_a_non_empty_range():
    with raises_rule(ArgumentError, "count must be at least 1", at="ReduceSum(z, x, x, 0)"):
        run_on_ub(lambda x, z: ReduceSum(z, x, x, 0), np.ones(16, half), np.zeros(16, half))


WHOLE_MASKS = {"continuous": lambda lanes: lanes // 2 + 3, "bits": lambda lanes: [0x0F0F_0000_1111_FFFF, 0]}


@pytest.mark.parametrize("mask_kind", WHOLE_MASKS)
@pytest.mark.parametrize("dtype", (half, float32), ids=ids)
def test_whole_reduce_sum_per_repeat(dtype, mask_kind):
    lanes = 256 // np.dtype(dtype).itemsize
    mask, repeat = WHOLE_MASKS[mask_kind](lanes), 4
    x = (np.random.default_rng(14).integers(-32, 32, lanes * repeat) / 4).astype(dtype)
    z = vector_result(lambda x, z: WholeReduceSum(z, x, mask, repeat, 1, 1, 8), x, out_like=np.zeros(16, dtype))
    sums = x[repeat_lanes(np.dtype(dtype).itemsize, mask, repeat, 1, 8)].astype(np.float64).reshape(repeat, -1)
    assert_same(z, np.concatenate([sums.sum(axis=1), np.zeros(16 - repeat)]).astype(dtype))


ORDERS = {ReduceOrder.ORDER_VALUE_INDEX: ("v", "i"), ReduceOrder.ORDER_INDEX_VALUE: ("i", "v"),
          ReduceOrder.ORDER_ONLY_VALUE: ("v",), ReduceOrder.ORDER_ONLY_INDEX: ("i32",)}


@pytest.mark.parametrize("order", ORDERS, ids=lambda o: o.name)
@pytest.mark.parametrize("instr, arg", [(WholeReduceMax, np.argmax), (WholeReduceMin, np.argmin)],
                         ids=["WholeReduceMax", "WholeReduceMin"])
def test_whole_reduce_max_min_write_value_and_lane_index_per_order(instr, arg, order):
    mask, repeat = [0xFFFF_0000_FFFF_0000, 0x00FF], 3          # lanes 16..31, 48..63, 64..71
    x = np.random.default_rng(15).permutation(128 * repeat).astype(half)
    z = vector_result(lambda x, z: instr(z, x, mask, repeat, 1, 1, 8, order), x, out_like=np.zeros(16, half))
    lanes = repeat_lanes(2, mask, 1, 1, 8)                        # one repeat: offsets are lane numbers
    rows = x.reshape(repeat, 128)[:, lanes]
    index = lanes[arg(rows, axis=1)]
    parts = {"v": rows[np.arange(repeat), arg(rows, axis=1)], "i": index.astype(np.uint16).view(half),
             "i32": index.astype(np.uint32).view(half).reshape(repeat, 2)}
    got = np.stack([parts[p] for p in ORDERS[order]], axis=1).reshape(-1)
    assert_same(z[:got.size], got)
    assert not z[got.size:].any()


# ============================================================================ argument errors
def P():
    return BinaryRepeatParams()


# (dtype, body, error, words in its message): the error must name the body's line
ARG_ERRORS = [
    pytest.param(half, lambda x, z: Add(z, x, x, 128, 256, P()), ArgumentError,
                 ["repeatTimes 256 outside 0..255", "at most 255"], id="repeat-256"),
    pytest.param(half, lambda x, z: Add(z, x, x, 129, 1, P()), ArgumentError,
                 ["continuous mask 129 outside 1..128"], id="mask-129-half"),
    pytest.param(float32, lambda x, z: Mul(z, x, x, 65, 1, P()), ArgumentError,
                 ["continuous mask 65 outside 1..64"], id="mask-65-float"),
    pytest.param(float32, lambda x, z: Add(z, x, x, [1, 1], 1, P()), ArgumentError,
                 ["mask[1] must be 0", "64 lanes"], id="float-bitmask-high-word"),
    pytest.param(half, lambda x, z: Add(z, x, x, [1, 2, 3], 1, P()), ArgumentError,
                 ["two uint64, got 3 values"], id="bitmask-3-words"),
    pytest.param(int8, lambda x, z: Add(z, x, x, [1, 0], 1, P()), DtypeError,
                 ["Add supports int16_t, half, int32_t, float on Atlas A2, not int8_t"], id="int8-add"),
    pytest.param(half, lambda x, z: Add(z, x, x, 128, 3, P()), OutOfBoundsError,
                 ["reaches element 383", "holds 256"], id="repeat-past-tensor"),
    pytest.param(half, lambda x, z: Add(z, x, x, 128, 1), ArgumentError,
                 ["pass either a count, or mask, repeatTimes and repeat params"], id="two-args"),
    pytest.param(half, lambda x, z: Sub(z, x, x, 257), OutOfBoundsError,
                 ["count 257 exceeds the tensor's 256 half elements"], id="count-past-end"),
    pytest.param(half, lambda x, z: Max(z, x, x, -1), ArgumentError, ["count -1 is negative"],
                 id="negative-count"),
    pytest.param(int32, lambda x, z: Exp(z, x, 16), DtypeError, ["Exp supports half, float and bfloat16",
                 "not int32_t"], id="exp-on-int"),
    pytest.param(int16, lambda x, z: Div(z, x, x, 16), DtypeError, ["Div supports half, float and bfloat16"],
                 id="div-on-int"),
    pytest.param(half, lambda x, z: WholeReduceMax(z, x, [0, 0], 1), ArgumentError, ["selects no lane"],
                 id="whole-reduce-empty-mask"),
    pytest.param(half, lambda x, z: Add(z, x[8], x, 16), AlignmentError,
                 ["src0 starts at UB+16, not 32-byte aligned", "multiple of 32 bytes (16 half"],
                 id="unaligned-operand"),
]


@pytest.mark.parametrize("dtype, body, error, words", ARG_ERRORS)
def test_vector_argument_errors_name_the_rule_and_the_line(dtype, body, error, words):
    with raises_rule(error, *words, at=body):
        run_on_ub(body, np.ones(256, dtype), np.zeros(256, dtype))
