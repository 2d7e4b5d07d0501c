"""The trainer's cheap proxy for the dev sets: dense-only ranking over a small fixed corpus.

``mathlas-build pairs`` writes, next to the pairs, every dev target's retrieval text plus a seeded
sample of distractors from the same sources (``[eval] informal_distractors`` from Stacks,
PlanetMath, HoTT, Open Logic and ProofNet; ``formal_distractors`` from Lean), and the dev queries.
The trainer embeds that corpus with the model being trained (PyTorch, documents truncated to the
training length) and ranks it by exact cosine: P@1, Hit@10 and MRR@20 per dev set.

It is a proxy, not the bundle's score: random distractors are easier than the whole corpus, there
is no BM25 channel and no fusion, and long documents are cut to the training length. It moves with
the dense channel, which is what training changes; the real measurement is a rebuilt bundle and
``mathlas eval``.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from collections.abc import Callable

import numpy as np

from mathlas_build.retrieval_text import retrieval_text

EVAL_SETS = "eval-sets.json"


def write_eval_corpora(recipe, corpus, dev, out: Path) -> dict:
    """Write ``eval-<group>.jsonl`` corpora and ``eval-sets.json``; returns their sizes for the card."""
    from mathlas_build.training.pairs import INFORMAL_SOURCES

    groups = {"informal": (INFORMAL_SOURCES, int(recipe.eval.get("informal_distractors", 3000))),
              "formal": (("lean",), int(recipe.eval.get("formal_distractors", 4000)))}
    sets, info = [], {}
    for f in recipe.exclude_files:
        queries = [json.loads(x) for x in Path(f).read_text(encoding="utf-8").splitlines() if x.strip()]
        group = "formal" if all(t.startswith("lean:") for q in queries for t in q["targets"]) else "informal"
        kept = [{"query": q["query"], "targets": [t for t in q["targets"] if t in corpus.by_id]} for q in queries]
        kept = [q for q in kept if q["targets"]]
        sets.append({"name": Path(f).stem, "corpus": f"eval-{group}.jsonl", "queries": kept,
                     "dropped": len(queries) - len(kept)})
    for group, (sources, n) in groups.items():
        wanted = [s for s in sets if s["corpus"] == f"eval-{group}.jsonl"]
        if not wanted:
            continue
        targets = sorted({t for s in wanted for q in s["queries"] for t in q["targets"]})
        pool = sorted(d.id for src in sources for d in corpus.docs.get(src, []) if d.id not in dev.blocked)
        rng = random.Random(recipe.seed * 7 + len(group))
        distractors = rng.sample(pool, min(n, len(pool)))
        with open(out / f"eval-{group}.jsonl", "w", encoding="utf-8") as fh:
            for i in targets + distractors:
                fh.write(json.dumps({"id": i, "text": retrieval_text(corpus.by_id[i])}, ensure_ascii=False) + "\n")
        info[group] = {"targets": len(targets), "distractors": len(distractors)}
    (out / EVAL_SETS).write_text(json.dumps(sets, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return {"corpora": info, "sets": {s["name"]: {"queries": len(s["queries"]), "dropped": s["dropped"]}
                                      for s in sets}}


def first_rank(order: np.ndarray, ids: list[str], targets: set[str], depth: int = 20) -> int | None:
    for r, i in enumerate(order[:depth].tolist(), start=1):
        if ids[i] in targets:
            return r
    return None


def proxy_eval(encode: Callable[[list[str], str], np.ndarray], pairs_dir: Path, limit: int = 0) -> dict:
    """Dense-only P@1 / Hit@10 / MRR@20 of ``encode(texts, side)`` (unit rows; side "query" or
    "document") on each dev set's proxy corpus."""
    pairs_dir = Path(pairs_dir)
    sets = json.loads((pairs_dir / EVAL_SETS).read_text(encoding="utf-8"))
    cache: dict[str, tuple[list[str], np.ndarray]] = {}
    out = {}
    for s in sets:
        if s["corpus"] not in cache:
            rows = [json.loads(x) for x in (pairs_dir / s["corpus"]).read_text(encoding="utf-8").splitlines()]
            if limit:
                rows = rows[:limit]
            cache[s["corpus"]] = ([r["id"] for r in rows], encode([r["text"] for r in rows], "document"))
        ids, docs = cache[s["corpus"]]
        queries = [q for q in s["queries"] if set(q["targets"]) & set(ids)]
        if not queries:
            continue
        qv = encode([q["query"] for q in queries], "query")
        sims = qv @ docs.T
        order = np.argsort(-sims, axis=1, kind="stable")
        ranks = [first_rank(o, ids, set(q["targets"])) for o, q in zip(order, queries)]
        n = len(ranks)
        out[s["name"]] = {"queries": n, "corpus": len(ids),
                          "p@1": round(sum(r == 1 for r in ranks) / n, 4),
                          "hit@10": round(sum(r is not None and r <= 10 for r in ranks) / n, 4),
                          "mrr@20": round(sum(1 / r for r in ranks if r) / n, 4),
                          "mrr@20_ci95": bootstrap_mrr(ranks)}
    return out


def bootstrap_mrr(ranks: list[int | None], rounds: int = 1000, seed: int = 0) -> list[float]:
    """95% bootstrap interval of MRR@20 over the queries (as mathlas eval reports it)."""
    rr = np.array([1 / r if r else 0.0 for r in ranks])
    rng = np.random.default_rng(seed)
    means = np.sort(rr[rng.integers(0, len(rr), (rounds, len(rr)))].mean(axis=1))
    return [round(float(means[int(0.025 * rounds)]), 4), round(float(means[int(0.975 * rounds) - 1]), 4)]
