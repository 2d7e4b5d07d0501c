"""Saved findings as extra documents of a bundle's own channels.

A finding competes on the bundle's own evidence, as if the bundle held it as one more document:

* **lexical**: its BM25 score for the query computed with the bundle's statistics (tantivy's
  formula, the bundle's document frequencies, document count and average field lengths, its
  tokenizer and field boosts), which puts it on the scale of the bundle's lexical channel;
* **dense**: the cosine of the query vector with the finding's vector (made by the bundle's own
  encoder; another encoder's vectors are never mixed in), the scale of the bundle's dense channel.

``FindingsDocuments.channel(name)`` answers for one channel with the findings' own ``Ranking`` (keys
``len(bundle) + position``); the pipeline merges it into that channel's ranking of the bundle's
documents by score, before the depth cut (``mathlas.ranking.fusion.merge``), and fuses as usual. So
an unrelated finding lands where an unrelated document would (nowhere, or low), and a finding that
restates the best document lands beside it (a lexical score within ``SAME_SCORE`` of a document's
is the same score, and on a tie the finding goes first: the agent saved it for its problem).
"""
from __future__ import annotations

import bisect
import json
import logging
import math
import threading
import weakref
from collections import Counter
from typing import TYPE_CHECKING
from collections.abc import Callable

import numpy as np

from mathlas.findings import KIND, LICENSE, SOURCE
from mathlas.hit import Hit, snippet
from mathlas.ranking.candidates import Ranking

if TYPE_CHECKING:  # pragma: no cover
    from mathlas.findings.store import Finding, FindingsStore
    from mathlas.ranking.lexical import LexicalChannel
    from mathlas.ranking.query import Query

log = logging.getLogger("mathlas")

# tantivy's BM25 parameters (tantivy::query::bm25), so that a finding's score is on the bundle's scale
K1, B = 1.2, 0.75
# Findings without a stored vector embedded by one search (about 5-10 ms each on a CPU)
EMBED_PER_SEARCH = 64
# A finding's BM25 is computed here in float64, tantivy's in float32: scores this close (relative)
# are the same score, so a finding whose text is a document's text takes that document's rank.
SAME_SCORE = 1e-5


def _fieldnorm_table() -> list[int]:
    """tantivy's one-byte field lengths (``tantivy::fieldnorm``, Lucene's scheme): 0 to 40 exact,
    then runs of 8 values with a step doubling from 2 each run, up to 2,013,265,944."""
    table, v, step = list(range(41)), 40, 2
    while len(table) < 256:
        for _ in range(8):
            v += step
            table.append(v)
        step *= 2
    return table[:256]


FIELDNORMS = _fieldnorm_table()


def fieldnorm(length: int) -> int:
    """A field length as tantivy stores it (rounded down to the one-byte table)."""
    return FIELDNORMS[bisect.bisect_right(FIELDNORMS, length) - 1]


def _analyzer():
    """The bundle's lexical tokenizer (``mathlas.bundle.LEXICAL_TOKENIZER``, tantivy's ``en_stem``):
    simple tokenizer, long tokens (> 40 bytes) removed, lower-cased, English stemmer."""
    import tantivy as T

    return (T.TextAnalyzerBuilder(T.Tokenizer.simple()).filter(T.Filter.remove_long(40))
            .filter(T.Filter.lowercase()).filter(T.Filter.stemmer("english")).build())


def _find(node: dict, prefix: str) -> float | None:
    """The value of the first node of a tantivy explanation whose description starts with ``prefix``."""
    if str(node.get("description", "")).startswith(prefix):
        return float(node["value"])
    for child in node.get("details") or ():
        found = _find(child, prefix)
        if found is not None:
            return found
    return None


class BundleStats:
    """A bundle's BM25 statistics, read from its tantivy index: document frequency per term and
    field (cached), document count, average length of each field (read once from tantivy's own
    explanation of a score), the tokenizer, the fields a query searches and their boosts."""

    def __init__(self, lexical: LexicalChannel):
        self.lexical = lexical
        self.searcher = lexical.searcher
        self.n = int(self.searcher.num_docs)
        self.boosts = dict(lexical.boosts)
        self.analyzer = _analyzer()
        self._df: dict[tuple[str, str], int] = {}
        self._avgdl: dict[str, float] = {}
        self._lock = threading.Lock()

    def tokens(self, text: str) -> list[str]:
        return list(self.analyzer.analyze(text)) if text else []

    def df(self, field: str, token: str) -> int:
        key = (field, token)
        d = self._df.get(key)
        if d is None:
            d = int(self.searcher.doc_freq(field, token))
            with self._lock:
                if len(self._df) > 200_000:  # a long-running server: bounded
                    self._df.clear()
                self._df[key] = d
        return d

    def idf(self, field: str, token: str) -> float:
        d = self.df(field, token)
        return math.log(1.0 + (self.n - d + 0.5) / (d + 0.5))

    def avgdl(self, field: str, candidates) -> float | None:
        """The average length of ``field`` over the bundle, from tantivy's explanation of the score
        of one document holding one of ``candidates`` (tokens); None until such a token comes."""
        if field in self._avgdl:
            return self._avgdl[field]
        import tantivy as T

        for token in candidates:
            if self.df(field, token) == 0:
                continue
            query = T.Query.term_query(self.lexical.schema, field, token)
            hits = self.searcher.search(query, 1).hits
            if not hits:
                continue
            value = _find(json.loads(query.explain(self.searcher, hits[0][1]).to_json()), "avgdl")
            if value and value > 0:
                with self._lock:
                    self._avgdl[field] = value
                return value
        return None


_STATS: weakref.WeakKeyDictionary[LexicalChannel, BundleStats] = weakref.WeakKeyDictionary()
# Vectors made at search time for findings stored without one: per store, (encoder, id) -> vector
_EMBEDDED: weakref.WeakKeyDictionary[FindingsStore, dict] = weakref.WeakKeyDictionary()
_EMBED_LOCK = threading.Lock()


_STATS_LOCK = threading.Lock()
# Each store's last findings index, per lexical channel: (its findings' ids, the index)
_INDEXES: weakref.WeakKeyDictionary[FindingsStore, dict] = weakref.WeakKeyDictionary()


def _embedded(store: FindingsStore, encoder: str) -> dict[str, np.ndarray]:
    with _EMBED_LOCK:
        per_store = _EMBEDDED.setdefault(store, {})
        return per_store.setdefault(encoder, {})


def bundle_stats(lexical: LexicalChannel) -> BundleStats:
    """The ``BundleStats`` of a bundle's lexical channel (made once per open channel)."""
    with _STATS_LOCK:
        stats = _STATS.get(lexical)
        if stats is None:
            stats = _STATS[lexical] = BundleStats(lexical)
        return stats


class FindingsIndex:
    """The findings' fields as the bundle's index would hold them: per finding and searched field,
    its token counts and length. A finding is a document whose ``name`` is its name, ``title``
    empty and ``text`` its search text (name, slogan, statement), each through ``lexical_words``
    like the bundle's documents."""

    def __init__(self, findings: list[Finding], stats: BundleStats):
        from mathlas.bundle import lexical_words

        ident = stats.lexical.identifiers
        self.fields = list(stats.boosts)
        self.tfs: list[dict[str, Counter]] = []
        self.postings: dict[str, set[int]] = {}
        for i, f in enumerate(findings):
            texts = {"name": f.name, "title": "", "text": f.search_text}
            per = {fld: Counter(stats.tokens(lexical_words(texts.get(fld, ""), ident))) for fld in self.fields}
            self.tfs.append(per)
            for tf in per.values():
                for t in tf:
                    self.postings.setdefault(t, set()).add(i)

    def scores(self, groups: list[list[str]], stats: BundleStats) -> np.ndarray:
        """BM25 of every finding for a query given as token groups (one group per query word; a
        word the tokenizer splits is a phrase query in tantivy, approximated here by its words
        when the finding holds them all, at the least frequent one's count)."""
        out = np.zeros(len(self.tfs), dtype=np.float64)
        candidates = set().union(*(self.postings.get(t, set()) for g in groups for t in g)) if groups else set()
        if not candidates:
            return out
        tokens = [t for g in groups for t in g]
        for fld in self.fields:
            boost = stats.boosts[fld]
            avgdl = stats.avgdl(fld, tokens)
            if avgdl is None:  # no query word in this field of the bundle: the findings' own mean
                lens = [sum(tf[fld].values()) for tf in self.tfs]
                avgdl = (sum(lens) / len(lens)) or 1.0
            for i in candidates:
                tf = self.tfs[i][fld]
                dl = fieldnorm(sum(tf.values()))
                if not dl:
                    continue
                norm = K1 * (1 - B + B * dl / avgdl)
                total = 0.0
                for g in groups:
                    f = min(tf.get(t, 0) for t in g)
                    if f:
                        total += sum(stats.idf(fld, t) for t in g) * (K1 + 1) * f / (f + norm)
                out[i] += boost * total
        return out


class FindingsDocuments:
    """The findings of a store, as extra documents of one bundle: made per search from the store's
    current findings (ordered by id; finding ``i`` is key ``base + i``).

    ``lexical``: the bundle's lexical channel (its statistics score the findings); ``encode``: the
    bundle's document encoder (for findings stored without a vector of it) and ``encoder`` its
    fingerprint; ``base``: the bundle's size."""

    source = SOURCE
    kind = KIND

    def __init__(self, store: FindingsStore, *, base: int, encoder: str,
                 lexical: Callable[[], LexicalChannel], encode: Callable[[list[str]], np.ndarray]):
        self.findings: list[Finding] = sorted(store.all(), key=lambda f: f.id)
        self.base = base
        self._store = store
        self._encoder = encoder
        self._lexical = lexical
        self._encode = encode

    def __len__(self) -> int:
        return len(self.findings)

    def _vectors(self):
        vec = self._store.vectors()
        return vec if vec is not None and vec[2] == self._encoder and len(vec[0]) else None

    def has_vectors(self) -> bool:
        """Whether vectors made by this bundle's encoder are stored (the dense ranking needs them)."""
        return self._vectors() is not None

    # -- each channel's scores, on the bundle's scale ------------------------------------------
    def _index(self, stats: BundleStats) -> FindingsIndex:
        """The findings' BM25 fields, made once per set of findings and lexical channel."""
        ids = tuple(f.id for f in self.findings)
        with _EMBED_LOCK:
            held = _INDEXES.setdefault(self._store, {}).get(id(stats.lexical))
        if held is not None and held[0] == ids and held[1] is stats:
            return held[2]
        index = FindingsIndex(self.findings, stats)
        with _EMBED_LOCK:
            _INDEXES.setdefault(self._store, {})[id(stats.lexical)] = (ids, stats, index)
        return index

    def lexical_scores(self, query: str) -> np.ndarray:
        """Each finding's BM25 score for ``query`` with the bundle's statistics (0: no query word)."""
        from mathlas.ranking.lexical import query_terms

        stats = bundle_stats(self._lexical())
        lexical = stats.lexical
        if lexical.symbols == "lean":
            from mathlas.bundle import with_symbol_words

            query = with_symbol_words(query)
        # tantivy's query parser counts a repeated word once ("ring ring" scores as "ring")
        words = dict.fromkeys(query_terms(query, lexical.identifiers))
        groups = [g for g in (stats.tokens(w) for w in words) if g]
        return self._index(stats).scores(groups, stats)

    def dense_scores(self, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(positions of the findings that have a vector of this encoder, their cosine with ``vector``).

        Findings stored without one (added while no encoder was loaded) are embedded here, since
        the query vector means the bundle's encoder is loaded: up to ``EMBED_PER_SEARCH`` a search,
        kept in memory for the process (``mathlas findings reindex`` stores them); a finding
        without a vector would have no dense evidence, where every document has some."""
        vector = np.asarray(vector, dtype=np.float32)
        vec = self._vectors()
        stored: dict[str, np.ndarray] = {}
        if vec is not None and vec[1].shape[1] == len(vector):
            stored = dict(zip(vec[0], vec[1]))
        memo = _embedded(self._store, self._encoder)
        missing = [f for f in self.findings if f.id not in stored and f.id not in memo]
        if missing:
            todo = missing[:EMBED_PER_SEARCH]
            if len(missing) > len(todo):
                log.warning("mathlas: findings: %d findings have no vector; `mathlas findings reindex` embeds "
                            "them (meanwhile %d a search are embedded for it)", len(missing), EMBED_PER_SEARCH)
            made = self._encode([f.search_text for f in todo])
            with _EMBED_LOCK:
                memo.update(zip((f.id for f in todo), np.asarray(made, dtype=np.float32)))
        pos, rows = [], []
        for i, f in enumerate(self.findings):
            v = stored.get(f.id)
            v = memo.get(f.id) if v is None else v
            if v is not None and len(v) == len(vector):
                pos.append(i)
                rows.append(v)
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        return np.array(pos, dtype=np.int64), (np.stack(rows) @ vector).astype(np.float32)

    # -- the channels -------------------------------------------------------------------------
    def channel(self, name: str) -> FindingsChannel:
        """The findings as extra documents of the bundle channel ``name`` (lexical or dense)."""
        if name not in ("lexical", "dense"):
            raise ValueError(f"findings have no {name} scores")
        return FindingsChannel(self, name)

    def _ranking(self, pos: np.ndarray, scores: np.ndarray, depth: int) -> Ranking:
        order = np.lexsort((pos, -scores))[:depth]  # best first; equal scores in id order
        return Ranking(pos[order] + self.base, scores[order])

    def text(self, position: int) -> str:
        """What a reranker reads of finding ``position``."""
        return self.findings[position].search_text

    def hit(self, position: int, score: float, ranks: dict[str, int | None]) -> Hit:
        """Finding ``position`` as a hit; its ``lexical`` / ``dense`` ranks are its places in those
        channels' rankings (the bundle's documents and the findings together)."""
        f = self.findings[position]
        return Hit(id=f.id, source=SOURCE, kind=KIND, name=f.name, title="", text=snippet(f.search_text),
                   link=f.source_url, license=LICENSE, score=score, ranks={"lexical": None, "dense": None, **ranks})


class FindingsChannel:
    """The findings' side of one bundle channel: the channel protocol of ``mathlas.ranking``
    (``name``, ``rank(query, depth, filters)``), whose ranking the pipeline merges by score into
    the bundle channel's own (``same_score``: the relative difference that counts as a tie)."""

    def __init__(self, documents: FindingsDocuments, name: str):
        self.documents = documents
        self.name = name
        self.same_score = SAME_SCORE if name == "lexical" else 0.0

    def rank(self, query: Query, depth: int, filters=None) -> Ranking:
        """The findings with evidence in this channel, best first (the request's filters decided
        already whether findings are searched at all)."""
        docs = self.documents
        if self.name == "lexical":
            if not query.text.strip():
                return Ranking.empty()
            scores = docs.lexical_scores(query.text).astype(np.float32)
            pos = np.flatnonzero(scores > 0)
            return docs._ranking(pos, scores[pos], depth)
        pos, cos = docs.dense_scores(query.vector())
        return docs._ranking(pos, cos, depth)
