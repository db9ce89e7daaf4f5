"""The Matmul API's L1 -> L0 loads are the official ones on Atlas A2 (cannmirror/asc-devkit,
impl/adv_api/detail/matmul/stage/split/load_to_l0a/load_to_l0a_loadInstr.h and load_to_l0b/load_to_l0b_loadInstr.h):
one LoadData3D (v2) per base block for A, A^T and B; LoadData 2D with repeats for B^T (one load when the block spans
the L1 tile's rows, else a loop over the shorter of K and N). The numbers are the same; so is what lands in L0."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ascend_sim import (CFG_MDL, ArgumentError, DtypeError, LoadData, LoadData3DParamsV2, TPipe, TPosition, TQue,
                        float32, half, kernel, launch)
from ascend_sim.api.ops.img2col import img2col_index

from test_matmul_api import host_tiling, run


def _mte1_per_mmad(res) -> tuple[list, int]:
    table = res.trace.table()
    ops = list(zip(table.pipe.tolist(), table.op.tolist()))
    loads = [o for p, o in ops if p == "MTE1"]
    return loads, sum(1 for p, o in ops if o == "Mmad")


@pytest.mark.parametrize("trans_a", [False, True])
def test_one_load3d_per_operand_and_base_block(trans_a):
    c, ref, res, _ = run(128, 128, 256, cores=1, trans_a=trans_a, mm_cfg=CFG_MDL)
    np.testing.assert_array_equal(c, ref.astype(np.float32))
    loads, mmads = _mte1_per_mmad(res)
    assert loads == ["LoadData3D"] * (2 * mmads)         # was one LoadData 2D per 16 rows: 4 + 4 a K step here


def _tiling_b_t(base_n: int, base_k: int, step_n: int, in_dt=half):
    """B^T (N x K) on one core, N = step_n * base_n rows in one L1 tile, K = 2 base K steps."""
    M, N, K = 32, base_n * step_n, 2 * base_k
    t = host_tiling(M, N, K, in_dt, float32, 1, trans_b=True)
    return dataclasses.replace(t, singleCoreM=M, singleCoreN=N, singleCoreK=K, baseM=32, baseN=base_n, baseK=base_k,
                               stepM=1, stepN=step_n, stepKa=2, stepKb=2, depthA1=2, depthB1=2 * step_n,
                               usedCoreNum=1, iterateOrder=0)


@pytest.mark.parametrize("base_n, base_k, step_n, in_dt, b_loads", [
    (64, 64, 1, half, 1),        # the block spans the tile's N rows: one load, repeat K blocks x N blocks
    (64, 32, 2, half, 2),        # N blocks (4) >= K blocks (2): one load per K block, repeat over N
    (32, 64, 2, half, 2),        # N blocks (2) < K blocks (4): one load per N block, repeat over K (srcStride, dstGap)
    (32, 64, 2, float32, 2),     # fp32: C0 = 8, so K blocks of 8 (8 > 2 N blocks)
])
def test_b_transposed_loads_as_the_official_load2d(base_n, base_k, step_n, in_dt, b_loads):
    t = _tiling_b_t(base_n, base_k, step_n, in_dt)
    c, ref, res, _ = run(t.M, t.N, t.Ka, in_dt=in_dt, trans_b=True, tiling=t, mm_cfg=CFG_MDL)
    np.testing.assert_array_equal(c, ref.astype(np.float32))
    loads, mmads = _mte1_per_mmad(res)
    assert loads.count("LoadData3D") == mmads                   # A: one per base block
    assert loads.count("LoadData") == b_loads * mmads           # B^T: the official loop count


def test_load3d_into_l0b_is_zn_and_en_transpose_is_zz_of_the_transposed_block():
    """Hand-built: an NZ matrix in L1, 32 rows x 32 columns (two C0 = 16 column groups, each 32 rows high); the
    element (r, c) sits at ((c // 16) * 32 + r) * 16 + c % 16 of the feature map."""
    p = LoadData3DParamsV2([0, 0, 0, 0], 1, 32, 32, 32, 32, 0, 0)
    src = lambda r, c: ((c // 16) * 32 + r) * 16 + c % 16      # noqa: E731
    zz = [src(rb * 16 + r, cb * 16 + c) for rb in range(2) for cb in range(2) for r in range(16) for c in range(16)]
    zn = [src(rb * 16 + r, cb * 16 + c) for rb in range(2) for cb in range(2) for c in range(16) for r in range(16)]
    tz = [src(rb * 16 + r, cb * 16 + c) for cb in range(2) for rb in range(2)
          for c in range(16) for r in range(16)]
    np.testing.assert_array_equal(img2col_index(p, 16), zz)
    np.testing.assert_array_equal(img2col_index(p, 16, to_l0b=True), zn)
    np.testing.assert_array_equal(img2col_index(dataclasses.replace(p, enTranspose=True), 16), tz)


def test_unmodelled_transposing_forms_are_refused_with_the_fix():
    @kernel(core="AIC")
    def k(dtype, dst_pos, transpose, m_ext):
        pipe = TPipe()
        q1, q2 = TQue(TPosition.B1 if dst_pos is TPosition.B2 else TPosition.A1, 1), TQue(dst_pos, 1)
        pipe.InitBuffer(q1, 1, 2048)
        pipe.InitBuffer(q2, 1, 2048)
        l1, l0 = q1.AllocTensor(dtype), q2.AllocTensor(dtype)
        LoadData(l0, l1, LoadData3DParamsV2([0, 0, 0, 0], 1, 32, 16, 16, m_ext, 0, 0, enTranspose=transpose))

    with pytest.raises(DtypeError, match="only b16") as err:
        launch(k, 1, float32, TPosition.B2, False, 16, numerics=False)
    assert err.value.fix
    with pytest.raises(ArgumentError, match="multiple of 16"):
        launch(k, 1, half, TPosition.A2, True, 8, numerics=False)
