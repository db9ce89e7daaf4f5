"""LeNet-5 with Module 2's optimised kernels: same accuracy as Module 1 on the held-out subset, fewer cycles."""
import numpy as np

from ascend_sim.models.datasets import load_mnist_subset
from ascend_sim.models.lenet import LeNetRuntime
from ascend_sim.models.lenet_opt import LeNetOptRuntime, lenet_opt_graph
from ascend_sim.models.lenet_reference import lenet_predict_ref, load_lenet_weights


def test_optimised_lenet_keeps_the_accuracy_and_is_faster():
    x, y = load_mnist_subset("heldout")
    x, y = x[:400], y[:400]
    opt = LeNetOptRuntime(keep_results=False).evaluate(x, y, progress=False)
    base = LeNetRuntime(keep_results=False).evaluate(x, y, progress=False)
    ref = lenet_predict_ref(load_lenet_weights(), x, np.float16)
    assert opt.accuracy == base.accuracy == float((ref == y).mean())
    assert (opt.predictions == base.predictions).mean() >= 0.995
    assert opt.table.total_cycles < 0.2 * base.table.total_cycles          # measured 7.3x on 1,000 images
    assert len(opt.table.rows) == 4 and len(base.table.rows) == 12      # 8 launches fused away


def test_opt_graph_fuses_the_relus():
    g = lenet_opt_graph(load_lenet_weights())
    assert [n.op for n in g.nodes].count("relu") == 0
    ops = [n.op for n in g.nodes]
    assert ops.count("mlp3_cube") == 1 and ops.count("conv_relu_pool_cube") == 2
    assert not {"linear", "maxpool2d", "conv2d"} & set(ops)
    assert g.output == "softmax"
