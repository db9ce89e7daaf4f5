"""References: a local reference aliases its variable, const references pass values, a struct passed by
reference is modified in place, a struct passed by value is copied."""
from cxx_util import run_scalars

PRELUDE = """
struct Acc { int32_t total; int32_t count; };
void Add(Acc& acc, int32_t v) { acc.total += v; acc.count++; }
int32_t Peek(Acc acc) { acc.total = -1; return acc.count; }
int32_t Sum(const int32_t& a, const int32_t& b) { return a + b; }
void Bump(uint32_t& n, int32_t by) { n += by; }
void Swap(int32_t& a, int32_t& b) { int32_t t = a; a = b; b = t; }
struct Counter {
    uint32_t hits = 0;
    void Hit() { Bump(hits, 1); }
};
"""


def test_references():
    out = run_scalars("""
    int32_t x = 5;
    int32_t& r = x;
    r = r + 10;                  // writes x
    out.SetValue(0, x);
    Acc acc{0, 0};
    Add(acc, 3);
    Add(acc, 4);
    out.SetValue(1, acc.total);
    out.SetValue(2, Peek(acc));  // by value: the callee's change is lost
    out.SetValue(3, acc.total);
    out.SetValue(4, Sum(x, 2));
    Acc copy = acc;              // a copy, not an alias
    copy.total = 100;
    out.SetValue(5, acc.total);
    uint32_t n = 4294967295u;
    Bump(n, 2);                  // a scalar T& parameter writes the caller's variable (wrapping as uint32_t)
    out.SetValue(6, n);
    int32_t p = 1, q = 2;
    Swap(p, q);
    out.SetValue(7, p * 10 + q);
    Counter c;
    c.Hit();
    c.Hit();                     // T& to a member
    out.SetValue(8, c.hits);
""", 9, prelude=PRELUDE, name="references")
    assert out.tolist() == [15, 7, 2, 7, 17, 7, 1, 21, 2]
