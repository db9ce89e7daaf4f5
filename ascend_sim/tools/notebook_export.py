"""Exports of a lesson that work offline: HTML, notebook and PDF, every widget shown as its static picture.

Each view widget carries a PNG of itself in its output (docs/widgets.md, "Static rendering"). nbconvert shows
that PNG only when the notebook holds no saved widget state: with the state, it keeps the widget placeholder
and a script from a CDN instead, which stays blank offline. Executing with nbclient saves the state by default
(``store_widget_state``), so this module executes with it off and drops any state a notebook already carries.

    ascend-sim export-notebook course/02_optimization.ipynb --to html pdf --out out/export

The PDF is printed from the HTML by Chromium (Debian's ``chromium`` or ``$ASCEND_SIM_CHROMIUM``) with the
network blocked; ``jupyter nbconvert --to webpdf`` would want a browser that Playwright downloads itself.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable

FORMATS = ("html", "notebook", "pdf")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def find_chromium() -> str | None:
    """A Chromium to print with: $ASCEND_SIM_CHROMIUM, else chromium / chromium-browser on the PATH, or None."""
    for cand in (os.environ.get("ASCEND_SIM_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                 shutil.which("chromium-browser")):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    return None


def execute(path: Path, timeout: int = 600):  # noqa: ANN201 - nbformat.NotebookNode
    """Run ``path`` top to bottom in a fresh kernel (in its folder) without saving widget state."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def drop_widget_state(nb) -> int:  # noqa: ANN001 - nbformat.NotebookNode
    """Remove saved widget state, so every renderer falls back to the PNG; returns how many models it held."""
    state = nb.metadata.pop("widgets", None) or {}
    return len(state.get("application/vnd.jupyter.widget-state+json", {}).get("state", {}))


_METER = re.compile(r"\d+%\|.*\| *[\d.]+[kMG]?/[\d.?]+[kMG]? *\[")     # tqdm's meter: " 40%|####  | 2/5 [00:01<..."


def progress_bars_as_text(nb) -> int:  # noqa: ANN001 - nbformat.NotebookNode
    """Turn tqdm progress-bar widgets into their final text line (a static page has no bar to draw).

    A tqdm bar in a notebook is a widget whose ``text/plain`` is the meter; its view is dropped and the text stays.
    Returns how many were turned.
    """
    n = 0
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            data = o.get("data", {})
            if WIDGET_VIEW in data and "image/png" not in data and _METER.search(data.get("text/plain", "")):
                del data[WIDGET_VIEW]
                n += 1
    return n


def widget_cells(nb) -> list[str]:  # noqa: ANN001
    """Ids of the code cells with a widget output, and whether each also carries its PNG (``id`` or ``id!``)."""
    out = []
    for cell in nb.cells:
        views = [o for o in cell.get("outputs", []) if WIDGET_VIEW in o.get("data", {})]
        if views:
            out.append(cell.get("id", "") + ("" if all("image/png" in o["data"] for o in views) else "!"))
    return out


def to_html(nb, name: str) -> str:  # noqa: ANN001
    """The notebook as one self-contained HTML page (JupyterLab's look, images embedded)."""
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab", embed_images=True).from_notebook_node(
        nb, resources={"metadata": {"name": name}})
    return body


def html_to_pdf(html: Path, pdf: Path, chromium: str | None = None, timeout: float = 120) -> Path:
    """Print ``html`` to ``pdf`` with headless Chromium, no network (every host name resolves to nothing)."""
    chromium = chromium or find_chromium()
    if chromium is None:
        raise FileNotFoundError("no Chromium to print the PDF with: install Debian's (apt-get install -y chromium) "
                                "or set ASCEND_SIM_CHROMIUM to a Chromium or Chrome binary")
    with tempfile.TemporaryDirectory(prefix="asim-pdf-") as profile:
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--host-resolver-rules=MAP * ~NOTFOUND",
               f"--user-data-dir={profile}", "--no-pdf-header-footer", "--virtual-time-budget=10000",
               f"--print-to-pdf={pdf}", html.resolve().as_uri()]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0 or not pdf.is_file():
        raise RuntimeError(f"Chromium did not print {html} (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return pdf


def export(path: Path, formats: Iterable[str] = ("html",), out_dir: Path = Path("out/export"),
           run: bool = True) -> dict[str, Path]:
    """Export the notebook ``path`` to each of ``formats``; returns {format: written file}.

    ``run``: execute it first (a committed lesson has no outputs); otherwise its saved outputs are used.
    """
    import nbformat

    formats = list(dict.fromkeys(formats))
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise ValueError(f"unknown export format(s) {bad}: choose from {', '.join(FORMATS)}")
    path = Path(path)
    nb = execute(path) if run else nbformat.read(path, as_version=4)
    drop_widget_state(nb)
    progress_bars_as_text(nb)
    missing = [c.rstrip("!") for c in widget_cells(nb) if c.endswith("!")]
    if missing:
        raise ValueError(f"{path}: widget outputs without their PNG in cells {missing}: the export would show "
                         "nothing there. Fix: run with ascend_sim.viz.set_static_fallback(True) (the default)")
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    if "notebook" in formats:
        written["notebook"] = out_dir / f"{path.stem}.ipynb"
        nbformat.write(nb, written["notebook"])
    if "html" in formats or "pdf" in formats:
        html = out_dir / f"{path.stem}.html"
        html.write_text(to_html(nb, path.stem), encoding="utf-8")
        if "html" in formats:
            written["html"] = html
        if "pdf" in formats:
            written["pdf"] = html_to_pdf(html, out_dir / f"{path.stem}.pdf")
    return written


EXPORT_HELP = ("export lessons to HTML, notebook or PDF that work offline: every widget as its static picture "
               "(executes them first; no widget state is saved)")
EXPORT_ARGS = [
    (("notebooks",), {"nargs": "+", "type": Path, "help": "the .ipynb files to export"}),
    (("--to",), {"nargs": "+", "default": ["html"], "choices": FORMATS, "help": "formats (default: html)"}),
    (("--out",), {"type": Path, "default": Path("out/export"), "help": "output folder (default: out/export)"}),
    (("--no-execute",), {"action": "store_true", "help": "use the outputs saved in the notebook as they are"}),
]


def run_export(args) -> int:  # noqa: ANN001 - argparse.Namespace
    """``ascend-sim export-notebook``: one line per written file."""
    for nb in args.notebooks:
        for fmt, path in export(nb, args.to, args.out, run=not args.no_execute).items():
            print(f"{nb} -> {path} ({fmt})")
    return 0
