"""``mathlas completion bash|zsh``: a shell completion script, generated from the parser by shtab.

Generated, not hand-written, so every command and option the parser has completes, and a new one
needs no edit here::

    mathlas completion bash > ~/.local/share/bash-completion/completions/mathlas
    mathlas completion zsh > "${fpath[1]}/_mathlas"      # a directory on $fpath

or, for the current shell only: ``eval "$(mathlas completion bash)"``.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

SHELLS = ("bash", "zsh")


def add_parser(sub: Any) -> None:
    """Add ``completion``."""
    p = sub.add_parser("completion", help="print a shell completion script (bash, zsh)",
                       description="Print the completion script for SHELL on stdout; see "
                                   "`mathlas completion --help` for where to put it.",
                       epilog="bash: mathlas completion bash > ~/.local/share/bash-completion/completions/mathlas; "
                              "zsh: mathlas completion zsh > \"${fpath[1]}/_mathlas\"; "
                              "this shell only: eval \"$(mathlas completion bash)\"")
    p.add_argument("shell", choices=SHELLS)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import shtab

    sys.stdout.write(shtab.complete(args.root_parser, shell=args.shell))  # the whole `mathlas` parser
    return 0
