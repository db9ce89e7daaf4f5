// tiling/platform/platform_ascendc.h: the host's view of the chip for tiling, DECLARATIONS ONLY.
// Written for ascend_sim from the public API reference (Tiling API > PlatformAscendC); the simulated chip's
// numbers come from ascend_sim.hw.chips.
#ifndef ASCEND_SIM_PLATFORM_ASCENDC_H
#define ASCEND_SIM_PLATFORM_ASCENDC_H

#include <cstdint>

namespace platform_ascendc {
enum class CoreMemType { L0_A = 0, L0_B, L0_C, L1, L2, UB, HBM, FB, BT, RESERVED };
enum class SocVersion { ASCEND910, ASCEND910B, ASCEND310B, RESERVED_VERSION };

class PlatformAscendC {
public:
    uint32_t GetCoreNum() const;
    uint32_t GetCoreNumAic() const;
    uint32_t GetCoreNumAiv() const;
    void GetCoreMemSize(const CoreMemType& memType, uint64_t& size) const;
    SocVersion GetSocVersion() const;
    uint32_t GetLibApiWorkSpaceSize() const;
};

class PlatformAscendCManager {
public:
    static PlatformAscendC* GetInstance();
    static PlatformAscendC* GetInstance(const char* socVersion);
};
}  // namespace platform_ascendc

#endif  // ASCEND_SIM_PLATFORM_ASCENDC_H
