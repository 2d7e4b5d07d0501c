"""MCP over streamable HTTP at ``/mcp``: the official ``mcp`` client against a real ``mathlas serve``.

The tools are the stdio server's (one registry, ``mathlas.mcp.server.build_server``); the tools annotated
as writes (``add_finding``, ``funsearch``) are served over HTTP only behind a token.
"""
from __future__ import annotations

import pytest

from test_web_serve import TIMEOUT, WebServer, assert_clean, httpx

pytest.importorskip("mcp")
import anyio  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

TOKEN = "test-token-0123456789"


def mcp_session(base: str, work, token: str | None = None):
    """Run ``await work(session)`` in a fresh client session; its result."""
    async def main():
        headers = {"Authorization": f"Bearer {token}"} if token else None
        async with httpx.AsyncClient(headers=headers, timeout=TIMEOUT) as client:
            async with streamable_http_client(base + "/mcp", http_client=client) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    return await work(session)

    return anyio.run(main)


def as_over_mcp(api: dict) -> dict:
    """A /api/search answer as MCP's search tools answer it: without ``MCP_LEAVES_OUT`` (``searched_for``,
    which ``expanded`` says again; docs/mcp.md's answer, docs/http.md's /api/search) and without the
    ``href`` REST adds to each ``next`` step it can make (MCP's next steps are the tool calls alone)."""
    from mathlas.mcp.registry import MCP_LEAVES_OUT

    assert set(MCP_LEAVES_OUT) <= api.keys()
    api = {**api, "next": [{k: v for k, v in step.items() if k != "href"} for step in api["next"]]}
    return {key: value for key, value in api.items() if key not in MCP_LEAVES_OUT}


def stdio_tool_names() -> set[str]:
    from mathlas.tools import available_tool_names

    return set(available_tool_names())


def test_tools_are_the_stdio_tools_without_the_writing_ones(web):
    async def work(s):
        return (await s.list_tools()).tools

    tools = mcp_session(web.base, work)
    names = {t.name for t in tools}
    assert names == stdio_tool_names() - {"add_finding", "funsearch"}  # the tools annotated as writes
    search = next(t for t in tools if t.name == "search_existing_math")
    assert search.output_schema and search.input_schema["required"] == ["query"]


def test_search_and_get_by_id_match_the_json_api(web):
    async def work(s):
        r = await s.call_tool("search_existing_math", {"query": "a finitely generated module over a ring", "k": 4,
                                                        "detail": "full"})
        first = r.structured_content["hits"][0]["id"]
        d = await s.call_tool("get_by_id", {"id": first})
        return r, d

    r, d = mcp_session(web.base, work)
    assert not r.is_error and not d.is_error
    api = web.get("/api/search", params={"q": "a finitely generated module over a ring", "k": 4}).json()
    assert "searched_for" in api and "searched_for" not in r.structured_content
    assert r.structured_content == as_over_mcp(api)
    assert d.structured_content == web.get(f"/api/doc/{api['hits'][0]['id']}").json()


def test_formal_tools_and_errors(web):
    async def work(s):
        return (await s.call_tool("search_formal_math", {"query": "prime two le", "k": 2}),
                await s.call_tool("get_dependencies", {"id": "lean:Nat.Prime.two_le"}),
                await s.call_tool("search_existing_math", {"query": "ring", "k": 0}),
                await s.call_tool("get_by_id", {"id": "stacks:NOPE"}))

    formal, deps, bad_k, missing = mcp_session(web.base, work)
    assert formal.structured_content["hits"][0]["id"] == "lean:Nat.Prime.two_le"
    assert deps.structured_content["total"] > 0
    assert bad_k.is_error and "k must be an integer from 1 to 100" in bad_k.content[0].text
    assert missing.is_error and "no document with id 'stacks:NOPE'" in missing.content[0].text


def test_verify_numeric_reads_a_json_number_as_the_decimal_written(web):
    """pi against the JSON number 3.14 was REFUTED (read as 3.14000000000000) and against "3.14" VERIFIED."""
    pytest.importorskip("mpmath")

    async def work(s):
        return [await s.call_tool("verify_numeric", {"expression": "pi", "value": v}) for v in (3.14, "3.14", 3)]

    number, string, integer = (r.structured_content for r in mcp_session(web.base, work))
    assert (number["verdict"], number["digits"], number["right"]) == ("VERIFIED", 3, "3.14")
    assert number | {"elapsed_s": 0} == string | {"elapsed_s": 0}
    assert (integer["verdict"], integer["digits"], integer["right"]) == ("VERIFIED", 1, "3")


def test_concurrent_sessions(web):
    queries = [f"{w} {i}" for i, w in enumerate(["ring", "module", "field", "compact", "ideal", "group"])]

    async def one(q, out):
        async def work(s):
            return await s.call_tool("search_existing_math", {"query": q, "k": 3, "detail": "full"})

        headers = None
        async with httpx.AsyncClient(headers=headers, timeout=TIMEOUT) as client:
            async with streamable_http_client(web.base + "/mcp", http_client=client) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    out[q] = await work(session)

    async def main():
        out = {}
        async with anyio.create_task_group() as tg:
            for q in queries:
                tg.start_soon(one, q, out)
        return out

    results = anyio.run(main)
    for q in queries:
        want = web.get("/api/search", params={"q": q, "k": 3}).json()
        assert results[q].structured_content == as_over_mcp(want)


@pytest.mark.slow
def test_add_finding_only_with_a_token(tiny_bundle_dir, tmp_path):
    server = WebServer("--bundle", str(tiny_bundle_dir), "--token", TOKEN,
                       env={"MATHLAS_DATA_DIR": str(tmp_path), "MATHLAS_FORMAL_BUNDLE": str(tmp_path / "none")})
    try:
        async def work(s):
            names = {t.name for t in (await s.list_tools()).tools}
            added = await s.call_tool("add_finding", {"statement": "Every group of order p^2 is abelian.",
                                                      "source_url": "https://example.org/p2"})
            found = await s.call_tool("search_existing_math", {"query": "group of order p^2 is abelian", "k": 5})
            return names, added, found

        names, added, found = mcp_session(server.base, work, token=TOKEN)
        assert names == stdio_tool_names()
        assert not added.is_error and added.structured_content["id"].startswith("finding:")
        assert any(h["id"].startswith("finding:") for h in found.structured_content["hits"])
        # without the token /mcp answers 401 before any MCP message is read
        r = httpx.post(server.base + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                       headers={"Accept": "application/json, text/event-stream"})
        assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
    finally:
        server.stop()
    assert_clean(server)


def sdk_refusal(base: str, headers: dict[str, str] | None = None, work=None) -> tuple[int, str]:
    """What the SDK's streamable-HTTP client raises when /mcp refuses a request: the JSON-RPC code
    and message an agent sees (it shows the message only when the refusal is a JSON-RPC error)."""
    from mcp.shared.exceptions import MCPError

    async def main():
        async with httpx.AsyncClient(headers=headers, timeout=TIMEOUT) as client:
            async with streamable_http_client(base + "/mcp", http_client=client) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    if work is not None:
                        await work(session)

    def first(e: BaseException) -> MCPError | None:  # the client's task group wraps it
        if isinstance(e, MCPError):
            return e
        return next(filter(None, map(first, getattr(e, "exceptions", ()))), None)

    with pytest.raises(BaseException) as caught:
        anyio.run(main)
    error = first(caught.value)
    assert error is not None, caught.value
    return error.error.code, error.error.message


@pytest.mark.slow
def test_the_sdk_client_sees_why_the_server_refused(tiny_bundle_dir, tmp_path):
    """401 without a token or with a wrong one, 403 for another page's origin, 421 for a name that is
    not this loopback server, 413 for a body over the limit: the SDK's client said only "Server
    returned an error response" for each, since mathlas sent {"error": ..., "status": ...}."""
    from mathlas.web.guard import NO_TOKEN, WRONG_TOKEN

    server = WebServer("--bundle", str(tiny_bundle_dir), "--token", TOKEN,
                       env={"MATHLAS_DATA_DIR": str(tmp_path), "MATHLAS_FORMAL_BUNDLE": str(tmp_path / "none")})
    good = {"Authorization": f"Bearer {TOKEN}"}

    async def too_big(session):
        await session.call_tool("search_existing_math", {"query": "ring " * 14_000})

    try:
        assert sdk_refusal(server.base) == (-32600, NO_TOKEN)
        assert sdk_refusal(server.base, {"Authorization": "Bearer not-the-token"}) == (-32600, WRONG_TOKEN)
        origin = sdk_refusal(server.base, {**good, "Origin": "http://evil.example"})
        assert origin[1].startswith("origin 'http://evil.example' may not call /mcp on this loopback server")
        host = sdk_refusal(server.base, {**good, "Host": "evil.example"})
        assert host[1].startswith("host 'evil.example' is not this loopback server")
        body = sdk_refusal(server.base, good, too_big)
        assert body[0] == -32600 and body[1].startswith("request body of ") and body[1].endswith("; at most 65536")
        names = mcp_session(server.base, lambda s: s.list_tools(), token=TOKEN)  # the token still opens it
        assert {t.name for t in names.tools} >= {"add_finding", "search_existing_math"}
    finally:
        server.stop()
    assert_clean(server)


@pytest.mark.slow
def test_no_formal_bundle_over_http_says_what_the_operator_can_do(tiny_bundle_dir, tmp_path):
    """A server with no formal bundle (none installed, no --formal-bundle): the Lean tools over /mcp,
    the Lean endpoints and the page's /api/bundles say the same line, what whoever runs the server can
    do, never the CLI's advice (`bundle=PATH`, $MATHLAS_FORMAL_BUNDLE), which this server refuses."""
    from test_web_api import LOCAL_ADVICE

    server = WebServer("--bundle", str(tiny_bundle_dir), env={"MATHLAS_DATA_DIR": str(tmp_path / "data")})
    try:
        async def work(s):
            return [await s.call_tool(name, args) for name, args in (
                ("search_formal_math", {"query": "add_comm"}),
                ("get_dependencies", {"id": "lean:Nat.add_comm"}),
                ("get_statement", {"id": "lean:Nat.add_comm"}),
                ("get_by_id", {"id": "lean:Nat.add_comm"}),
                ("search_formal_math", {"query": "add_comm", "bundle": "mathlib"}),     # a name it lacks
                ("search_formal_math", {"query": "add_comm", "bundle": "tiny"}),        # not a formal bundle
                ("search_formal_math", {"query": "add_comm", "bundle": "/tmp/some/formal-bundle"}))]

        answers = mcp_session(server.base, work)
        rest = [server.get(path).json() for path in ("/api/lean/search?q=add_comm", "/api/doc/lean:Nat.add_comm")]
        formal = server.get("/api/bundles").json()["formal"]
    finally:
        server.stop()
    assert_clean(server)
    line = ("this server has no formal (Lean) bundle: none is installed where it runs; whoever runs this server can "
            "build one on its machine with `mathlas index build-lean PATH`")
    assert all(a.is_error for a in answers)
    texts = [a.content[0].text for a in answers]
    for text in texts + [r["error"] for r in rest] + [formal["error"]]:
        assert line in text and "restart it with `mathlas serve --formal-bundle NAME_OR_DIR`" in text, text
        assert "\n" not in text and not [a for a in LOCAL_ADVICE if a in text], text
    assert all(r["status"] == 404 for r in rest)
    assert texts[4].startswith("Error executing tool search_formal_math: bundle 'mathlib' is not a bundle this server offers; ")
    assert "never a path" in texts[6] and "never a path" not in texts[4]
    assert formal["error"].endswith(formal["how_to_build"]) and formal["how_to_build"].startswith("whoever runs this server")


@pytest.mark.slow
def test_no_answer_over_http_shows_a_server_path(tiny_bundle_dir, tmp_path):
    """identify_sequence without OEIS data (no token needed), add_finding's store, funsearch's
    database, an error from the findings store: each names $MATHLAS_DATA_DIR, never the directory."""
    data = tmp_path / "server-data"
    server = WebServer("--bundle", str(tiny_bundle_dir), "--token", TOKEN,
                       env={"MATHLAS_DATA_DIR": str(data), "MATHLAS_FORMAL_BUNDLE": str(tmp_path / "none")})
    try:
        async def work(s):
            seq = await s.call_tool("identify_sequence", {"terms": [1, 1, 2, 3, 5, 8, 13]})
            added = await s.call_tool("add_finding", {"statement": "Every group of order p^2 is abelian.",
                                                      "source_url": "https://example.org/p2"})
            fs = await s.call_tool("funsearch", {"action": "status", "problem": "cap_set", "params": {"n": 3}})
            return seq, added, fs

        answers = mcp_session(server.base, work, token=TOKEN)
        seq, added, fs = answers
        assert "looked in $MATHLAS_DATA_DIR/oeis" in seq.structured_content["message"]
        assert added.structured_content["store"] == "$MATHLAS_DATA_DIR/findings/findings.jsonl"
        assert fs.structured_content["database"].startswith("$MATHLAS_DATA_DIR/funsearch/")
        for answer in answers:
            assert not answer.is_error
            shown = str(answer.structured_content) + "".join(c.text for c in answer.content)
            assert str(data) not in shown and str(tmp_path) not in shown
    finally:
        server.stop()
    assert_clean(server)
