"""The MCP server, end to end: the SDK's own stdio client talks to a real ``python -m mathlas.mcp``.

One server process (on the tiny bundle) serves most tests; the client runs on an event loop in a
background thread so tests stay plain functions. Any line on the server's stdout that is not a
JSON-RPC message reaches the client as an exception, which ``McpServer`` records; the server's
stderr goes to a file that must hold no traceback. The client validates every structured answer
against the tool's output schema. The characters an agent pays (tools/list, a search answer) are
checked in test_mcp_budget.py.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

SEARCH_TOOLS = {"search_existing_math", "get_by_id", "get_statement"}
SUMMARY_KEYS = {"id", "kind", "heading", "snippet", "score"}
HIT_KEYS = {"id", "source", "kind", "heading", "label", "context", "name", "title", "text", "link", "link_kind",
            "license", "score", "ranks", "fields", "also_in"}
WRITE_TOOLS = {"add_finding", "funsearch"}
FORMAL_TOOLS = {"search_formal_math", "get_dependencies"}  # listed only with a formal bundle
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
        self.params = StdioServerParameters(command=sys.executable, args=args or ["-m", "mathlas.mcp"],
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

    def pid(self) -> int:
        """The server's process id: the process with the marker ``server_env`` put in its
        environment whose parent has none (its workers inherit the marker)."""
        marker = f"MATHLAS_TEST_MARK={self.params.env['MATHLAS_TEST_MARK']}".encode()
        marked = set()
        for d in Path("/proc").iterdir():
            try:
                if d.name.isdigit() and marker in (d / "environ").read_bytes().split(b"\0"):
                    marked.add(int(d.name))
            except OSError:
                continue
        (pid,) = [p for p in marked if _processes().get(p, (None, ""))[0] not in marked]
        return pid

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


def _processes() -> dict[int, tuple[int, str]]:
    """Every process: pid -> (parent pid, command line)."""
    out = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
                out[int(d.name)] = (ppid, (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except (OSError, IndexError, ValueError):
                continue
    return out


def descendants(pid: int, procs: dict[int, tuple[int, str]] | None = None) -> dict[int, str]:
    """The processes below ``pid`` (children, grandchildren...): pid -> command line; ``procs``: a
    snapshot of ``_processes()`` to read (default: a new one)."""
    procs = _processes() if procs is None else procs
    out: dict[int, str] = {}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, (ppid, cmd) in procs.items():
            if ppid == parent and child not in out:
                out[child] = cmd
                frontier.append(child)
    return out


def server_env(**extra: str) -> dict[str, str]:
    env = {"MATHLAS_DATA_DIR": os.environ["MATHLAS_DATA_DIR"], "PYTHONUNBUFFERED": "1",
           "MATHLAS_TEST_MARK": uuid.uuid4().hex}
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
def srv(tiny_bundle_dir, formal_bundle_dir):
    """The tiny bundle, and the formal test bundle named, so that every tool is listed."""
    server = McpServer(server_env(MATHLAS_BUNDLE=str(tiny_bundle_dir), MATHLAS_FORMAL_BUNDLE=str(formal_bundle_dir)))
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

@pytest.mark.slow
def test_startup_imports_nothing_heavy():
    code = ("import asyncio, sys, mathlas.mcp.server as s; asyncio.run(s.build_server().list_tools()); "
            "heavy = [m for m in ('numpy', 'pyarrow', 'onnxruntime', 'sympy', 'tantivy', 'usearch') if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_initialize_and_list_tools_open_no_bundle(tmp_path):
    # An empty data dir and the default bundle: opening it would install it, so the dir stays empty
    # only if initialize and tools/list touch no bundle.
    server = McpServer(server_env(MATHLAS_DATA_DIR=str(tmp_path)))
    try:
        assert server.init.server_info.name == "mathlas"
        names = {t.name for t in server.run(server.session.list_tools()).tools}
        assert names >= SEARCH_TOOLS
        assert (names >= NUMERIC_TOOLS) == HAS_NUMERIC
        assert list(tmp_path.iterdir()) == []
        assert not server.stream_errors and "Traceback" not in server.stderr()
    finally:
        server.close()


@pytest.mark.slow
def test_every_tool_has_description_and_schemas(tool_list):
    for t in tool_list:
        assert t.description and len(t.description) > 40, t.name
        assert t.output_schema and t.output_schema.get("type") == "object", t.name
        assert t.input_schema["properties"], t.name
    for t in tool_list:  # the Args: lines of the docstring (else registry.SHARED_ARGS) describe every argument
        for name, prop in t.input_schema["properties"].items():
            assert prop.get("description"), f"{t.name}.{name} has no description"
    params = next(t for t in tool_list if t.name == "funsearch").input_schema["properties"]["params"]
    assert "cap_set {n: 1..8, default 8}" in params["description"]
    search = next(t for t in tool_list if t.name == "search_existing_math")
    assert search.input_schema["required"] == ["query"]
    assert {"query", "bundle", "mode", "hits", "next"} <= set(search.output_schema["properties"])


# ------------------------------------------------------------------------------ search_existing_math

def test_search_answers_with_summaries(srv, tool_list, tiny_bundle_dir):
    r = srv.call("search_existing_math", query="a finitely generated module over a ring", k=5)
    data = ok(r)
    assert data["bundle"] == "tiny-0.1.0" and data["mode"] == "hybrid"
    assert 1 <= len(data["hits"]) <= 5
    for h in data["hits"]:
        assert set(h) == SUMMARY_KEYS
        assert len(h["snippet"]) <= 160 and "\n" not in h["snippet"]
        assert h["score"] == round(h["score"], 4) and h["score"] > 0
        assert not h["snippet"].lower().startswith(h["heading"].lower())  # the heading is not said twice
    names = {t.name for t in tool_list}
    assert data["next"] and all(step["tool"] in names for step in data["next"])
    assert [s for s in data["next"] if s["tool"] == "get_by_id"] == [
        {"tool": "get_by_id", "arguments": {"id": data["hits"][0]["id"]}, "why": data["next"][0]["why"]}]
    # the text block is a listing, one line a hit, not the JSON again
    lines = r.content[0].text.splitlines()
    assert lines[0].startswith(f"Hits 1-{len(data['hits'])} (tiny-0.1.0, hybrid)")
    assert [line.split()[1] for line in lines[1:]] == [h["id"] for h in data["hits"]]
    assert all(line.startswith(f"{i}. ") for i, line in enumerate(lines[1:], 1))
    with pytest.raises(ValueError):
        json.loads(r.content[0].text)
    # the same through an explicit bundle argument
    again = ok(srv.call("search_existing_math", query="a finitely generated module over a ring", k=5,
                        bundle=str(tiny_bundle_dir)))
    assert again["hits"] == data["hits"]


def test_search_detail_full_is_the_library_shape(srv, tiny_bundle_dir):
    from mathlas.hit import summarize
    from mathlas.tools.informal import search_existing_math

    query, bundle = "a finitely generated module over a ring", str(tiny_bundle_dir)
    r = srv.call("search_existing_math", query=query, k=5, detail="full")
    full = ok(r)
    library = dataclasses.asdict(search_existing_math(query, k=5, bundle=bundle))
    assert full["hits"] == json.loads(json.dumps(library["hits"]))  # the library's hits, unchanged
    assert full["next"] == json.loads(json.dumps(library["next"]))
    for h in full["hits"]:
        assert set(h) == HIT_KEYS and h["id"].startswith(h["source"] + ":") and h["license"]
        assert set(h["ranks"]) == {"lexical", "dense"}
    summary = ok(srv.call("search_existing_math", query=query, k=5))
    assert summary["hits"] == [dataclasses.asdict(summarize(h)) for h in search_existing_math(query, k=5, bundle=bundle).hits]
    text = r.content[0].text.splitlines()
    assert all(h["link"] in line for h, line in zip(full["hits"], text[1:]) if h["link"])


def test_search_pages_with_offset(srv):
    ten = ok(srv.call("search_existing_math", query="ring module theorem", k=10))["hits"]
    page2 = srv.call("search_existing_math", query="ring module theorem", k=5, offset=5)
    assert ok(page2)["hits"] == ten[5:]
    assert page2.content[0].text.splitlines()[0].startswith("Hits 6-10 ")
    assert page2.content[0].text.splitlines()[1].startswith("6. ")
    assert ok(srv.call("search_existing_math", query="ring module theorem", k=3, offset=900))["hits"] == []


def test_search_filters_weights_and_modes(srv):
    def sources(hits):
        return {h["id"].split(":", 1)[0] for h in hits}

    only = ok(srv.call("search_existing_math", query="exercise", k=20, source_filter={"include": ["proofnet"]}))
    assert only["hits"] and sources(only["hits"]) == {"proofnet"}
    without = ok(srv.call("search_existing_math", query="theorem", k=20, source_filter={"exclude": ["stacks"]}))
    assert "stacks" not in sources(without["hits"])
    dropped = ok(srv.call("search_existing_math", query="exercise", k=20, source_weights={"proofnet": 0}))
    assert "proofnet" not in sources(dropped["hits"])
    lex = ok(srv.call("search_existing_math", query="ring", k=3, mode="lexical", detail="full"))
    assert all(h["ranks"]["dense"] is None for h in lex["hits"])
    defs = ok(srv.call("search_existing_math", query="definition", k=10, kinds=["definition"]))
    assert all(h["kind"] == "definition" for h in defs["hits"])


@pytest.mark.parametrize("arguments, message", [
    ({"query": "   "}, "query is empty"),
    ({"query": "ring", "k": 0}, "k must be an integer from 1 to 100, got 0"),
    ({"query": "ring", "k": 101}, "k must be an integer from 1 to 100, got 101"),
    ({"query": "ring", "k": "ten"}, "k"),
    ({"query": "ring", "offset": -1}, "offset must be an integer from 0 to 990"),
    ({"query": "ring", "k": 20, "offset": 990}, "offset must be an integer from 0 to 980"),
    ({"query": "ring", "detail": "some"}, "detail"),
    ({"query": "ring", "paper_filter": {"venue": "Annals"}}, "paper_filter has no key 'venue'"),
    ({"query": "ring", "source_filter": {"include": ["arxiv-nope"]}}, "unknown source 'arxiv-nope' in source_filter.include"),
    ({"query": "ring", "source_filter": {"exclude": ["nope"]}}, "unknown source 'nope' in source_filter.exclude"),
    ({"query": "ring", "source_filter": {"includes": ["stacks"]}}, "only the keys include and exclude"),
    ({"query": "ring", "source_weights": {"nope": 1.0}}, "unknown source 'nope' in source_weights"),
    ({"query": "ring", "source_weights": {"stacks": -1}}, "finite number >= 0"),
    ({"query": "ring", "mode": "fuzzy"}, "mode"),
    ({"query": "ring", "bundle": "no-such-bundle"}, "no bundle named 'no-such-bundle'"),
    ({"query": "ring", "bundle": "/nonexistent/dir"}, "no bundle directory"),
    ({}, "query"),
    # TheoremSearch's name for the filter: the SDK dropped unknown arguments and answered unfiltered
    ({"query": "ring", "sources": ["nosuch"]},
     "unknown argument 'sources' (did you mean 'source_filter', which takes {\"include\": [\"planetmath\"]"),
    # following that hint with a list: the error says the shape again
    ({"query": "ring", "source_filter": ["planetmath"]},
     "argument source_filter: Input should be a valid dictionary (got ['planetmath']); it takes {\"include\""),
    ({"query": "ring", "n_results": 3}, "unknown argument 'n_results' (did you mean 'k'?)"),
    ({"query": "ring", "kinds": ["theorm"]}, "unknown kind 'theorm' in kinds (did you mean 'theorem'?)"),
])
def test_search_bad_arguments_are_tool_errors(srv, arguments, message):
    text = error_text(srv.call("search_existing_math", **arguments))
    assert message in text
    assert "\n" not in text and "https://" not in text  # one line, no pydantic URL


def test_formal_tools_refuse_unknown_arguments(srv):
    text = error_text(srv.call("search_formal_math", query="prime", module=["Mathlib"]))
    assert "unknown argument 'module' (did you mean 'modules'?)" in text and "\n" not in text


def test_an_unknown_tool_names_the_closest_and_the_list(srv, tool_list):
    """The SDK answered `Unknown tool: nonexistent_tool` and nothing else."""
    names = [t.name for t in tool_list]
    typo = error_text(srv.call("search_existing_maths", query="ring"))
    assert typo.startswith("unknown tool 'search_existing_maths' (did you mean 'search_existing_math'?); ")
    assert typo.endswith("this server's tools: " + ", ".join(names)) and "\n" not in typo
    made_up = error_text(srv.call("nonexistent_tool"))
    assert made_up == "unknown tool 'nonexistent_tool'; this server's tools: " + ", ".join(names)


# ------------------------------------------------------------------------------ get_by_id

def test_get_by_id(srv, some_ids):
    d = ok(srv.call("get_by_id", id=some_ids[0]))
    assert d["id"] == some_ids[0] and d["bundle"] == "tiny-0.1.0"
    assert d["body"].strip() and d["license"] and d["text"]
    assert set(d) >= {"source", "kind", "heading", "label", "context", "name", "title", "slogan", "link", "fields"}


def test_get_statement_is_get_by_id_in_brief(srv, some_ids):
    doc = ok(srv.call("get_by_id", id=some_ids[0]))
    st = srv.call("get_statement", id=some_ids[0])
    assert ok(st) == {"id": doc["id"], "kind": doc["kind"], "heading": doc["heading"], "statement": doc["body"],
                      "link": doc["link"], "license": doc["license"]}
    assert len(st.content[0].text) < len(srv.call("get_by_id", id=some_ids[0]).content[0].text)
    assert "no document with id 'stacks:NOPE'" in error_text(srv.call("get_statement", id="stacks:NOPE"))


@pytest.mark.parametrize("arguments, message", [
    ({"id": "stacks:NOPE"}, "no document with id 'stacks:NOPE'"),
    ({"id": " "}, "an id is required"),
    ({}, "id"),
])
def test_get_by_id_bad_arguments(srv, arguments, message):
    assert message in error_text(srv.call("get_by_id", **arguments))


def test_unknown_tool_is_an_error(srv):
    assert "search_everything" in error_text(srv.call("search_everything", query="x"))


def test_unknown_prompt_is_invalid_params_in_one_log_line(srv):
    """prompts/get of a prompt the server does not have: JSON-RPC -32602, one log line, no traceback
    (the SDK answered code 0 and logged some 30 lines per request)."""
    from mcp.shared.exceptions import MCPError

    before = srv.stderr()
    for _ in range(2):
        with pytest.raises(MCPError) as e:
            srv.run(srv.session.get_prompt("nosuch"))
        assert e.value.error.code == -32602 and "unknown prompt 'nosuch'" in e.value.error.message
    new = srv.stderr()[len(before):]
    assert "Traceback" not in new and new.count("\n") == 2 and new.count("no prompt 'nosuch'") == 2, new


# ------------------------------------------------------------------------------ numeric tools

@pytest.mark.skipif(not HAS_NUMERIC, reason="mathlas.tools.numeric has not landed")
@pytest.mark.parametrize("tool, good, bad", [
    ("identify_constant", {"value": "1.6449340668482264364724151666460251892189499012068"}, {"value": "not a number"}),
    ("verify_numeric", {"expression": "pi^2/6", "value": "1.6449340668482264364724151666460251892"},
     {"expression": "__import__('os').system('echo pwned')", "value": "1"}),
    ("conjecture_relation", {"value": "1.41421356237309504880168872420969807856967187537694"}, {"value": "nan"}),
])
@pytest.mark.slow
def test_numeric_tools_good_and_bad(srv, tool, good, bad):
    assert ok(srv.call(tool, **good))
    assert error_text(srv.call(tool, **bad))


@pytest.mark.skipif(not HAS_NUMERIC, reason="mathlas.tools.numeric has not landed")
@pytest.mark.slow
def test_verify_numeric_reads_a_json_number_as_the_decimal_written(srv, tool_list):
    """A JSON number for value: it was read as 15 digits (3.14 as 3.14000000000000, an integer as a float),
    so pi against 3.14 was REFUTED and against "3.14" VERIFIED."""
    value = next(t for t in tool_list if t.name == "verify_numeric").input_schema["properties"]["value"]
    assert value["type"] == ["string", "number"]
    # the schema says what a number loses (the tool list's budget keeps it short: docs/numeric.md says the rest)
    assert "a string keeps trailing zeros" in value["description"]
    for expression, number, digits in (("pi", 3.14, 3), ("zeta(2)", 1.6449340668, 11), ("sqrt(2)", 1.41421356, 9),
                                       ("pi", 3, 1), ("pi", 3.1416, 5)):
        as_number = ok(srv.call("verify_numeric", expression=expression, value=number))
        as_string = ok(srv.call("verify_numeric", expression=expression, value=str(number)))
        assert (as_number["verdict"], as_number["digits"], as_number["digits_agreed"], as_number["right"]) == \
            ("VERIFIED", digits, digits, str(number)), as_number
        assert as_number | {"elapsed_s": 0} == as_string | {"elapsed_s": 0}
    whole = ok(srv.call("verify_numeric", expression="pi", value=3.0))  # sent as 3.0; a JavaScript client sends 3
    assert (whole["verdict"], whole["digits"], whole["right"]) == ("VERIFIED", 1, "3")
    refuted = ok(srv.call("verify_numeric", expression="pi", value=3.15))
    assert (refuted["verdict"], refuted["digits"], refuted["digits_agreed"]) == ("REFUTED", 3, 2)
    # a double past 15 digits (the nearest to log(3) reads 1.0986122886681098; log(3) = 1.09861228866810969...)
    double = ok(srv.call("verify_numeric", expression="log(3)", value=1.0986122886681098))
    assert (double["verdict"], double["digits"], double["right"]) == ("VERIFIED", 15, "1.0986122886681098")
    assert double["reason"].endswith("pass the value as a string to compare every digit")


# ------------------------------------------------------------------------------ load

@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_mcp_subcommand_logs_each_line_once(tiny_bundle_dir):
    """The mathlas command's stderr handler and the root handler the SDK installs both printed each
    line of the mathlas logger ("MCP server on stdio", "installing the default bundle")."""
    server = McpServer(server_env(), args=_mcp_command() + ["--bundle", str(tiny_bundle_dir)])
    try:
        server.run(server.session.list_tools())
        assert server.stderr().count("MCP server on stdio") == 1, server.stderr()
    finally:
        server.close()


@pytest.mark.slow
@pytest.mark.parametrize("args, env, code, line", [
    (["--bundle", "metamath"], {}, 1, "mathlas: cannot serve --bundle metamath: no bundle named 'metamath'; installed: "),
    (["--bundle", "/no/such/dir"], {}, 1, "mathlas: cannot serve --bundle /no/such/dir: no bundle directory at /no/such/dir"),
    ([], {"MATHLAS_BUNDLE": "nosuch"}, 1, "mathlas: cannot serve $MATHLAS_BUNDLE=nosuch: no bundle named 'nosuch'; "),
    (["--bundle", "bad@@x"], {}, 2, "mathlas: cannot serve --bundle bad@@x: 'bad@@x' is not NAME@VERSION"),
    (["--bundle", ""], {}, 2, "mathlas: cannot serve --bundle : empty bundle name; give a bundle name"),
])
def test_a_bundle_that_cannot_be_found_stops_the_server_at_start(tmp_path, args, env, code, line):
    """`mathlas mcp` (and `python -m mathlas.mcp`) refuses a bundle it cannot find as `mathlas serve`
    does: one line on stderr, exit 1 (2 for a malformed name), nothing on the protocol stream, and
    nothing written to the data directory. Given an open stdin, a server that started would wait."""
    for command in (_mcp_command(), ["-m", "mathlas.mcp"]):
        p = subprocess.run([sys.executable, *command, *args], env=server_env(MATHLAS_DATA_DIR=str(tmp_path), **env),
                           input="", capture_output=True, text=True, timeout=TIMEOUT)
        assert (p.returncode, p.stdout) == (code, ""), (command, p.stderr)
        assert p.stderr.startswith(line) and p.stderr.count("\n") == 1, (command, p.stderr)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_an_mcp_client_learns_of_a_missing_bundle_when_it_starts_the_server(tmp_path):
    """The docs' own example, `"args": ["mcp", "--bundle", "metamath"]`, with no such bundle: the
    client's initialize fails (the connection closes) and the server's stderr holds the one line."""
    errlog = (tmp_path / "stderr.txt").open("w+", encoding="utf-8")
    params = StdioServerParameters(command=sys.executable, args=_mcp_command() + ["--bundle", "metamath"],
                                   env=server_env(MATHLAS_DATA_DIR=str(tmp_path / "data")))

    async def start():
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()

    with pytest.raises(Exception) as e:
        asyncio.run(asyncio.wait_for(start(), TIMEOUT))
    assert not isinstance(e.value, TimeoutError), "the server did not stop"
    assert "Connection closed" in repr(e.value)
    errlog.seek(0)
    assert errlog.read().startswith("mathlas: cannot serve --bundle metamath: no bundle named 'metamath'")


@pytest.mark.slow
def test_mcp_subcommand_bundle_option(tiny_bundle_dir):
    server = McpServer(server_env(), args=_mcp_command() + ["--bundle", str(tiny_bundle_dir)])
    try:
        assert ok(server.call("search_existing_math", query="ring", k=2))["bundle"] == "tiny-0.1.0"
    finally:
        server.close()


@pytest.mark.slow
def test_a_stray_print_lands_on_stderr(tiny_bundle_dir):
    # A library that prints to stdout (or writes to fd 1 natively) inside a tool must not corrupt
    # the protocol stream: the stdio transport points fd 1 at stderr while it serves.
    shim = ("import os, sys, mathlas.engine as s, mathlas.mcp.server as srv; get = s.OPEN_BUNDLES.get; "
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
    # a pasted `theorem t binders : type` header is read; a whole theorem as statement is a tool error
    ("verify_formal", {"statement": "theorem t (a b : Nat) : a + b = b + a", "proof": "by omega"},
     {"statement": "theorem t : 1 = 1 := rfl", "proof": "rfl"}, "header"),
]


def test_every_registered_tool_is_listed(tool_list):
    """With a formal bundle named ($MATHLAS_FORMAL_BUNDLE), every tool (without one: below)."""
    from mathlas.tools import available_tool_names

    assert {t.name for t in tool_list} == set(available_tool_names())


@pytest.mark.slow
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
        # a bad term is counted from 1, as in the CLI (walk14)
        assert "term 2 of 3 is 'x'" in error_text(server.call("identify_sequence", terms=[1, "x", 3]))
        r = ok(server.call("verify_formal", statement="theorem t (a b : Nat) : a + b = b + a", proof="by omega"))
        assert r["header"].startswith("read `theorem t` as a header") and r["proof_status"] != "REFUTED"
        assert "snippet" in error_text(server.call("verify_formal", statement="theorem t : 1 = 1 := rfl", proof="rfl"))
        hits = ok(server.call("search_existing_math", query="group of order p^2 is abelian", k=5))["hits"]
        assert any(h["id"].startswith("finding:") for h in hits)  # the finding is searchable at once
        assert not server.stream_errors and "Traceback" not in server.stderr()
    finally:
        server.close()


@pytest.mark.slow
def test_formal_tools_over_stdio(formal_bundle_dir, tiny_bundle_dir):
    server = McpServer(server_env(MATHLAS_BUNDLE=str(tiny_bundle_dir), MATHLAS_FORMAL_BUNDLE=str(formal_bundle_dir)))
    try:
        r = ok(server.call("search_formal_math", query="prime two le", k=3, detail="full"))
        assert r["hits"][0]["id"] == "lean:Nat.Prime.two_le" and r["hits"][0]["fields"]["module"]
        summary = server.call("search_formal_math", query="prime two le", k=3)
        top = ok(summary)["hits"][0]
        assert set(top) == SUMMARY_KEYS | {"aliases"} and top["heading"] == "Nat.Prime.two_le"  # a Lean summary
        assert top["snippet"] and top["snippet"].removesuffix(" …") in r["hits"][0]["fields"]["signature"]
        assert summary.content[0].text.splitlines()[1].startswith("1. lean:Nat.Prime.two_le ")
        d = ok(server.call("get_dependencies", id="lean:Nat.Prime.two_le", direction="uses"))
        assert d["total"] > 0 and d["declarations"][0]["id"].startswith("lean:")
        doc = ok(server.call("get_by_id", id="lean:Nat.Prime.two_le"))
        assert doc["source"] == "lean" and "signature" in doc["fields"]
        assert "depth" in error_text(server.call("get_dependencies", id="lean:Nat.Prime.two_le", depth=99))
        assert "module" in error_text(server.call("search_formal_math", query="prime", modules=["No.Such"]))
    finally:
        server.close()


@pytest.mark.slow
def test_formal_tools_are_listed_only_with_a_formal_bundle(formal_bundle_dir, tiny_bundle_dir, tmp_path):
    """No formal bundle named or installed (a default install): the two formal tools are left out of
    tools/list, a call by name says how to build one or reads the bundle it names; a formal bundle
    installed while the server runs is listed from the next tools/list on, and searched."""
    from mathlas.tools import available_tool_names

    data = tmp_path / "data"
    server = McpServer(server_env(MATHLAS_BUNDLE=str(tiny_bundle_dir), MATHLAS_DATA_DIR=str(data)))
    try:
        names = {t.name for t in server.run(server.session.list_tools()).tools}
        assert names == set(available_tool_names()) - FORMAL_TOOLS  # verify_formal stays: it says how to get Lean
        text = error_text(server.call("search_formal_math", query="prime two le"))
        assert text.startswith("Error executing tool search_formal_math: no formal bundle is installed; build it with "
                               "`mathlas index build-lean PATH`"), text
        named = ok(server.call("search_formal_math", query="prime two le", k=3, bundle=str(formal_bundle_dir)))
        assert named["hits"][0]["id"] == "lean:Nat.Prime.two_le"
        shutil.copytree(formal_bundle_dir, data / "bundles" / formal_bundle_dir.name)  # what build-lean installs
        names = {t.name for t in server.run(server.session.list_tools()).tools}
        assert names == set(available_tool_names())
        assert ok(server.call("search_formal_math", query="prime two le", k=3))["hits"][0]["id"] == "lean:Nat.Prime.two_le"
        assert ok(server.call("get_dependencies", id="lean:Nat.Prime.two_le"))["total"] > 0
        assert not server.stream_errors and "Traceback" not in server.stderr()
    finally:
        server.close()


# ------------------------------------------------------------------------------ titles, annotations, schemas

def test_every_tool_has_a_title_and_annotations(tool_list):
    for t in tool_list:
        a = t.annotations
        assert t.title and a is not None, t.name
        assert a.open_world_hint is False, t.name  # nothing reaches beyond the machine
        assert a.read_only_hint is (t.name not in WRITE_TOOLS), t.name
    by_name = {t.name: t.annotations for t in tool_list}
    # add_finding stores a statement once: a write that changes nothing the second time
    assert by_name["add_finding"].idempotent_hint is True and by_name["add_finding"].destructive_hint is False
    # funsearch register appends to the archive (the sandbox also runs the agent's programs)
    assert by_name["funsearch"].idempotent_hint is False and by_name["funsearch"].destructive_hint is False


def test_input_schemas_are_precise(tool_list):
    from mathlas.ranking.filters import PaperFilter
    from mathlas.request import MODES
    from mathlas.tools.funsearch.problems import PROBLEMS

    schemas = {t.name: t.input_schema["properties"] for t in tool_list}
    search = schemas["search_existing_math"]
    assert (search["k"]["minimum"], search["k"]["maximum"]) == (1, 100)
    assert search["offset"]["minimum"] == 0 and search["detail"]["enum"] == ["summary", "full"]
    assert search["mode"]["enum"] == list(MODES)
    assert search["source_filter"]["additionalProperties"] is False
    assert set(search["source_filter"]["properties"]) == {"include", "exclude"}
    assert search["paper_filter"]["additionalProperties"] is False
    assert set(search["paper_filter"]["properties"]) == {f.name for f in dataclasses.fields(PaperFilter)}
    assert search["source_weights"]["additionalProperties"]["minimum"] == 0
    assert schemas["search_formal_math"]["k"]["maximum"] == 100
    assert schemas["get_dependencies"]["direction"]["enum"] == ["uses", "used_by"]
    assert schemas["funsearch"]["problem"]["enum"] == list(PROBLEMS)
    assert schemas["funsearch"]["action"]["enum"] == ["evaluate", "register", "status"]
    for t in tool_list:  # no auto titles, no null branches: compact
        assert '"title"' not in json.dumps(t.input_schema) and '"null"' not in json.dumps(t.input_schema), t.name


# The smallest valid call of each tool, for the bound checks below
BASE_CALLS = {
    "search_existing_math": {"query": "ring"}, "search_formal_math": {"query": "prime"},
    "get_dependencies": {"id": "lean:Nat.Prime.two_le"}, "identify_constant": {"value": "1.5"},
    "verify_numeric": {"claim": "1 = 1"}, "conjecture_relation": {"value": "1.4142135623730950488"},
    "search_directive": {"problem": "rings"}, "identify_sequence": {"terms": [1, 2, 3]},
    "funsearch": {"action": "status"}, "verify_formal": {"statement": "1 = 1", "proof": "rfl"},
}


def test_integer_bounds_in_the_schemas_are_the_servers(srv, tool_list):
    """Past either end of an advertised integer range, the server refuses the call, naming the argument
    (before any work: no bundle, worker or sandbox is needed for these calls to fail)."""
    checked = 0
    for t in tool_list:
        for name, prop in t.input_schema["properties"].items():
            if prop.get("type") != "integer" or t.name not in BASE_CALLS:
                continue
            outside = [prop["minimum"] - 1] if "minimum" in prop else []
            outside += [prop["maximum"] + 1] if "maximum" in prop else []
            for value in outside:
                text = error_text(srv.call(t.name, **{**BASE_CALLS[t.name], name: value}))
                assert name in text, (t.name, name, value, text)
                checked += 1
    assert checked >= 12


# ------------------------------------------------------------------------------ resources

def test_resources_documents_and_bundles(srv, some_ids, tiny_bundle_dir):
    from mcp.shared.exceptions import MCPError

    templates = {t.uri_template: t for t in srv.run(srv.session.list_resource_templates()).resource_templates}
    assert set(templates) == {"mathlas://doc/{id}", "mathlas://bundle/{name}"}
    assert all(t.mime_type == "application/json" and t.description for t in templates.values())

    doc = srv.run(srv.session.read_resource(f"mathlas://doc/{some_ids[0]}")).contents[0]
    assert json.loads(doc.text) == ok(srv.call("get_by_id", id=some_ids[0]))
    from urllib.parse import quote
    encoded = srv.run(srv.session.read_resource("mathlas://doc/" + quote(some_ids[1], safe=""))).contents[0]
    assert json.loads(encoded.text)["id"] == some_ids[1]

    bundle = json.loads(srv.run(srv.session.read_resource("mathlas://bundle/default")).contents[0].text)
    manifest = json.loads((tiny_bundle_dir / "manifest.json").read_text())
    assert (bundle["name"], bundle["version"], bundle["documents"]) == ("tiny", "0.1.0", manifest["count"])
    assert {k: v["count"] for k, v in bundle["sources"].items()} == {k: v["count"] for k, v in manifest["sources"].items()}
    assert all(v["license"] for v in bundle["sources"].values())
    assert bundle["encoder"]["dims"] == manifest["encoder"]["dims"] and "files" not in bundle

    with pytest.raises(MCPError, match="no document with id 'stacks:NOPE'"):
        srv.run(srv.session.read_resource("mathlas://doc/stacks:NOPE"))
    with pytest.raises(MCPError, match="no-such-bundle"):
        srv.run(srv.session.read_resource("mathlas://bundle/no-such-bundle"))


# ------------------------------------------------------------------------------ progress and cancellation

FAKE_LEAN = "#!/bin/sh\n# STAND-IN FOR `lean` that never finishes: the cancellation test stops it\nexec sleep 300\n"
LONG_CALLS = {
    # a program that never answers: the sandbox waits for it
    "funsearch": {"action": "evaluate", "program": "def priority(el, n):\n    while True:\n        pass\n",
                  "params": {"n": 3}, "timeout_s": 120},
    # the stand-in Lean sleeps
    "verify_formal": {"statement": "1 = 1", "proof": "rfl", "timeout_s": 120},
    # a number with no relation to find: the search runs to its time bound
    "conjecture_relation": {"value": "0." + "".join(str(int(hashlib.sha256(bytes([i])).hexdigest(), 16))
                                                    for i in range(3)),
                            "max_terms": 8, "cf_depth": 2000, "timeout": 120},
}


@pytest.fixture(scope="module")
def long_srv(tiny_bundle_dir, tmp_path_factory):
    lean = tmp_path_factory.mktemp("lean") / "lean"
    lean.write_text(FAKE_LEAN)
    lean.chmod(0o755)
    data = tmp_path_factory.mktemp("long-data")
    server = McpServer(server_env(MATHLAS_BUNDLE=str(tiny_bundle_dir), MATHLAS_LEAN=str(lean),
                                  MATHLAS_DATA_DIR=str(data)))
    yield server
    server.close()


def _workers(pid: int) -> dict[int, str]:
    """What runs below the server, less the numeric worker server (a pool, started once, kept)."""
    snapshot = _processes()  # one reading of /proc: a process exiting meanwhile is in it or not, never half
    procs = descendants(pid, snapshot)
    pool = {p for p, cmd in procs.items() if "numeric._zygote" in cmd and snapshot[p][0] == pid}
    return {p: cmd for p, cmd in procs.items() if p not in pool}


def _settled_workers(pid: int, seconds: float = 15.0) -> dict[int, str]:
    """``_workers(pid)`` once it is empty, or what is still there after ``seconds`` (a worker of the
    previous call may still be exiting when the next test starts)."""
    deadline = time.monotonic() + seconds
    while (left := _workers(pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.mark.parametrize("tool", list(LONG_CALLS))
@pytest.mark.slow
def test_long_call_reports_progress_and_stops_its_worker_when_cancelled(long_srv, tool):
    pid = long_srv.pid()
    assert _settled_workers(pid) == {}
    reports: list[tuple] = []

    async def call_then_cancel():
        seen = asyncio.Event()

        async def on_progress(progress, total, message):
            reports.append((progress, total, message))
            if len(reports) >= 2:
                seen.set()

        task = asyncio.create_task(long_srv.session.call_tool(tool, LONG_CALLS[tool], progress_callback=on_progress))
        await asyncio.wait_for(seen.wait(), 60)
        running = _workers(pid)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return running

    running = long_srv.run(call_then_cancel())
    assert running, "the call runs in a worker process"
    assert all(total and 0 <= done <= total and message for done, total, message in reports)
    left = _settled_workers(pid)
    assert left == {}, f"left behind: {left}"
    assert ok(long_srv.call("get_statement", id=ok(long_srv.call("search_existing_math", query="ring", k=1))
                            ["hits"][0]["id"]))  # the server goes on serving
    assert not long_srv.stream_errors and "Traceback" not in long_srv.stderr()


@pytest.mark.slow
def test_long_call_without_a_progress_token_just_answers(long_srv):
    r = ok(long_srv.call("verify_numeric", claim="pi^2/6 = sum_{n=1}^{inf} 1/n^2", digits=30))
    assert r["verdict"] == "VERIFIED"


# ------------------------------------------------------------------------------ over HTTP: what a client without the token meets

def test_over_http_without_a_token_a_writing_tool_says_it_needs_one(web):
    """`mathlas serve` without a token lists neither add_finding nor funsearch (docs/http.md); a client
    that calls one anyway learns why and what would serve it, where the SDK answered `Unknown tool`."""
    from mathlas.mcp.server import WRITES_WITHHELD
    from test_web_mcp import mcp_session

    calls = {"funsearch": {"action": "status"},
             "add_finding": {"statement": "Every group of order p^2 is abelian.", "source_url": "https://example.org/p2"}}

    async def work(s):
        names = {t.name for t in (await s.list_tools()).tools}
        return names, {name: await s.call_tool(name, args) for name, args in calls.items()}

    names, answers = mcp_session(web.base, work)
    assert not names & WRITE_TOOLS and names >= FORMAL_TOOLS  # the web fixture serves a formal bundle
    for name, r in answers.items():
        assert r.is_error and r.content[0].text == WRITES_WITHHELD.format(name=name)
        assert "mathlas serve --token T" in r.content[0].text and "Authorization: Bearer T" in r.content[0].text
