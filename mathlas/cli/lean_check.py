"""``mathlas verify-formal``: check a Lean 4 proof or snippet with the Lean kernel (verify_formal).

::

    mathlas verify-formal --statement "∀ a b : Nat, a + b = b + a" --proof "fun a b => Nat.add_comm a b"
    mathlas verify-formal --snippet "theorem t : 1 + 1 = 2 := rfl" --json
    mathlas verify-formal --file Scratch.lean --imports Mathlib --timeout 120
    cat Scratch.lean | mathlas verify-formal --file -

Exit codes: 0 VERIFIED_PROOF / TYPECHECKS, 1 anything else (REFUTED, FAILS, INCOMPLETE,
UNDETERMINED), 2 usage error (also input not shaped as asked: a statement with `:=`, brackets that
do not close, a header that cannot be read). ``--json`` prints the tool's result on stdout.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from mathlas.errors import UsageError


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``verify-formal`` command to the main CLI's subparsers."""
    p = subparsers.add_parser("verify-formal", help="check a Lean 4 proof or snippet with the Lean kernel",
                              description="Check a Lean 4 proof (--statement and --proof) or a whole snippet "
                                          "(--snippet or --file) with the real Lean kernel in a sandbox. Needs a "
                                          "Lean toolchain (lean on PATH, a Lake project, or $MATHLAS_LEAN); "
                                          "without one the answer is UNDETERMINED with how to install it.")
    p.add_argument("--statement", help="the theorem's type, e.g. '∀ n : Nat, n + 0 = n'; a pasted header "
                                       "'theorem t (n : Nat) : n + 0 = n' is read as binders and type")
    p.add_argument("--proof", help="the proof term or tactic block, e.g. 'by simp'")
    p.add_argument("--snippet", help="a whole Lean 4 snippet to typecheck")
    p.add_argument("--file", metavar="PATH", help="a Lean file (UTF-8) to typecheck as a snippet; - reads stdin")
    p.add_argument("--imports", nargs="+", metavar="MODULE", help="modules to import, e.g. Mathlib")
    p.add_argument("--timeout", type=float, default=60.0, help="wall-clock limit in seconds, 1..600 (default 60)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Run verify_formal and print the verdict, Lean's errors, and the caveat."""
    from mathlas.cli.user_file import read_text
    from mathlas.tools.lean_check import MAX_CHARS, verify_formal

    snippet = args.snippet
    if args.file is not None:
        if snippet is not None:
            raise UsageError("give --snippet or --file, not both")
        snippet = read_text(args.file, MAX_CHARS, "the Lean file")
    r = verify_formal(statement=args.statement, proof=args.proof, snippet=snippet, imports=args.imports,
                      timeout_s=args.timeout)
    ok = r.status in ("VERIFIED_PROOF", "TYPECHECKS")
    if args.json:
        json.dump(dataclasses.asdict(r), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0 if ok else 1
    print(f"{r.status}: {r.reason}")
    if r.header:
        print(f"statement: {r.header}")
    for m in r.errors:
        where = f"{m.region} line {m.region_line}, column {m.region_column}" if m.region_line else m.region
        print(f"\n[{where}] {m.severity}: {m.text}")
    if r.axioms is not None:
        print(f"\naxioms: {', '.join(r.axioms) or 'none'}")
    if r.install_hint:
        print(f"\n{r.install_hint}", file=sys.stderr)
    if r.toolchain:
        print(f"\ntoolchain: {r.toolchain}; sandbox: {', '.join(r.sandbox)}", file=sys.stderr)
    print(f"\nnote: {r.caveat}", file=sys.stderr)
    return 0 if ok else 1
