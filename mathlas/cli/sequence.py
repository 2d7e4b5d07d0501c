"""``mathlas sequence 1 1 2 3 5 8``: identify an integer sequence in the OEIS (identify_sequence).

Terms may be separate arguments or comma-separated; negative terms work as they are
(``mathlas sequence 1 -2 3 -4``; a comma list that starts with ``-`` goes after ``--``). ``--json`` prints the tool's result as JSON on stdout.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from typing import Any


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``sequence`` command to the main CLI's subparsers."""
    p = subparsers.add_parser("sequence", help="identify an integer sequence in the OEIS",
                              description="Find OEIS sequences containing the terms (offline; needs "
                                          "`mathlas data pull oeis` or $MATHLAS_OEIS_DIR).")
    p.add_argument("terms", nargs="+", help="at least 2 integers, e.g. 1 1 2 3 5 8 or 1,1,2,3,5,8")
    p.add_argument("-n", "--max-results", type=int, default=10, help="number of sequences, 1..1000 (default 10)")
    p.add_argument("--no-transforms", action="store_true",
                   help="exact lookup only (no sign, factor, shift, difference or partial-sum transforms)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Look the terms up and print the matches; exit code 1 when the OEIS data is missing."""
    from mathlas.tools.oeis import identify_sequence

    terms = [t for arg in args.terms for t in re.split(r"[\s,]+", arg) if t]
    r = identify_sequence(terms, max_results=args.max_results, transforms=not args.no_transforms)
    if args.json:
        json.dump(dataclasses.asdict(r), sys.stdout)
        sys.stdout.write("\n")
        return 0 if r.data_available else 1
    if not r.data_available:
        print(f"mathlas: {r.message}", file=sys.stderr)
        return 1
    print(r.message, file=sys.stderr)
    for m in r.matches:
        shown = ", ".join(map(str, m.terms[:20])) + (", ..." if len(m.terms) > 20 else "")
        how = f"  [{m.transform}]" if m.transform else ""
        print(f"{m.a_number}  {m.name}{how}")
        print(f"    offset {m.offset}: {shown}")
        print(f"    {m.url}")
    return 0
