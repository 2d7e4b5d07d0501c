#!/usr/bin/env python3
"""Findings against the bundle, both directions (issue 20, item 8; docs/findings.md "Search").

In a scratch data directory (the default bundle installed there, the findings stores beside it),
on the dev set's queries, through ``Bundle.rank`` as every surface calls it:

* **stored findings**: 1, 10 and 400 real statements of the bundle (a seeded sample, embedded
  with the bundle's encoder, each its LaTeX body under its name) are stored, ``unrelated`` ones
  (neither a target of a dev query nor in the top 20 of one) or ``random`` ones (any but a
  target); MRR@20 of the set (restricted to its labelled sources, findings allowed) against the
  no-findings figure and its bootstrap 95% interval, and how many queries rank their target
  lower / higher than without findings;
* **a restating finding**: for each query, alone in the store, one finding whose statement is its
  first target's retrieval text (``text``), or its LaTeX body under its name (``body``): how often
  it is in the top 3 (and, beside it, how often the target itself is);
* **takeover**: one finding ("Every finite integral domain is a field.") and 60 varied queries
  that are not about it (unrestricted, as the library searches): how often it is #1 / in the top 10.

Each figure for the findings as they are searched now (``now``: extra documents of the bundle's
lexical and dense channels, merged into each channel's ranking by score; issue 29) and as they were
before issue 20 (``before``: a copy of that channel below, a list of the findings with its own rank
1, fused as one more channel weighted like both bundle channels together), in the same run.

    python scripts/bench_findings.py [--queries shared/eval/informal-dev.jsonl] [--bundle B] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVAL = Path(os.environ.get("MATHLAS_EVAL", REPO.parent / "shared" / "eval"))
TAKEOVER = "Every finite integral domain is a field."
# Words of queries that are about the takeover finding (left out of the 60)
ABOUT_IT = ("domain", "field", "integral", "finite")


def talk(*a) -> None:
    print(*a, file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------ the old channel

def before_pipeline(bundle):
    """The bundle's pipeline with the findings as they were before issue 20 (commit 4665ed2): their
    own BM25 over the findings and cosine over all stored vectors, RRF (k 10) of the two, fused with
    the bundle's channels as one more channel (``findings``) weighted like them together."""
    import math
    import re
    from collections import Counter

    import numpy as np

    from mathlas.bundle import lexical_words
    from mathlas.ranking.candidates import Ranking
    from mathlas.ranking.fusion import rrf
    from mathlas.ranking.lexical import query_terms
    from mathlas.ranking.pipeline import Pipeline, pipeline_for

    def words(text):
        return [w.lower() for w in re.findall(r"\w+", lexical_words(text))]

    def old_lexical(findings, query, depth):
        tfs = [Counter(words(f.search_text)) for f in findings]
        lens = [sum(t.values()) for t in tfs]
        avg = sum(lens) / len(lens)
        df = Counter(w for t in tfs for w in t)
        n = len(tfs)
        scores = {}
        for w in set(query_terms(query)):
            if w not in df:
                continue
            idf = math.log(1.0 + (n - df[w] + 0.5) / (df[w] + 0.5))
            for i, t in enumerate(tfs):
                if w in t:
                    norm = 1.2 * (1 - 0.75 + 0.75 * lens[i] / (avg or 1.0))
                    scores[i] = scores.get(i, 0.0) + idf * t[w] * 2.2 / (t[w] + norm)
        return [i for i, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:depth]]

    class Before(Pipeline):
        def channel_rankings(self, plan):
            own = {}
            if plan.bundle_part:
                own = {name: self.channel(name).rank(plan.query, plan.depth, plan.filters) for name in plan.channels}
            extra = plan.extra
            if extra is None:
                return own, own
            lists = [old_lexical(extra.findings, plan.query.text, plan.depth)] if "lexical" in plan.channels else []
            if "dense" in plan.channels and (plan.bundle_part or extra.has_vectors()):
                pos, cos = extra.dense_scores(plan.query.vector())
                lists.append(pos[np.argsort(-cos, kind="stable")][:plan.depth].tolist())
            lists = [x for x in lists if x] or [[]]
            if len(lists) == 1:
                keys = np.array(lists[0], dtype=np.int64)
            else:
                fused = rrf({str(c): Ranking.of(np.array(x, dtype=np.int64)) for c, x in enumerate(lists)},
                            plan.depth, k_rrf=10.0)
                keys = fused.keys
            if not len(keys):
                return own, own
            plan.channel_weights["findings"] = sum(float(plan.channel_weights.get(c, 1.0)) for c in plan.channels)
            return own, {**own, "findings": Ranking.of(keys + extra.base)}

    now = pipeline_for(bundle)
    before = Before(bundle)
    before.vectors, before.masks = now.vectors, now.masks
    return before


VARIANTS = ("before", "now")


# ------------------------------------------------------------------------------ the measurements

def ranked_ids(pipeline, query: str, store, k: int = 20, sources=None) -> list[str]:
    from mathlas.request import SearchRequest

    if sources and store is not None:
        sources = [*sources, "findings"]
    req = SearchRequest.make(query, k, sources=list(sources or ()))
    return [h.id for h in pipeline.rank(req, findings=store).hits]


def fill(store, bundle, findings: list[tuple[str, str, str]]) -> None:
    """Empty ``store`` and add ``findings`` ((statement, url, name) each), embedded."""
    for f in store.all():
        store.remove(f.id)
    for statement, url, name in findings:
        store.add(statement, url, name=name or None)
    store.embed(bundle)


def mrr(pipeline, queries, store, sources) -> tuple[dict, list]:
    from mathlas.retrieval_eval import bootstrap_mrr, first_rank, metrics

    ranks, times = [], []
    for q in queries:
        t = time.perf_counter()
        ids = ranked_ids(pipeline, q["query"], store, 20, sources)
        times.append(time.perf_counter() - t)
        ranks.append(first_rank(ids, q["targets"]))
    m = metrics(ranks)
    m["p50_ms"] = round(1000 * sorted(times)[len(times) // 2], 1)
    m["mrr@20_ci95"] = [round(x, 3) for x in bootstrap_mrr(ranks)]
    return m, ranks


def statement_sample(bundle, queries, n: int, seed: int, near_too: bool) -> list[tuple[str, str, str]]:
    """``n`` statements of the bundle (LaTeX body under its name, as an agent would save one) that
    no dev query targets; with ``near_too``, also none that a dev query ranks in its top 20
    (unrestricted): unrelated to every query. A seeded sample."""
    near = {t for q in queries for t in q["targets"]}
    if near_too:
        for q in queries:
            near.update(h.id for h in bundle.search(q["query"], k=20))
    ids = bundle.table.column("id").to_pylist()
    eligible = [key for key, i in enumerate(ids) if i not in near]
    keys = random.Random(seed).sample(eligible, n)
    out = []
    for j, key in enumerate(keys):
        d = bundle.get(ids[key])
        out.append(((d.body or d.text).strip() or d.text, f"https://example.org/statement/{j}", d.name))
    return out


def takeover_queries(n: int = 60) -> list[str]:
    out = []
    for name in ("informal-dev.jsonl", "formal-qr-dev.jsonl", "formal-dev.jsonl"):
        path = EVAL / name
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            q = json.loads(line)["query"]
            if any(w in q.lower() for w in ABOUT_IT) or "`" in q or "$" in q or len(q.split()) < 3 or q in out:
                continue
            out.append(q)
    return out[:n]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", type=Path, default=EVAL / "informal-dev.jsonl")
    p.add_argument("--bundle", default=None, help="bundle name or directory (default: the default bundle)")
    p.add_argument("--counts", default="1,10,400", help="how many unrelated findings, comma-separated")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    counts = [int(x) for x in args.counts.split(",")]

    scratch = Path(tempfile.mkdtemp(prefix="mathlas-bench-findings-"))
    os.environ["MATHLAS_DATA_DIR"] = str(scratch / "data")
    try:
        return run(args, counts, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run(args, counts: list[int], scratch: Path) -> int:
    import mathlas
    from mathlas.findings.store import FindingsStore
    from mathlas.ranking.pipeline import pipeline_for
    from mathlas.retrieval_eval import first_rank, label_prefixes, load_queries

    t0 = time.time()
    queries = load_queries(args.queries)
    bundle = mathlas.open_bundle(args.bundle)
    talk(f"bundle {bundle.label} ({len(bundle):,} documents), {len(queries)} queries from {args.queries.name}")
    sources = [s for s in bundle.source_names if s in label_prefixes(queries)]
    store = FindingsStore(scratch / "findings")
    pipelines = {"before": before_pipeline(bundle), "now": pipeline_for(bundle)}
    result: dict = {"bundle": bundle.label, "queries": args.queries.name, "n": len(queries), "seed": args.seed}

    base, base_ranks = mrr(pipelines["now"], queries, None, sources)
    result["no_findings"] = base
    lo, hi = base["mrr@20_ci95"]
    talk(f"no findings: MRR@20 {base['mrr@20']:.3f} [{lo}, {hi}]")

    result["stored"] = {}
    for kind, near_too in (("unrelated", True), ("random", False)):
        sample = statement_sample(bundle, queries, max(counts), args.seed, near_too)
        for n in counts:
            fill(store, bundle, sample[:n])
            row = {}
            for which in VARIANTS:
                m, ranks = mrr(pipelines[which], queries, store, sources)
                row[which] = {"mrr@20": m["mrr@20"], "p@1": m["p@1"], "hit@10": m["hit@10"], "p50_ms": m["p50_ms"],
                              "within_ci": lo <= m["mrr@20"] <= hi,
                              "worse": sum((r or 99) > (b or 99) for r, b in zip(ranks, base_ranks)),
                              "better": sum((r or 99) < (b or 99) for r, b in zip(ranks, base_ranks))}
                talk(f"{n} {kind}, {which}: MRR@20 {m['mrr@20']:.3f}")
            result["stored"][f"{n} {kind}"] = row

    result["restating"] = {}
    target_top3 = sum(r is not None and r <= 3 for r in base_ranks)
    for variant in ("text", "body"):
        row = {w: 0 for w in VARIANTS}
        row.update({f"{w}_as_high_as_target": 0 for w in VARIANTS})
        for q, base_rank in zip(queries, base_ranks):
            d = bundle.get(q["targets"][0])
            statement, name = (d.text, "") if variant == "text" else ((d.body or d.text).strip(), d.name)
            fill(store, bundle, [(statement, "https://example.org/restates", name)])
            fid = store.all()[0].id
            for which in VARIANTS:
                at = first_rank(ranked_ids(pipelines[which], q["query"], store, 20, sources), [fid])
                row[which] += at is not None and at <= 3
                # as high as the first target ranked without it (that target's first target, any)
                row[f"{which}_as_high_as_target"] += at is not None and (base_rank is None or at <= base_rank)
        row["target_in_top3_without"] = target_top3
        result["restating"][variant] = row
        talk(f"restating ({variant}): top 3 " + ", ".join(f"{w} {row[w]}/{len(queries)}" for w in VARIANTS))

    tq = takeover_queries()
    fill(store, bundle, [(TAKEOVER, "https://example.org/fid", "")])
    fid = store.all()[0].id
    result["takeover"] = {"queries": len(tq)}
    for which in VARIANTS:
        lists = [ranked_ids(pipelines[which], q, store, 10) for q in tq]
        result["takeover"][which] = {"first": sum(x[:1] == [fid] for x in lists), "top10": sum(fid in x for x in lists)}
    result["seconds"] = round(time.time() - t0, 1)

    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    n = len(queries)
    names = {"before": "before", "now": "now"}
    print(f"{bundle.label}, {args.queries.name} ({n} queries, hybrid, restricted to {', '.join(sources)} + findings)")
    print(f"no findings: MRR@20 {base['mrr@20']:.3f} [{lo:.3f}, {hi:.3f}], P@1 {base['p@1']:.3f}, "
          f"Hit@10 {base['hit@10']:.3f}, search p50 {base['p50_ms']} ms")
    print()
    print("| findings stored | " + " | ".join(f"MRR@20 {names[w]} (worse / better)" for w in VARIANTS)
          + " | search p50, now |")
    print("|---:|" + "---:|" * (len(VARIANTS) + 1))
    for c, row in result["stored"].items():
        cells = [f"{row[w]['mrr@20']:.3f}{'' if row[w]['within_ci'] else ' (out)'} ({row[w]['worse']} / {row[w]['better']})"
                 for w in VARIANTS]
        print(f"| {c} | " + " | ".join(cells) + f" | {row['now']['p50_ms']} ms |")
    print()
    print("| restating finding: in top 3 (as high as its target was) | " + " | ".join(names[w] for w in VARIANTS)
          + " | its target in top 3, without it |")
    print("|---|" + "---:|" * (len(VARIANTS) + 1))
    for v, row in result["restating"].items():
        print(f"| statement = target's {v} | "
              + " | ".join(f"{row[w]}/{n} ({row[w + '_as_high_as_target']}/{n})" for w in VARIANTS)
              + f" | {row['target_in_top3_without']}/{n} |")
    print()
    t = result["takeover"]
    print(f"| one unrelated finding, {t['queries']} queries | #1 | top 10 |")
    print("|---|---:|---:|")
    for which in VARIANTS:
        print(f"| {names[which]} | {t[which]['first']}/{t['queries']} | {t[which]['top10']}/{t['queries']} |")
    talk(f"{result['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
