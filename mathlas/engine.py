"""The one way in: ``open_bundle()``, the process-wide cache of open bundles, and ``Bundle``, an open
bundle with its hybrid search (lexical + dense, fused with RRF).

Opening reads the manifest and the metadata table only; the BM25 index opens on the first lexical
query and the ONNX encoder on the first dense one. Every lazy part loads once under a lock, so one
``Bundle`` serves concurrent searches from many threads, and ``open_bundle`` hands every caller in
the process (library, CLI, MCP, HTTP) the same ``Bundle`` for the same directory.

Search: ``Bundle.search(query, k, **options)`` is ``Bundle.rank(SearchRequest.make(query, k,
**options))``. ``rank`` runs the channels, each with the filters inside, and fuses their rankings
with RRF in one place; given a findings store (``mathlas.findings``), the findings are one more
channel of that same fusion, searched with the same query vector.
"""
from __future__ import annotations

import bisect
import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from mathlas.abbreviations import expand as expand_abbreviations
from mathlas.bundle import (DEFAULT_FUSION, DEFAULT_RERANK_TOP_N, ENCODER_DIR, MANIFEST, META, META_ARROW, RERANKER_DIR,
                            Manifest, encoder_fingerprint, verify)
from mathlas.checks import is_number
from mathlas.errors import BundleCorruptError, UsageError
from mathlas.filters import Filters, PaperColumns, PaperFilter
from mathlas.fusion import PRIOR_TRANSFORMS, Fused, Ranking, add_priors, prior_values, rrf, statements_first
from mathlas.hit import CORE_COLUMNS, Document, Hit, snippet
from mathlas.intent import definition_intent
from mathlas.request import MAX_K, SearchRequest

if TYPE_CHECKING:  # pragma: no cover
    from mathlas.findings.store import FindingsStore

# Each channel returns this many candidates (at least k) for fusion.
FUSION_DEPTH = 100
# Query vectors a bundle keeps (384 floats each: 1.5 KB; 256 of them: 0.4 MB)
QUERY_VECTORS_KEPT = 256
# The channels a mode runs.
MODE_CHANNELS = {"hybrid": ("lexical", "dense"), "lexical": ("lexical",), "dense": ("dense",)}
# Very short keyword queries ("Sylow", "Heine Borel"): a mean-pooling encoder averages the one or two
# word vectors with its [CLS]/[SEP] vectors, which then dominate. Repeating the query once for the
# dense channel (as the TheoremSearch paper does) moved 40 short queries from P@1 .425 / MRR@20 .593
# to .500 / .636 in hybrid on the default bundle (8 better, 4 worse; scripts/bench_short_queries.py,
# docs/papers.md). Applies to queries of at most SHORT_QUERY_WORDS words besides stopwords, all of
# them words (no formulas), and only to mean-pooling encoders (unmeasured for the others).
SHORT_QUERY_WORDS = 2
SHORT_QUERY_REPEAT = 2
_SHORT_QUERY = re.compile(r"[^\W\d_][\w'’-]*(?:\s+[^\W\d_][\w'’-]*)*")
_STOPWORDS = frozenset("a an the of in on for and or to is are with by from as at its".split())


def _codes(column) -> tuple[list[str], np.ndarray]:
    """A string column as (sorted distinct values, int32 index of each row's value)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = sorted(v for v in pc.unique(column).to_pylist() if v is not None)
    codes = pc.index_in(column, value_set=pa.array(names, type=pa.string()))
    return names, pc.fill_null(codes, -1).to_numpy().astype(np.int32, copy=False)


@dataclass
class SearchPlan:
    """A request fitted to a bundle (``Bundle.plan``): the filters its channels apply, whether the
    bundle's channels run at all (not when only findings are asked for), the per-key weights
    (source x kind; None: all 1), the active document priors, how deep each channel ranks, the
    statement links (``about_keys``), the findings channel (None: no findings) and its weight."""

    filters: Filters
    bundle_part: bool
    key_weights: np.ndarray | None
    priors: dict[str, float]
    depth: int
    about: np.ndarray | None
    found: Any = None
    findings_weight: float = 0.0
    intent: str | None = None   # "definition": the query read as a noun phrase (mathlas.intent)
    query: str = ""             # what the channels search: the query with its abbreviations expanded
    expansions: dict = field(default_factory=dict)  # abbreviation -> expansions used (mathlas.abbreviations)


class Bundle:
    """A bundle opened for search. Get one with ``mathlas.open_bundle()``."""

    @classmethod
    def open(cls, root: str | os.PathLike) -> "Bundle":
        """Open the bundle directory ``root`` (format version and file sizes checked)."""
        root = Path(root)
        return cls(root, verify(root, checksums=False))

    def __init__(self, root: Path, manifest: Manifest):
        self.root = Path(root)
        self.manifest = manifest
        self._lock = threading.RLock()  # re-entrant: one lazy part may make another (about_keys -> key_of)
        self._lexical = None
        self._dense = None
        self._encoder = None
        self._reranker = None
        self._about: np.ndarray | None = None
        self._columns: dict[str, Any] = {}
        self._ids_sorted: np.ndarray | None = None
        self._paper_columns: PaperColumns | None = None
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()  # query text -> vector (query_vector)
        self._vectors_lock = threading.Lock()
        # Only a listed (so verified) Arrow copy is read: a file the manifest does not list is never used.
        self.meta_file = META_ARROW if META_ARROW in manifest.files else META
        self.table = self._read_table()
        if self.table.num_rows != manifest.count:
            raise BundleCorruptError(f"bundle {self.root.name}: {self.meta_file} has {self.table.num_rows} rows, "
                                     f"manifest says {manifest.count}")
        # Filters need source and kind per key: small integer codes, not a Python string per document
        # (1M strings cost ~60 MB each); names sorted so that codes do not depend on row order.
        self.source_names, self._source_codes = _codes(self.table.column("source"))
        self._kind_names, self._kind_codes = _codes(self.table.column("kind"))

    def _read_table(self):
        """The metadata table: memory-mapped from META_ARROW when the manifest lists it (zero-copy: pages
        are read on demand and stay evictable page cache), else read from the parquet into RAM."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = self.root / self.meta_file
        try:
            if self.meta_file == META_ARROW:
                return pa.ipc.open_file(pa.memory_map(str(path))).read_all()
            table = pq.read_table(path, memory_map=True, use_threads=False)
            pa.default_memory_pool().release_unused()  # decompression scratch: ~60 MB of RSS on the default bundle
            return table
        except Exception as e:  # pyarrow raises ArrowInvalid / OSError
            raise BundleCorruptError(f"bundle {self.root.name}: cannot read {self.meta_file} ({e}); "
                                     f"reinstall the bundle") from None

    # -- identity ------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def version(self) -> str:
        return self.manifest.version

    def __len__(self) -> int:
        return self.manifest.count

    @property
    def fusion(self) -> dict:
        """The RRF defaults: the manifest's measured ``fusion`` block over ``DEFAULT_FUSION``."""
        return {**DEFAULT_FUSION, **(self.manifest.fusion or {})}

    @property
    def definition_intent(self) -> dict | None:
        """The manifest's ``fusion.definition_intent`` (kinds, factor on their fused score, factor on
        the priors' weights for a query that reads as a noun phrase; mathlas.intent), or None."""
        spec = (self.manifest.fusion or {}).get("definition_intent")
        if not spec:
            return None
        kinds, factor, prior = ((spec.get("kinds"), spec.get("factor", 1.0), spec.get("prior_factor", 1.0))
                                if isinstance(spec, dict) else (None, None, None))
        if not (isinstance(kinds, list) and all(isinstance(x, str) for x in kinds) and is_number(factor)
                and factor >= 0 and is_number(prior) and prior >= 0):
            raise BundleCorruptError(f"bundle {self.root.name}: manifest fusion.definition_intent must give "
                                     f"kinds (a list), factor and prior_factor (numbers >= 0), got {spec!r}")
        return {"kinds": kinds, "factor": float(factor), "prior_factor": float(prior)}

    @property
    def priors(self) -> dict[str, dict]:
        """The document priors the manifest declares (``fusion.priors``): name -> column, transform, weight."""
        declared = (self.manifest.fusion or {}).get("priors") or {}
        out = {}
        bad = f"bundle {self.root.name}: manifest fusion.priors"
        if not isinstance(declared, dict):
            raise BundleCorruptError(f"{bad} is not an object")
        for name, spec in declared.items():
            if not isinstance(spec, dict) or spec.get("column") not in self.table.column_names \
                    or spec.get("transform", "identity") not in PRIOR_TRANSFORMS:
                raise BundleCorruptError(f"{bad}[{name!r}] = {spec!r}: needs a metadata column and a transform "
                                         f"({', '.join(PRIOR_TRANSFORMS)})")
            w = spec.get("weight", 0.0)
            if not is_number(w):
                raise BundleCorruptError(f"{bad}[{name!r}]: weight {w!r} is not a number")
            out[name] = {"column": spec["column"], "transform": spec.get("transform", "identity"), "weight": float(w)}
        return out

    def __repr__(self) -> str:
        return f"<Bundle {self.name}-{self.version}: {len(self)} documents at {self.root}>"

    # -- lazy parts ----------------------------------------------------------------------
    def _lazy(self, attr: str, make):
        """``self.<attr>``, made by ``make()`` on first use, once, even under concurrent first use."""
        if getattr(self, attr) is None:
            with self._lock:
                if getattr(self, attr) is None:
                    setattr(self, attr, make())
        return getattr(self, attr)

    @property
    def lexical(self):
        from mathlas.lexical import LexicalChannel

        lex = self.manifest.lexical
        return self._lazy("_lexical", lambda: LexicalChannel(self.root, len(self), lex.get("boosts"),
                                                     symbols=lex.get("symbols"),
                                                     identifiers=lex.get("identifiers", "split")))

    @property
    def encoder(self):
        from mathlas.encoder import Encoder

        return self._lazy("_encoder", lambda: Encoder(self.root / ENCODER_DIR))

    @property
    def dense(self):
        from mathlas.dense import DenseChannel

        vec = self.manifest.vectors
        return self._lazy("_dense", lambda: DenseChannel(self.root, len(self), int(vec["dims"]),
                                                         codes=vec.get("binary_codes", "sign")))

    @property
    def reranker(self):
        """The bundle's reranker (``mathlas.rerank.Reranker``), loaded on first use."""
        from mathlas.rerank import Reranker

        return self._lazy("_reranker", lambda: Reranker(self.root / RERANKER_DIR))

    def rerank_depth(self, req: SearchRequest) -> int:
        """How many fused hits the reranker rescores for ``req`` (0: it does not rerank)."""
        declared = self.manifest.reranker or {}
        if not (declared.get("default", False) if req.rerank is None else req.rerank):
            return 0
        if not declared:
            raise UsageError(f"bundle {self.label} has no reranker; search without rerank "
                             f"(`mathlas-build add-reranker` adds one to a bundle you built)")
        return int(declared.get("top_n", DEFAULT_RERANK_TOP_N))

    def rerank(self, req: SearchRequest, fused: list[Fused], found=None) -> list[Fused]:
        """``fused`` with its first ``rerank_depth(req)`` hits reordered by the reranker (the rest after
        them, in fused order); ``found``: the findings channel, whose keys follow the bundle's."""
        from mathlas.rerank import reorder

        head = fused[:self.rerank_depth(req)]
        if not head:
            return fused
        n = len(self)
        texts = self.table.column("text")
        docs = [texts[f.key].as_py() or "" if f.key < n else found.findings[f.key - n].search_text for f in head]
        return reorder(fused, self.reranker.score(req.query, docs))

    @property
    def about_keys(self) -> np.ndarray | None:
        """Per document key, the key of the statement it proves or illustrates (the ``about``
        column, written by the build's statement links), -1 for none; None without the column."""
        if "about" not in self.table.column_names:
            return None

        def make() -> np.ndarray:
            out = np.full(len(self), -1, dtype=np.int64)
            for key, doc_id in enumerate(self.table.column("about").to_pylist()):
                if doc_id:
                    try:
                        out[key] = self.key_of(doc_id)
                    except UsageError:  # a statement the build left out: nothing to lift
                        pass
            return out

        return self._lazy("_about", make)

    @property
    def model_loaded(self) -> bool:
        return self._encoder is not None and self._encoder._session is not None

    # -- checks that need the bundle ------------------------------------------------------
    def _check_sources(self, names: Iterable[str], what: str, findings: bool = False) -> tuple[str, ...]:
        from mathlas.findings import SOURCE as FINDINGS

        names = tuple(names)
        unknown = [n for n in names if n not in self.source_names and not (findings and n == FINDINGS)]
        if unknown:
            also = f" and {FINDINGS} (results saved with add_finding)" if findings else ""
            raise UsageError(f"unknown source {', '.join(map(repr, unknown))} in {what}; "
                             f"this bundle has: {', '.join(self.source_names)}{also} "
                             f"(bundle {self.name}-{self.version})")
        return names

    @property
    def kind_names(self) -> list[str]:
        """The kinds this bundle's documents have (theorem, definition, proof...), sorted."""
        return list(self._kind_names)

    def _check_kinds(self, names: Iterable[str], what: str, findings: bool = False) -> tuple[str, ...]:
        from mathlas.findings import KIND as FINDING

        names = tuple(names)
        unknown = [x for x in names if x not in self._kind_names and not (findings and x == FINDING)]
        if unknown:
            import difflib

            close = difflib.get_close_matches(unknown[0], self._kind_names, n=1, cutoff=0.6)
            also = f" and {FINDING} (results saved with add_finding)" if findings else ""
            raise UsageError(f"unknown kind {', '.join(map(repr, unknown))} in {what}"
                             + (f" (did you mean {close[0]!r}?)" if close else "")
                             + f"; this bundle has: {', '.join(self._kind_names)}{also} (bundle {self.label})")
        return names

    @property
    def paper_columns(self) -> PaperColumns:
        """The paper metadata prepared for filter masks (made on the first paper filter)."""
        return self._lazy("_paper_columns", lambda: PaperColumns(self.table, f"{self.name}-{self.version}"))

    def filters(self, sources: Sequence[str] = (), exclude_sources: Sequence[str] = (), kinds: Sequence[str] = (),
                paper: PaperFilter | None = None, mask: np.ndarray | None = None) -> Filters:
        """Checked filter values (``SearchRequest``) as the ``Filters`` both channels apply. Sources
        must be this bundle's; ``mask``: a boolean array over document keys of the caller's own (the
        formal tools' module filter)."""
        include, exclude, kinds = tuple(sources), set(exclude_sources), tuple(kinds)
        if mask is not None:
            mask = np.asarray(mask)
            if mask.dtype != bool or mask.shape != (len(self),):
                raise UsageError(f"mask must be a boolean array of length {len(self)}")
        if not include and not exclude and not kinds and paper is None and mask is None:
            return Filters()
        allowed = np.ones(len(self), dtype=bool) if paper is None else self.paper_columns.mask(paper)
        if mask is not None:
            allowed &= mask
        if include:
            allowed &= np.isin(self._source_codes, [self.source_names.index(s) for s in include])
        if exclude:
            allowed &= ~np.isin(self._source_codes, [self.source_names.index(s) for s in exclude])
            include = tuple(s for s in include if s not in exclude)
        if kinds:
            allowed &= np.isin(self._kind_codes, [i for i, n in enumerate(self._kind_names) if n in kinds])
        return Filters(include, tuple(sorted(exclude)), kinds, allowed, paper, custom=mask is not None)

    @property
    def kind_weights(self) -> dict[str, float]:
        """The manifest's measured kind weights (``fusion.kind_weights``: kind -> factor on the fused
        score; kinds it leaves out count 1)."""
        declared = (self.manifest.fusion or {}).get("kind_weights") or {}
        if not isinstance(declared, dict) or not all(is_number(w) and w >= 0 for w in declared.values()):
            raise BundleCorruptError(f"bundle {self.root.name}: manifest fusion.kind_weights must map kinds "
                                     f"to numbers >= 0, got {declared!r}")
        return {str(k): float(w) for k, w in declared.items()}

    def _key_weights(self, source_weights: Mapping[str, float], kind_weights: Mapping[str, float] | None,
                     label: str = "kind_weights") -> np.ndarray | None:
        """Each key's factor on its fused score: its source's weight times its kind's."""
        unknown = [x for x in kind_weights or {} if x not in self._kind_names]
        if unknown:
            raise UsageError(f"unknown kind {', '.join(map(repr, unknown))} in {label}; "
                             f"this bundle has: {', '.join(self._kind_names)}")
        kinds = {x: w for x, w in {**self.kind_weights, **(kind_weights or {})}.items()
                 if x in self._kind_names and w != 1}
        if not source_weights and not kinds:
            return None
        out = np.ones(len(self), dtype=np.float64)
        if source_weights:
            per_source = np.ones(len(self.source_names), dtype=np.float64)
            for s, w in source_weights.items():
                per_source[self.source_names.index(s)] = w
            out *= per_source[self._source_codes]
        if kinds:
            per_kind = np.ones(len(self._kind_names) + 1, dtype=np.float64)  # the last: rows with no kind (code -1)
            for x, w in kinds.items():
                per_kind[self._kind_names.index(x)] = w
            out *= per_kind[self._kind_codes]
        return out

    def _prior_weights(self, priors: Mapping[str, float] | None) -> dict[str, float]:
        """The active priors (weight != 0): the manifest's default weights, overridden by ``priors``."""
        declared = self.priors
        unknown = [n for n in priors or {} if n not in declared]
        if unknown:
            known = ", ".join(sorted(declared)) or "none"
            raise UsageError(f"unknown prior {', '.join(map(repr, unknown))}; bundle {self.name} declares: {known}")
        weights = {n: spec["weight"] for n, spec in declared.items()}
        weights.update(priors or {})
        return {n: w for n, w in weights.items() if w != 0}

    def prior_bonus(self, keys: np.ndarray, weights: Mapping[str, float]) -> np.ndarray:
        """``sum_p weight_p * transform_p(column_p[key])`` for each key (reads only those rows)."""
        import pyarrow as pa

        keys = np.asarray(keys, dtype=np.int64)
        bonus = np.zeros(len(keys), dtype=np.float64)
        for name, w in weights.items():
            spec = self.priors[name]
            col = self.table.column(spec["column"]).take(pa.array(keys))
            try:
                raw = col.cast(pa.float64()).to_numpy(zero_copy_only=False)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise BundleCorruptError(f"bundle {self.root.name}: prior {name!r} column {spec['column']} "
                                         f"is {col.type}, not a number") from None
            bonus += w * prior_values(raw, spec["transform"])
        return bonus

    # -- search --------------------------------------------------------------------------
    def dense_text(self, query: str) -> str:
        """The text the dense channel encodes: the query, repeated when it is a very short keyword query.

        A bundle's manifest may set ``fusion.short_query_repeat`` (1 turns the rule off).
        """
        repeat = (self.manifest.fusion or {}).get("short_query_repeat", SHORT_QUERY_REPEAT)
        if isinstance(repeat, int) and not isinstance(repeat, bool) and 1 < repeat <= 8 \
                and self.manifest.encoder.get("pooling") == "mean" and _SHORT_QUERY.fullmatch(query):
            words = [w for w in re.split(r"[\s-]+", query.lower()) if w and w not in _STOPWORDS]
            if 0 < len(words) <= SHORT_QUERY_WORDS:
                return " ".join([query] * repeat)
        return query

    def query_vector(self, query: str) -> np.ndarray:
        """The query as the dense channel sees it (``dense_text``, encoded with the bundle's encoder).
        The last ``QUERY_VECTORS_KEPT`` are kept: a page of results, a TheoremSearch answer's cosines
        and the findings channel all ask again for the vector the search just made."""
        text = self.dense_text(query)
        with self._vectors_lock:
            got = self._vectors.get(text)
            if got is not None:
                self._vectors.move_to_end(text)
                return got
        vec = self.encoder.encode_queries([text])[0]
        vec.setflags(write=False)  # shared by every caller that asks again
        with self._vectors_lock:
            self._vectors[text] = vec
            while len(self._vectors) > QUERY_VECTORS_KEPT:
                self._vectors.popitem(last=False)
        return vec

    def forget_query_vectors(self) -> None:
        """Drop the kept query vectors, so that the next search encodes its query as a new one would
        (``scripts/bench_search.py`` times both cases)."""
        with self._vectors_lock:
            self._vectors.clear()

    @property
    def encoder_fingerprint(self) -> str:
        """Which encoder made this bundle's vectors (``mathlas.bundle.encoder_fingerprint``)."""
        return encoder_fingerprint(self.manifest.encoder)

    def channel_rankings(self, query: str, depth: int, filters: Filters, mode: str = "hybrid",
                         pool: int | None = None, vector: np.ndarray | None = None) -> dict[str, Ranking]:
        """Each channel's own ranking (``depth`` long) for a checked query; ``vector``: the query
        vector when the caller already has it."""
        out: dict[str, Ranking] = {}
        if "lexical" in MODE_CHANNELS[mode]:
            out["lexical"] = self.lexical.search(query, depth, filters)
        if "dense" in MODE_CHANNELS[mode]:
            out["dense"] = self.dense.search(self.query_vector(query) if vector is None else vector,
                                             depth, filters, pool=pool)
        return out

    def search(self, query: str, k: int = 10, **options: Any) -> list[Hit]:
        """Rank documents for ``query``: ``rank(SearchRequest.make(query, k, **options))``.

        ``mode``: hybrid (RRF of both channels), lexical (BM25) or dense (encoder). ``sources`` /
        ``exclude_sources`` / ``kinds`` filter inside each channel before its top-k cut;
        ``source_weights`` scale a source's fused score (0 excludes it). ``pool`` is the number of
        binary candidates the dense channel rescores. ``k_rrf`` and ``channel_weights`` default to
        the bundle's measured ``fusion`` block (manifest). Queries longer than the encoder's
        ``max_tokens`` are truncated for the dense channel and to their first 256 words for BM25.

        ``paper_filter`` (a ``PaperFilter`` or a mapping with its fields: authors, categories,
        year_min/max, citations_min/max, journal_published) filters on paper metadata inside each
        channel; a bundle without paper columns refuses it. ``priors`` sets the weight of document
        priors the manifest declares (``fusion.priors``, e.g. ``{"citations": 0.002}``; 0 turns
        one off): ``score + weight * transform(column)`` is added to the fused score (to the
        channel's own score in lexical/dense mode) over a deeper candidate list, then re-cut to k.
        ``mask`` (a boolean array over document keys) keeps only the documents it marks, inside
        each channel like every other filter (the formal tools' module filter uses it).
        """
        return self.rank(SearchRequest.make(query, k, **options))

    def rank(self, req: SearchRequest, findings: "FindingsStore | None" = None,
             fields: Sequence[str] = (), scores_out: dict | None = None) -> list[Hit]:
        """Run a checked request: plan it (``plan``: the checks that need the bundle, filters,
        weights, depth), run each channel to the same depth, fuse their rankings in one RRF, then
        the document priors, the reranker and the statement-first rule, and cut to ``k`` (after
        ``offset``). Every step works on the whole fused list, so a hit's ranks and place do not
        depend on ``k``. With a findings store, the findings are one more channel
        (``mathlas.findings.search``; source ``findings``, kind ``finding``) whose keys follow the
        bundle's. ``fields``: metadata columns to copy into each hit's ``fields``. ``scores_out``: a
        dict given the bundle channels' own rankings (``"rankings"``, raw scores; no findings) for
        the answer's confidence (``mathlas.confidence``)."""
        plan = self.plan(req, findings)
        rankings, channel_weights, key_weights = self._run_channels(req, plan)
        if scores_out is not None:
            scores_out["rankings"] = {c: r for c, r in rankings.items() if c in MODE_CHANNELS["hybrid"]}
            scores_out["expansions"] = plan.expansions
        fusion = self.fusion
        fused = rrf(rankings, plan.depth, k_rrf=float(fusion["k_rrf"] if req.k_rrf is None else req.k_rrf),
                    channel_weights=channel_weights, key_weights=key_weights)
        if len(rankings) == 1 and plan.found is None:  # a single bundle channel keeps its own scores
            (ranking,) = rankings.values()
            own = dict(zip(ranking.keys.tolist(), ranking.scores.tolist()))
            fused = [Fused(f.key, own[f.key], f.ranks) for f in fused]
        n = len(self)
        if plan.priors:
            keys = np.array([f.key for f in fused], dtype=np.int64)
            bonus = np.zeros(len(keys))
            ours = keys < n  # findings have no document priors
            bonus[ours] = self.prior_bonus(keys[ours], plan.priors)
            fused = add_priors(fused, bonus, len(fused))
        fused = self.rerank(req, fused, plan.found)
        if plan.about is not None:  # a statement comes back only where filters and weights let it rank
            allowed = plan.filters.allowed
            if key_weights is not None:
                allowed = (key_weights[:n] > 0) if allowed is None else allowed & (key_weights[:n] > 0)
            fused = statements_first(fused, plan.about, allowed)
        fused = fused[:req.k + req.offset]
        ids = self.column("id")
        return [self.hit(f.key, f.score, f.ranks, fields,
                         statement_of=ids[f.lifted_by].as_py() if 0 <= f.lifted_by < n else None)
                if f.key < n else plan.found.hit(f.key - n, f.score, f.ranks)
                for f in fused[req.offset:]]

    def plan(self, req: SearchRequest, findings: "FindingsStore | None" = None) -> "SearchPlan":
        """What ``rank`` will do for ``req``: the checks that need this bundle (source, kind and prior
        names, each refused in one line naming the caller's own label for it), the filters each
        channel applies, the weights and how deep each channel ranks."""
        from mathlas.findings import KIND as F_KIND
        from mathlas.findings import SOURCE as F_SOURCE

        with_findings = findings is not None
        query, used = expand_abbreviations(req.query)
        self._check_sources(req.sources, req.labels["sources"], with_findings)
        self._check_sources(req.exclude_sources, req.labels["exclude_sources"], with_findings)
        self._check_kinds(req.kinds, req.labels["kinds"], with_findings)
        weights = dict(req.source_weights or {})
        self._check_sources(weights, req.labels["source_weights"], with_findings)
        prior_weights = self._prior_weights(req.priors)
        f_weight = weights.pop(F_SOURCE, 1.0) if with_findings else 0.0
        use_findings = (with_findings and f_weight > 0 and F_SOURCE not in req.exclude_sources
                        and req.paper is None and req.mask is None
                        and (not req.sources or F_SOURCE in req.sources) and (not req.kinds or F_KIND in req.kinds))
        include = tuple(s for s in req.sources if s != F_SOURCE)
        kinds = tuple(x for x in req.kinds if x != F_KIND) if with_findings else req.kinds
        # only findings asked for (by source or kind): the bundle's channels have nothing to add
        bundle_part = not ((req.sources and not include) or (req.kinds and not kinds))
        exclude = set(s for s in req.exclude_sources if s != F_SOURCE) | {s for s, w in weights.items() if w == 0}
        declared = self.definition_intent if bundle_part else None  # the manifest first: most bundles have none
        intent = declared if declared and definition_intent(req.query) else None
        if intent:  # a noun phrase: definitions first, and "how much is built on this" counts more
            favoured = {x: intent["factor"] for x in intent["kinds"] if x in self._kind_names}
            kind_weights = {**favoured, **(req.kind_weights or {})}
            prior_weights = {n: w * intent["prior_factor"] for n, w in prior_weights.items()}
        else:
            kind_weights = req.kind_weights
        key_weights = self._key_weights(weights, kind_weights, req.labels["kind_weights"])
        about = self.about_keys if bundle_part else None
        # Fusion, priors and the statement-first rule need candidates beyond k: each channel then
        # ranks FUSION_DEPTH deep whatever k is, so ranks and order do not depend on k.
        deep = (req.mode == "hybrid" or key_weights is not None or bool(prior_weights) or use_findings
                or about is not None)
        top = max(req.k + req.offset, self.rerank_depth(req))  # ranked through (and reranked), offset hits skipped
        depth = min(max(top, FUSION_DEPTH), MAX_K) if deep else top
        found = None
        if use_findings:
            from mathlas.findings.search import FindingsChannel

            found = FindingsChannel(findings, self)
            found = found if found.has_documents() else None
        filters = self.filters(include, sorted(exclude), kinds, req.paper, req.mask) if bundle_part else Filters()
        return SearchPlan(filters=filters, bundle_part=bundle_part, key_weights=key_weights, priors=prior_weights,
                          depth=depth, about=about, found=found, findings_weight=f_weight,
                          intent="definition" if intent else None, query=query, expansions=used)

    def _run_channels(self, req: SearchRequest, plan: "SearchPlan") -> tuple[dict[str, Ranking], dict[str, float],
                                                                             np.ndarray | None]:
        """Each channel's ranking (the bundle's lexical and dense, and the findings), their weights in
        the fusion and the per-key weights. The query is encoded once, for every dense ranking."""
        from mathlas.findings import SOURCE as F_SOURCE

        channels = MODE_CHANNELS[req.mode]
        found = plan.found
        vector = None
        query = plan.query or req.query
        if "dense" in channels and (plan.bundle_part or (found is not None and found.has_vectors())):
            vector = self.query_vector(query)
        rankings: dict[str, Ranking] = {}
        if plan.bundle_part:
            rankings = self.channel_rankings(query, plan.depth, plan.filters, req.mode, req.pool, vector)
        weights = dict(self.fusion["weights"] if req.channel_weights is None else req.channel_weights)
        key_weights = plan.key_weights
        if found is not None:
            n = len(self)
            # a finding is placed where its own scores would rank it among the bundle's rankings
            # (the same filters, depth and k_rrf), not as a one-document channel of its own
            ranking = found.search(query, vector if "dense" in channels else None, plan.depth,
                                   lexical="lexical" in channels, bundle_rankings=rankings if plan.bundle_part else {},
                                   channel_weights=weights,
                                   k_rrf=float(self.fusion["k_rrf"] if req.k_rrf is None else req.k_rrf))
            if len(ranking):
                rankings[F_SOURCE] = Ranking(ranking.keys + n, ranking.scores)
                weights[F_SOURCE] = found.fusion_weight({c: float(weights.get(c, 1.0)) for c in channels})
                base = np.ones(n) if key_weights is None else key_weights
                key_weights = np.concatenate([base, np.full(found.size, plan.findings_weight)])
        return rankings, weights, key_weights

    # -- documents -----------------------------------------------------------------------
    @property
    def label(self) -> str:
        """``name-version``: how results name the bundle they come from."""
        return f"{self.name}-{self.version}"

    def _row(self, key: int, columns: Iterable[str] | None = None) -> dict:
        names = self.table.column_names if columns is None else [c for c in columns if c in self.table.column_names]
        return {name: self.column(name)[key].as_py() for name in names}

    def column(self, name: str):
        """A metadata column (a pyarrow ChunkedArray), looked up once: ``Table.column`` costs some
        10 microseconds a call, which is most of building ten hits."""
        col = self._columns.get(name)
        if col is None:
            col = self._columns[name] = self.table.column(name)
        return col

    def hit(self, key: int, score: float, ranks: Mapping[str, int | None], fields: Sequence[str] = (),
            statement_of: str | None = None) -> Hit:
        """The ``Hit`` for a document key; ``fields``: metadata columns to copy into ``Hit.fields``
        (null values left out); ``statement_of``: the id of the proof or example this statement was
        placed above (the statement-first rule), kept in ``fields["statement_of"]``."""
        row = self._row(key, ("id", "source", "kind", "name", "title", "text", "link", "license", *fields))
        extra = {c: row[c] for c in fields if c in row and row[c] is not None}
        if statement_of:
            extra["statement_of"] = statement_of
        return Hit(id=row["id"], source=row["source"], kind=row["kind"], name=row["name"] or "",
                   title=row["title"] or "", text=snippet(row["text"]), link=row["link"] or "",
                   license=row["license"] or "", score=float(score),
                   ranks={"lexical": None, "dense": None, **ranks}, fields=extra)

    def key_of(self, doc_id: str) -> int:
        """The key of the document with this id: binary search over the keys in id order (8 bytes a
        document, made on first use; a dict of every id would be ~100 bytes a document)."""
        import pyarrow.compute as pc

        ids = self.table.column("id")
        order = self._lazy("_ids_sorted", lambda: pc.sort_indices(ids).to_numpy())
        at = bisect.bisect_left(range(len(order)), doc_id, key=lambda i: ids[int(order[i])].as_py())
        if at == len(order) or ids[int(order[at])].as_py() != doc_id:
            raise UsageError(f"no document with id {doc_id!r} in bundle {self.name}")
        return int(order[at])

    def get(self, doc_id: str) -> Document:
        """The whole document with this stable id (``UsageError`` when absent)."""
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise UsageError("an id is required, e.g. stacks:00FN")
        row = self._row(self.key_of(doc_id.strip()))
        extra = {k: v for k, v in row.items() if k not in CORE_COLUMNS and v is not None}
        return Document(id=row["id"], source=row["source"], kind=row["kind"], name=row["name"] or "",
                        title=row["title"] or "", body=row["body"] or "", slogan=row.get("slogan") or "",
                        text=row["text"] or "", link=row["link"] or "", license=row["license"] or "",
                        bundle=self.label, fields=extra)


# ------------------------------------------------------------------------------ the one way in

# How many bundles the process keeps open (each holds its metadata table, a BM25 index and, once
# searched densely, an encoder: some 100-200 MB for the default bundle); $MATHLAS_MAX_OPEN_BUNDLES.
MAX_OPEN_BUNDLES = 4


class OpenBundles:
    """Bundles opened on first use and shared by every later call, from any thread; at most
    ``limit`` of them, the least recently used forgotten first.

    Keyed by the bundle argument as given (``None``: ``$MATHLAS_BUNDLE`` or the default bundle) and
    by the directory it resolves to, so two spellings of one bundle share one ``Bundle``. A bundle
    whose manifest changed on disk since it was opened (reinstalled, rebuilt) is opened again.
    """

    def __init__(self, limit: int | None = None) -> None:
        self._lock = threading.Lock()
        self._by_spec: dict[Any, Bundle] = {}
        self._by_root: OrderedDict[str, tuple[tuple, Bundle]] = OrderedDict()  # least recently used first
        env = os.environ.get("MATHLAS_MAX_OPEN_BUNDLES", "")
        self.limit = limit or (int(env) if env.isdigit() and int(env) > 0 else MAX_OPEN_BUNDLES)

    @staticmethod
    def _stamp(root: Path) -> tuple:
        try:
            st = os.stat(root / MANIFEST)
        except OSError:
            return ()
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _fresh(self, b: Bundle) -> bool:
        held = self._by_root.get(str(b.root))
        return held is not None and held[1] is b and held[0] == self._stamp(b.root)

    def get(self, spec: str | os.PathLike | None = None) -> Bundle:
        """The open bundle for ``spec`` (opened now if this is its first use)."""
        if isinstance(spec, os.PathLike):
            key: Any = ("path", os.fspath(spec))
        elif spec is None or isinstance(spec, str):
            spec = (spec or "").strip() or None
            key = spec
        else:
            raise UsageError(f"bundle must be a name, name-version or directory, got {spec!r}")
        b = self._by_spec.get(key)
        if b is not None and self._fresh(b):
            with self._lock:
                if str(b.root) in self._by_root:
                    self._by_root.move_to_end(str(b.root))
            return b
        with self._lock:  # one opener at a time: a first-use install must not run twice
            b = self._by_spec.get(key)
            if b is None or not self._fresh(b):
                from mathlas.releases.install import resolve_bundle

                root = resolve_bundle(spec)
                held = self._by_root.get(str(root))
                stamp = self._stamp(root)
                if held is not None and held[0] == stamp:
                    b = held[1]
                else:
                    b = Bundle.open(root)
                    self._by_root[str(root)] = (stamp, b)
                self._by_spec[key] = b
            self._by_root.move_to_end(str(b.root))
            self._evict()
            return b

    def _evict(self) -> None:
        """Forget the least recently used bundles beyond ``limit`` (a caller still holding one keeps
        it; the cache no longer does, so its memory goes when the caller lets go)."""
        while len(self._by_root) > self.limit:
            root, (_, old) = self._by_root.popitem(last=False)
            for key in [k for k, v in self._by_spec.items() if v is old]:
                del self._by_spec[key]

    def loaded(self) -> list[Bundle]:
        """The bundles opened so far."""
        return [b for _, b in self._by_root.values()]


OPEN_BUNDLES = OpenBundles()


def open_bundle(bundle: str | os.PathLike | None = None, *, shared: bool = True) -> Bundle:
    """Open a bundle for searching: the one way in for the library, the CLI and the servers.

    ``None`` opens the default bundle (``$MATHLAS_BUNDLE`` or the embedded default, installed into
    the data directory on first use); a path opens that directory; a name opens an installed
    bundle. Opening checks the format version and file sizes and loads no model. The bundle is
    shared: every call in the process that names the same directory gets the same thread-safe
    ``Bundle`` (reopened when its manifest changes on disk); ``shared=False`` opens a new one.
    """
    if shared:
        return OPEN_BUNDLES.get(bundle)
    from mathlas.releases.install import resolve_bundle

    return Bundle.open(resolve_bundle(bundle))
