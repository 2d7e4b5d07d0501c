"""The collection's second round as training data: the learned stage trained with and without it.

    python scripts/study_fresh_training.py --cache work/pools.npz [--seeds 0,1,2,3,4,5,6,7,8,9] [--write-runs DIR]
    python scripts/study_fresh_training.py --cache work/pools.npz --folds 5
    python scripts/study_fresh_training.py --cache work/pools.npz --rounds 1,2,3 --grow-all

``base`` is trained as the shipped stage is, on the first round's tune split; ``grown`` on that and
the second round's tune queries (eval/collection/fresh, split by the same seed). Both with the
shipped settings (100 trees of 15 leaves, learning rate .1, 50 a leaf), the same LightGBM seed, and
scored over the pools (the stage's own order, before names and collapsing) on what neither saw: the
first round's check split, informal-dev and the second round's check split. Printed per seed and as
the mean: P@1 / Hit@10 / MRR@20 per set, and the paired MRR@20 and P@1 differences over the three
pooled with 95% bootstrap intervals. ``base`` on the second round's tune queries is a held-out figure
too (they were drafted after every model so far). ``--write-runs DIR`` writes the first seed's two
rankings of every query as run files (``collection.py pool`` / ``report`` read them), so that their
top tens are judged before the figures are taken. The decision rule (docs/training.md): ``grown``
is a gain if its pooled MRR@20 difference is positive in every seed, excludes 0 in at least a third
of them, and no set loses more than .01 MRR@20 in the mean of the seeds.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))
sys.path.insert(0, str(ROOT / "scripts"))

import study_prf_feature as S  # noqa: E402
import train_ranker as TR  # noqa: E402
from mathlas_build.training import collection as C  # noqa: E402

SETS = ("check", "dev", "fresh-check", "fresh-tune")


set_of = S.set_of


def mean(recs, got, name, metric="mrr@20") -> float:
    return float(np.mean([got[r["id"]][metric] for r in recs if set_of(r) == name]))


def write_run(b, recs, P, model, path: Path, seed: int) -> None:
    import json

    ids = b.column("id")
    runs = {r["id"]: S.top_ids(ids, P[r["id"]], model) for r in recs}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"config": f"ltr ({path.stem}, seed {seed}, study_fresh_training.py)",
                                "model": None, "runs": runs}, indent=0), encoding="utf-8")


def out_of_fold(b, recs, P, judged, seeds, folds, base_ids, t0, sample=0.9) -> int:
    """Every second-round query scored by a model that did not train on it: ``base`` on the first
    round's tune split, ``grown`` on that and the second round's other folds (queries that share a
    relevant statement in one fold: ``train_ranker_formal.folds_of``)."""
    from train_ranker_formal import folds_of

    fresh = [r for r in recs if r.get("round") == 2]
    # queries that share a relevant statement are one fold (as train_ranker_formal.py folds its sets)
    fold = folds_of([{**r, "targets": r["relevant"]} for r in fresh], folds)
    res = {}
    for s in seeds:
        base = S.train(*TR.training_set(b, recs, P, judged, base_ids), s, sample)
        res["base", s] = S.per_query(b, fresh, P, lambda r, m=base: m)
        models = {f: S.train(*TR.training_set(b, recs, P, judged, base_ids | {
            r["id"] for r in fresh if fold[r["id"]] != f}), s, sample) for f in range(folds)}
        res["grown", s] = S.per_query(b, fresh, P, lambda r: models[fold[r["id"]]])
        d, lo, hi = S.paired(fresh, res["base", s], res["grown", s])
        print(f"seed {s}: second round ({len(fresh)}) {S.summary(fresh, res['base', s], 'all')} -> "
              f"{S.summary(fresh, res['grown', s], 'all')}; MRR@20 {d:+.3f} [{lo:+.3f}, {hi:+.3f}]", flush=True)
    for m in ("p@1", "hit@10", "mrr@20"):
        v = [S.paired(fresh, res["base", s], res["grown", s], m) for s in seeds]
        print(f"{m}: base {np.mean([np.mean([res['base', s][r['id']][m] for r in fresh]) for s in seeds]):.3f} -> "
              f"grown {np.mean([np.mean([res['grown', s][r['id']][m] for r in fresh]) for s in seeds]):.3f}; "
              f"difference by seed " + ", ".join(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for d, lo, hi in v))
    for st in ("precise", "vague", "name"):
        sub = [r for r in fresh if r["style"] == st]
        print(f"  {st} ({len(sub)}): MRR@20 base {np.mean([np.mean([res['base', s][r['id']]['mrr@20'] for r in sub]) for s in seeds]):.3f}"
              f" -> grown {np.mean([np.mean([res['grown', s][r['id']]['mrr@20'] for r in sub]) for s in seeds]):.3f}")
    print(f"\n{time.time() - t0:.0f} s")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=str(ROOT / "work" / "pools.npz"))
    ap.add_argument("--seeds", default="0,1,2,3,4,5,6,7,8,9")
    ap.add_argument("--write-runs", help="a folder for the first seed's rankings (ltr-base.json, ltr-grown.json)")
    ap.add_argument("--rounds", default="1,2", help="the rounds it reads (1,2,3: the third round's queries are "
                                                     "scored as sets of their own, r3-check and r3-tune)")
    ap.add_argument("--sample", type=float, default=0.9,
                    help="rows and features each tree sees (the shipped 0.9; 1.0: no sampling, one model per "
                         "training set whatever the seed)")
    ap.add_argument("--grow-all", action="store_true",
                    help="grown on the whole second round (tune and check), measured on the first round's check "
                         "split, informal-dev and the whole third round (--rounds 1,2,3)")
    ap.add_argument("--folds", type=int, default=0,
                    help="instead: every second-round query out of fold (grown on the first round's tune and the "
                         "other folds of the second round, tune and check alike)")
    a = ap.parse_args(argv)
    seeds = [int(s) for s in a.seeds.split(",") if s]

    t0 = time.time()
    try:
        rounds = C.parse_rounds(a.rounds)
    except ValueError as e:
        ap.error(f"--rounds {e}")
    if not {1, 2} <= set(rounds):
        ap.error("--rounds: the first two rounds at least (1,2)")
    b, allrecs, recs, P, judged = TR.collection_pools(Path(a.cache), rounds=rounds)
    sets = (*SETS, *(n for n in ("r3-check", "r3-tune") if any(set_of(r) == n for r in recs)))
    by = {n: [r for r in recs if set_of(r) == n] for n in (*sets, "tune")}
    print("queries with a relevant id: " + ", ".join(f"{n} {len(v)}" for n, v in by.items()), flush=True)
    if not by["fresh-tune"]:
        raise SystemExit("study_fresh_training.py: the second round has no resolved queries yet "
                         "(eval/collection/fresh/targets)")
    base_ids = {r["id"] for r in by["tune"]}
    if a.grow_all:  # grown on the whole second round: only the first round's check, dev and the third round are held out
        if not any(n.startswith("r3-") for n in sets):
            ap.error("--grow-all: the third round is what it is measured on (--rounds 1,2,3, once resolved)")
        sets = tuple(n for n in sets if not n.startswith("fresh-"))
        grown_ids = base_ids | {r["id"] for r in recs if r.get("round") == 2}
    else:
        grown_ids = base_ids | {r["id"] for r in by["fresh-tune"]}
    held = [r for r in recs if set_of(r) in sets]
    pooled = [r for r in held if set_of(r) in ("check", "dev", "fresh-check", "r3-check", "r3-tune")]
    if a.folds:
        return out_of_fold(b, recs, P, judged, seeds, a.folds, base_ids, t0, a.sample)
    res = {}
    for s in seeds:
        for name, ids in (("base", base_ids), ("grown", grown_ids)):
            model = S.train(*TR.training_set(b, recs, P, judged, ids), s, a.sample)
            res[name, s] = S.per_query(b, held, P, lambda r, m=model: m)
            if a.write_runs and s == seeds[0]:
                write_run(b, allrecs, P, model, Path(a.write_runs) / f"ltr-{name}.json", s)
        line = []
        for n in sets:
            sub = [r for r in held if set_of(r) == n]
            line.append(f"{n} {S.summary(sub, res['base', s], 'all')} -> {S.summary(sub, res['grown', s], 'all')}")
        d, lo, hi = S.paired(pooled, res["base", s], res["grown", s])
        print(f"seed {s}: " + "; ".join(line) + f"\n    pooled ({len(pooled)}) MRR@20 {d:+.3f} [{lo:+.3f}, {hi:+.3f}]",
              flush=True)
    print("\nmean over the seeds, base -> grown (P@1 / Hit@10 / MRR@20):")
    for n in sets:
        cells = [" / ".join(f"{np.mean([mean(recs, res[v, s], n, m) for s in seeds]):.3f}"
                            for m in ("p@1", "hit@10", "mrr@20")) for v in ("base", "grown")]
        print(f"  {n} ({len(by[n])}): {cells[0]} -> {cells[1]}" + ("  (grown trained on these)" if n == "fresh-tune" else ""))
    ds = {m: [S.paired(pooled, res["base", s], res["grown", s], m) for s in seeds] for m in ("mrr@20", "p@1")}
    for m, v in ds.items():
        print(f"pooled {m}: mean {np.mean([d for d, _, _ in v]):+.3f}; by seed " +
              ", ".join(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for d, lo, hi in v))
    worst = min(np.mean([mean(recs, res["grown", s], n) - mean(recs, res["base", s], n) for s in seeds])
                for n in ("check", "dev", "fresh-check", *(n for n in sets if n.startswith("r3-"))) if n in sets)
    v = ds["mrr@20"]
    gain = all(d > 0 for d, _, _ in v) and sum(lo > 0 for _, lo, _ in v) * 3 >= len(v) and worst >= -0.01
    print(f"worst set, mean MRR@20 change {worst:+.3f}; decision rule: {'gain' if gain else 'not a gain'}")
    print(f"\n{time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
