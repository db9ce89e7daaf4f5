"""Module 4 (migration): quantisers, the cloud-versus-edge runtime interface, model migration.

``quant``: post-training quantisation as AMCT does it (min-max, IFMR, HFMG for activations; ARQ for weights;
int4 weight-only groups for W4A16). Templates and tiling keys are part of the Ascend C API
(``ascend_sim.api.template``); host tiling for any shape is a kernel helper (``ascend_sim.kernels.tiling``).
New work adds files here, not fields on the core.
"""
