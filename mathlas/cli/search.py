"""``mathlas search``, ``mathlas show`` and ``mathlas eval``: the informal search tools and the
retrieval evaluation on the command line. Importing this module is light (the search loads in the call).
"""
from __future__ import annotations

import argparse
import shutil
import sys

from mathlas.cli.common import SEARCH_QUIET_HELP, bundle_option, json_option, print_json, quiet_option
from mathlas.checks import name_weights
from mathlas.request import MAX_K, MODES

K_HELP = f"number of hits, 1..{MAX_K} (default 10)"  # mathlas search and mathlas lean search
# what the answer's first line on stderr says (mathlas search and mathlas lean search)
MATCH_EPILOG = ("The first line on stderr says how far to trust the hits: match strong, weak or none, and the "
                "confidence it was read from. strong means the confidence reached the bundle's threshold (compared "
                "before the two decimals shown: weak 0.88 beside strong 0.89 is expected) or that the query names the "
                "first hit. It describes the search from its first hit, the same on every page. -q keeps it.")


def add_parser(sub) -> None:
    """Add ``search``, ``show`` and ``eval``."""
    _add_search(sub)
    _add_show(sub)
    _add_eval(sub)


def _add_search(sub) -> None:
    p = sub.add_parser("search", help="search a bundle", description="Rank theorems and definitions for a query.",
                       epilog=MATCH_EPILOG)
    p.add_argument("query", help="words, a claim, or a formula (LaTeX welcome)")
    p.add_argument("-k", type=int, default=10, help=K_HELP)
    p.add_argument("--offset", type=int, default=0, help="skip this many of the best hits (the next page: offset + k)")
    p.add_argument("--source", action="append", dest="sources", metavar="S", help="only this source (repeatable; any case)")
    p.add_argument("--exclude-source", action="append", dest="exclude", metavar="S", help="drop this source (repeatable; any case)")
    p.add_argument("--kind", action="append", dest="kinds", metavar="K", help="only this kind, e.g. theorem (repeatable)")
    p.add_argument("--mode", choices=MODES, default="hybrid",
                   help="hybrid (default: BM25 and the encoder fused, the learned stage ordering them), lexical "
                        "(BM25 alone: exact words and names) or dense (the encoder alone)")
    p.add_argument("--rerank", action=argparse.BooleanOptionalAction, default=None,
                   help="rescore the best hits with the bundle's reranker, or not (default: the bundle's choice)")
    p.add_argument("--all-copies", action="store_true",
                   help="show every copy of a theorem (by default each is shown once, its other sources listed as "
                        "'also in')")
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
    p.add_argument("--kind-weight", action="append", dest="kind_weights", metavar="KIND=W",
                   help="factor on a kind's scores over the bundle's own, e.g. proof=0.5; 0 drops the kind (repeatable)")
    bundle_option(p)
    json_option(p)
    quiet_option(p, SEARCH_QUIET_HELP)
    p.set_defaults(run=cmd_search)


def _paper_filter(args) -> dict | None:
    pf = {"authors": args.authors, "categories": args.categories, "year_min": args.year_min,
          "year_max": args.year_max, "citations_min": args.citations_min, "citations_max": args.citations_max,
          "journal_published": None if args.journal is None else args.journal == "yes"}
    pf = {key: v for key, v in pf.items() if v is not None}
    return pf or None


def _add_show(sub) -> None:
    p = sub.add_parser("show", help="show one document by its stable id",
                       description="Show one document by its stable id (a search shows each hit's): its heading, "
                                   "where it lives, link, licence and whole statement.")
    p.add_argument("id", help="e.g. stacks:00DV, planetmath:HilbertBasisTheorem, or the start of an id an "
                              "'also in' line names (proofwiki:952b3052)")
    bundle_option(p)
    json_option(p)
    quiet_option(p)
    p.set_defaults(run=cmd_show)


def _add_eval(sub) -> None:
    p = sub.add_parser("eval", help="score a bundle on a query file (JSONL with targets)")
    p.add_argument("queries", help="JSONL file: {query, targets, style, area} per line")
    p.add_argument("-k", type=int, default=20)
    p.add_argument("--mode", action="append", dest="modes", choices=MODES,
                   help="evaluate only these modes (repeatable; default all three)")
    p.add_argument("--prior", action="append", default=[], metavar="NAME=WEIGHT",
                   help="document prior weight, e.g. pagerank=0.05 (repeatable; default: the bundle's); "
                        "with a non-zero prior every mode is also run with priors off (<mode>-noprior)")
    r = p.add_mutually_exclusive_group()
    r.add_argument("--restrict", action="append", metavar="SRC",
                   help="rank only this source (repeatable; default: the sources the targets come from)")
    r.add_argument("--no-restrict", action="store_true", help="rank the whole bundle")
    bundle_option(p)
    json_option(p)
    quiet_option(p)
    p.set_defaults(run=cmd_eval)


def _term_width() -> int:
    return max(60, min(shutil.get_terminal_size((100, 20)).columns, 120))


# What the CLI calls each argument of a search, for messages: the flag the person typed
CLI_LABELS = {"sources": "--source", "exclude_sources": "--exclude-source", "kinds": "--kind",
              "kind_weights": "--kind-weight", "priors": "--prior", "source_weights": "source weights"}


def print_hits(hits, out=None, start: int = 1) -> None:
    """Hits (``Hit`` objects) as the one renderer draws them (``mathlas.render.listing``)."""
    import dataclasses

    from mathlas.render import listing

    # sys.stdout as it is now (a default bound at import kept a stream a wrapper or test had replaced)
    text = listing([dataclasses.asdict(h) for h in hits], start=start, width=_term_width())
    print(text if text.endswith("\n") else text + "\n", file=out or sys.stdout, end="")  # "no results" too


def cmd_search(args) -> int:
    # the library's search capability, the one every surface calls (it also sees saved findings)
    from mathlas.request import SearchRequest
    from mathlas.service import search

    req = SearchRequest.make(args.query, args.k, mode=args.mode, sources=args.sources, exclude_sources=args.exclude,
                             kinds=args.kinds, paper_filter=_paper_filter(args),
                             priors=name_weights(args.priors, "--prior", "citations=0.002"), offset=args.offset,
                             rerank=args.rerank, collapse=not args.all_copies,
                             kind_weights=name_weights(args.kind_weights, "--kind-weight", "proof=0.5"),
                             labels=CLI_LABELS)
    result = search(req, args.bundle)  # --source Stacks is stacks; a miss names the closest source (service)
    if args.json:
        print_json(result)
        return 0
    from mathlas.render import search_notes

    # what it was searched as, where it was cut, how far to trust the hits: part of the answer, kept by -q
    for note in search_notes(result, args.offset):
        print(f"mathlas: {note}", file=sys.stderr, flush=True)
    print_hits(result.hits, start=args.offset + 1)
    if args.quiet:  # -q: no tips
        return 0
    if not result.hits:
        hint = ("nothing passed the filters; try without --source/--kind or another --mode" if req.filtered
                else "try other words, a shorter query, or --mode lexical for exact names")
        print(f"mathlas: {hint}", file=sys.stderr)
    for step in result.next:
        if step.tool == "identify_constant":  # the query is a number
            print(f"{step.why}: mathlas constant {step.arguments['value']}", file=sys.stderr)
    return 0


def cmd_show(args) -> int:
    from mathlas.render import document as render_document
    from mathlas.service import document

    doc = document(args.id, bundle=args.bundle)  # also resolves finding: ids and lean: ids
    if args.json:
        print_json(doc, indent=2)
        return 0
    import dataclasses

    print(render_document(dataclasses.asdict(doc)), end="")
    return 0


def cmd_eval(args) -> int:
    from mathlas.engine import open_bundle
    from mathlas.retrieval_eval import METRICS, REPORT_ORDER, evaluate, load_queries

    queries = load_queries(args.queries)
    bundle = open_bundle(args.bundle)
    modes = args.modes or list(REPORT_ORDER)
    priors = name_weights(args.prior, "--prior", "citations=0.002")
    restrict = False if args.no_restrict else (args.restrict or True)
    result = evaluate(bundle, queries, k=args.k, modes=modes, priors=priors, restrict=restrict)
    modes = [m for m in result if isinstance(result[m], dict) and "mrr@20" in result[m]]
    if args.json:
        print_json(result)
        return 0
    where = result["restricted_to"]
    print(f"{result['n']} queries, bundle {result['bundle']}, "
          + ("not restricted" if where == "all" else f"restricted to {', '.join(where)}"))
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
        labels = {key: f"{key} ({result[modes[0]][f'by_{group}'][key]['n']})" for key in keys}
        width = max(22, *(len(x) + 1 for x in labels.values()))  # a long area name keeps the columns aligned
        print(f"\nby {group} (hit@10 / mrr@20)")
        print(f"{'':<{width}}" + "".join(f"{mode:>18}" for mode in modes))
        for key in keys:
            cells = []
            for mode in modes:
                b = result[mode][f"by_{group}"][key]
                cells.append(f"{b['hit@10']:.2f} / {b['mrr@20']:.2f}")
            print(f"{labels[key]:<{width}}" + "".join(f"{c:>18}" for c in cells))
    return 0
