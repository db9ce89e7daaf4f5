"""Grade a class in shards on machines without a cluster, and merge their gradebooks.

``ascend-sim grade LAB SUBS... --shard i/n`` grades only the submissions of shard ``i`` (1-based) of ``n``: a
submission belongs to the shard its file name hashes to (sha-256 of the NFC name, mod ``n``), so every machine
given the same submissions picks a disjoint part without talking to the others, whatever order or folder the
files come in. A shard's ``--out`` holds the reports in the folder names of the whole class and ``shard.json``:
the whole class's list, which submissions this shard graded, and the gradebook options.
``ascend-sim gradebook merge OUT DIRS...`` checks that the shards are the ``n`` parts of one class (same lab, same
list, same options, every shard once, every report there) and writes OUT as the unsharded run would have: the
same folders and the same ``gradebook.csv``.
"""
from __future__ import annotations

import hashlib
import json
import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ascend_sim.course.grading.report import (GRADEBOOK, GradebookOptions, Report, atomic_write, printable,
                                              read_report, write_gradebook)

__all__ = ["Shard", "shard_of", "MANIFEST", "write_manifest", "merge_shards", "ShardError"]

MANIFEST = "shard.json"
MANIFEST_SCHEMA = 1
REPORT_FILES = ("report.json", "report.csv", "executed.ipynb")


class ShardError(ValueError):
    """Shards that are not the parts of one class (the message names the rule, the folders and the fix)."""


@dataclass(frozen=True)
class Shard:
    """Part ``index`` (1-based) of ``count``."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> "Shard":
        """``"2/4"`` -> Shard(2, 4); anything else is a ShardError naming the rule and the fix."""
        parts = text.split("/")
        if len(parts) == 2 and all(p.strip().isdigit() for p in parts):
            index, count = int(parts[0]), int(parts[1])
            if 1 <= index <= count:
                return cls(index, count)
        raise ShardError(f"--shard {text!r}: a shard is i/n with 1 <= i <= n (shard i of n shards). Fix: give "
                         "each machine one of 1/n, 2/n ... n/n, e.g. --shard 1/2 on one and --shard 2/2 on the other")

    def holds(self, submission: str | os.PathLike) -> bool:
        return shard_of(Path(submission).name, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_of(name: str, count: int) -> int:
    """The shard (1..count) of a submission's file name: its own hash, so no machine needs the others' lists."""
    digest = hashlib.sha256(unicodedata.normalize("NFC", name).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def write_manifest(out_dir: Path, lab: str, submissions: Sequence[Path], slots: Sequence[str],
                   graded: Sequence[int], shard: Shard, options: GradebookOptions) -> Path:
    """``out_dir/shard.json``: what ``merge_shards`` needs to rebuild the whole class's folders and gradebook."""
    data = {"schema": MANIFEST_SCHEMA, "lab": lab, "shard": [shard.index, shard.count],
            "submissions": [str(s) for s in submissions], "slots": list(slots), "graded": list(graded),
            "gradebook": {"id_pattern": options.id_pattern, "bom": options.bom, "metadata_id": options.metadata_id}}
    return atomic_write(out_dir / MANIFEST, (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))


def _read_manifest(folder: Path) -> dict:
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ShardError(f"{printable(str(folder))} has no readable {MANIFEST} ({type(e).__name__}): it is not the "
                         "--out folder of an `ascend-sim grade ... --shard i/n` run. Fix: pass the --out folder of "
                         "every shard") from None
    if data.get("schema") != MANIFEST_SCHEMA:
        raise ShardError(f"{printable(str(path))}: schema {data.get('schema')!r}, this grader reads "
                         f"{MANIFEST_SCHEMA}. Fix: grade the shards and merge them with the same version of ascend-sim")
    return data


def _same_class(manifests: list[tuple[Path, dict]]) -> None:
    """Every shard graded the same lab, the same list of submissions, with the same options, into n shards."""
    first_dir, first = manifests[0]
    for folder, m in manifests[1:]:
        for key, what in (("lab", "lab"), ("submissions", "list of submissions"),
                          ("gradebook", "gradebook options (--id-pattern, --id-from-metadata, --bom)")):
            if m[key] != first[key]:
                raise ShardError(f"{printable(str(folder))} and {printable(str(first_dir))} graded a different {what}: "
                                 "shards must be made by the same command (same lab, same submissions in the same "
                                 "order, same options) with only --shard and --out changed. Fix: grade the odd one "
                                 "again with the others' command")
        if m["shard"][1] != first["shard"][1]:
            raise ShardError(f"{printable(str(folder))} is shard {m['shard'][0]}/{m['shard'][1]} but "
                             f"{printable(str(first_dir))} is shard {first['shard'][0]}/{first['shard'][1]}: every "
                             "shard of one class must use the same n. Fix: grade again with one n")
    count = first["shard"][1]
    seen: dict[int, Path] = {}
    for folder, m in manifests:
        i = m["shard"][0]
        if i in seen:
            raise ShardError(f"shard {i}/{count} is given twice ({printable(str(seen[i]))} and "
                             f"{printable(str(folder))}). Fix: pass each shard's --out folder once")
        seen[i] = folder
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
    if missing:
        raise ShardError(f"shard(s) {', '.join(missing)} missing: a merge needs all {count} shards of the class "
                         "(else its submissions would be left out of the gradebook). Fix: pass the --out folder of "
                         "every shard")


def merge_shards(out_dir: str | Path, folders: Sequence[str | os.PathLike]) -> tuple[list[Report], Path,
                                                                                      GradebookOptions]:
    """Write ``out_dir`` as the unsharded run would have: every report in the class's folder names and one
    ``gradebook.csv`` in the class's order. Returns the reports, the gradebook and its options."""
    out_dir = Path(out_dir)
    dirs = [Path(f) for f in folders]
    if not dirs:
        raise ShardError("no shard folders given. Fix: ascend-sim gradebook merge OUT SHARD_DIR SHARD_DIR ...")
    if any(out_dir.resolve() == d.resolve() for d in dirs):
        raise ShardError(f"OUT {printable(str(out_dir))} is one of the shard folders: the merge would write over "
                         "a shard's reports. Fix: merge into a new folder")
    manifests = [(d, _read_manifest(d)) for d in dirs]
    _same_class(manifests)
    first = manifests[0][1]
    subs, slots = first["submissions"], first["slots"]
    owner: dict[int, tuple[Path, dict]] = {}
    for folder, m in manifests:
        for i in m["graded"]:
            owner[i] = (folder, m)
    reports = []
    out_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(out_dir, 0o700)
    for i, (sub, slot) in enumerate(zip(subs, slots)):
        if i not in owner:
            raise ShardError(f"no shard graded {printable(sub)}: the shards' manifests do not cover the class. "
                             "Fix: grade every shard with the same command and merge all of them")
        folder, m = owner[i]
        try:
            report = read_report(folder / slot / "report.json")
        except (OSError, ValueError, TypeError) as e:
            raise ShardError(f"shard {m['shard'][0]}/{m['shard'][1]} ({printable(str(folder))}) has no report for "
                             f"{printable(sub)} ({type(e).__name__}: the run was interrupted?). Fix: run that shard's "
                             "command again with --resume, then merge") from None
        if report.submission != sub or report.lab != first["lab"]:
            raise ShardError(f"{printable(str(folder / slot / 'report.json'))} is the report of "
                             f"{printable(report.submission)} ({report.lab}), not of {printable(sub)} "
                             f"({first['lab']}). Fix: grade that shard again into a fresh --out folder")
        for name in REPORT_FILES:
            src = folder / slot / name
            if src.is_file():
                atomic_write(out_dir / slot / name, src.read_bytes())
        reports.append(report)
    options = GradebookOptions(**first["gradebook"])
    return reports, write_gradebook(reports, out_dir / GRADEBOOK, options), options
