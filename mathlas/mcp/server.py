"""The MCP stdio server: ``python -m mathlas.mcp`` or ``mathlas mcp``.

A thin adapter, and with the HTTP app that mounts it (``mathlas.web.app``) the only module that imports the
``mcp`` SDK. The tools are the plain typed functions of
``mathlas.tools`` (``TOOL_MODULES``); this module registers each one, so its signature is the input
schema and its dataclass return type the output schema (clients get structured content). What the
adapter adds, with the per-tool facts of ``mathlas.mcp.registry``:

* each tool's docstring becomes its description and the ``Args:`` lines describe its arguments;
  schemas are compacted and refined (bounds, enums, the keys of filter objects), tools get a title
  and annotations (``readOnlyHint`` on every tool that only reads);
* the search tools answer with summaries (``mathlas.hit.summarize``) unless ``detail="full"``, take
  ``k`` up to ``request.SURFACE_MAX_K`` and page with ``offset``; their text block is a listing, one line a hit
  (``mathlas.mcp.text``); other tools' text block is their JSON, compact;
* long tools (``verify_formal``, ``funsearch``, the numeric tools) send ``notifications/progress``
  while they run, when the client asked for them with a progress token, and a cancelled call
  (``notifications/cancelled``) stops the worker process at once (``mathlas.progress``);
* resources: ``mathlas://doc/{id}`` (a document, as get_by_id) and ``mathlas://bundle/{name}`` (a
  bundle's manifest in brief; ``default`` is the bundle the tools use when none is named);
* ``tools/list`` names what can answer here: the tools that need a formal bundle only when there is
  one, and a call of a tool removed from an HTTP server without a token says why (``MathlasServer``);
* a ``MathlasError`` raised by a tool (bad input, unknown id, missing bundle) becomes a tool error
  result (``isError: true``) carrying the error's own message; anything else is a crash the SDK
  logs with its traceback on stderr while the client gets a generic tool error. The server lives on;
* over HTTP (``hide_paths``) every answer, error and resource shows the data directory as
  ``$MATHLAS_DATA_DIR`` and the home directory as ``~`` (``mathlas.paths.without_local_paths``, as
  the REST errors do): a client learns nothing of the server's disk. Over stdio the client is the
  local user's, and real paths are what it needs.

Startup stays light: ``initialize`` and ``tools/list`` open no bundle and load no model (``tools/list``
reads the installed bundles' manifests, to know whether a formal one is there). Open bundles
are shared by all calls through ``mathlas.engine.open_bundle`` (the process-wide cache of open
bundles rather than the server's lifespan context, so the Python API and the server share one
mechanism and the tools keep signatures that are exactly their schemas). Sync tools run on worker
threads, so concurrent calls overlap; ``Bundle`` is thread-safe.

stdout carries only protocol messages: the SDK's stdio transport serves the wire from a private copy
of file descriptor 1 and points fd 1 itself at stderr, so a stray ``print`` (or a native library
writing to fd 1) lands on stderr. Logging goes to stderr.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Callable
from typing import Annotated, Any

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import (
    ResourceError,
    ResourceNotFoundError,
    ToolError,
)
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent, ToolAnnotations
from pydantic import ValidationError

from mathlas import __version__
from mathlas.mcp import registry
from mathlas.checks import integer
from mathlas.errors import MathlasError, UsageError
from mathlas.logs import LOG_LEVELS, StderrHandler
from mathlas.request import SURFACE_MAX_K
from mathlas.mcp.text import compact_json, render

log = logging.getLogger(__name__)

SERVER_NAME = "mathlas"
INSTRUCTIONS = (
    "mathlas searches known mathematics offline and checks numeric claims, without any LLM. "
    "Before proving something, call search_existing_math to see whether it is already known; "
    "call get_statement or get_by_id on a promising hit for its statement, source and license. "
    "Results are data for you to judge: a hit is a candidate, not a verdict."
)
CANCEL_WAIT_S = 30.0  # how long a cancelled call may take to stop its worker (it polls every progress.TICK)

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_ARG_LINE = re.compile(r"^\s+(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def split_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """A Google-style docstring as (description, {argument: description}).

    The description is everything before ``Args:``; argument descriptions may continue on more
    deeply indented lines. Sections after ``Args:`` (``Returns:``...) end the argument list.
    """
    lines = inspect.cleandoc(doc or "").splitlines()
    head: list[str] = []
    args: dict[str, str] = {}
    current: str | None = None
    in_args = False
    for line in lines:
        if _ARGS_HEADER.match(line):
            in_args = True
            continue
        if in_args:
            if line and not line[0].isspace():  # another section begins
                in_args = False
                head.append(line)
                continue
            m = _ARG_LINE.match(line)
            if m and (current is None or len(line) - len(line.lstrip()) <= 4):
                current = m.group(1)
                args[current] = m.group(2).strip()
            elif current and line.strip():
                args[current] += " " + line.strip()
            continue
        head.append(line)
    paragraphs = "\n".join(head).strip().split("\n\n")  # lines joined: a newline costs a client 2 characters
    return "\n\n".join(" ".join(p.split()) for p in paragraphs), args


def _answer(name: str, result: Any, arguments: dict[str, Any], hide_paths: bool = False) -> CallToolResult:
    """A tool's result as the client gets it: structured content, and its text rendering."""
    data = dataclasses.asdict(result) if dataclasses.is_dataclass(result) else result
    structured = json.loads(compact_json(data))  # plain JSON types only (no tuples, no NaN)
    if hide_paths:
        structured = _without_paths(structured)
    return CallToolResult(content=[TextContent(type="text", text=render(name, structured, arguments))],
                          structured_content=structured)


def _without_paths(data: Any) -> Any:
    """``data`` (JSON) with every string's local directories named, not shown (``hide_paths``)."""
    from mathlas.paths import without_local_paths

    if isinstance(data, str):
        return without_local_paths(data)
    if isinstance(data, list):
        return [_without_paths(x) for x in data]
    if isinstance(data, dict):
        return {k: _without_paths(v) for k, v in data.items()}
    return data


def _message(text: str, hide_paths: bool) -> str:
    from mathlas.paths import without_local_paths

    return without_local_paths(text) if hide_paths else text


# A policy for the tools' ``bundle`` argument: (tool name, the value the client sent, the call's
# other arguments) -> the bundle spec to open, or a ``UsageError``. The stdio server has none (a local client may name any path);
# the HTTP server passes one that allows only the bundles it serves (mathlas.web).
BundlePolicy = Callable[[str, Any, dict], Any]


def _caller(fn: Callable[..., Any], bundle_policy: BundlePolicy | None = None,
            hide_paths: bool = False) -> Callable[..., CallToolResult]:
    """``fn`` called as MCP calls it: a search tool takes ``detail`` and at most ``SURFACE_MAX_K`` hits;
    the ``bundle`` argument goes through ``bundle_policy`` when there is one; a ``MathlasError``
    becomes a ``ToolError`` with its message and no traceback; ``hide_paths``: local directories
    named, not shown, in the answer."""
    name = fn.__name__
    search = name in registry.ANSWERS
    takes_bundle = "bundle" in inspect.signature(fn).parameters

    def call(**kwargs: Any) -> CallToolResult:
        try:
            detail = kwargs.pop("detail", "summary")
            if search:  # fewer hits per answer than the library allows; offset pages on
                integer(kwargs.get("k", 10), "k", 1, SURFACE_MAX_K)
            if bundle_policy is not None and takes_bundle:
                kwargs["bundle"] = bundle_policy(name, kwargs.get("bundle"), kwargs)
            result = fn(**kwargs)
            if search:
                result = registry.search_answer(name, result, detail)
        except MathlasError as e:
            raise ToolError(_message(str(e), hide_paths)) from None
        return _answer(name, result, kwargs, hide_paths)

    return call


async def _run_long(call: Callable[[], CallToolResult], ctx: Context) -> CallToolResult:
    """Run a long tool on a worker thread: its progress goes to the client as progress
    notifications (when the client sent a progress token; else ``report_progress`` does nothing),
    and if the client cancels, the worker is told (``progress.Call.cancel``) and waited for, so it
    kills its child process before the cancellation goes on."""
    from mathlas.progress import Call, running

    def on_progress(done: float, total: float | None, message: str | None) -> None:  # on the worker thread
        anyio.from_thread.run(ctx.report_progress, done, total, message)

    job = Call(on_progress=on_progress)
    finished = threading.Event()

    def work() -> CallToolResult:
        try:
            with running(job):
                return call()
        finally:
            finished.set()

    try:
        return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        job.cancel()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(finished.wait, CANCEL_WAIT_S)
        raise


def _adapt(fn: Callable[..., Any], bundle_policy: BundlePolicy | None = None,
           hide_paths: bool = False) -> Callable[..., Any]:
    """The function the SDK registers for ``fn``: the same parameters (plus ``detail`` for the
    search tools, plus the SDK's ``Context`` for long tools), returning a ``CallToolResult`` whose
    structured content has ``fn``'s result type (or its MCP answer type) as output schema."""
    sig = inspect.signature(fn, eval_str=True)
    name = fn.__name__
    facts = registry.facts(name)
    returns = registry.ANSWERS.get(name, sig.return_annotation)
    params = list(sig.parameters.values())
    if name in registry.ANSWERS:
        params.append(inspect.Parameter("detail", inspect.Parameter.KEYWORD_ONLY, default="summary",
                                        annotation=registry.Detail))
    call = _caller(fn, bundle_policy, hide_paths)
    if facts.long:
        async def adapted(ctx: Context, **kwargs: Any) -> CallToolResult:
            return await _run_long(functools.partial(call, **kwargs), ctx)

        params.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context))
        adapted.__annotations__ = {"ctx": Context}  # how the SDK finds the context parameter
    else:
        def adapted(**kwargs: Any) -> CallToolResult:
            return call(**kwargs)

        adapted.__annotations__ = {}
    adapted.__name__ = adapted.__qualname__ = name
    adapted.__doc__ = fn.__doc__
    adapted.__signature__ = sig.replace(parameters=params,  # type: ignore[attr-defined]
                                        return_annotation=Annotated[CallToolResult, returns])
    return adapted


class CheckedTool(Tool):
    """A tool that refuses what the SDK lets through or words at length: an argument its schema does
    not name (the SDK would drop it silently: ``sources`` for ``source_filter`` returned unfiltered
    hits) and a schema error (pydantic's text runs to several lines and a URL); each becomes one
    line naming the argument and, where there is an obvious one, the right name. With
    ``hide_paths`` (HTTP), no error shows a local directory, whatever raised it."""

    hide_paths: bool = False

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        known = set(self.parameters.get("properties", {}))
        unknown = sorted(set(arguments or {}) - known)
        if unknown:
            raise ToolError(f"Error executing tool {self.name}: {unknown_arguments(unknown, known)}")
        try:
            return await super().run(arguments, context, convert_result)
        except ToolError as e:
            cause = e.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(f"Error executing tool {self.name}: {validation_line(cause)}") from None
            if self.hide_paths:
                raise ToolError(_message(str(e), True)) from cause
            raise


# What clients of other search APIs call mathlas's arguments (TheoremSearch, the HTTP API, the CLI)
ARGUMENT_ALIASES = {"sources": "source_filter", "source": "source_filter", "exclude": "source_filter",
                    "exclude_sources": "source_filter", "n_results": "k", "limit": "k", "top_k": "k", "n": "k",
                    "types": "kinds", "kind": "kinds", "type": "kinds", "module": "modules", "q": "query",
                    "text": "query", "doc_id": "id", "theorem_id": "id"}


# The shape of an object argument, said where a call got it wrong (a list for source_filter: the hint
# "did you mean 'source_filter'?" for "sources" must not lead to a second failure)
SHAPES = {"source_filter": '{"include": ["planetmath"], "exclude": ["metamath"]} (either key may be left out)',
          "source_weights": '{"stacks": 2.0, "napkin": 0.5}', "kind_weights": '{"proof": 0.5, "example": 0.8}'}


def unknown_arguments(unknown: list[str], known: set[str]) -> str:
    """One line: the arguments a tool does not take, each with the right one where it is obvious."""
    import difflib

    parts = []
    for name in unknown:
        right = ARGUMENT_ALIASES.get(name)
        if right not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
            right = close[0] if close else None
        shape = f", which takes {SHAPES[right]}" if right in SHAPES else ""
        parts.append(f"{name!r}" + (f" (did you mean {right!r}{shape}?)" if right else ""))
    return (f"unknown argument{'s' if len(parts) > 1 else ''} {', '.join(parts)}; "
            f"this tool takes: {', '.join(sorted(known))}")


def unknown_tool(name: Any, listed: list[str]) -> str:
    """One line for a call of a tool this server does not have (the SDK says only ``Unknown tool: X``):
    the closest listed name, where one is close, and the tools it lists."""
    import difflib

    shown = str(name)[:100]
    close = difflib.get_close_matches(shown.lower(), listed, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown tool {shown!r}{hint}; this server's tools: {', '.join(listed)}"


def validation_line(exc: ValidationError) -> str:
    """A pydantic ``ValidationError`` as one line: ``argument k: Input should be a valid integer (got 'x')``."""
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(x) for x in err.get("loc", ()) if x != "arguments") or "arguments"
        got = err.get("input")
        shown = repr(got)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        shape = f"; it takes {SHAPES[where]}" if where in SHAPES and err.get("type") == "dict_type" else ""
        parts.append(f"argument {where}: {err.get('msg', 'invalid')}"
                     + ("" if err.get("type") == "missing" else f" (got {shown})") + shape)
    return "; ".join(parts) or "the arguments do not match the tool's schema"


def make_tool(fn: Callable[..., Any], bundle_policy: BundlePolicy | None = None, hide_paths: bool = False) -> Tool:
    """An MCP tool for a plain typed tool function, with compact schemas, a title and annotations;
    ``bundle_policy``: what the tool's ``bundle`` argument may name (see ``BundlePolicy``);
    ``hide_paths``: no local directory in any answer or error (the HTTP server)."""
    name = fn.__name__
    facts = registry.facts(name)
    description, arg_docs = split_docstring(fn.__doc__)
    if name in registry.ANSWERS:
        arg_docs["detail"] = registry.DETAIL_DOC
    # the title is the tool's own (spec 2025-06-18); destructive and idempotent mean something only for writes
    annotations = ToolAnnotations(read_only_hint=facts.read_only, open_world_hint=False,
                                  destructive_hint=None if facts.read_only else facts.destructive,
                                  idempotent_hint=None if facts.read_only else facts.idempotent)
    base = Tool.from_function(_adapt(fn, bundle_policy, hide_paths), name=name, title=facts.title, description=description,
                              annotations=annotations, structured_output=True)
    tool = CheckedTool(**{f: getattr(base, f) for f in type(base).model_fields}, hide_paths=hide_paths)
    tool.parameters = registry.argument_schema(name, tool.parameters, arg_docs)
    # read live by the SDK; the client validates structured content against this compact schema
    tool.fn_metadata.output_schema = registry.compact(tool.fn_metadata.output_schema, output=True)
    return tool


# ------------------------------------------------------------------------------ resources

def read_document(id: str, bundle_policy: BundlePolicy | None = None,  # `id`: the URI template's variable
                  hide_paths: bool = False) -> str:
    """A document as JSON, as get_by_id returns it (from the bundle ``bundle_policy`` allows)."""
    from mathlas.tools.informal import get_by_id

    try:
        bundle = bundle_policy("get_by_id", None, {"id": id}) if bundle_policy else None
        data = dataclasses.asdict(get_by_id(id, bundle))
        return compact_json(_without_paths(data) if hide_paths else data)
    except UsageError as e:
        raise ResourceNotFoundError(_message(str(e), hide_paths)) from None
    except MathlasError as e:
        raise ResourceError(_message(str(e), hide_paths)) from None


def read_bundle(name: str, bundle_policy: BundlePolicy | None = None, hide_paths: bool = False) -> str:
    """A bundle's manifest in brief, as JSON (``default``: the bundle the tools use by default);
    with a ``bundle_policy``, only a bundle it allows."""
    from mathlas.bundle import read_manifest
    from mathlas.releases.install import resolve_bundle

    try:
        spec = None if name == "default" else name
        if bundle_policy is not None:
            spec = bundle_policy("search_existing_math", spec, {})
        root = resolve_bundle(spec, quiet=True)
        return compact_json(read_manifest(root).summary())  # no path: a client learns nothing of the disk
    except MathlasError as e:
        raise ResourceNotFoundError(_message(str(e), hide_paths)) from None


def add_resources(server: MCPServer, bundle_policy: BundlePolicy | None = None, hide_paths: bool = False) -> None:
    """The document and bundle resource templates (their bundles checked by ``bundle_policy``)."""
    def document(id: str) -> str:  # noqa: A002 - the URI template's variable
        return read_document(id, bundle_policy, hide_paths)

    def bundle(name: str) -> str:
        return read_bundle(name, bundle_policy, hide_paths)

    server.resource("mathlas://doc/{id}", name="document", title="Document by id", mime_type="application/json",
                    description="A document by stable id (e.g. mathlas://doc/stacks:00DV), as get_by_id returns it; "
                                "percent-encode / and # in the id.",
                    security=ResourceSecurity(exempt_params={"id"}))(document)  # ids are never paths
    server.resource("mathlas://bundle/{name}", name="bundle", title="Bundle summary", mime_type="application/json",
                    description="An installed bundle (name or name-version; default: the one the tools use): "
                                "documents and licence per source, encoder, format version.")(bundle)


def formal_bundle_here() -> bool:
    """Whether the tools that need a formal (Lean) bundle have one to read: ``$MATHLAS_FORMAL_BUNDLE``
    names one (``mathlas serve --formal-bundle`` sets it; what is wrong with it, their calls say) or a
    formal bundle is installed. Reads the installed bundles' manifests; opens nothing."""
    from mathlas.releases.formal_specs import FORMAL_ENV, installed_formal

    return bool(os.environ.get(FORMAL_ENV)) or bool(installed_formal())


# Why a call of a tool that writes fails where it was removed: the HTTP server without a token removes
# them (mathlas.web.api.mcp_server), and with a token every request without it is refused before MCP
WRITES_WITHHELD = ("{name} is not served here: it writes on the server's disk, and a server started without a "
                   "token serves no tool that writes; whoever runs it can restart it with `mathlas serve --token T` "
                   "(or $MATHLAS_TOKEN), and clients then send the header `Authorization: Bearer T` (docs/http.md)")


class MathlasServer(MCPServer):
    """The SDK's server, telling a client what it cannot do and why:

    * ``tools/list`` leaves out the tools that need a formal bundle (``registry.ToolFacts``) while
      ``formal_bundle_here`` is false, read at each listing (one installed later is listed from the next
      ``tools/list`` on); called by name, such a tool still answers: from the bundle its ``bundle``
      argument names, else with the library's message saying how to get one;
    * a call of a tool removed after the server was built (``remove_tool``) says why (for a tool that
      writes: ``WRITES_WITHHELD``), where the SDK answers ``Unknown tool: funsearch``; a call of a
      tool it never had names the closest listed tool and the list (``unknown_tool``);
    * ``prompts/get`` of a prompt it does not have is the JSON-RPC error -32602 (invalid params) and
      one log line, where the SDK logs a traceback per request and answers with code 0.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._removed: set[str] = set()

    async def list_tools(self) -> list:
        tools = await super().list_tools()
        if formal_bundle_here():
            return tools
        return [t for t in tools if not registry.facts(t.name).needs_formal_bundle]

    def remove_tool(self, name: str) -> None:
        super().remove_tool(name)
        self._removed.add(name)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if name in self._removed:
            if not registry.facts(name).read_only:
                raise ToolError(WRITES_WITHHELD.format(name=name))
            raise ToolError(f"{name} is not served here")
        if self._tool_manager.get_tool(name) is None:
            raise ToolError(unknown_tool(name, [t.name for t in await self.list_tools()]))
        return await super().call_tool(name, arguments, context)

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        known = [p.name for p in await self.list_prompts()]
        if name not in known:
            log.info("mathlas: prompts/get: no prompt %r", str(name)[:100])
            have = f"it has: {', '.join(known)}" if known else "it has none (its tools do the work: tools/list)"
            raise MCPError(code=INVALID_PARAMS, message=f"unknown prompt {str(name)[:100]!r}; {have}")
        return await super().get_prompt(name, arguments, context)


def build_server(log_level: str = "WARNING", bundle_policy: BundlePolicy | None = None,
                 hide_paths: bool = False) -> MCPServer:
    """The mathlas MCP server with every available tool and the resources; opens nothing, loads
    nothing. ``bundle_policy`` checks every tool's ``bundle`` argument (the HTTP server's: only the
    bundles it serves; the stdio server has none); ``hide_paths``: answers and errors name the data
    and home directories instead of showing them (the HTTP server)."""
    from mathlas.tools import load_tools

    tools = []
    for fn in load_tools():
        try:
            tools.append(make_tool(fn, bundle_policy, hide_paths))
        except Exception as e:  # noqa: BLE001 - a tool the SDK cannot describe must not take the others down
            log.warning("mathlas: tool %s not served: %s: %s", getattr(fn, "__name__", fn), type(e).__name__, e)
    server = MathlasServer(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, tools=tools,
                           log_level=log_level)
    add_resources(server, bundle_policy, hide_paths)
    return server


def _log_once(level: str) -> None:
    """mathlas's own lines on stderr once: through one handler of the ``mathlas`` logger (the
    ``mathlas`` command's, or a plain one), not also through the root handler the SDK installs (each
    line came twice under ``mathlas mcp``). They show at INFO up to the default level, WARNING, as
    the ``mathlas`` command's do (the first run installs the default bundle, talking); ERROR or
    CRITICAL keeps only those."""
    logger = logging.getLogger("mathlas")
    if not any(not isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(StderrHandler())
    logger.propagate = False
    logger.setLevel(min(logging.INFO, logging.getLevelName(level)) if level in ("DEBUG", "INFO", "WARNING") else level)


def main(log_level: str | None = None) -> int:
    """Serve MCP over stdio until the client closes the connection."""
    level = (log_level or os.environ.get("MATHLAS_LOG_LEVEL") or "WARNING").upper()
    if level not in LOG_LEVELS:
        print(f"mathlas: log level must be one of {', '.join(LOG_LEVELS)}, got {level!r}", file=sys.stderr)
        return 2
    server = build_server(level)  # the SDK configures the root logger here
    _log_once(level)
    log.info("mathlas %s MCP server on stdio", __version__)
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
