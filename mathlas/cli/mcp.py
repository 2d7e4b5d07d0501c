"""``mathlas mcp``: serve the mathlas tools to an MCP client over stdio.

Importing this module is light (``mcp`` loads only when the server starts), so ``mathlas --help``
stays fast.
"""
from __future__ import annotations

import argparse
import os

from mathlas.logs import LOG_LEVELS



def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``mcp`` subcommand to the ``mathlas`` command's subparsers."""
    p = subparsers.add_parser(
        "mcp", help="serve the tools over MCP (stdio)",
        description="Serve the mathlas tools over MCP on stdin/stdout, for Claude Code, Cursor or any "
                    "MCP client: `claude mcp add mathlas -- mathlas mcp`. stdout carries only protocol "
                    "messages; logs go to stderr.")
    p.add_argument("--bundle", "-b", default=None,
                   help="the bundle tools search when a call names none (default: $MATHLAS_BUNDLE or the "
                        "default bundle, installed on first use)")
    p.add_argument("--log-level", choices=LOG_LEVELS, type=str.upper,
                   default=os.environ.get("MATHLAS_LOG_LEVEL", "WARNING").upper(),
                   help="stderr log level (default: $MATHLAS_LOG_LEVEL or WARNING)")
    p.set_defaults(run=run)
    return p


def run(args) -> int:
    """Run the server until the client disconnects."""
    if args.bundle:  # the tools read it when a call names no bundle
        os.environ["MATHLAS_BUNDLE"] = args.bundle
    from mathlas.mcp.server import main

    return main(log_level=args.log_level)
