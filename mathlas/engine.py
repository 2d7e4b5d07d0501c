"""The one way in: ``open_bundle()``, the process-wide cache of open bundles, and ``Bundle``, an open
bundle: its manifest, metadata table, ids, documents and lazily opened parts.

Opening reads the manifest and the metadata table only; the BM25 index opens on the first lexical
query and the ONNX encoder on the first dense one. Every lazy part loads once under a lock, so one
``Bundle`` serves concurrent searches from many threads, and ``open_bundle`` hands every caller in
the process (library, CLI, MCP, HTTP) the same ``Bundle`` for the same directory.

``Bundle`` stores; it does not rank. Ranking is ``mathlas.ranking`` (plan -> channels -> fuse ->
stages -> cut); ``Bundle.search(query, k, **options)`` is a shortcut for
``pipeline_for(bundle).rank(SearchRequest.make(query, k, **options)).hits``.
"""
from __future__ import annotations

import bisect
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from mathlas.bundle import (ENCODER_DIR, MANIFEST, META, META_ARROW, RERANKER_DIR, Manifest,
                            encoder_fingerprint, verify)
from mathlas.errors import BundleCorruptError, UsageError
from mathlas.headings import old_bundle_heading, stacks_heading
from mathlas.hit import CORE_COLUMNS, Document, Hit, snippet
import mathlas.ranking.settings as settings
from mathlas.ranking.ids import SHORT_ID, SHORT_ID_SOURCES

if TYPE_CHECKING:  # pragma: no cover
    from mathlas.ranking.filters import PaperColumns


def _codes(column) -> tuple[list[str], np.ndarray]:
    """A string column as (sorted distinct values, int32 index of each row's value)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = sorted(v for v in pc.unique(column).to_pylist() if v is not None)
    codes = pc.index_in(column, value_set=pa.array(names, type=pa.string()))
    return names, pc.fill_null(codes, -1).to_numpy().astype(np.int32, copy=False)


_KINDS: dict[tuple[str, str, str], dict[str, int]] = {}


def kind_counts(root: Path, m: Manifest) -> dict[str, int]:
    """A bundle's kinds with their document counts, most frequent first, without opening it: one
    metadata column read once per bundle and cached (a bundle never changes once written)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    key = (str(root), m.name, m.version)
    if key not in _KINDS:
        try:
            if META_ARROW in m.files:  # only a listed (verified) Arrow copy is read
                with pa.memory_map(str(Path(root) / META_ARROW)) as f:  # counted while the map is open
                    counts = pa.ipc.open_file(f).read_all().column("kind").value_counts().to_pylist()
            else:
                counts = pq.read_table(Path(root) / META, columns=["kind"]).column("kind").value_counts().to_pylist()
        except (OSError, KeyError, pa.ArrowInvalid):
            counts = []
        _KINDS[key] = {c["values"]: c["counts"] for c in sorted(counts, key=lambda c: (-c["counts"], str(c["values"])))
                       if c["values"]}
    return _KINDS[key]


def meta_columns(root: Path, m: Manifest) -> set[str]:
    """A bundle's metadata column names from the file's schema alone (no rows read), without opening
    it; the Arrow copy only when the manifest lists it (a file it does not list is never read)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if META_ARROW in m.files:
            with pa.memory_map(str(Path(root) / META_ARROW)) as f:
                return set(pa.ipc.open_file(f).schema.names)
        return set(pq.read_schema(Path(root) / META).names)
    except (OSError, pa.ArrowInvalid):
        return set()


class StringValues:
    """A string column's values at a few keys, read from its Arrow buffers: the offsets and the
    bytes of the chunk that holds each key (a key's chunk found by bisection), a null by its chunk's
    validity bits. Half the time of ``column[key].as_py()``, which looks the chunk up and makes a
    scalar first; it makes nothing per document."""

    def __init__(self, column):
        import pyarrow as pa

        self.starts: list[int] = []    # each chunk's first key
        self.chunks: list[tuple] = []  # (offsets, bytes, validity bits or None, offset of the chunk's first bit)
        at = 0
        for chunk in column.chunks:
            if not (pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)):
                raise TypeError(f"not a string column: {chunk.type}")
            validity, offsets, data = chunk.buffers()
            width = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
            offs = np.frombuffer(offsets, dtype=width)[chunk.offset:chunk.offset + len(chunk) + 1] \
                if offsets is not None else np.zeros(len(chunk) + 1, dtype=width)
            self.starts.append(at)
            # a memoryview of the offsets: indexing it gives a Python int (a numpy array makes a scalar)
            self.chunks.append((memoryview(offs), memoryview(data) if data is not None else memoryview(b""),
                                bytes(validity) if validity is not None and chunk.null_count else None, chunk.offset))
            at += len(chunk)

    def __call__(self, keys: Sequence[int]) -> list[str | None]:
        """The value at each key (None: null)."""
        return self.at(self.locate(keys))

    def locate(self, keys: Sequence[int]) -> list[tuple[int, int]]:
        """Each key's (chunk, row in it): what ``at`` reads, for every column chunked alike."""
        starts = self.starts
        out = []
        for key in keys:
            j = bisect.bisect_right(starts, key) - 1
            out.append((j, key - starts[j]))
        return out

    def at(self, places: Sequence[tuple[int, int]]) -> list[str | None]:
        """The values at ``locate``'s places (None: null)."""
        out: list[str | None] = []
        chunks = self.chunks
        for j, i in places:
            offs, data, valid, bit0 = chunks[j]
            if valid is not None and not (valid[(i + bit0) >> 3] >> ((i + bit0) & 7)) & 1:
                out.append(None)
                continue
            out.append(str(data[offs[i]:offs[i + 1]], "utf-8"))
        return out


class Bundle:
    """A bundle opened for search. Get one with ``mathlas.open_bundle()``."""

    @classmethod
    def open(cls, root: str | os.PathLike) -> Bundle:
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
        self._strings: dict[str, Callable[[Sequence[int]], list]] = {}
        self._ids_sorted: np.ndarray | None = None
        self._paper_columns: PaperColumns | None = None
        self._encoder_fp: str | None = None
        # Only a listed (so verified) Arrow copy is read: a file the manifest does not list is never used.
        self.meta_file = META_ARROW if META_ARROW in manifest.files else META
        self.table = self._read_table()
        if self.table.num_rows != manifest.count:
            raise BundleCorruptError(f"bundle {self.root.name}: {self.meta_file} has {self.table.num_rows} rows, "
                                     f"manifest says {manifest.count}")
        # Filters need source and kind per key: small integer codes, not a Python string per document
        # (1M strings cost ~60 MB each); names sorted so that codes do not depend on row order.
        self.source_names, self.source_codes = _codes(self.table.column("source"))
        self._kind_names, self.kind_codes = _codes(self.table.column("kind"))

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
        """The RRF defaults: the manifest's measured ``fusion`` block over ``DEFAULT_FUSION``
        (``mathlas.ranking.settings``, where the ranking reads it)."""
        return dict(settings.fusion(self))

    @property
    def priors(self) -> dict[str, dict]:
        """The document priors the manifest declares (``fusion.priors``): name -> column, transform, weight."""
        return {name: dict(spec) for name, spec in settings.priors(self).items()}

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
        from mathlas.ranking.lexical import LexicalChannel

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
        from mathlas.ranking.dense import DenseChannel

        vec = self.manifest.vectors
        return self._lazy("_dense", lambda: DenseChannel(self.root, len(self), int(vec["dims"]),
                                                         codes=vec.get("binary_codes", "sign")))

    @property
    def reranker(self):
        """The bundle's reranker (``mathlas.ranking.rerank.Reranker``), loaded on first use."""
        from mathlas.ranking.rerank import Reranker

        return self._lazy("_reranker", lambda: Reranker(self.root / RERANKER_DIR))

    @property
    def about_keys(self) -> np.ndarray | None:
        """Per document key, the key of the statement it proves or illustrates (the ``about``
        column, written by the build's statement links), -1 for none; None without the column."""
        if self._about is not None:
            return self._about
        if not self.has_column("about"):
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

    @property
    def kind_names(self) -> list[str]:
        """The kinds this bundle's documents have (theorem, definition, proof...), sorted."""
        return list(self._kind_names)

    @property
    def paper_columns(self) -> PaperColumns:
        """The paper metadata prepared for filter masks (made on the first paper filter)."""
        from mathlas.ranking.filters import PaperColumns

        return self._lazy("_paper_columns", lambda: PaperColumns(self.table, f"{self.name}-{self.version}"))

    @property
    def kind_weights(self) -> dict[str, float]:
        """The manifest's measured kind weights (``fusion.kind_weights``; ``mathlas.ranking.settings``)."""
        return dict(settings.kind_weights(self))

    def search(self, query: str, k: int = 10, **options: Any) -> list[Hit]:
        """Rank documents for ``query``: the hits of ``mathlas.ranking.pipeline_for(bundle).rank(
        SearchRequest.make(query, k, **options))`` (``SearchRequest`` documents every option: mode,
        sources, exclude_sources, kinds, source_weights, kind_weights, paper_filter, priors, k_rrf,
        channel_weights, pool, mask, offset, rerank)."""
        from mathlas.ranking.pipeline import pipeline_for
        from mathlas.request import SearchRequest

        return pipeline_for(self).rank(SearchRequest.make(query, k, **options)).hits

    @property
    def encoder_fingerprint(self) -> str:
        """Which encoder made this bundle's vectors (``mathlas.bundle.encoder_fingerprint``), hashed
        once (a search with saved notes asks it each time)."""
        return self._lazy("_encoder_fp", lambda: encoder_fingerprint(self.manifest.encoder))

    # -- documents -----------------------------------------------------------------------
    @property
    def label(self) -> str:
        """``name-version``: how results name the bundle they come from."""
        return f"{self.name}-{self.version}"

    def _row(self, key: int, columns: Iterable[str] | None = None) -> dict:
        names = self.table.column_names if columns is None else [c for c in columns if self.has_column(c)]
        return {name: self.column(name)[key].as_py() for name in names}

    @property
    def table(self):
        """The metadata table (a pyarrow Table)."""
        return self._table

    @table.setter
    def table(self, value) -> None:
        # what is read of the table is kept per table: a caller that replaces it (a column dropped, as a
        # bundle built before it) gets its columns, not the old table's
        self._table = value
        # Table.column_names builds a list of new strings at every call (some 8 microseconds)
        self._column_set = frozenset(value.column_names)
        self._columns = {}
        self._strings = {}
        self._hit_readers: tuple | None = None

    def has_column(self, name: str) -> bool:
        """Whether the metadata table has the column ``name``."""
        return isinstance(name, str) and name in self._column_set

    def column(self, name: str):
        """A metadata column (a pyarrow ChunkedArray), looked up once: ``Table.column`` costs some
        10 microseconds a call, which is most of building ten hits."""
        col = self._columns.get(name)
        if col is None:
            col = self._columns[name] = self.table.column(name)
        return col

    def hits(self, keys: Sequence[int], scores: Sequence[float] | None = None,
             ranks: Sequence[Mapping[str, int | None]] | None = None, fields: Sequence[str] = (),
             statement_of: Sequence[int] | None = None) -> list[Hit]:
        """The ``Hit`` of each document key, reading only those rows. ``scores`` / ``ranks``: each
        hit's (0 / no ranks when None); ``fields``: metadata columns to copy into ``Hit.fields``
        (null values left out); ``statement_of``: per hit, the key of the proof or example it was
        placed above by the statement-first rule (-1: none), whose id goes into
        ``fields["statement_of"]``. Source and kind come from their integer codes."""
        keys = [int(k) for k in keys]
        if self._hit_readers is None:  # made once per table (the table's setter forgets them)
            rs = [self.strings(c) for c in ("id", "name", "title", "text", "link", "license")]
            self._hit_readers = (rs, all(isinstance(r, StringValues) and r.starts == rs[0].starts for r in rs))
        readers, alike = self._hit_readers
        if alike:
            places = readers[0].locate(keys)  # one chunk lookup a key: the columns of a table are chunked alike
            ids, names, titles, texts, links, licenses = (r.at(places) for r in readers)
        else:
            ids, names, titles, texts, links, licenses = (r(keys) for r in readers)
        wanted = {c: self.strings(c)(keys) for c in fields if self.has_column(c)}
        sources = [self.source_names[c] if c >= 0 else None for c in self.source_codes[keys].tolist()]
        kinds = [self._kind_names[c] if c >= 0 else None for c in self.kind_codes[keys].tolist()]
        headings = _headings(self, keys, ids, sources, kinds, names, titles)
        out = []
        for i in range(len(keys)):
            extra = {c: v for c, values in wanted.items() if (v := values[i]) is not None}
            by = -1 if statement_of is None else statement_of[i]
            if by >= 0:
                extra["statement_of"] = self.strings("id")([by])[0]
            source, kind = sources[i], kinds[i]
            out.append(Hit(id=ids[i], source=source, kind=kind, name=names[i] or "", title=titles[i] or "",
                           heading=headings[i], text=snippet(texts[i]),
                           link=links[i] or "", license=licenses[i] or "",
                           score=0.0 if scores is None else float(scores[i]),
                           ranks={"lexical": None, "dense": None, **(ranks[i] if ranks is not None else {})},
                           fields=extra))
        return out

    def strings(self, name: str) -> Callable[[Sequence[int]], list]:
        """A metadata column's values by key, ``reader(keys) -> list`` (``StringValues`` for a string
        column; another type is read value by value), made once."""
        reader = self._strings.get(name)
        if reader is None:
            col = self.column(name)
            try:
                reader = StringValues(col)
            except TypeError:  # not a string column (a column of nulls only is Arrow's null type)
                reader = lambda keys: [col[k].as_py() for k in keys]  # noqa: E731
            self._strings[name] = reader
        return reader

    def hit(self, key: int, score: float = 0.0, ranks: Mapping[str, int | None] | None = None,
            fields: Sequence[str] = ()) -> Hit:
        """The ``Hit`` of one document key (``hits`` for several)."""
        return self.hits([key], [score], [ranks or {}], fields)[0]

    def key_of(self, doc_id: str) -> int:
        """The key of the document with this id: binary search over the keys in id order (8 bytes a
        document, made on first use; a dict of every id would be ~100 bytes a document)."""
        import pyarrow.compute as pc

        ids = self.table.column("id")
        order = self._lazy("_ids_sorted", lambda: pc.sort_indices(ids).to_numpy())
        at = bisect.bisect_left(range(len(order)), doc_id, key=lambda i: ids[int(order[i])].as_py())
        if at == len(order) or ids[int(order[at])].as_py() != doc_id:
            return _key_near(self, ids, order, at, doc_id)
        return int(order[at])

    def get(self, doc_id: str) -> Document:
        """The whole document with this stable id (``UsageError`` when absent)."""
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise UsageError("an id is required, e.g. stacks:00FN")
        return self.document_at(self.key_of(doc_id.strip()))

    def document_at(self, key: int) -> Document:
        """The whole document at ``key`` (a ranked hit's key: no lookup by id)."""
        row = self._row(key)
        extra = {k: v for k, v in row.items() if k not in CORE_COLUMNS and v is not None}
        return Document(id=row["id"], source=row["source"], kind=row["kind"], name=row["name"] or "",
                        title=row["title"] or "", body=row["body"] or "", slogan=row.get("slogan") or "",
                        heading=_heading(self.manifest, *map(row.get, ("id", "source", "kind", "name", "title", "label"))),
                        text=row["text"] or "", link=row["link"] or "", license=row["license"] or "",
                        bundle=self.label, fields=extra)


def _heading(manifest, doc_id: str, source: str | None, kind: str | None, name: str | None, title: str | None,
             tex_label: str | None) -> str:
    """A document's heading where its columns alone do not make it (``Hit.heading``; "" otherwise): a
    Stacks statement named by its \\label's words (``stacks_heading``), an old bundle's ProofWiki title."""
    if source == "stacks":
        return stacks_heading(kind, name, title, tex_label)
    return old_bundle_heading(manifest, doc_id, source, kind, name, title)


def _headings(bundle: Bundle, keys: list[int], ids, sources, kinds, names, titles) -> list[str]:
    """``_heading`` of each of ``keys`` (the columns already read, sources and kinds by name; the
    ``label`` column read only when a Stacks statement is among them)."""
    labels = (bundle.strings("label")(keys) if "stacks" in sources and bundle.has_column("label")
              else [None] * len(keys))
    return [_heading(bundle.manifest, *row) for row in zip(ids, sources, kinds, names, titles, labels)]


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


ID_SHOWN = 100  # characters of an unknown id an error repeats


def _ids_like(ids: Any, doc_id: str, sources: Iterable[str]) -> list[str]:
    """The ids of the bundle ``doc_id`` probably meant, case aside: itself, or, when it does not
    begin with a source of the bundle (a bare ``00DV``), itself behind each source's prefix
    (``stacks:00DV``). One pass over the id column, made only for an id the bundle lacks."""
    import pyarrow as pa
    import pyarrow.compute as pc

    wanted = [doc_id.lower()]
    if doc_id.partition(":")[0] not in set(sources):
        wanted += [f"{s}:{doc_id}".lower() for s in sources]
    return pc.filter(ids, pc.is_in(pc.utf8_lower(ids), value_set=pa.array(wanted))).to_pylist()[:ID_SUGGESTED]


ID_SUGGESTED = 5  # the ids an error suggests at most


def _key_near(b: Bundle, ids: Any, order: Any, at: int, doc_id: str) -> int:
    """``Bundle.key_of`` for an id no document has exactly: the start of one ProofWiki id (``_started``),
    a Stacks tag in another case, else ``UsageError`` with the ids it probably meant."""
    source, sep, rest = doc_id.partition(":")
    started = _started(ids, order, at, doc_id)
    if started is not None:
        return started
    if source == "stacks" and sep and rest != rest.upper():  # Stacks tags are case-insensitive
        try:
            return b.key_of(f"stacks:{rest.upper()}")
        except UsageError:
            pass
    raise UsageError(_unknown_id(b, ids, doc_id))


def _started(ids: Any, order: Any, at: int, doc_id: str) -> int | None:
    """The key of the one document whose id begins with ``doc_id`` (``order``: the keys in id order,
    ``at`` where ``doc_id`` would sit), for a source of ``SHORT_ID_SOURCES`` and a start of
    ``SHORT_ID`` characters or more (``mathlas.ranking.ids``: what an "also in" line shows); None otherwise."""
    source, _, rest = doc_id.partition(":")
    if source not in SHORT_ID_SOURCES or len(rest) < SHORT_ID or at >= len(order):
        return None
    after = ids[int(order[at + 1])].as_py() if at + 1 < len(order) else ""
    return int(order[at]) if ids[int(order[at])].as_py().startswith(doc_id) and not after.startswith(doc_id) else None


def _unknown_id(b: Bundle, ids: Any, doc_id: str) -> str:
    """The error for an id ``b`` lacks (``_no_document``), with the ids like it that it probably meant
    (``_ids_like``). Ids of another bundle are the surfaces' to suggest (``mathlas.service``, through
    ``mathlas.formal.ids_elsewhere``): storage reads no other bundle."""
    return _no_document(doc_id, b.name, _ids_like(ids, doc_id, b.manifest.sources), b.manifest.sources)


def _no_document(doc_id: str, bundle: str, same: list[str], sources: Iterable[str], why: str = "") -> str:
    """The one-line error for an id the bundle does not hold, with the next step: the ids it
    probably meant (``_ids_like``: ids are case-sensitive, and begin with their source; else
    ``_ids_elsewhere``, which says ``why``), the sources its ids begin with, or a search."""
    asked = doc_id if len(doc_id) <= ID_SHOWN else doc_id[:ID_SHOWN] + "…"   # a pasted page stays one short line
    msg = f"no document with id {asked!r} in bundle {bundle}"
    source, sources = doc_id.partition(":")[0], list(sources)
    if same:
        meant = " or ".join(repr(x) for x in same)
        if not why:
            why = ("ids are case-sensitive" if any(x.lower() == doc_id.lower() for x in same)
                   else "an id begins with its source")
        return f"{msg}; did you mean {meant}? ({why})"
    if source not in sources:
        shown = ", ".join(f"{s}:" for s in sources[:10]) + (", ..." if len(sources) > 10 else "")
        return f"{msg}; its ids begin with {shown} (a search shows a document's id)"
    return f"{msg}; a search shows a document's id"


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
