"""Lab-sized launches for the widgets demo notebook, the benchmark and the tests.

``launch_add`` keeps the problem fixed (``ADD_LENGTH`` values) while blocks, the tile
length and BUFFER_NUM change, so every setting does the same work and only how it is
split and overlapped differs.
"""
from __future__ import annotations

from typing import Any

import numpy as np


#: The add problem of the demos, in half values: fixed, so that changing blocks, tile length or BUFFER_NUM
#: changes how the same work is done, never how much work there is. 2**16 * 3 divides evenly for blocks in
#: BLOCK_CHOICES and tiles of 16 to 1024 values with one or two buffers.
ADD_LENGTH = 196_608
BLOCK_CHOICES = (1, 2, 4, 8, 16, 24, 32, 48)


def launch_add(tile_length: int = 128, BUFFER_NUM: int = 2, blocks: int = 8,  # noqa: N803
               total_length: int = ADD_LENGTH, chip: Any = "Ascend910B", seed: int = 0) -> Any:
    """Run the canonical add_custom on ``total_length`` half values split over ``blocks``; its LaunchResult.

    Each block adds ``total_length / blocks`` values in tiles of ``tile_length``.
    """
    from ascend_sim import ArgumentError, launch
    from ascend_sim.kernels.add_custom import AddCustomTilingData, add_custom

    per_block, rest = divmod(total_length, blocks)
    if rest or per_block % (tile_length * BUFFER_NUM):
        raise ArgumentError(
            f"{total_length} values on {blocks} blocks in tiles of {tile_length} x BUFFER_NUM {BUFFER_NUM} do not "
            f"divide evenly ({total_length} / {blocks} = {total_length / blocks:g} per block)",
            fix=f"choose blocks from {BLOCK_CHOICES} and a power-of-two tile length from 16 to 1024",
            site=("<launch_add>", 0))
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, total_length).astype(np.float16)
    y = rng.uniform(-1, 1, total_length).astype(np.float16)
    z = np.zeros_like(x)
    tiling = AddCustomTilingData(total_length, per_block // tile_length // BUFFER_NUM, BUFFER_NUM)
    result = launch(add_custom, blocks, x, y, z, tiling, chip=chip, gm_names=["x", "y", "z"])
    np.testing.assert_allclose(z, (x + y).astype(np.float16), rtol=1e-3, atol=1e-3)
    return result


def launch_matmul(size: int = 128, base: int = 64, chip: Any = "Ascend910B") -> Any:
    """Run the example cube matmul (size x size x size, base x base tiles); returns its LaunchResult."""
    from ascend_sim.kernels.matmul import run_matmul

    return run_matmul(size, size, size, base, chip=chip)[3]
