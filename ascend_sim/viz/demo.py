"""Lab-sized launches for the widgets demo notebook, the benchmark and the tests.

``launch_add`` keeps the tile length fixed while BUFFER_NUM changes, so single
and double buffering move exactly the same tiles and only the overlap differs.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def launch_add(tile_length: int = 128, BUFFER_NUM: int = 2, blocks: int = 8,  # noqa: N803
               tiles_per_core: int = 16, chip: Any = "Ascend910B", seed: int = 0) -> Any:
    """Run the canonical add_custom on ``blocks`` cores; returns its LaunchResult.

    Each core adds ``tiles_per_core`` tiles of ``tile_length`` half values.
    """
    from ascend_sim import launch
    from ascend_sim.kernels.add_custom import AddCustomTilingData, add_custom

    total = blocks * tile_length * tiles_per_core
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, total).astype(np.float16)
    y = rng.uniform(-1, 1, total).astype(np.float16)
    z = np.zeros_like(x)
    tiling = AddCustomTilingData(total, tiles_per_core // BUFFER_NUM, BUFFER_NUM)
    result = launch(add_custom, blocks, x, y, z, tiling, chip=chip, gm_names=["x", "y", "z"])
    np.testing.assert_allclose(z, (x + y).astype(np.float16), rtol=1e-3, atol=1e-3)
    return result


def launch_matmul(size: int = 128, base: int = 64, chip: Any = "Ascend910B") -> Any:
    """Run the example cube matmul (size x size x size, base x base tiles); returns its LaunchResult."""
    from ascend_sim.kernels.matmul import run_matmul

    return run_matmul(size, size, size, base, chip=chip)[3]
