"""Instructor solutions of labs/lab00_warmup.ipynb (format: ascend_sim/course/grading/solution_file.py).

Each `# %% exN` block is the answer; the notebook's stub is generated from it (`ascend-sim clean`): the text
between `# --- BEGIN SOLUTION hint="..."` and `# --- END SOLUTION` becomes `raise NotImplementedError("exN: hint")`;
ex3 (a class and a kernel, all of it the learner's) gives its stub in a `# %% ex3 stub` block.
Each `# %% exN wrong: ...` block is one replacement of the answer that its check must fail (`ascend-sim solve
lab00` proves all three). The setup cell of the lab provides the imports.
"""

# %% ex1
@kernel
def add_custom(x, y, z, tiling):
    """z = x + y, tiling.totalLength halves over GetBlockNum() blocks, tiling.tileLength per tile."""
    # --- BEGIN SOLUTION hint="write the Add kernel"
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
    # --- END SOLUTION

# %% ex1 wrong: every block works on block 0's range (no GetBlockIdx offset) [key: GMWriteConflictError]
# replace: offset = blockLength * GetBlockIdx() -> offset = 0

# %% ex1 wrong: skips the last tile of every block [key: loop]
# replace: for i in range(blockLength // tileLength): -> for i in range(blockLength // tileLength - 1):

# %% ex2
@kernel
def relu_custom(x, y, tiling):
    """y = max(x, 0); blocks of tiling.blockLength (the last one shorter), tiles of tiling.tileLength."""
    # --- BEGIN SOLUTION hint="write the ReLU kernel"
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
    # --- END SOLUTION

# %% ex2 wrong: forgets the tail (only full tiles) [key: tail]
# replace: for offset in range(0, length, tileLength): -> for offset in range(0, length - tileLength + 1, tileLength):

# %% ex2 wrong: copies the tail in with DataCopy (not a multiple of 32 bytes) [key: AlignmentError]
# replace:
#         if count == tileLength:
#             DataCopy(xLocal, xGm[offset], count)
#         else:
#             DataCopyPad(xLocal, xGm[offset], DataCopyExtParams(1, count * 2, 0, 0, 0),
#                         DataCopyPadExtParams(False, 0, 0, 0))
# with:
#         DataCopy(xLocal, xGm[offset], count)

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

# %% ex3 stub
@kernel
def add_double_buffer(x, y, z, tiling):
    """z = x + y like add_custom, with BUFFER_NUM = 2 buffers per queue."""
    raise NotImplementedError("ex3: write the double-buffered Add kernel")

# %% ex3 wrong: single-buffered (BUFFER_NUM = 1) is correct but over the cycle budget [key: budget]
# replace: BUFFER_NUM = 2 -> BUFFER_NUM = 1

# %% ex3 wrong: one big copy per block instead of tiles [key: tile-size]
# replace: self.tileLength = tiling.tileLength -> self.tileLength = self.blockLength
