"""ResNet-50's layer table: the layer list against hand-computed shapes and MACs, and the timing of one layer."""
import numpy as np

from ascend_sim.kernels.m4.gemm import gemm_bt
from ascend_sim.migrate.resnet50 import cube_peak_tflops, resnet50_layers, resnet50_table, time_gemm, time_layer


def test_layer_list_has_resnet50s_shapes():
    layers = {layer.name: layer for layer in resnet50_layers()}
    assert len(layers) == 54                                  # 1 + 16 blocks x 3 + 4 downsamples + fc
    assert sum(n.endswith("downsample") for n in layers) == 4
    assert [sum(n.startswith(s) and n.endswith("conv2") for n in layers) for s in ("conv2", "conv3", "conv4",
                                                                                  "conv5")] == [3, 4, 6, 3]
    assert layers["conv1"].shape == "3x224x224 -> 64x112x112, 7x7/2"
    assert layers["conv2_x.1.conv1"].shape == "64x56x56 -> 64x56x56, 1x1/1"        # after the 3x3/2 max pool
    assert layers["conv3_x.1.conv2"].shape == "128x56x56 -> 128x28x28, 3x3/2"      # v1.5: stride in the 3x3
    assert layers["conv3_x.1.downsample"].shape == "256x56x56 -> 512x28x28, 1x1/2"
    assert layers["conv4_x.6.conv3"].shape == "256x14x14 -> 1024x14x14, 1x1/1"
    assert layers["conv5_x.3.conv3"].shape == "512x7x7 -> 2048x7x7, 1x1/1"
    assert layers["fc"].gemm_shape(8) == (8, 1000, 2048)
    assert layers["conv1"].gemm_shape(2) == (2 * 112 * 112, 64, 147)


def test_total_macs_is_the_hand_computed_4_09_gmac():
    # by hand, MACs per output pixel of each bottleneck (1x1 in->w, 3x3 w->w, 1x1 w->4w, + 1x1 in->4w downsample)
    def block(cin, w, down):
        return cin * w + 9 * w * w + w * 4 * w + (cin * 4 * w if down else 0)
    conv1 = 64 * 3 * 7 * 7 * 112 * 112                                              # 118,013,952
    stages = 0
    for w, blocks, hw, cin in [(64, 3, 56, 64), (128, 4, 28, 256), (256, 6, 14, 512), (512, 3, 7, 1024)]:
        first_3x3_in = (2 * hw) ** 2 * cin * w if w > 64 else hw * hw * cin * w   # first 1x1 runs before stride
        stages += first_3x3_in + (block(cin, w, True) - cin * w) * hw * hw
        stages += (blocks - 1) * block(4 * w, w, False) * hw * hw
    fc = 2048 * 1000
    assert conv1 + stages + fc == 4_089_184_256                                       # ~4.1 GMAC per image
    assert sum(layer.macs() for layer in resnet50_layers()) == 4_089_184_256
    assert sum(layer.macs(4) for layer in resnet50_layers()) == 4 * 4_089_184_256


def test_the_layer_table_agrees_with_the_cluster_models_parameter_count():
    from ascend_sim.cluster.models_zoo import resnet50
    net = resnet50()                          # written separately, for the scaling model of Module 3
    weights = sum(int(np.prod(shape)) for name, shape in net.params if name.endswith("weight"))
    assert sum(layer.cin * layer.cout * layer.k * layer.k for layer in resnet50_layers()) == weights
    assert sum(layer.macs() for layer in resnet50_layers()) == net.forward_macs


def test_timing_only_launch_keeps_the_cycles_of_the_computing_launch():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, (200, 72)).astype(np.float16), rng.uniform(-1, 1, (48, 72)).astype(np.float16)
    c, full = gemm_bt(a, b, np.zeros(48, np.float32), out_dtype=np.float16)
    assert np.abs(c.astype(np.float32) - a.astype(np.float32) @ b.astype(np.float32).T).max() < 0.1
    timed = time_gemm(200, 48, 72)
    assert timed.cycles == full.cycles and len(timed.trace) == len(full.trace)


def test_one_small_layer_is_timed_deterministically():
    fc = resnet50_layers()[-1]
    t1, t2 = time_layer(fc, 2), time_layer(fc, 2)
    assert t1.cycles == t2.cycles > 0 and t1.bound == t2.bound
    assert 0 < t1.tflops < t1.peak_tflops == cube_peak_tflops()
    assert abs(cube_peak_tflops() - 24 * 4096 * 2 * 1.85e9 / 1e12) < 1e-9
    rows = resnet50_table(2, layers=[fc, fc])
    assert [r.cycles for r in rows] == [t1.cycles, t1.cycles]
