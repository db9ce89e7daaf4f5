"""Layer dumps, dump compare, bisection and overflow detection (ascend_sim.tools), each shown failing on a
planted error (planted.py): a perturbed layer, fp16 accumulation, a kernel version with a tail bug, an input
that overflows fp16."""
from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from ascend_sim import DataCopy, Exp, GlobalTensor, HardEvent, SetFlag, TBuf, TPipe, WaitFlag, half, kernel, launch
from ascend_sim import kernels
from ascend_sim.analysis.verify import compare
from ascend_sim.models.datasets import load_mnist_subset, normalize
from ascend_sim.models.lenet import LeNetRuntime
from ascend_sim.models.lenet_reference import relu_ref
from ascend_sim.tools.bisection import first_bad, first_bad_layer, first_bad_version, max_steps
from ascend_sim.tools.compare import compare_dumps, isolate
from ascend_sim.tools.dump import DumpError, DumpWriter, dump_lenet, load_dump
from ascend_sim.tools.overflow import NonFiniteWatch, find_overflow, first_nonfinite_node
from ascend_sim.tools.precision import (PrecisionInputError, ait_failures, dual_benchmark_verdict, metrics,
                                       msprobe_verdict)
from planted import conv2d_half_acc, floor_relu, perturbed_conv2

NODES = ["conv1", "relu1", "pool1", "conv2", "relu2", "pool2", "flatten", "fc1", "relu3", "fc2", "relu4", "fc3",
         "softmax"]


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    return load_mnist_subset("heldout")[0][:8]


@pytest.fixture(scope="module")
def dumps(images, tmp_path_factory):
    root = tmp_path_factory.mktemp("dumps")
    return {"sim": dump_lenet(images, root / "sim"),
            "ref": dump_lenet(images, root / "ref", mode="ref"),
            "ref16": dump_lenet(images, root / "ref16", mode="ref", dtype="float16"),
            "bad": dump_lenet(images, root / "bad", ops={"conv2d": perturbed_conv2}),
            "half_acc": dump_lenet(images, root / "half_acc", ops={"conv2d": conv2d_half_acc})}


# ----------------------------------------------------------------------------- metrics and rules
def test_metrics_match_hand_computed_values():
    g = np.array([1.0, 2.0, -2.0, 4.0])
    a = np.array([1.0, 2.5, -2.0, 3.0])
    m = metrics(a, g, np.float32)
    assert m.cosine == pytest.approx(a @ g / (np.linalg.norm(a) * np.linalg.norm(g)))
    assert m.max_abs_err == 1.0 and m.mean_abs_err == pytest.approx(1.5 / 4)
    assert m.max_rel_err == pytest.approx(0.25) and m.mean_rel_err == pytest.approx((0.25 + 0.25) / 4)
    assert m.rmse == pytest.approx(math.sqrt((0.25 + 1) / 4))
    assert m.red == pytest.approx(math.sqrt(1.25) / 5)
    assert m.err_ratio_1e2 == 0.5
    same = metrics(g, g)
    assert same.kld == pytest.approx(0, abs=1e-12) and same.cosine == 1.0 and not ait_failures(same)


def test_ait_thresholds_fire_one_by_one():
    g = np.linspace(1, 2, 1000)
    assert not ait_failures(metrics(g * 1.001, g))
    assert [f.split()[0] for f in ait_failures(metrics(g * 1.1, g))] == ["red"]       # RED 0.1 > 0.05
    assert "rmse" in " ".join(ait_failures(metrics(g + 3, g)))
    flipped = g.copy()
    flipped[::2] *= -1
    assert ait_failures(metrics(flipped, g))[0].startswith("cosine")


def test_msprobe_double_hundredth_and_thousandth_rules():
    g = np.linspace(1, 2, 10_000)
    off = g.copy()
    off[:50] *= 1.02                      # 0.5 % of elements 2 % off: 双百 holds, 双千 does not
    assert msprobe_verdict(metrics(off, g, np.float16), np.float16)[0] == "warning"
    off[:200] *= 1.02                     # 2 % of elements off: 双百 broken
    verdict, reason = msprobe_verdict(metrics(off, g, np.float16), np.float16)
    assert verdict == "error" and "双百" in reason
    assert msprobe_verdict(metrics(g * (1 + 1e-5), g, np.float32), np.float32)[0] == "pass"
    assert msprobe_verdict(metrics(g * (1 + 2e-3), g, np.float32), np.float32)[0] == "error"     # fp32: 双千


def test_dual_benchmark_ratios():
    g = np.linspace(1, 2, 1000)
    bench = metrics(g * (1 + 1e-3), g)
    assert dual_benchmark_verdict(metrics(g * (1 + 1e-3), g), bench)[0] == "pass"
    assert dual_benchmark_verdict(metrics(g * (1 + 1.5e-3), g), bench)[0] == "warning"
    verdict, reason = dual_benchmark_verdict(metrics(g * (1 + 3e-3), g), bench)
    assert verdict == "error" and "rmse 3x" in reason
    assert dual_benchmark_verdict(metrics(g + 1e-9, g), metrics(g, g))[0] == "error"    # zero benchmark error


def test_tensors_of_different_shapes_are_refused_at_the_callers_line():
    with pytest.raises(PrecisionInputError, match=r"shape \(3,\) with the golden shape \(4,\)") as e:
        metrics(np.ones(3), np.ones(4))
    assert e.value.fix and e.value.site[0] == __file__


def test_nonfinite_values_fail_every_rule():
    g = np.ones(8)
    a = g.copy()
    a[3] = np.inf
    m = metrics(a, g)
    assert m.nonfinite_actual == 1 and len(ait_failures(m)) == 5 and msprobe_verdict(m, np.float32)[0] == "error"


# ----------------------------------------------------------------------------- dumps
def test_dump_has_every_layer_with_inputs_outputs_and_kernel_times(dumps, images):
    d = load_dump(dumps["sim"])
    assert [n.name for n in d] == NODES
    conv1 = d.arrays("conv1")
    assert conv1["input_0"].shape == (8, 1, 28, 28) and conv1["output_0"].shape == (8, 6, 28, 28)
    assert conv1["output_0"].dtype == np.float16
    assert d["conv1"].meta["kernel"] == "conv2d_kernel" and d["conv1"].meta["cycles"] > 0
    assert d["flatten"].meta["launches"] == 0
    np.testing.assert_array_equal(d.arrays("relu1")["input_0"], conv1["output_0"])    # the chain is the run's
    ref = load_dump(dumps["ref"])
    assert ref.index["source"] == "reference" and ref.arrays("softmax")["output_0"].dtype == np.float32


def test_a_later_model_dumps_with_the_writer(tmp_path):
    w = DumpWriter(tmp_path, model="toy", source="simulator", dtype="float16")
    w.add("scale", "muls", [np.ones(4, np.float16)], [np.full(4, 2, np.float16)])
    d = load_dump(w.close())
    assert d.label == "toy simulator float16" and d.arrays("scale")["output_0"].tolist() == [2, 2, 2, 2]
    with pytest.raises(DumpError, match="node 'shift' is not in the dump") as e:
        d.arrays("shift")
    assert "scale" in e.value.fix


def test_a_folder_that_is_not_a_dump_is_refused(tmp_path):
    with pytest.raises(DumpError, match="no index.json") as e:
        load_dump(tmp_path)
    assert e.value.fix
    (tmp_path / "index.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(DumpError, match="expected 'ascend-sim-dump'"):
        load_dump(tmp_path)


# ----------------------------------------------------------------------------- compare
def test_fp16_simulation_against_fp32_reference_passes_at_every_layer(dumps):
    report = compare_dumps(dumps["sim"], dumps["ref"])
    assert [r.node for r in report.rows] == NODES
    assert report.passed and report.first_failing is None, str(report)


def test_a_perturbed_layer_is_the_first_failing_node(dumps, tmp_path):
    report = compare_dumps(dumps["bad"], dumps["ref"])
    assert report.first_failing.node == "conv2", str(report)
    assert all(r.passed for r in report.rows[:3])
    assert report.first_over()["red"].node == "conv2" and "red at conv2" in str(report)
    out = report.write_csv(tmp_path / "report.csv")
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [r["node"] for r in rows] == NODES
    flagged = [r["node"] for r in rows if r["first_failing"] == "yes"]
    assert flagged == ["conv2"]
    conv2 = rows[3]
    assert conv2["passed"] == "no" and float(conv2["red"]) > 0.05 and "red" in conv2["ait_failures"]
    assert float(rows[0]["cosine"]) > 0.999


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in fp16 units in the last place (both arrays fp16, same sign conventions as their bits)."""
    ia, ib = (np.asarray(v, np.float16).view(np.int16).astype(np.int32) for v in (a, b))
    ia, ib = (np.where(i < 0, -32768 - i, i) for i in (ia, ib))     # order the bit patterns like the values
    return np.abs(ia - ib)


def test_the_simulated_fp16_network_is_the_ideal_fp16_network(dumps):
    """fp32 accumulation and one rounding per op: at most one ulp apart, and only where the two fp32 sums
    (the cube's and numpy's, in different orders) land on opposite sides of a rounding point."""
    sim, ref16 = load_dump(dumps["sim"]), load_dump(dumps["ref16"])
    for node in ("conv1", "pool1", "fc1", "softmax"):
        a, b = sim.arrays(node)["output_0"], ref16.arrays(node)["output_0"]
        d = _ulps(a, b)
        assert d.max() <= 1 and np.count_nonzero(d) <= 0.01 * d.size, (node, int(d.max()), np.count_nonzero(d))


def test_fp16_accumulation_passes_ait_but_fails_the_dual_benchmark(dumps):
    assert compare_dumps(dumps["half_acc"], dumps["ref"]).passed          # the ait thresholds are too loose
    report = compare_dumps(dumps["half_acc"], dumps["ref"], benchmark=dumps["ref16"])
    first = report.first_failing
    # conv1 is the first faulty operator; relu1 and pool1 only carry its error and sit near the 2x line, so
    # which of the three crosses it first depends on the images
    assert first.node in ("conv1", "relu1", "pool1") and first.dual == "error" and "rmse" in first.dual_reason
    assert compare_dumps(dumps["sim"], dumps["ref"], benchmark=dumps["ref16"]).passed
    found = first_bad_layer(dumps["half_acc"], dumps["ref"], dumps["ref16"])
    assert found.item in ("conv1", "relu1", "pool1", "conv2") and found.steps <= 4   # conv1's error or conv2
    rt = LeNetRuntime(ops={"conv2d": conv2d_half_acc})
    severity = {"pass": 0, "warning": 1, "error": 2}
    own = isolate(rt, dumps["ref"], "conv1").msprobe                   # its own error, by msprobe's ratios
    clean = isolate(LeNetRuntime(), dumps["ref"], "conv1").msprobe
    assert own in ("warning", "error") and severity[own] > severity[clean]


def test_isolation_tells_own_error_from_inherited_error(dumps):
    rt = LeNetRuntime(ops={"conv2d": perturbed_conv2})
    assert not isolate(rt, dumps["ref"], "conv2").passed          # the bug is conv2's own
    assert isolate(rt, dumps["ref"], "relu2").passed              # relu2 only inherits it
    assert isolate(LeNetRuntime(), dumps["ref"], "conv2").passed


# ----------------------------------------------------------------------------- bisection
def test_bisection_finds_the_first_bad_layer_in_log2_steps(dumps):
    found = first_bad_layer(dumps["bad"], dumps["ref"])
    assert found.item == "conv2" and found.index == 3
    assert found.steps <= max_steps(len(NODES)) == 4
    assert first_bad_layer(dumps["sim"], dumps["ref"]).index is None


def test_bisection_finds_the_first_bad_kernel_version_in_log2_steps():
    versions = [kernels.relu] * 11 + [floor_relu] * 5           # 16 commits; the tail bug lands in #11
    x = np.linspace(0.5, 1.5, 300).astype(np.float16)            # 300 = 256 + a 44-element tail
    tested = []

    def good(version) -> bool:
        tested.append(version)
        y, _ = version(x, dtype="float16")
        return compare(y, relu_ref(x)).passed

    found = first_bad_version(versions, good)
    assert found.index == 11 and found.item is floor_relu
    assert found.steps == len(tested) <= max_steps(16) == 5 < len(versions)
    assert first_bad([1, 2, 3], lambda v: True).index is None


# ----------------------------------------------------------------------------- overflow
def _conv2_overflow_scale(images) -> float:
    """An input scale at which conv2's output passes fp16's 65,504 while conv1's stays well inside it.

    Computed with the float64 reference layers, so the test does not depend on which images the subset holds.
    """
    from ascend_sim.models.lenet_reference import conv2d_ref, load_lenet_weights, maxpool2d_ref
    p = {k: np.asarray(v, np.float64) for k, v in load_lenet_weights().items()}
    x = normalize(images[:2]).astype(np.float64)
    for scale in (100, 200, 500, 1000, 2000, 5000, 10000, 20000):
        c1 = conv2d_ref(x * scale, p["conv1.w"], p["conv1.b"], pad=2)
        c2 = conv2d_ref(maxpool2d_ref(relu_ref(c1)), p["conv2.w"], p["conv2.b"])
        if np.abs(c1).max() < 45000 and np.abs(c2).max() > 80000:      # fp16's largest value is 65,504
            return float(scale)
    raise AssertionError("no scale overflows conv2 but not conv1 for these images")


def test_overflow_names_the_first_producing_node_and_instruction(images):
    x = normalize(images[:2]) * _conv2_overflow_scale(images)      # conv2's sums pass 65504: fp16 inf
    report = find_overflow(LeNetRuntime(), x)
    assert report.node.node == "conv2"          # not softmax, where the inf turn into NaN
    ins = report.instruction
    assert ins.node == "conv2" and ins.kernel == "conv2d_kernel" and ins.op == "Cast" and ins.inf
    assert ins.site[0].endswith("conv2d.py") and ins.record >= 0
    assert find_overflow(LeNetRuntime(), normalize(images[:2])).clean


def test_dump_scan_names_the_producing_node_not_the_consumers(images, tmp_path):
    d = dump_lenet(normalize(images[:2]) * _conv2_overflow_scale(images), tmp_path / "hot")
    found = first_nonfinite_node(d)
    assert found.node == "conv2" and found.count > 0
    assert load_dump(d)["softmax"].tensors["output_0"]["nonfinite"] > 0
    assert first_nonfinite_node(dump_lenet(images[:2], tmp_path / "cool")) is None


@kernel
def exp_kernel(x, y):
    """64 half: GM -> UB, Exp, UB -> GM."""
    xg, yg = GlobalTensor(half), GlobalTensor(half)
    xg.SetGlobalBuffer(x, 64)
    yg.SetGlobalBuffer(y, 64)
    buf = TBuf()
    TPipe().InitBuffer(buf, 128)
    a = buf.Get(half)
    DataCopy(a, xg, 64)
    SetFlag(HardEvent.MTE2_V, 0)
    WaitFlag(HardEvent.MTE2_V, 0)
    Exp(a, a, 64)  # <- overflow
    SetFlag(HardEvent.V_MTE3, 0)
    WaitFlag(HardEvent.V_MTE3, 0)
    DataCopy(yg, a, 64)


def test_watch_names_the_instruction_and_kernel_line():
    x = np.zeros(64, np.float16)
    x[5] = 20.0                                 # e^20 = 4.9e8 > 65504
    with NonFiniteWatch() as watch:
        launch(exp_kernel, 1, x, np.zeros(64, np.float16))
    first = watch.first
    assert first.op == "Exp" and first.added == 1 and first.inf and first.where == "UB"
    assert "<- overflow" in open(first.site[0]).read().splitlines()[first.site[1] - 1]
    assert [(e.op, e.carried) for e in watch.events] == [("Exp", False), ("DataCopy", True)]   # carried to GM
    assert str(first).startswith("inf (overflow) made by Exp in exp_kernel block 0")


def test_nan_that_comes_with_the_input_has_no_producer():
    x = np.ones((4, 10))
    x[0, 0] = np.nan
    with NonFiniteWatch() as watch:
        kernels.softmax(x, dtype="float32")
    assert watch.events and all(e.carried for e in watch.events) and watch.first is None


def test_the_cube_overflows_at_the_fixpipe_conversion_to_gm():
    x, w = np.full((4, 40), 100.0), np.full((8, 40), 20.0)       # sums of 80,000 in fp32, > 65504 in fp16
    with NonFiniteWatch() as watch:
        y, _ = kernels.linear(x, w, np.zeros(8), dtype="float16")
    assert np.isinf(y).all()
    first = watch.first
    assert first.op == "Fixpipe" and first.where == "GM y" and first.inf and first.kernel == "linear_cube_kernel"
