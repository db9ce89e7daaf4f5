"""What a launch leaves alive skips the collector's young passes (engine/scheduler.py, ``collector_paused``).

A launch runs with the cyclic collector paused; when it resumes, the launch's survivors (its records: a tuple
per instruction, with region lists) go straight to the oldest generation, so the young passes do not walk them.
The records themselves stay as they were: the same ones, in the same order. A freeze the program made itself is
kept.
"""
from __future__ import annotations

import gc

from ascend_sim.kernels.add_custom import run_add_custom


def _raw(result) -> list:
    """The launch's record tuples as the issue path appended them (engine/records.RecordList's entries)."""
    return list.__getitem__(result.trace._raw, slice(None))


def _young_ids() -> set[int]:
    return {id(o) for g in (0, 1) for o in gc.get_objects(generation=g)}


def test_launch_records_leave_the_young_generations_unchanged() -> None:
    assert not gc.get_freeze_count(), "objects left frozen (gc.freeze) before this test: the launch keeps them so"
    run_add_custom()                            # warm: module-level caches
    thresholds = gc.get_threshold()
    gc.set_threshold(1 << 30, 1 << 30, 1 << 30)     # no automatic pass moves objects between the checks
    was_enabled = gc.isenabled()
    try:
        gc.disable()                            # collector off around the launch: the pause leaves it as it is
        reference = run_add_custom()[3]
        gc.enable()
        result = run_add_custom()[3]
        records = _raw(result)
        young = _young_ids()
    finally:
        gc.set_threshold(*thresholds)
        if not was_enabled:
            gc.disable()
    assert all(gc.is_tracked(r) for r in records[:8]), "the records are containers the collector tracks"
    left = sum(id(r) in young for r in records)
    assert left == 0, f"{left} of {len(records)} records left in the young generations for the collector to walk"
    assert len(result.trace) == len(reference.trace) > 0, "a launch's records were lost"
    assert [r.as_dict() for r in result.trace] == [r.as_dict() for r in reference.trace], \
        "a launch's records changed or were reordered"


def test_launch_keeps_the_programs_own_freeze() -> None:
    probe = [[]]                                # a tracked container the program froze
    gc.freeze()
    try:
        run_add_custom()
        assert gc.get_freeze_count() > 0, "the launch unfroze the program's frozen objects"
        assert all(o is not probe for o in gc.get_objects()), "the launch unfroze the program's frozen objects"
    finally:
        gc.unfreeze()
