"""ATC-style conversion: every planted bad parameter gets ATC's error code and message text, a fix and the
caller's line; NCHW/NHWC mismatches are caught before anything runs; a good conversion runs."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from ascend_sim.models.datasets import load_mnist_subset, normalize
from ascend_sim.models.lenet_reference import lenet_forward_ref, load_lenet_weights
from ascend_sim.tools.atc import AtcError, InputMismatchError, atc, infer_shapes, parse_input_shape, soc_chip

E10001 = re.compile(r"E10001: Value .+ for parameter --\w+ is invalid\. Reason: .+")


def convert(**kw):
    kw.setdefault("soc_version", "Ascend910B")
    return atc("lenet", **kw)


def raises_atc(code: str, *words: str, **kw) -> AtcError:
    with pytest.raises(AtcError) as e:
        convert(**kw)
    err = e.value
    assert err.code == code and str(err).count(code) == 1
    for w in words:
        assert w in err.rule_message, err.rule_message
    assert err.fix and err.site[0] == __file__       # the learner's line: here, the convert() call above
    return err


def test_a_good_conversion_infers_every_shape_and_runs():
    om = convert(input_shape="input:4,1,28,28")
    assert om.shapes["conv1"] == (4, 6, 28, 28) and om.shapes["pool2"] == (4, 16, 5, 5)
    assert om.shapes["flatten"] == (4, 400) and om.shapes["softmax"] == (4, 10)
    images = load_mnist_subset("heldout")[0][:4]
    probs = om.execute(normalize(images))
    ref = lenet_forward_ref(load_lenet_weights(), images)
    assert (probs.argmax(1) == ref.argmax(1)).all()
    assert convert(input_shape="input:-1,1,28,28", soc_version="Ascend910B2").chip == "Ascend910B"


def test_e10001_invalid_soc_version():
    err = raises_atc("E10001", "Value Ascend999 for parameter --soc_version is invalid", soc_version="Ascend999",
                     input_shape="input:1,1,28,28")
    assert E10001.search(str(err)) and "Ascend910B" in err.fix


def test_e10001_nhwc_format_on_an_nchw_model():
    err = raises_atc("E10001", "Value NHWC for parameter --input_format", "ONNX", input_format="NHWC",
                     input_shape="input:1,28,28,1")
    assert "transpose(0, 3, 1, 2)" in err.fix
    raises_atc("E10001", "Value NC1HWC0 for parameter --input_format", input_format="NC1HWC0",
               input_shape="input:1,1,28,28")


def test_e10001_an_nhwc_ordered_shape_under_nchw():
    err = raises_atc("E10001", "NHWC order", "C=28", "the model wants C=1", input_shape="input:1,28,28,1")
    assert "--input_shape=input:1,1,28,28" in err.fix


@pytest.mark.parametrize("shape, words", [
    ("input:1,3,28,28", ["conv1", "C=1", "[1, 3, 28, 28]"]),
    ("input:1,1,32,32", ["fc1", "400 input features", "[1, 576]"]),
    ("input:1,1,3,3", ["conv2", "5x5 kernel does not fit 1x1"]),
    ("input:1,1,28", ["4-D", "3 dimensions"]),
    ("input:1,-1,28,28", ["only the batch"]),
    ("data:1,1,28,28", ["no input named 'data'"]),
])
def test_e10001_shapes_that_do_not_fit_the_graph(shape, words):
    raises_atc("E10001", f"Value {shape} for parameter --input_shape is invalid", *words, input_shape=shape)


@pytest.mark.parametrize("shape, why", [
    ("input1,1,28,28", "no input name before a colon"),
    ("input:1,a,28,28", "dimension 'a'"),
    ("input:1,1,28,28;input:1,1,28,28", "given twice"),
    ("   ", "empty"),
    (":1,1,28,28", "no input name"),
])
def test_e10002_bad_input_shape_format(shape, why):
    err = raises_atc("E10002", "for parameter --input_shape is invalid", why, "input_name1:n1,c1,h1,w1",
                     input_shape=shape)
    assert "input:1,1,28,28" in err.fix


def test_e11005_dynamic_input_without_a_shape():
    err = raises_atc("E11005", "shape is not defined by using --input_shape for input input")
    assert "--input_shape=input:1,1,28,28" in err.fix


def test_nhwc_data_is_caught_before_running():
    om = convert(input_shape="input:2,1,28,28")
    with pytest.raises(InputMismatchError, match="NHWC layout") as e:
        om.execute(np.zeros((2, 28, 28, 1), np.float32))
    assert "transpose(0, 3, 1, 2)" in e.value.fix
    with pytest.raises(InputMismatchError, match=r"differs from the converted shape"):
        om.execute(np.zeros((3, 1, 28, 28), np.float32))


def test_parsing_and_soc_names():
    assert parse_input_shape("input:1,1,28,28;mask:-1,8") == {"input": (1, 1, 28, 28), "mask": (-1, 8)}
    assert parse_input_shape("scalar:") == {"scalar": ()}
    assert soc_chip("Ascend310B1") == "Ascend310B" and soc_chip("Ascend910") == "Ascend910"
    with pytest.raises(AtcError):
        soc_chip("Ascend910C")


def test_saved_model_description(tmp_path):
    om = convert(input_shape="input:8,1,28,28")
    data = json.loads(om.save(tmp_path / "lenet.om.json").read_text(encoding="utf-8"))
    assert data["input"] == {"name": "input", "format": "NCHW", "shape": [8, 1, 28, 28]}
    assert [n["name"] for n in data["nodes"]][-1] == "softmax" and data["nodes"][-1]["output_shape"] == [8, 10]
    assert infer_shapes(om.graph, (3, 1, 28, 28))["fc2"] == (3, 84)
