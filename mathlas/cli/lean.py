"""``mathlas lean search|deps``: the formal tools (search_formal_math, get_dependencies) on the CLI,
and ``mathlas index build-lean PATH``: a formal bundle of exactly the Lean project at PATH.

    mathlas lean search "prime two le" [-k 10] [--module Mathlib.NumberTheory] [--kind theorem] [--no-deprecated] [--all-copies] [--json]
    mathlas lean deps lean:Nat.Prime.two_le [--used-by] [--depth 2] [--json]
    mathlas index build-lean ~/my-project [--name NAME]

Building runs the build pipeline (``mathlas-build lean``) in a child process: the runtime never imports it.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from typing import Any

from mathlas.cli.common import SEARCH_QUIET_HELP, quiet_option
from mathlas.cli.search import K_HELP, MATCH_EPILOG
from mathlas.errors import UsageError
from mathlas.request import MAX_DEPENDENCY_DEPTH, MAX_DEPENDENCY_LIMIT, MODES


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("lean", help="search Lean declarations and their dependencies (formal bundle)")
    sub = p.add_subparsers(dest="lean_command", required=True, metavar="SUBCOMMAND")
    s = sub.add_parser("search", help="search_formal_math: Lean declarations by words, name fragment or notation",
                       epilog=MATCH_EPILOG)
    s.add_argument("query")
    s.add_argument("-k", type=int, default=10, help=K_HELP)
    s.add_argument("--offset", type=int, default=0, help="skip this many of the best hits (the next page: offset + k)")
    s.add_argument("--module", action="append", dest="modules", help="only this module or below (repeatable)")
    s.add_argument("--kind", action="append", dest="kinds", help="only this kind: theorem, lemma, def, ... (repeatable)")
    s.add_argument("--mode", choices=MODES, default="hybrid",
                   help="hybrid (default), lexical (BM25 alone) or dense (the encoder alone)")
    s.add_argument("--prior-weight", type=float, help="weight of the PageRank prior (0: off; default: the bundle's)")
    s.add_argument("--no-deprecated", dest="deprecated", action="store_false",
                   help="leave @[deprecated] declarations out (default: flagged, after their replacement)")
    s.add_argument("--all-copies", action="store_true",
                   help="show a Lean alias and the declaration it stands for each where it ranks (by default they "
                        "take one rank, the other listed as 'also in')")
    s.add_argument("--bundle", help="formal bundle (default: $MATHLAS_FORMAL_BUNDLE, else every installed formal bundle)")
    s.add_argument("--json", action="store_true")
    quiet_option(s, SEARCH_QUIET_HELP)  # as `mathlas search -q`: the answer's own lines stay
    d = sub.add_parser("deps", help="get_dependencies: what a declaration uses, or what uses it")
    d.add_argument("id", help="e.g. lean:Nat.Prime.two_le (the lean: prefix may be left out)")
    d.add_argument("--used-by", action="store_true", help="declarations that use it (default: what it uses)")
    d.add_argument("--depth", type=int, default=1,
                   help=f"follow references this many steps out, 1 to {MAX_DEPENDENCY_DEPTH} (default: 1)")
    d.add_argument("--limit", type=int, default=100,
                   help=f"list at most this many declarations, nearest first, 1 to {MAX_DEPENDENCY_LIMIT} "
                        "(default: 100; the total counts them all)")
    d.add_argument("--bundle")
    d.add_argument("--json", action="store_true")
    quiet_option(d)
    p.set_defaults(run=run)
    return p


def add_build_lean(sub: Any) -> None:
    """The ``index build-lean`` subcommand (``mathlas.cli.index`` adds it to ``mathlas index``)."""
    s = sub.add_parser("build-lean", help="build (and install) a formal bundle of the Lean project at PATH")
    s.add_argument("path", help="the Lean project: its folders and .lake/packages are indexed")
    s.add_argument("--name", help="bundle name (default: the project's Lake package name, else its folder; mathlib "
                                  "for Mathlib itself); the formal tools search every installed formal bundle")
    s.add_argument("--version", help="bundle version (default 0.<date>.0, +<commit> when the project is at a commit "
                                     "of its own repository)")
    s.add_argument("--dirs", help="comma-separated top folders to read")
    s.add_argument("--license", metavar="SPDX", help="licence of the project's own declarations (default: guessed "
                                                     "from its LICENSE/COPYING file, else unknown)")
    s.add_argument("--threads", type=int)
    s.add_argument("--out", help="bundle directory (default: a temporary folder under <data dir>/build, removed "
                                 "once installed; with --no-install <data dir>/build/bundles/<name>-<version>)")
    s.add_argument("--cache", help="embedding cache, makes rebuilds resumable (default <data dir>/build/embed-cache)")
    s.add_argument("--no-install", action="store_true", help="only build (see --out)")
    s.add_argument("--force", action="store_true", help="replace an existing --out / --no-install bundle directory")
    s.add_argument("--no-ranker", action="store_true",
                   help="leave out the learned ranking stage (the bundle ranks by RRF; docs/formal.md)")
    s.add_argument("-q", "--quiet", action="store_true")


def run_build_lean(args: argparse.Namespace) -> int:
    from mathlas.paths import data_dir

    cmd = [sys.executable, "-m", "mathlas_build.cli", "lean", str(args.path), "--workdir", str(data_dir() / "build")]
    for flag, value in (("--name", args.name), ("--version", args.version), ("--dirs", args.dirs), ("--license", args.license),
                        ("--threads", args.threads), ("--out", args.out), ("--cache", args.cache)):
        if value is not None:
            cmd += [flag, str(value)]
    if not args.no_install:
        cmd.append("--install")
    if args.force:
        cmd.append("--force")
    if args.no_ranker:
        cmd.append("--no-ranker")
    if args.quiet:
        cmd.append("--quiet")
    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:
        return 130


# What the CLI calls each argument of a Lean search or walk, for messages
LEAN_CLI_LABELS = {"modules": "--module", "kinds": "--kind", "prior_weight": "--prior-weight",
                   "deprecated": "--no-deprecated", "bundle": "--bundle"}
DEPS_CLI_LABELS = {"direction": "--used-by", "depth": "--depth", "limit": "--limit"}


def run(args: argparse.Namespace) -> int:
    from mathlas.cli.common import print_json
    from mathlas.request import DependencyRequest, LeanSearchRequest
    from mathlas.service import dependencies, lean_search

    if args.lean_command == "search":
        from mathlas.cli.search import print_hits

        req = LeanSearchRequest.make(args.query, args.k, mode=args.mode, modules=args.modules, kinds=args.kinds,
                                     prior_weight=args.prior_weight, offset=args.offset, deprecated=args.deprecated,
                                     collapse=not args.all_copies, labels=LEAN_CLI_LABELS)
        r = lean_search(req, args.bundle)
        if args.json:
            print_json(r)
            return 0
        from mathlas.render import search_notes

        # what it was searched as, where it was cut, how far to trust the hits: part of the answer, kept by -q
        for note in search_notes(r, args.offset):
            print(f"mathlas: {note}", file=sys.stderr)
        print_hits(r.hits, start=args.offset + 1)
        if not r.hits and not args.quiet:  # -q: no tips
            print("mathlas: no declarations found; try other words, a name fragment (prime two le) or no --module",
                  file=sys.stderr)
        return 0
    if args.lean_command == "deps":
        req = DependencyRequest.make(args.id, "used_by" if args.used_by else "uses", args.depth, args.limit,
                                     labels=DEPS_CLI_LABELS)
        r = dependencies(req, args.bundle)
        if args.json:
            print_json(r)
            return 0
        verb = "is used by" if args.used_by else "uses"
        more = f" (showing {len(r.declarations)})" if r.truncated else ""
        if not args.quiet:
            print(f"{r.id} {verb} {r.total} declaration(s) within depth {r.depth}{more}", file=sys.stderr)
            print(f"mathlas: {r.note}", file=sys.stderr)
        for x in r.declarations:
            print(f"{'  ' * (x.distance - 1)}{x.id}  ({x.kind}, {x.module})")
        return 0
    raise UsageError(f"unknown lean subcommand {args.lean_command!r}")  # pragma: no cover
