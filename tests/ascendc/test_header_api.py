"""The declaration header and the Python API cannot drift: every Ascend C name `ascend_sim` exports is declared in
ascend_sim/ascendc/include (parsed with libclang), with the same methods, the same enum members and, for every
parameter struct, the dataclass's fields in the dataclass's order (the front end brace-initialises by that order).
"""
from __future__ import annotations

import dataclasses
import enum

import pytest

import ascend_sim
from ascend_sim.ascendc.syntax import INCLUDE_DIR, compiler_include_args

cindex = pytest.importorskip("clang.cindex", reason="libclang (the PyPI wheel `libclang`) is not installed")

# Python-only names of `ascend_sim.__all__`, each with the reason it has no C++ declaration.
PYTHON_ONLY = {
    **dict.fromkeys(
        ["AlignmentError", "ArgumentError", "CapacityError", "CubeFormatError", "DeadlockError", "DtypeError",
         "GMWriteConflictError", "KernelError", "LaunchError", "OutOfBoundsError", "PositionError", "QueueError",
         "RaceError", "SyncError", "TilingError", "UninitializedReadError"],
        "a sanitizer error the simulator raises (what msSanitizer reports on a device), not an Ascend C name"),
    **dict.fromkeys(["Ascend310B", "Ascend910", "Ascend910B", "ChipProfile", "get_chip"],
                    "a simulated chip profile; C++ picks the chip at build time (--npu-arch / soc version)"),
    **dict.fromkeys(["Kernel", "kernel", "launch", "LaunchResult", "Profile", "Trace"],
                    "the Python launch machinery; C++ writes __global__ kernels and <<<>>> launches"),
    "GmPtr": "the Python form of a `__gm__ T*` pointer (pointer arithmetic in elements)",
    "TemplateSpace": "what ASCENDC_TPL_* return in Python; in C++ they are macros read by the host tooling",
}
# Python names whose C++ spelling differs: a dtype object in Python, a type in C++.
CXX_SPELLING = {"float32": "float", "bfloat16": "bfloat16_t", "int8": "int8_t", "int16": "int16_t",
                "int32": "int32_t", "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t"}
BUILTIN_TYPES = {"float"}
# Python classes whose public CamelCase methods must be declared on the C++ class of the same name.
CLASSES = ["TPipe", "TQue", "TQueBind", "TBuf", "LocalTensor", "GlobalTensor", "LocalMemAllocator", "Matmul"]
HEADER_SOURCE = '#include "kernel_operator.h"\n#include "tiling/tiling_api.h"\n#include "acl/acl.h"\n'


class Declarations:
    """What one translation unit over our headers declares: names, class members, fields and enumerators."""

    def __init__(self, overrides: dict[str, str] | None = None):
        files = [("api_probe.cpp", HEADER_SOURCE)]
        files += [(str(INCLUDE_DIR / name), text) for name, text in (overrides or {}).items()]
        tu = cindex.Index.create().parse(
            "api_probe.cpp", args=["-std=c++17", "-x", "c++", f"-I{INCLUDE_DIR}", *compiler_include_args()], unsaved_files=files,
            options=cindex.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
        self.errors = [str(d) for d in tu.diagnostics if d.severity >= cindex.Diagnostic.Error]
        self.ours: set[str] = set()          # names declared (or #defined) in our include/ files
        self.anywhere: set[str] = set()      # names declared in the translation unit (system headers too)
        self.members: dict[str, set[str]] = {}
        self.bases: dict[str, list[str]] = {}
        self.fields: dict[str, list[str]] = {}
        self.enumerators: dict[str, list[str]] = {}
        self.tokens: dict[str, list[str]] = {}
        self.aliases: dict[str, str] = {}    # `using QuePosition = TPosition;` -> QuePosition: TPosition
        self._walk(tu.cursor)

    def _walk(self, cursor) -> None:
        K = cindex.CursorKind
        for c in cursor.get_children():
            name = c.spelling
            if not name:
                self._walk(c)
                continue
            self.anywhere.add(name)
            f = c.location.file
            ours = f is not None and str(INCLUDE_DIR) in str(f.name)
            if ours:
                self.ours.add(name)
            if c.kind in (K.CLASS_DECL, K.STRUCT_DECL, K.CLASS_TEMPLATE) and ours:
                kids = list(c.get_children())
                self.members.setdefault(name, set()).update(
                    k.spelling for k in kids if k.kind in (K.CXX_METHOD, K.FUNCTION_TEMPLATE))
                self.fields.setdefault(name, [k.spelling for k in kids if k.kind == K.FIELD_DECL])
                self.bases.setdefault(name, [k.type.spelling.split("<")[0].split("::")[-1]
                                             for k in kids if k.kind == K.CXX_BASE_SPECIFIER])
                for k in kids:      # static members of a class template (MatmulType::pos ...) and type aliases
                    if k.kind in (K.VAR_DECL, K.TYPE_ALIAS_DECL, K.TYPEDEF_DECL):
                        self.members[name].add(k.spelling)
            if c.kind == K.ENUM_DECL and ours:
                self.enumerators.setdefault(name, [k.spelling for k in c.get_children()])  # AscendC first
            if c.kind == K.TYPE_ALIAS_DECL and ours:
                self.aliases[name] = c.underlying_typedef_type.spelling.split("::")[-1]
            if c.kind == K.VAR_DECL and ours:
                self.tokens[name] = [t.spelling for t in c.get_tokens()]
            if c.kind in (K.NAMESPACE, K.LINKAGE_SPEC, K.ENUM_DECL):
                self._walk(c)

    def methods(self, cls: str) -> set[str]:
        out = set(self.members.get(cls, set()))
        for base in self.bases.get(cls, []):
            out |= self.methods(base)
        return out

    def all_fields(self, cls: str) -> list[str]:
        out = []
        for base in self.bases.get(cls, []):
            out += self.all_fields(base)
        return out + self.fields.get(cls, [])


@pytest.fixture(scope="module")
def decl() -> Declarations:
    d = Declarations()
    assert not d.errors, "libclang cannot parse our headers:\n" + "\n".join(d.errors)
    return d


def missing_names(d: Declarations) -> list[str]:
    out = []
    for name in ascend_sim.__all__:
        if name in PYTHON_ONLY:
            continue
        cxx = CXX_SPELLING.get(name, name)
        known = cxx in BUILTIN_TYPES or cxx in d.ours or (name in CXX_SPELLING and cxx in d.anywhere)
        if not known:
            out.append(name if cxx == name else f"{name} (C++ {cxx})")
    return out


def missing_methods(d: Declarations) -> list[str]:
    out = []
    for cls in CLASSES:
        py = {m for m in dir(getattr(ascend_sim, cls)) if m[:1].isupper() and callable(getattr(getattr(ascend_sim, cls), m))}
        out += [f"{cls}::{m}" for m in sorted(py - d.methods(cls))]
    tiling = ascend_sim.matmul_tiling.MultiCoreMatmulTiling
    py = {m for m in dir(tiling) if m[:1].isupper() and callable(getattr(tiling, m))}
    out += [f"matmul_tiling::MultiCoreMatmulTiling::{m}" for m in sorted(py - d.methods("MultiCoreMatmulTiling"))]
    return out


def field_mismatches(d: Declarations) -> list[str]:
    out = []
    for name in ascend_sim.__all__:
        obj = getattr(ascend_sim, name)
        if name in PYTHON_ONLY or not (isinstance(obj, type) and dataclasses.is_dataclass(obj)):
            continue
        py = [f.name for f in dataclasses.fields(obj)]
        if name == "MatmulType":   # a class template: its parameters are read back as static members
            cxx_has = d.methods("MatmulType")
            miss = [f for f in py if {"dtype": "T"}.get(f, f) not in cxx_has]
            out += [f"MatmulType lacks {miss}"] if miss else []
            continue
        cxx = d.all_fields(name)
        if cxx != py:
            out.append(f"{name}: header {cxx} != dataclass {py}")
    mmad = ["m", "n", "k", *ascend_sim.MmadParams._SIX]       # the brace form {m, n, k, unitFlag, ...}
    if d.all_fields("MmadParams")[:len(mmad)] != mmad:
        out.append(f"MmadParams: header {d.all_fields('MmadParams')} does not start with {mmad}")
    return out


def enum_mismatches(d: Declarations) -> list[str]:
    out = []
    for name in ascend_sim.__all__:
        obj = getattr(ascend_sim, name)
        if isinstance(obj, type) and issubclass(obj, enum.Enum):
            members = d.enumerators.get(name) or d.enumerators.get(d.aliases.get(name, ""), [])
            miss = [m.name for m in obj if m.name not in members]
            if miss:
                out.append(f"{name} lacks {miss}")
    return out


def config_mismatches(d: Declarations) -> list[str]:
    """constexpr struct constants (CFG_NORM, CFG_MDL ...) hold the values of the Python constants."""
    out = []
    for name in ascend_sim.__all__:
        obj = getattr(ascend_sim, name)
        if not dataclasses.is_dataclass(obj) or isinstance(obj, type) or name not in d.tokens:
            continue
        toks = d.tokens[name]
        body = toks[toks.index("{") + 1:toks.index("}")]
        values = [t for t in body if t != ","]
        want = [str(v).lower() if isinstance(v, bool) else str(getattr(v, "name", v))
                for v in dataclasses.astuple(obj)]
        got = [v for v in values if v not in ("::",) and v not in {type(x).__name__ for x in dataclasses.astuple(obj)}]
        if got != want:
            out.append(f"{name}: header {got} != Python {want}")
    return out


def test_every_exported_name_is_declared(decl):
    assert not missing_names(decl), f"declare these in ascend_sim/ascendc/include: {missing_names(decl)}"


def test_python_only_names_are_still_exported():
    stale = sorted(set(PYTHON_ONLY) - set(ascend_sim.__all__))
    assert not stale, f"PYTHON_ONLY lists names ascend_sim no longer exports: {stale}"


def test_every_method_is_declared(decl):
    assert not missing_methods(decl), missing_methods(decl)


def test_struct_fields_follow_the_dataclasses(decl):
    assert not field_mismatches(decl), "\n".join(field_mismatches(decl))


def test_enums_have_the_python_members(decl):
    assert not enum_mismatches(decl), "\n".join(enum_mismatches(decl))


def test_config_constants_hold_the_python_values(decl):
    assert {"CFG_NORM", "CFG_MDL", "MM_CFG_BB", "CFG_NZ"} <= set(decl.tokens)
    assert not config_mismatches(decl), "\n".join(config_mismatches(decl))


# ------------------------------------------------------------------ the checks fail on a drifted header
def _drifted(old: str, new: str) -> Declarations:
    text = (INCLUDE_DIR / "kernel_operator.h").read_text(encoding="utf-8")
    assert old in text, f"{old!r} is no longer in kernel_operator.h"
    return Declarations({"kernel_operator.h": text.replace(old, new, 1)})


def test_a_missing_declaration_is_reported():
    d = _drifted("__aicore__ inline void Brcb(", "__aicore__ inline void Brcbx(")
    assert "Brcb" in missing_names(d)


def test_a_missing_method_is_reported():
    d = _drifted("__aicore__ inline void SetL2CacheHint(", "__aicore__ inline void SetL2Hint(")
    assert "GlobalTensor::SetL2CacheHint" in missing_methods(d)


def test_swapped_fields_are_reported():
    d = _drifted("    uint16_t srcStride = 0;\n    uint16_t dstStride = 0;\n",
                 "    uint16_t dstStride = 0;\n    uint16_t srcStride = 0;\n")
    assert any(m.startswith("DataCopyParams:") for m in field_mismatches(d))


def test_a_missing_enumerator_is_reported():
    d = _drifted("MTE2_FIX\n", "\n")
    assert "HardEvent lacks ['MTE2_FIX']" in enum_mismatches(d)


def test_a_wrong_config_value_is_reported():
    d = _drifted("CFG_MDL = {false, false, true,", "CFG_MDL = {false, false, false,")
    assert any(m.startswith("CFG_MDL:") for m in config_mismatches(d))
