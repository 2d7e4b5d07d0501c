"""``mathlas constant``, ``mathlas verify-numeric`` and ``mathlas conjecture``: the numeric tools
(identify_constant, verify_numeric, conjecture_relation) on the command line.

::

    mathlas constant 1.6449340668482264364724151666460251892189499012068
    mathlas verify-numeric "sum_{n>=1} 1/n^2 = pi^2/6" --digits 40
    mathlas verify-numeric --expression "pi^2/6" --value 1.6449340668482264364724
    mathlas conjecture 1.4142135623730950488016887242096980785696718753769 --json

Exit codes, as for verify-formal: 0 when the answer is positive (identified, VERIFIED, a relation
found), 1 when it is not (nothing found, REFUTED, UNDETERMINED), 2 usage error. ``--json`` prints
the tool's result on stdout; without it, stdout has the answer and stderr how it was reached.
Importing this module is light (mpmath and sympy load in the numeric worker).
"""
from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from mathlas.cli.common import json_option, print_json

VALUE_HELP = "a decimal number; give every digit you trust (e.g. 1.6449340668482264365)"


def add_parser(sub: Any) -> None:
    """Add ``constant``, ``verify-numeric`` and ``conjecture``."""
    p = sub.add_parser("constant", help="find a closed form for a decimal number (identify_constant)",
                       description="Find closed forms for a decimal number from pi, e, gamma, Catalan, zeta(3), logs "
                                   "and roots (PSLQ); each is re-checked by sympy to every given digit.")
    p.add_argument("value", help=VALUE_HELP)
    p.add_argument("--digits", type=int, help="significant digits to trust (default: all given, at most 1000)")
    p.add_argument("--basis", nargs="+", metavar="CONST", help="constants instead of the default ones, e.g. pi 'zeta(5)'")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds, up to 600 (default 20)")
    json_option(p)
    p.set_defaults(run=cmd_constant)

    p = sub.add_parser("verify-numeric", help="check a numeric claim at high precision (verify_numeric)",
                       description="Check 'left = right', or --expression against --value, at high precision: "
                                   "VERIFIED, REFUTED or UNDETERMINED (syntax: docs/numeric.md).")
    p.add_argument("claim", nargs="?", help="e.g. 'sum_{n>=1} 1/n^2 = pi^2/6'")
    p.add_argument("--expression", help="an expression, checked against --value")
    p.add_argument("--value", help="a decimal (the expression must round to it) or another expression")
    p.add_argument("--digits", type=int, default=50, help="significant digits to confirm, 1..1000 (default 50)")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds, up to 600 (default 20)")
    json_option(p)
    p.set_defaults(run=cmd_verify)

    p = sub.add_parser("conjecture", help="search for relations a number satisfies (conjecture_relation)",
                       description="Search harder for relations a number satisfies (PSLQ over a rich basis, "
                                   "generalized continued fractions, continued-fraction patterns). Every relation "
                                   "is numerically verified and labelled a conjecture: evidence, not proof.")
    p.add_argument("value", help=VALUE_HELP)
    p.add_argument("--digits", type=int, help="significant digits to trust (default: all given)")
    p.add_argument("--max-terms", type=int, default=6, help="longest integer relation tried, 3..8 (default 6)")
    p.add_argument("--cf-depth", type=int, default=200, help="continued fraction search depth, 50..2000 (default 200)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds, up to 600 (default 30)")
    json_option(p)
    p.set_defaults(run=cmd_conjecture)


def cmd_constant(args: argparse.Namespace) -> int:
    from mathlas.tools.numeric import identify_constant
    from mathlas.tools.numeric.value import digits_text

    r = identify_constant(args.value, digits=args.digits, basis=args.basis, timeout=args.timeout)
    if args.json:
        print_json(r)
    elif r.best is None:
        print(f"not identified: {r.reason}")
    else:
        print(f"{r.best.expression}    ({r.best.digits_agreed} digits agree; LaTeX {r.best.latex})")
        for c in r.candidates:
            if c != r.best:
                print(f"  also: {c.expression}    ({c.digits_agreed} digits)")
    if not args.json:
        print(f"{digits_text(r.digits)} used, {digits_text(r.forms_searched, 'form')} searched in {r.elapsed_s:g} s",
              file=sys.stderr)
    return 0 if r.identified else 1


# the next step after a claim refuted only because its decimal is read as exact, as this command's line
STEP = ("run: mathlas verify-numeric --expression {expression} --value {value}", shlex.quote)


def cmd_verify(args: argparse.Namespace) -> int:
    from mathlas.tools.numeric.verify import verify_with_step

    r = verify_with_step(STEP, claim=args.claim, expression=args.expression, value=args.value, digits=args.digits,
                         timeout=args.timeout)
    if args.json:
        print_json(r)
    else:
        print(f"{r.verdict}: {r.reason}")
        if r.reevaluated:
            print(f"  re-evaluated: {r.reevaluated}", file=sys.stderr)
    return 0 if r.verdict == "VERIFIED" else 1


def cmd_conjecture(args: argparse.Namespace) -> int:
    from mathlas.tools.numeric import conjecture_relation
    from mathlas.tools.numeric.conjecture import cf_text, reliable_terms

    r = conjecture_relation(args.value, digits=args.digits, max_terms=args.max_terms, cf_depth=args.cf_depth,
                            timeout=args.timeout)
    if args.json:
        print_json(r)
        return 0 if r.found else 1
    for rel in r.relations:
        print(f"{rel.kind}: {rel.expression}    ({rel.digits_agreed} digits agree; conjectured, not proved)")
    if r.cf:
        few = (f"  (only {reliable_terms(len(r.cf))} at {r.digits} digits: give more digits for more)"
               if len(r.cf) < 3 else "")
        print(f"continued fraction: {cf_text(r.cf)}" + (f"  pattern: {r.cf_pattern}" if r.cf_pattern else "") + few)
    if not r.found:
        print(f"no relation found{': ' + r.reason if r.reason else ''}", file=sys.stderr)
    print(f"searched: {', '.join(r.searched) or 'nothing'}{'' if r.complete else ' (cut short)'} "
          f"in {r.elapsed_s:g} s", file=sys.stderr)
    return 0 if r.found else 1
