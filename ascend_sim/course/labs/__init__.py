"""Per-lab check definitions: ``ascend_sim.course.labs.lab00_warmup`` holds the checks of ``labs/lab00_warmup.ipynb``.

Hidden cases live here, in the package, so a notebook only says ``check("ex1")``.
"""
