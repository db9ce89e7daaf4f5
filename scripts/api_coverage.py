"""Rewrite the coverage table of docs/api_mapping.md from docs/api_catalogue.tsv and docs/api_status.tsv, and its
C++ column and name table from our declaration headers (ascend_sim/ascendc/include, read with libclang).

    python scripts/api_coverage.py            # rewrite the table between the coverage markers
    python scripts/api_coverage.py --check    # exit 1 if the committed table is stale (tests run this)

Status of each catalogue entry, in this order:
1. docs/api_status.tsv says so (present / partial / absent, with what is missing or modelled differently);
2. the page says Atlas A2 does not support it: "not on A2" (outside the course's chip);
3. the name the entry calls (``LoadData``, or ``DataCopy`` for "GMToL1随路转换-ND2NZ搬运（DataCopy）") is a
   public name of ``ascend_sim`` or a method of its tensor/pipe classes: "present" when the entry is the
   call itself, "unreviewed variant" when it names one form of a present call that nobody has checked yet;
4. else "absent".
"""
from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "docs" / "api_catalogue.tsv"
STATUS = ROOT / "docs" / "api_status.tsv"
MAPPING = ROOT / "docs" / "api_mapping.md"
BEGIN, END = "<!-- coverage:begin (scripts/api_coverage.py) -->", "<!-- coverage:end -->"
CXX_BEGIN, CXX_END = "<!-- cxx:begin (scripts/api_coverage.py) -->", "<!-- cxx:end -->"
CXX_SECTION = "## Every exported name in C++"
CXX_BEFORE = "## What is modelled differently"
_ASCII = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _rows(path: Path) -> list[dict]:
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln and not ln.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def call_name(api: str) -> tuple[str, bool]:
    """The function an entry calls, and whether the entry is a variant (one form) of that call."""
    m = re.match(r"^(?P<head>[^（(]*)[（(](?P<inner>[^）)]*)[）)]", api)
    if m:
        head, inner = m.group("head").strip(), m.group("inner").strip()
        if _ASCII.match(inner) and not _ASCII.match(head):
            return inner, True                      # "GMToL1随路转换-ND2NZ搬运（DataCopy）"
        return head, not inner.upper() == "ISASI"   # "LoadData（2D矩阵搬运）", "Neg(ISASI)"
    return api.strip(), False


def _public_names() -> set[str]:
    sys.path.insert(0, str(ROOT))
    import ascend_sim

    names = set(ascend_sim.__all__)
    for cls in ("TPipe", "TQue", "TBuf", "TQueBind", "LocalTensor", "GlobalTensor"):
        obj = getattr(ascend_sim, cls, None)
        if obj is not None:
            names |= {n for n in dir(obj) if not n.startswith("_")}
    return names


def statuses() -> list[tuple[dict, str, str]]:
    """(catalogue row, status, note) for every entry."""
    curated = {(r["kind"], r["api"]): r for r in _rows(STATUS)} if STATUS.exists() else {}
    public = _public_names()
    out = []
    for row in _rows(CATALOGUE):
        c = curated.get((row["kind"], row["api"]))
        if c:
            out.append((row, c["status"], c["note"]))
            continue
        if row["a2"] == "no":
            out.append((row, "not on A2", ""))
            continue
        name, variant = call_name(row["api"])
        if name in public:
            out.append((row, "unreviewed variant" if variant else "present", f"`{name}`" if variant else ""))
        else:
            out.append((row, "absent", ""))
    return out


def _declarations():
    """Our C++ headers read with libclang (ascend_sim/ascendc/header.py)."""
    sys.path.insert(0, str(ROOT))
    from ascend_sim.ascendc.header import Declarations

    return Declarations()


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


def cxx_table(decl=None) -> str:
    """Every name of ``ascend_sim.__all__`` with its C++ spelling in our headers (or why it has none)."""
    sys.path.insert(0, str(ROOT))
    import ascend_sim
    from ascend_sim.ascendc.header import PYTHON_ONLY

    decl = decl or _declarations()
    lines = [CXX_BEGIN, "",
             "Generated from `ascend_sim/ascendc/include/` (read with libclang) for every name `ascend_sim` exports; "
             "tests/ascendc/test_header_api.py fails when the two drift. Template parameters are shown by name: "
             "`SetFlag<event>(eventID)` is written `SetFlag<HardEvent::MTE2_V>(EVENT_ID0)` in a kernel and "
             "`SetFlag(HardEvent.MTE2_V, 0)` in Python. `ascend_sim/ascendc/bindings.py` lists the calls whose template "
             "arguments become leading arguments (`PREPEND_TEMPLATE_ARGS`) or keywords (`TEMPLATE_ARGS`: "
             "`Add<float, false>(...)` is `Add(..., isSetMask=False)`); other template arguments are deduced from "
             "the tensors.", "",
             "| Python (`ascend_sim`) | C++ (`kernel_operator.h`, `tiling/tiling_api.h`) |", "| --- | --- |"]
    for name in sorted(ascend_sim.__all__, key=str.lower):
        cxx = _code(decl.spelling(name)) if name not in PYTHON_ONLY else f"none: {PYTHON_ONLY[name]}"
        lines.append(f"| `{name}` | {cxx} |")
    lines += ["", CXX_END]
    return "\n".join(lines)


def table(decl=None) -> str:
    decl = decl or _declarations()
    rows = statuses()
    counts = Counter(s for _, s, _ in rows)
    a2 = [r for r in rows if r[1] != "not on A2"]
    lines = [BEGIN, "",
             f"{len(rows)} entries of the official API lists ({counts['not on A2']} not supported on Atlas A2). "
             "On A2: " + ", ".join(f"{counts[s]} {s}" for s in ("present", "partial", "unreviewed variant", "absent")
                                   if counts[s]) + ".", ""]
    for kind, title in (("basic", "Basic API (基础API)"), ("high", "High-level API (高阶API)")):
        lines += [f"### {title}", "", "| section | API | status | C++ (our header) | note |",
                  "| --- | --- | --- | --- | --- |"]
        for row, status, note in a2:
            if row["kind"] == kind:
                cxx = _code(decl.spelling(call_name(row["api"])[0], 1)) if status != "absent" else ""
                lines.append(f"| {row['section']} | {row['api']} | {status} | {cxx} | {note} |")
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def _replace(text: str, begin: str, end: str, new: str) -> str:
    head, rest = text.split(begin, 1)
    return head + new + rest.split(end, 1)[1]


def render(text: str) -> str:
    decl = _declarations()
    new, names = table(decl), cxx_table(decl)
    if CXX_BEGIN in text:
        text = _replace(text, CXX_BEGIN, CXX_END, names)
    elif CXX_BEFORE in text:
        head, rest = text.split(CXX_BEFORE, 1)
        text = head + f"{CXX_SECTION}\n\n{names}\n\n{CXX_BEFORE}" + rest
    if BEGIN in text:
        return _replace(text, BEGIN, END, new)
    return text.rstrip("\n") + "\n\n## Coverage of the Ascend C API\n\n" + new + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if docs/api_mapping.md is stale")
    args = ap.parse_args()
    old = MAPPING.read_text(encoding="utf-8")
    new = render(old)
    if args.check:
        if new != old:
            print("docs/api_mapping.md coverage table is stale: run python scripts/api_coverage.py")
            return 1
        return 0
    MAPPING.write_text(new, encoding="utf-8")
    print(new.split(BEGIN, 1)[1].split("\n")[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
