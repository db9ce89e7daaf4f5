"""Static allocation (静态Tensor编程): LocalTensor on a raw address, LocalMemAllocator, Hardware.

The newest official samples skip TPipe/TQue: they place each LocalTensor at an address of
its physical memory (``LocalTensor<T>(pos, addr, tileSize)``) or take consecutive ones from a
``LocalMemAllocator<Hardware::UB>``, and synchronise by hand with SetFlag/WaitFlag. The
tensors are ordinary LocalTensors on the tier, so the sanitizer's racecheck and initcheck
see them as they see queue buffers; what construction checks is below (docs quoted).
"""
from __future__ import annotations

import enum

from ascend_sim.api.checks import dtype_arg, integer
from ascend_sim.api.pipe import TIER_OF, TPosition, tier_for
from ascend_sim.api.tensor import LocalTensor, TypedLocalTensor
from ascend_sim.engine.context import current_core
from ascend_sim.engine.errors import (AlignmentError, ArgumentError, CapacityError, OutOfBoundsError, PositionError,
                                      QueueError, kernel_point)
from ascend_sim.hw.dtypes import ascend_name, bytes_of


class Hardware(enum.Enum):
    """``Hardware``: the physical memories a LocalMemAllocator hands out (BIAS and FIXBUF are not modelled)."""

    GM = "GM"
    UB = "UB"
    L1 = "L1"
    L0A = "L0A"
    L0B = "L0B"
    L0C = "L0C"
    BIAS = "BIAS"
    FIXBUF = "FIXBUF"


# the logical position an Alloc without one gets ("由Alloc函数根据物理位置给出默认值")
_DEFAULT_POS = {Hardware.UB: TPosition.VECCALC, Hardware.L1: TPosition.A1, Hardware.L0A: TPosition.A2,
                Hardware.L0B: TPosition.B2, Hardware.L0C: TPosition.CO1}


def local_tensor_at(position, addr: int, tileSize: int, dtype) -> LocalTensor:
    """``LocalTensor<T>(pos, addr, tileSize)``: ``tileSize`` elements of ``dtype`` at byte ``addr`` of ``pos``'s memory.

    LocalTensor构造函数.md: "addr ... 其范围为[0,对应物理内存最大值)。起始地址需要保证32字节对齐" and "addr和tileSize
    （转换成所占字节数）之和不应超出对应物理内存的范围".
    """
    site = kernel_point()
    core = current_core()
    if not isinstance(position, TPosition):
        raise PositionError(f"LocalTensor(pos, addr, tileSize): pos must be a TPosition, got {position!r}",
                            fix="e.g. «LocalTensor[half](TPosition.VECCALC, 0, 1024)»", site=site)
    d = dtype_arg("LocalTensor", dtype, site)
    tier = tier_for(core, position)
    a = integer("LocalTensor", "addr", addr, site, 0)
    n = integer("LocalTensor", "tileSize", tileSize, site, 0)
    nbytes = bytes_of(n, d)
    if a % 32:
        raise AlignmentError(f"LocalTensor at {tier.name} address {a}: the start address must be 32-byte "
                             f"aligned ({a} % 32 = {a % 32})",
                             fix="round the address up to a multiple of 32 bytes (for the previous tensor of a "
                                 "LocalMemAllocator: allocate a multiple of 32 bytes)", site=site)
    if a + nbytes > tier.capacity:
        raise OutOfBoundsError(
            f"LocalTensor({position.name}, {a}, {n}) of {ascend_name(d)}: bytes {a}..{a + nbytes - 1} run past the "
            f"{tier.capacity}-byte {tier.name} of {core.chip.name} (addr + tileSize * {d.itemsize} must stay below it)",
            fix=f"use at most {max(0, (tier.capacity - a) // d.itemsize)} elements at this address, or a lower "
                "address", site=site)
    for name, lo, size in tier.buffers:
        if a < lo + size and lo < a + nbytes:
            raise QueueError(
                f"LocalTensor({position.name}, {a}, {n}) of {ascend_name(d)} overlaps {tier.name} bytes "
                f"{lo}..{lo + size - 1} that TPipe.InitBuffer gave to {name}: the queue hands those bytes out too",
                fix="keep static tensors out of the TPipe's buffers (place them after them), or use one style "
                    "per kernel", site=site)
    if a + nbytes > tier.high:
        tier.high = a + nbytes          # the bytes the block may write, zeroed for the next block
    core.launch.static_tensors = True   # the launch then looks for tensors placed over each other's data
    return LocalTensor(core, tier, a, d, n, position)


TypedLocalTensor.build = staticmethod(local_tensor_at)     # LocalTensor[T](pos, addr, tileSize)


class LocalMemAllocator:
    """``LocalMemAllocator<hard>``: hands out consecutive LocalTensors of one physical memory from address 0.

    LocalMemAllocator简介.md: "LocalMemAllocator仅支持在Ascend C静态Tensor编程方式中使用，不可以与TPipe等接口混用";
    LocalMemAllocator构造函数.md: "同一个物理位置的LocalMemAllocator对象，在算子生命周期内只能存在1个".
    """

    def __init__(self, hard: Hardware = Hardware.UB):
        site = kernel_point()
        core = current_core()
        if not isinstance(hard, Hardware):
            raise ArgumentError(f"LocalMemAllocator: hard must be a Hardware member, got {hard!r}",
                                fix="LocalMemAllocator(«Hardware.UB») (the default), «Hardware.L1», L0A, L0B or L0C",
                                site=site)
        pos = _DEFAULT_POS.get(hard)
        if pos is None:
            raise PositionError(f"LocalMemAllocator(Hardware.{hard.name}): {hard.name} is not a local memory the "
                                "simulator models", fix="use «Hardware.UB», L1, L0A, L0B or L0C", site=site)
        tier = tier_for(core, pos)
        if tier.allocator is not None:
            raise QueueError(f"a second LocalMemAllocator(Hardware.{hard.name}) in this block: only one per physical "
                             "memory may exist (同一个物理位置的LocalMemAllocator对象，在算子生命周期内只能存在1个)",
                             fix="create the allocator once and pass it (or its tensors) to the code that needs it",
                             site=site)
        if tier.buffers:
            raise QueueError(f"LocalMemAllocator(Hardware.{hard.name}) after TPipe.InitBuffer gave {tier.name} bytes to "
                             f"{tier.buffers[0][0]}: static allocation cannot be mixed with TPipe (不可以与TPipe等"
                             "接口混用); both would hand out the same bytes",
                             fix="use either TPipe/TQue or LocalMemAllocator in one kernel", site=site)
        tier.allocator = self
        self.hard, self.tier, self.core, self._head = hard, tier, core, 0

    def GetCurAddr(self) -> int:
        """The first free address (GetCurAddr-72.md: "返回当前物理位置空闲的起始地址")."""
        return self._head

    def Alloc(self, *args) -> LocalTensor:
        """``Alloc<pos, T>(tileSize)`` as ``Alloc(pos, T, tileSize)``, or ``Alloc<T>(tileSize)`` as ``Alloc(T, tileSize)``.

        The tensor starts at GetCurAddr(), which then moves on by exactly tileSize * sizeof(T) bytes (Alloc.md:
        tileSize "其数量不应超过当前物理位置剩余的内存空间"); the next tensor must still start 32-byte aligned.
        """
        site = kernel_point()
        if len(args) == 3:
            pos, dtype, n = args
            if not isinstance(pos, TPosition) or TIER_OF.get(pos) != self.tier.name:
                raise PositionError(f"Alloc({getattr(pos, 'name', pos)}, ...) on LocalMemAllocator(Hardware."
                                    f"{self.hard.name}): the logical position is not in {self.tier.name} (logic pos "
                                    "and hardware pos not matched)",
                                    fix=f"pass a position of {self.tier.name}, e.g. {_DEFAULT_POS[self.hard].name}, "
                                        "or leave it out", site=site)
        elif len(args) == 2:
            pos, (dtype, n) = _DEFAULT_POS[self.hard], args
        else:
            raise ArgumentError(f"Alloc takes (pos, dtype, tileSize) or (dtype, tileSize), got {len(args)} arguments",
                                fix="«allocator.Alloc(TPosition.VECIN, float32, tileLength)|"
                                    "allocator.Alloc<TPosition::VECIN, float>(tileLength)»", site=site)
        d = dtype_arg("Alloc", dtype, site)
        count = integer("Alloc", "tileSize", n, site, 0)
        tier, head = self.tier, self._head
        nbytes = bytes_of(count, d)
        if head + nbytes > tier.capacity:
            raise CapacityError(
                f"LocalMemAllocator(Hardware.{self.hard.name}).Alloc({ascend_name(d)}, {count}) needs {nbytes} "
                f"bytes at address {head}, but {tier.name} has {tier.capacity} bytes ({tier.capacity - head} left)",
                fix="allocate smaller tiles or fewer tensors", site=site)
        t = local_tensor_at(pos, head, count, d)
        self._head = head + nbytes
        return t


__all__ = ["Hardware", "LocalMemAllocator", "local_tensor_at"]
