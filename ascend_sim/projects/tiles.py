"""Row tiles of an image, split over the blocks of a launch (shared by both projects' kernels)."""
from __future__ import annotations

from dataclasses import dataclass

from ascend_sim import GetBlockIdx, GetBlockNum


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


__all__ = ["Tile", "grid", "my_tiles"]
