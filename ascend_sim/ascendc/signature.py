"""The launch signature of the ``__global__`` kernels of a C++ file, read with libclang (no text matching).

``ascend-sim export`` needs, per kernel: its template parameters, each parameter as a GM buffer (``__gm__ T*``
or ``GM_ADDR``), a scalar or a struct passed by value (the tiling struct), and the fields of the file's
structs. Cursors give the declarations; the file's token stream gives what the preprocessor erased
(``__global__``, ``__vector__``, ``__gm__``, ``GM_ADDR``), so the header is not needed to read a signature.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Param", "KernelSignature", "read_kernels", "local_includes", "PARSE_ARGS"]

#: The CPU-twin trick: Ascend C's keywords defined empty so clang parses a kernel as host C++.
PARSE_ARGS = ("-std=c++17", "-x", "c++", "-D__global__=", "-D__aicore__=", "-D__gm__=", "-D__vector__=",
              "-D__cube__=", "-D__mix__(a,b)=", "-DGM_ADDR=uint8_t*", "-include", "cstdint")

_QUALIFIERS = ("__vector__", "__cube__", "__mix__", "__aicore__")


@dataclass
class Param:
    """One kernel parameter: ``kind`` is "gm" (a GM buffer), "scalar" or "struct" (passed by value)."""

    name: str
    kind: str
    ctype: str              # element type of a GM buffer ("" for GM_ADDR), else the declared type
    gm_addr: bool = False   # declared GM_ADDR (bytes: its element type comes from the export spec)


@dataclass
class KernelSignature:
    """A ``__global__`` function: name, core qualifier, template parameters, parameters, the file's structs."""

    name: str
    qualifier: str                                      # "__vector__", "__cube__", "__mix__" or "__aicore__"
    extern_c: bool
    template_params: list = field(default_factory=list)     # [(name, "typename" or the value's C++ type)]
    params: list = field(default_factory=list)              # [Param]
    structs: dict = field(default_factory=dict)             # struct name -> [(field, C++ type)]
    line: int = 0
    tiling_struct: str | None = None    # REGISTER_TILING_DEFAULT(S) / GET_TILING_DATA_WITH_STRUCT(S, ...) in the body
    tiling_param: str | None = None     # the GM_ADDR that GET_TILING_DATA(name, ptr) reads

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)


def _index():
    import clang.cindex as ci
    return ci, ci.Index.create()


def _params(tokens: list) -> list[list[str]]:
    """The tokens of each parameter between the function name's ``(`` and its ``)``."""
    depth, cur, out = 0, [], []
    for t in tokens:
        if t in "([<{":
            depth += 1
            if depth == 1 and t == "(":
                continue
        elif t in ")]>}":
            depth -= 1
            if depth == 0:
                break
        if depth == 1 and t == ",":
            out.append(cur)
            cur = []
        else:
            cur.append(t)
    return [p for p in out + [cur] if p and p != ["void"]]


def _param(tokens: list[str], struct_names: set[str]) -> Param:
    name = tokens[-1]
    words = [t for t in tokens[:-1] if t not in ("const", "volatile", "__restrict__", "&")]
    if words == ["GM_ADDR"]:
        return Param(name, "gm", "", gm_addr=True)
    if "*" in words:
        return Param(name, "gm", " ".join(t for t in words if t not in ("__gm__", "*")))
    ctype = " ".join(words)
    return Param(name, "struct" if ctype in struct_names else "scalar", ctype)


def _body_tiling(tokens: list[str]) -> tuple[str | None, str | None]:
    """(tiling struct, GM_ADDR parameter) named by the tiling macros in a kernel's body tokens."""
    struct = param = None
    for i, t in enumerate(tokens[:-2]):
        if tokens[i + 1] != "(":
            continue
        args = _params(tokens[i + 1:])
        if t == "REGISTER_TILING_DEFAULT" and args:
            struct = args[0][-1]
        elif t == "GET_TILING_DATA_WITH_STRUCT" and len(args) == 3:
            struct, param = args[0][-1], args[2][-1]
        elif t == "GET_TILING_DATA" and len(args) == 2:
            param = args[1][-1]
    return struct, param


def _body(tokens: list[str]) -> list[str]:
    """The tokens of the function body that follows (from its ``{`` to the matching ``}``)."""
    start = tokens.index("{") if "{" in tokens else len(tokens)
    depth = 0
    for j in range(start, len(tokens)):
        depth += {"{": 1, "}": -1}.get(tokens[j], 0)
        if depth == 0:
            return tokens[start:j + 1]
    return tokens[start:]


def local_includes(path: str | Path, include_dirs: tuple = ()) -> list[Path]:
    """The files ``path`` includes from its own folder (a kernel's tiling header), to ship beside it."""
    ci, index = _index()
    path = Path(path).resolve()
    tu = index.parse(str(path), args=[*PARSE_ARGS, *(f"-I{d}" for d in include_dirs)],
                     options=ci.TranslationUnit.PARSE_INCOMPLETE | ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES)
    found = {Path(i.include.name).resolve() for i in tu.get_includes() if i.include is not None}
    return sorted(f for f in found if path.parent in f.parents and f != path)


def read_kernels(path: str | Path, include_dirs: tuple = ()) -> list[KernelSignature]:
    """Every ``__global__`` kernel defined in ``path``, in file order."""
    ci, index = _index()
    path = str(Path(path).resolve())
    args = [*PARSE_ARGS, *(f"-I{d}" for d in include_dirs)]
    tu = index.parse(path, args=args, options=ci.TranslationUnit.PARSE_INCOMPLETE
                     | ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES)
    toks = [(t.location.offset, t.spelling) for t in tu.get_tokens(extent=tu.cursor.extent)
            if t.location.file and t.location.file.name == path]
    offsets = [o for o, _ in toks]
    structs: dict[str, list] = {}
    functions = []
    folder = Path(path).parent

    def visit(cursor) -> None:
        for c in cursor.get_children():
            if not (c.location.file and Path(c.location.file.name).resolve().parent == folder):
                continue
            if c.location.file.name != path and c.kind not in (ci.CursorKind.STRUCT_DECL, ci.CursorKind.CLASS_DECL,
                                                                ci.CursorKind.NAMESPACE):
                continue
            if c.kind in (ci.CursorKind.LINKAGE_SPEC, ci.CursorKind.NAMESPACE):
                visit(c)
            elif c.kind in (ci.CursorKind.STRUCT_DECL, ci.CursorKind.CLASS_DECL) and c.is_definition():
                structs[c.spelling] = [(f.spelling, " ".join(t.spelling for t in f.get_tokens()
                                                             if t.spelling != f.spelling) or f.type.spelling)
                                       for f in c.get_children() if f.kind == ci.CursorKind.FIELD_DECL]
            elif c.kind in (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.FUNCTION_TEMPLATE):   # bodies skipped
                functions.append(c)
    visit(tu.cursor)

    out = []
    for c in functions:
        at = offsets.index(c.location.offset) if c.location.offset in offsets else None
        if at is None:
            continue
        start = at
        while start > 0 and toks[start - 1][1] not in (";", "}", "{"):
            start -= 1
        before = [s for _, s in toks[start:at]]
        if "__global__" not in before:
            continue
        qualifier = next((q for q in _QUALIFIERS if q in before), "__aicore__")
        tparams = [(t.spelling, "typename" if t.kind == ci.CursorKind.TEMPLATE_TYPE_PARAMETER else
                    " ".join(x.spelling for x in t.get_tokens() if x.spelling != t.spelling))
                   for t in c.get_children() if t.kind in (ci.CursorKind.TEMPLATE_TYPE_PARAMETER,
                                                           ci.CursorKind.TEMPLATE_NON_TYPE_PARAMETER)]
        after = [s for _, s in toks[at + 1:]]
        params = [_param(p, set(structs)) for p in _params(after)]
        struct, tiling = _body_tiling(_body(after))
        out = [k for k in out if k.name != c.spelling]     # a prototype and its definition: keep one
        out.append(KernelSignature(c.spelling, qualifier, "extern" in before, tparams, params, dict(structs),
                                   c.location.line, struct, tiling))
    return out


def todo_lines(path: str | Path, include_dirs: tuple = ()) -> list[int]:
    """The lines of ``path`` that still use ``ASCEND_SIM_TODO`` (an exercise stub's simulator-only placeholder)."""
    ci, index = _index()
    path = str(Path(path).resolve())
    tu = index.parse(path, args=[*PARSE_ARGS, *(f"-I{d}" for d in include_dirs)],
                     options=ci.TranslationUnit.PARSE_INCOMPLETE | ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES)
    return [t.location.line for t in tu.get_tokens(extent=tu.cursor.extent)
            if t.spelling == "ASCEND_SIM_TODO" and t.location.file and t.location.file.name == path]
