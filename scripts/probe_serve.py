"""Hostile-client probe of ``mathlas serve``: what a web page, a local program or a careless script
can send, against a real server, on loopback only, bounded in time.

    python scripts/probe_serve.py [--bundle B] [--concurrency 16] [--rounds 3] [--max-seconds 300]
                                  [--read-timeout 2] [--json]

It starts its own server (``python -m mathlas.web serve --port 0``) on a free port of 127.0.0.1 with a
scratch ``MATHLAS_DATA_DIR`` (only ``--bundle`` is served, by path; default: the bundle
``mathlas search`` uses), then runs ``--rounds`` rounds, each sending every request of these
classes once, shuffled (seeded), over ``--concurrency`` client threads, one connection per request (raw sockets: a client
library would fix up what the probe means to send wrong):

* good: searches (REST, TheoremSearch, MCP), documents, bundles, health, the page, tools/list;
* host: DNS-rebinding Host names (``127.attacker.example``, ``127.0.0.1.nip.io``...) on every route;
* bad input: every route with wrong types, ranges, unknown names, empty, 10,001-character and
  lone-surrogate queries, invalid JSON, JSON nested 2,000 deep, bundles named by path, traversal
  in paths, wrong methods, unknown ids;
* oversized: an 8 MB header, 8,000 headers, a 70 KB request target, a 100 KB body;
* slow: half a request head, a body sent one byte at a time, an idle keep-alive connection, a
  client that leaves mid-body (each bounded by the server's ``--read-timeout``);
* mcp bundle paths: MCP tool calls whose ``bundle`` names ``/etc``, ``/root``, ``../..``, a symlink
  farm of the served bundle, a bundle whose manifest lists files outside it, and the
  ``mathlas://bundle/default`` resource.

Among them (issue 31): ``identify_sequence`` without OEIS data (good: its answer must not show the
data directory), ``prompts/get`` of an unknown prompt (bad input: a JSON-RPC error, no traceback),
invalid UTF-8 in the URL (bad input: 422), two ``Host`` headers and a chunked trailer ``Host``
(host: 400). Two checks run apart from the rounds:

* findings: another process (this one) adds 20 findings to the server's store, the server reads
  one, the writer removes two and adds three, six times over; a removed finding answered 200 or a
  stored one answered 404 by ``/api/doc`` is stale (a rewrite taken for an append);
* connection limit: the server runs with ``--max-connections`` (``4 x --concurrency``, at least
  128); that many connections plus 20 send half a head and wait; a new client must get a 503 within
  a second whose body is one line, the log must say so in one line, and once ``--read-timeout`` has
  cut the slow ones off a new client must get 200.

Printed (stdout; ``--json`` for the numbers as JSON): per class the requests, answers by status
class, connections closed without an answer, answers holding a path of this machine (the data
directory, the bundle's directory, the home directory, the Python installation, the current
directory; the probe's own arguments echoed back do not count), and then: the server's RSS before
(after one search has opened the bundle) and after each round, files the server holds open outside
its data directory, bundle and Python installation
(/proc/PID/fd and maps), whether the answers to bundle paths differ by what exists there, and the
tracebacks and internal errors in the server's log. Exit status 1 when any answer is a 5xx, any
answer holds a path of this machine, the log has a traceback, a good request was not answered 2xx,
the server holds a file open outside its directories, the answers to bundle paths differ, a
finding is served stale, or the connection limit does not answer as said.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

QUERIES = ["every finite integral domain is a field", "bounded gaps between primes", "Nakayama lemma",
           "a compact Hausdorff space is normal", "fundamental theorem of algebra", "ring"]
HOSTILE_HOSTS = ["127.attacker.example:{port}", "127.0.0.1.nip.io", "127.0.0.1.nip.io:{port}", "evil.example",
                 "localhost.evil.example", "127.1", "2130706433", "[::ffff:7f00:1]", ""]
MCP_ACCEPT = "application/json, text/event-stream"
# files a library of the server opens by itself, whatever the requests: onnxruntime keeps a
# telemetry database in the user's cache
LIBRARY_FILES = ("/.cache/Microsoft/DeveloperTools/.onnxruntime/",)


# ------------------------------------------------------------------------------ wire

def raw_request(method: str, path: str, *, host: str = "127.0.0.1:{port}", body: bytes | None = None,
                headers: dict[str, str] | None = None, content_type: str = "application/json") -> bytes:
    """One HTTP/1.1 request as bytes, ``Connection: close``; ``{port}`` in the Host is filled in later."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Connection: close"]
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    if body is not None:
        lines += [f"Content-Type: {content_type}", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape") + (body or b"")


def mcp(method: str, params: dict | None = None, *, host: str = "127.0.0.1:{port}") -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params else {})})
    return raw_request("POST", "/mcp", host=host, body=body.encode(), headers={"Accept": MCP_ACCEPT})


def tool(name: str, arguments: dict) -> bytes:
    return mcp("tools/call", {"name": name, "arguments": arguments})


def exchange(port: int, data: bytes, *, timeout: float, trickle: float = 0.0, leave_after: int | None = None,
             idle: bool = False) -> tuple[int | None, bytes]:
    """Send ``data`` (``trickle``: its body one byte every that many seconds; ``leave_after``: close
    after that many bytes; ``idle``: a keep-alive request, so reading until the server closes
    measures how long an idle connection is kept) and read until the server closes: (status or
    None, body)."""
    data = data.replace(b"{port}", str(port).encode())
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError:
        return None, b""
    out = b""
    with s:
        s.settimeout(timeout)
        try:
            if leave_after is not None:
                s.sendall(data[:leave_after])
                time.sleep(0.2)
                return None, b""
            if trickle:  # the head at once, then the body a byte at a time
                head = data.index(b"\r\n\r\n") + 4
                s.sendall(data[:head])
                for i in range(head, len(data)):
                    s.sendall(data[i:i + 1])
                    time.sleep(trickle)
            else:
                s.sendall(data)
        except OSError:  # the server may answer and close before all of it is sent (431, 413)
            pass
        try:
            while chunk := s.recv(65536):
                out += chunk
        except OSError:
            pass
    m = re.match(rb"HTTP/1\.[01] (\d{3}) ", out)
    head, _, body = out.partition(b"\r\n\r\n")
    return (int(m.group(1)) if m else None), body


# ------------------------------------------------------------------------------ the requests

def catalogue(bundle: Path, scratch: Path, doc_id: str) -> list[tuple[str, str, bytes, dict]]:
    """(class, label, request, how to send it) for one round."""
    out: list[tuple[str, str, bytes, dict]] = []

    def add(cls: str, label: str, data: bytes, **how):
        out.append((cls, label, data, how))

    for q in QUERIES:
        add("good", "GET /api/search", raw_request("GET", f"/api/search?q={quote(q)}&k=5"))
        add("good", "POST /search", raw_request("POST", "/search", body=json.dumps({"query": q, "n_results": 5}).encode()))
    add("good", "MCP search", tool("search_existing_math", {"query": QUERIES[0], "k": 3}))
    add("good", "MCP identify_sequence (no OEIS data)", tool("identify_sequence", {"terms": [1, 1, 2, 3, 5, 8, 13]}))
    add("good", "MCP tools/list", mcp("tools/list"))
    for path in ("/health", "/api/bundles", f"/api/doc/{doc_id}", "/", f"/doc/{doc_id}", "/static/app.js", "/openapi.json"):
        add("good", f"GET {path}", raw_request("GET", path))

    routes = [("GET", "/api/search?q=ring", None), ("POST", "/search", b'{"query": "ring"}'), ("GET", "/api/bundles", None),
              ("GET", f"/api/doc/{doc_id}", None), ("GET", "/", None), ("GET", "/health", None)]
    for host in HOSTILE_HOSTS:
        for method, path, body in routes:
            add("host", f"Host {host!r} {path}", raw_request(method, path, host=host, body=body))
        add("host", f"Host {host!r} /mcp", mcp("ping", host=host))
    add("host", "two Host headers", raw_request("GET", "/health", host="evil.example", headers={"Host": "127.0.0.1"}))
    for head, trailer in (("evil.example", "127.0.0.1:{port}"), ("127.0.0.1:{port}", "evil.example")):
        add("host", f"chunked trailer Host {trailer!r}",
            (f"GET /health HTTP/1.1\r\nHost: {head}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
             f"3\r\nabc\r\n0\r\nHost: {trailer}\r\n\r\n").encode())

    bad_gets = ["/api/search?q=", "/api/search?q=ring&k=0", "/api/search?q=ring&k=abc", "/api/search?q=ring&k=100000",
                "/api/search?q=ring&offset=-1", "/api/search?q=ring&mode=nope", "/api/search?q=ring&nope=1",
                "/api/search?q=ring&source=nowhere", "/api/search?q=ring&year_min=x", "/api/search?q=ring&prior=x",
                "/api/search?q=ring&rerank=maybe", "/api/search?q=ring&journal=perhaps", "/api/search?q=" + "a" * 10_001,
                "/api/search?q=%ED%A0%80", "/api/search?q=%FF%FE", "/api/search?q=ring%00", "/api/search?q=ring&bundle=/etc",
                "/api/search?q=ring&bundle=../../", "/api/search?q=ring&bundle=" + quote(str(bundle)),
                "/api/doc/nope:nope", "/api/doc/finding:nope", "/api/doc/lean:Nope", "/api/doc/..%2F..%2Fetc%2Fpasswd",
                "/api/lean/search?q=", "/api/lean/search?q=ring&k=-3", "/api/lean/deps/lean:Nope?depth=99",
                "/api/bundles?x=1", "/static/../../../etc/passwd", "/static/%2e%2e/%2e%2e/etc/passwd",
                "/doc/%00", "/nowhere", "/api/search?q=ring&kind_weight=proof=inf", "/api/search?q=ring&k=1e3"]
    for path in bad_gets:
        add("bad input", f"GET {path[:50]}", raw_request("GET", path))
    bad_posts = [b"", b"not json", b"[]", b'"ring"', b"null", b'{"query": 5}', b'{"query": ""}',
                 b'{"query": "ring", "n_results": 0}', b'{"query": "ring", "n_results": "5"}',
                 b'{"query": "ring", "n_results": 5, "limit": 6}', b'{"query": "ring", "sources": "nowhere"}',
                 b'{"query": "ring", "year_range": [1, 2, 3]}', b'{"query": "ring", "citation_weight": 1e999}',
                 b'{"query": "ring", "bundle": "/etc"}', b'{"query": "ring", "bundle": 7}',
                 b'{"query": "\\ud800 ring"}', b'{"query": "ring", "sources": ["\\udfff"]}',
                 b'{"query": "' + b"a" * 10_001 + b'"}', b'{"query": ' + b"[" * 2000 + b"]" * 2000 + b"}",
                 b'{"query": "ring", "authors": [' + b"{" * 1000 + b"}" * 1000 + b"]}", b"\xff\xfe{}",
                 b'{"query": "ring", "\\ud800": 1}', '{"query": "ring", "\u03b1": 1}'.encode(),
                 b'{"query": "ring", "a\\r\\nSet-Cookie: x=1": 1}']
    for body in bad_posts:
        add("bad input", f"POST /search {body[:30]!r}", raw_request("POST", "/search", body=body))
    add("bad input", "POST /search text/plain", raw_request("POST", "/search", body=b'{"query": "ring"}', content_type="text/plain"))
    add("bad input", "DELETE /api/search", raw_request("DELETE", "/api/search?q=ring"))
    add("bad input", "PUT /search", raw_request("PUT", "/search", body=b"{}"))
    add("bad input", "GET /mcp", raw_request("GET", "/mcp", headers={"Accept": "text/event-stream"}))
    add("bad input", "DELETE /mcp", raw_request("DELETE", "/mcp", headers={"Accept": MCP_ACCEPT}))
    add("bad input", "MCP batch", raw_request("POST", "/mcp", body=b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]',
                                              headers={"Accept": MCP_ACCEPT}))
    for body in (b"not json", b"[" * 2000 + b"]" * 2000, b'{"jsonrpc": "2.0", "id": 1, "method": "nope"}',
                 b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nope", "arguments": {}}}',
                 json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                             "params": {"name": "search_existing_math", "arguments": {"query": "\ud800"}}},
                            ensure_ascii=True).encode(),
                 json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                             "params": {"name": "search_existing_math", "arguments": {"query": "ring", "k": 10**9}}}).encode()):
        add("bad input", f"MCP {body[:40]!r}", raw_request("POST", "/mcp", body=body, headers={"Accept": MCP_ACCEPT}))
    add("bad input", "MCP prompts/get nosuch", mcp("prompts/get", {"name": "nosuch"}))

    add("oversized", "8 MB header", raw_request("GET", "/health", headers={"X-Big": "a" * (8 << 20)}))
    add("oversized", "8,000 headers", raw_request("GET", "/health", headers={f"X-H{i}": "v" for i in range(8000)}))
    add("oversized", "70 KB target", raw_request("GET", "/health?x=" + "a" * (70 << 10)))
    add("oversized", "100 KB body", raw_request("POST", "/search", body=b'{"query": "' + b"a" * (100 << 10) + b'"}'))
    add("oversized", "100 KB MCP body", raw_request("POST", "/mcp", body=b" " * (100 << 10) + b"{}", headers={"Accept": MCP_ACCEPT}))

    add("slow", "half a head", b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    add("slow", "trickled body", raw_request("POST", "/search", body=b'{"query": "ring"}' + b" " * 200), trickle=0.05)
    add("slow", "idle keep-alive", b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", idle=True)
    for path in ("/search", "/mcp"):
        data = raw_request("POST", path, body=b'{"query": "ring"}' + b" " * 500, headers={"Accept": MCP_ACCEPT})
        add("slow", f"leaves mid-body {path}", data, leave_after=len(data) - 300)

    for arg in ("/etc", "/root", "../../", "/nonexistent-probe-dir", str(scratch / "farm"), str(scratch / "outside"),
                "~", "file:///etc"):
        add("mcp bundle paths", f"bundle={arg}", tool("search_existing_math", {"query": "ring", "k": 1, "bundle": arg}),
            arg=arg)
        add("mcp bundle paths", f"get_by_id bundle={arg}", tool("get_by_id", {"id": doc_id, "bundle": arg}), arg=arg)
    add("mcp bundle paths", "resource bundle/default", mcp("resources/read", {"uri": "mathlas://bundle/default"}))
    add("mcp bundle paths", "resource bundle/..", mcp("resources/read", {"uri": "mathlas://bundle/..%2F..%2Fetc"}))
    return out


def hostile_dirs(bundle: Path, scratch: Path) -> None:
    """A symlink farm of the served bundle, and a copy of its manifest whose files point outside."""
    farm = scratch / "farm"
    farm.mkdir()
    for entry in bundle.iterdir():
        (farm / entry.name).symlink_to(entry.resolve())
    outside = scratch / "outside"
    outside.mkdir()
    manifest = json.loads((bundle / "manifest.json").read_text())
    files = manifest.get("files") or {}
    first = next(iter(files.values()), {"size": 0, "sha256": "0" * 64})
    manifest["files"] = {"../../../../../../etc/hostname": first, **{k: v for k, v in files.items()}}
    (outside / "manifest.json").write_text(json.dumps(manifest))


# ------------------------------------------------------------------------------ the server

class Server:
    def __init__(self, bundle: Path, data_dir: Path, read_timeout: float, timeout: float, max_connections: int):
        self.err = tempfile.NamedTemporaryFile(mode="w+", suffix=".log", delete=False)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MATHLAS_")}
        env.update(MATHLAS_DATA_DIR=str(data_dir), PYTHONUNBUFFERED="1")
        cmd = [sys.executable, "-m", "mathlas.web", "serve", "--port", "0", "-q", "--bundle", str(bundle),
               "--read-timeout", str(read_timeout), "--timeout", str(timeout),
               "--max-connections", str(max_connections)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.err, env=env)
        deadline = time.monotonic() + 120
        while True:
            m = re.search(r"http://127\.0\.0\.1:(\d+)/", self.log())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"probe_serve: the server did not start:\n{self.log()[-3000:]}")
            time.sleep(0.05)
        while exchange(self.port, raw_request("GET", "/health"), timeout=5)[0] != 200:  # listening yet?
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"probe_serve: the server never answered /health:\n{self.log()[-3000:]}")
            time.sleep(0.05)

    def log(self) -> str:
        return Path(self.err.name).read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def rss_mb(pid: int) -> float:
    """Resident memory of the server and its child processes, MB."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            todo += [int(c) for c in Path(f"/proc/{p}/task/{p}/children").read_text().split()]
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return round(total / 1024, 1)


def open_files(pid: int) -> set[str]:
    """Paths the server process holds open or mapped."""
    out: set[str] = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("/"):
                out.add(target)
        for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[5].startswith("/"):
                out.add(parts[5].replace(" (deleted)", ""))
    except OSError:
        pass
    return out


# ------------------------------------------------------------------------------ the checks apart from the rounds

FINDINGS_WRITER = """
import sys
from mathlas.findings.store import FindingsStore
store = FindingsStore(sys.argv[1])
for line in sys.stdin:
    op, _, arg = line.rstrip("\\n").partition(" ")
    if op == "add":
        print(store.add(arg, "https://example.org/probe")[0].id, flush=True)
    elif op == "remove":
        store.remove(arg)
        print("removed", flush=True)
"""


def findings_check(port: int, data_dir: Path, *, timeout: float) -> list[str]:
    """Issue 31's steps against the running server: a writer process adds 20 findings; then six
    times the server reads one, the writer removes two and adds three. What ``/api/doc`` answers
    for each removed (must be 404) and each stored finding (must be 200) after every step; the
    answers that were wrong."""
    writer = subprocess.Popen([sys.executable, "-c", FINDINGS_WRITER, str(data_dir / "findings")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def do(line: str) -> str:
        writer.stdin.write(line + "\n")
        writer.stdin.flush()
        return writer.stdout.readline().strip()

    def doc(fid: str) -> int | None:
        return exchange(port, raw_request("GET", f"/api/doc/{fid}"), timeout=timeout)[0]

    wrong: list[str] = []
    try:
        ids = [do(f"add Probe statement {i}: every widget of order {i} is a gadget.") for i in range(20)]
        n = 20
        for step in range(6):
            a, b = ids[0], ids[1]
            if doc(a) != 200:  # the server reads (and caches) this version of the store
                wrong.append(f"step {step}: stored {a} not served before the removes")
            do(f"remove {a}")
            do(f"remove {b}")
            for _ in range(3):
                ids.append(do(f"add Probe statement {n}: every widget of order {n} is a gadget."))
                n += 1
            ids = ids[2:]
            wrong += [f"step {step}: removed {x} answered {c}" for x in (a, b) if (c := doc(x)) != 404]
            wrong += [f"step {step}: stored {x} answered {c}" for x in ids if (c := doc(x)) != 200]
    finally:
        writer.stdin.close()
        writer.wait(timeout=60)
    return wrong


def connection_limit_check(server: Server, cap: int, read_timeout: float) -> dict:
    """``cap`` + 20 connections send half a head and wait; what a new client gets (status, seconds,
    whether the body is one line), the log lines saying so, and what a client gets once the read
    timeout has cut the slow ones off."""
    before = server.log().count("answered 503 until some close")
    held: list[socket.socket] = []
    try:
        for _ in range(cap + 20):
            try:
                s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
                s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                held.append(s)
            except OSError:
                break
        start = time.monotonic()
        status, body = exchange(server.port, raw_request("GET", "/health"), timeout=5)
        seconds = time.monotonic() - start
        one_line = body.strip().count(b"\n") == 0 and body.startswith(b"{")
        time.sleep(read_timeout + 1.5)
        after, _ = exchange(server.port, raw_request("GET", "/health"), timeout=5)
    finally:
        for s in held:
            s.close()
    return {"cap": cap, "held": len(held), "status": status, "seconds": round(seconds, 3), "one_line": one_line,
            "log_lines": server.log().count("answered 503 until some close") - before, "status_after": after}


# ------------------------------------------------------------------------------ the run

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", help="bundle directory to serve (default: the one `mathlas search` uses)")
    ap.add_argument("--concurrency", type=int, default=16, help="client threads (default 16)")
    ap.add_argument("--rounds", type=int, default=3, help="times each request is sent (default 3)")
    ap.add_argument("--max-seconds", type=float, default=300, help="stop sending after this long (default 300)")
    ap.add_argument("--read-timeout", type=float, default=2.0, help="the server's --read-timeout (default 2)")
    ap.add_argument("--timeout", type=float, default=20.0, help="the server's --timeout (default 20)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="the numbers as JSON")
    args = ap.parse_args(argv)
    if not 1 <= args.concurrency <= 64 or not 1 <= args.rounds <= 100:
        ap.error("--concurrency must be 1-64 and --rounds 1-100")

    from mathlas.bundle import read_manifest
    from mathlas.releases.install import resolve_bundle

    bundle = Path(resolve_bundle(args.bundle, quiet=True)).resolve()
    manifest = read_manifest(bundle)
    doc_id = _a_document(bundle)
    scratch = Path(tempfile.mkdtemp(prefix="mathlas-probe-"))
    data_dir = scratch / "data"
    data_dir.mkdir()
    hostile_dirs(bundle, scratch)
    cap = max(128, 4 * args.concurrency)
    server = Server(bundle, data_dir, args.read_timeout, args.timeout, cap)
    print(f"probe_serve: server on 127.0.0.1:{server.port}, bundle {manifest.name}-{manifest.version}, "
          f"{args.concurrency} clients, {args.rounds} rounds", file=sys.stderr)
    # paths of this machine that no answer may show
    foreign = sorted({str(p) for p in (scratch, data_dir, bundle, Path.home(), Path(sys.prefix), Path.cwd(),
                                       Path(__file__).resolve().parent.parent, Path(tempfile.gettempdir()))
                      if len(str(p)) > 4}, key=len, reverse=True)
    results: list[dict] = []
    lock = threading.Lock()
    try:
        exchange(server.port, raw_request("GET", "/api/search?q=ring&k=1"), timeout=120)  # opens the bundle
        rss_before = rss_mb(server.proc.pid)
        stale = findings_check(server.port, data_dir, timeout=args.timeout + 10)
        stop_at = time.monotonic() + args.max_seconds
        rss_rounds = []

        def one(item):
            cls, label, data, how = item
            if time.monotonic() > stop_at:
                return
            start = time.monotonic()
            code, body = exchange(server.port, data, timeout=args.timeout + args.read_timeout + 10,
                                  **{k: v for k, v in how.items() if k != "arg"})
            text = body.decode("utf-8", "replace")
            echoed = how.get("arg")
            shown = text.replace(echoed, "") if echoed else text
            leaks = [p for p in foreign if p in shown]
            # MCP answers a refused call with 200 and a JSON-RPC error or a tool error result
            mcp_error = code == 200 and (b'"isError":true' in body or re.match(rb'\{"jsonrpc":"2.0","id":[^,]*,"error"', body))
            with lock:
                results.append({"class": cls, "label": label, "status": code, "ms": (time.monotonic() - start) * 1000,
                                "leaks": leaks, "text": text[:4000], "arg": echoed, "refused": bool(mcp_error)})

        for n in range(args.rounds):  # each round every request once, shuffled; RSS after each
            items = catalogue(bundle, scratch, doc_id)
            random.Random(args.seed * 1000 + n).shuffle(items)
            with ThreadPoolExecutor(args.concurrency) as pool:
                list(pool.map(one, items))
            time.sleep(0.5)
            rss_rounds.append(rss_mb(server.proc.pid))
        rss_after = rss_rounds[-1]
        limit = connection_limit_check(server, cap, args.read_timeout)
        allowed = (str(bundle), str(data_dir), sys.prefix, sys.base_prefix, "/usr/lib", "/lib", "/dev/", "/proc/",
                   server.err.name,
                   "/[", "/memfd:", "/SYSV", str(Path(__file__).resolve().parent.parent / "mathlas"))
        files = open_files(server.proc.pid)
        own = sorted(p for p in files if any(lib in p for lib in LIBRARY_FILES))
        held = sorted(p for p in files if not p.startswith(allowed) and p not in own)
        alive = server.proc.poll() is None
    finally:
        server.stop()
        log = server.log()
        shutil.rmtree(scratch, ignore_errors=True)

    # bundle paths: the answers for paths that exist and for one that does not must not differ
    by_arg: dict[str, set[str]] = defaultdict(set)
    for r in results:
        if r["class"] == "mcp bundle paths" and r["arg"] and r["label"].startswith("bundle="):
            by_arg[r["arg"]].add(re.sub(r"'[^']*'", "'ARG'", r["text"]))  # quoted: the argument echoed
    oracle = len({frozenset(v) for v in by_arg.values()}) > 1
    if oracle:
        for arg, texts in sorted(by_arg.items()):
            print(f"  bundle={arg}: {sorted(texts)[0][:200]}", file=sys.stderr)

    table = []
    for cls in ("good", "host", "bad input", "oversized", "slow", "mcp bundle paths"):
        rs = [r for r in results if r["class"] == cls]
        codes = Counter(4 if r["refused"] else (r["status"] // 100) if r["status"] else 0 for r in rs)
        table.append({"class": cls, "requests": len(rs), "2xx": codes[2], "refused": codes[4], "5xx": codes[5],
                      "no answer": codes[0], "paths shown": sum(bool(r["leaks"]) for r in rs)})
    total_5xx = sum(t["5xx"] for t in table)
    total_leaks = sum(t["paths shown"] for t in table)
    summary = {"bundle": f"{manifest.name}-{manifest.version}", "concurrency": args.concurrency, "rounds": args.rounds,
               "requests": len(results), "classes": table, "rss_before_mb": rss_before, "rss_after_mb": rss_after,
               "rss_after_each_round_mb": rss_rounds,
               "files_open_outside": held, "bundle_path_answers_differ": oracle,
               "tracebacks": log.count("Traceback"), "internal_errors": log.count("internal error"),
               "server_alive": alive, "findings_stale": stale, "connection_limit": limit,
               "5xx": [f"{r['label']}: {r['status']} {r['text'][:120]}" for r in results if (r["status"] or 0) >= 500],
               "paths": [f"{r['label']}: {r['text'][:160]}" for r in results if r["leaks"]]}
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print("| class | requests | answered 2xx | refused (4xx, MCP error) | 5xx | closed, no answer | "
              "answers showing a path of this machine |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for t in table:
            print(f"| {t['class']} | {t['requests']} | {t['2xx']} | {t['refused']} | {t['5xx']} | {t['no answer']} | "
                  f"{t['paths shown']} |")
        print(f"| **all** | {len(results)} | {sum(t['2xx'] for t in table)} | {sum(t['refused'] for t in table)} | "
              f"{total_5xx} | {sum(t['no answer'] for t in table)} | {total_leaks} |")
        print()
        print(f"server RSS {rss_before} MB before, after each round: {', '.join(map(str, rss_rounds))} MB; "
              "files open outside the data directory, bundle and Python: "
              f"{len(held)} (and {len(own)} of onnxruntime's own cache); answers to bundle paths differ by what "
              f"exists there: {'yes' if oracle else 'no'}; "
              f"server log: {summary['tracebacks']} tracebacks, {summary['internal_errors']} internal errors; "
              f"server alive at the end: {'yes' if alive else 'NO'}; findings served stale: {len(stale)}; "
              f"connection limit {cap}: {limit['held']} held, a new client got {limit['status']} in "
              f"{limit['seconds']:.2f} s ({'one line' if limit['one_line'] else 'NOT one line'}), "
              f"{limit['log_lines']} log line(s), {limit['status_after']} after the read timeout")
        for line in stale[:10]:
            print("  stale finding: " + line, file=sys.stderr)
        for line in summary["5xx"][:20] + summary["paths"][:20] + held[:20]:
            print("  " + line, file=sys.stderr)
        for r in results:
            if r["class"] not in ("good", "slow") and r["status"] and r["status"] // 100 == 2 and not r["refused"]:
                print(f"  {r['class']} answered 2xx: {r['label']}: {r['text'][:100]}", file=sys.stderr)
    good_failed = [r for r in results if r["class"] == "good" and (r["status"] or 0) // 100 != 2]
    for r in good_failed[:10]:
        print(f"  good request failed: {r['label']}: {r['status']} {r['text'][:160]}", file=sys.stderr)
    limit_ok = (limit["status"] == 503 and limit["seconds"] < 1 and limit["one_line"] and limit["log_lines"] == 1
                and limit["status_after"] == 200)
    bad = (total_5xx or total_leaks or summary["tracebacks"] or not alive or good_failed or held or oracle or stale
           or not limit_ok)
    return 1 if bad else 0


def _a_document(bundle: Path) -> str:
    """One document id of the bundle (for the document routes)."""
    import mathlas

    hits = mathlas.open_bundle(bundle).search("ring", k=1, mode="lexical")
    return hits[0].id if hits else "stacks:00DV"


if __name__ == "__main__":
    sys.exit(main())
