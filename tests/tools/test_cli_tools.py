"""The engineering subcommands end to end: exit status 0 on clean input, 1 on a planted error, 2 on a bad argument."""
from __future__ import annotations

import csv
import json
import shutil

import numpy as np

import pytest

from ascend_sim.tools.cli import main


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    assert main(["dump", "--out", str(root / "sim"), "--images", "4"]) == 0
    assert main(["dump", "--out", str(root / "ref"), "--mode", "ref", "--images", "4"]) == 0
    assert main(["dump", "--out", str(root / "hot"), "--images", "4", "--scale", "10000"]) == 0
    assert main(["dump", "--out", str(root / "ref16"), "--mode", "ref", "--dtype", "float16", "--images", "4"]) == 0
    return root


def test_compare_clean_and_overflowed_runs(dumps, capsys):
    out_csv = dumps / "clean.csv"
    assert main(["compare", str(dumps / "sim"), str(dumps / "ref"), "--out", str(out_csv)]) == 0
    assert "every node passes" in capsys.readouterr().out
    assert len(list(csv.DictReader(out_csv.open(encoding="utf-8")))) == 13
    assert main(["compare", str(dumps / "sim"), str(dumps / "ref"), "--benchmark", str(dumps / "ref16"),
                 "--out", str(out_csv)]) == 0
    assert {r["rule"] for r in csv.DictReader(out_csv.open(encoding="utf-8"))} == {"dual"}
    bad = dumps / "bad"                      # plant: outputs from conv2 on off by 30 % (an error that propagates)
    shutil.copytree(dumps / "sim", bad, dirs_exist_ok=True)
    for path in sorted(bad.glob("*.npz"))[3:]:
        with np.load(path) as z:
            arrays = {k: z[k] for k in z.files}
        arrays["output_0"] = arrays["output_0"] * np.float16(1.3)
        np.savez(path, **arrays)
    assert main(["compare", str(bad), str(dumps / "ref")]) == 1
    assert "first failing node: conv2" in capsys.readouterr().out
    assert main(["compare", str(bad), str(dumps / "ref"), "--bisect"]) == 1
    assert "first bad layer: #3 conv2 after 4 probes" in capsys.readouterr().out     # 13 layers: ceil(log2 14)


def test_overflow_names_the_producing_layer(dumps, capsys):
    assert main(["overflow", str(dumps / "hot")]) == 1
    assert "conv2 (conv2d) produced" in capsys.readouterr().out
    assert main(["overflow", str(dumps / "sim")]) == 0


def test_a_folder_that_is_not_a_dump_is_a_message_not_a_traceback(tmp_path, capsys):
    assert main(["compare", str(tmp_path), str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no index.json" in err and "Fix:" in err


def test_optest_library_and_a_wrong_spec(tmp_path, capsys):
    report = tmp_path / "st_report.json"
    assert main(["optest", "--library", "--out", str(report)]) == 0
    assert json.loads(report.read_text(encoding="utf-8"))["passed"] is True
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"op": "relu", "kernel": "ascend_sim.kernels:relu", "type": ["float16"],
                               "reference": "ascend_sim.models.lenet_reference:relu_ref", "dims": {"L": 8},
                               "input_desc": [{"name": "x", "shape": ["N"]}]}), encoding="utf-8")
    capsys.readouterr()
    assert main(["optest", str(bad)]) == 2
    assert "'N' is neither an integer" in capsys.readouterr().err
    assert main(["optest"]) == 2


def test_atc_success_and_failure(tmp_path, capsys):
    assert main(["atc", "--input_shape", "input:2,1,28,28", "--soc_version", "Ascend910B",
                 "--output", str(tmp_path / "lenet")]) == 0
    assert "ATC run success" in capsys.readouterr().out and (tmp_path / "lenet.om.json").is_file()
    assert main(["atc", "--input_shape", "input;1,1,28,28", "--soc_version", "Ascend910B"]) == 1
    err = capsys.readouterr().err
    assert "ATC run failed" in err and "E10002" in err and "Fix:" in err
