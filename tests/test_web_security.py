"""Safety defaults of ``mathlas serve``, each against a real server: Bearer token on every endpoint
but ``/health`` and the page, 413 for bodies over 64 KB (declared or streamed), the loopback Host
check (DNS rebinding), CORS off unless ``--cors``, the per-request timeout, and no traceback ever
reaching a client."""
from __future__ import annotations

import json

import pytest

from test_web_serve import WebServer, assert_clean, papers_bundle_dir, web  # noqa: F401  (fixtures)

TOKEN = "s3cret-token-for-tests"
ALLOWED = "http://allowed.test"


@pytest.fixture(scope="module")
def guarded(tiny_bundle_dir):
    server = WebServer("--bundle", str(tiny_bundle_dir), "--token", TOKEN, "--cors", ALLOWED)
    yield server
    server.stop()
    assert_clean(server)


def auth(token: str = TOKEN) -> dict:
    return {"Authorization": f"Bearer {token}"}


def is_json_error(r, status: int) -> dict:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["status"] == status and "\n" not in body["error"] and "Traceback" not in r.text
    return body


# ------------------------------------------------------------------------------ token

@pytest.mark.parametrize("method, path", [("GET", "/health"), ("GET", "/"), ("GET", "/doc/stacks:00DV"),
                                          ("GET", "/static/app.js"), ("GET", "/static/katex/katex.min.js")])
def test_health_and_page_need_no_token(guarded, method, path):
    assert guarded.client.request(method, path).status_code == 200


@pytest.mark.parametrize("method, path, body", [
    ("GET", "/api/search?q=ring", None), ("GET", "/api/doc/stacks:00DV", None), ("GET", "/api/bundles", None),
    ("GET", "/api/lean/search?q=prime", None), ("GET", "/api/lean/deps/lean:Nat", None), ("GET", "/openapi.json", None),
    ("POST", "/search", {"query": "ring"}), ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    ("GET", "/api/nowhere", None),
])
def test_everything_else_needs_the_token(guarded, method, path, body):
    r = guarded.client.request(method, path, json=body)
    assert "token" in is_json_error(r, 401)["error"] and r.headers["www-authenticate"].startswith("Bearer")
    wrong = guarded.client.request(method, path, json=body, headers=auth("not-the-token"))
    assert is_json_error(wrong, 401)["error"] == "wrong token"
    basic = guarded.client.request(method, path, json=body, headers={"Authorization": f"Basic {TOKEN}"})
    is_json_error(basic, 401)


def test_the_token_opens_them(guarded):
    assert guarded.get("/api/search", params={"q": "ring", "k": 2}, headers=auth()).json()["hits"]
    assert guarded.post("/search", json={"query": "ring", "n_results": 2}, headers=auth()).json()["theorems"]
    doc = guarded.get("/openapi.json", headers=auth()).json()
    assert doc["security"] == [{"bearer": []}] and doc["paths"]["/health"]["get"]["security"] == []


# ------------------------------------------------------------------------------ body size

def test_body_over_64_kb_is_413(guarded, web):
    big = {"query": "ring " * 14_000}  # ~70 KB of JSON
    for server, headers in ((guarded, auth()), (web, {})):
        r = server.post("/search", json=big, headers=headers)
        assert "at most 65536" in is_json_error(r, 413)["error"]
        r = server.post("/mcp", content=json.dumps(big).encode(), headers={**headers, "content-type": "application/json"})
        is_json_error(r, 413)
    ok = web.post("/search", json={"query": "ring " * 1000, "n_results": 1})  # 5 KB is fine
    assert ok.status_code == 200


def test_streamed_body_over_64_kb_is_413(web):
    def chunks():  # no Content-Length: the limit is counted while the body arrives
        for _ in range(40):
            yield b" " * 4096
        yield b'{"query": "ring"}'

    r = web.post("/search", content=chunks(), headers={"content-type": "application/json"})
    assert "over 65536 bytes" in is_json_error(r, 413)["error"]


# ------------------------------------------------------------------------------ host, CORS

def test_loopback_server_refuses_other_host_names(web):
    r = web.get("/api/search", params={"q": "ring"}, headers={"Host": "evil.example:8765"})
    assert "not this loopback server" in is_json_error(r, 421)["error"]
    for host in ("localhost", "127.0.0.1:1234", "[::1]:80"):
        assert web.get("/health", headers={"Host": host}).status_code == 200


def test_cors_is_off_by_default(web):
    r = web.get("/api/search", params={"q": "ring", "k": 1}, headers={"Origin": ALLOWED})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers
    pre = web.client.options("/api/search", headers={"Origin": ALLOWED, "Access-Control-Request-Method": "GET"})
    assert "access-control-allow-origin" not in pre.headers


def test_cors_allows_only_the_given_origin(guarded):
    pre = guarded.client.options("/search", headers={"Origin": ALLOWED, "Access-Control-Request-Method": "POST",
                                                     "Access-Control-Request-Headers": "authorization, content-type"})
    assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] == ALLOWED
    assert "authorization" in pre.headers["access-control-allow-headers"].lower()
    r = guarded.post("/search", json={"query": "ring", "n_results": 1, "authors": ["x"]},
                     headers={**auth(), "Origin": ALLOWED})
    assert r.headers["access-control-allow-origin"] == ALLOWED
    assert "x-mathlas-ignored" in r.headers["access-control-expose-headers"].lower()
    other = guarded.client.options("/search", headers={"Origin": "http://evil.test", "Access-Control-Request-Method": "POST"})
    assert other.headers.get("access-control-allow-origin") != "http://evil.test"


# ------------------------------------------------------------------------------ timeout, page headers

def test_per_request_timeout(tiny_bundle_dir):
    server = WebServer("--bundle", str(tiny_bundle_dir), "--timeout", "0.001")
    try:
        r = server.get("/api/search", params={"q": "a finitely generated module", "k": 3})
        assert "longer than 0.001 s" in is_json_error(r, 504)["error"]
        r = server.post("/search", json={"query": "ring"})
        is_json_error(r, 504)
        assert server.get("/health").status_code == 200  # the server lives on
    finally:
        server.stop()
    assert_clean(server)


def test_page_has_a_strict_content_security_policy(web):
    r = web.get("/")
    csp = r.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    html = r.text
    assert "https://" not in html.replace("https://example", "")  # no CDN: every asset is served from here
