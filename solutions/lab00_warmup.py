"""Instructor solutions of labs/lab00_warmup.ipynb: one block per exercise, plus deliberately wrong answers.

Each `# %% exN` block replaces the answer cell of exN verbatim; each `# %% exN wrong: ...` block is an answer
that must fail its check (`ascend-sim solve lab00` proves both). The setup cell of the lab provides the imports.
"""

# %% ex1
@kernel
def add_custom(x, y, z, tiling):
    blockLength = tiling.totalLength // GetBlockNum()
    tileLength = tiling.tileLength
    offset = blockLength * GetBlockIdx()
    xGm, yGm, zGm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x + offset, blockLength)
    yGm.SetGlobalBuffer(y + offset, blockLength)
    zGm.SetGlobalBuffer(z + offset, blockLength)
    pipe = TPipe()
    inQueueX, inQueueY = TQue(TPosition.VECIN, 1), TQue(TPosition.VECIN, 1)
    outQueueZ = TQue(TPosition.VECOUT, 1)
    for q in (inQueueX, inQueueY, outQueueZ):
        pipe.InitBuffer(q, 1, tileLength * 2)                 # bytes
    for i in range(blockLength // tileLength):
        # CopyIn
        xLocal, yLocal = inQueueX.AllocTensor(half), inQueueY.AllocTensor(half)
        DataCopy(xLocal, xGm[i * tileLength], tileLength)
        DataCopy(yLocal, yGm[i * tileLength], tileLength)
        inQueueX.EnQue(xLocal)
        inQueueY.EnQue(yLocal)
        # Compute
        xLocal, yLocal = inQueueX.DeQue(half), inQueueY.DeQue(half)
        zLocal = outQueueZ.AllocTensor(half)
        Add(zLocal, xLocal, yLocal, tileLength)
        outQueueZ.EnQue(zLocal)
        inQueueX.FreeTensor(xLocal)
        inQueueY.FreeTensor(yLocal)
        # CopyOut
        zLocal = outQueueZ.DeQue(half)
        DataCopy(zGm[i * tileLength], zLocal, tileLength)
        outQueueZ.FreeTensor(zLocal)

# %% ex1 wrong: every block works on block 0's range (no GetBlockIdx offset)
@kernel
def add_custom(x, y, z, tiling):
    blockLength = tiling.totalLength // GetBlockNum()
    tileLength = tiling.tileLength
    xGm, yGm, zGm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x, blockLength)
    yGm.SetGlobalBuffer(y, blockLength)
    zGm.SetGlobalBuffer(z, blockLength)
    pipe = TPipe()
    qx, qy, qz = TQue(TPosition.VECIN, 1), TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    for q in (qx, qy, qz):
        pipe.InitBuffer(q, 1, tileLength * 2)
    for i in range(blockLength // tileLength):
        xl, yl = qx.AllocTensor(half), qy.AllocTensor(half)
        DataCopy(xl, xGm[i * tileLength], tileLength)
        DataCopy(yl, yGm[i * tileLength], tileLength)
        qx.EnQue(xl)
        qy.EnQue(yl)
        xl, yl, zl = qx.DeQue(half), qy.DeQue(half), qz.AllocTensor(half)
        Add(zl, xl, yl, tileLength)
        qz.EnQue(zl)
        qx.FreeTensor(xl)
        qy.FreeTensor(yl)
        zl = qz.DeQue(half)
        DataCopy(zGm[i * tileLength], zl, tileLength)
        qz.FreeTensor(zl)

# %% ex1 wrong: skips the last tile of every block
@kernel
def add_custom(x, y, z, tiling):
    blockLength = tiling.totalLength // GetBlockNum()
    tileLength = tiling.tileLength
    offset = blockLength * GetBlockIdx()
    xGm, yGm, zGm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x + offset, blockLength)
    yGm.SetGlobalBuffer(y + offset, blockLength)
    zGm.SetGlobalBuffer(z + offset, blockLength)
    pipe = TPipe()
    qx, qy, qz = TQue(TPosition.VECIN, 1), TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    for q in (qx, qy, qz):
        pipe.InitBuffer(q, 1, tileLength * 2)
    for i in range(blockLength // tileLength - 1):
        xl, yl = qx.AllocTensor(half), qy.AllocTensor(half)
        DataCopy(xl, xGm[i * tileLength], tileLength)
        DataCopy(yl, yGm[i * tileLength], tileLength)
        qx.EnQue(xl)
        qy.EnQue(yl)
        xl, yl, zl = qx.DeQue(half), qy.DeQue(half), qz.AllocTensor(half)
        Add(zl, xl, yl, tileLength)
        qz.EnQue(zl)
        qx.FreeTensor(xl)
        qy.FreeTensor(yl)
        zl = qz.DeQue(half)
        DataCopy(zGm[i * tileLength], zl, tileLength)
        qz.FreeTensor(zl)

# %% ex2
@kernel
def relu_custom(x, y, tiling):
    start = tiling.blockLength * GetBlockIdx()
    length = min(tiling.blockLength, tiling.totalLength - start)   # the last block gets the rest
    tileLength = tiling.tileLength
    xGm, yGm = GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x + start, length)
    yGm.SetGlobalBuffer(y + start, length)
    pipe = TPipe()
    inQueue, outQueue = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    pipe.InitBuffer(inQueue, 1, tileLength * 2)
    pipe.InitBuffer(outQueue, 1, tileLength * 2)
    for offset in range(0, length, tileLength):
        count = min(tileLength, length - offset)                 # the tail tile is shorter
        xLocal = inQueue.AllocTensor(half)
        if count == tileLength:
            DataCopy(xLocal, xGm[offset], count)
        else:
            DataCopyPad(xLocal, xGm[offset], DataCopyExtParams(1, count * 2, 0, 0, 0),
                        DataCopyPadExtParams(False, 0, 0, 0))
        inQueue.EnQue(xLocal)
        xLocal, yLocal = inQueue.DeQue(half), outQueue.AllocTensor(half)
        Relu(yLocal, xLocal, count)
        outQueue.EnQue(yLocal)
        inQueue.FreeTensor(xLocal)
        yLocal = outQueue.DeQue(half)
        if count == tileLength:
            DataCopy(yGm[offset], yLocal, count)
        else:
            DataCopyPad(yGm[offset], yLocal, DataCopyExtParams(1, count * 2, 0, 0, 0))
        outQueue.FreeTensor(yLocal)

# %% ex2 wrong: forgets the tail (only full tiles)
@kernel
def relu_custom(x, y, tiling):
    start = tiling.blockLength * GetBlockIdx()
    length = min(tiling.blockLength, tiling.totalLength - start)
    tileLength = tiling.tileLength
    xGm, yGm = GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x + start, length)
    yGm.SetGlobalBuffer(y + start, length)
    pipe = TPipe()
    qi, qo = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    pipe.InitBuffer(qi, 1, tileLength * 2)
    pipe.InitBuffer(qo, 1, tileLength * 2)
    for i in range(length // tileLength):
        xl = qi.AllocTensor(half)
        DataCopy(xl, xGm[i * tileLength], tileLength)
        qi.EnQue(xl)
        xl, yl = qi.DeQue(half), qo.AllocTensor(half)
        Relu(yl, xl, tileLength)
        qo.EnQue(yl)
        qi.FreeTensor(xl)
        yl = qo.DeQue(half)
        DataCopy(yGm[i * tileLength], yl, tileLength)
        qo.FreeTensor(yl)

# %% ex2 wrong: copies the tail with DataCopy (not a multiple of 32 bytes)
@kernel
def relu_custom(x, y, tiling):
    start = tiling.blockLength * GetBlockIdx()
    length = min(tiling.blockLength, tiling.totalLength - start)
    tileLength = tiling.tileLength
    xGm, yGm = GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x + start, length)
    yGm.SetGlobalBuffer(y + start, length)
    pipe = TPipe()
    qi, qo = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    pipe.InitBuffer(qi, 1, tileLength * 2)
    pipe.InitBuffer(qo, 1, tileLength * 2)
    for offset in range(0, length, tileLength):
        count = min(tileLength, length - offset)
        xl = qi.AllocTensor(half)
        DataCopy(xl, xGm[offset], count)
        qi.EnQue(xl)
        xl, yl = qi.DeQue(half), qo.AllocTensor(half)
        Relu(yl, xl, count)
        qo.EnQue(yl)
        qi.FreeTensor(xl)
        yl = qo.DeQue(half)
        DataCopy(yGm[offset], yl, count)
        qo.FreeTensor(yl)

# %% ex3
BUFFER_NUM = 2


class KernelAddDoubleBuffer:
    def Init(self, x, y, z, tiling):
        self.blockLength = tiling.totalLength // GetBlockNum()
        self.tileLength = tiling.tileLength
        offset = self.blockLength * GetBlockIdx()
        self.xGm, self.yGm, self.zGm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
        self.xGm.SetGlobalBuffer(x + offset, self.blockLength)
        self.yGm.SetGlobalBuffer(y + offset, self.blockLength)
        self.zGm.SetGlobalBuffer(z + offset, self.blockLength)
        self.pipe = TPipe()
        self.inQueueX = TQue(TPosition.VECIN, BUFFER_NUM)
        self.inQueueY = TQue(TPosition.VECIN, BUFFER_NUM)
        self.outQueueZ = TQue(TPosition.VECOUT, BUFFER_NUM)
        for q in (self.inQueueX, self.inQueueY, self.outQueueZ):
            self.pipe.InitBuffer(q, BUFFER_NUM, self.tileLength * 2)

    def Process(self):
        for i in range(self.blockLength // self.tileLength):
            self.CopyIn(i)
            self.Compute(i)
            self.CopyOut(i)

    def CopyIn(self, i):
        xLocal, yLocal = self.inQueueX.AllocTensor(half), self.inQueueY.AllocTensor(half)
        DataCopy(xLocal, self.xGm[i * self.tileLength], self.tileLength)
        DataCopy(yLocal, self.yGm[i * self.tileLength], self.tileLength)
        self.inQueueX.EnQue(xLocal)
        self.inQueueY.EnQue(yLocal)

    def Compute(self, i):
        xLocal, yLocal = self.inQueueX.DeQue(half), self.inQueueY.DeQue(half)
        zLocal = self.outQueueZ.AllocTensor(half)
        Add(zLocal, xLocal, yLocal, self.tileLength)
        self.outQueueZ.EnQue(zLocal)
        self.inQueueX.FreeTensor(xLocal)
        self.inQueueY.FreeTensor(yLocal)

    def CopyOut(self, i):
        zLocal = self.outQueueZ.DeQue(half)
        DataCopy(self.zGm[i * self.tileLength], zLocal, self.tileLength)
        self.outQueueZ.FreeTensor(zLocal)


@kernel
def add_double_buffer(x, y, z, tiling):
    op = KernelAddDoubleBuffer()
    op.Init(x, y, z, tiling)
    op.Process()

# %% ex3 wrong: single-buffered (BUFFER_NUM = 1) is correct but over the cycle budget
BUFFER_NUM = 1


class KernelAddSingleBuffer:
    def Init(self, x, y, z, tiling):
        self.blockLength = tiling.totalLength // GetBlockNum()
        self.tileLength = tiling.tileLength
        offset = self.blockLength * GetBlockIdx()
        self.xGm, self.yGm, self.zGm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
        self.xGm.SetGlobalBuffer(x + offset, self.blockLength)
        self.yGm.SetGlobalBuffer(y + offset, self.blockLength)
        self.zGm.SetGlobalBuffer(z + offset, self.blockLength)
        self.pipe = TPipe()
        self.qx = TQue(TPosition.VECIN, BUFFER_NUM)
        self.qy = TQue(TPosition.VECIN, BUFFER_NUM)
        self.qz = TQue(TPosition.VECOUT, BUFFER_NUM)
        for q in (self.qx, self.qy, self.qz):
            self.pipe.InitBuffer(q, BUFFER_NUM, self.tileLength * 2)

    def Process(self):
        t = self.tileLength
        for i in range(self.blockLength // t):
            xl, yl = self.qx.AllocTensor(half), self.qy.AllocTensor(half)
            DataCopy(xl, self.xGm[i * t], t)
            DataCopy(yl, self.yGm[i * t], t)
            self.qx.EnQue(xl)
            self.qy.EnQue(yl)
            xl, yl, zl = self.qx.DeQue(half), self.qy.DeQue(half), self.qz.AllocTensor(half)
            Add(zl, xl, yl, t)
            self.qz.EnQue(zl)
            self.qx.FreeTensor(xl)
            self.qy.FreeTensor(yl)
            zl = self.qz.DeQue(half)
            DataCopy(self.zGm[i * t], zl, t)
            self.qz.FreeTensor(zl)


@kernel
def add_double_buffer(x, y, z, tiling):
    op = KernelAddSingleBuffer()
    op.Init(x, y, z, tiling)
    op.Process()

# %% ex3 wrong: one big copy per block instead of tiles
@kernel
def add_double_buffer(x, y, z, tiling):
    blockLength = tiling.totalLength // GetBlockNum()
    offset = blockLength * GetBlockIdx()
    xGm, yGm, zGm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x + offset, blockLength)
    yGm.SetGlobalBuffer(y + offset, blockLength)
    zGm.SetGlobalBuffer(z + offset, blockLength)
    pipe = TPipe()
    qx, qy, qz = TQue(TPosition.VECIN, 1), TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    for q in (qx, qy, qz):
        pipe.InitBuffer(q, 1, blockLength * 2)
    xl, yl = qx.AllocTensor(half), qy.AllocTensor(half)
    DataCopy(xl, xGm, blockLength)
    DataCopy(yl, yGm, blockLength)
    qx.EnQue(xl)
    qy.EnQue(yl)
    xl, yl, zl = qx.DeQue(half), qy.DeQue(half), qz.AllocTensor(half)
    Add(zl, xl, yl, blockLength)
    qz.EnQue(zl)
    qx.FreeTensor(xl)
    qy.FreeTensor(yl)
    zl = qz.DeQue(half)
    DataCopy(zGm, zl, blockLength)
    qz.FreeTensor(zl)
