"""``mathlas serve`` as a process: a real uvicorn server on a free loopback port, driven with a real
HTTP client. This module also holds the server helper (``WebServer``) the other ``test_web_*``
modules import; the shared server (``web``) is conftest.py's fixture.

Checked here: it loads nothing heavy before the first request, logs one line per request to stderr,
finishes in-flight requests on SIGTERM/SIGINT and exits 0, refuses a non-loopback address without
a token, warns on ``--no-auth``, and serves with several worker processes.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx2")

TIMEOUT = 90
READY = re.compile(r"mathlas serve: http://127\.0\.0\.1:(\d+)/")


class WebServer:
    """``python -m mathlas.web serve --port 0 ARGS`` in a subprocess; stderr kept in a file."""

    def __init__(self, *args: str, env: dict[str, str] | None = None):
        self.errfile = tempfile.NamedTemporaryFile(mode="w+", encoding="utf-8", suffix=".log", delete=False)
        full_env = {k: v for k, v in os.environ.items() if k not in ("MATHLAS_BUNDLE", "MATHLAS_TOKEN",
                                                                    "MATHLAS_FORMAL_BUNDLE", "MATHLAS_CORS")}
        full_env.update(env or {})
        full_env["PYTHONUNBUFFERED"] = "1"
        self.proc = subprocess.Popen([sys.executable, "-m", "mathlas.web", "serve", "--port", "0", *args],
                                     stdout=subprocess.DEVNULL, stderr=self.errfile, env=full_env,
                                     cwd=str(Path(__file__).parent))
        deadline = time.monotonic() + TIMEOUT
        port = None
        while port is None:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mathlas serve exited with {self.proc.returncode}:\n{self.stderr()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"mathlas serve did not start:\n{self.stderr()}")
            m = READY.search(self.stderr())
            port = int(m.group(1)) if m else None
            time.sleep(0.05)
        self.base = f"http://127.0.0.1:{port}"
        self.client = httpx.Client(base_url=self.base, timeout=TIMEOUT)
        while True:
            try:
                if self.client.get("/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                raise RuntimeError(f"mathlas serve never answered /health:\n{self.stderr()}")
            time.sleep(0.05)

    def get(self, path: str, **kw):
        return self.client.get(path, **kw)

    def post(self, path: str, **kw):
        return self.client.post(path, **kw)

    def stderr(self) -> str:
        return Path(self.errfile.name).read_text(encoding="utf-8", errors="replace")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if hasattr(self, "client"):
            self.client.close()
        return self.proc.returncode


def assert_clean(server: WebServer) -> None:
    err = server.stderr()
    assert "Traceback" not in err, err[-4000:]


# ------------------------------------------------------------------------------ the command

def _parse(argv: list[str]):
    from mathlas.cli import serve as cli

    p = argparse.ArgumentParser(prog="mathlas")
    cli.add_parser(p.add_subparsers(dest="command"))
    return p.parse_args(["serve", *argv])


def test_parser_defaults_and_run_hook(monkeypatch):
    for key in ("MATHLAS_SERVE_HOST", "MATHLAS_SERVE_PORT", "MATHLAS_TOKEN", "MATHLAS_BUNDLE", "MATHLAS_CORS"):
        monkeypatch.delenv(key, raising=False)
    from mathlas.cli import serve as cli

    args = _parse([])
    assert (args.host, args.port, args.bundles, args.token, args.workers) == ("127.0.0.1", 8765, None, None, 1)
    assert args.run is cli.run
    config = cli.config_from_args(_parse(["--bundle", "a", "--bundle", "b", "--cors", "http://x.test"]))
    assert config.bundles == ["a", "b"] and config.cors == ["http://x.test"] and config.loopback
    monkeypatch.setenv("MATHLAS_TOKEN", "from-the-environment")
    assert cli.config_from_args(_parse(["--host", "0.0.0.0"])).token == "from-the-environment"


@pytest.mark.parametrize("preset, expected", [(None, "1"), ("2", "2")])
def test_serve_gives_each_search_one_encoder_thread(monkeypatch, preset, expected):
    # the server's searches run side by side: one ONNX thread each, unless the user set a number
    import uvicorn

    from mathlas.encoder import THREADS_ENV
    from mathlas.cli import serve as cli

    assert cli.ENCODER_THREADS_ENV == THREADS_ENV
    env = {k: v for k, v in os.environ.items() if k != THREADS_ENV}  # what run() sets stays in this test
    if preset is not None:
        env[THREADS_ENV] = preset
    monkeypatch.setattr(os, "environ", env)
    seen = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: seen.append(os.environ.get(THREADS_ENV)))
    monkeypatch.setattr(cli.signal, "signal", lambda *a: None)
    assert cli.run(_parse(["--port", "0", "-q"])) == 0
    assert seen == [expected]


@pytest.mark.parametrize("argv, message", [
    (["--host", "0.0.0.0"], "give --token"),
    (["--host", "192.0.2.1"], "give --token"),
    (["--token", "short"], "at least 8 characters"),
    (["--token", "long-enough-token", "--no-auth"], "contradict"),
    (["--port", "70000"], "--port"),
    (["--workers", "0"], "--workers"),
    (["--timeout", "0"], "--timeout"),
])
def test_unsafe_or_wrong_options_are_refused(argv, message, capsys, monkeypatch):
    monkeypatch.delenv("MATHLAS_TOKEN", raising=False)
    from mathlas.cli import serve as cli

    args = _parse(argv)
    assert cli.run(args) == 2
    assert message in capsys.readouterr().err


def test_no_auth_on_another_address_warns(capsys, monkeypatch):
    from mathlas.cli import serve as cli

    def no_bind(host, port):  # stop before listening on every interface of the test machine
        raise OSError(98, "not binding in tests")

    monkeypatch.setattr(cli, "_bind", no_bind)
    assert cli.run(_parse(["--host", "0.0.0.0", "--no-auth"])) == 1
    err = capsys.readouterr().err
    assert "WARNING" in err and "without a token" in err


def _serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``mathlas serve ARGS`` as a person runs it (the main command), to its exit."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("MATHLAS_BUNDLE", "MATHLAS_TOKEN")}
    return subprocess.run([sys.executable, "-m", "mathlas", "serve", "--port", "0", *args], capture_output=True,
                          text=True, env={**full_env, **(env or {})}, timeout=TIMEOUT, stdin=subprocess.DEVNULL)


@pytest.mark.slow
def test_a_bundle_it_cannot_find_is_refused_before_it_listens(tmp_path):
    """It started and answered every search 404 "no bundle named 'nosuch'" (and /health ok): now one
    line naming the option, what is installed and how to install one, exit code 1 as ``mathlas
    search --bundle nosuch`` gives, and no address: it never listened."""
    p = _serve("--bundle", "nosuch")
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith("mathlas: cannot serve --bundle nosuch: no bundle named 'nosuch'; installed: ")
    assert "install one with `mathlas index install NAME[@VERSION] | URL | PATH`" in p.stderr
    assert "http://" not in p.stderr and "Traceback" not in p.stderr
    search = subprocess.run([sys.executable, "-m", "mathlas", "search", "ring", "--bundle", "nosuch"],
                            capture_output=True, text=True, timeout=TIMEOUT)
    assert search.returncode == p.returncode  # the same exit code as the other commands
    # from the environment: it says so; a second --bundle is checked too; a directory without a manifest
    p = _serve(env={"MATHLAS_BUNDLE": "nosuch"})
    assert p.returncode == 1 and p.stderr.startswith("mathlas: cannot serve $MATHLAS_BUNDLE=nosuch: no bundle named")
    p = _serve("--bundle", str(tmp_path), "-q")
    assert p.returncode == 1 and p.stderr.startswith(f"mathlas: cannot serve --bundle {tmp_path}: ")
    assert "no manifest.json" in p.stderr and p.stderr.count("\n") == 1
    p = _serve("--bundle", "a@b@c")  # a malformed name is a usage error
    assert p.returncode == 2 and p.stderr.startswith("mathlas: cannot serve --bundle a@b@c: 'a@b@c' is not NAME@VERSION")


@pytest.mark.slow
def test_the_second_bundle_is_checked_and_the_default_is_the_one_served(tiny_bundle_dir):
    p = _serve("--bundle", str(tiny_bundle_dir), "--bundle", "nosuch")
    assert p.returncode == 1 and p.stderr.startswith("mathlas: cannot serve --bundle nosuch: ")
    server = WebServer(env={"MATHLAS_BUNDLE": str(tiny_bundle_dir)})  # served from the environment
    try:
        listing = server.get("/api/bundles").json()
        assert listing["default_bundle"] == "tiny-0.1.0" == listing["served"][0]["label"]
        assert server.get("/api/search", params={"q": "ring", "k": 1}).json()["bundle"] == "tiny-0.1.0"
    finally:
        assert server.stop() == 0
    assert_clean(server)


def test_python_m_help():
    out = subprocess.run([sys.executable, "-m", "mathlas.web", "serve", "--help"], capture_output=True, text=True,
                         timeout=TIMEOUT)
    assert out.returncode == 0 and "--token" in out.stdout and "--cors" in out.stdout


@pytest.mark.slow
def test_creating_the_app_imports_nothing_heavy():
    code = ("import sys; from mathlas.web.app import create_app, ServeConfig; create_app(ServeConfig()); "
            "print([m for m in ('numpy', 'pyarrow', 'onnxruntime', 'sympy', 'tantivy', 'usearch') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------------------ the process

@pytest.mark.slow
def test_lazy_start_and_one_log_line_per_request(tiny_bundle_dir):
    server = WebServer("--bundle", str(tiny_bundle_dir))
    try:
        assert server.get("/health").json()["bundles_open"] == []
        assert server.get("/").status_code == 200
        assert server.get("/api/bundles").json()["served"][0]["label"] == "tiny-0.1.0"
        assert server.get("/health").json()["bundles_open"] == []  # listing bundles opened none
        assert server.get("/api/search", params={"q": "ring", "k": 2}).status_code == 200
        assert server.get("/health").json()["bundles_open"] == ["tiny-0.1.0"]
        assert server.get("/api/search", params={"q": "ring", "k": 0}).status_code == 422
        time.sleep(0.2)
        lines = [line for line in server.stderr().splitlines() if line.startswith("127.0.0.1 ")]
        assert len([x for x in lines if '"GET /health" 200' in x]) == 4
        assert len([x for x in lines if '"GET /api/search?q=ring&k=2" 200' in x]) == 1
        assert len([x for x in lines if '"GET /api/search?q=ring&k=0" 422' in x]) == 1
        assert all(re.fullmatch(r'127\.0\.0\.1 "[A-Z]+ \S+" \d{3} \d+\.\d ms', x) for x in lines), lines
    finally:
        assert server.stop() == 0
    assert "mathlas serve: stopped" in server.stderr()
    assert_clean(server)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.slow
def test_signal_lets_the_request_in_flight_finish(tiny_bundle_dir, sig):
    server = WebServer("--bundle", str(tiny_bundle_dir))
    result: dict = {}

    def cold_search():  # the first search imports numpy/onnxruntime and loads the encoder: well over 0.3 s
        result["response"] = server.client.get("/api/search", params={"q": "a finitely generated module", "k": 3})

    t = threading.Thread(target=cold_search)
    t.start()
    time.sleep(0.3)
    server.proc.send_signal(sig)
    t.join(timeout=TIMEOUT)
    assert server.proc.wait(timeout=60) == 0
    r = result["response"]
    assert r.status_code == 200 and r.json()["hits"]
    with pytest.raises(httpx.TransportError):  # and then it is gone
        httpx.get(server.base + "/health", timeout=2)
    server.client.close()
    assert "mathlas serve: stopped" in server.stderr()
    assert_clean(server)


@pytest.mark.slow
def test_two_workers(tiny_bundle_dir):
    server = WebServer("--bundle", str(tiny_bundle_dir), "--workers", "2")
    try:
        for i in range(6):
            r = server.get("/api/search", params={"q": f"ring {i}", "k": 2})
            assert r.status_code == 200 and r.json()["bundle"] == "tiny-0.1.0"
        assert server.post("/search", json={"query": "module", "n_results": 2}).json()["theorems"]
    finally:
        assert server.stop() == 0
    assert_clean(server)


@pytest.mark.slow
def test_a_formal_bundle_is_ready_for_statements_before_the_server_listens(formal_bundle_dir, tmp_path):
    """The statement index of the Lean endpoints' bundle is read, or built once and kept, before the
    server listens: built during the first statement request it outlasted the request's timeout on
    Mathlib (504). Its log lines show once (the MCP SDK's root handler printed them twice)."""
    data = tmp_path / "data"
    server = WebServer("--formal-bundle", str(formal_bundle_dir), env={"MATHLAS_DATA_DIR": str(data)})
    try:
        err = server.stderr()
        ready = READY.search(err).start()
        assert err.count("reading the statements of formaltest-0.1.0") == 1, err
        assert err.index("reading the statements of formaltest-0.1.0") < ready   # before it listens
        assert list((data / "cache" / "shapes").glob("formaltest-0.1.0-*.npz")), err
        r = server.get("/api/lean/search", params={"q": "a + b = b + a", "k": 3})
        assert r.status_code == 200, r.text
    finally:
        assert server.stop() == 0
    # the next start reads it back: nothing read again
    again = WebServer("--formal-bundle", str(formal_bundle_dir), env={"MATHLAS_DATA_DIR": str(data)})
    try:
        assert "reading the statements" not in again.stderr()
    finally:
        assert again.stop() == 0
    assert_clean(server)
    assert_clean(again)
