"""Helpers of the JupyterHub test: system users, a hub on 127.0.0.1, the server API, a kernel over its websocket.

Everything here starts processes in their own session and stops them by process group; users it creates are
removed again. Nothing listens on anything but 127.0.0.1.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEPLOY_CONFIG = REPO / "deploy" / "jupyterhub_config.py"


def skip_reason() -> str | None:
    """Why a real hub cannot run here, or None."""
    if shutil.which("configurable-http-proxy") is None:
        return "configurable-http-proxy is not on PATH (npm install -g configurable-http-proxy)"
    for mod in ("jupyterhub", "requests", "websocket", "psutil"):
        try:
            __import__(mod)
        except ImportError:
            return f"Python package {mod!r} is not installed (pip install -e '.[dev]')"
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("useradd") is None:
        return ("needs root and useradd: the hub runs each learner as their own system user "
                "(that is what keeps learners out of each other's files)")
    import sysconfig
    for need in (Path(sysconfig.get_paths()["purelib"]), REPO):
        if not others_can_use(need):
            return f"{need} is not readable by other users, so the learners' servers could not import from it"
    return None


def others_can_use(path: Path) -> bool:
    """Whether a user other than the owner can reach ``path`` (every folder above it searchable, it readable)."""
    path = Path(os.path.realpath(path))
    dirs_ok = all(p.stat().st_mode & 0o001 for p in path.parents)
    return dirs_ok and bool(path.stat().st_mode & 0o004)


def learner_python(tmp: Path) -> Path:
    """An interpreter the learners' system users can run, seeing this environment's packages and the repository.

    A hub's learner environment must be readable by every learner (TLJH installs it in /opt/tljh/user). When
    this interpreter lives somewhere they cannot reach (e.g. pyenv under /root, mode 700), the same Python
    version from /usr/bin gets a venv whose .pth file adds this environment's site-packages.
    """
    import sysconfig

    if others_can_use(Path(sys.executable)):
        return Path(sys.executable)
    system = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if not system.is_file():
        raise FileNotFoundError(f"{sys.executable} is not reachable by other users and there is no {system}")
    env = tmp / "learner-env"
    subprocess.run([str(system), "-m", "venv", "--without-pip", str(env)], check=True, capture_output=True)
    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], str(REPO)}
    site = next((env / "lib").glob("python*/site-packages"))
    (site / "hub_env.pth").write_text("\n".join(sorted(paths)) + "\n")
    return env / "bin" / "python"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class SystemUsers:
    """System users created for the test (no login shell, homes under ``homes``); removed by :meth:`remove`."""

    homes: Path
    names: list[str] = field(default_factory=list)

    def add(self, name: str) -> Path:
        home = self.homes / name
        subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", str(home),
                        "--shell", "/usr/sbin/nologin", name], check=True, capture_output=True)
        self.names.append(name)
        return home

    def remove(self) -> None:
        import psutil

        uids = set()
        for name in self.names:
            try:
                import pwd
                uids.add(pwd.getpwnam(name).pw_uid)
            except KeyError:
                continue
        for p in psutil.process_iter(["uids"]):          # only processes of the users this test created
            if p.info["uids"] and p.info["uids"].real in uids:
                try:
                    p.kill()
                except psutil.Error:
                    pass
        for name in self.names:
            subprocess.run(["userdel", name], capture_output=True)
        self.names.clear()


@dataclass
class Hub:
    """A running JupyterHub: its public URL, the admin service token, the process and its log."""

    url: str
    token: str
    proc: subprocess.Popen
    log: Path

    def api(self, method: str, path: str, token: str | None = None, **kw):  # noqa: ANN201 - requests.Response
        import requests

        headers = {"Authorization": f"token {token or self.token}"}
        return requests.request(method, f"{self.url}/hub/api{path}", headers=headers, timeout=30, **kw)

    def user_api(self, user: str, method: str, path: str, token: str, **kw):  # noqa: ANN201
        """A call to ``user``'s single-user server (``/user/<name>/api...``) with ``token``."""
        import requests

        return requests.request(method, f"{self.url}/user/{user}/api{path}",
                                headers={"Authorization": f"token {token}"}, timeout=30,
                                allow_redirects=False, **kw)

    def log_tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:]


def hub_config(tmp: Path, ports: dict[str, int], token: str, password: str) -> str:
    """The test's config: the deployment's file, then a dummy login, loopback ports and files in ``tmp``."""
    python = learner_python(tmp)
    return f"""
load_subconfig({str(DEPLOY_CONFIG)!r})
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {ports['public']}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {ports['hub']}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{ports['proxy_api']}"
c.ConfigurableHTTPProxy.pid_file = {str(tmp / 'proxy.pid')!r}
c.JupyterHub.db_url = "sqlite:///{tmp / 'hub.sqlite'}"
c.JupyterHub.cookie_secret_file = {str(tmp / 'cookie_secret')!r}
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {password!r}
c.Authenticator.allow_all = True
c.Spawner.cmd = [{str(python)!r}, "-m", "jupyterhub.singleuser"]
c.JupyterHub.services = [{{"name": "asim-test", "api_token": {token!r}}}]
c.JupyterHub.load_roles = [{{"name": "asim-test", "services": ["asim-test"],
    "scopes": ["admin:users", "admin:servers", "access:servers", "tokens", "read:users"]}}]
"""


def start_hub(tmp: Path, course_dir: Path, password: str, timeout: float = 60) -> Hub:
    """Start JupyterHub with :func:`hub_config` in its own session; wait until its API answers."""
    import requests

    ports = {k: free_port() for k in ("public", "hub", "proxy_api")}
    token = uuid.uuid4().hex
    cfg = tmp / "jupyterhub_config.py"
    cfg.write_text(hub_config(tmp, ports, token, password))
    env = dict(os.environ, ASCEND_SIM_COURSE_DIR=str(course_dir),
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    log = tmp / "hub.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(cfg)], cwd=tmp, env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    hub = Hub(f"http://127.0.0.1:{ports['public']}", token, proc, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterHub exited early:\n{hub.log_tail()}")
        try:
            if hub.api("GET", "/").status_code == 200:
                return hub
        except requests.RequestException:
            pass
        time.sleep(0.3)
    stop_hub(hub)
    raise TimeoutError(f"JupyterHub did not answer within {timeout:.0f} s:\n{hub.log_tail()}")


def stop_hub(hub: Hub) -> None:
    """Stop every user's server through the API, then the hub (which stops its proxy): SIGTERM, then SIGKILL."""
    try:
        for user in hub.api("GET", "/users").json():
            if user.get("server"):
                hub.api("DELETE", f"/users/{user['name']}/server")
    except Exception:  # noqa: BLE001 - best effort before stopping the hub
        pass
    if hub.proc.poll() is None:
        os.killpg(hub.proc.pid, signal.SIGTERM)
        try:
            hub.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(hub.proc.pid, signal.SIGKILL)
            hub.proc.wait(timeout=10)
    pid_file = hub.log.parent / "proxy.pid"          # a proxy the hub left behind (it normally stops it)
    if pid_file.exists():
        try:
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
        except (ValueError, ProcessLookupError):
            pass


def login(hub: Hub, name: str, password: str):  # noqa: ANN201 - requests.Session
    """Log ``name`` in through the hub's login form, as a browser would; return the session."""
    import requests

    s = requests.Session()
    s.get(f"{hub.url}/hub/login", timeout=30).raise_for_status()
    r = s.post(f"{hub.url}/hub/login", data={"username": name, "password": password,
                                              "_xsrf": s.cookies.get("_xsrf", "")},
               allow_redirects=False, timeout=30)
    assert r.status_code == 302, f"login of {name} failed: {r.status_code} {r.text[:500]}"
    return s


def spawn(hub: Hub, name: str, timeout: float = 120) -> None:
    """Start ``name``'s server and wait until the hub reports it ready."""
    r = hub.api("POST", f"/users/{name}/server")
    assert r.status_code in (201, 202), f"spawn of {name}: {r.status_code} {r.text[:500]}\n{hub.log_tail()}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        server = (hub.api("GET", f"/users/{name}").json().get("servers") or {}).get("")
        if server and server.get("ready"):
            return
        time.sleep(0.5)
    raise TimeoutError(f"{name}'s server was not ready within {timeout:.0f} s:\n{hub.log_tail()}")


def user_token(hub: Hub, name: str) -> str:
    """A new API token owned by ``name`` (it can do what ``name`` can, nothing more)."""
    r = hub.api("POST", f"/users/{name}/tokens", json={"note": "asim-test", "expires_in": 600})
    assert r.status_code in (200, 201), r.text
    return r.json()["token"]


class Kernel:
    """A kernel of a user's server, driven over the server's websocket API (Jupyter messaging protocol 5.3)."""

    def __init__(self, hub: Hub, user: str, token: str, notebook: str) -> None:
        import websocket

        r = hub.user_api(user, "POST", "/sessions", token,
                         json={"path": notebook, "type": "notebook", "name": Path(notebook).name,
                               "kernel": {"name": "python3"}})
        assert r.status_code == 201, f"{user}: no session: {r.status_code} {r.text[:500]}"
        self.id = r.json()["kernel"]["id"]
        self.session = uuid.uuid4().hex
        ws_url = hub.url.replace("http://", "ws://") + f"/user/{user}/api/kernels/{self.id}/channels"
        self.ws = websocket.create_connection(ws_url, header=[f"Authorization: token {token}"], timeout=120)

    def execute(self, code: str, timeout: float = 180) -> tuple[str, str | None]:
        """Run ``code``; return (everything printed or displayed as text, the error's name and value or None)."""
        msg_id = uuid.uuid4().hex
        self.ws.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "session": self.session,
                       "username": "asim-test", "version": "5.3", "date": ""},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        out, error = [], None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                out.append(content["text"])
            elif kind in ("execute_result", "display_data"):
                out.append(content["data"].get("text/plain", ""))
            elif kind == "error":
                error = f"{content['ename']}: {content['evalue']}"
            elif kind == "status" and content["execution_state"] == "idle":
                return "".join(out), error
        raise TimeoutError(f"no reply within {timeout:.0f} s to:\n{code[:300]}")

    def close(self) -> None:
        self.ws.close()
