"""Run-time support that the generated Python of a C++ kernel calls: C++ semantics Python lacks.

Integer conversions (wrap-around to a narrower or signed type), division truncating toward zero, references
(``Ref``), structs with a C layout (``Struct``, the tiling data read back from GM), the template instantiation
memo and a few header functions (``ascendc_assert``, ``printf``). The translator emits unsigned wraps inline as
``& 0xFFFFFFFF``; everything here is for the rarer cases, so the hot path stays plain Python.
"""
from __future__ import annotations

import dataclasses

import importlib

import numpy as np

from ascend_sim import ArgumentError, GmPtr, KernelError, bfloat16, half, uint8
from ascend_sim.ascendc.host.std_vector import object_vector, vector as std_vector

uint64 = np.dtype(np.uint64)
float64 = np.dtype(np.float64)
bool_ = np.dtype(np.bool_)
f32 = np.float32            # a value converted to float (C++ float arithmetic is float32: numpy scalars keep it)
f16 = np.float16            # ... to half
bf16 = bfloat16.type        # ... to bfloat16_t


# ----------------------------------------------------------------------------- integers
def s8(v: int) -> int:
    return ((v + 0x80) & 0xFF) - 0x80


def s16(v: int) -> int:
    return ((v + 0x8000) & 0xFFFF) - 0x8000


def s32(v: int) -> int:
    return ((v + 0x80000000) & 0xFFFFFFFF) - 0x80000000


def s64(v: int) -> int:
    return ((v + 0x8000000000000000) & 0xFFFFFFFFFFFFFFFF) - 0x8000000000000000


def sdiv(a: int, b: int) -> int:
    """C++ ``a / b`` for signed integers: the quotient truncated toward zero (Python's // floors)."""
    if b == 0:
        raise ArgumentError("integer division by zero", fix="check the divisor before dividing (C++ leaves x / 0 "
                                                           "undefined; the device gives garbage)")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def srem(a: int, b: int) -> int:
    """C++ ``a % b`` for signed integers: the remainder has the sign of ``a``."""
    return a - sdiv(a, b) * b


def div(a, b):
    """``a / b`` whose C++ type is a template parameter: truncating for integers, true division for floats."""
    if isinstance(a, int) and isinstance(b, int):
        return sdiv(a, b)
    return a / b


def udiv(a: int, b: int) -> int:
    """``a / b`` for unsigned integers (both already in range)."""
    if b == 0:
        raise ArgumentError("integer division by zero", fix="check the divisor before dividing (C++ leaves x / 0 "
                                                           "undefined; the device gives garbage)")
    return a // b


def urem(a: int, b: int) -> int:
    if b == 0:
        raise ArgumentError("integer remainder by zero", fix="check the divisor before taking a remainder")
    return a % b


_INT_WRAP = {}


def convert(dtype, v):
    """``static_cast<T>(v)`` when ``T`` is only known at run time (a template type parameter)."""
    d = np.dtype(dtype)
    if d.kind in "iu":
        v = int(v)
        bits = d.itemsize * 8
        v &= (1 << bits) - 1
        if d.kind == "i" and v >> (bits - 1):
            v -= 1 << bits
        return v
    if d.kind == "b":
        return bool(v)
    return d.type(v)


def to_int(v) -> int:
    """A float converted to an integer type: truncation toward zero, as C++ does."""
    return int(v)


# ----------------------------------------------------------------------------- references and pointers
class Ref:
    """``T&`` / ``&x`` of a scalar lvalue: ``get()`` reads it, ``set(v)`` writes it."""

    __slots__ = ("get", "set")

    def __init__(self, get, set):
        self.get = get
        self.set = set

    @property
    def value(self):
        """The referenced variable (a ``T&`` parameter reads and writes ``.value``, as of a Box)."""
        return self.get()

    @value.setter
    def value(self, v) -> None:
        self.set(v)

    def __repr__(self) -> str:
        return f"Ref({self.get()!r})"


class Box:
    """A local variable whose address is taken (``&x`` in host code): the variable lives in ``.value``.

    A ``T*`` variable's Box has ``pointee`` T: a pointer stored into it through ``(void**)&p`` (aclrtMalloc,
    aclrtMallocHost hand out bytes) is read as T, so ``p[i]`` and ``p + i`` step by sizeof(T) as in C++.
    """

    __slots__ = ("value", "pointee")

    def __init__(self, value=None, pointee=None):
        self.pointee = pointee
        self.value = None
        self.set(value)

    def get(self):
        return self.value

    def set(self, v) -> None:
        if self.pointee is not None and hasattr(v, "cast") and getattr(v, "dtype", None) != self.pointee:
            v = v.cast(self.pointee)
        self.value = v

    def __repr__(self) -> str:
        return f"Box({self.value!r})"


def gm_param(ptr, dtype):
    """A ``__gm__ T*`` kernel parameter: the launch's GM address read as ``T`` (None and ints stay)."""
    if ptr.__class__ is GmPtr:
        return ptr if ptr.dtype == dtype else ptr.cast(dtype)
    return ptr


def host_param(ptr, dtype, param: str):
    """A host function's ``T*`` parameter: a numpy array becomes a pointer to its first element (C order), so
    ``p + n`` is a pointer and ``p[i]`` an element, as in C++; other pointers stay."""
    if not isinstance(ptr, np.ndarray):
        return ptr
    from ascend_sim.ascendc.host.pointers import HostPtr
    if ptr.dtype != np.dtype(dtype) or not ptr.flags.c_contiguous:
        raise ArgumentError(f"the pointer parameter {param} points to {np.dtype(dtype).name}, but the caller passed "
                            f"a {'non-contiguous ' if not ptr.flags.c_contiguous else ''}{ptr.dtype.name} array "
                            f"of shape {ptr.shape}",
                            fix=f"pass np.ascontiguousarray(a, np.{np.dtype(dtype).name}) (C++ reads its bytes as "
                                f"{np.dtype(dtype).name})")
    return HostPtr(ptr.reshape(-1).view(np.uint8), 0, dtype)


def ptr_cast(ptr, dtype):
    """``(__gm__ T*)p``: the same address as another pointee type."""
    return ptr.cast(dtype) if ptr is not None else None


# ----------------------------------------------------------------------------- structs
class Struct:
    """Base of the Python class of a C++ struct: value semantics and the C layout clang computed.

    ``_fields`` are (name, default) in declaration order; ``_layout`` (name, byte offset, dtype, count) and
    ``_size`` come from libclang (``type.get_offset``, ``get_size``), so tiling bytes packed on the host and read
    back by ``GET_TILING_DATA`` agree with the C++ compiler's.
    """

    __slots__ = ()
    _fields: tuple = ()
    _layout: tuple = ()
    _size: int = 0
    _host_only: tuple = ()      # std::string fields: host values with no C bytes the simulator models

    def __init__(self, *args, **kwargs):
        fields = self._fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} has {len(fields)} fields, got {len(args)} values")
        for (name, default), v in zip(fields, args):
            setattr(self, name, v)
        for name, default in fields[len(args):]:
            setattr(self, name, kwargs.pop(name) if name in kwargs else _fresh(default))
        if kwargs:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(kwargs)}")

    def copy(self):
        new = object.__new__(type(self))
        for name, _ in self._fields:
            v = getattr(self, name)
            setattr(new, name, v.copy() if isinstance(v, (Struct, list)) else v)
        return new

    def assign(self, other) -> None:
        """``*this = other`` (a struct assigned through a reference)."""
        for name, _ in self._fields:
            v = getattr(other, name)
            setattr(self, name, v.copy() if isinstance(v, (Struct, list)) else v)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n, _ in self._fields)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n, _ in self._fields) + ")"

    # -- the C layout
    def to_bytes(self) -> np.ndarray:
        """The struct as the C++ compiler lays it out (np.uint8 array of ``sizeof``)."""
        self._check_bytes("to_bytes")
        out = np.zeros(self._size, np.uint8)
        for name, off, dtype, count in self._layout:
            v = getattr(self, name)
            if isinstance(dtype, type) and issubclass(dtype, Struct):
                out[off:off + dtype._size] = v.to_bytes()
                continue
            arr = np.asarray(v if count > 1 else [v]).astype(dtype)
            out[off:off + arr.nbytes] = arr.view(np.uint8)
        return out

    @classmethod
    def _check_bytes(cls, what: str) -> None:
        if cls._host_only:
            raise ArgumentError(f"{cls.__name__}.{what}: its std::string field {', '.join(cls._host_only)} has no "
                                "bytes the simulator models (a std::string owns a heap buffer: its bytes are a "
                                "pointer, not the text)",
                                fix=f"keep {cls.__name__} on the host; a struct passed to a kernel (tiling data) "
                                    "holds numbers, pointers and arrays only")

    @classmethod
    def from_bytes(cls, raw: np.ndarray, offset: int = 0):
        cls._check_bytes("from_bytes")
        raw = np.asarray(raw).view(np.uint8).reshape(-1)
        if raw.size - offset < cls._size:
            raise ArgumentError(f"{cls.__name__} needs {cls._size} bytes of tiling data, the buffer has "
                                f"{raw.size - offset}", fix=f"pass a {cls.__name__} (or its .to_bytes())")
        new = object.__new__(cls)
        for name, off, dtype, count in cls._layout:
            if isinstance(dtype, type) and issubclass(dtype, Struct):
                setattr(new, name, dtype.from_bytes(raw, offset + off))
                continue
            vals = raw[offset + off:offset + off + np.dtype(dtype).itemsize * count].view(dtype)
            vals = [_scalar(x) for x in vals]
            setattr(new, name, vals if count > 1 else vals[0])
        return new


def _scalar(x):
    return int(x) if np.dtype(type(x)).kind in "iub" else x


def _fresh(default):
    if isinstance(default, type) and issubclass(default, Struct):
        return default()
    if isinstance(default, list):
        return [_fresh(x) for x in default]
    return default


def tiling(cls, arg):
    """``GET_TILING_DATA(name, tiling)``: the tiling struct from the launch argument.

    The argument may be the GM bytes (a ``GM_ADDR``), an instance of the struct's Python class, a dict of its
    fields, or raw bytes (np.uint8 array).
    """
    if isinstance(arg, cls):
        return arg.copy()
    if arg.__class__ is GmPtr:
        return cls.from_bytes(arg.buf.raw, arg.offset)
    if isinstance(arg, dict):
        return cls(**arg)
    if isinstance(arg, np.ndarray):
        return cls.from_bytes(arg)
    if isinstance(arg, Struct):
        raise ArgumentError(f"the kernel reads its tiling as {cls.__name__}, the launch passed a "
                            f"{type(arg).__name__}", fix=f"pass mod.structs.{cls.__name__}(...)")
    if dataclasses.is_dataclass(arg) and not isinstance(arg, type):
        # a host-side tiling dataclass (a lab's AddTiling): its fields by name, as the host fills the C++ struct
        names = {f for f, _ in cls._fields}
        values = {f.name: getattr(arg, f.name) for f in dataclasses.fields(arg) if f.name in names}
        missing = sorted(names - set(values))
        if missing:
            raise ArgumentError(f"GET_TILING_DATA: {cls.__name__} needs {missing}, which the {type(arg).__name__} "
                                f"passed to the launch does not have",
                                fix=f"pass mod.structs.{cls.__name__}(...) or a dict with every field")
        return cls(**values)
    raise ArgumentError(f"GET_TILING_DATA: cannot read a {cls.__name__} from {type(arg).__name__}",
                        fix=f"pass mod.structs.{cls.__name__}(field=...), a dict of its fields or its bytes")


def copy(v):
    """A struct, array or std::vector passed or assigned by value."""
    return v.copy() if isinstance(v, (Struct, list, std_vector, object_vector)) else v


def array(n: int, value=0) -> list:
    """A C array ``T a[n]`` (zero-initialised: the simulator has no indeterminate values)."""
    return [_fresh(value) for _ in range(n)]


# ----------------------------------------------------------------------------- templates
class template:
    """A C++ template: ``f(args...)`` instantiates it once per argument tuple (a memo), like the compiler."""

    __slots__ = ("make", "memo", "__name__", "__wrapped__")

    def __init__(self, make):
        self.make = make
        self.memo = {}
        self.__name__ = make.__name__
        self.__wrapped__ = make

    def __call__(self, *args):
        try:
            return self.memo[args]
        except KeyError:
            inst = self.memo[args] = self.make(*args)
            return inst
        except TypeError:       # unhashable argument: instantiate every time
            return self.make(*args)

    def __repr__(self) -> str:
        return f"<C++ template {self.__name__}>"


# ----------------------------------------------------------------------------- header functions
def ascendc_assert(cond, msg: str = "") -> None:
    """``ascendc_assert(cond, msg)``: the kernel stops with the message when ``cond`` is false."""
    if not cond:
        raise KernelError(f"ascendc_assert failed: {str(msg).strip()}",
                          fix="the kernel's own check: the launch arguments or the tiling break what it expects")


def c_assert(cond) -> None:
    """C's ``assert(e)`` (``<cassert>``, host code): a false condition stops the program (the error's site is the
    assert's line, with its text)."""
    if not cond:
        raise KernelError("Assertion failed: the condition of this assert is false, so the program stops as C's "
                          "assert aborts it",
                          fix="the call this assert checks failed: its own message (above) names why")


def DivCeil(a: int, b: int) -> int:
    """``AscendC::DivCeil(a, b)`` (工具函数): ``(a + b - 1) / b`` with C++'s truncating division."""
    return sdiv(a + b - 1, b)


def InitSocState() -> None:
    """``AscendC::InitSocState()``: resets the core's control registers; the simulator starts every block clean."""


def printf(fmt: str, *args) -> int:
    """C ``printf``: the format's conversions as Python's %-formatting (length modifiers dropped)."""
    text = format_c(fmt, args)
    print(text, end="")
    return len(text)


def format_c(fmt: str, args) -> str:
    """C's printf formatting of ``args`` (``%u`` as ``%d``, ``%p`` as hex, ``l``/``z``/``h`` modifiers dropped)."""
    out, vals, i, n = [], iter(args), 0, len(fmt)
    while i < n:
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        j = i + 1
        while j < n and fmt[j] in "-+ #0123456789.":
            j += 1
        flags = fmt[i:j]
        while j < n and fmt[j] in "hlLzjt":
            j += 1
        conv = fmt[j] if j < n else "%"
        if conv == "%":
            out.append("%")
        else:
            conv = {"u": "d", "i": "d", "p": "x"}.get(conv, conv)
            out.append((flags + conv) % _c_value(next(vals), conv))
        i = j + 1
    return "".join(out)


def _c_value(v, conv: str):
    if conv in "dxXoc" and not isinstance(v, str):
        return int(v)
    if conv in "feEgGaA":
        return float(v)
    if conv == "s" and isinstance(v, bytes):
        return v.decode()
    return v


def ostream_write(stream: str, *items) -> None:
    """``std::cout << a << b``: each item as C++'s ostream writes it (floats with 6 significant digits)."""
    import sys
    out = sys.stderr if stream == "cerr" else sys.stdout
    out.write("".join(_ostream_text(v) for v in items))


def _ostream_text(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (float, np.floating)):
        return "%g" % float(v)
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return str(v)


class libm:
    """C's math functions on numpy scalars (float stays float32, double float64)."""

    sqrt = staticmethod(np.sqrt)
    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    pow = staticmethod(np.power)
    floor = staticmethod(np.floor)
    ceil = staticmethod(np.ceil)


def to_string(v) -> str:
    """``std::to_string``: integers as digits, floating values with six decimals."""
    return "%f" % float(v) if isinstance(v, (float, np.floating)) else str(int(v))


def host_module(name: str):
    """The simulated host runtime module ``ascend_sim.ascendc.host.<name>`` (imported when first used)."""
    return _LazyModule(name)


class _LazyModule:
    def __init__(self, name: str):
        self._name = name
        self._mod = None

    def __getattr__(self, attr):
        if self._mod is None:
            try:
                self._mod = importlib.import_module(f"ascend_sim.ascendc.host.{self._name}")
            except ImportError as e:
                raise KernelError(f"the simulated host runtime ({self._name}) is not available: {e}",
                                  fix="run the kernel alone with ascend_sim.launch(mod.kernel, blocks, ...)") from e
        return getattr(self._mod, attr)


__all__ = ["s8", "s16", "s32", "s64", "sdiv", "srem", "udiv", "urem", "convert", "div", "Ref", "Box", "f32", "f16",
           "bf16", "float64", "gm_param", "ptr_cast", "Struct", "tiling", "copy", "array", "template",
           "ascendc_assert", "c_assert", "InitSocState", "printf", "host_module", "ostream_write", "libm", "to_string",
           "kernel", "half", "bfloat16", "uint8", "uint64", "bool_"]


def tiling_space(op: str, declared: list, selections: list, kernels: list):
    """The module's ASCENDC_TPL_* tables as a TemplateSpace bound to its kernel template (tiling_template.py)."""
    from ascend_sim.ascendc.tiling_template import build_space
    return build_space(op, declared, selections, kernels)


def kernel(fn, name: str, core: str, params: list, template: list):
    """The generated module's ``__global__`` function as a launchable CppKernel (ascend_sim/ascendc/module.py)."""
    from ascend_sim.ascendc.module import make_kernel
    return make_kernel(fn, name, core, params, template)
