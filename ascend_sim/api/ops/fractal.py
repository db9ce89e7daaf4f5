"""The cube's fractal (分形) layouts: C0, fractal shapes and the index maps of NZ, ZZ and ZN.

A fractal is 512 bytes: 16 rows of C0 = 32 bytes / sizeof(T) elements (16 for half, 32 for
int8, 8 for float). Matrices on the cube path are stored fractal by fractal:

- NZ (L1 after DataCopy with Nd2NzParams, L0C): column blocks of C0 columns, one after the
  other ("N"); inside a block the rows run top to bottom, C0 elements each ("z").
- ZZ (L0A): fractals row by row ("Z"), each fractal row-major ("z").
- ZN (L0B): fractals row by row ("Z"), each fractal column-major ("n"): a k0 x 16 fractal
  is stored as its 16 columns, k0 elements each.

These functions are pure numpy (host side, tests and pictures); the instructions in
``cube.py`` and ``nd2nz.py`` move bytes with the same maps.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.engine.core import Runs

C0_BYTES = 32
FRACTAL_BYTES = 512
ROWS = 16           # rows of a fractal (M and N direction)


def c0(dtype) -> int:
    """Elements of one fractal row: 32 bytes / sizeof(T) (16 half, 32 int8, 8 float)."""
    return C0_BYTES // np.dtype(dtype).itemsize


def ceil_to(x: int, m: int) -> int:
    return -(-x // m) * m


def nd_to_nz(x: np.ndarray) -> np.ndarray:
    """The NZ layout of an ND matrix, rows padded to 16 and columns to C0 with zeros (a flat array)."""
    r, c = x.shape
    k = c0(x.dtype)
    rp, cp = ceil_to(r, ROWS), ceil_to(c, k)
    pad = np.zeros((rp, cp), x.dtype)
    pad[:r, :c] = x
    return np.ascontiguousarray(pad.reshape(rp, cp // k, k).transpose(1, 0, 2)).ravel()


def nz_to_nd(flat: np.ndarray, rows: int, cols: int, k: int | None = None) -> np.ndarray:
    """Read a ``rows`` x ``cols`` matrix back from its NZ layout (rows padded to 16, columns to C0).

    ``k``: C0 when ``flat`` is not of the matrix's dtype (default: 32 bytes / flat's itemsize).
    """
    k = k or c0(flat.dtype)
    rp, cp = ceil_to(rows, ROWS), ceil_to(cols, k)
    return flat[:rp * cp].reshape(cp // k, rp, k).transpose(1, 0, 2).reshape(rp, cp)[:rows, :cols]


def zz_to_nd(flat: np.ndarray, rows: int, cols: int, k: int | None = None) -> np.ndarray:
    """Read a ``rows`` x ``cols`` left matrix back from its L0A ZZ layout."""
    k = k or c0(flat.dtype)
    rp, cp = ceil_to(rows, ROWS), ceil_to(cols, k)
    return flat[:rp * cp].reshape(rp // ROWS, cp // k, ROWS, k).transpose(0, 2, 1, 3).reshape(rp, cp)[:rows, :cols]


def zn_to_nd(flat: np.ndarray, rows: int, cols: int, k: int | None = None) -> np.ndarray:
    """Read a ``rows`` (K) x ``cols`` (N) right matrix back from its L0B ZN layout."""
    k = k or c0(flat.dtype)
    rp, cp = ceil_to(rows, k), ceil_to(cols, ROWS)
    return flat[:rp * cp].reshape(rp // k, cp // ROWS, ROWS, k).transpose(0, 3, 1, 2).reshape(rp, cp)[:rows, :cols]


def byte_runs(tier, spans) -> tuple:
    """(tier, granule runs) of byte spans [(lo, hi), ...]: the shadow region of a scattered access."""
    rs = Runs()
    ends = []
    for lo, hi in sorted(spans):
        g0, g1 = lo // C0_BYTES, -(-hi // C0_BYTES)
        if rs and g0 <= rs[-1][1]:
            rs[-1] = (rs[-1][0], max(rs[-1][1], g1))
            ends[-1] = max(ends[-1], hi)
        else:
            rs.append((g0, g1))
            ends.append(hi)
    rs.ends = ends
    return (tier, rs)
