"""Write docs/api_catalogue.tsv: every Ascend C basic API and the high-level APIs, with Atlas A2 support.

Reads a checkout of cannmirror/asc-devkit (the official Ascend C API pages), never copies their text: the
catalogue holds the section, the entry name as the list page spells it, the page path, and whether the
page's 产品支持情况 (supported products) says "Atlas A2 训练系列产品 ...：支持".

    python scripts/api_catalogue.py --devkit <git dir of asc-devkit> [--rev HEAD]

Re-run when the docs change; then ``python scripts/api_coverage.py`` rewrites the coverage table.
"""
from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path, PurePosixPath

BASIC = "docs/zh/api/SIMD-API/基础API/基础API列表.md"
HIGH = "docs/zh/api/SIMD-API/高阶API/高阶API列表.md"
OUT = Path(__file__).resolve().parent.parent / "docs" / "api_catalogue.tsv"
ROW = re.compile(r"^\| \[(?P<name>[^\]]+)\]\((?P<path>[^)]+)\)")


def _show(git_dir: str, rev: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{rev}:{path}"], capture_output=True,
                          text=True).stdout


def _a2(page: str) -> str:
    """yes / no / ? from the page's supported-products list."""
    m = re.search(r"Atlas A2 训练系列产品[^\n：:]*[：:]\s*(\S+)", page)
    if not m:
        return "?"
    return "yes" if m.group(1).startswith("支持") else "no"


def catalogue(git_dir: str, rev: str) -> list[tuple[str, str, str, str, str]]:
    rows = []
    for kind, listing in (("basic", BASIC), ("high", HIGH)):
        base = PurePosixPath(listing).parent
        section = sub = ""
        for line in _show(git_dir, rev, listing).splitlines():
            if line.startswith("## "):
                section, sub = line[3:].strip(), ""
            elif line.startswith("### "):
                sub = line[4:].strip()
            m = ROW.match(line)
            if not m:
                continue
            path = str(PurePosixPath(base, m.group("path").split("#")[0]))
            rows.append((kind, section + (f" / {sub}" if sub else ""), m.group("name").strip(),
                         _a2(_show(git_dir, rev, path)), path.split("SIMD-API/", 1)[-1]))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devkit", required=True, help="git dir of a cannmirror/asc-devkit mirror")
    ap.add_argument("--rev", default="HEAD")
    args = ap.parse_args()
    rev = subprocess.run(["git", "--git-dir", args.devkit, "rev-parse", args.rev], capture_output=True,
                         text=True).stdout.strip()
    rows = catalogue(args.devkit, rev)
    with OUT.open("w", encoding="utf-8") as f:
        f.write(f"# Ascend C API catalogue from cannmirror/asc-devkit @{rev[:7]} (scripts/api_catalogue.py)\n")
        f.write("kind\tsection\tapi\ta2\tpage\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    print(f"{len(rows)} entries -> {OUT}")


if __name__ == "__main__":
    main()
