"""DataCopy (count and DataCopyParams forms), DataCopyPad, the GM -> L1 and UB -> UB paths, atomic add."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import (ArgumentError, DataCopy, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams,
                        DataCopyParams, DtypeError, HardEvent, PositionError, SetAtomicAdd, SetAtomicNone, TPipe,
                        TPosition, TQue, float32, half, int8, kernel, launch)
from kernels_util import (assert_same, burst_index, gm, handoff, raises_rule, random_array, run_block_writes,
                          run_staged, scratch)

BLOCK = 32


def contiguous(count):
    return lambda dst, src: DataCopy(dst, src, count)


# ============================================================================ count form
@pytest.mark.parametrize("dtype", (half, float32, int8), ids=lambda d: np.dtype(d).name)
def test_count_form_round_trip_at_offsets(dtype):
    per_block = BLOCK // np.dtype(dtype).itemsize
    src = random_array(np.random.default_rng(1), dtype, 20 * per_block, -100, 100)
    out = np.zeros(20 * per_block, dtype)
    n, src_off, out_off = 8 * per_block, 3 * per_block, 5 * per_block
    run_staged(src, out, lambda ub, gm: DataCopy(ub, gm[src_off], n),
               lambda gm, ub: DataCopy(gm[out_off], ub, n), n_ub=n)
    expected = np.zeros_like(out)
    expected[out_off:out_off + n] = src[src_off:src_off + n]
    assert_same(out, expected)


# ============================================================================ DataCopyParams (strided)
# blockCount, blockLen, srcStride, dstStride: lengths and gaps in 32-byte blocks
STRIDED = [(4, 1, 0, 0), (3, 2, 1, 0), (5, 1, 3, 2), (2, 3, 0, 4), (1, 4, 7, 7)]


@pytest.mark.parametrize("count, blen, sgap, dgap", STRIDED)
def test_strided_gm_to_ub_leaves_the_gaps_untouched(count, blen, sgap, dgap):
    e = BLOCK // 2                                              # half elements per block
    src = np.arange(count * (blen + sgap) * e, dtype=half)
    n_ub = count * (blen + dgap) * e
    out = np.zeros(n_ub, half)
    run_staged(src, out, lambda ub, gm: DataCopy(ub, gm, DataCopyParams(count, blen, sgap, dgap)),
               contiguous(n_ub), n_ub=n_ub, fill=-1)
    expected = np.full(n_ub, -1, half)
    expected[burst_index(count, blen * e, (blen + dgap) * e)] = src[burst_index(count, blen * e, (blen + sgap) * e)]
    assert_same(out, expected)


@pytest.mark.parametrize("count, blen, sgap, dgap", STRIDED)
def test_strided_ub_to_gm_writes_only_the_bursts(count, blen, sgap, dgap):
    e = BLOCK // 4                                              # float elements per block
    n_ub = count * (blen + sgap) * e
    src = np.arange(n_ub, dtype=np.float32)
    out = np.full(count * (blen + dgap) * e, -1, np.float32)
    run_staged(src, out, contiguous(n_ub),
               lambda gm, ub: DataCopy(gm, ub, DataCopyParams(count, blen, sgap, dgap)), n_ub=n_ub)
    expected = np.full_like(out, -1)
    expected[burst_index(count, blen * e, (blen + dgap) * e)] = src[burst_index(count, blen * e, (blen + sgap) * e)]
    assert_same(out, expected)


def test_reference_check_catches_a_wrong_stride():
    """A kernel that passes the gap as the pitch (a classic slip) copies the wrong bursts."""
    src = np.arange(8 * 16, dtype=half)
    out = np.zeros(3 * 16, half)
    run_staged(src, out, lambda ub, gm: DataCopy(ub, gm, DataCopyParams(3, 1, 2, 0)), contiguous(48), n_ub=48)
    right = src[burst_index(3, 16, 2 * 16)]                     # meant: every other block
    with pytest.raises(AssertionError, match="32 of 48 elements differ, first at 16"):
        assert_same(out, right)


@pytest.mark.parametrize("params, words", [
    (DataCopyParams(0, 1, 0, 0), ["blockCount must be in 1..4095, got 0"]),
    (DataCopyParams(4096, 1, 0, 0), ["blockCount must be in 1..4095, got 4096", "several calls"]),
    (DataCopyParams(1, 0, 0, 0), ["blockLen must be in 1..65535, got 0", "32-byte blocks for DataCopy"]),
], ids=["count-0", "count-4096", "len-0"])
def test_strided_params_out_of_range(params, words):
    with raises_rule(ArgumentError, *words, at="DataCopy(ub, gm, params)"):
        run_staged(np.zeros(64, half), np.zeros(64, half), lambda ub, gm: DataCopy(ub, gm, params),
                   contiguous(64), n_ub=64)


def test_count_must_be_positive():
    with raises_rule(ArgumentError, "DataCopy count must be positive, got 0", at="DataCopy(ub, gm, 0)"):
        run_staged(np.zeros(64, half), np.zeros(64, half), lambda ub, gm: DataCopy(ub, gm, 0), contiguous(64), n_ub=64)


# ============================================================================ DataCopyPad
@pytest.mark.parametrize("dtype, count, nbytes, sgap, dgap", [
    (int8, 3, 37, 5, 0), (int8, 2, 1, 0, 1), (half, 4, 26, 6, 0), (half, 1, 34, 0, 0), (float32, 3, 44, 4, 2)],
    ids=["int8-37B", "int8-1B", "half-26B", "half-34B", "float-44B"])
@pytest.mark.parametrize("pad", [None, 9], ids=["no-pad", "pad-9"])
def test_datacopypad_gm_to_ub_any_byte_length_with_padding(dtype, count, nbytes, sgap, dgap, pad):
    isz = np.dtype(dtype).itemsize
    n, ub_n = nbytes // isz, -(-nbytes // BLOCK) * BLOCK // isz            # elements per burst, UB burst
    pitch_ub = ub_n + dgap * BLOCK // isz
    src = random_array(np.random.default_rng(2), dtype, count * (n + sgap // isz) + 8, -50, 50)
    n_ub = count * pitch_ub
    out = np.zeros(n_ub, dtype)
    pad_params = () if pad is None else (DataCopyPadExtParams(True, 0, ub_n - n, pad),)     # no pad: left out
    run_staged(src, out, lambda ub, gm: DataCopyPad(ub, gm, DataCopyExtParams(count, nbytes, sgap, dgap, 0),
                                                    *pad_params),
               contiguous(n_ub), n_ub=n_ub, fill=-1)
    expected = np.full(n_ub, -1, dtype)
    data = src[burst_index(count, n, n + sgap // isz)]
    # no isPad and no left/right padding: "dummy会默认填充待搬运数据块的第一个元素值" (the burst's first element)
    first = np.repeat(data.reshape(count, n)[:, 0], ub_n - n)
    expected[burst_index(count, ub_n - n, pitch_ub, n)] = first if pad is None else pad
    expected[burst_index(count, n, pitch_ub)] = data
    assert_same(out, expected)


@pytest.mark.parametrize("dtype, count, nbytes, sgap, dgap", [
    (int8, 3, 37, 1, 5), (half, 4, 26, 0, 6), (half, 2, 2, 2, 0), (float32, 2, 4, 0, 12)],
    ids=["int8-37B", "half-26B", "half-2B", "float-4B"])
def test_datacopypad_ub_to_gm_writes_exactly_the_bytes(dtype, count, nbytes, sgap, dgap):
    isz = np.dtype(dtype).itemsize
    n, ub_n = nbytes // isz, -(-nbytes // BLOCK) * BLOCK // isz
    pitch_ub = ub_n + sgap * BLOCK // isz
    n_ub = count * pitch_ub
    src = random_array(np.random.default_rng(3), dtype, n_ub, -50, 50)
    out = np.full(count * (n + dgap // isz) + 8, -1, dtype)
    run_staged(src, out, contiguous(n_ub),
               lambda gm, ub: DataCopyPad(gm, ub, DataCopyExtParams(count, nbytes, sgap, dgap, 0)), n_ub=n_ub)
    expected = np.full_like(out, -1)
    expected[burst_index(count, n, n + dgap // isz)] = src[burst_index(count, n, pitch_ub)]
    assert_same(out, expected)


def test_datacopypad_wants_ext_params_in_bytes():
    with raises_rule(ArgumentError, "DataCopyPad takes DataCopyExtParams", "blockLen is in bytes",
                     at="DataCopyPad(ub, gm, DataCopyParams(1, 1, 0, 0))"):
        run_staged(np.zeros(64, half), np.zeros(64, half),
                   lambda ub, gm: DataCopyPad(ub, gm, DataCopyParams(1, 1, 0, 0)), contiguous(64), n_ub=64)


# ============================================================================ GM -> L1, UB -> UB
@kernel(core="AIC")
def gm_to_l1(a, seen, params):
    l1 = scratch(4096, half, TPosition.A1)
    DataCopy(l1, gm(a), params)
    handoff(HardEvent.MTE2_S)
    seen.append(l1.peek())                 # debug aid (DumpTensor): not an instruction


@pytest.mark.parametrize("params", [64, DataCopyParams(4, 1, 3, 0)], ids=["count", "strided"])
def test_gm_to_l1_on_mte2(params):
    a = np.arange(256, dtype=half)
    seen: list[np.ndarray] = []
    result = launch(gm_to_l1, 1, a, seen, params)
    copies = [r for r in result.trace if r.op == "DataCopy"]
    assert [(r.pipe, r.src, r.dst, r.nbytes, r.core_type) for r in copies] == [("MTE2", "GM", "L1", 128, "AIC")]
    expected = a[:64] if params == 64 else a[burst_index(4, 16, 64)]
    assert_same(seen[0][:64], expected)


@kernel
def ub_to_ub(x, z):
    pipe = TPipe()
    a, b = scratch(256, half, pipe=pipe), scratch(256, half, pipe=pipe)
    DataCopy(a, gm(x), 128)
    handoff(HardEvent.MTE2_MTE3)
    DataCopy(b[32], a, DataCopyParams(2, 1, 1, 0))        # blocks 0 and 2 of a -> b[32:64]
    DataCopy(gm(z), b[32], 32)                            # MTE3 after MTE3: in order, no flag needed


def test_ub_to_ub_runs_on_mte3():
    x = np.arange(128, dtype=half)
    z = np.zeros(32, half)
    result = launch(ub_to_ub, 1, x, z)
    assert_same(z, x[burst_index(2, 16, 32)])
    rec = [r for r in result.trace if r.op == "DataCopy"][1]
    assert (rec.pipe, rec.src, rec.dst, rec.nbytes) == ("MTE3", "UB", "UB", 64)


# ============================================================================ no-path errors
@kernel(core="AIC")
def cube_side_copy(a, which):
    pipe = TPipe()
    qa1, qa2, qc = TQue(TPosition.A1, 1), TQue(TPosition.A2, 1), TQue(TPosition.CO1, 1)
    for q in (qa1, qa2, qc):
        pipe.InitBuffer(q, 1, 1024)
    l1, l0a, l0c = qa1.AllocTensor(half), qa2.AllocTensor(half), qc.AllocTensor(float32)
    a16, a32 = gm(a), gm(a, float32)
    {"gm-gm": lambda: DataCopy(a16, a16[64], 64),
     "gm-l0a": lambda: DataCopy(l0a, a16, 64),
     "l1-l0a": lambda: DataCopy(l0a, l1, 64),
     "l0c-gm": lambda: DataCopy(a32, l0c, 64)}[which]()


@pytest.mark.parametrize("which, words", [
    ("gm-gm", ["DataCopy from GM to GM is not a hardware path", "stage the data through UB"]),
    ("gm-l0a", ["DataCopy with an L0A destination is not a DataCopy path", "LoadData from L1 (A1)"]),
    ("l1-l0a", ["DataCopy with an L0A destination is not a DataCopy path", "LoadData"]),
    ("l0c-gm", ["DataCopy with an L0C source is not a DataCopy path", "L0C results leave through Fixpipe",
                "QuantMode_t.F322F16"]),
])
def test_copies_without_a_hardware_path(which, words):
    with raises_rule(PositionError, *words, at=f'"{which}": lambda'):
        launch(cube_side_copy, 1, np.zeros(256, half), which)


# ============================================================================ atomic add
def add_slice_atomically(z, t, block):
    SetAtomicAdd(float32)
    DataCopy(z, t[block * 64], 64)                 # every block: the same 64 floats of z


def overwrite_after_atomic_none(z, t, block):
    SetAtomicAdd(float32)
    SetAtomicNone()
    DataCopy(z, t, 64)


def add_with_the_wrong_atomic_type(z, t, block):
    SetAtomicAdd(half)
    DataCopy(z, t, 64)  # <- float data, half atomics


def test_atomic_add_dtype_must_match_the_copy():
    with raises_rule(DtypeError, "DataCopy of float data while SetAtomicAdd(half) is active",
                     "call SetAtomicAdd(float) before this copy", at="<- float data, half atomics"):
        run_block_writes(np.ones(64, np.float32), np.zeros(64, np.float32), add_with_the_wrong_atomic_type, blocks=1)


def test_atomic_add_accumulates_blocks_into_the_same_range():
    x = random_array(np.random.default_rng(4), float32, 3 * 64)
    z = np.full(64, 10, np.float32)
    result = run_block_writes(x, z, add_slice_atomically, blocks=3)
    assert_same(z, (10 + x[:64] + x[64:128] + x[128:]).astype(np.float32))
    assert [r.op for r in result.trace if r.pipe == "MTE3" and r.klass == "copy"] == ["DataCopy(atomic add)"] * 3


def test_set_atomic_none_goes_back_to_overwriting():
    z = np.full(64, 10, np.float32)
    run_block_writes(np.ones(64, np.float32), z, overwrite_after_atomic_none, blocks=1)
    assert_same(z, np.ones(64, np.float32))
