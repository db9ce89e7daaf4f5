// data_utils.h: the file helpers of the official examples' host code, DECLARATIONS ONLY.
//
// Every asc-devkit example ships a data_utils.h with ReadFile / WriteFile (binary files in the example's working
// folder, written by its gen_data.py and read by its verify_result.py). The front end replaces the example's own
// copy with this one and lowers the calls to ascend_sim.ascendc.host.data_utils. The paths are `const char*`
// (what the examples pass: string literals), so no <string> is needed; with <string> available, std::string
// paths work too.
#ifndef ASCEND_SIM_DATA_UTILS_H
#define ASCEND_SIM_DATA_UTILS_H

#include <cstdint>

typedef decltype(sizeof(0)) size_t;

// Reads the file into buffer (at most bufferSize bytes); fileSize receives the file's size. False on failure.
bool ReadFile(const char* filePath, size_t& fileSize, void* buffer, size_t bufferSize);
// Writes size bytes of buffer to the file. False on failure.
bool WriteFile(const char* filePath, const void* buffer, size_t size);

#if defined(__has_include)
#if __has_include(<vector>)
#include <vector>       // as the examples' own data_utils.h does: their host code uses std::vector without <vector>
#endif
#if __has_include(<string>) && !defined(ASCEND_SIM_NO_STD_STRING)
#include <string>
bool ReadFile(const std::string& filePath, size_t& fileSize, void* buffer, size_t bufferSize);
bool WriteFile(const std::string& filePath, const void* buffer, size_t size);
#endif
#endif

#endif  // ASCEND_SIM_DATA_UTILS_H
