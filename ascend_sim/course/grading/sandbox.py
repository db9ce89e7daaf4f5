"""Start the sandbox (沙箱): a Jupyter kernel (IPython) under resource limits, the grader's kernel command.

``python -m ascend_sim.course.grading.sandbox -f CONNECTION_FILE`` reads the limits
from the environment, applies them with ``resource.setrlimit`` to this
process (the Jupyter kernel itself), then starts ipykernel:

* ``ASCEND_SIM_SANDBOX_MEMORY_MB``: RLIMIT_AS, the address space; an answer
  that allocates more gets a MemoryError instead of taking the machine down;
* ``ASCEND_SIM_SANDBOX_CPU_SECONDS``: RLIMIT_CPU, a backstop behind the
  grader's wall-clock limits.
"""
from __future__ import annotations

import os

MEMORY_ENV = "ASCEND_SIM_SANDBOX_MEMORY_MB"
CPU_ENV = "ASCEND_SIM_SANDBOX_CPU_SECONDS"


def apply_limits(memory_mb: int = 0, cpu_seconds: int = 0) -> None:
    """Lower RLIMIT_AS / RLIMIT_CPU of the current process (0 keeps a limit as it is)."""
    import resource
    if memory_mb > 0:
        _lower(resource.RLIMIT_AS, memory_mb * 2**20, memory_mb * 2**20)
    if cpu_seconds > 0:
        _lower(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 5)


def _lower(which: int, soft: int, hard: int) -> None:
    """Set a limit, never above the hard limit this process already has (raising it is not allowed)."""
    import resource
    _, current = resource.getrlimit(which)
    if current != resource.RLIM_INFINITY:
        soft, hard = min(soft, current), min(hard, current)
    resource.setrlimit(which, (soft, hard))


def main() -> None:
    apply_limits(int(os.environ.get(MEMORY_ENV, "0") or 0), int(os.environ.get(CPU_ENV, "0") or 0))
    from ipykernel.kernelapp import launch_new_instance
    launch_new_instance()


if __name__ == "__main__":
    main()
