"""Lexical evidence for every candidate, measured: BM25 read deeper than the pool.

    python scripts/study_lexical_depth.py --cache work/pools.npz [--depths 300,1000] [--seeds 0,1,2]

The learned stage's pool is the union of each channel's top 100. A candidate only the dense channel
ranked gets BM25 0 and an absent lexical rank, even when BM25 ranks it 101st or 151st: the model reads
"no lexical evidence" where there is some. Here the pool stays the same, and the lexical features of
every candidate (``lex_score``, ``lex_rel``, ``lex_logrank``, ``in_lex``) are read from a BM25 ranking
``depth`` deep. Each depth is trained with the shipped settings and compared with today's features
seed by seed, out of fold on tune, then check and informal-dev, as ``scripts/study_prf_feature.py``
does (its ``run``, ``summary`` and ``paired``). It also prints the median time of the deeper BM25
search against the top 100 on the same queries. docs/training.md has what it measured.
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
from mathlas_build.training import ltr  # noqa: E402


def deep_lexical(b, query: str, depth: int):
    """BM25 of the query as the pool's lexical channel reads it (abbreviations expanded), ``depth`` deep."""
    from mathlas.ranking.abbreviations import expand_for
    from mathlas.ranking.filters import Filters
    from mathlas.ranking.pipeline import pipeline_for

    q, _ = expand_for(b, query)
    return pipeline_for(b).search_channels(q, depth, Filters(), "lexical")["lexical"]


def with_deep(b, recs, P, depth: int) -> dict:
    """The pools with their lexical columns read from a BM25 ranking ``depth`` deep."""
    from mathlas.ranking.learned import F, ranks_in

    out = {}
    for r in recs:
        p = P[r["id"]]
        rank, raw = ranks_in(deep_lexical(b, r["query"], depth), p.keys)
        X = p.X.copy()
        ls = np.where(rank > 0, np.nan_to_num(raw), 0.0).astype(np.float32)
        X[:, F["lex_score"]] = ls
        top = float(ls.max()) if len(ls) else 0.0
        X[:, F["lex_rel"]] = ls / (top if top > 0 else 1.0)
        X[:, F["lex_logrank"]] = np.where(rank > 0, np.log1p(np.maximum(rank - 1, 0)), np.log1p(200.0))
        X[:, F["in_lex"]] = rank > 0
        out[r["id"]] = ltr.Pool(p.keys, X, p.rrf_order)
    return out


def timing(b, recs, depths) -> str:
    qs = [r["query"] for r in recs][:200]
    got = []
    for d in (100, *depths):
        for q in qs[:20]:
            deep_lexical(b, q, d)        # warm
        ts = []
        for q in qs:
            t = time.perf_counter()
            deep_lexical(b, q, d)
            ts.append(time.perf_counter() - t)
        got.append(f"{d}: {1000 * float(np.median(ts)):.2f} ms")
    return "BM25 p50 by depth: " + ", ".join(got)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=str(ROOT / "work" / "pools.npz"))
    ap.add_argument("--depths", default="300,1000")
    ap.add_argument("--seeds", default="0,1,2")
    a = ap.parse_args(argv)

    b, _, recs, P, judged = TR.collection_pools(Path(a.cache))
    depths = [int(x) for x in a.depths.split(",") if x]
    print(timing(b, recs, depths), flush=True)
    seeds = [int(s) for s in a.seeds.split(",")]
    base = {s: S.run(b, recs, P, judged, s) for s in seeds}
    for s in seeds:
        print(f"base seed {s}: " + "; ".join(f"{sp} {S.summary(recs, base[s], sp)}"
                                             for sp in ("tune", "check", "dev", "all")), flush=True)
    for d in depths:
        Pd = with_deep(b, recs, P, d)
        for s in seeds:
            got = S.run(b, recs, Pd, judged, s)
            print(f"depth {d} seed {s}: " + "; ".join(f"{sp} {S.summary(recs, got, sp)}"
                                                     for sp in ("tune", "check", "dev", "all")), flush=True)
            for sp in ("check", "dev", "all"):
                sub = [r for r in recs if sp in ("all", r["split"])]
                m, lo, hi = S.paired(sub, base[s], got)
                print(f"    {sp}: MRR@20 {m:+.3f} [{lo:+.3f}, {hi:+.3f}]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
