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

from ascend_sim.course.grading.sandbox import ALLOW_ENV, EXPOSE_ENV, HIDE_ENV, NPROC_ENV, ROOT_ENV, UID_ENV, WORK_ENV

MEMORY_ENV = "ASCEND_SIM_KERNEL_MEMORY_MB"
CPU_ENV = "ASCEND_SIM_KERNEL_CPU_SECONDS"
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC = 1, 2, 4, 8, 4096, 16384
MS_REMOUNT, MS_PRIVATE, MNT_DETACH = 32, 1 << 18, 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41}


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


def new_root(root: str, allowed: list[str], work: str) -> None:
    """Make ``root`` this mount namespace's ``/``, holding only ``allowed`` (read-only) and ``work`` (writable).

    Hiding by allowlist: an empty tmpfs, each allowed path bound at its own place (a symbolic link copied as a
    link), ``/proc`` of this PID namespace, ``/dev/null`` and friends; then ``pivot_root`` and the old root
    detached, so nothing else of the machine (the repository, ``.git``, other runs' folders) has a path, and
    ``/proc/self/mountinfo`` lists only what was allowed.
    """
    import platform
    libc = ctypes.CDLL(None, use_errno=True)
    _mount(libc, "none", "/", None, MS_REC | MS_PRIVATE)
    _mount(libc, "tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    for path in [*allowed, "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"]:
        _place(libc, root, path, writable=False)
    _place(libc, root, work, writable=True)
    os.makedirs(root + "/proc", exist_ok=True)
    _mount(libc, "proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    old = root + "/.old-root"
    os.mkdir(old)
    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is None or libc.syscall(number, root.encode(), old.encode()) != 0:
        raise OSError(ctypes.get_errno(), "pivot_root failed")
    os.chdir("/")
    if libc.umount2(b"/.old-root", MNT_DETACH) != 0:
        raise OSError(ctypes.get_errno(), "could not detach the old root")
    os.rmdir("/.old-root")
    _mount(libc, "none", "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(work)


def _place(libc, root: str, path: str, writable: bool) -> None:
    """Bind ``path`` at the same place under ``root`` (a symlink is recreated as a link, and followed)."""
    path = os.path.abspath(path)
    if not os.path.lexists(path):
        return
    target = root + path
    os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
    if os.path.islink(path):
        if not os.path.lexists(target):
            os.symlink(os.readlink(path), target)
        _place(libc, root, os.path.realpath(path), writable)
        return
    if os.path.lexists(target):            # already there: inside a folder bound before, or bound itself
        return
    if os.path.isdir(path):
        os.makedirs(target, mode=0o755, exist_ok=True)
    else:
        open(target, "a").close()  # noqa: SIM115 - a mount point for one file
    _mount(libc, path, target, None, MS_BIND | MS_REC)
    if not writable:
        _mount(libc, "none", target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID)


def confine(argv: list[str]) -> None:
    """Apply the grader's confinement from the environment (and remove it from there)."""
    root = os.environ.pop(ROOT_ENV, "")
    allowed = [p for p in os.environ.pop(ALLOW_ENV, "").split(os.pathsep) if p]
    work = os.environ.pop(WORK_ENV, "")
    if root:
        new_root(root, allowed, work)
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
