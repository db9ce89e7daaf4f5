"""ResNet-50's layer table (残差网络) and each layer's simulated time on the cube of a chip profile.

The layers are those of torchvision's ``resnet50`` (ResNet v1.5: the stride-2 of a downsampling bottleneck
sits in its 3x3 conv): conv1 7x7/2 (3 -> 64), a 3x3/2 max pool, the bottleneck stages conv2_x .. conv5_x
(3, 4, 6, 3 blocks of 1x1 -> 3x3 -> 1x1, widths 64/128/256/512, expansion 4, a 1x1 downsample on the
first block of each stage) and fc 2048 -> 1000 after the global average pool. Only convs and fc are listed
(they are >99.9 % of the multiply-accumulates).

Each conv is timed as the library's cube path does it (kernels/opt/conv_cube.py, ``matmul="api"``, through
``time_conv_cube``): the host im2col matrix
``[N*OH*OW, C*k*k]`` times the folded weights ``[O, C*k*k]`` through the Matmul API kernel
(kernels/m4/gemm.py) on every cube core, fp16 in, fp32 accumulation, bias through BT, fp16 out. It is the
path that scales to every layer: the LoadData3D kernel (kernels/opt/conv_l3d.py) keeps all weights in L0B and
one whole feature map in L1, which ResNet-50's layers (up to 4,608 x 512 weights, 56 x 56 x 256 maps) do not
fit. The launches run timing-only (``launch(..., numerics=False)``: the same instructions, checks and cycles,
no values), so full-size layers simulate in seconds. The im2col itself runs on the host and is not timed;
its k*k-fold larger A matrix is read from GM in the simulated time.
"""
from __future__ import annotations

from dataclasses import dataclass

from ascend_sim.cluster.cost import peak_flops
from ascend_sim.hw.chips import ChipProfile, get_chip
from ascend_sim.kernels.m4.gemm import time_gemm_bt as time_gemm
from ascend_sim.kernels.opt.conv_cube import conv_gemm_shape, conv_out_hw, time_conv_cube

#: (stage, blocks, bottleneck width, stride of the first block) of ResNet-50.
STAGES = (("conv2_x", 3, 64, 1), ("conv3_x", 4, 128, 2), ("conv4_x", 6, 256, 2), ("conv5_x", 3, 512, 2))
EXPANSION = 4
IMAGE = 224
CLASSES = 1000


@dataclass(frozen=True)
class ConvLayer:
    """One conv (or fc: a 1x1 conv on a 1x1 map) of the network, for one image of ``hw_in`` x ``hw_in``."""

    name: str
    cin: int
    cout: int
    k: int
    stride: int
    hw_in: int

    @property
    def hw_out(self) -> int:
        """Output height = width with padding k // 2."""
        return conv_out_hw(self.hw_in, self.hw_in, self.k, self.k, self.k // 2, self.stride)[0]

    def macs(self, batch: int = 1) -> int:
        """Multiply-accumulates of ``batch`` images."""
        return batch * self.cout * self.cin * self.k * self.k * self.hw_out ** 2

    def gemm_shape(self, batch: int = 1) -> tuple[int, int, int]:
        """(M, N, K) of its im2col matmul: output pixels, output channels, C*k*k."""
        return conv_gemm_shape(*self.conv_shapes(batch), self.k // 2, self.stride)

    def conv_shapes(self, batch: int = 1) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
        """The input ``[N, C, H, W]`` and weight ``[O, C, k, k]`` shapes of ``batch`` images."""
        return (batch, self.cin, self.hw_in, self.hw_in), (self.cout, self.cin, self.k, self.k)

    @property
    def shape(self) -> str:
        """``64x56x56 -> 256x56x56, 1x1/1``."""
        h, o = self.hw_in, self.hw_out
        return f"{self.cin}x{h}x{h} -> {self.cout}x{o}x{o}, {self.k}x{self.k}/{self.stride}"


def resnet50_layers() -> list[ConvLayer]:
    """Every conv and the fc of ResNet-50 (v1.5) at 224 x 224, in execution order."""
    layers = [ConvLayer("conv1", 3, 64, 7, 2, IMAGE)]
    hw, cin = layers[0].hw_out // 2, 64                     # the 3x3/2 max pool: 112 -> 56
    for stage, blocks, width, first_stride in STAGES:
        for b in range(blocks):
            s = first_stride if b == 0 else 1
            p = f"{stage}.{b + 1}"
            layers += [ConvLayer(f"{p}.conv1", cin, width, 1, 1, hw),
                       ConvLayer(f"{p}.conv2", width, width, 3, s, hw),
                       ConvLayer(f"{p}.conv3", width, width * EXPANSION, 1, 1, hw // s)]
            if b == 0:
                layers.append(ConvLayer(f"{p}.downsample", cin, width * EXPANSION, 1, s, hw))
            hw, cin = hw // s, width * EXPANSION
    layers.append(ConvLayer("fc", cin, CLASSES, 1, 1, 1))
    return layers


def cube_peak_tflops(chip: ChipProfile | str | None = None) -> float:
    """The chip's fp16 cube peak (cluster/cost.py): every AIC doing one 16x16x16 fractal a cycle, in TFLOPS."""
    return peak_flops(get_chip(chip)) / 1e12


@dataclass(frozen=True)
class LayerTime:
    """One layer's simulated launch on ``batch`` images."""

    layer: ConvLayer
    batch: int
    cycles: float
    us: float
    bound: str
    blocks: int
    peak_tflops: float

    @property
    def macs(self) -> int:
        return self.layer.macs(self.batch)

    @property
    def tflops(self) -> float:
        """Achieved: 2 x MACs over the simulated time."""
        return 2 * self.macs / (self.us * 1e-6) / 1e12

    @property
    def of_peak(self) -> float:
        return self.tflops / self.peak_tflops


def time_layer(layer: ConvLayer, batch: int = 1, chip: ChipProfile | str | None = None) -> LayerTime:
    """Simulate one layer on ``batch`` images."""
    c = get_chip(chip)
    res = time_conv_cube(*layer.conv_shapes(batch), layer.k // 2, stride=layer.stride, chip=c)
    return LayerTime(layer, batch, res.cycles, res.us, res.profile().bound, res.block_dim, cube_peak_tflops(c))


def resnet50_table(batch: int = 1, chip: ChipProfile | str | None = None,
                   layers: list[ConvLayer] | None = None) -> list[LayerTime]:
    """Every layer timed; layers of one shape are simulated once (the simulator is deterministic)."""
    c = get_chip(chip)
    done: dict[tuple, LayerTime] = {}
    rows = []
    for layer in layers or resnet50_layers():
        key = (layer.cin, layer.cout, layer.k, layer.stride, layer.hw_in)
        if key not in done:
            done[key] = time_layer(layer, batch, c)
        t = done[key]
        rows.append(LayerTime(layer, batch, t.cycles, t.us, t.bound, t.blocks, t.peak_tflops))
    return rows


def format_table(rows: list[LayerTime]) -> str:
    """A markdown table of the rows and their total."""
    out = ["| layer | shape (C x H x W) | MACs | simulated us | bound pipe | TFLOPS | of fp16 peak |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r.layer.name} | {r.layer.shape} | {r.macs / 1e6:,.1f} M | {r.us:,.1f} | {r.bound} | "
                   f"{r.tflops:,.1f} | {r.of_peak:.1%} |")
    macs, us = sum(r.macs for r in rows), sum(r.us for r in rows)
    peak = rows[0].peak_tflops if rows else 0.0
    tf = 2 * macs / (us * 1e-6) / 1e12 if us else 0.0
    out.append(f"| **total** | {len(rows)} layers | {macs / 1e9:,.3f} G | {us:,.1f} | - | {tf:,.1f} | "
               f"{tf / peak if peak else 0:.1%} |")
    return "\n".join(out)


__all__ = ["ConvLayer", "LayerTime", "STAGES", "cube_peak_tflops", "format_table", "resnet50_layers",
           "resnet50_table", "time_gemm", "time_layer"]
