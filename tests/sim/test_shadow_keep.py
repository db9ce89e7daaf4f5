"""The shadow's segments against a per-granule model: reads never cut, writes keep or merge boundaries (KEEP).

Per granule the history must be what a shadow holding one entry per granule would say: written?, the last
writer, and each pipe's latest read since that write, however the segments are cut.
"""
from __future__ import annotations

import random

from ascend_sim.engine.shadow import NO_PIPE, Shadow


class GranuleModel:
    """One history per granule: the obvious (slow) shadow."""

    def __init__(self, n: int):
        self.h = [[False, NO_PIPE, 0, -1, {}] for _ in range(n)]

    def write(self, lo, hi, pipe, seq, rec):
        for g in range(lo, hi):
            self.h[g] = [True, pipe, seq, rec, {}]

    def read(self, rs, pipe, seq, rec):
        for lo, hi in rs:
            for g in range(lo, hi):
                self.h[g][4][pipe] = (seq, rec)

    def mark_init(self, lo, hi):
        for g in range(lo, hi):
            self.h[g][0] = True

    def history(self, g):
        init, wp, ws, wr, rd = self.h[g]
        return (init, wp, ws, wr, sorted(rd.items()))


def history(sh: Shadow, g: int) -> tuple:
    init, wp, ws, wr, rd = sh.granule_history(g)
    return (init, wp, ws, wr, sorted(rd))


def quick_test_is_exact(sh: Shadow) -> None:
    """``pm`` (the write-after-read check's quick test) is each pipe's latest partial read of the segment."""
    for s in sh.segs:
        want: dict = {}
        for key, (seq, _, _) in (s.pr or {}).items():
            want[key & 7] = max(want.get(key & 7, -1), seq)
        assert (s.pm or {}) == want, (s.lo, s.hi)


def random_runs(rng: random.Random, n: int) -> list:
    """One run, or a few strided bursts (a LoadData's fractals)."""
    lo = rng.randrange(0, n - 16)
    if rng.random() < 0.5:
        return [(lo, rng.randrange(lo + 1, min(n, lo + 96) + 1))]
    blen, pitch = rng.randrange(1, 8), rng.randrange(8, 40)
    count = max(1, min(rng.randrange(1, 6), (n - lo - blen) // pitch + 1))
    blen = min(blen, n - lo)
    return [(lo + b * pitch, lo + b * pitch + blen) for b in range(count)]


def test_segments_agree_with_a_granule_model():
    rng = random.Random(0)
    n = 512
    kept, merged, model = Shadow(n), Shadow(n, keep=0), GranuleModel(n)
    for step in range(3000):
        kind, pipe = rng.random(), rng.randrange(7)
        if kind < 0.3:
            lo = rng.randrange(0, n - 1)
            hi = rng.randrange(lo + 1, min(n, lo + 96) + 1)
            for sh in (kept, merged, model):
                sh.write(lo, hi, pipe, step, step)
        elif kind < 0.95:
            rs = random_runs(rng, n)
            for sh in (kept, merged, model):
                sh.read(rs, pipe, step, step)
        else:
            lo = rng.randrange(0, n - 1)
            hi = rng.randrange(lo + 1, min(n, lo + 96) + 1)
            for sh in (kept, merged, model):
                sh.mark_init(lo, hi)
        if step % 97 == 0 or step > 2900:
            for g in range(n):
                want = model.history(g)
                assert history(kept, g) == want, (step, g)
                assert history(merged, g) == want, (step, g)
            quick_test_is_exact(kept)
            quick_test_is_exact(merged)
    assert len(kept.segs) > len(merged.segs)        # the boundaries were kept, and the histories still agree


def test_fractal_reads_after_a_copy_in_cut_nothing():
    """The cube pattern: a tile written whole, read in 16-granule fractals, written whole again: one segment."""
    sh = Shadow(4096)
    sh.write(0, 2048, 4, 1, 0)
    version = sh.version
    for f in range(128):
        sh.read([(f * 16, f * 16 + 16)], 3, f + 1, f + 1)
    assert sh.version == version and len(sh.segs) == 2      # reads never cut: cached regions stay valid
    assert sh.segs[0].rd == {} and len(sh.segs[0].pr) == 128
    sh.write(0, 2048, 4, 2, 200)
    assert sh.segs[0].pr is None and sh.segs[0].pm is None
    for f in range(128):
        sh.read([(f * 16, f * 16 + 16)], 3, 200 + f, 200 + f)
    assert sh.version == version
    assert all(sh.granule_history(f * 16 + 5)[4] == ((3, (200 + f, 200 + f)),) for f in range(128))


def test_repeated_reads_of_one_pattern_keep_one_entry():
    """A buffer read in part again and again (weights in L1) keeps one entry per pipe and access pattern."""
    sh = Shadow(256)
    sh.write(0, 128, 4, 1, 0)
    for k in range(1000):
        sh.read([(0, 16), (32, 48)], 3, 2 + k, 2 + k)
    assert len(sh.segs[0].pr) == 1 and sh.segs[0].pm == {3: 1001}
