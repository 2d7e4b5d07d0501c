"""The same theorem in several sources (mathlas.groups): its figures, measured on the default bundle.

    python scripts/groups_eval.py stats                      # groups, grouped documents per source, time
    python scripts/groups_eval.py sample --out SAMPLE.jsonl  # 120 grouped pairs (seed 31), both texts
    python scripts/groups_eval.py sample --cross --n 40 --seed 32 --out CROSS.jsonl   # pairs from two sources
    python scripts/groups_eval.py precision                  # eval/collection/groups-judged.jsonl
    python scripts/groups_eval.py collapse                   # Hit@10 of today's ranking, collapsed or not

``sample`` draws pairs of documents in one group (uniformly over all such pairs, seeded) and writes
each with both statements for judging; the judgments live in ``eval/collection/groups-judged.jsonl``
(``a``, ``b``, ``rule``, ``same`` true/false, ``why``), and ``precision`` reports the share judged the
same fact with a 95% bootstrap interval, by rule. ``collapse`` ranks every query of the collection
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
SEED = 33          # round 3, the rules as they are (rounds 1 and 2: docs/groups.md)
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


def sample(args) -> None:
    from mathlas.groups import groups_of

    b = _bundle()
    g = groups_of(b, across=False, cache=False)  # the links say which rule joined a pair
    pairs = [(m[x], m[y]) for m in g.members for x in range(len(m)) for y in range(x + 1, len(m))
             if not args.cross or g.sources[m[x]] != g.sources[m[y]]]
    rng = random.Random(args.seed)
    chosen = sorted(rng.sample(pairs, min(args.n, len(pairs))))
    with open(args.out, "w", encoding="utf-8") as f:
        for a, c in chosen:
            da, dc = b.get(b.column("id")[a].as_py()), b.get(b.column("id")[c].as_py())
            f.write(json.dumps({"a": da.id, "b": dc.id, "rule": _rule_of(g, a, c),
                                "a_kind": da.kind, "a_heading": da.heading, "a_body": da.body[:1500],
                                "b_kind": dc.kind, "b_heading": dc.heading, "b_body": dc.body[:1500]},
                               ensure_ascii=False) + "\n")
    print(f"{len(chosen)} of {len(pairs)} grouped pairs (seed {args.seed}) -> {args.out}")


def precision(args) -> None:
    rows = [json.loads(x) for x in Path(args.judged).read_text(encoding="utf-8").splitlines() if x.strip()]
    for rnd, stratum in sorted({(r.get("round", 1), r.get("stratum", "all")) for r in rows}):
        part = [r for r in rows if r.get("round", 1) == rnd and r.get("stratum", "all") == stratum]
        same = np.array([1.0 if r["same"] else 0.0 for r in part])
        lo, hi = _interval(same)
        print(f"round {rnd}, {stratum} pairs (seed {part[0].get('seed')}): {len(part)}, {int(same.sum())} the same fact: "
              f"precision {same.mean():.3f} (95% bootstrap {lo:.3f}-{hi:.3f})")
        for rule in sorted({r["rule"] for r in part}):
            x = [r["same"] for r in part if r["rule"] == rule]
            print(f"  {rule:16} {sum(x)}/{len(x)}")
        for r in part:
            if not r["same"]:
                print(f"  not the same: {r['a']} / {r['b']} ({r['rule']}): {r['why']}")


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
    s.set_defaults(fn=sample)
    s = sub.add_parser("precision")
    s.add_argument("--judged", default=str(JUDGED))
    s.set_defaults(fn=precision)
    s = sub.add_parser("collapse")
    s.add_argument("--depth", type=int, default=50)
    s.set_defaults(fn=collapse)
    args = p.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
