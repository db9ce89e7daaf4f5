"""Checks of lab 02, optimisation. Exercise N is item (a)..(h) of issue 15 in order: ex1 (a) vectorise a scalar loop,
ex2 (b) multi-core tiling with tails, ex3 (c) double buffering and copy size,
ex4 (d) the Conv2D weights cached on chip, ex5 (e) a cube tiling that beats the
default operator, ex6 (f) fused MatMul+Add+ReLU, ex7 (g) fused Conv+BN+ReLU, ex8 (h) a UB bank conflict.
ex4 is (d) Conv2D weights cached on chip (卷积核缓存) on the cube.

The cube exercises (ex4-ex7) are design tasks (issue 33): each asks for a kernel the library does not contain, so
copying ``KernelTiledMatmul``/``choose_tiling`` fails them (tests/course/test_lab02_design.py shows it): ex4 writes
NCHW with the weights as the resident A operand (the library writes [pixels, O] and keeps only B resident), ex5's
shape is one ``choose_tiling`` handles badly, ex6 and ex7 take the weights in their own [out, in] layout (B^T: the
library's half kernel reads [K, N]) and ex6's budget needs whole-K copies of those rows.

Graded on correctness (the verify tolerances, NaN sentinels for never-written elements) and on cycle budgets:
each exercise has a budget a correct but slow answer misses (the solutions file has one such answer each).
"""
from __future__ import annotations

import numpy as np

from ascend_sim.course.grading import Context, Lab
from ascend_sim.trace.table import as_table
from ascend_sim.kernels.opt.conv_cube import conv_reference, fold_bn, im2col
from ascend_sim.kernels.opt.default_matmul import default_matmul
from ascend_sim.kernels.opt.tiled_matmul import (KernelTiledMatmul, TiledMatmulTiling, choose_tiling, matmul_reference,
                                                 tiled_matmul)

__all__ = ["LAB", "check", "hint", "im2col", "TAIL_CASE", "TAIL_BUDGET", "STREAM_CASE", "STREAM_BUDGET",
           "CONV_CASE", "CONV_BUDGET", "CONV_BLOCKS", "CACHE_CASE", "CACHE_BUDGET",
           "TiledMatmulTiling", "KernelTiledMatmul", "tiled_matmul", "default_matmul",
           "VECTOR_BUDGET", "VECTOR_CASE", "DEFAULT_CUBE_CYCLES", "CUBE_CASE", "CUBE_BUDGET", "EX5_BLOCKS",
           "choose_tiling",
           "FUSED_CASE", "FUSED_BUDGET", "BANK_TIMES", "BANK_BUDGET"]

LAB = Lab("lab02_optimization")
check = LAB.check
hint = LAB.hint         # hint("exN"): the next hint for the last mistake the check diagnosed

# ex1: 8192 halves on one block. The vector solution takes 2,064 cycles on the default chip (Ascend910B), the
# scalar GetValue/SetValue loop 296,748. Budget: the solution + about 15 %.
VECTOR_CASE = 8192
VECTOR_BUDGET = 2400
# ex2: add_tails on 24 cores, 144,112 halves (9,007 DataBlocks: 7 former cores of 376, 17 tail cores of 375).
# The split is the Ascend C guide's (programming guide, "尾核&尾块"): "计算整核数量 formerNum = (totalLengthAligned /
# ALIGN_NUM) % NUM_BLOCKS"; 整核 (former cores) take one DataBlock more than 尾核 (tail cores).
# The balanced split takes 2,369 cycles; whole tiles per core with the rest on the last core 11,495. Budget: +14 %
# (re-set 2026-12-07 for hw/chips.aiv_gm_miss_row_packages: the cores start 32 B-aligned, off the 512 B windows, so
# their copies' rows that miss L2 pay the packages of their window pieces and, split across two windows, the 0.7 of
# GM addresses off 512 B; it was 2,015, budget 2,300).
TAIL_CASE = (24, 144_112)
TAIL_BUDGET = 2700
# ex3: scale_stream on 8 blocks of 20,480 halves (40 KB each, whole 512 B windows): two buffers of 8 KB tiles (five
# per block) take 2,174 cycles, one buffer 2,790 (+28 %), 32 KB tiles 2,894 (+33 %), 512-byte tiles 7,874. Budget:
# the solution + 10 % (2,400), which leaves the slow answers 16 % or more over it (measured 2026-12-07, `python
# scripts/perturb_answers.py --margins lab02 --ex ex3`; tests/course/test_budget_margins.py holds the margins). The
# block is 1.25 tiles of 32 KB by design: one huge tile then holds most of the block, so its copy in and copy out
# overlap nothing. History: 8 blocks of 33,360 halves (3 tiles of 32 KB, the last one 592 halves, whose short drain
# hid most of the lesson): 4,341 / 5,519 / 5,150, budget 4,900, the 32 KB tiles only 5 % over; and blocks that
# started off the 512 B windows made every figure depend on the window rule.
STREAM_CASE = (8, 20_480)
STREAM_BUDGET = 2400
# ex4: Conv(64 -> 128, 3x3, pad 1) on 288 images of 4x4, written NCHW: per image y[i] [128, 16] = w [128, 576] @
# cols[i]^T, one image per tile on 24 cube cores (12 images each). Re-reading what L2 holds is cheap on the chip: a
# GM -> L1 copy pays its 210-cycle start only for bytes that miss L2 and L2 serves the rest at 110 B/cycle
# (hw/chips.aic_gm_start_on_misses_only, CANN's auto-tiling MoveL2ToL1), so the weights' re-reads, all L2 hits,
# cost only their bytes. The shape of a late layer (many filters x many channels, small feature maps) makes those
# bytes large by construction: the weights (128 x 576 halves, 144 KB) are 8x an image's img2col rows (16 x 576,
# 18 KB), so reading them again costs each image about 1,340 cycles of MTE2 at the L2 rate, more than a third of
# its own work. The weights kept in L1 for all of a core's images: 47,673 cycles; read again for every image:
# 62,141 (+30 %; measured 2026-12-07 20:22 UTC with the causal L2 fill wait, 48,067 / 62,895 before it; `python
# scripts/perturb_answers.py --margins lab02 --ex ex4`). Budget: the solution + 10 % when set (52,900; now + 11 %),
# which leaves the re-read 17.5 % over it (tests/course/test_budget_margins.py holds both margins). History: 64 images of 16x10x10 (re-read +7.4 %), then 144 images of 16x4x4 with 64 filters (weights
# 18 KB: 8,426 / 11,455, budget 9,700), whose re-read fell to +4.4 % (8,121 / 8,480) once the copy start was paid
# only by L2 misses. (The vector conv of kernels/opt/conv_weights.py is vector-bound: there the re-read costs no
# simulated time, so the exercise uses the cube.)
CACHE_CASE = (288, 64, 4, 4, 128, 3, 1)
CACHE_BUDGET = 52900
# ex7: Conv(6 -> 16, 5x5) + BN + ReLU on 8 LeNet-5 conv2 inputs (6x14x14): M = 800 pixels, N = 16, K = 150, the
# folded weights [16, 150] in their own layout (B^T). The solution (24 cores) takes 2,377 cycles, a tiling for 4 of
# the 24 cores 3,532. Budget: +15 %
# (re-set 2026-12-06 for issue 30's per-row GM -> L1 costs, 2,992 / 3,450 -> 2,088 / 2,400; then again because the
# 300 B rows of K = 150 start off 32 B blocks, which the GM -> L1 path takes twice: hw/chips.aic_gm_unaligned_row_factor;
# then 2,730 -> 2,890 on 2026-12-07: the solution 2,513, the 4-core tiling 3,786, with hw/chips.gm_window_turns and
# L2 hits at 110 B/cycle); then 2,890 -> 3,780 (+15 %) on 2026-12-07: the solution 3,290, the 4-core tiling 4,816,
# with hw/chips.aic_gm_miss_row_packages (rows that miss L2 cost whole 8-cycle packages per 512 B window piece; the
# 300 B rows start off their windows) and Atlas A2's 128 B L2 lines. The solution 3,292 since 2026-12-07 evening
# (hw/chips.aic_gm_offblock_hits_as_misses: its off-block rows' L2 hits cost packages); the budget holds.
CONV_CASE = (8, 6, 14, 14, 16, 5, 0)
CONV_BUDGET = 3780
# ex7: 272 filters are wider than one BT-sized tile (256 floats): two column tiles, several column blocks each
WIDE_CONV_CASE = (1, 1, 4, 4, 272, 3, 1)
CONV_BLOCKS = 24            # the launch's blocks, given to the answer's host tiling function
# ex5: a [96, 1024] @ [1024, 768] half matmul, a shape choose_tiling handles badly (16 x 192 tiles: B read 6 times
# over, K steps of 80). The default operator (kernels/opt/default_matmul: Matmul API with CFG_MDL + GetTiling's
# default on 24 cores, its kernel head Matmul.Init included) takes 20,321 cycles (tests/course/test_grading_lab02.py
# re-measures it); the learner's kernel must take at most 88 % of that (>= 12 % faster) and at most CUBE_BUDGET.
# The solution (32 x 128 tiles, eight K steps of 128, double-buffered) takes 12,522; single-buffered 16,708 (+33 %),
# choose_tiling 21,979 (slower than the default). Budget: the solution + 10 % when it was set (15,000; now + 20 %),
# which leaves single-buffering 11.4 % over it and choose_tiling 46.5 % over (measured 2026-12-07 20:22 UTC with the
# causal L2 fill wait, hw/chips.gm_fill_wait_in_time_order; before it 20,823 / 13,633 / 17,431 / 22,033, and before
# hw/chips.aic_gm_start_on_misses_only 20,830 / 13,641 / 17,604 / 22,134; `python scripts/perturb_answers.py --margins lab02
# --ex ex5`; tests/course/test_budget_margins.py holds the margins). K is 1024 by design: with eight K steps per
# tile, the copies that double buffering hides are a large share of the time. History: K was 192 (two K steps), where
# single-buffering was only 14 % slower than the solution and 6 % over the budget (4,235 / 4,833, budget 4,550,
# default 11,563, choose_tiling 5,789), a margin that each timing change of 2026-12-06/07 moved by several per cent.
CUBE_CASE = (96, 768, 1024)
DEFAULT_CUBE_CYCLES = 20321
SPEEDUP_TARGET = 0.88
CUBE_BUDGET = min(15000, int(SPEEDUP_TARGET * DEFAULT_CUBE_CYCLES))
EX5_BLOCKS = 24             # every cube core; a kernel with fewer tiles leaves the rest idle
# ex6: relu(x @ w^T + bias) at 512x256x256 with w [256, 256] in Linear's [out, in] layout: whole-K copies of w's
# rows (48 x 64 tiles, K in one step) take 4,891 cycles; choose_tiling's K steps of 64 (128-byte copies per row)
# 6,879 (6,804 before hw/chips.gm_window_turns; 13,570 before issue 30 priced a 128 B row by its bytes, not as a
# 512 B package); the solution now 4,812. Budget: +12 %. With hw/chips.aic_gm_miss_row_packages (2026-12-07) the
# 128-byte copies that miss L2 cost a whole 8-cycle package a row again: choose_tiling 10,685, the solution 4,816
# (4,511 with the causal L2 fill wait); the budget holds.
FUSED_CASE = (512, 256, 256)
FUSED_BUDGET = 5500
# ex8: 20 repeat-form Adds of 4096 floats: 3,512 cycles without bank conflicts, 4,792 with x and y in one bank
# (benchmarks/bank_conflicts.py calibrates the model on Huawei's sample). Budget: about +10 %.
BANK_TIMES = 20
BANK_BUDGET = 3900


_EX1_BUDGET_HINTS = (
    "One vector instruction handles 128 halves (256 bytes) per repeat: Add(dst, a, b, n) and Relu(dst, src, n) "
    "cover all n elements at once.",
    "Copy x and y into UB TBufs, «SetFlag/WaitFlag(HardEvent.MTE2_V)|SetFlag/WaitFlag<HardEvent::MTE2_V>» before the "
    "vector work and «(HardEvent.V_MTE3)|<HardEvent::V_MTE3>» before the copy out.",
    f"The budget is {VECTOR_BUDGET:,} cycles for {VECTOR_CASE} halves: a GetValue/SetValue loop takes over 100x that.",
)


@LAB.exercise("ex1", points=2, title="vectorise a scalar loop", hints={
    "budget": _EX1_BUDGET_HINTS,
    "values": ("Which elements are wrong? Does every vector instruction cover all n elements?",
               "Add(dst, a, b, n) and Relu(dst, src, n) take the element count: pass n to both."),
    "*": _EX1_BUDGET_HINTS[:1],
})
def _ex1(ctx: Context) -> None:
    from ascend_sim import launch
    kern = ctx.answer("add_relu_vector")
    result = None
    for n in (2048, 4096 + 16, 1008, VECTOR_CASE):
        x, y = ctx.rng.uniform(-2, 2, (2, n)).astype(np.float16)
        z, golden = np.full(n, np.nan, np.float16), np.maximum(x + y, np.float16(0))   # before: a kernel may write x
        with ctx.case(f"{n} halves"):
            result = ctx.call(launch, kern, 1, x, y, z, n, gm_names=["x", "y", "z"])
            ctx.expect_close(z, golden, sentinel=np.nan)
    with ctx.case(f"{VECTOR_CASE} halves"):
        ctx.expect_cycles(result.cycles, VECTOR_BUDGET, advice="replace the scalar loop by Add and Relu")


TAIL_HINTS = {
    "offset": ("Which element does core GetBlockIdx() start at when it is a tail core?",
               "The first formerNum cores take formerLength elements each; a tail core i starts after all of them: "
               "formerNum * formerLength + (i - formerNum) * tailLength.",
               "Compute offset and length with one if on GetBlockIdx() < formerNum, then SetGlobalBuffer(x + offset, "
               "length) for every GM tensor."),
    "GMWriteConflictError": ("Two cores wrote the same elements: where does a tail core start?",
                             "A tail core i starts after all former cores: formerNum * formerLength + "
                             "(i - formerNum) * tailLength, not i * tailLength.",),
    "unwritten": ("Which elements did no core write? Add up the lengths of all cores: is it total?",
                  "Split in DataBlocks: «blocks = total // 16», formerNum = blocks % GetBlockNum(); the first formerNum "
                  "cores take one DataBlock more than the others.",),
    "AlignmentError": ("Is every core's start and every copy length a multiple of 32 bytes (16 halves)?",
                       "DataCopy moves whole 32-byte DataBlocks and needs 32-byte aligned GM and UB addresses: split "
                       "the DataBlocks over the cores, not the elements.",
                       "«blocks = total // 16; tailLength = blocks // GetBlockNum() * 16»; formerLength = tailLength + "
                       "16."),
    "budget": ("Which core finishes last? Look at the timeline: one core doing far more than the others sets the time.",
               "Balance the split to one DataBlock: former cores take one DataBlock more than tail cores, never a "
               "whole tile more.",),
    "*": ("Write offset and length per core first (former / tail), then the tile loop with a shorter last tile.",),
}

STREAM_LOOP = "«Loop over range(0, n, TILE)|Loop with for (uint32_t start = 0; start < n; start += tile)»"
STREAM_COUNT = "«count = min(TILE, n - start)|count = n - start < tile ? n - start : tile»"
STREAM_HINTS = {
    "unwritten": ("Which tiles did your loop skip? The message names the elements no tile wrote.",
                  f"{STREAM_LOOP}: the last tile holds {STREAM_COUNT} elements.",),
    "loop": ("Does your loop reach the end of the block when n is not a multiple of your tile?",
             f"{STREAM_LOOP} and copy {STREAM_COUNT} elements in the last tile.",),
    "OutOfBoundsError": ("Does the last tile read or write past the block's n elements?",
                         f"The last tile is shorter: {STREAM_COUNT}.",),
    "budget": ("In the timeline, do MTE2, V and MTE3 overlap? Copies of several KB are right; is the next copy in "
               "issued while the vector unit works on this tile?",
               "Two buffers per queue «(TQue depth and InitBuffer num = 2)|(InitBuffer num = 2)» let the next copy in "
               "run while the vector unit works: with one buffer, MTE2, V and MTE3 take turns.",
               "BUFFER_NUM = 2 in «both TQue(position, BUFFER_NUM) and pipe.InitBuffer(queue, BUFFER_NUM, bytes)|"
               "pipe.InitBuffer(queue, BUFFER_NUM, bytes), the buffers of each queue (its TQue depth stays 1)»."),
    "budget/small-copies": (
        "How many bytes does each DataCopy move? Every copy pays a fixed cost and whole 512-byte GM packages.",
        "Copies of a few hundred bytes spend more time on their fixed cost than on moving data: use tiles of "
        "several KB.",
        "A tile of 4096 halves (8 KB) per copy, two buffers per queue: four such buffers fit UB easily."),
    "budget/large-tiles": (
        "How many tiles does one block have? With only two or three, the first copy in and the last copy out "
        "overlap nothing.",
        "Double buffering hides copies only between tiles: the pipeline fills and drains once per block, and a huge "
        "tile makes that fill and drain long. Several KB per tile is enough to amortise the fixed cost.",
        "A tile of 4096 halves (8 KB): five tiles per block of 20,480 halves, so MTE2, V and MTE3 overlap on all "
        "but the first and the last."),
    "CapacityError": (
        "The buffers do not fit UB: add up BUFFER_NUM x tile bytes over both queues and compare with the error's "
        "usable bytes.",
        "Two queues x BUFFER_NUM buffers x TILE x 2 bytes must fit the usable UB the error names; a larger tile "
        "does not make the copies faster once it is several KB.",),
    "*": ("Start from lab00's double-buffered Add: one VECIN and one VECOUT queue, CopyIn / Compute / CopyOut per "
          "tile.",),
}

FIXPIPE_HINTS = {
    "CubeFormatError/fixpipe-swapped": (
        "Which Fixpipe argument is the tile's columns and which its rows?",
        "«FixpipeParamsV220(nSize, mSize, srcStride, dstStride, reluEn, quantPre)»: nSize = the tile's columns "
        "(«self.cols»), mSize = its rows («self.rows»), srcStride = the rows rounded up to 16 («self.rp»), dstStride = "
        "the row length of C in GM (t.N).",),
    "CubeFormatError/fixpipe-src-stride": (
        "srcStride counts L0C rows between column blocks: is it the tile's rows rounded up to 16?",
        "srcStride = «self.rp» (the tile's rows rounded up to 16), not the rows themselves or the columns.",),
    "OutOfBoundsError/fixpipe-src-stride": (
        "srcStride counts L0C rows between column blocks: is it the tile's rows rounded up to 16, or more?",
        "srcStride = «self.rp» (the tile's rows rounded up to 16): a larger one reads past the tile's L0C.",),
    "ArgumentError": ("Which Fixpipe parameter does the message name? With NZ -> ND, dstStride is the row length "
                      "of C in GM.",
                      "«FixpipeParamsV220(nSize, mSize, srcStride, dstStride, ...)»: dstStride = t.N, srcStride = "
                      "the tile's rows rounded up to 16 («self.rp»)."),
}

CONV_HINTS = {
    "values": ("Your fold passed its own check, so look at the kernel: negative outputs mean no ReLU, an offset per "
               "channel a bias that never reached BT.",
               "ReLU is «reluEn=True|reluEn true» in «FixpipeParamsV220|FixpipeParamsV220{...}»; the bias needs "
               "«a tiling with bias=True|to be loaded into BT (GM -> C1 -> C2)» so the first Mmad starts from BT.",
               "The cube computes cols @ wt^T with wt = w' in its own [O, C*KH*KW] layout (half, B^T: its fractals go "
               "to L0B without a transpose) and the float bias b' padded to a multiple of 16; ReLU is "
               "«reluEn=True|reluEn true» in «FixpipeParamsV220|FixpipeParamsV220{...}»."),
    "unwritten": ("Did every tile of y get its Fixpipe?",),
    "bn/fold": ("The folded weights or bias differ from BatchNorm's fold: which term of the fold is missing, or "
                "where does each weight go in wt?",
                "BN folds per output channel o: scale = gamma / sqrt(var + eps); w'[o] = w[o] * scale[o]; "
                "b'[o] = (b[o] - mean[o]) * scale[o] + beta[o]. wt is flat: output channel o's kk = C*KH*KW weights "
                "are its elements o * kk to o * kk + kk - 1.",
                "Check one channel by hand: y = (conv + b - mean) * scale + beta."),
    **FIXPIPE_HINTS,
    "budget": ("How many cube cores have work? Look at the timeline: are 24 cores busy or only a few?",
               "The host tiling function gets the launch's blocks: split M over all of them («choose_tiling(M, N, K, "
               "bias=True, relu=True, cores=blocks)|singleM = Up16(CeilDiv(M, blocks))»); a tiling for fewer cores "
               "leaves the rest idle however many blocks you launch.",),
    "*": ("Three parts, as in a real operator: fold BN on the host into wt and bias (the weights stay "
          "[O, C*KH*KW]), the host tiling function conv_tiling for every block, then the fused cube "
          "kernel on the img2col rows with that tiling: bias through BT, ReLU on Fixpipe.",),
}


@LAB.exercise("ex2", points=2, title="multi-core tiling with tails", hints=TAIL_HINTS)
def _ex2(ctx: Context) -> None:
    from ascend_sim import launch
    kern = ctx.answer("add_tails")
    res = None
    cases = [(8, 8 * 1024), (8, 8 * 1024 + 16 * 5), (24, 16 * 100), (3, 16 * 7)]
    cases += [(int(c), 16 * int(b)) for c, b in zip(ctx.rng.choice([5, 7, 24], 2), ctx.rng.integers(40, 3000, 2))]
    for cores, total in cases + [TAIL_CASE]:
        x, y = ctx.rng.uniform(-2, 2, (2, total)).astype(np.float16)
        z, golden = np.full(total, np.nan, np.float16), x + y
        with ctx.case(f"{total} halves on {cores} cores"):
            res = ctx.call(launch, kern, cores, x, y, z, total, gm_names=["x", "y", "z"])
            ctx.expect_close(z, golden, sentinel=np.nan)
    with ctx.case(f"{TAIL_CASE[1]} halves on {TAIL_CASE[0]} cores"):
        ctx.expect_cycles(res.cycles, TAIL_BUDGET, advice="balance the cores to one DataBlock (former/tail cores)")


@LAB.exercise("ex3", points=2, title="double buffering and copy size", hints=STREAM_HINTS)
def _ex3(ctx: Context) -> None:
    from ascend_sim import launch
    kern = ctx.answer("scale_stream")
    res = None
    for blocks, n in [(1, 2048), (4, 4096 + 16 * 5), (2, 16 * 700), STREAM_CASE]:
        x = ctx.rng.uniform(-2, 2, blocks * n).astype(np.float16)
        z, golden = np.full(blocks * n, np.nan, np.float16), x * np.float16(2) + np.float16(1)
        with ctx.case(f"{blocks} blocks of {n} halves"):
            res = ctx.call(launch, kern, blocks, x, z, n, gm_names=["x", "z"])
            ctx.expect_close(z, golden, sentinel=np.nan, segment=n)
    with ctx.case(f"{STREAM_CASE[0]} blocks of {STREAM_CASE[1]} halves"):
        advice, key = _stream_diagnosis(res, STREAM_CASE[1]) if res.cycles > STREAM_BUDGET else ("", ("budget",))
        ctx.expect_cycles(res.cycles, STREAM_BUDGET, advice, key)


def _stream_diagnosis(res, n: int) -> tuple[str, tuple[str, ...]]:
    """Why a correct streaming kernel is slow, from its GM copies: too small, too few tiles, or no overlap."""
    t = as_table(res)
    reads = t.nbytes[(t.src == "GM") & (t.nbytes > 0)]
    largest = int(reads.max()) if reads.size else 0
    if largest < 2048:
        return (f"your largest copy in moves {largest:,} bytes: every copy pays its fixed cost and whole 512-byte GM "
                "packages; use copies of several KB", ("budget/small-copies",))
    tiles = -(-2 * n // largest)
    if tiles < 4:
        return (f"your copies of {largest:,} bytes cut a block of {n:,} halves into {tiles} tiles: the first copy in "
                "and the last copy out overlap nothing; use tiles of several KB, not tens", ("budget/large-tiles",))
    return (f"your copies ({largest:,} bytes, {tiles} tiles per block) are a good size: let them overlap the vector "
            "work with two buffers per queue", ("budget",))


CACHE_HINTS = {
    "GMWriteConflictError": ("Two images' tiles wrote the same elements of y: where does image i's [O, HW] block "
                             "start?",
                             "y is [images, O, HW]: image i starts at element i * O * HW; its rows are HW long.",),
    "offset": ("Do your images land on their own [O, HW] blocks of y, each row HW elements long?",
               "Fixpipe(y[img * O * HW], co1, «FixpipeParamsV220(HW, O, rp, HW, ...)»): dstStride is the row length "
               "of one image's block, HW, not the tile's padded width.",),
    "unwritten": ("Which elements of y did no tile write? Does every image run Tile() and CopyOut()?",),
    "QueueError": ("The weights live in qA1: how many times do you AllocTensor it (CopyInA), and do you free it once "
                   "at the end?",),
    "UninitializedReadError": ("The cube read L0A/L0B bytes nothing wrote: are rp and np_ the tile's rows and "
                               "columns rounded up to 16?",
                               "«rp = -(-rows // 16) * 16, np_ = -(-cols // 16) * 16|rp = Up16(rows), np = Up16(cols)»."),
    **FIXPIPE_HINTS,
    "budget": ("How often does the timeline show the weights' GM -> L1 copy (MTE2 into A1) on one core?",
               "The weights are the same for every image: copy them into L1 once per core (the first image) and keep "
               "them (卷积核缓存); only B^T, the image's img2col rows, changes from tile to tile.",
               "Keep the CopyInA() result in a variable outside the image loop, load it only for the core's first "
               "image, pass it to Tile() for every image, and FreeTensor it once after the loop."),
    "*": ("NCHW out means C^T: per image y[i] [O, HW] = w [O, K] @ cols[i]^T, so the weights are A (M = O) and the "
          "image's img2col rows are B^T (N = HW pixels).",),
}


@LAB.exercise("ex4", points=2, title="cache the Conv2D weights on chip", hints=CACHE_HINTS)
def _ex4(ctx: Context) -> None:
    from ascend_sim import launch
    kern = ctx.answer("conv_nchw_kernel")
    res = None
    for n, C, H, W, O, K, pad in [(2, 3, 8, 8, 16, 3, 1), (1, 2, 12, 12, 6, 5, 2), (3, 4, 9, 9, 24, 3, 0), CACHE_CASE]:
        x = ctx.rng.uniform(-1, 1, (n, C, H, W)).astype(np.float16)
        w = ctx.rng.uniform(-0.3, 0.3, (O, C, K, K)).astype(np.float16)
        golden = conv_reference(x, w, None, pad)                                  # NCHW
        hw = golden.shape[2] * golden.shape[3]
        cols, wk = im2col(x, K, K, pad), np.ascontiguousarray(w.reshape(O, -1))   # [pixels, K], [O, K]
        y = np.full((n, O, hw), np.nan, np.float16)
        with ctx.case(f"{n}x{C}x{H}x{W} input, {O} filters {K}x{K}, pad {pad}"):
            res = ctx.call(launch, kern, 24, cols, wk, y, n, O, hw, C * K * K, gm_names=["cols", "w", "y"])
            ctx.expect_close(y, golden.reshape(n, O, hw), sentinel=np.nan)
    with ctx.case(f"{CACHE_CASE[0]} images {CACHE_CASE[1]}x{CACHE_CASE[2]}x{CACHE_CASE[3]}, {CACHE_CASE[4]} filters"):
        ctx.expect_cycles(res.cycles, CACHE_BUDGET, advice="copy the weights into L1 once per core, not per image")


_EX5_BUDGET_HINTS = (
    "Count the GM traffic: each tile reads its singleM rows of A and its singleN columns of B, all of K. With "
    "16-row tiles B is read 96 / 16 = 6 times over; how many tiles does your tiling give the 24 cores?",
    "Taller tiles read B fewer times: singleM = 32 reads it 3 times, and singleN = 128 then makes 3 x 6 = 18 tiles, "
    "all running at once on 24 cores (choose_tiling picks 16-row tiles here).",
    "Fewer, longer K steps: baseK = 128 (eight steps instead of 13 of 80) with depth=2, so the next step is copied "
    "while the cube works on this one; L0B then holds 2 x 128 x 128 halves = 64 KB.",
)


@LAB.exercise("ex5", points=3, title="a cube tiling >= 12 % faster than the default", hints={
    "budget": _EX5_BUDGET_HINTS,
    "values": ("Does the tiling describe the real problem (M, N, K = 96, 768, 1024)? A shorter K drops part of "
               "every sum.",),
    **FIXPIPE_HINTS,
    "*": _EX5_BUDGET_HINTS[:1],
})
def _ex5(ctx: Context) -> None:
    from ascend_sim import launch
    kern = ctx.answer("matmul_wide")
    M, N, K = CUBE_CASE
    a = ctx.rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = ctx.rng.uniform(-1, 1, (K, N)).astype(np.float16)
    c, golden = np.full((M, N), np.nan, np.float16), matmul_reference(a, b)
    with ctx.case(f"{M}x{N}x{K} half on {EX5_BLOCKS} blocks"):
        res = ctx.call(launch, kern, EX5_BLOCKS, a, b, c, gm_names=["a", "b", "c"])
        ctx.expect_close(c, golden, sentinel=np.nan)
        ctx.expect_cycles(res.cycles, CUBE_BUDGET, advice=f"the default operator takes {DEFAULT_CUBE_CYCLES:,} "
                          "cycles, most of them the Matmul API's kernel head (Matmul.Init); a tiling that reads "
                          "less of A and B per core fits the budget")


_EX6_START = ("The bias needs the BT buffer: «build the tiling with bias=True, so the kernel loads it (C1 -> C2) and "
              "the first Mmad starts from it|load it (C1 -> C2) and let the first Mmad start from it: "
              "Mmad(co1, a2, b2, bt, MmadParams{..., cmatrixSource true, ...})»; pass the bias GM pointer to Init. "
              "w is [N, K]: B^T.",
              "ReLU costs nothing on the way out: «FixpipeParamsV220(nSize, mSize, srcStride, dstStride, reluEn=True, "
              "QuantMode_t.F322F16)|FixpipeParamsV220{nSize, mSize, srcStride, dstStride, true, QuantMode_t::F322F16} "
              "(reluEn true)».")
_EX6_BUDGET_HINTS = (
    "The result is right but slow: how many bytes of each row of w does one GM copy move? w is [N, K]: a K step "
    "of baseK copies baseK halves of every row, and each row pays a whole 512-byte package.",
    "Copy all of K per step (baseK = K rounded up to 16): each row of w is then one long burst. L0B must hold "
    "depth x baseK x singleN halves (64 KB): narrower column tiles (singleN = 64) make room.",
    f"The budget ({FUSED_BUDGET:,} cycles at {FUSED_CASE[0]}x{FUSED_CASE[1]}x{FUSED_CASE[2]}) is met by 48 x 64 "
    "tiles with baseK = K rounded up to 16 and two buffers per queue («TiledMatmulTiling(M, N, K, singleM=48, "
    "singleN=64, baseK=..., bias=True, relu=True)|CubeTiling{M, N, K, 48, 64, Up16(K), 2}»); choose_tiling's "
    "K steps of 64 take well over twice that.",
)


@LAB.exercise("ex6", points=3, title="fused Linear + bias + ReLU, weights [out, in]", hints={
    "budget": _EX6_BUDGET_HINTS,
    "values": ("Which part of relu(x @ w^T + bias) is wrong: negatives in the output (ReLU), an offset per "
               "column (the bias), or every product (w read as [K, N] instead of [N, K])?",
               "ReLU: «reluEn=True» in FixpipeParamsV220; the bias: «a tiling with bias=True so the kernel loads it "
               "into BT and the first Mmad starts from it|loaded into BT, the first Mmad starts from it (cmatrixSource "
               "true)»; w [N, K] is B^T: its rows are copied as NZ fractals that go to L0B without a transpose "
               "«(self.bT = True)|(LoadData2DParams with ifTranspose false)»."),
    **FIXPIPE_HINTS,
    "*": _EX6_START,
})
def _ex6(ctx: Context) -> None:
    from ascend_sim import launch
    kern = ctx.answer("linear_relu")
    res = None
    for M, N, K in [(64, 48, 32), (100, 70, 90), (33, 300, 130), FUSED_CASE]:
        x = ctx.rng.uniform(-1, 1, (M, K)).astype(np.float16)
        w = ctx.rng.uniform(-1, 1, (N, K)).astype(np.float16)          # Linear's [out, in]
        bias = np.zeros(-(-N // 16) * 16, np.float32)
        bias[:N] = ctx.rng.uniform(-2, 2, N)
        y, golden = np.full((M, N), np.nan, np.float16), matmul_reference(x, w.T, bias[:N], relu=True)
        with ctx.case(f"{M}x{N}x{K}"):
            res = ctx.call(launch, kern, 24, x, w, bias, y, M, N, K, gm_names=["x", "w", "bias", "y"])
            ctx.expect_close(y, golden, sentinel=np.nan)
    with ctx.case(f"{FUSED_CASE[0]}x{FUSED_CASE[1]}x{FUSED_CASE[2]}"):
        ctx.expect_cycles(res.cycles, FUSED_BUDGET, advice="copy whole rows of w (all of K) per GM copy")


_EX8_BUDGET_HINTS = (
    "A UB address decodes as bank_id = addr[17:16], group = addr[8:5]: a 256-byte repeat touches 8 of the 16 "
    "groups. Two reads in one group cost a cycle each.",
    "Put y in the other 8 groups (an offset of 0x100 within 512 bytes) and in another bank_id (another 64 KB), "
    "and keep the buffers from overlapping (4096 floats = 0x4000 bytes each).",
    "The profile's vector time per Add shows it: 64 repeats should take about 64 cycles, not twice that.",
)


@LAB.exercise("ex7", points=3, title="fused Conv2D + BatchNorm + ReLU", hints=CONV_HINTS)
def _ex7(ctx: Context) -> None:
    """The answer's three parts as a real operator's host and device code: ``fold_bn_host`` writes the folded
    weights and bias into the kernel's GM buffers, ``conv_tiling`` is the host tiling function, and the kernel
    takes that tiling (a Python answer's dataclass or a C++ answer's struct, read with GET_TILING_DATA)."""
    from ascend_sim import launch
    fold, tiling_of = ctx.answer("fold_bn_host"), ctx.answer("conv_tiling")
    kern = ctx.answer("conv_bn_relu_kernel")
    res = None
    for n, C, H, W, O, K, pad in [(2, 3, 8, 8, 16, 3, 1), (1, 1, 28, 28, 6, 5, 2), WIDE_CONV_CASE, CONV_CASE]:
        x = ctx.rng.uniform(-1, 1, (n, C, H, W)).astype(np.float16)
        w = ctx.rng.uniform(-0.3, 0.3, (O, C, K, K)).astype(np.float16)
        b = ctx.rng.uniform(-0.5, 0.5, O).astype(np.float32)
        gamma, beta, mean = (ctx.rng.uniform(lo, hi, O).astype(np.float32) for lo, hi in ((0.5, 1.5), (-0.5, 0.5),
                                                                                          (-0.5, 0.5)))
        var = ctx.rng.uniform(0.5, 2.0, O).astype(np.float32)
        w2, b2 = fold_bn(w, b, gamma, beta, mean, var)
        golden = conv_reference(x, w2, b2, pad, relu=True).transpose(0, 2, 3, 1).reshape(-1, O)   # [pixels, O]
        cols = im2col(x, K, K, pad)                      # the host's img2col: [pixels, C*K*K] half
        kk = C * K * K
        with ctx.case(f"{n}x{C}x{H}x{W} input, {O} filters {K}x{K}, pad {pad}"):
            wt, bias = np.full(O * kk, np.nan, np.float16), np.zeros(-(-O // 16) * 16, np.float32)   # GM buffers
            ctx.call(fold, w.reshape(-1), b, gamma, beta, mean, var, O, kk, wt, bias)
            _expect_fold(ctx, wt, bias, w, b, gamma, beta, mean, var)
            tiling = ctx.call(tiling_of, cols.shape[0], O, kk, CONV_BLOCKS)
            y = np.full((cols.shape[0], O), np.nan, np.float16)
            res = ctx.call(launch, kern, CONV_BLOCKS, cols, wt, bias, y, tiling, gm_names=["cols", "wt", "bias", "y"])
            ctx.expect_close(y, golden, sentinel=np.nan)
    with ctx.case("LeNet-5 conv2 on 8 images"):
        ctx.expect_cycles(res.cycles, CONV_BUDGET, advice="split M over every cube core")


def _expect_fold(ctx: Context, wt, bias, w, b, gamma, beta, mean, var, eps: float = 1e-5) -> None:
    """The host's BN fold, checked on its own before the kernel: a wrong fold names its missing term."""
    scale = gamma.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
    O = w.shape[0]
    kk = w.size // O
    want_w = (w.astype(np.float64) * scale[:, None, None, None]).reshape(O, kk)
    got_w = wt.astype(np.float64).reshape(O, kk)
    if not np.allclose(got_w, want_w, rtol=2e-3, atol=1e-3):
        if np.allclose(got_w.reshape(kk, O).T, want_w, rtol=2e-3, atol=1e-3):
            ctx.fail(f"fold_bn_host wrote the folded weights transposed, as a [C*KH*KW, O] = [{kk}, {O}] matrix; the "
                     f"kernel takes them in their own layout, a half [O, C*KH*KW] = [{O}, {kk}] matrix (row o: output "
                     "channel o's weights, no transpose)", ("bn/fold",))
        ctx.fail("fold_bn_host's weights are not w * gamma / sqrt(var + eps) per output channel, as an "
                 f"[O, C*KH*KW] matrix (largest difference {float(np.nanmax(np.abs(got_w - want_w))):.3g}"
                 f"{', some never written' if np.isnan(got_w).any() else ''})", ("bn/fold",))
    got_b = np.asarray(bias, np.float64).ravel()[:O]
    want_b = (b.astype(np.float64) - mean) * scale + beta
    if not np.allclose(got_b, want_b, rtol=1e-4, atol=1e-4):
        o = int(np.argmax(np.abs(got_b - want_b)))
        why = ""
        if np.allclose(got_b, b * scale + beta, rtol=1e-4, atol=1e-4):
            why = ": it equals b * scale + beta, the running mean is not subtracted"
        elif np.allclose(got_b, b + beta, rtol=1e-4, atol=1e-4):
            why = ": it equals b + beta, the bias is not scaled"
        ctx.fail(f"fold_bn_host's bias of channel {o} is {got_b[o]:.6g}, the fold gives "
                 f"(b - mean) * scale + beta = {want_b[o]:.6g}{why}", ("bn/fold",))


@LAB.exercise("ex8", points=2, title="fix a UB bank conflict", hints={
    "budget": _EX8_BUDGET_HINTS,
    "values": ("Do two of x, y and z overlap? Each holds 4096 floats = 0x4000 bytes from its address.",
               "Keep the three 16 KB ranges apart: addrs[i] + 0x4000 <= addrs[j] for any two of them."),
    "AlignmentError": ("Vector instructions and DataCopy read UB from 32-byte boundaries: is each address a multiple "
                       "of 32 (0x20)?",
                       "«GetWithOffset»'s bufOffset is in bytes and must be 32-byte aligned; moving an address by "
                       "0x20 keeps it aligned and changes its bank group."),
    "*": _EX8_BUDGET_HINTS[:1],
})
def _ex8(ctx: Context) -> None:
    from ascend_sim import launch
    kern = ctx.answer("add_banks")
    res = None
    for k in range(2):
        x, y = ctx.rng.uniform(-2, 2, (2, 4096)).astype(np.float32)
        z, golden = np.full(4096, np.nan, np.float32), x + y
        with ctx.case(f"4096 floats, {BANK_TIMES} Adds, inputs {k + 1}"):
            res = ctx.call(launch, kern, 1, x, y, z, BANK_TIMES, gm_names=["x", "y", "z"])
            ctx.expect_close(z, golden, sentinel=np.nan)
    ctx.expect_cycles(res.cycles, BANK_BUDGET, advice="place x, y and z so their reads and writes do not share "
                      "a bank group")
