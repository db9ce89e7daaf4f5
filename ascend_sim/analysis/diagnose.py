"""Turn a failed comparison into a sentence that names the likely mistake.

Order of diagnoses: output never written (sentinel still there: a tail, or a
whole block's range), block ranges holding another block's results (a wrong
GM offset), then plain precision: how many elements, where, and by how much.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.analysis.verify import CompareResult, format_ranges, unwritten_ranges

__all__ = ["diagnose", "explain", "misplaced_segments", "DIAGNOSES"]

# The key of each diagnosis ("group/detail": hint tables may name either), for hints chosen by the mistake.
DIAGNOSES = ("shape", "unwritten/all", "offset/empty-block", "loop/last-tile", "tail", "loop/skipped-tiles",
             "offset/misplaced", "values")


def diagnose(actual, golden, result: CompareResult, *, sentinel=None, segment: int | None = None,
             tile: int | None = None, what: str = "output") -> str:
    """One explanation of why ``actual`` does not match ``golden``.

    ``sentinel``: the value the output was filled with before the launch.
    ``segment``: elements per block, to recognise per-block mistakes.
    ``tile``: elements per tile, to tell a skipped tile from an unhandled tail.
    """
    return explain(actual, golden, result, sentinel=sentinel, segment=segment, tile=tile, what=what)[1]


def explain(actual, golden, result: CompareResult, *, sentinel=None, segment: int | None = None,
            tile: int | None = None, what: str = "output") -> tuple[str, str]:
    """``(key, text)``: the diagnosis key (one of ``DIAGNOSES``) and ``diagnose``'s explanation."""
    if result.problem:
        return "shape", f"{what}: {result.problem}"
    a = np.asarray(actual).reshape(-1)
    g = np.asarray(golden).reshape(-1)
    if sentinel is not None:
        ranges = [r for r in unwritten_ranges(a, sentinel) if not _golden_is(g, r, sentinel)]
        if ranges:
            key, cause = _cause(ranges, a.size, segment, tile)
            return key, f"{format_ranges(ranges)} of the {what} were never written: {cause}"
    if segment:
        moved = misplaced_segments(a, g, segment)
        if moved:
            i, j = moved[0]
            more = f" (and {len(moved) - 1} more blocks)" if len(moved) > 1 else ""
            return "offset/misplaced", (f"block {i}'s range of the {what} holds block {j}'s results{more}: "
                                        f"offset each block's GlobalTensor by GetBlockIdx() * blockLength")
    return "values", (f"{result.mismatches} of {result.count} {what} elements differ beyond the tolerance "
                      f"(mismatch ratio {result.mismatch_ratio:.3g}, at most "
                      f"{result.tolerance.max_mismatch_ratio:g} allowed); first {result.first_mismatch_text()}")


def _golden_is(g: np.ndarray, r: tuple[int, int], sentinel) -> bool:
    """True when the golden itself holds the sentinel over the whole range (then it is not a gap)."""
    part = g[r[0]:r[1] + 1]
    return bool(unwritten_ranges(part, sentinel) == [(0, part.size - 1)])


def _cause(ranges: list[tuple[int, int]], n: int, segment: int | None, tile: int | None) -> tuple[str, str]:
    if ranges == [(0, n - 1)]:
        return "unwritten/all", ("nothing was written: copy the result out to GM (DataCopy from the VECOUT queue "
                                 "to the output)")
    seg = segment or n
    if segment and all(a % seg == 0 and ((b + 1) % seg == 0 or b == n - 1) for a, b in ranges):
        blocks = sorted({k for a, b in ranges for k in range(a // seg, b // seg + 1)})
        names = ", ".join(str(k) for k in blocks[:4]) + (" ..." if len(blocks) > 4 else "")
        return "offset/empty-block", (f"block {names} wrote nothing in its own range: offset each block's "
                                      f"GlobalTensor by GetBlockIdx() * blockLength")
    if all((b + 1) % seg == 0 or b == n - 1 for a, b in ranges):
        if tile and all((b - a + 1) % tile == 0 for a, b in ranges):
            return "loop/last-tile", ("the last tile of a block was skipped: check the loop bound "
                                      "(blockLength // tileLength tiles)")
        return "tail", ("the tail is not handled (when the length is not a multiple of the tile, copy the rest "
                        "with DataCopyPad)")
    return "loop/skipped-tiles", "some tiles were skipped: check the loop bounds and the offset of each tile"


def misplaced_segments(actual, golden, segment: int) -> list[tuple[int, int]]:
    """Pairs (i, j), i != j: segment i of ``actual`` equals segment j of ``golden`` but not segment i."""
    a = np.asarray(actual).reshape(-1)
    g = np.asarray(golden).reshape(-1)
    n = a.size // segment
    found = []
    for i in range(n):
        ai = a[i * segment:(i + 1) * segment]
        if np.array_equal(ai, g[i * segment:(i + 1) * segment], equal_nan=True):
            continue
        for j in range(n):
            if j != i and np.array_equal(ai, g[j * segment:(j + 1) * segment], equal_nan=True):
                found.append((i, j))
                break
    return found
