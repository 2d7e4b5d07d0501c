"""``mathlas checklist``, ``mathlas scaffold`` and ``mathlas directive``: the scaffold tools on the
command line. ``--json`` prints exactly what the MCP tool returns; without it a short readable view.
Importing this module is light (the tools load inside ``run``).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import sys
from typing import Any

COMMANDS = ("checklist", "scaffold", "directive")


def _bundle(p: argparse.ArgumentParser) -> None:
    p.set_defaults(run=run)
    p.add_argument("--bundle", "-b", default=os.environ.get("MATHLAS_BUNDLE"),
                   help="bundle to fetch ids from / search (default: $MATHLAS_BUNDLE or the default bundle)")
    p.add_argument("--json", action="store_true", help="machine-readable output (the MCP tool's result)")


def add_parser(subparsers) -> None:
    """Add the ``checklist``, ``scaffold`` and ``directive`` subcommands."""
    p = subparsers.add_parser("checklist", help="split a statement into preconditions and conclusion",
                              description="Split a theorem's statement (LaTeX or prose, or a stable id "
                                          "such as stacks:00DV) into a checklist of preconditions and its "
                                          "conclusion, for marking against a problem.")
    p.add_argument("statement", help="the statement, a stable id like stacks:00DV, or a name (\"Nakayama's "
                   "lemma\": looked up in the bundle, used on a strong match); '-' reads stdin")
    p.add_argument("--problem", "-p", help="problem text to split the same way, side by side")
    _bundle(p)
    p = subparsers.add_parser("scaffold", help="needs<->guarantees between a problem and a candidate result",
                              description="The problem's signature, the candidate's checklist, explicit "
                                          "questions and a JSON answer template.")
    p.add_argument("--problem", "-p", required=True, help="the problem (prose or LaTeX)")
    p.add_argument("--candidate", "-c", required=True, help="the candidate's statement, stable id, or name "
                   "(\"Nakayama's lemma\": looked up in the bundle, used on a strong match)")
    _bundle(p)
    p = subparsers.add_parser("directive", help="an offline literature-search plan for a problem",
                              description="arXiv queries, sub-fields and arXiv categories, named results "
                                          "from the bundle and the mathlas tools to run next. No web call.")
    p.add_argument("problem", help="the problem or question (prose or LaTeX); '-' reads stdin")
    p.add_argument("-k", type=int, default=15, help="bundle hits to draw from, 1..100 (default 15)")
    _bundle(p)


# stdin is read to this many characters, never to its end (an endless pipe hung the command); the tools
# cut what they read at their own limit and say so (mathlas.tools.scaffold.MAX_CHARS)
MAX_STDIN_CHARS = 1_000_000


def _text(value: str) -> str:
    from mathlas.cli.user_file import read_text

    return read_text("-", MAX_STDIN_CHARS, "the text") if value == "-" else value


def _print_checklist(c) -> None:
    print(f"statement ({c.source}):" if c.source != "text" else "statement:")
    print(f"  {c.statement[:400]}{' …' if len(c.statement) > 400 else ''}")
    print("preconditions:")
    for i, p in enumerate(c.preconditions, 1):
        print(f"  [ ] P{i}. {p.text}" + ("   (nested)" if p.nested else ""))
    for part in c.parts:
        print(f"  part ({part.label}):")
        for p in part.preconditions:
            print(f"      [ ] {p.text}")
        print(f"      => {part.conclusion}")
    print(f"conclusion:\n  {c.conclusion or '(none found)'}")
    if c.problem is not None:
        print("problem gives:")
        for h in c.problem_hypotheses:
            print(f"  - {h}")
        print(f"problem asks:\n  {c.problem_goal or '(no goal found)'}")
    for n in c.notes:
        print(f"note: {n}", file=sys.stderr)


def _print_questions(questions) -> None:
    """Each question with what to read it against: the two sides' objects for the symbol mapping,
    the problem's likely matches (its hypotheses sharing the most words) for the rest."""
    print("questions:")
    for q in questions:
        print(f"  {q.id}. {q.question}")
        if q.kind == "objects":
            print(f"      candidate: {q.candidate_side or '(no objects found)'}")
            print(f"      problem:   {q.problem_side or '(no objects found)'}")
        elif q.likely_matches:
            print("      likely matches in the problem:")
            for m in q.likely_matches:
                print(f"        - {m}")
        else:
            print("      likely matches in the problem: none share its words")


def command_line(tool: str, arguments: dict[str, Any], bundle: str | None = None) -> str | None:
    """The shell command that runs ``tool`` with ``arguments`` (a directive's next step), whole and
    quoted for a POSIX shell; ``bundle`` is passed on to the commands that read it. None: the tool
    has no command here."""
    where = ["--bundle", bundle] if bundle else []
    a = arguments
    if tool == "get_by_id":
        argv = ["mathlas", "show", a["id"], *where]
    elif tool == "mapping_scaffold":
        argv = ["mathlas", "scaffold", "--problem", a["problem"], "--candidate", a["candidate"], *where]
    elif tool == "search_existing_math":
        argv = ["mathlas", "search", a["query"], *(["--mode", a["mode"]] if a.get("mode") else []), *where]
    elif tool == "search_formal_math":
        argv = ["mathlas", "lean", "search", a["query"]]  # the formal bundle, not the directive's
    elif tool == "identify_constant":
        argv = ["mathlas", "constant", str(a["value"])]
    elif tool == "identify_sequence":
        argv = ["mathlas", "sequence", *(str(t) for t in a["terms"])]
    else:
        return None
    return shlex.join(argv)


def _print_next_steps(steps, bundle: str | None) -> None:
    """The next steps as a block a person can paste into a shell: the why as a comment, the command
    whole on its own line (never cut: a cut command cannot be run)."""
    print("next steps:")
    for s in steps:
        print(f"  # {' '.join(s.why.split())}")
        cmd = command_line(s.tool, s.arguments, bundle)
        print(f"  {cmd}" if cmd else f"  {s.tool} {json.dumps(s.arguments, ensure_ascii=False)}")


def run(args) -> int:
    """Run one of the scaffold subcommands; errors propagate to ``mathlas.cli.main``."""
    if args.command == "checklist":
        from mathlas.tools.scaffold import applicability_checklist

        result = applicability_checklist(_text(args.statement), problem=args.problem, bundle=args.bundle)
    elif args.command == "scaffold":
        from mathlas.tools.scaffold import mapping_scaffold

        result = mapping_scaffold(args.problem, args.candidate, bundle=args.bundle)
    else:
        from mathlas.tools.directive import search_directive

        result = search_directive(_text(args.problem), k=args.k, bundle=args.bundle)
    if args.json:
        json.dump(dataclasses.asdict(result), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    if args.command == "checklist":
        if (named := result.by_name) is not None:
            print(f"statement read as a name: using {named.id} {named.title} (match {named.match})")
        _print_checklist(result)
    elif args.command == "scaffold":
        if (named := result.candidate.by_name) is not None:
            print(f"--candidate read as a name: using {named.id} {named.title} (match {named.match})")
        _print_checklist(result.candidate)
        _print_questions(result.questions)
        print("answer template (JSON):")
        print(json.dumps(result.answer_template, ensure_ascii=False, indent=2))
    else:
        print(f"key terms: {', '.join(result.key_terms)}")
        print("sub-fields:")
        for s in result.subfields:
            print(f"  MSC {s.msc} {s.name}  ->  {', '.join(s.arxiv_categories)}")
        print("arXiv queries:")
        for q in result.arxiv_queries:
            print(f"  {q.query}\n    {q.url}")
        print("named results (from the bundle):")
        for r in result.named_results:
            print(f"  {r.id}  {r.name}  [{r.kind}]")
        # the bundle the person named goes on to the next commands; $MATHLAS_BUNDLE reaches them by itself
        named = args.bundle if args.bundle != os.environ.get("MATHLAS_BUNDLE") else None
        _print_next_steps(result.next_tools, named)
        for n in result.notes:
            print(f"note: {n}", file=sys.stderr)
    return 0
