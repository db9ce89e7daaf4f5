"""``%%ascendc``: a notebook cell of Ascend C, loaded and bound into the notebook's namespace.

    %load_ext ascend_sim.ascendc.magic
    %%ascendc add                       # optional name; -D NAME=VALUE, -I DIR, --cce-auto-sync=off as for a compiler
    #include "kernel_operator.h"
    extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, ...) { ... }

After the cell, ``add_custom`` (the launchable kernel), the structs (``AddCustomTilingData``) and the other functions
are names of the notebook, and ``add`` (the cell's name, default ``ascendc_module``) is the AscendCModule with
``.python_source``. A compile error shows as the compiler's lines, not a traceback. Line numbers are the cell's
(the magic line is line 1), as JupyterLab shows them.

A notebook that must also run outside IPython (a lab's setup cell, which the grader runs as plain Python) calls
``enable()`` instead of ``%load_ext``: it registers the magic when IPython runs the notebook and does nothing
otherwise (the grader compiles ``%%ascendc`` answer cells itself).
"""
from __future__ import annotations

import shlex
from typing import NamedTuple

from ascend_sim.ascendc import load

DEFAULT_NAME = "ascendc_module"


class CellLine(NamedTuple):
    """What the ``%%ascendc`` line says: the module's name, ``-D`` macros, ``-I`` folders and the auto-sync option."""

    name: str
    defines: dict
    includes: list
    auto_sync: bool = True


LINE_USAGE = "%%ascendc [name] [-D NAME[=VALUE]] [-I DIR] [--cce-auto-sync=on|off]"


def parse_line(line: str) -> CellLine:
    """The magic's line, as a compiler's: ``name -D X=1 -DY -I dir --cce-auto-sync=off``.

    ``--cce-auto-sync=off`` builds the cell's kernels as the compiler option does (docs/architecture.md,
    "Auto-sync"): the scalar's hand-offs to V/MTE2/MTE3 then need the kernel's own SetFlag/WaitFlag.
    """
    name, defines, includes, auto_sync = DEFAULT_NAME, {}, [], True
    words = shlex.split(line or "")
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("-D", "-I") and i + 1 < len(words):
            w, i = w + words[i + 1], i + 1
        if w.startswith("-D"):
            key, _, value = w[2:].partition("=")
            defines[key] = value if value else None
        elif w.startswith("-I"):
            includes.append(w[2:])
        elif w.startswith("--cce-auto-sync"):
            value = w.partition("=")[2]
            if value not in ("on", "off"):
                raise ValueError(f"%%ascendc: {w!r}: the option takes on or off (the compiler's --cce-auto-sync); "
                                 f"fix: write --cce-auto-sync=off (or leave it out: on). Usage: {LINE_USAGE}")
            auto_sync = value == "on"
        elif w.startswith("-"):
            raise ValueError(f"%%ascendc: unknown option {w!r}; fix: use only {LINE_USAGE}")
        else:
            name = w
        i += 1
    return CellLine(name, defines, includes, auto_sync)


def cell_text(cell: str) -> str:
    """The C++ of a cell body with the magic line blanked, so that line numbers are the cell's."""
    return "\n" + cell


def run_cell(line: str, cell: str, namespace: dict, *, label: str | None = None):
    """Load ``cell`` and bind its kernels, structs and functions (and the module under its name) in ``namespace``.

    A kernel the cell only declares (``extern "C" __global__ __aicore__ void k(...);``) and launches is the ``k``
    of ``namespace``: an earlier cell's kernel, C++ or Python.

    ``label`` names the cell in diagnostics and errors (``<ascendc:In[12]>``; default: the module's name): each
    cell needs its own, or an error raised by an earlier cell's kernel would quote a later cell's source line.
    """
    opts = parse_line(line)
    mod = load(cell_text(cell), name=label or opts.name, defines=opts.defines, include_dirs=opts.includes,
               externs=namespace, auto_sync=opts.auto_sync)
    namespace.update(mod.functions)
    namespace.update(vars(mod.structs))
    namespace.update(mod.kernels)
    namespace[opts.name] = mod
    return None


def ascendc(line: str, cell: str):
    """The ``%%ascendc`` cell magic."""
    from IPython import get_ipython
    from IPython.core.error import UsageError
    ipython = get_ipython()
    try:
        parse_line(line)
    except ValueError as e:
        raise UsageError(str(e)) from None         # one line under the cell, not a traceback
    return run_cell(line, cell, ipython.user_ns, label=f"In[{ipython.execution_count}]")


def load_ipython_extension(ipython) -> None:
    """``%load_ext ascend_sim.ascendc.magic`` registers ``%%ascendc``."""
    ipython.register_magic_function(ascendc, magic_kind="cell", magic_name="ascendc")


def enable() -> bool:
    """Register ``%%ascendc`` in the running IPython (True); outside IPython do nothing (False)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ipython = get_ipython()
    if ipython is None:
        return False
    load_ipython_extension(ipython)
    return True
