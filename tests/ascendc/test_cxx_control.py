"""Control flow: for (counted and general), while, do-while, if/else, switch with grouped cases and default,
break and continue (a for's increment still runs after continue)."""
from cxx_util import run_scalars


def test_loops_and_branches():
    out = run_scalars("""
    int32_t s = 0;
    for (int32_t i = 0; i < 10; i++) { if (i % 3 == 0) continue; s += i; }
    out.SetValue(0, s);                                   // 1+2+4+5+7+8
    int32_t k = 0;
    for (uint32_t i = 10; i > 0; i -= 3) { k++; if (k > 100) break; }
    out.SetValue(1, k);     // 10, 7, 4, 1, then 1 - 3 wraps to 4294967294 > 0: on until the break
    int32_t w = 1;
    while (w < 1000) { w *= 3; }
    out.SetValue(2, w);
    int32_t d = 0;
    do { d += 5; } while (d < 12);
    out.SetValue(3, d);
    int32_t j = 0, odd = 0;
    for (j = 0; j < 7; ++j) { if (j % 2 == 0) { continue; } else { odd++; } }
    out.SetValue(4, odd * 100 + j);
    int32_t sw = 0;
    for (int32_t c = 0; c < 5; c++) {
        switch (c) {
            case 0:
            case 1: sw += 1; break;
            case 3: sw += 10; break;
            default: sw += 100;
        }
    }
    out.SetValue(5, sw);
    out.SetValue(6, s > 20 ? 1 : 2);
""", 7, name="control")
    assert out.tolist() == [27, 101, 2187, 15, 307, 212, 1]


def test_a_switch_case_falling_through_is_reported():
    import pytest

    from ascend_sim.ascendc import CompileError
    with pytest.raises(CompileError, match=r"<ascendc:control>:\d+:\d+: unsupported: a switch case that falls through"):
        run_scalars("int32_t v = 0; switch (v) { case 0: v = 1; case 1: v = 2; break; }", 1, name="control")
