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
from typing import Any, NoReturn

BUNDLE_HELP = "bundle path or installed name (default: $MATHLAS_BUNDLE or the default bundle)"


class Parser(argparse.ArgumentParser):
    """argparse's parser, with its errors in one line that says what to do, like every other error
    of the command (argparse prints the whole usage block, nine lines for ``lean search``):
    ``mathlas search: unrecognized argument --kk (did you mean -k?) (`mathlas search --help` shows
    the usage)``. Subcommand parsers are of this class too (``add_subparsers`` uses the parent's)."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {_plain(message)} (`{self.prog} --help` shows the usage)\n")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.arguments: list[argparse.Action] = []  # what add_argument made, in order
        self.subcommands: argparse.Action | None = None  # what add_subparsers returned
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:  # type: ignore[override]
        action = super().add_argument(*args, **kwargs)
        self.arguments.append(action)
        return action

    @property
    def options(self) -> list[str]:
        """Every option string (``-k``, ``--json``), ``-h`` and ``--help`` included."""
        return [o for a in self.arguments for o in a.option_strings]

    def add_argument_group(self, *args: Any, **kwargs: Any):  # type: ignore[override]
        return self._recording(super().add_argument_group(*args, **kwargs))

    def add_mutually_exclusive_group(self, **kwargs: Any):  # type: ignore[override]
        return self._recording(super().add_mutually_exclusive_group(**kwargs))

    def _recording(self, group):
        """``group`` with its add_argument (and its own groups') recorded in ``arguments`` too: an
        option of a group (``search``'s paper filters, ``eval``'s ``--restrict``) is the parser's."""
        add, nested = group.add_argument, group.add_mutually_exclusive_group

        def add_argument(*args: Any, **kwargs: Any) -> argparse.Action:
            action = add(*args, **kwargs)
            self.arguments.append(action)
            return action

        group.add_argument = add_argument
        group.add_mutually_exclusive_group = lambda **kw: self._recording(nested(**kw))
        return group

    def add_subparsers(self, **kwargs: Any):  # type: ignore[override]
        self.subcommands = super().add_subparsers(**kwargs)
        return self.subcommands

    def commands(self) -> dict[str, argparse.ArgumentParser]:
        """The subcommands by name (aliases included): empty when the parser has none."""
        return dict(self.subcommands.choices) if self.subcommands is not None else {}

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        ns, extras = self.parse_known_args(args, namespace)
        if extras:  # said by the subcommand that was given them, with the option it likely meant
            sub = self._chosen(ns)
            options = sub.options
            parts = []
            for extra in extras:
                import difflib

                name = extra.split("=", 1)[0]
                if name in options:  # a known option after "--": everything after "--" is taken as words
                    parts.append(f"{extra} (an option after `--`: put the options before `--`)")
                    continue
                close = difflib.get_close_matches(name, options, n=1, cutoff=0.6) if extra.startswith("-") else []
                parts.append(extra + (f" (did you mean {close[0]}?)" if close else ""))
            sub.error(f"unrecognized argument{'s' if len(extras) > 1 else ''} {', '.join(parts)}")
        return ns

    def _chosen(self, ns: argparse.Namespace) -> Parser:
        """The deepest subcommand parser ``ns`` was parsed with (this parser when there is none)."""
        if self.subcommands is not None:
            sub = self.commands().get(getattr(ns, self.subcommands.dest, None) or "")
            if isinstance(sub, Parser):
                return sub._chosen(ns)
        return self


def _plain(message: str) -> str:
    """argparse's wording made shorter: an invalid choice names the closest one, not all of them."""
    import difflib
    import re

    m = re.fullmatch(r"argument (.+?): invalid choice: '(.*)' \(choose from (.*)\)", message, re.S)
    if m:
        what, given, choices = m.group(1), m.group(2), re.findall(r"'([^']*)'", m.group(3))
        close = difflib.get_close_matches(given, choices, n=1, cutoff=0.5)
        what = "command" if what in ("COMMAND", "SUBCOMMAND", "ACTION") else what
        return (f"unknown {what} {given!r}; " + (f"did you mean {close[0]!r}?" if close
                                                  else f"one of: {', '.join(choices)}"))
    return " ".join(message.split())


def bundle_option(p: argparse.ArgumentParser, help: str = BUNDLE_HELP, env: str | None = "MATHLAS_BUNDLE") -> None:
    """``--bundle/-b``, defaulting to ``$<env>`` (None: no environment fallback here)."""
    p.add_argument("--bundle", "-b", default=os.environ.get(env) if env else None, help=help)


def json_option(p: argparse.ArgumentParser, help: str = "machine-readable output") -> None:
    p.add_argument("--json", action="store_true", help=help)


QUIET_HELP = "no progress or notes on stderr"
# a search's -q: what the query was searched as and the match line are part of its answer, and stay
SEARCH_QUIET_HELP = ("no progress, tips or log messages on stderr; the answer's own lines stay (what the query was "
                     "searched for, where a long query was cut, the match line)")


def quiet_option(p: argparse.ArgumentParser, help: str = QUIET_HELP, **kwargs: Any) -> None:
    p.add_argument("-q", "--quiet", action="store_true", help=help, **kwargs)


def print_json(data: Any, *, indent: int | None = None) -> None:
    """A dataclass (or plain data) as one JSON document on stdout."""
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        data = dataclasses.asdict(data)
    json.dump(data, sys.stdout, ensure_ascii=False, indent=indent)
    sys.stdout.write("\n")
