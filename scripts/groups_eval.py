"""The same theorem in several sources (mathlas.groups): its figures, measured on the default bundle.

    python scripts/groups_eval.py stats                      # groups, grouped documents per source, time
    python scripts/groups_eval.py sample --out SAMPLE.jsonl  # 120 grouped pairs (seed 31), both texts
    python scripts/groups_eval.py sample --cross --n 40 --seed 32 --out CROSS.jsonl   # pairs from two sources
    python scripts/groups_eval.py sample --census --out CENSUS.jsonl   # every pair from two sources, full texts
    python scripts/groups_eval.py precision                  # eval/collection/groups-judged.jsonl
    python scripts/groups_eval.py census                     # today's rules against the judged census
    python scripts/groups_eval.py collapse                   # Hit@10 of today's ranking, collapsed or not

``sample`` draws pairs of documents in one group (uniformly over all such pairs, seeded) and writes
each with both statements for judging; the judgments live in ``eval/collection/groups-judged.jsonl``
(``a``, ``b``, ``rule``, ``same`` true/false, ``why``), and ``precision`` reports the share judged the
same fact with a 95% bootstrap interval, by rule. The census (``sample --census``: every grouped pair
of documents from two sources, not a sample) is judged the same way, with the relation of the two
statements (``same``, ``contains``: one states the other among more; ``narrower``: one states it under
stronger hypotheses; ``special-case``, ``version``, ``notion``: a weaker statement, another theorem or
another meaning of the name; only the first two are the same fact). ``census`` groups the bundle with
today's rules and scores them against it: precision (strict, and lenient: ``narrower`` counted the same)
and recall of the judged correct pairs, on the seeded half the rules were chosen on, the other half
and the whole census, with the grouped cross-source pairs nobody judged yet. ``collapse`` ranks every query of the collection
(eval/collection) and shared/eval/informal-dev over the whole bundle (``search(q, k=50)``), then
compares its top ten with the collapsed top ten (``Groups.collapse(keys, 10)``): a hit when the shown
document is relevant (strict), or when any member of its group is (group).
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))

JUDGED = ROOT / "eval" / "collection" / "groups-judged.jsonl"
SEED = 33          # round 3 (rounds 1 and 2: docs/groups.md)
CENSUS = "census-cross-1.4.0"   # the judged census of cross-source pairs (eval/collection/groups-judged.jsonl)
SPLIT_SEED = 34    # the census' halves: rules chosen on the first, reported on the second
SAME = ("same", "contains")
LENIENT = SAME + ("narrower",)
SAMPLE = 120
BOOT = 10_000


def _bundle():
    from mathlas.engine import open_bundle

    return open_bundle()


def _interval(values: np.ndarray, seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(BOOT, len(values)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def stats(args) -> None:
    from mathlas import groups as G

    b = _bundle()
    t0, c0 = time.perf_counter(), time.process_time()
    g = G.groups_of(b, across=False, cache=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    G._save(G._cache_file(b, None), g)
    G._CACHE.pop(b, None)
    c1 = time.process_time()
    G.groups_of(b, across=False)
    cached = time.process_time() - c1
    s = g.stats()
    sizes = np.bincount([len(m) for m in g.members])
    cross = sum(1 for m in g.members for x in range(len(m)) for y in range(x + 1, len(m))
                if g.sources[m[x]] != g.sources[m[y]])
    print(json.dumps({"bundle": b.label, "documents": len(b), **s, "pairs": _pair_count(g), "cross_source_pairs": cross,
                      "sizes": {int(k): int(v) for k, v in enumerate(sizes) if v},
                      "compute_seconds_wall": round(wall, 3), "compute_seconds_cpu": round(cpu, 3),
                      "cached_seconds_cpu": round(cached, 3)}, indent=1))


def _pair_count(g) -> int:
    return sum(len(m) * (len(m) - 1) // 2 for m in g.members)


def _rule_of(g, a: int, b: int) -> str:
    """The rule of the link between a and b, or ``group`` when they are joined through others."""
    for link in g.links:
        if {link.a, link.b} == {a, b}:
            return link.rule
    return "group"


def _cross_pairs(g) -> list[tuple[int, int]]:
    return [(m[x], m[y]) for m in g.members for x in range(len(m)) for y in range(x + 1, len(m))
            if g.sources[m[x]] != g.sources[m[y]]]


def sample(args) -> None:
    from mathlas.groups import THRESHOLDS, groups_of

    if args.rule and args.rule not in THRESHOLDS:
        raise SystemExit(f"groups_eval.py: no rule {args.rule!r}; the rules are {', '.join(THRESHOLDS)}")
    b = _bundle()
    g = groups_of(b, across=False, cache=False)  # the links say which rule joined a pair
    if args.rule:      # only the pairs that rule linked (with --census: every one of them, whole texts)
        linked = {(min(x.a, x.b), max(x.a, x.b)) for x in g.links if x.rule == args.rule}
        pairs = [(a, c) for a, c in (_cross_pairs(g) if args.cross else
                                     [(m[x], m[y]) for m in g.members for x in range(len(m)) for y in range(x + 1, len(m))])
                 if (min(a, c), max(a, c)) in linked]
    elif args.census or args.cross:
        pairs = _cross_pairs(g)
    else:
        pairs = [(m[x], m[y]) for m in g.members for x in range(len(m)) for y in range(x + 1, len(m))]
    if args.census:    # every pair, in group order, each text whole (a long entry may state a second version)
        chosen, cut = pairs, None
    else:
        chosen, cut = sorted(random.Random(args.seed).sample(pairs, min(args.n, len(pairs)))), 1500
    with open(args.out, "w", encoding="utf-8") as f:
        for a, c in chosen:
            da, dc = b.get(b.column("id")[a].as_py()), b.get(b.column("id")[c].as_py())
            f.write(json.dumps({"a": da.id, "b": dc.id, "rule": _rule_of(g, a, c),
                                "a_kind": da.kind, "a_heading": da.heading, "a_body": da.body[:cut],
                                "b_kind": dc.kind, "b_heading": dc.heading, "b_body": dc.body[:cut]},
                               ensure_ascii=False) + "\n")
    what = ("pairs linked by " + args.rule if args.rule else "cross-source pairs") + ", all" if args.census else (
        f"grouped pairs (seed {args.seed})" + (f" linked by {args.rule}" if args.rule else ""))
    print(f"{len(chosen)} of {len(pairs)} {what} -> {args.out}")


def _judged(path) -> list[dict]:
    return [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]


def precision(args) -> None:
    rows = _judged(args.judged)
    for rnd, stratum in sorted({(r.get("round", 1), r.get("stratum", "all")) for r in rows}):
        part = [r for r in rows if r.get("round", 1) == rnd and r.get("stratum", "all") == stratum]
        same = np.array([1.0 if r["same"] else 0.0 for r in part])
        lo, hi = _interval(same)
        drawn = f"sample {part[0]['sample']}" if part[0].get("sample") else f"seed {part[0].get('seed')}"
        print(f"round {rnd}, {stratum} pairs ({drawn}): {len(part)}, {int(same.sum())} the same fact: "
              f"precision {same.mean():.3f} (95% bootstrap {lo:.3f}-{hi:.3f})")
        if any("relation" in r for r in part):
            relations: dict[str, int] = {}
            for r in part:
                relations[r["relation"]] = relations.get(r["relation"], 0) + 1
            lenient = np.array([1.0 if r["relation"] in LENIENT else 0.0 for r in part])
            lo, hi = _interval(lenient)
            print(f"  lenient (narrower counted the same) {lenient.mean():.3f} ({lo:.3f}-{hi:.3f}); relations: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(relations.items(), key=lambda kv: -kv[1])))
        for rule in sorted({r["rule"] for r in part}):
            x = [r["same"] for r in part if r["rule"] == rule]
            print(f"  {rule:16} {sum(x)}/{len(x)}")
        for r in part:
            if not r["same"]:
                print(f"  not the same: {r['a']} / {r['b']} ({r['rule']}): {r['why']}")


def census_halves(rows: list[dict], seed: int = SPLIT_SEED) -> tuple[list[dict], list[dict]]:
    """The census' rows (in file order) shuffled with ``seed``: the half the rules were chosen on, the other."""
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    half = len(rows) // 2
    return [rows[i] for i in sorted(order[:half])], [rows[i] for i in sorted(order[half:])]


def _score(rows: list[dict], grouped: set[frozenset[str]]) -> str:
    out = []
    for name, ok in (("strict", SAME), ("lenient", LENIENT)):
        kept = np.array([1.0 if r["relation"] in ok else 0.0 for r in rows if frozenset((r["a"], r["b"])) in grouped])
        right = sum(1 for r in rows if r["relation"] in ok)
        if len(kept) == 0:
            out.append(f"{name}: nothing grouped")
            continue
        lo, hi = _interval(kept)
        out.append(f"{name} precision {kept.mean():.3f} ({lo:.3f}-{hi:.3f}), recall {kept.sum() / right:.3f} "
                   f"({int(kept.sum())}/{right})")
    n = sum(1 for r in rows if frozenset((r["a"], r["b"])) in grouped)
    return f"{n} of {len(rows)} still grouped; " + "; ".join(out)


def census(args) -> None:
    """Today's rules against the judged census: precision and recall on each half and the whole."""
    from mathlas.groups import groups_of

    from mathlas import groups as G

    rows = [r for r in _judged(args.judged) if r.get("sample") == args.sample]
    if not rows:
        raise SystemExit(f"no rows of sample {args.sample!r} in {args.judged}")
    # another operating point of the rules (the module's constants), to measure it before changing them
    for rule, value in (("name", args.name_cosine), ("name-definition", args.definition_cosine),
                        ("near-duplicate", args.near_cosine)):
        if value is not None:
            G.THRESHOLDS[rule] = value
    if args.wording_share is not None:
        G.WORDING_SHARE = args.wording_share
    if args.wording_min_words is not None:
        G.WORDING_MIN_WORDS = args.wording_min_words
    print(f"rules: cosine {G.THRESHOLDS['name']} (name), {G.THRESHOLDS['name-definition']} (definition), "
          f"{G.THRESHOLDS['near-duplicate']} (near-duplicate); wording share {G.WORDING_SHARE} "
          f"(statements of {G.WORDING_MIN_WORDS}+ words)")
    b = _bundle()
    g = groups_of(b, across=False, cache=False)
    grouped = {frozenset((g.ids[x], g.ids[y])) for x, y in _cross_pairs(g)}
    first, second = census_halves(rows, args.seed)
    print(f"census {args.sample}: {len(rows)} judged pairs; today's rules group {len(grouped)} cross-source pairs")
    for name, part in ((f"half 1 (seed {args.seed}, the rules chosen on it)", first), ("half 2 (held out)", second),
                       ("whole census", rows)):
        print(f"  {name}: {_score(part, grouped)}")
    judged = {frozenset((r["a"], r["b"])) for r in rows}
    new = sorted(tuple(sorted(p)) for p in grouped - judged)
    print(f"  grouped cross-source pairs not in the census (unjudged): {len(new)}")
    for a, c in new[:20]:
        print(f"    {a} / {c}")


def _queries() -> list[dict]:
    from mathlas_build.training import collection as C

    recs = [{**r, "set": "collection"} for r in C.load(ROOT / "eval" / "collection")]
    judged = C.judgments(ROOT / "eval" / "collection")
    dev = ROOT.parent / "shared" / "eval" / "informal-dev.jsonl"
    if dev.is_file():
        for line in dev.read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                eq = {d for (qid, d), j in judged.items() if qid == q["id"] and j["label"] == "equivalent"}
                recs.append({**q, "set": "informal-dev", "relevant": sorted(set(q["targets"]) | eq)})
    return recs


def collapse(args) -> None:
    from mathlas_build.training import collection as C

    from mathlas.groups import groups_of

    b = _bundle()
    g = groups_of(b, across=False)
    ids = b.column("id").to_pylist()
    key_of = {d: i for i, d in enumerate(ids)}
    judged = {doc for (_, doc) in C.judgments(ROOT / "eval" / "collection")}
    out: dict[str, dict[str, list[float]]] = {}
    unjudged = 0
    moved = 0
    freed: list[int] = []
    for q in _queries():
        relevant = {key_of[d] for d in q["relevant"] if d in key_of}
        if not relevant:
            continue
        keys = [key_of[h.id] for h in b.search(q["query"], k=args.depth, collapse=False)]
        top = keys[:10]
        collapsed = g.collapse(keys, 10)
        shown = [k for k, _ in collapsed]
        group_hit = any(k in relevant or any(m in relevant for m in g.group(k)) for k in shown)
        row = {"before": float(any(k in relevant for k in top)),
               "before_group": float(any(k in relevant or any(m in relevant for m in g.group(k)) for k in top)),
               "strict": float(any(k in relevant for k in shown)),
               "group": float(group_hit)}
        new = [k for k in shown if k not in top]
        moved += bool(new)
        freed.append(len(new))
        unjudged += sum(1 for k in new if k not in relevant and ids[k] not in judged)
        for s in (q["set"], "all"):
            for m, v in row.items():
                out.setdefault(s, {}).setdefault(m, []).append(v)
    for s, rows in out.items():
        n = len(rows["before"])
        line = [f"{s}: {n} queries"]
        for m in ("before", "before_group", "strict", "group"):
            x = np.array(rows[m])
            lo, hi = _interval(x)
            line.append(f"{m} {x.mean():.3f} [{lo:.3f}, {hi:.3f}]")
        for m in ("strict", "group"):
            d = np.array(rows[m]) - np.array(rows["before"])
            lo, hi = _interval(d)
            line.append(f"{m}-before {d.mean():+.3f} [{lo:+.3f}, {hi:+.3f}]")
        print("; ".join(line))
    print(f"queries whose top ten changed: {moved} of {len(freed)}; ranks freed: {sum(freed)} "
          f"(mean {np.mean(freed):.3f} a query, at most {max(freed)}); "
          f"unjudged non-target documents brought in: {unjudged}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("stats").set_defaults(fn=stats)
    s = sub.add_parser("sample")
    s.add_argument("--out", required=True)
    s.add_argument("--n", type=int, default=SAMPLE)
    s.add_argument("--seed", type=int, default=SEED)
    s.add_argument("--cross", action="store_true", help="only pairs of documents from two sources")
    s.add_argument("--census", action="store_true", help="every pair of documents from two sources, whole texts")
    s.add_argument("--rule", default=None, help="only pairs this rule linked (e.g. restatement; with --census: all)")
    s.set_defaults(fn=sample)
    s = sub.add_parser("precision")
    s.add_argument("--judged", default=str(JUDGED))
    s.set_defaults(fn=precision)
    s = sub.add_parser("census")
    s.add_argument("--judged", default=str(JUDGED))
    s.add_argument("--sample", default=CENSUS)
    s.add_argument("--seed", type=int, default=SPLIT_SEED)
    for flag in ("--name-cosine", "--definition-cosine", "--near-cosine", "--wording-share"):
        s.add_argument(flag, type=float, help="measure another value of the rule's constant")
    s.add_argument("--wording-min-words", type=int)
    s.set_defaults(fn=census)
    s = sub.add_parser("collapse")
    s.add_argument("--depth", type=int, default=50)
    s.set_defaults(fn=collapse)
    args = p.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
