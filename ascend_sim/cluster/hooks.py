"""DDP communication hooks (通信钩子): how a bucket of gradients is averaged across ranks.

The interface is torch's ``register_comm_hook(state, hook)``. Here ``hook(state, bucket)`` returns one
averaged flat fp32 array per rank. With a hook registered, DDP no longer divides by the world size
(``c10d/reducer.cpp``: "If registered, reducer also skips dividing grads by world size"), so each hook
divides itself, as torch's built-in hooks do (``ddp_comm_hooks/default_hooks.py``):
- ``allreduce_hook``: divide by W, AllReduce (sum);
- ``fp16_compress_hook`` / ``bf16_compress_hook``: cast to fp16/bf16, divide by W, AllReduce in that
  type (half the bytes on every link), cast back to fp32.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.cluster.hccl import HcclComm
from ascend_sim.hw.dtypes import bfloat16


@dataclass
class GradBucket:
    """One bucket: every rank's flat fp32 gradients (not yet divided), the parameters in it, the communicator."""

    index: int
    buffers: list[np.ndarray]
    parameters: list[str]
    comm: HcclComm
    last: bool
    shapes: list[tuple[int, ...]] | None = None

    def is_last(self) -> bool:
        return self.last

    def gradients(self, rank: int) -> list[np.ndarray]:
        """Rank ``rank``'s gradients in this bucket, each in its parameter's shape (views of the flat buffer)."""
        shapes = self.shapes or [self.buffers[rank].shape]
        out, at = [], 0
        for shape in shapes:
            n = int(np.prod(shape))
            out.append(self.buffers[rank][at:at + n].reshape(shape))
            at += n
        return out


def allreduce_hook(state, bucket: GradBucket) -> list[np.ndarray]:
    """torch's ``allreduce_hook``: ``tensor.div_(world_size)``, then AllReduce."""
    w = np.float32(len(bucket.buffers))
    return bucket.comm.AllReduce([b / w for b in bucket.buffers]).outputs


def _compress_hook(dtype):
    def hook(state, bucket: GradBucket) -> list[np.ndarray]:
        w = np.array(len(bucket.buffers), dtype)
        out = bucket.comm.AllReduce([b.astype(dtype) / w for b in bucket.buffers]).outputs
        return [o.astype(np.float32) for o in out]
    return hook


fp16_compress_hook = _compress_hook(np.dtype(np.float16))
fp16_compress_hook.__doc__ = "torch's ``fp16_compress_hook``: cast to fp16, divide by W, AllReduce, cast back."
bf16_compress_hook = _compress_hook(bfloat16)
bf16_compress_hook.__doc__ = "torch's ``bf16_compress_hook``: cast to bf16, divide by W, AllReduce, cast back."
