"""Helpers of the real-browser test: find Chromium, run a headless JupyterLab server.

The test is skipped, with the reason, when Chromium, Python playwright or
JupyterLab is missing. Chromium is found at $ASCEND_SIM_CHROMIUM, else
/usr/bin/chromium (Debian: ``apt-get install -y chromium``); Playwright never
downloads a browser here.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_path() -> str | None:
    """Chromium to drive, or None (the lookup of ``ascend-sim export-notebook --to pdf``)."""
    from ascend_sim.tools.notebook_export import find_chromium

    return find_chromium()


def skip_reason() -> str | None:
    """Why the browser test cannot run here, or None."""
    if chromium_path() is None:
        return ("no Chromium found (install Debian's with `apt-get install -y chromium`, "
                "or set ASCEND_SIM_CHROMIUM to a Chromium binary)")
    for mod, pip in (("playwright.sync_api", "playwright"), ("jupyterlab", "jupyterlab"),
                     ("anywidget", "anywidget")):
        try:
            __import__(mod)
        except ImportError:
            return f"Python package {pip!r} is not installed (pip install {pip})"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Lab:
    """A running JupyterLab: its URL, root folder and process."""

    url: str
    root: Path
    proc: subprocess.Popen
    log: Path

    def api(self, path: str, method: str = "GET") -> object:
        req = urllib.request.Request(self.url + path, method=method)
        with urllib.request.urlopen(req, timeout=10) as r:  # noqa: S310 - loopback only
            body = r.read()
        return json.loads(body) if body else None


def _wait_ready(lab: Lab, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lab.proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited early:\n{lab.log.read_text()[-3000:]}")
        try:
            lab.api("/api/status")
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            time.sleep(0.5)
    raise TimeoutError(f"JupyterLab did not answer within {timeout:.0f} s:\n{lab.log.read_text()[-3000:]}")


def stop_lab(lab: Lab) -> None:
    """Shut kernels down through the API, then stop the server (SIGTERM, then SIGKILL)."""
    try:
        for k in lab.api("/api/kernels") or []:  # type: ignore[union-attr]
            lab.api(f"/api/kernels/{k['id']}", method="DELETE")
    except Exception:  # noqa: BLE001 - best effort before stopping the server
        pass
    if lab.proc.poll() is None:
        os.killpg(lab.proc.pid, signal.SIGTERM)
        try:
            lab.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(lab.proc.pid, signal.SIGKILL)
            lab.proc.wait(timeout=10)


def start_lab(notebooks: list[Path], theme: str = "JupyterLab Light") -> tuple[Lab, Path]:
    """Start JupyterLab 4 on 127.0.0.1, a free port, a temporary root holding ``notebooks``, no token.

    ``theme``: the JupyterLab theme the page opens in ("JupyterLab Light" or "JupyterLab Dark").

    Returns the server and the temporary folder to delete after :func:`stop_lab`.
    """
    tmp = Path(tempfile.mkdtemp(prefix="asim-lab-"))
    root, home = tmp / "root", tmp / "home"
    root.mkdir()
    settings = home / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    # keep every cell in the DOM (no virtual scrolling), so each widget really renders
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    apputils = home / "settings" / "@jupyterlab" / "apputils-extension"
    apputils.mkdir(parents=True)
    (apputils / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    (apputils / "themes.jupyterlab-settings").write_text(json.dumps({"theme": theme}))
    for nb in notebooks:
        shutil.copy(nb, root)
    port = _free_port()
    env = dict(os.environ)
    env.update({
        "PYTHONPATH": os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "IPYTHONDIR": str(home / "ipython"), "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0",
    })
    log = tmp / "jupyterlab.log"
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}",
           "--IdentityProvider.token=", "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
           f"--LabApp.user_settings_dir={home / 'settings'}",
           f"--LabApp.workspaces_dir={home / 'workspaces'}",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--LabApp.news_url=None"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")       # CI containers run as root
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    lab = Lab(f"http://127.0.0.1:{port}", root, proc, log)
    try:
        _wait_ready(lab, timeout=120)
    except BaseException:
        stop_lab(lab)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return lab, tmp
