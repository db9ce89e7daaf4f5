// cpu_debug_launch.h: included by the .asc examples under `#ifdef ASCENDC_CPU_DEBUG`; ascend_sim needs nothing
// from it (every simulated launch is a CPU-twin run), so it is empty.
#ifndef ASCEND_SIM_CPU_DEBUG_LAUNCH_H
#define ASCEND_SIM_CPU_DEBUG_LAUNCH_H
#endif  // ASCEND_SIM_CPU_DEBUG_LAUNCH_H
