"""Cast's address-overlap rules: when its src and dst may share bytes (地址重叠).

The Ascend C API reference (https://github.com/cannmirror/asc-devkit, docs/zh/api/SIMD-API/):

- 通用说明和约束.md, section 通用地址重叠约束: one tensor may serve as source and destination, but "单次迭代内：源操作数与
  目的操作数必须100%完全重叠，不支持部分重叠" and "多次迭代间：不支持前序迭代的目的操作数与后序迭代的源操作数重叠" (the
  binary instructions' exception does not concern Cast);
- 基础API/Memory矢量计算/类型转换/Cast.md, 约束说明: "对于长度较小的数据类型转换为长度较大的数据类型时，地址重叠可能会导致结果
  错误".

So a Cast to a wider type (half -> float, uint8_t -> half, int4b_t -> half) may not overlap its source at all. A
Cast of one width, or to a narrower type, may work in place: each iteration's dst starting where its src starts
(a narrower dst lies inside the bytes the iteration has read; "100% overlap" read as the same start, since
operands of two widths cannot cover the same bytes) and no iteration writing what a later one reads
(float -> half at one address: iteration k writes bytes 128k.., which iterations k/2 <= k read).

A forbidden overlap is an ArgumentError at the learner's line when it changes bytes the instruction still reads
(the order of an iteration's reads and writes is not published, so a byte written and read by the same iteration
counts), which is the usual case; when this Cast's bytes come out the same (zeros converted in place), the chip's
result is the same whichever order it reads in, so it is a SanitizerWarning: the rule is broken, these inputs hide
it. The check costs one comparison of two byte spans unless the spans meet.
"""
from __future__ import annotations

import warnings

import numpy as np

from ascend_sim.engine.errors import ArgumentError, SanitizerWarning
from ascend_sim.hw.dtypes import ascend_name, int4b_t

PAGES = ("Cast page, 约束说明: \"对于长度较小的数据类型转换为长度较大的数据类型时，地址重叠可能会导致结果错误\"; "
         "通用说明和约束, 通用地址重叠约束")


class Operand:
    """The bytes one Cast operand touches, each with the iteration (repeat) that touches it."""

    __slots__ = ("t", "bytes", "iters")

    def __init__(self, t, elements: np.ndarray, iters: np.ndarray):
        """``elements``: element offsets from ``t``'s start (nibbles for int4b_t), one per lane; ``iters``: each
        lane's iteration."""
        self.t = t
        if t.dtype is int4b_t:
            self.bytes, self.iters = t.addr + elements // 2, iters
        else:
            s = t.dtype.itemsize
            self.bytes = (t.addr + elements[:, None] * s + np.arange(s)).reshape(-1)
            self.iters = np.repeat(iters, s)

    def span(self) -> str:
        return f"{self.t.tier.name} bytes {int(self.bytes.min())}..{int(self.bytes.max())}"


def spans_meet(dst, src, dst_lo: int, dst_hi: int, src_lo: int, src_hi: int) -> bool:
    """Whether byte spans [dst_lo, dst_hi) and [src_lo, src_hi) of the two tensors' tier meet (the cheap test)."""
    return dst.tier is src.tier and dst_lo < src_hi and src_lo < dst_hi


def _width(dtype) -> float:
    return 0.5 if dtype is int4b_t else dtype.itemsize


class Overlap:
    """A Cast whose src and dst share bytes against the rules: what to say, and the bytes at risk."""

    def __init__(self, d: Operand, a: Operand, shared: np.ndarray, why: str, risk: np.ndarray):
        self.d, self.a, self.shared, self.why, self.risk = d, a, shared, why, risk

    def report(self, new_bytes: np.ndarray | None, site) -> None:
        """Raise (the bytes at risk change, or no data to tell) or warn (they come out the same)."""
        d, a = self.d, self.a
        lo, hi = int(self.shared.min()), int(self.shared.max())
        message = (f"Cast from {ascend_name(a.t.dtype)} to {ascend_name(d.t.dtype)}: src ({a.span()}) and dst "
                   f"({d.span()}) share bytes {lo}..{hi}; {self.why} ({PAGES})")
        end = int(a.bytes.max()) + 1
        fix = (f"Cast into a separate buffer: another TBuf or queue buffer, or a LocalTensor outside src's bytes "
               f"(e.g. at {a.t.tier.name}+{-(-end // 32) * 32}); then copy or use the result from there")
        unchanged = new_bytes is not None and self._unchanged(new_bytes)
        err = ArgumentError(message + (": this Cast's bytes come out the same for these inputs, so the chip's "
                                       "result does not show it here" if unchanged else ""),
                            fix=fix, site=site, kind="cast-overlap")
        if not unchanged:
            raise err
        warnings.warn(SanitizerWarning(err), stacklevel=3)

    def _unchanged(self, new_bytes: np.ndarray) -> bool:
        """Whether every byte at risk keeps its value: ``new_bytes`` are dst's bytes in ``d.bytes`` order."""
        arena = self.d.t.tier.arena.view(np.uint8)
        at = np.isin(self.d.bytes, self.risk)
        return bool(np.array_equal(arena[self.d.bytes[at]], new_bytes[at]))


def check(d: Operand, a: Operand) -> Overlap | None:
    """The forbidden overlap of a Cast's operands, or None when they are apart or overlap as the pages allow."""
    shared = np.intersect1d(d.bytes, a.bytes)
    if not shared.size:
        return None
    w_first = _first_iter(d, shared, np.minimum)        # the earliest iteration writing each shared byte
    r_last = _first_iter(a, shared, np.maximum)         # the latest iteration reading it
    risk = shared[w_first <= r_last]                    # written no later than it is last read
    if _width(d.t.dtype) > _width(a.t.dtype):
        return Overlap(d, a, shared, "converting to a wider type, dst may not overlap src at all", risk)
    later = shared[w_first < r_last]
    if later.size:
        b = int(later[0])
        return Overlap(d, a, shared, f"iteration {int(w_first[shared == b][0])} writes byte {b}, which iteration "
                       f"{int(r_last[shared == b][0])} reads later (多次迭代间: the destination of an earlier iteration "
                       "may not overlap the source of a later one)", risk)
    for it in np.unique(w_first[w_first == r_last]):
        d_start, a_start = d.bytes[d.iters == it].min(), a.bytes[a.iters == it].min()
        if d_start != a_start:
            return Overlap(d, a, shared, f"iteration {int(it)} writes from byte {int(d_start)} and reads from byte "
                           f"{int(a_start)}: a partial overlap within one iteration (单次迭代内: src and dst must "
                           "overlap 100%, from the same address)", risk)
    return None


def _first_iter(o: Operand, shared: np.ndarray, pick) -> np.ndarray:
    """Per byte of ``shared``: ``pick`` (np.minimum / np.maximum) of the iterations of ``o`` touching it."""
    order = np.argsort(o.bytes, kind="stable")
    b, it = o.bytes[order], o.iters[order]
    out = np.full(shared.size, -1 if pick is np.maximum else np.iinfo(np.int64).max, np.int64)
    pos = np.searchsorted(shared, b)
    hit = (pos < shared.size) & (shared[np.minimum(pos, shared.size - 1)] == b)
    pick.at(out, pos[hit], it[hit])
    return out
