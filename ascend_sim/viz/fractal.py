"""A picture of the cube's fractal layouts (分形格式): where each element of a matrix sits in memory.

``draw_fractal_layouts()`` draws one small matrix four times, coloured by each element's address
in ND (GM, row-major), NZ (L1 after Nd2Nz, and L0C), ZZ (L0A) and ZN (L0B), with the fractals
outlined and numbered in the order they are stored; the maps are the simulator's own
(api/ops/fractal.py), so the picture is what the instructions do.
"""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ascend_sim.api.ops.fractal import ROWS, c0, nz_to_nd, zn_to_nd, zz_to_nd
from ascend_sim.viz.static import new_figure

def layout_addresses(rows: int, cols: int, dtype=np.float16) -> dict[str, np.ndarray]:
    """Per layout, the ``rows`` x ``cols`` array of each element's address (in elements).

    A map ``*_to_nd(flat)`` reads the matrix out of a buffer; reading a buffer that holds its own
    addresses gives each element's address.
    """
    k = c0(dtype)
    if rows % ROWS or cols % ROWS or rows % k or cols % k:
        raise ValueError(f"draw whole fractals: rows and cols multiples of 16 and of C0 = {k}")
    flat = np.arange(rows * cols)
    return {
        "ND (GM, row-major)": flat.reshape(rows, cols),
        "NZ (L1 after Nd2Nz; L0C)": nz_to_nd(flat, rows, cols, k),
        "ZZ (L0A, left matrix)": zz_to_nd(flat, rows, cols, k),
        "ZN (L0B, right matrix)": zn_to_nd(flat, rows, cols, k),
    }


def draw_fractal_layouts(rows: int = 32, cols: int = 32, dtype=np.float16) -> Figure:
    """Four panels, one per layout: each element coloured by its address, fractals outlined and numbered
    by their place in memory."""
    k = c0(dtype)
    fig = new_figure(13, 4.6)
    for ax, (name, a) in zip(fig.subplots(1, 4), layout_addresses(rows, cols, dtype).items()):
        ax.imshow(a, cmap="viridis", interpolation="nearest")
        ax.set_title(name, fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
        if name.startswith("ND"):
            ax.set_xlabel("row after row", fontsize=9)
            continue
        fh, fw = (k, ROWS) if name.startswith("ZN") else (ROWS, k)     # fractal rows x columns in the matrix
        for x in range(0, cols + 1, fw):
            ax.axvline(x - 0.5, color="white", lw=1.5)
        for y in range(0, rows + 1, fh):
            ax.axhline(y - 0.5, color="white", lw=1.5)
        for r in range(0, rows, fh):
            for c in range(0, cols, fw):
                ax.text(c + fw / 2 - 0.5, r + fh / 2 - 0.5, str(a[r:r + fh, c:c + fw].min() // (ROWS * k)),
                        ha="center", va="center", color="white", fontsize=12, fontweight="bold")
        ax.set_xlabel({"N": "column blocks, top to bottom", "Z": "fractals row by row"}[name[0]]
                      + (";\ninside a fractal: column-major" if name.startswith("ZN") else
                         ";\ninside a fractal: row-major"), fontsize=9)
    fig.suptitle(f"a {rows} x {cols} {np.dtype(dtype).name} matrix: colour = address in memory, number = the "
                 f"fractal's place (fractal = 16 x {k} elements = 512 B)", fontsize=10)
    return fig
