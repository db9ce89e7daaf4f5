"""Instructor solutions of labs/lab05_engineering.ipynb (format: ascend_sim/course/grading/solution_file.py).

Each exercise has a fix (the region in the kernel, tiling or conversion) and a diagnosis (a function returning
what the tools reported for the planted bug). Each has one wrong fix and one wrong diagnosis, both of which the
check must fail (`ascend-sim solve lab05`). The setup cell of the lab provides the imports.
"""

# %% ex1
@kernel
def scale_blocks(x, y, tiling):
    """y = 2x: blocks of tiling.blockLength halves (the last block owns the rest), tiles of tiling.tileLength."""
    start = tiling.blockLength * GetBlockIdx()
    # TODO (fix): the planted kernel set `length = tiling.blockLength` here.
    # --- BEGIN SOLUTION hint="how many elements does this block own?"
    length = min(tiling.blockLength, tiling.totalLength - start)
    # --- END SOLUTION
    xGm, yGm = GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x, tiling.totalLength)
    yGm.SetGlobalBuffer(y, tiling.totalLength)
    pipe, qi, qo = TPipe(), TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    pipe.InitBuffer(qi, 1, tiling.tileLength * 2)
    pipe.InitBuffer(qo, 1, tiling.tileLength * 2)
    for i in range(0, length, tiling.tileLength):
        t = qi.AllocTensor(half)
        DataCopy(t, xGm[start + i], tiling.tileLength)
        qi.EnQue(t)
        t, o = qi.DeQue(half), qo.AllocTensor(half)
        Muls(o, t, 2.0, tiling.tileLength)
        qo.EnQue(o)
        qi.FreeTensor(t)
        o = qo.DeQue(half)
        DataCopy(yGm[start + i], o, tiling.tileLength)
        qo.FreeTensor(o)


def diagnose_ex1():
    """(error class name, memory "GM" or "UB") of the planted kernel's failure."""
    # --- BEGIN SOLUTION hint="run the planted kernel and read its error"
    return ("OutOfBoundsError", "GM")
    # --- END SOLUTION

# %% ex1 wrong: every block runs to the end of the data (blocks overlap) [key: GMWriteConflictError]
# replace: length = min(tiling.blockLength, tiling.totalLength - start) -> length = tiling.totalLength - start

# %% ex1 wrong: names the wrong memory [key: diagnosis]
# replace: return ("OutOfBoundsError", "GM") -> return ("OutOfBoundsError", "UB")

# %% ex2
@kernel
def scale_tbuf(x, y, tiling):
    """y = 2x in tiles of tiling.tileLength halves through one TBuf, with explicit flags."""
    start = tiling.blockLength * GetBlockIdx()
    xGm, yGm = GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x + start, tiling.blockLength)
    yGm.SetGlobalBuffer(y + start, tiling.blockLength)
    pipe, buf = TPipe(), TBuf()
    # TODO (fix): the planted kernel called `pipe.InitBuffer(buf, tiling.tileLength)` here.
    # --- BEGIN SOLUTION hint="what unit does InitBuffer's size have?"
    pipe.InitBuffer(buf, tiling.tileLength * 2)
    # --- END SOLUTION
    t = buf.Get(half)
    for i in range(0, tiling.blockLength, tiling.tileLength):
        DataCopy(t, xGm[i], tiling.tileLength)
        SetFlag(HardEvent.MTE2_V, 0)
        WaitFlag(HardEvent.MTE2_V, 0)
        Muls(t, t, 2.0, tiling.tileLength)
        SetFlag(HardEvent.V_MTE3, 0)
        WaitFlag(HardEvent.V_MTE3, 0)
        DataCopy(yGm[i], t, tiling.tileLength)
        SetFlag(HardEvent.MTE3_MTE2, 0)
        WaitFlag(HardEvent.MTE3_MTE2, 0)


def diagnose_ex2():
    """(error class name, memory "GM" or "UB") of the planted kernel's failure."""
    # --- BEGIN SOLUTION hint="run the planted kernel and read its error"
    return ("OutOfBoundsError", "UB")
    # --- END SOLUTION

# %% ex2 wrong: a buffer 32 bytes larger is still too small [key: OutOfBoundsError]
# replace: pipe.InitBuffer(buf, tiling.tileLength * 2) -> pipe.InitBuffer(buf, tiling.tileLength + 32)

# %% ex2 wrong: names GM, where the copy's destination overflowed [key: diagnosis]
# replace: return ("OutOfBoundsError", "UB") -> return ("OutOfBoundsError", "GM")

# %% ex3
@kernel
def scale_flags(x, y, tiling):
    """y = 2x in tiles through one TBuf; each pipe hand-over needs a SetFlag/WaitFlag pair."""
    start = tiling.blockLength * GetBlockIdx()
    xGm, yGm = GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x + start, tiling.blockLength)
    yGm.SetGlobalBuffer(y + start, tiling.blockLength)
    pipe, buf = TPipe(), TBuf()
    pipe.InitBuffer(buf, tiling.tileLength * 2)
    t = buf.Get(half)
    for i in range(0, tiling.blockLength, tiling.tileLength):
        DataCopy(t, xGm[i], tiling.tileLength)
        SetFlag(HardEvent.MTE2_V, 0)
        WaitFlag(HardEvent.MTE2_V, 0)
        Muls(t, t, 2.0, tiling.tileLength)
        # TODO (fix): the planted kernel copied out right after Muls.
        # --- BEGIN SOLUTION hint="which pipe must wait for which before the copy out?"
        SetFlag(HardEvent.V_MTE3, 0)
        WaitFlag(HardEvent.V_MTE3, 0)
        # --- END SOLUTION
        DataCopy(yGm[i], t, tiling.tileLength)
        SetFlag(HardEvent.MTE3_MTE2, 0)
        WaitFlag(HardEvent.MTE3_MTE2, 0)


def diagnose_ex3():
    """(error class name, the HardEvent that was missing, e.g. "MTE2_V")."""
    # --- BEGIN SOLUTION hint="run the planted kernel and read its error and its fix"
    return ("RaceError", "V_MTE3")
    # --- END SOLUTION

# %% ex3 wrong: sets the flag but never waits for it [key: RaceError]
# replace:
#         SetFlag(HardEvent.V_MTE3, 0)
#         WaitFlag(HardEvent.V_MTE3, 0)
# with:
#         SetFlag(HardEvent.V_MTE3, 0)

# %% ex3 wrong: names the flag that was already there [key: diagnosis]
# replace: return ("RaceError", "V_MTE3") -> return ("RaceError", "MTE2_V")

# %% ex4
def copy_scaled(src, dst, n, scale):
    """dst = scale * src for n halves (a multiple of 16) through one UB buffer, with its flags."""
    pipe, buf = TPipe(), TBuf()
    pipe.InitBuffer(buf, n * 2)
    t = buf.Get(half)
    DataCopy(t, src, n)
    SetFlag(HardEvent.MTE2_V, 0)
    WaitFlag(HardEvent.MTE2_V, 0)
    Muls(t, t, scale, n)
    SetFlag(HardEvent.V_MTE3, 0)
    WaitFlag(HardEvent.V_MTE3, 0)
    DataCopy(dst, t, n)
    SetFlag(HardEvent.MTE3_MTE2, 0)
    WaitFlag(HardEvent.MTE3_MTE2, 0)


@kernel
def gather_blocks(x, y, z, tiling):
    """y = 2x by blocks of tiling.blockLength; then block 0 copies the whole of y to z."""
    n, i = tiling.blockLength, GetBlockIdx()
    xGm, yGm, yAll, zAll = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x + i * n, n)
    yGm.SetGlobalBuffer(y + i * n, n)
    yAll.SetGlobalBuffer(y, tiling.totalLength)
    zAll.SetGlobalBuffer(z, tiling.totalLength)
    copy_scaled(xGm, yGm, n, 2.0)
    # TODO (fix): the planted kernel called the barrier only in block 0, the block that reads after it.
    # --- BEGIN SOLUTION hint="which blocks must reach the barrier?"
    SyncAll()
    if GetBlockIdx() == 0:
        copy_scaled(yAll, zAll, tiling.totalLength, 1.0)
    # --- END SOLUTION


def diagnose_ex4():
    """(error class name, the block left waiting, as a string such as "2")."""
    # --- BEGIN SOLUTION hint="run the planted kernel and read which block waits"
    return ("DeadlockError", "0")
    # --- END SOLUTION

# %% ex4 wrong: a pipe barrier instead of the all-block barrier (block 0 reads y before the others wrote it) [key: RaceError]
# replace: SyncAll() -> PipeBarrier(PIPE_ALL)

# %% ex4 wrong: names a block that ended, not the one left waiting [key: diagnosis]
# replace: return ("DeadlockError", "0") -> return ("DeadlockError", "1")

# %% ex4 wrong: keeps the planted bug: SyncAll only in block 0, which then waits for blocks that never reach it [key: DeadlockError]
# replace:
#     SyncAll()
#     if GetBlockIdx() == 0:
#         copy_scaled(yAll, zAll, tiling.totalLength, 1.0)
# with:
#     if GetBlockIdx() == 0:
#         SyncAll()
#         copy_scaled(yAll, zAll, tiling.totalLength, 1.0)

# %% ex4 wrong: x and y swapped in the first copy: the kernel overwrites its input x and never writes y [key: unwritten]
# replace:     copy_scaled(xGm, yGm, n, 2.0) ->     copy_scaled(yGm, xGm, n, 2.0)

# %% ex5
@kernel
def sum_tiles(x, y, tiling):
    """y[j] = sum over the tiles of x[tile][j]: one block, tiles of tiling.tileLength halves."""
    xGm, yGm = GlobalTensor(half), GlobalTensor(half)
    xGm.SetGlobalBuffer(x, tiling.totalLength)
    yGm.SetGlobalBuffer(y, tiling.tileLength)
    pipe, inb, accb = TPipe(), TBuf(), TBuf()
    pipe.InitBuffer(inb, tiling.tileLength * 2)
    pipe.InitBuffer(accb, tiling.tileLength * 2)
    t, acc = inb.Get(half), accb.Get(half)
    # TODO (fix): the planted kernel went straight into the loop.
    # --- BEGIN SOLUTION hint="what does the accumulator hold before the first Add?"
    Duplicate(acc, 0.0, tiling.tileLength)
    # --- END SOLUTION
    for i in range(0, tiling.totalLength, tiling.tileLength):
        DataCopy(t, xGm[i], tiling.tileLength)
        SetFlag(HardEvent.MTE2_V, 0)
        WaitFlag(HardEvent.MTE2_V, 0)
        Add(acc, acc, t, tiling.tileLength)
        SetFlag(HardEvent.V_MTE2, 0)
        WaitFlag(HardEvent.V_MTE2, 0)
    SetFlag(HardEvent.V_MTE3, 0)
    WaitFlag(HardEvent.V_MTE3, 0)
    DataCopy(yGm, acc, tiling.tileLength)


def diagnose_ex5():
    """(error class name, the instruction that read the uninitialised bytes, e.g. "Muls")."""
    # --- BEGIN SOLUTION hint="run the planted kernel and read its error"
    return ("UninitializedReadError", "Add")
    # --- END SOLUTION

# %% ex5 wrong: zeroes only half of the accumulator [key: UninitializedReadError]
# replace: Duplicate(acc, 0.0, tiling.tileLength) -> Duplicate(acc, 0.0, tiling.tileLength // 2)

# %% ex5 wrong: blames the copy, not the reader [key: diagnosis]
# replace: return ("UninitializedReadError", "Add") -> return ("UninitializedReadError", "DataCopy")

# %% ex6
def tail_tiling(total, tile):
    """(tileNum, lastTileLength) for `total` halves in tiles of `tile`: every element in exactly one tile."""
    # --- BEGIN SOLUTION hint="round the tile count up and size the last tile"
    tileNum = -(-total // tile)
    return tileNum, total - (tileNum - 1) * tile
    # --- END SOLUTION


def diagnose_ex6():
    """The index of the first output element the planted tiling never writes (1000 halves, tile 256)."""
    # --- BEGIN SOLUTION hint="fill the output with NaN, run the planted tiling, find the first NaN"
    return 768
    # --- END SOLUTION

# %% ex6 wrong: rounds up but keeps the last tile full (it reads past the data) [key: tiling/kernel]
# replace: return tileNum, total - (tileNum - 1) * tile -> return tileNum, tile

# %% ex6 wrong: the length, not the first index left unwritten [key: diagnosis]
# replace: return 768 -> return 1000

# %% ex7
def first_bad_layer():
    """The first layer whose output fails the comparison (dual-benchmark rule) in the suspect run."""
    # --- BEGIN SOLUTION hint="compare_dumps(sim, ref, benchmark=bench).first_failing"
    return "conv2"
    # --- END SOLUTION


def accumulate_in():
    """The dtype the suspect conv2d must accumulate its taps in ("float16" or "float32")."""
    # --- BEGIN SOLUTION hint="half has an 11-bit mantissa"
    return "float32"
    # --- END SOLUTION

# %% ex7 wrong: names a layer that only inherits the error [key: diagnosis]
# replace: return "conv2" -> return "relu2"

# %% ex7 wrong: keeps the half accumulator [key: diagnosis/dtype]
# replace: return "float32" -> return "float16"

# %% ex8
def atc_options(batch):
    """(--input_format, --input_shape) converting LeNet-5 for `batch` images."""
    # --- BEGIN SOLUTION hint="the graph is ONNX-style: which layout, which order of dims?"
    return "NCHW", f"input:{batch},1,28,28"
    # --- END SOLUTION


def to_nchw(x_nhwc):
    """The NHWC images as the NCHW array the converted model takes."""
    # --- BEGIN SOLUTION hint="move the channel axis"
    return np.ascontiguousarray(x_nhwc.transpose(0, 3, 1, 2))
    # --- END SOLUTION


def diagnose_ex8():
    """The ATC error code of the planted conversion (e.g. "E11005")."""
    # --- BEGIN SOLUTION hint="run the planted conversion and read its code"
    return "E10001"
    # --- END SOLUTION

# %% ex8 wrong: feeds the NHWC data unchanged [key: conversion/layout]
# replace: return np.ascontiguousarray(x_nhwc.transpose(0, 3, 1, 2)) -> return x_nhwc

# %% ex8 wrong: the code of a malformed --input_shape, not of this failure [key: diagnosis]
# replace: return "E10001" -> return "E10002"

# %% ex9
def segmentation_threshold(values):
    """The threshold separating nuclei from background in the blurred stain values (no labels: two classes)."""
    # --- BEGIN SOLUTION hint="a two-class threshold computed from the values (their histogram), not a constant"
    v = np.asarray(values, np.float64).ravel()
    hist, edges = np.histogram(v, bins=256)
    p = hist / hist.sum()
    centers = (edges[:-1] + edges[1:]) / 2
    w0 = np.cumsum(p)                                   # share below each cut
    m0 = np.cumsum(p * centers)                         # their mass; the total mean is m0[-1]
    between = (m0[-1] * w0 - m0) ** 2 / np.maximum(w0 * (1 - w0), 1e-12)
    k = int(np.argmax(between[:-1]))
    return float(edges[k + 1])
    # --- END SOLUTION

# %% ex9 wrong: the mean of the values (inside the large class when the classes are unequal) [key: project/dice]
# replace:     v = np.asarray(values, np.float64).ravel() ->     return float(np.mean(values))

# %% ex9 wrong: a constant tuned on the picture (Dice is fine there, other data is cut in the wrong place) [key: project/gap]
# replace:     return float(edges[k + 1]) ->     return 0.024

# %% ex10
def defect_threshold(golden):
    """The fused kernel's threshold, from the Sobel magnitudes of a defect-free (golden) part only."""
    # --- BEGIN SOLUTION hint="a value just above the golden part's strongest texture edges, from its magnitudes"
    return float(np.quantile(np.asarray(golden, np.float64), 0.9999))
    # --- END SOLUTION

# %% ex10 wrong: mean + 3 standard deviations (inside the texture's long tail: clean surface is flagged) [key: project/precision]
# replace:     return float(np.quantile(np.asarray(golden, np.float64), 0.9999)) ->     return float(np.mean(golden) + 3 * np.std(np.asarray(golden, np.float64)))

# %% ex10 wrong: twice the golden maximum (a wide margin: the faint scratches are missed) [key: project/recall]
# replace:     return float(np.quantile(np.asarray(golden, np.float64), 0.9999)) ->     return float(2 * np.max(golden))

