"""The host side shared by the Module 1 style vector Conv2D variants (``conv_relu_vec``, ``conv_weights``).

They differ only in their kernel (ReLU before each copy out; taps re-read per chunk): the tiling, the chunked
layout (16 images per DataBlock of lanes) and the launch are ``kernels.conv2d``'s.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.api.launch import LaunchResult
from ascend_sim.kernels._common import check_batch, from_chunks, resolve_dtype, run, to_chunks
from ascend_sim.kernels.conv2d import choose_tiling, conv_blocks


def run_vector_conv(kernel_fn, name: str, x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int, dtype,
                    chip=None) -> tuple[np.ndarray, LaunchResult]:
    """Launch ``kernel_fn(x, w, b, y, tiling)`` on Module 1's conv tiling; NCHW in and out."""
    d = resolve_dtype(dtype)
    x = check_batch(x, 4, name)
    n, C, H, W = x.shape
    O, _, KH, KW = np.asarray(w).shape
    t = choose_tiling(C, H, W, O, KH, KW, int(pad), n, d, chip)
    y = np.zeros(O * t.OH * t.OW * t.lanes, d)
    res = run(kernel_fn, conv_blocks(t, chip), to_chunks(x, d, t.nb), np.ascontiguousarray(w, d),
              np.ascontiguousarray(b, d), y, t, chip=chip, names=["x", "w", "b", "y"])
    return from_chunks(y, n, t.nb, (O, t.OH, t.OW)), res


__all__ = ["run_vector_conv"]
