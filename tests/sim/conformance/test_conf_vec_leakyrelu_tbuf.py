"""Conformance family "LeakyRelu with TBuf": a tiled kernel that keeps its scratch in a TBuf (VECCALC),
written from the LeakyRelu and TBuf pages, exact against numpy; plus the documented dtype rule."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (DataCopy, DtypeError, GetBlockIdx, GetBlockNum, GlobalTensor, LeakyRelu, Muls, TBuf, TPipe,
                        TPosition, TQue, float32, half, int16, kernel, launch)
from vec_util import assert_same, raises_rule, vector_result

TILE = 256


@kernel
def leaky_relu_tbuf(x, z, alpha, scale, tiles):
    """z = LeakyRelu(x * scale, alpha), the product staged in a TBuf."""
    T = x.dtype
    n = tiles * TILE
    xGm, zGm = GlobalTensor(T), GlobalTensor(T)
    xGm.SetGlobalBuffer(x + n * GetBlockIdx(), n)
    zGm.SetGlobalBuffer(z + n * GetBlockIdx(), n)
    pipe = TPipe()
    qin, qout = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
    tmp = TBuf(TPosition.VECCALC)
    pipe.InitBuffer(qin, 2, TILE * T.itemsize)
    pipe.InitBuffer(qout, 2, TILE * T.itemsize)
    pipe.InitBuffer(tmp, TILE * T.itemsize)
    for i in range(tiles):
        xl = qin.AllocTensor(T)
        DataCopy(xl, xGm[i * TILE], TILE)
        qin.EnQue(xl)
        xl = qin.DeQue(T)
        t = tmp.Get(T)
        zl = qout.AllocTensor(T)
        Muls(t, xl, scale, TILE)
        LeakyRelu(zl, t, alpha, TILE)
        qout.EnQue(zl)
        qin.FreeTensor(xl)
        zl = qout.DeQue(T)
        DataCopy(zGm[i * TILE], zl, TILE)
        qout.FreeTensor(zl)


@pytest.mark.parametrize("dtype", [half, float32], ids=["half", "float"])
def test_leaky_relu_with_tbuf_matches_numpy(dtype):
    blocks, tiles, alpha, scale = 4, 3, 0.125, 1.5
    x = np.random.default_rng(3).uniform(-8, 8, blocks * tiles * TILE).astype(dtype)
    z = np.zeros_like(x)
    launch(leaky_relu_tbuf, blocks, x, z, alpha, scale, tiles)
    t = (x * np.asarray(scale, dtype)).astype(dtype)                        # Muls rounds in the dtype
    expected = np.where(t >= 0, t, (t * np.asarray(alpha, dtype)).astype(dtype))
    assert_same(z, expected)
    assert (z < 0).any() and (z > 0).any()                                  # both branches exercised


def test_leaky_relu_repeat_form_masks_lanes():
    x = np.linspace(-4, 4, 256).astype(half)
    from ascend_sim import UnaryRepeatParams
    z = vector_result(lambda x, z: LeakyRelu(z, x, 0.5, 64, 2, UnaryRepeatParams()), x,
                      out_like=np.full(256, 7, half))
    lanes = (np.arange(256) % 128) < 64
    expected = np.where(lanes, np.where(x >= 0, x, x * np.asarray(0.5, half)), 7).astype(half)
    assert_same(z, expected)


def test_leaky_relu_rejects_int16():
    x = np.arange(128, dtype=int16)
    with raises_rule(DtypeError, "LeakyRelu supports half, float", "int16_t", at="LeakyRelu(z, x, 1, 128)"):
        vector_result(lambda x, z: LeakyRelu(z, x, 1, 128), x, out_like=np.zeros(128, int16))
