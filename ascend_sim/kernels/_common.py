"""What every LeNet-5 kernel shares: dtypes, the batch-innermost layouts, chunking, launch, scalar loading.

The vector kernels keep a batch of images with the image index as the
fastest axis, so one vector instruction updates a pixel of many images at
once. ``Np`` is the batch rounded up to a whole 32-byte DataBlock of lanes
(16 half or 8 float), which keeps every pixel offset 32-byte aligned; the
padding lanes are zeros. Two GM layouts:

Lane layout ``[F..., Np]`` (softmax, linear)
    ``x[N, F...]`` transposed to features first. A chunk of ``nb`` images is
    a strided window: one burst of ``nb`` lanes per feature.

Chunked layout ``[chunk][F...][nb_k]`` (conv2d, maxpool2d)
    The lane layout cut into chunks of ``nb`` images stored one after the
    other, so a chunk is contiguous in GM and moves in long bursts. Every
    chunk is ``nb`` wide except the last, which is narrower when ``nb``
    does not divide ``Np``.

The host wrappers convert NCHW to these layouts and back (the analog of a
TransData format conversion in CANN); the conversion is host work, not part
of the simulated time. The chunks of a launch are split over the blocks in
contiguous ranges (``block_range``); the last block may get fewer.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ascend_sim import (DataCopy, DataCopyExtParams, DataCopyPad, DataCopyParams, GetBlockIdx, GetBlockNum,
                        GlobalTensor, HardEvent, LocalTensor, SetFlag, TBuf, TPipe, WaitFlag, launch)
from ascend_sim.hw.chips import DATA_BLOCK_BYTES, ChipProfile, get_chip
from ascend_sim.api.launch import LaunchResult

MAX_BURSTS = 4095          # DataCopyParams.blockCount limit
MAX_STRIDE = 255           # repeat-form block/repeat strides (uint8 fields)
SUPPORTED = (np.dtype(np.float16), np.dtype(np.float32))


# ----------------------------------------------------------------------------- host side: dtypes and layout
def resolve_dtype(dtype: Any) -> np.dtype:
    """``"float16"``/``"half"``/``np.float16`` -> float16; ``"float32"``/``"float"`` -> float32."""
    aliases = {"half": np.float16, "fp16": np.float16, "float": np.float32, "fp32": np.float32}
    try:
        d = np.dtype(aliases.get(dtype, dtype) if isinstance(dtype, str) else dtype)
    except TypeError:
        d = None
    if d not in SUPPORTED:
        raise ValueError(f"the LeNet kernels run in float16 or float32, got dtype {dtype!r}; "
                         "pass dtype='float16' or dtype='float32'")
    return d


def data_block_lanes(dtype: np.dtype) -> int:
    """Lanes (images) per 32-byte DataBlock: 16 for float16, 8 for float32."""
    return DATA_BLOCK_BYTES // np.dtype(dtype).itemsize


def round_up(n: int, m: int) -> int:
    return -(-int(n) // m) * m


def to_lanes(x: np.ndarray, dtype: np.dtype, multiple: int | None = None) -> np.ndarray:
    """``x[N, F...]`` -> contiguous ``[F..., Np]`` in ``dtype``, Np a multiple of ``multiple`` (default: the lanes
    of one DataBlock), lanes N..Np-1 zero."""
    x = np.asarray(x)
    n = x.shape[0]
    g = multiple or data_block_lanes(dtype)
    out = np.zeros(x.shape[1:] + (round_up(max(n, 1), g),), dtype)
    out[..., :n] = np.moveaxis(x, 0, -1)
    return out


def from_lanes(y: np.ndarray, n: int) -> np.ndarray:
    """``[F..., Np]`` -> contiguous ``[n, F...]`` (drops the padding lanes)."""
    return np.ascontiguousarray(np.moveaxis(y[..., :n], -1, 0))


def chunk_widths(lanes: int, nb: int) -> list[int]:
    """Widths of the chunks of ``lanes`` lanes: ``nb`` each, the last one what remains."""
    return [min(nb, lanes - k) for k in range(0, lanes, nb)]


def to_chunks(x: np.ndarray, dtype: np.dtype, nb: int) -> np.ndarray:
    """``x[N, F...]`` -> flat chunked layout ``[chunk][F...][nb_k]`` in ``dtype``."""
    xl = to_lanes(x, dtype)
    return np.concatenate([xl[..., k:k + w].reshape(-1)
                           for k, w in zip(range(0, xl.shape[-1], nb), chunk_widths(xl.shape[-1], nb))])


def from_chunks(y: np.ndarray, n: int, nb: int, feat: tuple[int, ...]) -> np.ndarray:
    """Flat chunked layout ``[chunk][feat...][nb_k]`` -> ``[n, feat...]``."""
    size = int(np.prod(feat))
    widths = chunk_widths(y.size // size, nb)
    starts = np.cumsum([0] + [size * w for w in widths])
    parts = [y[a:a + size * w].reshape(*feat, w) for a, w in zip(starts, widths)]
    return from_lanes(np.concatenate(parts, axis=-1), n)


def check_batch(x: np.ndarray, ndim: int, op: str) -> np.ndarray:
    """``x`` as an array with ``ndim`` dimensions (batch first) and at least one image."""
    x = np.asarray(x)
    if x.ndim != ndim or x.shape[0] < 1:
        raise ValueError(f"{op}: expected a batch of shape {'[N, C, H, W]' if ndim == 4 else '[N, K]'} "
                         f"with N >= 1, got shape {x.shape}")
    return x


def default_blocks(n_items: int, core: str, chip: ChipProfile | str | None, block_dim: int | None) -> int:
    """``block_dim`` if given, else one block per work item up to the chip's cores of that type."""
    if block_dim is not None:
        if int(block_dim) < 1:
            raise ValueError(f"block_dim must be >= 1, got {block_dim}")
        return int(block_dim)
    return max(1, min(int(n_items), get_chip(chip).cores_for(core)))


def run(kernel, block_dim: int, *args, chip=None, names: Sequence[str] | None = None) -> LaunchResult:
    """Launch ``kernel`` on ``block_dim`` blocks; numpy arguments are GM buffers written in place."""
    return launch(kernel, block_dim, *args, chip=chip, gm_names=list(names) if names else None)


# ----------------------------------------------------------------------------- kernel side
def share(n_items: int, parts: int, index: int) -> range:
    """Part ``index`` of ``n_items`` split into ``parts`` contiguous ranges (the last ones may be short)."""
    per = -(-n_items // parts)
    start = index * per
    return range(min(start, n_items), min(start + per, n_items))


def block_range(n_items: int) -> range:
    """This block's contiguous share of ``n_items`` work items (chunks, tiles)."""
    return share(n_items, GetBlockNum(), GetBlockIdx())


def gm(ptr, dtype, size: int) -> GlobalTensor:
    """A GlobalTensor of ``size`` elements at ``ptr``."""
    t = GlobalTensor(dtype)
    t.SetGlobalBuffer(ptr, size)
    return t


def copy_flat(dst, src, count: int) -> None:
    """Copy ``count`` contiguous elements GM <-> UB: DataCopy for whole blocks, DataCopyPad otherwise."""
    nbytes = count * src.dtype.itemsize
    if nbytes % DATA_BLOCK_BYTES == 0:
        DataCopy(dst, src, count)
    else:
        DataCopyPad(dst, src, DataCopyExtParams(1, nbytes, 0, 0, 0))


def copy_lanes(dst, src, pixels: int, nb: int, lanes: int, to_gm: bool = False, step: int = 1) -> None:
    """Copy ``pixels`` pixels of ``nb`` lanes between GM (pitch ``lanes``) and UB (pitch ``nb``).

    Each pixel is one burst of ``nb`` lanes; on the GM side consecutive bursts
    are ``step`` pixels apart (``step`` 2: every other pixel). Split in copies
    of at most 4095 bursts.
    """
    isz = src.dtype.itemsize
    blk, gap = nb * isz // DATA_BLOCK_BYTES, (step * lanes - nb) * isz // DATA_BLOCK_BYTES
    for p0 in range(0, pixels, MAX_BURSTS):
        k = min(MAX_BURSTS, pixels - p0)
        if to_gm:
            DataCopy(dst[p0 * step * lanes], src[p0 * nb], DataCopyParams(k, blk, 0, gap))
        else:
            DataCopy(dst[p0 * nb], src[p0 * step * lanes], DataCopyParams(k, blk, gap, 0))


def load_scalars(pipe: TPipe, ptr, count: int, dtype) -> list[float]:
    """Read ``count`` values from GM into UB once, then into scalar registers with GetValue.

    The scalar unit reads UB only after the MTE2 copy has landed: SetFlag/WaitFlag(MTE2_S).
    """
    nbytes = count * np.dtype(dtype).itemsize
    buf = TBuf()
    pipe.InitBuffer(buf, round_up(nbytes, DATA_BLOCK_BYTES))
    local: LocalTensor = buf.Get(dtype)
    DataCopyPad(local, gm(ptr, dtype, count), DataCopyExtParams(1, nbytes, 0, 0, 0))   # any GM offset and length
    SetFlag(HardEvent.MTE2_S, 0)
    WaitFlag(HardEvent.MTE2_S, 0)
    return [local.GetValue(i) for i in range(count)]


def ub_bytes(*sizes: int) -> int:
    """UB bytes of buffers of the given sizes (each rounded up to 32 bytes, as InitBuffer does)."""
    return sum(round_up(s, DATA_BLOCK_BYTES) for s in sizes)


__all__ = ["MAX_BURSTS", "MAX_STRIDE", "resolve_dtype", "data_block_lanes", "round_up", "to_lanes",
           "from_lanes", "chunk_widths", "to_chunks", "from_chunks", "check_batch", "default_blocks", "run", "share",
           "block_range", "gm", "copy_flat", "copy_lanes", "load_scalars", "ub_bytes"]
