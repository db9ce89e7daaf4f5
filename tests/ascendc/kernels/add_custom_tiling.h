// The tiling data of add_custom.cpp (the host fills it; GET_TILING_DATA reads it in the kernel).
#ifndef TESTS_ADD_CUSTOM_TILING_H
#define TESTS_ADD_CUSTOM_TILING_H
#include <cstdint>

struct AddCustomTilingData {
    uint32_t totalLength;
    uint32_t tileNum;
    uint32_t bufferNum = 2;
};

#endif
