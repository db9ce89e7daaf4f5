"""Compares (a tensor against a scalar, whole 256-byte repeats only, the tail's bits kept) and Rsqrt, exact
against numpy; their documented dtype rules."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import CMPMODE, ArgumentError, Compares, DtypeError, Rsqrt, UnaryRepeatParams, float32, half, int32
from vec_util import assert_same, raises_rule, vector_result

MODES = {CMPMODE.LT: np.less, CMPMODE.GT: np.greater, CMPMODE.EQ: np.equal, CMPMODE.LE: np.less_equal,
         CMPMODE.GE: np.greater_equal, CMPMODE.NE: np.not_equal}


@pytest.mark.parametrize("mode", list(MODES), ids=lambda m: m.name)
@pytest.mark.parametrize("dtype", [half, float32], ids=["half", "float"])
def test_compares_every_mode(mode, dtype):
    x = np.random.default_rng(1).integers(-3, 4, 256).astype(dtype)
    bits = vector_result(lambda x, z: Compares(z, x, 1, mode, 256), x, out_like=np.zeros(32, np.uint8))
    assert_same(bits, np.packbits(MODES[mode](x, np.asarray(1, dtype)), bitorder="little"))


def test_compares_skips_the_partial_repeat():
    x = np.arange(100, dtype=float32)                                     # 64 + a 36-element tail
    bits = vector_result(lambda x, z: Compares(z, x, 10.0, CMPMODE.LT, 100), x, out_like=np.full(13, 0xAA, np.uint8))
    expected = np.full(13, 0xAA, np.uint8)
    expected[:8] = np.packbits(x[:64] < 10, bitorder="little")
    assert_same(bits, expected)


def test_compares_int32_equality_only():
    x = np.arange(64, dtype=int32) % 5
    bits = vector_result(lambda x, z: Compares(z, x, 2, CMPMODE.EQ, 64), x, out_like=np.zeros(8, np.uint8))
    assert_same(bits, np.packbits(x == 2, bitorder="little"))
    with raises_rule(DtypeError, "int32_t supports CMPMODE.EQ only", "LT", at="Compares(z, x, 2, CMPMODE.LT, 64)"):
        vector_result(lambda x, z: Compares(z, x, 2, CMPMODE.LT, 64), x, out_like=np.zeros(8, np.uint8))
    with raises_rule(ArgumentError, "less than one 256-byte repeat", at="Compares(z, x, 2, CMPMODE.EQ, 10)"):
        vector_result(lambda x, z: Compares(z, x, 2, CMPMODE.EQ, 10), x, out_like=np.zeros(8, np.uint8))


@pytest.mark.parametrize("dtype", [half, float32], ids=["half", "float"])
def test_rsqrt(dtype):
    x = np.random.default_rng(2).uniform(0.01, 100, 300).astype(dtype)
    z = vector_result(lambda x, z: Rsqrt(z, x, 300), x, out_like=np.zeros(300, dtype))
    assert_same(z, (1 / np.sqrt(x.astype(np.float64))).astype(dtype))
    z = vector_result(lambda x, z: Rsqrt(z, x, 8, 1, UnaryRepeatParams()), x, out_like=np.zeros(300, dtype))
    assert_same(z[:8], (1 / np.sqrt(x[:8].astype(np.float64))).astype(dtype))
    assert (z[8:] == 0).all()


def test_rsqrt_rejects_int32():
    x = np.ones(64, int32)
    with raises_rule(DtypeError, "Rsqrt supports half, float", "int32_t", at="Rsqrt(z, x, 64)"):
        vector_result(lambda x, z: Rsqrt(z, x, 64), x, out_like=x)
