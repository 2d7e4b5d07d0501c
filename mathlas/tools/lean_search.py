"""Formal search tools: ``search_formal_math`` and ``get_dependencies`` over a Lean declaration bundle.

The formal bundle (``--bundle mathlib`` by default, or any bundle built with ``mathlas index
build-lean PATH``) holds one document per Lean declaration, id ``lean:<Fully.Qualified.Name>``, with
the metadata columns ``module``, ``signature``, ``docstring``, ``dependencies``, ``pagerank`` and
``stacks``, and the reference graph ``graph/dependencies.npz``. Search is the core hybrid search
(BM25 over names split into words + docstring + signature, dense over the same text, RRF), with an
optional PageRank prior from the reference graph. Where a declaration carries ``@[stacks TAG]`` its
hit links to ``stacks:TAG``; ``stacks_to_lean`` gives the way back for the informal bundle's
``get_by_id``.
"""
from __future__ import annotations

import dataclasses
import os
import threading
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from mathlas.checks import integer, number, strings
from mathlas.errors import BundleNotFoundError, UsageError
from mathlas.hit import Hit, snippet
from mathlas.request import Mode, SearchRequest
from mathlas.tools import NextStep

if TYPE_CHECKING:
    import numpy as np

    from mathlas.engine import Bundle

Direction = Literal["uses", "used_by"]

FORMAL_BUNDLE = "mathlib"      # the name of the formal bundle built from the Mathlib + Batteries corpora
FORMAL_ENV = "MATHLAS_FORMAL_BUNDLE"
PRIOR = "pagerank"
DEFAULT_LIMIT = 100
MAX_LIMIT = 5000
BUILD_HINT = ("build it with `mathlas index build-lean PATH --name mathlib` (PATH: your Lean project, e.g. a "
              "Mathlib checkout) or, from a mathlas checkout, `mathlas-build build/recipes/mathlib.toml "
              "--corpora ../shared/corpora --install`; see docs/formal.md")


def formal_bundle_spec(bundle: str | None) -> str:
    return bundle or os.environ.get(FORMAL_ENV) or FORMAL_BUNDLE


def open_formal(bundle: str | None) -> "Bundle":
    from mathlas.engine import open_bundle

    spec = formal_bundle_spec(bundle)
    try:
        b = open_bundle(spec)
    except BundleNotFoundError as e:
        raise BundleNotFoundError(f"{e}; the formal bundle is not shipped in the wheel: {BUILD_HINT}") from None
    if "module" not in b.table.column_names:
        raise UsageError(f"bundle {b.name}-{b.version} is not a formal (Lean) bundle; "
                         f"pass bundle=<a formal bundle> or set ${FORMAL_ENV}")
    return b


# ------------------------------------------------------------------------------ results

@dataclass
class FormalSearchResult:
    query: str
    bundle: str
    mode: str
    prior_weight: float
    hits: list[Hit]
    next: list[NextStep] = field(default_factory=list)


@dataclass
class Dependency:
    id: str
    kind: str
    module: str
    signature: str
    distance: int


@dataclass
class DependencyResult:
    """Declarations ``id`` uses (or that use it), breadth first up to ``depth`` steps; ``total``
    counts all of them, ``declarations`` holds the first ``limit``."""

    id: str
    direction: str
    depth: int
    bundle: str
    total: int
    declarations: list[Dependency]
    truncated: bool


# ------------------------------------------------------------------------------ helpers

def _stacks_ids(value: Any) -> list[str]:
    return [f"stacks:{t}" for t in str(value or "").split()]


# The metadata a formal hit carries in ``Hit.fields``, and how long its texts may be
FORMAL_FIELDS = ("module", "signature", "docstring", "stacks", "generated")
FIELD_CHARS = 600


_MODULE_CACHE: "weakref.WeakKeyDictionary[Bundle, dict[tuple[str, ...], np.ndarray]]" = weakref.WeakKeyDictionary()
_MODULE_LOCK = threading.Lock()


def module_mask(b: "Bundle", prefixes: list[str]) -> "np.ndarray":
    """Declarations whose module is one of ``prefixes`` or below one (``Mathlib.NumberTheory``
    matches ``Mathlib.NumberTheory.Padics.PadicVal``); cached per bundle and prefix set."""
    import numpy as np
    import pyarrow.compute as pc

    key = tuple(sorted(p.removesuffix(".") for p in prefixes))
    with _MODULE_LOCK:
        cached = _MODULE_CACHE.setdefault(b, {}).get(key)
    if cached is not None:
        return cached
    col = b.table.column("module")
    mask = np.zeros(len(b), dtype=bool)
    for p in key:
        hit = pc.or_(pc.equal(col, p), pc.starts_with(col, p + "."))
        mask |= hit.to_numpy(zero_copy_only=False).astype(bool)
    if not mask.any():
        raise UsageError(f"no declaration in bundle {b.name} lies in module(s) {', '.join(prefixes)} "
                         "(modules look like Mathlib.NumberTheory.Padics.PadicVal; a prefix selects a subtree)")
    with _MODULE_LOCK:
        per_bundle = _MODULE_CACHE.setdefault(b, {})
        if len(per_bundle) >= 64:
            per_bundle.clear()
        per_bundle[key] = mask
    return mask


def _formal_hit(h: Hit) -> Hit:
    """A hit as the formal tools show it: the qualified name, texts cut to ``FIELD_CHARS``, the
    Stacks tags as ids, the title in place of a missing module."""
    x = h.fields
    h.name = h.id.split(":", 1)[1]  # the qualified name (the bundle's name column holds its words)
    h.fields = {"module": x.get("module") or h.title,
                "signature": snippet(x.get("signature"), FIELD_CHARS),
                "docstring": snippet(x.get("docstring"), FIELD_CHARS),
                "stacks": _stacks_ids(x.get("stacks")), "generated": x.get("generated") or ""}
    return h


# ------------------------------------------------------------------------------ tools

def search_formal_math(query: str, k: int = 10, modules: list[str] | None = None, kinds: list[str] | None = None,
                       mode: Mode = "hybrid", prior_weight: float | None = None,
                       bundle: str | None = None, offset: int = 0) -> FormalSearchResult:
    """Search Lean 4 declarations (Mathlib, Batteries or your own formal bundle) by name words ("prime
    two le"), a name fragment, a description or notation. Hits: lean:<Name> ids, kind, signature,
    module, docstring, source link, Stacks ids.

    Args:
        query: words, a name fragment or Lean notation.
        k: hits per answer.
        modules: only these modules and below, e.g. ["Mathlib.NumberTheory"].
        kinds: e.g. ["theorem", "lemma"] or ["def", "structure"].
        mode: hybrid fuses keywords (lexical, BM25) and meaning (dense).
        prior_weight: weight of the PageRank prior; default: the bundle's; 0: off.
        bundle: default: $MATHLAS_FORMAL_BUNDLE or "mathlib".
        offset: skip this many hits (next page: offset + k).
    """
    req = SearchRequest.make(query, k, mode=mode, kinds=kinds, offset=offset)
    module_list = strings(modules, "modules")
    if prior_weight is not None:
        number(prior_weight, "prior_weight", minimum=-1e3, maximum=1e3)
    b = open_formal(bundle)
    priors = None
    weight = 0.0
    if PRIOR in b.priors:
        weight = b.priors[PRIOR]["weight"] if prior_weight is None else float(prior_weight)
        priors = {PRIOR: weight}
    elif prior_weight:
        raise UsageError(f"bundle {b.name}-{b.version} declares no {PRIOR} prior")
    mask = module_mask(b, list(module_list)) if module_list else None
    req = dataclasses.replace(req, mask=mask, priors=priors)
    out = [_formal_hit(h) for h in b.rank(req, fields=FORMAL_FIELDS)]
    steps = [NextStep("get_by_id", {"id": h.id, "bundle": formal_bundle_spec(bundle)},
                      "signature, docstring, module, link and dependencies") for h in out[:2]]
    if out:
        steps.append(NextStep("get_dependencies", {"id": out[0].id, "direction": "uses"},
                              "what the best hit is built on"))
        from mathlas.tools import available_tool_names

        if "verify_formal" in available_tool_names():
            steps.append(NextStep("verify_formal", {"statement": "<your statement>", "proof": f"by exact {out[0].name} ..."},
                                  "check a proof that uses the hit with the Lean kernel"))
    if not out and module_list:
        steps.append(NextStep("search_formal_math", {"query": query}, "nothing in those modules: search everything"))
    return FormalSearchResult(query=query, bundle=b.label, mode=mode, prior_weight=weight,
                              hits=out, next=steps)


def get_dependencies(id: str, direction: Direction = "uses", depth: int = 1, limit: int = DEFAULT_LIMIT,
                     bundle: str | None = None) -> DependencyResult:
    """The Lean declarations a declaration uses (direction uses) or that use it (used_by), up to `depth`
    steps, nearest first. Read from the source without elaborating: references made only through
    notation or tactics may be missing.

    Args:
        id: e.g. "lean:Nat.Prime.two_le".
        limit: at most this many; `total` counts all.
        bundle: default: $MATHLAS_FORMAL_BUNDLE or "mathlib".
    """
    from mathlas.graph import DIRECTIONS, MAX_DEPTH, graph_of

    if not isinstance(id, str) or not id.strip():
        raise UsageError("an id is required, e.g. lean:Nat.Prime.two_le")
    if direction not in DIRECTIONS:
        raise UsageError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    integer(limit, "limit", 1, MAX_LIMIT)
    integer(depth, "depth", 1, MAX_DEPTH)  # bad input fails before a bundle is opened
    doc_id = id.strip()
    if ":" not in doc_id:
        doc_id = "lean:" + doc_id
    b = open_formal(bundle)
    g = graph_of(b)
    walk = g.walk(b.key_of(doc_id), direction, depth)
    cols = {c: b.table.column(c) for c in ("id", "kind", "module", "signature")}
    deps = [Dependency(id=cols["id"][j].as_py(), kind=cols["kind"][j].as_py(),
                       module=cols["module"][j].as_py() or "", signature=snippet(cols["signature"][j].as_py(), 300),
                       distance=dist) for j, dist in walk[:limit]]
    return DependencyResult(id=doc_id, direction=direction, depth=depth, bundle=b.label,
                            total=len(walk), declarations=deps, truncated=len(walk) > limit)


# ------------------------------------------------------------------------------ the Stacks bridge

_STACKS_MAP: dict[str, dict[str, list[str]]] = {}


def stacks_to_lean(tag: str, bundle: str | None = None) -> list[str]:
    """Ids of the declarations tagged ``@[stacks TAG]`` in the formal bundle, when one is installed
    (an empty list otherwise: the informal side never builds or installs the formal bundle)."""
    from mathlas.releases.install import resolve_bundle

    spec = formal_bundle_spec(bundle)
    try:
        root = str(resolve_bundle(spec, quiet=True))
    except Exception:  # noqa: BLE001 - no formal bundle installed: no bridge
        return []
    table = _STACKS_MAP.get(root)
    if table is None:
        from mathlas.engine import open_bundle

        b = open_bundle(spec)
        table = {}
        if "stacks" in b.table.column_names:
            for doc_id, tags in zip(b.table.column("id").to_pylist(), b.table.column("stacks").to_pylist()):
                for t in str(tags or "").split():
                    table.setdefault(t.upper(), []).append(doc_id)
        _STACKS_MAP[root] = table
    return list(table.get(tag.upper(), []))
