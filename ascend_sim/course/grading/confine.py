"""Confine the re-run's process from inside its namespaces: a new root, limits, its own user.

``runner.py`` calls ``confine`` first thing, before anything of the learner's exists:

* ``ASCEND_SIM_SANDBOX_ROOT`` / ``_ALLOW`` / ``_WORK`` (``sandbox.py``): ``new_root`` makes an empty tmpfs the
  process's ``/`` (``pivot_root``) holding only the allowed paths, read-only, and the submission's fresh
  working folder: hidden by allowlist, so the repository, ``.git``, solutions and every other run's folders
  simply do not exist, and ``/proc/self/mountinfo`` names nothing that was hidden;
* ``ASCEND_SIM_KERNEL_UID`` (as root): switch to the submission's own uid, no supplementary groups, with
  ``RLIMIT_NPROC`` from ``ASCEND_SIM_KERNEL_NPROC``.

``apply_limits`` then sets RLIMIT_AS (``ASCEND_SIM_KERNEL_MEMORY_MB``) and RLIMIT_CPU
(``ASCEND_SIM_KERNEL_CPU_SECONDS``, a backstop behind the grader's wall clock). Any failure stops the runner:
it never runs less confined than the grader asked.
"""
from __future__ import annotations

import ctypes
import os

from ascend_sim.course.grading.sandbox import ALLOW_ENV, NPROC_ENV, ROOT_ENV, UID_ENV, WORK_ENV

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


def _mount(libc, src: str, dst: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    if libc.mount(src.encode(), dst.encode(), fstype.encode() if fstype else None, flags,
                  data.encode() if data else None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {src} on {dst}: {os.strerror(err)}")


def switch_user(uid: int, nproc: int) -> None:
    """Become ``uid`` (group ``uid``, no supplementary groups) with at most ``nproc`` processes."""
    import resource
    os.setgroups([])
    os.setgid(uid)
    if nproc > 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError(f"could not switch to uid {uid}")
    _die_with_parent()


def _die_with_parent() -> None:
    """SIGKILL when ``unshare`` (our parent) dies: ``--kill-child`` set this, but changing the uid clears it
    (prctl(2)), and without it a re-run whose grader or Dask worker was killed would run on, as PID 1 of its
    namespace, until its own limits. As PID 1 its parent is outside the namespace (``getppid() == 0``), so a
    parent that died before this call cannot be detected here; the grader's own kill still covers that."""
    import signal
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(1, int(signal.SIGKILL), 0, 0, 0) != 0:           # PR_SET_PDEATHSIG
        raise OSError(ctypes.get_errno(), "could not arm PR_SET_PDEATHSIG after the user switch")


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
    uid = os.environ.pop(UID_ENV, "")
    nproc = int(os.environ.pop(NPROC_ENV, "0") or 0)
    if uid:
        switch_user(int(uid), nproc)
