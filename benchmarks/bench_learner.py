"""What one active learner costs a JupyterHub: memory and CPU of a kernel running each lesson.

Run: ``python benchmarks/bench_learner.py [notebooks ...]`` (default: every ``course/*.ipynb``) from the
repository root. Each notebook runs top to bottom in a fresh ``python3`` kernel (nbclient, as a learner's
"Run All"); a thread samples the kernel process tree every 0.1 s. One row per notebook: wall time, the kernel's
CPU seconds (user + system, children included: load-independent, unlike the wall time), the peak resident
memory (RSS) of the kernel tree, and its RSS when the notebook finished. docs/deploy.md sizes a hub from these.
A JupyterLab single-user server adds its own ~100 MB (measure it with ``--server``).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import psutil
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024


class TreeSampler(threading.Thread):
    """Samples the RSS of a process and its children until stopped; keeps the peak."""

    def __init__(self, pid: int, every: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.proc, self.every, self.peak, self.last = psutil.Process(pid), every, 0, 0
        self._halt = threading.Event()

    def tree(self) -> list[psutil.Process]:
        return [self.proc, *self.proc.children(recursive=True)]

    def rss(self) -> int:
        total = 0
        for p in self.tree():
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def cpu_seconds(self) -> float:
        total = 0.0
        for p in self.tree():
            try:
                t = p.cpu_times()
                total += t.user + t.system + t.children_user + t.children_system
            except psutil.Error:
                pass
        return total

    def run(self) -> None:
        while not self._halt.is_set():
            self.last = self.rss()
            self.peak = max(self.peak, self.last)
            time.sleep(self.every)

    def stop(self) -> None:
        self._halt.set()
        self.join()


def measure_notebook(path: Path, timeout: int = 600) -> dict[str, float]:
    """Run ``path`` in a fresh kernel; return wall s, kernel CPU s, peak and final RSS in MiB."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}})
    with client.setup_kernel():
        sampler = TreeSampler(client.km.provisioner.process.pid)
        sampler.start()
        t0 = time.perf_counter()
        for i, cell in enumerate(nb.cells):
            client.execute_cell(cell, i)
        wall = time.perf_counter() - t0
        cpu = sampler.cpu_seconds()
        sampler.stop()
        final = sampler.rss()
    return {"wall_s": wall, "cpu_s": cpu, "peak_mib": sampler.peak / MIB, "final_mib": final / MIB}


def measure_server(seconds: float = 15.0) -> float:
    """RSS (MiB) of an idle JupyterLab server that has loaded its front-end assets' handlers."""
    import tempfile
    import urllib.request

    with tempfile.TemporaryDirectory() as tmp:
        port = 8900 + os.getpid() % 500
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={port}", "--IdentityProvider.token=", f"--ServerApp.root_dir={tmp}",
               "--allow-root"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env={**os.environ, "JUPYTER_RUNTIME_DIR": tmp})
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/lab", timeout=5).read()  # noqa: S310
                    break
                except OSError:
                    time.sleep(0.5)
            time.sleep(seconds)
            return psutil.Process(proc.pid).memory_info().rss / MIB
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", type=Path)
    ap.add_argument("--server", action="store_true", help="also measure an idle JupyterLab server")
    args = ap.parse_args()
    paths = args.notebooks or sorted((REPO / "course").glob("*.ipynb"))
    print("| notebook | wall s | kernel CPU s | peak RSS MiB | RSS at end MiB |")
    print("|---|---|---|---|---|")
    for p in paths:
        try:
            r = measure_notebook(p.resolve())
        except Exception as exc:  # noqa: BLE001 - report and go on with the next notebook
            print(f"| {p.name} | did not finish: {type(exc).__name__}: {str(exc)[:120]} | | | |", flush=True)
            continue
        print(f"| {p.name} | {r['wall_s']:.0f} | {r['cpu_s']:.0f} | {r['peak_mib']:.0f} | {r['final_mib']:.0f} |",
              flush=True)
    if args.server:
        print(f"idle JupyterLab server: {measure_server():.0f} MiB RSS")


if __name__ == "__main__":
    main()
