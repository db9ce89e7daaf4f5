"""The LeNet-5 graph runtime (ascend_sim.models.lenet) and the ``ascend-sim demo`` command, on small inputs."""
from __future__ import annotations

import json

import numpy as np
import pytest

from ascend_sim import kernels
from ascend_sim.models.lenet import DEFAULT_OPS, LENET_PARAM_SHAPES, EvalReport, LeNetRuntime, lenet_graph
from ascend_sim.models.lenet_reference import lenet_forward_ref


def random_weights(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {k: rng.normal(0, 0.3 if k.endswith(".w") else 0.05, s).astype(np.float32)
            for k, s in LENET_PARAM_SHAPES.items()}


def random_images(n: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, 28, 28), dtype=np.uint8)


def test_graph_has_the_lenet_nodes_in_order():
    g = lenet_graph(random_weights())
    assert [n.name for n in g.nodes] == ["conv1", "relu1", "pool1", "conv2", "relu2", "pool2", "flatten", "fc1",
                                         "relu3", "fc2", "relu4", "fc3", "softmax"]
    assert g.output == "softmax" and str(g).splitlines()[0] == "conv1 = conv2d(input, w=<6x1x5x5>, b=<6>, pad=2)"


def test_graph_rejects_missing_or_misshaped_weights():
    w = random_weights()
    w["fc2.w"] = w["fc2.w"][:, :100]
    with pytest.raises(ValueError, match="fc2.w.*expected shape"):
        lenet_graph(w)
    del w["fc2.w"]
    with pytest.raises(ValueError, match="fc2.w.*missing"):
        lenet_graph(w)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_runtime_matches_the_numpy_network(dtype):
    w, images = random_weights(), random_images(20)
    rt = LeNetRuntime(w, dtype=dtype)
    probs = rt.predict_proba(images, batch=12, progress=False)        # two batches, the second partial
    ref = lenet_forward_ref(w, images, np.float16 if dtype == "float16" else np.float64)
    assert probs.dtype == np.dtype(dtype) and probs.shape == (20, 10)
    np.testing.assert_allclose(probs.astype(np.float64), ref, atol=2e-3 if dtype == "float16" else 1e-5)
    assert np.array_equal(probs.argmax(1), ref.argmax(1))
    table = rt.time_table()
    assert [r.name for r in table.rows] == [n.name for n in rt.graph.nodes if n.op != "flatten"]
    assert all(r.launches == 2 and r.cycles > 0 for r in table.rows) and table.images == 20
    assert set(rt.last_results) == {r.name for r in table.rows}


def test_evaluate_reports_accuracy_and_a_time_table():
    images = random_images(8)
    rt = LeNetRuntime(random_weights())
    labels = rt.predict(images, progress=False)
    labels[:2] = (labels[:2] + 1) % 10
    report = rt.evaluate(images, labels, progress=False)
    assert isinstance(report, EvalReport) and report.correct == 6 and report.accuracy == 0.75
    table = report.table
    assert table.images == 8 and abs(sum(table.share(r) for r in table.rows) - 1) < 1e-9
    assert table.total_us == pytest.approx(sum(r.us for r in table.rows))
    text = str(report)
    assert "accuracy 75.00% (6/8)" in text and "conv2" in text and "share" in text
    assert "<table>" in report._repr_html_() and "conv1" in table._repr_html_()


def test_learner_ops_plug_in_with_or_without_the_optional_keywords():
    calls = []

    def my_relu(x):                                   # numpy only, no dtype keyword, no launch
        calls.append(x.shape)
        return np.maximum(x, 0)

    def my_softmax(x, dtype="float16", block_dim=None):
        out, res = kernels.softmax(x, dtype=dtype, block_dim=1)
        return out, [res]

    w, images = random_weights(), random_images(5)
    rt = LeNetRuntime(w, ops={"relu": my_relu, "softmax": my_softmax})
    probs = rt.predict_proba(images, progress=False)
    assert len(calls) == 4 and calls[0] == (5, 6, 28, 28)
    assert np.array_equal(probs, LeNetRuntime(w).predict_proba(images, progress=False))
    rows = {r.name: r for r in rt.time_table().rows}
    assert "relu1" not in rows and rows["softmax"].launches == 1
    assert rt.last_results["softmax"].block_dim == 1


def test_a_wrong_op_output_names_the_node():
    rt = LeNetRuntime(random_weights(), ops={"maxpool2d": lambda x, **kw: x[:1]})
    with pytest.raises(ValueError, match="operator 'maxpool2d' of node 'pool1'.*expected an array of 3 rows"):
        rt.predict(random_images(3), progress=False)


def test_unknown_operator_and_bad_input_are_reported():
    with pytest.raises(ValueError, match="float16 or float32"):
        LeNetRuntime(random_weights(), dtype="int8")
    rt = LeNetRuntime(random_weights())
    with pytest.raises(ValueError, match=r"uint8 images \[N, 28, 28\]"):
        rt.predict(np.zeros((2, 28, 28), np.float32), progress=False)
    with pytest.raises(ValueError, match="3 images but 2 labels"):
        rt.evaluate(random_images(3), np.zeros(2), progress=False)
    assert set(DEFAULT_OPS) == {"conv2d", "relu", "maxpool2d", "flatten", "linear", "softmax"}


def test_demo_writes_the_timeline_and_the_trace(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from ascend_sim.tools.demo import demo_main
    assert demo_main(["--limit", "20", "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "accuracy" in out and "conv2" in out and "share" in out
    png, = tmp_path.glob("timeline_*.png")
    trace, = tmp_path.glob("*.trace.json")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    node = trace.name.removesuffix(".trace.json")
    assert png.name == f"timeline_{node}.png" and f"{node} " in out          # the slowest row of the table
    events = json.loads(trace.read_text())["traceEvents"]
    assert sum(e["ph"] == "X" for e in events) > 5 and any(e.get("name") == "DataCopy" for e in events)


def test_demo_parser_registers_on_subparsers():
    import argparse
    from ascend_sim.tools.demo import add_demo_parser, run_demo
    parser = argparse.ArgumentParser()
    add_demo_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["demo", "--limit", "5", "--mnist-dir", "/x"])
    assert args._fn is run_demo and args.limit == 5 and args.mnist_dir == "/x" and args.out == "ascend_sim_demo_out"


def test_cli_has_the_demo_subcommand(tmp_path):
    from ascend_sim.tools import cli
    assert "demo" in cli.COMMANDS
    assert cli.main(["demo", "--limit", "4", "--out", str(tmp_path / "o"), "--no-progress", "--batch", "2"]) == 0
    assert cli.main(["demo", "--mnist-dir", str(tmp_path / "missing")]) == 2        # a message, not a traceback
