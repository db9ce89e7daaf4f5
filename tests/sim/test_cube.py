"""The cube path: LoadData (L1 -> L0A/L0B), Mmad (fp16/bf16 -> fp32, int8 -> int32, accumulate),
Fixpipe (F322F16, ReLU, strides) and the fractal, address and dtype rules."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from ascend_sim import (ArgumentError, CubeFormatError, DataCopy, DtypeError, Fixpipe, FixpipeParams, HardEvent,
                        LoadData, LoadData2DParams, Mmad, MmadParams, Nd2NzParams, OutOfBoundsError, PositionError,
                        QuantMode_t, QueueError,
                        TPipe, TPosition, TQue, bfloat16, float32, half, int8, int32, kernel, launch)
from kernels_util import assert_same, gm, handoff, raises_rule, round_to, run_on_cube, scratch


def small_ints(rng, shape, dtype, lo=-8, hi=8) -> np.ndarray:
    """Integer values: every product and sum is exact in fp32, so results compare bit for bit."""
    return rng.integers(lo, hi, shape).astype(dtype)


@pytest.mark.parametrize("dtype, k", [(half, 32), (bfloat16, 16), (int8, 64)], ids=["fp16", "bf16", "int8"])
def test_mmad_multiplies_exactly_in_the_accumulator_dtype(dtype, k):
    rng = np.random.default_rng(1)
    lo, hi = (-128, 128) if dtype == int8 else (-8, 8)
    a, b = small_ints(rng, (32, k), dtype, lo, hi), small_ints(rng, (k, 16), dtype, lo, hi)
    acc = np.int32 if dtype == int8 else np.float32
    c = run_on_cube([a], [b], acc)
    assert_same(c, (a.astype(np.int64) @ b.astype(np.int64)).astype(acc))


def test_mmad_fp16_random_values_match_fp32_accumulation():
    rng = np.random.default_rng(2)
    a, b = rng.uniform(-1, 1, (48, 64)).astype(half), rng.uniform(-1, 1, (64, 32)).astype(half)
    c = run_on_cube([a], [b], np.float32)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_mmad_accumulate_flag_adds_each_k_step():
    rng = np.random.default_rng(3)
    a_steps = [small_ints(rng, (16, 32), half) for _ in range(3)]
    b_steps = [small_ints(rng, (32, 16), half) for _ in range(3)]
    c = run_on_cube(a_steps, b_steps, np.float32)
    assert_same(c, sum(x.astype(np.float32) @ y.astype(np.float32) for x, y in zip(a_steps, b_steps)))
    first_only = a_steps[0].astype(np.float32) @ b_steps[0].astype(np.float32)
    assert not np.array_equal(c, first_only)


@pytest.mark.parametrize("relu", [False, True], ids=["no-relu", "relu"])
def test_fixpipe_f322f16_rounds_once_and_applies_relu(relu):
    rng = np.random.default_rng(4)
    a, b = rng.uniform(-2, 2, (16, 32)).astype(half), rng.uniform(-2, 2, (32, 32)).astype(half)
    c = run_on_cube([a], [b], np.float16, quant=QuantMode_t.F322F16, relu=relu)
    fp32 = run_on_cube([a], [b], np.float32)
    assert_same(c, round_to(np.maximum(fp32, 0) if relu else fp32, half, "rint"))
    assert (c < 0).any() != relu


# ============================================================================ a staged AIC core
@kernel(core="AIC")
def cube_stage(a, c, action):
    """L1 (32x32 half from ``a``, NZ), L0A (ZZ) and L0B (ZN) loaded with it, L0C (32x32 float); then ``action(t)``."""
    pipe = TPipe()
    l1, l0a, l0b = (scratch(n, half, pos, pipe) for pos, n in ((TPosition.A1, 4096), (TPosition.A2, 2560),
                                                               (TPosition.B2, 2048)))
    DataCopy(l1, gm(a), Nd2NzParams(1, 32, 32, 0, 32, 32, 1, 0))
    handoff(HardEvent.MTE2_MTE1)
    for i in range(2):      # Nz -> Zz (A) and Nz -> Zn (B, each fractal transposed), one 16-row block per call
        LoadData(l0a[i * 512], l1[i * 256], LoadData2DParams(0, 2, 2, 0, 0, False, 0))
        LoadData(l0b[i * 512], l1[i * 256], LoadData2DParams(0, 2, 2, 0, 0, True, 0))
    handoff(HardEvent.MTE1_M)
    action(SimpleNamespace(l1=l1, l0a=l0a, l0b=l0b, l0c=scratch(4096, float32, TPosition.CO1, pipe), out=gm(c),
                           out_half=gm(c, half)))


def run_stage(action, out: np.ndarray | None = None, a: np.ndarray | None = None):
    a = np.arange(1024, dtype=np.float32).astype(half) if a is None else a
    return launch(cube_stage, 1, a, np.zeros(1024, np.float32) if out is None else out, action)


def mmad_then_fixpipe(t, params: FixpipeParams) -> None:
    Mmad(t.l0c, t.l0a, t.l0b, MmadParams(32, 32, 32))
    handoff(HardEvent.M_FIX)
    Fixpipe(t.out, t.l0c, params)


def test_fixpipe_strides_place_a_sub_block():
    a = (np.arange(1024) % 7 - 3).astype(half)
    out = np.full((16, 48), -1, np.float32)
    run_stage(lambda t: mmad_then_fixpipe(t, FixpipeParams(nSize=16, mSize=16, srcStride=32, dstStride=48)), out, a)
    full = a.reshape(32, 32).astype(np.float32) @ a.reshape(32, 32).astype(np.float32)
    expected = np.full((16, 48), -1, np.float32)
    expected[:, :16] = full[:16, :16]
    assert_same(out, expected)


def test_fixpipe_src_stride_with_one_column_block_reads_only_that_block():
    """nSize <= 16: one column block, so srcStride (the distance to the next block) addresses nothing; a value
    above mSize rounded up reads the same L0C elements, on the chip as here (the Fixpipe API page defines
    srcStride as the offset between adjacent NZ column blocks)."""
    a = (np.arange(1024) % 7 - 3).astype(half)
    full = a.reshape(32, 32).astype(np.float32) @ a.reshape(32, 32).astype(np.float32)
    for stride in (32, 48):
        out = np.full((32, 16), -1, np.float32)
        run_stage(lambda t: mmad_then_fixpipe(t, FixpipeParams(nSize=16, mSize=32, srcStride=stride, dstStride=16)),
                  out, a)
        assert_same(out, full[:, :16])


def test_fixpipe_src_stride_above_the_mmad_rows_is_refused_within_l0c():
    """Two column blocks, srcStride 32 where the Mmad of 16 rows wrote them 16 rows apart: in bounds, but block 1
    would be read from the wrong rows (the device gives wrong numbers, no error)."""
    def action(t):
        Mmad(t.l0c, t.l0a, t.l0b, MmadParams(16, 32, 32))
        handoff(HardEvent.M_FIX)
        Fixpipe(t.out, t.l0c, FixpipeParams(32, 16, 32, 32))
    with raises_rule(CubeFormatError, "Fixpipe srcStride 32, but the Mmad at", "column blocks of 16 rows",
                     "srcStride = 16", at="FixpipeParams(32, 16, 32, 32)"):
        run_stage(action)


def test_mmad_record_counts_flops_and_fractals():
    result = run_stage(lambda t: Mmad(t.l0c, t.l0a, t.l0b, MmadParams(32, 32, 32)))
    mmad = [r for r in result.trace if r.op == "Mmad"]
    assert [(r.pipe, r.core_type, r.flops, r.src, r.dst) for r in mmad] == [("M", "AIC", 2 * 32 ** 3, "L0A", "L0C")]


@kernel(core="AIC")
def load_pattern(a, seen, params):
    l1, l0 = scratch(8 * 512, half, TPosition.A1), scratch(8 * 512, half, TPosition.B2)
    DataCopy(l1, gm(a), 8 * 256)
    handoff(HardEvent.MTE2_MTE1)
    LoadData(l0, l1, params)
    handoff(HardEvent.MTE1_M)
    seen.append(l0.peek())


@kernel(core="AIC")
def load_after_free(a):
    pipe = TPipe()
    q = TQue(TPosition.A1, 1)
    pipe.InitBuffer(q, 1, 512)
    l0 = scratch(512, half, TPosition.A2, pipe)
    l1 = q.AllocTensor(half)
    DataCopy(l1, gm(a), 256)
    q.EnQue(l1)
    l1 = q.DeQue(half)
    LoadData(l0, l1, LoadData2DParams(0, 1, 1, 0, 0, False, 0))    # plans the load on these tensors
    q.FreeTensor(l1)
    LoadData(l0, l1, LoadData2DParams(0, 1, 1, 0, 0, False, 0))  # <- load after free


def test_loaddata_of_a_freed_tensor_is_reported_though_the_same_load_was_planned():
    """A freed handle must miss the plan its live self made (the plan key tells a freed tier from a live one, also
    for any key that names tiers instead of holding them), so the check runs and reports the use after free."""
    with raises_rule(QueueError, "given back with FreeTensor (use after free)", "L1", at="<- load after free"):
        launch(load_after_free, 1, np.ones(256, half))


def test_loaddata_start_index_src_stride_and_dst_gap_move_whole_fractals():
    a = np.repeat(np.arange(8), 256).astype(half)              # fractal f holds the value f
    seen: list[np.ndarray] = []
    launch(load_pattern, 1, a, seen, LoadData2DParams(startIndex=1, repeatTimes=3, srcStride=2, dstGap=1))
    fractals = seen[0].reshape(8, 256)
    assert [int(f[0]) for f in fractals[[0, 2, 4]]] == [1, 3, 5]          # sources 1, 3, 5
    assert all((f == f[0]).all() for f in fractals[[0, 2, 4]])
    assert not fractals[[1, 3]].any()                                     # the gaps stay untouched


# ============================================================================ errors
TO_HALF = QuantMode_t.F322F16
CUBE_ERRORS = [
    pytest.param(lambda t: Mmad(t.l0c, t.l0a[16], t.l0b, MmadParams(16, 16, 16)), CubeFormatError,
                 ["Mmad: L0A address 32 is not 512-byte aligned"], id="mmad-l0a-unaligned"),
    pytest.param(lambda t: Mmad(t.l0c[8], t.l0a, t.l0b, MmadParams(16, 16, 16)), CubeFormatError,
                 ["Mmad: L0C address 32 is not 64-byte aligned"], id="mmad-l0c-unaligned"),
    pytest.param(lambda t: LoadData(t.l0a[256 + 8], t.l1, LoadData2DParams(0, 1, 1)), CubeFormatError,
                 ["LoadData: L0A address 528 is not 512-byte aligned (528 % 512 = 16)"], id="loaddata-unaligned"),
    pytest.param(lambda t: Mmad(t.l0c, t.l0a.ReinterpretCast(int32), t.l0b.ReinterpretCast(int32),
                                MmadParams(16, 16, 16)), DtypeError,
                 ["Mmad inputs are int32_t and int32_t", "two half, two bfloat16_t, two int8_t or two float"],
                 id="int32-inputs"),
    pytest.param(lambda t: Mmad(t.l0c, t.l0a, t.l0b.ReinterpretCast(int8), MmadParams(16, 16, 32)), DtypeError,
                 ["Mmad inputs are half and int8_t"], id="mixed-inputs"),
    pytest.param(lambda t: Mmad(t.l0c.ReinterpretCast(half), t.l0a, t.l0b, MmadParams(16, 16, 16)), DtypeError,
                 ["Mmad of half accumulates in float, but dst is half"], id="half-accumulator"),
    pytest.param(lambda t: LoadData(t.l0a.ReinterpretCast(int8), t.l1, LoadData2DParams(0, 1, 1)), DtypeError,
                 ["LoadData from half to int8_t"], id="loaddata-dtype"),
    pytest.param(lambda t: Fixpipe(t.out, t.l0c, FixpipeParams(16, 16, 16, 16, quantPre=TO_HALF)), DtypeError,
                 ["quantPre=F322F16 produces half but the GM tensor is float"], id="fixpipe-dtype"),
    pytest.param(lambda t: Fixpipe(t.out, t.l0c.ReinterpretCast(int32), FixpipeParams(16, 16, 16, 16,
                                                                                      quantPre=TO_HALF)),
                 DtypeError, ["quantPre=F322F16 converts float L0C results, but this L0C tensor is int32_t",
                              "DEQF16"],
                 id="f322f16-of-int32"),
    pytest.param(lambda t: Mmad(t.l0c, t.l0a, t.l0b, MmadParams(4096, 16, 16)), CubeFormatError,
                 ["Mmad m=4096 outside 1..4095", "tile the matmul"], id="m-4096"),
    pytest.param(lambda t: Mmad(t.l0c, t.l0a, t.l0b, MmadParams(32, 32, 40)), CubeFormatError,
                 ["Mmad m=32, n=32, k=40 works on whole fractals: ceil(m/16)=2 x ceil(k/16)=3 = 6 fractals "
                  "(3072 bytes) of L0A, but the tensor holds 2560 bytes", "K to 16"], id="k-not-padded-in-l0a"),
    pytest.param(lambda t: Mmad(t.l0c[512], t.l0a, t.l0b, MmadParams(20, 32, 32)), CubeFormatError,
                 ["ceil(m/16)=2 x ceil(n/16)=2 = 4 fractals (4096 bytes) of L0C, but the tensor holds 2048 bytes",
                  "M and N rounded up to 16"], id="m-not-padded-in-l0c"),
    pytest.param(lambda t: LoadData(t.l0a.ReinterpretCast(int8), t.l1.ReinterpretCast(int8),
                                    LoadData2DParams(0, 1, 1, 0, 0, True)), DtypeError,
                 ["LoadData ifTranspose with int8_t", "b16 data only", "B^T"], id="loaddata-transpose-int8"),
    pytest.param(lambda t: LoadData(t.l0b, t.l1, LoadData2DParams(6, 3, 1)), OutOfBoundsError,
                 ["LoadData source needs 4608 bytes (9 fractals' span) but the L1 tensor holds 4096"],
                 id="loaddata-past-l1"),
    pytest.param(lambda t: Fixpipe(t.out, t.l0c, FixpipeParams(32, 33, 48, 32)), OutOfBoundsError,
                 ["Fixpipe reads 2 column blocks of 33 rows (srcStride 48): 1296 elements, but the L0C tensor "
                  "holds 1024"], id="fixpipe-past-l0c"),
    pytest.param(lambda t: Fixpipe(t.out, t.l0c, FixpipeParams(32, 32, 48, 32)), OutOfBoundsError,
                 ["Fixpipe reads 2 column blocks of 32 rows (srcStride 48): 1280 elements", "holds 1024",
                  "mSize rounded up to 16", ": 32 for mSize 32, not 48"], id="fixpipe-srcstride-above-past-l0c"),
    pytest.param(lambda t: Fixpipe(t.out, t.l0c, FixpipeParams(32, 32)), CubeFormatError,
                 ["Fixpipe srcStride 0 < mSize 32", "mSize rounded up to 16", ": 32"], id="fixpipe-srcstride"),
    pytest.param(lambda t: Fixpipe(t.out, t.l0c, FixpipeParams(32, 32, 32, 0)), ArgumentError,
                 ["Fixpipe dstStride 0 < nSize 32", "GM row length in elements"], id="fixpipe-dststride"),
    pytest.param(lambda t: DataCopy(t.out, t.l0c, 1024), PositionError,
                 ["DataCopy with an L0C source is not a DataCopy path", "Fixpipe(", "F322F16"],
                 id="datacopy-out-of-l0c"),
    pytest.param(lambda t: DataCopy(t.out_half, t.l0c, 1024), PositionError,
                 ["L0C results leave through Fixpipe", "QuantMode_t.F322F16"], id="datacopy-l0c-to-half"),
    pytest.param(lambda t: Fixpipe(t.l1, t.l0c, FixpipeParams(16, 16)), PositionError,
                 ["Fixpipe writes to GM here"], id="fixpipe-to-l1"),
    pytest.param(lambda t: LoadData(t.l1, t.l1, LoadData2DParams(0, 1, 1)), PositionError,
                 ["LoadData: dst must live in L0A or L0B, got L1"], id="loaddata-to-l1"),
    pytest.param(lambda t: Mmad(t.l0c, t.l0b, t.l0a, MmadParams(16, 16, 16)), PositionError,
                 ["Mmad: fm (left matrix A) must live in L0A, got L0B", "LoadData the left matrix into an A2"],
                 id="swapped-operands"),
]


@pytest.mark.parametrize("action, error, words", CUBE_ERRORS)
def test_cube_rules_name_the_rule_and_the_line(action, error, words):
    with raises_rule(error, *words, at=action):
        run_stage(action)


@pytest.mark.parametrize("dtype", [half, bfloat16], ids=["fp16", "bf16"])
def test_mmad_widens_every_2_byte_pattern_exactly_as_astype(dtype):
    """Mmad widens its inputs by table lookup: the same float32 bits as numpy's cast, NaN and inf included."""
    from ascend_sim.api.ops.cube import _widening_table
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype)
    table = _widening_table(np.dtype(dtype), np.dtype(np.float32))
    assert np.array_equal(table[every.view(np.uint16)].view(np.uint32), every.astype(np.float32).view(np.uint32))


# ============================================================================ costs on their pipes
@kernel(core="AIC")
def cube_costs(a, c, cfg):
    """Nd2Nz (MTE2) of a rows x 64 half tile, LoadData (MTE1), Mmad (M), Fixpipe (FIX): one of each."""
    rows, transpose = cfg
    pipe = TPipe()
    l1, l0a, l0b = (scratch(rows * 128, half, pos, pipe) for pos in (TPosition.A1, TPosition.A2, TPosition.B2))
    l0c = scratch(rows * rows * 4, float32, TPosition.CO1, pipe)
    DataCopy(l1, gm(a), Nd2NzParams(1, rows, 64, 0, 64, rows, 1, 0))
    handoff(HardEvent.MTE2_MTE1)
    LoadData(l0a, l1, LoadData2DParams(0, rows // 4, 1, 0, 0, transpose, 0))
    LoadData(l0b, l1, LoadData2DParams(0, rows // 4, 1, 0, 0, True, 0))
    handoff(HardEvent.MTE1_M)
    Mmad(l0c, l0a, l0b, MmadParams(rows, rows // 4, 64, 0, False, True))
    handoff(HardEvent.M_FIX)
    Fixpipe(gm(c), l0c, FixpipeParams(16, rows, rows, 16))


def cube_cost_records(rows: int, transpose: bool = False) -> list:
    res = launch(cube_costs, 1, np.zeros(rows * 64, half), np.zeros(rows * 16, np.float32), (rows, transpose))
    return [(r.op, r.pipe, r.cycles) for r in res.trace if r.op in ("DataCopy", "LoadData", "Mmad", "Fixpipe")]


def test_each_cube_instruction_is_costed_on_its_pipe_and_grows_with_its_size():
    small, big = cube_cost_records(32), cube_cost_records(64)
    assert [(op, pipe) for op, pipe, _ in small] == [("DataCopy", "MTE2"), ("LoadData", "MTE1"),
                                                     ("LoadData", "MTE1"), ("Mmad", "M"), ("Fixpipe", "FIX")]
    for (op, _, c_small), (_, _, c_big) in zip(small, big):
        assert c_big > c_small, op               # more row bursts, fractals, MACs and output rows
    assert cube_cost_records(32, True) == small  # the fractal transpose (L0A load here) costs nothing extra


def test_loaddata_params_refuse_a_float_at_the_learners_line():
    """LoadData2DParams checks its integer fields when built, and names the line that built it."""
    import pytest
    from ascend_sim import LoadData2DParams
    from ascend_sim.engine.errors import ArgumentError
    with pytest.raises(ArgumentError) as e:
        LoadData2DParams(0, 2.0, 1)     # the line reported
    assert "repeatTimes must be an integer, got float 2.0" in str(e.value)
    assert "LoadData2DParams(0, 2.0, 1)" in str(e.value)
    assert LoadData2DParams(0, 2, 1) == LoadData2DParams(startIndex=0, repeatTimes=2, srcStride=1)
