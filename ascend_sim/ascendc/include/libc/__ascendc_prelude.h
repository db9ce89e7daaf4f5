// Included first by ascend_sim's C++ front end (never by a learner's file): what its source rewrites refer to,
// and what the device toolchain's headers make visible without an #include (printf).
// k<<<blocks, l2ctrl, stream>>>(args) is parsed as (__ascendc_launch(blocks, l2ctrl, stream), k)(args).
#include <cstdio>
#include <cmath>
int __ascendc_launch(unsigned int blocks, void* l2ctrl, void* stream);
