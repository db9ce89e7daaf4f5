"""Conv2D for few input channels: space-to-depth (空间到深度) on the host, then ``conv_l3d`` on the cube.

LeNet's conv1 has one input channel: LoadData3D unfolds whole 16-channel C0 groups, so 15 of every 16
K columns would be zero padding (or, packing 10 images per group, the weights become 94 % zeros). Folding
each ``b x b`` block of pixels into the channels (C * b * b <= 16; b = 4 for C = 1) turns the
5x5 convolution of a 32x32 padded image into a 2x2 convolution of an 8x8 image with 16 channels, whose
96 output channels are the 4x4 output pixels of each block times the 6 filters:

    x_s2d[n, (c, ry, rx), I, J]          = xp[n, c, b*I + ry, b*J + rx]
    w_s2d[(dy, dx, o), (c, ry, rx), a, e] = w[o, c, b*a + ry - dy, b*e + rx - dx]   (0 outside the kernel)
    y[n, o, b*I + dy, b*J + dx]          = y_s2d[n, (dy, dx, o), I, J]

Same products, fewer zero ones: conv1's cube work per image drops from 490 fractals (10 images packed)
to 96. Both rearrangements are layout conversions (TransData on a device: not simulated, as ``to_5hd``).
"""
from __future__ import annotations

import numpy as np

from ascend_sim.api.launch import LaunchResult
from ascend_sim.kernels.opt.conv_l3d import C0, conv2d_l3d


def s2d_block(C: int) -> int:
    """The largest block b with C * b * b <= 16 (one C0 group of channels)."""
    return max(1, int(np.sqrt(C0 // C)))


def space_to_depth(x: np.ndarray, pad: int, b: int, kh: int, kw: int) -> np.ndarray:
    """``[N, C, H, W]`` -> ``[N, C*b*b, IH, IW]``: zero-padded by ``pad`` (and on the far side up to whole blocks)."""
    n, c, h, w = x.shape
    ih, iw = -(-(h + 2 * pad - kh + 1) // b) + -(-(b - 1 + kh) // b) - 1, \
        -(-(w + 2 * pad - kw + 1) // b) + -(-(b - 1 + kw) // b) - 1
    xp = np.zeros((n, c, ih * b, iw * b), x.dtype)
    xp[:, :, pad:pad + h, pad:pad + w] = x
    return np.ascontiguousarray(xp.reshape(n, c, ih, b, iw, b).transpose(0, 1, 3, 5, 2, 4).reshape(n, c * b * b, ih, iw))


def weights_s2d(w: np.ndarray, b: int) -> np.ndarray:
    """``[O, C, KH, KW]`` -> ``[b*b*O, C*b*b, KS, KS]``: output channel (dy, dx, o), input channel (c, ry, rx)."""
    o, c, kh, kw = w.shape
    ks_h, ks_w = -(-(b - 1 + kh) // b), -(-(b - 1 + kw) // b)
    ws = np.zeros((b, b, o, c, b, b, ks_h, ks_w), w.dtype)
    for dy in range(b):
        for dx in range(b):
            for ry in range(b):
                for rx in range(b):
                    for a in range(ks_h):
                        for e in range(ks_w):
                            ky, kx = b * a + ry - dy, b * e + rx - dx
                            if 0 <= ky < kh and 0 <= kx < kw:
                                ws[dy, dx, :, :, ry, rx, a, e] = w[:, :, ky, kx]
    return ws.reshape(b * b * o, c * b * b, ks_h, ks_w)


def conv2d_s2d(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, pad: int = 0, *, block: int | None = None,
               relu: bool = False, out_dtype=np.float16, nz_out: bool = True,
               chip=None) -> tuple[np.ndarray, LaunchResult]:
    """``relu?(conv2d(x, w) + b)`` (stride 1) as ``conv2d_l3d`` of the space-to-depth input; NCHW out."""
    x, w = np.asarray(x), np.asarray(w)
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    blk = block or s2d_block(c)
    if c * blk * blk > C0:
        raise ValueError(f"conv2d_s2d: {c} channels x block {blk}^2 = {c * blk * blk} > {C0} (one C0 group)")
    bias = None if b is None else np.tile(np.asarray(b, np.float32).reshape(o), blk * blk)
    ys, res = conv2d_l3d(space_to_depth(x.astype(np.float16), pad, blk, kh, kw), weights_s2d(w.astype(np.float16), blk),
                         bias, 0, relu=relu, out_dtype=out_dtype, pack=1, nz_out=nz_out, chip=chip)
    return depth_to_space(ys, blk, h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1), res


def depth_to_space(ys: np.ndarray, b: int, oh: int, ow: int) -> np.ndarray:
    """``[N, b*b*O, IH, IW]`` (channel (dy, dx, o)) -> ``[N, O, oh, ow]``: the inverse rearrangement, cropped."""
    n, bbo, ih, iw = ys.shape
    y = ys.reshape(n, b, b, bbo // (b * b), ih, iw).transpose(0, 3, 4, 1, 5, 2).reshape(n, -1, ih * b, iw * b)
    return np.ascontiguousarray(y[:, :, :oh, :ow])


__all__ = ["conv2d_s2d", "depth_to_space", "space_to_depth", "weights_s2d", "s2d_block"]
