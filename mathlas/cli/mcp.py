"""``mathlas mcp``: serve the mathlas tools to an MCP client over stdio (``python -m mathlas.mcp`` is
the same command).

A bundle that cannot be found is refused before the server speaks MCP, as ``mathlas serve`` refuses
one (one line on stderr; exit 1, or 2 for a malformed name): the client that starts the server then
reports the misconfiguration at once, not the agent after every call fails. The check reads a
manifest at most; the bundle opens with the first call that needs it, as before.

Importing this module is light (``mcp`` loads only when the server starts), so ``mathlas --help``
stays fast.
"""
from __future__ import annotations

import argparse
import os
import sys

from mathlas.logs import LOG_LEVELS


def add_options(p: argparse.ArgumentParser) -> None:
    """The server's options (``mathlas mcp`` and ``python -m mathlas.mcp``)."""
    p.add_argument("--bundle", "-b", default=None,
                   help="the bundle tools search when a call names none (default: $MATHLAS_BUNDLE or the "
                        "default bundle, installed on first use)")
    p.add_argument("--log-level", choices=LOG_LEVELS, type=str.upper,
                   default=os.environ.get("MATHLAS_LOG_LEVEL", "WARNING").upper(),
                   help="stderr log level (default: $MATHLAS_LOG_LEVEL or WARNING)")


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``mcp`` subcommand to the ``mathlas`` command's subparsers."""
    p = subparsers.add_parser(
        "mcp", help="serve the tools over MCP (stdio)",
        description="Serve the mathlas tools over MCP on stdin/stdout, for Claude Code, Cursor or any "
                    "MCP client: `claude mcp add mathlas -- mathlas mcp`. stdout carries only protocol "
                    "messages; logs go to stderr.")
    add_options(p)
    p.set_defaults(run=run)
    return p


def check_bundle(bundle: str | None) -> None:
    """The bundle the tools will search (``--bundle``, else ``$MATHLAS_BUNDLE``, else the default
    bundle) can be found: ``mathlas serve``'s check (``serve.check_bundles``), which reads its manifest
    and installs nothing; else the library's error, in one line naming where the bundle was asked for."""
    from mathlas.cli.serve import check_bundles

    if bundle is not None:
        check_bundles([bundle])
    else:
        env = os.environ.get("MATHLAS_BUNDLE")
        check_bundles([env] if env else [], from_env=True)


def run(args: argparse.Namespace) -> int:
    """Check the bundle, then run the server until the client disconnects."""
    from mathlas.errors import MathlasError, UsageError

    try:
        check_bundle(args.bundle)
    except MathlasError as e:  # before the handshake: a server whose every call fails is no server
        print(f"mathlas: {e}", file=sys.stderr)
        return 2 if isinstance(e, UsageError) else 1
    if args.bundle:  # the tools read it when a call names no bundle
        os.environ["MATHLAS_BUNDLE"] = args.bundle
    from mathlas.mcp.server import main

    return main(log_level=args.log_level)


def main(argv: list[str] | None = None) -> int:
    """``python -m mathlas.mcp [--bundle B] [--log-level L]``: the command without the main ``mathlas`` CLI."""
    from mathlas.cli.common import Parser

    parser = Parser(prog="python -m mathlas.mcp", description="Serve the mathlas tools over MCP on stdio (= mathlas mcp).")
    add_options(parser)
    return run(parser.parse_args(argv))
