"""KernelError and one subclass per hardware rule.

Every message names the learner's kernel line, the rule broken, the numbers
involved and the fix. Use ``KernelError`` in ``except`` clauses to catch any.
Code in a message or a fix is marked «...» in its Python spelling and shown in the
language of the learner's line (``spelling.render``: C++ for a kernel of the C++ front end).
"""
from __future__ import annotations

import linecache
import os
import sys

from ascend_sim.engine.spelling import language_of_file, render

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Frames in the simulator's own code are skipped when looking for the learner's line. Code that plays the
# learner's part (library kernels, lab checks, widgets) is not internal: its lines are the ones to name.
_NOT_INTERNAL = ("kernels", "viz", "course")
_INTERNAL_DIRS = {root for root, _, _ in os.walk(_PKG_DIR)
                  if os.path.relpath(root, _PKG_DIR).split(os.sep)[0] not in _NOT_INTERNAL
                  and "__pycache__" not in root}


def _is_internal(filename: str) -> bool:
    return os.path.dirname(os.path.abspath(filename)) in _INTERNAL_DIRS


_internal_cache: dict[str, bool] = {}
_getframe = sys._getframe


def caller_site() -> tuple[str, int]:
    """(filename, lineno) of the innermost frame outside the simulator core."""
    try:
        f = _getframe(2)        # caller_site's caller is simulator code; usually its caller is the kernel
    except ValueError:          # called from a shallow stack
        f = _getframe(1)
    return resolve_site(_outside(f))


def kernel_point() -> tuple:
    """``caller_site()`` for the hot paths: the kernel frame's (code, byte offset), made into a line later.

    Reading ``f_lineno`` decodes the code's line table on every call; the offset is free, and
    ``resolve_site`` turns it into the same line when a trace is read or an error is raised.
    """
    global _kernel_code
    f = _getframe(2)            # the frame that called the API function: the kernel, most of the time
    code = f.f_code
    if code is _kernel_code:    # the same kernel code as the last call: no file look-up (a quarter of the cost)
        return code, f.f_lasti
    if _internal_cache.get(code.co_filename) is False:
        _kernel_code = code
        return code, f.f_lasti
    return _outside(f)


_kernel_code = None     # the code object kernel_point last found outside the simulator core


def _outside(f) -> tuple:
    """(code, f_lasti) of the innermost frame from ``f`` outwards that is outside the simulator core."""
    cache = _internal_cache
    while f is not None:
        code = f.f_code
        fn = code.co_filename
        internal = cache.get(fn)
        if internal is None:
            internal = cache[fn] = _is_internal(fn)
        if not internal:
            return code, f.f_lasti
        f = f.f_back
    return "<unknown>", 0


_lines: dict[tuple, int] = {}


def resolve_site(site):
    """(filename, lineno) of a site, or of a ``kernel_point`` (code, byte offset); None stays None."""
    if site is None or site[0].__class__ is str:
        return site
    line = _lines.get(site)
    if line is None:
        code, lasti = site
        line = next((ln for start, end, ln in code.co_lines() if start <= lasti < end), None)
        if len(_lines) > 100_000:       # notebooks make new code objects on every run of a cell
            _lines.clear()
        line = _lines[site] = line if line is not None else code.co_firstlineno
    return site[0].co_filename, line


_LIBRARY_KERNELS = os.path.join(_PKG_DIR, "kernels") + os.sep   # kernels and classes a learner's code builds on


def _is_library_file(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_PKG_DIR + os.sep)


def _learner_call_site(site) -> tuple[str, int] | None:
    """When ``site`` is a line of a library kernel (ascend_sim/kernels), the learner's line that called into it.

    Walks from the error outwards to the innermost frame outside ascend_sim and the Python installation
    (the learner's cell or file); None when ``site`` is the learner's own line or no such frame exists.
    """
    if not site or not os.path.abspath(site[0]).startswith(_LIBRARY_KERNELS):
        return None
    f = _getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not _is_library_file(fn) and not fn.startswith((sys.prefix, sys.base_prefix, "<frozen")):
            return fn, f.f_lineno
        f = f.f_back
    return None


def _line_text(site: tuple[str, int]) -> str:
    """'line 12 `op.Process()`' (no file name: a notebook cell's is a temporary path)."""
    text = linecache.getline(site[0], site[1]).strip()
    return f"line {site[1]}" + (f" `{text}`" if text else "")


def format_site(site: tuple[str, int] | None) -> str:
    """'file.py:12  `source text`' for a (filename, lineno) site."""
    site = resolve_site(site)
    if not site or site[1] == 0:
        return "<unknown line>"
    fn, ln = site
    text = linecache.getline(fn, ln).strip()
    return f"{os.path.basename(fn)}:{ln}" + (f"  `{text}`" if text else "")


HANDBOOK = "docs/troubleshooting.md"      # one section per KernelError subclass (tests/tools/test_troubleshooting.py)


class KernelError(Exception):
    """Base of every rule the simulator enforces."""

    check = "memcheck"

    def __init__(self, message: str, fix: str = "", site: tuple[str, int] | None = None, kind: str = ""):
        self.site = resolve_site(site) if site is not None else caller_site()
        self.call_site = _learner_call_site(self.site)
        if self.call_site:          # the line is library code (a kernel of ascend_sim/kernels): name the learner's
            message += (f" (line {self.site[1]} is in the library's {os.path.basename(self.site[0])}; "
                        f"your call: {_line_text(self.call_site)})")
        # the code in the message and the fix, spelled in the language of the learner's line (spelling.py)
        self.language = language_of_file((self.call_site or self.site or ("",))[0])
        message, fix = render(message, self.language), render(fix, self.language)
        self.rule_message = message
        self.fix = fix
        self.kind = kind        # which breach of the class's rule ("deque-empty"): course hints are keyed by it
        text = f"[{self.check}] {format_site(self.site)}\n  {message}"
        if fix:
            text += f"\n  Fix: {fix}"
        super().__init__(text + f"\n  See: {self.doc}")

    @property
    def line(self) -> str:
        return format_site(self.site)

    @property
    def doc(self) -> str:
        """The handbook entry of this error class: symptom, cause, fix (docs/troubleshooting.md)."""
        return f"{HANDBOOK}#{type(self).__name__.lower()}"


class SanitizerWarning(UserWarning):
    """A finding that lets the kernel run on: a rule broken in a way these inputs hide (the chip's result comes out
    the same), or a likely mistake the simulator cannot prove (``note`` says which). Issued with ``warnings.warn``;
    ``error`` is the KernelError it would be."""

    def __init__(self, error: KernelError, note: str = "the result is unaffected for these inputs"):
        self.error = error
        super().__init__(f"(warning: {note}) {error}")


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


class TilingError(KernelError):
    """Host-side tiling: a template combination that is not compiled, a shape the tiling cannot split."""

    check = "tiling"


class InternalError(KernelError):
    """A bug of ascend_sim: an exception that escaped an API call without naming a rule."""

    check = "internal"


def internal_error(exc: BaseException) -> BaseException:
    """``exc`` as an ``InternalError`` when it escaped from the simulator's own code, else ``exc``.

    Called once when a block fails (never on the hot path). An exception raised in the learner's
    own code (its innermost frame outside ascend_sim) is the learner's and passes unchanged.
    """
    if isinstance(exc, KernelError) or not isinstance(exc, Exception):
        return exc
    frames, tb = [], exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    inner = [f for f in frames[1:] if "site-packages" not in f.f_code.co_filename]
    if not inner or not _is_internal(inner[-1].f_code.co_filename):
        return exc                      # raised in kernel code (or in numpy called by it): the learner's
    learner = [f for f in frames if not _is_internal(f.f_code.co_filename)]
    site = (learner[-1].f_code.co_filename, learner[-1].f_lineno) if learner else ("<unknown>", 0)
    where = inner[-1].f_code
    err = InternalError(
        f"internal error in ascend_sim, please report: {type(exc).__name__}: {exc} (raised in "
        f"{os.path.relpath(where.co_filename, _PKG_DIR)}:{where.co_name} during the call on this line)",
        fix="this is a bug of the simulator, not of the kernel: report it with this message and the kernel; "
            "meanwhile check the call's arguments against the Ascend C API page", site=site)
    err.__cause__ = exc
    return err


def learner_frame():
    """The innermost frame outside the simulator core (the kernel's, usually), or None."""
    f = _getframe(1)
    cache = _internal_cache
    while f is not None:
        fn = f.f_code.co_filename
        internal = cache.get(fn)
        if internal is None:
            internal = cache[fn] = _is_internal(fn)
        if not internal:
            return f
        f = f.f_back
    return None


def site_outside(depth: int) -> tuple:
    """The learner's (code, offset) site seen from ``depth`` frames above the caller (skips our own frames)."""
    return _outside(_getframe(depth + 1))
