"""GM hazards on the happens-before edges of the timing, and the false alarms of issue 11.

Hazards (racecheck, both sites named): a GM read of bytes the same block's MTE3/FIX wrote with no
flag between; a block reading another block's output with no SyncAll or cross-core flag between;
an atomic add racing a plain write. False alarms fixed (must run clean and exact): rewrites after
SyncAll or a cross-core flag, strided reads and copy-outs whose gaps another pipe writes, ReduceMax
to an element-aligned dst, launches above 32,767 blocks.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (ASCEND_IS_AIV, PIPE_FIX, PIPE_MTE3, Adds, BinaryRepeatParams, CrossCoreSetFlag,
                        CrossCoreWaitFlag, DataCopy, DataCopyParams, Duplicate, Fixpipe, GetBlockIdx, GetSubBlockIdx,
                        HardEvent, Add, PipeBarrier, RaceError, ReduceMax, SetAtomicAdd, SetAtomicNone, SyncAll, TPipe,
                        TPosition, float32, half, kernel, launch)
from kernels_util import cube_16x16, gm, handoff, raises_rule, scratch


# ============================================================================ within one block: MTE3 then MTE2
@kernel
def write_then_read(x, z, synced):
    t = scratch(512, half)
    DataCopy(t, gm(x), 256)
    handoff(HardEvent.MTE2_V)
    Adds(t, t, 1.0, 256)
    handoff(HardEvent.V_MTE3)
    DataCopy(gm(z), t, 256)  # <- MTE3 writes z
    if synced:
        handoff(HardEvent.MTE3_MTE2)
    u = scratch(512, half)
    DataCopy(u, gm(z), 256)  # <- MTE2 reads z back
    handoff(HardEvent.MTE2_MTE3)
    DataCopy(gm(x), u, 256)


def test_gm_read_after_write_in_one_block_needs_a_flag():
    x = np.arange(256, dtype=half)
    with raises_rule(RaceError, "DataCopy on pipe MTE2 reads GM buffer 'z' bytes 0..511",
                     "written by pipe MTE3 of this block at test_sanitizer_gm.py:", "(DataCopy)",
                     "SetFlag(HardEvent.MTE3_MTE2, id)", at="<- MTE2 reads z back"):
        launch(write_then_read, 1, x.copy(), np.zeros(256, half), False, gm_names=["x", "z"])
    z = np.zeros(256, half)
    x2 = x.copy()
    launch(write_then_read, 1, x2, z, True)
    assert np.array_equal(x2, x + 1) and np.array_equal(z, x + 1)


# ============================================================================ across blocks: SyncAll
@kernel
def two_phase(x, z, out, barrier):
    """Phase 1: block b writes x[b]+1 into z[b]. Phase 2: the last block reads all of z (and rewrites z[1])."""
    b = GetBlockIdx()
    t = scratch(512, half)
    DataCopy(t, gm(x)[b * 16], 16)
    handoff(HardEvent.MTE2_V)
    Adds(t, t, 1.0, 16)
    handoff(HardEvent.V_MTE3)
    DataCopy(gm(z)[b * 16], t, 16)  # <- phase 1 write
    if barrier:
        SyncAll()
    if b == 3:
        handoff(HardEvent.MTE3_MTE2)
        u = scratch(512, half)
        DataCopy(u, gm(z), 64)  # <- phase 2 reads every block's output
        handoff(HardEvent.MTE2_V)
        Adds(u, u, 10.0, 64)
        handoff(HardEvent.V_MTE3)
        DataCopy(gm(out), u, 64)
        DataCopy(gm(z)[16], u[16], 16)  # <- the last block rewrites block 1's bytes


def test_reading_another_blocks_output_needs_syncall():
    x = np.arange(64, dtype=half)
    with raises_rule(RaceError, "reads GM buffer 'z' bytes 0..127", "byte 0 was written by block 0 (AIV)",
                     "no SyncAll or cross-core flag", "call SyncAll()", at="<- phase 2 reads every block's output"):
        launch(two_phase, 4, x, np.zeros(64, half), np.zeros(64, half), False, gm_names=["x", "z", "out"])


def test_syncall_orders_the_phases_and_allows_rewriting_other_blocks_bytes():
    x = np.arange(64, dtype=half)
    z, out = np.zeros(64, half), np.zeros(64, half)
    launch(two_phase, 4, x, z, out, True)
    assert np.array_equal(out, x + 11)
    expected = x + 1
    expected[16:32] = x[16:32] + 11          # the last block rewrote block 1's part after the barrier
    assert np.array_equal(z, expected)


# ============================================================================ atomic add vs plain write
def plain_or_atomic(z, t, block):
    if block == 1:
        SetAtomicAdd(half)
    DataCopy(z, t, 16)  # <- both blocks write z[0:16]
    SetAtomicNone()


@kernel
def staged_writes(x, z, write):
    t = scratch(512, half)
    DataCopy(t, gm(x), 16)
    handoff(HardEvent.MTE2_MTE3)
    write(gm(z), t, GetBlockIdx())


def test_an_atomic_add_racing_a_plain_write_is_a_race():
    with raises_rule(RaceError, "block 1 (AIV) makes an atomic add to GM buffer 'z' bytes 0..31",
                     "with a plain write at test_sanitizer_gm.py:", "accumulation and the overwrite race",
                     at="<- both blocks write z[0:16]"):
        launch(staged_writes, 2, np.ones(16, half), np.zeros(16, half), plain_or_atomic, gm_names=["x", "z"])


def zero_then_accumulate(z, t, block):
    if block == 0:
        Duplicate(t, 0.0, 16)          # block 0 zeroes the accumulator first ...
        handoff(HardEvent.V_MTE3)
        DataCopy(z, t, 16)
        handoff(HardEvent.MTE3_MTE2)
        handoff(HardEvent.V_MTE2)
        DataCopy(t, gm_x_holder[0], 16)     # ... and reloads its contribution
        handoff(HardEvent.MTE2_MTE3)
    SyncAll()
    SetAtomicAdd(half)
    DataCopy(z, t, 16)
    SetAtomicNone()


gm_x_holder: list = []


@kernel
def zero_then_add(x, z):
    gm_x_holder[:] = [gm(x)]
    t = scratch(512, half)
    DataCopy(t, gm(x), 16)
    handoff(HardEvent.MTE2_V)
    zero_then_accumulate(gm(z), t, GetBlockIdx())


def test_a_plain_write_then_syncall_then_atomic_adds_is_clean():
    z = np.full(16, 99, half)
    launch(zero_then_add, 3, np.ones(16, half), z)
    assert np.array_equal(z, np.full(16, 3, half))


# ============================================================================ MIX: AIV rewrites the AIC's output
@kernel(core="MIX")
def matmul_then_leaky(a, c):
    """AIC: c = a @ I (16x16, float) through Fixpipe; AIV 0 then rewrites c in place with 0.5 * c (the
    official MatmulLeakyRelu hand-off: CrossCoreSetFlag after Fixpipe, CrossCoreWaitFlag before reading)."""
    if ASCEND_IS_AIV():
        CrossCoreWaitFlag(3)
        if GetSubBlockIdx() == 0:
            t = scratch(1024, float32)
            DataCopy(t, gm(c), 256)
            handoff(HardEvent.MTE2_V)
            from ascend_sim import Muls
            Muls(t, t, 0.5, 256)
            handoff(HardEvent.V_MTE3)
            DataCopy(gm(c), t, 256)  # <- AIV rewrites the AIC's output
        return
    pipe = TPipe()
    a1, b1 = scratch(512, half, TPosition.A1, pipe), scratch(512, half, TPosition.B1, pipe)
    DataCopy(a1, gm(a), 256)
    DataCopy(b1, gm(a + 256), 256)
    cube_16x16(a1, b1, c, pipe)
    CrossCoreSetFlag(2, PIPE_FIX, 3)


def test_mix_aiv_rewrites_the_aic_output_after_the_cross_core_flag():
    x = (np.arange(256) % 9 - 4).astype(half)
    a = np.concatenate([x, np.eye(16).ravel().astype(half)])
    c = np.zeros(256, np.float32)
    launch(matmul_then_leaky, 1, a, c)
    assert np.array_equal(c, x.astype(np.float32) * 0.5)


# ============================================================================ strided accesses, burst by burst
@kernel
def strided_read_then_gap_write(x, z):
    """V reads every other 32-byte block of t (repeat form, block stride 2); MTE2 then fills the gaps
    with no V->MTE2 flag: the gaps were never read, so this is no write-after-read."""
    t, u = scratch(512, half), scratch(512, half)
    DataCopy(t, gm(x), 256)
    handoff(HardEvent.MTE2_V)
    Duplicate(u, 0.0, 256)
    Add(u, t, t, 128, 1, BinaryRepeatParams(1, 2, 2, 8, 16, 16))    # reads blocks 0, 2, 4 ... 14 of t
    DataCopy(t[16], gm(x), DataCopyParams(8, 1, 1, 1))              # MTE2 writes blocks 1, 3 ... 15 of t
    handoff(HardEvent.MTE2_MTE3)
    handoff(HardEvent.V_MTE3)
    DataCopy(gm(z), u, 256)


def test_a_strided_read_does_not_claim_its_gaps():
    x = np.arange(256, dtype=half)
    z = np.zeros(256, half)
    launch(strided_read_then_gap_write, 1, x, z)
    blocks = x.reshape(16, 16)
    assert np.array_equal(z[:128], (blocks[0::2] * 2).ravel()) and not z[128:].any()


@kernel
def strided_copy_out_then_gap_write(x, z):
    """MTE3 copies out every other block of t; V then writes the skipped blocks with no MTE3->V flag."""
    t = scratch(512, half)
    DataCopy(t, gm(x), 256)
    handoff(HardEvent.MTE2_MTE3)
    DataCopy(gm(z), t, DataCopyParams(8, 1, 1, 1))                  # blocks 0, 2 ... 14 of t -> z
    handoff(HardEvent.MTE2_V)
    Duplicate(t[16], 7.0, 16)                                      # block 1 of t: skipped by the copy-out
    Duplicate(t[48], 7.0, 16)                                      # block 3


def test_a_strided_copy_out_does_not_claim_its_gaps():
    x = np.arange(256, dtype=half)
    z = np.zeros(256, half)
    launch(strided_copy_out_then_gap_write, 1, x, z)
    expected = np.zeros(256, half)
    expected.reshape(16, 16)[0::2] = x.reshape(16, 16)[0::2]
    assert np.array_equal(z, expected)


@kernel
def strided_copy_out_then_overwrite(x, z):
    t = scratch(512, half)
    DataCopy(t, gm(x), 256)
    handoff(HardEvent.MTE2_MTE3)
    DataCopy(gm(z), t, DataCopyParams(8, 1, 1, 1))
    handoff(HardEvent.MTE2_V)
    Duplicate(t[32], 7.0, 16)  # <- block 2 was read by the copy-out


def test_overwriting_a_block_the_strided_copy_out_reads_is_still_a_race():
    with raises_rule(RaceError, "Duplicate on pipe V overwrites UB bytes from 64", "pipe MTE3 read",
                     at="<- block 2 was read by the copy-out"):
        launch(strided_copy_out_then_overwrite, 1, np.arange(256, dtype=half), np.zeros(256, half))


# ============================================================================ ReduceMax dst alignment
@kernel
def reduce_max_at(x, z, offset):
    t, w, d = scratch(512, half), scratch(512, half), scratch(512, half)
    DataCopy(t, gm(x), 256)
    handoff(HardEvent.MTE2_V)
    Duplicate(d, 0.0, 256)
    ReduceMax(d[offset], t, w, 256, True)
    handoff(HardEvent.V_MTE3)
    DataCopy(gm(z), d, 256)


@pytest.mark.parametrize("offset", [2, 8, 10])      # 4, 16 and 20 bytes: element pairs (4 bytes for half)
def test_reduce_max_dst_needs_only_its_documented_alignment(offset):
    x = np.random.default_rng(offset).permutation(256).astype(half)
    z = np.zeros(256, half)
    launch(reduce_max_at, 1, x, z, offset)
    assert z[offset] == 255 and z[offset + 1].view(np.uint16) == int(np.argmax(x))


def test_reduce_max_dst_at_an_odd_element_is_misaligned():
    from ascend_sim import AlignmentError
    with raises_rule(AlignmentError, "ReduceMax: dst starts at UB+1026, not 4-byte aligned", at=None):
        launch(reduce_max_at, 1, np.zeros(256, half), np.zeros(256, half), 1)


# ============================================================================ more than 32,767 blocks
@kernel
def one_chunk_each(z):
    t = scratch(32, half)
    Duplicate(t, 1.0, 16)
    handoff(HardEvent.V_MTE3)
    DataCopy(gm(z)[GetBlockIdx() * 16], t, 16)


def test_a_launch_above_32767_blocks_writes_gm():
    blocks = 33_000
    z = np.zeros(blocks * 16, half)
    launch(one_chunk_each, blocks, z)
    assert np.all(z == 1)


# ============================================================================ a block reads a later block's output
@kernel
def read_neighbour(x, z, barrier):
    """Block b writes z[b]; block b reads z[b + 1] (its neighbour's output), with or without SyncAll."""
    b = GetBlockIdx()
    t, u = scratch(64, half), scratch(64, half)
    DataCopy(t, gm(x)[b * 16], 16)
    handoff(HardEvent.MTE2_MTE3)
    if barrier:
        DataCopy(gm(z)[b * 16], t, 16)
        SyncAll()
    if b < 3:
        DataCopy(u, gm(z)[(b + 1) * 16], 16)  # <- block b reads block b+1's output
        handoff(HardEvent.MTE2_MTE3)
        DataCopy(gm(x)[64 + b * 16], u, 16)
    if not barrier:
        DataCopy(gm(z)[b * 16], t, 16)  # <- block b writes its output after


def test_reading_a_later_blocks_output_without_syncall_is_caught_at_its_write():
    with raises_rule(RaceError, "block 1 (AIV) writes GM buffer 'z' bytes 32..63",
                     "byte 32 was read by block 0 (AIV) at test_sanitizer_gm.py:", "block b reads block b+1's output",
                     "no SyncAll or cross-core flag between that read and this write",
                     at="<- block b writes its output after"):
        launch(read_neighbour, 4, np.arange(128, dtype=half), np.zeros(64, half), False, gm_names=["x", "z"])


def test_reading_a_later_blocks_output_after_syncall_is_clean():
    x = np.arange(128, dtype=half)
    z = np.zeros(64, half)
    launch(read_neighbour, 4, x, z, True)
    assert np.array_equal(z, np.arange(64, dtype=half)) and np.array_equal(x[64:112], np.arange(16, 64, dtype=half))


# ============================================================================ issue 32: a plain write hidden by atomics
def zero_then_accumulate_unsynced(z, t, block):
    """Block 0 zeroes z and then adds like every block, with no SyncAll between its zeroing and the others' adds."""
    if block == 0:
        DataCopy(z, t, 16)  # <- block 0's plain write
        PipeBarrier(PIPE_MTE3)
    SetAtomicAdd(half)
    DataCopy(z, t, 16)  # <- every block adds
    SetAtomicNone()


def test_an_atomic_add_racing_a_plain_write_hidden_by_the_writers_own_add_is_a_race():
    """Block 0: plain write, then its own atomic add (the chunk's last write); block 1's add must still be
    checked against block 0's plain write (nothing orders them: the zeroing may land after block 1's add)."""
    with raises_rule(RaceError, "block 1 (AIV) makes an atomic add to GM buffer 'z' bytes 0..31",
                     "with a plain write at test_sanitizer_gm.py:", "<- block 0's plain write",
                     at="<- every block adds"):
        launch(staged_writes, 2, np.ones(16, half), np.zeros(16, half), zero_then_accumulate_unsynced,
               gm_names=["x", "z"])


def zero_sync_then_accumulate(z, t, block):
    if block == 0:
        DataCopy(z, t, 16)
        PipeBarrier(PIPE_MTE3)
    SyncAll()
    SetAtomicAdd(half)
    DataCopy(z, t, 16)
    SetAtomicNone()


def test_the_same_with_syncall_between_is_clean():
    z = np.zeros(16, half)
    launch(staged_writes, 3, np.ones(16, half), z, zero_sync_then_accumulate, gm_names=["x", "z"])
    assert np.array_equal(z, np.full(16, 4, half))      # block 0's 1, then three adds of 1


@kernel
def adds_of_two_dtypes(x, z, same):
    """Every block adds 8 values into z[0:8] (32 bytes); block 1 as int32 unless ``same``."""
    kind = float32 if (same or GetBlockIdx() == 0) else np.int32
    t = scratch(32, kind)
    DataCopy(t, gm(x, kind), 8)
    handoff(HardEvent.MTE2_MTE3)
    SetAtomicAdd(kind)
    DataCopy(gm(z, kind), t, 8)  # <- the atomic add
    SetAtomicNone()


def test_atomic_adds_of_two_dtypes_to_the_same_bytes_race():
    with raises_rule(RaceError, "block 1 (AIV) makes an atomic add of int32_t to GM buffer 'z' bytes 0..31",
                     "with an atomic add of float at", "read each other's bytes as their own type",
                     at="<- the atomic add"):
        launch(adds_of_two_dtypes, 2, np.zeros(8, np.float32), np.zeros(8, np.float32), False, gm_names=["x", "z"])


def test_atomic_adds_of_one_dtype_accumulate():
    z = np.zeros(8, np.float32)
    launch(adds_of_two_dtypes, 3, np.full(8, 1.5, np.float32), z, True, gm_names=["x", "z"])
    assert np.array_equal(z, np.full(8, 4.5, np.float32))
