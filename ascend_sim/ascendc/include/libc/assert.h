// <assert.h> for the ascend_sim C++ front end: the same as <cassert>.
#include <cassert>
