"""The coverage table of docs/api_mapping.md is generated and must not drift from the code."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import api_coverage  # noqa: E402


@pytest.mark.parametrize("entry, call", [
    ("GMToL1随路转换-ND2NZ搬运（DataCopy）", ("DataCopy", True)),
    ("LoadData（2D矩阵搬运）", ("LoadData", True)),
    ("Neg(ISASI)", ("Neg", False)),
    ("Add", ("Add", False)),
])
def test_call_name(entry, call):
    assert api_coverage.call_name(entry) == call


def test_committed_table_is_current():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "api_coverage.py"), "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_stale_table_is_caught(monkeypatch):
    text = (ROOT / "docs" / "api_mapping.md").read_text(encoding="utf-8")
    stale = text.replace("| Add | present |", "| Add | absent |")
    assert stale != text
    assert api_coverage.render(stale) == text          # regenerating repairs it, so --check would fail


def test_every_present_entry_is_a_real_name_or_curated():
    public = api_coverage._public_names()
    curated = {r["api"] for r in api_coverage._rows(api_coverage.STATUS)}
    for row, status, _ in api_coverage.statuses():
        if status == "present" and row["api"] not in curated:
            assert api_coverage.call_name(row["api"])[0] in public, row["api"]
