"""A real JupyterHub with deploy/jupyterhub_config.py: two learners log in, work in their own servers, stay apart.

The hub loads the deployment's config file unchanged and overrides only what a test must: a dummy login
(``DummyAuthenticator`` with one password), loopback ports, files in a temporary folder, and an admin service
token. Learners are real system users (created here, removed after), so the spawner, the per-user homes
(mode 700) and the course copy are exactly the deployment's. configurable-http-proxy comes from npm (.ci/run
installs it). Skipped, with the reason, without it, without jupyterhub, or when not root.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from hub_support import (REPO, Hub, Kernel, SystemUsers, login, skip_reason, spawn, start_hub, stop_hub,
                         user_token)

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")

LAB = "ascend-sim/labs/lab00_warmup.ipynb"
PASSWORD = "class-of-200"


def _ex1_answers() -> tuple[str, str]:
    """Exercise 1 of lab00 from solutions/: the answer, and its first wrong answer (``# replace: a -> b``)."""
    text = (REPO / "solutions" / "lab00_warmup.py").read_text(encoding="utf-8")
    answer = re.search(r"^# %% ex1\n(.*?)(?=^# %% )", text, re.S | re.M).group(1)
    old, new = re.search(r"^# %% ex1 wrong:.*\n# replace: (.*?) -> (.*)$", text, re.M).groups()
    assert old in answer
    return answer, answer.replace(old, new)


def _server_clone(tmp: Path) -> Path:
    """The server's copy of the repository as docs/deploy.md sets it up: solutions/ readable by root only."""
    clone = tmp / "opt-ascend-sim"
    for part in ("course", "labs", "docs", "benchmarks", "solutions"):
        shutil.copytree(REPO / part, clone / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(REPO / "README.md", clone / "README.md")
    for p in (clone / "solutions", *(clone / "solutions").rglob("*")):
        p.chmod(0o700 if p.is_dir() else 0o600)
    return clone


@pytest.fixture(scope="module")
def hub_and_users():
    tmp = Path(tempfile.mkdtemp(prefix="asim-hub-"))
    tmp.chmod(0o755)                                 # learners must reach their homes below it
    clone = _server_clone(tmp)
    users = SystemUsers(tmp / "homes")
    users.homes.mkdir()
    users.homes.chmod(0o755)
    tag = f"{os.getpid() % 100000}"
    names = [f"asim-{tag}-ana", f"asim-{tag}-ben"]
    hub: Hub | None = None
    try:
        for n in names:
            users.add(n)
        hub = start_hub(tmp, clone, PASSWORD)
        yield hub, names, users.homes, clone
    finally:
        if hub is not None:
            stop_hub(hub)
        users.remove()
        shutil.rmtree(tmp, ignore_errors=True)


def test_two_learners_run_lab00_in_their_own_servers_and_cannot_read_each_other(hub_and_users) -> None:
    hub, (ana, ben), homes, clone = hub_and_users
    t0 = time.monotonic()
    # 1. both log in through the login form; a wrong password is refused
    for name in (ana, ben):
        session = login(hub, name, PASSWORD)
        assert name in session.get(f"{hub.url}/hub/home", timeout=30).text
    bad = hub.api("GET", "/")  # the API is up; the form refuses a wrong password with the login page again
    assert bad.status_code == 200
    import requests
    s = requests.Session()
    s.get(f"{hub.url}/hub/login", timeout=30)
    r = s.post(f"{hub.url}/hub/login", data={"username": ana, "password": "wrong",
                                             "_xsrf": s.cookies.get("_xsrf", "")}, allow_redirects=False)
    assert r.status_code != 302, "a wrong password logged in"

    # 2. their servers start, each as its own system user, with the course (and no solutions) in a private home
    for name in (ana, ben):
        spawn(hub, name)
        home = homes / name
        assert (home / LAB).is_file(), f"{name}: the course was not copied into {home}"
        assert not (home / "ascend-sim" / "solutions").exists(), "the solutions reached a learner"
        assert home.stat().st_mode & 0o777 == 0o700
        import pwd
        assert home.stat().st_uid == pwd.getpwnam(name).pw_uid
    tokens = {name: user_token(hub, name) for name in (ana, ben)}

    # 3. lab00's first check in each learner's kernel: ana's answer passes, ben's wrong answer fails
    answer, wrong = _ex1_answers()
    nb = hub.user_api(ana, "GET", f"/contents/{LAB}", tokens[ana]).json()["content"]
    setup = next("".join(c["source"]) for c in nb["cells"] if c.get("id") == "setup")
    results = {}
    for name, code in ((ana, answer), (ben, wrong)):
        kernel = Kernel(hub, name, tokens[name], LAB)
        try:
            out, err = kernel.execute("import getpass, os; print(getpass.getuser(), os.getcwd())")
            assert err is None and out.split()[0] == name, (out, err)
            assert out.split()[1] == str(homes / name / "ascend-sim" / "labs"), out
            for cell in (setup, code):
                out, err = kernel.execute(cell)
                assert err is None, f"{name}: {err}\n{out}"
            results[name] = kernel.execute('check("ex1")')
            # 4. a learner's kernel cannot read the other learner's files (their home is mode 700, another uid)
            other = ben if name == ana else ana
            out, err = kernel.execute(f"open({str(homes / other / LAB)!r}).read()")
            assert err is not None and err.startswith("PermissionError"), (name, out, err)
            # ... nor the instructor's solutions on the server
            out, err = kernel.execute(f"open({str(clone / 'solutions' / 'lab00_warmup.py')!r}).read()")
            assert err is not None and err.startswith("PermissionError"), (name, out, err)
        finally:
            kernel.close()
    assert results[ana][1] is None and "[ex1] PASS 2/2" in results[ana][0], results[ana]
    assert results[ben][1] is None and "[ex1] FAIL 0/2" in results[ben][0], results[ben]

    # 5. nor through the server API: ben's token reaches his own files, not ana's
    assert hub.user_api(ben, "GET", f"/contents/{LAB}", tokens[ben]).status_code == 200
    assert hub.user_api(ana, "GET", f"/contents/{LAB}", tokens[ben]).status_code == 403
    assert hub.user_api(ana, "GET", "/kernels", tokens[ben]).status_code == 403
    assert time.monotonic() - t0 < 150
