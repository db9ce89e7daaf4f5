"""Per-lab check definitions: ``ascend_sim.labs.lab00`` holds the checks of ``labs/lab00_warmup.ipynb``.

Hidden cases live here, in the package, so a notebook only says ``check("ex1")``.
"""
