"""Differential test of the integer semantics: random C++ integer expressions (every width, both signednesses,
promotions, usual arithmetic conversions, casts, wrap-around, truncating division, shifts) evaluated by g++ and by
the front end's generated Python must agree bit for bit. Signed overflow (undefined in C++) is never generated:
+ - * appear only where the C++ type of the operation is unsigned, divisors are positive."""
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
