"""Ascend C in C++ on the simulator: ``load()`` a kernel source, launch its ``__global__`` functions.

    from ascend_sim import launch
    from ascend_sim.ascendc import load
    mod = load("add_custom.cpp", defines={"DTYPE_X": "half", ...})
    launch(mod.add_custom, 8, x, y, z, workspace, mod.structs.AddCustomTilingData(totalLength=n, tileNum=8))

The stages, one file each: parse.py (libclang), lower*.py (C++ cursors -> Python ast with the C++ positions),
module.py (compile, cache, the kernels), cxx.py (the C++ semantics the generated code calls), diagnostics.py
(``file:line:col: error|unsupported: ...``). docs/ascendc.md describes the lowering rules.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ascend_sim.ascendc.diagnostics import CompileError, Diagnostic
from ascend_sim.ascendc.module import AscendCModule, CppKernel, instantiate, register_source, translate


def load(path_or_source, *, name: str | None = None, defines: dict | None = None,
         include_dirs=(), externs: Mapping | None = None, auto_sync: bool = True) -> AscendCModule:
    """Parse, translate and load a C++ translation unit (a file path, or the source text itself).

    ``defines``: macros as ``-D`` gives them (``{"DTYPE_X": "half"}``; None for a bare ``-DNAME``).
    ``include_dirs``: more ``-I`` folders (the source's own folder is always searched).
    ``externs``: where kernels the source declares and launches but does not define are found, by name (the
    notebook's namespace: ``extern "C" __global__ __aicore__ void k(...);`` then ``k<<<...>>>`` launches the
    ``k`` an earlier cell defined). A missing one is a ``file:line:col: error: undefined kernel`` at the declaration.
    ``auto_sync=False``: built with ``--cce-auto-sync=off``: its kernels launch with auto-sync off (the scalar's
    hand-offs to V/MTE2/MTE3 need the kernel's own SetFlag/WaitFlag; docs/architecture.md, "Auto-sync").
    Raises CompileError (its ``str`` is the compiler-style diagnostics) when the source does not translate.
    """
    if isinstance(path_or_source, Path) or (isinstance(path_or_source, str) and "\n" not in path_or_source
                                            and os.path.isfile(path_or_source)):
        path = os.path.abspath(str(path_or_source))
        text = Path(path).read_text(encoding="utf-8")
        clang_name = display_file = path
    else:
        text = str(path_or_source)
        label = name or "kernel"
        display_file = f"<ascendc:{label}>"
        clang_name = os.path.join(os.path.abspath(os.getcwd()), f"__ascendc_{_safe(label)}.cpp")
        register_source(display_file, text)
    code, source, lowered = translate(text, clang_name, display_file, defines, include_dirs)
    if auto_sync is not True and auto_sync is not False:
        raise TypeError(f"auto_sync must be True or False (--cce-auto-sync=on|off), got {auto_sync!r}")
    return instantiate(code, source, lowered, display_file, externs, auto_sync)


def _safe(label: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in label)


__all__ = ["load", "CompileError", "Diagnostic", "AscendCModule", "CppKernel"]
