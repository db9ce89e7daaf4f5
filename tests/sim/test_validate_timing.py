"""benchmarks/validate_timing.py judges its table right: a validation point 16 % off or a step 10+ points off fails.

The figures are injected (``--inject NAME=PCT`` sets a point to measured x (1 + PCT / 100) without simulating
it), so these checks test the verdict, not the model; the model's own figures are the script's full run.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import validate_timing as vt  # noqa: E402


def run(capsys, *injections: str) -> tuple[int, str]:
    argv = ["--quick"] + [a for inj in injections for a in ("--inject", inj)]
    code = vt.main(argv)
    return code, capsys.readouterr().out


def test_every_point_within_15_percent_passes(capsys):
    code, out = run(capsys, "*=+14")
    assert code == 0, out
    assert "FAIL" not in out


@pytest.mark.parametrize("pct", ["+16", "-16"])
def test_one_point_16_percent_off_fails(capsys, pct):
    code, out = run(capsys, "*=0", "bank 1=" + pct)
    assert code == 1
    fail = out.splitlines()[-1]
    assert fail.startswith("FAIL") and "bank 1: none" in fail and "bank 2" not in fail


def test_calibration_point_does_not_count(capsys, monkeypatch):
    monkeypatch.setitem(vt.CALIBRATION, "bank 1: none", "a test's stand-in")
    code, out = run(capsys, "*=0", "bank 1=+40")
    assert code == 0, out
    assert "| bank 1: none |" in out and "calibration |" in out


def test_a_step_more_than_10_points_off_fails(capsys):
    # M1 -> M2 measured 83.68 -> 53.40 us (a gain of 36.2 %); M2 30 % slower makes it 1 - 69.42 / 83.68 = 17.0 %
    code, out = run(capsys, "*=0", "M2 aic_time=+30")
    assert code == 1
    fail = out.splitlines()[-1]
    assert "step M1 -> M2 (aic_time)" in fail and "M1 -> M2 (aic_mte2_time)" not in fail


def test_a_step_the_wrong_way_fails_even_when_close():
    step = vt.Step("s", (100.0, 95.0), None, None, simulated=(100.0, 101.0))     # measured +5 %, simulated -1 %
    assert not vt.step_ok(step)
    assert vt.step_ok(vt.Step("s", (100.0, 95.0), None, None, simulated=(100.0, 99.0)))
    assert not vt.step_ok(vt.Step("s", (100.0, 95.0), None, None, simulated=(100.0, 100.0)))  # one schedule


def test_bad_injection_names_the_form():
    with pytest.raises(SystemExit, match="NAME=PCT"):
        vt.parse_injections(["bank 1"])


def test_a_step_with_a_calibration_end_does_not_count(capsys, monkeypatch):
    monkeypatch.setitem(vt.CALIBRATION, "M2 aic_time", "a test's stand-in")
    code, out = run(capsys, "*=0", "M2 aic_time=+30")
    assert code == 0, out
    assert "| M1 -> M2 (aic_time) |" in out and "| off | calibration |" in out
