"""Module 4 (migration) kernels: int8 matmul through the cube with a vector dequantisation."""
