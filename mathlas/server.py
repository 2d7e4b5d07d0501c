"""The MCP stdio server: ``python -m mathlas.server`` or ``mathlas mcp``.

A thin adapter, and the only module that imports ``mcp``. The tools are the plain typed functions of
``mathlas.tools`` (``TOOL_MODULES``); this module registers each one unchanged, so its signature is
the input schema and its dataclass return type is the output schema (clients get structured content).
What the adapter adds:

* each tool's docstring becomes its description, and the ``Args:`` lines become the descriptions of
  the input schema's properties;
* a ``MathlasError`` raised by a tool (bad input, unknown id, missing bundle) becomes a tool error
  result (``isError: true``) carrying the error's own message; anything else is a crash the SDK
  logs with its traceback on stderr while the client gets a generic tool error. The server lives on.

Startup stays light: ``initialize`` and ``tools/list`` open no bundle and load no model. Open bundles
are shared by all calls through ``mathlas.engine.open_bundle`` (the process-wide cache of open
bundles rather than the server's lifespan context, so the Python API and the server share one
mechanism and the tools keep signatures that are exactly their schemas). Sync tools run on worker threads, so
concurrent calls overlap; ``Bundle`` is thread-safe.

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
from typing import Annotated, Any, Callable

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent

from mathlas import __version__
from mathlas.errors import MathlasError
from mathlas.logs import LOG_LEVELS

log = logging.getLogger("mathlas.server")

SERVER_NAME = "mathlas"
INSTRUCTIONS = (
    "mathlas searches known mathematics offline and checks numeric claims, without any LLM. "
    "Before proving something, call search_existing_math to see whether it is already known; "
    "call get_by_id on a promising hit for the full statement, its source and license. "
    "Results are data for you to judge: a hit is a candidate, not a verdict."
)

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
    return "\n".join(head).strip(), args


def _adapt(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as the SDK should call it: a ``MathlasError`` becomes a ``ToolError`` (its message
    kept, no traceback), and the dataclass result becomes structured content plus the same JSON,
    compact, as the text block. (The SDK would indent that text, some 20% more tokens for a client
    model that reads the text rather than the structured content.)"""
    sig = inspect.signature(fn, eval_str=True)
    returns = sig.return_annotation

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> CallToolResult:
        try:
            result = fn(*args, **kwargs)
        except MathlasError as e:
            raise ToolError(str(e)) from None
        data = dataclasses.asdict(result) if dataclasses.is_dataclass(result) else result
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=json.loads(text))

    # Same parameters (the input schema); the output schema still comes from the dataclass.
    call.__signature__ = sig.replace(return_annotation=Annotated[CallToolResult, returns])  # type: ignore[attr-defined]
    return call


def make_tool(fn: Callable[..., Any]) -> Tool:
    """An MCP tool for a plain typed tool function."""
    description, arg_docs = split_docstring(fn.__doc__)
    tool = Tool.from_function(_adapt(fn), name=fn.__name__, description=description,
                              structured_output=True)
    for name, prop in tool.parameters.get("properties", {}).items():
        if name in arg_docs and "description" not in prop:
            prop["description"] = arg_docs[name]
    return tool


def build_server(log_level: str = "WARNING") -> MCPServer:
    """The mathlas MCP server with every available tool; opens nothing, loads nothing."""
    from mathlas.tools import load_tools

    tools = []
    for fn in load_tools():
        try:
            tools.append(make_tool(fn))
        except Exception as e:  # noqa: BLE001 - a tool the SDK cannot describe must not take the others down
            log.warning("mathlas: tool %s not served: %s: %s", getattr(fn, "__name__", fn), type(e).__name__, e)
    server = MCPServer(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, tools=tools,
                       log_level=log_level)
    return server


def main(log_level: str | None = None) -> int:
    """Serve MCP over stdio until the client closes the connection."""
    level = (log_level or os.environ.get("MATHLAS_LOG_LEVEL") or "WARNING").upper()
    if level not in LOG_LEVELS:
        print(f"mathlas: log level must be one of {', '.join(LOG_LEVELS)}, got {level!r}", file=sys.stderr)
        return 2
    server = build_server(level)
    log.info("mathlas %s MCP server on stdio", __version__)
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
