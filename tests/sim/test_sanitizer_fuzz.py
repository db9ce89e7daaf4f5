"""Seeded fuzz of the API (issue 11): 2,000 generated calls, good and bad, one launch each.

The test fails on any exception that is not a KernelError (or is an InternalError), on any call that
breaks one of ``fuzz_util.RULES`` and runs silently, and on any write outside the destination (canaries
around every UB buffer; GM bytes outside the copy's span). ``benchmarks/fuzz_sanitizer.py`` runs
100,000 calls the same way.
"""
from __future__ import annotations

import numpy as np

import fuzz_util
from ascend_sim import Duplicate
from fuzz_util import Call, fuzz, failures, run_call


def test_two_thousand_fuzzed_calls_give_no_escape_no_silent_invalid_call_and_no_stray_write():
    outcomes = fuzz(2000, seed=11)
    assert not failures(outcomes), failures(outcomes)
    assert outcomes["ok"] > 300 and sum(v for k, v in outcomes.items() if k.startswith("rule:")) > 1000


def test_the_harness_sees_a_stray_write_an_accepted_invalid_call_and_an_escape():
    def stray(t):           # a write past the end of a, done behind the sanitizer's back
        t.a.tier.arena[t.a.addr + t.a.nbytes] = 0
    assert run_call(Call("stray", stray)).startswith("oob-write")
    assert run_call(Call("gm stray", lambda t: t.z.buf.raw.__setitem__(100, 1), gm_span=(0, 64))).startswith(
        "oob-write")
    assert run_call(Call("valid", lambda t: Duplicate(t.a, 1.0, 16), breaks="count-type")).startswith("accepted")
    assert run_call(Call("boom", lambda t: [][1])).startswith("escape:IndexError")
    assert run_call(Call("valid", lambda t: Duplicate(t.a, 1.0, 16))) == "ok"

    def cube_stray(t):      # a write just past L0A's a2
        t.a2.tier.arena[t.a2.addr + t.a2.nbytes] = 0
    assert run_call(Call("cube stray", cube_stray, cube=True)).startswith("oob-write")
    assert run_call(Call("cube valid", lambda t: None, cube=True)) == "ok"


def test_every_rule_is_drawn():
    rng = np.random.default_rng(11)
    drawn = {fuzz_util.generate(rng).breaks for _ in range(3000)}
    assert set(fuzz_util.RULES) <= drawn
