"""``platform_ascendc`` in host C++: a tiling function reads the simulated chip's cores and memory sizes through
``PlatformAscendCManager::GetInstance()`` (asc-devkit API docs, Utils API > 平台信息获取 > PlatformAscendC)."""
from __future__ import annotations

import pytest

pytest.importorskip("clang.cindex")

from ascend_sim import ArgumentError  # noqa: E402
from ascend_sim.ascendc import load  # noqa: E402
from ascend_sim.hw.chips import get_chip  # noqa: E402

SOURCE = """
#include "tiling/platform/platform_ascendc.h"
#include <cstdint>

uint64_t MemSize(uint32_t kind)
{
    uint64_t size = 0;
    auto* platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    switch (kind) {
        case 0: platform->GetCoreMemSize(platform_ascendc::CoreMemType::L0_A, size); break;
        case 1: platform->GetCoreMemSize(platform_ascendc::CoreMemType::L1, size); break;
        case 2: platform->GetCoreMemSize(platform_ascendc::CoreMemType::UB, size); break;
        default: platform->GetCoreMemSize(platform_ascendc::CoreMemType::FB, size); break;
    }
    return size;
}

uint32_t Cores(bool cube)
{
    auto* platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    return cube ? platform->GetCoreNumAic() : platform->GetCoreNumAiv();
}
"""


def test_a_host_tiling_function_reads_the_chip_profile():
    chip = get_chip(None)
    mod = load(SOURCE, name="platform")
    assert [mod.MemSize(k) for k in range(3)] == [chip.l0a_bytes, chip.l1_bytes, chip.ub_bytes]
    assert (mod.Cores(True), mod.Cores(False)) == (chip.aic_count, chip.aiv_count)


def test_a_memory_the_simulator_does_not_size_is_an_error_at_the_line():
    mod = load(SOURCE, name="platform_fb")
    with pytest.raises(ArgumentError) as err:
        mod.MemSize(3)
    assert "CoreMemType::FB" in str(err.value) and err.value.site[1] == 13
