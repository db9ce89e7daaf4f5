"""The high-level Matmul API: a kernel written as the docs show (host GetTiling, REGIST_MATMUL_OBJ, per-core
offsets and SetTail, IterateAll) gives numpy's answer on many shapes, types and options; misuse is named."""
import numpy as np
import pytest

from ascend_sim import (ArgumentError, GetBlockIdx, GlobalTensor, KernelError, PositionError, TPipe, TilingError,
                        TPosition, bfloat16, float32, half, int8, int32, kernel, launch)
from ascend_sim import matmul_tiling as mt
from ascend_sim import (CFG_IBSHARE_NORM, CFG_MDL, CFG_NORM, MM_CFG_BB, REGIST_MATMUL_OBJ, GetSysWorkSpacePtr,
                        Matmul, MatmulConfig, MatmulType)

ND = mt.CubeFormat.ND


def gm(ptr, dtype, size=None):
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(ptr, size)
    return g


@pytest.fixture(params=[CFG_NORM, CFG_MDL], ids=["Norm", "MDL"])
def mm_cfg(request):
    """Both modelled templates: the same numbers, by a different GM -> L1 schedule."""
    return request.param


def types(in_dt, out_dt, trans_a=False, trans_b=False, bias_dt=float32):
    return (MatmulType(TPosition.GM, ND, in_dt, trans_a), MatmulType(TPosition.GM, ND, in_dt, trans_b),
            MatmulType(TPosition.GM, ND, out_dt), MatmulType(TPosition.GM, ND, bias_dt))


@kernel(core="AIC")
def matmul_api_kernel(a, b, bias, c, tiling: mt.TCubeTiling, cfg, mm_cfg=CFG_NORM):
    """One core's share of C, located as the official samples do (CalcOffset + SetTail)."""
    in_dt, out_dt, trans_a, trans_b, bias_dt, seq, quant = cfg
    t = tiling
    pipe = TPipe()
    mm = Matmul(*types(in_dt, out_dt, trans_a, trans_b, bias_dt), mm_cfg)
    REGIST_MATMUL_OBJ(pipe, GetSysWorkSpacePtr(), mm, t)
    blocks_m = -(-t.M // t.singleCoreM)
    mIdx, nIdx = GetBlockIdx() % blocks_m, GetBlockIdx() // blocks_m
    offA = mIdx * t.singleCoreM if trans_a else mIdx * t.singleCoreM * t.Ka
    offB = nIdx * t.singleCoreN * t.Kb if trans_b else nIdx * t.singleCoreN
    offC = mIdx * t.singleCoreM * t.N + nIdx * t.singleCoreN
    tailM = min(t.singleCoreM, t.M - mIdx * t.singleCoreM)
    tailN = min(t.singleCoreN, t.N - nIdx * t.singleCoreN)
    mm.SetTail(tailM, tailN)
    mm.SetTensorA(gm(a, in_dt)[offA], trans_a)
    mm.SetTensorB(gm(b, in_dt)[offB], trans_b)
    if bias is not None:
        mm.SetBias(gm(bias, bias_dt)[nIdx * t.singleCoreN])
    if quant:
        mm.SetQuantScalar(quant)
    if seq:
        mm.IterateAll(gm(c, out_dt)[GetBlockIdx() * t.singleCoreM * t.singleCoreN], enSequentialWrite=True)
    else:
        mm.IterateAll(gm(c, out_dt)[offC])
    mm.End()


def host_tiling(M, N, K, in_dt, out_dt, cores, *, bias=False, trans_a=False, trans_b=False, fix=None):
    tiler = mt.MultiCoreMatmulTiling()
    tiler.SetDim(cores)
    tiler.SetAType("GM", ND, in_dt, trans_a)
    tiler.SetBType("GM", ND, in_dt, trans_b)
    tiler.SetCType("GM", ND, out_dt)
    tiler.SetBiasType("GM", ND, int32 if np.dtype(in_dt) == np.int8 else float32)
    tiler.SetShape(M, N, K)
    tiler.SetOrgShape(M, N, K)
    tiler.EnableBias(bias)
    if fix:
        tiler.SetFixSplit(*fix)
    return tiler.tiling_or_raise()


def run(M, N, K, in_dt=half, out_dt=float32, cores=4, *, bias=False, trans_a=False, trans_b=False, seed=0,
        fix=None, quant=0.0, seq=False, mm_cfg=CFG_NORM, tiling=None):
    rng = np.random.default_rng(seed)
    lo, hi = (-100, 100) if np.dtype(in_dt) == np.int8 else (-4, 5)
    a = rng.integers(lo, hi, (M, K)).astype(in_dt)
    b = rng.integers(lo, hi, (K, N)).astype(in_dt)
    bias_dt = int32 if np.dtype(in_dt) == np.int8 else float32
    bv = None
    if bias:
        bv = np.zeros(-(-N // 16) * 16 + 16, bias_dt)
        bv[:N] = rng.integers(-50, 50, N)
    t = tiling or host_tiling(M, N, K, in_dt, out_dt, cores, bias=bias, trans_a=trans_a, trans_b=trans_b, fix=fix)
    c = np.zeros((M, N), out_dt)
    a_dev = np.ascontiguousarray(a.T) if trans_a else a
    b_dev = np.ascontiguousarray(b.T) if trans_b else b
    res = launch(matmul_api_kernel, t.usedCoreNum, a_dev, b_dev, bv, c, t,
                 (in_dt, out_dt, trans_a, trans_b, bias_dt, seq, quant), mm_cfg)
    ref = a.astype(np.float64) @ b.astype(np.float64) + (bv[:N] if bias else 0)
    return c, ref, res, t


@pytest.mark.parametrize("M, N, K, cores", [(64, 64, 64, 1), (256, 256, 256, 4), (100, 70, 90, 3),
                                            (33, 300, 130, 6), (512, 128, 1024, 8)])
def test_half_to_float_exact_with_tails(M, N, K, cores, mm_cfg):
    c, ref, _, _ = run(M, N, K, cores=cores, mm_cfg=mm_cfg)
    np.testing.assert_array_equal(c, ref.astype(np.float32))


@pytest.mark.parametrize("trans_a, trans_b", [(True, False), (False, True), (True, True)])
def test_transposed_inputs(trans_a, trans_b, mm_cfg):
    c, ref, _, _ = run(96, 80, 112, cores=2, trans_a=trans_a, trans_b=trans_b, mm_cfg=mm_cfg)
    np.testing.assert_array_equal(c, ref.astype(np.float32))


def test_bias_through_the_bias_table_and_half_output(mm_cfg):
    c, ref, _, _ = run(64, 96, 80, out_dt=half, cores=2, bias=True, mm_cfg=mm_cfg)
    np.testing.assert_array_equal(c, ref.astype(np.float32).astype(np.float16))


def test_bfloat16_inputs(mm_cfg):
    c, ref, _, _ = run(48, 64, 64, in_dt=bfloat16, cores=1, mm_cfg=mm_cfg)
    np.testing.assert_array_equal(c, ref.astype(np.float32))


def test_int8_to_int32_and_dequantised_half(mm_cfg):
    c, ref, _, _ = run(64, 64, 256, in_dt=int8, out_dt=int32, cores=2, trans_b=True, bias=True, mm_cfg=mm_cfg)
    np.testing.assert_array_equal(c, ref.astype(np.int32))
    c16, ref16, _, _ = run(32, 32, 64, in_dt=int8, out_dt=half, cores=1, trans_b=True, quant=0.0078125,
                           mm_cfg=mm_cfg)
    np.testing.assert_array_equal(c16, (ref16.astype(np.float32) * np.float32(0.0078125)).astype(np.float16))


def test_sequential_write_packs_blocks(mm_cfg):
    c, ref, _, t = run(64, 64, 32, cores=1, fix=(32, 32), seq=True, mm_cfg=mm_cfg)
    blocks = [ref[m:m + 32, n:n + 32] for n in (0, 32) for m in (0, 32)]      # iterateOrder 0: M inner
    np.testing.assert_array_equal(c.reshape(-1)[:4 * 1024].reshape(4, 32, 32), np.stack(blocks).astype(np.float32))


def _ops(res):
    table = res.trace.table()
    return list(zip(table.pipe.tolist(), table.op.tolist(), table.src.tolist()))


def test_the_instructions_run_on_their_pipes_and_reuse_l1():
    _, _, res, t = run(256, 256, 256, cores=1, mm_cfg=CFG_MDL)
    ops = _ops(res)
    pipes = {(p, o) for p, o, _ in ops}
    assert {("MTE2", "DataCopy"), ("MTE1", "LoadData3D"), ("M", "Mmad"), ("FIX", "Fixpipe")} <= pipes
    # K = 256 fits in L1 whole (stepKa * baseK >= K): with M inner, B's tile stays in L1 across the row blocks,
    # so GM -> L1 copies are one A tile per C block plus one B tile per column of blocks, not two per C block
    assert t.stepKa * t.baseK >= 256 and t.stepM == 1
    blocks_m, blocks_n = -(-256 // t.baseM), -(-256 // t.baseN)
    assert len(_gm_to_l1_copies(res)) == blocks_m * blocks_n + blocks_n
    # Norm: the same tiles, filled one base block per copy (B's blocks copied once, kept for the next row block)
    _, _, res, _ = run(256, 256, 256, cores=1)
    k_steps = 256 // t.baseK
    assert len(_gm_to_l1_copies(res)) == (blocks_m * blocks_n + blocks_n) * k_steps


def _gm_to_l1_copies(res) -> list[int]:
    """The bytes of each GM -> L1 DataCopy of the launch, from the trace, in issue order."""
    table = res.trace.table()
    return [b for p, o, b in zip(table.pipe.tolist(), table.op.tolist(), table.nbytes.tolist())
            if p == "MTE2" and o == "DataCopy"]


def _tiling_with_step_m(step_m: int):
    """256^3 on one core with stepM x stepKa A blocks in one L1 tile (single-buffered), so an A tile serves
    both row blocks of C and all of K: the Norm and MDL schedules differ in the copies only."""
    t = host_tiling(256, 256, 256, half, float32, 1)
    t.stepM, t.depthA1 = step_m, step_m * t.stepKa
    return t


def test_norm_copies_one_base_block_per_datacopy_and_mdl_the_whole_tile():
    """MatmulConfig.md table 1: depthA1 = 6 is six MTE2 copies under Norm, one under MDL."""
    t = _tiling_with_step_m(2)
    a_block, b_block = t.baseM * t.baseK * 2, t.baseK * t.baseN * 2
    a_tile, b_tile = t.stepM * a_block * t.stepKa, t.stepN * b_block * t.stepKb
    c_norm, ref, norm, _ = run(256, 256, 256, cores=1, tiling=t)
    c_mdl, _, mdl, _ = run(256, 256, 256, cores=1, tiling=t, mm_cfg=CFG_MDL)
    assert sorted(_gm_to_l1_copies(mdl)) == sorted([a_tile, b_tile])
    assert sorted(_gm_to_l1_copies(norm)) == sorted([a_block] * (t.stepM * t.stepKa) + [b_block] * t.stepKb)
    np.testing.assert_array_equal(c_norm, c_mdl)
    np.testing.assert_array_equal(c_norm, ref.astype(np.float32))


def test_norm_starts_mte1_on_the_first_block_mdl_after_the_tile():
    """Norm's advantage in the docs ("可以提前启动MTE1流水"): the first LoadData starts before the tile is in."""
    t = _tiling_with_step_m(2)
    first_load = {}
    for name, cfg in (("Norm", CFG_NORM), ("MDL", CFG_MDL)):
        table = run(256, 256, 256, cores=1, tiling=t, mm_cfg=cfg)[2].trace.table()
        first_load[name] = min(s for p, s in zip(table.pipe.tolist(), table.start.tolist()) if p == "MTE1")
    assert first_load["Norm"] < first_load["MDL"]


@pytest.mark.parametrize("cfg, named", [(MM_CFG_BB, "doBasicBlock"),
                                        (MatmulConfig(), "no template switch"),
                                        (MatmulConfig(doNorm=True, doMultiDataLoad=True), "doNorm \\+ doMultiDataLoad"),
                                        ("MDL", "must be a MatmulConfig")])
def test_templates_not_modelled_are_named(cfg, named):
    with pytest.raises(ArgumentError, match=named) as err:
        Matmul(*types(half, float32), cfg)
    assert "CFG_MDL" in str(err.value)        # the fix names the templates that are modelled


def test_double_buffered_l0_overlaps_mte1_with_mmad():
    """dbL0A = dbL0B = 2: some LoadData of the next K step runs while the cube works on this one (MDL: the
    tile is in L1 already; under Norm this MTE2-bound shape loads each block only once its copy is done)."""
    _, _, res, t = run(128, 256, 512, cores=1, seed=1, mm_cfg=CFG_MDL)
    assert (t.dbL0A, t.dbL0B) == (2, 2)
    table = res.trace.table()
    mm = [(s, e) for p, s, e in zip(table.pipe.tolist(), table.start.tolist(), table.end.tolist()) if p == "M"]
    loads = [(s, e) for p, s, e in zip(table.pipe.tolist(), table.start.tolist(), table.end.tolist()) if p == "MTE1"]
    assert any(ls < me and le > ms for ls, le in loads for ms, me in mm)


def test_wrong_tail_gives_wrong_numbers_not_silence():
    """A kernel that forgets SetTail on the last core writes past C or leaves it wrong: the sanitizer names it."""
    t = host_tiling(100, 64, 64, half, float32, 2)

    @kernel(core="AIC")
    def no_tail(a, b, c, t):
        mm = Matmul(*types(half, float32)[:3])
        REGIST_MATMUL_OBJ(TPipe(), GetSysWorkSpacePtr(), mm, t)
        i = GetBlockIdx()
        mm.SetTensorA(gm(a, half)[i * t.singleCoreM * t.Ka])
        mm.SetTensorB(gm(b, half))
        mm.IterateAll(gm(c, float32)[i * t.singleCoreM * t.N])

    a = np.ones((100, 64), np.float16)
    b = np.ones((64, 64), np.float16)
    c = np.zeros((100, 64), np.float32)
    with pytest.raises(KernelError) as err:
        launch(no_tail, t.usedCoreNum, a, b, c, t)
    assert "mm.IterateAll" in str(err.value) or "SetTensorA" in str(err.value)


def test_init_checks_the_tiling_at_the_learners_line():
    t = host_tiling(64, 64, 64, half, float32, 1)
    t.baseN, t.dbL0C = 512, 2

    @kernel(core="AIC")
    def bad(t):
        mm = Matmul(*types(half, float32)[:3])
        REGIST_MATMUL_OBJ(TPipe(), None, mm, t)

    with pytest.raises(TilingError, match="L0C: baseM \\* baseN") as err:
        launch(bad, 1, t)
    assert "REGIST_MATMUL_OBJ" in str(err.value)


def test_matmul_on_a_vector_core_is_refused_with_the_fix():
    t = host_tiling(64, 64, 64, half, float32, 1)

    @kernel
    def on_aiv(t):
        mm = Matmul(*types(half, float32)[:3])
        mm.Init(t)

    with pytest.raises(PositionError, match="core='AIC'"):
        launch(on_aiv, 1, t)


def test_misuse_is_named():
    t = host_tiling(64, 64, 64, half, float32, 1)

    @kernel(core="AIC")
    def twice(a, b, c, t):
        mm = Matmul(*types(half, float32)[:3])
        REGIST_MATMUL_OBJ(TPipe(), None, mm, t)
        mm.SetTensorA(gm(a, half))
        mm.SetTensorB(gm(b, half))
        mm.Iterate()
        mm.Iterate()

    a, b, c = np.ones((64, 64), np.float16), np.ones((64, 64), np.float16), np.zeros((64, 64), np.float32)
    with pytest.raises(ArgumentError, match="without GetTensorC"):
        launch(twice, 1, a, b, c, t)
