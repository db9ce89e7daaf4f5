"""Named show-regions: the library code a lesson displays, cut by markers instead of by indentation strings.

The failure this prevents: a lesson that slices ``inspect.getsource`` output at a string shows the wrong lines,
silently, as soon as someone edits the kernel. A region is marked in the displayed file itself::

    # --- SHOW add-init: course/01_basics.ipynb cell basics-08
    def Init(self, ...):
        ...
    # --- END SHOW

and a lesson cell calls ``show("add-init")``. The text after the id names the cell that shows it (d2l's
link, in reverse); tests/course/test_show.py checks both directions. Regions are searched in the source files
of ``ascend_sim/kernels/`` and ``ascend_sim/models/`` (Python, and C++ kernels marked with ``// --- SHOW id`` and
``// --- END SHOW``); ids are unique across them.
"""
from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable

PACKAGE = Path(__file__).resolve().parents[1]
SEARCHED = ("kernels", "models")            # folders of the package that may hold regions
LANGUAGES = {".py": "python", ".cpp": "cpp"}  # suffixes searched -> the highlighting of their listings
_START = re.compile(r"^\s*(?:#|//) --- SHOW (?P<id>\S+?):?(?:\s+(?P<note>.*))?$")
_END = re.compile(r"^\s*(?:#|//) --- END SHOW\s*$")


class ShowError(ValueError):
    """A region marker problem: duplicate id, unclosed or unopened region, or an unknown id.

    Not a KernelError: no kernel ran. Like one, it names the place, the rule and the fix.
    """

    def __init__(self, message: str, fix: str):
        self.fix = fix
        super().__init__(f"{message}\n  Fix: {fix}")


@dataclass(frozen=True)
class Region:
    """One marked region: its id, where it is, the note naming the lesson cell, and its dedented text."""

    id: str
    path: Path
    line: int           # 1-based line of the ``# --- SHOW`` marker
    end: int            # 1-based line of the ``# --- END SHOW`` marker
    note: str
    text: str

    @property
    def language(self) -> str:
        """``python`` or ``cpp``: how a listing of the region is highlighted."""
        return LANGUAGES.get(self.path.suffix, "python")

    @property
    def where(self) -> str:
        return f"{_rel(self.path)}:{self.line}"


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(PACKAGE.parent))
    except ValueError:
        return str(path)


def parse_regions(path: Path, text: str) -> list[Region]:
    """The regions of one file; an END without a SHOW, or a SHOW without an END, raises :class:`ShowError`.

    Regions may nest; marker lines never appear in a region's text.
    """
    open_: list[tuple[str, int, str]] = []       # (id, marker line, note) of the regions not yet closed
    bodies: dict[int, list[str]] = {}             # marker line -> collected lines
    out: list[Region] = []
    lines = text.splitlines()
    for n, line in enumerate(lines, 1):
        start, end = _START.match(line), _END.match(line)
        if start:
            open_.append((start["id"], n, (start["note"] or "").strip()))
            bodies[n] = []
        elif end:
            if not open_:
                raise ShowError(f"{_rel(path)}:{n}: '# --- END SHOW' closes no region",
                                fix="add '# --- SHOW <id>' above the region's first line, or delete this line")
            rid, first, note = open_.pop()
            out.append(Region(rid, path, first, n, note, textwrap.dedent("\n".join(bodies.pop(first))).strip("\n")))
        else:
            for body in bodies.values():
                body.append(line)
    if open_:
        rid, first, _ = open_[-1]
        raise ShowError(f"{_rel(path)}:{first}: show-region {rid!r} is never closed (no '# --- END SHOW' "
                        f"before the end of the file, line {len(lines)})",
                        fix="add '# --- END SHOW' after the region's last line")
    return sorted(out, key=lambda r: r.line)


def collect(files: Iterable[Path]) -> dict[str, Region]:
    """``{id: Region}`` over ``files``; an id marked twice raises :class:`ShowError` naming both places."""
    found: dict[str, Region] = {}
    for path in files:
        text = path.read_text(encoding="utf-8")
        if "--- SHOW" not in text:
            continue
        for region in parse_regions(path, text):
            if region.id in found:
                raise ShowError(f"{region.where}: show-region id {region.id!r} is already used at "
                                f"{found[region.id].where}; ids are unique across the package",
                                fix="rename one of the two regions (and the show() calls that use it)")
            found[region.id] = region
    return found


@lru_cache(maxsize=1)
def regions() -> dict[str, Region]:
    """Every region of the package (``kernels/`` and ``models/``), read once per process."""
    return collect(sorted(p for d in SEARCHED for suffix in LANGUAGES for p in (PACKAGE / d).rglob(f"*{suffix}")))


def show_ids() -> list[str]:
    """The ids of every show-region, sorted."""
    return sorted(regions())


def get_region(region_id: str) -> Region:
    """The :class:`Region` named ``region_id``; an unknown id raises :class:`ShowError` listing the known ones."""
    try:
        return regions()[region_id]
    except KeyError:
        raise ShowError(f"no show-region {region_id!r} in ascend_sim/{{{','.join(SEARCHED)}}}/; "
                        f"the {len(regions())} known ids: {', '.join(show_ids())}",
                        fix=f"use one of the known ids, or mark the code with '# --- SHOW {region_id}' "
                            "... '# --- END SHOW'") from None


class Listing(str):
    """The text of a region. In IPython it displays highlighted (Python or C++), once per cell (``show`` already
    did)."""

    _shown_in: int | None = None         # the IPython execution count of the cell whose show() displayed it
    language: str = "python"

    def _ipython_display_(self) -> None:
        ip = _ipython()
        if ip is not None and ip.execution_count == self._shown_in:
            return                          # show() displayed it in this very cell: do not repeat it
        _display(self)


def _ipython():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def _display(text: "Listing") -> None:
    from IPython.display import Code, display
    display(Code(text, language=text.language))


def show(region_id: str) -> Listing:
    """The code of show-region ``region_id``, dedented; in IPython (Jupyter) also displayed, highlighted."""
    region = get_region(region_id)
    listing = Listing(region.text)
    listing.language = region.language
    ip = _ipython()
    if ip is not None:
        _display(listing)
        listing._shown_in = ip.execution_count
    return listing


__all__ = ["Listing", "Region", "ShowError", "collect", "get_region", "parse_regions", "regions", "show",
           "show_ids"]
