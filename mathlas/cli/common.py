"""What every ``mathlas`` command shares: the ``--bundle``, ``--json`` and ``-q`` options, JSON on
stdout, and the one mapping from errors to exit codes.

Dispatch: each command module's ``add_parser(subparsers)`` sets ``run`` on its parser (or on each
subcommand's parser) with ``set_defaults(run=...)``; ``main`` calls ``args.run(args)``.
Exit codes: 0 ok, 1 data problem (missing/corrupt bundle, failed install, a claim that failed),
2 usage error, 130 interrupted.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from typing import Any

BUNDLE_HELP = "bundle path or installed name (default: $MATHLAS_BUNDLE or the default bundle)"


def bundle_option(p: argparse.ArgumentParser, help: str = BUNDLE_HELP, env: str | None = "MATHLAS_BUNDLE") -> None:
    """``--bundle/-b``, defaulting to ``$<env>`` (None: no environment fallback here)."""
    p.add_argument("--bundle", "-b", default=os.environ.get(env) if env else None, help=help)


def json_option(p: argparse.ArgumentParser, help: str = "machine-readable output") -> None:
    p.add_argument("--json", action="store_true", help=help)


def quiet_option(p: argparse.ArgumentParser, **kwargs: Any) -> None:
    p.add_argument("-q", "--quiet", action="store_true", help="no progress or notes on stderr", **kwargs)


def print_json(data: Any, *, indent: int | None = None) -> None:
    """A dataclass (or plain data) as one JSON document on stdout."""
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        data = dataclasses.asdict(data)
    json.dump(data, sys.stdout, ensure_ascii=False, indent=indent)
    sys.stdout.write("\n")
