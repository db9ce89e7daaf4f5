"""ascend-sim export-notebook without a kernel or a browser: saved widget state dropped, outputs without a PNG refused."""
from __future__ import annotations

import nbformat
import pytest

from ascend_sim.tools.cli import main
from ascend_sim.tools.notebook_export import WIDGET_VIEW, drop_widget_state, export, widget_cells

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="


def _notebook(tmp_path, with_png: bool):
    nb = nbformat.v4.new_notebook()
    data = {WIDGET_VIEW: {"model_id": "m1", "version_major": 2, "version_minor": 0}, "text/plain": "TimelineView"}
    if with_png:
        data["image/png"] = PNG
    cell = nbformat.v4.new_code_cell("TimelineView(result)", id="tl")
    cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    nb.cells = [nbformat.v4.new_markdown_cell("# lesson", id="md"), cell]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {"m1": {}}, "version_major": 2,
                                                                            "version_minor": 0}}
    path = tmp_path / "lesson.ipynb"
    nbformat.write(nb, path)
    return path


def test_saved_state_is_dropped_so_the_html_shows_the_png(tmp_path) -> None:
    path = _notebook(tmp_path, with_png=True)
    out = export(path, ("html", "notebook"), tmp_path / "out", run=False)
    html = out["html"].read_text(encoding="utf-8")
    assert WIDGET_VIEW not in html and f"data:image/png;base64,{PNG}" in html
    saved = nbformat.read(out["notebook"], as_version=4)
    assert "widgets" not in saved.metadata and widget_cells(saved) == ["tl"]
    assert drop_widget_state(nbformat.read(path, as_version=4)) == 1          # the source notebook is untouched


def test_a_widget_output_without_its_png_is_refused_with_the_cell_and_the_fix(tmp_path) -> None:
    path = _notebook(tmp_path, with_png=False)
    with pytest.raises(ValueError, match=r"cells \['tl'\].*set_static_fallback\(True\)"):
        export(path, ("html",), tmp_path / "out", run=False)
    with pytest.raises(ValueError, match="unknown export format"):
        export(path, ("docx",), tmp_path / "out", run=False)


def test_command_line_writes_one_line_per_file(tmp_path, capsys) -> None:
    path = _notebook(tmp_path, with_png=True)
    assert main(["export-notebook", str(path), "--to", "html", "notebook", "--out", str(tmp_path / "o"), "--no-execute"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.rsplit("(", 1)[1] for line in lines] == ["notebook)", "html)"]


def test_a_progress_bar_exports_as_its_final_text_line(tmp_path) -> None:
    nb = nbformat.v4.new_notebook()
    meter = "conv2 with the taps re-read per chunk: 100%|##########| 1/1 [00:10<00:00, 10.02s/it]"
    bar = {WIDGET_VIEW: {"model_id": "p1", "version_major": 2, "version_minor": 0}, "text/plain": meter}
    cell = nbformat.v4.new_code_cell("with tqdm(total=1) as bar: ...", id="bar")
    cell.outputs = [nbformat.v4.new_output("display_data", data=bar)]
    nb.cells = [cell]
    path = tmp_path / "bar.ipynb"
    nbformat.write(nb, path)
    out = export(path, ("html",), tmp_path / "out", run=False)
    html = out["html"].read_text(encoding="utf-8")
    assert WIDGET_VIEW not in html and "1/1 [00:10&lt;00:00" in html
