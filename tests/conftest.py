"""Suite-wide: the simulator's plog files go to a temporary folder, never to $HOME/ascend/log (engine/plog.py)."""
from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _plog_in_a_temporary_folder(tmp_path_factory):
    old = os.environ.get("ASCEND_PROCESS_LOG_PATH")
    os.environ["ASCEND_PROCESS_LOG_PATH"] = str(tmp_path_factory.mktemp("ascend_log"))
    yield
    if old is None:
        os.environ.pop("ASCEND_PROCESS_LOG_PATH", None)
    else:
        os.environ["ASCEND_PROCESS_LOG_PATH"] = old
