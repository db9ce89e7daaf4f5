"""Confine one submission's re-run: its own user, PID, mount and network namespaces, a root of its own.

Why namespaces through ``unshare(1)`` (util-linux, on every Linux distribution and CI image):

* a **PID namespace** ends every process of the submission when the kernel ends: when its first process
  dies, Linux kills the rest, including ``setsid``/double-forked daemons that a process group or session
  kill would miss; and ``/proc`` shows only the submission's own processes (not the grader's command
  line or environment);
* a **network namespace** takes the network away (the re-run talks to the grader over a pipe);
* a **mount namespace** lets the runner make an empty tmpfs its root (``confine.new_root``) holding only an
  allowlist: the system's software (``SYSTEM_PATHS``), Python, the ascend_sim package, the lab's checks
  module and the submission's fresh, empty working folder; nothing else has a path in it;
* as root the launcher then **switches to a user of its own** (a uid no file belongs to, one per
  submission) so the learner's code cannot write the grader's files or signal other submissions, and
  ``RLIMIT_NPROC`` caps its processes;
* without root, ``unshare --user --map-root-user`` gives the same namespaces where unprivileged user
  namespaces are enabled (most desktop distributions), but no user switch; with neither, the kernel runs
  as the grader with a clear warning (cgroups would need systemd or root; polling the process tree
  cannot catch a process that calls ``setsid`` and re-parents).

After the kernel is shut down, ``reap`` kills whatever still runs as the submission's uid and waits
until nothing does, so a report is only written once the learner's processes are gone.
"""
from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

__all__ = ["Sandbox", "sandbox_for", "isolation_mode", "UID_ENV", "NPROC_ENV", "reap_uid", "ROOT_ENV", "ALLOW_ENV",
           "WORK_ENV", "SYSTEM_PATHS", "UID_BASE"]

UID_ENV = "ASCEND_SIM_KERNEL_UID"          # the launcher switches to this uid (and gid)
NPROC_ENV = "ASCEND_SIM_KERNEL_NPROC"      # RLIMIT_NPROC of the sandbox user
ROOT_ENV = "ASCEND_SIM_SANDBOX_ROOT"       # an empty folder that becomes the re-run's `/` (pivot_root)
ALLOW_ENV = "ASCEND_SIM_SANDBOX_ALLOW"     # os.pathsep-separated paths bound read-only into that root
WORK_ENV = "ASCEND_SIM_SANDBOX_WORK"       # the submission's fresh, empty working folder (the only writable one)
SYSTEM_PATHS = ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/etc/ld.so.cache", "/etc/localtime")
UID_BASE = 100_000_000                     # far above real users; + (grader pid % 10000) * 100000 + submission
NPROC = 256
NAMESPACES = ["--pid", "--mount", "--net", "--fork", "--kill-child", "--mount-proc"]


@dataclass(frozen=True)
class Sandbox:
    """How one re-run is confined: the command prefix, its uid (None: no switch) and what its root holds."""

    prefix: tuple[str, ...] = ()
    uid: int | None = None
    keep: tuple[str, ...] = ()          # what the new root holds besides the system: Python, the package
    warnings: tuple[str, ...] = field(default=())

    def env(self, root: str = "", work: str = "") -> dict[str, str]:
        """What ``confine.confine`` needs: ``root`` (an empty folder) becomes ``/`` holding only the system's
        software, ``keep`` and ``work`` (the only writable folder). Nothing without namespaces."""
        out = {ROOT_ENV: root, ALLOW_ENV: os.pathsep.join((*SYSTEM_PATHS, *self.keep)), WORK_ENV: work} \
            if root and self.prefix else {}
        if self.uid is not None:
            out.update({UID_ENV: str(self.uid), NPROC_ENV: str(NPROC)})
        return out

    def own(self, path: str | os.PathLike) -> None:
        """Give the sandbox user its private working directory (0700)."""
        if self.uid is not None:
            os.chown(path, self.uid, self.uid)
        os.chmod(path, 0o700)

    def reap(self) -> None:
        """Kill every process left running as the sandbox user, and wait until there is none."""
        if self.uid is not None:
            reap_uid(self.uid)


MODE_ENV = "ASCEND_SIM_GRADER_ISOLATION"    # 'userns' or 'none': use less isolation than available (debugging)
MODES = ("none", "userns", "root")


@functools.lru_cache(maxsize=1)
def isolation_mode() -> str:
    """'root' (namespaces + user switch), 'userns' (namespaces only) or 'none', probed once."""
    cap = os.environ.get(MODE_ENV, "root")
    exe = shutil.which("unshare")
    if exe is None or not sys.platform.startswith("linux") or cap not in MODES:
        return "none"
    if cap == "root" and os.geteuid() == 0 and _works([exe, *NAMESPACES, "true"]):
        return "root"
    if cap != "none" and _works([exe, "--user", "--map-root-user", *NAMESPACES, "true"]):
        return "userns"
    return "none"


def _works(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def sandbox_for(index: int, keep: Iterable[str | os.PathLike] = ()) -> Sandbox:
    """The sandbox of submission number ``index`` of this grading run; ``keep``: what its root may hold besides
    the system's software (Python, the package, a checks module)."""
    mode = isolation_mode()
    if mode == "none":
        return Sandbox(warnings=("isolation unavailable (no unshare, or neither root nor user namespaces): the "
                                 "re-run ran as the grader's user and could read the grader's files; a process "
                                 "it detached could outlive it",))
    exe = shutil.which("unshare") or "unshare"
    prefix = (exe, *(["--user", "--map-root-user"] if mode == "userns" else []), *NAMESPACES)
    uid = UID_BASE + (os.getpid() % 10_000) * 100_000 + index if mode == "root" else None
    warnings = () if mode == "root" else ("not root: the re-run ran in its own namespaces and root but as the "
                                          "grader's user (no user switch, no process limit)",)
    return Sandbox(prefix, uid, tuple(str(Path(k).resolve()) for k in keep), warnings)


def reap_uid(uid: int, timeout: float = 10.0) -> None:
    """SIGKILL every process whose real uid is ``uid`` (processes this grader started for one submission)."""
    deadline = time.monotonic() + timeout
    while True:
        pids = _pids_of(uid)
        if not pids or time.monotonic() > deadline:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def _pids_of(uid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        line = next((ln for ln in status.splitlines() if ln.startswith("Uid:")), "")
        if line.split()[1:2] == [str(uid)] and "State:\tZ" not in status:
            pids.append(int(entry))
    return pids
