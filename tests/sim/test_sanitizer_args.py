"""Every bad argument is a KernelError naming the rule, the numbers, the fix and the kernel line (issue 11).

Each case was silent (a clamped slice, a buffer of the wrong size, a write outside the destination)
or escaped as a raw Python exception before. Bugs of the simulator itself come out as InternalError.
"""
from __future__ import annotations

import dataclasses

from types import SimpleNamespace

import numpy as np
import pytest

from ascend_sim import (PIPE_ALL, PIPE_MTE3, PIPE_V, Add, Adds, AlignmentError, ArgumentError,
                        BinaryRepeatParams, Cast, CrossCoreSetFlag, CrossCoreWaitFlag, DataCopy, DataCopyExtParams,
                        DataCopyPad, DataCopyPadExtParams, DataCopyParams, Duplicate, DtypeError, HardEvent,
                        KernelError, Muls, OutOfBoundsError, PipeBarrier, PositionError, QueueError, ReduceSum,
                        RoundMode, SELMODE, Select, SetFlag, TBuf, TPipe, TPosition, TQue, half, int16, int32, kernel,
                        launch)
from ascend_sim.hw.chips import get_chip
from ascend_sim.engine.errors import InternalError
from kernels_util import gm, raises_rule, scratch

PadP = DataCopyPadExtParams

N = 256


@kernel
def arg_case(x, z, action):
    """UB TBufs a, b, c (256 half each), a 64-byte TBuf ``small``, a VECIN queue ``q``; then ``action(t)``."""
    pipe = TPipe()
    a, b, c = (scratch(2 * N, half, pipe=pipe) for _ in range(3))
    small = TBuf(TPosition.VECCALC)
    pipe.InitBuffer(small, 64)
    q = TQue(TPosition.VECIN, 1)
    pipe.InitBuffer(q, 1, 2 * N)
    action(SimpleNamespace(pipe=pipe, a=a, b=b, c=c, small=small, q=q, x=gm(x, size=N), z=gm(z, size=N)))


def run(action):
    return launch(arg_case, 1, np.arange(N, dtype=half), np.zeros(N, half), action, gm_names=["x", "z"])


CASES = [
    # --- silent corruption before: now memcheck errors
    ("slice-past-end", lambda t: t.a[200:300], OutOfBoundsError,
     ["slice [200:300] outside LocalTensor of 256 half elements", "0 <= start <= stop <= 256"]),
    ("slice-negative", lambda t: t.a[-16:], OutOfBoundsError, ["slice [-16:256] outside LocalTensor"]),
    ("slice-float", lambda t: t.a[0:16.0], ArgumentError,
     ["LocalTensor: slice stop must be an integer, got float 16.0"]),
    ("tbuf-get-beyond", lambda t: t.small.Get(half, 1000), OutOfBoundsError,
     ["TBuf.Get(half, 1000)", "holds 64 bytes = 32 half elements", "reach into the next buffer"]),
    ("tbuf-initbuffer-queue-style", lambda t: t.pipe.InitBuffer(TBuf(TPosition.VECCALC), 1, 1024), ArgumentError,
     ["on a TBuf", "InitBuffer(tbuf, bytes)"]),
    ("negative-repeat-stride", lambda t: Add(t.b, t.a, t.a, 128, 2, BinaryRepeatParams(1, 1, 1, -8, 8, 8)),
     ArgumentError, ["BinaryRepeatParams: dstRepStride = -8, but it must be in 0..255", "uint8_t"]),
    ("oversized-block-stride", lambda t: Add(t.b, t.a, t.a, 128, 1, BinaryRepeatParams(256, 1, 1, 8, 8, 8)),
     ArgumentError, ["BinaryRepeatParams: dstBlkStride = 256, but it must be in 0..255"]),
    ("ub-to-ub-misaligned", lambda t: DataCopy(t.b[1], t.a, 16), AlignmentError,
     ["DataCopy destination UB address 514 is not 32-byte aligned"]),
    # --- invalid arguments accepted before
    ("count-str", lambda t: Add(t.c, t.a, t.b, "16"), ArgumentError, ["Add: count must be an integer, got str '16'"]),
    ("count-float", lambda t: Add(t.c, t.a, t.b, 16.0), ArgumentError, ["count must be an integer, got float 16.0"]),
    ("count-none", lambda t: Adds(t.a, t.a, -2.0, None), ArgumentError, ["Adds: count must be an integer"]),
    ("scalar-none", lambda t: Muls(t.c, t.a, None, 16), ArgumentError,
     ["Muls: scalar must be a real number for half data, got NoneType None"]),
    ("scalar-out-of-int-range", lambda t: Duplicate(t.a.ReinterpretCast(int16), 70000, 16), ArgumentError,
     ["70000 is not an integer in the int16_t range -32768..32767"]),
    ("tque-depth-0", lambda t: TQue(TPosition.VECIN, 0), ArgumentError, ["TQue: depth = 0, but it must be at least 1"]),
    ("event-id-float", lambda t: SetFlag(HardEvent.MTE2_V, 1.5), ArgumentError,
     ["SetFlag(MTE2_V, 1.5): event ids are the integers 0..7 on Ascend910B"]),
    ("cross-flag-id", lambda t: CrossCoreSetFlag(0, PIPE_MTE3, 16), ArgumentError,
     ["CrossCoreSetFlag: flagId = 16, but it must be in 0..15", "11..14 are SyncAll's"]),
    ("cross-wait-flag-id", lambda t: CrossCoreWaitFlag(-1), ArgumentError, ["CrossCoreWaitFlag: flagId = -1"]),
    ("cross-flag-pipe-all", lambda t: CrossCoreSetFlag(2, PIPE_ALL, 4), ArgumentError,
     ["pipe PIPE_ALL is not allowed"]),
    ("pipebarrier-99", lambda t: PipeBarrier(99), ArgumentError, ["PipeBarrier: 99 is not a pipe", "PIPE_V"]),
    ("pipebarrier-int", lambda t: PipeBarrier(3), ArgumentError, ["PipeBarrier: 3 is not a pipe"]),
    ("select-mode", lambda t: Select(t.c, t.a, t.b, t.b, 7, 128), ArgumentError,
     ["Select: selMode must be a SELMODE, got 7", "SELMODE.VSEL_TENSOR_TENSOR_MODE"]),
    ("select-scalar-none", lambda t: Select(t.c, t.a, t.b, None, SELMODE.VSEL_TENSOR_SCALAR_MODE, 128),
     ArgumentError, ["Select: src1 (the scalar of VSEL_TENSOR_SCALAR_MODE) must be a real number"]),
    ("cast-odd-to-int", lambda t: Cast(t.c.ReinterpretCast(int16), t.a, RoundMode.CAST_ODD, 128), ArgumentError,
     ["Cast: half -> int16_t takes CAST_RINT/CAST_FLOOR/CAST_CEIL/CAST_ROUND/CAST_TRUNC, not CAST_ODD"]),
    ("complex-alloc", lambda t: t.q.AllocTensor(np.complex64), DtypeError, ["is not an Ascend C data type"]),
    ("complex-reinterpret", lambda t: t.a.ReinterpretCast(np.complex64), DtypeError, ["not an Ascend C data type"]),
    ("datacopy-none", lambda t: DataCopy(None, t.x, 17), PositionError,
     ["DataCopy: dst must be a LocalTensor or a GlobalTensor, got NoneType"]),
    ("datacopy-params-float", lambda t: DataCopyParams(1.0, 2, 0, 0), ArgumentError,
     ["DataCopyParams: blockCount must be an integer, got float 1.0"]),
    ("datacopypad-odd-bytes", lambda t: DataCopyPad(t.a, t.x, DataCopyExtParams(1, 3, 0, 0, 0),
                                                    DataCopyPadExtParams(True, 0, 0, 0)), AlignmentError,
     ["DataCopyPad blockLen 3 bytes is not a whole number of half elements (2 bytes each; 3 % 2 = 1)"]),
    ("datacopypad-ispad-int", lambda t: DataCopyPad(t.a, t.x, DataCopyExtParams(1, 6, 0, 0, 0), PadP(1, 0, 0, 0)),
     ArgumentError, ["isPad must be True or False"]),
    ("gm-offset-float", lambda t: t.x[1.5], ArgumentError, ["GlobalTensor: offset must be an integer, got float 1.5"]),
    ("getvalue-float", lambda t: t.a.GetValue(1.0), ArgumentError, ["GetValue: index must be an integer"]),
]


@pytest.mark.parametrize("action, exc, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_argument_is_a_kernel_error_at_the_call(action, exc, words):
    with raises_rule(exc, *words, at=action):
        run(action)


def float_count_after_the_int_plan(t):
    Duplicate(t.a, 1.0, N)
    Duplicate(t.b, 2.0, N)
    Add(t.c, t.a, t.b, 16)          # plans the instruction for count 16
    Add(t.c, t.a, t.b, 16.0)  # <- the float count must not find the plan of 16


def test_a_float_count_does_not_reuse_the_plan_of_the_int():
    with raises_rule(ArgumentError, "count must be an integer, got float 16.0", at="<- the float count must not"):
        run(float_count_after_the_int_plan)


# ============================================================================ use after FreeTensor
def write_after_free(t):
    u = t.q.AllocTensor(half)
    Duplicate(u, 1.0, N)
    t.q.FreeTensor(u)
    Duplicate(u, 2.0, N)  # <- write after free


def read_after_free(t):
    u = t.q.AllocTensor(half)
    DataCopy(u, t.x, N)
    t.q.EnQue(u)
    v = t.q.DeQue(half)
    t.q.FreeTensor(v)
    DataCopy(t.z, v, N)  # <- read after free


def slice_after_free(t):
    u = t.q.AllocTensor(half)
    Duplicate(u, 1.0, N)
    t.q.FreeTensor(u)
    Adds(t.a, u[16:48], 1.0, 32)  # <- a slice of a freed tensor


def realloc_is_live_again(t):
    u = t.q.AllocTensor(half)
    Duplicate(u, 1.0, N)
    t.q.FreeTensor(u)
    u = t.q.AllocTensor(half)       # the same buffer, handed out again: live
    Duplicate(u, 3.0, N)
    t.q.EnQue(u)
    v = t.q.DeQue(half)
    SetFlag(HardEvent.V_MTE3, 0)
    from ascend_sim import WaitFlag
    WaitFlag(HardEvent.V_MTE3, 0)
    DataCopy(t.z, v, N)
    t.q.FreeTensor(v)


@pytest.mark.parametrize("action, marker", [(write_after_free, "<- write after free"),
                                            (read_after_free, "<- read after free"),
                                            (slice_after_free, "<- a slice of a freed tensor")])
def test_use_after_free_is_reported(action, marker):
    with raises_rule(QueueError, "given back with FreeTensor (use after free)", "UB bytes", at=marker):
        run(action)


def test_a_tensor_allocated_again_is_live():
    z = np.zeros(N, half)
    launch(arg_case, 1, np.arange(N, dtype=half), z, realloc_is_live_again)
    assert np.all(z == 3.0)


# ============================================================================ results that escaped before
def int32_sum(t):
    i = t.a.ReinterpretCast(int32)
    Duplicate(i, 2**30, 128)
    ReduceSum(i, i, t.b.ReinterpretCast(int32), 128)  # <- int32 ReduceSum


def test_int32_reduce_sum_is_refused_with_the_a2_list():
    """ReduceSum.md: "Atlas A2 训练系列产品/Atlas A2 推理系列产品，支持half、float" (issue 32: it ran and wrapped)."""
    with raises_rule(DtypeError, "ReduceSum supports half, float on Atlas A2, not int32_t",
                     at="<- int32 ReduceSum"):
        run(int32_sum)


# ============================================================================ internal errors
def atomic_none(t):
    from ascend_sim import SetAtomicNone
    SetAtomicNone()  # <- the call that hits the bug


def test_an_exception_from_our_code_is_an_internal_error_at_the_call():
    chip = dataclasses.replace(get_chip(None), scalar_issue_cycles=None)     # breaks Core.scalar_tick inside
    with raises_rule(InternalError, "internal error in ascend_sim, please report: TypeError",
                     "engine/core.py:scalar_tick", at="<- the call that hits the bug"):
        launch(arg_case, 1, np.arange(N, dtype=half), np.zeros(N, half), atomic_none, chip=chip)


def test_an_exception_of_the_kernel_itself_passes_unchanged():
    with pytest.raises(ZeroDivisionError):
        run(lambda t: 1 / 0)
    assert not issubclass(ZeroDivisionError, KernelError)


def test_valid_pipes_still_work():
    run(lambda t: (PipeBarrier(PIPE_V), PipeBarrier(PIPE_ALL), PipeBarrier()))


# ============================================================================ initcheck of DataCopyPad padding
def pad_then(read_count, fill_first=False, is_pad=False):
    def action(t):
        if fill_first:
            Duplicate(t.a, 5.0, N)
            PipeBarrier(PIPE_ALL)
        DataCopyPad(t.a, t.x, DataCopyExtParams(2, 6, 0, 0, 0), DataCopyPadExtParams(is_pad, 0, 0, 0))
        SetFlag(HardEvent.MTE2_V, 0)
        from ascend_sim import WaitFlag
        WaitFlag(HardEvent.MTE2_V, 0)
        Adds(t.b, t.a, 1.0, read_count)  # <- reads the copied bytes
    return action


def test_reading_padding_that_datacopypad_left_unwritten_is_an_initcheck_error():
    from ascend_sim import UninitializedReadError
    with raises_rule(UninitializedReadError, "reads UB bytes past 5: the padding of a DataCopyPad burst (bytes 6..31)",
                     "isPad false", "DataCopyPadExtParams(isPad=True", at="<- reads the copied bytes"):
        run(pad_then(16))


@pytest.mark.parametrize("read_count, fill_first, is_pad", [(3, False, False), (16, True, False), (16, False, True)],
                         ids=["only-the-copied-bytes", "padding-written-before", "ispad"])
def test_padding_reads_that_are_fine(read_count, fill_first, is_pad):
    run(pad_then(read_count, fill_first, is_pad))


def rows_then_reduce(mask):
    """4 rows of 50 halves (100 bytes) padded by DataCopyPad (isPad false) to 128 bytes each, then one WholeReduceSum
    repeat per row (srcRepStride 4 DataBlocks) with a tail mask: the reduce_repeat sample's scenario 4 in half."""
    def action(t):
        DataCopyPad(t.a, t.x, DataCopyExtParams(4, 100, 0, 0, 0), DataCopyPadExtParams(False, 0, 0, 0))
        SetFlag(HardEvent.MTE2_V, 0)
        from ascend_sim import WaitFlag, WholeReduceSum
        WaitFlag(HardEvent.MTE2_V, 0)
        WholeReduceSum(t.b, t.a, mask, 4, 1, 1, 4)  # <- the masked rows
    return action


def test_a_tail_mask_stops_short_of_the_padding_of_each_row():
    run(rows_then_reduce(50))                  # lanes 0..49 of each row: the copied bytes only


def test_a_mask_one_lane_into_the_padding_of_each_row_is_an_initcheck_error():
    from ascend_sim import UninitializedReadError
    with raises_rule(UninitializedReadError, "reads UB bytes past 99: the padding of a DataCopyPad burst (bytes "
                     "100..127)", "4 such block(s)", at="<- the masked rows"):
        run(rows_then_reduce(51))


@kernel(core="MIX")
def _cross_flag_kernel():
    CrossCoreSetFlag(2, PIPE_MTE3, 1)
    CrossCoreWaitFlag(1)


def test_cross_core_flags_on_a_coupled_chip_name_the_architecture():
    launch(_cross_flag_kernel, 1)                             # separated 910B: the pair of flags is fine
    with raises_rule(ArgumentError, "CrossCoreSetFlag: Ascend310B is a coupled chip",
                     "SetFlag/WaitFlag between the pipes", at="CrossCoreSetFlag(2, PIPE_MTE3, 1)"):
        launch(_cross_flag_kernel, 1, chip=get_chip("Ascend310B"))   # coupled: no partner core would answer


def test_a_bfloat16_scalar_is_a_real_number():
    """static_cast<bfloat16_t>(x) in a C++ kernel gives an ml_dtypes scalar: accepted like a float; a bool is not."""
    from ascend_sim import bfloat16
    from ascend_sim.api.checks import scalar
    one = np.dtype(bfloat16).type(0.125)
    assert scalar("LeakyRelu", "scalar", one, np.dtype(bfloat16), ("<t>", 0)) is one
    with pytest.raises(ArgumentError, match="must be a real number for bfloat16_t data, got bool"):
        scalar("LeakyRelu", "scalar", True, np.dtype(bfloat16), ("<t>", 0))
