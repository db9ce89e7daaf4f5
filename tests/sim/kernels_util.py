"""Shared helpers of the simulator-core tests: launch harnesses, error checks, references.

Kernel building blocks: ``handoff(event)`` (SetFlag + WaitFlag), ``gm(ptr)`` (a GlobalTensor),
``scratch(nbytes, dtype)`` (a TBuf as one LocalTensor).

Harnesses (one launch each, kernels defined here once):
- ``run_on_ub(body, *arrays)`` / ``vector_result``: one AIV block copies every array GM -> UB,
  runs ``body(*ub_tensors)`` and copies the ``out`` tensors back;
- ``run_staged(src, out, copy_in, copy_out, n_ub)``: GM -> UB -> GM through a filled UB buffer;
- ``run_block_writes(x, z, write, blocks)``: every block stages ``x`` and writes GM its own way;
- ``run_on_cube(a_steps, b_steps, out_dtype)``: GM -> L1 (Nd2Nz) -> L0A/L0B -> Mmad (K steps) -> Fixpipe -> GM.

Checks: ``raises_rule(ErrorType, *words, at=...)`` (the exact KernelError subclass, the words,
a ``Fix:``, the kernel line), ``no_warnings()``, ``assert_same`` (bit-exact),
``assert_within_ulp``.

References written independently of the simulator: ``exact_reference`` (float64 then one
rounding), ``round_to`` (float narrowing in every RoundMode, by table look-up),
``repeat_lanes`` (mask/repeat addressing), ``burst_index`` (strided copies).
"""
from __future__ import annotations

import os
import re
import sys
import warnings
from contextlib import contextmanager
from functools import lru_cache

import numpy as np
import pytest

from ascend_sim import (DataCopy, DataCopyExtParams, DataCopyPad, Duplicate, Fixpipe, FixpipeParams, GetBlockIdx,
                        GlobalTensor, HardEvent, KernelError, LoadData, LoadData2DParams, Mmad, MmadParams, Nd2NzParams,
                        QuantMode_t, SetFlag, TBuf, TPipe, TPosition, TQue, WaitFlag, kernel, launch)
from ascend_sim.hw.dtypes import bfloat16, float32, half, int8, int32

FLOAT_DTYPES = (half, float32, bfloat16)


# ----------------------------------------------------------------------------- sync shorthand
def handoff(event: HardEvent, eid: int = 0) -> None:
    """SetFlag + WaitFlag of one event: pipe ``event.dst`` waits for everything ``event.src`` issued."""
    SetFlag(event, eid)
    WaitFlag(event, eid)


# ----------------------------------------------------------------------------- kernel building blocks
def gm(ptr, dtype=None, size: int | None = None) -> GlobalTensor:
    """``GlobalTensor<T>`` on a GM address (T: the address's dtype unless given)."""
    g = GlobalTensor(dtype if dtype is not None else ptr.dtype)
    g.SetGlobalBuffer(ptr if dtype is None else ptr.cast(dtype), size)
    return g


def scratch(nbytes: int, dtype, position=TPosition.VECCALC, pipe: TPipe | None = None):
    """A ``TBuf`` of ``nbytes`` at ``position`` (on a new TPipe unless given), as one LocalTensor."""
    buf = TBuf(position)
    (pipe or TPipe()).InitBuffer(buf, nbytes)
    return buf.Get(dtype)


@kernel
def _stage_and_write(x, z, write):
    xg, zg = gm(x), gm(z)
    t = scratch(xg.GetSize() * xg.dtype.itemsize, xg.dtype)
    DataCopy(t, xg, xg.GetSize())
    handoff(HardEvent.MTE2_MTE3)
    write(zg, t, GetBlockIdx())


def run_block_writes(x: np.ndarray, z: np.ndarray, write, blocks: int = 2, **kw):
    """Each of ``blocks`` AIV blocks copies all of ``x`` to UB, then calls ``write(z_gm, ub, block_idx)``."""
    return launch(_stage_and_write, blocks, x, z, write, **kw)


# ----------------------------------------------------------------------------- vector harness
@kernel
def _on_ub(body, specs, outs, *ptrs):
    pipe = TPipe()
    gms, ubs = [], []
    for ptr, (dtype, n) in zip(ptrs, specs):
        whole = scratch(n * dtype.itemsize, dtype, pipe=pipe)     # rounded up to 32 B: room for the padded burst
        gms.append(gm(ptr, size=n))
        DataCopyPad(whole, gms[-1], DataCopyExtParams(1, n * dtype.itemsize, 0, 0, 0))
        ubs.append(whole[0:n])                      # the body sees exactly n elements
    handoff(HardEvent.MTE2_V)
    body(*ubs)
    handoff(HardEvent.V_MTE3)
    for i in outs:
        DataCopyPad(gms[i], ubs[i], DataCopyExtParams(1, ubs[i].nbytes, 0, 0, 0))


def run_on_ub(body, *arrays: np.ndarray, out=(-1,), chip=None):
    """Run ``body(*ub_tensors)`` on one AIV block; arrays at indices ``out`` receive their UB tensor.

    Every array (outputs too) is copied in first, so untouched output lanes keep their values.
    """
    specs = [(a.dtype, a.size) for a in arrays]
    return launch(_on_ub, 1, body, specs, tuple(out), *arrays, chip=chip)


def vector_result(body, *inputs: np.ndarray, out_like: np.ndarray) -> np.ndarray:
    """The output of ``body(*inputs_ub, out_ub)``; ``out_like`` gives its shape, dtype and start values."""
    out = out_like.copy()
    run_on_ub(body, *inputs, out)
    return out


@kernel
def _staged(src_ptr, out_ptr, cfg):
    dtype, n_ub, fill, copy_in, copy_out = cfg
    ub = scratch(n_ub * dtype.itemsize, dtype)
    src, out = gm(src_ptr), gm(out_ptr)
    if dtype.itemsize == 1:                    # Duplicate takes no 1-byte dtype on A2: fill as int16 byte pairs
        byte = int(np.array(fill).astype(dtype).view(np.uint8))
        Duplicate(ub.ReinterpretCast(np.int16), int(np.uint16(byte * 0x0101).view(np.int16)), n_ub // 2)
    else:
        Duplicate(ub, fill, n_ub)              # a known background, so gaps are visible (and initialised)
    handoff(HardEvent.V_MTE2)
    copy_in(ub, src)
    handoff(HardEvent.MTE2_MTE3)
    copy_out(out, ub)


def run_staged(src: np.ndarray, out: np.ndarray, copy_in, copy_out, n_ub: int, fill=0):
    """One AIV block: fill ``n_ub`` UB elements with ``fill``, ``copy_in(ub, src_gm)``, ``copy_out(out_gm, ub)``."""
    return launch(_staged, 1, src, out, (src.dtype, n_ub, fill, copy_in, copy_out))


def burst_index(count: int, length: int, pitch: int, offset: int = 0) -> np.ndarray:
    """Element indices of ``count`` bursts of ``length`` elements, ``pitch`` elements apart (reference)."""
    return (offset + np.arange(count)[:, None] * pitch + np.arange(length)[None, :]).ravel()


# ----------------------------------------------------------------------------- cube harness
@kernel(core="AIC")
def _on_cube(a_ptr, b_ptr, c_ptr, cfg):
    m, n, k, steps, dtype, acc, quant, relu = cfg
    c0 = 32 // dtype.itemsize                          # elements per fractal row
    fr = 512 // dtype.itemsize                         # elements per 512-byte fractal
    mp, np_, kp, k16 = -(-m // 16) * 16, -(-n // 16) * 16, -(-k // c0) * c0, -(-k // 16) * 16
    mb, nb, kb = mp // 16, np_ // 16, kp // c0
    b_rows = np_ if dtype == int8 else k16             # int8: B^T (n x k) in GM, half/bf16: B (k x n)
    pipe = TPipe()
    queues = {}
    for name, pos, nbytes in (("a1", TPosition.A1, steps * mp * kp * dtype.itemsize),
                              ("b1", TPosition.B1, steps * b_rows * max(kp, np_) * dtype.itemsize),
                              ("a2", TPosition.A2, mp * kp * dtype.itemsize),
                              ("b2", TPosition.B2, kp * np_ * dtype.itemsize),
                              ("co1", TPosition.CO1, mp * np_ * acc.itemsize)):
        queues[name] = TQue(pos, 1)
        pipe.InitBuffer(queues[name], 1, nbytes)
    a_gm, b_gm, c_gm = gm(a_ptr), gm(b_ptr), gm(c_ptr)
    a1, b1 = queues["a1"].AllocTensor(dtype), queues["b1"].AllocTensor(dtype)
    a_nz, b_nz = mp * kp, b_rows * max(kp, np_)        # elements of one step's NZ matrix in L1
    DataCopy(a1, a_gm, Nd2NzParams(steps, m, k, m * k, k, mp, 1, a_nz))       # every K step's A, ND -> NZ
    if dtype == int8:
        DataCopy(b1, b_gm, Nd2NzParams(steps, n, k, n * k, k, np_, 1, b_nz))
    else:
        DataCopy(b1, b_gm, Nd2NzParams(steps, k, n, k * n, n, k16, 1, b_nz))
    queues["a1"].EnQue(a1)
    queues["b1"].EnQue(b1)
    a1, b1 = queues["a1"].DeQue(dtype), queues["b1"].DeQue(dtype)
    c = queues["co1"].AllocTensor(acc)
    for s in range(steps):            # one Mmad per K step, accumulating from the second on
        a2, b2 = queues["a2"].AllocTensor(dtype), queues["b2"].AllocTensor(dtype)
        for i in range(mb):           # Nz -> Zz: one 16-row block of A per LoadData
            LoadData(a2[i * kb * fr], a1[s * a_nz + i * fr], LoadData2DParams(0, kb, mb, 0, 0, False, 0))
        if dtype == int8:             # B^T's NZ fractals are L0B's ZN fractals
            LoadData(b2, b1[s * b_nz], LoadData2DParams(0, kb * nb, 1, 0, 0, False, 0))
        else:                         # Nz -> Zn: transpose each fractal
            for i in range(kb):
                LoadData(b2[i * nb * fr], b1[s * b_nz + i * fr], LoadData2DParams(0, nb, kb, 0, 0, True, 0))
        queues["a2"].EnQue(a2)
        queues["b2"].EnQue(b2)
        a2, b2 = queues["a2"].DeQue(dtype), queues["b2"].DeQue(dtype)
        Mmad(c, a2, b2, MmadParams(m, n, k, 0, False, s == 0))
        queues["a2"].FreeTensor(a2)
        queues["b2"].FreeTensor(b2)
    queues["a1"].FreeTensor(a1)
    queues["b1"].FreeTensor(b1)
    queues["co1"].EnQue(c)
    c = queues["co1"].DeQue(acc)
    Fixpipe(c_gm, c, FixpipeParams(n, m, mp, n, relu, quant))
    queues["co1"].FreeTensor(c)


def cube_16x16(a1, b1, c, pipe: TPipe) -> None:
    """Inside an AIC kernel: C (GM, float32) = A1 @ B1, two 16 x 16 half fractals already in L1.

    L1 -> L0A/L0B (LoadData), one Mmad, Fixpipe to GM, with the flags between the pipes. The caller
    copies A1 and B1 in (so its own lines are the ones GM checks name) and sets the flags after.
    """
    handoff(HardEvent.MTE2_MTE1)
    a2, b2 = scratch(512, half, TPosition.A2, pipe), scratch(512, half, TPosition.B2, pipe)
    LoadData(a2, a1, LoadData2DParams(0, 1, 1))
    LoadData(b2, b1, LoadData2DParams(0, 1, 1, 0, 0, True))        # one fractal: ND = NZ; L0B wants it transposed
    handoff(HardEvent.MTE1_M)
    co1 = scratch(1024, float32, TPosition.CO1, pipe)
    Mmad(co1, a2, b2, MmadParams(16, 16, 16))
    handoff(HardEvent.M_FIX)
    Fixpipe(gm(c), co1, FixpipeParams(16, 16, 16, 16))


def run_on_cube(a_steps: list[np.ndarray], b_steps: list[np.ndarray], out_dtype, *,
                quant=QuantMode_t.NoQuant, relu: bool = False) -> np.ndarray:
    """C = sum_s A_s @ B_s through the cube (one Mmad per K step, accumulate from the second on).

    A_s is m x k and B_s is k x n, in GM as ND (int8: B_s transposed, n x k, as int8 kernels keep it);
    the kernel takes the real path: Nd2Nz into L1, LoadData Nz -> Zz / Zn, Mmad, Fixpipe NZ2ND.
    """
    (m, k), n = a_steps[0].shape, b_steps[0].shape[1]
    dtype = a_steps[0].dtype
    acc = int32 if dtype == int8 else float32
    c = np.zeros((m, n), out_dtype)
    a = np.concatenate([x.ravel() for x in a_steps])
    b = np.concatenate([(x.T if dtype == int8 else x).ravel() for x in b_steps])
    launch(_on_cube, 1, a, b, c, (m, n, k, len(a_steps), np.dtype(dtype), np.dtype(acc), quant, relu))
    return c


# ----------------------------------------------------------------------------- error checks
class raises_rule:
    """``with raises_rule(RaceError, "MTE2", "V", at="Add(z, x"):`` -- see the module docstring.

    The error must name, as ``file.py:N``, the kernel line ``at``: a snippet found outside string
    literals on exactly one line of the calling test file (see ``line_of``), or a one-line lambda
    (its line). ``at=None`` skips the line check (errors with no kernel line).
    """

    def __init__(self, exc_type: type[KernelError], *words: str, at=None):
        assert issubclass(exc_type, KernelError)
        self.exc_type, self.words, self.at = exc_type, words, at
        self.file = sys._getframe(1).f_code.co_filename
        self._cm = None
        self.value: KernelError | None = None

    def __enter__(self):
        self._cm = pytest.raises(self.exc_type)
        self._info = self._cm.__enter__()
        return self

    def __exit__(self, *exc):
        if not self._cm.__exit__(*exc):          # another exception: let it through unchanged
            return False
        err = self.value = self._info.value
        msg = str(err)
        assert type(err) is self.exc_type, f"expected exactly {self.exc_type.__name__}, got {type(err).__name__}"
        for w in self.words:
            assert w in msg, f"{w!r} not in the message:\n{msg}"
        assert "\n  Fix: " in msg, f"no Fix: in the message:\n{msg}"
        if self.at is not None:
            line = self.at.__code__.co_firstlineno if callable(self.at) else line_of(self.file, self.at)
            expected = f"{os.path.basename(self.file)}:{line}"
            assert msg.splitlines()[0].split()[1] == expected, f"expected the site {expected}, got:\n{msg}"
        return True


_STRING = re.compile(r"""(['"])(?:\\.|(?!\1).)*\1""")


def line_of(path: str, snippet: str) -> int:
    """The 1-based number of the only line of ``path`` holding ``snippet`` outside a string literal
    (code or a ``# <- marker`` comment; the test's own ``at="snippet"`` does not count)."""
    def uses(line: str) -> bool:
        return line.count(snippet) > sum(m.group(0).count(snippet) for m in _STRING.finditer(line))
    with open(path, encoding="utf-8") as f:
        hits = [i for i, line in enumerate(f, 1) if uses(line)]
    assert len(hits) == 1, f"{snippet!r} is on lines {hits} of {path}; make it unique"
    return hits[0]


@contextmanager
def no_warnings():
    """Any warning (numpy RuntimeWarning included) raised inside becomes an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ----------------------------------------------------------------------------- comparisons
def assert_same(actual: np.ndarray, expected: np.ndarray) -> None:
    """Bit-exact equality in the same dtype (NaNs compared by position)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    if actual.dtype.kind in "iub":
        np.testing.assert_array_equal(actual, expected)
        return
    a64, e64 = actual.astype(np.float64), expected.astype(np.float64)
    same = (a64 == e64) | (np.isnan(a64) & np.isnan(e64))
    bad = np.flatnonzero(~same.ravel())
    assert bad.size == 0, (f"{bad.size} of {actual.size} elements differ, first at {bad[0]}: "
                           f"{a64.ravel()[bad[0]]!r} != {e64.ravel()[bad[0]]!r}")


def random_array(rng: np.random.Generator, dtype, n: int, lo: float = -4.0, hi: float = 4.0) -> np.ndarray:
    """``n`` values of ``dtype`` in [lo, hi) (integers for integer dtypes)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(int(lo), info.min), min(int(hi), info.max) + 1, n).astype(dtype)
    return rng.uniform(lo, hi, n).astype(dtype)


def repeat_lanes(itemsize: int, mask, repeat: int, blk_stride: int, rep_stride: int) -> np.ndarray:
    """Element offsets the mask/repeat form touches, lane by lane (reference for the vector unit).

    A repeat is 8 DataBlocks of 32 bytes; block ``j`` of repeat ``r`` starts at
    ``(r * rep_stride + j * blk_stride) * 32`` bytes; ``mask`` is an int (first lanes) or
    ``[low64, high64]`` (lane ``i`` active when bit ``i`` is set).
    """
    per_block = 32 // itemsize
    out = []
    for r in range(repeat):
        for lane in range(8 * per_block):
            active = lane < mask if isinstance(mask, int) else (mask[lane // 64] >> (lane % 64)) & 1
            if active:
                j, e = divmod(lane, per_block)
                out.append((r * rep_stride + j * blk_stride) * per_block + e)
    return np.array(out, np.int64)


@lru_cache(maxsize=None)
def all_finite(dtype) -> np.ndarray:
    """Every finite value of a 16-bit float dtype, sorted ascending (one of -0/+0)."""
    with np.errstate(invalid="ignore"):
        vals = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(dtype).astype(np.float64)
    return np.unique(vals[np.isfinite(vals)])


@np.errstate(invalid="ignore", over="ignore")     # inf - inf in the neighbour distances is intended
def round_to(x: np.ndarray, dtype, mode: str) -> np.ndarray:
    """Reference narrowing of finite or infinite floats to a 16-bit float by table look-up.

    ``mode``: floor, ceil, trunc, round (ties away from zero), rint (ties to even), odd
    (truncate, then set the last mantissa bit when inexact). Overflow follows IEEE directed
    rounding: rint and round go to inf from half an ulp past the largest finite value, the
    modes rounding toward zero stop at the largest finite value.
    """
    table = all_finite(dtype)
    big, top_ulp = table[-1], table[-1] - table[-2]
    w = np.asarray(x, np.float64).ravel()
    i = np.searchsorted(table, w, side="right") - 1           # largest table value <= w
    j = np.searchsorted(table, w, side="left")                # smallest table value >= w
    lo = np.where(i >= 0, table[np.clip(i, 0, None)], -np.inf)
    hi = np.where(j < table.size, table[np.clip(j, None, table.size - 1)], np.inf)
    toward_zero = np.clip(np.where(w >= 0, lo, hi), -big, big)
    if mode == "floor":
        r = lo
    elif mode == "ceil":
        r = hi
    elif mode == "trunc":
        r = toward_zero
    elif mode in ("rint", "round"):
        tie = np.where(w >= 0, hi, lo) if mode == "round" else np.where(_last_bit(lo, dtype) == 0, lo, hi)
        r = np.where(w - lo < hi - w, lo, np.where(hi - w < w - lo, hi, tie))
        r = np.where(np.abs(w) >= big + top_ulp / 2, np.sign(w) * np.inf, r)
    elif mode == "odd":
        t = np.where(toward_zero == 0, np.copysign(0.0, w), toward_zero)
        r = np.where(_last_bit(t, dtype) == 1, t, _next_away(t, dtype))
    else:
        raise ValueError(mode)
    r = np.where((lo == w) | ~np.isfinite(w), w, r)          # exact, inf and NaN pass through
    return r.astype(dtype).reshape(np.shape(x))


def _last_bit(v: np.ndarray, dtype) -> np.ndarray:
    return np.asarray(v).astype(dtype).view(np.uint16) & 1


def _next_away(v: np.ndarray, dtype) -> np.ndarray:
    """The neighbour of ``v`` one unit in the last place further from zero (bit pattern + 1)."""
    return (np.asarray(v).astype(dtype).view(np.uint16) + np.uint16(1)).view(dtype).astype(np.float64)


def assert_within_ulp(actual: np.ndarray, expected: np.ndarray, ulps: int = 1) -> None:
    """Equal up to ``ulps`` units in the last place of the (float) dtype, NaNs by position."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    e = expected.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        ulp = np.abs(np.nextafter(expected, np.array(np.inf, expected.dtype)).astype(np.float64) - e)
        ok = (np.abs(actual.astype(np.float64) - e) <= ulps * ulp) | (np.isnan(e) & np.isnan(actual.astype(
            np.float64))) | (actual.astype(np.float64) == e)
    bad = np.flatnonzero(~ok.ravel())
    assert bad.size == 0, f"{bad.size} elements off by more than {ulps} ulp, first at {bad[0]}: " \
                          f"{actual.ravel()[bad[0]]!r} vs {expected.ravel()[bad[0]]!r}"


def exact_reference(fn, dtype, *xs: np.ndarray) -> np.ndarray:
    """``fn`` on the exact inputs (float64, or int64 for integers), rounded once to ``dtype`` (ties to even)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return fn(*(x.astype(np.int64) for x in xs)).astype(dtype)
    with np.errstate(all="ignore"):
        w = np.asarray(fn(*(x.astype(np.float64) for x in xs)), np.float64)
    return w.astype(dtype) if dtype == float32 else round_to(w, dtype, "rint")
