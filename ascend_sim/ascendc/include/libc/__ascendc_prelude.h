// Included first by ascend_sim's C++ front end (never by a learner's file): what its source rewrites refer to.
// k<<<blocks, l2ctrl, stream>>>(args) is parsed as (__ascendc_launch(blocks, l2ctrl, stream), k)(args).
int __ascendc_launch(unsigned int blocks, void* l2ctrl, void* stream);
