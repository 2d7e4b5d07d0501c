"""A query that is not a string is said to be one, in one line with the string to send, on every
surface that checks requests: ``POST /search {"query": 123}`` answered "the query is empty" (the
request module gave a number and an empty string one message). A missing or blank query is still
"empty"."""
from __future__ import annotations

import pytest

from mathlas.errors import UsageError
from mathlas.request import LeanSearchRequest, SearchRequest, check_query

EMPTY = "the query is empty; type some words or a formula"


@pytest.mark.parametrize("query, message", [
    (123, 'the query must be a string, got a number (123); send its words or formula as text, e.g. "123"'),
    (2.5, 'the query must be a string, got a number (2.5); send its words or formula as text, e.g. "2.5"'),
    (True, "the query must be a string, got a boolean (true); "),
    (["ring", "module"], 'the query must be a string, got a list (["ring", "module"]); send its words or formula '
                         'as text, e.g. "ring module"'),
    ({"text": "ring"}, 'the query must be a string, got an object ({"text": "ring"}); '),
    (list(range(50)), "the query must be a string, got a list ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, …); "),
    (None, EMPTY),
    ("  \n", EMPTY),
])
def test_the_request_says_what_it_got(query, message):
    for make in (check_query, SearchRequest.make, LeanSearchRequest.make):
        with pytest.raises(UsageError) as e:
            make(query)
        assert str(e.value).startswith(message) and "\n" not in str(e.value), str(e.value)


def test_the_library(tiny):
    with pytest.raises(UsageError, match=r"^the query must be a string, got a number \(7\); "):
        tiny.search(7, k=3)


def test_http_post_search_and_get_api_search(web):
    """A real server: TheoremSearch's ``POST /search`` takes JSON, so any type can arrive; the
    query string of ``/api/search`` is always text (``q=123`` searches "123")."""
    r = web.post("/search", json={"query": 123, "n_results": 3})
    assert r.status_code == 422
    assert r.json() == {"error": 'the query must be a string, got a number (123); send its words or formula as '
                                 'text, e.g. "123"', "status": 422}
    assert web.post("/search", json={"query": "", "n_results": 3}).json()["error"] == EMPTY
    assert web.post("/search", json={"n_results": 3}).json()["error"] == EMPTY
    assert web.get("/api/search", params={"q": "123", "k": 2}).status_code == 200


@pytest.mark.slow
def test_mcp_says_it_too(tiny_bundle_dir):
    """MCP checks the arguments' types against the tool's schema before the tool runs: its own
    line, which says the same."""
    from test_mcp import McpServer, error_text, server_env

    server = McpServer(server_env(MATHLAS_BUNDLE=str(tiny_bundle_dir)))
    try:
        text = error_text(server.call("search_existing_math", query=123, k=3))
        assert "argument query: Input should be a valid string (got 123)" in text and "\n" not in text
    finally:
        server.close()
