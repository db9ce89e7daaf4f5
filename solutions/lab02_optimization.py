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

# %% ex4
@kernel
def add_banks(x, y, z, times):
    """z = x + y (4096 floats) computed `times` times with the repeat-form Add; x, y, z at UB addresses that
    avoid bank conflicts."""
    n = 4096
    # --- BEGIN SOLUTION hint="choose the UB byte addresses of x, y and z"
    addrs = (0x0, 0x10100, 0x20000)       # y: another bank_id and the other 8 groups; z: a third bank_id
    # --- END SOLUTION
    xg, yg, zg = GlobalTensor(float32), GlobalTensor(float32), GlobalTensor(float32)
    xg.SetGlobalBuffer(x, n)
    yg.SetGlobalBuffer(y, n)
    zg.SetGlobalBuffer(z, n)
    ub = TBuf(TPosition.VECCALC)
    TPipe().InitBuffer(ub, max(addrs) + n * 4)
    whole = ub.Get(float32)
    xl, yl, zl = (whole[a // 4:a // 4 + n] for a in addrs)
    DataCopy(xl, xg, n)
    DataCopy(yl, yg, n)
    SetFlag(HardEvent.MTE2_V, 0)
    WaitFlag(HardEvent.MTE2_V, 0)
    for _ in range(times):
        Add(zl, xl, yl, 64, n // 64, BinaryRepeatParams(1, 1, 1, 8, 8, 8))
    SetFlag(HardEvent.V_MTE3, 0)
    WaitFlag(HardEvent.V_MTE3, 0)
    DataCopy(zg, zl, n)

# %% ex4 wrong: y overlaps x (x takes 16 KB from 0x0): the second copy overwrites half of x
# replace:     addrs = (0x0, 0x10100, 0x20000)       # y: another bank_id and the other 8 groups; z: a third bank_id ->     addrs = (0x0, 0x2000, 0x20000)

# %% ex4 wrong: x and y in the same bank (0x4000 apart): correct, but every repeat's reads collide
# replace:     addrs = (0x0, 0x10100, 0x20000)       # y: another bank_id and the other 8 groups; z: a third bank_id ->     addrs = (0x0, 0x4000, 0x10000)
