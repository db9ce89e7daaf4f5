"""Pieces every Module 2 cube kernel repeats: the fractal sizes and the bias load into the BT buffer."""
from __future__ import annotations

from ascend_sim import DataCopy, GlobalTensor, LocalTensor, TQue, float32

C0 = 16                       # half: 16 x 16 fractals (512 B); the cube multiplies 16x16x16 per cycle
FRACTAL = C0 * C0


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


__all__ = ["C0", "FRACTAL", "load_bias_table"]
