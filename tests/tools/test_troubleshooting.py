"""The troubleshooting handbook cannot drift: every KernelError subclass has a section, the index is the
generated one, and every error message links to its section."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ascend_sim import DataCopy, GlobalTensor, OutOfBoundsError, TBuf, TPipe, half, kernel, launch
from ascend_sim.tools import troubleshooting as ts

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "docs" / "troubleshooting.md"
TEXT = HANDBOOK.read_text(encoding="utf-8")


def test_every_error_class_has_a_section_and_every_section_a_class():
    names = {c.__name__ for c in ts.error_classes()}
    assert len(names) >= 20 and {"OutOfBoundsError", "RaceError", "DeadlockError", "AtcError"} <= names
    assert names - ts.sections(TEXT) == set(), "add a ### section (symptom, cause, fix) to docs/troubleshooting.md"
    assert ts.sections(TEXT) - names == set(), "a section names no error class"


def test_the_index_is_the_generated_one(tmp_path):
    block = TEXT.split(ts.BEGIN, 1)[1].split(ts.END, 1)[0].strip()
    assert block == ts.index(), "run `python -m ascend_sim.tools.troubleshooting`"
    stale = tmp_path / "t.md"
    stale.write_text(TEXT.replace("[RaceError](#raceerror)", "[RaceErr](#raceerr)"), encoding="utf-8")
    assert ts.update(stale) is True and stale.read_text(encoding="utf-8") == TEXT
    assert ts.update(stale) is False


def test_a_new_subclass_without_a_section_is_caught():
    from ascend_sim.engine.errors import KernelError

    class PlantedNewError(KernelError):
        """A class added without a handbook entry."""
    PlantedNewError.__module__ = "ascend_sim.engine.errors"
    try:
        assert "PlantedNewError" in {c.__name__ for c in ts.error_classes()} - ts.sections(TEXT)
    finally:
        del PlantedNewError
        import gc
        gc.collect()


@kernel
def _reads_past(x, n):
    g = GlobalTensor(half)
    g.SetGlobalBuffer(x, n)
    buf = TBuf()
    TPipe().InitBuffer(buf, 2 * n + 32)
    DataCopy(buf.Get(half), g, n + 16)


def test_error_messages_link_to_their_section():
    with pytest.raises(OutOfBoundsError) as e:
        launch(_reads_past, 1, np.zeros(16, np.float16), 16)
    last = str(e.value).splitlines()[-1]
    assert last == "  See: docs/troubleshooting.md#outofboundserror"
    assert "### OutOfBoundsError" in TEXT
