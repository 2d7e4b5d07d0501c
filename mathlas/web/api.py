"""The web package's one way into the library: every import of a mathlas function lives here.

The HTTP surfaces call these functions and nothing else of the runtime, so a renamed library module
means editing this file only. The functions return what the library returns, as JSON-able data:
``search`` is exactly ``mathlas search --json`` (``dataclasses.asdict`` of ``search_existing_math``),
``document`` exactly ``mathlas show --json``, ``lean_search`` / ``lean_deps`` exactly
``mathlas lean search|deps --json``. Validation is the library's: its ``UsageError`` reaches the
app, which turns it into a JSON error.

Which bundles a request may name is decided here too (``Served``): over HTTP a client picks one of
the bundles the server was started with, by name or ``name-version``, never a directory path.
"""
from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mathlas import __version__
from mathlas.checks import name_weights
from mathlas.bundle import META, META_ARROW, read_manifest
from mathlas.errors import BundleNotFoundError, MathlasError, UsageError
from mathlas.hit import Document, Hit
from mathlas.releases.install import DEFAULT_BUNDLE, installed, resolve_bundle
from mathlas.tools.informal import SearchResult, get_by_id, search_existing_math
from mathlas.tools.lean_search import (BUILD_HINT, DependencyResult, FormalSearchResult, formal_bundle_spec,
                                       get_dependencies, open_formal, search_formal_math)

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["VERSION", "MathlasError", "UsageError", "BundleNotFoundError", "Served", "search", "document",
           "lean_search", "lean_deps", "bundles", "loaded", "bundle_facts", "search_hits", "mcp_server",
           "name_weights"]

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
    """``dataclasses.asdict``, equal output, at a quarter of its cost (it deep-copies every leaf;
    the library's results hold only dataclasses, lists, dicts and immutable scalars)."""
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        names = _FIELDS.get(type(result))
        if names is None:
            names = _FIELDS[type(result)] = tuple(f.name for f in dataclasses.fields(result))
        return {name: _asdict(getattr(result, name)) for name in names}
    if isinstance(result, (list, tuple)):
        return [_asdict(x) for x in result] if isinstance(result, list) else tuple(_asdict(x) for x in result)
    if isinstance(result, dict):
        return {k: _asdict(v) for k, v in result.items()}
    return result


_FIELDS: dict[type, tuple[str, ...]] = {}


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
        """The formal bundle spec for the Lean endpoints (only the one configured is served)."""
        if requested is None or not str(requested).strip():
            return self.formal
        if str(requested).strip() in self.names(self.formal, formal=True):
            return self.formal
        raise UsageError(f"bundle {requested!r} is not served here; the Lean endpoints serve "
                         f"{formal_bundle_spec(self.formal)}")

    def labels(self) -> list[str]:
        out = []
        for spec in self.specs:
            names = sorted(self.names(spec), key=lambda n: ("-" not in n, n))
            out.append(next((n for n in names if "-" in n and "/" not in n), spec or "(default)"))
        return out


# ------------------------------------------------------------------------------ the JSON API

def search(query: str, *, k: int = 10, mode: str = "hybrid", sources: list[str] | None = None,
           exclude: list[str] | None = None, kinds: list[str] | None = None, bundle: str | None = None,
           paper_filter: dict | None = None, priors: dict | None = None, offset: int = 0,
           rerank: bool | None = None, kind_weights: dict | None = None) -> dict:
    """``mathlas search --json``: the ``search_existing_math`` result as a dict (built the way the CLI builds it)."""
    source_filter = {"include": sources or [], "exclude": exclude or []} if sources or exclude else None
    return _asdict(search_existing_math(query, k=k, mode=mode, kinds=kinds or None, bundle=bundle,
                                        source_filter=source_filter, paper_filter=paper_filter, priors=priors,
                                        offset=offset, rerank=rerank, kind_weights=kind_weights))


def document(doc_id: str, bundle: str | None = None) -> dict:
    """``mathlas show --json``: the ``get_by_id`` document as a dict."""
    return _asdict(get_by_id(doc_id, bundle=bundle))


def lean_search(query: str, *, k: int = 10, modules: list[str] | None = None, kinds: list[str] | None = None,
                mode: str = "hybrid", prior_weight: float | None = None, bundle: str | None = None) -> dict:
    """``mathlas lean search --json``: the ``search_formal_math`` result as a dict."""
    return _asdict(search_formal_math(query, k=k, modules=modules, kinds=kinds, mode=mode,
                                      prior_weight=prior_weight, bundle=bundle))


def lean_deps(doc_id: str, *, direction: str = "uses", depth: int = 1, limit: int = 100,
              bundle: str | None = None) -> dict:
    """``mathlas lean deps --json``: the ``get_dependencies`` result as a dict."""
    return _asdict(get_dependencies(doc_id, direction=direction, depth=depth, limit=limit, bundle=bundle))


def formal_available(spec: str | None) -> bool:
    """Whether the formal bundle resolves to an installed bundle (opens nothing)."""
    try:
        resolve_bundle(formal_bundle_spec(spec), quiet=True)
        return True
    except MathlasError:
        return False


def formal_hint() -> str:
    return BUILD_HINT


def bundles(served: Served) -> dict:
    """What this server serves (each bundle's name, version, counts per source, licenses) and what
    is installed. Reads manifests only; opens no bundle."""
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
                         paper_filters="paper_title" in _meta_columns(root),
                         priors=sorted(((m.fusion or {}).get("priors") or {})))
        except MathlasError as e:
            entry["error"] = str(e)
        out.append(entry)
    formal: dict[str, Any] = {"spec": formal_bundle_spec(served.formal), "available": False}
    try:
        m = read_manifest(resolve_bundle(formal_bundle_spec(served.formal), quiet=True))
        formal.update(available=True, name=m.name, version=m.version, label=f"{m.name}-{m.version}", count=m.count)
    except MathlasError as e:
        formal["error"] = f"{e}"
        formal["how_to_build"] = BUILD_HINT
    inst = [{"name": b.name, "version": b.version, "problem": b.problem} for b in installed()]
    return {"default_bundle": DEFAULT_BUNDLE, "served": out, "formal": formal, "installed": inst}


def _meta_columns(root) -> set[str]:
    """The metadata column names of a bundle, from the file's schema alone (no rows read)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if (root / META_ARROW).is_file():
            with pa.memory_map(str(root / META_ARROW)) as f:
                return set(pa.ipc.open_file(f).schema.names)
        return set(pq.read_schema(root / META).names)
    except (OSError, pa.ArrowInvalid):
        return set()


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


def bundle_facts(spec: str | None) -> BundleFacts:
    """Open (once) the bundle ``spec`` and describe it."""
    b = _open_bundles().get(spec)
    return BundleFacts(label=f"{b.name}-{b.version}", sources=list(b.source_names), columns=set(b.table.column_names),
                       priors=b.priors, attribution={s: str(v.get("attribution") or "")
                                                     for s, v in b.manifest.sources.items()})


@dataclass
class ScoredHit:
    """A library ``Hit``, its whole ``Document`` (body, slogan, paper fields) and its dense cosine
    (None when the dense channel did not run)."""

    hit: Hit
    doc: Document
    similarity: float | None


def _title_mask(b, needle: str):
    import pyarrow.compute as pc

    col = b.table.column("paper_title")
    return pc.fill_null(pc.match_substring(col, needle, ignore_case=True), False).to_numpy(zero_copy_only=False)


def _citation_mask(b, lo: int | None, hi: int | None):
    """Documents whose citation count is unknown, or within [lo, hi]."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    col = b.table.column("citations").cast(pa.float64())
    vals = pc.fill_null(col, np.nan).to_numpy(zero_copy_only=False)
    unknown = np.isnan(vals)
    inside = ~unknown
    if lo is not None:
        inside &= vals >= lo
    if hi is not None:
        inside &= vals <= hi
    return unknown | inside


def search_hits(spec: str | None, query: str, *, k: int, mode: str = "hybrid", sources: list[str] | None = None,
                kinds: list[str] | None = None, paper_filter: dict | None = None, priors: dict | None = None,
                title_contains: str | None = None,
                citations_or_unknown: tuple[int | None, int | None] | None = None) -> list[ScoredHit]:
    """``Bundle.search`` with the library's own validation, plus the two TheoremSearch filters that
    have no ``paper_filter`` field (a paper-title substring; a citation range that keeps unknown
    counts) as a mask applied inside both channels, and each hit's exact dense cosine."""
    b = _open_bundles().get(spec)
    mask = None
    if title_contains:
        mask = _title_mask(b, title_contains)
    if citations_or_unknown is not None:
        m = _citation_mask(b, *citations_or_unknown)
        mask = m if mask is None else mask & m
    hits = b.search(query, k=k, mode=mode, sources=sources or None, kinds=kinds or None,
                    paper_filter=paper_filter, priors=priors, mask=mask)
    docs = [b.get(h.id) for h in hits]
    if mode == "lexical" or not hits:
        return [ScoredHit(h, d, None) for h, d in zip(hits, docs)]
    import numpy as np

    q = np.asarray(b.query_vector(query.strip()), dtype=np.float32)
    cos = b.dense.rescore(q, np.array([b.key_of(h.id) for h in hits], dtype=np.int64))
    return [ScoredHit(h, d, float(c)) for h, d, c in zip(hits, docs, cos)]


# ------------------------------------------------------------------------------ MCP

def mcp_server(*, allow_write: bool) -> "MCPServer":
    """The MCP server of ``mathlas mcp`` (one tool registry), minus the tools that write when
    ``allow_write`` is false."""
    from mathlas.mcp.server import build_server

    server = build_server("WARNING")
    if not allow_write:
        for name in WRITE_TOOLS:
            try:
                server.remove_tool(name)
            except Exception:  # noqa: BLE001 - the tool module is not installed: nothing to remove
                pass
    return server


def open_formal_bundle(spec: str | None) -> str:
    """Open the formal bundle (raises ``BundleNotFoundError`` with how to build one); its label."""
    b = open_formal(spec)
    return f"{b.name}-{b.version}"
