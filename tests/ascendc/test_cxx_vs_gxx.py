"""Differential tests of the scalar semantics against g++. Random C++ integer expressions (every width, both signednesses,
promotions, usual arithmetic conversions, casts, wrap-around, truncating division, shifts) evaluated by g++ and by
the front end's generated Python must agree bit for bit. Signed overflow (undefined in C++) is never generated:
+ - * appear only where the C++ type of the operation is unsigned, divisors are positive. Random float
expressions (float32 arithmetic, int conversions) must give the same bits."""
import random
import shutil
import subprocess

import pytest

from cxx_util import load_src

TYPES = [(8, True), (8, False), (16, True), (16, False), (32, True), (32, False), (64, True), (64, False)]
CNAME = {(b, s): f"{'' if s else 'u'}int{b}_t" for b, s in TYPES}
VALUES = {b: [0, 1, 2, 3, 7, (1 << (b - 1)) - 1, 1 << (b - 1), (1 << b) - 1, (1 << b) - 2,
              0x5A5A5A5A5A5A5A5A & ((1 << b) - 1)] for b in (8, 16, 32, 64)}


def promote(t):
    return (32, True) if t[0] < 32 else t


def common(a, b):
    a, b = promote(a), promote(b)
    if a == b:
        return a
    if a[1] == b[1]:
        return max(a, b)
    u, s = (a, b) if not a[1] else (b, a)
    if u[0] >= s[0]:
        return u
    return s                                    # the signed type is wider: it holds every unsigned value


class Gen:
    def __init__(self, rng):
        self.rng = rng

    def expr(self, depth):
        """(C++ text, type)."""
        r = self.rng
        if depth == 0 or r.random() < 0.25:
            t = r.choice(TYPES)
            return f"v{CNAME[t]}", t
        kind = r.random()
        if kind < 0.15:
            t = r.choice(TYPES)
            e, _ = self.expr(depth - 1)
            return f"(({CNAME[t]})({e}))", t
        if kind < 0.25:
            e, t = self.expr(depth - 1)
            return f"(~{e})", promote(t)
        a, ta = self.expr(depth - 1)
        b, tb = self.expr(depth - 1)
        ct = common(ta, tb)
        ops = ["&", "|", "^", "/", "%", ">>", "<<", "<", "==", "!="]
        if not ct[1]:
            ops += ["+", "-", "*"] * 2
        op = r.choice(ops)
        if op in ("/", "%"):
            if ct[1]:
                return f"({a} {op} (({b} & 0x7f) | 1))", common(ta, tb)
            return f"({a} {op} (({b}) | 1u))", ct
        if op in (">>", "<<"):
            pt = promote(ta)
            if op == "<<" and pt[1]:
                return f"({a} >> ({b} & 7))", pt             # a signed left shift may overflow: shift right
            return f"({a} {op} ({b} & {pt[0] - 1}))", pt
        if op in ("<", "==", "!="):
            return f"({a} {op} {b})", (32, True)
        return f"({a} {op} {b})", ct


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize("seed", [27, 4, 5])
def test_random_integer_expressions_agree_with_gxx(tmp_path, seed):
    rng = random.Random(seed)
    gen = Gen(rng)
    cases = []
    for i in range(160):
        values = {t: rng.choice(VALUES[t[0]]) for t in TYPES}
        text, _ = gen.expr(4)
        cases.append((values, text))
    funcs, calls = [], []
    for i, (values, text) in enumerate(cases):
        params = ", ".join(f"{CNAME[t]} v{CNAME[t]}" for t in TYPES)
        funcs.append(f"uint64_t f{i}({params}) {{ return (uint64_t)({text}); }}")
        args = ", ".join(f"({CNAME[t]}){v}{'ull' if not t[1] else 'll'}" if t[0] == 64 else
                         f"({CNAME[t]}){v}" for t, v in values.items())
        calls.append(f'    printf("%llu\\n", (unsigned long long)f{i}({args}));')
    body = "\n".join(funcs)
    cpp = tmp_path / "exprs.cpp"
    cpp.write_text("#include <cstdint>\n#include <cstdio>\n" + body + "\nint main() {\n" + "\n".join(calls) +
                   "\n    return 0;\n}\n")
    subprocess.run(["g++", "-std=c++17", "-O0", "-o", str(tmp_path / "exprs"), str(cpp)], check=True)
    expected = [int(x) for x in subprocess.run([str(tmp_path / "exprs")], check=True, capture_output=True,
                                               text=True).stdout.split()]
    mod = load_src(body, name=f"exprs{seed}")
    for i, (values, text) in enumerate(cases):
        args = []
        for t, v in values.items():         # the C++ value of the literal cast: two's complement for signed types
            v &= (1 << t[0]) - 1
            args.append(v - (1 << t[0]) if t[1] and v >> (t[0] - 1) else v)
        got = getattr(mod, f"f{i}")(*args)
        assert got == expected[i], f"f{i}: {text} with {values}: g++ {expected[i]}, front end {got}"


def float_expr(rng, depth):
    """A random C++ float expression over fa, fb, fc (float) and ia (int32_t)."""
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(["fa", "fb", "fc", "(float)ia", "0.1f", "3.0f", "1e-3f"])
    if rng.random() < 0.15:
        return f"(float)(int32_t)({float_expr(rng, depth - 1)})"          # truncation toward zero
    op = rng.choice(["+", "-", "*", "/"])
    right = float_expr(rng, depth - 1)
    if op == "/":
        right = f"({right} * {right} + 1.0f)"                           # never zero
    return f"({float_expr(rng, depth - 1)} {op} {right})"


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_random_float_expressions_agree_with_gxx(tmp_path):
    import struct
    rng = random.Random(11)
    texts = [float_expr(rng, 4) for _ in range(120)]
    body = "\n".join(f"float g{i}(float fa, float fb, float fc, int32_t ia) {{ return {t}; }}"
                     for i, t in enumerate(texts))
    inputs = (1.7, -0.3, 123.456, -7)
    calls = "\n".join(f'    {{ float r = g{i}(1.7f, -0.3f, 123.456f, -7); unsigned u; memcpy(&u, &r, 4); '
                      f'printf("%u\\n", u); }}' for i in range(len(texts)))
    cpp = tmp_path / "floats.cpp"
    cpp.write_text("#include <cstdint>\n#include <cstdio>\n#include <cstring>\n" + body +
                   "\nint main() {\n" + calls + "\n    return 0;\n}\n")
    subprocess.run(["g++", "-std=c++17", "-O0", "-o", str(tmp_path / "floats"), str(cpp)], check=True)
    expected = [int(x) for x in subprocess.run([str(tmp_path / "floats")], check=True, capture_output=True,
                                               text=True).stdout.split()]
    import numpy as np
    mod = load_src(body, name="floats")
    fa, fb, fc = (np.float32(v) for v in inputs[:3])
    for i, text in enumerate(texts):
        got = np.float32(getattr(mod, f"g{i}")(fa, fb, fc, inputs[3]))
        bits = struct.unpack("<I", got.tobytes())[0]
        assert bits == expected[i], f"g{i}: {text}: g++ {expected[i]:#x}, front end {bits:#x} ({got})"


CONTROL = r"""
int32_t c0(int32_t n) { int32_t s = 0; for (int32_t i = 0; i < n; i++) { if (i % 3 == 0) continue; s += i; } return s; }
int32_t c1(int32_t n) { int32_t k = 0; for (uint32_t i = n; i > 0; i -= 3) { k++; if (k > 50) break; } return k; }
int32_t c2(int32_t n) { int32_t w = 1; while (w < n * 10) { w = w * 3 + 1; } return w; }
int32_t c3(int32_t n) { int32_t d = 0; do { d += 5; } while (d < n); return d; }
int32_t c4(int32_t n) {
    int32_t j = 0, odd = 0;
    for (j = 0; j < n; ++j) { if (j % 2 == 0) { continue; } else { odd++; } }
    return odd * 100 + j;
}
int32_t c5(int32_t n) {
    int32_t sw = 0;
    for (int32_t c = 0; c < n; c++) {
        switch (c % 5) {
            case 0:
            case 1: sw += 1; break;
            case 3: sw += 10; break;
            default: sw += 100;
        }
    }
    return sw;
}
int32_t c6(int32_t n) {
    int32_t t = 0;
    for (int32_t a = 0; a < n; a++) {
        for (int32_t b = a; b < n; b += 2) {
            if (b > 2 * a + 3) break;
            t += (a ^ b) - (b > a ? 1 : 0);
        }
    }
    return t;
}
int32_t c7(int32_t n) { uint8_t u = 250; for (int32_t i = 0; i < n; i++) { u += 3; } return u; }
int32_t c8(int32_t n) { int32_t r = n; r *= -3; r /= 2; r %= 7; r <<= 2; r >>= 1; r |= 1; r ^= 6; r &= 0x7f; return r; }
int32_t c9(int32_t n) { int32_t s = 0; for (int32_t i = n; i >= 0; i--) { s = (s * 2 + (i & 1)) % 1009; } return s; }
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_control_flow_agrees_with_gxx(tmp_path):
    names = [f"c{i}" for i in range(10)]
    inputs = list(range(0, 21)) + [37, 100]
    calls = "\n".join(f'    printf("%d\\n", {f}({n}));' for f in names for n in inputs)
    cpp = tmp_path / "control.cpp"
    cpp.write_text("#include <cstdint>\n#include <cstdio>\n" + CONTROL + "\nint main() {\n" + calls + "\n}\n")
    subprocess.run(["g++", "-std=c++17", "-O0", "-o", str(tmp_path / "control"), str(cpp)], check=True)
    expected = iter(int(x) for x in subprocess.run([str(tmp_path / "control")], check=True, capture_output=True,
                                                   text=True).stdout.split())
    mod = load_src(CONTROL, name="control_gxx")
    for f in names:
        for n in inputs:
            want = next(expected)
            assert getattr(mod, f)(n) == want, f"{f}({n}): g++ {want}, front end {getattr(mod, f)(n)}"
