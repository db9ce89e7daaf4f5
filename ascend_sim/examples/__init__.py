"""Tested example kernels: the canonical add_custom and a small cube matmul."""
