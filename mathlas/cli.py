"""The ``mathlas`` command. stdout carries data (``--json`` is machine output), stderr carries talk.

Exit codes: 0 ok, 1 data problem (missing/corrupt bundle, failed install), 2 usage error.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import textwrap

from mathlas import cli_mcp  # light: imports the mcp SDK only when the server starts
from mathlas import cli_data, cli_findings, cli_formal, cli_funsearch, cli_lean, cli_scaffold, cli_sequence  # light: heavy imports in run()
from mathlas.errors import MathlasError, UsageError


def _bundle_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bundle", "-b", default=os.environ.get("MATHLAS_BUNDLE"),
                   help="bundle path or installed name (default: $MATHLAS_BUNDLE or the default bundle)")


def _add_search(sub) -> None:
    p = sub.add_parser("search", help="search a bundle", description="Rank theorems and definitions for a query.")
    p.add_argument("query", help="words, a claim, or a formula (LaTeX welcome)")
    p.add_argument("-k", type=int, default=10, help="number of hits, 1..1000 (default 10)")
    p.add_argument("--source", action="append", dest="sources", metavar="S", help="only this source (repeatable)")
    p.add_argument("--exclude-source", action="append", dest="exclude", metavar="S", help="drop this source (repeatable)")
    p.add_argument("--kind", action="append", dest="kinds", metavar="K", help="only this kind, e.g. theorem (repeatable)")
    p.add_argument("--mode", choices=("hybrid", "lexical", "dense"), default="hybrid")
    g = p.add_argument_group("paper filters (bundles of papers, e.g. TheoremSearch; docs/papers.md)")
    g.add_argument("--author", action="append", dest="authors", metavar="NAME",
                   help="an author's name, whole words, e.g. 'T. Tao' (repeatable: any of them)")
    g.add_argument("--category", action="append", dest="categories", metavar="CAT",
                   help="arXiv category, e.g. math.AG, or an archive such as math (repeatable: any of them)")
    g.add_argument("--year-min", type=int, metavar="Y")
    g.add_argument("--year-max", type=int, metavar="Y")
    g.add_argument("--citations-min", type=int, metavar="N")
    g.add_argument("--citations-max", type=int, metavar="N")
    g.add_argument("--journal", choices=("yes", "no"), dest="journal",
                   help="only papers with (yes) or without (no) a journal reference")
    p.add_argument("--prior", action="append", dest="priors", metavar="NAME=W",
                   help="weight of a document prior the bundle declares, e.g. citations=0.002 (repeatable)")
    _bundle_arg(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _paper_filter(args) -> dict | None:
    pf = {"authors": args.authors, "categories": args.categories, "year_min": args.year_min,
          "year_max": args.year_max, "citations_min": args.citations_min, "citations_max": args.citations_max,
          "journal_published": None if args.journal is None else args.journal == "yes"}
    pf = {key: v for key, v in pf.items() if v is not None}
    return pf or None


def _priors(items: list[str] | None) -> dict[str, float] | None:
    if not items:
        return None
    out = {}
    for item in items:
        name, sep, w = item.partition("=")
        try:
            out[name.strip()] = float(w)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise UsageError(f"--prior takes NAME=WEIGHT, e.g. citations=0.002, got {item!r}")
    return out


def _add_show(sub) -> None:
    p = sub.add_parser("show", help="show one document by its stable id")
    p.add_argument("id", help="e.g. stacks:00DV, planetmath:HilbertBasisTheorem")
    _bundle_arg(p)
    p.add_argument("--json", action="store_true")


def _add_eval(sub) -> None:
    p = sub.add_parser("eval", help="score a bundle on a query file (JSONL with targets)")
    p.add_argument("queries", help="JSONL file: {query, targets, style, area} per line")
    p.add_argument("-k", type=int, default=20)
    p.add_argument("--mode", action="append", dest="modes", choices=("lexical", "dense", "hybrid"),
                   help="evaluate only these modes (repeatable; default all three)")
    p.add_argument("--prior", action="append", default=[], metavar="NAME=WEIGHT",
                   help="document prior weight, e.g. pagerank=0.05 (repeatable; default: the bundle's); "
                        "with a non-zero prior every mode is also run with priors off (<mode>-noprior)")
    _bundle_arg(p)
    p.add_argument("--json", action="store_true")


def _term_width() -> int:
    return max(60, min(shutil.get_terminal_size((100, 20)).columns, 120))


def print_hits(hits, out=sys.stdout) -> None:
    width = _term_width()
    if not hits:
        print("no results", file=out)
        return
    for i, h in enumerate(hits, start=1):
        ranks = ", ".join(f"{c} #{r}" for c, r in h.ranks.items() if r is not None)
        name = h.name or h.title or h.kind
        print(f"{i:>2}. {h.id}  {name}", file=out)
        print(f"    {h.source} · {h.kind}" + (f" · {h.title}" if h.title and h.title != name else "")
              + f"  [{ranks}]", file=out)
        if h.link:
            print(f"    {h.link}", file=out)
        lines = textwrap.wrap(h.text, width=width - 4, max_lines=2, placeholder=" …")
        for line in lines:
            print(f"    {line}", file=out)
        print(file=out)


def cmd_search(args) -> int:
    # the same function the MCP tool is, so the CLI also sees saved findings (mathlas findings add)
    from mathlas.tools.search import search_existing_math

    source_filter = {"include": args.sources or [], "exclude": args.exclude or []}
    result = search_existing_math(args.query, k=args.k, mode=args.mode, kinds=args.kinds, bundle=args.bundle,
                                  source_filter=source_filter if args.sources or args.exclude else None,
                                  paper_filter=_paper_filter(args), priors=_priors(args.priors))
    if args.json:
        json.dump(dataclasses.asdict(result), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print_hits(result.hits)
    return 0


def cmd_show(args) -> int:
    from mathlas.tools.search import get_by_id  # the MCP tool: also resolves finding: ids

    hit = get_by_id(args.id, bundle=args.bundle)
    if args.json:
        json.dump(dataclasses.asdict(hit), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    print(f"{hit.id}  {hit.name}")
    print(f"{hit.source} · {hit.kind}" + (f" · {hit.title}" if hit.title else ""))
    if hit.link:
        print(hit.link)
    print(f"license: {hit.license}")
    if hit.slogan:
        print(f"\nslogan: {hit.slogan}")
    print("\n" + hit.body.strip())
    return 0


def cmd_eval(args) -> int:
    import mathlas
    from mathlas.evaluate import METRICS, evaluate, load_queries

    queries = load_queries(args.queries)
    bundle = mathlas.open_bundle(args.bundle)
    modes = args.modes or ["lexical", "dense", "hybrid"]
    priors = _priors(args.prior)
    result = evaluate(bundle, queries, k=args.k, modes=modes, priors=priors)
    modes = [m for m in result if isinstance(result[m], dict) and "mrr@20" in result[m]]
    if args.json:
        json.dump(result, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    print(f"{result['n']} queries, bundle {result['bundle']}, restricted to {', '.join(result['restricted_to'])}")
    head = f"{'':<22}" + "".join(f"{m:>9}" for m in METRICS) + "   MRR@20 95% CI   no result"
    print("\n" + head)
    for mode in modes:
        m = result[mode]
        lo, hi = m["mrr@20_ci95"]
        print(f"{mode:<22}" + "".join(f"{m[x]:>9.3f}" for x in METRICS) + f"   [{lo:.3f}, {hi:.3f}]   {m['no_result']}")
    for group in ("style", "source", "area"):
        keys = sorted({key for mode in modes for key in result[mode][f"by_{group}"]})
        if group == "area" and len(keys) < 2:
            continue
        print(f"\nby {group} (hit@10 / mrr@20)")
        print(f"{'':<22}" + "".join(f"{mode:>18}" for mode in modes))
        for key in keys:
            cells = []
            for mode in modes:
                b = result[mode][f"by_{group}"][key]
                cells.append(f"{b['hit@10']:.2f} / {b['mrr@20']:.2f}")
            n = result[modes[0]][f"by_{group}"][key]["n"]
            print(f"{key + f' ({n})':<22}" + "".join(f"{c:>18}" for c in cells))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from mathlas import __version__

    p = argparse.ArgumentParser(prog="mathlas", description="Offline math search and no-LLM math tools.")
    p.add_argument("--version", action="version", version=f"mathlas {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_search(sub)
    _add_show(sub)
    _add_eval(sub)
    cli_mcp.add_parser(sub)
    cli_scaffold.add_parser(sub)
    cli_funsearch.add_parser(sub)
    cli_findings.add_parser(sub)
    cli_sequence.add_parser(sub)
    cli_formal.add_parser(sub)
    cli_data.add_parser(sub)
    cli_lean.add_parser(sub)
    try:
        from mathlas import cli_index
    except ImportError:  # pragma: no cover
        cli_index = None
    if cli_index is not None:
        cli_index.add_parser(sub)
    return p


COMMANDS = {"search": cmd_search, "show": cmd_show, "eval": cmd_eval, "mcp": cli_mcp.run,
            "checklist": cli_scaffold.run, "scaffold": cli_scaffold.run, "directive": cli_scaffold.run,
            "funsearch": cli_funsearch.run, "sequence": cli_sequence.run, "data": cli_data.run,
            "findings": cli_findings.run, "verify-formal": cli_formal.run, "lean": cli_lean.run}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command in COMMANDS:
            return COMMANDS[args.command](args)
        from mathlas import cli_index

        return cli_index.run(args)
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
