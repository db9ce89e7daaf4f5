"""Stage 1: run libclang on a translation unit and hand back its cursor tree (or the clang errors).

The flags are the CPU twin's (-std=c++17, C++, no system headers: our ``include/`` gives ``kernel_operator.h``,
``acl/acl.h``, ``data_utils.h`` and the few ``<cstdint>``-style headers a kernel needs). The one source rewrite is
the kernel launch ``k<<<blocks, l2ctrl, stream>>>(args)``, which is not C++: found on clang's tokens (never a regular
expression), it becomes ``(__ascendc_launch(blocks, l2ctrl, stream), k)(args)``, declared by our prelude.
"""
from __future__ import annotations

import atexit

import os
from dataclasses import dataclass, field
from pathlib import Path

from ascend_sim.ascendc.diagnostics import CompileError, Diagnostic

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
LIBC_DIR = INCLUDE_DIR / "libc"
PRELUDE = LIBC_DIR / "__ascendc_prelude.h"
#: what the device compiler defines for the default target (--npu-arch=dav-2201: Atlas A2, the 910B); a
#: ``defines`` entry of load() overrides it (``{"__NPU_ARCH__": "3510"}``)
DEFAULT_DEFINES = {"__NPU_ARCH__": "2201"}
#: headers of the official examples' folders that our declaration-only versions replace
REPLACED_HEADERS = ("data_utils.h",)


def cindex():
    """``clang.cindex``, imported on first use (the ``course`` extra installs it)."""
    try:
        import clang.cindex as ci
    except ImportError as e:        # pragma: no cover - depends on the environment
        raise ImportError("ascend_sim.ascendc needs libclang to parse C++: pip install libclang "
                          "(or pip install -e '.[course]')") from e
    return ci


_INDEX = None


def _index():
    global _INDEX
    if _INDEX is None:
        _INDEX = cindex().Index.create()
        atexit.register(_release_index)
    return _INDEX


def _release_index() -> None:
    """Free the index while clang.cindex is still loaded (at interpreter exit its __del__ found it gone)."""
    global _INDEX
    _INDEX = None


@dataclass
class ParsedUnit:
    """A parsed translation unit: the libclang TU, the main file's clang name and the texts clang read."""

    tu: object
    main_file: str                                  # the name clang gives the main file
    display_file: str                               # the name diagnostics, tracebacks and the trace use
    texts: dict[str, str] = field(default_factory=dict)     # unsaved files (clang name -> text)


def clang_args(defines: dict | None, include_dirs, source_dir: str) -> list[str]:
    args = ["-x", "c++", "-std=c++17", "-nostdinc", "-nostdinc++",
            "-I", str(INCLUDE_DIR), "-I", str(LIBC_DIR), "-include", str(PRELUDE),
            "-D__ASCEND_SIM__=1", "-Wno-everything"]
    for d in include_dirs:
        args += ["-I", str(d)]
    if source_dir:
        args += ["-I", source_dir]
    defines = {**DEFAULT_DEFINES, **(defines or {})}
    for k, v in defines.items():
        args.append(f"-D{k}" if v is None else f"-D{k}={v}")
    return args


def parse(text: str, clang_name: str, display_file: str, defines: dict | None = None,
          include_dirs=()) -> ParsedUnit:
    """Parse ``text`` (the file ``clang_name``) and raise CompileError on any clang error."""
    ci = cindex()
    source_dir = os.path.dirname(clang_name)
    args = clang_args(defines, include_dirs, source_dir)
    unsaved = {clang_name: text}
    for h in REPLACED_HEADERS:        # the example's own copy -> ours (its declarations then count as our header's)
        unsaved[os.path.join(source_dir, h)] = f'#include "{(INCLUDE_DIR / h).as_posix()}"\n'

    if "<<<" in text:
        unsaved[clang_name] = rewrite_launches(text, clang_name, args)
    tu = _index().parse(clang_name, args=args, unsaved_files=list(unsaved.items()),
                        options=ci.TranslationUnit.PARSE_NONE)
    unit = ParsedUnit(tu, clang_name, display_file, unsaved)
    errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        raise CompileError([_diagnostic(d, unit) for d in errors[:20]])
    return unit


FUNCTION_KINDS = ("FUNCTION_DECL", "CXX_METHOD", "CONSTRUCTOR", "DESTRUCTOR", "FUNCTION_TEMPLATE",
                  "CONVERSION_FUNCTION", "LAMBDA_EXPR")


def function_body_lines(text: str, display_file: str = "<stub>") -> set[int]:
    """The line numbers of ``text`` inside a function body (between its braces); CompileError if it does not parse."""
    clang_name = os.path.join(os.path.abspath(os.getcwd()), "__ascendc_stub_check.cpp")
    unit = parse(text, clang_name, display_file)
    lines: set[int] = set()
    stack = [unit.tu.cursor]
    while stack:
        cur = stack.pop()
        for ch in cur.get_children():
            loc = ch.location
            if loc.file is None or loc.file.name != clang_name:
                continue
            if ch.kind.name == "COMPOUND_STMT" and cur.kind.name in FUNCTION_KINDS:
                lines.update(range(ch.extent.start.line, ch.extent.end.line + 1))
            stack.append(ch)
    return lines


def _diagnostic(d, unit: ParsedUnit) -> Diagnostic:
    loc = d.location
    name = loc.file.name if loc.file else unit.main_file
    return Diagnostic(unit.display_file if name == unit.main_file else name, loc.line, loc.column, "error",
                      d.spelling)


def rewrite_launches(text: str, clang_name: str, args: list[str]) -> str:
    """``k<<<a, b, c>>>(args)`` -> ``(__ascendc_launch(a, b, c), k)(args)``, on clang's tokens of the file."""
    ci = cindex()
    tu = _index().parse(clang_name, args=args, unsaved_files=[(clang_name, text)],
                        options=ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES | ci.TranslationUnit.PARSE_INCOMPLETE)
    main = tu.get_file(clang_name)
    extent = tu.get_extent(clang_name, (0, len(text.encode("utf-8"))))
    toks = [(t.spelling, t.extent.start.offset, t.extent.end.offset) for t in tu.get_tokens(extent=extent)
            if t.location.file is not None and t.location.file.name == main.name]
    raw = text.encode("utf-8")
    edits = []      # (start, end, replacement bytes)
    i = 0
    while i + 1 < len(toks):
        if toks[i][0] == "<<" and toks[i + 1][0] == "<" and toks[i][2] == toks[i + 1][1]:
            close = _launch_close(toks, i + 2)
            start = _kernel_start(toks, i - 1)
            if close is None or start is None:
                i += 1
                continue
            kernel = raw[toks[start][1]:toks[i - 1][2]]
            config = raw[toks[i + 1][2]:toks[close][1]]
            edits.append((toks[start][1], toks[close + 1][2],
                          b"(__ascendc_launch(" + config + b"), " + kernel + b")"))
            i = close + 2
        else:
            i += 1
    for s, e, rep in reversed(edits):
        raw = raw[:s] + rep + raw[e:]
    return raw.decode("utf-8")


def _launch_close(toks, j: int):
    """Index of the ``>>`` of the ``>>>`` that closes a launch configuration starting at token ``j``."""
    depth = 0
    while j + 1 < len(toks):
        s = toks[j][0]
        if s in "([{":
            depth += 1
        elif s in ")]}":
            depth -= 1
        elif s == ">>" and depth == 0 and toks[j + 1][0] == ">" and toks[j][2] == toks[j + 1][1]:
            return j
        j += 1
    return None


def _kernel_start(toks, j: int):
    """Index of the first token of the kernel name ending at token ``j`` (``ns::k<T, 8>``)."""
    if j < 0:
        return None
    if toks[j][0] == ">":           # template arguments: back to the matching '<'
        depth = 0
        while j >= 0:
            s = toks[j][0]
            depth += {">": 1, ">>": 2, "<": -1}.get(s, 0)
            if depth == 0:
                break
            j -= 1
        j -= 1
    if j < 0:
        return None
    while j >= 2 and toks[j - 1][0] == "::":
        j -= 2
    return j
