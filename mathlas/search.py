"""``Bundle``: an open bundle and its hybrid search (lexical + dense, fused with RRF).

Opening reads the manifest and the metadata table only; the BM25 index opens on the first lexical
query and the ONNX encoder on the first dense one. Every lazy part loads once under a lock, so one
``Bundle`` serves concurrent searches from many threads.
"""
from __future__ import annotations

import bisect
import math
import re
import threading
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

from mathlas.bundle import DEFAULT_FUSION, ENCODER_DIR, META, META_ARROW, Manifest
from mathlas.errors import BundleCorruptError, UsageError
from mathlas.filters import Filters, PaperColumns, PaperFilter
from mathlas.fusion import PRIOR_TRANSFORMS, Fused, Ranking, add_priors, prior_values, rrf
from mathlas.hit import Hit

MODES = ("hybrid", "lexical", "dense")
MAX_K = 1000
SNIPPET_CHARS = 280
# Each channel returns this many candidates (at least k) for fusion.
FUSION_DEPTH = 100
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


def _snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[:cut if cut > limit // 2 else limit] + " …"


class Bundle:
    """A bundle opened for search. Create with ``mathlas.open_bundle()``."""

    def __init__(self, root: Path, manifest: Manifest):
        self.root = Path(root)
        self.manifest = manifest
        self._lock = threading.Lock()
        self._lexical = None
        self._dense = None
        self._encoder = None
        self._ids_sorted: np.ndarray | None = None
        self._paper_columns: PaperColumns | None = None
        self.meta_file = META_ARROW if (self.root / META_ARROW).is_file() else META
        self.table = self._read_table()
        if self.table.num_rows != manifest.count:
            raise BundleCorruptError(f"bundle {self.root.name}: {self.meta_file} has {self.table.num_rows} rows, "
                                     f"manifest says {manifest.count}")
        # Filters need source and kind per key: small integer codes, not a Python string per document
        # (1M strings cost ~60 MB each); names sorted so that codes do not depend on row order.
        self.source_names, self._source_codes = _codes(self.table.column("source"))
        self._kind_names, self._kind_codes = _codes(self.table.column("kind"))

    def _read_table(self):
        """The metadata table: memory-mapped from META_ARROW when the bundle has it (zero-copy: pages
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
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w):
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
    def model_loaded(self) -> bool:
        return self._encoder is not None and self._encoder._session is not None

    # -- validation ----------------------------------------------------------------------
    def _check_sources(self, names: Iterable[str] | None, what: str) -> tuple[str, ...]:
        if names is None:
            return ()
        if isinstance(names, str):
            names = [names]
        names = tuple(dict.fromkeys(names))
        unknown = [n for n in names if n not in self.source_names]
        if unknown:
            raise UsageError(f"unknown source {', '.join(map(repr, unknown))} in {what}; "
                             f"this bundle has: {', '.join(self.source_names)}")
        return names

    @property
    def paper_columns(self) -> PaperColumns:
        """The paper metadata prepared for filter masks (made on the first paper filter)."""
        return self._lazy("_paper_columns", lambda: PaperColumns(self.table, f"{self.name}-{self.version}"))

    def filters(self, sources: Iterable[str] | None = None, exclude_sources: Iterable[str] | None = None,
                kinds: Iterable[str] | None = None,
                source_weights: Mapping[str, float] | None = None,
                paper_filter: PaperFilter | Mapping | None = None, mask: np.ndarray | None = None) -> Filters:
        """Resolve filter arguments (validated) into a ``Filters`` both channels apply. ``mask``: a
        boolean array over document keys of the caller's own (e.g. the formal tools' module filter)."""
        paper = PaperFilter.parse(paper_filter)
        include = self._check_sources(sources, "sources")
        exclude = set(self._check_sources(exclude_sources, "exclude_sources"))
        if source_weights:
            self._check_sources(source_weights, "source_weights")
            exclude |= {s for s, w in source_weights.items() if w == 0}
        kinds_t = tuple(dict.fromkeys([kinds] if isinstance(kinds, str) else (kinds or ())))
        if mask is not None:
            mask = np.asarray(mask)
            if mask.dtype != bool or mask.shape != (len(self),):
                raise UsageError(f"mask must be a boolean array of length {len(self)}")
        if not include and not exclude and not kinds_t and paper is None and mask is None:
            return Filters()
        allowed = np.ones(len(self), dtype=bool) if paper is None else self.paper_columns.mask(paper)
        if mask is not None:
            allowed &= mask
        if include:
            allowed &= np.isin(self._source_codes, [self.source_names.index(s) for s in include])
        if exclude:
            allowed &= ~np.isin(self._source_codes, [self.source_names.index(s) for s in exclude])
            include = tuple(s for s in include if s not in exclude)
        if kinds_t:
            allowed &= np.isin(self._kind_codes, [i for i, n in enumerate(self._kind_names) if n in kinds_t])
        return Filters(include, tuple(sorted(exclude)), kinds_t, allowed, paper, custom=mask is not None)

    def _key_weights(self, source_weights: Mapping[str, float] | None) -> np.ndarray | None:
        if not source_weights:
            return None
        per_source = np.ones(len(self.source_names), dtype=np.float64)
        for s, w in source_weights.items():
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
                raise UsageError(f"source weight for {s!r} must be a finite number >= 0, got {w!r}")
            per_source[self.source_names.index(s)] = w
        return per_source[self._source_codes]

    def _prior_weights(self, priors: Mapping[str, float] | None) -> dict[str, float]:
        """The active priors (weight != 0): the manifest's default weights, overridden by ``priors``."""
        declared = self.priors
        if priors is not None:
            if not isinstance(priors, Mapping):
                raise UsageError(f'priors must be a mapping like {{"citations": 0.002}}, got {priors!r}')
            unknown = [n for n in priors if n not in declared]
            if unknown:
                known = ", ".join(sorted(declared)) or "none"
                raise UsageError(f"unknown prior {', '.join(map(repr, unknown))}; bundle {self.name} declares: {known}")
            for n, w in priors.items():
                if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w):
                    raise UsageError(f"prior weight for {n!r} must be a finite number, got {w!r}")
        weights = {n: spec["weight"] for n, spec in declared.items()}
        weights.update({n: float(w) for n, w in (priors or {}).items()})
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

    @staticmethod
    def _check_query(query: str, k: int, mode: str) -> str:
        if not isinstance(query, str) or not query.strip():
            raise UsageError("the query is empty; type some words or a formula")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise UsageError(f"k must be an integer from 1 to {MAX_K}, got {k!r}")
        if mode not in MODES:
            raise UsageError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        return query.strip()

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

    def channel_rankings(self, query: str, depth: int, filters: Filters, mode: str = "hybrid",
                         pool: int | None = None) -> dict[str, Ranking]:
        """Each channel's own ranking (``depth`` long) for a validated query."""
        out: dict[str, Ranking] = {}
        if mode in ("hybrid", "lexical"):
            out["lexical"] = self.lexical.search(query, depth, filters)
        if mode in ("hybrid", "dense"):
            q = self.encoder.encode_queries([self.dense_text(query)])[0]
            out["dense"] = self.dense.search(q, depth, filters, pool=pool)
        return out

    def search(self, query: str, k: int = 10, *, mode: str = "hybrid",
               sources: Iterable[str] | None = None, exclude_sources: Iterable[str] | None = None,
               kinds: Iterable[str] | None = None, source_weights: Mapping[str, float] | None = None,
               k_rrf: float | None = None, pool: int | None = None,
               channel_weights: Mapping[str, float] | None = None,
               paper_filter: PaperFilter | Mapping | None = None,
               priors: Mapping[str, float] | None = None, mask: np.ndarray | None = None) -> list[Hit]:
        """Rank documents for ``query``.

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
        query = self._check_query(query, k, mode)
        prior_weights = self._prior_weights(priors)
        filters = self.filters(sources, exclude_sources, kinds, source_weights, paper_filter, mask)
        weights = self._key_weights(source_weights)
        deep = mode == "hybrid" or weights is not None or bool(prior_weights)
        depth = min(max(k, FUSION_DEPTH), MAX_K) if deep else k
        rankings = self.channel_rankings(query, depth, filters, mode, pool)
        fusion = self.fusion
        fused = rrf(rankings, depth if prior_weights else k,
                    k_rrf=float(fusion["k_rrf"] if k_rrf is None else k_rrf),
                    channel_weights=dict(fusion["weights"] if channel_weights is None else channel_weights),
                    key_weights=weights)
        if mode != "hybrid":  # a single channel keeps its own scores
            (ranking,) = rankings.values()
            own = dict(zip(ranking.keys.tolist(), ranking.scores.tolist()))
            fused = [Fused(f.key, own[f.key], f.ranks) for f in fused]
        if prior_weights:
            fused = add_priors(fused, self.prior_bonus(np.array([f.key for f in fused]), prior_weights), k)
        return [self._hit(f.key, f.score, f.ranks) for f in fused]

    # -- documents -----------------------------------------------------------------------
    def _row(self, key: int) -> dict:
        return {name: col[key].as_py() for name, col in zip(self.table.column_names, self.table.columns)}

    def _hit(self, key: int, score: float, ranks: dict, full: bool = False) -> Hit:
        row = self._row(key)
        base = {"lexical": None, "dense": None}
        base.update(ranks)
        core = {"id", "source", "kind", "name", "title", "text", "body", "link", "license", "slogan"}
        extra = {k: v for k, v in row.items() if k not in core and v is not None}
        return Hit(id=row["id"], source=row["source"], kind=row["kind"], name=row["name"] or "",
                   title=row["title"] or "", text=row["text"] if full else _snippet(row["text"] or ""),
                   body=row["body"] or "", link=row["link"] or "", license=row["license"] or "",
                   score=float(score), ranks=base, slogan=row.get("slogan") or "", extra=extra)

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

    def get(self, doc_id: str) -> Hit:
        """The whole document with this stable id (``UsageError`` when absent)."""
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise UsageError("an id is required, e.g. stacks:00FN")
        return self._hit(self.key_of(doc_id.strip()), 0.0, {}, full=True)
