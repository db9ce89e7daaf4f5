"""The tiny MNIST ViT end to end through the kernels: the host folds are exact, the kernel path (cube linears,
flash attention, vector LayerNorm/GELU/Add, fp16) agrees with the float32 numpy reference on held-out images and
classifies them well, and the runtime names the profiles it runs in."""
import numpy as np
import pytest

from ascend_sim.migrate import vit_ref as V
from ascend_sim.migrate.runtime import Runtime, load_model
from ascend_sim.migrate.vit import VIT_OPS, vit_graph
from ascend_sim.models.datasets import bundled_file, load_mnist_subset, normalize

N_HELDOUT = 200


@pytest.fixture(scope="module")
def weights():
    return V.load_vit_weights()


@pytest.fixture(scope="module")
def heldout():
    x, y = load_mnist_subset("heldout")
    return x[:N_HELDOUT], y[:N_HELDOUT]


@pytest.fixture(scope="module")
def kernel_run(weights, heldout):
    rt = Runtime(load_model("vit"), "910B-fp16")
    return rt, rt.evaluate(*heldout, batch=N_HELDOUT)


def test_weights_ship_small_in_float16(weights):
    V.check_weights(weights)
    assert all(v.dtype == np.float16 for v in weights.values())
    with bundled_file(V.WEIGHTS_FILE).open("rb") as f:
        assert len(f.read()) < 300_000


def test_host_folds_equal_the_reference_layers(weights):
    """Patch embedding + position as one matmul over [pixels | one-hot]; mean pooling folded into the head."""
    g = {n.name: n for n in vit_graph(weights).nodes}
    p = {k: v.astype(np.float32) for k, v in weights.items()}
    x = normalize(load_mnist_subset("heldout")[0][:3])
    tok, _ = VIT_OPS["tokens"](x)
    emb = tok.astype(np.float32) @ g["embed"].params["w"].T + g["embed"].params["b"]
    want = V.patchify(x) @ p["patch.w"].T + p["patch.b"] + p["pos"]
    np.testing.assert_allclose(emb.reshape(3, V.TOKENS, -1), want, atol=2e-3)   # pixels rounded to half
    h = np.random.default_rng(0).standard_normal((3 * V.TOKENS, V.D_MODEL)).astype(np.float32)
    pooled, _ = VIT_OPS["pool_rows"](h)
    head = pooled @ g["head"].params["w"].T + g["head"].params["b"]
    np.testing.assert_allclose(head, h.reshape(3, V.TOKENS, -1).mean(axis=1) @ p["head.w"].T + p["head.b"],
                               rtol=1e-5, atol=1e-5)


def test_kernel_path_agrees_with_the_float32_reference(weights, heldout, kernel_run):
    rt, rep = kernel_run
    x = normalize(heldout[0])
    ref = V.vit_logits_ref(weights, x)
    out = rt.run(heldout[0][:16], batch=16).astype(np.float32)
    err = np.abs(out - ref[:16]).max()
    assert err < 0.05                  # logits of order 10 through fp16 activations and 2 layers (measured 8e-3)
    no_pos = V.vit_logits_ref({**weights, "pos": np.zeros_like(weights["pos"])}, x[:16])
    assert np.abs(out - no_pos).max() > 1.0                # forgetting the position embedding would be seen
    agree = (rep.predictions == ref.argmax(axis=1)).mean()
    assert agree >= 0.99


def test_accuracy_on_held_out_images_through_the_kernels(kernel_run):
    _, rep = kernel_run
    assert rep.total == N_HELDOUT
    assert rep.accuracy >= 0.95                         # measured 98.0 % (the fp32 reference: the same)
    names = {r.name for r in rep.table.rows}
    launched = {n.name for n in load_model("vit").graph.nodes if n.op not in ("tokens", "pool_rows")}
    assert names == launched                              # every layer is a kernel launch, none done on the host
    by_op = {r.op for r in rep.table.rows}
    assert by_op == {"cube_linear", "layer_norm", "flash_mha", "add", "gelu"}


def test_vit_runs_only_on_910b_fp16_and_says_why():
    model = load_model("vit")
    with pytest.raises(ValueError, match="runs on \\['910B-fp16'\\].*take half"):
        Runtime(model, "910B-fp32")
    with pytest.raises(ValueError, match="MIX kernel"):        # the 310B has no AIV partner for the flash kernel
        Runtime(model, "310B-fp16")


def test_bad_weights_are_named(weights):
    with pytest.raises(ValueError, match="l1.fc1.w"):
        load_model("vit", {k: v for k, v in weights.items() if k != "l1.fc1.w"})
