"""Module 0's chip tables come from the simulator: tiers as the engine builds them, rates and source tags."""
from __future__ import annotations

import dataclasses

import pytest

from ascend_sim import get_chip
from ascend_sim.course import chipfacts


def test_tags_are_read_from_the_profile_comments():
    tags = chipfacts.parameter_tags(get_chip("Ascend910B"))
    assert tags["ub_bytes"] == "OFF" and tags["aiv_count"] == "OFF"
    assert tags["gm_read_bytes_per_cycle"] == "CAL" and tags["l2_bytes"] == "EST" and tags["clock_ghz"] == "DER"
    assert tags["simple"] == "DER" and tags["transcendental"] == "EST"
    # a profile's own line wins over the dataclass default: 910's HBM rate is an estimate, 910B's is official
    assert chipfacts.parameter_tags(get_chip("Ascend910"))["hbm_bytes_per_cycle"] == "EST"
    assert tags["hbm_bytes_per_cycle"] == "OFF"


@pytest.mark.parametrize("name", ["Ascend910B", "Ascend910", "Ascend310B"])
def test_tiers_match_the_chip(name):
    chip = get_chip(name)
    rows = {r.name: r for r in chipfacts.tiers(chip)}
    assert set(rows) == {"UB", "L1", "L0A", "L0B", "L0C", "BT"}
    assert (rows["BT"].capacity, rows["BT"].positions, rows["BT"].tag) == (chip.bt_bytes, ("C2",), "OFF")
    assert (rows["UB"].capacity, rows["UB"].usable) == (chip.ub_bytes, chip.ub_usable_bytes)
    assert rows["L0C"].capacity == chip.l0c_bytes and rows["L0A"].align == chip.l0ab_align
    assert rows["UB"].positions == ("VECIN", "VECOUT", "VECCALC") and rows["L0B"].positions == ("B2",)
    assert rows["UB"].core == "AIV" and rows["L1"].core == "AIC"
    assert all(r.tag in {"OFF", "DER", "EST", "CAL"} for r in rows.values())


def test_tiers_follow_a_changed_profile():
    chip = dataclasses.replace(get_chip(None), ub_bytes=128 * 1024, ub_usable_bytes=120 * 1024)
    ub = next(r for r in chipfacts.tiers(chip) if r.name == "UB")
    assert (ub.capacity, ub.usable) == (128 * 1024, 120 * 1024)


def test_bandwidths_are_rate_times_clock_and_tagged():
    chip = get_chip(None)
    rows = {r.field: r for r in chipfacts.bandwidths(chip)}
    assert rows["gm_read_bytes_per_cycle"].bytes_per_cycle == chip.gm_read_bytes_per_cycle
    assert rows["hbm_bytes_per_cycle"].gb_per_s == pytest.approx(chip.hbm_bytes_per_cycle * chip.clock_ghz)
    assert rows["vec_repeat_bytes"].bytes_per_cycle == chip.vec_repeat_bytes / chip.vec_cycles_per_repeat["simple"]
    assert all(r.tag in {"OFF", "DER", "EST", "CAL"} for r in rows.values())


def test_queue_flows():
    flows = {p: (tier, src, dst) for p, tier, src, dst in chipfacts.queue_flows()}
    assert flows["VECIN"] == ("UB", "MTE2", "V") and flows["VECOUT"] == ("UB", "V", "MTE3")
    assert flows["A2"] == ("L0A", "MTE1", "M") and flows["CO1"] == ("L0C", "M", "FIX")
