"""Does a Lean declaration's name find it? (issue 30, part 3)

Draws ``--n`` declarations at random (``--seed``) from a formal bundle, of the kinds ``--kinds``
(theorem, lemma, def), written in the source (no generated name, no derived instance name), and
searches each two ways through the library's seam (``mathlas.service.lean_search``, what
``mathlas lean search`` and the MCP tool call):

* ``full``: the fully qualified name as typed (``Finset.sum_range_succ``): top-1 and top-10;
* ``last``: its last component (``sum_range_succ``): top-10, and top-1 among the names whose last
  component no other declaration shares (``unique``); ``shared`` are the others. A name of one
  component is its own last component and counts in ``full`` only.

* ``slip``: the full name with one slip in its last component (a letter left out, two neighbours
  swapped, one mistyped or one too many; seeded, never the first letter), and ``camel``: the full
  name with its last component's underscores dropped and the next letter capitalised
  (``Nat.Prime.twoLe``): top-1 and top-10 (``mathlas.ranking.names.NameIndex.identifier``).

``--no-names`` searches without the name stage (``mathlas.ranking.names.NameMatch``) and without
the correction of misspelt name words: the ranking before them, the "before" of docs/formal.md.
Proportions with Wilson 95% intervals.

``--eval FILE ...`` measures instead what names do to a dev set's queries (``shared/eval`` format:
query, targets): MRR@20 and Hit@10 with and without them, over the queries whose targets the bundle
holds, and how many queries the correction changed.

    python scripts/bench_names.py --bundle PATH_OR_NAME [--n 150] [--seed 0] [--no-names] [--json out.json]
    python scripts/bench_names.py --bundle PATH_OR_NAME --eval ../shared/eval/formal-dev.jsonl ...
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of ``hits`` out of ``n``."""
    if n == 0:
        return 0.0, 0.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def counted(hits: int, n: int) -> dict:
    """``hits`` of ``n`` as the benchmarks' JSON writes it: the rate and its Wilson interval."""
    lo, hi = wilson(hits, n)
    return {"hits": hits, "n": n, "rate": round(hits / max(1, n), 3), "ci95": [round(lo, 3), round(hi, 3)]}


def sample(b, n: int, seed: int, kinds: tuple[str, ...]) -> list[str]:
    """``n`` declaration names of ``kinds``, written in the source, drawn with ``seed``."""
    cols = b.table.column_names
    ids = b.table.column("id").to_pylist()
    kind = b.table.column("kind").to_pylist()
    generated = b.table.column("generated").to_pylist() if "generated" in cols else [None] * len(ids)
    derived = b.table.column("derived_name").to_pylist() if "derived_name" in cols else [None] * len(ids)
    pool = [i[len("lean:"):] for i, k, g, d in zip(ids, kind, generated, derived) if k in kinds and not g and not d]
    pool.sort()
    return random.Random(seed).sample(pool, min(n, len(pool)))


def without_names(b) -> None:
    """The ranking before names, for this process: the bundle's pipeline without the name stage, and
    queries searched as typed (no misspelling corrected)."""
    from mathlas.ranking import pipeline, plan
    from mathlas.ranking.names import Correction

    p = pipeline.pipeline_for(b)
    pipeline._PIPELINES[b] = p.with_stages([s for s in p.stages if s.name != "names"])
    plan.correction_for = lambda bundle, query: Correction(query)


def evaluate(bundle: str, files: list[str], k: int = 20) -> dict:
    """MRR@k and Hit@10 of each dev set with and without names (see the module docstring), on a
    formal bundle (the Lean search) or an informal one (the informal search)."""
    from mathlas.formal import open_formal
    from mathlas.ranking.names import correction_for
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    from mathlas.engine import open_bundle
    from mathlas.request import SearchRequest
    from mathlas.service import search

    b = open_bundle(bundle)
    if "module" in b.table.column_names:
        b = open_formal(b)
        ask = lambda q: lean_search(LeanSearchRequest.make(q, k), b).hits  # noqa: E731
    else:  # an informal bundle: its own search, saved findings left out
        ask = lambda q: search(SearchRequest.make(q, k), b, findings=False).hits  # noqa: E731
    have = set(b.table.column("id").to_pylist())
    sets = {}
    for f in files:
        rows = [json.loads(line) for line in Path(f).read_text(encoding="utf-8").splitlines() if line.strip()]
        if rows and "targets" not in rows[0]:  # the collection's drafts: targets beside them, by id
            targets = {t["id"]: t["targets"] for g in sorted((Path(f).parent / "targets").glob("*.jsonl"))
                       for t in map(json.loads, g.read_text(encoding="utf-8").splitlines()) if t.get("targets")}
            rows = [{**r, "targets": targets.get(r["id"], [])} for r in rows]
        rows = [r for r in rows if set(r["targets"]) & have]
        sets[Path(f).name] = (rows, sum(bool(correction_for(b, r["query"]).corrected) for r in rows))
        typos = [r for r in rows if r.get("typo")]
        if typos:  # the drafts' marked misspellings, on their own
            sets[Path(f).name + " (typo)"] = (typos, sum(bool(correction_for(b, r["query"]).corrected) for r in typos))
    out: dict = {"bundle": b.label}
    for label in ("with", "without"):
        if label == "without":
            without_names(b)
        for name, (rows, corrected) in sets.items():
            rr, hit = [], []
            for r in rows:
                hits = ask(r["query"])
                ranks = [i for i, h in enumerate(hits, 1) if h.id in r["targets"]]
                rr.append(1 / ranks[0] if ranks else 0.0)
                hit.append(bool(ranks) and ranks[0] <= 10)
            out.setdefault(name, {"queries": len(rows), "corrected": corrected})[label] = {
                f"mrr@{k}": round(sum(rr) / max(1, len(rr)), 4), "hit@10": round(sum(hit) / max(1, len(hit)), 4)}
    return out


def slip(name: str, rng: random.Random) -> str | None:
    """``name`` with one slip in its last component (None when that component is too short)."""
    head, _, last = name.rpartition(".")
    letters = [i for i, c in enumerate(last) if c.isalpha() and i > 0]
    if len(last) < 5 or len(letters) < 2:
        return None
    i = rng.choice(letters)
    how = rng.choice(("drop", "swap", "typo", "extra"))
    if how == "drop":
        new = last[:i] + last[i + 1:]
    elif how == "swap" and i + 1 < len(last) and last[i + 1] != last[i]:
        new = last[:i] + last[i + 1] + last[i] + last[i + 2:]
    elif how == "extra":
        new = last[:i] + rng.choice("aeiourstln") + last[i:]
    else:
        new = last[:i] + rng.choice([c for c in "aeiourstln" if c != last[i]]) + last[i + 1:]
    return f"{head}.{new}" if head else new


def camel(name: str) -> str | None:
    """``name`` with its last component's underscores dropped, the letter after each capitalised."""
    head, _, last = name.rpartition(".")
    parts = last.split("_")
    if len(parts) < 2 or not all(parts):
        return None
    new = parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])
    return f"{head}.{new}" if head else new


def rank_of(target: str, hits) -> int | None:
    return next((i for i, h in enumerate(hits, 1) if h.id == target), None)


def run(bundle: str, n: int, seed: int, kinds: tuple[str, ...], names: bool, k: int = 10) -> dict:
    from mathlas.formal import open_formal
    from mathlas.ranking.names import NameIndex
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    b = open_formal(bundle)
    if not names:
        without_names(b)
    index = NameIndex.of(b)
    t0 = time.perf_counter()
    index.build()
    built = time.perf_counter() - t0
    drawn = sample(b, n, seed, kinds)
    rows = []
    t_search = 0.0
    rng = random.Random(f"slips:{seed}")
    for name in drawn:
        target = f"lean:{name}"
        row = {"name": name}
        forms = [("full", name), ("last", name.rsplit(".", 1)[-1]), ("slip", slip(name, rng)), ("camel", camel(name))]
        for form, query in forms:
            if form == "last" and query == name or query is None or form == "camel" and query == name:
                continue
            if form in ("slip", "camel"):
                row[f"{form}_query"] = query
            t = time.perf_counter()
            r = lean_search(LeanSearchRequest.make(query, k), b)
            t_search += time.perf_counter() - t
            row[form] = rank_of(target, r.hits)
            row[f"{form}_match"] = r.match
            if form == "last":
                row["sharing"] = len(index.suffix(query))  # declarations whose name ends so, itself included
        rows.append(row)

    def share(pred, subset) -> dict:
        hits = sum(1 for r in subset if pred(r))
        lo, hi = wilson(hits, len(subset))
        return {"hits": hits, "n": len(subset), "rate": round(hits / max(1, len(subset)), 3),
                "ci95": [round(lo, 3), round(hi, 3)]}

    full = rows
    last = [r for r in rows if "last" in r]
    unique = [r for r in last if r["sharing"] <= 1]
    result = {
        "bundle": b.label, "n": len(rows), "seed": seed, "kinds": list(kinds), "names_stage": names,
        "full_top1": share(lambda r: r["full"] == 1, full),
        "full_top10": share(lambda r: r["full"] is not None, full),
        "full_strong": share(lambda r: r["full_match"] == "strong", full),
        "last_top10": share(lambda r: r["last"] is not None, last),
        "last_top1_unique": share(lambda r: r["last"] == 1, unique),
        "last_top10_shared": share(lambda r: r["last"] is not None, [r for r in last if r["sharing"] > 1]),
        "slip_top1": share(lambda r: r["slip"] == 1, [r for r in rows if "slip" in r]),
        "slip_top10": share(lambda r: r["slip"] is not None, [r for r in rows if "slip" in r]),
        "camel_top1": share(lambda r: r["camel"] == 1, [r for r in rows if "camel" in r]),
        "camel_top10": share(lambda r: r["camel"] is not None, [r for r in rows if "camel" in r]),
        "index_build_s": round(built, 3),
        "search_ms_mean": round(1000 * t_search / max(1, len(full) + len(last)), 2),
        "rows": rows,
    }
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", required=True, help="the formal bundle: a name or a directory (--eval: any bundle)")
    ap.add_argument("--n", type=int, default=150)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kinds", default="theorem,lemma,def")
    ap.add_argument("--no-names", action="store_true", help="search without the name stage (the ranking before it)")
    ap.add_argument("--json", help="write the figures and every row here")
    ap.add_argument("--eval", nargs="+", metavar="FILE", help="dev sets: MRR@20 and Hit@10 with and without names")
    args = ap.parse_args(argv)
    if args.eval:
        res = evaluate(args.bundle, args.eval)
        print(json.dumps(res, indent=1))
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
        return 0
    res = run(args.bundle, args.n, args.seed, tuple(args.kinds.split(",")), names=not args.no_names)
    for key in ("full_top1", "full_top10", "full_strong", "last_top10", "last_top1_unique", "last_top10_shared",
                "slip_top1", "slip_top10", "camel_top1", "camel_top10"):
        x = res[key]
        print(f"{key:<18} {x['hits']:>4}/{x['n']:<4} {x['rate']:.3f}  [{x['ci95'][0]:.3f}, {x['ci95'][1]:.3f}]")
    print(f"{res['bundle']}: name index built in {res['index_build_s']} s; {res['search_ms_mean']} ms a search "
          f"(names stage {'on' if res['names_stage'] else 'off'})")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
