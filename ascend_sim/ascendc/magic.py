"""``%%ascendc``: a notebook cell of Ascend C, loaded and bound into the notebook's namespace.

    %load_ext ascend_sim.ascendc.magic
    %%ascendc add                       # optional name; -D NAME=VALUE and -I DIR as for a compiler
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

from ascend_sim.ascendc import load

DEFAULT_NAME = "ascendc_module"


def parse_line(line: str) -> tuple[str, dict, list]:
    """(module name, defines, include dirs) from the magic's line: ``name -D X=1 -DY -I dir``."""
    name, defines, includes = DEFAULT_NAME, {}, []
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
        else:
            name = w
        i += 1
    return name, defines, includes


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
    name, defines, includes = parse_line(line)
    mod = load(cell_text(cell), name=label or name, defines=defines, include_dirs=includes, externs=namespace)
    namespace.update(mod.functions)
    namespace.update(vars(mod.structs))
    namespace.update(mod.kernels)
    namespace[name] = mod
    return None


def ascendc(line: str, cell: str):
    """The ``%%ascendc`` cell magic."""
    from IPython import get_ipython
    ipython = get_ipython()
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
