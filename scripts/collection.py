"""The judged query collection: run a ranking over it, pool unjudged hits for judging, report.

    python scripts/collection.py run --config rrf --out eval/collection/runs/rrf.json
    python scripts/collection.py run --config service --bundle DIR --out eval/collection/runs/service.json
    python scripts/collection.py run --config ltr --model eval/collection/models/ltr.json --out ...
    python scripts/collection.py pool eval/collection/runs/*.json --out batch-dir
    python scripts/collection.py report eval/collection/runs/rrf.json eval/collection/runs/ltr.json
    python scripts/collection.py dump --out statements.tsv

Every run ranks the collection's queries (eval/collection, JUDGING.md) and shared/eval/informal-dev
over the whole default bundle (no source restriction) and keeps each query's top 20 ids. ``report``
gives P@1, Hit@10, MRR@20 and nDCG@10 with 95% bootstrap intervals by split (tune / check / dev),
style and source, and the paired difference of each run against the first; it refuses while any
compared top ten holds a hit that is neither a target nor judged (``pool`` writes those out).

A run ranks the later rounds too (eval/collection/fresh, round-3 and round-4: each drafted after the
learned stage of its time was trained); ``pool`` and ``report`` take them in with ``--rounds 1,2,3,4``
(``--fresh``: the first two), in the report's ``round=N`` rows (the match table's and the paired
table's too); its ``split=`` rows are the first round's.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))

from mathlas_build.training import collection as C  # noqa: E402

COLLECTION = ROOT / "eval" / "collection"
DEV = ROOT.parent / "shared" / "eval" / "informal-dev.jsonl"


def records(offtopic: bool = False, rounds: tuple[int, ...] = (1,)) -> list[dict]:
    """The collection's records (``rounds``, by default the first) and informal-dev's (``dev``)."""
    recs = C.load(COLLECTION, with_offtopic=offtopic, rounds=rounds)
    judged = C.judgments(COLLECTION)
    if DEV.is_file():
        for line in DEV.read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                eq = {d for (qid, d), j in judged.items() if qid == q["id"] and j["label"] == "equivalent"}
                recs.append({**q, "split": "dev", "relevant": sorted(set(q["targets"]) | eq), "fact": ""})
    return recs


def ranker(config: str, model: str | None, bundle: str | None = None):
    from mathlas.engine import open_bundle

    b = open_bundle(bundle)
    ids = b.column("id")
    if config in ("rrf", "lexical", "dense"):
        mode = "hybrid" if config == "rrf" else config

        def rank(q: str) -> list[str]:
            return [h.id for h in b.search(q, k=20, mode=mode)]
        return rank
    if config in ("service", "service-all"):
        from mathlas import service
        from mathlas.request import SearchRequest

        spec = bundle or None

        def rank(q: str) -> list[str]:
            req = SearchRequest.make(q, 20, collapse=(config == "service"))
            answer = service.search(req, spec, findings=False)
            rank.matches[q] = answer.match  # what the answer's match line said (kept in the run file)
            return [h.id for h in answer.hits]
        rank.matches = {}
        return rank
    if config.startswith("without:"):  # what a person gets, with some stages left out: an ablation
        from mathlas.ranking.pipeline import Pipeline
        from mathlas.ranking.stages import default_stages
        from mathlas.request import SearchRequest

        stages = default_stages(b)
        names = {x for x in config.split(":", 1)[1].split(",") if x}
        unknown = names - {st.name for st in stages}
        if unknown:
            raise SystemExit(f"collection.py: no stage {sorted(unknown)[0]!r} (stages: "
                             + ", ".join(st.name for st in stages) + ")")
        pipeline = Pipeline(b, stages=[st for st in stages if st.name not in names])

        def rank(q: str) -> list[str]:
            return [h.id for h in pipeline.rank(SearchRequest.make(q, 20, collapse=True)).hits]
        return rank
    if config.startswith("ltr") or config == "pool-rrf":
        import numpy as np

        from mathlas.ranking.learned import model_from_spec
        from mathlas_build.training import ltr

        m = (model_from_spec(json.loads(Path(model).read_text(encoding="utf-8")))
             if model and config != "pool-rrf" else None)

        def rank(q: str) -> list[str]:
            p = ltr.pool(b, q)
            order = p.keys if m is None else p.keys[np.argsort(-m.score(p.X), kind="stable")]
            return [ids[k].as_py() for k in order[:20].tolist()]
        return rank
    raise SystemExit(f"collection.py: unknown config {config!r} (rrf, lexical, dense, service, service-all, "
                     "pool-rrf, ltr)")


def cmd_run(a) -> None:
    rank = ranker(a.config, a.model, a.bundle)
    out, matches = {}, {}
    for r in records(offtopic=True, rounds=(1, *C.ROUNDS)):
        seen, ranked = set(), []
        for d in rank(r["query"]):
            if d not in seen:
                seen.add(d)
                ranked.append(d)
        out[r["id"]] = ranked
        if hasattr(rank, "matches"):
            matches[r["id"]] = rank.matches[r["query"]]
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    doc = {"config": a.config, "model": a.model, "runs": out, **({"match": matches} if matches else {})}
    Path(a.out).write_text(json.dumps(doc, indent=0), encoding="utf-8")
    print(f"{len(out)} queries ranked -> {a.out}")


def load_run(path: str) -> dict[str, list[str]]:
    """A run file written by ``run`` (its ``runs``: query id -> top ids), refused in one line otherwise."""
    try:
        runs = json.loads(Path(path).read_text(encoding="utf-8"))["runs"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"collection.py: {path} is not a run file ({type(e).__name__}: {e}); "
                         "make one with `collection.py run`") from None
    if not isinstance(runs, dict):
        raise SystemExit(f"collection.py: {path} is not a run file (its runs are not a mapping)")
    return runs


def rounds_of(a) -> tuple[int, ...]:
    """``--rounds 1,2,3`` (``--fresh``: 1,2; neither: 1), refused in one line when it names no round."""
    if not a.rounds:
        return (1, 2) if a.fresh else (1,)
    try:
        return C.parse_rounds(a.rounds)
    except ValueError as e:
        raise SystemExit(f"collection.py: --rounds {e}") from None


def subset(recs: list[dict], name: str | None) -> list[dict]:
    """``long``: the research-level statements typed whole (``collection.LONG_WORDS`` words or more)."""
    if not name:
        return recs
    if name == "long":
        return [r for r in recs if len(r["query"].split()) >= C.LONG_WORDS]
    raise SystemExit(f"collection.py: unknown subset {name!r} (long)")


def cmd_pool(a) -> None:
    from mathlas.engine import open_bundle

    recs = subset(records(rounds=rounds_of(a)), a.subset)
    runs = {Path(p).stem: load_run(p) for p in a.runs}
    todo = C.unjudged(recs, runs, C.judgments(COLLECTION), depth=a.depth)
    b = open_bundle()
    by_id = {r["id"]: r for r in recs}

    def text(doc: str) -> str:
        try:
            d = b.get(doc)
        except Exception:
            return "(not in the bundle)"
        return f"[{d.kind}] {d.name}: {(d.text or '')[:700]}"

    items = []
    for (qid, doc), names in sorted(todo.items()):
        r = by_id[qid]
        items.append({"qid": qid, "query": r["query"], "fact": r.get("fact", ""),
                      "targets": {t: text(t)[:400] for t in r["targets"][:3]}, "doc": doc, "hit": text(doc),
                      "runs": sorted(names)})
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    size = max(1, -(-len(items) // a.batches))
    for i in range(a.batches):
        part = items[i * size:(i + 1) * size]
        (out / f"batch-{i + 1}.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in part),
                                                  encoding="utf-8")
    print(f"{len(items)} unjudged top-{a.depth} hits over {len(runs)} runs -> {a.batches} batches in {out}")


def match_report(path: Path, recs: list[dict], allrecs: list[dict], run: dict[str, list[str]]) -> None:
    """What the answers' ``match`` said (a service run keeps it): P@1 among ``strong`` answers, ``none``
    over queries whose fact the sources state (false), over misspelt names, and over off-topic queries."""
    said = json.loads(path.read_text(encoding="utf-8")).get("match")
    if not said:
        return
    print(f"\n## match of {path.stem}")
    print("| group | strong | P@1 among strong | false none | misspelt names none | off-topic none |")
    print("|---|---|---|---|---|---|")
    off = [r for r in allrecs if r.get("area") == "offtopic" and r["id"] in said]
    for g in ("all", "split=check", "split=dev", *(f"round={n}" for n in C.ROUNDS)):
        sub = [r for r in recs if r["relevant"] and C.in_group(r, g) and r["id"] in said]
        if not sub:
            continue
        strong = [r for r in sub if said[r["id"]] == "strong"]
        right = sum(1 for r in strong if run.get(r["id"], [None])[:1][0] in set(r["relevant"]))
        none = sum(1 for r in sub if said[r["id"]] == "none")
        typos = [r for r in sub if r.get("typo")]
        offs = [r for r in off if C.in_group(r, g)]  # off-topic queries are the first round's
        p1 = f"{right}/{len(strong)} {right / len(strong):.3f}" if strong else "-"
        cells = [str(len(strong)), p1, f"{none}/{len(sub)} {none / len(sub):.3f}",
                 f"{sum(said[r['id']] == 'none' for r in typos)}/{len(typos)}" if typos else "-",
                 f"{sum(said[r['id']] == 'none' for r in offs)}/{len(offs)}" if offs else "-"]
        print(f"| {g} | " + " | ".join(cells) + " |")


def cmd_report(a) -> None:
    recs = subset(records(rounds=rounds_of(a)), a.subset)
    runs = {Path(p).stem: load_run(p) for p in a.runs}
    missing = sorted({r["id"] for r in recs if r["relevant"]} - set.intersection(*(set(run) for run in runs.values())))
    if missing:
        raise SystemExit(f"collection.py: {len(missing)} queries ({missing[0]}, ...) are in no run of some file; "
                         "run it again with `collection.py run` (a run made before a later round lacks its queries)")
    todo = C.unjudged(recs, runs, C.judgments(COLLECTION), depth=10)
    if todo and not a.allow_unjudged:
        raise SystemExit(f"collection.py: {len(todo)} top-10 hits are not judged yet; run `pool` and judge them "
                         "(or --allow-unjudged for a provisional look)")
    result = {}
    names = list(runs)
    for name, run in runs.items():
        s = C.summarize(recs, run)["groups"]
        result[name] = s
        print(f"\n## {name}" + ("  (PROVISIONAL: unjudged hits)" if todo else ""))
        print("| group | n | P@1 | Hit@10 | MRR@20 [95%] | nDCG@10 |")
        print("|---|---|---|---|---|---|")
        for g in sorted(s, key=lambda g: (g.split("=")[0] != "all", g)):
            row = s[g]
            lo, hi = row["mrr@20_ci95"]
            print(f"| {g} | {row['n']} | {row['p@1']:.3f} | {row['hit@10']:.3f} | {row['mrr@20']:.3f} "
                  f"[{lo:.2f}, {hi:.2f}] | {row['ndcg@10']:.3f} |")
    with_offtopic = records(offtopic=True, rounds=rounds_of(a))
    for path in a.runs:
        match_report(Path(path), recs, with_offtopic, runs[Path(path).stem])
    if len(names) > 1:
        base = runs[names[0]]
        print(f"\n## paired difference against {names[0]} (mean [95%])")
        print("| run | split | P@1 | MRR@20 | Hit@10 |")
        print("|---|---|---|---|---|")
        for name in names[1:]:
            for group, label in (("split=tune", "tune"), ("split=check", "check"), ("split=dev", "dev"),
                                 *((f"round={n}", f"round={n}") for n in C.ROUNDS), ("all", "pooled")):
                sub = [r for r in recs if C.in_group(r, group)]
                if not sub:
                    continue
                cells = []
                for m in ("p@1", "mrr@20", "hit@10"):
                    d, lo, hi = C.paired(sub, base, runs[name], m)
                    cells.append(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]")
                print(f"| {name} | {label} | " + " | ".join(cells) + " |")
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=1), encoding="utf-8")


SOURCES = ("stacks", "planetmath", "proofwiki", "metamath", "hott", "openlogic", "napkin", "proofnet")


def cmd_dump(a) -> None:
    """The statements a round's target resolvers search (PROVENANCE.md): one line per document of the
    eight informal sources as the bundle indexes them, ``id <TAB> kind <TAB> heading <TAB> text``,
    whitespace folded."""
    from mathlas.engine import open_bundle

    b = open_bundle(a.bundle)
    cols = {c: b.column(c).to_pylist() for c in ("id", "source", "kind", "title", "text")}
    out, n = Path(a.out), 0
    try:
        out.parent.mkdir(parents=True, exist_ok=True)  # as ``run`` makes its output's folder
        with out.open("w", encoding="utf-8") as f:
            for i, source in enumerate(cols["source"]):
                if source in SOURCES:
                    f.write("\t".join(" ".join((cols[c][i] or "").split())
                                      for c in ("id", "kind", "title", "text")) + "\n")
                    n += 1
    except OSError as e:
        raise SystemExit(f"collection.py: cannot write {out} ({e.strerror or e}); give --out a writable path") from None
    print(f"{n} statements of {b.label} -> {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--config", required=True,
                   help="rrf | lexical | dense (Bundle.search) | service (what a person gets: names, corrections, "
                        "the learned stage, one rank per theorem) | service-all (every copy) | pool-rrf | ltr | "
                        "without:STAGE[,STAGE] (the service's ranking with those stages left out, e.g. without:learned)")
    r.add_argument("--bundle", help="a bundle directory or name (default: the default bundle)")
    r.add_argument("--model", help="ranker model.json (for ltr)")
    r.add_argument("--out", required=True)
    r.set_defaults(func=cmd_run)
    p = sub.add_parser("pool")
    p.add_argument("runs", nargs="+")
    p.add_argument("--out", required=True)
    p.add_argument("--depth", type=int, default=10)
    p.add_argument("--batches", type=int, default=4)
    p.add_argument("--subset", help="only these queries: long (statements of 30+ words)")
    p.add_argument("--rounds", help="the rounds whose queries it takes (e.g. 1,2,3; default 1)")
    p.add_argument("--fresh", action="store_true", help="the second round's queries too: --rounds 1,2")
    p.set_defaults(func=cmd_pool)
    q = sub.add_parser("report")
    q.add_argument("runs", nargs="+")
    q.add_argument("--allow-unjudged", action="store_true")
    q.add_argument("--subset", help="only these queries: long (statements of 30+ words)")
    q.add_argument("--json")
    q.add_argument("--rounds", help="the rounds whose queries it takes (e.g. 1,2,3; default 1)")
    q.add_argument("--fresh", action="store_true", help="the second round's queries too: --rounds 1,2")
    q.set_defaults(func=cmd_report)
    d = sub.add_parser("dump", help="the statements target resolvers search, one line each (id, kind, heading, text)")
    d.add_argument("--bundle", help="a bundle directory or name (default: the default bundle)")
    d.add_argument("--out", required=True)
    d.set_defaults(func=cmd_dump)
    a = ap.parse_args()
    a.func(a)


if __name__ == "__main__":
    main()
