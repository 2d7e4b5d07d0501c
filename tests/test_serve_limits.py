"""What one connection may cost ``mathlas serve`` (mathlas/web/limits.py), against a real server
process on loopback, with raw sockets sending what a slow or hostile client sends: half a request
head, a body one byte at a time, an idle keep-alive connection, an 8 MB header, 8,000 headers, and
more connections than the process has file descriptors. The server runs with ``--read-timeout 1``
so each test takes a few seconds."""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

READY = re.compile(r"mathlas serve: http://127\.0\.0\.1:(\d+)/")
READ_TIMEOUT = 1.0
FD_LIMIT = 256


class Server:
    """``python -m mathlas.web serve --port 0 ARGS`` with a scratch data directory and, when given,
    a lower descriptor limit (``nofile``)."""

    def __init__(self, *args: str, nofile: int | None = None):
        self.data = tempfile.TemporaryDirectory()
        self.err = tempfile.NamedTemporaryFile(mode="w+", encoding="utf-8", suffix=".log", delete=False)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MATHLAS_")}
        env.update(MATHLAS_DATA_DIR=self.data.name, PYTHONUNBUFFERED="1")

        def limit() -> None:
            if nofile is not None:
                import resource

                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self.proc = subprocess.Popen([sys.executable, "-m", "mathlas.web", "serve", "--port", "0", *args],
                                     stdout=subprocess.DEVNULL, stderr=self.err, env=env, preexec_fn=limit,
                                     cwd=str(Path(__file__).parent))
        deadline = time.monotonic() + 60
        while True:
            m = READY.search(self.stderr())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"mathlas serve did not start:\n{self.stderr()}")
            time.sleep(0.05)
        while self.ask(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")[0] != 200:
            if time.monotonic() > deadline:
                raise RuntimeError(f"mathlas serve never answered /health:\n{self.stderr()}")
            time.sleep(0.05)

    def stderr(self) -> str:
        return Path(self.err.name).read_text(encoding="utf-8", errors="replace")

    def connect(self) -> socket.socket:
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        return s

    def ask(self, data: bytes, wait: float = 10) -> tuple[int | None, bytes, float]:
        """Send ``data`` and read until the server closes: (status or None, bytes, seconds)."""
        start = time.monotonic()
        try:
            s = self.connect()
        except OSError:
            return None, b"", 0.0
        with s:
            s.settimeout(wait)
            try:
                s.sendall(data)
            except OSError:
                pass
            out = read_all(s)
        return status(out), out, time.monotonic() - start

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.data.cleanup()


def read_all(s: socket.socket) -> bytes:
    out = b""
    try:
        while chunk := s.recv(65536):
            out += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return out


def status(raw: bytes) -> int | None:
    m = re.match(rb"HTTP/1\.1 (\d{3}) ", raw)
    return int(m.group(1)) if m else None


def closed_within(s: socket.socket, seconds: float) -> tuple[bool, bytes]:
    """Whether the server closes ``s`` within ``seconds`` (and what it sent before)."""
    s.settimeout(seconds)
    out = b""
    try:
        while chunk := s.recv(65536):
            out += chunk
        return True, out
    except ConnectionResetError:
        return True, out
    except TimeoutError:
        return False, out


HEAD = b"GET /health HTTP/1.1\r\nHost: localhost\r\n"


@pytest.fixture(scope="module")
def server():
    srv = Server("--read-timeout", str(READ_TIMEOUT), "--timeout", "5")
    yield srv
    srv.stop()
    assert "Traceback" not in srv.stderr(), srv.stderr()[-3000:]


# ------------------------------------------------------------------------------ time

@pytest.mark.slow
def test_half_a_request_head_is_answered_408_and_closed(server):
    with server.connect() as s:
        s.sendall(HEAD)  # the blank line that ends the head never comes
        closed, out = closed_within(s, READ_TIMEOUT + 3)
    assert closed and status(out) == 408, out


@pytest.mark.slow
def test_a_connection_that_sends_nothing_is_closed(server):
    with server.connect() as s:
        closed, out = closed_within(s, READ_TIMEOUT + 3)
    assert closed and status(out) == 408


@pytest.mark.slow
def test_a_head_trickled_byte_by_byte_is_cut_off(server):
    start = time.monotonic()
    with server.connect() as s:
        s.settimeout(0.2)
        for byte in HEAD + b"X-Slow: " + b"a" * 100:
            try:
                s.sendall(bytes([byte]))
            except OSError:
                break
            time.sleep(0.05)
            if time.monotonic() - start > READ_TIMEOUT + 3:
                break
        closed, _ = closed_within(s, 0.5)
    assert closed and time.monotonic() - start < READ_TIMEOUT + 3


@pytest.mark.slow
def test_a_trickled_body_is_cut_off(server):
    start = time.monotonic()
    with server.connect() as s:
        s.sendall(b"POST /search HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 1000\r\n\r\n{")
        gone = False
        while time.monotonic() - start < READ_TIMEOUT + 4:
            try:
                s.sendall(b" ")  # one byte every 0.2 s: each used to re-arm nothing and keep it open
            except OSError:
                gone = True
                break
            closed, _ = closed_within(s, 0.2)
            if closed:
                gone = True
                break
    assert gone and time.monotonic() - start < READ_TIMEOUT + 4
    time.sleep(0.2)
    assert "internal error" not in server.stderr()  # the app saw a client that left, not a bug


@pytest.mark.slow
def test_an_idle_keep_alive_connection_is_closed(server):
    with server.connect() as s:
        s.sendall(HEAD + b"\r\n")
        time.sleep(0.3)
        first = s.recv(65536)
        assert status(first) == 200
        start = time.monotonic()
        closed, _ = closed_within(s, READ_TIMEOUT + 3)
    assert closed and time.monotonic() - start < READ_TIMEOUT + 3


@pytest.mark.slow
def test_keep_alive_serves_several_requests_in_time(server):
    with server.connect() as s:
        for _ in range(3):
            s.sendall(HEAD + b"\r\n")
            got = b""
            while b'"status":"ok"' not in got:
                got += s.recv(65536)
            assert status(got) == 200
            time.sleep(READ_TIMEOUT / 3)


# ------------------------------------------------------------------------------ size and number

def test_an_8_mb_header_is_431(server):
    code, out, _ = server.ask(HEAD + b"X-Big: " + b"a" * (8 << 20) + b"\r\n\r\n")
    assert code == 431, out[:300]


def test_8000_headers_are_431(server):
    many = b"".join(b"X-H%d: v\r\n" % i for i in range(8000))
    code, out, _ = server.ask(HEAD + many + b"\r\n")
    assert code == 431 and b"header fields" in out


def test_a_head_that_never_ends_is_cut_off_by_size(server):
    with server.connect() as s:
        sent = 0
        try:
            s.sendall(HEAD + b"X-Endless: ")
            while sent < (4 << 20):
                s.sendall(b"a" * 65536)
                sent += 65536
        except OSError:
            pass
        closed, out = closed_within(s, 3)
    assert closed and sent < (4 << 20)


def test_a_huge_request_target_is_414_and_a_long_query_is_fine(server):
    code, _, _ = server.ask(b"GET /health?x=" + b"a" * (70 << 10) + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert code == 414
    # a 10,000-character query, percent-encoded, is well inside the bound
    code, _, _ = server.ask(b"GET /health?x=" + b"%CE%B1" * 10_000 + b" HTTP/1.1\r\nHost: localhost\r\n"
                            b"Connection: close\r\n\r\n")
    assert code == 200


def body(raw: bytes) -> dict:
    import json

    return json.loads(raw.partition(b"\r\n\r\n")[2])


def test_the_connections_refusals_on_mcp_are_json_rpc_errors(server):
    """An MCP client passes an agent the message of a non-2xx answer only when its body is a JSON-RPC
    error (docs/http.md); the refusals written before the app sees the request (414, 431, a Host in
    a trailer) were {error, status} on /mcp too. Now /mcp's are JSON-RPC errors with the same line
    and the status as data; every other route, and a path that only begins like /mcp, keep {error, status}."""
    post = b"POST /mcp%s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    for target, extra, code in (
            (b"?x=" + b"a" * (70 << 10), b"\r\n", 414),
            (b"", b"X-Big: " + b"a" * (1 << 20) + b"\r\n\r\n", 431),
            (b"/", b"".join(b"X-H%d: v\r\n" % i for i in range(200)) + b"\r\n", 431)):
        got, out, _ = server.ask(post % target + extra)
        assert got == code, out[:300]
        answer = body(out)
        assert answer["jsonrpc"] == "2.0" and answer["id"] is None, answer
        assert answer["error"]["code"] == -32600 and answer["error"]["data"] == {"status": code}, answer
        assert answer["error"]["message"] and "\n" not in answer["error"]["message"]
    trailer = (b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
               b"3\r\nabc\r\n0\r\nHost: 127.0.0.1\r\n\r\n")
    got, out, _ = server.ask(trailer)
    assert got == 400 and body(out)["error"]["data"] == {"status": 400} and "trailer" in body(out)["error"]["message"]
    for target in (b"/mc%70", b"http://localhost/mcp"):   # the app routes these to /mcp too
        got, out, _ = server.ask(b"POST " + target + b" HTTP/1.1\r\nHost: localhost\r\nX-Big: "
                                 + b"a" * (1 << 20) + b"\r\n\r\n")
        assert got == 431 and body(out)["error"]["data"] == {"status": 431}, out[:300]
    for other in (b"GET /health?x=" + b"a" * (70 << 10) + b" HTTP/1.1\r\n\r\n",
                  b"GET /mcpx HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n",
                  b"GET /" + b"m" * 100 + b"/mcp HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n"):
        got, out, _ = server.ask(other)
        assert got in (414, 431) and set(body(out)) == {"error", "status"}, out[:300]


# ------------------------------------------------------------------------------ chunked trailers, Host once

def chunked(host: bytes, trailer: bytes) -> bytes:
    """A chunked GET /health whose trailer fields follow the last chunk, all in one write (so
    uvicorn parses the trailer before the app reads the headers)."""
    return (b"GET /health HTTP/1.1\r\nHost: " + host + b"\r\nTransfer-Encoding: chunked\r\n"
            b"Connection: close\r\n\r\n3\r\nabc\r\n0\r\n" + trailer + b"\r\n")


def test_a_trailer_host_is_refused_and_never_read_as_the_head(server):
    # a rebinding name in the head, the loopback address in the trailer: the guard took the last Host
    code, out, _ = server.ask(chunked(b"evil.example", b"Host: 127.0.0.1\r\n"))
    assert code == 400 and b"trailer" in out, out[:300]
    code, out, _ = server.ask(chunked(b"127.0.0.1", b"Host: evil.example\r\n"))
    assert code == 400 and b"trailer" in out, out[:300]
    # other trailer fields are no headers of the request (an Authorization in one opens nothing)
    code, out, _ = server.ask(chunked(b"127.0.0.1", b"X-Checksum: 1\r\n"))
    assert code == 200, out[:300]
    code, out, _ = server.ask(chunked(b"evil.example", b"X-Checksum: 1\r\n"))
    assert code == 421, out[:300]


def test_two_host_headers_are_400(server):
    code, out, _ = server.ask(b"GET /health HTTP/1.1\r\nHost: evil.example\r\nHost: 127.0.0.1\r\n"
                              b"Connection: close\r\n\r\n")
    assert code == 400 and b"more than one Host" in out, out[:300]


# ------------------------------------------------------------------------------ number of connections

@pytest.mark.slow
def test_more_slow_connections_than_descriptors_do_not_take_the_server_down():
    srv = Server("--read-timeout", str(READ_TIMEOUT), nofile=FD_LIMIT)
    held: list[socket.socket] = []
    try:
        for _ in range(320):  # more than the process's 256 descriptors
            try:
                s = srv.connect()
                s.sendall(HEAD)  # and each stops half-way through its head
                held.append(s)
            except OSError:
                break
        # while they are held, a new client is answered at once (503 past the cap), never left hanging
        code, out, took = srv.ask(HEAD + b"Connection: close\r\n\r\n", wait=5)
        assert code in (200, 503) and took < 2, (code, out[:200], took)
        refused = 0
        for s in held:
            closed, out = closed_within(s, 0.01)
            refused += closed and status(out) == 503
        assert refused > 0  # the cap answered some of them at once rather than holding a descriptor
        # said once in the log, not once per refused connection
        assert srv.stderr().count("answered 503 until some close") == 1, srv.stderr()[-2000:]
        time.sleep(READ_TIMEOUT + 1.5)
        code, _, took = srv.ask(HEAD + b"Connection: close\r\n\r\n", wait=5)
        assert code == 200 and took < 2
        assert srv.proc.poll() is None
        assert srv.stderr().count("below the connection limit again") == 1, srv.stderr()[-2000:]
    finally:
        for s in held:
            s.close()
        srv.stop()
    err = srv.stderr()
    assert "Traceback" not in err and "Too many open files" not in err, err[-3000:]


def test_limits_are_options():
    from mathlas.web.limits import FD_RESERVE, connection_cap

    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert connection_cap(10) == 10
    if soft != resource.RLIM_INFINITY:
        assert connection_cap(10**9) == soft - FD_RESERVE


@pytest.mark.slow
def test_the_probe_finds_no_5xx_and_no_path(tiny_bundle_dir):
    """scripts/probe_serve.py in a small configuration: every class of hostile request, 8 clients."""
    import json

    script = Path(__file__).resolve().parent.parent / "scripts" / "probe_serve.py"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MATHLAS_")}
    run = subprocess.run([sys.executable, str(script), "--bundle", str(tiny_bundle_dir), "--concurrency", "8",
                          "--rounds", "1", "--read-timeout", "1", "--max-seconds", "120", "--json"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    out = json.loads(run.stdout)
    classes = {c["class"]: c for c in out["classes"]}
    assert set(classes) == {"good", "host", "bad input", "oversized", "slow", "mcp bundle paths"}
    assert all(c["5xx"] == 0 and c["paths shown"] == 0 for c in classes.values())
    assert classes["good"]["2xx"] == classes["good"]["requests"] > 0
    assert classes["host"]["refused"] == classes["host"]["requests"] > 0
    assert classes["oversized"]["refused"] == classes["oversized"]["requests"]
    assert not out["files_open_outside"] and not out["bundle_path_answers_differ"] and out["tracebacks"] == 0
    # issue 31: findings served as stored (item 1), the connection limit said (item 3)
    assert out["findings_stale"] == []
    limit = out["connection_limit"]
    assert limit["status"] == 503 and limit["seconds"] < 1 and limit["one_line"] and limit["log_lines"] == 1
    assert limit["status_after"] == 200
