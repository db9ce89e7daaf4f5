"""The Matmul best-practice sample, Cases 0-8 (Atlas A2, M = N = K = 8192, half in and out, B transposed).

Source: https://github.com/cannmirror/asc-devkit ``examples/01_simd_cpp_api/05_best_practices/01_matrix_compute/
matmul_high_performance/`` (README.md: the Case 0-8 sections and "Atlas A2训练系列芯片性能数据", measured with msprof on
Ascend 910B1, 24 AIC at 1.85 GHz; matmul.h: MatmulKernel, MatmulKernelL2Cache, MatmulKernelMdlL2CacheConstant;
matmul.asc: the host tiling of each case). The kernel is the project's Matmul high-level API
(``ascend_sim/api/highlevel/matmul.py``) driven as the sample's classes drive it, with the tiling its host code sets:

- Case 0: one core, ``SetFixSplit(64, 64, 64)`` and ``SetL1`` (depthA1 = depthB1 = stepM = stepN = stepKa = stepKb
  = 1), CFG_NORM. Case 1: base 128 x 256 x 64, the rest as Case 0.
- Case 2: 24 cores, ``SetSingleShape(4096, 683, 8192)`` (2 x 12: the last N tile 679 through SetTail), base
  128 x 256 x 64, ``SetL1``, CFG_NORM. Case 3: ``SetSingleShape(2048, 1536, 8192)`` (4 x 6), the rest as Case 2.
- Case 4: Case 3's split with CFG_MDL and GetTiling's L1 fields, which the README states: depthA1 = 4 (stepKa 2,
  ping and pong two blocks each: "depthA1=4且开启L1搬运的double buffer ... ping、pong缓冲区各搬入两块") and depthB1 = 8
  (Case 5: "depthA1=16, depthB1=8", the B fields untouched by its host code), stepKb 4 (depthB1 / (stepN * stepKb) =
  2, the README's rule, as the constant CFG of Cases 7-8 sets it). The project's GetTiling gives 8/8/4/4 here, so the
  README's values are set over it.
- Case 5: Case 4 with ``set_depthA1(16)``, ``set_stepKa(8)``.
- Case 6: ``SetSingleShape(1024, 1536, 8192)``, Case 5's L1 fields, MatmulKernelL2Cache: each core runs two
  IterateAll, over the two halves of M (``SetTensorA(aGlobal[offsetA + i * (M >> 1) * K])``), so the 24 cores read
  all of B for one half of A, then again for the other (the README's L2 split).
- Case 7: Case 6 with constant tiling (``GetCustomConstantCFG``: depthA1 16, depthB1 8, stepKa 8, stepKb 4, stepM =
  stepN = 1; the kernel copies only ``MatmulProblemShape`` from GM). The project has no MatmulApiStaticTiling; what it
  models of the difference is the Init head (``chips.py`` matmul_tiling_copy_cycles: the TCubeTiling copy, [CAL] on
  the guide's Tiling全量常量化 page), so Case 7 runs Case 6's kernel on a chip without that copy. Case 8: Case 7 with
  ``mmCFG.enUnitFlag = true`` (``GetMDLConfig(enUnitFlag=True)``).

Figures (README tables, Atlas A2 only): Task Duration is the launch's device time (``LaunchResult.us``);
aic_<pipe>_time is the mean over the launched AIC of the pipe's busy time (S: scalar, M: mac, MTE1, MTE2, FIX:
fixpipe). Timing only (``numerics=False``); ``check_numerics`` runs every kernel once at a small size.

    python benchmarks/matmul_high_performance.py [CASE ...]    # default: Cases 1-8 (Case 0 by name: ~12 minutes)
    python benchmarks/matmul_high_performance.py --audit 2 3   # MTE2 per AIC split into its parts (mte2_audit.py)
"""
from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass

import numpy as np

from ascend_sim import (CFG_MDL, CFG_NORM, REGIST_MATMUL_OBJ, GetBlockIdx, GetMDLConfig, GetSysWorkSpacePtr,
                        GlobalTensor, Matmul, MatmulType, TPipe, TPosition, half, kernel, launch)
from ascend_sim import matmul_tiling as mt
from ascend_sim.engine.instr import PIPES
from ascend_sim.hw import chips

SIDE = 8192                     # M = N = K (matmul.h)
ND = mt.CubeFormat.ND
#: the README's pipe figures, msprof names -> the simulator's pipes
PIPE_OF = {"aic_mac_time": "M", "aic_scalar_time": "S", "aic_mte1_time": "MTE1", "aic_mte2_time": "MTE2",
           "aic_fixpipe_time": "FIX"}
#: README "Atlas A2训练系列芯片性能数据" (us): Task Duration, aicore_time, then the pipes as PIPE_OF
MEASURED = {
    0: dict(task=759363.98, aicore_time=759363.46, aic_mac_time=141699.459, aic_scalar_time=508787.509,
            aic_mte1_time=162104.184, aic_mte2_time=582515.828, aic_fixpipe_time=34303.063),
    1: dict(task=249467.08, aicore_time=249466.54, aic_mac_time=81477.188, aic_scalar_time=63608.818,
            aic_mte1_time=52003.703, aic_mte2_time=195613.432, aic_fixpipe_time=11313.746),
    2: dict(task=12541.22, aicore_time=12537.56, aic_mac_time=3462.802, aic_scalar_time=2987.47,
            aic_mte1_time=2260.551, aic_mte2_time=10177.798, aic_fixpipe_time=875.439),
    3: dict(task=12283.84, aicore_time=10870.96, aic_mac_time=3394.884, aic_scalar_time=2656.33,
            aic_mte1_time=2166.824, aic_mte2_time=8616.671, aic_fixpipe_time=488.829),
    4: dict(task=5039.86, aicore_time=4487.89, aic_mac_time=3116.472, aic_scalar_time=2073.97,
            aic_mte1_time=2332.914, aic_mte2_time=4051.458, aic_fixpipe_time=44.749),
    5: dict(task=4156.76, aicore_time=3925.61, aic_mac_time=3352.087, aic_scalar_time=1464.492,
            aic_mte1_time=2750.454, aic_mte2_time=3778.555, aic_fixpipe_time=47.853),
    6: dict(task=4088.36, aicore_time=3786.26, aic_mac_time=3254.31, aic_scalar_time=1753.463,
            aic_mte1_time=2680.849, aic_mte2_time=3625.42, aic_fixpipe_time=47.398),
    7: dict(task=4053.44, aicore_time=3665.12, aic_mac_time=3163.682, aic_scalar_time=968.616,
            aic_mte1_time=2609.617, aic_mte2_time=3513.806, aic_fixpipe_time=45.76),
    8: dict(task=4012.44, aicore_time=3559.06, aic_mac_time=3076.396, aic_scalar_time=1026.069,
            aic_mte1_time=2533.512, aic_mte2_time=3435.584, aic_fixpipe_time=272.576),
}
#: the README's own analysis (理论性能对比): cube time of 8192^3 on 24 cores, MTE2 with L2 hits at 5 TB/s
CUBE_THEORY_US = 3022.92
MTE2_THEORY_US = 2672.42


@dataclass(frozen=True)
class Case:
    """One case: cores, single-core shape (M, N), base block, template, L1 fields, L2 split, constant tiling,
    UnitFlag."""

    number: int
    text: str
    cores: int
    single: tuple[int, int]
    base: tuple[int, int, int]
    mdl: bool
    l1: dict                        # depthA1, depthB1, stepM, stepN, stepKa, stepKb
    l2_split: bool = False          # MatmulKernelL2Cache / ...Constant: two IterateAll over the halves of M
    constant: bool = False          # constant tiling: no TCubeTiling copy at Init
    unit_flag: bool = False


SET_L1 = dict(depthA1=1, depthB1=1, stepM=1, stepN=1, stepKa=1, stepKb=1)       # matmul.asc SetL1
MDL_L1 = dict(depthA1=4, depthB1=8, stepM=1, stepN=1, stepKa=2, stepKb=4)       # Case 4 (README, see above)
L1_CACHE = dict(MDL_L1, depthA1=16, stepKa=8)                                   # Case 5: set_depthA1(16), set_stepKa(8)
CASES = {
    0: Case(0, "one core, base 64x64x64", 1, (SIDE, SIDE), (64, 64, 64), False, SET_L1),
    1: Case(1, "one core, base 128x256x64", 1, (SIDE, SIDE), (128, 256, 64), False, SET_L1),
    2: Case(2, "24 cores 2x12", 24, (4096, 683), (128, 256, 64), False, SET_L1),
    3: Case(3, "24 cores 4x6", 24, (2048, 1536), (128, 256, 64), False, SET_L1),
    4: Case(4, "+ CFG_MDL", 24, (2048, 1536), (128, 256, 64), True, MDL_L1),
    5: Case(5, "+ depthA1 16, stepKa 8", 24, (2048, 1536), (128, 256, 64), True, L1_CACHE),
    6: Case(6, "+ L2 split (two IterateAll)", 24, (1024, 1536), (128, 256, 64), True, L1_CACHE, l2_split=True),
    7: Case(7, "+ constant tiling", 24, (1024, 1536), (128, 256, 64), True, L1_CACHE, l2_split=True,
            constant=True),
    8: Case(8, "+ UnitFlag", 24, (1024, 1536), (128, 256, 64), True, L1_CACHE, l2_split=True, constant=True,
            unit_flag=True),
}
#: Case 0 launches ~2.1 million 64^3 Mmads on one core: too long for the validation table (see RESULTS 1c)
LONG_CASES = (0,)
MISSING = {0: "too long to simulate (~12 minutes): 2.1 million 64^3 Mmads and 4.2 million copies on one core "
              "(at K = 128 / 256 the launch takes 14.7 / 25.9 s, 2026-12-07 on a loaded machine: ~11 s per 128 of "
              "K); run it with `python benchmarks/matmul_high_performance.py 0`"}
#: the validation points of each case (validate_timing.py) and what each is
POINT_FIGURES = ("task", "aic_mte2_time", "aic_mac_time")
FIGURE_TEXT = {"task": "Task Duration", "aic_mte2_time": "aic_mte2_time, mean of the AIC",
               "aic_mac_time": "aic_mac_time, mean of the AIC (sanity: ~ the arithmetic)"}
#: (before, after, figure): each case's step on Task Duration, and on aic_mte2_time where the README discusses it
STEPS = [*((k, k + 1, "task") for k in range(8)), *((k, k + 1, "aic_mte2_time") for k in (2, 3, 4, 5))]


def host_tiling(case: Case, k: int = SIDE) -> mt.TCubeTiling:
    """The case's TCubeTiling: the project's GetTiling on the sample's SetDim / SetShape / SetSingleShape /
    SetFixSplit (baseM, baseN), then baseK and the L1 fields the sample sets (SetL1, set_depthA1, ...).

    ``k`` < 8192 shortens K only (tests); the L1 tile's K steps are cut to K's."""
    tiler = mt.MultiCoreMatmulTiling(chips.Ascend910B()) if case.cores > 1 else mt.MatmulApiTiling(chips.Ascend910B())
    if case.cores > 1:
        tiler.SetDim(case.cores)
        tiler.SetSingleShape(case.single[0], case.single[1], k)
    tiler.SetAType("GM", ND, half)
    tiler.SetBType("GM", ND, half, True)
    tiler.SetCType("GM", ND, half)
    tiler.SetBiasType("GM", ND, half)
    rows = SIDE // 2 if case.l2_split else SIDE     # the L2 split: the tiling's 24 tiles cover one half of M
    tiler.SetOrgShape(rows, SIDE, k)
    tiler.SetShape(rows, SIDE, k)
    tiler.EnableBias(False)
    tiler.SetFixSplit(case.base[0], case.base[1], -1)
    t = tiler.tiling_or_raise()
    steps = -(-k // case.base[2])
    l1 = dict(case.l1)
    for step, depth, outer in (("stepKa", "depthA1", "stepM"), ("stepKb", "depthB1", "stepN")):
        buffers = l1[depth] // (l1[step] * l1[outer])
        l1[step] = min(l1[step], steps)
        l1[depth] = l1[step] * l1[outer] * buffers
    return dataclasses.replace(t, baseK=case.base[2], usedCoreNum=case.cores, **l1)


@kernel(core="AIC")
def hp_matmul_kernel(a, b, c, t: mt.TCubeTiling, mm_cfg, l2_split: bool) -> None:
    """MatmulKernel::Init / CalcOffset / Process (Cases 0-5) or MatmulKernelL2Cache's (Cases 6-8: M split in 4
    core rows, two IterateAll over the halves of M)."""
    mm = Matmul(MatmulType(TPosition.GM, ND, half), MatmulType(TPosition.GM, ND, half, True),
                MatmulType(TPosition.GM, ND, half), MatmulType(TPosition.GM, ND, half), mm_cfg)
    REGIST_MATMUL_OBJ(TPipe(), GetSysWorkSpacePtr(), mm, t)
    off_a, off_b, off_c, tail_m, tail_n = core_offsets(t, GetBlockIdx(), l2_split)
    if tail_m < t.singleCoreM or tail_n < t.singleCoreN:
        mm.SetTail(tail_m, tail_n)
    ag, bg, cg = _gm(a), _gm(b), _gm(c)
    for i in range(2 if l2_split else 1):
        mm.SetTensorA(ag[off_a + i * (SIDE >> 1) * t.Ka], False)     # the sample's constant M >> 1
        mm.SetTensorB(bg[off_b], True)
        mm.IterateAll(cg[off_c + i * (SIDE >> 1) * t.N])
    mm.End()


def core_offsets(t: mt.TCubeTiling, block: int, l2_split: bool) -> tuple[int, int, int, int, int]:
    """CalcOffset: (offsetA, offsetB, offsetC, tailM, tailN) of ``block``: M-major core numbering (mIdx = block %
    M tiles; MatmulKernelL2Cache fixes 4 M tiles), B transposed (N x K), the last tiles cut to what is left."""
    m_blocks = 4 if l2_split else -(-t.M // t.singleCoreM)
    m_idx, n_idx = block % m_blocks, block // m_blocks
    off_a = m_idx * t.Ka * t.singleCoreM
    off_b = n_idx * t.Kb * t.singleCoreN
    off_c = m_idx * t.N * t.singleCoreM + n_idx * t.singleCoreN
    return (off_a, off_b, off_c, min(t.M - m_idx * t.singleCoreM, t.singleCoreM),
            min(t.N - n_idx * t.singleCoreN, t.singleCoreN))


def _gm(ptr) -> GlobalTensor:
    g = GlobalTensor(half)
    g.SetGlobalBuffer(ptr)
    return g


def launch_chip(case: Case):
    """The 910B (``chips.Ascend910B()``, looked up at call time so validate_timing's --what-if reaches it); with
    constant tiling, without the TCubeTiling copy at Init (what chips.py says constant tiling removes)."""
    chip = chips.Ascend910B()
    return dataclasses.replace(chip, matmul_tiling_copy_cycles=0) if case.constant else chip


def simulate(case: Case, k: int = SIDE, numerics: bool = False, inputs=None):
    """Launch the case (K shortened to ``k`` for tests); returns (LaunchResult, tiling, C)."""
    t = host_tiling(case, k)
    a, b = inputs if inputs is not None else (np.zeros((SIDE, k), np.float16), np.zeros((SIDE, k), np.float16))
    c = np.zeros((SIDE, SIDE), np.float16)
    cfg = (GetMDLConfig(enUnitFlag=True) if case.unit_flag else CFG_MDL) if case.mdl else CFG_NORM
    res = launch(hp_matmul_kernel, case.cores, a, b, c, t, cfg, case.l2_split, chip=launch_chip(case),
                 gm_names=["a", "b", "c"], numerics=numerics)
    return res, t, c


def figures(res, cores: int) -> dict[str, float]:
    """Task Duration and the mean AIC's busy time of each README pipe (us)."""
    busy = np.sum([pipe_busy for *_, pipe_busy in res.core_times], axis=0) / cores
    out = {"task": res.us}
    out.update({name: res.chip.cycles_to_us(busy[PIPES.index(p)]) for name, p in PIPE_OF.items()})
    return out


def run(number: int, k: int = SIDE) -> dict[str, float]:
    """The simulated figures of Case ``number`` (us) and ``wall_s``, the seconds it took to simulate."""
    case = CASES[number]
    t0 = time.perf_counter()
    res, _, _ = simulate(case, k)
    out = figures(res, case.cores)
    out["wall_s"] = time.perf_counter() - t0
    return out


def check_numerics(k: int = 128) -> float:
    """Max abs error of C against numpy over Cases 1-8 at K = ``k`` (small integers: exact in fp16)."""
    rng = np.random.default_rng(0)
    a = rng.integers(-2, 3, (SIDE, k)).astype(np.float16)
    b = rng.integers(-2, 3, (SIDE, k)).astype(np.float16)     # B^T: N x K
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    worst = 0.0
    for case in CASES.values():
        if case.number in LONG_CASES:
            continue
        _, _, c = simulate(case, k, numerics=True, inputs=(a, b))
        worst = max(worst, float(np.abs(c.astype(np.float32) - ref).max()))
    return worst


def audit(number: int, k: int = SIDE) -> dict[str, float]:
    """Case ``number``'s MTE2 time per AIC split as ``mte2_audit.py`` splits it (copy starts, rows at the path
    rates, the wait for the L2 / HBM share, the wait for lines another core fills, window turns), in us, with the
    bytes, rows and copies per AIC, the L2 hit share and the case's figures (``figures``)."""
    import mte2_audit
    case = CASES[number]
    rec = mte2_audit.Recorder()
    rec.install()
    try:
        res, _, _ = simulate(case, k)
    finally:
        rec.uninstall()
    tot: dict = {}
    for c in rec.per_core.values():
        for key, v in c.items():
            tot[key] = tot.get(key, 0) + v
    us = res.chip.cycles_to_us
    out = {part: us(tot[part] / case.cores) for part in ("start", "row_cost", "share_wait", "fill_wait", "turns")}
    out.update(mb_per_aic=tot["bytes"] / case.cores / 1e6, l2_hit=tot["l2_bytes"] / tot["bytes"],
               rows_per_aic=tot["rows"] / case.cores, copies_per_aic=tot["copies"] / case.cores,
               **figures(res, case.cores))
    return out


def main(argv: list[str]) -> int:
    if "--audit" in argv:
        for n in (int(x) for x in argv if x.isdigit()):
            print(n, {k: round(v, 3) for k, v in audit(n).items()})
        return 0
    numbers = [int(x) for x in argv if x.isdigit()] or [n for n in CASES if n not in LONG_CASES]
    names = ["task", *PIPE_OF]
    print("| case | figure | measured (us) | simulated (us) | error |")
    print("|---|---|---|---|---|")
    for n in numbers:
        sim = run(n)
        for name in names:
            m = MEASURED[n][name]
            print(f"| {n}: {CASES[n].text} | {name} | {m:,.2f} | {sim[name]:,.2f} | {sim[name] / m - 1:+.1%} |")
        print(f"| {n} | simulated in | | {sim['wall_s']:.0f} s wall | |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
