"""The ``mathlas`` command (also ``python -m mathlas``). stdout carries data (``--json`` is machine
output), stderr carries talk: library log messages at INFO, or WARNING with ``-q``.

Each command group lives in its own module of ``mathlas.cli`` with ``add_parser(subparsers)``;
exit codes and the shared options are ``mathlas.cli.common``'s.
"""
from __future__ import annotations

import argparse
import sys

# light: every command module imports its tool (and numpy, the mcp SDK...) inside run()
from mathlas.cli import (
    completion,
    data,
    findings,
    funsearch,
    index,
    lean,
    lean_check,
    mcp,
    numeric,
    scaffold,
    search,
    sequence,
    serve,
)
from mathlas.errors import MathlasError, UsageError
from mathlas.extras import COMMANDS, require
from mathlas.logs import log_to_stderr

# in the order `mathlas --help` lists them
COMMAND_MODULES = (search, mcp, serve, numeric, scaffold, funsearch, findings, sequence, lean_check, data, lean, index,
                   completion)


def build_parser() -> argparse.ArgumentParser:
    from mathlas import __version__

    from mathlas.cli.common import Parser  # errors in one line (argparse's own print the usage block)

    p = Parser(prog="mathlas", description="Offline math search and no-LLM math tools.")
    p.add_argument("--version", action=_Version, version=f"mathlas {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.add_parser(sub)
    p.set_defaults(root_parser=p)  # for `completion`, which generates its scripts from this parser
    return p


class _Version(argparse._VersionAction):
    """``--version``: mathlas's version and the default bundle's (``version_line``), found when asked."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser._print_message(version_line(self.version) + "\n", sys.stdout)
        parser.exit()


def version_line(version: str) -> str:
    """``mathlas 0.1.0, bundle informal-1.6.0``: the bundle a search without ``--bundle`` opens when it is
    installed (its manifest read; nothing installed or opened); ``no bundle installed yet`` when there
    is none at all (the first search installs the shipped one), else why it cannot be found, in a line."""
    import os

    from mathlas.errors import BundleNotFoundError, MathlasError

    try:
        from mathlas.bundle import read_manifest
        from mathlas.releases.install import installed, resolve_bundle

        m = read_manifest(resolve_bundle(None, install=False))
        return f"{version}, bundle {m.name}-{m.version}"
    except BundleNotFoundError as e:
        if not os.environ.get("MATHLAS_BUNDLE") and not installed():
            return f"{version}, no bundle installed yet (the first search installs one)"
        return f"{version}, default bundle not found: {str(e).split(';')[0]}"
    except MathlasError as e:
        return f"{version}, default bundle unreadable: {str(e).split(';')[0]}"


def _log_to_stderr(quiet: bool) -> None:
    """Show the library's messages (installs, warnings) on stderr; ``-q`` keeps only warnings."""
    log_to_stderr("mathlas", quiet)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _log_to_stderr(bool(getattr(args, "quiet", False)))
    try:
        if args.command in COMMANDS:  # a command of an extra: one line naming it, not a traceback
            require(COMMANDS[args.command], f"mathlas {args.command}")
        return args.run(args)
    except UsageError as e:
        print(f"mathlas: {e}", file=sys.stderr)
        return 2
    except MathlasError as e:
        print(f"mathlas: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `mathlas search ... | head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
