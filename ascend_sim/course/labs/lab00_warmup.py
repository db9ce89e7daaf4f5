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

__all__ = ["LAB", "check", "AddTiling", "ReluTiling", "relu_tiling", "CYCLE_BUDGET", "BUDGET_CASE"]

LAB = Lab("lab00_warmup")
check = LAB.check

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
    z = np.full(n, np.nan, np.float16)
    with ctx.case(_case(n, blocks, tile)):
        result = ctx.call(launch, kern, blocks, x, y, z, AddTiling(n, tile), gm_names=["x", "y", "z"])
        ctx.expect_close(z, x + y, sentinel=np.nan, segment=n // blocks, tile=tile)
    return result


def _add_cases(ctx: Context) -> list[tuple[int, int, int]]:
    fixed = [(1, 2048, 256), (8, 8 * 2048, 256), (4, 4 * 3 * 128, 128)]
    rng = [(int(b), int(b * t * k), int(t)) for b, k, t in
           zip(ctx.rng.choice([2, 3, 5, 8], 2), ctx.rng.integers(1, 6, 2), ctx.rng.choice([64, 128, 256], 2))]
    return fixed + rng


ADD_HINTS = (
    "Each block owns totalLength // GetBlockNum() elements starting at blockLength * GetBlockIdx(): "
    "pass `x + offset` to SetGlobalBuffer.",
    "Per tile: AllocTensor, DataCopy GM->UB, EnQue; DeQue, Add, EnQue the result, FreeTensor the inputs; "
    "DeQue, DataCopy UB->GM, FreeTensor.",
    "InitBuffer takes bytes: tileLength * 2 for half.",
)


@LAB.exercise("ex1", points=2, title="vector Add", hints=ADD_HINTS)
def _ex1(ctx: Context) -> None:
    kern = ctx.answer("add_custom")
    for blocks, n, tile in _add_cases(ctx):
        _launch_add(ctx, kern, blocks, n, tile)


@LAB.exercise("ex2", points=2, title="ReLU with a tail", hints=(
    "A block holds min(blockLength, totalLength - blockLength * GetBlockIdx()) elements.",
    "Copy full tiles with DataCopy; the last tile of a block can be shorter and need not be a multiple of "
    "32 bytes: copy it with DataCopyPad(dst, src, DataCopyExtParams(1, count * 2, 0, 0, 0), "
    "DataCopyPadExtParams(False, 0, 0, 0)) and back with "
    "DataCopyPad(dst, src, DataCopyExtParams(1, count * 2, 0, 0, 0)).",
    "Relu(dst, src, count) takes the number of elements of this tile, which is smaller for the tail.",
))
def _ex2(ctx: Context) -> None:
    from ascend_sim import launch
    kern = ctx.answer("relu_custom")
    cases = [(1, 2047, 256), (4, 4000, 256), (8, 8 * 1000 + 37, 512), (3, 100, 64)]
    cases += [(int(b), int(ctx.rng.integers(64 * b, 1500 * b)), 256) for b in ctx.rng.choice([2, 5, 7], 2)]
    for blocks, n, tile in cases:
        tiling = relu_tiling(n, blocks, tile)
        x = _halves(ctx, n)
        y = np.full(n, np.nan, np.float16)
        with ctx.case(_case(n, blocks, tile)):
            ctx.call(launch, kern, blocks, x, y, tiling, gm_names=["x", "y"])
            ctx.expect_close(y, np.maximum(x, np.float16(0)), sentinel=np.nan, segment=tiling.blockLength,
                             tile=tile)


@LAB.exercise("ex3", points=3, title="Add under a cycle budget", hints=(
    f"A single-buffered kernel leaves MTE2, V and MTE3 idle in turn; the budget is {CYCLE_BUDGET:,} cycles.",
    "Give each queue BUFFER_NUM = 2 buffers (TQue(pos, 2), InitBuffer(q, 2, bytes)) so the copy of tile i+1 "
    "overlaps the Add of tile i.",
    "Keep tiles of tiling.tileLength elements; look at result.profile() to see which pipe waits.",
))
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
                 f"{t.nbytes[i]} bytes")
    ctx.expect_cycles(result.cycles, CYCLE_BUDGET,
                      advice="overlap copy-in, compute and copy-out with two buffers per queue (BUFFER_NUM = 2)")
