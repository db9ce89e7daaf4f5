"""Code inside messages, spelled in the learner's language: Python or C++.

The failure it prevents: a learner who wrote the kernel in C++ fails a check and reads a hint or a ``Fix:`` in
Python (``SetFlag(HardEvent.MTE2_V, id)``, ``que.AllocTensor(half)``, ``range(n)``) that does not compile in the
cell in front of them.

Hints (course/grading/hints.py and the labs' tables), ``Fix:`` texts and rule messages (``KernelError``) mark each
code span with guillemets, written in the Python spelling::

    "or put «SetFlag(HardEvent.MTE2_V, id)» after it"          # translated: SetFlag<HardEvent::MTE2_V>(id)
    "«DataCopyPadExtParams(False, 0, 0, 0)|DataCopyPadExtParams<half>{false, 0, 0, 0}»"   # both spellings

``render(text, PYTHON)`` drops the marks (so the Python text is byte for byte the text without them);
``render(text, CPP)`` replaces each span by its C++ spelling: the part after ``|`` when the text gives one (for
what is not a mechanical translation: a template argument Python does not write, keyword arguments), otherwise
``to_cpp`` of the Python spelling. A span's Python part must not contain ``|``; text outside the marks is prose
and never changed. Which language a message speaks is the learner's: the file of the kernel line an error names
(``language_of_file``: the C++ front end registers the files it compiles) or the answer a check ran
(``language_of``).
"""
from __future__ import annotations

import inspect
import re

__all__ = ["PYTHON", "CPP", "LANGUAGES", "OPEN", "CLOSE", "ALT", "PYTHON_ONLY", "render", "to_cpp",
           "register_cpp_file", "language_of_file", "language_of"]

PYTHON, CPP = "python", "cpp"
LANGUAGES = (PYTHON, CPP)
OPEN, CLOSE, ALT = "«", "»", "|"
_SPAN = re.compile(f"{OPEN}([^{OPEN}{CLOSE}]*){CLOSE}")

_CPP_FILES: set[str] = set()
_CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".asc", ".h", ".hpp", ".cce")


def register_cpp_file(filename: str) -> None:
    """Code compiled under ``filename`` came from C++ (the front end calls this for each translation unit)."""
    _CPP_FILES.add(filename)


def language_of_file(filename: str | None) -> str:
    """CPP for a C++ source the front end compiled (or a C++ file name), else PYTHON."""
    if not filename:
        return PYTHON
    return CPP if filename in _CPP_FILES or filename.endswith(_CPP_SUFFIXES) else PYTHON


def language_of(obj) -> str:
    """The language an object was written in: a kernel's ``source_language`` (CPP for a C++ kernel), a function's
    file's (CPP for a C++ host function the front end compiled), else PYTHON."""
    lang = getattr(type(obj), "source_language", PYTHON)     # the class's: no instance __getattr__ runs
    if lang == PYTHON and inspect.isfunction(obj):
        return language_of_file(obj.__code__.co_filename)
    return lang if lang in LANGUAGES else PYTHON


def render(text: str, language: str = PYTHON) -> str:
    """``text`` with each «code» span in ``language``'s spelling and the marks removed."""
    if OPEN not in text:
        return text
    cpp = language == CPP

    def one(m: re.Match) -> str:
        py, sep, alt = m.group(1).partition(ALT)
        if not cpp:
            return py
        return alt if sep else to_cpp(py)
    return _SPAN.sub(one, text)


# ----------------------------------------------------------------------------- the translator
#: the Python API's dtype objects -> the C++ element type
DTYPES = {"half": "half", "float16": "half", "float32": "float", "float": "float", "bfloat16": "bfloat16_t",
          "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t", "uint8": "uint8_t",
          "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t", "bool_": "bool"}
#: enums whose members C++ scopes with ``::`` (``HardEvent.MTE2_V`` -> ``HardEvent::MTE2_V``)
SCOPED_ENUMS = ("HardEvent", "TPosition", "QuePosition", "Hardware", "RoundMode", "CubeFormat", "TBufType",
                "LayoutMode", "ReduceMode", "CMPMODE", "SELMODE", "QuantMode_t")
#: calls whose first argument is a template argument in C++ (``SetFlag(e, id)`` -> ``SetFlag<e>(id)``)
TEMPLATE_FIRST = ("SetFlag/WaitFlag", "SetFlag", "WaitFlag", "PipeBarrier", "CrossCoreSetFlag",
                  "CrossCoreWaitFlag", "FetchEventID", "AllocEventID", "ReleaseEventID")
#: calls whose argument is an element type, a template argument in C++ (``que.AllocTensor(half)`` ->
#: ``que.AllocTensor<half>()``)
DTYPE_CALLS = ("AllocTensor", "DeQue", "Get", "ReinterpretCast", "GetWithOffset")
#: Python constructors of class templates (``TQue(pos, 2)`` -> ``TQue<pos, 2>``)
CLASS_TEMPLATES = ("TQueBind", "TQue", "TBuf", "GlobalTensor", "LocalTensor", "MatmulType", "Matmul")
#: the parameter structs (``MmadParams``, ``FixpipeParamsV220``, ...): aggregates, brace-initialised in C++
#: (``MmadParams(M, N, K, 0, False, True)`` -> ``MmadParams{M, N, K, 0, false, true}``; parentheses do not
#: initialise an aggregate in C++17)
PARAM_STRUCT = re.compile(r"(?<![\w/])([A-Z]\w*Params(?:V\d+)?)\(")
#: parameter structs that are class templates of the element type (``DataCopyPadExtParams<T>{...}``)
TEMPLATE_PARAM_STRUCTS = ("DataCopyPadExtParams", "DataCopyPadParams")
#: the decorator of a kernel -> its C++ qualifiers
KERNEL_QUALIFIERS = {"": 'extern "C" __global__ __aicore__', "AIV": 'extern "C" __global__ __aicore__',
                     "AIC": "__global__ __cube__", "MIX": "__global__ __mix__(1, 2)"}

#: spellings only Python has, which a text rendered for a C++ learner must not contain (the tests check hints and
#: Fix texts with it): the enums' dots, range and comprehensions, a dtype argument, floor division, the decorator,
#: Python's constants, self., keyword arguments in a call, and a parameter struct in parentheses (an aggregate
#: takes braces in C++17)
PYTHON_ONLY = re.compile(rf"\b({'|'.join(SCOPED_ENUMS)})\.|\brange\(|\bfor \w+ in\b|\((half|float16|float32|int32)\)|"
                         r" // |@kernel|\bTrue\b|\bFalse\b|\bNone\b|\bself\.|[(,]\s*[a-z]\w*=(?!=)|\w+Params(V\d+)?\(")

_WORDS = [(re.compile(r"\bTrue\b"), "true"), (re.compile(r"\bFalse\b"), "false"), (re.compile(r"\bNone\b"), "nullptr"),
          (re.compile(r" and "), " && "), (re.compile(r" or "), " || "), (re.compile(r"\bnot "), "!"),
          (re.compile(r"//"), "/"), (re.compile(r"\bself\."), "")]
_ENUM = re.compile(rf"\b({'|'.join(SCOPED_ENUMS)})\.(\w+)")
_DECORATOR = re.compile(r"""@kernel(?:\(\s*core\s*=\s*['"](\w+)['"]\s*\))?""")
_SUBSCRIPTED = re.compile(rf"\b({'|'.join(CLASS_TEMPLATES)})\[(\w+)\]")     # LocalTensor[half]: LocalTensor<half>
_FOR = re.compile(r"\bfor\s+(\w+)\s+in\s+range\(")
_RANGE = re.compile(r"(?<![\w.])range\(")


def to_cpp(code: str) -> str:
    """The C++ spelling of a Python spelling of Ascend C code (one expression, call, statement or loop head).

    ``SetFlag(HardEvent.MTE2_V, id)`` -> ``SetFlag<HardEvent::MTE2_V>(id)``, ``que.DeQue(half)`` ->
    ``que.DeQue<half>()``, ``que.DeQue()`` -> ``que.DeQue<T>()``, ``TQue(TPosition.VECIN, 2)`` ->
    ``TQue<TPosition::VECIN, 2>``, ``for i in range(n)`` -> ``for (uint32_t i = 0; i < n; ++i)``, ``a // b`` -> ``a / b``, ``True`` -> ``true``, ``self.x`` -> ``x``,
    ``@kernel(core='AIC')`` -> ``__global__ __cube__``, ``min(a, b)`` -> ``(a < b ? a : b)``,
    ``BinaryRepeatParams(1, 2, 2, 8, 16, 16)`` -> ``BinaryRepeatParams{1, 2, 2, 8, 16, 16}`` (a struct with keyword
    arguments is left alone: give its C++ after ``|``). Anything else is the same in both languages.
    """
    code = _DECORATOR.sub(lambda m: KERNEL_QUALIFIERS.get(m.group(1) or "", m.group(0)), code)
    code = _ENUM.sub(r"\1::\2", code)
    for pattern, repl in _WORDS:
        code = pattern.sub(repl, code)
    code = _calls(code, TEMPLATE_FIRST, _template_first)
    code = _calls(code, DTYPE_CALLS, _dtype_call)
    code = _SUBSCRIPTED.sub(lambda m: f"{m.group(1)}<{DTYPES.get(m.group(2), m.group(2))}>", code)
    code = _calls(code, CLASS_TEMPLATES, lambda name, args: f"{name}<{', '.join(DTYPES.get(a, a) for a in args)}>"
                  if args else None)
    code = _calls(code, ("min", "max"), _min_max)
    code = _rewrite_calls(code, PARAM_STRUCT, _param_struct)
    code = _loops(code)
    return code


def _template_first(name: str, args: list[str]) -> str | None:
    if not args:
        return None
    first = args[0]
    if name != "PipeBarrier" and re.fullmatch(r"[A-Z0-9]+_[A-Z0-9_]+", first):     # a bare event name: MTE2_V
        first = f"HardEvent::{first}"
    return f"{name}<{first}>({', '.join(args[1:])})"


def _dtype_call(name: str, args: list[str]) -> str | None:
    if not args:                # the element type Python leaves out: C++ names it (``DeQue<T>()``)
        return f"{name}<T>()"
    if len(args) != 1 or args[0] not in DTYPES:
        return None
    return f"{name}<{DTYPES[args[0]]}>()"


def _min_max(name: str, args: list[str]) -> str | None:
    if len(args) != 2:
        return None
    a, b = args
    return f"({a} {'<' if name == 'min' else '>'} {b} ? {a} : {b})"


def _param_struct(name: str, args: list[str]) -> str | None:
    if any(re.match(r"\w+\s*=(?!=)", a) for a in args):      # keyword arguments: no mechanical C++ spelling
        return None
    template = "<T>" if name in TEMPLATE_PARAM_STRUCTS else ""
    return f"{name}{template}{{{', '.join(args)}}}"


def _calls(code: str, names: tuple[str, ...], rewrite) -> str:
    """Rewrite each call ``name(args)`` of ``names`` as ``rewrite(name, args)`` (None: leave it)."""
    return _rewrite_calls(code, re.compile(rf"(?<![\w/])({'|'.join(re.escape(n) for n in names)})\("), rewrite)


def _rewrite_calls(code: str, pattern: re.Pattern, rewrite) -> str:
    """Rewrite each call ``pattern`` matches (group 1: the name) as ``rewrite(name, args)`` (None: leave it)."""
    out, pos = [], 0
    for m in pattern.finditer(code):
        if m.start() < pos:
            continue
        close = _closing(code, m.end() - 1)
        if close is None:
            continue
        new = rewrite(m.group(1), _split_args(code[m.end():close]))
        if new is None:
            continue
        out += [code[pos:m.start()], new]
        pos = close + 1
    return "".join(out) + code[pos:]


def _loops(code: str) -> str:
    """``for i in range(a, b, s)`` -> ``for (uint32_t i = a; i < b; i += s)``; a bare ``range(...)`` loops on ``i``."""
    while True:
        m = _FOR.search(code) or _RANGE.search(code)
        if m is None:
            return code
        close = _closing(code, m.end() - 1)
        if close is None:
            return code
        var = m.group(1) if m.re is _FOR else "i"
        args = _split_args(code[m.end():close])
        start, stop, step = (["0"] + args + ["1"])[-3:] if len(args) == 1 else (args + ["1"])[:3]
        inc = f"++{var}" if step == "1" else f"{var} += {step}"
        end = close + 1
        if m.re is _FOR and code[end:end + 1] == ":":
            end += 1
        code = f"{code[:m.start()]}for (uint32_t {var} = {start}; {var} < {stop}; {inc}){code[end:]}"


def _closing(code: str, open_at: int) -> int | None:
    """Index of the ``)`` that closes the ``(`` at ``open_at``."""
    depth = 0
    for i in range(open_at, len(code)):
        c = code[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return None


def _split_args(text: str) -> list[str]:
    """The top-level comma-separated arguments of a call's text, stripped."""
    args, depth, cur = [], 0, []
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    tail = "".join(cur).strip()
    return args + [tail] if tail or args else args
