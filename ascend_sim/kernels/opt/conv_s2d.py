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
to 96. ``conv2d_s2d`` and ``conv_relu_pool_s2d`` do both rearrangements on the host (untimed, as ``to_5hd``);
``s2d_transdata`` is the same input rearrangement as a simulated vector kernel, and ``s2d_pool_weights`` with
``pooled_channels`` lets the next conv read the pooled s2d map as it lies (``models/lenet_opt`` uses those).
"""
from __future__ import annotations

import numpy as np

from ascend_sim.api.launch import LaunchResult
from ascend_sim.kernels.opt.conv_l3d import C0, conv2d_l3d
from ascend_sim.kernels.opt.conv_pool_mix import conv_pool_mix


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
    blocks = xp.reshape(n, c, ih, b, iw, b).transpose(0, 1, 3, 5, 2, 4)
    return np.ascontiguousarray(blocks.reshape(n, c * b * b, ih, iw))


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


def pool_order(o: int, b: int) -> np.ndarray:
    """For a 2x2 pool after the s2d conv: the s2d output channel (dy, dx, o) behind each new channel, or -1.

    New channel = group (dy % 2, dx % 2) x slot (dy // 2, dx // 2, o), each group padded to a whole number
    of C0 blocks: the four members of a pooling window are then the same slot of the four groups, and
    the pool is the element-wise max of the groups; a group holds the pooled map in s2d-by-b/2 form."""
    hb = b // 2
    slots = hb * hb * o
    gsz = -(-slots // C0) * C0
    order = np.full(4 * gsz, -1)
    for dy in range(b):
        for dx in range(b):
            for c in range(o):
                g, slot = (dy % 2) * 2 + dx % 2, ((dy // 2) * hb + dx // 2) * o + c
                order[g * gsz + slot] = (dy * b + dx) * o + c
    return order


def conv_relu_pool_s2d(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, pad: int = 0, *,
                       block: int | None = None, chip=None) -> tuple[np.ndarray, LaunchResult]:
    """``maxpool2x2(relu(conv2d(x, w) + b))`` for few input channels: the s2d conv with its output channels
    in ``pool_order``, pooled on the AIVs of the same MIX launch (``conv_pool_mix``, groups mode); NCHW out."""
    x, w = np.asarray(x), np.asarray(w)
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    blk = block or s2d_block(c)
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    if blk % 2 or c * blk * blk > C0 or oh % 2 or ow % 2:
        raise ValueError(f"conv_relu_pool_s2d: block {blk} must be even with {c} x {blk}^2 <= {C0} channels, and "
                         f"the {oh}x{ow} output even")
    wp, bp = s2d_pool_weights(w, b, blk)
    yp, res = conv_pool_mix(space_to_depth(x.astype(np.float16), pad, blk, kh, kw), wp, bp, 0, mode="groups",
                            chip=chip)
    hb = blk // 2                                           # [N, C1, IH, IW, 16] -> slots (py, px, o)
    _, c1, ih, iw, _ = yp.shape
    slots = yp.transpose(0, 1, 4, 2, 3).reshape(n, c1 * C0, ih, iw)[:, :hb * hb * o]
    y = slots.reshape(n, hb, hb, o, ih, iw).transpose(0, 3, 4, 1, 5, 2).reshape(n, o, ih * hb, iw * hb)
    return np.ascontiguousarray(y[:, :, :oh // 2, :ow // 2]), res


def s2d_pool_weights(w: np.ndarray, b: np.ndarray | None, blk: int,
                     in_channels: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Weights ``[Op, Ci, KS, KS]`` half and float bias ``[Op]`` of the s2d conv with its output channels in
    ``pool_order``. ``in_channels``: for each channel of the input map, the ``weights_s2d`` input channel
    ``(c, ry, rx)`` it holds, or -1 (zero weights): how a conv reads the previous pool's map as it is."""
    o = w.shape[0]
    order = pool_order(o, blk)
    ws = weights_s2d(np.asarray(w).astype(np.float16), blk)
    if in_channels is not None:
        wi = np.zeros((ws.shape[0], in_channels.size) + ws.shape[2:], np.float16)
        wi[:, in_channels >= 0] = ws[:, in_channels[in_channels >= 0]]
        ws = wi
    wp = np.zeros((order.size,) + ws.shape[1:], np.float16)
    wp[order >= 0] = ws[order[order >= 0]]
    if b is None:
        return wp, None
    bs = np.tile(np.asarray(b, np.float32).reshape(o), blk * blk)
    bp = np.zeros(order.size, np.float32)
    bp[order >= 0] = bs[order[order >= 0]]
    return wp, bp


def pooled_channels(o: int, hb: int) -> np.ndarray:
    """The channels of the groups-mode pooled map after ``pool_order(o, 2 * hb)`` (slots ``(py, px, c)``, padded to
    whole C0 blocks): the ``space_to_depth(., hb)`` channel ``(c, ry, rx)`` each one holds, or -1."""
    out = np.full(-(-hb * hb * o // C0) * C0, -1)
    for ry in range(hb):
        for rx in range(hb):
            for c in range(o):
                out[(ry * hb + rx) * o + c] = (c * hb + ry) * hb + rx
    return out


__all__ = ["conv2d_s2d", "conv_relu_pool_s2d", "pool_order", "depth_to_space", "space_to_depth", "weights_s2d",
           "s2d_block", "s2d_pool_weights", "pooled_channels"]
