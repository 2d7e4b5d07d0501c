"""The MCP server, end to end: the SDK's own stdio client talks to a real ``python -m mathlas.server``.

One server process (on the tiny bundle) serves most tests; the client runs on an event loop in a
background thread so tests stay plain functions. Any line on the server's stdout that is not a
JSON-RPC message reaches the client as an exception, which ``McpServer`` records; the server's
stderr goes to a file that must hold no traceback.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

SEARCH_TOOLS = {"search_existing_math", "get_by_id"}
NUMERIC_TOOLS = {"identify_constant", "verify_numeric", "conjecture_relation"}


def _has_numeric() -> bool:
    try:
        mod = importlib.import_module("mathlas.tools.numeric")
    except ImportError:
        return False
    return all(callable(getattr(mod, name, None)) for name in NUMERIC_TOOLS)


HAS_NUMERIC = _has_numeric()
TIMEOUT = 120


class McpServer:
    """A real server subprocess and a connected ``ClientSession``, driven from synchronous tests."""

    def __init__(self, env: dict[str, str], args: list[str] | None = None):
        self.errlog = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
        self.stream_errors: list[Exception] = []
        self.params = StdioServerParameters(command=sys.executable, args=args or ["-m", "mathlas.server"],
                                            env=env, cwd=str(Path(__file__).parent))
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self._ready: concurrent.futures.Future = concurrent.futures.Future()
        self._stop: asyncio.Event | None = None
        self._holder = asyncio.run_coroutine_threadsafe(self._hold(), self.loop)
        try:
            self.session: ClientSession = self._ready.result(timeout=TIMEOUT)
        except BaseException:
            self.close()
            raise

    async def _on_message(self, message) -> None:
        if isinstance(message, Exception):  # e.g. a stdout line that is not JSON-RPC
            self.stream_errors.append(message)

    async def _hold(self) -> None:
        self._stop = asyncio.Event()
        try:
            async with stdio_client(self.params, errlog=self.errlog) as (read, write):
                async with ClientSession(read, write, message_handler=self._on_message) as session:
                    self.init = await session.initialize()
                    self._ready.set_result(session)
                    await self._stop.wait()
        except BaseException as e:
            if not self._ready.done():
                self._ready.set_exception(e)
            raise

    def run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=TIMEOUT)

    def call(self, tool: str, **arguments):
        return self.run(self.session.call_tool(tool, arguments))

    def stderr(self) -> str:
        self.errlog.flush()
        self.errlog.seek(0)
        return self.errlog.read()

    def close(self) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        try:
            self._holder.result(timeout=30)
        except Exception:  # noqa: BLE001 - a failed start already raised in __init__
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


def server_env(**extra: str) -> dict[str, str]:
    env = {"MATHLAS_DATA_DIR": os.environ["MATHLAS_DATA_DIR"], "PYTHONUNBUFFERED": "1"}
    for key in ("MATHLAS_ARTIFACTS", "HOME"):
        if key in os.environ:
            env[key] = os.environ[key]
    env.update(extra)
    return env


def ok(result) -> dict:
    assert not result.is_error, result.content[0].text if result.content else result
    assert result.structured_content is not None
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error, result.structured_content
    return result.content[0].text


@pytest.fixture(scope="module")
def srv(tiny_bundle_dir):
    server = McpServer(server_env(MATHLAS_BUNDLE=str(tiny_bundle_dir)))
    yield server
    server.close()


@pytest.fixture(scope="module")
def tool_list(srv):
    return srv.run(srv.session.list_tools()).tools


@pytest.fixture(scope="module")
def some_ids(srv):
    hits = ok(srv.call("search_existing_math", query="a theorem about rings", k=10))["hits"]
    assert len(hits) >= 3
    return [h["id"] for h in hits]


# ------------------------------------------------------------------------------ startup

def test_startup_imports_nothing_heavy():
    code = ("import sys, mathlas.server as s; s.build_server(); "
            "heavy = [m for m in ('numpy', 'pyarrow', 'onnxruntime', 'sympy', 'tantivy', 'usearch') if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_initialize_and_list_tools_open_no_bundle(tmp_path):
    # An empty data dir and the default bundle: opening it would install it, so the dir stays empty
    # only if initialize and tools/list touch no bundle.
    server = McpServer(server_env(MATHLAS_DATA_DIR=str(tmp_path)))
    try:
        assert server.init.server_info.name == "mathlas"
        names = {t.name for t in server.run(server.session.list_tools()).tools}
        assert SEARCH_TOOLS <= names
        assert (NUMERIC_TOOLS <= names) == HAS_NUMERIC
        assert list(tmp_path.iterdir()) == []
        assert not server.stream_errors and "Traceback" not in server.stderr()
    finally:
        server.close()


def test_every_tool_has_description_and_schemas(tool_list):
    for t in tool_list:
        assert t.description and len(t.description) > 40, t.name
        assert t.output_schema and t.output_schema.get("type") == "object", t.name
        assert t.input_schema["properties"], t.name
    for t in tool_list:  # the Args: lines of the docstring describe each argument
        if t.name in SEARCH_TOOLS:
            for name, prop in t.input_schema["properties"].items():
                assert prop.get("description"), f"{t.name}.{name} has no description"
    search = next(t for t in tool_list if t.name == "search_existing_math")
    assert search.input_schema["required"] == ["query"]
    assert {"query", "bundle", "mode", "hits", "next"} <= set(search.output_schema["properties"])


# ------------------------------------------------------------------------------ search_existing_math

def test_search_hits_and_next(srv, tool_list, tiny_bundle_dir):
    r = ok(srv.call("search_existing_math", query="a finitely generated module over a ring", k=5))
    assert r["bundle"] == "tiny-0.1.0" and r["mode"] == "hybrid"
    assert 1 <= len(r["hits"]) <= 5
    for h in r["hits"]:
        assert set(h) == {"id", "source", "kind", "name", "title", "text", "link", "license", "score", "ranks",
                          "fields"}
        assert h["id"].startswith(h["source"] + ":") and h["license"]
        assert set(h["ranks"]) == {"lexical", "dense"}
    names = {t.name for t in tool_list}
    assert r["next"] and all(step["tool"] in names for step in r["next"])
    assert r["next"][0] == {"tool": "get_by_id", "arguments": {"id": r["hits"][0]["id"]},
                            "why": r["next"][0]["why"]}
    # the same through an explicit bundle argument
    again = ok(srv.call("search_existing_math", query="a finitely generated module over a ring", k=5,
                        bundle=str(tiny_bundle_dir)))
    assert [h["id"] for h in again["hits"]] == [h["id"] for h in r["hits"]]


def test_search_filters_weights_and_modes(srv):
    only = ok(srv.call("search_existing_math", query="exercise", k=20, source_filter={"include": ["proofnet"]}))
    assert only["hits"] and {h["source"] for h in only["hits"]} == {"proofnet"}
    without = ok(srv.call("search_existing_math", query="theorem", k=20, source_filter={"exclude": ["stacks"]}))
    assert all(h["source"] != "stacks" for h in without["hits"])
    dropped = ok(srv.call("search_existing_math", query="exercise", k=20, source_weights={"proofnet": 0}))
    assert all(h["source"] != "proofnet" for h in dropped["hits"])
    lex = ok(srv.call("search_existing_math", query="ring", k=3, mode="lexical"))
    assert all(h["ranks"]["dense"] is None for h in lex["hits"])
    defs = ok(srv.call("search_existing_math", query="definition", k=10, kinds=["definition"]))
    assert all(h["kind"] == "definition" for h in defs["hits"])


@pytest.mark.parametrize("arguments, message", [
    ({"query": "   "}, "query is empty"),
    ({"query": "ring", "k": 0}, "k must be an integer from 1 to 1000"),
    ({"query": "ring", "k": 1001}, "k must be an integer from 1 to 1000"),
    ({"query": "ring", "k": "ten"}, "k"),
    ({"query": "ring", "source_filter": {"include": ["arxiv-nope"]}}, "unknown source 'arxiv-nope' in source_filter.include"),
    ({"query": "ring", "source_filter": {"exclude": ["nope"]}}, "unknown source 'nope' in source_filter.exclude"),
    ({"query": "ring", "source_filter": {"includes": ["stacks"]}}, "only the keys include and exclude"),
    ({"query": "ring", "source_weights": {"nope": 1.0}}, "unknown source 'nope' in source_weights"),
    ({"query": "ring", "source_weights": {"stacks": -1}}, "finite number >= 0"),
    ({"query": "ring", "mode": "fuzzy"}, "mode"),
    ({"query": "ring", "bundle": "no-such-bundle"}, "no bundle named 'no-such-bundle'"),
    ({"query": "ring", "bundle": "/nonexistent/dir"}, "no bundle directory"),
    ({}, "query"),
])
def test_search_bad_arguments_are_tool_errors(srv, arguments, message):
    assert message in error_text(srv.call("search_existing_math", **arguments))


# ------------------------------------------------------------------------------ get_by_id

def test_get_by_id(srv, some_ids):
    d = ok(srv.call("get_by_id", id=some_ids[0]))
    assert d["id"] == some_ids[0] and d["bundle"] == "tiny-0.1.0"
    assert d["body"].strip() and d["license"] and d["text"]
    assert set(d) >= {"source", "kind", "name", "title", "slogan", "link", "fields"}


@pytest.mark.parametrize("arguments, message", [
    ({"id": "stacks:NOPE"}, "no document with id 'stacks:NOPE'"),
    ({"id": " "}, "an id is required"),
    ({}, "id"),
])
def test_get_by_id_bad_arguments(srv, arguments, message):
    assert message in error_text(srv.call("get_by_id", **arguments))


def test_unknown_tool_is_an_error(srv):
    assert "search_everything" in error_text(srv.call("search_everything", query="x"))


# ------------------------------------------------------------------------------ numeric tools

@pytest.mark.skipif(not HAS_NUMERIC, reason="mathlas.tools.numeric has not landed")
@pytest.mark.parametrize("tool, good, bad", [
    ("identify_constant", {"value": "1.6449340668482264364724151666460251892189499012068"}, {"value": "not a number"}),
    ("verify_numeric", {"expression": "pi^2/6", "value": "1.6449340668482264364724151666460251892"},
     {"expression": "__import__('os').system('echo pwned')", "value": "1"}),
    ("conjecture_relation", {"value": "1.41421356237309504880168872420969807856967187537694"}, {"value": "nan"}),
])
def test_numeric_tools_good_and_bad(srv, tool, good, bad):
    assert ok(srv.call(tool, **good))
    assert error_text(srv.call(tool, **bad))


# ------------------------------------------------------------------------------ load

def test_200_sequential_calls(srv, some_ids):
    words = ["ring", "module", "compact", "prime ideal", "exercise", "theorem", "group", "set", "logic", "proof"]
    for i in range(200):
        kind = i % 4
        if kind == 3:
            assert error_text(srv.call("search_existing_math", query="ring", k=0))
        elif kind == 2:
            assert ok(srv.call("get_by_id", id=some_ids[i % len(some_ids)]))["id"] == some_ids[i % len(some_ids)]
        else:
            r = ok(srv.call("search_existing_math", query=f"{words[i % len(words)]} {i}", k=1 + i % 7))
            assert len(r["hits"]) <= 1 + i % 7


def test_20_concurrent_calls(srv):
    queries = [f"{w} number {i}" for i, w in enumerate(["ring", "module", "field", "compact set", "ideal"] * 4)]
    sequential = [[h["id"] for h in ok(srv.call("search_existing_math", query=q, k=5))["hits"]] for q in queries]

    async def burst():
        return await asyncio.gather(*(srv.session.call_tool("search_existing_math", {"query": q, "k": 5})
                                      for q in queries))

    results = srv.run(burst())
    assert [[h["id"] for h in ok(r)["hits"]] for r in results] == sequential


def test_no_stdout_noise_and_no_tracebacks(srv):
    assert srv.stream_errors == []
    err = srv.stderr()
    assert "Traceback" not in err, err[-3000:]


# ------------------------------------------------------------------------------ the mcp subcommand, the default bundle

def _mcp_command() -> list[str]:
    """``mathlas mcp``, as ``python -m mathlas mcp``."""
    return ["-m", "mathlas", "mcp"]


def test_default_bundle_serves_a_search():
    from mathlas.releases.catalog import shipped
    from mathlas.releases.install import DEFAULT_BUNDLE, installed

    if not any(r.name == DEFAULT_BUNDLE for r in shipped()) and not any(b.name == DEFAULT_BUNDLE for b in installed()):
        pytest.skip("no default bundle shipped in artifacts/ or installed")
    server = McpServer(server_env(), args=_mcp_command())
    try:
        r = ok(server.call("search_existing_math",
                           query="a finitely generated module M over a local ring with M = mM is zero", k=5))
        assert r["bundle"].startswith(DEFAULT_BUNDLE + "-") and r["hits"]
        assert not server.stream_errors and "Traceback" not in server.stderr()
    finally:
        server.close()


def test_mcp_subcommand_bundle_option(tiny_bundle_dir):
    server = McpServer(server_env(), args=_mcp_command() + ["--bundle", str(tiny_bundle_dir)])
    try:
        assert ok(server.call("search_existing_math", query="ring", k=2))["bundle"] == "tiny-0.1.0"
    finally:
        server.close()


def test_a_stray_print_lands_on_stderr(tiny_bundle_dir):
    # A library that prints to stdout (or writes to fd 1 natively) inside a tool must not corrupt
    # the protocol stream: the stdio transport points fd 1 at stderr while it serves.
    shim = ("import os, sys, mathlas.engine as s, mathlas.server as srv; get = s.OPEN_BUNDLES.get; "
            "s.OPEN_BUNDLES.get = lambda spec=None: (print('NOISE-PRINT'), os.write(1, b'NOISE-FD\\n'), get(spec))[2]; "
            "sys.exit(srv.main())")
    server = McpServer(server_env(MATHLAS_BUNDLE=str(tiny_bundle_dir)), args=["-c", shim])
    try:
        assert ok(server.call("search_existing_math", query="ring", k=2))["hits"]
        assert server.stream_errors == []
        err = server.stderr()
        assert "NOISE-PRINT" in err and "NOISE-FD" in err
    finally:
        server.close()


# ------------------------------------------------------------------------------ the rest of the toolbox

TOOLBOX_CALLS = [
    ("identify_sequence", {"terms": [1, 1, 2, 3, 5, 8]}, {"terms": []}, "data_available"),
    ("applicability_checklist", {"statement": "Let $R$ be a local ring and $M$ a finite $R$-module. "
                                              "If $\\mathfrak m M = M$ then $M = 0$."},
     {"statement": "   "}, "preconditions"),
    ("mapping_scaffold", {"problem": "Show that a finitely generated module M over a local ring with mM = M is zero.",
                          "candidate": "Let $R$ be a local ring and $M$ a finite $R$-module. If $\\mathfrak m M = M$ then $M = 0$."},
     {"problem": "", "candidate": "x"}, "questions"),
    ("search_directive", {"problem": "finitely generated modules over Noetherian local rings"}, {"problem": ""},
     "named_results"),
    ("add_finding", {"statement": "Every group of order p^2 is abelian.", "source_url": "https://example.org/p2"},
     {"statement": "x", "source_url": "not a url"}, "id"),
    ("funsearch", {"action": "evaluate", "program": "def priority(el, n):\n    return 0\n", "params": {"n": 2}},
     {"action": "delete"}, "evaluation"),
    # without Lean the good call is UNDETERMINED (with install steps); the bad one lacks its proof
    ("verify_formal", {"statement": "∀ a b : Nat, a + b = b + a", "proof": "fun a b => Nat.add_comm a b"},
     {"statement": "1 = 1"}, "proof_status"),
]


def test_every_registered_tool_is_listed(tool_list):
    from mathlas.tools import available_tool_names

    assert {t.name for t in tool_list} == set(available_tool_names())


def test_toolbox_tools_good_and_bad_over_mcp(tiny_bundle_dir, tmp_path):
    """Each issue-4 tool answers a good call with structured content and a bad one with a tool error.
    Its own server and data dir: add_finding writes a store that must not leak into other tests."""
    server = McpServer(server_env(MATHLAS_BUNDLE=str(tiny_bundle_dir), MATHLAS_DATA_DIR=str(tmp_path)))
    try:
        names = {t.name for t in server.run(server.session.list_tools()).tools}
        assert {t for t, *_ in TOOLBOX_CALLS} <= names
        for tool, good, bad, key in TOOLBOX_CALLS:
            assert key in ok(server.call(tool, **good)), tool
            assert error_text(server.call(tool, **bad)), tool
        hits = ok(server.call("search_existing_math", query="group of order p^2 is abelian", k=5))["hits"]
        assert any(h["id"].startswith("finding:") for h in hits)  # the finding is searchable at once
        assert not server.stream_errors and "Traceback" not in server.stderr()
    finally:
        server.close()


def test_formal_tools_over_stdio(formal_bundle_dir, tiny_bundle_dir):
    server = McpServer(server_env(MATHLAS_BUNDLE=str(tiny_bundle_dir), MATHLAS_FORMAL_BUNDLE=str(formal_bundle_dir)))
    try:
        r = ok(server.call("search_formal_math", query="prime two le", k=3))
        assert r["hits"][0]["id"] == "lean:Nat.Prime.two_le" and r["hits"][0]["fields"]["module"]
        d = ok(server.call("get_dependencies", id="lean:Nat.Prime.two_le", direction="uses"))
        assert d["total"] > 0 and d["declarations"][0]["id"].startswith("lean:")
        doc = ok(server.call("get_by_id", id="lean:Nat.Prime.two_le"))
        assert doc["source"] == "lean" and "signature" in doc["fields"]
        assert "depth" in error_text(server.call("get_dependencies", id="lean:Nat.Prime.two_le", depth=99))
        assert "module" in error_text(server.call("search_formal_math", query="prime", modules=["No.Such"]))
    finally:
        server.close()


def test_formal_tools_without_a_formal_bundle_say_how_to_build_one(tmp_path):
    server = McpServer(server_env(MATHLAS_DATA_DIR=str(tmp_path)))
    try:
        assert "build-lean" in error_text(server.call("search_formal_math", query="prime two le"))
    finally:
        server.close()
