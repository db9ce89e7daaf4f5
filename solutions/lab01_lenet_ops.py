"""Instructor solutions of labs/lab01_lenet_ops.ipynb (format: ascend_sim/course/grading/solution_file.py).

Each `# %% exN` block is the answer; the notebook's stub is generated from it (`ascend-sim clean`): the text
between `# --- BEGIN SOLUTION hint="..."` and `# --- END SOLUTION` becomes `raise NotImplementedError("exN: hint")`,
so the ex3 scaffold (everything outside its three regions) exists only here. Each `# %% exN wrong: ...` block is
one replacement of the answer that its check must fail (`ascend-sim solve lab01_lenet_ops` proves it). The setup
cell provides the imports.
"""

# %% ex1
@kernel
def relu_custom(x, y, tiling):
    """y = max(x, 0): tiling.totalLength halves over GetBlockNum() blocks, tiles of tiling.tileLength."""
    # --- BEGIN SOLUTION hint="write the ReLU kernel"
    blockLength = tiling.totalLength // GetBlockNum()
    tileLength = tiling.tileLength
    offset = blockLength * GetBlockIdx()
    xGm, yGm = GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x + offset, blockLength)
    yGm.SetGlobalBuffer(y + offset, blockLength)
    pipe = TPipe()
    inQueue, outQueue = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
    pipe.InitBuffer(inQueue, 2, tileLength * 2)
    pipe.InitBuffer(outQueue, 2, tileLength * 2)
    for i in range(blockLength // tileLength):
        xLocal = inQueue.AllocTensor(half)
        DataCopy(xLocal, xGm[i * tileLength], tileLength)
        inQueue.EnQue(xLocal)
        xLocal = inQueue.DeQue(half)
        yLocal = outQueue.AllocTensor(half)
        Relu(yLocal, xLocal, tileLength)
        outQueue.EnQue(yLocal)
        inQueue.FreeTensor(xLocal)
        yLocal = outQueue.DeQue(half)
        DataCopy(yGm[i * tileLength], yLocal, tileLength)
        outQueue.FreeTensor(yLocal)
    # --- END SOLUTION

# %% ex1 wrong: every block works on block 0's range (no GetBlockIdx offset) [key: GMWriteConflictError]
# replace: offset = blockLength * GetBlockIdx() -> offset = 0

# %% ex2
@kernel
def maxpool_custom(x, y, tiling):
    """y[p, r, c] = max of the 2x2 window (2r..2r+1, 2c..2c+1) of plane p; one pixel = one block of 16 halves."""
    # --- BEGIN SOLUTION hint="write the MaxPool kernel"
    H, W, OH, OW = tiling.H, tiling.W, tiling.OH, tiling.OW
    L = 16                                           # lanes: one pixel of 16 images = one 32-byte block
    xGm, yGm = GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x, tiling.planes * H * W * L)
    yGm.SetGlobalBuffer(y, tiling.planes * OH * OW * L)
    pipe = TPipe()
    inQueue, outQueue, vBuf = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2), TBuf(TPosition.VECCALC)
    pipe.InitBuffer(inQueue, 2, H * W * L * 2)
    pipe.InitBuffer(outQueue, 2, OH * OW * L * 2)
    pipe.InitBuffer(vBuf, OH * 2 * OW * L * 2)
    v = vBuf.Get(half)
    full, rest = divmod(OH * OW, 8)                  # output pixels: 8 per repeat (8 blocks of 256 bytes)
    pairs = BinaryRepeatParams(1, 2, 2, 8, 16, 16)   # dst: every block; src0/src1: every other block
    for p in range(GetBlockIdx(), tiling.planes, GetBlockNum()):
        xLocal = inQueue.AllocTensor(half)
        DataCopy(xLocal, xGm[p * H * W * L], H * W * L)
        inQueue.EnQue(xLocal)
        xLocal = inQueue.DeQue(half)
        for r in range(OH):                          # vertical pairs: rows 2r and 2r+1, first 2*OW pixels
            Max(v[r * 2 * OW * L], xLocal[2 * r * W * L], xLocal[(2 * r + 1) * W * L], 2 * OW * L)
        yLocal = outQueue.AllocTensor(half)
        if full:                                     # horizontal pairs: even pixels vs odd pixels
            Max(yLocal, v, v[L], 8 * L, full, pairs)
        if rest:
            Max(yLocal[full * 8 * L], v[full * 16 * L], v[full * 16 * L + L], rest * L, 1, pairs)
        outQueue.EnQue(yLocal)
        inQueue.FreeTensor(xLocal)
        yLocal = outQueue.DeQue(half)
        DataCopy(yGm[p * OH * OW * L], yLocal, OH * OW * L)
        outQueue.FreeTensor(yLocal)
    # --- END SOLUTION

# %% ex2 wrong: horizontal pairs with block stride 1 (pixels 0-1, 1-2, 2-3 ... instead of 0-1, 2-3) [key: values]
# replace: BinaryRepeatParams(1, 2, 2, 8, 16, 16) -> BinaryRepeatParams(1, 1, 1, 8, 8, 8)

# %% ex3
class KernelConv2d:
    """One block: its chunks of nb images; per chunk, load the padded planes once, then every output channel."""

    def Init(self, x, w, b, y, tiling):
        t = self.t = tiling
        self.taps = t.C * t.KH * t.KW                          # weights per output channel
        self.plane = t.C * t.Hp * t.Wp * t.nb                  # elements of one padded input chunk
        self.count = ((t.OH - 1) * t.Wp + t.OW) * t.nb         # output pixels p = r * Wp + c, c < Wp (see text)
        self.xGm, self.wGm, self.bGm, self.yGm = (GlobalTensor(half) for _ in range(4))
        self.xGm.SetGlobalBuffer(x, t.chunks * self.plane)
        self.wGm.SetGlobalBuffer(w, t.wLength)
        self.bGm.SetGlobalBuffer(b, t.bLength)
        self.yGm.SetGlobalBuffer(y, t.chunks * t.O * t.OH * t.OW * t.nb)
        self.pipe = TPipe()
        self.inQueue, self.outQueue = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
        self.xfBuf, self.accBuf, self.wBuf, self.bBuf = TBuf(), TBuf(), TBuf(), TBuf()
        self.pipe.InitBuffer(self.inQueue, 1, self.plane * 2)
        self.pipe.InitBuffer(self.outQueue, 1, self.count * 2)
        self.pipe.InitBuffer(self.xfBuf, self.plane * 4)       # the input chunk as float32
        self.pipe.InitBuffer(self.accBuf, self.count * 4)      # float32 accumulator of one output channel
        self.pipe.InitBuffer(self.wBuf, t.wLength * 2)
        self.pipe.InitBuffer(self.bBuf, t.bLength * 2)
        wLocal, bLocal = self.wBuf.Get(half), self.bBuf.Get(half)
        DataCopy(wLocal, self.wGm, t.wLength)                  # weights and bias GM -> UB (MTE2), once
        DataCopy(bLocal, self.bGm, t.bLength)
        # TODO 1 (weights as scalars): wait until the MTE2 copies have landed, then read every weight and bias
        #   with GetValue into Python lists self.wv (O * taps values) and self.bv (O values).
        # --- BEGIN SOLUTION hint="TODO 1: read the weights and the bias as scalars"
        SetFlag(HardEvent.MTE2_S, 0)
        WaitFlag(HardEvent.MTE2_S, 0)
        self.wv = [float(wLocal.GetValue(i)) for i in range(t.O * self.taps)]
        self.bv = [float(bLocal.GetValue(o)) for o in range(t.O)]
        # --- END SOLUTION

    def Process(self):
        t = self.t
        for chunk in range(GetBlockIdx(), t.chunks, GetBlockNum()):
            xf = self.CopyIn(chunk)
            for o in range(t.O):
                self.Compute(xf, o)
                self.CopyOut(chunk, o)

    def CopyIn(self, chunk):
        """The chunk's padded planes GM -> UB (one contiguous copy), then Cast to float32 for the accumulation."""
        xLocal = self.inQueue.AllocTensor(half)
        DataCopy(xLocal, self.xGm[chunk * self.plane], self.plane)
        self.inQueue.EnQue(xLocal)
        xLocal = self.inQueue.DeQue(half)
        xf = self.xfBuf.Get(float32)
        Cast(xf, xLocal, RoundMode.CAST_NONE, self.plane)
        self.inQueue.FreeTensor(xLocal)
        return xf

    def Compute(self, xf, o):
        """acc[p] = bias[o] + sum over taps (c, i, j) of w[o, c, i, j] * xf[p + (c * Hp + i) * Wp + j] (pixels)."""
        t = self.t
        acc = self.accBuf.Get(float32)
        # TODO 2 (bias): start every output pixel of channel o at its bias.
        # --- BEGIN SOLUTION hint="TODO 2: start the accumulator at the bias"
        Duplicate(acc, self.bv[o], self.count)
        # --- END SOLUTION
        # TODO 3 (slide the window): one Axpy per tap (c, i, j) over the shifted range of self.count elements.
        # --- BEGIN SOLUTION hint="TODO 3: slide the window"
        for c in range(t.C):
            for i in range(t.KH):
                for j in range(t.KW):
                    wv = self.wv[((o * t.C + c) * t.KH + i) * t.KW + j]
                    Axpy(acc, xf[((c * t.Hp + i) * t.Wp + j) * t.nb], wv, self.count)
        # --- END SOLUTION
        yLocal = self.outQueue.AllocTensor(half)
        Cast(yLocal, acc, RoundMode.CAST_NONE, self.count)     # round to half once
        self.outQueue.EnQue(yLocal)

    def CopyOut(self, chunk, o):
        """OH rows of OW pixels to y; the Wp - OW garbage pixels at the end of each row are skipped."""
        t = self.t
        blk = t.nb * 2 // 32                                   # 32-byte blocks per pixel
        yLocal = self.outQueue.DeQue(half)
        DataCopy(self.yGm[(chunk * t.O + o) * t.OH * t.OW * t.nb], yLocal,
                 DataCopyParams(t.OH, t.OW * blk, (t.Wp - t.OW) * blk, 0))
        self.outQueue.FreeTensor(yLocal)


@kernel
def conv2d_custom(x, w, b, y, tiling):
    op = KernelConv2d()
    op.Init(x, w, b, y, tiling)
    op.Process()

# %% ex3 wrong: forgets the bias (TODO 2: the accumulator starts at zero) [key: values]
# replace: Duplicate(acc, self.bv[o], self.count) -> Duplicate(acc, 0.0, self.count)

# %% ex3 wrong: reads the weights with GetValue before the MTE2 copy has landed (no MTE2_S sync) [key: RaceError]
# replace:
#         SetFlag(HardEvent.MTE2_S, 0)
#         WaitFlag(HardEvent.MTE2_S, 0)
# with:

# %% ex4
@kernel(core="AIC")
def linear_custom(w, x, y, tiling):
    """Y^T [M, N] = W' [M, K] @ X'^T [K, N] on the cube: ND in GM, NZ in L1, ZZ/ZN in L0; half in and out."""
    # --- BEGIN SOLUTION hint="write the FC kernel on the cube"
    M, K, N, bk, nb = tiling.M, tiling.K, tiling.N, tiling.baseK, tiling.nb
    wGm, xGm, yGm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    wGm.SetGlobalBuffer(w, M * K)
    xGm.SetGlobalBuffer(x, K * N)
    yGm.SetGlobalBuffer(y, M * N)
    pipe = TPipe()
    qA1, qB1 = TQue(TPosition.A1, 1), TQue(TPosition.B1, 1)          # L1
    qA2, qB2 = TQue(TPosition.A2, 1), TQue(TPosition.B2, 1)          # L0A, L0B
    qCO1 = TQue(TPosition.CO1, 1)                                    # L0C (float32 accumulator)
    pipe.InitBuffer(qA1, 1, M * K * 2)
    pipe.InitBuffer(qB1, 1, bk * nb * 2)
    pipe.InitBuffer(qA2, 1, M * bk * 2)
    pipe.InitBuffer(qB2, 1, bk * nb * 2)
    pipe.InitBuffer(qCO1, 1, M * nb * 4)
    a1 = qA1.AllocTensor(half)                                       # W' to L1 once, ND -> NZ
    DataCopy(a1, wGm, Nd2NzParams(1, M, K, 0, K, M, 1, 0))           # column blocks of 16 inputs, M rows each
    qA1.EnQue(a1)
    a1 = qA1.DeQue(half)
    for chunk in range(GetBlockIdx(), N // nb, GetBlockNum()):
        n0 = chunk * nb
        c1 = qCO1.AllocTensor(float32)
        for k0 in range(0, K, bk):
            b1 = qB1.AllocTensor(half)                               # rows k0..k0+bk of X'^T, columns n0..n0+nb
            DataCopy(b1, xGm[k0 * N + n0], Nd2NzParams(1, bk, nb, 0, N, bk, 1, 0))
            qB1.EnQue(b1)
            b1 = qB1.DeQue(half)
            a2, b2 = qA2.AllocTensor(half), qB2.AllocTensor(half)
            for i in range(M // 16):                                 # Nz -> Zz: one 16-row block of W' per call
                LoadData(a2[i * bk * 16], a1[k0 * M + i * 256], LoadData2DParams(0, bk // 16, M // 16, 0, 0, False, 0))
            for i in range(bk // 16):                                # Nz -> Zn: each fractal transposed
                LoadData(b2[i * nb * 16], b1[i * 256], LoadData2DParams(0, nb // 16, bk // 16, 0, 0, True, 0))
            qA2.EnQue(a2)
            qB2.EnQue(b2)
            qB1.FreeTensor(b1)
            a2, b2 = qA2.DeQue(half), qB2.DeQue(half)
            Mmad(c1, a2, b2, MmadParams(M, nb, bk, 0, False, k0 == 0))   # zero once, then accumulate
            qA2.FreeTensor(a2)
            qB2.FreeTensor(b2)
        qCO1.EnQue(c1)
        c1 = qCO1.DeQue(float32)
        Fixpipe(yGm[n0], c1, FixpipeParamsV220(nb, M, M, N, False, QuantMode_t.F322F16))   # NZ -> ND, fp32 -> half
        qCO1.FreeTensor(c1)
    qA1.FreeTensor(a1)
    # --- END SOLUTION

# %% ex4 wrong: restarts the accumulator at every K step (only the last K step survives) [key: values]
# replace: MmadParams(M, nb, bk, 0, False, k0 == 0) -> MmadParams(M, nb, bk, 0, False, True)

# %% ex4 wrong: loads X'^T into L0B without the fractal transpose (L0B is ZN: each fractal column-major) [key: values]
# replace: LoadData2DParams(0, nb // 16, bk // 16, 0, 0, True, 0) -> LoadData2DParams(0, nb // 16, bk // 16, 0, 0, False, 0)

# %% ex5
@kernel
def softmax_custom(x, y, tiling):
    """Softmax over the C rows of x [C, N] for every column, tiles of tiling.tileLength columns."""
    # --- BEGIN SOLUTION hint="write the Softmax kernel"
    C, N, T = tiling.C, tiling.N, tiling.tileLength
    xGm, yGm = GlobalTensor(float32), GlobalTensor(float32)
    xGm.SetGlobalBuffer(x, C * N)
    yGm.SetGlobalBuffer(y, C * N)
    pipe = TPipe()
    inQueue, outQueue, work = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1), TBuf(TPosition.VECCALC)
    pipe.InitBuffer(inQueue, 1, C * T * 4)
    pipe.InitBuffer(outQueue, 1, C * T * 4)
    pipe.InitBuffer(work, 2 * T * 4)
    m, s = work.Get(float32), work.Get(float32)[T]
    for tile in range(GetBlockIdx(), N // T, GetBlockNum()):
        n0 = tile * T
        xl = inQueue.AllocTensor(float32)
        for c in range(C):
            DataCopy(xl[c * T], xGm[c * N + n0], T)
        inQueue.EnQue(xl)
        xl = inQueue.DeQue(float32)
        yl = outQueue.AllocTensor(float32)
        Adds(m, xl, 0.0, T)                              # m = row 0, then the max over the classes
        for c in range(1, C):
            Max(m, m, xl[c * T], T)
        for c in range(C):                               # subtract the max: every exponent <= 0
            Sub(yl[c * T], xl[c * T], m, T)
        Exp(yl, yl, C * T)
        Adds(s, yl, 0.0, T)
        for c in range(1, C):
            Add(s, s, yl[c * T], T)
        for c in range(C):
            Div(yl[c * T], yl[c * T], s, T)
        outQueue.EnQue(yl)
        inQueue.FreeTensor(xl)
        yl = outQueue.DeQue(float32)
        for c in range(C):
            DataCopy(yGm[c * N + n0], yl[c * T], T)
        outQueue.FreeTensor(yl)
    # --- END SOLUTION

# %% ex5 wrong: no max subtraction (exp overflows on large logits) [key: values]
# replace: Sub(yl[c * T], xl[c * T], m, T) -> Adds(yl[c * T], xl[c * T], 0.0, T)

# %% ex6
def lenet_forward(images):
    """uint8 images [N, 28, 28] -> fp16 probabilities [N, 10] through your kernels."""
    # --- BEGIN SOLUTION hint="assemble LeNet-5"
    p = {k: v.astype(np.float16) for k, v in load_lenet_weights().items()}
    x = normalize(images).astype(np.float16)
    h = run_relu(relu_custom, run_conv2d(conv2d_custom, x, p["conv1.w"], p["conv1.b"], pad=2, block_dim=8)[0])[0]
    h = run_maxpool(maxpool_custom, h, block_dim=8)[0]
    h = run_relu(relu_custom, run_conv2d(conv2d_custom, h, p["conv2.w"], p["conv2.b"], block_dim=8)[0])[0]
    h = run_maxpool(maxpool_custom, h, block_dim=8)[0].reshape(len(x), -1)      # flatten in C, H, W order
    h = run_relu(relu_custom, run_linear(linear_custom, h, p["fc1.w"], p["fc1.b"])[0])[0]
    h = run_relu(relu_custom, run_linear(linear_custom, h, p["fc2.w"], p["fc2.b"])[0])[0]
    h = run_linear(linear_custom, h, p["fc3.w"], p["fc3.b"])[0]
    return run_softmax(softmax_custom, h)[0]
    # --- END SOLUTION

# %% ex6 wrong: forgets the ReLU after conv2 [key: lenet/accuracy]
# replace:
#     h = run_relu(relu_custom, run_conv2d(conv2d_custom, h, p["conv2.w"], p["conv2.b"], block_dim=8)[0])[0]
# with:
#     h = run_conv2d(conv2d_custom, h, p["conv2.w"], p["conv2.b"], block_dim=8)[0]

# %% ex6 wrong: flattens the Pool2 output in H, W, C order instead of C, H, W [key: lenet/accuracy]
# replace: [0].reshape(len(x), -1) -> [0].transpose(0, 2, 3, 1).reshape(len(x), -1)
