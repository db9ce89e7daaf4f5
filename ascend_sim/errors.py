"""KernelError and one subclass per hardware rule.

Every message names the learner's kernel line, the rule broken, the numbers
involved and the fix. Use ``KernelError`` in ``except`` clauses to catch any.
"""
from __future__ import annotations

import linecache
import os
import sys

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_INTERNAL_DIRS = {_PKG_DIR, os.path.join(_PKG_DIR, "ops")}


def _is_internal(filename: str) -> bool:
    return os.path.dirname(os.path.abspath(filename)) in _INTERNAL_DIRS


_internal_cache: dict[str, bool] = {}


def caller_site() -> tuple[str, int]:
    """(filename, lineno) of the innermost frame outside the simulator core."""
    try:
        f = sys._getframe(2)    # caller_site's caller is simulator code; usually its caller is the kernel
    except ValueError:          # called from a shallow stack
        f = sys._getframe(1)
    cache = _internal_cache
    while f is not None:
        fn = f.f_code.co_filename
        internal = cache.get(fn)
        if internal is None:
            internal = cache[fn] = _is_internal(fn)
        if not internal:
            return fn, f.f_lineno
        f = f.f_back
    return "<unknown>", 0


def format_site(site: tuple[str, int] | None) -> str:
    """'file.py:12  `source text`' for a (filename, lineno) site."""
    if not site or site[1] == 0:
        return "<unknown line>"
    fn, ln = site
    text = linecache.getline(fn, ln).strip()
    return f"{os.path.basename(fn)}:{ln}" + (f"  `{text}`" if text else "")


class KernelError(Exception):
    """Base of every rule the simulator enforces."""

    check = "memcheck"

    def __init__(self, message: str, fix: str = "", site: tuple[str, int] | None = None):
        self.site = site if site is not None else caller_site()
        self.rule_message = message
        self.fix = fix
        text = f"[{self.check}] {format_site(self.site)}\n  {message}"
        if fix:
            text += f"\n  Fix: {fix}"
        super().__init__(text)

    @property
    def line(self) -> str:
        return format_site(self.site)


class OutOfBoundsError(KernelError):
    """A read or write outside a GM allocation or a local tensor."""


class CapacityError(KernelError):
    """On-chip buffers exceed a tier's capacity."""


class AlignmentError(KernelError):
    """An address or a length breaks a 32 B / 512 B alignment rule."""


class PositionError(KernelError):
    """An instruction given a tensor in the wrong TPosition / memory tier."""


class DtypeError(KernelError):
    """Operands of one instruction with mismatched or unsupported dtypes."""


class ArgumentError(KernelError):
    """A count, mask, repeat or stride outside what the instruction accepts."""


class QueueError(KernelError):
    """TQue / TPipe misuse: empty DeQue, EnQue past depth, leaks, double free."""


class UninitializedReadError(KernelError):
    """initcheck: reading local memory that nothing wrote."""

    check = "initcheck"


class RaceError(KernelError):
    """racecheck: two pipes touch the same bytes with no synchronisation."""

    check = "racecheck"


class SyncError(KernelError):
    """synccheck: unpaired SetFlag/WaitFlag or a wait that can never be satisfied."""

    check = "synccheck"


class DeadlockError(SyncError):
    """Blocks wait on each other (SyncAll, cross-core flags) and none can go on."""


class GMWriteConflictError(KernelError):
    """Two blocks wrote the same GM bytes in one launch without atomic add."""


class CubeFormatError(KernelError):
    """Mmad / LoadData shapes off the fractal (16x16x16 fp16, 16x32x16 int8) rules."""


class LaunchError(KernelError):
    """Bad launch: block count, arguments or core type."""
