"""Shadow writes that keep segment boundaries (engine/shadow.py KEEP) mean the same as writes that merge."""
from __future__ import annotations

import random

from ascend_sim.engine.shadow import Shadow


def granules(sh: Shadow) -> list[tuple]:
    """Each granule's history: written?, last writer (pipe, seq, record), readers in insertion order."""
    out = []
    for s in sh.segs:
        out += [(s.init, s.wp, s.ws, s.wr, tuple(s.rd.items()))] * (s.hi - s.lo)
    return out


def test_keeping_boundaries_matches_merging():
    rng = random.Random(0)
    kept, merged = Shadow(512), Shadow(512, keep=0)
    for step in range(3000):
        lo = rng.randrange(0, 511)
        hi = rng.randrange(lo + 1, min(512, lo + 96) + 1)
        pipe, kind = rng.randrange(7), rng.random()
        for sh in (kept, merged):
            if kind < 0.3:
                sh.write(lo, hi, pipe, step, step)
            elif kind < 0.95:
                sh.read(lo, hi, pipe, step, step)
            else:
                sh.mark_init(lo, hi)
        assert granules(kept) == granules(merged), step
    assert len(kept.segs) > len(merged.segs)        # the boundaries were kept, and the histories still agree


def test_fractal_reads_after_a_copy_in_split_nothing():
    """The cube pattern: a tile written whole, read in 16-granule fractals, written whole again."""
    sh = Shadow(4096)
    sh.write(0, 2048, 4, 1, 0)
    for f in range(128):
        sh.read(f * 16, f * 16 + 16, 3, f + 1, f + 1)
    version = sh.version
    sh.write(0, 2048, 4, 2, 200)
    for f in range(128):
        sh.read(f * 16, f * 16 + 16, 3, 200 + f, 200 + f)
    assert sh.version == version                    # no split, no merge: cached regions stay valid
    assert all(s.ws == 2 and s.rd == {3: (200 + i, 200 + i)} for i, s in enumerate(sh.segs[:128]))
