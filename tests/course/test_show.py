"""Show-regions: every show("id") a notebook uses exists and names that cell back; marker mistakes raise."""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from ascend_sim.course.show import ShowError, collect, get_region, parse_regions, regions, show, show_ids

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p for d in ("course", "labs") for p in (ROOT / d).glob("*.ipynb"))
_CALL = re.compile(r"""\bshow\(\s*["']([^"']+)["']\s*\)""")


def show_calls() -> list[tuple[str, str, str]]:
    """(notebook path relative to the repo, cell id, region id) of every show("...") in a code cell."""
    out = []
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                out += [(str(path.relative_to(ROOT)), cell.get("id", ""), rid) for rid in _CALL.findall(cell.source)]
    return out


CALLS = show_calls()


def test_notebooks_use_show_instead_of_getsource():
    assert CALLS, "no notebook calls show(); the regex or the notebooks changed"
    for path in NOTEBOOKS:
        text = path.read_text(encoding="utf-8")
        assert "inspect.getsource" not in text, f"{path.name}: display library code with show('<id>') instead"


@pytest.mark.parametrize("nb, cell, rid", CALLS, ids=[f"{c}:{r}" for _, c, r in CALLS])
def test_every_show_id_used_exists_and_names_its_cell(nb, cell, rid):
    region = get_region(rid)
    assert region.text.strip(), f"region {rid!r} is empty"
    assert f"{nb} cell {cell}" in region.note, (f"{region.where}: the marker of {rid!r} should name the cell that "
                                                f"shows it, '{nb} cell {cell}', but says {region.note!r}")


def test_every_region_is_shown_somewhere():
    assert set(show_ids()) == {rid for _, _, rid in CALLS}


def test_add_init_region_is_the_whole_init():
    text = show("add-init")
    lines = text.splitlines()
    assert lines[0].startswith("def Init(self, x, y, z,")             # dedented: the def at column 0
    assert text.count("self.pipe.InitBuffer(") == 3                  # the region runs to the end of Init
    assert "GetBlockIdx()" in text
    assert "# --- " not in text and "def Process" not in text        # markers and the next method stay out
    assert lines[1].startswith("    self.T = T = dtype")


def test_add_compute_region_matches_the_method_source():
    import inspect
    from ascend_sim.kernels.add_custom import KernelAdd
    src = inspect.getsource(KernelAdd.Compute)
    assert show("add-compute") == "\n".join(line[4:] for line in src.rstrip("\n").splitlines())


def test_regions_are_read_from_the_package_files():
    r = regions()["lenet-forward"]
    assert r.path.name == "lenet.py" and r.path.parent.name == "models"
    src = r.path.read_text(encoding="utf-8").splitlines()
    assert src[r.line - 1].strip().startswith("# --- SHOW lenet-forward")
    assert src[r.end - 1].strip() == "# --- END SHOW"
    assert show("lenet-forward").splitlines()[-1] == "    return values[self.graph.output]"   # the body, dedented once


def test_missing_id_raises_with_the_known_ids():
    with pytest.raises(ShowError, match=r"no show-region 'add-inti'.*add-init") as e:
        show("add-inti")
    assert "SHOW add-inti" in e.value.fix


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_duplicate_id_raises_with_both_places(tmp_path):
    a = _write(tmp_path, "a.py", "x = 1\n# --- SHOW twice: here\ny = 2\n# --- END SHOW\n")
    b = _write(tmp_path, "b.py", "\n\n# --- SHOW twice\nz = 3\n# --- END SHOW\n")
    assert collect([a])["twice"].text == "y = 2"
    with pytest.raises(ShowError, match=r"b\.py:3: show-region id 'twice' is already used at .*a\.py:2"):
        collect([a, b])


def test_unclosed_region_raises_with_file_and_line(tmp_path):
    p = _write(tmp_path, "k.py", "a = 1\n\n    # --- SHOW open-end: nowhere\n    b = 2\n")
    with pytest.raises(ShowError, match=r"k\.py:3: show-region 'open-end' is never closed"):
        collect([p])


def test_end_without_start_raises(tmp_path):
    with pytest.raises(ShowError, match=r"k\.py:2: '# --- END SHOW' closes no region"):
        parse_regions(tmp_path / "k.py", "a = 1\n# --- END SHOW\n")


def test_nested_regions_and_dedent(tmp_path):
    text = ("class K:\n"
            "    # --- SHOW outer\n"
            "    def f(self):\n"
            "        # --- SHOW inner: a note\n"
            "        return 1\n"
            "        # --- END SHOW\n"
            "    # --- END SHOW\n"
            "    # --- section header, not a marker\n")
    got = {r.id: r for r in parse_regions(tmp_path / "k.py", text)}
    assert got["outer"].text == "def f(self):\n    return 1"
    assert got["inner"].text == "return 1" and got["inner"].note == "a note"
    assert (got["outer"].line, got["outer"].end) == (2, 7)


def test_in_ipython_show_displays_once_per_cell(monkeypatch):
    import ascend_sim.course.show as mod

    class FakeShell:
        execution_count = 7

    shown: list[str] = []
    monkeypatch.setattr(mod, "_ipython", lambda: FakeShell)
    monkeypatch.setattr(mod, "_display", shown.append)
    listing = mod.show("relu-compute")
    assert shown == [listing] and "Relu(yLocal, xLocal, n)" in listing
    listing._ipython_display_()               # IPython showing the cell's last value: already displayed
    assert len(shown) == 1
    FakeShell.execution_count = 8             # a later cell that evaluates the variable again
    listing._ipython_display_()
    assert len(shown) == 2


def test_a_cpp_region_is_cut_by_comment_markers_and_shown_as_cpp():
    region = get_region("conv2d-compute-cpp")
    assert region.path.suffix == ".cpp" and region.language == "cpp"
    text = show("conv2d-compute-cpp")
    assert text.language == "cpp"
    assert text.splitlines()[1].startswith("__aicore__ inline void Compute(")     # dedented to column 0
    assert "--- " not in text and "CopyOut" not in text        # markers and the next method stay out
    assert get_region("conv2d-compute").language == "python"
