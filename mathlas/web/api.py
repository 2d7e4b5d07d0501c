"""The web package's one way into the library: every call of a mathlas capability lives here (the
other web modules import only the request limits of ``mathlas.request`` and the path scrubber of
``mathlas.paths``).

The HTTP surfaces call these functions and nothing else of the runtime, so a renamed library module
means editing this file only. Each builds the library's request (``mathlas.request``) labelled with
the HTTP API's own names (its query parameters; TheoremSearch's field names for ``POST /search``)
and calls the library's capability (``mathlas.service``), as the CLI and the MCP tools do, and
returns what it returns as JSON-able data: ``search`` is exactly ``mathlas search --json``,
``document`` exactly ``mathlas show --json``, ``lean_search`` / ``lean_deps`` exactly
``mathlas lean search|deps --json``. Validation is the library's: its ``UsageError`` reaches the
app, which turns it into a JSON error.

Which bundles a request may name is decided here too (``Served``): over HTTP a client picks one of
the bundles the server was started with, by name or ``name-version``, never a directory path. So
is what a client is told when the server has no formal (Lean) bundle (``Served.need_formal``): the
library's message speaks to a local user (``--bundle PATH``, ``$MATHLAS_FORMAL_BUNDLE``, a
checkout's corpora), which a client cannot act on; this one says what the server's operator can do.
"""
from __future__ import annotations

import dataclasses
import os
import threading
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mathlas import __version__
from mathlas.bundle import read_manifest
from mathlas.checks import name_weights
from mathlas.errors import BundleNotFoundError, MathlasError, UsageError
from mathlas.hit import Document, Hit
from mathlas.releases.install import DEFAULT_BUNDLE, installed, resolve_bundle
from mathlas.formal import FORMAL_ENV, formal_bundle_spec
from mathlas.request import DependencyRequest, LeanSearchRequest, SearchRequest
from mathlas.service import DependencyResult, FormalSearchResult, SearchResult, dependencies, document as get_document
from mathlas.service import lean_search as run_lean_search
from mathlas.service import search as run_search
from mathlas.service import search_ranked

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["VERSION", "MathlasError", "UsageError", "BundleNotFoundError", "Served", "search", "document",
           "lean_search", "lean_deps", "bundles", "loaded", "open_bundle", "bundle_facts", "search_hits",
           "mcp_server", "name_weights", "formal_bundle_spec"]

VERSION = __version__
# The library's result types, for the OpenAPI document's schemas.
RESULT_TYPES = {"SearchResult": SearchResult, "Document": Document, "FormalSearchResult": FormalSearchResult,
                "DependencyResult": DependencyResult}
def _write_tools() -> tuple[str, ...]:
    from mathlas.mcp.registry import FACTS

    return tuple(name for name, f in FACTS.items() if not f.read_only)


# The tools that write (their MCP annotation says so: add_finding, funsearch): over HTTP MCP they
# are served only behind a token (app.py).
WRITE_TOOLS = _write_tools()


def _open_bundles():
    """The library's process-wide cache of open bundles (``mathlas.engine`` loads numpy and pyarrow,
    so it is imported by the first request that needs a bundle, not by the app)."""
    from mathlas.engine import OPEN_BUNDLES

    return OPEN_BUNDLES


def _asdict(result: Any) -> Any:
    """``dataclasses.asdict``, equal output, at a tenth of its cost (it deep-copies every leaf; the
    library's results hold only dataclasses, lists, dicts and immutable scalars). Most of an answer
    is strings and numbers: a leaf is passed on where it is met, without a call of its own, and a
    dataclass's field names are looked up once per type."""
    t = type(result)
    if t in _LEAVES:
        return result
    names = _FIELDS.get(t)
    if names is not None:
        out = {}
        for name in names:
            v = getattr(result, name)
            out[name] = v if type(v) in _LEAVES else _asdict(v)
        return out
    if t is list:
        return [x if type(x) in _LEAVES else _asdict(x) for x in result]
    if t is dict:
        return {k: v if type(v) in _LEAVES else _asdict(v) for k, v in result.items()}
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        _FIELDS[t] = tuple(f.name for f in dataclasses.fields(result))
        return _asdict(result)
    if isinstance(result, (list, tuple)):
        return [_asdict(x) for x in result] if isinstance(result, list) else tuple(_asdict(x) for x in result)
    if isinstance(result, dict):
        return {k: _asdict(v) for k, v in result.items()}
    return result


_LEAVES = frozenset({str, int, float, bool, type(None)})
_FIELDS: dict[type, tuple[str, ...]] = {}   # a dataclass -> its field names


# ------------------------------------------------------------------------------ served bundles

class Served:
    """The bundles this server searches: ``specs`` (the first is the default; ``None`` means
    ``$MATHLAS_BUNDLE`` or the default bundle) and the formal bundle of the Lean endpoints.

    ``pick`` maps a request's ``bundle`` parameter to one of them: the spec as given on the command
    line, or the bundle's ``name``, ``name-version`` or ``name@version``. Anything else, a path
    included, is a ``UsageError`` naming what is served, so HTTP clients cannot open arbitrary
    directories.
    """

    def __init__(self, specs: list[str] | None = None, formal: str | None = None):
        self.specs: list[str | None] = list(dict.fromkeys(specs or [])) or [None]
        self.formal = formal
        self._names: dict[str | None, set[str]] = {}
        self._formal_ok: str | None = None   # the formal spec last found openable
        self._lock = threading.Lock()

    def names(self, spec: str | None, *, formal: bool = False) -> set[str]:
        """What a request may call the bundle ``spec`` (resolves it; cached)."""
        key = ("formal:" + formal_bundle_spec(spec)) if formal else spec
        with self._lock:
            if key in self._names:
                return self._names[key]
        out = {spec} if spec else set()
        try:
            root = resolve_bundle(formal_bundle_spec(spec) if formal else spec, quiet=True)
            m = read_manifest(root)
            out |= {m.name, f"{m.name}-{m.version}", f"{m.name}@{m.version}"}
        except MathlasError:
            return out  # not cached: it may be installed later
        with self._lock:
            self._names[key] = out
        return out

    def pick(self, requested: str | None) -> str | None:
        """The spec of the served (informal or paper) bundle a request names; the default for None."""
        if requested is None or not str(requested).strip():
            return self.specs[0]
        requested = str(requested).strip()
        for spec in self.specs:
            if requested in self.names(spec):
                return spec
        raise UsageError(f"bundle {requested!r} is not served here; this server serves: {', '.join(self.labels())}")

    def pick_formal(self, requested: str | None) -> str | None:
        """The formal bundle spec for the Lean endpoints (only the one configured is served);
        ``BundleNotFoundError`` saying what the server's operator can do when it has none."""
        if requested is None or not str(requested).strip():
            self.need_formal()
            return self.formal
        if str(requested).strip() in self.names(self.formal, formal=True):
            return self.formal
        self.need_formal()  # none served: say so, not that the name is another than the one served
        raise UsageError(f"bundle {requested!r} is not served here; the Lean endpoints serve "
                         f"{formal_bundle_spec(self.formal)}")

    def formal_problem(self) -> tuple[str, str] | None:
        """None when the formal bundle of the Lean endpoints (``--formal-bundle``, else every installed
        one) can be opened; else why not and what the server's operator can do, each a clause
        (``need_formal`` joins them). Reads the manifest (until it has been found once)."""
        spec = formal_bundle_spec(self.formal)
        with self._lock:
            if self._formal_ok == spec:
                return None
        try:
            m = read_manifest(resolve_bundle(spec, quiet=True))
        except MathlasError as e:
            if not (self.formal or os.environ.get(FORMAL_ENV)):  # none named: none installed
                return "this server has no formal (Lean) bundle: none is installed where it runs", NO_FORMAL_HINT
            return f"this server's formal (Lean) bundle cannot be opened ({_reason(e, spec)})", BAD_FORMAL_HINT
        if "lean" not in m.sources:
            return f"this server's formal bundle {m.name}-{m.version} holds no Lean declarations", BAD_FORMAL_HINT
        with self._lock:
            self._formal_ok = spec
        return None

    def need_formal(self) -> None:
        """``BundleNotFoundError`` (one line for an HTTP client: why, and what the server's operator
        can do) when the Lean endpoints have no formal bundle to read."""
        problem = self.formal_problem()
        if problem is not None:
            raise BundleNotFoundError("; ".join(problem))

    def labels(self) -> list[str]:
        out = []
        for spec in self.specs:
            names = sorted(self.names(spec), key=lambda n: ("-" not in n, n))
            out.append(next((n for n in names if "-" in n and "/" not in n), spec or "(default)"))
        return out


def _reason(e: MathlasError, spec: str) -> str:
    """Why the bundle ``spec`` cannot be opened, for an HTTP client: the library's first clause (its
    advice after it is the local user's), without the directory the server was given (as
    ``/api/bundles`` shows none)."""
    reason = str(e).split(";")[0]
    if not any(c in spec for c in "/\\") and not spec.startswith(("~", ".")):
        return reason
    if isinstance(e, BundleNotFoundError):
        return "no bundle in the directory it was given"
    for path in sorted({spec, os.path.expanduser(spec), os.path.abspath(os.path.expanduser(spec))}, key=len, reverse=True):
        reason = reason.replace(path, "its directory")
    return reason


# What an HTTP client is told when the server has no formal bundle: what whoever runs the server can do
# (started without --formal-bundle, a formal bundle installed where it runs is served at once)
NO_FORMAL_HINT = ("whoever runs this server can build one on its machine with `mathlas index build-lean PATH` (PATH: a "
                  "Lean project or a Mathlib checkout; no formal release is published to install; see docs/formal.md), "
                  "which it then serves, or restart it with `mathlas serve --formal-bundle NAME_OR_DIR`")
BAD_FORMAL_HINT = ("whoever runs this server can restart it with `mathlas serve --formal-bundle NAME_OR_DIR` naming a "
                   "formal bundle (`mathlas index build-lean PATH` builds one; no formal release is published to "
                   "install; see docs/formal.md)")


# ------------------------------------------------------------------------------ the JSON API

# What the HTTP API calls each request argument, for messages ("unknown kind 'theorm' in the `kind`
# query parameter (did you mean 'theorem'?); this bundle has: ..."); each label reads both as a
# sentence's subject ("... must be a list ...") and after "in" (the page names its fields the same way)
HTTP_LABELS = {"sources": "the `source` query parameter", "exclude_sources": "the `exclude_source` query parameter",
               "kinds": "the `kind` query parameter", "priors": "the `prior` query parameter",
               "kind_weights": "the `kind_weight` query parameter"}
# "no declaration in bundle mathlib lies in the module (query parameter `module`) NumberTheory (modules look like ...)"
LEAN_HTTP_LABELS = {"modules": "the module (query parameter `module`)", "kinds": "the `kind` query parameter",
                    "prior_weight": "the `prior_weight` query parameter",
                    "deprecated": "the `deprecated` query parameter"}
# TheoremSearch's names for them (POST /search)
TS_LABELS = {"sources": "sources", "kinds": "types", "priors": "citation_weight"}


def search(query: str, *, k: int = 10, mode: str = "hybrid", sources: list[str] | None = None,
           exclude: list[str] | None = None, kinds: list[str] | None = None, bundle: str | None = None,
           paper_filter: dict | None = None, priors: dict | None = None, offset: int = 0,
           rerank: bool | None = None, kind_weights: dict | None = None, all_copies: bool = False) -> dict:
    """``GET /api/search``: the library's search (``mathlas.service.search``) as a dict, the JSON of
    ``mathlas search --json``; messages name the query parameters."""
    req = SearchRequest.make(query, k, mode=mode, sources=sources, exclude_sources=exclude, kinds=kinds,
                             paper_filter=paper_filter, priors=priors, offset=offset, rerank=rerank,
                             kind_weights=kind_weights, collapse=not all_copies, labels=HTTP_LABELS)
    return _asdict(run_search(req, bundle))  # source=Stacks is stacks; a miss names the closest source (service)


# The GET of this API that does what a ``next`` step's tool does (a tool not listed has none: identify_constant,
# verify_formal). REST answers add it to the step as ``href`` (``with_hrefs``); the step itself stays the
# MCP call it is in ``mathlas search --json``.
STEP_ENDPOINTS = {"get_by_id": "/api/doc/{id}", "get_statement": "/api/doc/{id}", "get_dependencies": "/api/lean/deps/{id}",
                  "search_existing_math": "/api/search", "search_formal_math": "/api/lean/search"}


def with_hrefs(result: dict, bundle: str | None = None) -> dict:
    """``result`` (``search`` or ``lean_search``) with an ``href`` beside each ``next`` step that has a
    GET of this API: the path and query, percent-encoded, ready to request (``bundle``: the served
    bundle the request named, kept for a document or search of it; a Lean step's bundle is the
    server's formal bundle, which those endpoints read anyway)."""
    from urllib.parse import quote, urlencode

    for step in result.get("next") or []:
        endpoint = STEP_ENDPOINTS.get(step.get("tool"))
        args = step.get("arguments") or {}
        if endpoint is None:
            continue
        params: dict[str, Any] = {}
        if "{id}" in endpoint:
            if not isinstance(args.get("id"), str):
                continue
            endpoint = endpoint.replace("{id}", quote(args["id"], safe=":/@"))
            if "direction" in args:
                params["direction"] = args["direction"]
        elif isinstance(args.get("query"), str):
            params["q"] = args["query"]
        else:
            continue
        lean = endpoint.startswith("/api/lean/") or str(args.get("id", "")).startswith("lean:")
        if bundle and not lean:
            params["bundle"] = bundle
        step["href"] = endpoint + ("?" + urlencode(params) if params else "")
    return result


def document(doc_id: str, bundle: str | None = None) -> dict:
    """``GET /api/doc/{id}``: the document as a dict, the JSON of ``mathlas show --json``."""
    return _asdict(get_document(doc_id, bundle=bundle))


def lean_search(query: str, *, k: int = 10, modules: list[str] | None = None, kinds: list[str] | None = None,
                mode: str = "hybrid", prior_weight: float | None = None, bundle: str | None = None,
                offset: int = 0, deprecated: bool = True, all_copies: bool = False) -> dict:
    """``GET /api/lean/search``: the library's Lean search as a dict, the JSON of ``mathlas lean search --json``."""
    req = LeanSearchRequest.make(query, k, mode=mode, modules=modules, kinds=kinds, prior_weight=prior_weight,
                                 offset=offset, deprecated=deprecated, collapse=not all_copies, labels=LEAN_HTTP_LABELS)
    return _asdict(run_lean_search(req, bundle))


def lean_deps(doc_id: str, *, direction: str = "uses", depth: int = 1, limit: int = 100,
              bundle: str | None = None) -> dict:
    """``GET /api/lean/deps/{id}``: the dependency walk as a dict, the JSON of ``mathlas lean deps --json``."""
    return _asdict(dependencies(DependencyRequest.make(doc_id, direction, depth, limit), bundle))


def bundles(served: Served) -> dict:
    """What this server serves (each bundle's name, version, counts per source, licenses; the
    first, ``default_bundle``, answers requests that name none) and what is installed. Reads
    manifests only; opens no bundle."""
    out = []
    for i, spec in enumerate(served.specs):
        entry: dict[str, Any] = {"spec": spec, "default": i == 0}
        try:
            root = resolve_bundle(spec, quiet=True)
            m = read_manifest(root)
            entry.update(name=m.name, version=m.version, label=f"{m.name}-{m.version}", count=m.count,
                         description=m.description,
                         sources={s: {"count": v.get("count"), "license": v.get("license"),
                                      "attribution": v.get("attribution")} for s, v in m.sources.items()},
                         paper_filters="paper_title" in meta_columns(root, m), kinds=kind_counts(root, m),
                         priors=sorted((m.fusion or {}).get("priors") or {}))
        except MathlasError as e:
            entry["error"] = str(e)
        out.append(entry)
    formal: dict[str, Any] = {"spec": formal_bundle_spec(served.formal), "available": False}
    problem = served.formal_problem()
    if problem is None:
        try:
            root = resolve_bundle(formal_bundle_spec(served.formal), quiet=True)
            m = read_manifest(root)
            formal.update(available=True, name=m.name, version=m.version, label=f"{m.name}-{m.version}",
                          count=m.count, kinds=kind_counts(root, m))
        except MathlasError as e:  # gone since it was found: the message the Lean endpoints would give
            spec = formal_bundle_spec(served.formal)
            problem = f"this server's formal (Lean) bundle cannot be opened ({_reason(e, spec)})", BAD_FORMAL_HINT
    if problem is not None:  # the Lean endpoints' 404, and what the server's operator can do
        formal["error"] = "; ".join(problem)
        formal["how_to_build"] = problem[1]
    inst = [{"name": b.name, "version": b.version, "problem": b.problem} for b in installed()]
    # the bundle a request without ``bundle`` searches: the first served, not the library's default
    default = out[0].get("label") or served.specs[0] or os.environ.get("MATHLAS_BUNDLE") or DEFAULT_BUNDLE
    return {"default_bundle": default, "served": out, "formal": formal, "installed": inst}


def kind_counts(root, m) -> dict[str, int]:
    """A bundle's kinds with their counts, without opening it (``mathlas.engine.kind_counts``)."""
    from mathlas.engine import kind_counts as counts

    return counts(root, m)


def meta_columns(root, m) -> set[str]:
    """A bundle's metadata column names, without opening it (``mathlas.engine.meta_columns``)."""
    from mathlas.engine import meta_columns as columns

    return columns(root, m)


def loaded() -> list[str]:
    """``name-version`` of the bundles this process has opened so far."""
    import sys

    if "mathlas.engine" not in sys.modules:  # nothing can be open yet; /health must not import numpy
        return []
    return [f"{b.name}-{b.version}" for b in _open_bundles().loaded()]


# ------------------------------------------------------------------------------ TheoremSearch support

@dataclass
class BundleFacts:
    """What the TheoremSearch mapping needs to know about a bundle before searching it."""

    label: str
    sources: list[str]
    columns: set[str]
    priors: dict[str, dict]
    attribution: dict[str, str] = field(default_factory=dict)


def open_bundle(spec: str | None) -> Any:
    """The open bundle ``spec`` (opened now if this is its first use): one lookup a request, which
    ``bundle_facts`` and ``search_hits`` then share (each lookup checks the manifest on disk)."""
    return _open_bundles().get(spec)


def bundle_facts(b: Any) -> BundleFacts:
    """Describe the open bundle ``b`` (``open_bundle``), once per bundle and table: some 40
    microseconds a request otherwise, most of it the table's column names."""
    with _FACTS_LOCK:
        held = _FACTS.get(b)
    if held is not None and held[0] is b.table:
        return held[1]
    from mathlas.findings import SOURCE as FINDINGS

    facts = BundleFacts(label=f"{b.name}-{b.version}", sources=[*b.source_names, FINDINGS],
                        columns=set(b.table.column_names),
                        priors=b.priors, attribution={s: str(v.get("attribution") or "")
                                                      for s, v in b.manifest.sources.items()})
    with _FACTS_LOCK:
        _FACTS[b] = (b.table, facts)
    return facts


# Each open bundle's facts, with the table they were read of (a caller may replace a bundle's table);
# weak: a bundle the library forgets (mathlas.engine.OpenBundles) is not kept alive here.
_FACTS: weakref.WeakKeyDictionary[Any, tuple[Any, BundleFacts]] = weakref.WeakKeyDictionary()
_FACTS_LOCK = threading.Lock()


@dataclass
class ScoredHit:
    """A library ``Hit``, the metadata columns its answer shows (``values``: column -> value, None
    where the document has none) and its dense cosine (None when the dense channel did not run, and
    for a saved finding)."""

    hit: Hit
    values: dict[str, Any]
    similarity: float | None


@dataclass(frozen=True)
class ScoredHits:
    """``search_hits``' answer: the hits, and how sure the search is of them (``match``: strong, weak or
    none, and its ``confidence``: what every other surface leads with)."""

    hits: list[ScoredHit]
    match: str
    confidence: float


def search_hits(b: Any, query: str, *, k: int, columns: tuple[str, ...], mode: str = "hybrid",
                sources: list[str] | None = None, kinds: list[str] | None = None, paper_filter: dict | None = None,
                priors: dict | None = None, title_contains: str | None = None,
                citations_or_unknown: tuple[int | None, int | None] | None = None) -> ScoredHits:
    """TheoremSearch's ``POST /search`` on the open bundle ``b`` (``open_bundle``): the library's
    search (``mathlas.service.search``, findings included) with TheoremSearch's names in messages, plus the two TheoremSearch filters that have
    no ``paper_filter`` field (a paper-title substring; a citation range that keeps unknown counts)
    as a mask applied inside both channels; each hit's metadata ``columns`` (read by key from the
    columns, not a whole ``Document``: ten documents cost some 0.7 ms, these columns 0.05) and each
    bundle hit's exact dense cosine: the dense channel's own score where it ranked the hit,
    computed for the others (a lexical-only hit)."""
    from mathlas.ranking.filters import citation_mask, title_mask

    mask = None
    if title_contains:
        mask = title_mask(b.table, title_contains)
    if citations_or_unknown is not None:
        m = citation_mask(b.table, *citations_or_unknown)
        mask = m if mask is None else mask & m
    req = SearchRequest.make(query, k, mode=mode, sources=sources or None, kinds=kinds or None,
                             paper_filter=paper_filter, priors=priors, mask=mask, labels=TS_LABELS)
    result, ranked = search_ranked(req, b)
    hits, n = result.hits, len(b)
    keys = ranked.top.keys.tolist()
    rows = iter(_column_values(b, [key for key in keys if key < n], columns))
    shown = [next(rows) if key < n else _document_values(get_document(h.id, b), columns)
             for key, h in zip(keys, hits)]
    if mode == "lexical" or not hits:
        return ScoredHits([ScoredHit(h, v, None) for h, v in zip(hits, shown)], result.match, result.confidence)
    import numpy as np

    cos = ranked.top.raw_in("dense").copy()
    todo = [i for i, key in enumerate(keys) if key < n and np.isnan(cos[i])]
    if todo:
        q = np.asarray(ranked.vector(), dtype=np.float32)
        cos[todo] = b.dense.rescore(q, np.array([keys[i] for i in todo], dtype=np.int64))
    sims = [float(c) if key < n else None for key, c in zip(keys, cos.tolist())]
    return ScoredHits([ScoredHit(h, v, c) for h, v, c in zip(hits, shown, sims)], result.match, result.confidence)


def _column_values(b, keys: list[int], columns: tuple[str, ...]) -> list[dict[str, Any]]:
    """Each key's values of ``columns`` (None: null, or a column the bundle lacks), as
    ``Bundle.document_at`` reads them (``Bundle.strings``: a string column from its Arrow buffers)."""
    read = {c: b.strings(c)(keys) if b.has_column(c) else [None] * len(keys) for c in columns}
    return [{c: read[c][i] for c in columns} for i in range(len(keys))]


def _document_values(doc: Document, columns: tuple[str, ...]) -> dict[str, Any]:
    """``_column_values`` of a whole ``Document`` (a saved finding: it has no row in the bundle)."""
    core = {"body": doc.body, "slogan": doc.slogan, "name": doc.name, "title": doc.title, "text": doc.text,
            "link": doc.link, "license": doc.license, "id": doc.id, "source": doc.source, "kind": doc.kind,
            "label": doc.fields.get("tex_label")}  # Document.label is its heading's label, not the column
    return {c: core[c] if c in core else doc.fields.get(c) for c in columns}


# ------------------------------------------------------------------------------ MCP

def mcp_server(*, allow_write: bool, bundle_policy: Any = None) -> MCPServer:
    """The MCP server of ``mathlas mcp`` (one tool registry), minus the tools that write when
    ``allow_write`` is false; ``bundle_policy`` checks every tool's ``bundle`` (web/policy.py)."""
    from mathlas.mcp.server import build_server

    server = build_server("WARNING", bundle_policy=bundle_policy, hide_paths=True)  # no server path reaches a client
    if not allow_write:
        for name in WRITE_TOOLS:
            try:
                server.remove_tool(name)
            except Exception:  # noqa: BLE001 - the tool module is not installed: nothing to remove
                pass
    return server
