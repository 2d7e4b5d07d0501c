"""``mathlas findings add|list|remove|reindex``: the findings store (``mathlas.findings.store``) on the command line.

``--json`` prints machine output on stdout; talk goes to stderr. Importing this module is light.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys


def add_parser(subparsers) -> None:
    """Add the ``findings`` subcommand and its actions."""
    p = subparsers.add_parser("findings", help="results saved from the web (add_finding): add, list, remove, reindex",
                              description="The live findings store under $MATHLAS_DATA_DIR/findings: results "
                                          "found on the web, searched together with the bundle.")
    sub = p.add_subparsers(dest="findings_command", required=True, metavar="ACTION")
    a = sub.add_parser("add", help="save a result (what the add_finding tool does)")
    a.add_argument("statement", help="the statement (prose or LaTeX); '-' reads stdin")
    a.add_argument("source_url", help="the http(s) address where it was found")
    a.add_argument("--name", help="the result's usual name")
    a.add_argument("--slogan", help="one line saying what it is good for")
    a.add_argument("--json", action="store_true", help="machine-readable output")
    ls = sub.add_parser("list", help="list the stored findings, oldest first")
    ls.add_argument("--json", action="store_true", help="one JSON object per line (the stored records)")
    rm = sub.add_parser("remove", help="delete a finding by id")
    rm.add_argument("id", help="e.g. finding:0123456789abcdef, or its hash alone (0123456789abcdef)")
    rm.add_argument("--json", action="store_true", help="machine-readable output")
    ri = sub.add_parser("reindex", help="embed the findings that have no vector with the bundle's encoder")
    ri.add_argument("--bundle", "-b", default=os.environ.get("MATHLAS_BUNDLE"),
                    help="bundle whose encoder embeds them (default: $MATHLAS_BUNDLE or the default bundle)")
    ri.add_argument("--json", action="store_true", help="machine-readable output")
    ri.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run a ``findings`` action; returns the exit code (errors propagate as ``MathlasError``)."""
    from mathlas.findings.store import open_store

    action = args.findings_command
    if action == "add":
        from mathlas.tools.findings import add_finding

        from mathlas.cli.user_file import read_text
        from mathlas.findings.store import MAX_STATEMENT_CHARS

        # stdin read to the store's limit and one character more, never to its end (an endless pipe)
        statement = read_text("-", MAX_STATEMENT_CHARS, "the statement", strips=True) if args.statement == "-" else args.statement
        r = add_finding(statement, args.source_url, name=args.name, slogan=args.slogan)
        if args.json:
            print(json.dumps(dataclasses.asdict(r), ensure_ascii=False))
        else:
            print(f"{r.id}  {'added' if r.added else 'already stored'}")
            if not r.vector:
                print("no vector yet (no encoder was loaded): `mathlas findings reindex` embeds and stores it",
                      file=sys.stderr)
        return 0
    store = open_store()
    if action == "list":
        findings = store.all()
        vec = store.vectors()
        with_vec = set(vec[0]) if vec is not None else set()
        if args.json:
            for f in findings:
                print(json.dumps(f.to_json(), ensure_ascii=False))
            return 0
        if not findings:
            print(f"no findings in {store.path}", file=sys.stderr)
            return 0
        for f in findings:
            head = f.name or (f.statement[:70] + ("…" if len(f.statement) > 70 else ""))
            print(f"{f.id}  {f.added}  {'v' if f.id in with_vec else '-'}  {head}")
            print(f"    {f.source_url}")
        n_vec = len(with_vec & {f.id for f in findings})
        print(f"{len(findings)} finding(s), {n_vec} with vectors; {store.path}", file=sys.stderr)
        if n_vec < len(findings):
            n = len(findings) - n_vec
            it = "it" if n == 1 else "them"
            print(f"{n} without a vector (`-`): `mathlas findings reindex` embeds and stores {it} "
                  f"(until then each search embeds {it} in memory)", file=sys.stderr)
        return 0
    if action == "remove":
        f = store.remove(_finding_id(store, args.id))
        if args.json:
            print(json.dumps({"removed": f.to_json()}, ensure_ascii=False))
        else:
            print(f"removed {f.id}", file=sys.stderr)
        return 0
    if action == "reindex":
        from mathlas.engine import open_bundle

        bundle = open_bundle(args.bundle)
        todo = store.missing_vectors(bundle.encoder_fingerprint)
        if todo and not args.quiet:
            print(f"[embedding] {len(todo)} finding(s) with {bundle.name}-{bundle.version}'s encoder ...",
                  file=sys.stderr)
        n = store.embed(bundle, todo) if todo else 0
        vec = store.vectors()
        total = len(vec[0]) if vec is not None else 0
        if args.json:
            print(json.dumps({"embedded": n, "vectors": total, "findings": len(store),
                              "bundle": f"{bundle.name}-{bundle.version}"}))
        elif not args.quiet:
            print(f"embedded {n}; {total} of {len(store)} finding(s) have vectors", file=sys.stderr)
        return 0
    raise AssertionError(action)  # argparse allows only the actions above


def _finding_id(store, given: str) -> str:
    """The stored id ``given`` names: itself, or ``finding:`` + a bare hash (``dd10824f34541db7``,
    as ``findings list`` shows it after the prefix), any case; ``UsageError`` with the ids meant
    when it is only the start of one or more; anything else is left to the store's own message."""
    from mathlas.errors import UsageError
    from mathlas.findings.store import ID_PREFIX

    given = given.strip()
    stored = {f.id for f in store.all()}
    if not given or given in stored:
        return given
    digits = given.lower().removeprefix(ID_PREFIX)
    if ID_PREFIX + digits in stored:
        return ID_PREFIX + digits
    starts = sorted(x for x in stored if x.startswith(ID_PREFIX + digits)) if digits else []
    if starts:
        shown = " or ".join(starts[:5]) + (f" (or {len(starts) - 5} more)" if len(starts) > 5 else "")
        raise UsageError(f"no finding with id {given!r}; did you mean {shown}? (`mathlas findings list` shows them)")
    return given
