"""The project's judged query collection (eval/collection/, protocol: shared/eval/JUDGING.md).

Files (JSON lines):
- ``drafts-*.jsonl``: the blind drafts (id, query, style, area, fact, typo), committed before any search;
- ``targets/part-*.jsonl``: targets resolved by text search in the raw corpora (id, targets, searched, note);
- ``offtopic.jsonl``: out-of-field queries (no target in any source; ``match`` must say none), and
  ``offtopic-short.jsonl``: the same as two to four words ("banana bread", "taylor swift songs");
- ``judgments.jsonl``: pooled judgments of compared top tens (qid, doc, label, why);
- ``dropped.jsonl``: drafts left out, with the reason.

``load`` joins them into one record per query with ``split`` (tune / check, fixed by ``SPLIT_SEED``)
and ``relevant`` (targets + hits judged equivalent). ``fresh/`` holds a second round in the same layout,
drafted after the shipped learned stage was trained (so held out from it), ``round-3/`` a third and
``round-4/`` a fourth (drafted after 1.6.1's stage was trained on the first three rounds' tune splits):
``load(..., rounds=(1, 2, 3, 4))`` reads any set of rounds (``round`` 1 to 4 in each record; by default the
first), ``parse_rounds`` reads a command line's "1,2,3", and ``judgments`` reads every round's files.
A report's ``split=`` rows are the first round's splits (and informal-dev), a later round's queries are
in its ``round=`` rows (``in_group``). ``pool`` lists the unjudged hits of runs' top
tens; ``report`` refuses a comparison while any compared top ten holds one.
"""
from __future__ import annotations

import hashlib
import json
import random
import re
from collections import defaultdict
from pathlib import Path

LABELS = ("equivalent", "related", "unrelated")
SPLIT_SEED = "mathlas-collection-1"
CHECK_SHARE = 1 / 3
METRICS = ("p@1", "hit@10", "mrr@20", "ndcg@10")
LONG_WORDS = 30
FRESH = "fresh"  # the second round's folder, beside the first round's files
ROUNDS = {2: FRESH, 3: "round-3", 4: "round-4"}  # the later rounds' folders, same layout


def _lines(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


OFFTOPIC_FILES = ("offtopic.jsonl", "offtopic-short.jsonl")


def split_of(qid: str) -> str:
    """tune or check, fixed by the id alone (a hash with ``SPLIT_SEED``): adding queries moves none."""
    h = int(hashlib.sha256(f"{SPLIT_SEED}:{qid}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "check" if h < CHECK_SHARE else "tune"


def _numbered(paths) -> list[Path]:
    """``judgments-2`` before ``judgments-10``: a later file's label for a pair replaces an earlier one's."""
    return sorted(paths, key=lambda p: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)])


def judgments(root: Path) -> dict[tuple[str, str], dict]:
    """(qid, doc) -> judgment, from every round's files, the first round's first and each round's in the
    order of their numbers (a later file's label for a pair replaces an earlier one's: the second
    round's ``judgments-8`` judged 44 proof entries again by the first round's convention)."""
    out: dict[tuple[str, str], dict] = {}
    root = Path(root)
    for path in [*_numbered(root.glob("judgments*.jsonl")),
                 *(p for folder in ROUNDS.values() for p in _numbered((root / folder).glob("judgments*.jsonl")))]:
        for j in _lines(path):
            if j.get("label") not in LABELS:
                raise ValueError(f"{path.name}: {j.get('qid')} {j.get('doc')}: label {j.get('label')!r}")
            out[(j["qid"], j["doc"])] = j
    return out


def parse_rounds(text: str) -> tuple[int, ...]:
    """"1,2,3" -> (1, 2, 3); ``ValueError`` naming the rounds there are for anything else."""
    try:
        got = tuple(sorted({int(x) for x in text.split(",") if x.strip()}))
    except ValueError:
        got = ()
    if not got or not set(got) <= {1, *ROUNDS}:
        raise ValueError(f"{text!r} names no rounds of 1, " + ", ".join(map(str, ROUNDS)) + " (e.g. 1,2)")
    return got


def load(root: Path, *, with_offtopic: bool = False, rounds: tuple[int, ...] = (1,)) -> list[dict]:
    """One record per kept query: the draft, its targets, split, ``round`` and ``relevant`` ids.

    ``rounds``: which rounds (1 to 4; the first by default). A draft is kept once its targets are
    resolved (a query of a round still being resolved is left out)."""
    unknown = set(rounds) - {1, *ROUNDS}
    if unknown:
        raise ValueError(f"no round {sorted(unknown)[0]} (rounds: 1, " + ", ".join(map(str, ROUNDS)) + ")")
    root = Path(root)
    judged = judgments(root)
    equivalent = defaultdict(set)
    for (qid, doc), j in judged.items():
        if j["label"] == "equivalent":
            equivalent[qid].add(doc)
    out = []
    for rnd, folder in ((1, root), *((r, root / f) for r, f in ROUNDS.items())):
        if rnd not in rounds:
            continue
        drafts = [d for p in sorted(folder.glob("drafts-*.jsonl")) for d in _lines(p)]
        targets = {t["id"]: t for p in sorted((folder / "targets").glob("part-*.jsonl")) for t in _lines(p)}
        dropped = {d["id"] for d in _lines(folder / "dropped.jsonl")}
        for d in drafts:
            if d["id"] in dropped or d["id"] not in targets:
                continue
            t = targets[d["id"]]
            rec = {**d, "targets": list(t["targets"]), "split": split_of(d["id"]), "round": rnd}
            rec["relevant"] = sorted(set(rec["targets"]) | equivalent[d["id"]])
            out.append(rec)
    if with_offtopic and 1 in rounds:  # sentences (offtopic.jsonl) and queries of two to four words (offtopic-short.jsonl)
        for name in OFFTOPIC_FILES:
            for d in _lines(root / name):
                out.append({**d, "targets": [], "relevant": [], "split": split_of(d["id"]), "area": "offtopic",
                            "round": 1})
    return out


def metrics_of(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    """P@1, Hit@10, MRR@20 and binary nDCG@10 of one deduplicated ranking."""
    first = next((i for i, d in enumerate(ranked[:20]) if d in relevant), None)
    gains = [1.0 if d in relevant else 0.0 for d in ranked[:10]]
    dcg = sum(g / _log2(i + 2) for i, g in enumerate(gains))
    ideal = sum(1.0 / _log2(i + 2) for i in range(min(10, len(relevant))))
    return {"p@1": float(first == 0), "hit@10": float(first is not None and first < 10),
            "mrr@20": 0.0 if first is None else 1.0 / (first + 1), "ndcg@10": dcg / ideal if ideal else 0.0}


def _log2(x: float) -> float:
    import math
    return math.log2(x)


def bootstrap(values: list[float], rounds: int = 2000, seed: int = 0) -> tuple[float, float]:
    if not values:
        return (0.0, 0.0)
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(rounds))
    return means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


def unjudged(records: list[dict], runs: dict[str, dict[str, list[str]]], judged, depth: int = 10):
    """(qid, doc, run names) of every top-``depth`` hit of the runs that is neither relevant nor judged."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in records:
        rel = set(r["relevant"]) | set(r["targets"])
        for name, run in runs.items():
            for doc in run.get(r["id"], [])[:depth]:
                if doc not in rel and (r["id"], doc) not in judged:
                    out[(r["id"], doc)].add(name)
    return out


def in_group(r: dict, group: str) -> bool:
    """Whether record ``r`` is in a report's ``group``: ``all``, ``split=tune|check|dev`` (the first
    round's splits, and informal-dev) or ``round=N`` (a later round)."""
    if group == "all":
        return True
    kind, _, value = group.partition("=")
    if kind == "round":
        return r.get("round", 1) == int(value)
    return kind == "split" and r["split"] == value and r.get("round", 1) == 1


def summarize(records: list[dict], run: dict[str, list[str]]) -> dict:
    """Mean metrics with 95% bootstrap intervals, overall and by split, style and source of the targets."""
    per = {r["id"]: metrics_of(run.get(r["id"], []), set(r["relevant"])) for r in records if r["relevant"]}
    groups: dict[str, list[str]] = defaultdict(list)
    for r in records:
        if not r["relevant"]:
            continue
        groups["all"].append(r["id"])
        if r.get("round", 1) >= 2:  # the later rounds, held out from the shipped learned stage: rows of their own
            groups[f"round={r['round']}"].append(r["id"])
            groups[f"round={r['round']} split={r['split']}"].append(r["id"])
        else:  # the first round's tune and check splits, and informal-dev
            groups[f"split={r['split']}"].append(r["id"])
        groups[f"style={r['style']}"].append(r["id"])
        if len(r["query"].split()) >= LONG_WORDS:  # research-level statements, typed whole
            groups["style=long statement"].append(r["id"])
        for s in sorted({t.split(':', 1)[0] for t in r["relevant"]}):
            groups[f"source={s}"].append(r["id"])
    out = {}
    for g, ids in groups.items():
        row = {"n": len(ids)}
        for m in METRICS:
            vals = [per[i][m] for i in ids]
            row[m] = sum(vals) / len(vals)
            row[f"{m}_ci95"] = bootstrap(vals, seed=1)
        out[g] = row
    return {"groups": out, "per_query": per}


def paired(records: list[dict], a: dict[str, list[str]], b: dict[str, list[str]], metric: str = "mrr@20",
           rounds: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Mean of b - a on the same queries with its 95% paired bootstrap interval."""
    diffs = [metrics_of(b.get(r["id"], []), set(r["relevant"]))[metric]
             - metrics_of(a.get(r["id"], []), set(r["relevant"]))[metric] for r in records if r["relevant"]]
    lo, hi = bootstrap(diffs, rounds, seed)
    return sum(diffs) / max(1, len(diffs)), lo, hi
