"""Pieces every Module 2 cube kernel repeats: the fractal sizes, the input dtype, the bias load into BT."""
from __future__ import annotations

import numpy as np

from ascend_sim import DataCopy, GlobalTensor, LocalTensor, TQue, float32
from ascend_sim.api.ops.fractal import FRACTAL_BYTES, ROWS, c0 as c0_of

C0 = 16                       # half: 16 x 16 fractals (512 B); the cube multiplies 16x16x16 per cycle
FRACTAL = C0 * C0
CUBE_DTYPES = (np.dtype(np.float16), np.dtype(np.float32))     # the inputs these kernels take


def fractal_elems(dtype) -> int:
    """Elements of one 512-byte fractal: 16 rows x C0 (256 half, 128 float: 16 x 8)."""
    return FRACTAL_BYTES // np.dtype(dtype).itemsize


def cube_dtype(*arrays, dtype=None) -> np.dtype:
    """The cube input dtype: ``dtype`` if given, else float when every input is float32, else half (cast)."""
    dt = np.dtype(dtype) if dtype is not None else (
        np.dtype(np.float32) if all(np.asarray(a).dtype == np.float32 for a in arrays) else np.dtype(np.float16))
    if dt not in CUBE_DTYPES:
        raise ValueError(f"the Module 2 cube kernels take half or float inputs, got {dt}")
    return dt


def load_bias_table(qC1: TQue, qC2: TQue, src: GlobalTensor, count: int) -> LocalTensor:
    """``count`` float biases GM -> C1 (L1) -> C2 (the BT buffer), where a Mmad with a bias operand reads them.

    The queues hold one buffer each; the caller frees the returned C2 tensor after its last Mmad.
    """
    c1 = qC1.AllocTensor(float32)
    DataCopy(c1, src, count)
    qC1.EnQue(c1)
    c1 = qC1.DeQue(float32)
    bt = qC2.AllocTensor(float32)
    DataCopy(bt, c1, count)
    qC1.FreeTensor(c1)
    qC2.EnQue(bt)
    return qC2.DeQue(float32)


__all__ = ["C0", "FRACTAL", "ROWS", "CUBE_DTYPES", "c0_of", "fractal_elems", "cube_dtype", "load_bias_table"]
