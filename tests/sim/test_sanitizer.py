"""Every sanitizer rule, each with a kernel that breaks it: the KernelError subclass, the key words
of its message (the rule, the numbers, a Fix:) and the kernel line it names. And kernels that
follow the rules run cleanly, with no warnings."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from ascend_sim import (Add, AlignmentError, Ascend910, ArgumentError, CapacityError, CrossCoreWaitFlag, DataCopy,
                        DataCopyExtParams, DataCopyPad, DataCopyParams, DeadlockError, DtypeError, Duplicate,
                        GetBlockIdx, GMWriteConflictError, HardEvent, Mmad, MmadParams, Muls, OutOfBoundsError,
                        PipeBarrier, PositionError, QuantMode_t, QueueError, RaceError, SetAtomicAdd, SetFlag,
                        SyncAll, SyncError, TPipe, TPosition, TQue, UninitializedReadError, WaitFlag, float32, half,
                        kernel, launch)
from kernels_util import _on_cube as on_cube
from kernels_util import gm, handoff, line_of, no_warnings, raises_rule, run_block_writes, scratch

N = 256


# ============================================================================ a scratch AIV core
@kernel
def vec_case(x, z, action):
    """Three 512-byte UB TBufs a, b, c and GM tensors x, z (256 half each); then ``action(t)``."""
    pipe = TPipe()
    a, b, c = (scratch(2 * N, half, pipe=pipe) for _ in range(3))
    action(SimpleNamespace(pipe=pipe, a=a, b=b, c=c, x=gm(x, size=N), z=gm(z, size=N)))


def run_vec(action, x=None, z=None, **kw):
    x = np.arange(N, dtype=half) if x is None else x
    return launch(vec_case, 1, x, np.zeros(N, half) if z is None else z, action, gm_names=["x", "z"], **kw)


# ============================================================================ memcheck: bounds
def read_past_gm(t):
    DataCopy(t.a, t.x[128], N)  # <- read past the end


def write_past_gm(t):
    Duplicate(t.a, 1.0, N)
    handoff(HardEvent.V_MTE3)
    DataCopy(t.z[-16], t.a, 32)  # <- write before the start


def read_past_window_inside_allocation(t):
    window = gm(t.x.GetPhyAddr(), size=16)            # a 16-element window onto the 256-element x
    DataCopy(t.a, window, 64)                          # past the window, inside the allocation: allowed
    handoff(HardEvent.MTE2_MTE3)
    DataCopy(t.z, t.a, 64)


def test_gm_read_past_the_allocation():
    with raises_rule(OutOfBoundsError, "DataCopy read of GM buffer 'x' out of bounds", "bytes 256..767",
                     "elements 128..383", "the allocation has 512 bytes (256 half elements)", "GetBlockIdx()",
                     at="<- read past the end"):
        run_vec(read_past_gm)


def test_gm_write_before_the_allocation():
    with raises_rule(OutOfBoundsError, "DataCopy write of GM buffer 'z' out of bounds", "bytes -32..31",
                     at="<- write before the start"):
        run_vec(write_past_gm)


def test_gm_bounds_are_the_real_allocation_not_the_window():
    z = np.zeros(N, half)
    run_vec(read_past_window_inside_allocation, z=z)
    assert np.array_equal(z[:64], np.arange(64, dtype=half))


@pytest.mark.parametrize("action, words", [
    (lambda t: DataCopy(t.a[128], t.x, N), ["DataCopy touches 512 bytes of a UB tensor that holds 256 bytes",
                                            "(128 half elements at UB+256)"]),
    (lambda t: Duplicate(t.a[N + 16], 0.0, 16), ["offset 272 outside LocalTensor of 256 half elements",
                                                 "UB bytes 0..511"]),
    (lambda t: Add(t.c, t.a[128], t.b, 192), ["Add: count 192 exceeds the tensor's 128 half elements"]),
], ids=["datacopy", "subtensor-offset", "vector-count"])
def test_local_out_of_bounds(action, words):
    with raises_rule(OutOfBoundsError, *words, at=action):
        run_vec(action)


# ============================================================================ capacity
@kernel
def big_buffers(tile_bytes):
    pipe = TPipe()
    qx, qy, qz = TQue(TPosition.VECIN, 2), TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
    pipe.InitBuffer(qx, 2, tile_bytes)
    pipe.InitBuffer(qy, 2, tile_bytes)
    pipe.InitBuffer(qz, 2, tile_bytes)  # <- qz does not fit


def test_ub_capacity_lists_the_buffers_and_the_total():
    with raises_rule(CapacityError, "UB capacity exceeded", "InitBuffer(qz, 2, 32000) needs 2 x 32000 = 64000 bytes",
                     "UB use to 192000 bytes", "188416 bytes are usable on Ascend910B", "qx: 64000 bytes at UB+0",
                     "qy: 64000 bytes at UB+64000", "smaller tiles", at="<- qz does not fit"):
        launch(big_buffers, 1, 32000)


def test_capacity_follows_the_chip_profile():
    launch(big_buffers, 1, 32000, chip=Ascend910())          # 248 KB usable: fits
    with raises_rule(CapacityError, "253952 bytes are usable on Ascend910", at="<- qz does not fit"):
        launch(big_buffers, 1, 44000, chip=Ascend910())


# ============================================================================ alignment
@pytest.mark.parametrize("action, words", [
    (lambda t: DataCopy(t.a, t.x, 100), ["DataCopy moves whole 32-byte blocks", "100 half elements = 200 bytes",
                                         "200 % 32 = 8", "multiple of 16 elements, or use DataCopyPad"]),
    (lambda t: DataCopy(t.a[8], t.x, 16), ["DataCopy destination UB address 16 is not 32-byte aligned",
                                           "(16 % 32 = 16)"]),
    (lambda t: DataCopyPad(t.z, t.a[4], DataCopyExtParams(1, 8, 0, 0, 0)),
     ["DataCopyPad source UB address 8 is not 32-byte aligned"]),
], ids=["length", "ub-dst-address", "ub-src-address"])
def test_alignment(action, words):
    with raises_rule(AlignmentError, *words, at=action):
        run_vec(action)


# ============================================================================ positions
@kernel(core="AIC")
def cube_core_vector_op(x):
    t = scratch(512, half, TPosition.A1)
    Muls(t, t, 2.0, N)  # <- vector op on L1


@kernel(core="AIC")
def ub_on_cube_core(x):
    pipe = TPipe()
    pipe.InitBuffer(TQue(TPosition.VECIN, 1), 1, 512)  # <- UB on AIC


@kernel
def l1_on_vector_core(x):
    pipe = TPipe()
    pipe.InitBuffer(TQue(TPosition.A1, 1), 1, 512)  # <- L1 on AIV


@pytest.mark.parametrize("k, words, at", [
    (cube_core_vector_op, ["Muls: dst lives in L1 (TPosition.A1); the vector unit reads and writes UB only"],
     "<- vector op on L1"),
    (ub_on_cube_core, ["TPosition.VECIN lives in UB, which this AIC core does not have", "separated architecture",
                       "@kernel(core='MIX')"], "<- UB on AIC"),
    (l1_on_vector_core, ["TPosition.A1 lives in L1, which this AIV core does not have"], "<- L1 on AIV"),
], ids=["vector-op-on-L1", "UB-on-AIC", "L1-on-AIV"])
def test_positions_on_the_wrong_core(k, words, at):
    with raises_rule(PositionError, *words, at=at):
        launch(k, 1, np.zeros(N, half))


@pytest.mark.parametrize("action, words", [
    (lambda t: Add(t.a, t.x, t.b, 16), ["Add: src0 is a GlobalTensor; vector instructions work on UB LocalTensors only",
                                        "DataCopy the data from GM into a VECIN tensor first"]),
    (lambda t: Mmad(t.c.ReinterpretCast(float32), t.a, t.b, MmadParams(16, 16, 16)),
     ["Mmad: dst must live in L0C, got UB", "Mmad writes a CO1 (L0C) tensor"]),
], ids=["vector-op-on-GM", "cube-op-on-UB"])
def test_operands_in_the_wrong_memory(action, words):
    with raises_rule(PositionError, *words, at=action):
        run_vec(action)


# ============================================================================ dtypes
@pytest.mark.parametrize("action, words", [
    (lambda t: Add(t.a, t.b, t.c.ReinterpretCast(float32), 16), ["Add: operands mix half and float", "Cast one"]),
    (lambda t: DataCopy(t.a.ReinterpretCast(float32), t.x, 16), ["DataCopy between half source and float destination",
                                                                 "copies do not convert"]),
], ids=["vector", "datacopy"])
def test_dtype_mismatch(action, words):
    with raises_rule(DtypeError, *words, at=action):
        run_vec(action)


# ============================================================================ queue protocol
@kernel
def queue_case(x, action):
    pipe = TPipe()
    q, other = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    pipe.InitBuffer(q, 2, 512)
    pipe.InitBuffer(other, 1, 512)
    action(q, other)


def deque_empty(q, other):
    q.DeQue(half)  # <- empty


def enque_past_depth(q, other):
    a, b = q.AllocTensor(half), q.AllocTensor(half)
    q.EnQue(a)
    q.EnQue(b)  # <- past depth


def alloc_all_in_use(q, other):
    q.AllocTensor(half)  # <- first
    q.AllocTensor(half)
    q.AllocTensor(half)  # <- third alloc


def free_twice(q, other):
    t = q.AllocTensor(half)
    q.FreeTensor(t)
    q.FreeTensor(t)  # <- twice


def still_held(q, other):
    t = q.AllocTensor(half)  # <- held
    q.EnQue(t)
    q.DeQue(half)


def free_while_queued(q, other):
    t = q.AllocTensor(half)
    q.EnQue(t)
    q.FreeTensor(t)  # <- queued


def enque_twice(q, other):
    t = q.AllocTensor(half)
    q.EnQue(t)
    q.EnQue(t)  # <- enque twice


def free_on_other_queue(q, other):
    other.FreeTensor(q.AllocTensor(half))  # <- wrong queue


def alloc_without_dtype(q, other):
    q.AllocTensor()  # <- no dtype


def enque_not_a_tensor(q, other):
    q.EnQue(np.zeros(16, half))  # <- not a tensor


@pytest.mark.parametrize("action, words, at", [
    (deque_empty, ["DeQue from q while it is empty", "waits forever"], "<- empty"),
    (enque_past_depth, ["EnQue on q past its depth 1: 1 tensor(s) already queued"], "<- past depth"),
    (alloc_all_in_use, ["AllocTensor on q with all 2 buffer(s) in use", "test_sanitizer.py:",
                        "(deadlock)", "FreeTensor each tensor"], "<- third alloc"),
    (free_twice, ["FreeTensor of a tensor that is already free (double free)"], "<- twice"),
    (still_held, ["the kernel ended while 1 tensor(s) of q are still held", "every AllocTensor needs a FreeTensor"],
     "<- held"),
    (free_while_queued, ["FreeTensor of a tensor still in the queue"], "<- queued"),
    (enque_twice, ["EnQue of a tensor that is queued"], "<- enque twice"),
    (free_on_other_queue, ["FreeTensor of a tensor that does not belong to other"], "<- wrong queue"),
    (alloc_without_dtype, ["the element type is missing", "que.AllocTensor(half)"], "<- no dtype"),
    (enque_not_a_tensor, ["EnQue of a tensor that does not belong to q"], "<- not a tensor"),
], ids=lambda v: v.__name__ if callable(v) else "")
def test_queue_misuse(action, words, at):
    with raises_rule(QueueError, *words, at=at) as err:
        launch(queue_case, 1, np.zeros(N, half), action)
    if action is alloc_all_in_use:          # the message points at the allocations still holding the buffers
        assert f"test_sanitizer.py:{err.value.site[1] - 2}" in str(err.value)


# ============================================================================ initcheck
def read_unwritten_ub(t):
    DataCopy(t.a, t.x, N)
    handoff(HardEvent.MTE2_V)
    Add(t.c, t.a, t.b, N)  # <- b never written


def copy_out_unwritten(t):
    DataCopy(t.z, t.c, N)  # <- c never written


@pytest.mark.parametrize("action, words, at", [
    (read_unwritten_ub, ["Add on V reads UB bytes 512..1023 that nothing wrote",
                         "(16 of 16 32-byte blocks uninitialised)", "Duplicate"], "<- b never written"),
    (copy_out_unwritten, ["DataCopy on MTE3 reads UB bytes 1024..1535 that nothing wrote"], "<- c never written"),
], ids=["vector-read", "copy-out"])
def test_initcheck_reading_memory_nothing_wrote(action, words, at):
    with raises_rule(UninitializedReadError, *words, at=at) as err:
        run_vec(action)
    assert str(err.value).startswith("[initcheck]")


# ============================================================================ racecheck
def raw_mte2_to_v(t):
    DataCopy(t.a, t.x, N)  # <- other 1
    Add(t.b, t.a, t.a, N)  # <- race 1


def raw_v_to_mte3(t):
    Duplicate(t.a, 2.0, N)  # <- other 2
    DataCopy(t.z, t.a, N)  # <- race 2


def war_reuse_without_sync(t):
    DataCopy(t.a, t.x, N)
    handoff(HardEvent.MTE2_V)
    Add(t.b, t.a, t.a, N)  # <- other 3
    DataCopy(t.a, t.x, N)  # <- race 3


def waw_without_sync(t):
    DataCopy(t.a, t.x, N)  # <- other 4
    Duplicate(t.a, 0.0, N)  # <- race 4


def war_reuse_with_flags(t):
    DataCopy(t.a, t.x, N)
    handoff(HardEvent.MTE2_V)
    Add(t.b, t.a, t.a, N)
    handoff(HardEvent.V_MTE2)                 # the fix the WAR error names
    DataCopy(t.a, t.x, N)
    handoff(HardEvent.MTE2_V)
    Add(t.b, t.b, t.a, N)
    handoff(HardEvent.V_MTE3)
    DataCopy(t.z, t.b, N)


@pytest.mark.parametrize("action, words", [
    (raw_mte2_to_v, ["Add on pipe V reads UB bytes from 0 that pipe MTE2 wrote at {other}", "(DataCopy)",
                     "with no synchronisation", "EnQue after the MTE2 instruction", "SetFlag(HardEvent.MTE2_V, id)"]),
    (raw_v_to_mte3, ["DataCopy on pipe MTE3 reads UB bytes from 0 that pipe V wrote at {other}", "(Duplicate)",
                     "HardEvent.V_MTE3"]),
    (war_reuse_without_sync, ["DataCopy on pipe MTE2 overwrites UB bytes from 0 that pipe V", "{other}",
                              "may still be reading", "FreeTensor after the V instruction and AllocTensor it again",
                              "SetFlag/WaitFlag(HardEvent.V_MTE2, id)"]),
    (waw_without_sync, ["Duplicate on pipe V overwrites UB bytes from 0 that pipe MTE2 wrote at {other}"]),
], ids=["RAW-MTE2-V", "RAW-V-MTE3", "WAR-V-MTE2", "WAW-MTE2-V"])
def test_racecheck_unsynchronised_pipes(action, words):
    """``# <- race i`` marks the instruction that races, ``# <- other i`` the one it races with."""
    i = {raw_mte2_to_v: 1, raw_v_to_mte3: 2, war_reuse_without_sync: 3, waw_without_sync: 4}[action]
    other = f"test_sanitizer.py:{line_of(__file__, f'<- other {i}')}"
    with raises_rule(RaceError, *(w.format(other=other) for w in words), at=f"<- race {i}") as err:
        run_vec(action)
    assert str(err.value).startswith("[racecheck]")


def test_explicit_flags_make_buffer_reuse_safe_and_warning_free():
    x = np.arange(N, dtype=half)
    z = np.zeros(N, half)
    with no_warnings():
        run_vec(war_reuse_with_flags, x=x, z=z)
    assert np.array_equal(z, x * 3)            # (x + x) + x


def test_pipe_barrier_all_orders_every_pipe():
    def action(t):
        DataCopy(t.a, t.x, N)
        PipeBarrier()
        Add(t.b, t.a, t.a, N)
        PipeBarrier()
        DataCopy(t.z, t.b, N)
    z = np.zeros(N, half)
    run_vec(action, z=z)
    assert np.array_equal(z, np.arange(N, dtype=half) * 2)


# ============================================================================ synccheck
def set_never_waited(t):
    SetFlag(HardEvent.MTE2_V, 2)  # <- never waited


def wait_never_set(t):
    WaitFlag(HardEvent.V_MTE3, 1)  # <- never set


def set_twice(t):
    SetFlag(HardEvent.MTE2_V, 3)
    SetFlag(HardEvent.MTE2_V, 3)  # <- set twice


@pytest.mark.parametrize("action, words, at", [
    (set_never_waited, ["SetFlag(MTE2_V, 2) at test_sanitizer.py", "has no matching WaitFlag before the kernel ends",
                        "add WaitFlag(MTE2_V, 2)"], "<- never waited"),
    (wait_never_set, ["WaitFlag(V_MTE3, 1) has no SetFlag(V_MTE3, 1) before it", "pipe MTE3 would wait forever"],
     "<- never set"),
    (set_twice, ["SetFlag(MTE2_V, 3) set again before a WaitFlag consumed the one set at test_sanitizer.py",
                 "the same id must not be set twice in a row"], "<- set twice"),
], ids=["set-without-wait", "wait-without-set", "same-id-twice"])
def test_synccheck_unpaired_flags(action, words, at):
    with raises_rule(SyncError, *words, at=at) as err:
        run_vec(action)
    assert str(err.value).startswith("[synccheck]")


@pytest.mark.parametrize("action", [lambda t: SetFlag(HardEvent.MTE2_V, -1), lambda t: WaitFlag(HardEvent.MTE2_V, 8),
                                    lambda t: SetFlag("MTE2_V", 0)], ids=["negative", "id-8", "not-an-event"])
def test_flag_ids_and_events_are_checked(action):
    with raises_rule(ArgumentError, at=action):
        run_vec(action)


# ============================================================================ multi-block rules
@kernel
def sync_all_kernel(x):
    SyncAll()  # <- every block waits here


def test_sync_all_with_more_blocks_than_cores_deadlocks():
    with raises_rule(DeadlockError, "SyncAll with 49 blocks on 48 physical cores", "second wave never start",
                     "launch at most 48 blocks", at="<- every block waits here"):
        launch(sync_all_kernel, 49, np.zeros(16, half))


@kernel
def sync_all_skipped_by_block_0(x):
    if GetBlockIdx() != 0:
        SyncAll()  # <- block 0 never arrives


def test_sync_all_skipped_by_one_block_deadlocks():
    with raises_rule(DeadlockError, "block 1 (AIV) waits for SyncAll at test_sanitizer.py:",
                     "(1 block(s) have not arrived)", "block(s) 0 already ended without arriving",
                     "every block must reach each SyncAll()", at="<- block 0 never arrives"):
        launch(sync_all_skipped_by_block_0, 4, np.zeros(16, half))


@kernel(core="MIX")
def wait_for_nobody(x):
    if GetBlockIdx() == 0:
        CrossCoreWaitFlag(3)  # <- nobody sets flag 3


def test_cross_core_wait_that_nobody_sets_deadlocks():
    line = f"test_sanitizer.py:{line_of(__file__, '<- nobody sets flag 3')}"
    with raises_rule(DeadlockError, "every unfinished block is waiting and none can go on",
                     f"block 0 (AIC) waits for CrossCoreWaitFlag(3) at {line}",
                     f"block 0 (AIV) waits for CrossCoreWaitFlag(3) at {line}", "(no partner has set it)",
                     "matching CrossCoreSetFlag", at="<- nobody sets flag 3"):
        launch(wait_for_nobody, 1, np.zeros(16, half))


def write_block_range(z, t, block):
    DataCopy(z[block * 16], t, 32)  # <- block writes its range


def add_block_range(z, t, block):
    SetAtomicAdd(half)
    write_block_range(z, t, block)


def test_two_blocks_writing_the_same_gm_bytes_conflict():
    with raises_rule(GMWriteConflictError, "block 1 (AIV) writes GM buffer 'z' bytes 32..95 (elements 16..47)",
                     "byte 32 was already written by block 0 (AIV)", "SetAtomicAdd(dtype)",
                     at="<- block writes its range"):
        run_block_writes(np.ones(32, half), np.zeros(64, half), write_block_range, gm_names=["x", "z"])


def test_atomic_add_makes_overlapping_writes_legal():
    z = np.zeros(64, half)
    run_block_writes(np.ones(32, half), z, add_block_range)
    assert np.array_equal(z, np.array([1] * 16 + [2] * 16 + [1] * 16 + [0] * 16, half))


def test_adjacent_blocks_may_share_a_32_byte_chunk():
    def ten_bytes_at(starts):
        return lambda z, t, block: DataCopyPad(z[starts[block]], t, DataCopyExtParams(1, 10, 0, 0, 0))  # <- pad
    z = np.zeros(32, half)
    run_block_writes(np.arange(16, dtype=half), z, ten_bytes_at([0, 5]))            # bytes 0..9 and 10..19
    assert np.array_equal(z[:10], np.concatenate([np.arange(5), np.arange(5)]).astype(half))
    with raises_rule(GMWriteConflictError, "block 1 (AIV) writes GM buffer 'z' bytes 8..17",
                     "byte 8 was already written by block 0", at="<- pad"):
        run_block_writes(np.arange(16, dtype=half), z, ten_bytes_at([0, 4]), gm_names=["x", "z"])


def four_strided_bursts_at(starts):
    """Each block writes 4 bursts of 16 half (32 bytes) with a 32-byte gap, from its element ``starts[block]``."""
    return lambda z, t, block: DataCopy(z[starts[block]], t, DataCopyParams(4, 1, 0, 1))  # <- bursts


def test_strided_writes_conflict_only_where_their_bursts_meet():
    z = np.zeros(128, half)
    run_block_writes(np.arange(64, dtype=half), z, four_strided_bursts_at([0, 16]))    # interleaved: no byte shared
    assert np.array_equal(z, np.repeat(np.arange(64, dtype=half).reshape(4, 16), 2, axis=0).ravel())  # both blocks
    with raises_rule(GMWriteConflictError, "block 1 (AIV) writes GM buffer 'z' bytes 64..95",
                     "byte 64 was already written by block 0", at="<- bursts"):
        run_block_writes(np.arange(64, dtype=half), np.zeros(160, half), four_strided_bursts_at([0, 32]),
                         gm_names=["x", "z"])


def test_two_cube_blocks_writing_one_tile_through_fixpipe_conflict():
    a = np.ones((16, 16), half)
    cfg = (16, 16, 16, 1, np.dtype(half), np.dtype(float32), QuantMode_t.F322F16, False)
    c = np.zeros((16, 16), half)
    launch(on_cube, 1, a, a, c, cfg)
    assert np.array_equal(c, np.full((16, 16), 16, half))
    with raises_rule(GMWriteConflictError, "block 1 (AIC) writes GM buffer 'c' bytes 0..31", "block 0 (AIC)",
                     at=None):
        launch(on_cube, 2, a, a, np.zeros((16, 16), half), cfg, gm_names=["a", "b", "c"])
