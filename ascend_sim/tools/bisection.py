"""Bisection (二分定位): the first bad layer of a run, or the first bad version in a list, in log2 steps.

Both searches assume the usual shape of the problem: everything before the culprit is good and
everything from it on is bad (a layer's error propagates downstream; a bug stays in every later
version). With that, ``ceil(log2(n))`` probes find the culprit among ``n`` candidates, each probe a
layer comparison or one test of one version; the result lists every probe so a learner can replay it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Generic, Sequence, TypeVar

__all__ = ["BisectResult", "first_bad", "first_bad_layer", "first_bad_version", "max_steps"]

T = TypeVar("T")


@dataclass
class BisectResult(Generic[T]):
    """The first bad index (None when all are good), its item, and the probes made: ``(index, good)``."""

    index: int | None
    item: T | None
    probes: list[tuple[int, bool]] = field(default_factory=list)
    what: str = "item"

    @property
    def steps(self) -> int:
        return len(self.probes)

    def __str__(self) -> str:
        trail = ", ".join(f"#{i} {'good' if ok else 'bad'}" for i, ok in self.probes)
        found = f"first bad {self.what}: #{self.index} {self.item}" if self.index is not None \
            else f"every {self.what} is good"
        return f"{found} after {self.steps} probes ({trail})"


def max_steps(n: int) -> int:
    """Probes a bisection over ``n`` candidates needs at most: ``ceil(log2(n + 1))`` (whether any is bad)."""
    return math.ceil(math.log2(n + 1)) if n > 0 else 0


def first_bad(items: Sequence[T], is_good: Callable[[T], bool], what: str = "item") -> BisectResult[T]:
    """The first item for which ``is_good`` is False, by binary search over ``items`` (good ones first)."""
    lo, hi = 0, len(items)               # invariant: items[:lo] good, items[hi:] bad
    probes: list[tuple[int, bool]] = []
    while lo < hi:
        mid = (lo + hi) // 2
        ok = bool(is_good(items[mid]))
        probes.append((mid, ok))
        if ok:
            lo = mid + 1
        else:
            hi = mid
    if lo == len(items):
        return BisectResult(None, None, probes, what)
    return BisectResult(lo, items[lo], probes, what)


def first_bad_layer(dump_a, dump_b, benchmark=None) -> BisectResult[str]:
    """The first node of dump ``a`` whose output fails against dump ``b``, by bisection: the ait rule, or the
    dual-benchmark rule when a ``benchmark`` dump is given (see ``tools.compare``)."""
    from ascend_sim.tools.compare import compare_node
    from ascend_sim.tools.dump import Dump, load_dump
    da = dump_a if isinstance(dump_a, Dump) else load_dump(dump_a)
    db = dump_b if isinstance(dump_b, Dump) else load_dump(dump_b)
    dc = None if benchmark is None else benchmark if isinstance(benchmark, Dump) else load_dump(benchmark)
    names = [n.name for n in da if any(m.name == n.name for m in db)]
    return first_bad(names, lambda name: compare_node(da, db, name, benchmark=dc).passed, what="layer")


def first_bad_version(versions: Sequence[T], test: Callable[[T], bool]) -> BisectResult[T]:
    """The first version (oldest first) that fails ``test``: ``git bisect`` over kernel versions."""
    return first_bad(versions, test, what="version")
