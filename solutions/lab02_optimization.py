"""Instructor solutions of labs/lab02_optimization.ipynb (format: ascend_sim/course/grading/solution_file.py).

The setup cell of the lab provides the imports. Each `# %% exN wrong: ...` block is one replacement that its
check must fail: a wrong result, or a correct but too slow answer that misses the cycle budget.
"""

# %% ex1
@kernel
def add_relu_vector(x, y, z, n):
    """z = max(x + y, 0) for n halves on one block, with vector instructions (no scalar loop)."""
    # --- BEGIN SOLUTION hint="write the vectorised kernel"
    xGm, yGm, zGm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x, n)
    yGm.SetGlobalBuffer(y, n)
    zGm.SetGlobalBuffer(z, n)
    pipe = TPipe()
    bx, by, bz = TBuf(), TBuf(), TBuf()
    for buf in (bx, by, bz):
        pipe.InitBuffer(buf, n * 2)
    xLocal, yLocal, zLocal = bx.Get(half), by.Get(half), bz.Get(half)
    DataCopy(xLocal, xGm, n)
    DataCopy(yLocal, yGm, n)
    SetFlag(HardEvent.MTE2_V, 0)
    WaitFlag(HardEvent.MTE2_V, 0)
    Add(zLocal, xLocal, yLocal, n)
    Relu(zLocal, zLocal, n)
    SetFlag(HardEvent.V_MTE3, 0)
    WaitFlag(HardEvent.V_MTE3, 0)
    DataCopy(zGm, zLocal, n)
    # --- END SOLUTION

# %% ex1 wrong: the vector instructions stop one DataBlock short of n
# replace: Relu(zLocal, zLocal, n) -> Relu(zLocal, zLocal, n - 16)

# %% ex1 wrong: the scalar loop is correct but far over the cycle budget
# replace:
#     SetFlag(HardEvent.MTE2_V, 0)
#     WaitFlag(HardEvent.MTE2_V, 0)
#     Add(zLocal, xLocal, yLocal, n)
#     Relu(zLocal, zLocal, n)
#     SetFlag(HardEvent.V_MTE3, 0)
#     WaitFlag(HardEvent.V_MTE3, 0)
# with:
#     SetFlag(HardEvent.MTE2_S, 0)
#     WaitFlag(HardEvent.MTE2_S, 0)
#     for i in range(n):
#         zLocal.SetValue(i, max(xLocal.GetValue(i) + yLocal.GetValue(i), 0.0))
#     SetFlag(HardEvent.S_MTE3, 0)
#     WaitFlag(HardEvent.S_MTE3, 0)

# %% ex2
class Matmul256(KernelTiledMatmul):
    """The library's tiled cube matmul with your copy out: one Fixpipe per C tile, NZ -> ND, fp32 -> half."""

    def CopyOut(self):
        # --- BEGIN SOLUTION hint="DeQue L0C, one Fixpipe for the tile (F322F16), FreeTensor"
        t = self.t
        co1 = self.qCO1.DeQue(float32)
        Fixpipe(self.cGm[self.row0 * t.N + self.col0], co1,
                FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, False, QuantMode_t.F322F16))
        self.qCO1.FreeTensor(co1)
        # --- END SOLUTION


@kernel(core="AIC")
def matmul_256(a, b, c):
    """c = a @ b for 256x256 half matrices, >= 30 % faster than the default operator."""
    # --- BEGIN SOLUTION hint="build a TiledMatmulTiling, then Matmul256(): Init(a, b, None, c, t), Process()"
    t = TiledMatmulTiling(256, 256, 256, singleM=16, singleN=256, baseK=64, depth=2)
    op = Matmul256()
    op.Init(a, b, None, c, t)
    op.Process()
    # --- END SOLUTION

# %% ex2 wrong: the tiling describes K = 128: half of the sum is missing
# replace: t = TiledMatmulTiling(256, 256, 256, singleM=16, singleN=256, baseK=64, depth=2) -> t = TiledMatmulTiling(256, 256, 128, singleM=16, singleN=256, baseK=64, depth=2)

# %% ex2 wrong: Fixpipe's dstStride is the tile width, not the row length of C
# replace:                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, False, QuantMode_t.F322F16)) ->                 FixpipeParamsV220(self.cols, self.rows, self.rp, 16, False, QuantMode_t.F322F16))

# %% ex2 wrong: square 64x64 tiles (B as 128-byte rows) are correct but slower than the default
# replace: t = TiledMatmulTiling(256, 256, 256, singleM=16, singleN=256, baseK=64, depth=2) -> t = TiledMatmulTiling(256, 256, 256, singleM=64, singleN=64, baseK=32, depth=2)

# %% ex2 wrong: whole-row tiles without double buffering miss the 30 % target
# replace: t = TiledMatmulTiling(256, 256, 256, singleM=16, singleN=256, baseK=64, depth=2) -> t = TiledMatmulTiling(256, 256, 256, singleM=16, singleN=256, baseK=64, depth=1)

# %% ex3
class FusedMatmul(KernelTiledMatmul):
    """The tiled cube matmul whose copy out applies ReLU (the bias was added by the first Mmad from BT)."""

    def CopyOut(self):
        # --- BEGIN SOLUTION hint="one Fixpipe per tile with reluEn on (and F322F16)"
        t = self.t
        co1 = self.qCO1.DeQue(float32)
        Fixpipe(self.cGm[self.row0 * t.N + self.col0], co1,
                FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, True, QuantMode_t.F322F16))
        self.qCO1.FreeTensor(co1)
        # --- END SOLUTION


@kernel(core="AIC")
def matmul_add_relu(a, b, bias, c, M, N, K):
    """c = relu(a @ b + bias) in one kernel: bias through BT, ReLU on Fixpipe, double-buffered."""
    # --- BEGIN SOLUTION hint="t = choose_tiling(M, N, K, bias=True, relu=True); FusedMatmul: Init(a, b, bias, c, t), Process()"
    t = choose_tiling(M, N, K, bias=True, relu=True)
    op = FusedMatmul()
    op.Init(a, b, bias, c, t)
    op.Process()
    # --- END SOLUTION

# %% ex3 wrong: ReLU left out of the epilogue
# replace:                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, True, QuantMode_t.F322F16)) ->                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, False, QuantMode_t.F322F16))

# %% ex3 wrong: the tiling without the bias: BT is never filled, the bias is missing
# replace: t = choose_tiling(M, N, K, bias=True, relu=True) -> t = choose_tiling(M, N, K, bias=False, relu=True)

# %% ex3 wrong: one buffer per queue: correct but over the cycle budget
# replace: t = choose_tiling(M, N, K, bias=True, relu=True) -> t = choose_tiling(M, N, K, bias=True, relu=True, depth=1)
