#!/usr/bin/env python3
"""The peers' retrieval methods beside mathlas, in one run, on the same bundle and dev queries.

    pip install -e '.[bench]'          # bm25s and faiss-cpu, the peers' own libraries
    python scripts/bench_peers.py [--bundle informal] [--formal-bundle mathlib] [--limit N] [--rounds 3] [--json]

Three methods, each in a child process of its own (so the memory each adds is its own):

(a) **mathlas** as shipped: ``Bundle.search`` (hybrid, the manifest's fusion and priors), scored by
    ``mathlas.retrieval_eval.evaluate`` exactly as ``mathlas eval`` does.

(b) **LeanExplore** (lean-explore/lean-explore, ``search/indexes.py``, ``search/ranking.py``,
    ``extract/index.py``), rebuilt with its own libraries:
    - two ``bm25s`` BM25+ indexes (k1 1.5, b 0.75, delta 0.5: the library's defaults, which it keeps)
      over declaration *names* only (a Lean declaration's qualified name, from its id; on informal
      bundles a statement's ``name``: label words or a title): one of the name split on ``.``, ``_`` and lower-to-upper camelCase
      into lowercase words, one of the whole lowercased name as a single token; each document indexes
      its set of tokens; a query asks both for 1,000 and each document keeps its better score (the
      documents bm25s returns with no matching token included, as LeanExplore keeps them);
    - ``faiss.IndexIVFFlat`` (inner product over L2-normalised vectors, a flat IP quantiser,
      nlist = max(256, sqrt N) as its builder computes it, nprobe 64), 1,000 candidates;
    - reciprocal rank fusion with k = 0: ``1/rank_name + 1/rank_semantic``, a document missing from a
      list taking the rank just past its end;
    - on a bundle with a dependency graph (formal bundles), its dependency boost: over the top 500
      fused, ``1/fused_rank + 1/dependency_rank``, ranking by how many of the other 500 use each one;
      without a graph, the same cut to 500 with the order unchanged (what the boost does when no
      candidate has dependents).
    Not reproduced: its optional cross-encoder rerank of the top 25 (Qwen3-Reranker-0.6B; mathlas
    calls no such model, so this compares the retrieval without it, its ``rerank_top=0`` path), and its
    filter of auto-generated names (its rule was not in the sources read). Approximated: its semantic
    index holds embeddings of LLM-written informalisations from Qwen3-Embedding-0.6B; here it holds the
    bundle's own document vectors (int8, dequantised and renormalised to float32) and the query is the
    bundle's encoder's, like every method here. Its package filter runs after the boost; the
    evaluation's source restriction is applied at the same place.

(c) **TheoremSearch** (uw-math-ai/TheoremSearch, ``api/routes/search_v2.py``), dense only:
    - pgvector ``binary_quantize`` (sign bits of the raw vector, no centring) in an HNSW graph over
      hamming distance with pgvector's default build settings (m 16, ef_construction 64), here
      ``faiss.IndexBinaryHNSW``;
    - for n results: top_k = 5n, ann_k = max(4 top_k, 200) candidates, ef_search = max(ann_k, 200);
    - exact cosine of those candidates against the stored vectors, filters, the top_k by cosine, then
      ``score = cosine + w ln(citations)`` (citations > 0) and the top n by score.
    The citation weight w is the bundle's own citations prior (manifest ``fusion.priors.citations``,
    the same prior mathlas adds) or ``--citation-weight``; TheoremSearch's API default is 0, and a
    bundle without a citations column (informal, mathlib) has no prior to add. Approximated: its
    vectors are Qwen3-Embedding-8B (4,096 dims, float32 in Postgres); here the bundle's int8 vectors,
    read per candidate from the memory-mapped file, as mathlas's own rescoring reads them.

All three share the query embedding: the bundle's ONNX encoder with its query prompt (mathlas also
repeats very short keyword queries, ``mathlas.ranking.query.dense_text``: part of its method). The encoding time
counts in each method's latency. The comparison is of the retrieval methods on the same vectors and
texts, not of the peers' products, whose encoders (and LLM-written texts) differ.

Measured, per bundle and method:
- quality per dev file: P@1 / Hit@10 / MRR@20 (95% bootstrap interval), every list restricted to the
  sources of the file's targets and scored by ``retrieval_eval`` (``first_rank``, ``metrics``,
  ``bootstrap_mrr``), the same functions for all three;
- latency: warm, in process, one pass over the bundle's dev queries to warm up, then ``--rounds``
  passes; p50 / p95 of a k=20 request over the whole bundle (no source restriction: what a user's
  request costs), from the query text (encoding included) to the same k ``Hit`` objects mathlas
  returns (the peers' keys made into hits with ``Bundle.hit``: about 2 ms of a mathlas search).
  faiss searches on one thread: its OpenMP threads made these single-query searches slower on the
  2-core machine (and contend with onnxruntime's); its builds use every core;
- build: seconds to build the method's own structures from the bundle's texts and float vectors
  (dequantising and normalising them is input preparation, not timed). For mathlas, its BM25 index,
  int8 quantisation and binary HNSW rebuilt into a temporary directory with ``mathlas_build.writer``
  from the same inputs (the shipped bundle is prebuilt; embedding is no method's build here);
- RSS: resident memory the method adds in its child process, after building and answering every
  query, over the child's state after opening the bundle (manifest + metadata table), loading the
  encoder and importing the method's libraries (Linux ``/proc/self/statm``; mapped file pages that a
  method touched count, as they do for mathlas's memory-mapped indexes). Peak: the child's peak RSS.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
EVAL = REPO.parent / "shared" / "eval"
METHODS = ("mathlas", "leanexplore", "theoremsearch")
LABELS = {"mathlas": "mathlas (as shipped)", "leanexplore": "LeanExplore's method",
          "theoremsearch": "TheoremSearch's method"}
K = 20  # results per request: MRR@20 needs 20

# LeanExplore (search/indexes.py, search/engine.py, search/ranking.py, extract/index.py)
LE_BM25_K = 1000
LE_FAISS_K = 1000
LE_NPROBE = 64
LE_NLIST_MIN = 256
LE_BOOST_POOL = 500
# TheoremSearch (api/routes/search_v2.py; pgvector's HNSW defaults)
TS_HNSW_M = 16
TS_EF_CONSTRUCTION = 64
TS_ANN_MIN = 200

EXTRA_HINT = "pip install -e '.[bench]'"


# ------------------------------------------------------------------------------ pure parts (tested)
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z])(?=[A-Z])")
_WORD = re.compile(r"\w+")


def split_name(name: str) -> list[str]:
    """LeanExplore's split tokens of a name: ``.`` and ``_`` are spaces, a lowercase letter followed by
    an uppercase one is a word boundary, then lowercase words (``Nat.Prime.two_le`` -> nat prime two le)."""
    spaced = _CAMEL_BOUNDARY.sub(" ", name.replace(".", " ").replace("_", " "))
    return _WORD.findall(spaced.lower())


def raw_name(name: str) -> list[str]:
    """LeanExplore's raw token: the whole lowercased name, or nothing for an empty one."""
    return [name.lower()] if name else []


def ranks_by_score(scores: dict[int, float]) -> dict[int, int]:
    """1-based ranks by descending score; ties keep the dict's order."""
    ordered = sorted(scores, key=lambda key: -scores[key])
    return {key: r for r, key in enumerate(ordered, start=1)}


def rrf_k0(first: dict[int, float], second: dict[int, float]) -> list[tuple[int, float]]:
    """Reciprocal rank fusion with k = 0 of two score maps: ``1/rank_1 + 1/rank_2``, a key missing from
    a list taking the rank just past that list's end. Best first; ties in first-seen order."""
    r1, r2 = ranks_by_score(first), ranks_by_score(second)
    miss1, miss2 = len(r1) + 1, len(r2) + 1
    keys = list(dict.fromkeys([*first, *second]))
    fused = [(key, 1.0 / r1.get(key, miss1) + 1.0 / r2.get(key, miss2)) for key in keys]
    fused.sort(key=lambda kv: -kv[1])
    return fused


def count_dependents(pool: Sequence[int], uses: Callable[[int], Iterable[int]]) -> list[int]:
    """For each key of ``pool``, how many pool members use it (``uses(key)``: what ``key`` refers to)."""
    index = {key: i for i, key in enumerate(pool)}
    counts = [0] * len(pool)
    for key in pool:
        for dep in uses(key):
            i = index.get(int(dep))
            if i is not None:
                counts[i] += 1
    return counts


def dependency_boost(pool: Sequence[int], dependents: Sequence[int]) -> list[tuple[int, float]]:
    """LeanExplore's boost of a fused pool (best first): ``1/fused_rank + 1/dependency_rank``, where
    more dependents give a better dependency rank and none gives the rank past the largest count
    (past the pool when no key has any)."""
    top = max(dependents, default=0)
    none_rank = top + 1 if top > 0 else len(pool) + 1
    boosted = [(key, 1.0 / r + 1.0 / (top - c + 1 if c > 0 else none_rank))
               for r, (key, c) in enumerate(zip(pool, dependents), start=1)]
    boosted.sort(key=lambda kv: -kv[1])
    return boosted


def theoremsearch_sizes(n: int) -> tuple[int, int, int]:
    """TheoremSearch's (top_k, ann_k, ef_search) for a request of n results."""
    top_k = 5 * n
    ann_k = max(4 * top_k, TS_ANN_MIN)
    return top_k, ann_k, max(ann_k, TS_ANN_MIN)


def ivf_lists(count: int) -> int:
    """LeanExplore's IVF list count: sqrt(N), at least 256 (never more lists than vectors)."""
    return max(1, min(count, max(LE_NLIST_MIN, int(math.sqrt(count)))))


# ------------------------------------------------------------------------------ helpers
def need_peer_libraries():
    """bm25s and faiss, or exit naming the extra that installs them."""
    try:
        import bm25s
        import faiss
    except ImportError as e:
        raise SystemExit(f"bench_peers: the peers' methods need bm25s and faiss-cpu ({e.name} is missing): "
                         f"{EXTRA_HINT}") from None
    return bm25s, faiss


def rss_mb() -> float | None:
    """Resident set size of this process in MB (Linux), None elsewhere."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return None


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def float_vectors(bundle, normalise: bool = True) -> np.ndarray:
    """The bundle's document vectors as float32, dequantised as the dense channel rescores them
    (``int8 row x its scale``), optionally renormalised to unit length."""
    dense = bundle.dense
    out = np.asarray(dense.vectors, dtype=np.float32) * np.asarray(dense.scales, dtype=np.float32)[:, None]
    if normalise:
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    return out


def column(bundle, name: str) -> list | None:
    return bundle.table.column(name).to_pylist() if name in bundle.table.column_names else None


# ------------------------------------------------------------------------------ the peers
class LeanExplore:
    """LeanExplore's retrieval rebuilt on a bundle (see the module docstring)."""

    def __init__(self, bundle):
        self.bundle = bundle
        # Its names are Lean's qualified names: a Lean declaration's is its id's (the bundle's name
        # column holds them as words); other sources' statements have only their name to offer.
        self.names = [i.split(":", 1)[1] if s == "lean" else (n or "") for i, s, n in
                      zip(column(bundle, "id"), column(bundle, "source"), column(bundle, "name"))]
        self.graph = None
        from mathlas.bundle import GRAPH

        if (bundle.root / GRAPH).is_file():
            from mathlas.graph import graph_of

            self.graph = graph_of(bundle)

    def build(self, vectors: np.ndarray) -> None:
        bm25s, faiss = need_peer_libraries()
        spaced = bm25s.BM25(method="bm25+")
        spaced.index([list(set(split_name(n))) for n in self.names], show_progress=False)
        raw = bm25s.BM25(method="bm25+")
        raw.index([list(set(raw_name(n))) for n in self.names], show_progress=False)
        dims = vectors.shape[1]
        ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(dims), dims, ivf_lists(len(vectors)), faiss.METRIC_INNER_PRODUCT)
        ivf.train(vectors)
        ivf.add(vectors)
        ivf.nprobe = LE_NPROBE
        self.spaced, self.raw, self.ivf = spaced, raw, ivf

    def name_scores(self, query: str) -> dict[int, float]:
        scores: dict[int, float] = {}
        k = min(LE_BM25_K, len(self.names))
        for index, tokens in ((self.spaced, split_name(query)), (self.raw, raw_name(query))):
            if not tokens:
                continue
            keys, values = index.retrieve([tokens], k=k, show_progress=False)
            for key, value in zip(keys[0].tolist(), values[0].tolist()):
                scores[key] = max(scores.get(key, 0.0), value)
        return scores

    def search(self, query: str, k: int, allowed: np.ndarray | None = None) -> list[int]:
        q = self.bundle.encoder.encode_queries([query])
        sims, keys = self.ivf.search(q, min(LE_FAISS_K, len(self.names)))
        semantic = {key: s for key, s in zip(keys[0].tolist(), sims[0].tolist()) if key >= 0}
        fused = rrf_k0(self.name_scores(query), semantic)
        pool = [key for key, _ in fused[:LE_BOOST_POOL]]
        if self.graph is not None:
            ranked = dependency_boost(pool, count_dependents(pool, lambda key: self.graph.neighbours(key, "uses")))
            pool = [key for key, _ in ranked]
        if allowed is not None:
            pool = [key for key in pool if allowed[key]]
        return pool[:k]


class TheoremSearch:
    """TheoremSearch's dense retrieval rebuilt on a bundle (see the module docstring)."""

    def __init__(self, bundle, citation_weight: float):
        self.bundle = bundle
        self.citations = None
        cites = column(bundle, "citations")
        if cites is not None and citation_weight:
            from mathlas.ranking.fusion import prior_values

            # prior_values "log1" is ln(max(c, 1)): ln c for c > 0, else 0, as TheoremSearch adds it

            self.citations = citation_weight * prior_values(
                np.array([np.nan if c is None else c for c in cites], dtype=np.float64), "log1")

    def build(self, vectors: np.ndarray) -> None:
        _, faiss = need_peer_libraries()
        codes = np.packbits(vectors > 0, axis=1)  # pgvector binary_quantize: 1 where the value is > 0
        index = faiss.IndexBinaryHNSW(codes.shape[1] * 8, TS_HNSW_M)
        index.hnsw.efConstruction = TS_EF_CONSTRUCTION
        index.add(codes)
        self.index = index

    def cosine(self, q: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Exact cosine against the stored vectors of ``keys`` (rows read in file order)."""
        dense = self.bundle.dense
        order = np.argsort(keys)
        rows = keys[order]
        block = np.asarray(dense.vectors[rows], dtype=np.float32)  # the scale cancels in a cosine
        sims = block @ q / np.maximum(np.linalg.norm(block, axis=1) * np.linalg.norm(q), 1e-12)
        out = np.empty(len(keys), dtype=np.float32)
        out[order] = sims
        return out

    def search(self, query: str, k: int, allowed: np.ndarray | None = None) -> list[int]:
        q = self.bundle.encoder.encode_queries([query])[0]
        top_k, ann_k, ef = theoremsearch_sizes(k)
        self.index.hnsw.efSearch = ef
        _, keys = self.index.search(np.packbits(q > 0)[None, :], ann_k)
        keys = keys[0][keys[0] >= 0].astype(np.int64)
        if allowed is not None:
            keys = keys[allowed[keys]]
        if len(keys) == 0:
            return []
        sims = self.cosine(q, keys)
        best = np.argsort(-sims, kind="stable")[:top_k]
        keys, scores = keys[best], sims[best].astype(np.float64)
        if self.citations is not None:
            scores = scores + self.citations[keys]
        return keys[np.argsort(-scores, kind="stable")[:k]].tolist()


# ------------------------------------------------------------------------------ one method, one child
def rebuild_mathlas(bundle, vectors: np.ndarray) -> float:
    """Seconds to write mathlas's own index structures (BM25, int8 vectors, binary HNSW) from the
    bundle's texts and float vectors into a temporary directory."""
    from mathlas_build.document import Document
    from mathlas_build.writer import write_bm25, write_vectors

    t = bundle.table
    get = {c: column(bundle, c) for c in ("id", "source", "kind", "name", "title", "text", "docstring", "signature")}
    extra = [{"docstring": d or "", "signature": s or ""}
             for d, s in zip(get["docstring"] or [None] * t.num_rows, get["signature"] or [None] * t.num_rows)]
    docs = [Document(id=i, source=s, kind=k or "", name=n or "", title=ti or "", body="", statement="", extra=x)
            for i, s, k, n, ti, x in zip(get["id"], get["source"], get["kind"], get["name"], get["title"], extra)]
    vec = bundle.manifest.vectors
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as tmp:
        t0 = time.perf_counter()
        write_bm25(docs, get["text"], get["name"], Path(tmp) / "bm25",
                   identifiers=bundle.manifest.lexical.get("identifiers", "split"))
        write_vectors(vectors, Path(tmp), connectivity=int(vec.get("hnsw_connectivity", 16)),
                      expansion_add=int(vec.get("hnsw_expansion_add", 128)), codes=vec.get("binary_codes", "sign"))
        return time.perf_counter() - t0


def run_child(args) -> dict:
    # the same timing loop as bench_search (scripts/ is on sys.path)
    from bench_search import pct, timed

    from mathlas.engine import open_bundle
    from mathlas.ranking.pipeline import pipeline_for
    from mathlas.retrieval_eval import bootstrap_mrr, evaluate, first_rank, label_prefixes, load_queries, metrics

    method = args.child
    b = open_bundle(args.bundle)
    files = [Path(f) for f in args.queries]
    sets = {f.name: load_queries(f)[:args.limit] if args.limit else load_queries(f) for f in files}
    b.encoder.encode_queries(["warm up the encoder"])
    if method == "mathlas":
        import tantivy  # noqa: F401  (its library counts as loaded before the baseline, like the peers')

        from mathlas.bundle import usearch_index_class

        usearch_index_class()
    else:
        need_peer_libraries()
    gc.collect()
    rss0 = rss_mb()
    out: dict = {"method": method, "bundle": f"{b.name}-{b.version}", "documents": len(b), "quality": {}}
    if method == "mathlas":
        def search(q: str):
            # the bundle keeps its last query vectors; the peers encode every query, and so does this:
            # without forgetting, every timed pass after the first reused the warm-up's vectors
            pipeline_for(b).forget_query_vectors()
            return b.search(q, k=K)

        _ = (b.lexical, b.dense)  # open the channels (lazy); their memory counts as the method's
        out["build_s"] = None
    else:
        weight = args.citation_weight
        if weight is None:
            weight = float(((b.priors or {}).get("citations") or {}).get("weight", 0.0))
        peer = LeanExplore(b) if method == "leanexplore" else TheoremSearch(b, weight)
        vectors = float_vectors(b) if method == "leanexplore" else np.asarray(b.dense.vectors)
        t0 = time.perf_counter()
        peer.build(vectors)
        out["build_s"] = time.perf_counter() - t0
        del vectors
        gc.collect()
        # One query at a time on one thread: faiss's OpenMP threads made single-query searches slower
        # (binary HNSW 4.4 vs 0.7 ms, IVF 2.9 vs 1.2 ms) and contend with onnxruntime's on 2 cores.
        need_peer_libraries()[1].omp_set_num_threads(1)
        # ends with the same k Hits (id, name, title, snippet, link) that mathlas's search returns
        search = lambda q: [b.hit(key, 0.0, {}) for key in peer.search(q, K)]
        if method == "theoremsearch":
            out["citation_weight"] = weight if peer.citations is not None else 0.0
        if method == "leanexplore":
            out["dependency_boost"] = peer.graph is not None
    out["rss_built_mb"] = None if rss0 is None else rss_mb() - rss0
    ids = column(b, "id")
    sources = column(b, "source")
    for name, queries in sets.items():
        if method == "mathlas":
            res = evaluate(b, queries, k=K, modes=("hybrid",))
            ranks = [row["hybrid"] for row in res["per_query"]]
            restricted = res["restricted_to"]
        else:
            restricted = [s for s in b.source_names if s in label_prefixes(queries)]
            allowed = np.isin(np.array(sources, dtype=object), restricted)
            ranks = [first_rank([ids[key] for key in peer.search(q["query"], K, allowed)], q["targets"])
                     for q in queries]
        lo, hi = bootstrap_mrr(ranks)
        out["quality"][name] = {**metrics(ranks), "mrr@20_ci95": [round(lo, 3), round(hi, 3)], "n": len(ranks),
                                "restricted_to": restricted, "ranks": ranks}
    texts = list(dict.fromkeys(q["query"] for queries in sets.values() for q in queries))
    for q in texts:  # warm: every page and cache the queries touch
        search(q)
    ms = timed(search, args.rounds, texts)
    out["latency"] = {"p50_ms": float(np.median(ms)), "p95_ms": pct(ms, 95), "queries": len(texts),
                      "rounds": args.rounds}
    out["rss_mb"] = None if rss0 is None else rss_mb() - rss0
    out["rss_base_mb"] = rss0
    out["peak_rss_mb"] = peak_rss_mb()
    if method == "mathlas" and not args.no_rebuild:
        vectors = float_vectors(b, normalise=False)
        out["build_s"] = rebuild_mathlas(b, vectors)
        out["build_note"] = "rebuilt: BM25 + int8 + binary HNSW"
    return out


# ------------------------------------------------------------------------------ the parent
def child(method: str, spec: str, files: list[Path], args) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", method, "--bundle", spec,
           "--rounds", str(args.rounds), *[a for f in files for a in ("--queries", str(f))]]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    if args.citation_weight is not None:
        cmd += ["--citation-weight", str(args.citation_weight)]
    if args.no_rebuild:
        cmd.append("--no-rebuild")
    say(f"[{spec}] {LABELS[method]} ...")
    proc = subprocess.run(cmd, check=False, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"bench_peers: the {method} run on {spec} failed (exit {proc.returncode})")
    return json.loads(proc.stdout)


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def ratio(x, base) -> str:
    return f" ({x / base:.1f}x)" if x is not None and base else ""


def report(bundle: dict) -> str:
    """The bundle's results as two markdown tables: quality per dev file, then cost."""
    runs = bundle["methods"]
    files = list(next(iter(runs.values()))["quality"])
    head = "| method | " + " | ".join(f"{f}: P@1 / Hit@10 / MRR@20 [95% CI]" for f in files) + " |"
    lines = [f"{bundle['bundle']} ({bundle['documents']:,} documents)", "", head,
             "|---|" + "---|" * len(files)]
    for m, r in runs.items():
        cells = []
        for f in files:
            q = r["quality"][f]
            lo, hi = q["mrr@20_ci95"]
            cells.append(f"{q['p@1']:.3f} / {q['hit@10']:.3f} / {q['mrr@20']:.3f} [{lo:.2f}, {hi:.2f}]")
        lines.append(f"| {LABELS[m]} | " + " | ".join(cells) + " |")
    base = runs.get("mathlas", {})
    lines += ["", "| method | p50 ms | p95 ms | build s | RSS +MB | peak RSS MB |", "|---|---|---|---|---|---|"]
    for m, r in runs.items():
        lat, b_lat = r["latency"], base.get("latency", {})
        build = "n/a" if r["build_s"] is None else f"{r['build_s']:.1f}{ratio(r['build_s'], base.get('build_s'))}"
        rss = "n/a" if r["rss_mb"] is None else f"{r['rss_mb']:.0f}{ratio(r['rss_mb'], base.get('rss_mb'))}"
        lines.append(f"| {LABELS[m]} | {lat['p50_ms']:.1f}{ratio(lat['p50_ms'], b_lat.get('p50_ms'))} "
                     f"| {lat['p95_ms']:.1f}{ratio(lat['p95_ms'], b_lat.get('p95_ms'))} | {build} | {rss} "
                     f"| {r['peak_rss_mb']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", default=os.environ.get("MATHLAS_BUNDLE", "informal"),
                    help="the default (informal) bundle: its dev set is informal-dev.jsonl")
    ap.add_argument("--formal-bundle", default=os.environ.get("MATHLAS_FORMAL_BUNDLE", "mathlib"),
                    help="the formal bundle (formal-dev.jsonl, formal-qr-dev.jsonl); skipped when not installed")
    ap.add_argument("--only", choices=("default", "formal"), help="run on one of the two bundles only")
    ap.add_argument("--eval-dir", type=Path, default=EVAL, help="where the dev files are (shared/eval)")
    ap.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated subset of {', '.join(METHODS)}")
    ap.add_argument("--limit", type=int, default=0, help="the first N queries of each dev file (0: all)")
    ap.add_argument("--rounds", type=int, default=3, help="timed passes over the dev queries")
    ap.add_argument("--citation-weight", type=float, default=None,
                    help="TheoremSearch's citation weight (default: the bundle's citations prior, else 0)")
    ap.add_argument("--no-rebuild", action="store_true", help="skip timing mathlas's own index build")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--child", choices=METHODS, help=argparse.SUPPRESS)
    ap.add_argument("--queries", action="append", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child:
        print(json.dumps(run_child(args)))
        return
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise SystemExit(f"bench_peers: unknown method {', '.join(unknown)}; choose from {', '.join(METHODS)}")
    if any(m != "mathlas" for m in methods):
        need_peer_libraries()
    from mathlas.engine import open_bundle
    from mathlas.errors import MathlasError

    plan = [("default", args.bundle, ["informal-dev.jsonl"]),
            ("formal", args.formal_bundle, ["formal-dev.jsonl", "formal-qr-dev.jsonl"])]
    plan = [(spec, names) for which, spec, names in plan if args.only in (None, which)]
    results: dict = {"machine": {"cpus": os.cpu_count(), "load_avg_start": os.getloadavg()}, "bundles": []}
    for spec, names in plan:
        try:
            b = open_bundle(spec)
        except MathlasError as e:
            say(f"bench_peers: skipping bundle {spec!r}: {e}")
            results["bundles"].append({"bundle": spec, "skipped": str(e)})
            continue
        info = {"bundle": f"{b.name}-{b.version}", "documents": len(b), "spec": spec}
        del b
        files = [args.eval_dir / n for n in names]
        info["methods"] = {m: child(m, spec, files, args) for m in methods}
        results["bundles"].append(info)
    results["machine"]["load_avg_end"] = os.getloadavg()
    if args.json:
        print(json.dumps(results, indent=1))
        return
    for info in results["bundles"]:
        if "skipped" in info:
            print(f"{info['bundle']}: skipped ({info['skipped']})\n")
        else:
            print(report(info) + "\n")
    m = results["machine"]
    print(f"{m['cpus']} CPUs; load average {m['load_avg_start'][0]:.2f} at start, {m['load_avg_end'][0]:.2f} at end")


if __name__ == "__main__":
    main()
