"""The op-test harness: the library's own specs pass, a kernel with a tail bug fails exactly its edge
cases, and every malformed spec is refused with the field, the value and a fix."""
from __future__ import annotations

import json

import numpy as np
import pytest

from planted import TILE
from ascend_sim.tools.optest import check_case, pytest_cases, run_case, run_specs
from ascend_sim.tools.optest_spec import SpecError, generate_cases, library_specs, load_spec, make_spec

LIBRARY = library_specs()


def test_every_library_operator_has_a_spec():
    assert sorted(p.stem for p in LIBRARY) == ["conv2d", "linear", "maxpool2d", "relu", "softmax"]


@pytest.mark.parametrize("case", pytest_cases(*LIBRARY))
def test_library_operator(case):
    r = check_case(case)
    assert r.verify.count > 0 and r.cycles > 0


def test_edge_shapes_follow_the_kernel_tiling_constants():
    from ascend_sim.kernels.linear import CUBE_CHUNK, VEC_CHUNK
    from ascend_sim.kernels.relu import TILE_BYTES
    names = [c.name for c in generate_cases(load_spec(next(p for p in LIBRARY if p.stem == "linear")))]
    assert f"linear-max_tile_N{CUBE_CHUNK}-float16" in names and f"linear-tail_N{VEC_CHUNK + 1}-float32" in names
    relu_cases = generate_cases(load_spec(next(p for p in LIBRARY if p.stem == "relu")))
    assert relu_cases[0].attrs() == {} and relu_cases[0].attrs(kernel=True) == {"block_dim": 1}   # whole tiles
    relu = {c.case_name: c.dims["L"] for c in relu_cases if c.dtype == "float16"}
    assert relu == {"base": 1000, "one_L1": 1, f"max_tile_L{TILE_BYTES // 2}": TILE_BYTES // 2,
                    f"tail_L{TILE_BYTES // 2 + 1}": TILE_BYTES // 2 + 1}


def test_cases_are_deterministic():
    case = generate_cases(load_spec(LIBRARY[0]))[0]
    a, b = case.inputs(), case.inputs()
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def write_spec(tmp_path, **changes) -> str:
    spec = {"op": "floor_relu", "kernel": "planted:floor_relu",
            "reference": "ascend_sim.models.lenet_reference:relu_ref", "type": ["float16", "float32"],
            "input_desc": [{"name": "x", "shape": ["L"], "data_distribute": "uniform", "value_range": [0.5, 2]}],
            "dims": {"L": 4 * TILE}, "edge": {"dim": "L", "tile": TILE}}
    spec.update(changes)
    path = tmp_path / "floor_relu.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return str(path)


def test_a_tail_bug_fails_exactly_the_edge_cases(tmp_path):
    report = run_specs([write_spec(tmp_path)])
    failed = sorted(r.case.name for r in report.failed)
    assert failed == ["floor_relu-one_L1-float16", "floor_relu-one_L1-float32",
                      f"floor_relu-tail_L{TILE + 1}-float16", f"floor_relu-tail_L{TILE + 1}-float32"]
    tail = next(r for r in report.failed if "tail" in r.case.name)
    assert tail.verify.mismatches == 1 and tail.verify.first_mismatches == [(TILE,)]    # the one tail element
    assert not report.passed and "4/8 cases passed" in str(report)
    out = json.loads(report.write_json(tmp_path / "st_report.json").read_text(encoding="utf-8"))
    assert out["passed"] is False and len(out["failed"]) == 4
    with pytest.raises(AssertionError, match=f"FAIL floor_relu-tail_L{TILE + 1}"):
        check_case(tail.case)


def test_a_spec_written_in_a_notebook_cell(tmp_path):
    data = json.loads(open(write_spec(tmp_path), encoding="utf-8").read())
    spec = make_spec(data, "cell")
    assert len(run_specs([spec]).failed) == 4
    with pytest.raises(SpecError, match="cell: unknown field"):
        make_spec({**data, "shapes": []}, "cell")


def test_an_exception_in_the_kernel_fails_the_case_with_its_message(tmp_path):
    spec = load_spec(write_spec(tmp_path, kernel="ascend_sim.kernels:softmax"))     # softmax wants [N, K]
    r = run_case(generate_cases(spec)[0])
    assert not r.passed and "ValueError" in r.error and "softmax" in r.error and "FAIL" in r.summary()


def test_an_output_of_the_wrong_shape_fails_the_case(tmp_path):
    spec = load_spec(write_spec(tmp_path, kernel="ascend_sim.kernels:relu", reference="numpy:atleast_2d"))
    r = run_case(generate_cases(spec)[0])
    assert not r.passed and r.metrics is None and "differs from the golden shape" in r.summary()


# ----------------------------------------------------------------------------- malformed specs
@pytest.mark.parametrize("changes, words", [
    ({"input_dsec": []}, ["unknown field", "input_dsec", "typo"]),
    ({"type": ["int8"]}, ["int8", "float16"]),
    ({"input_desc": [{"name": "x", "shape": ["M"]}]}, ["'M'", "neither an integer", "dims"]),
    ({"input_desc": [{"name": "x", "shape": ["L"], "data_distribute": "gauss"}]}, ["gauss", "uniform"]),
    ({"input_desc": [{"name": "x", "shape": ["L"], "value_range": [2, 1]}]}, ["[2, 1]", "low <= high"]),
    ({"dims": {"L": 0}}, ["dims", "integers >= 1"]),
    ({"edge": {"dim": "N", "tile": 4}}, ["edge", "dim"]),
    ({"kernel": "ascend_sim.kernels:relu_v9"}, ["relu_v9", "does not name"]),
    ({"cases": [{"dims": {"L": 3}}]}, ["case_name"]),
])
def test_a_malformed_spec_is_refused_with_a_fix(tmp_path, changes, words):
    with pytest.raises(SpecError) as e:
        load_spec(write_spec(tmp_path, **changes))
    for w in words:
        assert w in str(e.value)
    assert e.value.fix and "floor_relu.json" in str(e.value)


def test_missing_fields_and_bad_json(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"op": "relu",}', encoding="utf-8")
    with pytest.raises(SpecError, match="not valid JSON"):
        load_spec(path)
    path.write_text('{"op": "relu"}', encoding="utf-8")
    with pytest.raises(SpecError, match="missing field.*kernel"):
        load_spec(path)
    with pytest.raises(SpecError, match="does not exist"):
        load_spec(tmp_path / "nope.json")
