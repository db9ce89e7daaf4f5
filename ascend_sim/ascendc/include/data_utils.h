// data_utils.h: the example helpers ReadFile / WriteFile (declarations only; ascend_sim.ascendc.host.data_utils).
#ifndef ASCEND_SIM_DATA_UTILS_H
#define ASCEND_SIM_DATA_UTILS_H
#include <cstdint>
#include <cstddef>
bool ReadFile(const char* filePath, size_t fileSize, void* buffer, size_t bufferSize);
bool WriteFile(const char* filePath, const void* buffer, size_t size);
#endif
