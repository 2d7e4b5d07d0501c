"""One query-length limit on every surface, said in the same line, and answers that repeat only the
beginning of a query (issue 31 item 11: HTTP capped queries at 10,000 characters, MCP over stdio took
100 KB and echoed it whole, the CLI truncated 114 KB silently)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from mathlas.errors import UsageError
from mathlas.request import ECHO_CHARS, MAX_QUERY_CHARS, SearchRequest, echoed

WORDS = "a finitely generated module over a local ring with mM = M is zero "
LONG = (WORDS * (MAX_QUERY_CHARS // len(WORDS) + 2))[:MAX_QUERY_CHARS + 1]
MOST = LONG[:MAX_QUERY_CHARS]
REFUSAL = f"the query is {MAX_QUERY_CHARS + 1:,} characters long, over the limit of {MAX_QUERY_CHARS:,}"


def test_the_request_holds_the_limit():
    assert SearchRequest.make(MOST).query == MOST.strip()
    with pytest.raises(UsageError, match=REFUSAL):
        SearchRequest.make(LONG)
    assert echoed("ring") == "ring"
    assert len(echoed(MOST)) == ECHO_CHARS and echoed(MOST).endswith("…")


def test_the_library_and_its_answers(tiny):
    from mathlas.service import search

    with pytest.raises(UsageError, match=REFUSAL):
        tiny.search(LONG, k=3)
    result = search(SearchRequest.make(MOST, 3), tiny)
    assert result.hits and len(result.query) == ECHO_CHARS


def test_the_cli_refuses_in_one_line(tiny_bundle_dir):
    run = subprocess.run([sys.executable, "-m", "mathlas", "search", "-b", str(tiny_bundle_dir), "-q", LONG],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip().count("\n") == 0 and REFUSAL in run.stderr, run.stderr[-500:]


@pytest.mark.slow
def test_mcp_over_stdio(tiny_bundle_dir):
    from test_mcp import McpServer, error_text, ok, server_env

    server = McpServer(server_env(MATHLAS_BUNDLE=str(tiny_bundle_dir)))
    try:
        assert REFUSAL in error_text(server.call("search_existing_math", query=LONG, k=3))
        answer = ok(server.call("search_existing_math", query=MOST, k=3))
        assert len(answer["query"]) == ECHO_CHARS  # not the 10,000 characters again
    finally:
        server.close()


@pytest.mark.slow
def test_http_says_the_same(tiny_bundle_dir):
    from test_web_serve import WebServer, assert_clean

    server = WebServer("--bundle", str(tiny_bundle_dir))
    try:
        for r in (server.get("/api/search", params={"q": LONG}), server.post("/search", json={"query": LONG})):
            assert r.status_code == 422 and REFUSAL in r.json()["error"], r.text[:300]
        r = server.get("/api/search", params={"q": MOST, "k": 3})
        assert r.status_code == 200 and len(r.json()["query"]) == ECHO_CHARS
    finally:
        server.stop()
    assert_clean(server)
