"""Open the widgets demo in real JupyterLab 4 + Chromium, run all cells, check every view rendered.

Checks per view: its DOM is there and drew something (rows, bars, links),
no "Error displaying widget", no JavaScript errors; hover, zoom and an
explorer control work end to end (browser -> kernel -> browser). Screenshots
go to $ASCEND_SIM_SCREENSHOTS or out/browser/.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest

from browser_support import CHROMIUM_ARGS, REPO, Lab, chromium_path, skip_reason

pytestmark = [pytest.mark.browser, pytest.mark.skipif(skip_reason() is not None,
                                                      reason=skip_reason() or "")]

NOTEBOOK = "00_widgets_demo.ipynb"
#: cell id -> CSS selectors that must each be rendered in that cell's output
EXPECTED = {
    "timeline": [".asim-timeline"],
    "compare": [".asim-timeline"],
    "traffic": [".asim-traffic"],
    "matmul-timeline": [".asim-timeline"],
    "matmul-traffic": [".asim-traffic"],
    "many-cores-timeline": [".asim-timeline"],
    "explorer": [".asim-timeline", ".asim-traffic"],
}
RUN_TIMEOUT_MS = 240_000
SHOTS = Path(os.environ.get("ASCEND_SIM_SCREENSHOTS", REPO / "out" / "browser"))


def _cell_indices() -> dict[str, int]:
    nb = nbformat.read(REPO / "course" / NOTEBOOK, as_version=4)
    return {c.id: i for i, c in enumerate(nb.cells)}, sum(c.cell_type == "code" for c in nb.cells)


def _accept_kernel_dialog(page) -> None:
    """Answer JupyterLab's "Select Kernel" dialog (shown when several kernels could match)."""
    dialog = page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept")
    try:
        dialog.wait_for(state="visible", timeout=5_000)
    except Exception:  # noqa: BLE001 - no dialog: the kernel started by itself
        return
    dialog.click()


def _run_all(page) -> None:
    """Run → Run All Cells, through the menu as a learner would."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator('.lm-Menu-item[data-command="runmenu:run-all"]').click()


def test_demo_notebook_renders_every_view(jupyterlab: Lab) -> None:
    from playwright.sync_api import sync_playwright

    index, n_code = _cell_indices()
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(60_000)
            page.on("console", lambda m: errors.append(f"console.{m.type}: {m.text}")
                    if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
            page.goto(f"{jupyterlab.url}/lab/tree/{NOTEBOOK}", wait_until="domcontentloaded")
            page.wait_for_selector(".jp-NotebookPanel .jp-Notebook-cell", timeout=120_000)
            _accept_kernel_dialog(page)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
            _run_all(page)
            # every code cell gets an execution count, and the kernel goes idle again
            page.wait_for_function(
                """n => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
                        .filter(p => /\\[\\d+\\]/.test(p.textContent)).length >= n""",
                arg=n_code, timeout=RUN_TIMEOUT_MS)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                                   timeout=RUN_TIMEOUT_MS)
            cells = page.locator(".jp-NotebookPanel .jp-Notebook-cell")
            for cid, selectors in EXPECTED.items():
                cell = cells.nth(index[cid])
                cell.scroll_into_view_if_needed()
                for sel in selectors:
                    view = cell.locator(f"{sel}[data-rendered='1']").first
                    view.wait_for(state="attached", timeout=60_000)
                    if sel == ".asim-timeline":
                        assert int(view.get_attribute("data-rows")) > 0, cid
                        assert int(view.get_attribute("data-bars")) > 0, cid
                    else:
                        assert int(view.get_attribute("data-edges")) >= 2, cid
                        assert int(view.get_attribute("data-charts")) >= 1, cid
                out = cell.locator(".jp-OutputArea").inner_text()
                assert "Error displaying widget" not in out, (cid, out[:500])
                assert "Traceback" not in out, (cid, out[:2000])
                cell.screenshot(path=str(SHOTS / f"{cid}.png"))

            # hover shows a record's details; "+" zooms in
            tl = cells.nth(index["timeline"]).locator(".asim-timeline").first
            canvas = tl.locator("canvas.asim-canvas")
            canvas.scroll_into_view_if_needed()
            box = canvas.bounding_box()
            before = tl.get_attribute("data-view")
            page.mouse.move(box["x"] + 132 + 40, box["y"] + 9)       # first MTE2 bar of core 0
            tip = tl.locator(".asim-tip")
            tip.wait_for(state="visible", timeout=10_000)
            assert "DataCopy" in tip.inner_text() and "cycles" in tip.inner_text()
            tl.locator("button", has_text="+").click()
            page.wait_for_function("([el, v]) => el.dataset.view !== v",
                                   arg=[tl.element_handle(), before], timeout=10_000)

            # an explorer control round-trips through the kernel and redraws the views
            ex = cells.nth(index["explorer"])
            status = ex.locator(".widget-html", has_text="re-ran").first
            ex.locator(".widget-dropdown select").first.select_option("Ascend910")
            page.wait_for_function(
                "el => el.textContent.includes('chip=Ascend910,') || el.textContent.endsWith('chip=Ascend910')"
                " || /chip=Ascend910:/.test(el.textContent)",
                arg=status.element_handle(), timeout=60_000)
            ex.screenshot(path=str(SHOTS / "explorer-after-change.png"))
            page.screenshot(path=str(SHOTS / "notebook.png"), full_page=True)
        finally:
            browser.close()
    assert not errors, "JavaScript errors:\n" + "\n".join(errors)
