"""JupyterHub for a class on ascend-sim: one JupyterLab per learner, the course copied into each home.

Use it as is on one server (the Littlest JupyterHub: copy it to /opt/tljh/config/jupyterhub_config.d/), or read
it as the reference for a Kubernetes deployment (zero-to-jupyterhub: deploy/z2jh_values.yaml). The recipes and
the sizing are in docs/deploy.md; tests/deploy/test_jupyterhub.py starts a real hub with this file.

Settings read from the environment (all optional):

* ``ASCEND_SIM_COURSE_DIR``: the clone of this repository the course is copied from (default /opt/ascend-sim).
  Only ``course/``, ``labs/``, ``docs/``, ``benchmarks/`` and README.md are copied: never ``solutions/``.
* ``ASCEND_SIM_MEM_LIMIT`` / ``ASCEND_SIM_CPU_LIMIT``: the per-learner limits (default 2G and 1 CPU; see
  docs/deploy.md for how they were measured). Spawners that enforce them: systemdspawner (TLJH), KubeSpawner.
"""
from __future__ import annotations

import os
import pwd
import shutil
from pathlib import Path

c = get_config()  # noqa: F821 - provided by JupyterHub when it loads this file

COURSE_DIR = Path(os.environ.get("ASCEND_SIM_COURSE_DIR", "/opt/ascend-sim"))
#: What a learner gets in ~/ascend-sim: the lessons, the labs and the docs they link, not the solutions.
LEARNER_PARTS = ("course", "labs", "docs", "benchmarks", "README.md")
#: The folder in each learner's home.
HOME_FOLDER = "ascend-sim"


def provision_course(home: Path, uid: int, gid: int, source: Path = COURSE_DIR) -> Path:
    """Copy the learner's parts of the course into ``home/ascend-sim``, file by file, never overwriting one.

    A learner's work is never touched: a file already in the home stays as the learner left it; files new in
    the course (a lesson added during term) arrive at the next server start (like ``cp -rn``).
    """
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chown(home, uid, gid)
    dest = home / HOME_FOLDER
    for part in LEARNER_PARTS:
        src = source / part
        files = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file()) if src.is_dir() else []
        for f in files:
            if "__pycache__" in f.parts or ".ipynb_checkpoints" in f.parts:
                continue
            target = dest / f.relative_to(source)
            if target.exists():
                continue
            for folder in reversed([p for p in target.parents if p == dest or dest in p.parents]):
                if not folder.exists():
                    folder.mkdir()
                    os.chown(folder, uid, gid)
            shutil.copy2(f, target)
            os.chown(target, uid, gid)
    return dest


def check_solutions_private(source: Path) -> None:
    """Refuse to start while the server's copy of solutions/ is readable by learners (they share the machine)."""
    solutions = source / "solutions"
    if solutions.exists() and solutions.stat().st_mode & 0o005:
        raise SystemExit(f"{solutions} is readable by every user, so learners could read the answers. "
                         f"Fix: chmod -R go-rwx {solutions} (the grader runs as root), or keep solutions/ off this "
                         "server.")


def pre_spawn_hook(spawner) -> None:  # noqa: ANN001 - JupyterHub's Spawner
    """LocalProcessSpawner: give the learner a private home (mode 700) holding the course.

    Other spawners bring the course their own way (docs/deploy.md): TLJH creates each user from /etc/skel,
    Kubernetes copies it from the image in a postStart hook.
    """
    from jupyterhub.spawner import LocalProcessSpawner

    if not isinstance(spawner, LocalProcessSpawner):
        return
    entry = pwd.getpwnam(spawner.user.name)
    provision_course(Path(entry.pw_dir), entry.pw_uid, entry.pw_gid)


check_solutions_private(COURSE_DIR)

# One process per learner, as the learner's own system user: learners cannot read each other's files.
# A distribution that chose its spawner before loading this file (TLJH: systemd) keeps it.
if "spawner_class" not in c.JupyterHub:
    c.JupyterHub.spawner_class = "localprocess"
c.Spawner.pre_spawn_hook = pre_spawn_hook
c.Spawner.notebook_dir = "~"
c.Spawner.default_url = f"/lab/tree/{HOME_FOLDER}/course/00_architecture.ipynb"
c.Spawner.mem_limit = os.environ.get("ASCEND_SIM_MEM_LIMIT", "2G")
c.Spawner.cpu_limit = float(os.environ.get("ASCEND_SIM_CPU_LIMIT", "1"))
# A kernel left running keeps its memory (lesson 03's holds ~1.1 GB at its end): stop kernels idle for 20 minutes.
c.Spawner.args = ["--MappingKernelManager.cull_idle_timeout=1200", "--MappingKernelManager.cull_interval=120",
                  "--MappingKernelManager.cull_connected=True"]
# A cold JupyterLab plus the simulator's imports take a few seconds; a busy class start needs more.
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 60
# Keep matplotlib off any display and the simulator's output deterministic in every learner's kernel.
c.Spawner.environment = {"MPLBACKEND": "module://matplotlib_inline.backend_inline", "PYTHONHASHSEED": "0"}
# 200 learners arriving at once: spawn in batches instead of overloading the machine.
c.JupyterHub.concurrent_spawn_limit = 20
c.JupyterHub.active_server_limit = int(os.environ.get("ASCEND_SIM_ACTIVE_LIMIT", "0"))  # 0: no limit
c.JupyterHub.cleanup_servers = True
