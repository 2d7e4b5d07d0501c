"""The ``mathlas`` command (also ``python -m mathlas``). stdout carries data (``--json`` is machine
output), stderr carries talk: library log messages at INFO, or WARNING with ``-q``.

Each command group lives in its own module of ``mathlas.cli`` with ``add_parser(subparsers)``;
exit codes and the shared options are ``mathlas.cli.common``'s.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator

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
from mathlas.cli.common import Parser  # errors in one line (argparse's own print the usage block)
from mathlas.errors import MathlasError, UsageError
from mathlas.extras import COMMANDS, require
from mathlas.logs import log_to_stderr

# in the order `mathlas --help` lists them
COMMAND_MODULES = (search, mcp, serve, numeric, scaffold, funsearch, findings, sequence, lean_check, data, lean, index,
                   completion)


def build_parser() -> argparse.ArgumentParser:
    from mathlas import __version__

    p = Parser(prog="mathlas", description="Offline math search and no-LLM math tools.")
    p.add_argument("--version", action=_Version, version=f"mathlas {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.add_parser(sub)
    p.set_defaults(root_parser=p)  # for `completion`, which generates its scripts from this parser
    return p


class _Version(argparse.Action):
    """``--version``: mathlas's version and the default bundle's (``version_line``), found when asked."""

    def __init__(self, option_strings, version: str, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show the version and the default bundle's, and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)
        self.version = version

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_line(self.version))
        parser.exit()


def version_line(version: str) -> str:
    """``mathlas 0.1.0, bundle informal-1.6.1``: the bundle a search without ``--bundle`` opens when it is
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


# Names a user may try for a command: the MCP tools' names (identify_constant is `mathlas constant`)
# and a few words from elsewhere (an OEIS lookup). Read after the spelling is normalised (lower
# case, '_' as '-'); a name that is a command is never looked up here.
ALIASES: dict[str, tuple[str, ...]] = {
    "search-existing-math": ("search",), "find": ("search",), "get-by-id": ("show",),
    "get-statement": ("show",), "get": ("show",), "search-formal-math": ("lean search",),
    "get-dependencies": ("lean deps",), "deps": ("lean deps",), "dependencies": ("lean deps",),
    "identify-constant": ("constant",), "identify": ("constant", "sequence"), "closed-form": ("constant",),
    "identify-sequence": ("sequence",), "oeis": ("sequence",), "verify-numeric": ("verify-numeric",),
    "verify": ("verify-numeric", "verify-formal"),
    "conjecture-relation": ("conjecture",), "relation": ("conjecture",), "pslq": ("conjecture",),
    "applicability-checklist": ("checklist",), "mapping-scaffold": ("scaffold",),
    "search-directive": ("directive",), "add-finding": ("findings add",), "finding": ("findings",),
    "verify-formal": ("verify-formal",), "lean-check": ("verify-formal",), "prove": ("verify-formal",),
}


def alias_hint(parser: Parser, argv: list[str]) -> str | None:
    """The one-line error for a command given by another name (``identify``, ``oeis``, an MCP tool's
    name): which command to run instead, with the arguments given; None when the name is a command
    or no alias (argparse then answers, naming the closest spelling)."""
    import difflib
    import re
    import shlex

    given = next((a for a in argv if not a.startswith("-")), None)
    commands = parser.commands()
    if given is None or given in commands:
        return None
    name = given.lower().replace("_", "-")
    if name not in ALIASES and not difflib.get_close_matches(given, list(commands), n=1, cutoff=0.5):
        # misspelt alias ('idenitfy', 'oeiss'); a close command is argparse's to suggest, as for 'serch'
        name = next(iter(difflib.get_close_matches(name, list(ALIASES), n=1, cutoff=0.8)), name)
    meant = ALIASES.get(name)
    if meant is None:
        return None
    args = argv[argv.index(given) + 1:]
    terms = [a for a in args if not a.startswith("--")]
    if meant == ("constant", "sequence") and terms:  # `identify`: a decimal is a constant, integers a sequence
        if len(terms) == 1 and re.fullmatch(r"[-+]?\d*\.\d+(e[-+]?\d+)?", terms[0], re.I):
            meant = ("constant",)
        elif len(terms) > 1 and all(re.fullmatch(r"-?\d+,?", a) for a in terms):
            meant = ("sequence",)
    if len(meant) > 1:  # the arguments fit one of them at most: named without them
        return f"unknown command {given!r}; did you mean {' or '.join(map(repr, meant))}? (`mathlas --help` shows the usage)"
    rest = shlex.join(args)
    run = f"mathlas {meant[0]}" + (f" {rest}" if rest and len(rest) <= 60 else "")
    return f"unknown command {given!r}; did you mean `{run}`? (`mathlas {meant[0]} --help` shows the usage)"


PROGRESS_AFTER_S = 1.0  # a tool that waits this long on its child (numeric, Lean, a program) says so


@contextlib.contextmanager
def progress_on_terminal(quiet: bool, stream=None) -> Iterator[None]:
    """While a long tool waits on its child process (``mathlas.progress``: the numeric worker, Lean, the
    FunSearch sandbox), one line on a terminal's stderr says what it does and for how long ("mathlas:
    computing (2 partial results) … 12 s of 30 s"), rewritten in place and erased before anything else
    is written (the answer, on stdout or stderr). Nothing when stderr is not a terminal (a log, a pipe)
    or with ``-q``."""
    from mathlas.progress import Call, running

    stream = sys.stderr if stream is None else stream
    if quiet or not stream.isatty():
        yield
        return
    line = _ProgressLine(stream)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Erasing(sys.stdout, line), _Erasing(sys.stderr, line)
    try:
        with running(Call(on_progress=line.show)):
            yield
    finally:
        sys.stdout, sys.stderr = saved
        line.erase()


class _ProgressLine:
    """The one progress line of ``progress_on_terminal``."""

    def __init__(self, stream):
        self.stream, self.shown = stream, False

    def show(self, done: float, total: float | None, message: str | None) -> None:
        if done < PROGRESS_AFTER_S:
            return
        of = f" of {total:.0f} s" if total else ""
        self.stream.write(f"\r\033[Kmathlas: {message or 'working'} … {done:.0f} s{of}")
        self.stream.flush()
        self.shown = True

    def erase(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


class _Erasing:
    """A text stream that erases the progress line before it writes."""

    def __init__(self, inner, line: _ProgressLine):
        self._inner, self._line = inner, line

    def write(self, text: str) -> int:
        self._line.erase()
        return self._inner.write(text)

    def __getattr__(self, name: str):
        return getattr(self._inner, name)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    hint = alias_hint(parser, sys.argv[1:] if argv is None else argv)
    if hint:
        print(f"mathlas: {hint}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    _log_to_stderr(bool(getattr(args, "quiet", False)))
    try:
        if args.command in COMMANDS:  # a command of an extra: one line naming it, not a traceback
            require(COMMANDS[args.command], f"mathlas {args.command}")
        if args.command in ("mcp", "serve"):  # a server reports each call's progress to its own client
            return args.run(args)
        with progress_on_terminal(bool(getattr(args, "quiet", False))):
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
