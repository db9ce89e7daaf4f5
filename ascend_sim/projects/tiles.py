"""Row tiles of an image, split over the blocks of a launch (shared by both projects' kernels)."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from ascend_sim import GetBlockIdx, GetBlockNum, GlobalTensor, get_chip, kernel


@dataclass(frozen=True)
class Tile:
    """Output rows ``row .. row + rows - 1`` and columns ``col .. col + cols - 1``."""

    row: int
    rows: int
    col: int
    cols: int


def grid(first_row: int, last_row: int, tile_rows: int, width: int, tile_cols: int) -> list[Tile]:
    """Tiles covering rows ``first_row .. last_row - 1`` and columns ``0 .. width - 1``, row-major.

    The last row of tiles may be shorter; ``tile_cols`` must divide ``width``.
    """
    if width % tile_cols:
        raise ValueError(f"tile_cols {tile_cols} must divide the width {width}")
    return [Tile(r, min(tile_rows, last_row - r), c, tile_cols)
            for r in range(first_row, last_row, tile_rows) for c in range(0, width, tile_cols)]


def my_tiles(tiles: list[Tile]) -> list[Tile]:
    """This block's contiguous share of ``tiles`` (GetBlockIdx of GetBlockNum)."""
    per = -(-len(tiles) // GetBlockNum())
    start = GetBlockIdx() * per
    return tiles[start:start + per]


def my_rows(first: int, last: int) -> range:
    """This block's contiguous share of the rows ``first .. last - 1``."""
    per = -(-(last - first) // GetBlockNum())
    start = first + GetBlockIdx() * per
    return range(min(start, last), min(start + per, last))


def gm(ptr, dtype, size: int) -> GlobalTensor:
    """A GlobalTensor of ``size`` elements at ``ptr``."""
    t = GlobalTensor(dtype)
    t.SetGlobalBuffer(ptr, size)
    return t


def blocks_for(items: int, chip=None, block_dim: int | None = None) -> int:
    """``block_dim`` if given, else one block per work item up to the chip's vector cores."""
    if block_dim is not None:
        if int(block_dim) < 1:
            raise ValueError(f"block_dim must be >= 1, got {block_dim}")
        return int(block_dim)
    return max(1, min(int(items), get_chip(chip).cores_for("AIV")))


_PACKAGE = str(Path(__file__).resolve().parents[1])


def user_site() -> tuple[str, int]:
    """(file, line) of the innermost frame outside ascend_sim and outside generated code (a dataclass's
    ``__init__``): the line of the learner's call, for a tiling error raised while a dataclass is built."""
    f = sys._getframe(1)
    while f.f_back is not None and (f.f_code.co_filename.startswith(_PACKAGE) or
                                    f.f_code.co_filename.startswith("<string>")):
        f = f.f_back
    return f.f_code.co_filename, f.f_lineno


def as_kernel(cls, name: str):
    """The ``@kernel`` entry point of a kernel class: ``op = cls(); op.Init(*args); op.Process()``."""
    def body(*args) -> None:
        op = cls()
        op.Init(*args)
        op.Process()
    body.__name__ = body.__qualname__ = name
    body.__doc__ = cls.__doc__
    return kernel(body)


__all__ = ["Tile", "as_kernel", "user_site", "blocks_for", "gm", "grid", "my_rows", "my_tiles"]
