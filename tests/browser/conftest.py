"""Fixtures for the real-browser test: a headless JupyterLab server and Debian's Chromium.

The test is skipped, with the reason, when Chromium, Python playwright or
JupyterLab is missing (see browser_support.skip_reason).
"""
from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from browser_support import REPO, Lab, skip_reason, start_lab, stop_lab


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: drives a real browser against a local JupyterLab")


def _lab(theme: str) -> Iterator[Lab]:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    lab, tmp = start_lab([REPO / "course" / "00_widgets_demo.ipynb"], theme=theme)
    try:
        yield lab
    finally:
        stop_lab(lab)
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def jupyterlab() -> Iterator[Lab]:
    """JupyterLab (light theme) serving a copy of the widgets demo notebook; stopped (kernels too) afterwards."""
    yield from _lab("JupyterLab Light")

