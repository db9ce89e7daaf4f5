"""The g++ syntax check of an Ascend C source against ascend_sim's declaration headers.

The failure this exists to prevent: a C++ kernel in the course that the simulator runs but a real compiler would
reject (a misspelt API name, a struct initialised in the wrong order, a missing template argument), so that the
learner's first build on an NPU fails. ``gxx_check`` runs ``g++ -std=c++17 -fsyntax-only`` with our ``include/``
directory first, the way Huawei's CPU twin compiles a kernel as host C++ with the qualifiers defined empty.

    from ascend_sim.ascendc.syntax import gxx_check
    errors = gxx_check(source_text, "add_custom.asc")      # [] when g++ accepts it
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
GXX_FLAGS = ("-std=c++17", "-fsyntax-only", "-x", "c++")


def find_gxx() -> str | None:
    """The g++ executable on the PATH, or None."""
    return shutil.which("g++")


def compiler_include_args() -> list[str]:
    """``-isystem DIR`` for the compiler's own headers (stddef.h, stdarg.h ...) when libclang needs them.

    The PyPI libclang wheel ships no resource directory, so <cstddef>, <string> or <iostream> fail with
    "'stddef.h' file not found"; GCC's own include directory (``g++ -print-file-name=include``) provides those
    headers in a form clang accepts. Empty when g++ is absent.
    """
    gxx = find_gxx()
    if gxx is None:
        return []
    done = subprocess.run([gxx, "-print-file-name=include"], capture_output=True, text=True)
    path = Path(done.stdout.strip())
    return ["-isystem", str(path)] if done.returncode == 0 and (path / "stddef.h").is_file() else []


def strip_launch_config(text: str) -> str:
    """``k<<<blocks, l2ctrl, stream>>>(args)`` -> ``k(args)``: the launch configuration blanked out with spaces.

    ``<<<...>>>`` is not C++; blanking it keeps every other line and column where it was, so g++'s positions
    stay the source's. Comments and string/character literals are skipped (a scanner, not a pattern).
    """
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c in "\"'":
            i += 1
            while i < n and text[i] != c:
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif text.startswith("<<<", i):
            end = text.find(">>>", i + 3)
            if end < 0:
                return "".join(out)
            for j in range(i, end + 3):
                if out[j] != "\n":
                    out[j] = " "
            i = end + 3
        else:
            i += 1
    return "".join(out)


def gxx_check(source: str, filename: str, *, include_dirs: tuple[Path, ...] = (), gxx: str | None = None,
              timeout: float = 120.0) -> list[str]:
    """g++'s error lines for ``source`` (named ``filename`` in them); [] when it compiles.

    ``include_dirs`` come after ours (a kernel's own tiling header beside it). Warnings are not errors.
    """
    gxx = gxx or find_gxx()
    if gxx is None:
        raise FileNotFoundError("g++ is not on the PATH (apt-get install g++)")
    dirs = [INCLUDE_DIR, *include_dirs]
    if Path(filename).parent.is_dir():
        dirs.append(Path(filename).parent)
    cmd = [gxx, *GXX_FLAGS, *(f"-I{d}" for d in dirs), "-w", "-"]
    done = subprocess.run(cmd, input=strip_launch_config(source), capture_output=True, text=True, timeout=timeout)
    if done.returncode == 0:
        return []
    lines = done.stderr.replace("<stdin>", filename).splitlines()
    return [ln for ln in lines if ln.strip()] or [f"{filename}: g++ exited with {done.returncode}"]
