"""Module 4 (migration): dtype templates and tiling keys, quantisers and precision comparison.

Empty until Module 4 is built; it adds files here, not fields on the core.
"""
