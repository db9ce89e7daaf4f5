"""Validation: the basic-API Matmul best-practice sample, 8192^3 half on 24 AIC, without and with the L2 split.

Source: https://github.com/cannmirror/asc-devkit ``examples/01_simd_cpp_api/05_best_practices/01_matrix_compute/
matmul_basic_api_high_performance/`` (``mmad.asc``; README.md "性能数据分析", table "Atlas A2训练系列芯片性能数据").
C = A x B^T with M = N = K = 8192, half in and out, B given transposed (N x K, ``IS_B_TRANSPOSE = true``), one
``mmad_custom`` launch of 24 blocks on 24 AIC (910B1, 1.85 GHz):

- Scenario 1: a 4 x 6 split of C (4 along M, 6 along N), singleCoreM 2048, singleCoreN 1536 (``Process``):
  6 x 1536 = 9216 > 8192, so the 4 cores of the sixth N column get 512 columns and the other 20 cores 1536 (three
  times their work): Task Duration is the 20 full cores'.
- Scenario 2 (L2Cache 切分): singleCoreM 1024, two rounds of the 24 cores, each round the same half of A's rows
  with the whole of B (``ProcessL2Cache``, README 优化点 9).
- "Scenario" 3: the Matmul+Gelu sample's Matmul alone (``03_fusion_compute/matmul_gelu_high_performance/``,
  README "Atlas A2训练系列芯片", row "Matmul计算", AI_CORE on 24 blocks, fp32 out): ``mmad_gelu.asc``'s AIC side
  (``ProcessLoopAic``) issues scenario 1's calls tile for tile, with ``Fixpipe<float, float>`` (no F322F16): C is
  float, twice the bytes written. The README does not print that standalone kernel: this is scenario 1 with the
  fp32 Fixpipe, the AIC's CrossCoreSetFlag to the AIVs left out.

Per core and per (mBlock, nBlock) base tile of C (baseM 128, baseN 256, baseK 64; a full core's 16 x 6 tiles in
scenario 1, 2 x (8 x 6) in 2): A in "large packets" of stepKa = 8 baseK (one Nd2Nz DataCopy of 128 rows x 512
halves into an L1 ping-pong half) and B^T in packets of stepKb = 4 (256 rows x 256 halves); per baseK, one
LoadData3DV2 into L0A and four LoadData2D (one per 16 columns of K) into L0B, ping-pong; one Mmad 128 x 256 x 64
(unitFlag 2, the last 3); one Fixpipe fp32 -> fp16 (unitFlag 3) per base tile. Flags as the sample hand-sets
them: MTE2_MTE1 forward and MTE1_MTE2 reverse per L1 buffer (waited and set once per packet), MTE1_M / M_MTE1 per
L0 buffer; the next packets' copies issued after the Mmad, B before A (优化点 4).

The kernel below is the sample's kernel in the Python API: the same calls with the same parameters in the same
order. tests/sim/test_matmul_basic_api_hp.py checks it against the sample's own ``mmad.asc`` run by the C++ front
end (``ascend_sim.ascendc.load``, unchanged; the host's ``NPU_ARCH`` macro is 2201, as ``-DCMAKE_ASC_ARCHITECTURES=
dav-2201`` sets it) at a reduced size when ASCEND_SIM_ASC_DEVKIT names a checkout: the same cycles.

Figures (README's msprof columns): Task Duration is the launch's device time (``LaunchResult.us``); aicore_time the
mean core time (start to last instruction's end, "Average AI Core execution time"); aic_mte2_time,
aic_mte1_time, aic_mac_time (the cube, pipe M), aic_fixpipe_time and aic_scalar_time the mean over the 24 AICs of
each pipe's busy time. Timing only (``numerics=False``: the same cycles, no 8192^3 product).

    python benchmarks/matmul_basic_api_hp.py [SCENARIO ...]    # measured vs simulated (each launch ~2 min)
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from ascend_sim import (DataCopy, Fixpipe, FixpipeParamsV220, GetBlockIdx, GlobalTensor, HardEvent, LoadData,
                        LoadData2DParams, LoadData3DParamsV2, LocalTensor, Mmad, MmadParams, Nd2NzParams, PipeBarrier,
                        QuantMode_t, SetFlag, TPosition, WaitFlag, float32, half, kernel, launch, pipe_t)
from ascend_sim.engine.instr import PIPES
from ascend_sim.hw import chips

#: README, Atlas A2训练系列芯片性能数据 (us): Task Duration and the msprof pipe columns, by scenario
MEASURED = {
    1: {"task": 4121.16, "aicore_time": 3670.7, "aic_mac_time": 3081.664, "aic_scalar_time": 337.343,
        "aic_mte1_time": 2538.348, "aic_mte2_time": 3552.248, "aic_fixpipe_time": 160.405},
    2: {"task": 4081.64, "aicore_time": 3636.85, "aic_mac_time": 3082.158, "aic_scalar_time": 345.139,
        "aic_mte1_time": 2553.064, "aic_mte2_time": 3487.068, "aic_fixpipe_time": 161.812},
    # matmul_gelu_high_performance README, Atlas A2 table, row "Matmul计算" (AI_CORE, 24 blocks)
    3: {"task": 4227.605, "aicore_time": 3760.55, "aic_mac_time": 3083.197, "aic_scalar_time": 338.636,
        "aic_mte1_time": 2516.081, "aic_mte2_time": 3685.713, "aic_fixpipe_time": 193.704},
}
SCENARIO_TEXT = {1: "no L2 split", 2: "L2 split (2 rounds)", 3: "fp32 out, Matmul+Gelu's Matmul row"}
#: simulated figure -> the pipe whose mean busy time it is
PIPE_OF = {"aic_mac_time": "M", "aic_scalar_time": "S", "aic_mte1_time": "MTE1", "aic_mte2_time": "MTE2",
           "aic_fixpipe_time": "FIX"}
CUBE_BLOCK = 16
L0_PINGPONG_BYTES = 32 * 1024
L1_PINGPONG_BYTES = 256 * 1024
BLOCKS = 24


@dataclass(frozen=True)
class Tiling:
    """The sample's template arguments (``main``: the dav-2201 branch) and its scenario."""

    m: int = 8192
    k: int = 8192
    n: int = 8192
    base_m: int = 128
    base_k: int = 64
    base_n: int = 256
    single_m: int = 2048        # 2048 in scenario 1, 1024 in scenario 2
    single_n: int = 1536
    step_ka: int = 8
    step_kb: int = 4
    l2_split: bool = False      # scenario 2: ProcessL2Cache
    fp32_out: bool = False      # "3": C in float (Fixpipe<float, float>, no F322F16), as mmad_gelu.asc's AIC side

    def cores_tiles(self, block: int) -> list[tuple[int, int]]:
        """(mIterIdx, nIterIdx) of the single-core tiles ``block`` computes, in order (InitComputeParams, or
        ProcessL2Cache's rounds: each round the cores take M tiles ``round * perRound + block % perRound``)."""
        m_iters, n_iters = -(-self.m // self.single_m), -(-self.n // self.single_n)
        if not self.l2_split:
            return [(block % m_iters, block // m_iters)]
        per_round = -(-self.m // (self.single_m * 2))
        rounds = -(-m_iters // per_round)
        out = [(block % per_round + r * per_round, block // per_round) for r in range(rounds)]
        return [(mi, ni) for mi, ni in out if mi < m_iters and ni < n_iters]


def scenario_tiling(number: int, m: int = 8192, k: int = 8192, n: int = 8192) -> Tiling:
    """Scenario ``number`` (1 or 2) of the sample; a smaller problem scales the single-core tile with it: M in 4
    (8 in scenario 2), N in 6 rounded up to whole baseN (the sample's 1536 for 8192, 512 B aligned rows, so the
    sixth column of cores gets the 512 left over)."""
    if number not in MEASURED:
        raise ValueError(f"scenario {number}: the sample has scenarios 1 (no L2 split) and 2 (L2 split), and 3 is "
                         "the Matmul+Gelu sample's Matmul alone (fp32 out); pass 1, 2 or 3")
    base_n = Tiling.base_n
    return Tiling(m=m, k=k, n=n, single_m=m // (8 if number == 2 else 4), single_n=-(-n // (6 * base_n)) * base_n,
                  l2_split=number == 2, fp32_out=number == 3)


@kernel(core="AIC")
def mmad_basic_hp(a, b, c, t: Tiling) -> None:
    """KernelMmad (mmad.asc): ping-pong L1 packets and L0 tiles, hand-set flags, UnitFlag; B^T (N x K) in GM."""
    bm, bk, bn, ska, skb = t.base_m, t.base_k, t.base_n, t.step_ka, t.step_kb
    a_ori, b_ori, c_ori = GlobalTensor(half), GlobalTensor(half), GlobalTensor(float32 if t.fp32_out else half)
    a_ori.SetGlobalBuffer(a, t.m * t.k)
    b_ori.SetGlobalBuffer(b, t.n * t.k)
    c_ori.SetGlobalBuffer(c, t.m * t.n)
    a1_size, b1_size = bm * bk * ska, bk * bn * skb
    a1 = (LocalTensor[half](TPosition.A1, 0, a1_size), LocalTensor[half](TPosition.A1, a1_size * 2, a1_size))
    b1 = (LocalTensor[half](TPosition.B1, L1_PINGPONG_BYTES, b1_size),
          LocalTensor[half](TPosition.B1, L1_PINGPONG_BYTES + b1_size * 2, b1_size))
    a2 = (LocalTensor[half](TPosition.A2, 0, bm * bk), LocalTensor[half](TPosition.A2, L0_PINGPONG_BYTES, bm * bk))
    b2 = (LocalTensor[half](TPosition.B2, 0, bk * bn), LocalTensor[half](TPosition.B2, L0_PINGPONG_BYTES, bk * bn))
    c_loc = LocalTensor[float32](TPosition.CO1, 0, bm * bn)
    k_loops = -(-t.k // bk)
    quant = QuantMode_t.NoQuant if t.fp32_out else QuantMode_t.F322F16
    l0 = 0                                      # mte1DBFlag: the L0 buffer in use

    for mi, ni in t.cores_tiles(GetBlockIdx()):
        ag = a_ori[mi * t.single_m * t.k]
        bg = b_ori[ni * t.k * t.single_n]
        cg = c_ori[mi * t.single_m * t.n + ni * t.single_n]
        cur_m_all = min(t.m - mi * t.single_m, t.single_m)
        cur_n_all = min(t.n - ni * t.single_n, t.single_n)
        m_full, n_full = cur_m_all // bm, cur_n_all // bn

        def rows(idx: int, full: int, base: int, total: int, align: bool = False) -> int:
            """baseM/baseN, or the tail block's rows (aligned to 16 for L0 addressing)."""
            tail = total % base
            return base if idx != full else (-(-tail // CUBE_BLOCK) * CUBE_BLOCK if align else tail)

        def copy_a(dst, chunk: int, mb: int) -> None:            # DataCopyInA: stepKa baseK of baseM rows
            p = Nd2NzParams(1, rows(mb, m_full, bm, cur_m_all), bk * ska, 0, t.k, bm, 1, 0)
            DataCopy(dst, ag[chunk * bk + mb * t.k * bm], p)

        def copy_b(dst, chunk: int, nb: int) -> None:            # DataCopyInB: stepKb baseK of baseN rows of B^T
            p = Nd2NzParams(1, rows(nb, n_full, bn, cur_n_all), bk * skb, 0, t.k, bn, 1, 0)
            DataCopy(dst, bg[chunk * bk + nb * bn * t.k], p)

        for ev in (0, 1, 2, 3):                 # reverse flags preset: every L1 buffer writable
            SetFlag(HardEvent.MTE1_MTE2, ev)
        SetFlag(HardEvent.M_MTE1, 0)
        SetFlag(HardEvent.M_MTE1, 1)
        for nb in range(-(-cur_n_all // bn)):
            for mb in range(-(-cur_m_all // bm)):
                WaitFlag(HardEvent.MTE1_MTE2, 0)
                copy_a(a1[0], 0, mb)
                SetFlag(HardEvent.MTE2_MTE1, 0)
                WaitFlag(HardEvent.MTE1_MTE2, 2)
                copy_b(b1[0], 0, nb)
                SetFlag(HardEvent.MTE2_MTE1, 2)
                a_next, b_next, a_w, b_w = ska, skb, 1, 1
                cur_m, cur_n = rows(mb, m_full, bm, cur_m_all), rows(nb, n_full, bn, cur_n_all)
                m_align, n_align = rows(mb, m_full, bm, cur_m_all, True), rows(nb, n_full, bn, cur_n_all, True)
                for kb in range(k_loops):
                    ra, rb = (kb // ska) % 2, (kb // skb) % 2
                    oa, ob = kb % ska, kb % skb
                    WaitFlag(HardEvent.M_MTE1, l0)
                    if oa == 0:
                        WaitFlag(HardEvent.MTE2_MTE1, ra)
                    if ob == 0:
                        WaitFlag(HardEvent.MTE2_MTE1, rb + 2)
                    # DataLoadA: one LoadData3DV2 of the baseM x baseK slice
                    p3 = LoadData3DParamsV2()
                    p3.l1H, p3.l1W, p3.channelSize, p3.kExtension, p3.mExtension = 1, bm, bk, bk, m_align
                    p3.mStartPt, p3.kStartPt = 0, 0
                    LoadData(a2[l0], a1[ra][oa * bk * bm], p3)
                    # DataLoadB (B^T): one LoadData2D per 16 columns of K
                    p2 = LoadData2DParams()
                    p2.repeatTimes, p2.srcStride, p2.dstGap, p2.ifTranspose = -(-n_align // CUBE_BLOCK), 1, 0, False
                    for i in range(-(-bk // CUBE_BLOCK)):
                        LoadData(b2[l0][i * n_align * CUBE_BLOCK], b1[rb][ob * bk * bn + i * bn * CUBE_BLOCK], p2)
                    if oa + 1 == ska:
                        SetFlag(HardEvent.MTE1_MTE2, ra)
                    if ob + 1 == skb:
                        SetFlag(HardEvent.MTE1_MTE2, rb + 2)
                    # Compute
                    SetFlag(HardEvent.MTE1_M, l0)
                    WaitFlag(HardEvent.MTE1_M, l0)
                    mp = MmadParams()
                    mp.m, mp.n, mp.k, mp.cmatrixInitVal = cur_m, cur_n, bk, kb == 0
                    mp.unitFlag = 2 if kb != k_loops - 1 else 3
                    Mmad(c_loc, a2[l0], b2[l0], mp)
                    SetFlag(HardEvent.M_MTE1, l0)
                    l0 ^= 1
                    # the next packets, B first (优化点 4)
                    if (kb == 0 or ob + 1 == skb) and b_next < k_loops:
                        WaitFlag(HardEvent.MTE1_MTE2, b_w + 2)
                        copy_b(b1[b_w], b_next, nb)
                        SetFlag(HardEvent.MTE2_MTE1, b_w + 2)
                        b_next, b_w = b_next + skb, b_w ^ 1
                    if (kb == 0 or oa + 1 == ska) and a_next < k_loops:
                        WaitFlag(HardEvent.MTE1_MTE2, a_w)
                        copy_a(a1[a_w], a_next, mb)
                        SetFlag(HardEvent.MTE2_MTE1, a_w)
                        a_next, a_w = a_next + ska, a_w ^ 1
                # CopyOut: L0C -> GM, fp32 -> fp16 (or fp32 as it is)
                fp = FixpipeParamsV220()
                fp.nSize, fp.mSize, fp.srcStride, fp.dstStride = cur_n, cur_m, m_align, t.n
                fp.quantPre, fp.ndNum, fp.srcNdStride, fp.dstNdStride, fp.unitFlag = quant, 1, 0, 0, 3
                Fixpipe(cg[mb * bm * t.n + nb * bn], c_loc, fp)
        WaitFlag(HardEvent.M_MTE1, 0)
        WaitFlag(HardEvent.M_MTE1, 1)
        for ev in (0, 1, 2, 3):
            WaitFlag(HardEvent.MTE1_MTE2, ev)
        l0 = 0                                  # ProcessL2Cache resets mte1DBFlag after each round
    PipeBarrier(pipe_t.PIPE_ALL)


def inputs(t: Tiling, numerics: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A (M x K), B^T (N x K), half, and C (M x N, half or float): random with numerics, zeros otherwise."""
    c = np.zeros((t.m, t.n), np.float32 if t.fp32_out else np.float16)
    if not numerics:
        return np.zeros((t.m, t.k), np.float16), np.zeros((t.n, t.k), np.float16), c
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (t.m, t.k)).astype(np.float16)
    bt = rng.uniform(-1, 1, (t.n, t.k)).astype(np.float16)
    return a, bt, c


def simulate(t: Tiling, chip=None, numerics: bool = False, blocks: int = BLOCKS):
    """One launch of the sample's kernel with tiling ``t`` on 24 AIC (``blocks``: only the first few, a part of C,
    for a cheaper numerics check); returns (LaunchResult, (a, b_t, c))."""
    arrays = inputs(t, numerics)
    res = launch(mmad_basic_hp, blocks, *arrays, t, chip=chip or chips.Ascend910B(), gm_names=["a", "b", "c"],
                 numerics=numerics)
    return res, arrays


def figures(res, chip=None) -> dict[str, float]:
    """Task Duration (``task``), aicore_time (the mean core time, start to last instruction's end) and each pipe's
    mean busy time over the AICs, in us; ``core_min`` / ``core_max``: the shortest and longest core time; ``l2_hit``:
    the L2 read hit rate."""
    busy = np.mean([pipe_busy for *_, pipe_busy in res.core_times], axis=0)
    per_us = (chip or chips.Ascend910B()).clock_hz / 1e6
    spans = [end - begin for _b, _t, begin, end, _busy in res.core_times]
    out = {"task": res.us, "aicore_time": float(np.mean(spans)) / per_us}
    out.update({fig: float(busy[PIPES.index(pipe)]) / per_us for fig, pipe in PIPE_OF.items()})
    out.update(core_min=min(spans) / per_us, core_max=max(spans) / per_us, l2_hit=res.l2.get("l2_hit_rate", 0.0))
    return out


def run(number: int, chip=None) -> dict[str, float]:
    """Simulated figures (us) of scenario ``number`` at the sample's size (8192^3), plus the wall time (s)."""
    chip = chip or chips.Ascend910B()
    start = time.perf_counter()
    res, _ = simulate(scenario_tiling(number), chip)
    out = figures(res, chip)
    out["wall_s"] = time.perf_counter() - start
    return out


def main(argv: list[str]) -> int:
    numbers = [int(a) for a in argv] or sorted(MEASURED)
    print("| scenario | figure | measured (us) | simulated (us) | error |")
    print("|---|---|---|---|---|")
    for k in numbers:
        sim = run(k)
        for fig in ("task", "aicore_time", *PIPE_OF):
            meas = MEASURED[k][fig]
            print(f"| {k} ({SCENARIO_TEXT[k]}) | {fig} | {meas:,.1f} | {sim[fig]:,.1f} | {sim[fig] / meas - 1:+.1%} |")
        print(f"(scenario {k}: core times {sim['core_min']:,.1f} .. {sim['core_max']:,.1f} us; L2 read hit rate "
              f"{sim['l2_hit']:.1%}; "
              f"{sim['wall_s']:.0f} s to simulate)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
