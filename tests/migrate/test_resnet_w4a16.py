"""W4A16 on the ResNet: the searched int4 clip, the fp16 edge layers, and the shipped network's held-out accuracy."""
import numpy as np
import pytest

from ascend_sim.migrate import quant
from ascend_sim.migrate.ptq import reference_forward
from ascend_sim.migrate.resnet import CONVS, load_resnet_weights, resnet_graph, resnet_logits_ref
from ascend_sim.migrate.w4a16 import edge_layers, int4_graph
from ascend_sim.models.datasets import load_mnist_subset, normalize


def test_the_mse_clip_never_loses_to_minmax_and_wins_on_an_outlier():
    rng = np.random.default_rng(0)
    w = rng.normal(0, 0.05, (64, 16)).astype(np.float32)
    w[3, 5] = 0.3                                                  # a 6-sigma outlier in group 0 of column 5
    err = {}
    for clip in ("minmax", "mse"):
        codes, scales = quant.quantize_int4_groups(w, 32, clip)
        assert codes.min() >= -8 and codes.max() <= 7 and scales.dtype == np.float16
        back = quant.dequantize_int4_groups(codes, scales).astype(np.float32)
        err[clip] = ((back - w) ** 2).reshape(2, 32, 16).sum(axis=1)
    assert (err["mse"] <= err["minmax"] * (1 + 1e-6)).all()
    assert err["mse"][0, 5] < 0.9 * err["minmax"][0, 5]             # measured 0.85
    assert err["mse"].sum() < 0.85 * err["minmax"].sum()              # measured 0.77 over all 32 groups
    with pytest.raises(ValueError, match="'minmax' or 'mse'"):
        quant.quantize_int4_groups(w, 32, "percentile")


def test_edge_layers_are_the_stem_and_the_head_and_stay_fp16():
    graph = resnet_graph(load_resnet_weights())
    assert edge_layers(graph) == ("stem", "fc")
    g4, packed = int4_graph(graph, 32, keep=edge_layers(graph), clip="mse")
    assert "stem" not in packed and "fc" not in packed and len(packed) == len(CONVS) - 1     # 8 convs in int4
    by_name = {n.name: n for n in graph.nodes}
    for node in g4.nodes:
        if node.name in ("stem", "fc"):
            assert node.params["w"] is by_name[node.name].params["w"]
        elif node.name in packed:
            assert not np.array_equal(node.params["w"], by_name[node.name].params["w"])
    with pytest.raises(ValueError, match="not weight layers"):
        int4_graph(graph, 32, keep=("stem.relu",))


def test_w4a16_with_fp16_edges_and_the_mse_clip_stays_near_fp16_on_held_out_digits():
    """The shipped ResNet on the 1,000 held-out digits: the default W4A16 (every layer int4, min-max scales)
    against stem + head fp16 with the searched clip, both in float32 numpy on the dequantised weights."""
    x, y = load_mnist_subset("heldout")
    x = normalize(x)
    p = load_resnet_weights()
    base = float((resnet_logits_ref(p, x).argmax(1) == y).mean())
    acc = {}
    for name, kw in {"all-int4": {}, "edges": {"keep": ("stem", "fc"), "clip": "mse"}}.items():
        g4, _ = int4_graph(resnet_graph(p), 32, **kw)
        acc[name] = float((reference_forward(g4, x).argmax(1) == y).mean())
    assert acc["edges"] >= base - 0.01                            # within one point of the fp32 network
    assert acc["edges"] >= acc["all-int4"]


@pytest.mark.parametrize("o, c, k", [(64, 32, 3), (32, 16, 1), (16, 1, 3)])
def test_antiquant_on_the_vector_unit_equals_the_host_dequantisation(o, c, k):
    """int4b_t -> half Cast and one Mul per row give the host's fp16 weights bit for bit; groups split
    over cores with former cores (K = 288 -> 9 groups, 32 -> 1, 9 padded to 32 -> 1)."""
    from ascend_sim.kernels.m4.antiquant import antiquant
    from ascend_sim.migrate.w4a16 import to_int4
    w = np.random.default_rng(o + c + k).normal(0, 0.1, (o, c, k, k)).astype(np.float32)
    q = to_int4(w, 32, "mse")
    dev, res = antiquant(q.packed, q.scales)
    back = np.ascontiguousarray(dev[:c * k * k].T).reshape(q.shape)
    np.testing.assert_array_equal(back, q.dequantize())
    ops = res.trace.table().op.tolist()
    assert ops.count("Cast") == q.scales.shape[0] and ops.count("Mul") == 32 * q.scales.shape[0]


def test_antiquant_names_bad_layouts():
    from ascend_sim import ArgumentError
    from ascend_sim.kernels.m4.antiquant import antiquant
    with pytest.raises(ArgumentError, match="do not match"):
        antiquant(np.zeros((64, 8), np.uint8), np.ones((2, 32), np.float16))
    with pytest.raises(ArgumentError, match="32-byte blocks"):
        antiquant(np.zeros((32, 4), np.uint8), np.ones((1, 8), np.float16))
