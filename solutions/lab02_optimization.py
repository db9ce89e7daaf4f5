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

# %% ex1 wrong: the vector instructions stop one DataBlock short of n [key: values]
# replace: Relu(zLocal, zLocal, n) -> Relu(zLocal, zLocal, n - 16)

# %% ex1 wrong: the scalar loop is correct but far over the cycle budget [key: budget]
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
@kernel
def add_tails(x, y, z, total):
    """z = x + y: total halves (a multiple of 16) split over GetBlockNum() cores in whole 32-byte DataBlocks."""
    TILE = 2048                                   # halves per tile (4 KB)
    # --- BEGIN SOLUTION hint="split the DataBlocks over the cores (former/tail cores), then the tile loop"
    blocks = total // 16                          # 32-byte DataBlocks of 16 halves
    formerNum = blocks % GetBlockNum()            # the first formerNum cores take one DataBlock more
    tailLength = blocks // GetBlockNum() * 16
    formerLength = tailLength + 16
    idx = GetBlockIdx()
    if idx < formerNum:
        offset, length = idx * formerLength, formerLength
    else:
        offset, length = formerNum * formerLength + (idx - formerNum) * tailLength, tailLength
    xGm, yGm, zGm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x + offset, length)
    yGm.SetGlobalBuffer(y + offset, length)
    zGm.SetGlobalBuffer(z + offset, length)
    pipe = TPipe()
    qx, qy, qz = TQue(TPosition.VECIN, 2), TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
    for q in (qx, qy, qz):
        pipe.InitBuffer(q, 2, TILE * 2)
    for start in range(0, length, TILE):
        count = min(TILE, length - start)         # the last tile: still a whole number of DataBlocks
        xl, yl = qx.AllocTensor(half), qy.AllocTensor(half)
        DataCopy(xl, xGm[start], count)
        DataCopy(yl, yGm[start], count)
        qx.EnQue(xl)
        qy.EnQue(yl)
        xl, yl, zl = qx.DeQue(half), qy.DeQue(half), qz.AllocTensor(half)
        Add(zl, xl, yl, count)
        qz.EnQue(zl)
        qx.FreeTensor(xl)
        qy.FreeTensor(yl)
        zl = qz.DeQue(half)
        DataCopy(zGm[start], zl, count)
        qz.FreeTensor(zl)
    # --- END SOLUTION

# %% ex2 wrong: a tail core starts at idx * tailLength, inside the former cores' range [key: GMWriteConflictError]
# replace:         offset, length = formerNum * formerLength + (idx - formerNum) * tailLength, tailLength ->         offset, length = idx * tailLength, tailLength

# %% ex2 wrong: splits the elements, not the 32-byte DataBlocks: cores start at unaligned addresses [key: AlignmentError]
# replace:
#     blocks = total // 16                          # 32-byte DataBlocks of 16 halves
#     formerNum = blocks % GetBlockNum()            # the first formerNum cores take one DataBlock more
#     tailLength = blocks // GetBlockNum() * 16
#     formerLength = tailLength + 16
# with:
#     formerNum = total % GetBlockNum()
#     tailLength = total // GetBlockNum()
#     formerLength = tailLength + 1

# %% ex2 wrong: whole tiles per core and the rest on the last core: correct, but one core does most of the work [key: budget]
# replace:
#     if idx < formerNum:
#         offset, length = idx * formerLength, formerLength
#     else:
#         offset, length = formerNum * formerLength + (idx - formerNum) * tailLength, tailLength
# with:
#     per = total // GetBlockNum() // TILE * TILE
#     offset = idx * per
#     length = per if idx < GetBlockNum() - 1 else total - offset

# %% ex3
@kernel
def scale_stream(x, z, n):
    """z = 2 x + 1 for n halves per block (n a multiple of 16), streamed GM -> UB -> GM under a cycle budget."""
    # --- BEGIN SOLUTION hint="choose BUFFER_NUM and TILE, then the CopyIn / Compute / CopyOut loop"
    BUFFER_NUM, TILE = 2, 4096                    # double buffering, 8 KB copies
    offset = n * GetBlockIdx()
    xGm, zGm = GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x + offset, n)
    zGm.SetGlobalBuffer(z + offset, n)
    pipe = TPipe()
    qin, qout = TQue(TPosition.VECIN, BUFFER_NUM), TQue(TPosition.VECOUT, BUFFER_NUM)
    pipe.InitBuffer(qin, BUFFER_NUM, TILE * 2)
    pipe.InitBuffer(qout, BUFFER_NUM, TILE * 2)
    for start in range(0, n, TILE):
        count = min(TILE, n - start)              # the last tile is shorter
        xl = qin.AllocTensor(half)
        DataCopy(xl, xGm[start], count)
        qin.EnQue(xl)
        xl, zl = qin.DeQue(half), qout.AllocTensor(half)
        Muls(zl, xl, 2.0, count)
        Adds(zl, zl, 1.0, count)
        qout.EnQue(zl)
        qin.FreeTensor(xl)
        zl = qout.DeQue(half)
        DataCopy(zGm[start], zl, count)
        qout.FreeTensor(zl)
    # --- END SOLUTION

# %% ex3 wrong: the loop stops before the last, shorter tile [key: unwritten]
# replace:     for start in range(0, n, TILE): ->     for start in range(0, n - TILE + 1, TILE):

# %% ex3 wrong: one buffer per queue: correct, but copies and vector work never overlap [key: budget]
# replace:     BUFFER_NUM, TILE = 2, 4096                    # double buffering, 8 KB copies ->     BUFFER_NUM, TILE = 1, 4096

# %% ex3 wrong: 512-byte tiles: correct, but every copy and instruction pays its fixed cost 16 times as often [key: budget/small-copies]
# replace:     BUFFER_NUM, TILE = 2, 4096                    # double buffering, 8 KB copies ->     BUFFER_NUM, TILE = 2, 256

# %% ex3 wrong: 32 KB tiles: correct, but a block is only three tiles, so the first copy in and the last copy out overlap nothing [key: budget/large-tiles]
# replace: BUFFER_NUM, TILE = 2, 4096 -> BUFFER_NUM, TILE = 2, 16384

# %% ex3 wrong: 64 KB tiles: two queues of two buffers do not fit UB [key: CapacityError]
# replace: BUFFER_NUM, TILE = 2, 4096 -> BUFFER_NUM, TILE = 2, 32768

# %% ex4
class CachedConv(KernelTiledMatmul):
    """Conv2D as a matmul on img2col rows; the weights (B) go GM -> L1 once per core and stay for all its tiles."""

    def Process(self):
        t = self.t
        self.btRes = None                         # no bias in this exercise
        weights = None
        for tile in range(GetBlockIdx(), t.tiles, GetBlockNum()):
            # --- BEGIN SOLUTION hint="set this tile's row0/col0, rows/cols, rp/np_; load the weights once (CopyInBAll); Tile()"
            self.row0, self.col0 = tile * t.singleM, 0
            self.rows, self.cols = min(t.singleM, t.M - self.row0), t.N
            self.rp, self.np_ = -(-self.rows // 16) * 16, -(-self.cols // 16) * 16
            if weights is None:                   # the first tile of this core: the weights into L1, kept
                weights = self.CopyInBAll()
            self.bRes = weights
            self.Tile()
            # --- END SOLUTION
        if weights is not None:
            self.qB1.FreeTensor(weights)

    def CopyOut(self):
        # --- BEGIN SOLUTION hint="one Fixpipe per tile (F322F16), as in exercise 5"
        t = self.t
        co1 = self.qCO1.DeQue(float32)
        Fixpipe(self.cGm[self.row0 * t.N + self.col0], co1,
                FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, False, QuantMode_t.F322F16))
        self.qCO1.FreeTensor(co1)
        # --- END SOLUTION


@kernel(core="AIC")
def conv_cached_kernel(cols, wmat, y, M, N, K):
    """y = cols @ wmat (the conv on img2col rows), tiles of 64 rows, the weights resident in L1."""
    t = TiledMatmulTiling(M, N, K, singleM=64, singleN=-(-N // 16) * 16, baseK=-(-K // 16) * 16, cores=GetBlockNum(),
                          resident_b=True)
    op = CachedConv()
    op.Init(cols, wmat, None, y, t)
    op.Process()

# %% ex4 wrong: every tile starts at row 0 (row0 not set from the tile index) [key: GMWriteConflictError]
# replace:             self.row0, self.col0 = tile * t.singleM, 0 ->             self.row0, self.col0 = 0, 0

# %% ex4 wrong: the weights are read from GM again for every tile: correct, but each tile waits for them [key: budget]
# replace:
#             if weights is None:                   # the first tile of this core: the weights into L1, kept
#                 weights = self.CopyInBAll()
#             self.bRes = weights
#             self.Tile()
# with:
#             self.bRes = self.CopyInBAll()         # the weights again, for every tile
#             self.Tile()
#             self.qB1.FreeTensor(self.bRes)

# %% ex4 wrong: rp and np_ not rounded up to 16 (the library's Tile() then reads L0 bytes nothing wrote) [key: UninitializedReadError]
# replace:             self.rp, self.np_ = -(-self.rows // 16) * 16, -(-self.cols // 16) * 16 ->             self.rp, self.np_ = self.rows, self.cols

# %% ex5
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

# %% ex5 wrong: the tiling describes K = 128: half of the sum is missing [key: values]
# replace: t = TiledMatmulTiling(256, 256, 256, singleM=16, singleN=256, baseK=64, depth=2) -> t = TiledMatmulTiling(256, 256, 128, singleM=16, singleN=256, baseK=64, depth=2)

# %% ex5 wrong: Fixpipe's dstStride is the tile width, not the row length of C [key: ArgumentError]
# replace:                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, False, QuantMode_t.F322F16)) ->                 FixpipeParamsV220(self.cols, self.rows, self.rp, 16, False, QuantMode_t.F322F16))

# %% ex5 wrong: square 64x64 tiles (B as 128-byte rows) are correct but slower than the default [key: budget]
# replace: t = TiledMatmulTiling(256, 256, 256, singleM=16, singleN=256, baseK=64, depth=2) -> t = TiledMatmulTiling(256, 256, 256, singleM=64, singleN=64, baseK=32, depth=2)

# %% ex5 wrong: whole-row tiles without double buffering miss the 30 % target [key: budget]
# replace: t = TiledMatmulTiling(256, 256, 256, singleM=16, singleN=256, baseK=64, depth=2) -> t = TiledMatmulTiling(256, 256, 256, singleM=16, singleN=256, baseK=64, depth=1)

# %% ex5 wrong: Fixpipe's nSize and mSize swapped (rows where the columns go) [key: CubeFormatError/fixpipe-swapped]
# replace:                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, False, QuantMode_t.F322F16)) ->                 FixpipeParamsV220(self.rows, self.cols, self.rp, t.N, False, QuantMode_t.F322F16))

# %% ex6
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

# %% ex6 wrong: ReLU left out of the epilogue [key: values]
# replace:                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, True, QuantMode_t.F322F16)) ->                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, False, QuantMode_t.F322F16))

# %% ex6 wrong: the tiling without the bias: BT is never filled, the bias is missing [key: values]
# replace: t = choose_tiling(M, N, K, bias=True, relu=True) -> t = choose_tiling(M, N, K, bias=False, relu=True)

# %% ex6 wrong: one buffer per queue: correct but over the cycle budget [key: budget]
# replace: t = choose_tiling(M, N, K, bias=True, relu=True) -> t = choose_tiling(M, N, K, bias=True, relu=True, depth=1)

# %% ex7
def fold_bn_host(w, b, gamma, beta, mean, var, eps=1e-5):
    """BatchNorm (inference) folded into the conv on the host: (wmat half [C*KH*KW, O], bias float32, padded to 16)."""
    # --- BEGIN SOLUTION hint="scale = gamma / sqrt(var + eps): fold it into w and b, reshape w for the cube"
    scale = np.asarray(gamma, np.float64) / np.sqrt(np.asarray(var, np.float64) + eps)
    w2 = np.asarray(w, np.float64) * scale[:, None, None, None]
    b2 = (np.asarray(b, np.float64) - mean) * scale + beta
    O = w2.shape[0]
    bias = np.zeros(-(-O // 16) * 16, np.float32)           # the BT buffer reads whole 16-float groups
    bias[:O] = b2
    return np.ascontiguousarray(w2.reshape(O, -1).T, np.float16), bias     # GM buffers are flat, row-major
    # --- END SOLUTION


class FusedConv(KernelTiledMatmul):
    """The tiled cube matmul on img2col rows; its copy out applies ReLU (the folded bias came from BT)."""

    def CopyOut(self):
        # --- BEGIN SOLUTION hint="one Fixpipe per tile with reluEn on (and F322F16)"
        t = self.t
        co1 = self.qCO1.DeQue(float32)
        Fixpipe(self.cGm[self.row0 * t.N + self.col0], co1,
                FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, True, QuantMode_t.F322F16))
        self.qCO1.FreeTensor(co1)
        # --- END SOLUTION


@kernel(core="AIC")
def conv_bn_relu_kernel(cols, wmat, bias, y, M, N, K):
    """y = relu(cols @ wmat + bias): the conv as a matmul on img2col rows, BN folded, one kernel, one GM write."""
    # --- BEGIN SOLUTION hint="t = choose_tiling(M, N, K, bias=True, relu=True); FusedConv: Init(cols, wmat, bias, y, t), Process()"
    t = choose_tiling(M, N, K, bias=True, relu=True)
    op = FusedConv()
    op.Init(cols, wmat, bias, y, t)
    op.Process()
    # --- END SOLUTION

# %% ex7 wrong: forgets to subtract the running mean when folding the bias [key: bn/fold]
# replace:     b2 = (np.asarray(b, np.float64) - mean) * scale + beta ->     b2 = np.asarray(b, np.float64) * scale + beta

# %% ex7 wrong: ReLU left out of the Fixpipe epilogue [key: values]
# replace:                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, True, QuantMode_t.F322F16)) ->                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, False, QuantMode_t.F322F16))

# %% ex7 wrong: a tiling for 4 cores: correct, but 20 of the 24 cube cores stay idle [key: budget]
# replace:     t = choose_tiling(M, N, K, bias=True, relu=True) ->     t = choose_tiling(M, N, K, bias=True, relu=True, cores=4)

# %% ex8
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

# %% ex8 wrong: y overlaps x (x takes 16 KB from 0x0): the second copy overwrites half of x [key: values]
# replace:     addrs = (0x0, 0x10100, 0x20000)       # y: another bank_id and the other 8 groups; z: a third bank_id ->     addrs = (0x0, 0x2000, 0x20000)

# %% ex8 wrong: x and y in the same bank (0x4000 apart): correct, but every repeat's reads collide [key: budget]
# replace:     addrs = (0x0, 0x10100, 0x20000)       # y: another bank_id and the other 8 groups; z: a third bank_id ->     addrs = (0x0, 0x4000, 0x10000)
