"""Conformance: a convolution on the cube through LoadData3D (img2col), written from the docs in C++ order.

The feature map sits in L1 as NC1HWC0 (the host's TransData); LoadData3DParamsV2 unfolds it into L0A (ZZ)
with kernel size, stride, dilation and padding; the weights (K = C1 * Kh * Kw * C0 rows, Cout columns, the
FRACTAL_Z order) go GM -> L1 (Nd2Nz) -> L0B (Nz -> Zn); Mmad; Fixpipe NZ2ND. Exact against numpy.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (ArgumentError, DataCopy, Fixpipe, FixpipeParamsV220, FmatrixMode, HardEvent,
                        IsResetLoad3dConfig, LoadData, LoadData2DParams, LoadData3DParamsV2, Mmad, MmadParams,
                        Nd2NzParams, OutOfBoundsError, QuantMode_t, SetFmatrix, SetLoadDataPaddingValue, TPipe,
                        TPosition, float32, half, kernel, launch)
from cube_kernels import ceil_to, gm, handoff, local


@kernel(core="AIC")
def conv_img2col(fmap, w, y, cfg):
    C, H, W, kh, kw, stride, dil, pads, cout, ho, wo = cfg
    c1 = C // 16
    K, M = c1 * kh * kw * 16, ho * wo
    mp = ceil_to(M, 16)
    pipe = TPipe()
    f1 = local(pipe, TPosition.A1, half, C * H * W)
    b1 = local(pipe, TPosition.B1, half, K * cout)
    a2, b2 = local(pipe, TPosition.A2, half, mp * K), local(pipe, TPosition.B2, half, K * cout)
    co1 = local(pipe, TPosition.CO1, float32, mp * cout)
    DataCopy(f1, gm(fmap, half), C * H * W)                                   # NC1HWC0, already 5HD in GM
    DataCopy(b1, gm(w, half), Nd2NzParams(1, K, cout, 0, cout, K, 1, 0))
    handoff(HardEvent.MTE2_MTE1)
    # {padList, l1H, l1W, channelSize, kExtension, mExtension, kStartPt, mStartPt, strideW, strideH, filterW,
    #  filterH, dilationFilterW, dilationFilterH, enTranspose, enSmallK, padValue}
    LoadData(a2, f1, LoadData3DParamsV2(pads, H, W, C, K, M, 0, 0, stride, stride, kw, kh, dil, dil, False, False, 0))
    for i in range(K // 16):
        LoadData(b2[i * cout * 16], b1[i * 256], LoadData2DParams(0, cout // 16, K // 16, 0, 0, True, 0))
    handoff(HardEvent.MTE1_M)
    Mmad(co1, a2, b2, MmadParams(M, cout, K, 0, False, True))
    handoff(HardEvent.M_FIX)
    Fixpipe(gm(y, float32), co1, FixpipeParamsV220(cout, M, mp, cout, False, QuantMode_t.NoQuant))


def conv_ref(x, wt, stride, dil, pads):
    """x [C, H, W], wt [Cout, C, kh, kw], pads [left, right, top, bottom] -> [Ho * Wo, Cout] (fp32)."""
    left, right, top, bottom = pads
    xp = np.pad(x.astype(np.float32), ((0, 0), (top, bottom), (left, right)))
    cout, C, kh, kw = wt.shape
    ho = (xp.shape[1] - dil * (kh - 1) - 1) // stride + 1
    wo = (xp.shape[2] - dil * (kw - 1) - 1) // stride + 1
    out = np.zeros((ho, wo, cout), np.float32)
    for i in range(kh):
        for j in range(kw):
            win = xp[:, i * dil:i * dil + stride * (ho - 1) + 1:stride, j * dil:j * dil + stride * (wo - 1) + 1:stride]
            out += np.einsum("chw,oc->hwo", win, wt[:, :, i, j].astype(np.float32))
    return out.reshape(ho * wo, cout), ho, wo


CASES = [(16, 8, 8, 3, 3, 1, 1, [1, 1, 1, 1], 32), (32, 9, 7, 3, 2, 2, 1, [0, 1, 2, 0], 16),
         (16, 10, 10, 3, 3, 1, 2, [2, 2, 2, 2], 16)]


@pytest.mark.parametrize("C, H, W, kh, kw, stride, dil, pads, cout", CASES,
                         ids=["3x3-pad1", "stride2-asym-pad-C32", "dilation2"])
def test_img2col_conv_on_the_cube_is_exact(C, H, W, kh, kw, stride, dil, pads, cout):
    rng = np.random.default_rng(C + H + kh + dil)
    x = rng.integers(-3, 4, (C, H, W)).astype(np.float16)
    wt = rng.integers(-3, 4, (cout, C, kh, kw)).astype(np.float16)
    want, ho, wo = conv_ref(x, wt, stride, dil, pads)
    fmap = x.reshape(C // 16, 16, H, W).transpose(0, 2, 3, 1)                          # NC1HWC0 (N = 1)
    wz = wt.reshape(cout, C // 16, 16, kh, kw).transpose(1, 3, 4, 2, 0).reshape(-1, cout)     # (c1, kh, kw, c0) x Cout
    y = np.zeros((ho * wo, cout), np.float32)
    launch(conv_img2col, 1, np.ascontiguousarray(fmap), np.ascontiguousarray(wz), y,
           (C, H, W, kh, kw, stride, dil, pads, cout, ho, wo))
    np.testing.assert_array_equal(y, want)


@kernel(core="AIC")
def img2col_call(fmap, params):
    pipe = TPipe()
    f1, a2 = local(pipe, TPosition.A1, half, 16 * 8 * 8), local(pipe, TPosition.A2, half, 64 * 144)
    DataCopy(f1, gm(fmap, half), 16 * 8 * 8)
    handoff(HardEvent.MTE2_MTE1)
    LoadData(a2, f1, params)


@pytest.mark.parametrize("params, error, words", [
    (LoadData3DParamsV2([1, 1, 1, 1], 8, 8, 16, 160, 64, 0, 0, 1, 1, 3, 3, 1, 1, False, False, 0), OutOfBoundsError,
     ["columns 0..159 beyond the unfolded width C1 * filterH * filterW * C0 = 144"]),
    (LoadData3DParamsV2([1, 1, 1, 1], 8, 8, 12, 144, 64, 0, 0, 1, 1, 3, 3, 1, 1, False, False, 0), ArgumentError,
     ["channelSize 12", "multiples of C0 = 16"]),
    (LoadData3DParamsV2([0, 0, 0, 0], 16, 8, 16, 16, 16, 0, 0, 1, 1, 1, 1, 1, 1, False, False, 0), OutOfBoundsError,
     ["the feature map [C1=1, 16, 8, C0=16] is 2048 elements, but the L1 tensor holds 1024"]),
], ids=["k-beyond", "channels", "fmap-beyond-l1"])
def test_img2col_rules(params, error, words):
    with pytest.raises(error) as info:
        launch(img2col_call, 1, np.zeros(16 * 8 * 8, np.float16), params)
    for w in words:
        assert w in str(info.value), str(info.value)


@kernel(core="AIC")
def img2col_registers(fmap, seen, cfg):
    """The same unfolding twice: FMATRIX and padding from the struct, then from SetFmatrix/SetLoadDataPaddingValue
    (IsResetLoad3dConfig(False, False)) with a struct whose own l1H/l1W/padList/padValue are wrong on purpose."""
    set_regs = cfg
    pipe = TPipe()
    f1 = local(pipe, TPosition.A1, half, 16 * 6 * 6)
    a, b = local(pipe, TPosition.A2, half, 48 * 144), local(pipe, TPosition.A2, half, 48 * 144)
    DataCopy(f1, gm(fmap, half), 16 * 6 * 6)
    handoff(HardEvent.MTE2_MTE1)
    LoadData(a, f1, LoadData3DParamsV2([1, 0, 1, 0], 6, 6, 16, 144, 36, 0, 0, 1, 1, 3, 3, 1, 1, False, False, 2.0))
    if set_regs:
        SetFmatrix(6, 6, [1, 0, 1, 0], FmatrixMode.FMATRIX_LEFT)
        SetLoadDataPaddingValue(2.0)
    LoadData(b, f1, LoadData3DParamsV2([0, 0, 0, 0], 3, 3, 16, 144, 36, 0, 0, 1, 1, 3, 3, 1, 1, False, False, 7.0),
             IsResetLoad3dConfig(False, False))
    handoff(HardEvent.MTE1_M)
    seen.extend([a.peek(), b.peek()])


def test_setfmatrix_and_padding_registers_replace_the_structs_values():
    fmap = (np.arange(16 * 6 * 6, dtype=np.float32) + 10).astype(np.float16)     # no pixel equals the pad value
    seen: list[np.ndarray] = []
    launch(img2col_registers, 1, fmap, seen, True)
    np.testing.assert_array_equal(seen[0], seen[1])
    assert (seen[0] == 2.0).any()                # the padded pixels took padValue 2


def test_load3d_from_registers_never_set_names_setfmatrix():
    with pytest.raises(ArgumentError, match="before any SetFmatrix"):
        launch(img2col_registers, 1, np.zeros(16 * 6 * 6, np.float16), [], False)
