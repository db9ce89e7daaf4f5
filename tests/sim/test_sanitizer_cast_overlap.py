"""Cast with src and dst sharing bytes (memcheck): what the pages forbid fails at the learner's line, the in-place
casts they allow stay exact.

Sources (https://github.com/cannmirror/asc-devkit, docs/zh/api/SIMD-API/): 基础API/Memory矢量计算/类型转换/Cast.md,
约束说明 ("对于长度较小的数据类型转换为长度较大的数据类型时，地址重叠可能会导致结果错误"), and 通用说明和约束.md, 通用地址重叠约束
(one iteration: 100% overlap or none; no earlier iteration's dst over a later iteration's src).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from ascend_sim import (ArgumentError, Cast, DataCopy, HardEvent, RoundMode, SanitizerWarning, UnaryRepeatParams,
                        float32, half, int32, kernel, launch)
from kernels_util import assert_same, gm, handoff, raises_rule, scratch


@kernel
def cast_at(x, z, cfg):
    """Stage x into a UB buffer at byte 0, Cast it to z's dtype at byte ``dst_at`` of the same buffer, copy z out."""
    n, dst_at, form, mode = cfg
    buf = scratch(4096, np.uint8)
    src = buf.ReinterpretCast(x.dtype)[:n]
    DataCopy(src, gm(x), n)
    handoff(HardEvent.MTE2_V)
    dst = buf[dst_at:].ReinterpretCast(z.dtype)[:n]
    wide = max(x.dtype.itemsize, z.dtype.itemsize)      # the repeat form: 256 bytes of the wider type per repeat
    params = UnaryRepeatParams(1, 1, 8 * z.dtype.itemsize // wide, 8 * x.dtype.itemsize // wide)
    if form == "count":
        Cast(dst, src, mode, n)  # <- the cast
    else:
        Cast(dst, src, mode, 256 // wide, n * wide // 256, params)  # <- repeat cast
    handoff(HardEvent.V_MTE3)
    DataCopy(gm(z), dst, n)


def cast(x: np.ndarray, out_dtype, dst_at: int, form: str = "count") -> np.ndarray:
    z = np.zeros(x.size, out_dtype)
    narrowing = np.dtype(out_dtype).itemsize < x.dtype.itemsize or np.dtype(out_dtype).kind != "f"
    launch(cast_at, 1, x, z, (x.size, dst_at, form, RoundMode.CAST_RINT if narrowing else RoundMode.CAST_NONE))
    return z


def values(n: int, dtype) -> np.ndarray:
    return (np.random.default_rng(n).integers(-1000, 1000, n) / 8).astype(dtype)


# ------------------------------------------------------------------ forbidden: errors at the Cast line
@pytest.mark.parametrize("form,at", [("count", "<- the cast"), ("repeat", "<- repeat cast")])
def test_half_to_float_in_place_is_refused(form, at):
    """A wider dst over its src: iteration 0 writes float bytes 0..255 over the halves iteration 1 reads."""
    with raises_rule(ArgumentError, "Cast from half to float: src (UB bytes 0..255) and dst (UB bytes 0..511) share "
                     "bytes 0..255", "converting to a wider type", "地址重叠可能会导致结果错误", "通用地址重叠约束",
                     "separate buffer", at=at):
        cast(values(128, half), float32, 0, form)


def test_half_to_float_one_iteration_in_place_is_refused_too():
    """64 halves, one iteration: the Cast page forbids any overlap of a wider dst (the order of one iteration's
    reads and writes is not published)."""
    with raises_rule(ArgumentError, "src (UB bytes 0..127) and dst (UB bytes 0..255)", at="<- the cast"):
        cast(values(64, half), float32, 0)


def test_float_to_half_with_a_shifted_dst_is_refused():
    """float -> half with dst 128 bytes in: iteration 0 writes bytes 128..255 inside its own source, from another
    start (a partial overlap within one iteration)."""
    with raises_rule(ArgumentError, "Cast from float to half", "iteration 0 writes from byte 128 and reads from byte 0",
                     "单次迭代内", at="<- the cast"):
        cast(values(256, float32), half, 128)


def test_float_to_half_with_dst_over_a_later_source_is_refused():
    """dst 256 bytes in: iteration 0 writes bytes 256..383, which iteration 1 reads."""
    with raises_rule(ArgumentError, "iteration 0 writes byte 256, which iteration 1 reads later", "多次迭代间",
                     at="<- the cast"):
        cast(values(256, float32), half, 256)


def test_zeros_cast_in_place_to_a_wider_type_warn_and_run():
    """The rule is broken, but zeros keep their bytes: the chip's result is the same either way (a warning)."""
    with pytest.warns(SanitizerWarning, match="Cast from half to float") as caught:
        z = cast(np.zeros(128, half), float32, 0)
    assert_same(z, np.zeros(128, np.float32))
    assert isinstance(caught[0].message.error, ArgumentError)


# ------------------------------------------------------------------ allowed: exact, no finding
@pytest.mark.parametrize("form", ["count", "repeat"])
def test_float_to_half_in_place_runs_exact(form):
    """Same start: each iteration's half dst lies inside the float bytes it read; no later iteration reads them."""
    x = values(256, float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(cast(x, half, 0, form), x.astype(np.float16))


def test_same_width_in_place_runs_exact():
    x = values(256, float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(cast(x, int32, 0), np.rint(x).astype(np.int32))


@pytest.mark.parametrize("dst_at", [512, 1024])
def test_dst_apart_from_src_runs_exact(dst_at):
    """half -> float right after the 512 bytes of src, or further on (no shared byte): exact, no finding."""
    x = values(256, half)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(cast(x, float32, dst_at), x.astype(np.float32))
