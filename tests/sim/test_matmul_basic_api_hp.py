"""The basic-API Matmul best-practice replica (benchmarks/matmul_basic_api_hp.py, validated in RESULTS 1c).

At 1024 x 1024 (K) x 1536 (N) on 24 AIC each core holds 256 x 256 of C in scenario 1 (two base tiles, one round)
and 128 x 256 in each of scenario 2's two rounds: 16 baseK steps per tile, so both L1 and L0 ping-pong halves,
every flag and the B-before-A packet order all run. The replica must issue the sample's copies (README: the GM
reads of "MTE2带宽分析"), compute exactly, and match the sample's own mmad.asc cycle for cycle.
"""
import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import matmul_basic_api_hp as hp  # noqa: E402

SMALL = (1024, 1024, 1536)          # M, K, N
DEVKIT = os.environ.get("ASCEND_SIM_ASC_DEVKIT", "")
SAMPLE = "examples/01_simd_cpp_api/05_best_practices/01_matrix_compute/matmul_basic_api_high_performance"


def test_the_cores_tile_c_as_the_sample_splits_it():
    # scenario 1: mIterIdx = block % 4, nIterIdx = block / 4 -> the 4 x 6 tiles of 2048 x 1536, one each (the
    # sixth column only 8192 - 5 x 1536 = 512 wide)
    t1 = hp.scenario_tiling(1)
    assert (t1.single_m, t1.single_n) == (2048, 1536)
    assert hp.scenario_tiling(1, *SMALL).single_n == 256
    assert t1.cores_tiles(5) == [(1, 1)] and t1.cores_tiles(23) == [(3, 5)]
    assert sorted(tile for b in range(24) for tile in t1.cores_tiles(b)) == [(m, n) for m in range(4) for n in range(6)]
    # scenario 2: singleCoreM 1024 (8 x 6 tiles); round r gives block b the M tile b % 4 + 4 r: the 24 cores read
    # rows 0..4095 of A in round 0 and 4096..8191 in round 1, all of B in each
    t2 = hp.scenario_tiling(2)
    assert t2.single_m == 1024
    assert t2.cores_tiles(0) == [(0, 0), (4, 0)] and t2.cores_tiles(23) == [(3, 5), (7, 5)]
    assert sorted(tile for b in range(24) for tile in t2.cores_tiles(b)) == [(m, n) for m in range(8) for n in range(6)]
    # "3", the Matmul+Gelu sample's Matmul alone: scenario 1's split, C in float
    t3 = hp.scenario_tiling(3)
    assert (t3.single_m, t3.single_n, t3.l2_split, t3.fp32_out) == (2048, 1536, False, True)
    with pytest.raises(ValueError, match="pass 1, 2 or 3"):
        hp.scenario_tiling(4)


@pytest.mark.parametrize("number", [1, 2])
def test_copies_loads_and_mmads_per_core(number):
    m, k, n = SMALL
    res, _ = hp.simulate(hp.scenario_tiling(number, m, k, n))
    ops = Counter(r.op for r in res.trace if r.core == 0)
    # two base tiles a core (256 x 256 in scenario 1; one 128 x 256 a round in 2), 16 baseK steps each:
    # A packets of stepKa = 8 (2 a tile), B packets of stepKb = 4 (4 a tile); per step one LoadData3DV2 (A) and
    # baseK / 16 = 4 LoadData2D (B^T); one Mmad; one Fixpipe a tile
    assert ops["DataCopy"] == 2 * (2 + 4)
    assert ops["LoadData3D"] == 32 and ops["LoadData"] == 32 * 4 and ops["Mmad"] == 32 and ops["Fixpipe"] == 2
    # the L1 buffers written, in order (A ping/pong at 0 / 128 KB, B at 256 / 384 KB): the first packets A, B into
    # ping; after step 0's Mmad B then A into pong (优化点 4: B first); after steps 3 and 7 B alone
    l1 = [r.writes[0][1] for r in res.trace if r.core == 0 and r.op == "DataCopy"]
    assert l1[:7] == [0, 262144, 393216, 131072, 262144, 393216, 0]
    # README "MTE2带宽分析": GM reads = (N / baseN x M x K + M / baseM x K x N) x 2 B
    assert res.profile().traffic["GM->L1"]["bytes"] == (n // 256 * m * k + m // 128 * k * n) * 2


@pytest.mark.parametrize("number", [2, 3])
def test_it_multiplies(number):
    # blocks 0-3: every row of C, columns 0..255 (scenario 2: M tiles 0-3 in round 0 and 4-7 in round 1, every path
    # of scenario 1 and the second round; 3: scenario 1's tiles, C in float; all 24 blocks: the .asc test below)
    res, (a, bt, c) = hp.simulate(hp.scenario_tiling(number, *SMALL), numerics=True, blocks=4)
    assert c.dtype == (np.float32 if number == 3 else np.float16)
    ref = a.astype(np.float32) @ bt.astype(np.float32).T
    np.testing.assert_allclose(c[:, :256].astype(np.float32), ref[:, :256], atol=0.05)
    assert not c[:, 256:].any()


def test_a_small_run_is_deterministic():
    t = hp.scenario_tiling(2, *SMALL)
    first, second = hp.simulate(t)[0], hp.simulate(t)[0]
    assert first.cycles == second.cycles and hp.figures(first) == hp.figures(second)
    rows = [[(r.core, r.op, r.start, r.end) for r in res.trace] for res in (first, second)]
    assert rows[0] == rows[1]


@pytest.mark.skipif(not DEVKIT, reason="set ASCEND_SIM_ASC_DEVKIT to an asc-devkit checkout")
@pytest.mark.parametrize("number", [1, 2])
def test_the_replica_is_the_samples_own_kernel(number, tmp_path):
    """mmad.asc itself (the C++ front end, unchanged): the same output and the same cycles as the replica."""
    from ascend_sim import launch
    from ascend_sim.ascendc import load
    for name in ("mmad.asc", "data_utils.h"):          # the kernel file and the header it includes
        rel = f"{SAMPLE}/{name}"
        full = os.path.join(DEVKIT, rel)
        (tmp_path / name).write_bytes(open(full, "rb").read() if os.path.isfile(full) else subprocess.run(
            ["git", "-C", DEVKIT, "show", f"HEAD:{rel}"], check=True, capture_output=True).stdout)
    src = tmp_path / "mmad.asc"
    mod = load(src, defines={"SCENARIO_NUM": str(number), "NPU_ARCH": "2201"})
    m, k, n = SMALL
    t = hp.scenario_tiling(number, m, k, n)
    a, bt, c = hp.inputs(t, numerics=True)
    asc = launch(mod.mmad_custom.template(m, k, n, 128, 64, 256, t.single_m, k, t.single_n, 8, 4), 24, a, bt, c)
    mine, (_, _, c2) = hp.simulate(t, numerics=True)
    np.testing.assert_array_equal(c, c2)
    assert asc.cycles == mine.cycles
    assert hp.figures(asc) == hp.figures(mine)
