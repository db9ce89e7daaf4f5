"""Exports of a lesson with widgets work offline: every widget cell shows its picture from file:// with no network.

``ascend-sim export-notebook`` runs course/02_optimization.ipynb once (ten widget cells: timeline, traffic, comparisons,
the what-if explorer) and writes HTML, notebook and PDF. The HTML is opened from file:// in Chromium with every
non-file request aborted; each widget cell must hold a loaded image and no widget placeholder. The PDF, printed
by Chromium too, must hold every distinct picture. Skipped, with the reason, without Chromium or Playwright.
"""
from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import nbformat
import pytest

from browser_support import CHROMIUM_ARGS, REPO, chromium_path, skip_reason

from ascend_sim.tools.notebook_export import WIDGET_VIEW, export, widget_cells

pytestmark = [pytest.mark.browser, pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")]

LESSON = REPO / "course" / "02_optimization.ipynb"


@pytest.fixture(scope="module")
def exported():
    out = Path(tempfile.mkdtemp(prefix="asim-export-"))
    try:
        yield export(LESSON, ("html", "notebook", "pdf"), out)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _widget_cell_ids(exported) -> list[str]:
    nb = nbformat.read(exported["notebook"], as_version=4)
    ids = widget_cells(nb)
    assert len(ids) >= 8, f"the lesson should show its widgets; found {ids}"
    return ids


def test_notebook_export_keeps_every_png_and_no_widget_state(exported) -> None:
    nb = nbformat.read(exported["notebook"], as_version=4)
    assert "widgets" not in nb.metadata, "saved widget state makes nbconvert and viewers skip the PNG"
    assert not [c for c in widget_cells(nb) if c.endswith("!")], "a widget output lacks its PNG"


def test_html_from_file_shows_an_image_in_every_widget_cell_with_no_network(exported) -> None:
    from playwright.sync_api import sync_playwright

    ids = _widget_cell_ids(exported)
    html = exported["html"]
    text = html.read_text(encoding="utf-8")
    assert WIDGET_VIEW not in text, "the HTML still holds widget placeholders"
    blocked: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(offline=True)
            context.route(re.compile(r"^(?!file:).*"), lambda route: (blocked.append(route.request.url),
                                                                     route.abort()))
            page = context.new_page()
            page.goto(html.resolve().as_uri(), wait_until="load")
            for cid in ids:
                cell = page.locator(f'[id="cell-id={cid}"]')
                assert cell.count() == 1, f"cell {cid} is not in the HTML"
                imgs = cell.locator(".jp-OutputArea-output img")
                assert imgs.count() >= 1, f"cell {cid}: no image in its output"
                loaded = imgs.first.evaluate("i => i.complete && i.naturalWidth > 100 && i.naturalHeight > 50")
                assert loaded, f"cell {cid}: the image did not load from the file"
                assert "Error displaying widget" not in cell.inner_text()
            page.screenshot(path=str(html.with_suffix(".png")), full_page=False)
        finally:
            browser.close()
    assert all(not u.startswith("file:") for u in blocked)       # only the page's CDN scripts were refused


def test_pdf_printed_by_chromium_holds_every_picture(exported) -> None:
    pdf = exported["pdf"].read_bytes()
    assert pdf.startswith(b"%PDF-")
    nb = nbformat.read(exported["notebook"], as_version=4)
    pictures = {o["data"]["image/png"] for c in nb.cells for o in c.get("outputs", [])
                if WIDGET_VIEW in o.get("data", {})}
    images = len(re.findall(rb"/Subtype\s*/Image", pdf))
    assert images >= len(pictures) >= 8, f"{images} images in the PDF for {len(pictures)} distinct widget pictures"
