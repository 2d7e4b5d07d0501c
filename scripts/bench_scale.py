#!/usr/bin/env python3
"""10M-scale serving, measured: a synthetic bundle of N documents built with the real bundle writer
(``mathlas_build.writer.write_bundle``) and served by the real runtime (``mathlas.open_bundle``),
compared in the same run with an exact float32 search over the whole matrix held in RAM.

    python scripts/bench_scale.py --docs 100000 [--work DIR] [--queries 200] [--json OUT]
    python scripts/bench_scale.py --extrapolate A/result.json B/result.json --to 9200000

Each step runs in a fresh process and leaves ``<step>.json`` in the work directory (default: under
the system temp dir), so a rerun skips finished steps (``--redo STEP`` forces one):

  corpus  vectors.f32.npy (N x 1024, unit rows, planted structure below), query vectors, and the
          exact float32 top-10 of every query (the recall oracle)
  build   bundle/ via write_bundle: metadata parquet, tantivy BM25, binary HNSW + int8 vectors;
          each part timed, every file's size, the build's peak RSS
  serve   open the bundle; RSS after open and after a warm-up; p50/p95 of the dense and lexical
          channels and of hybrid Bundle.search (RRF of both, hits with metadata); recall@10 of
          binary candidates + int8 rescoring against exact float search for each pool size
  exact   the peers' way: the float32 matrix read into RAM, brute-force top-k with numpy; RSS,
          dense and hybrid latency (the same Bundle.search with its dense channel swapped), and
          the recall of int8 rescoring over *all* rows (the quantisation ceiling)

Query encoding is excluded: the Bundle's encoder is replaced by a feed of the planted query vectors.

Planted structure: documents fall into groups of 16 inside subtopics of 128 inside topics of 1,024
(keys assigned at random); a vector is normalise(0.35 m + a t + b u + c g + s e) with m the corpus mean
direction, t, u, g its topic, subtopic and group, e its own noise (all random unit vectors) and
per-document weights a ~ U(0.2, 0.5), b ~ U(0.1, 0.4), c ~ U(0, 0.4), s ~ U(0.6, 1.0). A query is
normalise(x_target + 0.8 e_q) for a random target. Neighbourhoods are a continuum (median cosine
0.78 to the target, 0.32 at rank 10, 0.26 at rank 100), not a gap: calibrated so that at the
default bundle's size (27k) an exhaustive hamming ranking gives recall@10 0.95 / 0.98 / 0.995 at
pools 200 / 400 / 800, close to the real default bundle's 0.950 / 0.969 / 0.984 (docs/benchmarks.md).
Text: 30-60 words per document, 35% from its topic's 200 words, the rest from a Zipfian vocabulary
of 40,000 (function words and math words first, then made-up words); a lexical query is 5 words of
its target's text.
"""
from __future__ import annotations

import argparse
import functools
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "build"))  # mathlas_build, when the checkout is not pip-installed

DIMS, GROUP, SUBTOPIC, TOPIC = 1024, 16, 128, 1024
W_MEAN, W_TOPIC, W_SUBTOPIC, W_GROUP, NOISE, QUERY_NOISE = 0.35, (0.2, 0.5), (0.1, 0.4), (0.0, 0.4), (0.6, 1.0), 0.8
CHUNK = 50_000
POOLS = (200, 400, 800, 1600, 3200, 6400)
STEPS = ("corpus", "build", "serve", "exact")
FUNCTION_WORDS = "the of a and is let be then for in every to there exists if with an on that by".split()
MATH_WORDS = """space group ring field module map function set finite compact prime ideal sequence
integer polynomial manifold metric measure operator algebra vector matrix graph curve surface variety
sheaf scheme category functor morphism homotopy homology cohomology bundle lattice order topology
continuous differentiable smooth analytic holomorphic bounded convergent uniform limit series sum
product integral derivative equation solution inequality norm dimension basis rank kernel image
quotient subgroup normal abelian cyclic simple semisimple nilpotent solvable commutative noetherian
local regular flat projective injective free torsion generated invariant character representation
eigenvalue spectrum hilbert banach riemann lie galois extension degree root unit divisor class number
modular form elliptic zeta distribution probability random process martingale expectation variance
convex linear bilinear quadratic symmetric orthogonal unitary hermitian positive definite tensor
exact complex real rational irreducible reducible separable dense closed open connected boundary
interior fundamental covering fibration vertex edge tree path cycle coloring chromatic planar
isomorphism automorphism endomorphism homomorphism embedding immersion submanifold geodesic curvature
connection differential cotangent tangent chain cochain spectral filtration graded stable""".split()
SYLLABLES = "ka lo mi nu pe ra si to vu ze bra cle dri fla gro ple sto tri vel mar nor pol quin ser tal".split()
KINDS = (("theorem", 0.35), ("lemma", 0.30), ("proposition", 0.15), ("corollary", 0.10), ("definition", 0.10))


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def memory() -> dict:
    """This process's resident memory in MB: total, anonymous, file-backed (mmap), and peak."""
    fields = {"VmRSS": "rss_mb", "RssAnon": "anon_mb", "RssFile": "file_mb", "VmHWM": "peak_mb"}
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in fields:
                out[fields[key]] = round(int(value.split()[0]) / 1024, 1)
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def latency(fn, items) -> dict:
    """Wall-clock p50/p95 and the mean CPU time of the process (all its threads) per call: on a
    shared machine the CPU time shows the work when the wall clock also shows the neighbours."""
    ts, cpu = [], []
    for it in items:
        t0, c0 = time.perf_counter(), time.process_time()
        fn(it)
        cpu.append((time.process_time() - c0) * 1000)
        ts.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": round(statistics.median(ts), 3), "p95_ms": round(pct(ts, 95), 3),
            "cpu_mean_ms": round(statistics.fmean(cpu), 3)}


# -- the synthetic corpus --------------------------------------------------------------------
def unit(rng, n):
    x = rng.standard_normal((n, DIMS), dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def layout(n, seed):
    """Group, subtopic and topic of every key (a random permutation: neighbours are not neighbouring rows)."""
    perm = np.random.default_rng([seed, 7]).permutation(n)
    return perm // GROUP, perm // SUBTOPIC, perm // TOPIC


def step_corpus(work: Path, n: int, seed: int, n_queries: int, n_warm: int) -> dict:
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    mean, topics, subtopics = unit(rng, 1)[0], unit(rng, -(-n // TOPIC)), unit(rng, -(-n // SUBTOPIC))
    groups = unit(rng, -(-n // GROUP))
    group, subtopic, topic = layout(n, seed)
    tmp = work / "vectors.f32.tmp.npy"
    out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(n, DIMS))
    for a in range(0, n, CHUNK):
        b = min(n, a + CHUNK)
        r = np.random.default_rng([seed, 1, a])
        w = r.uniform(*zip(W_TOPIC, W_SUBTOPIC, W_GROUP, NOISE), size=(b - a, 4)).astype(np.float32)
        x = (W_MEAN * mean + w[:, :1] * topics[topic[a:b]] + w[:, 1:2] * subtopics[subtopic[a:b]]
             + w[:, 2:3] * groups[group[a:b]] + w[:, 3:] * unit(r, b - a))
        out[a:b] = x / np.linalg.norm(x, axis=1, keepdims=True)
        say(f"[corpus] vectors {b:,}/{n:,}")
    out.flush()
    del out, groups
    os.replace(tmp, work / "vectors.f32.npy")
    vectors = np.load(work / "vectors.f32.npy", mmap_mode="r")
    targets = rng.choice(n, n_warm + n_queries, replace=False)
    noise = unit(rng, len(targets))
    q = vectors[np.sort(targets)][np.argsort(np.argsort(targets))] + QUERY_NOISE * noise
    q = (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)
    truth_keys, truth_scores = exact_topk(vectors, q[n_warm:], 10)
    np.savez(work / "queries.npz", targets=targets, vectors=q, truth_keys=truth_keys, truth_scores=truth_scores)
    return {"seconds": round(time.perf_counter() - t0, 1), "queries": n_queries, "warmup_queries": n_warm,
            "cos_query_top1_median": round(float(np.median(truth_scores[:, 0])), 3),
            "cos_query_top10_median": round(float(np.median(truth_scores[:, 9])), 3)}


def exact_topk(matrix, queries, k, chunk=CHUNK):
    """Exact top-k by inner product over the rows of ``matrix`` (streamed in chunks)."""
    best_s = np.full((len(queries), k), -np.inf, dtype=np.float32)
    best_k = np.zeros((len(queries), k), dtype=np.int64)
    for a in range(0, len(matrix), chunk):
        s = np.asarray(matrix[a:a + chunk], dtype=np.float32) @ queries.T  # (rows, queries)
        part = np.argpartition(-s, min(k, len(s) - 1), axis=0)[:k].T
        cand_s = np.concatenate([best_s, np.take_along_axis(s.T, part, axis=1)], axis=1)
        cand_k = np.concatenate([best_k, part + a], axis=1)
        order = np.argsort(-cand_s, axis=1, kind="stable")[:, :k]
        best_s, best_k = np.take_along_axis(cand_s, order, 1), np.take_along_axis(cand_k, order, 1)
    return best_k, best_s


def vocabulary(size=40_000):
    rng = np.random.default_rng(11)
    words, seen = FUNCTION_WORDS + MATH_WORDS, set(FUNCTION_WORDS + MATH_WORDS)
    while len(words) < size:
        w = "".join(rng.choice(SYLLABLES, rng.integers(2, 5)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def make_documents(n: int, seed: int):
    """Documents (arXiv-like, with paper fields), retrieval texts and names, deterministic in ``seed``."""
    from mathlas_build.document import Document

    vocab = vocabulary()
    v, nf = len(vocab), len(FUNCTION_WORDS)
    p_global = 1.0 / (np.arange(v) + 2.7)
    p_global /= p_global.sum()
    p_topic = 1.0 / (np.arange(200) + 1.0)
    p_topic /= p_topic.sum()
    rng = np.random.default_rng([seed, 2])
    topic_words = rng.integers(nf, v, size=(-(-n // TOPIC), 200))
    *_, topic = layout(n, seed)
    kinds, kind_p = zip(*KINDS)
    docs, texts = [], []
    for a in range(0, n, CHUNK):  # CHUNK is a multiple of 8: a paper's statements share a chunk
        b = min(n, a + CHUNK)
        r = np.random.default_rng([seed, 3, a])
        lengths = r.integers(30, 61, size=b - a)
        owner = np.repeat(np.arange(a, b), lengths)
        words = np.where(r.random(len(owner)) < 0.35,
                         topic_words[topic[owner], r.choice(200, len(owner), p=p_topic)],
                         r.choice(v, len(owner), p=p_global)).tolist()
        kind = r.choice(len(kinds), b - a, p=kind_p).tolist()
        p0, n_papers = a // 8, -(-(b - a) // 8)
        title_words = np.take_along_axis(topic_words[topic[np.arange(a, b, 8)]],
                                         r.integers(0, 200, (n_papers, 8)), axis=1).tolist()
        author_words = r.integers(nf, v, (n_papers, 3)).tolist()
        years = (1995 + r.integers(0, 31, n_papers)).tolist()
        citations = (r.zipf(1.6, n_papers) - 1).tolist()
        ends = np.cumsum(lengths).tolist()
        start = 0
        for i, key in enumerate(range(a, b)):
            text = " ".join([vocab[w] for w in words[start:ends[i]]])
            start = ends[i]
            cut = text.find(" ", len(text) // 2)
            paper = key // 8
            j = paper - p0
            pid = f"{1000 + paper // 100_000}.{paper % 100_000:05d}"
            label = f"{kinds[kind[i]].title()} {key % 8 + 1}"
            title = " ".join([vocab[w] for w in title_words[j]])
            docs.append(Document(
                id=f"arxiv:{pid}#{label}", source="arxiv", kind=kinds[kind[i]], name=label, title=title,
                body=f"Let $X_{{{key % 7}}}$ be a {text[:cut]}. Then $H^{{i}}(X, \\mathcal{{F}}) = 0$ and{text[cut:]}.",
                statement=text, slogan=text, link=f"https://arxiv.org/abs/{pid}", license="arXiv",
                extra={"paper_id": pid, "paper_title": title,
                       "authors": ", ".join([f"A. {vocab[w].title()}" for w in author_words[j]]),
                       "year": years[j], "categories": "math." + ("AG", "NT", "CO", "PR", "DG")[paper % 5],
                       "citations": min(citations[j], 100_000)}))
            texts.append(text)
        say(f"[build] documents {b:,}/{n:,}")
    return docs, texts, [d.name for d in docs]


def step_build(work: Path, n: int, seed: int, connectivity: int, expansion_add: int, bm25_heap_mb: int = 0,
               codes: str = "sign") -> dict:
    from mathlas_build import writer

    t0 = time.perf_counter()
    docs, texts, names = make_documents(n, seed)
    seconds = {"generate_documents": round(time.perf_counter() - t0, 1)}
    q = np.load(work / "queries.npz")
    rng = np.random.default_rng([seed, 5])
    query_texts = [" ".join(rng.choice(texts[t].split(), 5, replace=False)) for t in q["targets"].tolist()]
    (work / "query_texts.json").write_text(json.dumps(query_texts))

    cpu_seconds: dict[str, float] = {}
    exact: dict[str, float] = {}  # unrounded: the remainder below is a difference of these, rounded once

    def timed(name, fn):
        @functools.wraps(fn)
        def wrapper(*a, **kw):
            t, c = time.perf_counter(), time.process_time()
            try:
                return fn(*a, **kw)
            finally:
                exact[name] = time.perf_counter() - t
                seconds[name] = round(exact[name], 1)
                cpu_seconds[name] = round(time.process_time() - c, 1)
        return wrapper

    writer.write_meta = timed("parquet", writer.write_meta)
    write_bm25 = functools.partial(writer.write_bm25, heap_bytes=bm25_heap_mb * 1_000_000) if bm25_heap_mb \
        else writer.write_bm25
    writer.write_bm25 = timed("tantivy", write_bm25)
    writer.write_vectors = timed("vectors_hnsw", functools.partial(
        writer.write_vectors, connectivity=connectivity, expansion_add=expansion_add))
    stub = work / "encoder-stub"  # the bundle format wants an encoder; the benchmark feeds vectors instead
    stub.mkdir(exist_ok=True)
    (stub / "encoder.json").write_text(json.dumps({"name": "none (synthetic vectors)", "pooling": "mean",
                                                   "dims": DIMS}))
    vectors = np.load(work / "vectors.f32.npy", mmap_mode="r")
    t1 = time.perf_counter()
    writer.write_bundle(docs, texts, names, vectors, stub, work / "bundle", name="synthetic-scale",
                        version=str(n), sources={"arxiv": {"count": n, "license": "synthetic", "attribution": ""}},
                        builder="scripts/bench_scale.py", binary_codes=codes, force=True)
    total = time.perf_counter() - t1
    seconds["write_bundle_total"] = round(total, 1)
    # the stages run inside the total, so the remainder of the exact times is >= 0 (rounding each
    # part first could make it -0.1)
    seconds["checksums_and_rest"] = round(total - exact["parquet"] - exact["tantivy"] - exact["vectors_hnsw"], 1)
    manifest = json.loads((work / "bundle" / "manifest.json").read_text())
    files: dict[str, int] = {}
    for rel, entry in manifest["files"].items():
        part = rel if rel.startswith(("vectors/", "meta/")) else rel.split("/")[0] + "/"
        files[part] = files.get(part, 0) + entry["size"]
    return {"seconds": seconds, "cpu_seconds": cpu_seconds, "files_bytes": files, "bundle_bytes": sum(files.values()),
            "hnsw": {"connectivity": connectivity, "expansion_add": expansion_add}, "bm25_heap_mb": bm25_heap_mb or writer.BM25_HEAP_BYTES // 1_000_000,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


# -- serving ---------------------------------------------------------------------------------
class VectorFeed:
    """Stands in for the ONNX encoder: returns the planted vector of the query being run."""

    vector: np.ndarray

    def encode_queries(self, texts):
        return self.vector[None, :]


class ExactFloatChannel:
    """The peers' dense search: every float32 vector in RAM, brute-force inner product, top-k."""

    def __init__(self, matrix):
        self.matrix = matrix

    def rank(self, query, depth, filters):
        """The channel protocol (``mathlas.ranking.Channel``), as the bundle's dense channel answers it."""
        return self.search(query.vector(), depth, filters, pool=query.pool)

    def search(self, q, k, filters=None, pool=None):
        from mathlas.ranking.fusion import Ranking

        s = self.matrix @ q
        top = np.argpartition(-s, k)[:k]
        top = top[np.argsort(-s[top], kind="stable")]
        return Ranking(top.astype(np.int64), s[top])


def load_queries(work: Path):
    q = np.load(work / "queries.npz")
    texts = json.loads((work / "query_texts.json").read_text())
    n_warm = len(q["targets"]) - len(q["truth_keys"])
    return q, texts, n_warm


def recall(got_keys, truth_row) -> float:
    return len(set(got_keys.tolist()) & set(truth_row.tolist())) / len(truth_row)


def hybrid_runner(b, feed, items):
    def run(i):
        feed.vector = items[i][1]
        return b.search(items[i][0], k=10)
    return run


# -- experiments: runtime changes tried here, behind --experiment, without editing the runtime --
# Blocked rescoring, the per-request HNSW expansion and the memory-mapped Arrow metadata were
# experiments here and are now the runtime (docs/scale.md, "What limits it").
ASYM_WIDEN = 4


def experiment_asym_stage(work: Path):
    """An asymmetric first stage: HNSW returns ASYM_WIDEN x pool candidates, each scored by the float
    query against its ±1 sign-bit code (q . sign(x - center), a byte lookup table over the packed
    code), and only the best ``pool`` of them are rescored with the int8 vectors. Tests whether a
    better ordering than hamming lets a wider binary pool reach recall without more int8 reads."""
    from mathlas.bundle import sign_bits
    from mathlas.ranking.dense import MIN_POOL, DenseChannel

    bits = ((np.arange(256)[:, None] >> np.arange(7, -1, -1)) & 1).astype(np.float32) * 2 - 1  # packbits order

    def _candidates(self, q, pool):
        wide = min(ASYM_WIDEN * pool, self.count)
        self.index.expansion_search = max(wide, MIN_POOL)
        keys = np.asarray(self.index.search(sign_bits(q, self.center)[0], wide).keys, dtype=np.int64)
        if len(keys) <= pool:
            return keys
        codes = np.stack(self.index.get(keys.astype(np.uint64)))  # (wide, dims / 8) packed sign bits
        lut = q.reshape(-1, 8) @ bits.T  # (dims / 8, 256): q's part of each byte value
        scores = lut[np.arange(lut.shape[0]), codes].sum(axis=1)
        return keys[np.argpartition(-scores, pool - 1)[:pool]]

    DenseChannel._candidates = _candidates


META_ROW_GROUP = 256


class _LazyColumn:
    def __init__(self, table, name):
        self.table, self.name = table, name

    def __getitem__(self, key):
        return self.table.row_group_of(key).column(self.name)[key % self.table.group_rows]


class LazyTable:
    """Stands in for the metadata table Bundle keeps in RAM: a column asked for by name is read
    whole (source, kind: what the filters need); a hit's row is read from its parquet row group on
    demand, through a small LRU of decoded row groups."""

    def __init__(self, path, cache=16):
        import pyarrow.parquet as pq

        self.file = pq.ParquetFile(path, memory_map=True)
        md = self.file.metadata
        self.num_rows, self.group_rows = md.num_rows, md.row_group(0).num_rows
        self.column_names = self.file.schema_arrow.names
        self.columns = [_LazyColumn(self, n) for n in self.column_names]
        self._cache, self._size = {}, cache

    def column(self, name):
        return self.file.read(columns=[name], use_threads=False).column(0)

    def row_group_of(self, key):
        g = key // self.group_rows
        if g in self._cache:
            self._cache[g] = self._cache.pop(g)
        else:
            if len(self._cache) >= self._size:
                self._cache.pop(next(iter(self._cache)))
            self._cache[g] = self.file.read_row_group(g, use_threads=False)
        return self._cache[g]


SIDECAR = """
import sys, pyarrow.parquet as pq
src = pq.ParquetFile(sys.argv[1])
with pq.ParquetWriter(sys.argv[2], src.schema_arrow, compression="zstd", compression_level=9) as w:
    for batch in src.iter_batches(batch_size=8192):
        w.write_batch(batch, row_group_size=int(sys.argv[3]))
"""


def experiment_lazy_meta(work: Path):
    """Bundle reads the metadata lazily (LazyTable) instead of the whole parquet into RAM, from a copy
    of meta/documents.parquet written with row groups of 256 rows (the writer writes 8,192: decoding
    one such group costs ~45 ms of CPU, too much per hit)."""
    import pyarrow.parquet as pq

    sidecar = work / f"documents.rg{META_ROW_GROUP}.parquet"
    if not sidecar.is_file():  # in a child process, so that this one's RSS stays clean
        tmp = sidecar.with_suffix(".tmp")
        subprocess.run([sys.executable, "-c", SIDECAR, str(work / "bundle" / "meta" / "documents.parquet"), str(tmp),
                        str(META_ROW_GROUP)], check=True)
        os.replace(tmp, sidecar)
    read_table = pq.read_table
    pq.read_table = lambda path, **kw: (LazyTable(sidecar) if Path(path).name == "documents.parquet"
                                        else read_table(path, **kw))


IPC_SIDECAR = """
import sys, pyarrow as pa, pyarrow.parquet as pq
src = pq.ParquetFile(sys.argv[1])
with pa.ipc.new_file(sys.argv[2], src.schema_arrow) as w:  # uncompressed: memory-mappable, zero-copy
    for batch in src.iter_batches(batch_size=65536):
        w.write_batch(batch)
"""


def experiment_ipc_meta(work: Path):
    """Bundle's metadata table memory-mapped from an uncompressed Arrow IPC copy of
    meta/documents.parquet: zero-copy, so only the pages of rows actually read become resident
    (file-backed, evictable), and reading a hit's row costs no decompression. The runtime now does
    this itself when the bundle has meta/documents.arrow (write_meta writes it from 100k documents
    on); the experiment gives it to a bundle written before that."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sidecar = work / "documents.arrow"
    if not sidecar.is_file():
        tmp = sidecar.with_suffix(".tmp")
        subprocess.run([sys.executable, "-c", IPC_SIDECAR, str(work / "bundle" / "meta" / "documents.parquet"),
                        str(tmp)], check=True)
        os.replace(tmp, sidecar)
    read_table = pq.read_table
    pq.read_table = lambda path, **kw: (pa.ipc.open_file(pa.memory_map(str(sidecar))).read_all()
                                        if Path(path).name == "documents.parquet" else read_table(path, **kw))


def experiment_madvise_random(work: Path):
    """No readahead on the memory-mapped int8 vectors and (with ipc-meta) the Arrow metadata:
    madvise(MADV_RANDOM), so a page fault brings in one page, not the kernel's readahead window
    (which makes most of a file resident after a few hundred random row reads)."""
    import mmap

    import pyarrow as pa
    import pyarrow.parquet as pq

    from mathlas.ranking.dense import DenseChannel

    init = DenseChannel.__init__

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.vectors._mmap.madvise(mmap.MADV_RANDOM)
    DenseChannel.__init__ = __init__
    sidecar = work / "documents.arrow"
    read_table = pq.read_table

    def read(path, **kw):
        if Path(path).name != "documents.parquet" or not sidecar.is_file() or read_table.__name__ == "read_table":
            return read_table(path, **kw)
        with open(sidecar, "rb") as f:
            m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        m.madvise(mmap.MADV_RANDOM)
        return pa.ipc.open_file(pa.py_buffer(m)).read_all()
    pq.read_table = read


def experiment_thermometer_codes(work: Path):
    """The binary stage over 3-bit thermometer codes (``binary_codes = "thermometer3"``) instead of
    sign bits: ``write_vectors(codes="thermometer3")`` of the bundle's own int8 vectors (dequantised
    chunk by chunk) writes ``work/thermometer3/`` once (HNSW build time in thermometer3/build.json);
    the dense channel then searches that index with those codes. Equivalent to a bundle built with
    the option, without rebuilding the metadata and BM25 parts."""
    import json as _json

    from mathlas import bundle as fmt
    from mathlas.bundle import usearch_index_class
    from mathlas.ranking.dense import DenseChannel

    out = work / "thermometer3"
    if not (out / "build.json").is_file():
        from mathlas_build import writer

        src = work / "bundle"
        q8 = np.load(src / fmt.FLOAT_VECTORS, mmap_mode="r")
        scale = np.load(src / fmt.FLOAT_SCALES)

        class Dequantised:  # write_vectors reads rows in chunks; float32 only chunk by chunk
            shape = q8.shape

            def __getitem__(self, sl):
                return np.asarray(q8[sl], dtype=np.float32) * scale[sl, None]

        tmp = work / "thermometer3.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        t0, c0 = time.perf_counter(), time.process_time()
        info = writer.write_vectors(Dequantised(), tmp, codes="thermometer3")
        (tmp / "build.json").write_text(_json.dumps({"seconds": round(time.perf_counter() - t0, 1),
                                                     "cpu_seconds": round(time.process_time() - c0, 1),
                                                     "binary_usearch_mb": round((tmp / fmt.BINARY_INDEX).stat().st_size / 2**20, 1),
                                                     "vectors": info}))
        for f in (fmt.FLOAT_VECTORS, fmt.FLOAT_SCALES):  # the bundle's own files serve; keep the codes only
            (tmp / f).unlink()
        shutil.rmtree(out, ignore_errors=True)
        os.replace(tmp, out)
    init = DenseChannel.__init__

    def __init__(self, root, count, dims, codes="sign"):
        init(self, root, count, dims, codes)
        self.index = usearch_index_class().restore(str(out / fmt.BINARY_INDEX), view=True)
        self.thresholds = np.load(out / fmt.VECTOR_THRESHOLDS)
        self.center = np.load(out / fmt.VECTOR_CENTER)
        self.codes = "thermometer3"
    DenseChannel.__init__ = __init__


EXPERIMENTS = {"asym-stage": experiment_asym_stage, "lazy-meta": experiment_lazy_meta,
               "ipc-meta": experiment_ipc_meta, "madvise-random": experiment_madvise_random,
               "thermometer-codes": experiment_thermometer_codes}


def step_serve(work: Path, pools, experiments=()) -> dict:
    import mathlas

    for name in experiments:
        EXPERIMENTS[name](work)
    q, texts, n_warm = load_queries(work)
    mem = {"baseline": memory()}
    t0 = time.perf_counter()
    b = mathlas.open_bundle(work / "bundle")
    b.lexical, b.dense  # noqa: B018  (open both channels now, not on the first query)
    open_s = time.perf_counter() - t0
    mem["after_open"] = memory()
    feed = VectorFeed()
    b._encoder = feed
    items = list(zip(texts, q["vectors"]))
    warm, measured = range(n_warm), range(n_warm, len(items))
    run = hybrid_runner(b, feed, items)
    for i in warm:
        run(i)
    mem["after_warmup"] = memory()
    out = {"open_seconds": round(open_s, 2)}
    out["latency"] = {
        "hybrid": latency(run, measured),
        "dense_channel_k10": latency(lambda i: b.dense.search(items[i][1], 10), measured),
        "dense_channel_depth100": latency(lambda i: b.dense.search(items[i][1], 100), measured),
        "lexical_channel_k10": latency(lambda i: b.lexical.search(items[i][0], 10), measured),
        "lexical_channel_depth100": latency(lambda i: b.lexical.search(items[i][0], 100), measured),
    }
    ids = b.table.column("id")
    found = [ids[int(t)].as_py() in {h.id for h in run(i)} for i, t in zip(measured, q["targets"][n_warm:])]
    out["hybrid_target_in_top10"] = round(float(np.mean(found)), 3)
    out["recall_at_10"] = {}
    from mathlas.ranking.dense import default_pool

    out["default_pool"] = default_pool(10, len(b))
    for pool in sorted({*pools, out["default_pool"]}):
        rec, ts = [], []
        for j, i in enumerate(measured):
            t = time.perf_counter()
            got = b.dense.search(items[i][1], 10, pool=pool)
            ts.append((time.perf_counter() - t) * 1000)
            rec.append(recall(got.keys, q["truth_keys"][j]))
        out["recall_at_10"][str(pool)] = {"recall": round(float(np.mean(rec)), 4), "min": round(min(rec), 2),
                                          "p50_ms": round(statistics.median(ts), 3)}
    mem["end"] = memory()
    out["memory"] = mem
    return out


def step_exact(work: Path, pools) -> dict:
    import mathlas
    from mathlas.bundle import FLOAT_SCALES, FLOAT_VECTORS

    q, texts, n_warm = load_queries(work)
    t0 = time.perf_counter()
    matrix = np.load(work / "vectors.f32.npy")  # the whole float32 matrix, read into RAM
    load_s = time.perf_counter() - t0
    mem = {"after_load": memory()}
    exact = ExactFloatChannel(matrix)
    items = list(zip(texts, q["vectors"]))
    measured = range(n_warm, len(items))
    out = {"load_seconds": round(load_s, 1), "latency": {}}
    out["latency"]["dense_k10"] = latency(lambda i: exact.search(items[i][1], 10), measured)
    rec = [recall(exact.search(items[i][1], 10).keys, q["truth_keys"][j]) for j, i in enumerate(measured)]
    out["recall_at_10"] = round(float(np.mean(rec)), 4)
    b = mathlas.open_bundle(work / "bundle")
    b.lexical  # noqa: B018
    feed = VectorFeed()
    b._encoder, b._dense = feed, exact
    run = hybrid_runner(b, feed, items)
    for i in range(min(n_warm, 5)):  # the float matrix is all in RAM already: little to warm
        run(i)
    out["latency"]["hybrid"] = latency(run, measured)
    mem["after_hybrid"] = memory()
    out["memory"] = mem
    matrix = exact.matrix = b = None  # free the float32 matrix before the int8 pass
    i8 = np.load(work / "bundle" / FLOAT_VECTORS, mmap_mode="r")
    scale = np.load(work / "bundle" / FLOAT_SCALES)
    got, _ = exact_topk(_Scaled(i8, scale), q["vectors"][n_warm:], 10)
    out["int8_all_rows_recall_at_10"] = round(float(np.mean(
        [recall(g, t) for g, t in zip(got, q["truth_keys"])])), 4)
    out["exhaustive_binary_recall_at_10"] = exhaustive_binary_recall(work, i8, scale, q, n_warm, pools)
    return out


def exhaustive_binary_recall(work: Path, i8, scale, q, n_warm: int, pools) -> dict:
    """Recall@10 per pool when the candidates are the pool nearest sign-bit codes by an exhaustive
    hamming scan (no HNSW; ties at the cut broken by key), rescored with the int8 vectors: what the
    binary codes give without the graph. Not a ceiling: hamming distances tie a lot at the cut, and
    the HNSW walk breaks those ties towards documents near the query, so it can do a little better."""
    from mathlas.bundle import VECTOR_CENTER, sign_bits

    center = np.load(work / "bundle" / VECTOR_CENTER)
    vectors = np.load(work / "vectors.f32.npy", mmap_mode="r")
    codes = np.concatenate([sign_bits(vectors[a:a + CHUNK], center) for a in range(0, len(vectors), CHUNK)])
    top = max(pools)
    hits = {p: [] for p in pools}
    for j, v in enumerate(q["vectors"][n_warm:]):
        ham = np.bitwise_count(codes ^ sign_bits(v, center)).sum(axis=1, dtype=np.int32)
        cand = np.argpartition(ham, min(top, len(ham) - 1))[:top]
        cand = cand[np.lexsort((cand, ham[cand]))]
        for p in pools:
            keys = np.sort(cand[:p])
            scores = (i8[keys].astype(np.float32) @ v) * scale[keys]
            hits[p].append(recall(keys[np.argsort(-scores)[:10]], q["truth_keys"][j]))
    return {str(p): round(float(np.mean(h)), 4) for p, h in hits.items()}


class _Scaled:
    """int8 rows times their scale, sliced like an array (for exact_topk)."""

    def __init__(self, q, scale):
        self.q, self.scale = q, scale

    def __len__(self):
        return len(self.q)

    def __getitem__(self, sl):
        return np.asarray(self.q[sl], dtype=np.float32) * self.scale[sl, None]


# -- reporting -------------------------------------------------------------------------------
TARGETS = {"hybrid_p50_ms": 50, "rss_mb": 1500, "recall_at_10": 0.97}


def summary(r: dict) -> str:
    """A human-readable table of one result.json."""
    bld, srv, ex = r["build"], r["serve"], r.get("exact")
    sec, mem = bld["seconds"], srv["memory"]
    lines = [f"synthetic bundle: {r['docs']:,} documents x {r['dims']} dims on {r['cpus']} CPUs; load average "
             f"during serve {srv.get('load_avg', '?')}, exact {(ex or {}).get('load_avg', '?')}",
             f"build {sec['write_bundle_total']} s (parquet {sec['parquet']}, tantivy {sec['tantivy']}, vectors + "
             f"HNSW {sec['vectors_hnsw']}, checksums {sec['checksums_and_rest']}; generating documents "
             f"{sec['generate_documents']}); CPU s {bld.get('cpu_seconds', 'not recorded')}; "
             f"peak RSS {bld['peak_rss_mb']:,} MB",
             f"bundle {bld['bundle_bytes'] / 1e6:,.1f} MB: " + ", ".join(
                 f"{k} {v / 1e6:,.1f}" for k, v in sorted(bld["files_bytes"].items(), key=lambda kv: -kv[1]))]
    for stage in ("after_open", "after_warmup", "end"):
        m = mem[stage]
        lines.append(f"RSS {stage:<13}{m['rss_mb']:>9,.0f} MB (anon {m['anon_mb']:,.0f}, file-backed {m['file_mb']:,.0f})")
    if ex:
        m = ex["memory"]["after_hybrid"]
        lines.append(f"RSS exact float32 baseline {m['rss_mb']:,.0f} MB = "
                     f"{m['rss_mb'] / mem['after_warmup']['rss_mb']:.1f}x mathlas")
    lines.append(f"{'latency':<34}{'p50 ms':>9}{'p95 ms':>9}{'CPU mean':>9}")
    rows = {f"mathlas {k}": v for k, v in srv["latency"].items()}
    if ex:
        rows.update({f"exact float32 {k}": v for k, v in ex["latency"].items()})
    for name, v in rows.items():
        lines.append(f"{name:<34}{v['p50_ms']:>9.2f}{v['p95_ms']:>9.2f}{v['cpu_mean_ms']:>9.2f}")
    if ex:
        lines.append(f"exact / mathlas p50: dense {ex['latency']['dense_k10']['p50_ms'] / srv['latency']['dense_channel_k10']['p50_ms']:.0f}x, "
                     f"hybrid {ex['latency']['hybrid']['p50_ms'] / srv['latency']['hybrid']['p50_ms']:.1f}x")
    ceiling = (ex or {}).get("exhaustive_binary_recall_at_10", {})
    lines.append(f"{'pool':>6}{'recall@10':>11}{'min':>6}{'p50 ms':>9}{'exhaustive hamming':>20}")
    for pool, v in srv["recall_at_10"].items():
        lines.append(f"{pool:>6}{v['recall']:>11.4f}{v['min']:>6.2f}{v['p50_ms']:>9.2f}"
                     f"{ceiling.get(pool, float('nan')):>20.4f}")
    if ex:
        lines.append(f"{'all':>6}{ex['int8_all_rows_recall_at_10']:>11.4f}   (int8 rescoring of every row)")
    for key in [k for k in r if k.startswith("serve+")]:
        e = r[key]
        lines.append(f"experiment {key[6:]}: hybrid p50 {e['latency']['hybrid']['p50_ms']:.2f} ms (CPU "
                     f"{e['latency']['hybrid']['cpu_mean_ms']:.2f}), dense k10 {e['latency']['dense_channel_k10']['p50_ms']:.2f} "
                     f"(CPU {e['latency']['dense_channel_k10']['cpu_mean_ms']:.2f}), RSS after open / warm-up "
                     f"{e['memory']['after_open']['rss_mb']:,.0f} / {e['memory']['after_warmup']['rss_mb']:,.0f} MB, "
                     "recall@10 by pool " + ", ".join(f"{p} {v['recall']:.4f} ({v['p50_ms']:.1f} ms)"
                                                     for p, v in e["recall_at_10"].items()))
    lines.append(f"hybrid finds the planted target in its top 10 for {srv['hybrid_target_in_top10']:.1%} of queries")
    dp = str(srv.get("default_pool", 800))  # results from before the pool grew with N used 800
    rec = srv["recall_at_10"].get(dp, {}).get("recall")
    checks = [("hybrid p50 <= 50 ms", srv["latency"]["hybrid"]["p50_ms"] <= TARGETS["hybrid_p50_ms"]),
              ("RSS after open <= 1.5 GB", mem["after_open"]["rss_mb"] <= TARGETS["rss_mb"]),
              ("RSS after warm-up <= 1.5 GB (total, mapped page cache included)",
               mem["after_warmup"]["rss_mb"] <= TARGETS["rss_mb"]),
              ("private memory after warm-up <= 1.5 GB", mem["after_warmup"]["anon_mb"] <= TARGETS["rss_mb"]),
              (f"recall@10 >= 0.97 at the default pool {dp}", rec is not None and rec >= TARGETS["recall_at_10"])]
    lines.append("targets: " + "; ".join(f"{name}: {'met' if ok else 'MISSED'}" for name, ok in checks))
    return "\n".join(lines)


def extrapolate(small: dict, large: dict, to: int) -> str:
    """A markdown table for ``to`` documents from two measured points: sizes linear in N (bytes per
    document at the larger point); build CPU time from the larger point, linear (parquet, tantivy) or
    N log N (HNSW); CPU time per query by the power law through both points; RSS by the straight line
    through both points. Recall is not extrapolated: two points do not fix its curve."""
    n0, n1 = small["docs"], large["docs"]

    def power(y0, y1):
        a = math.log(y1 / y0) / math.log(n1 / n0) if y0 > 0 and y1 > 0 else 1.0
        return y1 * (to / n1) ** a, f"power law, exponent {a:.2f}"

    def line(y0, y1):
        return y1 + (y1 - y0) / (n1 - n0) * (to - n1), "straight line"

    rows = []

    def row(name, y0, y1, how, fmt="{:,.1f}"):
        y, method = how(y0, y1)
        rows.append(f"| {name} | {fmt.format(y0)} | {fmt.format(y1)} | **{fmt.format(y)}** | {method} |")

    for f in sorted(large["build"]["files_bytes"], key=lambda k: -large["build"]["files_bytes"][k]):
        row(f"size {f} (MB)", small["build"]["files_bytes"].get(f, 0) / 1e6, large["build"]["files_bytes"][f] / 1e6,
            lambda y0, y1: (y1 * to / n1, "linear in N"))
    row("size, whole bundle (MB)", small["build"]["bundle_bytes"] / 1e6, large["build"]["bundle_bytes"] / 1e6,
        lambda y0, y1: (y1 * to / n1, "linear in N"))
    cpu = large["build"].get("cpu_seconds", {})
    for part, how in (("parquet", "linear in N"), ("tantivy", "linear in N"), ("vectors_hnsw", "N log N")):
        if part in cpu:
            grow = to / n1 * (math.log(to) / math.log(n1) if how == "N log N" else 1.0)
            rows.append(f"| build {part}, CPU s | {small['build'].get('cpu_seconds', {}).get(part, '—')} | {cpu[part]:,.0f} "
                        f"| **{cpu[part] * grow:,.0f}** | {how} from the larger point |")
    row("build peak RSS (MB)", small["build"]["peak_rss_mb"], large["build"]["peak_rss_mb"], line, "{:,.0f}")
    for stage in ("after_open", "after_warmup"):
        for kind in ("rss_mb", "anon_mb"):
            row(f"serving RSS {stage} {kind[:-3]} (MB)", small["serve"]["memory"][stage][kind],
                large["serve"]["memory"][stage][kind], line, "{:,.0f}")
    # wall-clock latency mixes in the machine's load, which differed between the runs: scale CPU time
    for name, v in large["serve"]["latency"].items():
        row(f"{name}, CPU per query (ms)", small["serve"]["latency"][name]["cpu_mean_ms"], v["cpu_mean_ms"], power,
            "{:,.2f}")
    # the hybrid total mixes a part that grows (lexical) with one that does not (dense): grow each part
    lat0, lat1 = small["serve"]["latency"], large["serve"]["latency"]
    parts = [(power(lat0[c]["cpu_mean_ms"], lat1[c]["cpu_mean_ms"])[0] - lat1[c]["cpu_mean_ms"])
             for c in ("lexical_channel_depth100", "dense_channel_depth100")]
    rows.append(f"| hybrid by parts: measured + growth of lexical and dense at depth 100, CPU per query (ms) "
                f"| {lat0['hybrid']['cpu_mean_ms']:,.2f} | {lat1['hybrid']['cpu_mean_ms']:,.2f} "
                f"| **{lat1['hybrid']['cpu_mean_ms'] + sum(parts):,.2f}** | each channel by its power law |")
    if small.get("exact") and large.get("exact"):
        for name in ("dense_k10", "hybrid"):
            row(f"exact float32 baseline {name}, CPU per query (ms)", small["exact"]["latency"][name]["cpu_mean_ms"],
                large["exact"]["latency"][name]["cpu_mean_ms"], power, "{:,.1f}")
        row("exact float32 baseline RSS (MB)", small["exact"]["memory"]["after_hybrid"]["rss_mb"],
            large["exact"]["memory"]["after_hybrid"]["rss_mb"], line, "{:,.0f}")
    head = [f"| quantity | {n0:,} measured | {n1:,} measured | {to:,} extrapolated | method |", "|---|---|---|---|---|"]
    return "\n".join(head + rows)


# -- orchestration ---------------------------------------------------------------------------
def run_step(step: str, args, work: Path) -> dict:
    if step == "corpus":
        return step_corpus(work, args.docs, args.seed, args.queries, args.warmup)
    if step == "build":
        return step_build(work, args.docs, args.seed, args.connectivity, args.expansion_add, args.bm25_heap_mb,
                          args.codes)
    if step == "serve":
        return step_serve(work, args.pools, [e for combo in args.experiment for e in combo.split(",")])
    return step_exact(work, args.pools)


def step_file(step: str, experiments) -> str:
    return step + "".join(f"+{e}" for e in sorted(experiments)) if step == "serve" else step


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=100_000, help="corpus size N (default 100,000)")
    ap.add_argument("--work", help="work directory (default: <tmp>/mathlas-scale-<N>)")
    ap.add_argument("--queries", type=int, default=200, help="measured queries (default 200)")
    ap.add_argument("--warmup", type=int, default=100, help="warm-up queries, not measured (default 100)")
    ap.add_argument("--pools", default=",".join(map(str, POOLS)), help="pool sizes for the recall curve")
    ap.add_argument("--codes", default="sign", choices=("sign", "thermometer3"),
                    help="binary codes of the bundle (default sign; see docs/bundle-format.md)")
    ap.add_argument("--connectivity", type=int, default=16, help="HNSW connectivity for write_vectors")
    ap.add_argument("--expansion-add", type=int, default=128, help="HNSW expansion_add for write_vectors")
    ap.add_argument("--bm25-heap-mb", type=int, default=0,
                    help="tantivy writer heap for write_bm25 (default: the writer's 200 MB; more documents "
                         "than fit make several segments)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--redo", action="append", default=[], choices=STEPS, help="rerun this step (repeatable)")
    ap.add_argument("--skip-exact", action="store_true", help="skip the float32-in-RAM baseline")
    ap.add_argument("--experiment", action="append", default=[],
                    help=f"also serve with runtime changes monkeypatched in: {', '.join(sorted(EXPERIMENTS))}; "
                         "a comma-separated list combines them, each --experiment is its own serve run")
    ap.add_argument("--json", help="also write the result JSON here ('-' = stdout instead of the table)")
    ap.add_argument("--extrapolate", nargs=2, metavar="RESULT", help="two result.json files (small, large)")
    ap.add_argument("--to", type=int, default=9_200_000, help="corpus size to extrapolate to")
    ap.add_argument("--step", choices=STEPS, help=argparse.SUPPRESS)  # internal: run one step in this process
    args = ap.parse_args()
    if args.extrapolate:
        print(extrapolate(*[json.loads(Path(p).read_text()) for p in args.extrapolate], args.to))
        return
    if args.docs < 2 * TOPIC or args.queries < 1 or args.warmup < 0:
        ap.error(f"--docs must be at least {2 * TOPIC} and --queries at least 1")
    args.pools = [int(p) for p in args.pools.split(",")]
    unknown = {e for combo in args.experiment for e in combo.split(",")} - set(EXPERIMENTS)
    if unknown:
        ap.error(f"unknown experiment {', '.join(sorted(unknown))}; known: {', '.join(sorted(EXPERIMENTS))}")
    work = Path(args.work or Path(tempfile.gettempdir()) / f"mathlas-scale-{args.docs}")
    work.mkdir(parents=True, exist_ok=True)
    if args.step:
        load = os.getloadavg()[0]
        result = run_step(args.step, args, work)
        result["load_avg"] = [round(load, 2), round(os.getloadavg()[0], 2)]  # other work on the machine
        experiments = [e for combo in args.experiment for e in combo.split(",")]
        (work / f"{step_file(args.step, experiments)}.json").write_text(json.dumps(result, indent=1))
        return
    params = {"docs": args.docs, "seed": args.seed, "queries": args.queries, "warmup": args.warmup,
              "hnsw": [args.connectivity, args.expansion_add], **({"codes": args.codes} if args.codes != "sign" else {})}
    stamp = work / "params.json"
    if stamp.is_file() and json.loads(stamp.read_text()) != params:
        sys.exit(f"{work} holds a run with other parameters ({stamp.read_text().strip()}); use another --work")
    stamp.write_text(json.dumps(params))
    result = {"docs": args.docs, "dims": DIMS, "cpus": os.cpu_count()}
    forward = ["--docs", str(args.docs), "--work", str(work), "--queries", str(args.queries),
               "--warmup", str(args.warmup), "--pools", ",".join(map(str, args.pools)), "--seed", str(args.seed),
               "--connectivity", str(args.connectivity), "--expansion-add", str(args.expansion_add),
               "--bm25-heap-mb", str(args.bm25_heap_mb), "--codes", args.codes]
    redo = set(args.redo)
    plan = [(step, ()) for step in STEPS if not (step == "exact" and args.skip_exact)]
    for combo in args.experiment:
        plan.append(("serve", tuple(combo.split(","))))
    for step, experiments in plan:
        name = step_file(step, experiments)
        path = work / f"{name}.json"
        if step in redo or not path.is_file():
            if step in ("corpus", "build"):  # everything after depends on it
                redo |= set(STEPS[STEPS.index(step) + 1:])
            say(f"[{name}] running (work dir {work})")
            path.unlink(missing_ok=True)
            t0 = time.perf_counter()
            extra = [a for e in experiments for a in ("--experiment", e)]
            subprocess.run([sys.executable, __file__, *forward, *extra, "--step", step], check=True)
            say(f"[{name}] done in {time.perf_counter() - t0:.0f} s")
        result[name] = json.loads(path.read_text())
    text = json.dumps(result, indent=1)
    (work / "result.json").write_text(text)
    if args.json == "-":
        print(text)
        return
    if args.json:
        Path(args.json).write_text(text)
    print(summary(result))


if __name__ == "__main__":
    main()
