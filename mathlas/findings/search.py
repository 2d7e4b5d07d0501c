"""The findings as a search channel: ``FindingsChannel.search`` returns a ``Ranking`` that
``Bundle.rank`` fuses with the bundle's lexical and dense rankings in its one RRF.

A finding competes on the bundle's own evidence, as if it were one more document of the bundle:

* **lexical**: its BM25 score for the query computed with the bundle's statistics (tantivy's
  formula, the bundle's document frequencies, document count and average field lengths, its
  tokenizer and field boosts), which puts it on the scale of the bundle's lexical channel;
* **dense**: the cosine of the query vector with the finding's vector (made by the bundle's own
  encoder; another encoder's vectors are never mixed in), the scale of the bundle's dense channel.

In each channel a finding takes the rank its score has among the bundle's ranking for the query
(and the other findings), and enters only where that rank is within the channel's depth. Its
credit is what RRF would give a document at those ranks: ``sum_c w_c / (k_rrf + rank_c)``. So an
unrelated finding lands where an unrelated document would (nowhere, or low), and a finding that
restates the best document lands beside it. A findings list of its own, with its own rank 1, would
instead earn the best finding the credit of the bundle's best document whatever its evidence.

Within the current fusion (the findings as one more RRF channel) the credit is carried by the
channel's weight and the findings' positions: ``fusion_weight`` makes the first finding's credit
exact, and each later finding sits at the position whose RRF credit is its own, the gap filled with
repeats of the first finding's key (``rrf`` counts a key at its first position only).

The bundle's rankings for the request come from the engine (``search(..., bundle_rankings=)``,
with the request's filters) or, without them, from searching the bundle's channels here again,
unfiltered (more competitors: a finding ranks no better than with the filters).
"""
from __future__ import annotations

import bisect
import json
import logging
import math
import threading
import weakref
from collections import Counter
from typing import TYPE_CHECKING, Mapping

import numpy as np

from mathlas.findings import KIND, LICENSE, SOURCE
from mathlas.fusion import Ranking
from mathlas.hit import Hit, snippet

if TYPE_CHECKING:  # pragma: no cover
    from mathlas.engine import Bundle
    from mathlas.findings.store import Finding, FindingsStore
    from mathlas.lexical import LexicalChannel

log = logging.getLogger("mathlas")

# tantivy's BM25 parameters (tantivy::query::bm25), so that a finding's score is on the bundle's scale
K1, B = 1.2, 0.75
# A finding whose credit needs a position past this in the findings list (under a thousandth of
# the first finding's credit at k_rrf 60) is left out: it bounds the padded list's length.
MAX_POSITION = 100_000
# Findings without a stored vector embedded by one search (about 5-10 ms each on a CPU)
EMBED_PER_SEARCH = 64
# A finding's BM25 is computed here in float64, tantivy's in float32: scores this close (relative)
# are the same score, so a finding whose text is a document's text takes that document's rank.
SAME_SCORE = 1e-5
# On equal credit a finding goes before the document it ties with (the agent saved it for its
# problem): its weight is raised by this factor, far below any real difference of RRF credits.
TIE_BREAK = 1e-9


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

    def __init__(self, lexical: "LexicalChannel"):
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


_STATS: "weakref.WeakKeyDictionary[LexicalChannel, BundleStats]" = weakref.WeakKeyDictionary()
# Vectors made at search time for findings stored without one: per store, (encoder, id) -> vector
_EMBEDDED: "weakref.WeakKeyDictionary[FindingsStore, dict]" = weakref.WeakKeyDictionary()
_EMBED_LOCK = threading.Lock()


def _embedded(store: "FindingsStore", encoder: str) -> dict[str, np.ndarray]:
    with _EMBED_LOCK:
        per_store = _EMBEDDED.setdefault(store, {})
        return per_store.setdefault(encoder, {})
_STATS_LOCK = threading.Lock()


def bundle_stats(bundle: "Bundle") -> BundleStats:
    """The ``BundleStats`` of a bundle's lexical channel (made once per open channel)."""
    lexical = bundle.lexical
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

    def __init__(self, findings: list["Finding"], stats: BundleStats):
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


class FindingsChannel:
    """One snapshot of a findings store, searched for one bundle (``encoder``: its fingerprint).

    Made per search (``Bundle.rank``): ``search`` keeps what ``fusion_weight`` and ``hit`` need."""

    def __init__(self, store: "FindingsStore", bundle: "Bundle"):
        snap = store._snapshot()
        self.findings: list["Finding"] = sorted(snap.findings, key=lambda f: f.id)
        self._snap = snap
        self._store = store
        self._bundle = bundle
        self._encoder = bundle.encoder_fingerprint
        self.k_rrf = float(bundle.fusion["k_rrf"])
        # per admitted finding (position in ``findings``): its rank in each bundle channel
        self.channel_ranks: dict[int, dict[str, int]] = {}
        self._first: int | None = None

    @property
    def size(self) -> int:
        return len(self.findings)

    def has_documents(self) -> bool:
        return bool(self.findings)

    def _vectors(self):
        vec = self._store.vectors()
        return vec if vec is not None and vec[2] == self._encoder and len(vec[0]) else None

    def has_vectors(self) -> bool:
        """Whether vectors made by this bundle's encoder are stored (the dense ranking needs them)."""
        return self._vectors() is not None

    # -- each channel's scores, on the bundle's scale ------------------------------------------
    def lexical_scores(self, query: str) -> np.ndarray:
        """Each finding's BM25 score for ``query`` with the bundle's statistics (0: no query word)."""
        from mathlas.lexical import query_terms

        stats = bundle_stats(self._bundle)
        lexical = stats.lexical
        if lexical.symbols == "lean":
            from mathlas.bundle import with_symbol_words

            query = with_symbol_words(query)
        # tantivy's query parser counts a repeated word once ("ring ring" scores as "ring")
        words = dict.fromkeys(query_terms(query, lexical.identifiers))
        groups = [g for g in (stats.tokens(w) for w in words) if g]
        key = ("lexical-index", id(lexical))
        index = self._snap.derived.get(key)
        if index is None or index[0] is not stats:  # one index per snapshot and bundle
            index = self._snap.derived[key] = (stats, FindingsIndex(self.findings, stats))
        return index[1].scores(groups, stats)

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
            made = self._bundle.encoder.encode_documents([f.search_text for f in todo])
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

    def _bundle_scores(self, channel: str, query: str, vector, depth: int,
                       given: Mapping[str, Ranking] | None) -> np.ndarray:
        """The scores of the bundle's own ranking in ``channel`` (``depth`` long): the engine's,
        when it passes them, else the channel searched here without the request's filters (which
        only adds competitors: a finding then ranks no better than with them)."""
        if given is not None:
            r = given.get(channel)
            return np.zeros(0, dtype=np.float32) if r is None else np.asarray(r.scores, dtype=np.float32)
        if channel == "lexical":
            return self._bundle.lexical.search(query, depth).scores
        return self._bundle.dense.search(vector, depth).scores

    # -- the channel ------------------------------------------------------------------------
    def search(self, query: str, vector: np.ndarray | None, depth: int, *, lexical: bool = True,
               bundle_rankings: Mapping[str, Ranking] | None = None,
               channel_weights: Mapping[str, float] | None = None, k_rrf: float | None = None) -> Ranking:
        """The findings that would rank within ``depth`` of a bundle channel, best credit first.

        ``lexical``: score the query's BM25 (the lexical channel runs); ``vector``: the query vector
        (the dense channel runs). ``bundle_rankings``: the bundle's own channel rankings for this
        request (with its filters); without them the channels are searched here, unfiltered.
        ``channel_weights`` and ``k_rrf`` default to the bundle's fusion block. Positions are
        padded with repeats of the first key so that each finding's RRF credit under
        ``fusion_weight`` is its own (module docstring)."""
        if k_rrf is not None:
            self.k_rrf = float(k_rrf)
        weights = dict(self._bundle.fusion["weights"] if channel_weights is None else channel_weights)
        evidence: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        if lexical and query.strip():
            scores = self.lexical_scores(query).astype(np.float32)
            pos = np.flatnonzero(scores > 0)
            if len(pos):
                evidence["lexical"] = (pos, scores[pos])
        if vector is not None:
            pos, cos = self.dense_scores(vector)
            if len(pos):
                evidence["dense"] = (pos, cos)
        ranks: dict[int, dict[str, int]] = {}
        for channel, (pos, scores) in evidence.items():
            theirs = np.sort(self._bundle_scores(channel, query, vector, depth, bundle_rankings))
            ours = np.sort(scores)
            tol = 1.0 + (SAME_SCORE if channel == "lexical" else 0.0)
            # 1 + how many of the bundle's hits and of the other findings score higher
            r = 1 + (len(theirs) - np.searchsorted(theirs, scores * tol, side="right")) \
                + (len(ours) - np.searchsorted(ours, scores, side="right"))
            for p, rank in zip(pos.tolist(), r.tolist()):
                if rank <= depth:
                    ranks.setdefault(p, {})[channel] = rank
        self.channel_ranks = ranks
        if not ranks:
            self._first = None
            return Ranking.empty()
        credit = {p: self.credit(p, weights) for p in ranks}
        order = sorted(credit, key=lambda p: (-credit[p], self.findings[p].id))
        self._first = order[0]
        top = credit[order[0]]
        keys, values = [order[0]], [top]
        for p in order[1:]:
            # the position whose RRF credit under fusion_weight is this finding's own
            want = max(len(keys) + 1, int(round((self.k_rrf + 1) * top / credit[p] - self.k_rrf)))
            if want > MAX_POSITION:
                break
            pad = want - 1 - len(keys)
            keys += [order[0]] * pad
            values += [values[-1]] * pad
            keys.append(p)
            values.append(credit[p])
        return Ranking.of(np.array(keys, dtype=np.int64), np.array(values, dtype=np.float32))

    def credit(self, position: int, channel_weights: Mapping[str, float]) -> float:
        """The RRF credit of a finding at its bundle-channel ranks: sum of w_c / (k_rrf + rank_c)."""
        return sum(float(channel_weights.get(c, 1.0)) / (self.k_rrf + r)
                   for c, r in self.channel_ranks.get(position, {}).items())

    def fusion_weight(self, channel_weights: dict[str, float]) -> float:
        """The findings channel's weight in the bundle's fusion, given the weights of the bundle's
        channels that ran: the weight that gives the first finding of the last ``search`` (at
        position 1) exactly the RRF credit of its ranks in those channels."""
        if self._first is None:
            return 0.0
        return (self.k_rrf + 1) * self.credit(self._first, channel_weights) * (1.0 + TIE_BREAK)

    def hit(self, key: int, score: float, ranks: dict[str, int | None]) -> Hit:
        """A finding as a hit; its ``lexical`` / ``dense`` ranks are those it was credited with (its
        rank among the bundle's hits in that channel), ``findings`` its position in this channel."""
        f = self.findings[key]
        own = self.channel_ranks.get(key, {})
        return Hit(id=f.id, source=SOURCE, kind=KIND, name=f.name, title="", text=snippet(f.search_text),
                   link=f.source_url, license=LICENSE, score=score,
                   ranks={"lexical": None, "dense": None, **ranks, **own})
