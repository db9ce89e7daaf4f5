"""TPipe, TQue, TBuf and TPosition: on-chip buffers and the queue protocol.

A queue's position fixes which pipe produces into it and which consumes from
it, and so the sync Ascend C inserts for you: EnQue/DeQue order the consumer
after the producer, FreeTensor/AllocTensor order the next producer after the
last consumer (that is what makes double buffering (双缓冲) safe).
"""
from __future__ import annotations

import enum
import linecache
import re
from collections import deque

from ascend_sim.engine import context
from ascend_sim.engine.core import FIX, M, MTE1, MTE2, MTE3, V
from ascend_sim.hw.dtypes import ascend_name, bytes_of, elements_in
from ascend_sim.engine.errors import (AlignmentError, ArgumentError, CapacityError, OutOfBoundsError, PositionError,
                                      QueueError, SyncError, format_site, kernel_point, learner_frame, resolve_site)
from ascend_sim.api.checks import dtype_arg, integer
from ascend_sim.api.sync import HardEvent
from ascend_sim.api.tensor import LocalTensor
from ascend_sim.engine.context import current_core


class TPosition(enum.Enum):
    """Logical buffer positions; each maps to a physical tier."""

    __hash__ = object.__hash__      # members are singletons: hash by identity in C, not Enum's hash(name)

    GM = "GM"
    A1 = "A1"
    A2 = "A2"
    B1 = "B1"
    B2 = "B2"
    C1 = "C1"
    C2 = "C2"
    CO1 = "CO1"
    CO2 = "CO2"
    VECIN = "VECIN"
    VECOUT = "VECOUT"
    VECCALC = "VECCALC"


QuePosition = TPosition

TIER_OF = {
    TPosition.VECIN: "UB", TPosition.VECOUT: "UB", TPosition.VECCALC: "UB",
    TPosition.A1: "L1", TPosition.B1: "L1", TPosition.C1: "L1",
    TPosition.A2: "L0A", TPosition.B2: "L0B", TPosition.CO1: "L0C", TPosition.C2: "BT",
}

# (producer pipe, consumer pipe) of each queue position
FLOW = {
    TPosition.VECIN: (MTE2, V), TPosition.VECOUT: (V, MTE3),
    TPosition.A1: (MTE2, MTE1), TPosition.B1: (MTE2, MTE1), TPosition.C1: (MTE2, MTE1),
    TPosition.A2: (MTE1, M), TPosition.B2: (MTE1, M), TPosition.CO1: (M, FIX), TPosition.C2: (MTE1, M),
}


def tier_for(core, position: TPosition):
    """The tier (UB, L1, L0A ...) of this core that holds ``position``, or the PositionError."""
    name = TIER_OF.get(position)
    tier = core.tiers.get(name)
    if tier is not None:
        return tier
    if name is None:
        raise PositionError(f"«TPosition.{position.name}» has no on-chip buffer in this simulator",
                            fix="use VECIN/VECOUT/VECCALC (UB), A1/B1/C1 (L1), A2 (L0A), B2 (L0B), CO1 (L0C) "
                                "or C2 (BT)")
    if name not in core.tiers:
        where = "the AIC (cube) core" if name != "UB" else "the AIV (vector) core"
        raise PositionError(
            f"«TPosition.{position.name}» lives in {name}, which this {core.core_type} core does not have "
            f"({core.chip.name} is a separated architecture: {name} belongs to {where})",
            fix="launch vector code with «@kernel» (AIV), cube code with «@kernel(core='AIC')», or both with "
                "«@kernel(core='MIX')» and branch on ASCEND_IS_AIV()/ASCEND_IS_AIC()")
    return core.tiers[name]


class _Slot:
    """One buffer of a queue: its address, protocol state and the tensor handles given out for it."""

    __slots__ = ("que", "addr", "state", "free_event", "alloc_site", "tensors", "last", "views")

    def __init__(self, que: "TQue", addr: int):
        self.que = que
        self.addr = addr
        self.state = "free"
        self.free_event = None      # the FreeTensor point the next AllocTensor's producer waits for
        self.alloc_site = None
        self.tensors: dict = {}     # dtype argument -> LocalTensor (a slot's handle never changes)
        self.last = None            # the handle the last AllocTensor returned
        self.views: list = []       # slices and ReinterpretCasts made of it since: FreeTensor marks them too


MAX_DEPTH = 2**31 - 1   # TQue<TPosition pos, int32_t depth> (TQue简介.md)
_OMITTED = object()     # InitBuffer's third argument, not given


class TQue:
    """``TQue<pos, depth>``: buffers handed out by AllocTensor and passed by EnQue/DeQue."""

    __slots__ = ("position", "depth", "producer", "consumer", "slots", "nbytes", "fifo", "core", "name", "tier",
                 "_next")

    def __init__(self, position: TPosition, depth: int = 1):
        if not isinstance(position, TPosition):
            raise PositionError(f"TQue position must be a TPosition, got {position!r}",
                                fix="e.g. «TQue(TPosition.VECIN, 1)»")
        if depth.__class__ is not int or not 1 <= depth <= MAX_DEPTH:
            depth = integer("TQue", "depth", depth, None, 1, MAX_DEPTH,
                            fix="depth is an int32_t template argument, the number of EnQue in a row: TQue(pos, 1) "
                                "(the usual depth; double buffering is InitBuffer's num, not the depth)")
        flow = FLOW.get(position)
        if flow is None:
            raise PositionError(f"TQue cannot live at «TPosition.{getattr(position, 'name', position)}»",
                                fix="use TBuf for VECCALC scratch space; queues are VECIN, VECOUT, A1, B1, "
                                    "A2, B2 or CO1")
        self.position, self.depth = position, int(depth)
        self.producer, self.consumer = flow
        self.slots: list[_Slot] = []
        self.nbytes = 0
        self.fifo: deque = deque()     # EnQue'd (slot, tensor, event): a deque, as a list reallocates each time
        self.core = None
        self.name = "queue"
        self._next = 0

    # --- protocol ---------------------------------------------------------------
    # The four calls run for every tile of every kernel: each checks its rule with one
    # comparison on the usual path and only builds an error message when the rule is broken.
    # Core.scalar_tick and Core.snapshot are inlined here (queue pipes are never the scalar
    # pipe): the calls cost 6 to 10 % of a launch (benchmarks/bench_simulator.py).
    def _ready(self, what: str):
        if not self.slots:
            name = alias(self)
            raise QueueError(f"{what} on a queue that has no buffers"
                             + (f": {name} was never given any by InitBuffer" if name else ""),
                             fix=f"call pipe.InitBuffer({name or 'que'}, num, bytes) in Init first", kind="no-buffers")
        core = current_core()
        if core is not self.core:
            raise QueueError(f"{what} on a queue initialised by another block", fix="create queues inside the kernel")
        return core

    def AllocTensor(self, dtype=None) -> LocalTensor:
        """Take a free buffer (waits on the device until its last reader is done)."""
        core = context.current
        if core is not self.core or core is None:
            core = self._ready("AllocTensor")
        slots = self.slots
        k = self._next
        slot = slots[k]
        if slot.state == "free":
            k += 1
            self._next = k if k < len(slots) else 0
        else:
            slot = self._next_free()
        if slot.free_event is not None:
            core.wait(self.producer, slot.free_event)
            if core.qsync is not None and core.qsync[self.producer] is not None:
                core.sync_entry(self.producer)          # the Wait takes a queue entry (Core.sync_entry)
        slot.state = "alloc"
        slot.alloc_site = kernel_point()
        core.scalar_time += core.tick
        core.calls += 1
        try:
            tensor = slot.tensors[dtype]
        except (KeyError, TypeError):   # a new dtype argument, or an unhashable one (dtype_arg names it)
            tensor = None
        if tensor is None:
            d = dtype_arg("AllocTensor", dtype, None) if dtype is not None else _default_dtype()
            tensor = slot.tensors[dtype] = LocalTensor(core, self.tier, slot.addr, d, elements_in(self.nbytes, d),
                                                       self.position, slot)
        tensor.tier = self.tier         # back from FreeTensor's mark (checks.live)
        slot.last = tensor
        return tensor

    def _next_free(self) -> _Slot:
        """The first free buffer after the last one handed out (round robin), or the deadlock error."""
        slots = self.slots
        n = len(slots)
        for k in range(n):
            slot = slots[(self._next + k) % n]
            if slot.state == "free":
                self._next = (self._next + k + 1) % n
                return slot
        held = "; ".join(format_site(s.alloc_site) for s in slots)
        raise QueueError(
            f"AllocTensor on {self.name} with all {n} buffer(s) in use (allocated at: {held}): on the device "
            "this waits forever (deadlock)",
            fix="FreeTensor each tensor once its last reader has been issued, or InitBuffer more buffers",
            kind="alloc-full")

    def EnQue(self, tensor: LocalTensor) -> bool:
        """Hand a filled tensor to the consumer (SetFlag on the producer pipe)."""
        core = context.current
        slot = tensor.slot if tensor.__class__ is LocalTensor else None     # anything else: _holder decides
        if core is not self.core or core is None or slot is None or slot.que is not self:
            core, slot = self._holder(tensor, "EnQue")      # raises the rule that is broken
        if slot.state != "alloc":
            raise QueueError(f"EnQue of a tensor that is {slot.state} (allocated at {format_site(slot.alloc_site)})",
                             fix="EnQue each AllocTensor result once, then DeQue it", kind="enque-state")
        fifo = self.fifo
        if len(fifo) >= self.depth:
            raise QueueError(f"EnQue on {self.name} past its depth {self.depth}: {len(fifo)} tensor(s) "
                             "already queued and not DeQue'd",
                             fix="DeQue before the next EnQue, or declare the queue deeper: «TQue(pos, depth)»",
                             kind="enque-depth")
        slot.state = "queued"
        p = self.producer       # the point after the producer's last instruction (Core.snapshot, inlined)
        t, tail = core.scalar_time, core.tail[p]
        fifo.append((slot, tensor, (core.vc[p][:], tail if tail > t else t, core.last_rec[p], None)))
        if core.qsync is not None and core.qsync[p] is not None:
            core.sync_entry(p)                          # the Set takes a queue entry (Core.sync_entry)
        core.scalar_time += core.tick
        core.calls += 1
        return True

    def DeQue(self, dtype=None) -> LocalTensor:
        """Take the oldest queued tensor (the consumer pipe waits for its producer)."""
        core = context.current
        if core is not self.core or core is None:
            core = self._ready("DeQue")
        if not self.fifo:
            raise QueueError(f"DeQue from {self.name} while it is empty: nothing was EnQue'd, so on the device "
                             "this waits forever",
                             fix=f"EnQue the tensor after filling it (CopyIn): {self.name}.EnQue(tensor) before "
                                 f"«{self.name}.DeQue()» in Compute", kind="deque-empty")
        slot, tensor, ev = self.fifo.popleft()
        core.wait(self.consumer, ev)
        if core.qsync is not None and core.qsync[self.consumer] is not None:
            core.sync_entry(self.consumer)              # the Wait takes a queue entry (Core.sync_entry)
        slot.state = "dequeued"
        core.scalar_time += core.tick
        core.calls += 1
        if dtype is None or dtype is tensor.dtype:     # the usual DeQue(T): same dtype object, no comparison
            return tensor
        d = dtype_arg("DeQue", dtype, None)
        return tensor.ReinterpretCast(d) if d != tensor.dtype else tensor

    def FreeTensor(self, tensor: LocalTensor) -> None:
        """Give the buffer back once the consumer pipe has finished with it."""
        core = context.current
        slot = tensor.slot if tensor.__class__ is LocalTensor else None     # anything else: _holder decides
        if core is not self.core or core is None or slot is None or slot.que is not self:
            core, slot = self._holder(tensor, "FreeTensor")     # raises the rule that is broken
        state = slot.state
        if state != "dequeued" and state != "alloc":
            if state == "free":
                raise QueueError(f"FreeTensor of a tensor that is already free (double free) on {self.name}",
                                 fix="free each AllocTensor result exactly once", kind="double-free")
            raise QueueError(f"FreeTensor of a tensor still in the queue (EnQue'd but not DeQue'd): {self.name}",
                             fix="DeQue it first, or free it before EnQue if it is not needed", kind="free-queued")
        p = self.consumer       # the point after the consumer's last instruction (Core.snapshot, inlined)
        t, tail = core.scalar_time, core.tail[p]
        slot.free_event = (core.vc[p][:], tail if tail > t else t, core.last_rec[p], None)
        if core.qsync is not None and core.qsync[p] is not None:
            core.sync_entry(p)                          # the Set takes a queue entry (Core.sync_entry)
        slot.state = "free"
        freed = self.tier.freed_view    # the handles now point to the freed tier: a later use is reported
        tensor.tier = freed
        slot.last.tier = freed
        if slot.views:                  # and so do the views made before FreeTensor
            for v in slot.views:
                v.tier = freed
            slot.views.clear()
        core.scalar_time += core.tick
        core.calls += 1

    def _holder(self, tensor: LocalTensor, what: str) -> tuple:
        """(running core, buffer) of a tensor handed back to this queue, or the error that it is not."""
        core = context.current
        if core is not self.core or core is None:
            core = self._ready(what)
        slot = getattr(tensor, "slot", None)
        if slot is None or slot.que is not self:
            owner = getattr(slot, "que", None)
            raise QueueError(f"{what} of a tensor that does not belong to {self.name}"
                             + (f" (it was allocated from {owner.name})" if owner is not None else ""),
                             fix="EnQue/FreeTensor a tensor on the queue that allocated it", kind="wrong-queue")
        return core, slot

    def VacantInQue(self) -> bool:
        return len(self.fifo) < self.depth

    def GetTensorCountInQue(self) -> int:
        return len(self.fifo)

    def check_finished(self) -> None:
        held = [s for s in self.slots if s.state != "free"]
        if held:
            s = held[0]
            raise QueueError(f"the kernel ended while {len(held)} tensor(s) of {self.name} are still held "
                             f"({s.state}; allocated at {format_site(s.alloc_site)})",
                             fix="every AllocTensor needs a FreeTensor (and every EnQue a DeQue)",
                             site=s.alloc_site, kind="leak")


# TQueBind简介.md, 表1 (the data paths TQueBind<src, dst, depth> expresses): (src, dst) -> (the position whose
# memory holds the buffer, producer pipe, consumer pipe); C2/CO2/GM->C1 paths are not modelled
BIND_FLOW = {
    (TPosition.GM, TPosition.VECIN): (TPosition.VECIN, MTE2, V),
    (TPosition.VECOUT, TPosition.GM): (TPosition.VECOUT, V, MTE3),
    (TPosition.VECIN, TPosition.VECOUT): (TPosition.VECIN, MTE2, MTE3),     # copy through UB, no vector work
    (TPosition.GM, TPosition.A1): (TPosition.A1, MTE2, MTE1),
    (TPosition.GM, TPosition.B1): (TPosition.B1, MTE2, MTE1),
    (TPosition.A1, TPosition.A2): (TPosition.A2, MTE1, M),
    (TPosition.B1, TPosition.B2): (TPosition.B2, MTE1, M),
    (TPosition.CO1, TPosition.CO2): (TPosition.CO1, M, FIX),
    (TPosition.VECOUT, TPosition.A1): (TPosition.A1, MTE3, MTE1),
    (TPosition.VECOUT, TPosition.B1): (TPosition.B1, MTE3, MTE1),
}


class TQueBind(TQue):
    """``TQueBind<src, dst, depth>``: a queue bound to a data path; EnQue/DeQue sync its producer and consumer.

    TQueBind简介.md: "TQueBind绑定源逻辑位置和目的逻辑位置，根据源位置和目的位置，来确定内存分配的位置、插入对应的
    同步事件"; ``TQue<pos, depth>`` is ``TQueBind`` on the path into (VECIN, A1 ...) or out of (VECOUT) ``pos``.
    """

    __slots__ = ("src", "dst")

    def __init__(self, src: TPosition, dst: TPosition, depth: int = 1):
        if src is dst and src in FLOW:
            super().__init__(src, depth)
        else:
            bind = BIND_FLOW.get((src, dst))
            if bind is None:
                paths = ", ".join(f"({a.name}, {b.name})" for a, b in BIND_FLOW)
                raise PositionError(f"TQueBind({getattr(src, 'name', src)}, {getattr(dst, 'name', dst)}) is not a "
                                    "data path the simulator models", fix=f"use one of {paths}")
            super().__init__(bind[0], depth)
            self.producer, self.consumer = bind[1], bind[2]
        self.src, self.dst = src, dst


class TBuf:
    """``TBuf<VECCALC>``: scratch space with no queue protocol."""

    def __init__(self, position: TPosition = TPosition.VECCALC):
        self.position = position
        self.nbytes = 0
        self.addr = None
        self.core = None
        self.name = "tbuf"

    def _core(self, op: str):
        """The current core, once ``pipe.InitBuffer`` has given this TBuf its memory there."""
        core = current_core()
        if self.addr is None or core is not self.core:
            name = alias(self) or "tbuf"
            raise QueueError(f"TBuf.{op} before pipe.InitBuffer(tbuf, bytes) for {name}",
                             fix=f"initialise the TBuf in Init: pipe.InitBuffer({name}, bytes)")
        return core

    def Get(self, dtype=None, length=_OMITTED) -> LocalTensor:
        """The whole buffer (or its first ``length`` elements) as a LocalTensor."""
        core = self._core("Get")
        site = None                 # errors find the kernel line when they are raised
        dtype = dtype_arg("TBuf.Get", dtype, site) if dtype is not None else _default_dtype()
        cap = elements_in(self.nbytes, dtype)
        if length is _OMITTED:
            return LocalTensor(core, tier_for(core, self.position), self.addr, dtype, cap, self.position)
        n = integer("TBuf.Get", "length", length, site, 0)
        if n > cap:
            raise OutOfBoundsError(
                f"TBuf.Get({ascend_name(dtype)}, {n}): {self.name} holds {self.nbytes} bytes = {cap} "
                f"{ascend_name(dtype)} elements, so {n} elements would reach into the next buffer",
                fix=f"ask for at most {cap} elements, or InitBuffer({self.name}, {bytes_of(n, dtype)}) "
                    "for a larger buffer", site=site)
        return LocalTensor(core, tier_for(core, self.position), self.addr, dtype, n, self.position)

    def GetWithOffset(self, dtype=None, size=_OMITTED, bufOffset=_OMITTED) -> LocalTensor:
        """``GetWithOffset<T>(size, bufOffset)``: ``size`` elements starting ``bufOffset`` bytes into the buffer.

        The API page's two rules (asc-devkit docs, TBuf/GetWithOffset, 约束说明): bufOffset is 32-byte aligned, and
        size * sizeof(T) + bufOffset does not exceed the length InitBuffer gave the TBuf.
        """
        core = self._core("GetWithOffset")
        op = "TBuf.GetWithOffset"
        dtype = dtype_arg(op, dtype, None) if dtype is not None else _default_dtype()
        if size is _OMITTED or bufOffset is _OMITTED:
            raise ArgumentError(f"{op} takes the element count and the byte offset",
                                fix="«tbuf.GetWithOffset(float32, size, bufOffset)|"
                                    "tbuf.GetWithOffset<float>(size, bufOffset)» (bufOffset in bytes)")
        n = integer(op, "size", size, None, 0)
        off = integer(op, "bufOffset", bufOffset, None, 0)
        dt = ascend_name(dtype)
        if off % 32:
            down = off // 32 * 32
            raise AlignmentError(
                f"{op}({dt}, {n}, {off}): bufOffset is a byte offset and must be 32-byte aligned "
                f"({off} % 32 = {off % 32}); vector instructions and DataCopy read UB from 32-byte boundaries",
                fix=f"use a multiple of 32 bytes, e.g. {down} or {down + 32} (0x{down:x} or 0x{down + 32:x})")
        need = bytes_of(n, dtype) + off
        if need > self.nbytes:
            name = alias(self) or self.name
            raise OutOfBoundsError(
                f"{op}({dt}, {n}, {off}): {n} {dt} elements from byte {off} end at byte {need}, but "
                f"{name} holds {self.nbytes} bytes (size * sizeof(T) + bufOffset must not exceed them)",
                fix=f"pipe.InitBuffer({name}, {need}) or more, or a smaller size or bufOffset")
        return LocalTensor(core, tier_for(core, self.position), self.addr + off, dtype, n, self.position)

    def check_finished(self) -> None:
        return None


def _default_dtype():
    raise QueueError("the element type is missing", fix="name it as in Ascend C's AllocTensor<half>(): "
                     "«que.AllocTensor(half)», «tbuf.Get(float32)»")


_INIT_ARG = re.compile(r"InitBuffer\(\s*([^,()]+)")
_IDENT = re.compile(r"[A-Za-z_]\w*")


def variable_name(que, label: str) -> str:
    """The learner's name for ``que``: ``label`` (InitBuffer's argument), unless that is only a loop variable.

    ``for q in (inQueueX, inQueueY): pipe.InitBuffer(q, ...)`` passes ``q``: the queue's own name is the
    other variable (or ``self.`` attribute) that holds the same object in the kernel's frame.
    Off the hot path only (InitBuffer, errors): it reads the kernel frame's locals.
    """
    if not _IDENT.fullmatch(label):
        return label
    return alias(que, exclude=label) or label


def alias(obj, exclude: str = "") -> str:
    """A name the kernel's frame gives ``obj``: an attribute of ``self`` first, then a local; '' if none."""
    f = learner_frame()
    if f is None:
        return ""
    names = [n for n, v in f.f_locals.items() if v is obj and n != exclude]
    owner = f.f_locals.get("self")
    if owner is not None and hasattr(owner, "__dict__"):
        names = [n for n, v in vars(owner).items() if v is obj] + names
    return names[0] if names else ""
_LABELS: dict[int, tuple] = {}      # id(code) -> (code, {byte offset: (the buffer's name in the source, self.name?)})


class TPipe:
    """``TPipe``: owns the on-chip buffers of this core and hands them to queues."""

    def __init__(self):
        self.core = current_core()
        self.core.pipes_objs.append(self)
        self._event_ids: dict = {}

    def InitBuffer(self, que, num_or_len: int, length=_OMITTED) -> bool:
        """``InitBuffer(que, num, bytes)`` for a TQue, ``InitBuffer(tbuf, bytes)`` for a TBuf."""
        core = context.current or current_core()
        point = kernel_point()
        code, offset = point        # keyed by the code object's identity: hashing a code object costs about 1 us
        held = _LABELS.get(id(code))
        if held is None or held[0] is not code:
            held = _LABELS[id(code)] = (code, {})     # holds the code object, so its id is not reused meanwhile
        known = held[1].get(offset)
        if known is None:           # the queue's name as the kernel writes it, read once per call site
            m = _INIT_ARG.search(linecache.getline(*resolve_site(point)))
            text = m.group(1).strip() if m else type(que).__name__
            # ``self.inQueueX`` names the queue for sure; a bare name may be a loop variable (variable_name)
            known = held[1][offset] = (text.removeprefix("self."), text.startswith("self."))
        label, attribute = known
        is_buf = que.__class__ is not TQue and isinstance(que, TBuf)
        if length is None:              # an explicit None is not "omitted"
            integer("InitBuffer", "bytes", None, point)
        if length is _OMITTED:
            length = None
        if is_buf:
            if length is not None:
                raise ArgumentError(
                    f"InitBuffer({label}, {num_or_len}, {length}) on a TBuf: a TBuf is one buffer, and its "
                    f"signature is InitBuffer(tbuf, bytes) (the (que, num, bytes) form is for TQue)",
                    fix=f"pipe.InitBuffer({label}, {length if num_or_len == 1 else 'bytes'})", site=point)
            num, nbytes = 1, integer("InitBuffer", "bytes", num_or_len, point)
        elif que.__class__ is TQue or isinstance(que, TQue):
            if length is None:
                raise ArgumentError(f"InitBuffer({label}, {num_or_len}) on a TQue needs the number of buffers and "
                                    "the bytes of each", fix=f"pipe.InitBuffer({label}, num, bytes)", site=point)
            num, nbytes = num_or_len, length
            if num.__class__ is not int or nbytes.__class__ is not int:
                num = integer("InitBuffer", "num", num_or_len, point)
                nbytes = integer("InitBuffer", "bytes", length, point)
        else:
            raise ArgumentError(f"InitBuffer takes a TQue or a TBuf, got {type(que).__name__}",
                                fix="pipe.InitBuffer(que, num, bytes) or pipe.InitBuffer(tbuf, bytes)", site=point)
        if num > 255:
            integer("InitBuffer", "num", num, point, 1, 255, fix="num is a uint8_t (InitBuffer.md): 1, or 2 for "
                    "double buffering")
        if num < 1 or nbytes < 1:
            raise QueueError(f"InitBuffer({label}, {num}, {nbytes}): need at least one buffer of at least one byte",
                             fix="pass the buffer count and the bytes per buffer", site=point)
        tier = tier_for(core, que.position)
        if tier.allocator is not None:
            raise QueueError(f"InitBuffer({label}, ...) on {tier.name}, which a LocalMemAllocator already hands out: "
                             "static allocation cannot be mixed with TPipe (LocalMemAllocator简介.md: 不可以与TPipe等"
                             "接口混用)", fix="use either TPipe/TQue or LocalMemAllocator in one kernel", site=point)
        size = -(-nbytes // tier.align) * tier.align
        addr = tier.next_free
        total = addr + num * size
        if total > tier.usable:
            listing = "".join(f"\n    {name}: {n} bytes at {tier.name}+{a}" for name, a, n in tier.buffers)
            raise CapacityError(
                f"{tier.name} capacity exceeded: InitBuffer({label}, {num}, {nbytes}) needs {num} x {size} = "
                f"{num * size} bytes, bringing {tier.name} use to {total} bytes, but {tier.usable} bytes are "
                f"usable on {core.chip.name}. Buffers so far:{listing or ' none'}",
                fix="use smaller tiles (a shorter tileLength), fewer buffers, or split the work over more "
                    "loop iterations", site=point)
        que.core = core
        que.name = label if attribute else variable_name(que, label)    # the frame walk only for bare names
        que.tier = tier
        if is_buf:
            que.nbytes = size
            que.addr = addr
        else:
            que.nbytes = nbytes
            que.slots = [_Slot(que, a) for a in range(addr, total, size)]
            core.queues.append(que)
        tier.buffers.append((label, addr, num * size))
        tier.next_free = total
        if total > tier.high:
            tier.high = total
        return True

    # --- event ids (TPipe/FetchEventID.md, AllocEventID.md, ReleaseEventID.md) ----------------------
    # "FetchEventID ... 此接口不会申请TEventID，仅提供可用的TEventID": the lowest id that AllocEventID does not hold,
    # without holding it (two Fetches in a row give the same id); "AllocEventID ... 会占用申请的TEventID，直至调用
    # ReleaseEventID释放"; "TEventID有数量限制": the chip's ids (0..7 on Atlas A2).
    def _held(self, event, what: str) -> set:
        if not isinstance(event, HardEvent):
            raise ArgumentError(f"{what} takes a HardEvent (the C++ template argument), got {event!r}",
                                fix=f"«pipe.{what}(HardEvent.V_MTE3)»")
        return self._event_ids.setdefault(event, set())

    def _free_id(self, event, what: str) -> int:
        held = self._held(event, what)
        n = self.core.chip.event_ids
        for k in range(n):
            if k not in held:
                return k
        raise SyncError(f"{what}({event.name}): all {n} event ids of {event.name} are held by AllocEventID "
                        f"({sorted(held)}); TEventID有数量限制 (the ids are limited)",
                        fix=f"«ReleaseEventID({event.name}, id)» each AllocEventID id as soon as its WaitFlag is "
                            "done")

    def FetchEventID(self, event) -> int:
        """A free event id for ``event``, not held: the lowest one AllocEventID does not hold."""
        return self._free_id(event, "FetchEventID")

    def AllocEventID(self, event) -> int:
        """An event id for ``event``, held until ``ReleaseEventID(event, id)``."""
        k = self._free_id(event, "AllocEventID")
        self._event_ids[event].add(k)
        return k

    def ReleaseEventID(self, event, id: int) -> None:
        """Give back an id that ``AllocEventID(event)`` returned."""
        held = self._held(event, "ReleaseEventID")
        if id not in held:
            raise SyncError(f"ReleaseEventID({event.name}, {id!r}): id {id!r} is not held by AllocEventID"
                            f"({event.name}) (held: {sorted(held) or 'none'}); \"ReleaseEventID传入的TEventID需由"
                            "对应的AllocEventID申请而来\"",
                            fix="release exactly the ids AllocEventID returned, once each, with the same HardEvent")
        held.discard(id)

    def Reset(self) -> None:
        """Release every buffer of this pipe (all tensors must be free)."""
        core = self.core
        for q in core.queues:
            q.check_finished()
        for tier in core.tiers.values():
            tier.next_free = 0
            tier.buffers.clear()
        core.queues.clear()

    Destroy = Reset

    def check_finished(self) -> None:
        return None


def GetTPipePtr() -> TPipe:
    """The block's TPipe (GetTPipePtr.md: "创建TPipe对象时，对象初始化会设置全局唯一的TPipe指针。本接口用于获取该指针")."""
    core = current_core()
    if not core.pipes_objs:
        raise QueueError("GetTPipePtr() before any TPipe was created in this block: the pointer is set when the "
                         "TPipe object is constructed", fix="create `pipe = TPipe()` at the start of the kernel, "
                         "then call GetTPipePtr() in Init/Process")
    return core.pipes_objs[-1]


__all__ = ["TPosition", "QuePosition", "TQue", "TQueBind", "TBuf", "TPipe", "GetTPipePtr", "ascend_name"]
