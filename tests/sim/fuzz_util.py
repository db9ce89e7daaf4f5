"""A seeded generator of API calls, good and bad, and the harness that classifies what each one did.

One trial = one launch: three 512-byte UB buffers (a, b: half; c: float) with 32-byte canaries around
each, all filled and synchronised; a VECIN queue; GM tensors x (input) and z (output). Then one
random call, built from argument pools that mix valid values with values that break a known rule.

Outcome classes: ``ok`` (ran), ``rule:<KernelError subclass>`` (refused or reported), and the
failures the fuzz test forbids: ``escape:<exception>`` (a non-KernelError, or an InternalError),
``accepted:<rule>`` (a call that breaks one of RULES ran silently), ``oob-write`` (a canary or a
GM byte outside the destination changed).
"""
from __future__ import annotations

import operator
from collections import Counter
from types import SimpleNamespace

import numpy as np

from ascend_sim import (CMPMODE, PIPE_ALL, PIPE_MTE2, PIPE_MTE3, PIPE_V, SELMODE, Abs, Add, Adds, Axpy, Fixpipe,
                        FixpipeParams, LoadData, LoadData2DParams, Mmad, MmadParams, QuantMode_t,
                        BinaryRepeatParams, CrossCoreSetFlag, SetAtomicAdd, SetAtomicNone, WholeReduceSum,
                        Cast, Compare, DataCopy, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams,
                        DataCopyParams, Duplicate, Exp, HardEvent, KernelError, Max, Mul, Muls, PipeBarrier,
                        ReduceMax, ReduceSum, Relu, RoundMode, Select, SetFlag, Sub, TBuf, TPipe, TPosition, TQue,
                        UnaryRepeatParams, WaitFlag, float32, half, kernel, launch)
from ascend_sim.engine.errors import InternalError
from ascend_sim.api.tensor import writable_view

N = 256                 # half elements per buffer (512 bytes)
CANARY = 32             # bytes before and after every buffer
PATTERN = 0xA5

# The rules a generated call may break on purpose; a call that breaks one must raise a KernelError.
RULES = {
    "count-type": "a count that is not an integer (float, str, None, bool)",
    "count-negative": "a negative count",
    "count-too-big": "a count larger than an operand",
    "not-a-tensor": "an operand that is not a LocalTensor / GlobalTensor",
    "misaligned": "a UB operand not 32-byte aligned where the op needs it",
    "scalar-type": "a scalar that is not a real number",
    "stride-range": "a block or repeat stride outside 0..255",
    "repeat-range": "repeatTimes outside 0..255",
    "enum-type": "a mode argument that is not its enum",
    "event-id": "an event id outside 0..7 or not an integer",
    "pipe": "a pipe argument that is not a pipe_t",
    "dtype-mix": "operands of different dtypes",
    "use-after-free": "a tensor used after FreeTensor",
    "slice-range": "a slice or offset outside the tensor",
    "cast-table": "a Cast (src, dst, RoundMode) outside the Atlas A2 conversion table",
    "arg-type": "an argument of the wrong Python type (None included) in any position of a call",
    "field-range": "a parameter-struct field outside its C++ type (uint8_t, uint16_t ..., bool), or not an integer",
    "operator": "a Python arithmetic operator on a tensor or a GM pointer with a non-integer",
}


class Call:
    """One generated call: what to run and the rule it breaks on purpose (None: valid as far as we know)."""

    def __init__(self, name: str, fn, breaks: str | None = None, dst: str | None = None, gm_span=None,
                 cube: bool = False):
        self.name, self.fn, self.breaks, self.dst, self.gm_span = name, fn, breaks, dst, gm_span
        self.cube = cube            # runs on the AIC harness (cube_case)


def _pick(rng, pool):
    return pool[int(rng.integers(len(pool)))]


def _count(rng, size: int = N):
    """(count, rule broken or None)."""
    pool = [(16, None), (64, None), (128, None), (size, None), (np.int64(32), None), (0, None),
            (-16, "count-negative"), (size + 16, "count-too-big"), (16.0, "count-type"), ("16", "count-type"),
            (None, "count-type"), (True, "count-type")]
    return _pick(rng, pool)


def _scalar(rng):
    return _pick(rng, [(1.5, None), (2, None), (np.float32(0.25), None), (-3.0, None),
                       (None, "scalar-type"), ("x", "scalar-type"), (1 + 2j, "scalar-type")])


def _stride(rng):
    return _pick(rng, [(1, None), (2, None), (0, None), (8, None), (-1, "stride-range"), (256, "stride-range")])


def _first(*rules):
    return next((r for r in rules if r), None)


def generate(rng) -> Call:
    """One random call on the harness namespace ``t`` (built lazily: ``fn(t)``); one in 8 on the cube."""
    if rng.integers(8) == 0:
        return generate_cube(rng)
    if rng.integers(3) == 0:
        return generate_typed(rng)
    kind = int(rng.integers(14))
    c_n, c_r = _count(rng)
    if kind == 0:                       # binary, count form
        op = _pick(rng, [Add, Sub, Mul, Max])
        d, s0, s1 = (_pick(rng, ["a", "b", "c"]) for _ in range(3))
        bad = int(rng.integers(4))          # 1: misaligned dst, 2: src0 None
        rule = _first(c_r, "dtype-mix" if "c" in (d, s0, s1) and len({d, s0, s1}) > 1 else None)

        def fn(t, op=op, d=d, s0=s0, s1=s1, n=c_n, bad=bad):
            ops = [getattr(t, d), getattr(t, s0), getattr(t, s1)]
            if bad == 1:
                ops[0] = ops[0][1]
            elif bad == 2:
                ops[1] = None
            op(*ops, n)
        if bad == 1:
            rule = _first(rule, "misaligned")
        elif bad == 2:
            rule = _first("not-a-tensor", rule)
        return Call(op.__name__, fn, rule, d)
    if kind == 1:                       # scalar ops
        op = _pick(rng, [Adds, Muls])
        sc, s_r = _scalar(rng)
        return Call(op.__name__, lambda t: op(t.b, t.a, sc, c_n), _first(c_r, s_r), "b")
    if kind == 2:                       # unary
        op = _pick(rng, [Exp, Abs, Relu])
        src, rule = ("a", None) if rng.integers(4) else ("c", "dtype-mix")
        return Call(op.__name__, lambda t: op(t.b, getattr(t, src), c_n), _first(c_r, rule), "b")
    if kind == 3:                       # repeat form
        blk, b_r = _stride(rng)
        rep, r_r = _stride(rng)
        reps, rp_r = _pick(rng, [(1, None), (2, None), (0, None), (256, "repeat-range"), (-1, "repeat-range"),
                                 (1.0, "repeat-range")])
        mask = _pick(rng, [128, 64, 1, [2**64 - 1, 2**64 - 1]])

        def fn(t):
            Add(t.b, t.a, t.a, mask, reps, BinaryRepeatParams(blk, 1, 1, rep, 8, 8))
        return Call("Add(repeat)", fn, _first(b_r, r_r, rp_r), "b")
    if kind == 4:                       # Duplicate
        sc, s_r = _scalar(rng)
        return Call("Duplicate", lambda t: Duplicate(t.a, sc, c_n), _first(c_r, s_r), "a")
    if kind == 5:                       # Cast, Compare, Select with mode arguments
        mode, m_r = _pick(rng, [(RoundMode.CAST_NONE, None), (RoundMode.CAST_RINT, "cast-table"), ("rint", "enum-type"),
                                (None, "enum-type")])
        which = int(rng.integers(3))
        if which == 0:
            return Call("Cast", lambda t: Cast(t.c, t.a, mode, c_n if c_r else 64), _first(m_r, c_r), "c")
        cm, cm_r = _pick(rng, [(CMPMODE.LT, None), (CMPMODE.EQ, None), ("lt", "enum-type"), (3, "enum-type")])
        if which == 1:
            return Call("Compare", lambda t: Compare(t.b, t.a, t.a, cm, 128), cm_r, "b")
        sm, sm_r = _pick(rng, [(SELMODE.VSEL_TENSOR_TENSOR_MODE, None), (7, "enum-type"), ("x", "enum-type")])
        return Call("Select", lambda t: Select(t.b, t.b, t.a, t.a, sm, 128), sm_r, "b")
    if kind == 6:                       # reductions
        op = _pick(rng, [ReduceMax, ReduceSum])
        off = _pick(rng, [0, 2, 16])
        return Call(op.__name__, lambda t: op(t.b[off], t.a, t.c.ReinterpretCast(half), c_n), c_r, "b")
    if kind == 7:                       # DataCopy GM -> UB, UB -> GM, UB -> UB
        which = int(rng.integers(3))
        params = _pick(rng, [(None, None), (DataCopyParams(2, 2, 0, 0), None), (DataCopyParams(4, 1, 1, 1), None)])
        arg = params[0] if params[0] is not None else c_n
        rule = None if params[0] is not None else c_r
        if arg == 0:
            rule = rule or "count-type"     # DataCopy of 0 elements: refused (count must be positive)
        if which == 0:
            return Call("DataCopy in", lambda t: DataCopy(t.a, t.x, arg), rule, "a")
        if which == 1:
            if params[0] is None:
                span = (0, (c_n if isinstance(c_n, (int, np.integer)) and not isinstance(c_n, bool) else 0) * 2)
            else:
                p = params[0]
                span = (0, ((p.blockCount - 1) * (p.blockLen + p.dstStride) + p.blockLen) * 32)
            return Call("DataCopy out", lambda t: DataCopy(t.z, t.a, arg), rule, None, span)
        bad = int(rng.integers(3))          # 1: misaligned dst
        return Call("DataCopy local", lambda t: DataCopy(t.b if bad != 1 else t.b[1], t.a, arg),
                    _first(rule, "misaligned" if bad == 1 else None), "b")
    if kind == 8:                       # DataCopyPad GM -> UB
        blen = _pick(rng, [6, 10, 64, 3, 0])
        is_pad = _pick(rng, [True, False, 1])
        rule = ("count-type" if blen == 3 else None) or (          # blockLen 0: a documented NOP
            "enum-type" if is_pad == 1 and is_pad is not True else None)
        return Call("DataCopyPad", lambda t: DataCopyPad(t.a, t.x, DataCopyExtParams(1, blen, 0, 0, 0),
                                                         DataCopyPadExtParams(is_pad, 0, 0, 0)), rule, "a")
    if kind == 9:                       # flags and barriers
        eid, e_r = _pick(rng, [(0, None), (7, None), (8, "event-id"), (-1, "event-id"), (1.5, "event-id"),
                               ("1", "event-id")])
        pipe, p_r = _pick(rng, [(PIPE_V, None), (PIPE_ALL, None), (PIPE_MTE2, None), (99, "pipe"), ("V", "pipe"),
                                (None, "pipe")])
        if rng.integers(2):
            return Call("PipeBarrier", lambda t: PipeBarrier(pipe), p_r)
        return Call("SetFlag/WaitFlag", lambda t: (SetFlag(HardEvent.MTE2_V, eid), WaitFlag(HardEvent.MTE2_V, eid)),
                    e_r)
    if kind == 10:                      # scalar access and slicing
        idx, i_r = _pick(rng, [(0, None), (255, None), (256, "slice-range"), (-1, "slice-range"),
                               (1.0, "count-type"), (None, "count-type")])
        which = int(rng.integers(3))
        if which == 0:
            return Call("GetValue", lambda t: t.a.GetValue(idx), i_r)
        if which == 1:
            sc, s_r = _scalar(rng)
            return Call("SetValue", lambda t: t.a.SetValue(idx, sc), _first(i_r, s_r), "a")
        lo, hi, s_r = _pick(rng, [(0, 128, None), (128, 256, None), (200, 300, "slice-range"),
                                  (-16, 16, "slice-range"), (0, 16.5, "count-type")])
        return Call("slice", lambda t: t.a[lo:hi], s_r)
    if kind == 12:                      # more calls: WholeReduceSum, Axpy, SetAtomicAdd, ReinterpretCast, cross-core
        which = int(rng.integers(5))
        if which == 0:
            stride, s_r = _stride(rng)
            reps, r_r = _pick(rng, [(1, None), (2, None), (256, "repeat-range"), (None, "count-type")])
            return Call("WholeReduceSum", lambda t: WholeReduceSum(t.b, t.a, 128, reps, 1, 1, stride),
                        _first(r_r, s_r), "b")
        if which == 1:
            sc, s_r = _scalar(rng)
            return Call("Axpy", lambda t: Axpy(t.b, t.a, sc, c_n), _first(c_r, s_r), "b")
        if which == 2:
            dt, d_r = _pick(rng, [(half, None), (np.float16, None), ("half", None), (np.complex64, "dtype-mix"),
                                  ("nope", "dtype-mix"), (None, None)])
            return Call("SetAtomicAdd", lambda t: (SetAtomicAdd(dt), SetAtomicNone()), d_r)
        if which == 3:
            dt, d_r = _pick(rng, [(np.int16, None), (float32, None), (np.uint8, None), (np.complex128, "dtype-mix"),
                                  (object, "dtype-mix")])
            return Call("ReinterpretCast", lambda t: t.a.ReinterpretCast(dt), d_r)
        mode, m_r = _pick(rng, [(0, None), (3, "enum-type"), ("2", "enum-type")])
        flag, f_r = _pick(rng, [(1, None), (10, None), (16, "event-id"), (-1, "event-id"), (2.0, "event-id")])
        pipe, p_r = _pick(rng, [(PIPE_MTE3, None), (PIPE_ALL, "pipe"), (5, "pipe")])
        return Call("CrossCoreSetFlag", lambda t: CrossCoreSetFlag(mode, pipe, flag), _first(m_r, f_r, p_r))
    if kind == 13:                      # queue and buffer declarations
        which = int(rng.integers(3))
        if which == 0:
            depth, d_r = _pick(rng, [(1, None), (2, None), (0, "count-negative"), (1.5, "count-type"),
                                     (None, "count-type")])
            pos, p_r = _pick(rng, [(TPosition.VECIN, None), (TPosition.VECOUT, None), ("VECIN", "enum-type"),
                                   (TPosition.VECCALC, "enum-type")])
            return Call("TQue", lambda t: TQue(pos, depth), _first(p_r, d_r))
        if which == 1:
            num, n_r = _pick(rng, [(1, None), (2, None), (0, "count-negative"), (2.0, "count-type")])
            nb, b_r = _pick(rng, [(64, None), (100, None), (-32, "count-negative"), ("64", "count-type"),
                                  (10**9, "count-too-big")])
            return Call("InitBuffer", lambda t: t.pipe.InitBuffer(TQue(TPosition.VECIN, 1), num, nb), _first(n_r, b_r))
        dt, d_r = _pick(rng, [(half, None), (float32, None), (np.complex64, "dtype-mix"), ("x", "dtype-mix")])
        return Call("DeQue dtype", lambda t: _enque_deque(t, dt), d_r)
    # kind 11: queue use after free, TBuf.Get sizes
    if rng.integers(2):
        def uaf(t):
            u = t.q.AllocTensor(half)
            Duplicate(u, 1.0, 16)
            t.q.FreeTensor(u)
            Adds(t.b, u, 1.0, 16)
        return Call("use after free", uaf, "use-after-free", "b")
    n, n_r = _pick(rng, [(16, None), (32, None), (33, "slice-range"), (1000, "slice-range"), (-1, "slice-range"),
                         (2.0, "count-type")])
    return Call("TBuf.Get", lambda t: t.small.Get(half, n), n_r)


# ----------------------------------------------------------------------------- wrong types, struct fields, operators
# Values of the wrong Python type for each kind of argument (None first: every position gets None too).
WRONG = {
    "tensor": [None, 5, 1.5, "t", [1], object(), np.zeros(4, np.float16)],
    "int": [None, 16.5, "16", [16], object(), True, np.float32(16), 1 + 0j],
    "bound": [16.5, "16", [16], object(), True, np.float32(16)],     # a slice bound: None is Python's default
    "scalar": [None, "x", [1], object(), 1 + 2j, {}],
    "enum": [None, "x", 1.5, object(), 99],
    "params": [None, 5, "p", (1, 1, 1, 8, 8, 8), object()],
    "mask": [None, "x", 1.5, object(), [1, 2, 3], {}],
    "dtype": [None, "nope", object, 5, np.complex64],
    "pipe": [None, "V", 1.5, 99],
    "que": [None, 5, "q", object()],
}


def _typed_templates():
    """(name, call(t, *args), [(kind, valid value from t)], GM span written) of the calls whose every argument
    position the fuzzer fills with a wrong value once in a while."""
    from ascend_sim import (GetCmpMask, HardEvent as HE, MaskMode, SetMaskNorm, SetVectorMask, TBuf as TB)
    T = lambda name: (lambda t: getattr(t, name))           # noqa: E731 - a tensor of the harness
    V = lambda v: (lambda t: v)                             # noqa: E731 - a fixed valid value
    half_c = lambda t: t.c.ReinterpretCast(half)            # noqa: E731
    return [
        ("Add", lambda t, d, a, b, n: Add(d, a, b, n), [("tensor", T("b")), ("tensor", T("a")), ("tensor", T("a")),
                                                        ("int", V(64))], None),
        ("Adds", lambda t, d, a, s, n: Adds(d, a, s, n), [("tensor", T("b")), ("tensor", T("a")), ("scalar", V(2.0)),
                                                          ("int", V(64))], None),
        ("Exp", lambda t, d, a, n: Exp(d, a, n), [("tensor", T("b")), ("tensor", T("a")), ("int", V(64))], None),
        ("Add(repeat)", lambda t, d, a, b, m, r, p: Add(d, a, b, m, r, p),
         [("tensor", T("b")), ("tensor", T("a")), ("tensor", T("a")), ("mask", V(128)), ("int", V(1)),
          ("params", lambda t: BinaryRepeatParams())], None),
        ("Duplicate", lambda t, d, s, n: Duplicate(d, s, n), [("tensor", T("a")), ("scalar", V(1.0)),
                                                              ("int", V(64))], None),
        ("Cast", lambda t, d, a, m, n: Cast(d, a, m, n), [("tensor", T("c")), ("tensor", T("a")),
                                                          ("enum", V(RoundMode.CAST_NONE)), ("int", V(64))], None),
        ("Compare", lambda t, d, a, b, m, n: Compare(d, a, b, m, n),
         [("tensor", T("b")), ("tensor", T("a")), ("tensor", T("a")), ("enum", V(CMPMODE.LT)), ("int", V(128))], None),
        ("Compare(register)", lambda t, a, b, m, k, p: Compare(a, b, m, k, p),
         [("tensor", T("a")), ("tensor", T("a")), ("enum", V(CMPMODE.LT)), ("mask", V(128)),
          ("params", lambda t: BinaryRepeatParams())], None),
        ("GetCmpMask", lambda t, d: GetCmpMask(d), [("tensor", T("b"))], None),
        ("Select", lambda t, d, m, a, b, sm, n: Select(d, m, a, b, sm, n),
         [("tensor", T("b")), ("tensor", T("b")), ("tensor", T("a")), ("tensor", T("a")),
          ("enum", V(SELMODE.VSEL_TENSOR_TENSOR_MODE)), ("int", V(128))], None),
        ("ReduceSum", lambda t, d, a, w, n: ReduceSum(d, a, w, n),
         [("tensor", T("b")), ("tensor", T("a")), ("tensor", half_c), ("int", V(64))], None),
        ("WholeReduceSum", lambda t, d, a, m, r, ds, bs, rs: WholeReduceSum(d, a, m, r, ds, bs, rs),
         [("tensor", T("b")), ("tensor", T("a")), ("mask", V(128)), ("int", V(1)), ("int", V(1)), ("int", V(1)),
          ("int", V(8))], None),
        ("Axpy", lambda t, d, a, s, n: Axpy(d, a, s, n), [("tensor", T("b")), ("tensor", T("a")), ("scalar", V(2.0)),
                                                          ("int", V(64))], None),
        ("DataCopy in", lambda t, d, g, n: DataCopy(d, g, n), [("tensor", T("a")), ("tensor", T("x")),
                                                               ("int", V(64))], None),
        ("DataCopy out", lambda t, g, a, n: DataCopy(g, a, n), [("tensor", T("z")), ("tensor", T("a")),
                                                                ("int", V(64))], (0, 128)),
        ("DataCopyPad", lambda t, d, g, p, q: DataCopyPad(d, g, p, q),
         [("tensor", T("a")), ("tensor", T("x")), ("params", lambda t: DataCopyExtParams(1, 64, 0, 0, 0)),
          ("params", lambda t: DataCopyPadExtParams(False, 0, 0, 0))], None),
        ("SetFlag/WaitFlag", lambda t, e, i: (SetFlag(e, i), WaitFlag(e, i)),
         [("enum", V(HE.MTE2_V)), ("int", V(0))], None),
        ("PipeBarrier", lambda t, p: PipeBarrier(p), [("pipe", V(PIPE_V))], None),
        ("GetValue", lambda t, i: t.a.GetValue(i), [("int", V(0))], None),
        ("SetValue", lambda t, i, v: t.a.SetValue(i, v), [("int", V(0)), ("scalar", V(1.0))], None),
        ("slice", lambda t, lo, hi: t.a[lo:hi], [("bound", V(0)), ("bound", V(64))], None),
        ("GM offset", lambda t, n: t.x[n], [("int", V(16))], None),
        ("TQue", lambda t, pos, d: TQue(pos, d), [("enum", V(TPosition.VECIN)), ("int", V(1))], None),
        ("InitBuffer(que)", lambda t, q, n, b: t.pipe.InitBuffer(q, n, b),
         [("que", lambda t: TQue(TPosition.VECIN, 1)), ("int", V(1)), ("int", V(64))], None),
        ("InitBuffer(tbuf)", lambda t, q, b: t.pipe.InitBuffer(q, b),
         [("que", lambda t: TB(TPosition.VECCALC)), ("int", V(64))], None),
        ("SetAtomicAdd", lambda t, d: (SetAtomicAdd(d), SetAtomicNone()), [("dtype", V(half))], None),
        ("ReinterpretCast", lambda t, d: t.a.ReinterpretCast(d), [("dtype", V(np.int16))], None),
        ("AllocTensor", lambda t, d: t.q.FreeTensor(t.q.AllocTensor(d)), [("dtype", V(half))], None),
        ("TBuf.Get", lambda t, d, n: t.small.Get(d, n), [("dtype", V(half)), ("int", V(16))], None),
        ("SetVectorMask", lambda t, n, m: (SetVectorMask(n, mode=m), SetMaskNorm()),
         [("int", V(64)), ("enum", V(MaskMode.NORMAL))], None),
    ]


def _structs():
    """(struct, its fields with their C++ types) for the field-range calls: a value just outside the type's range,
    or a value of another Python type, in one field."""
    u8, u16, u32 = (0, 255), (0, 65535), (0, 2**32 - 1)
    return [
        (BinaryRepeatParams, {f: u8 for f in ("dstBlkStride", "src0BlkStride", "src1BlkStride", "dstRepStride",
                                               "src0RepStride", "src1RepStride")}),
        (UnaryRepeatParams, {"dstBlkStride": u16, "srcBlkStride": u16, "dstRepStride": u8, "srcRepStride": u8}),
        (DataCopyParams, {"blockCount": u16, "blockLen": u16, "srcStride": u16, "dstStride": u16}),
        (DataCopyExtParams, {"blockCount": u16, "blockLen": u32, "srcStride": u32, "dstStride": u32, "rsv": u32}),
        (DataCopyPadExtParams, {"isPad": bool, "leftPadding": u8, "rightPadding": u8}),
        (LoadData2DParams, {"startIndex": u16, "repeatTimes": u8, "srcStride": u16, "sid": u8, "dstGap": u16,
                            "ifTranspose": bool, "addrMode": u8}),
        (MmadParams, {"m": u16, "n": u16, "k": u16, "unitFlag": u8, "cmatrixSource": bool, "cmatrixInitVal": bool}),
        (FixpipeParams, {"nSize": u16, "mSize": u16, "srcStride": u16, "dstStride": u32, "reluEn": bool,
                         "ndNum": u16, "srcNdStride": u16, "dstNdStride": u16, "unitFlag": u8,
                         "isChannelSplit": bool}),
    ]


def generate_typed(rng) -> Call:
    """A call with one wrong value: a wrong Python type (or None) in one argument position, a struct field out of
    its C++ range, or a Python operator on a tensor. Each must raise a KernelError."""
    which = int(rng.integers(10))
    if which < 6:
        return _typed_call(rng, TEMPLATES)
    if which < 9:
        cls, fields = _pick(rng, STRUCTS)
        field = _pick(rng, list(fields))
        rng_ = fields[field]
        if rng_ is bool:
            bad = _pick(rng, [-1, 2, 0, 1, None, "True", 1.0])
        else:
            bad = _pick(rng, [rng_[1] + 1, -1, rng_[0] - 1 if rng_[0] else -2, float(rng_[0]), None, "1", True,
                              [1]])
        return Call(f"{cls.__name__}.{field} = {bad!r}", lambda t: cls(**{field: bad}), "field-range")
    op, other = _pick(rng, OPERATORS), _pick(rng, [1, 1.5, [1], "a", None, np.float16(1)])
    target = _pick(rng, ["a", "x", "xp"])
    if target == "xp" and isinstance(other, int):
        other = 1.5                         # pointer + int is a valid GM offset
    return Call(f"{target} {op.__name__} {type(other).__name__}", lambda t: op(getattr(t, target), other),
                "operator")


def _typed_call(rng, templates) -> Call:
    """A template call with one argument position given a wrong value of its kind (WRONG)."""
    name, fn, args, span = _pick(rng, templates)
    pos = int(rng.integers(len(args)))
    bad = _pick(rng, WRONG[args[pos][0]])

    def call(t):
        values = [make(t) for _, make in args]
        values[pos] = bad
        fn(t, *values)
    return Call(f"{name} arg {pos} = {type(bad).__name__}", call, "arg-type", gm_span=span)


OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.matmul,
             lambda a, b: operator.add(b, a)]
OPERATORS[-1].__name__ = "radd"


def _cube_templates():
    """The cube calls for the wrong-type fuzzing (as TEMPLATES, on the cube harness)."""
    T = lambda name: (lambda t: getattr(t, name))           # noqa: E731
    return [
        ("LoadData", lambda t, d, s, p: LoadData(d, s, p), [("tensor", T("a2")), ("tensor", T("a1")),
                                                            ("params", lambda t: LoadData2DParams(0, 1, 1))], None),
        ("Mmad", lambda t, c, a, b, p: Mmad(c, a, b, p), [("tensor", T("co1")), ("tensor", T("a2")), ("tensor", T("b2")),
                                                          ("params", lambda t: MmadParams(16, 16, 16))], None),
        ("Fixpipe", lambda t, g, c, p: Fixpipe(g, c, p),
         [("tensor", T("z")), ("tensor", T("co1")),
          ("params", lambda t: FixpipeParams(16, 16, 16, 16, False, QuantMode_t.F322F16))], (0, 512)),
    ]


def generate_cube(rng) -> Call:
    """A LoadData, Mmad or Fixpipe call on the cube harness (``cube_case``); one in 3 with a wrong-type argument."""
    if rng.integers(3) == 0:
        call = _typed_call(rng, CUBE_TEMPLATES)
        call.cube = True
        return call
    which = int(rng.integers(3))
    if which == 0:
        si, s_r = _pick(rng, [(0, None), (1, None), (4, "count-too-big"), (-1, "count-negative"),
                              (0.0, "count-type")])
        reps, r_r = _pick(rng, [(1, None), (2, "count-too-big"), (256, "repeat-range")])     # 0: a NOP
        dst, d_r = _pick(rng, [("a2", None), ("b2", None), ("co1", "not-a-tensor"), (None, "not-a-tensor")])
        return Call("LoadData", lambda t: LoadData(getattr(t, dst) if dst else None, t.a1,
                                                   LoadData2DParams(si, reps, 1)), _first(d_r, s_r, r_r),
                    cube=True)
    if which == 1:
        m, m_r = _pick(rng, [(16, None), (8, None), (0, "count-negative"), (17, "count-too-big"),
                             (16.0, "count-type")])
        k, k_r = _pick(rng, [(16, None), (8, None), (20, "count-too-big"), (32, "count-too-big"), (None, "count-type")])
        init = _pick(rng, [True, False])
        return Call("Mmad", lambda t: Mmad(t.co1, t.a2, t.b2, MmadParams(m, 16, k, 0, False, init)), _first(m_r, k_r),
                    cube=True)
    n, n_r = _pick(rng, [(16, None), (8, None), (0, "count-negative"), (32, "count-too-big"), ("16", "count-type")])
    q, q_r = _pick(rng, [(QuantMode_t.F322F16, None), (QuantMode_t.NoQuant, "dtype-mix"), ("f16", "enum-type")])
    stride, st_r = _pick(rng, [(16, None), (24, None), (0, "count-negative"), (-1, "count-negative")])
    span = (0, ((16 - 1) * stride + n) * 2) if not (n_r or st_r) else (0, 0)
    return Call("Fixpipe", lambda t: Fixpipe(t.z, t.co1, FixpipeParams(n, 16, 16, stride, False, q)),
                _first(n_r, q_r, st_r), gm_span=span, cube=True)


@kernel(core="AIC")
def cube_case(x, z, call, box):
    """L1 a1, b1 (256 half), L0A a2, L0B b2 (256 half), L0C co1 (256 float), canaried; loaded and multiplied
    once; then ``call.fn(t)``."""
    pipe = TPipe()
    guards, bufs = [], {}
    for name, pos, nbytes, dtype in (("a1", TPosition.A1, 512, half), ("b1", TPosition.B1, 512, half),
                                     ("a2", TPosition.A2, 512, half), ("b2", TPosition.B2, 512, half),
                                     ("co1", TPosition.CO1, 1024, float32)):
        guards.append(_tbuf(pipe, pos, 64).Get(np.uint8))       # a canary on each side of the buffer
        bufs[name] = _tbuf(pipe, pos, nbytes).Get(dtype)
        guards.append(_tbuf(pipe, pos, 64).Get(np.uint8))
    from ascend_sim import GlobalTensor
    xg, zg = GlobalTensor(half), GlobalTensor(half)
    xg.SetGlobalBuffer(x, N)
    zg.SetGlobalBuffer(z, N)
    DataCopy(bufs["a1"], xg, N)
    DataCopy(bufs["b1"], xg, N)
    SetFlag(HardEvent.MTE2_MTE1, 0)
    WaitFlag(HardEvent.MTE2_MTE1, 0)
    LoadData(bufs["a2"], bufs["a1"], LoadData2DParams(0, 1, 1))
    LoadData(bufs["b2"], bufs["b1"], LoadData2DParams(0, 1, 1))
    SetFlag(HardEvent.MTE1_M, 0)
    WaitFlag(HardEvent.MTE1_M, 0)
    Mmad(bufs["co1"], bufs["a2"], bufs["b2"], MmadParams(16, 16, 16))
    PipeBarrier(PIPE_ALL)
    for gd in guards:
        writable_view(gd)[...] = PATTERN
    t = SimpleNamespace(x=xg, z=zg, pipe=pipe, **bufs)
    try:
        call.fn(t)
    finally:
        box["canary_ok"] = all(bool(np.all(gd.view() == PATTERN)) for gd in guards)
    PipeBarrier(PIPE_ALL)


def _tbuf(pipe, position, nbytes: int) -> TBuf:
    buf = TBuf(position)
    pipe.InitBuffer(buf, nbytes)
    return buf


def _enque_deque(t, dtype) -> None:
    u = t.q.AllocTensor(half)
    Duplicate(u, 1.0, 16)
    t.q.EnQue(u)
    v = t.q.DeQue(dtype)
    t.q.FreeTensor(v)


# ----------------------------------------------------------------------------- the harness
@kernel
def fuzz_case(x, z, call, box):
    """Canaried buffers, all written and synchronised, then ``call.fn(t)``; canaries are checked after."""
    pipe = TPipe()
    guards, bufs = [], {}
    for name, dtype in (("a", half), ("b", half), ("c", float32)):
        g = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(g, CANARY)
        guards.append(g.Get(np.uint8))
        buf = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, 2 * N)
        bufs[name] = buf.Get(dtype)
    g = TBuf(TPosition.VECCALC)
    pipe.InitBuffer(g, CANARY)
    guards.append(g.Get(np.uint8))
    small = TBuf(TPosition.VECCALC)
    pipe.InitBuffer(small, 64)
    q = TQue(TPosition.VECIN, 1)
    pipe.InitBuffer(q, 1, 2 * N)
    from ascend_sim import GlobalTensor
    xg, zg = GlobalTensor(half), GlobalTensor(half)
    xg.SetGlobalBuffer(x, N)
    zg.SetGlobalBuffer(z, N)
    for t in bufs.values():
        Duplicate(t, 1, t.GetSize())
    Duplicate(small.Get(half), 1.0, 32)
    for gd in guards:
        writable_view(gd)[...] = PATTERN            # host-side poke: not an instruction (the canary is never read)
    PipeBarrier(PIPE_ALL)
    t = SimpleNamespace(x=xg, z=zg, xp=x, small=small, q=q, pipe=pipe, **bufs)
    box["guards"] = guards
    try:
        call.fn(t)
    finally:
        box["canary_ok"] = all(bool(np.all(gd.view() == PATTERN)) for gd in guards)
    PipeBarrier(PIPE_ALL)


TEMPLATES = _typed_templates()
CUBE_TEMPLATES = _cube_templates()
STRUCTS = _structs()


def run_call(call: Call) -> str:
    """The outcome class of one call."""
    x = np.arange(N, dtype=half)
    z = np.full(N, 7, half)
    box: dict = {}
    z0 = z.copy()
    try:
        launch(cube_case if call.cube else fuzz_case, 1, x, z, call, box)
        outcome = "ok"
    except InternalError as e:
        return f"escape:InternalError {call.name}: {e.rule_message[:120]}"
    except KernelError as e:
        outcome = f"rule:{type(e).__name__}"
    except Exception as e:          # noqa: BLE001 - the point is to classify every escape
        return f"escape:{type(e).__name__} {call.name}: {str(e)[:120]}"
    if box.get("canary_ok") is False:
        return f"oob-write {call.name}"
    lo, hi = call.gm_span or (0, 0)
    zb, z0b = z.view(np.uint8), z0.view(np.uint8)
    if not (np.array_equal(zb[:lo], z0b[:lo]) and np.array_equal(zb[hi:], z0b[hi:])):
        return f"oob-write {call.name} (GM)"
    if outcome == "ok" and call.breaks:
        return f"accepted:{call.breaks} {call.name}"
    return outcome


def fuzz(n: int, seed: int = 0) -> Counter:
    """Outcome classes of ``n`` generated calls (failures keep their detail, the rest are counted by class)."""
    rng = np.random.default_rng(seed)
    out: Counter = Counter()
    for _ in range(n):
        out[run_call(generate(rng))] += 1
    return out


def failures(outcomes: Counter) -> dict:
    """The forbidden outcome classes: escapes, silently accepted invalid calls, writes outside the destination."""
    return {k: v for k, v in outcomes.items() if k.startswith(("escape", "accepted", "oob-write"))}
