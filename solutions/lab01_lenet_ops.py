"""Instructor solutions of labs/lab01_lenet_ops.ipynb: one block per exercise, plus deliberately wrong answers.

Each `# %% exN` block replaces the answer cell of exN verbatim; each `# %% exN wrong: ...` block is an answer
that must fail its check (`ascend-sim solve lab01_lenet_ops` proves both). The setup cell provides the imports.
"""

# %% ex1
@kernel
def relu_custom(x, y, tiling):
    blockLength = tiling.totalLength // GetBlockNum()
    tileLength = tiling.tileLength
    xGm, yGm = GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x + blockLength * GetBlockIdx(), blockLength)
    yGm.SetGlobalBuffer(y + blockLength * GetBlockIdx(), blockLength)
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

# %% ex1 wrong: every block works on block 0's range (no GetBlockIdx offset)
@kernel
def relu_custom(x, y, tiling):
    blockLength = tiling.totalLength // GetBlockNum()
    tileLength = tiling.tileLength
    xGm, yGm = GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x, blockLength)
    yGm.SetGlobalBuffer(y, blockLength)
    pipe = TPipe()
    inQueue, outQueue = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    pipe.InitBuffer(inQueue, 1, tileLength * 2)
    pipe.InitBuffer(outQueue, 1, tileLength * 2)
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

# %% ex2
@kernel
def maxpool_custom(a, b, c, d, y, tiling):
    blockLength = tiling.totalLength // GetBlockNum()
    tileLength = tiling.tileLength
    offset = blockLength * GetBlockIdx()
    corners = []
    for ptr in (a, b, c, d):
        g = GlobalTensor(half)
        g.SetGlobalBuffer(ptr + offset, blockLength)
        corners.append(g)
    yGm = GlobalTensor(half)
    yGm.SetGlobalBuffer(y + offset, blockLength)
    pipe = TPipe()
    inQueue, outQueue = TQue(TPosition.VECIN, 4), TQue(TPosition.VECOUT, 1)
    pipe.InitBuffer(inQueue, 4, tileLength * 2)
    pipe.InitBuffer(outQueue, 1, tileLength * 2)
    for i in range(blockLength // tileLength):
        for g in corners:
            t = inQueue.AllocTensor(half)
            DataCopy(t, g[i * tileLength], tileLength)
            inQueue.EnQue(t)
        ins = [inQueue.DeQue(half) for _ in range(4)]
        yLocal = outQueue.AllocTensor(half)
        Max(yLocal, ins[0], ins[1], tileLength)
        Max(yLocal, yLocal, ins[2], tileLength)
        Max(yLocal, yLocal, ins[3], tileLength)
        outQueue.EnQue(yLocal)
        for t in ins:
            inQueue.FreeTensor(t)
        yLocal = outQueue.DeQue(half)
        DataCopy(yGm[i * tileLength], yLocal, tileLength)
        outQueue.FreeTensor(yLocal)

# %% ex2 wrong: only the top row of each window (max of a and b)
@kernel
def maxpool_custom(a, b, c, d, y, tiling):
    blockLength = tiling.totalLength // GetBlockNum()
    tileLength = tiling.tileLength
    offset = blockLength * GetBlockIdx()
    aGm, bGm, yGm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    aGm.SetGlobalBuffer(a + offset, blockLength)
    bGm.SetGlobalBuffer(b + offset, blockLength)
    yGm.SetGlobalBuffer(y + offset, blockLength)
    pipe = TPipe()
    inQueue, outQueue = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 1)
    pipe.InitBuffer(inQueue, 2, tileLength * 2)
    pipe.InitBuffer(outQueue, 1, tileLength * 2)
    for i in range(blockLength // tileLength):
        ta, tb = inQueue.AllocTensor(half), inQueue.AllocTensor(half)
        DataCopy(ta, aGm[i * tileLength], tileLength)
        DataCopy(tb, bGm[i * tileLength], tileLength)
        inQueue.EnQue(ta)
        inQueue.EnQue(tb)
        ta, tb = inQueue.DeQue(half), inQueue.DeQue(half)
        yLocal = outQueue.AllocTensor(half)
        Max(yLocal, ta, tb, tileLength)
        outQueue.EnQue(yLocal)
        inQueue.FreeTensor(ta)
        inQueue.FreeTensor(tb)
        yLocal = outQueue.DeQue(half)
        DataCopy(yGm[i * tileLength], yLocal, tileLength)
        outQueue.FreeTensor(yLocal)

# %% ex3
@kernel
def conv2d_custom(cols, y, tiling):
    K, O, P, T = tiling.K, tiling.O, tiling.P, tiling.tileLength
    colsGm, yGm = GlobalTensor(float32), GlobalTensor(float32)
    colsGm.SetGlobalBuffer(cols, K * P)
    yGm.SetGlobalBuffer(y, O * P)
    pipe = TPipe()
    inQueue, outQueue, accBuf = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 1), TBuf(TPosition.VECCALC)
    pipe.InitBuffer(inQueue, 2, T * 4)
    pipe.InitBuffer(outQueue, 1, T * 4)
    pipe.InitBuffer(accBuf, O * T * 4)
    acc = accBuf.Get(float32)
    for tile in range(GetBlockIdx(), P // T, GetBlockNum()):
        p0 = tile * T
        for o in range(O):                                   # 3. the bias starts every accumulator
            Duplicate(acc[o * T], tiling.bias[o], T)
        for k in range(K):                                   # 2. slide the window: one tap k at a time
            row = inQueue.AllocTensor(float32)
            DataCopy(row, colsGm[k * P + p0], T)
            inQueue.EnQue(row)
            row = inQueue.DeQue(float32)
            for o in range(O):
                Axpy(acc[o * T], row, tiling.weights[o][k], T)
            inQueue.FreeTensor(row)
        for o in range(O):
            out = outQueue.AllocTensor(float32)
            Adds(out, acc[o * T], 0.0, T)                    # move the accumulator to the output queue
            outQueue.EnQue(out)
            out = outQueue.DeQue(float32)
            DataCopy(yGm[o * P + p0], out, T)
            outQueue.FreeTensor(out)

# %% ex3 wrong: forgets the bias (accumulators start at zero)
@kernel
def conv2d_custom(cols, y, tiling):
    K, O, P, T = tiling.K, tiling.O, tiling.P, tiling.tileLength
    colsGm, yGm = GlobalTensor(float32), GlobalTensor(float32)
    colsGm.SetGlobalBuffer(cols, K * P)
    yGm.SetGlobalBuffer(y, O * P)
    pipe = TPipe()
    inQueue, outQueue, accBuf = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 1), TBuf(TPosition.VECCALC)
    pipe.InitBuffer(inQueue, 2, T * 4)
    pipe.InitBuffer(outQueue, 1, T * 4)
    pipe.InitBuffer(accBuf, O * T * 4)
    acc = accBuf.Get(float32)
    for tile in range(GetBlockIdx(), P // T, GetBlockNum()):
        p0 = tile * T
        for o in range(O):
            Duplicate(acc[o * T], 0.0, T)
        for k in range(K):
            row = inQueue.AllocTensor(float32)
            DataCopy(row, colsGm[k * P + p0], T)
            inQueue.EnQue(row)
            row = inQueue.DeQue(float32)
            for o in range(O):
                Axpy(acc[o * T], row, tiling.weights[o][k], T)
            inQueue.FreeTensor(row)
        for o in range(O):
            out = outQueue.AllocTensor(float32)
            Adds(out, acc[o * T], 0.0, T)
            outQueue.EnQue(out)
            out = outQueue.DeQue(float32)
            DataCopy(yGm[o * P + p0], out, T)
            outQueue.FreeTensor(out)

# %% ex4
linear_custom = conv2d_custom          # the same sum of products: input features in place of window taps

# %% ex4 wrong: forgets the bias
@kernel
def linear_custom(cols, y, tiling):
    K, O, P, T = tiling.K, tiling.O, tiling.P, tiling.tileLength
    colsGm, yGm = GlobalTensor(float32), GlobalTensor(float32)
    colsGm.SetGlobalBuffer(cols, K * P)
    yGm.SetGlobalBuffer(y, O * P)
    pipe = TPipe()
    inQueue, outQueue, accBuf = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 1), TBuf(TPosition.VECCALC)
    pipe.InitBuffer(inQueue, 2, T * 4)
    pipe.InitBuffer(outQueue, 1, T * 4)
    pipe.InitBuffer(accBuf, O * T * 4)
    acc = accBuf.Get(float32)
    for tile in range(GetBlockIdx(), P // T, GetBlockNum()):
        p0 = tile * T
        for o in range(O):
            Duplicate(acc[o * T], 0.0, T)
        for k in range(K):
            row = inQueue.AllocTensor(float32)
            DataCopy(row, colsGm[k * P + p0], T)
            inQueue.EnQue(row)
            row = inQueue.DeQue(float32)
            for o in range(O):
                Axpy(acc[o * T], row, tiling.weights[o][k], T)
            inQueue.FreeTensor(row)
        for o in range(O):
            out = outQueue.AllocTensor(float32)
            Adds(out, acc[o * T], 0.0, T)
            outQueue.EnQue(out)
            out = outQueue.DeQue(float32)
            DataCopy(yGm[o * P + p0], out, T)
            outQueue.FreeTensor(out)

# %% ex5
@kernel
def softmax_custom(x, y, tiling):
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

# %% ex5 wrong: no max subtraction (exp overflows on large logits)
@kernel
def softmax_custom(x, y, tiling):
    C, N, T = tiling.C, tiling.N, tiling.tileLength
    xGm, yGm = GlobalTensor(float32), GlobalTensor(float32)
    xGm.SetGlobalBuffer(x, C * N)
    yGm.SetGlobalBuffer(y, C * N)
    pipe = TPipe()
    inQueue, outQueue, work = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1), TBuf(TPosition.VECCALC)
    pipe.InitBuffer(inQueue, 1, C * T * 4)
    pipe.InitBuffer(outQueue, 1, C * T * 4)
    pipe.InitBuffer(work, T * 4)
    s = work.Get(float32)
    for tile in range(GetBlockIdx(), N // T, GetBlockNum()):
        n0 = tile * T
        xl = inQueue.AllocTensor(float32)
        for c in range(C):
            DataCopy(xl[c * T], xGm[c * N + n0], T)
        inQueue.EnQue(xl)
        xl = inQueue.DeQue(float32)
        yl = outQueue.AllocTensor(float32)
        Exp(yl, xl, C * T)
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

# %% ex6
def lenet_forward(images):
    p = {k: v.astype(np.float16) for k, v in load_lenet_weights().items()}
    x = normalize(images).astype(np.float16)
    h = run_relu(relu_custom, run_conv2d(conv2d_custom, x, p["conv1.w"], p["conv1.b"], pad=2, tile=1024)[0])[0]
    h = run_maxpool(maxpool_custom, h)[0]
    h = run_relu(relu_custom, run_conv2d(conv2d_custom, h, p["conv2.w"], p["conv2.b"], tile=1024)[0])[0]
    h = run_maxpool(maxpool_custom, h)[0].reshape(len(x), -1)
    h = run_relu(relu_custom, run_linear(linear_custom, h, p["fc1.w"], p["fc1.b"])[0])[0]
    h = run_relu(relu_custom, run_linear(linear_custom, h, p["fc2.w"], p["fc2.b"])[0])[0]
    h = run_linear(linear_custom, h, p["fc3.w"], p["fc3.b"])[0]
    return run_softmax(softmax_custom, h)[0]

# %% ex6 wrong: forgets the ReLU after conv1 and conv2
def lenet_forward(images):
    p = {k: v.astype(np.float16) for k, v in load_lenet_weights().items()}
    x = normalize(images).astype(np.float16)
    h = run_maxpool(maxpool_custom, run_conv2d(conv2d_custom, x, p["conv1.w"], p["conv1.b"], pad=2, tile=1024)[0])[0]
    h = run_maxpool(maxpool_custom, run_conv2d(conv2d_custom, h, p["conv2.w"], p["conv2.b"], tile=1024)[0])[0]
    h = h.reshape(len(x), -1)
    h = run_linear(linear_custom, h, p["fc1.w"], p["fc1.b"])[0]
    h = run_linear(linear_custom, h, p["fc2.w"], p["fc2.b"])[0]
    h = run_linear(linear_custom, h, p["fc3.w"], p["fc3.b"])[0]
    return run_softmax(softmax_custom, h)[0]
