"""Ascend C high-level APIs (高阶API) built on the basic instructions: the Matmul tiling and object."""
