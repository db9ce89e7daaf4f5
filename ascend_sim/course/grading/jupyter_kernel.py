"""Start the sandbox's Jupyter kernel (IPython) under resource limits: the grader's kernel command.

``python -m ascend_sim.course.grading.jupyter_kernel -f CONNECTION_FILE`` reads the limits
from the environment, applies them with ``resource.setrlimit`` to this
process (the kernel itself), then starts ipykernel:

* ``ASCEND_SIM_KERNEL_MEMORY_MB``: RLIMIT_AS, the address space; an answer
  that allocates more gets a MemoryError instead of taking the machine down;
* ``ASCEND_SIM_KERNEL_CPU_SECONDS``: RLIMIT_CPU, a backstop behind the
  grader's wall-clock limits.

Inside the grader's namespaces (``sandbox.py``) it first hides folders
(``ASCEND_SIM_KERNEL_HIDE``: an empty read-only tmpfs over each folder, /dev/null
over each file), then gives the connection file to the sandbox user and
switches to it (``ASCEND_SIM_KERNEL_UID``, with ``RLIMIT_NPROC`` from
``ASCEND_SIM_KERNEL_NPROC``). Any failure stops the kernel: it never runs
less confined than the grader asked.
"""
from __future__ import annotations

import ctypes
import os
import sys

from ascend_sim.course.grading.sandbox import EXPOSE_ENV, HIDE_ENV, NPROC_ENV, UID_ENV

MEMORY_ENV = "ASCEND_SIM_KERNEL_MEMORY_MB"
CPU_ENV = "ASCEND_SIM_KERNEL_CPU_SECONDS"
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC = 1, 2, 4, 8, 4096, 16384


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


def expose(paths: list[str]) -> None:
    """Make each path reachable by any user in this mount namespace (Python under a 0700 home, say).

    For the highest ancestor a stranger cannot enter: bind the paths aside, lay a 0755 tmpfs over the
    ancestor (hiding the rest of it) and bind the paths back at their places inside it.
    """
    import tempfile
    libc = ctypes.CDLL(None, use_errno=True)
    blocked: dict[str, list[str]] = {}
    for p in (os.path.realpath(p) for p in paths):
        closed = next((a for a in _ancestors(p) if not os.stat(a).st_mode & 0o001), None)
        if closed is not None:
            blocked.setdefault(closed, []).append(p)
    for ancestor, inside in blocked.items():
        stage = tempfile.mkdtemp(prefix="ascend-sim-expose-")
        aside = []
        for i, p in enumerate(inside):
            aside.append(os.path.join(stage, str(i)))
            os.mkdir(aside[-1])
            _mount(libc, p, aside[-1], None, MS_BIND | MS_REC)
        _mount(libc, "tmpfs", ancestor, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
        for p, a in zip(inside, aside):
            os.makedirs(p, mode=0o755, exist_ok=True)
            _mount(libc, a, p, None, MS_BIND | MS_REC)


def _ancestors(path: str) -> list[str]:
    """'/', '/root', '/root/.pyenv', ... down to ``path`` itself."""
    parts = path.strip("/").split("/")
    return ["/"] + ["/" + "/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _mount(libc, src: str, dst: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    if libc.mount(src.encode(), dst.encode(), fstype.encode() if fstype else None, flags,
                  data.encode() if data else None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {src} on {dst}: {os.strerror(err)}")


def hide(paths: list[str]) -> None:
    """Make each path unreadable in this mount namespace: an empty read-only tmpfs on a folder, /dev/null on a file."""
    libc = ctypes.CDLL(None, use_errno=True)
    for p in paths:
        if not os.path.exists(p):       # already out of sight (under a folder ``expose`` covered)
            continue
        if os.path.isdir(p):
            rc = libc.mount(b"tmpfs", p.encode(), b"tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                            b"size=4k,mode=0555")
        else:
            rc = libc.mount(b"/dev/null", p.encode(), None, MS_BIND, None)
        if rc != 0:
            raise OSError(ctypes.get_errno(), f"cannot hide {p}: {os.strerror(ctypes.get_errno())}")


def switch_user(uid: int, connection_file: str, nproc: int) -> None:
    """Become ``uid`` (group ``uid``, no supplementary groups); the connection file goes with it."""
    import resource
    if connection_file:
        os.chown(connection_file, uid, uid)
    os.setgroups([])
    os.setgid(uid)
    if nproc > 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError(f"could not switch to uid {uid}")


def confine(argv: list[str]) -> None:
    """Apply the grader's confinement from the environment (and remove it from there)."""
    exposed = [p for p in os.environ.pop(EXPOSE_ENV, "").split(os.pathsep) if p]
    hidden = [p for p in os.environ.pop(HIDE_ENV, "").split(os.pathsep) if p]
    if exposed:
        expose(exposed)
    uid = os.environ.pop(UID_ENV, "")
    nproc = int(os.environ.pop(NPROC_ENV, "0") or 0)
    if hidden:
        hide(hidden)
    if uid:
        conn = argv[argv.index("-f") + 1] if "-f" in argv else ""
        switch_user(int(uid), conn, nproc)


def main() -> None:
    try:
        confine(sys.argv)
    except Exception as e:  # noqa: BLE001 - never run less confined than asked
        print(f"ascend-sim grading kernel: confinement failed: {e}", file=sys.stderr, flush=True)
        os._exit(70)
    apply_limits(int(os.environ.get(MEMORY_ENV, "0") or 0), int(os.environ.get(CPU_ENV, "0") or 0))
    from ipykernel.kernelapp import launch_new_instance
    launch_new_instance()


if __name__ == "__main__":
    main()
