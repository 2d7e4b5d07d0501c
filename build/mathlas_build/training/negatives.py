"""Hard negatives for training pairs: a small in-memory BM25 over a candidate pool, and the rules that
keep a positive's own duplicates out.

BM25 (Okapi, k1 1.2, b 0.75, Lucene's idf) over lower-cased word tokens with camelCase and
``snake_case`` split, stop words dropped. Postings are numpy arrays (term-major CSR); a query is one
``bincount`` over the postings of its terms, so scoring costs what the query's terms occur, not the
pool size (except for the top-k selection).

A negative is never the positive (same id), never a text equal to the positive's after normalisation,
never a near copy (token Jaccard >= ``max_overlap``, e.g. the scheme and algebraic-space versions of
a Stacks lemma, a ``@[to_additive]`` twin, a PlanetMath copy of a HoTT section), and never a document
the exclusion list names (the dev-set targets).
"""
from __future__ import annotations

import random
import re
from collections.abc import Sequence

import numpy as np

K1, B = 1.2, 0.75
COMPARE_CHARS = 3000      # texts are compared on their start: past it no encoder reads them anyway
_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
STOP = frozenset("""a an and are as at be by for from has have if in into is it its let of on or over such
that the then there this to with we where which any every all each be can not no then thus these those""".split())


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens, camelCase split, stop words and 1-letter words dropped."""
    out = []
    for w in _WORD.findall(_CAMEL.sub(" ", text)):
        w = w.lower()
        if len(w) > 1 and w not in STOP:
            out.append(w)
    return out


def normalise(text: str) -> str:
    """The key two texts share when they are the same text up to case, punctuation and spacing."""
    return " ".join(_WORD.findall(text.lower()))


class BM25:
    """BM25 over a fixed list of texts; ``search(query, k)`` -> (row indices, scores), best first."""

    def __init__(self, texts: Sequence[str]):
        self.vocab: dict[str, int] = {}
        rows, terms = [], []
        lengths = np.zeros(len(texts), np.float32)
        for r, t in enumerate(texts):
            toks = tokens(t)
            lengths[r] = len(toks)
            for w in toks:
                terms.append(self.vocab.setdefault(w, len(self.vocab)))
                rows.append(r)
        self.n = len(texts)
        if not terms:
            self.indptr = np.zeros(1, np.int64)
            self.rows = np.zeros(0, np.int32)
            self.weights = np.zeros(0, np.float32)
            return
        key = np.asarray(terms, np.int64) * max(self.n, 1) + np.asarray(rows, np.int64)
        uniq, tf = np.unique(key, return_counts=True)           # sorted by (term, row)
        term_of, row_of = uniq // max(self.n, 1), (uniq % max(self.n, 1)).astype(np.int32)
        df = np.bincount(term_of, minlength=len(self.vocab))
        idf = np.log(1 + (self.n - df + 0.5) / (df + 0.5)).astype(np.float32)
        avg = max(float(lengths.mean()), 1e-9)
        norm = K1 * (1 - B + B * lengths[row_of] / avg)
        self.weights = (idf[term_of] * tf * (K1 + 1) / (tf + norm)).astype(np.float32)
        self.rows = row_of
        self.indptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        ids = sorted({self.vocab[w] for w in tokens(query) if w in self.vocab})
        if not ids:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        sl = [slice(self.indptr[t], self.indptr[t + 1]) for t in ids]
        rows = np.concatenate([self.rows[s] for s in sl])
        w = np.concatenate([self.weights[s] for s in sl])
        scores = np.bincount(rows, weights=w, minlength=self.n)
        k = min(k, int((scores > 0).sum()))
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]              # best first, ties by row: deterministic
        return top, scores[top].astype(np.float32)


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / max(len(a | b), 1)


class _Candidates:
    """What both miners share: a candidate is shown in the pair kind's ``view`` (cached per view and
    id: a document is often a candidate) and refused when it is the positive, an excluded id, or the
    positive's text or a near copy of it in that view."""

    docs: list
    excluded: set[str]
    max_overlap: float
    _shown: dict

    def _positive_key(self, positive_text: str) -> tuple[str, set[str]]:
        norm = normalise(positive_text[:COMPARE_CHARS])
        return norm, set(norm.split())

    def _shown_if_negative(self, d, positive_id: str, positive: tuple[str, set[str]], view) -> str | None:
        """``d``'s text in ``view`` when it may be the positive's negative, else None."""
        if d.id == positive_id or d.id in self.excluded:
            return None
        shown = self._shown.get((view, d.id))
        if shown is None:
            text = view(d)
            norm = normalise(text[:COMPARE_CHARS])
            shown = self._shown[(view, d.id)] = (text, norm, set(norm.split()))
        text, norm, toks = shown
        if norm == positive[0] or jaccard(positive[1], toks) >= self.max_overlap:
            return None
        return text


class Miner(_Candidates):
    """Mines hard negatives among one pool of documents (one source).

    BM25 runs over the documents' full retrieval texts (what the bundle's lexical channel sees); a
    candidate is then shown in the pair kind's ``view`` and compared with the positive in that view.
    A candidate from the positive's own section (``Document.title``: Stacks chapter > section, Lean
    module, Metamath section...) is preferred: "same source and section where possible".
    ``excluded`` ids never become negatives.
    """

    def __init__(self, docs: Sequence, excluded: set[str] = frozenset(), max_overlap: float = 0.8):
        from mathlas_build.retrieval_text import retrieval_text

        self.docs = list(docs)
        self.row = {d.id: r for r, d in enumerate(self.docs)}
        self.excluded = excluded
        self.max_overlap = max_overlap
        self._shown: dict = {}      # (view, id) -> (text, normalised, tokens): a document is often a candidate
        self.index = BM25([retrieval_text(d) for d in self.docs])

    def mine(self, query: str, positive_id: str, positive_text: str, view, rng: random.Random, *,
             top: int = 30, pick_from: int = 5) -> tuple[str, str] | None:
        """One hard negative (id, text in ``view``) for a query, or None when the pool has none.

        Takes the BM25 top ``top`` for the query, drops the positive and its duplicates, puts the
        positive's section first, and picks at random among the first ``pick_from`` (the very top
        BM25 hits are the likeliest unlabelled positives, so the pick is not always rank 1)."""
        rows, _ = self.index.search(query, top + 1)
        positive = self._positive_key(positive_text)
        r0 = self.row.get(positive_id)
        group = self.docs[r0].title if r0 is not None else None
        same, other = [], []
        for r in rows.tolist():
            d = self.docs[r]
            text = self._shown_if_negative(d, positive_id, positive, view)
            if text is not None:
                (same if group and d.title == group else other).append((d.id, text))
        cands = (same + other)[:pick_from]
        return rng.choice(cands) if cands else None


def is_duplicate(positive_text: str, candidate_text: str, max_overlap: float = 0.8) -> bool:
    """Whether a candidate negative is the positive's own text or a near copy of it."""
    a, b = normalise(positive_text[:COMPARE_CHARS]), normalise(candidate_text[:COMPARE_CHARS])
    return a == b or jaccard(set(a.split()), set(b.split())) >= max_overlap



# ------------------------------------------------------------------------ dense mining (issue 22, part 5)

class DenseBundle:
    """A built bundle's document vectors and the query encoder that made them: mining hard negatives with
    the trained encoder costs no corpus re-embedding, only the pairs' queries.

    Vectors are the bundle's int8 rows times their scales (``vectors/float.i8.npy``, ``float.scale.npy``),
    rows in the order of ``meta/documents.parquet``'s ``id`` column; queries go through the bundle's own
    ``encoder/`` (its prompt and pooling), so query and documents share one model."""

    def __init__(self, directory, threads: int | None = None):
        from pathlib import Path

        import pyarrow.parquet as pq

        from mathlas.encoder import Encoder

        self.directory = Path(directory)
        for rel in ("meta/documents.parquet", "vectors/float.i8.npy", "vectors/float.scale.npy", "encoder/encoder.json"):
            if not (self.directory / rel).is_file():
                raise FileNotFoundError(f"{self.directory}: not a bundle with vectors ({rel} missing); "
                                        "give a built bundle's directory in [negatives] dense_bundles")
        ids = pq.read_table(self.directory / "meta/documents.parquet", columns=["id"]).column("id").to_pylist()
        self.row = {i: r for r, i in enumerate(ids)}
        self.i8 = np.load(self.directory / "vectors/float.i8.npy", mmap_mode="r")
        self.scale = np.load(self.directory / "vectors/float.scale.npy", mmap_mode="r")
        self.encoder = Encoder(self.directory / "encoder", threads=threads)
        manifest = self.directory / "manifest.json"
        import json

        m = json.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else {}
        self.label = f"{m.get('name', self.directory.name)}-{m.get('version', '?')}"

    def vectors(self, ids: Sequence[str]) -> tuple[np.ndarray, list[int]]:
        """float32 vectors of the ``ids`` the bundle holds, and the positions (in ``ids``) they belong to."""
        pos = [k for k, i in enumerate(ids) if i in self.row]
        rows = np.asarray([self.row[ids[k]] for k in pos], np.int64)
        order = np.argsort(rows)                                  # mmap reads in file order
        out = np.empty((len(rows), self.i8.shape[1]), np.float32)
        out[order] = np.asarray(self.i8[rows[order]], np.float32) * np.asarray(self.scale[rows[order]], np.float32)[:, None]
        return out, pos


class DenseMiner(_Candidates):
    """Hard negatives among one pool of documents ranked by a trained encoder (``DenseBundle``).

    The same rules as ``Miner`` (never the positive, its copies or an excluded id), plus the
    positive-aware cut of dense mining: a candidate scored at or above ``margin`` times the positive's
    own score is more likely an unlabelled positive than a negative, and is skipped (a positive the
    bundle does not hold gets no dense negative: there is no score to cut at). ``mine_many``
    embeds a kind's queries in one batch and ranks them against the pool with exact dot products
    (blocks of 256 queries), so the cost is the queries' encoding plus one matrix product."""

    def __init__(self, docs: Sequence, bundle: DenseBundle, excluded: set[str] = frozenset(),
                 max_overlap: float = 0.8, margin: float = 0.95):
        ids = [d.id for d in docs]
        vecs, pos = bundle.vectors(ids)
        self.docs = [docs[k] for k in pos]
        self.row = {d.id: r for r, d in enumerate(self.docs)}
        self.matrix = vecs
        self.bundle = bundle
        self.coverage = len(self.docs) / max(len(docs), 1)
        self.excluded = excluded
        self.max_overlap = max_overlap
        self.margin = margin
        self._shown: dict = {}

    def mine_many(self, pairs: Sequence, view, rng: random.Random, *, top: int = 30,
                  pick_from: int = 5) -> list[tuple[str, str] | None]:
        """One (id, text in ``view``) or None per pair (``.query``, ``.pos_id``, ``.pos``), in order."""
        if not pairs or not len(self.docs):
            return [None] * len(pairs)
        q = self.bundle.encoder.encode_queries([p.query for p in pairs])
        out: list[tuple[str, str] | None] = []
        k = min(top + 1, len(self.docs))
        for start in range(0, len(pairs), 256):
            block = q[start:start + 256]
            scores = block @ self.matrix.T
            tops = np.argpartition(-scores, k - 1, axis=1)[:, :k]
            for j, p in enumerate(pairs[start:start + 256]):
                s = scores[j]
                cand = tops[j][np.lexsort((tops[j], -s[tops[j]]))]
                r0 = self.row.get(p.pos_id)
                if r0 is None or s[r0] <= 0:        # no score to cut at: BM25 mines this one
                    out.append(None)
                    continue
                out.append(self._pick(p, cand, s, self.margin * float(s[r0]), view, rng, pick_from))
        return out

    def _pick(self, p, cand, s, ceiling: float, view, rng: random.Random, pick_from: int):
        positive = self._positive_key(p.pos)
        got = []
        for r in cand.tolist():
            if float(s[r]) >= ceiling:
                continue
            d = self.docs[r]
            text = self._shown_if_negative(d, p.pos_id, positive, view)
            if text is not None:
                got.append((d.id, text))
                if len(got) >= pick_from:
                    break
        return rng.choice(got) if got else None
