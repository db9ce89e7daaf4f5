"""Integer semantics of C++: unsigned wrap-around, conversions to narrower and signed types, division truncating
toward zero, shifts; each result against numpy's fixed-width arithmetic."""
import numpy as np

from cxx_util import load_src, run_scalars

FUNCS = load_src("""
uint32_t mul_add(uint32_t a, uint32_t b) { return a * b + 7u; }
uint32_t neg(uint32_t a) { return -a; }
int32_t narrow(uint32_t a) { return a; }
int8_t to_i8(int32_t a) { return (int8_t)a; }
uint16_t to_u16(int32_t a) { return static_cast<uint16_t>(a); }
int32_t sdiv(int32_t a, int32_t b) { return a / b; }
int32_t srem(int32_t a, int32_t b) { return a % b; }
uint32_t udiv(uint32_t a, uint32_t b) { return a / b; }
bool mixed_less(int32_t a, uint32_t b) { return a < b; }
uint32_t shift(uint32_t a, uint32_t k) { return (a << k) >> 1; }
uint32_t count_up(uint32_t a) { a += 10; a++; return a; }
int32_t from_float(float f) { return (int32_t)f; }
""", name="integers")


def test_unsigned_arithmetic_wraps_like_uint32():
    a, b = np.uint32(0xFFFF_FFF0), np.uint32(0x1234_5678)
    with np.errstate(over="ignore"):
        assert FUNCS.mul_add(int(a), int(b)) == int(a * b + np.uint32(7))
    assert FUNCS.neg(5) == 2**32 - 5
    assert FUNCS.count_up(2**32 - 3) == 8


def test_conversions_to_narrower_and_signed_types_wrap():
    assert FUNCS.narrow(0xFFFF_FFFF) == -1
    assert FUNCS.narrow(0x8000_0000) == np.int32(np.uint32(0x8000_0000).astype(np.int32))
    assert FUNCS.to_i8(200) == np.int32(200).astype(np.int8)
    assert FUNCS.to_u16(-1) == 0xFFFF
    assert FUNCS.from_float(-2.75) == -2


def test_signed_division_truncates_toward_zero():
    for a, b in [(-7, 2), (7, -2), (-7, -2), (7, 2), (-1, 3)]:
        assert FUNCS.sdiv(a, b) == int(np.fix(a / b)), (a, b)
        assert FUNCS.srem(a, b) == int(np.fmod(a, b)), (a, b)
    assert FUNCS.udiv(7, 2) == 3


def test_mixed_signed_unsigned_comparison_converts_to_unsigned():
    assert FUNCS.mixed_less(-1, 1) is False       # -1 becomes 4294967295
    assert FUNCS.mixed_less(0, 1) is True


def test_shifts_wrap_before_the_right_shift():
    assert FUNCS.shift(0x8000_0001, 1) == ((0x8000_0001 << 1) & 0xFFFF_FFFF) >> 1


def test_integer_semantics_inside_a_kernel():
    out = run_scalars("""
    uint32_t big = 4000000000u;
    uint32_t sum = big + big;
    int32_t q = -7 / 2;
    out.SetValue(0, sum);
    out.SetValue(1, q);
    out.SetValue(2, (int64_t)(uint8_t)300);
""", 3)
    assert out.tolist() == [(4_000_000_000 * 2) % 2**32, -3, 300 % 256]


def test_divceil_rounds_up_as_the_api_defines_it():
    mod = load_src("""
uint32_t tiles(uint32_t n, uint32_t tile) { return AscendC::DivCeil(n, tile); }
int32_t tiles_signed(int32_t n, int32_t tile) { return AscendC::DivCeil(n, tile); }
""", name="divceil")
    assert [mod.tiles(n, 256) for n in (0, 1, 256, 257, 2048)] == [0, 1, 1, 2, 8]
    assert mod.tiles_signed(-9, 4) == -1          # (a + b - 1) / b = -6 / 4 truncates toward zero (floor: -2)


def test_limit_macros_of_cstdint_and_climits():
    """<cstdint>'s INTn_MIN/MAX, UINTn_MAX (reduce_pair_elem's ``uint64_t mask[2] = {UINT64_MAX, UINT64_MAX}``) and
    <climits>'s, with their C types: UINT64_MAX is unsigned long long, so ``>> 1`` is a logical shift."""
    out = run_scalars("""
    out.SetValue(0, (int64_t)UINT64_MAX);
    out.SetValue(1, UINT32_MAX);
    out.SetValue(2, INT64_MIN);
    out.SetValue(3, INT64_MAX);
    uint64_t m[2] = {UINT64_MAX, UINT64_MAX >> 1};
    out.SetValue(4, (int64_t)m[1]);
    out.SetValue(5, INT32_MIN);
    out.SetValue(6, UINT16_MAX + INT8_MIN + UINT8_MAX + INT16_MAX);
    out.SetValue(7, INT_MAX);
    out.SetValue(8, CHAR_BIT);
    out.SetValue(9, (int64_t)ULLONG_MAX == -1 && LLONG_MIN == INT64_MIN && UINT_MAX == UINT32_MAX ? 1 : 0);
""", 10, prelude="#include <climits>\n#include <cstdint>\n", name="limits")
    assert out.tolist() == [-1, 2**32 - 1, -2**63, 2**63 - 1, 2**63 - 1, -2**31, 65535 - 128 + 255 + 32767,
                            2**31 - 1, 8, 1]
