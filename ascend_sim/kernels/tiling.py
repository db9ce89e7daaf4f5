"""Host tiling for any shape (动态shape): split n elements over cores and tiles, 32-byte aligned.

The scheme of Ascend C's multi-core samples for lengths that do not divide evenly (核间均分, 尾核): count
the input in 32-byte data blocks, give every core ``blocks // cores`` of them and the first
``blocks % cores`` cores ("former" cores, 整核) one more, so every core starts on a 32-byte boundary. The
last data block may be partial: the core that holds it copies it with DataCopyPad. Inside a core, tiles of
``tile_length`` elements (a multiple of the data block, sized for UB with ``buffers`` copies of each of
``tensors`` tensors) and one shorter last tile.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import TilingError, get_chip
from ascend_sim.hw.chips import DATA_BLOCK_BYTES


@dataclass(frozen=True)
class MultiCoreTiling:
    """The split of ``total`` elements of ``dtype``: per-core ranges and the tile length inside a core."""

    total: int
    itemsize: int
    block_dim: int
    former_num: int          # cores that hold one data block more
    former_length: int       # elements of a former core (whole data blocks)
    tail_length: int         # elements of the other cores (whole data blocks, or fewer on the last core)
    tile_length: int         # elements of a full tile (a whole number of data blocks)

    def core_range(self, i: int) -> tuple[int, int]:
        """(first element, element count) of core ``i``; the last core stops at ``total``."""
        if i < self.former_num:
            start, n = i * self.former_length, self.former_length
        else:
            start = self.former_num * self.former_length + (i - self.former_num) * self.tail_length
            n = self.tail_length
        return start, max(0, min(n, self.total - start))

    def tiles(self, length: int) -> list[tuple[int, int]]:
        """(offset, count) of each tile of a core's ``length`` elements; the last may be shorter."""
        return [(o, min(self.tile_length, length - o)) for o in range(0, length, self.tile_length)]

    @property
    def has_tail(self) -> bool:
        """Some tile ends off a 32-byte boundary: the kernel needs its DataCopyPad branch."""
        per_block = DATA_BLOCK_BYTES // self.itemsize
        return any(n % per_block for i in range(self.block_dim)
                   for _, n in self.tiles(self.core_range(i)[1]))


def split_even(total: int, dtype, *, cores: int | None = None, chip=None, tensors: int = 3, buffers: int = 2,
               max_tile_bytes: int = 16 * 1024) -> MultiCoreTiling:
    """Split ``total`` elements of ``dtype`` over at most ``cores`` vector cores (default: the chip's).

    ``tensors`` x ``buffers`` tiles must fit in UB; a tile is at most ``max_tile_bytes`` (copies reach
    their best rate from about 16 KB) and a whole number of 32-byte data blocks.
    """
    d = np.dtype(dtype)
    if not isinstance(total, (int, np.integer)) or total < 1:
        raise TilingError(f"split_even: the input has {total!r} elements", fix="pass a positive element count",
                          site=("<tiling>", 0))
    if DATA_BLOCK_BYTES % d.itemsize:
        raise TilingError(f"split_even: {d} elements ({d.itemsize} bytes) do not pack a 32-byte data block",
                          fix="use a 1, 2, 4 or 8 byte dtype", site=("<tiling>", 0))
    chip = get_chip(chip)
    avail = chip.aiv_count if chip.separated else chip.aic_count
    cores = avail if cores is None else cores
    if not 1 <= cores <= 65535:
        raise TilingError(f"split_even: {cores} cores", fix="use 1 to 65535 blocks", site=("<tiling>", 0))
    per_block = DATA_BLOCK_BYTES // d.itemsize
    blocks = -(-total // per_block)                          # data blocks, the last one maybe partial
    used = min(cores, blocks)
    base, former_num = divmod(blocks, used)
    ub_tile = (chip.ub_bytes // (tensors * buffers)) // DATA_BLOCK_BYTES * DATA_BLOCK_BYTES
    tile_bytes = min(ub_tile, max_tile_bytes // DATA_BLOCK_BYTES * DATA_BLOCK_BYTES)
    if tile_bytes < DATA_BLOCK_BYTES:
        raise TilingError(f"split_even: {tensors} tensors x {buffers} buffers do not fit a data block each in "
                          f"{chip.ub_bytes} bytes of UB", fix="use fewer buffers or tensors", site=("<tiling>", 0))
    longest = (base + (former_num > 0)) * per_block
    tile_length = min(tile_bytes // d.itemsize, longest)
    return MultiCoreTiling(int(total), d.itemsize, used, former_num, (base + 1) * per_block, base * per_block,
                           tile_length)


__all__ = ["MultiCoreTiling", "split_even"]
