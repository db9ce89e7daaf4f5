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

# %% ex3 wrong: 32 KB tiles: correct, but a block is only two tiles, so the first copy in and the last copy out overlap nothing [key: budget/large-tiles]
# replace: BUFFER_NUM, TILE = 2, 4096 -> BUFFER_NUM, TILE = 2, 16384

# %% ex3 wrong: 64 KB tiles: two queues of two buffers do not fit UB [key: CapacityError]
# replace: BUFFER_NUM, TILE = 2, 4096 -> BUFFER_NUM, TILE = 2, 32768

# %% ex4
class ConvNCHW(KernelTiledMatmul):
    """Conv2D written as NCHW: per image y[i] = w @ cols[i]^T, the weights (A) kept in L1 for all the core's images."""

    def Init(self, a, b, bias, c, t, hw):
        super().Init(a, b, bias, c, t)
        self.hw = hw                              # output pixels per image (the columns of one image's C tile)
        self.bT = True                            # B is given transposed: the image's img2col rows, [HW, K]

    def Process(self):
        t, hw = self.t, self.hw
        weights = None
        for img in range(GetBlockIdx(), t.N // hw, GetBlockNum()):
            # --- BEGIN SOLUTION hint="this image's tile: row0/col0, rows/cols, rp/np_; the weights into L1 once (CopyInA); Tile(weights)"
            self.row0, self.col0 = 0, img * hw    # all O rows of A; this image's HW rows of B^T
            self.rows, self.cols = t.M, hw
            self.rp, self.np_ = -(-self.rows // 16) * 16, -(-self.cols // 16) * 16
            if weights is None:                   # the first image of this core: the weights into L1, kept
                weights = self.CopyInA()
            self.Tile(weights)
            # --- END SOLUTION
        if weights is not None:
            self.qA1.FreeTensor(weights)

    def Tile(self, a1):
        """One image: B^T in K steps through L1 -> L0B (double-buffered) against the weights a1 in L1."""
        t = self.t
        co1 = self.qCO1.AllocTensor(float32)
        steps = -(-t.K // t.baseK)
        self.CopyInB(0)
        for kk in range(steps):
            if kk + 1 < steps:
                self.CopyInB(kk + 1)              # the next K step moves while the cube works on this one
            self.SplitLoad(a1, kk)
            self.Compute(co1, None, kk)
        self.qCO1.EnQue(co1)
        self.CopyOut()

    def CopyOut(self):
        # --- BEGIN SOLUTION hint="one Fixpipe per image into its [O, HW] block of y: where does it start, how long is a row?"
        t, hw = self.t, self.hw
        co1 = self.qCO1.DeQue(float32)
        Fixpipe(self.cGm[self.col0 // hw * t.M * hw], co1,
                FixpipeParamsV220(self.cols, self.rows, self.rp, hw, False, QuantMode_t.F322F16))
        self.qCO1.FreeTensor(co1)
        # --- END SOLUTION


@kernel(core="AIC")
def conv_nchw_kernel(cols, w, y, images, O, HW, K):
    """y [images, O, HW] = w [O, K] @ cols[i]^T per image: NCHW out, one image per tile, the weights resident."""
    # --- BEGIN SOLUTION hint="the tiling: which operand is A (M rows) and which B^T (N columns)? Then ConvNCHW: Init, Process"
    t = TiledMatmulTiling(O, images * HW, K, singleM=-(-O // 16) * 16, singleN=-(-HW // 16) * 16, baseK=64,
                          cores=GetBlockNum())
    op = ConvNCHW()
    op.Init(w, cols, None, y, t, HW)
    op.Process()
    # --- END SOLUTION

# %% ex4 wrong: every image's tile is written at image 0 of y [key: GMWriteConflictError]
# replace:         Fixpipe(self.cGm[self.col0 // hw * t.M * hw], co1, ->         Fixpipe(self.cGm[0], co1,

# %% ex4 wrong: the weights are read from GM again for every image: correct, but each tile waits for them [key: budget]
# replace:
#             if weights is None:                   # the first image of this core: the weights into L1, kept
#                 weights = self.CopyInA()
#             self.Tile(weights)
# with:
#             weights = self.CopyInA()              # the weights again, for every image
#             self.Tile(weights)
#             self.qA1.FreeTensor(weights)
#             weights = None

# %% ex4 wrong: Fixpipe's dstStride is the tile width rounded up to 16, not the pixels of one image [key: GMWriteConflictError]
# replace:                 FixpipeParamsV220(self.cols, self.rows, self.rp, hw, False, QuantMode_t.F322F16)) ->                 FixpipeParamsV220(self.cols, self.rows, self.rp, self.np_, False, QuantMode_t.F322F16))

# %% ex4 wrong: rp and np_ not rounded up to 16 (the library's SplitLoad then reads L1 bytes nothing wrote) [key: UninitializedReadError]
# replace:             self.rp, self.np_ = -(-self.rows // 16) * 16, -(-self.cols // 16) * 16 ->             self.rp, self.np_ = self.rows, self.cols

# %% ex5
class MatmulWide(KernelTiledMatmul):
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
def matmul_wide(a, b, c):
    """c = a @ b for a [96, 1024] and b [1024, 768] half, >= 12 % faster than the default operator."""
    # --- BEGIN SOLUTION hint="derive a TiledMatmulTiling (choose_tiling's is too slow here), then MatmulWide(): Init(a, b, None, c, t), Process()"
    t = TiledMatmulTiling(96, 768, 1024, singleM=32, singleN=128, baseK=128, depth=2)
    op = MatmulWide()
    op.Init(a, b, None, c, t)
    op.Process()
    # --- END SOLUTION

# %% ex5 wrong: the tiling describes K = 768: a quarter of the sum is missing [key: values]
# replace: t = TiledMatmulTiling(96, 768, 1024, singleM=32, singleN=128, baseK=128, depth=2) -> t = TiledMatmulTiling(96, 768, 768, singleM=32, singleN=128, baseK=128, depth=2)

# %% ex5 wrong: Fixpipe's dstStride is the tile width, not the row length of C [key: ArgumentError]
# replace:                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, False, QuantMode_t.F322F16)) ->                 FixpipeParamsV220(self.cols, self.rows, self.rp, 16, False, QuantMode_t.F322F16))

# %% ex5 wrong: choose_tiling's tiling (16-row tiles: B read 6 times over): correct but slower than the default [key: budget]
# replace: t = TiledMatmulTiling(96, 768, 1024, singleM=32, singleN=128, baseK=128, depth=2) -> t = choose_tiling(96, 768, 1024)

# %% ex5 wrong: the right tiles without double buffering miss the 12 % target [key: budget]
# replace: t = TiledMatmulTiling(96, 768, 1024, singleM=32, singleN=128, baseK=128, depth=2) -> t = TiledMatmulTiling(96, 768, 1024, singleM=32, singleN=128, baseK=128, depth=1)

# %% ex5 wrong: Fixpipe's nSize and mSize swapped (rows where the columns go) [key: CubeFormatError/fixpipe-swapped]
# replace:                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, False, QuantMode_t.F322F16)) ->                 FixpipeParamsV220(self.rows, self.cols, self.rp, t.N, False, QuantMode_t.F322F16))

# %% ex5 wrong: srcStride 16 above the tile's rounded rows: column block 1 and on are read past the tile's L0C [key: OutOfBoundsError/fixpipe-src-stride]
# replace:                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, False, QuantMode_t.F322F16)) ->                 FixpipeParamsV220(self.cols, self.rows, self.rp + 16, t.N, False, QuantMode_t.F322F16))

# %% ex6
class LinearRelu(KernelTiledMatmul):
    """relu(x @ W^T + b) with W in PyTorch's Linear layout [out, in]: B is given transposed, the epilogue on Fixpipe."""

    def Init(self, a, b, bias, c, t):
        super().Init(a, b, bias, c, t)
        self.bT = True                            # W is [N, K]: its NZ fractals go to L0B without a transpose

    def CopyOut(self):
        # --- BEGIN SOLUTION hint="one Fixpipe per tile with reluEn on (and F322F16)"
        t = self.t
        co1 = self.qCO1.DeQue(float32)
        Fixpipe(self.cGm[self.row0 * t.N + self.col0], co1,
                FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, True, QuantMode_t.F322F16))
        self.qCO1.FreeTensor(co1)
        # --- END SOLUTION


@kernel(core="AIC")
def linear_relu(x, w, bias, y, M, N, K):
    """y = relu(x @ w^T + bias) in one kernel, w half [N, K]: bias through BT, ReLU on Fixpipe, under a budget."""
    # --- BEGIN SOLUTION hint="a tiling whose GM copies of W's rows are long (how many bytes does one K step copy per row?), with bias and relu; LinearRelu: Init(x, w, bias, y, t), Process()"
    t = TiledMatmulTiling(M, N, K, singleM=48, singleN=64, baseK=-(-K // 16) * 16, bias=True, relu=True,
                          cores=GetBlockNum())
    op = LinearRelu()
    op.Init(x, w, bias, y, t)
    op.Process()
    # --- END SOLUTION

# %% ex6 wrong: ReLU left out of the epilogue [key: values]
# replace:                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, True, QuantMode_t.F322F16)) ->                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, False, QuantMode_t.F322F16))

# %% ex6 wrong: the tiling without the bias: BT is never filled, the bias is missing [key: values]
# replace:     t = TiledMatmulTiling(M, N, K, singleM=48, singleN=64, baseK=-(-K // 16) * 16, bias=True, relu=True, ->     t = TiledMatmulTiling(M, N, K, singleM=48, singleN=64, baseK=-(-K // 16) * 16, bias=False, relu=True,

# %% ex6 wrong: choose_tiling's K steps of 64 cut every row of W into 128-byte copies: correct but over the budget [key: budget]
# replace:
#     t = TiledMatmulTiling(M, N, K, singleM=48, singleN=64, baseK=-(-K // 16) * 16, bias=True, relu=True,
#                           cores=GetBlockNum())
# with:
#     t = choose_tiling(M, N, K, bias=True, relu=True)

# %% ex6 wrong: W read as if it were [K, N] (LoadData transposes its fractals): the wrong products [key: values]
# replace:         self.bT = True                            # W is [N, K]: its NZ fractals go to L0B without a transpose ->         self.bT = False

# %% ex6 wrong: srcStride 16 above the tile's rounded rows: column blocks 1.. read from the wrong L0C rows [key: CubeFormatError/fixpipe-src-stride]
# replace:                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, True, QuantMode_t.F322F16)) ->                 FixpipeParamsV220(self.cols, self.rows, self.rp + 16, t.N, True, QuantMode_t.F322F16))

# %% ex7
def fold_bn_host(w, b, gamma, beta, mean, var, O, kk, wt, bias, eps=1e-5):
    """BatchNorm (inference) folded into the conv on the host, written into the kernel's GM buffers: w half
    [O * kk] (row-major [O, C*KH*KW], kk = C*KH*KW), b, gamma, beta, mean, var float [O]; wt half [O * kk], bias
    float [O rounded up to 16] (zero-filled: the BT buffer reads whole 16-float groups)."""
    # --- BEGIN SOLUTION hint="scale = gamma / sqrt(var + eps): fold it into w and b; keep w's own [O, C*KH*KW] layout"
    scale = np.asarray(gamma, np.float64) / np.sqrt(np.asarray(var, np.float64) + eps)
    w2 = np.asarray(w, np.float64).reshape(O, kk) * scale[:, None]
    b2 = (np.asarray(b, np.float64) - mean) * scale + beta
    wt[:O * kk] = w2.reshape(-1)                    # GM buffers are flat: row o holds output channel o
    bias[:O] = b2
    # --- END SOLUTION


def conv_tiling(M, N, K, blocks):
    """The host's tiling function: the cube tiling of cols [M, K] @ wt [N, K]^T + bias for `blocks` cube cores."""
    # --- BEGIN SOLUTION hint="a tiling over every one of the `blocks` cube cores, with bias and relu"
    return choose_tiling(M, N, K, bias=True, relu=True, cores=blocks)
    # --- END SOLUTION


class FusedConv(KernelTiledMatmul):
    """The cube matmul on img2col rows with the weights in their own [O, C*KH*KW] layout (B^T); ReLU on Fixpipe."""

    def Init(self, a, b, bias, c, t):
        super().Init(a, b, bias, c, t)
        self.bT = True                            # the weights are [O, K] = [N, K]: B^T

    def CopyOut(self):
        # --- BEGIN SOLUTION hint="one Fixpipe per tile with reluEn on (and F322F16)"
        t = self.t
        co1 = self.qCO1.DeQue(float32)
        Fixpipe(self.cGm[self.row0 * t.N + self.col0], co1,
                FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, True, QuantMode_t.F322F16))
        self.qCO1.FreeTensor(co1)
        # --- END SOLUTION


@kernel(core="AIC")
def conv_bn_relu_kernel(cols, wt, bias, y, tiling):
    """y = relu(cols @ wt^T + bias): the conv as a matmul on img2col rows, BN folded, one kernel, one GM write."""
    # --- BEGIN SOLUTION hint="FusedConv: Init(cols, wt, bias, y, tiling), Process()"
    op = FusedConv()
    op.Init(cols, wt, bias, y, tiling)
    op.Process()
    # --- END SOLUTION

# %% ex7 wrong: forgets to subtract the running mean when folding the bias [key: bn/fold]
# replace:     b2 = (np.asarray(b, np.float64) - mean) * scale + beta ->     b2 = np.asarray(b, np.float64) * scale + beta

# %% ex7 wrong: ReLU left out of the Fixpipe epilogue [key: values]
# replace:                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, True, QuantMode_t.F322F16)) ->                 FixpipeParamsV220(self.cols, self.rows, self.rp, t.N, False, QuantMode_t.F322F16))

# %% ex7 wrong: a tiling for 4 cores: correct, but most of the 24 cube cores stay idle [key: budget]
# replace:     return choose_tiling(M, N, K, bias=True, relu=True, cores=blocks) ->     return choose_tiling(M, N, K, bias=True, relu=True, cores=4)

# %% ex7 wrong: the folded weights transposed to [C*KH*KW, O] as the library's conv kernel takes them [key: bn/fold]
# replace:     wt[:O * kk] = w2.reshape(-1)                    # GM buffers are flat: row o holds output channel o ->     wt[:O * kk] = w2.T.reshape(-1)

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
    xl, yl, zl = (ub.GetWithOffset(float32, n, a) for a in addrs)     # a: a byte offset into the TBuf
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

# %% ex8 wrong: y one byte below its bank-free address: a UB tensor must start on a 32-byte boundary [key: AlignmentError]
# replace:     addrs = (0x0, 0x10100, 0x20000)       # y: another bank_id and the other 8 groups; z: a third bank_id ->     addrs = (0x0, 0x100FF, 0x20000)
