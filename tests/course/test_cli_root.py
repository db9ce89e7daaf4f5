"""`ascend-sim grade` and `solve` outside the repository root say why and suggest --root."""
from __future__ import annotations

from pathlib import Path

import pytest

from ascend_sim.tools.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("argv", [["grade", "lab00", "sub.ipynb"], ["solve", "lab00"]])
def test_outside_the_root_suggests_root(argv: list[str], tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "matches no lab" in err
    assert f"{tmp_path} has no labs/ folder" in err and "--root" in err


def test_inside_the_root_a_wrong_name_lists_the_labs(capsys) -> None:
    assert main(["grade", "lab99", "sub.ipynb", "--root", str(REPO)]) == 2
    err = capsys.readouterr().err
    assert "lab00_warmup" in err and "--root" not in err
