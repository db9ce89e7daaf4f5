"""Memory the engine owns: GM buffers and addresses, and the on-chip tiers of a core.

GM buffers are the learner's numpy arrays, written in place. On-chip tiers
(UB, L1, L0A, L0B, L0C) are byte arenas per core with shadow state for the
sanitizer: an init bit, the last writer and the last reader of each pipe per
32-byte granule (engine/shadow.py). The kernel-facing views (GlobalTensor,
LocalTensor) are in api/tensor.py.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

import numpy as np

from ascend_sim.hw.dtypes import as_dtype, ascend_name, int4b_t
from ascend_sim.engine.errors import AlignmentError, ArgumentError, OutOfBoundsError
from ascend_sim.engine.shadow import Shadow

GRANULE = 32          # bytes per shadow granule (one DataBlock)


# ----------------------------------------------------------------------------- GM
class GmBuffer:
    """One GM allocation: a launch argument array, viewed as bytes."""

    def __init__(self, array: np.ndarray, name: str, base_addr: int):
        if not array.flags.c_contiguous:
            raise ArgumentError(
                f"launch argument {name!r} is not C-contiguous (strides {array.strides}); "
                "GM buffers are flat memory", fix="pass np.ascontiguousarray(arr) and copy results back")
        self.array = array
        self.name = name
        self.raw = array.reshape(-1).view(np.uint8)
        self.nbytes = self.raw.size
        self.base_addr = base_addr
        self.dtype = array.dtype
        self.shadow = None          # gmcheck.GmShadow once the launch writes the buffer
        self.written = False        # whether the launch wrote it (reads of never-written inputs skip the racecheck)
        self.reads: dict = {}       # core uid -> its GM reads (epoch, offset, count, blen, pitch, record, seq, pipe): gmcheck
        self.boxes: dict = {}       # core uid -> (lowest byte, end byte, reads covered) of those reads
        self.scalar_lines: dict = {}    # 64-byte line -> (core uid, epoch, byte) of its last GlobalTensor.SetValue
        self.settled: dict = {}     # (core uid, writing pipe) -> its reads that pipe has synchronised past: gmcheck
        # provenance (only inside ``tracking_gm_writes``): the record index of the instruction that last
        # wrote each byte, -1 for bytes no instruction wrote
        self.written_by: np.ndarray | None = np.full(self.nbytes, -1, np.int32) if _TRACKING else None


_TRACKING: list[bool] = []


@contextlib.contextmanager
def tracking_gm_writes() -> Iterator[None]:
    """GM buffers made inside the block keep ``written_by``: which instruction last wrote each byte."""
    _TRACKING.append(True)
    try:
        yield
    finally:
        _TRACKING.pop()


def note_gm_write(buf: GmBuffer, off: int, count: int, blen: int, pitch: int, record: int) -> None:
    """Provenance: instruction ``record`` wrote ``count`` bursts of ``blen`` bytes, ``pitch`` bytes apart, at ``off``."""
    wb = buf.written_by
    if count == 1:
        wb[off:off + blen] = record
    else:
        np.ndarray((count, blen), np.int32, wb, off * 4, (pitch * 4, 4))[...] = record


class GmPtr:
    """A typed GM address (``__gm__ T*``): supports ``ptr + n`` in elements."""

    __slots__ = ("buf", "offset", "dtype")

    def __init__(self, buf: GmBuffer, offset: int, dtype: np.dtype):
        self.buf = buf
        self.offset = offset
        self.dtype = dtype

    def __add__(self, n: int) -> "GmPtr":
        if n.__class__ is not int and (n.__class__ is bool or not isinstance(n, np.integer)):
            raise ArgumentError(f"GM address arithmetic: {self!r} + n takes an integer number of elements, got "
                                f"{type(n).__name__} {n!r}",
                                fix="offset a GM pointer by an int (x + GetBlockIdx() * blockLength); to compute "
                                    "on the data, DataCopy it into UB and use the vector instructions")
        d = self.dtype
        return GmPtr(self.buf, self.offset + (int(n) * d.itemsize if d is not int4b_t else int(n) // 2), d)

    __radd__ = __add__

    def __sub__(self, n: int) -> "GmPtr":
        if n.__class__ is not int and (n.__class__ is bool or not isinstance(n, np.integer)):
            return self + n         # the same error as ptr + n
        return self + (-int(n))

    def _not_arithmetic(self, other=None):
        raise ArgumentError(f"GM address arithmetic: {self!r} takes + and - with an integer number of elements only, "
                            f"not other operators (got {type(other).__name__} {other!r})",
                            fix="offset the pointer with ptr + n; to compute on the data, DataCopy it into UB and "
                                "use the vector instructions (Muls, Div ...)")

    __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __floordiv__ = __mod__ = __pow__ = __matmul__ = _not_arithmetic
    __rsub__ = __neg__ = _not_arithmetic

    def cast(self, dtype) -> "GmPtr":
        """``(__gm__ T*)ptr``: the same address read as another dtype."""
        return GmPtr(self.buf, self.offset, as_dtype(dtype))

    @property
    def address(self) -> int:
        return self.buf.base_addr + self.offset

    def __repr__(self) -> str:
        return f"GmPtr({self.buf.name}+{self.offset}B, {ascend_name(self.dtype)})"


# ----------------------------------------------------------------------------- on-chip
class Tier:
    """One on-chip memory of one core (UB, L1, L0A, L0B, L0C, BT) with shadow state.

    A launch hands a core's tiers from block to block (``reset`` in between, so every block
    starts from zeroed bytes and a blank shadow); its arena comes from a pool shared by launches.
    """

    freed = False           # see FreedTier
    # slots: every issue reads a few of them (name, shadow, layout), and with blocks in time order the
    # tiers of 24 blocks compete for the host's caches (docs/architecture.md, "Blocks in time order")
    __slots__ = ("freed_view", "name", "capacity", "usable", "align", "arena", "shadow", "next_free", "high",
                 "buffers", "holes", "layout", "layout_sites", "allocator", "regs")

    def __init__(self, name: str, capacity: int, usable: int, align: int):
        self.freed_view = FreedTier(self)
        self.name, self.capacity, self.usable, self.align = name, capacity, usable, align
        pool = _ARENAS.get(capacity)
        self.arena = pool.pop() if pool else np.zeros(capacity, np.uint8)
        self.shadow = Shadow((capacity + GRANULE - 1) // GRANULE)
        self.next_free = 0
        self.high = 0           # the highest next_free since the last reset: the bytes a block may have written
        self.buffers: list[tuple[str, int, int]] = []   # (owner name, addr, bytes)
        self.holes: dict[int, int] = {}     # granule -> bytes written from its start (DataCopyPad without isPad)
        self.layout = None      # engine/layout.py: per 32-byte granule, how a cube-path copy laid the bytes out
        self.layout_sites: dict = {}    # engine/layout.py: (first, end granule) -> the copy that left its layout
        self.allocator = None       # the block's LocalMemAllocator on this tier (static allocation), if any
        self.regs: dict = {}    # L1: the LoadData3D FMATRIX and padding registers (SetFmatrix ...)

    def reset(self) -> None:
        """Back to the state of a fresh tier: zero the bytes the buffers covered, a blank shadow."""
        self.arena[:self.high].fill(0)
        self.shadow.reset()
        self.next_free = 0
        self.high = 0
        self.buffers = []
        self.holes = {}
        self.layout = None
        self.allocator = None
        self.regs = {}

    def release(self) -> None:
        """Reset, and return the arena to the pool for the next launch."""
        self.reset()
        _ARENAS.setdefault(self.capacity, []).append(self.arena)
        self.arena = None


class FreedTier:
    """What a LocalTensor handle points to after FreeTensor: its tier, marked as given back.

    A freed handle's plan-cache keys differ from a live one's, so its next instruction is checked
    again and the check reports the use after free; AllocTensor points the handle back at the tier.
    Everything else (name, arena ...) reads through to the tier.
    """

    freed = True

    def __init__(self, tier: Tier):
        self.real = tier

    def __getattr__(self, name):
        return getattr(self.real, name)


_ARENAS: dict[int, list[np.ndarray]] = {}      # capacity -> zeroed arenas no tier holds
