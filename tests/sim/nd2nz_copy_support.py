"""Shared by the cube copy-path timing tests: back-to-back Nd2Nz copies of one tile shape from GM to L1."""
from __future__ import annotations

import numpy as np

from ascend_sim import (Ascend910B, DataCopy, GlobalTensor, HardEvent, Nd2NzParams, TPipe, TPosition, TQue, SetFlag,
                        WaitFlag, half, kernel, launch)

COLS = 4096                     # halves per GM row: the tile's rows are 8 KB apart


@kernel(core="AIC")
def nd2nz_copies(x, rows: int, cols: int, offsets: tuple, idle_between: bool):
    """One Nd2Nz copy of a rows x cols half tile per offset (elements into x), into one L1 buffer each."""
    xg = GlobalTensor(half)
    xg.SetGlobalBuffer(x, 64 * COLS)
    pipe = TPipe()
    q = TQue(TPosition.A1, len(offsets))
    pipe.InitBuffer(q, len(offsets), rows * max(cols, 16) * 2)
    held = []
    for off in offsets:
        held.append(q.AllocTensor(half))
        DataCopy(held[-1], xg[off], Nd2NzParams(1, rows, cols, 0, COLS, rows, 1, 0))
        if idle_between:            # the scalar waits for the copy: MTE2 is idle when the next one is issued
            SetFlag(HardEvent.MTE2_S, 0)
            WaitFlag(HardEvent.MTE2_S, 0)
    for t in held:
        q.FreeTensor(t)


def copy_cycles(rows: int, cols: int, offsets=(0,), idle_between=False, chip=None, blocks=1) -> list[float]:
    """Each DataCopy's cycles, block 0's first (every block copies the same tiles, from cycle 0 on)."""
    x = np.zeros(64 * COLS, np.float16)
    res = launch(nd2nz_copies, blocks, x, rows, cols, tuple(offsets), idle_between, chip=chip or Ascend910B(),
                 numerics=False)
    copies = sorted((r for r in res.trace if r.op == "DataCopy"), key=lambda r: (r.core, r.start))
    return [r.end - r.start for r in copies]
