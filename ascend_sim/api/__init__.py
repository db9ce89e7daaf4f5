"""The Ascend C surface a kernel calls: tensors, TPipe/TQue/TBuf, flags, block queries, the instructions, launch."""
