"""What layout a cube-path copy left in a tier: the evidence the cube's format checks explain mistakes with.

Hardware bytes carry no format: a Mmad reads whatever L0A/L0B hold as fractals, so a layout
mistake gives wrong numbers, not an error. The simulator remembers, per 32-byte granule, the
one thing it can be sure of: L1 bytes a plain DataCopy wrote as ND rows wider than one fractal
row (C0 = 32 bytes), and the L0 fractals LoadData took from them. A Mmad that reads such
fractals is told why its numbers will be wrong (see api/ops/cube.py).
"""
from __future__ import annotations

import numpy as np

GRANULE = 32
ND_ROWS = 1         # L1: ND rows (a strided DataCopy with rows longer than C0, not whole-fractal strips with
                    # whole-fractal gaps: api/ops/datacopy._nd_rows), not a fractal layout
FROM_ND = 2         # L0A/L0B: fractals LoadData cut out of ND_ROWS bytes


def mark(tier, lo: int, hi: int, code: int, site=None) -> None:
    """Bytes [lo, hi) of ``tier`` now hold ``code`` (0: a fractal-correct or unknown layout)."""
    arr = tier.layout
    if arr is None:
        if not code:
            return
        arr = tier.layout = np.zeros(-(-tier.capacity // GRANULE), np.uint8)
        tier.layout_sites = {}
    g0, g1 = lo // GRANULE, -(-hi // GRANULE)
    arr[g0:g1] = code
    if code:
        tier.layout_sites.pop((g0, g1), None)       # re-inserted last: the dict is in order of recency
        tier.layout_sites[(g0, g1)] = site


def find(tier, lo: int, hi: int, code: int):
    """The site of the copy that left ``code`` in bytes [lo, hi) of ``tier``, or None if none did."""
    arr = tier.layout
    if arr is None:             # the usual case: no ND rows were ever copied into this tier
        return None
    g0, g1 = lo // GRANULE, -(-hi // GRANULE)
    if not (arr[g0:g1] == code).any():
        return None
    for (a, b), site in reversed(tier.layout_sites.items()):     # the latest copy that left ``code`` here
        if a < g1 and g0 < b and (arr[max(a, g0):min(b, g1)] == code).any():
            return site
    return ("<unknown>", 0)
