"""What ascend_sim's declaration headers declare, read with libclang: names, class members, struct fields, enum
members, and the C++ spelling of each name for docs/api_mapping.md.

The failure this exists to prevent: the header and the Python API drifting apart (a struct whose fields are in
another order than the dataclass the front end brace-initialises, a method the Python class has and the header
lacks). tests/ascendc/test_header_api.py compares the two through ``Declarations``; scripts/api_coverage.py writes
``spellings()`` into the C++ column of the API mapping.
"""
from __future__ import annotations

from pathlib import Path

from ascend_sim.ascendc.syntax import INCLUDE_DIR, compiler_include_args

ALL_HEADERS = ("kernel_operator.h", "tiling/tiling_api.h", "acl/acl.h")

# Names of ``ascend_sim.__all__`` with no C++ declaration, each with the reason.
PYTHON_ONLY = {
    **dict.fromkeys(
        ["AlignmentError", "ArgumentError", "CapacityError", "CubeFormatError", "DeadlockError", "DtypeError",
         "GMWriteConflictError", "KernelError", "LaunchError", "OutOfBoundsError", "PositionError", "QueueError",
         "RaceError", "SyncError", "TilingError", "UninitializedReadError"],
        "a sanitizer error the simulator raises (what msSanitizer reports on a device), not an Ascend C name"),
    "SanitizerWarning": "a sanitizer finding the simulator issues as a Python warning (a broken rule these inputs "
                        "hide), not an Ascend C name",
    **dict.fromkeys(["Ascend310B", "Ascend910", "Ascend910B", "ChipProfile", "get_chip"],
                    "a simulated chip profile; C++ picks the chip at build time (--npu-arch / soc version)"),
    **dict.fromkeys(["Kernel", "kernel", "launch", "LaunchResult", "Profile", "Trace"],
                    "the Python launch machinery; C++ writes __global__ kernels and <<<>>> launches"),
    "GmPtr": "the Python form of a `__gm__ T*` pointer (pointer arithmetic in elements)",
    "TemplateSpace": "what ASCENDC_TPL_* return in Python; in C++ the module's tiling_space (from its ASCENDC_TPL_* tables)",
}
# Names whose C++ spelling differs: a dtype object in Python, a type in C++.
CXX_SPELLING = {"float32": "float", "bfloat16": "bfloat16_t", "int8": "int8_t", "int16": "int16_t",
                "int32": "int32_t", "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t"}


class Declarations:
    """One libclang translation unit over our headers: what they declare, by unqualified name.

    ``overrides`` maps a header's path under include/ to replacement text (to check that a drifted header is
    caught). Names declared twice (AscendC::TPosition and matmul_tiling::TPosition) keep the first one seen,
    which is kernel_operator.h's.
    """

    def __init__(self, headers: tuple[str, ...] = ALL_HEADERS, overrides: dict[str, str] | None = None):
        from clang import cindex

        self._K = cindex.CursorKind
        probe = "".join(f'#include "{h}"\n' for h in headers)
        files = [("ascend_sim_probe.cpp", probe)]
        files += [(str(INCLUDE_DIR / name), text) for name, text in (overrides or {}).items()]
        tu = cindex.Index.create().parse(
            "ascend_sim_probe.cpp", args=["-std=c++17", "-x", "c++", f"-I{INCLUDE_DIR}", *compiler_include_args()],
            unsaved_files=files, options=cindex.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
        self.errors = [str(d) for d in tu.diagnostics if d.severity >= cindex.Diagnostic.Error]
        self.ours: set[str] = set()                    # declared or #defined in include/
        self.anywhere: set[str] = set()                # declared in the translation unit, system headers too
        self.members: dict[str, set[str]] = {}         # class -> methods, static members, type aliases
        self.bases: dict[str, list[str]] = {}
        self.fields: dict[str, list[str]] = {}         # struct -> data members in order
        self.enumerators: dict[str, list[str]] = {}
        self.tokens: dict[str, list[str]] = {}         # variable -> its declaration's tokens
        self.aliases: dict[str, str] = {}              # `using QuePosition = TPosition;`
        self.cursors: dict[str, list] = {}             # name -> its declarations in include/ (overloads)
        self.constructed: set[str] = set()             # classes with a user-declared constructor
        self._walk(tu.cursor)

    def _walk(self, cursor) -> None:
        K = self._K
        for c in cursor.get_children():
            name = c.spelling
            if not name:
                self._walk(c)
                continue
            self.anywhere.add(name)
            f = c.location.file
            ours = f is not None and Path(f.name).resolve().is_relative_to(INCLUDE_DIR)
            if ours:
                self.ours.add(name)
                if c.kind != K.MACRO_INSTANTIATION:
                    self.cursors.setdefault(name, []).append(c)
            if ours and c.kind in (K.CLASS_DECL, K.STRUCT_DECL, K.CLASS_TEMPLATE) and name not in self.fields:
                kids = list(c.get_children())
                self.members[name] = {k.spelling for k in kids if k.kind in (
                    K.CXX_METHOD, K.FUNCTION_TEMPLATE, K.VAR_DECL, K.TYPE_ALIAS_DECL, K.TYPEDEF_DECL)}
                self.fields[name] = [k.spelling for k in kids if k.kind == K.FIELD_DECL]
                if any(k.kind == K.CONSTRUCTOR for k in kids):
                    self.constructed.add(name)
                for k in kids:                         # methods by name, for the spelling of `pipe.InitBuffer(...)`
                    if k.kind in (K.CXX_METHOD, K.FUNCTION_TEMPLATE) and k.access_specifier.name == "PUBLIC":
                        self.cursors.setdefault(k.spelling, []).append(k)
                self.bases[name] = [k.type.spelling.split("<")[0].split("::")[-1]
                                    for k in kids if k.kind == K.CXX_BASE_SPECIFIER]
            if ours and c.kind == K.ENUM_DECL:
                self.enumerators.setdefault(name, [k.spelling for k in c.get_children()])
            if ours and c.kind == K.TYPE_ALIAS_DECL:
                self.aliases.setdefault(name, c.underlying_typedef_type.spelling.split("::")[-1])
            if ours and c.kind == K.TYPE_ALIAS_TEMPLATE_DECL:     # template <class T> using FixpipeParams = ...
                for k in c.get_children():
                    if k.kind == K.TYPE_ALIAS_DECL:
                        self.aliases.setdefault(name, k.underlying_typedef_type.spelling.split("::")[-1])
            if ours and c.kind == K.VAR_DECL:
                self.tokens.setdefault(name, [t.spelling for t in c.get_tokens()])
            if c.kind in (K.NAMESPACE, K.LINKAGE_SPEC, K.ENUM_DECL):
                self._walk(c)

    def methods(self, cls: str) -> set[str]:
        """Methods and static members of ``cls``, its base classes' included."""
        out = set(self.members.get(cls, set()))
        for base in self.bases.get(cls, []):
            out |= self.methods(base)
        return out

    def all_fields(self, cls: str) -> list[str]:
        """Data members of ``cls`` in declaration order, its base classes' first."""
        if cls not in self.fields and cls in self.aliases:
            return self.all_fields(self.aliases[cls])
        out = []
        for base in self.bases.get(cls, []):
            out += self.all_fields(base)
        return out + self.fields.get(cls, [])

    def spelling(self, name: str, forms_max: int = 3) -> str:
        """How a kernel writes ``name`` in C++: template parameters and arguments by name, one form per overload
        shape (at most ``forms_max``), e.g. ``SetFlag<event>(eventID)`` or ``DataCopyParams{blockCount, ...}``."""
        K = self._K
        name = CXX_SPELLING.get(name, name)
        if name in self.aliases and self.aliases[name] in self.enumerators:
            return f"{name}::{self.enumerators[self.aliases[name]][0]}"
        forms: list[str] = []
        for c in self.cursors.get(name, []):
            form = None
            if c.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE, K.CXX_METHOD):
                form = f"{name}{_template_params(c, K)}({', '.join(a.spelling for a in _params(c, K))})"
            elif c.kind in (K.STRUCT_DECL, K.CLASS_DECL, K.CLASS_TEMPLATE):
                fields = self.all_fields(name)
                brace = "{" + ", ".join(fields) + "}" if fields and name not in self.constructed else ""
                form = f"{name}{_template_params(c, K)}{brace}"
            elif c.kind == K.ENUM_DECL:
                members = self.enumerators.get(name, [])
                scoped = c.is_scoped_enum()
                form = f"{name}::{members[0]}" if scoped and members else f"{members[0]}" if members else name
            elif c.kind == K.MACRO_DEFINITION:
                tokens = list(c.get_tokens())
                toks = [t.spelling for t in tokens]
                function_like = len(toks) > 1 and toks[1] == "(" and \
                    tokens[0].extent.end.offset == tokens[1].extent.start.offset    # NAME( with no space
                args = ", ".join(t for t in toks[2:toks.index(")")] if t != ",") if function_like else None
                form = name if args is None else f"{name}({args})"
            elif c.kind == K.TYPE_ALIAS_TEMPLATE_DECL:       # FixpipeParams<T>: the target struct's fields
                fields = self.all_fields(name)
                form = f"{name}{_template_params(c, K)}" + ("{" + ", ".join(fields) + "}" if fields else "")
            elif c.kind == K.NAMESPACE:
                form = f"namespace {name}"
            elif c.kind in (K.VAR_DECL, K.TYPE_ALIAS_DECL, K.TYPEDEF_DECL, K.ENUM_CONSTANT_DECL):
                form = name
            if form and form not in forms:
                forms.append(form)
        if not forms and name in self.anywhere | {"float"}:
            forms.append(name)                     # a C++ type of the standard headers (int8_t) or a builtin
        return "; ".join(forms[:forms_max]) + (" ..." if len(forms) > forms_max else "")


def _template_params(c, K) -> str:
    names = [k.spelling for k in c.get_children()
             if k.kind in (K.TEMPLATE_TYPE_PARAMETER, K.TEMPLATE_NON_TYPE_PARAMETER, K.TEMPLATE_TEMPLATE_PARAMETER)]
    return f"<{', '.join(names)}>" if names else ""


def _params(c, K) -> list:
    return [k for k in c.get_children() if k.kind == K.PARM_DECL]
