"""deploy/: the hub config's own rules (no hub needed) and the files of the other recipes staying in step."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"


def _load_config(course_dir: Path, monkeypatch) -> dict:
    """Execute deploy/jupyterhub_config.py as JupyterHub would; return its namespace (``c`` is the config)."""
    from traitlets.config import Config

    monkeypatch.setenv("ASCEND_SIM_COURSE_DIR", str(course_dir))
    cfg = Config()
    ns = {"get_config": lambda: cfg, "__file__": str(DEPLOY / "jupyterhub_config.py")}
    exec(compile((DEPLOY / "jupyterhub_config.py").read_text(), "jupyterhub_config.py", "exec"), ns)  # noqa: S102
    return ns


def _clone(tmp_path: Path, solutions_mode: int) -> Path:
    clone = tmp_path / "clone"
    (clone / "labs").mkdir(parents=True)
    (clone / "labs" / "lab00.ipynb").write_text("template")
    (clone / "course").mkdir()
    (clone / "course" / "00.ipynb").write_text("lesson")
    (clone / "solutions").mkdir()
    (clone / "solutions" / "lab00.py").write_text("answers")
    (clone / "solutions").chmod(solutions_mode)
    return clone


def test_hub_refuses_to_start_while_learners_could_read_the_solutions(tmp_path, monkeypatch) -> None:
    with pytest.raises(SystemExit, match=r"readable by every user.*chmod -R go-rwx"):
        _load_config(_clone(tmp_path, 0o755), monkeypatch)
    ns = _load_config(_clone(tmp_path / "ok", 0o700), monkeypatch)
    assert ns["c"].Spawner.mem_limit == "2G" and ns["c"].JupyterHub.spawner_class == "localprocess"


def test_course_copy_adds_new_files_and_never_overwrites_a_learners_work(tmp_path, monkeypatch) -> None:
    clone = _clone(tmp_path, 0o700)
    provision = _load_config(clone, monkeypatch)["provision_course"]
    home = tmp_path / "home" / "learner"
    uid, gid = os.getuid(), os.getgid()
    dest = provision(home, uid, gid, clone)
    assert (dest / "labs" / "lab00.ipynb").read_text() == "template"
    assert not (dest / "solutions").exists()
    assert home.stat().st_mode & 0o777 == 0o700
    (dest / "labs" / "lab00.ipynb").write_text("my answers")             # the learner works
    (clone / "course" / "01.ipynb").write_text("new lesson")             # the course grows during term
    provision(home, uid, gid, clone)
    assert (dest / "labs" / "lab00.ipynb").read_text() == "my answers"
    assert (dest / "course" / "01.ipynb").read_text() == "new lesson"


def test_kubernetes_recipe_matches_the_hub_config_and_readme() -> None:
    """The z2jh values and the single-user image use the same limits, start page and install as the rest."""
    yaml = pytest.importorskip("yaml")

    values = yaml.safe_load((DEPLOY / "z2jh_values.yaml").read_text())
    single = values["singleuser"]
    config = (DEPLOY / "jupyterhub_config.py").read_text()
    assert single["memory"]["limit"] == re.search(r'"ASCEND_SIM_MEM_LIMIT", "([^"]+)"', config).group(1)
    assert single["cpu"]["limit"] == float(re.search(r'"ASCEND_SIM_CPU_LIMIT", "([^"]+)"', config).group(1))
    assert single["defaultUrl"] == "/lab/tree/ascend-sim/course/00_architecture.ipynb"
    dockerfile = (DEPLOY / "singleuser" / "Dockerfile").read_text()
    readme_install = re.search(r'pip install -e "\.\[course\]"', (REPO / "README.md").read_text())
    assert readme_install and 'pip install --no-cache-dir -e ".[course]"' in dockerfile
    copies = re.findall(r"^COPY (.*)$", dockerfile, re.M)
    assert copies and not any("solutions" in c or c.startswith(". ") for c in copies), "the image must not hold the answers"
