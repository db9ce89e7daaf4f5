"""False-positive suite (issue 11): correct but unusual kernels run with no sanitizer error, no warning,
and exact results. Each case computes its expected output with numpy, independently of the simulator."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (ASCEND_IS_AIV, CMPMODE, PIPE_FIX, PIPE_MTE3, PIPE_V, SELMODE, Add, Adds, BinaryRepeatParams,
                        Cast, Compare, CrossCoreSetFlag, CrossCoreWaitFlag, DataCopy, DataCopyExtParams, DataCopyPad,
                        DataCopyPadExtParams, DataCopyParams, Duplicate, GetBlockIdx, GetBlockNum, GetSubBlockIdx,
                        HardEvent, Max, Mul, Muls, PipeBarrier, QuantMode_t, ReduceMax, ReduceSum, Relu, RoundMode,
                        Select, SetAtomicAdd, SetAtomicNone, SetFlag, Sub, SyncAll, TBuf, TPipe, TPosition, TQue,
                        UnaryRepeatParams, WaitFlag, WholeReduceSum, float32, half, int8, int32, kernel, launch)
from kernels_util import cube_16x16, gm, handoff, no_warnings, run_on_cube, scratch, vector_result

RNG = np.random.default_rng(2026)


def small_ints(n: int, dtype=half) -> np.ndarray:
    """Values whose sums and products stay exact in half."""
    return RNG.integers(-8, 9, n).astype(dtype)


# ============================================================================ vector bodies (run_on_ub)
def _b_add_halves(x, y, z):
    Add(z[0:128], x[0:128], y[0:128], 128)
    Add(z[128:256], x[128:256], y[128:256], 128)


def _b_in_place(x, z):
    Adds(x, x, 2.0, 256)
    Mul(x, x, x, 256)
    Sub(z, x, x, 256)
    Add(z, z, x, 256)


def _b_block_stride(x, y, z):         # every other 32-byte block of x and y, packed into z
    Add(z, x, y, 128, 1, BinaryRepeatParams(1, 2, 2, 8, 16, 16))


def _b_repeat_stride_0(x, y, z):      # the same 128 lanes of y added to each of two repeats of x
    Add(z, x, y, 128, 2, BinaryRepeatParams(1, 1, 1, 8, 8, 0))


def _b_bit_mask(x, y, z):             # lanes 0..63 and 64+0..63 of every other lane pair: bit mask
    Duplicate(z, 0.0, 256)
    Max(z, x, y, [0x5555555555555555, 0xFFFFFFFF00000000], 2, BinaryRepeatParams(1, 1, 1, 8, 8, 8))


def _b_duplicate_strided(z):
    Duplicate(z, 1.0, 256)
    Duplicate(z, 5.0, 32, 2, 2, 8)    # mask 32 (two blocks), 2 repeats, block stride 2, repeat stride 8


def _b_unary_repeat(x, z):
    from ascend_sim import Abs
    Duplicate(z, 0.0, 256)
    Abs(z, x, 64, 2, UnaryRepeatParams(1, 1, 8, 8))


def _b_compare_select(x, y, z):
    def body_scratch():
        buf = TBuf(TPosition.VECCALC)
        TPipe().InitBuffer(buf, 64)
        return buf.Get(np.uint8)
    m = body_scratch()
    Compare(m, x, y, CMPMODE.GT, 256)
    Select(z, m, x, y, SELMODE.VSEL_TENSOR_TENSOR_MODE, 256)


def _b_select_scalar(x, y, z):
    buf = TBuf(TPosition.VECCALC)
    TPipe().InitBuffer(buf, 64)
    m = buf.Get(np.uint8)
    Compare(m, x, y, CMPMODE.LE, 256)
    Select(z, m, x, -1.0, SELMODE.VSEL_TENSOR_SCALAR_MODE, 256)


def _b_cast_chain(x, z):              # half -> float -> int32 -> float -> half, exact for small ints
    pipe = TPipe()
    bufs = []
    for _ in range(2):
        b = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(b, 1024)
        bufs.append(b)
    f, i = bufs[0].Get(float32), bufs[1].Get(int32)
    Cast(f, x, RoundMode.CAST_NONE, 256)
    Cast(i, f, RoundMode.CAST_RINT, 256)
    Cast(f, i, RoundMode.CAST_NONE, 256)
    Muls(f, f, 3.0, 256)
    Cast(z, f, RoundMode.CAST_NONE, 256)


def _b_tbuf_reuse_dtypes(x, z):       # one TBuf seen as float, then as half
    buf = TBuf(TPosition.VECCALC)
    TPipe().InitBuffer(buf, 2048)
    f = buf.Get(float32, 256)          # bytes 0..1023
    Cast(f, x, RoundMode.CAST_NONE, 256)
    Adds(f, f, 0.5, 256)
    h = buf.Get(half)                  # the same buffer as half: bytes 1024..1535 written before they are read
    Cast(h[512:768], f, RoundMode.CAST_FLOOR, 256)
    Add(z, h[512:768], x, 256)
    Cast(h[0:256], f, RoundMode.CAST_CEIL, 256)      # f's own bytes reused as half once f is read
    Sub(z, z, h[0:256], 256)
    Adds(z, z, 1.0, 256)


def _b_reduce_max_pair(x, z):
    buf = TBuf(TPosition.VECCALC)
    TPipe().InitBuffer(buf, 512)
    ReduceMax(z[2], x, buf.Get(half), 256, True)      # dst at 4 bytes: element-pair aligned


def _b_reduce_sum_tail(x, z):
    buf = TBuf(TPosition.VECCALC)
    TPipe().InitBuffer(buf, 512)
    ReduceSum(z, x, buf.Get(half), 200)


def _b_whole_reduce(x, z):
    WholeReduceSum(z, x, 128, 2, 1, 1, 8)


def _b_barrier_between_v(x, z):
    Adds(z, x, 1.0, 256)
    PipeBarrier(PIPE_V)
    Muls(z, z, 2.0, 256)


def _b_relu_tail(x, z):
    Relu(z, x, 100)


def _b_ub_to_ub(x, z):
    PipeBarrier()                      # V/MTE2 -> MTE3: the copy reads what came in
    DataCopy(z[128], x, 128)
    DataCopy(z, x[128], 128)


def _mask_lanes(bits: int, lanes: int = 64) -> np.ndarray:
    return np.array([(bits >> i) & 1 for i in range(lanes)], bool)


def _ref_bit_mask(x, y):
    z = np.zeros(256, half)
    sel = np.concatenate([_mask_lanes(0x5555555555555555), _mask_lanes(0xFFFFFFFF00000000)])
    for r in range(2):
        idx = np.arange(128) + r * 128
        z[idx[sel]] = np.maximum(x[idx[sel]], y[idx[sel]])
    return z


def _ref_whole(x):
    z = np.zeros(2, half)
    for r in range(2):
        z[r] = x[r * 128:(r + 1) * 128].astype(np.float32).sum()
    return z


X, Y = small_ints(256), small_ints(256)
VECTOR_CASES = [
    ("halves", _b_add_halves, (X, Y), X + Y),
    ("in-place", _b_in_place, (X,), ((X + 2) * (X + 2))),
    ("block-stride-2", _b_block_stride, (X, Y),
     np.concatenate([(X.reshape(16, 16)[0::2] + Y.reshape(16, 16)[0::2]).ravel(), np.full(128, 9, half)])),
    ("repeat-stride-0", _b_repeat_stride_0, (X, Y), X + np.tile(Y[:128], 2)),
    ("bit-mask", _b_bit_mask, (X, Y), _ref_bit_mask(X, Y)),
    ("duplicate-strided", _b_duplicate_strided, (), np.where(
        np.isin(np.arange(256), np.concatenate([np.arange(0, 16), np.arange(32, 48),
                                                np.arange(128, 144), np.arange(160, 176)])), 5.0, 1.0).astype(half)),
    ("unary-repeat", _b_unary_repeat, (X,), np.concatenate([np.abs(X[:64]), np.zeros(64, half),
                                                            np.abs(X[128:192]), np.zeros(64, half)])),
    ("compare-select", _b_compare_select, (X, Y), np.where(X > Y, X, Y)),
    ("select-scalar", _b_select_scalar, (X, Y), np.where(X <= Y, X, np.float16(-1))),
    ("cast-chain", _b_cast_chain, (X,), X * 3),
    ("tbuf-reuse-dtypes", _b_tbuf_reuse_dtypes, (X,), X + 1),     # x + .5 is exact in half: floor = ceil
    ("reduce-max-pair", _b_reduce_max_pair, (X,), None),
    ("reduce-sum-tail", _b_reduce_sum_tail, (X,), None),
    ("whole-reduce", _b_whole_reduce, (X,), None),
    ("barrier-between-v", _b_barrier_between_v, (X,), (X + 1) * 2),
    ("relu-tail", _b_relu_tail, (X,), None),
    ("ub-to-ub", _b_ub_to_ub, (X,), np.concatenate([X[128:], X[:128]])),
]


@pytest.mark.parametrize("body, inputs, expected", [c[1:] for c in VECTOR_CASES], ids=[c[0] for c in VECTOR_CASES])
def test_unusual_vector_kernels_run_clean_and_exact(body, inputs, expected):
    start = np.full(256, 9, half)
    with no_warnings():
        z = vector_result(body, *inputs, out_like=start)
    if body is _b_reduce_max_pair:
        assert z[2] == X.max() and z[3].view(np.uint16) == int(np.argmax(X)) and z[0] == 9
        return
    if body is _b_reduce_sum_tail:
        assert z[0] == X[:200].astype(np.float32).sum() and np.all(z[1:] == 9)
        return
    if body is _b_whole_reduce:
        assert np.array_equal(z[:2], _ref_whole(X)) and np.all(z[2:] == 9)
        return
    if body is _b_relu_tail:
        assert np.array_equal(z[:100], np.maximum(X[:100], 0)) and np.all(z[100:] == 9)
        return
    assert np.array_equal(z, expected.astype(half))


# ============================================================================ queue pipelines
@kernel
def pipelined_add(x, y, z, cfg):
    """The add_custom pattern with ``buffers`` buffers per queue, ``depth``-deep queues and a tail."""
    n, tile, buffers, depth = cfg
    pipe = TPipe()
    qx, qy, qz = TQue(TPosition.VECIN, depth), TQue(TPosition.VECIN, depth), TQue(TPosition.VECOUT, depth)
    for q in (qx, qy, qz):
        pipe.InitBuffer(q, buffers, tile * 2)
    xg, yg, zg = gm(x), gm(y), gm(z)
    for off in range(0, n, tile):
        ln = min(tile, n - off)
        params = DataCopyExtParams(1, ln * 2, 0, 0, 0)
        a, b = qx.AllocTensor(half), qy.AllocTensor(half)
        DataCopyPad(a, xg[off], params, DataCopyPadExtParams(False, 0, 0, 0))
        DataCopyPad(b, yg[off], params)
        qx.EnQue(a)
        qy.EnQue(b)
        a, b = qx.DeQue(half), qy.DeQue(half)
        c = qz.AllocTensor(half)
        Add(c, a, b, ln)
        qx.FreeTensor(a)
        qy.FreeTensor(b)
        qz.EnQue(c)
        c = qz.DeQue(half)
        DataCopyPad(zg[off], c, params)
        qz.FreeTensor(c)


@pytest.mark.parametrize("n, tile, buffers, depth", [(1000, 256, 1, 1), (1000, 128, 3, 1), (777, 64, 2, 2),
                                                     (256, 256, 2, 1), (100, 32, 3, 2)],
                         ids=["buffer1-tail", "buffer3-tail", "depth2-odd", "one-tile", "tiny-tiles"])
def test_queue_pipelines_with_tails_run_clean(n, tile, buffers, depth):
    x, y = small_ints(n), small_ints(n)
    z = np.zeros(n, half)
    with no_warnings():
        launch(pipelined_add, 1, x, y, z, (n, tile, buffers, depth))
    assert np.array_equal(z, x + y)


@kernel
def explicit_flags(x, z):
    """Hand-written sync with FetchEventID and a scalar read of a vector result."""
    pipe = TPipe()
    t = scratch(512, half, pipe=pipe)
    DataCopy(t, gm(x), 256)
    eid = pipe.FetchEventID(HardEvent.MTE2_V)
    SetFlag(HardEvent.MTE2_V, eid)
    WaitFlag(HardEvent.MTE2_V, eid)
    Adds(t, t, 1.0, 256)
    SetFlag(HardEvent.V_S, 1)
    WaitFlag(HardEvent.V_S, 1)
    first = t.GetValue(0)
    t.SetValue(255, first)
    SetFlag(HardEvent.S_MTE3, 2)
    WaitFlag(HardEvent.S_MTE3, 2)
    SetFlag(HardEvent.V_MTE3, 3)
    WaitFlag(HardEvent.V_MTE3, 3)
    DataCopy(gm(z), t, 256)


def test_explicit_flags_and_scalar_access_run_clean():
    x = small_ints(256)
    z = np.zeros(256, half)
    with no_warnings():
        launch(explicit_flags, 1, x, z)
    expected = x + 1
    expected[255] = expected[0]
    assert np.array_equal(z, expected)


# ============================================================================ several blocks
@kernel
def interleaved_strips(x, z):
    """Block b writes rows b, b + B, b + 2B ... of a (rows, 16) half matrix: one strided copy each."""
    b, nb = GetBlockIdx(), GetBlockNum()
    rows = 8 // nb
    t = scratch(512, half)
    DataCopy(t, gm(x)[b * 16], DataCopyParams(rows, 1, nb - 1, 0))      # rows b, b+nb ... of x
    handoff(HardEvent.MTE2_V)
    Muls(t, t, 2.0, rows * 16)
    handoff(HardEvent.V_MTE3)
    DataCopy(gm(z)[b * 16], t, DataCopyParams(rows, 1, 0, nb - 1))


@pytest.mark.parametrize("blocks", [2, 4, 8])
def test_interleaved_strips_from_several_blocks(blocks):
    x = small_ints(128)
    z = np.zeros(128, half)
    with no_warnings():
        launch(interleaved_strips, blocks, x, z)
    assert np.array_equal(z, x * 2)


@kernel
def atomic_accumulate(x, z):
    t = scratch(512, half)
    DataCopy(t, gm(x)[GetBlockIdx() * 256], 256)
    handoff(HardEvent.MTE2_MTE3)
    SetAtomicAdd(half)
    DataCopy(gm(z), t, 256)
    SetAtomicNone()


def test_atomic_accumulation_of_every_block():
    x = small_ints(4 * 256)
    z = np.zeros(256, half)
    with no_warnings():
        launch(atomic_accumulate, 4, x, z)
    assert np.array_equal(z, x.reshape(4, 256).astype(np.float32).sum(0).astype(half))


@kernel
def two_phase_sum(x, partial, total):
    """Phase 1: each block sums its 256 floats into partial[b*8]. SyncAll. Phase 2: block 0 sums the partials."""
    b, nb = GetBlockIdx(), GetBlockNum()
    pipe = TPipe()
    t, w, s = (scratch(1024, float32, pipe=pipe) for _ in range(3))
    DataCopy(t, gm(x)[b * 256], 256)
    handoff(HardEvent.MTE2_V)
    Duplicate(s, 0.0, 8)
    ReduceSum(s, t, w, 256)
    handoff(HardEvent.V_MTE3)
    DataCopy(gm(partial)[b * 8], s, 8)
    SyncAll()
    if b == 0:
        p = scratch(1024, float32, pipe=pipe)
        DataCopy(p, gm(partial), nb * 8)
        handoff(HardEvent.MTE2_V)
        Duplicate(s, 0.0, 8)
        WholeReduceSum(s, p, 1, nb, 1, 1, 1)       # lane 0 of each 32-byte block: one partial per repeat
        ReduceSum(s, s, w, nb)
        handoff(HardEvent.V_MTE3)
        DataCopy(gm(total), s, 8)
        SyncAll()
    else:
        SyncAll()


def test_two_phase_syncall_reduction():
    blocks = 4
    x = RNG.integers(-50, 50, blocks * 256).astype(np.float32)
    partial, total = np.zeros(blocks * 8, np.float32), np.zeros(8, np.float32)
    with no_warnings():
        launch(two_phase_sum, blocks, x, partial, total)
    assert np.array_equal(partial[::8], x.reshape(blocks, 256).sum(1)) and total[0] == x.sum()


@kernel
def rewrite_after_syncall(x, z):
    """Every block writes its strip; after SyncAll the last block doubles all strips in place."""
    b, nb = GetBlockIdx(), GetBlockNum()
    t = scratch(2048, half)
    DataCopy(t, gm(x)[b * 64], 64)
    handoff(HardEvent.MTE2_MTE3)
    DataCopy(gm(z)[b * 64], t, 64)
    SyncAll()
    if b == nb - 1:
        DataCopy(t, gm(z), nb * 64)
        handoff(HardEvent.MTE2_V)
        Muls(t, t, 2.0, nb * 64)
        handoff(HardEvent.V_MTE3)
        DataCopy(gm(z), t, nb * 64)


def test_a_block_rewrites_every_strip_after_syncall():
    x = small_ints(4 * 64)
    z = np.zeros(4 * 64, half)
    with no_warnings():
        launch(rewrite_after_syncall, 4, x, z)
    assert np.array_equal(z, x * 2)


@kernel
def own_output_read_back(x, z):
    """One block accumulates into its own GM output three times (MTE3 -> MTE2 flag each round)."""
    t = scratch(512, half)
    DataCopy(t, gm(x), 256)
    handoff(HardEvent.MTE2_MTE3)
    DataCopy(gm(z), t, 256)
    for _ in range(3):
        handoff(HardEvent.MTE3_MTE2)
        handoff(HardEvent.V_MTE2)
        DataCopy(t, gm(z), 256)
        handoff(HardEvent.MTE2_V)
        Add(t, t, t, 256)
        handoff(HardEvent.V_MTE3)
        DataCopy(gm(z), t, 256)


def test_a_block_reads_back_its_own_output_after_flags():
    x = small_ints(256)
    z = np.zeros(256, half)
    with no_warnings():
        launch(own_output_read_back, 1, x, z)
    assert np.array_equal(z, x * 8)


# ============================================================================ MIX hand-offs through GM
@kernel(core="MIX")
def aiv_feeds_aic_feeds_aiv(x, work, c, out):
    """AIV 0 stages x into GM and flags the AIC; the AIC multiplies by I and flags back; AIV 0 adds 1."""
    if ASCEND_IS_AIV():
        if GetSubBlockIdx() == 0:
            t = scratch(512, half)
            DataCopy(t, gm(x), 256)
            handoff(HardEvent.MTE2_MTE3)
            DataCopy(gm(work), t, 256)
            CrossCoreSetFlag(2, PIPE_MTE3, 1)
            CrossCoreWaitFlag(2)
            f = scratch(1024, float32)
            DataCopy(f, gm(c), 256)
            handoff(HardEvent.MTE2_V)
            Adds(f, f, 1.0, 256)
            handoff(HardEvent.V_MTE3)
            DataCopy(gm(out), f, 256)
        else:
            CrossCoreSetFlag(2, PIPE_MTE3, 1)          # mode 2 needs both AIVs before the AIC goes on
            CrossCoreWaitFlag(2)
        return
    CrossCoreWaitFlag(1)
    pipe = TPipe()
    a1, b1 = scratch(512, half, TPosition.A1, pipe), scratch(512, half, TPosition.B1, pipe)
    DataCopy(a1, gm(work), 256)
    DataCopy(b1, gm(work + 256), 256)
    cube_16x16(a1, b1, c, pipe)
    CrossCoreSetFlag(2, PIPE_FIX, 2)


def test_mix_round_trip_through_gm():
    x = small_ints(256)
    work = np.concatenate([np.zeros(256), np.eye(16).ravel()]).astype(half)
    c, out = np.zeros(256, np.float32), np.zeros(256, np.float32)
    with no_warnings():
        launch(aiv_feeds_aic_feeds_aiv, 1, x, work, c, out)
    assert np.array_equal(c, x.astype(np.float32)) and np.array_equal(out, x.astype(np.float32) + 1)


# ============================================================================ cube
@pytest.mark.parametrize("steps", [1, 3])
def test_k_accumulating_cube_loop(steps):
    a = [small_ints(16 * 16).reshape(16, 16) for _ in range(steps)]
    b = [small_ints(16 * 16).reshape(16, 16) for _ in range(steps)]
    with no_warnings():
        c = run_on_cube(a, b, np.float32)
    assert np.array_equal(c, sum(x.astype(np.float32) @ y.astype(np.float32) for x, y in zip(a, b)))


def test_int8_cube_and_fixpipe_relu_to_half():
    a = [RNG.integers(-4, 5, (16, 32)).astype(int8)]
    b = [RNG.integers(-4, 5, (32, 16)).astype(int8)]
    with no_warnings():
        c = run_on_cube(a, b, np.int32)
    assert np.array_equal(c, a[0].astype(np.int32) @ b[0].astype(np.int32))
    ah, bh = [small_ints(256).reshape(16, 16)], [small_ints(256).reshape(16, 16)]
    with no_warnings():
        c = run_on_cube(ah, bh, half, quant=QuantMode_t.F322F16, relu=True)
    assert np.array_equal(c, np.maximum(ah[0].astype(np.float32) @ bh[0].astype(np.float32), 0).astype(half))
