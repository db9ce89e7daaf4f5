"""Open the widgets demo in real JupyterLab 4 + Chromium, run all cells, check every view rendered.

Checks per view: its DOM is there and drew something (rows, bars, links),
no "Error displaying widget", no JavaScript errors; hover, zoom and an
explorer control work end to end (browser -> kernel -> browser). Screenshots
go to $ASCEND_SIM_SCREENSHOTS or out/browser/.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
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


def _open_and_run_all(page, lab: Lab, errors: list[str], n_code: int) -> None:
    """Open the demo notebook, run every cell through the menu, wait until the kernel is idle again."""
    page.set_default_timeout(60_000)
    page.on("console", lambda m: errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.goto(f"{lab.url}/lab/tree/{NOTEBOOK}", wait_until="domcontentloaded")
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook-cell", timeout=120_000)
    _accept_kernel_dialog(page)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
    _run_all(page)
    # every code cell gets an execution count, and the kernel goes idle again
    page.wait_for_function(
        """n => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
                .filter(p => /\\[\\d+\\]/.test(p.textContent)).length >= n""",
        arg=n_code, timeout=RUN_TIMEOUT_MS)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=RUN_TIMEOUT_MS)


@contextmanager
def _ran_demo(lab: Lab, n_code: int):
    """A Chromium page on the demo notebook after Run All: yields the page; fails on JavaScript errors after."""
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            _open_and_run_all(page, lab, errors, n_code)
            yield page
        finally:
            browser.close()
    assert not errors, "JavaScript errors:\n" + "\n".join(errors)


def test_demo_notebook_renders_every_view(jupyterlab: Lab) -> None:
    index, n_code = _cell_indices()
    with _ran_demo(jupyterlab, n_code) as page:
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
        found, problems = _contrast_problems(page)
        assert len(found) > 40 and not problems, "unreadable in the light theme:\n" + "\n".join(problems[:30])


#: Text must stand out from what is behind it (WCAG AA: 4.5 for text, 3 for hints and inactive labels).
CONTRAST_JS = r"""
() => {
  const parse = (c) => {
    const m = /rgba?\(([^)]+)\)/.exec(c || ""); if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (fg, bg) => [0, 1, 2].map((i) => fg[i] * fg[3] + bg[i] * (1 - fg[3])).concat([1]);
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
                       return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const bgOf = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let bg = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const out = [];
  const check = (el, fg, bg, min) => {
    if (!el.getClientRects().length || !(el.textContent || "").trim()) return;
    out.push({ text: el.textContent.trim().slice(0, 40), cls: el.getAttribute("class") || el.tagName,
               ratio: ratio(over(fg, bg), bg), min });
  };
  const html = ".asim-toolbar button, .asim-title, .asim-legend span, .asim-stats th, .asim-stats td, "
             + ".asim-summary, .asim-detail";
  for (const el of document.querySelectorAll(html)) check(el, parse(getComputedStyle(el).color), bgOf(el), 4.5);
  for (const el of document.querySelectorAll(".asim-view .asim-hint")) check(el, parse(getComputedStyle(el).color), bgOf(el), 3);
  for (const t of document.querySelectorAll(".asim-traffic svg text")) {
    const tier = t.closest(".asim-tier");
    const bg = tier ? over(parse(getComputedStyle(tier.querySelector("rect")).fill), bgOf(t.closest("svg")))
                    : bgOf(t.closest("svg").parentElement);
    check(t, parse(getComputedStyle(t).fill), bg, tier && tier.classList.contains("unused") ? 3 : 4.5);
  }
  for (const root of document.querySelectorAll(".asim-timeline[data-rendered='1']")) {
    const cv = root.querySelector("canvas.asim-canvas");
    const px = cv.getContext("2d").getImageData(2, 2, 1, 1).data;        // a row background under the labels
    const fg = parse(root.dataset.fg.startsWith("#")
      ? `rgb(${parseInt(root.dataset.fg.slice(1, 3), 16)},${parseInt(root.dataset.fg.slice(3, 5), 16)},${parseInt(root.dataset.fg.slice(5, 7), 16)})`
      : root.dataset.fg);
    out.push({ text: "timeline canvas labels", cls: "canvas", ratio: ratio(fg, [px[0], px[1], px[2], 1]), min: 4.5,
               bg: [px[0], px[1], px[2]] });
  }
  return out;
}
"""


def _contrast_problems(page) -> tuple[list[dict], list[str]]:
    found = page.evaluate(CONTRAST_JS)
    return found, [f"{f['cls']} '{f['text']}': contrast {f['ratio']:.2f} < {f['min']}" for f in found
                   if f["ratio"] < f["min"]]


THEMED = ("timeline", "compare", "traffic", "explorer")


def _settle(page, theme: str) -> None:
    """Give the views up to 10 s to say they drew with ``theme``; the screenshots then show whether they did."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            """t => { const v = [...document.querySelectorAll('.asim-view[data-rendered="1"]')];
                      return v.length > 0 && v.every(e => e.dataset.theme === t); }""", arg=theme, timeout=10_000)
    except PlaywrightTimeout:
        pass
    page.wait_for_timeout(400)            # the second, delayed redraw of onThemeChange


def _canvas_brightness(png: bytes) -> float:
    """Mean brightness (0 black .. 1 white) of a screenshot."""
    import io

    from matplotlib.image import imread

    return float(imread(io.BytesIO(png), format="png")[..., :3].mean())


def _switch_theme(page, theme: str) -> None:
    """Settings → Theme → ``theme``, through the menu as a learner would."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Settings$")).click()
    page.locator(".lm-Menu-item", has_text=re.compile(r"^Theme")).first.hover()
    page.locator(".lm-Menu-item[data-command='apputils:change-theme']", has_text=theme).first.click()
    page.wait_for_function("t => document.body.dataset.jpThemeName === t", arg=theme, timeout=30_000)


def test_theme_switch_redraws_every_view_readably(jupyterlab: Lab) -> None:
    """Light → Dark → Light with the widgets on screen: every view redraws at once in the new colours.

    Screenshots of each view before and after are compared (the dark ones must be much darker: a canvas that
    kept the old theme would not be), then every text and the timeline canvas are checked for contrast in the
    dark theme, and the light screenshots must come back after switching back.
    """
    index, n_code = _cell_indices()
    with _ran_demo(jupyterlab, n_code) as page:
        cells = page.locator(".jp-NotebookPanel .jp-Notebook-cell")
        _settle(page, "JupyterLab Light")
        shots: dict[str, list[float]] = {}
        for phase, theme in enumerate(("JupyterLab Light", "JupyterLab Dark", "JupyterLab Light")):
            if phase:
                _switch_theme(page, theme)
                _settle(page, theme)
            tag = f"{phase}-{theme.split()[-1].lower()}"
            for cid in THEMED:
                cell = cells.nth(index[cid])
                cell.scroll_into_view_if_needed()
                view = cell.locator(".asim-view[data-rendered='1']").first
                png = view.screenshot(path=str(SHOTS / f"theme-{tag}-{cid}.png"))
                shots.setdefault(cid, []).append(_canvas_brightness(png))
            if theme.endswith("Dark"):
                found, problems = _contrast_problems(page)
                canvases = [f for f in found if f["cls"] == "canvas"]
                assert canvases and all(sum(f["bg"]) < 3 * 100 for f in canvases), f"a timeline stays light: {canvases}"
                assert len(found) > 40, f"too few texts checked: {len(found)}"
                assert not problems, "unreadable after switching to dark:\n" + "\n".join(problems[:30])
        # the comparison has hundreds of wait arrows in view: they go under the bars, not over them
        compare = cells.nth(index["compare"]).locator(".asim-timeline[data-rendered='1']").first
        assert int(compare.get_attribute("data-arrows")) > 40
        assert compare.get_attribute("data-arrow-layer") == "under"
        for cid, (light, dark, light_again) in shots.items():
            assert dark < light - 0.3, f"{cid}: the dark screenshot is not darker ({light:.2f} -> {dark:.2f})"
            assert abs(light_again - light) < 0.02, f"{cid}: switching back did not restore it ({light:.2f} vs {light_again:.2f})"
