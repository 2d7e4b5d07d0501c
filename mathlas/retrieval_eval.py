"""Evaluation on query sets with stable-id targets (the protocol of shared/eval/README.md).

For each query the engine's ranked list is restricted to the sources the set was labelled on -- by
default the sources its targets come from (the id prefix: informal-dev's stacks, planetmath, hott,
openlogic, proofnet; formal sets' lean; a user's own set's arxiv or any other source), inside the
channels, before the top-k cut -- and deduplicated by id. ``r`` is the rank of the first target.
Metrics: P@1, Hit@10, Hit@20, MRR@20, plus a bootstrap 95% interval on MRR@20.
"""
from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path
from collections.abc import Iterable

from mathlas.errors import UsageError

METRICS = ("p@1", "hit@10", "hit@20", "mrr@20")
# The modes an evaluation runs, in the order its tables list them
REPORT_ORDER = ("lexical", "dense", "hybrid")


def load_queries(path: str | Path) -> list[dict]:
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"no query file at {path}")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
        except json.JSONDecodeError as e:
            raise UsageError(f"{path}:{n}: not JSON ({e})") from None
        if not isinstance(q, dict) or not isinstance(q.get("query"), str) or not q.get("targets"):
            raise UsageError(f"{path}:{n}: each line needs 'query' (string) and 'targets' (list of ids)")
        out.append(q)
    if not out:
        raise UsageError(f"{path} holds no queries")
    return out


def label_prefixes(queries: Iterable[dict]) -> tuple[str, ...]:
    """The sources a set's targets come from (the prefix of each target id), sorted."""
    return tuple(sorted({t.split(":", 1)[0] for q in queries for t in q["targets"]}))


def first_rank(ids: list[str], targets: Iterable[str]) -> int | None:
    """1-based rank of the first target in a deduplicated id list, or None."""
    targets = set(targets)
    seen: set[str] = set()
    rank = 0
    for i in ids:
        if i in seen:
            continue
        seen.add(i)
        rank += 1
        if i in targets:
            return rank
    return None


def metrics(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {
        "p@1": sum(r == 1 for r in ranks) / n,
        "hit@10": sum(r is not None and r <= 10 for r in ranks) / n,
        "hit@20": sum(r is not None and r <= 20 for r in ranks) / n,
        "mrr@20": sum(1 / r for r in ranks if r is not None and r <= 20) / n,
    }


def bootstrap_mrr(ranks: list[int | None], rounds: int = 1000, seed: int = 0) -> tuple[float, float]:
    rng = random.Random(seed)
    rr = [1 / r if r is not None and r <= 20 else 0.0 for r in ranks]
    if not rr:
        return (0.0, 0.0)
    means = sorted(sum(rng.choice(rr) for _ in rr) / len(rr) for _ in range(rounds))
    return means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


def reciprocal(ranks: list[int | None]):
    """Each query's reciprocal rank at 20 (0 past it or when missed), as a numpy array."""
    import numpy as np

    return np.array([1 / r if r is not None and r <= 20 else 0.0 for r in ranks])


def paired_diff(a: list[int | None], b: list[int | None], rounds: int = 1000, seed: int = 0,
                at: int | None = None) -> tuple[float, float, float]:
    """MRR@20 of ``a`` less that of ``b`` (ranks of the same queries, in the same order) and its paired
    bootstrap 95% interval; with ``at``, Hit@at instead of MRR@20."""
    import numpy as np

    if len(a) != len(b):
        raise UsageError(f"paired runs must rank the same queries ({len(a)} vs {len(b)})")
    if not a:
        return 0.0, 0.0, 0.0
    if at:
        d = np.array([float(x is not None and x <= at) - float(y is not None and y <= at) for x, y in zip(a, b)])
    else:
        d = reciprocal(a) - reciprocal(b)
    rng = np.random.default_rng(seed)
    means = np.sort(d[rng.integers(0, len(d), size=(rounds, len(d)))].mean(axis=1))
    return float(d.mean()), float(means[int(0.025 * rounds)]), float(means[int(0.975 * rounds) - 1])


NO_PRIOR = "-noprior"


def evaluate(bundle, queries: list[dict], *, k: int = 20, modes: Iterable[str] = REPORT_ORDER,
             priors: dict[str, float] | None = None, restrict: Iterable[str] | bool = True,
             **search_kwargs) -> dict:
    """Run every query in every mode; returns the ``mathlas eval --json`` object.

    ``restrict``: True (default) ranks only the sources the set's targets come from, a list of
    source names ranks only those, False ranks the whole bundle (``restricted_to`` says which).
    ``priors`` overrides the bundle's document-prior weights (manifest ``fusion.priors``). When the
    effective weights are not all 0, each mode is also run with every prior off, reported as
    ``<mode>-noprior``, so the prior is always measured on and off in one run."""
    if restrict is False:
        sources = None
    else:
        wanted = label_prefixes(queries) if restrict is True else tuple(restrict)
        sources = [s for s in bundle.source_names if s in wanted]
        if restrict is not True and len(sources) < len(set(wanted)):
            unknown = sorted(set(wanted) - set(sources))
            raise UsageError(f"--restrict: bundle {bundle.name} has no source {', '.join(unknown)}; "
                             f"it has {', '.join(bundle.source_names)}")
        if not sources:
            raise UsageError(f"bundle {bundle.name} has none of the sources the targets come from "
                             f"({', '.join(wanted)}); it has {', '.join(bundle.source_names)} "
                             "(--restrict SRC or --no-restrict to choose)")
    result: dict = {"n": len(queries), "bundle": f"{bundle.name}-{bundle.version}", "k": k,
                    "restricted_to": sources if sources is not None else "all"}
    per_query: dict[str, list] = {}
    declared = getattr(bundle, "priors", {}) or {}
    effective = {n: spec["weight"] for n, spec in declared.items()}
    effective.update(priors or {})
    result["priors"] = effective
    runs = [(mode, priors) for mode in modes]
    if any(effective.values()):
        runs += [(mode + NO_PRIOR, {n: 0.0 for n in effective}) for mode in modes]
    for mode, run_priors in runs:
        ranks, no_result = [], 0
        extra = dict(search_kwargs)
        if run_priors is not None:
            extra["priors"] = run_priors
        for q in queries:
            hits = bundle.search(q["query"], k=k, mode=mode.removesuffix(NO_PRIOR), sources=sources, **extra)
            no_result += not hits
            ranks.append(first_rank([h.id for h in hits], q["targets"]))
        m = metrics(ranks)
        lo, hi = bootstrap_mrr(ranks)
        m["mrr@20_ci95"] = [round(lo, 3), round(hi, 3)]
        m["no_result"] = no_result
        for group in ("style", "source", "area"):
            buckets: dict[str, list] = defaultdict(list)
            for q, r in zip(queries, ranks):
                key = q["targets"][0].split(":", 1)[0] if group == "source" else q.get(group, "?")
                buckets[key].append(r)
            m[f"by_{group}"] = {key: {"n": len(v), **metrics(v)} for key, v in sorted(buckets.items())}
        result[mode] = m
        per_query[mode] = ranks
    result["per_query"] = [{"id": q.get("id"), **{m: per_query[m][i] for m in per_query}}
                           for i, q in enumerate(queries)]
    return result
