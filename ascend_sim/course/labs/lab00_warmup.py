"""Checks of lab 00, the warm-up: vector Add, ReLU with a tail, Add under a cycle budget.

The hidden cases live here, not in the notebook: fixed cases plus seeded
random ones, with lengths that do not divide the tile and several block
counts. Outputs are pre-filled with NaN so that elements a kernel never
wrote are recognised ("elements 2011..2046 were never written: the tail ...").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.course.grading import Context, Lab
from ascend_sim.trace.table import as_table

__all__ = ["LAB", "check", "hint", "QUEUE_HINTS", "AddTiling", "ReluTiling", "relu_tiling", "CYCLE_BUDGET", "BUDGET_CASE"]

LAB = Lab("lab00_warmup")
check = LAB.check
hint = LAB.hint         # hint("ex1"): the next hint for the last mistake the check diagnosed

# ex3: 8 blocks x 8192 half, tiles of 256. The reference double-buffered kernel takes 6,320 cycles on the
# default chip (Ascend910B); single-buffered, the same tiles take 8,614. Budget: reference + 15 % (re-measured
# with timing model II, 2026-12-01: L2, UB banks, GM packages; the budget stands).
BUDGET_CASE = (8, 8 * 8192, 256)
CYCLE_BUDGET = 7300


@dataclass
class AddTiling:
    """Tiling of the Add kernels: every block gets totalLength // blockDim elements, tileLength at a time."""

    totalLength: int
    tileLength: int


@dataclass
class ReluTiling:
    """Tiling of the ReLU kernel: blocks of blockLength elements (the last gets the rest), tiles of tileLength."""

    totalLength: int
    blockLength: int
    tileLength: int


def relu_tiling(total_length: int, block_dim: int, tile_length: int) -> ReluTiling:
    """Host-side tiling: blockLength rounded up to 16 halves (32 bytes) so every block starts aligned."""
    block = -(-total_length // block_dim // 16) * 16 or 16
    if (block_dim - 1) * block >= total_length:
        raise ValueError(f"{total_length} elements leave some of {block_dim} blocks empty: use fewer blocks")
    return ReluTiling(total_length, block, tile_length)


def _halves(ctx: Context, n: int) -> np.ndarray:
    return ctx.rng.uniform(-2, 2, n).astype(np.float16)


def _case(n: int, blocks: int, tile: int) -> str:
    return f"{n} halves on {blocks} block{'s' if blocks > 1 else ''}, tile {tile}"


def _launch_add(ctx: Context, kern, blocks: int, n: int, tile: int):
    from ascend_sim import launch
    x, y = _halves(ctx, n), _halves(ctx, n)
    z, golden = np.full(n, np.nan, np.float16), x + y      # the golden before the launch: a kernel may write x
    with ctx.case(_case(n, blocks, tile)):
        result = ctx.call(launch, kern, blocks, x, y, z, AddTiling(n, tile), gm_names=["x", "y", "z"])
        ctx.expect_close(z, golden, sentinel=np.nan, segment=n // blocks, tile=tile)
    return result


def _add_cases(ctx: Context) -> list[tuple[int, int, int]]:
    fixed = [(1, 2048, 256), (8, 8 * 2048, 256), (4, 4 * 3 * 128, 128)]
    rng = [(int(b), int(b * t * k), int(t)) for b, k, t in
           zip(ctx.rng.choice([2, 3, 5, 8], 2), ctx.rng.integers(1, 6, 2), ctx.rng.choice([64, 128, 256], 2))]
    return fixed + rng


# Hints per diagnosis (ascend_sim/course/grading/hints.py): nudge, pointer, explanation.
QUEUE_HINTS = (
    "Every tensor a stage DeQues must have been EnQue'd on the same queue by the stage before: look at the "
    "queue the error names.",
    "CopyIn ends with que.EnQue(local) for each input it filled; Compute starts with «que.DeQue(half)»; "
    "CopyOut DeQues what Compute EnQue'd on the VECOUT queue.",
    "Per tile: AllocTensor, DataCopy GM->UB, EnQue (CopyIn); DeQue, compute, EnQue the result, FreeTensor the "
    "inputs (Compute); DeQue, DataCopy UB->GM, FreeTensor (CopyOut). Each queue sees each call once per tile.",
)
OFFSET_HINTS = (
    "Which part of x does block 1 read, and which part of z does it write?",
    "Each block owns «blockLength = totalLength // GetBlockNum()» elements starting at blockLength * GetBlockIdx().",
    "offset = blockLength * GetBlockIdx(); xGm.SetGlobalBuffer(x + offset, blockLength), and the same for y and z.",
)
BYTES_HINTS = (
    "Compare the number of elements your copy moves with the size of the tensor named in the error.",
    "pipe.InitBuffer(que, num, bytes) takes bytes, not elements: a tile of tileLength halves is tileLength * 2 "
    "bytes.",
)
LOOP_HINTS = (
    "Count the tiles your loop visits for one block.",
    "A block holds «blockLength // tileLength» tiles: «range(blockLength // tileLength)», tile i at "
    "i * tileLength.",
)
ADD_HINTS = {
    "QueueError": QUEUE_HINTS,
    "offset": OFFSET_HINTS,
    "GMWriteConflictError": OFFSET_HINTS,        # every block wrote block 0's range
    "OutOfBoundsError": BYTES_HINTS,
    "loop": LOOP_HINTS,
    "unwritten/all": (
        "Nothing reached z: does every tile end with a copy back to GM?",
        "CopyOut: «zLocal = outQueueZ.DeQue(half)»; DataCopy(zGm[i * tileLength], zLocal, tileLength); "
        "outQueueZ.FreeTensor(zLocal).",
    ),
    "*": (
        "Write the three stages for one tile first (CopyIn, Compute, CopyOut), then loop over the tiles.",
        "Per tile: AllocTensor, DataCopy GM->UB, EnQue; DeQue, Add, EnQue the result, FreeTensor the inputs; "
        "DeQue, DataCopy UB->GM, FreeTensor.",
    ),
}


@LAB.exercise("ex1", points=2, title="vector Add", hints=ADD_HINTS)
def _ex1(ctx: Context) -> None:
    kern = ctx.answer("add_custom")
    for blocks, n, tile in _add_cases(ctx):
        _launch_add(ctx, kern, blocks, n, tile)


TAIL_COPY = ("copy it with DataCopyPad(dst, src, «DataCopyExtParams(1, count * 2, 0, 0, 0)», "
             "«DataCopyPadExtParams(False, 0, 0, 0)|DataCopyPadExtParams<half>{false, 0, 0, 0}») and back with "
             "DataCopyPad(dst, src, «DataCopyExtParams(1, count * 2, 0, 0, 0)»)")


@LAB.exercise("ex2", points=2, title="ReLU with a tail", hints={
    "tail": (
        "The lengths here are not multiples of the tile: what happens to the elements after the last full tile?",
        "A block holds «length = min(blockLength, totalLength - blockLength * GetBlockIdx())» elements; loop "
        "with «range(0, length, tileLength)|for (uint32_t offset = 0; offset < length; offset += tileLength)» and "
        "let the last tile be shorter: «count = min(tileLength, length - offset)».",
        f"The short last tile need not be a multiple of 32 bytes: {TAIL_COPY}; Relu(dst, src, count) takes that "
        "tile's count.",
    ),
    "AlignmentError": (
        "DataCopy moves whole 32-byte DataBlocks (16 halves); the tail of a block is shorter than that.",
        f"Copy full tiles with DataCopy; the last, shorter tile with DataCopyPad: {TAIL_COPY}.",
    ),
    "offset": (
        "Which elements does the last block own? It is shorter than the others.",
        "Block k starts at tiling.blockLength * k and holds «min(blockLength, totalLength - start)» elements: "
        "SetGlobalBuffer(x + start, length).",
    ),
    "QueueError": QUEUE_HINTS,
    "OutOfBoundsError": BYTES_HINTS,
    "loop": LOOP_HINTS,
    "*": (
        "Start from your ex1 kernel: what changes when a block's length is not a multiple of the tile?",
        "A block holds «min(blockLength, totalLength - blockLength * GetBlockIdx())» elements.",
    ),
})
def _ex2(ctx: Context) -> None:
    from ascend_sim import launch
    kern = ctx.answer("relu_custom")
    cases = [(1, 2047, 256), (4, 4000, 256), (8, 8 * 1000 + 37, 512), (3, 100, 64)]
    cases += [(int(b), int(ctx.rng.integers(64 * b, 1500 * b)), 256) for b in ctx.rng.choice([2, 5, 7], 2)]
    for blocks, n, tile in cases:
        tiling = relu_tiling(n, blocks, tile)
        x = _halves(ctx, n)
        y, golden = np.full(n, np.nan, np.float16), np.maximum(x, np.float16(0))
        with ctx.case(_case(n, blocks, tile)):
            ctx.call(launch, kern, blocks, x, y, tiling, gm_names=["x", "y"])
            ctx.expect_close(y, golden, sentinel=np.nan, segment=tiling.blockLength,
                             tile=tile)


@LAB.exercise("ex3", points=3, title="Add under a cycle budget", hints={
    "budget": (
        f"A single-buffered kernel leaves MTE2, V and MTE3 idle in turn; the budget is {CYCLE_BUDGET:,} cycles: "
        "result.profile() shows which pipe waits.",
        "With two buffers per queue the copy-in of tile i+1 can run while tile i is added.",
        "Give each queue BUFFER_NUM = 2 buffers: «TQue(pos, BUFFER_NUM)» and pipe.InitBuffer(que, BUFFER_NUM, "
        "tileLength * 2); the loop stays the same.",
    ),
    "tile-size": (
        "The budget case checks that every copy moves one tile of tiling.tileLength elements.",
        "Keep the tiles of ex1 (tiling.tileLength) and overlap them with two buffers per queue, rather than "
        "copying a whole block at once.",
    ),
    "QueueError/alloc-full": (
        "AllocTensor found every buffer of the queue in use: how many buffers did InitBuffer give it?",
        "«TQue(pos, BUFFER_NUM)» declares the depth; pipe.InitBuffer(que, BUFFER_NUM, bytes) allocates the "
        "buffers: both need BUFFER_NUM = 2, and every AllocTensor its FreeTensor.",
    ),
    "QueueError": QUEUE_HINTS,
    "offset": OFFSET_HINTS,
    "OutOfBoundsError": BYTES_HINTS,
    "*": (
        "Start from your ex1 kernel: the result must stay right, only faster.",
        "Give each queue two buffers (BUFFER_NUM = 2) so copy-in, Add and copy-out of neighbouring tiles overlap.",
    ),
})
def _ex3(ctx: Context) -> None:
    kern = ctx.answer("add_double_buffer")
    for blocks, n, tile in _add_cases(ctx)[:3]:
        _launch_add(ctx, kern, blocks, n, tile)
    blocks, n, tile = BUDGET_CASE
    result = _launch_add(ctx, kern, blocks, n, tile)
    t = as_table(result)
    gm_copy = (t.src == "GM") | (t.dst == "GM")
    wrong = np.flatnonzero(gm_copy & (t.nbytes != tile * 2)
                           & np.fromiter((op.startswith("DataCopy") for op in t.op), bool, len(t)))
    if wrong.size:
        i = wrong[0]
        ctx.fail(f"copies must move one tile of tiling.tileLength = {tile} halves ({tile * 2} bytes); "
                 f"line {t.line[i].rpartition(':')[2]}{f' `{t.source[i]}`' if t.source[i] else ''} moved "
                 f"{t.nbytes[i]} bytes", ("tile-size",))
    ctx.expect_cycles(result.cycles, CYCLE_BUDGET,
                      advice="overlap copy-in, compute and copy-out with two buffers per queue (BUFFER_NUM = 2)")
