"""Module 5's two real projects (docs/projects.md): industrial inspection (工业质检) and medical imaging (医疗影像).

Each project is a pipeline of simulated Ascend C kernels plus host-side steps (said so where they are), with
a ``run_demo`` a lesson calls: ``ascend_sim.projects.inspection.run_demo`` and
``ascend_sim.projects.medical.run_demo``.
"""
