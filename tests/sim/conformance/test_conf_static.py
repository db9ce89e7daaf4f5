"""Conformance: static allocation (静态Tensor编程) with SetFlag/WaitFlag, GetTPipePtr and event ids, TQueBind.

Written from the API pages (LocalMemAllocator, LocalTensor构造函数, GetTPipePtr, FetchEventID, AllocEventID,
SetFlag-WaitFlag(ISASI), TQueBind简介), the way the newest samples use them; each result is exact against numpy.
"""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (Add, AlignmentError, ArgumentError, CapacityError, DataCopy, Duplicate, GetBlockIdx, GetBlockNum,
                        GetTaskRatio, GetTPipePtr, GlobalTensor, HardEvent, Hardware, LocalMemAllocator, LocalTensor,
                        Muls, OutOfBoundsError, PositionError, QueueError, RaceError, SetFlag, SyncError, TPipe,
                        TPosition, TQue, TQueBind, UninitializedReadError, WaitFlag, float32, half, kernel, launch)
from kernels_util import raises_rule

TILE = 256


@kernel
def add_static(x, y, z, n_per_block):
    """z = x + y with LocalMemAllocator tensors, double buffered by hand with SetFlag/WaitFlag."""
    base = GetBlockIdx() * n_per_block
    xg, yg, zg = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    xg.SetGlobalBuffer(x + base, n_per_block)
    yg.SetGlobalBuffer(y + base, n_per_block)
    zg.SetGlobalBuffer(z + base, n_per_block)
    alloc = LocalMemAllocator(Hardware.UB)
    xs = [alloc.Alloc(TPosition.VECIN, half, TILE) for _ in range(2)]
    ys = [alloc.Alloc(TPosition.VECIN, half, TILE) for _ in range(2)]
    zs = [alloc.Alloc(TPosition.VECOUT, half, TILE) for _ in range(2)]
    for i in range(n_per_block // TILE):
        k = i % 2
        if i >= 2:                      # buffer k was last read by MTE3 (z) and V (x, y) two tiles ago
            WaitFlag(HardEvent.MTE3_V, k)
            WaitFlag(HardEvent.V_MTE2, k)
        DataCopy(xs[k], xg[i * TILE], TILE)
        DataCopy(ys[k], yg[i * TILE], TILE)
        SetFlag(HardEvent.MTE2_V, k)
        WaitFlag(HardEvent.MTE2_V, k)
        Add(zs[k], xs[k], ys[k], TILE)
        SetFlag(HardEvent.V_MTE2, k)
        SetFlag(HardEvent.V_MTE3, k)
        WaitFlag(HardEvent.V_MTE3, k)
        DataCopy(zg[i * TILE], zs[k], TILE)
        SetFlag(HardEvent.MTE3_V, k)
    for k in range(min(2, n_per_block // TILE)):
        WaitFlag(HardEvent.MTE3_V, k)
        WaitFlag(HardEvent.V_MTE2, k)


def test_static_add_double_buffered_multi_core_is_exact():
    rng = np.random.default_rng(13)
    x, y = (rng.uniform(-8, 8, 8 * 1024).astype(half) for _ in range(2))
    z = np.zeros_like(x)
    launch(add_static, 4, x, y, z, 2048)
    np.testing.assert_array_equal(z, x + y)


@kernel
def muls_fetch_ids(x, z, n):
    """LocalTensor(pos, addr, len) at raw UB addresses, synchronised with ids from GetTPipePtr()->FetchEventID."""
    TPipe()
    xg, zg = GlobalTensor(float32), GlobalTensor(float32)
    xg.SetGlobalBuffer(x, n)
    zg.SetGlobalBuffer(z, n)
    a = LocalTensor[float32](TPosition.VECIN, 0, n)
    b = LocalTensor[float32](TPosition.VECOUT, n * 4, n)
    DataCopy(a, xg, n)
    e1 = GetTPipePtr().FetchEventID(HardEvent.MTE2_V)
    SetFlag(HardEvent.MTE2_V, e1)
    WaitFlag(HardEvent.MTE2_V, e1)
    Muls(b, a, 3.0, n)
    e2 = GetTPipePtr().AllocEventID(HardEvent.V_MTE3)
    SetFlag(HardEvent.V_MTE3, e2)
    WaitFlag(HardEvent.V_MTE3, e2)
    GetTPipePtr().ReleaseEventID(HardEvent.V_MTE3, e2)
    DataCopy(zg, b, n)


def test_local_tensor_on_raw_address_with_fetched_event_ids():
    x = np.arange(512, dtype=np.float32) - 100
    z = np.zeros_like(x)
    launch(muls_fetch_ids, 1, x, z, 512)
    np.testing.assert_array_equal(z, x * np.float32(3))


@kernel
def ids_6_and_7(x, z, n):
    """Event ids 6 and 7 are legal on Atlas A2 (SetFlag-WaitFlag(ISASI).md: "数据范围为：0-7")."""
    xg, zg = GlobalTensor(float32), GlobalTensor(float32)
    xg.SetGlobalBuffer(x, n)
    zg.SetGlobalBuffer(z, n)
    t = LocalMemAllocator().Alloc(float32, n)
    DataCopy(t, xg, n)
    SetFlag(HardEvent.MTE2_MTE3, 6)
    WaitFlag(HardEvent.MTE2_MTE3, 6)
    DataCopy(zg, t, n)
    SetFlag(HardEvent.MTE3_S, 7)
    WaitFlag(HardEvent.MTE3_S, 7)


def test_event_ids_6_and_7_are_legal_on_a2_and_8_is_not():
    x = np.arange(64, dtype=np.float32)
    z = np.zeros_like(x)
    launch(ids_6_and_7, 1, x, z, 64)
    np.testing.assert_array_equal(z, x)
    eight = lambda: SetFlag(HardEvent.MTE2_V, 8)  # noqa: E731
    with raises_rule(ArgumentError, "SetFlag(MTE2_V, 8): event ids are the integers 0..7 on Ascend910B", at=eight):
        launch(kernel(eight), 1)
    six = lambda: SetFlag(HardEvent.MTE2_V, 6)  # noqa: E731
    with raises_rule(ArgumentError, "event ids are the integers 0..3 on Ascend910", at=six):
        launch(kernel(six), 1, chip="Ascend910")


def test_fetch_does_not_hold_alloc_does_and_the_pool_runs_out():
    seen = {}

    @kernel
    def ids():
        pipe = TPipe()
        ev = HardEvent.V_S
        seen["fetch"] = [GetTPipePtr().FetchEventID(ev) for _ in range(2)]
        seen["alloc"] = [pipe.AllocEventID(ev) for _ in range(8)]
        pipe.ReleaseEventID(ev, 3)
        seen["after"] = (pipe.FetchEventID(ev), pipe.AllocEventID(ev))
        pipe.AllocEventID(ev)       # all 8 held again
    with raises_rule(SyncError, "AllocEventID(V_S): all 8 event ids of V_S are held", at="# all 8 held again"):
        launch(ids, 1)
    assert seen == {"fetch": [0, 0], "alloc": list(range(8)), "after": (3, 3)}
    release = lambda: TPipe().ReleaseEventID(HardEvent.MTE2_V, 2)  # noqa: E731
    with raises_rule(SyncError, "ReleaseEventID(MTE2_V, 2): id 2 is not held", at=release):
        launch(kernel(release), 1)
    no_pipe = lambda: GetTPipePtr().FetchEventID(HardEvent.MTE2_V)  # noqa: E731
    with raises_rule(QueueError, "GetTPipePtr() before any TPipe was created", at=no_pipe):
        launch(kernel(no_pipe), 1)


def test_get_block_num_is_num_blocks_on_the_vector_cores_of_a_mix_kernel():
    log = []

    @kernel(core="MIX")
    def who(log):
        log.append((GetBlockNum(), GetTaskRatio()))
    launch(who, 3, log)
    # GetBlockNum.md: "返回值与<<<>>>调用时配置的numBlocks一致"; AIV count = GetTaskRatio() * numBlocks
    assert sorted(set(log)) == [(3, 1), (3, 2)] and log.count((3, 2)) == 6


@kernel
def bind_copy(x, z, n):
    """TQueBind<VECIN, VECOUT>: GM -> UB -> GM through one bound buffer, no vector work (double buffered)."""
    pipe = TPipe()
    q = TQueBind(TPosition.VECIN, TPosition.VECOUT, 2)
    pipe.InitBuffer(q, 2, 64 * 2)
    xg, zg = GlobalTensor(half), GlobalTensor(half)
    xg.SetGlobalBuffer(x, n)
    zg.SetGlobalBuffer(z, n)
    for i in range(n // 64):
        t = q.AllocTensor(half)
        DataCopy(t, xg[i * 64], 64)
        q.EnQue(t)
        t = q.DeQue(half)
        DataCopy(zg[i * 64], t, 64)
        q.FreeTensor(t)


def test_tque_bind_vecin_vecout_copies_through_and_syncs_mte2_to_mte3():
    x = np.arange(512).astype(half)
    z = np.zeros_like(x)
    launch(bind_copy, 1, x, z, 512)
    np.testing.assert_array_equal(z, x)
    bad = lambda: TQueBind(TPosition.VECIN, TPosition.A1, 1)  # noqa: E731
    with raises_rule(PositionError, "TQueBind(VECIN, A1) is not a data path", at=bad):
        launch(kernel(bad), 1)


# --------------------------------------------------------------------------- the sanitizer on static tensors
def _static(body):
    def k():
        body(LocalMemAllocator())
    return kernel(k)


def test_static_tensors_keep_the_racecheck_and_the_initcheck():
    def race(alloc):
        a, b = alloc.Alloc(half, 128), alloc.Alloc(half, 128)
        DataCopy(a, b, 128)         # reads b, which nothing wrote
    with raises_rule(UninitializedReadError, "UB", at="DataCopy(a, b, 128)"):
        launch(_static(race), 1)

    @kernel
    def no_flag(x, n):
        xg = GlobalTensor(half)
        xg.SetGlobalBuffer(x, n)
        t = LocalMemAllocator().Alloc(half, n)
        DataCopy(t, xg, n)
        Muls(t, t, 2.0, n)  # <- V reads what MTE2 writes, with no SetFlag/WaitFlag
    with raises_rule(RaceError, "MTE2", at="Muls(t, t, 2.0, n)"):
        launch(no_flag, 1, np.ones(128, half), 128)


@pytest.mark.parametrize("body, error, words, at", [
    (lambda a: LocalTensor[half](TPosition.VECIN, 16, 64), AlignmentError,
     ["UB address 16: the start address must be 32-byte aligned (16 % 32 = 16)"], "TPosition.VECIN, 16, 64"),
    (lambda a: LocalTensor[float32](TPosition.VECCALC, 196576, 64), OutOfBoundsError,
     ["bytes 196576..196831 run past the 196608-byte UB", "use at most 8 elements"], "196576, 64"),
    (lambda a: a.Alloc(half, 200 * 1024), CapacityError,
     ["Alloc(half, 204800) needs 409600 bytes at address 0, but UB has 196608 bytes"], "a.Alloc(half, 200 * 1024)"),
    (lambda a: [a.Alloc(half, 10), a.Alloc(half, 16)], AlignmentError,
     ["UB address 20: the start address must be 32-byte aligned"], "a.Alloc(half, 10), a.Alloc(half, 16)"),
    (lambda a: a.Alloc(TPosition.A1, half, 16), PositionError,
     ["Alloc(A1, ...) on LocalMemAllocator(Hardware.UB): the logical position is not in UB"], "TPosition.A1, half"),
    (lambda a: LocalMemAllocator(Hardware.UB), QueueError,
     ["a second LocalMemAllocator(Hardware.UB) in this block"], "LocalMemAllocator(Hardware.UB), QueueError"),
    (lambda a: TPipe().InitBuffer(TQue(TPosition.VECIN, 1), 1, 64), QueueError,
     ["which a LocalMemAllocator already hands out", "不可以与TPipe等接口混用"], "TPipe().InitBuffer(TQue"),
])
def test_bad_static_allocation_is_refused(body, error, words, at):
    with raises_rule(error, *words, at=body):
        launch(_static(body), 1)


def test_a_static_tensor_over_a_queue_buffer_is_refused():
    def k():
        pipe = TPipe()
        pipe.InitBuffer(TQue(TPosition.VECIN, 1), 2, 1024)
        LocalTensor[half](TPosition.VECCALC, 1024, 64)  # <- inside the queue's second buffer
    with raises_rule(QueueError, "overlaps UB bytes 0..2047 that TPipe.InitBuffer gave to", at="inside the queue"):
        launch(kernel(k), 1)


def test_overlapping_raw_address_tensors_are_caught_by_the_racecheck():
    """Two LocalTensors placed by hand on overlapping UB bytes: legal to build (C++ does not check), but a write
    on one pipe and a write on another to the shared bytes with no flag is the racecheck's write-after-write."""
    @kernel
    def overlap(x, n):
        xg = GlobalTensor(half)
        xg.SetGlobalBuffer(x, n)
        a = LocalTensor[half](TPosition.VECIN, 0, n)
        b = LocalTensor[half](TPosition.VECCALC, n, n)        # bytes n..3n-1: half of it is a's
        DataCopy(a, xg, n)
        Duplicate(b, 1.0, n)  # <- V writes bytes MTE2 is writing
    with raises_rule(RaceError, "Duplicate on pipe V overwrites UB bytes from 256 that pipe MTE2 wrote",
                     at="<- V writes bytes MTE2"):
        launch(overlap, 1, np.ones(256, half), 256)


def test_static_tensors_in_l1_on_the_cube_core():
    """LocalMemAllocator(Hardware.L1) and LocalTensor[T](TPosition.B1, addr, n) on an AIC: GM -> L1 copies land
    where the addresses say (read back with DataCopy L1 -> UB is not a cube path, so GetValue checks them)."""
    seen = {}

    @kernel(core="AIC")
    def l1_static(x, n):
        xg = GlobalTensor(half)
        xg.SetGlobalBuffer(x, n)
        alloc = LocalMemAllocator(Hardware.L1)
        a = alloc.Alloc(TPosition.A1, half, n)
        b = LocalTensor[half](TPosition.B1, alloc.GetCurAddr(), n)
        DataCopy(a, xg, n)
        DataCopy(b, xg, n)
        SetFlag(HardEvent.MTE2_S, 0)
        WaitFlag(HardEvent.MTE2_S, 0)
        seen["vals"] = (a.GetValue(3), b.GetValue(n - 1), a.GetPhyAddr(), b.GetPhyAddr(), alloc.GetCurAddr())
    x = np.arange(256).astype(half)
    launch(l1_static, 1, x, 256)
    assert seen["vals"] == (3.0, 255.0, 0, 512, 512)
