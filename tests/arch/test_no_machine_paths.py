"""No text in the repository points at one machine's folders or at files a user does not have.

Sources are cited by public document name, URL and section; data paths come from an environment variable or an
argument. A path such as ``/work/...``, ``/home/...`` or ``../shared/...`` works on the machine it was typed on only.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MACHINE_PATH = re.compile(r"(?<![\w.])/work/|(?<![\w.])/home/|\.\./shared\b|\bshared/(?:reference|seeds|data|design)\b"
                          r"|\"shared\" */ *\"data\"|'shared' */ *'data'")
TEXT = (".py", ".md", ".ipynb", ".toml", ".cfg", ".txt", ".json", ".yml", ".yaml", ".sh")


def _tracked_text_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / f for f in out.splitlines() if f.endswith(TEXT) and Path(f).name != Path(__file__).name]


def test_the_pattern_finds_what_it_must_and_nothing_else():
    for bad in ("see /work/shared/reference/x.md", "`../shared/data/mnist`", "/home/user/data", "shared/reference/a.md",
                'ROOT.parent / "shared" / "data"'):
        assert MACHINE_PATH.search(bad), bad
    for good in ("https://example.com/work/x", "the shared L2 cache", "ascend_sim/work/", "$ASCEND_SIM_MNIST_DIR"):
        assert not MACHINE_PATH.search(good), good


def test_no_machine_paths_in_tracked_files():
    hits = []
    for path in _tracked_text_files():
        if not path.is_file():
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if MACHINE_PATH.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not hits, "paths of one machine or files users do not have (cite the public source instead):\n" + \
        "\n".join(hits)
