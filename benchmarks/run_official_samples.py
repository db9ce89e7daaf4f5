"""Run official asc-devkit example programs unchanged on the simulator and print a verdict table.

    python benchmarks/run_official_samples.py --asc-devkit /tmp/asc-devkit [--only cast,compare] [--timeout 600]

DIR is a checkout of the public repository cannmirror/asc-devkit (e.g. ``git clone`` or ``git archive HEAD
examples | tar x``). For each family of issue 27 the example folder is copied to a temporary folder and run as its
README says, with the simulator in place of the NPU: in ``build/``, ``python3 ../scripts/gen_data.py ARGS``, then
``ascend-sim run ../X.asc -D SCENARIO_NUM=N``, then ``python3 ../scripts/verify_result.py ARGS`` (ARGS and the
scenario number read from the README's command lines). An example without a verify script judges itself: its
``main`` returns non-zero on a mismatch. Nothing of the examples is copied into this repository.

Columns: family, file, verdict (pass / FAIL / error), the cycles of each launch, and the first failing stage
(copy, gen_data, load, run, verify) with its first message line (for ``load``: the front end's
``file:line:col: unsupported: ...``, i.e. the first construct to add).
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EX = Path("examples/01_simd_cpp_api")

#: (family, example folder under examples/01_simd_cpp_api): the twelve families of issue 27 and later ones
FAMILIES = [
    ("vector add (LocalMemAllocator)", "00_introduction/01_add/add"),
    ("vector add (TQue)", "00_introduction/01_add/add_tpipe_tque"),
    ("vector add (TBuf)", "03_basic_api/04_memory_management/tmp_buffer"),
    ("LeakyRelu", "03_basic_api/01_memory_vector_compute/element_wise_arithmetic"),
    ("DataCopyPad", "03_basic_api/00_data_movement/data_copy_pad_gm2ub_ub2gm"),
    ("Cast", "03_basic_api/01_memory_vector_compute/cast"),
    ("Compare", "03_basic_api/01_memory_vector_compute/compare"),
    ("Select", "03_basic_api/01_memory_vector_compute/select"),
    ("reductions", "03_basic_api/01_memory_vector_compute/reduce"),
    ("Brcb", "03_basic_api/01_memory_vector_compute/brcb"),
    ("Duplicate", "03_basic_api/01_memory_vector_compute/duplicate"),
    ("matmul (basic API)", "00_introduction/02_matrix/matmul_basic_api"),
    ("matmul + LeakyRelu (MIX)", "00_introduction/03_fusion_operation/matmul_leakyrelu_basic_api"),
    ("SyncAll", "03_basic_api/05_sync_control/sync_all"),
    ("cross-core flags (CrossCoreSetFlag modes 0/1/2)", "03_basic_api/05_sync_control/cross_core_set_wait_flag"),
    ("atomic add", "03_basic_api/06_atomic/data_movement_with_atomic_operations"),
    ("UB bank conflict", "05_best_practices/04_memory_access/bank_conflict_ub"),
    ("ReduceRepeat", "03_basic_api/01_memory_vector_compute/reduce_repeat"),
    ("ReducePairElem", "03_basic_api/01_memory_vector_compute/reduce_pair_elem"),
    ("ReduceMax/ReduceMin/ReduceSum", "03_basic_api/01_memory_vector_compute/reduce_computation"),
]


@dataclass
class Row:
    family: str
    file: str
    verdict: str = "error"
    cycles: str = ""
    stage: str = ""
    message: str = ""


def _readme_commands(folder: Path) -> tuple[str | None, list[str], list[str] | None]:
    """(scenario number, gen_data args, verify args or None) from the README's shell lines."""
    readme = folder / "README.md"
    lines = readme.read_text(encoding="utf-8").splitlines() if readme.is_file() else []
    scenario = None
    gen, verify = [], None
    for line in lines:
        code = line.split("#", 1)[0].strip()
        if scenario is None and code.startswith("SCENARIO_NUM="):
            scenario = code.split("=", 1)[1].strip()
        words = shlex.split(code) if code.startswith("python") else []
        if len(words) >= 2 and words[1].endswith("gen_data.py") and not gen:
            gen = words[2:]
        if len(words) >= 2 and words[1].endswith("verify_result.py") and verify is None:
            verify = words[2:]
    subst = (lambda ws: [w.replace("$SCENARIO_NUM", scenario or "") for w in ws])
    return scenario, subst(gen), None if verify is None else subst(verify)


def _first_line(text: str) -> str:
    """The line that says what went wrong: a diagnostic, or a KernelError's site with its rule (the next line)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for key in ("unsupported:", "error:", "Error", "["):
        at = next((i for i, ln in enumerate(lines) if key in ln), None)
        if at is not None:
            hit = lines[at]
            if hit.startswith("[") and at + 1 < len(lines):     # [check] file:line `source`, then the rule
                hit += " -- " + lines[at + 1]
            return hit[:240]
    return (lines[-1] if lines else "")[:240]


def _run(cmd: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def run_family(family: str, rel: str, devkit: Path, timeout: float) -> Row:
    src = devkit / EX / rel
    ascs = sorted(src.glob("*.asc")) if src.is_dir() else []
    row = Row(family, f"{rel}/{ascs[0].name}" if ascs else rel)
    if len(ascs) != 1:
        row.stage, row.message = "copy", f"expected one .asc in {src}, found {len(ascs)}"
        return row
    scenario, gen_args, verify_args = _readme_commands(src)
    with tempfile.TemporaryDirectory(prefix="asc_sample_") as tmp:
        work = Path(tmp) / src.name
        shutil.copytree(src, work)
        build = work / "build"
        build.mkdir()
        try:
            if (work / "scripts" / "gen_data.py").is_file():
                done = _run([sys.executable, "../scripts/gen_data.py", *gen_args], build, timeout)
                if done.returncode:
                    row.stage, row.message = "gen_data", _first_line(done.stderr or done.stdout)
                    return row
            defines = ["-D", f"SCENARIO_NUM={scenario}"] if scenario is not None else []
            done = _run([sys.executable, "-m", "ascend_sim", "run", f"../{ascs[0].name}", "--workdir", ".",
                         *defines], build, timeout)
            row.cycles = " ".join(ln.split("  ")[1].split()[0] for ln in done.stdout.splitlines()
                                  if ln.startswith("launch ") and "cycles" in ln)
            if done.returncode:
                err = done.stderr or done.stdout
                row.stage = "load" if ("unsupported:" in err or " error:" in err) and not row.cycles else "run"
                row.message = _first_line(err) or f"main returned {done.returncode}"
                row.verdict = "FAIL" if row.stage == "run" and not done.stderr.strip() else "error"
                return row
            if verify_args is None:         # the program verifies itself (main returned 0)
                row.verdict = "pass"
                return row
            done = _run([sys.executable, "../scripts/verify_result.py", *verify_args], build, timeout)
            if done.returncode:
                row.verdict, row.stage, row.message = "FAIL", "verify", _first_line(done.stdout + done.stderr)
            else:
                row.verdict = "pass"
        except subprocess.TimeoutExpired as e:
            row.stage, row.message = "run" if "ascend_sim" in str(e.cmd) else "gen_data", f"timeout after {timeout:g} s"
    return row


def table(rows: list[Row]) -> str:
    out = ["| family | file | verdict | cycles | first failing stage: message |", "|---|---|---|---|---|"]
    for r in rows:
        message = r.message.replace("|", "\\|")          # a bar would end the table cell
        fail = f"{r.stage}: `` {message} ``" if r.stage else ""
        out.append(f"| {r.family} | `{r.file}` | {r.verdict} | {r.cycles} | {fail} |")
    passed = sum(r.verdict == "pass" for r in rows)
    out.append(f"\n{passed} of {len(rows)} pass")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--asc-devkit", required=True, type=Path, help="a checkout of cannmirror/asc-devkit")
    ap.add_argument("--only", default="", help="comma-separated words; run the families whose name or folder has one")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per step (default 900)")
    args = ap.parse_args(argv)
    if not (args.asc_devkit / EX).is_dir():
        ap.error(f"{args.asc_devkit} has no {EX}: pass the root of an asc-devkit checkout")
    words = [w.strip().lower() for w in args.only.split(",") if w.strip()]
    rows = []
    for family, rel in FAMILIES:
        if words and not any(w in family.lower() or w in rel.lower() for w in words):
            continue
        rows.append(run_family(family, rel, args.asc_devkit, args.timeout))
        print(f"{rows[-1].family}: {rows[-1].verdict} {rows[-1].stage} {rows[-1].message}", file=sys.stderr,
              flush=True)
    print(table(rows))
    return 0 if all(r.verdict == "pass" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
