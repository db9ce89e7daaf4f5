"""``platform_ascendc``: the host's view of the chip for a tiling function (Tiling API > PlatformAscendC).

What a C++ tiling function asks (``PlatformAscendCManager::GetInstance()->GetCoreNumAic()``,
``GetCoreMemSize(CoreMemType::L0_A, size)``) is answered from the simulated chip's profile
(``ascend_sim.hw.chips``): the chip of the running ``ascend-sim run`` program, else the default chip that
``launch`` uses. Public reference: asc-devkit API docs, "Utils API > 平台信息获取 > PlatformAscendC" and
"PlatformAscendCManager".
"""
from __future__ import annotations

from typing import Any

from ascend_sim import ArgumentError
from ascend_sim.hw.chips import get_chip

__all__ = ["GetInstance", "PlatformAscendC", "MEM_FIELDS"]

#: CoreMemType's values (the API page's enum: L0_A = 0 ... BT = 8) -> the chip profile's field of that size
MEM_FIELDS = {0: "l0a_bytes", 1: "l0b_bytes", 2: "l0c_bytes", 3: "l1_bytes", 4: "l2_bytes", 5: "ub_bytes",
              6: "gm_bytes", 8: "bt_bytes"}
_MEM_NAMES = ("L0_A", "L0_B", "L0_C", "L1", "L2", "UB", "HBM", "FB", "BT")


class PlatformAscendC:
    """One chip's platform information, as the host's tiling code reads it."""

    def __init__(self, chip: Any = None):
        self.chip = chip

    def _profile(self):
        if self.chip is not None:
            return get_chip(self.chip)
        from ascend_sim.ascendc.host import acl
        return get_chip(acl.current().chip)

    def GetCoreNumAic(self) -> int:
        """The cube cores (AIC)."""
        return self._profile().aic_count

    def GetCoreNumAiv(self) -> int:
        """The vector cores (AIV)."""
        return self._profile().aiv_count

    def GetCoreNum(self) -> int:
        """The API page: on a chip whose cube and vector cores are separate, the vector cores; else the AI Cores."""
        return self._profile().aiv_count

    def GetCoreMemSize(self, memType: int, size: Any) -> None:
        """``size`` (a ``uint64_t&``: the caller's Box or Ref) = the bytes of the memory ``memType``."""
        field = MEM_FIELDS.get(int(memType))
        if field is None:
            name = _MEM_NAMES[int(memType)] if 0 <= int(memType) < len(_MEM_NAMES) else str(memType)
            raise ArgumentError(f"GetCoreMemSize(CoreMemType::{name}): the simulator does not model this memory's size",
                                fix="ask for L0_A, L0_B, L0_C, L1, L2, UB, HBM or BT")
        size.value = int(getattr(self._profile(), field))


def GetInstance(socVersion: Any = None) -> PlatformAscendC:
    """``PlatformAscendCManager::GetInstance()``: the platform of the simulated chip (``GetInstance(socVersion)``:
    that chip, by its name in ascend_sim.hw.chips)."""
    return PlatformAscendC(socVersion if socVersion else None)
