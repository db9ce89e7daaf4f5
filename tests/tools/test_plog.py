"""plog logs (engine/plog.py), the aicore-exception report of a fault, and the log analysis (tools/logs.py)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ascend_sim import (DataCopy, GetBlockIdx, GlobalTensor, KernelError, OutOfBoundsError, TPipe, TPosition, TQue,
                        half, kernel, launch)
from ascend_sim.engine import plog
from ascend_sim.tools import cli
from ascend_sim.tools.logs import analyse, parse_line


@kernel
def copy_in(x, n):
    """Each block copies 256 halves from GetBlockIdx() * 256: a third block reads past a 512-element buffer."""
    g = GlobalTensor(half)
    g.SetGlobalBuffer(x, n)
    pipe, q = TPipe(), TQue(TPosition.VECIN, 1)
    pipe.InitBuffer(q, 1, 512)
    t = q.AllocTensor(half)
    DataCopy(t, g[GetBlockIdx() * 256], 256)
    q.FreeTensor(t)


X = np.ones(512, np.float16)


@pytest.fixture
def logdir(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_PROCESS_LOG_PATH", str(tmp_path))
    monkeypatch.delenv("ASCEND_SLOG_PRINT_TO_STDOUT", raising=False)
    monkeypatch.delenv("ASCEND_GLOBAL_LOG_LEVEL", raising=False)
    return tmp_path


def _lines(logdir) -> list[str]:
    files = sorted((logdir / "plog").glob("plog-*_*.log"))
    return [ln for f in files for ln in f.read_text().splitlines()]


def _fault(n_blocks: int = 3) -> KernelError:
    with pytest.raises(OutOfBoundsError) as e:
        launch(copy_in, n_blocks, X, 512)
    return e.value


def test_level_parsing_follows_cann(monkeypatch):
    for value, want in [("0", 0), ("1", 1), ("3", 3), ("4", 4), ("", 3), ("9", 3), ("info", 3)]:
        monkeypatch.setenv("ASCEND_GLOBAL_LOG_LEVEL", value)
        assert plog.level() == want, value
    monkeypatch.setenv("ASCEND_GLOBAL_LOG_LEVEL", "4")
    assert not plog.enabled(plog.ERROR)


def test_default_level_logs_only_the_fault_in_the_plog_folder(logdir):
    launch(copy_in, 2, X, 512)
    assert not (logdir / "plog").exists() or not _lines(logdir), "a good launch logs nothing at ERROR"
    err = _fault()
    files = list((logdir / "plog").iterdir())
    assert len(files) == 1 and re.fullmatch(r"plog-\d+_\d{17}\.log", files[0].name)
    lines = _lines(logdir)
    assert all(ln.startswith("[ERROR] RUNTIME(") for ln in lines)
    text = "\n".join(lines)
    assert "aicore error exception, core id is 2 (AIV), error code = 0x800000" in text   # block 2 faulted
    assert "errorStr: The DDR address of the MTE instruction is out of range." in text
    assert "the failing instruction: test_plog.py:" in text and "`DataCopy(t, g[GetBlockIdx() * 256], 256)`" in text
    assert "[memcheck] OutOfBoundsError: DataCopy read of GM buffer 'arg0' out of bounds" in text
    assert "Kernel task happen error, retCode=0x26, [aicore exception]." in text
    assert err.aicore_report in re.sub(r"^\[ERROR\] RUNTIME\(\d+,python\):\S+ \[launch.py\] ", "", text, flags=re.M)


def test_info_logs_each_launch_and_debug_each_block(logdir, monkeypatch):
    monkeypatch.setenv("ASCEND_GLOBAL_LOG_LEVEL", "1")
    launch(copy_in, 2, X, 512)
    lines = _lines(logdir)
    assert [parse_line(ln).level for ln in lines] == ["INFO", "INFO"]
    assert "kernel copy_in starts: block_dim=2, core AIV" in lines[0] and "kernel copy_in done:" in lines[1]
    monkeypatch.setenv("ASCEND_GLOBAL_LOG_LEVEL", "0")
    launch(copy_in, 2, X, 512)
    debug = [ln for ln in _lines(logdir) if ln.startswith("[DEBUG]")]
    assert len(debug) == 2 and "block 1 (AIV) ran cycles" in debug[1]


def test_print_to_stdout_writes_no_file(logdir, monkeypatch, capsys):
    monkeypatch.setenv("ASCEND_SLOG_PRINT_TO_STDOUT", "1")
    _fault()
    out = capsys.readouterr().out
    assert "[ERROR] RUNTIME(" in out and "error code = 0x800000" in out
    assert not (logdir / "plog").exists()


def test_content_is_deterministic_apart_from_timestamps_and_pids(logdir):
    def stripped():
        return [re.sub(r"\(\d+,python\):\S+ |launch=\d+ ", "", ln) for ln in _lines(logdir)]
    _fault()
    first = stripped()
    for f in (logdir / "plog").iterdir():
        f.unlink()
    _fault()
    assert stripped() == first and len(first) == 7


def test_analysis_finds_the_first_error_and_groups_repeats(logdir, capsys):
    launch(copy_in, 2, X, 512)
    for _ in range(4):
        _fault(3)
    _fault(4)                                    # 4 blocks: block 2 still faults first, same text
    summary = analyse(logdir / "plog")
    assert summary.per_level["ERROR"] == 35
    assert "EZ9999" in summary.first_error[0].message and len(summary.first_error) == 7
    assert [g.count for g in summary.groups] == [5], "numbers are blanked: one fault, five launches"
    assert summary.groups[0].launches == sorted(summary.groups[0].launches) and len(summary.groups[0].launches) == 5
    assert cli.main(["logs", str(logdir / "plog")]) == 1
    out = capsys.readouterr().out
    assert "first error: plog-" in out and "    5 x  [memcheck] OutOfBoundsError" in out


def test_analysis_of_a_clean_log_and_of_a_missing_path(logdir, monkeypatch, capsys):
    monkeypatch.setenv("ASCEND_GLOBAL_LOG_LEVEL", "1")
    launch(copy_in, 2, X, 512)
    assert cli.main(["logs", str(logdir)]) == 0
    assert "no ERROR line" in capsys.readouterr().out
    assert cli.main(["logs", str(logdir / "nowhere")]) == 2
