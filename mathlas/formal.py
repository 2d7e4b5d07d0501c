"""The formal (Lean) bundle: which one the tools search, opening it, its module filter, how a Lean
hit looks, and the bridge from a Stacks tag to the declarations tagged with it.

A formal bundle (``mathlib``, or any bundle built with ``mathlas index build-lean PATH``, named
after its project) holds one document per Lean declaration, id
``lean:<Fully.Qualified.Name>``, with the metadata columns ``module``, ``signature``, ``docstring``,
``dependencies``, ``pagerank`` and ``stacks`` (optional: ``aliases``, the names people use that the
declaration's own name lacks, "; "-joined), and the reference graph ``graph/dependencies.npz``.
Search is the core hybrid search with an optional PageRank prior (``mathlas.service.lean_search``).
Where a declaration carries ``@[stacks TAG]`` its hit links to ``stacks:TAG``; ``stacks_to_lean``
gives the way back for the informal bundle's documents.

Which formal bundles a request means (``formal_bundle_specs``): the one it names, else
``$MATHLAS_FORMAL_BUNDLE``, else every installed formal bundle (a bundle whose manifest has the
``lean`` source), ``mathlib`` first. A search covers them all (``mathlas.service.lean_search``); a
declaration is read from the first that holds its id (``open_formal_holding``); what needs one
bundle (the HTTP server's ``/api/lean``, the Stacks bridge) takes the first.
"""
from __future__ import annotations

import os
import threading
import weakref
from typing import TYPE_CHECKING, Any

from mathlas.errors import BundleNotFoundError, MathlasError, UsageError
from mathlas.hit import Hit, snippet
from mathlas.releases.formal_specs import (FORMAL_BUNDLE, FORMAL_ENV, formal_bundle_spec,  # noqa: F401
                                           formal_bundle_specs, installed_formal)

if TYPE_CHECKING:
    import numpy as np

    from mathlas.engine import Bundle

PRIOR = "pagerank"
DEFAULT_LIMIT = 100            # dependencies listed by default (at most request.MAX_DEPENDENCY_LIMIT)
# The graph is read from the source, not elaborated (docs/formal.md): what a walk cannot see
DEPENDENCY_NOTE = "uses through dot notation (hp.two_le), notation or tactics are not counted"
BUILD_HINT = ("build it with `mathlas index build-lean PATH` (PATH: your Lean project or a Mathlib checkout; no "
              "formal release is published to install) or, from a mathlas checkout, `mathlas-build "
              "build/recipes/mathlib.toml --corpora ../shared/corpora --install` (Mathlib + Batteries with the "
              "default release's encoder, about 40 min on 2 cores); see docs/formal.md")


def open_formal(bundle: str | Bundle | None, label: str = "bundle") -> Bundle:
    """The open formal bundle (``BundleNotFoundError`` saying how to build one; ``UsageError`` for a
    bundle that holds no Lean declarations, naming the argument by ``label``: ``--bundle`` on the
    CLI, ``bundle`` in the library and over MCP); an open ``Bundle`` is checked and returned."""
    from mathlas.engine import Bundle, open_bundle

    if isinstance(bundle, Bundle):
        if "module" not in bundle.table.column_names:
            raise UsageError(f"bundle {bundle.label} is not a formal (Lean) bundle; {name_one(label)}")
        return bundle

    spec = formal_bundle_spec(bundle)
    try:
        b = open_bundle(spec)
    except BundleNotFoundError as e:
        if os.sep in spec or "/" in spec:  # a directory that is not there: say so
            raise BundleNotFoundError(f"{e}; {BUILD_HINT}") from None
        if bundle is None and not os.environ.get(FORMAL_ENV):  # none named, none installed
            raise BundleNotFoundError(f"no formal bundle is installed; {BUILD_HINT}; one built elsewhere: pass "
                                      f"`--bundle PATH` (bundle=PATH) or set ${FORMAL_ENV}=PATH") from None
        # a name: lead with what works (no formal release is published to install)
        raise BundleNotFoundError(f"no formal bundle named {spec!r} is installed; {BUILD_HINT}") from None
    if "module" not in b.table.column_names:
        raise UsageError(f"bundle {b.name}-{b.version} is not a formal (Lean) bundle; {name_one(label)} or set "
                         f"${FORMAL_ENV}")
    return b


def name_one(label: str = "bundle") -> str:
    """How to name a formal bundle, in the words of the surface whose argument is ``label``
    (``--bundle`` on the CLI, ``bundle`` in the library and over MCP), with the installed ones."""
    shown = f"{label} " if label.startswith("-") else f"{label}="
    names = installed_formal()
    return f"pass {shown}<a formal bundle>" + (f" (installed: {', '.join(names)})" if names else "")


def open_formal_holding(doc_id: str, bundle: str | Bundle | None) -> Bundle:
    """The formal bundle to read ``doc_id`` from: ``bundle`` when one is named, else the first of the
    installed formal bundles that holds the id (the first of them when none does: its error names it)."""
    if bundle is not None:
        return open_formal(bundle)
    specs = formal_bundle_specs(None)
    if len(specs) > 1:
        for spec in specs:
            b = open_formal(spec)
            try:
                b.key_of(doc_id)
                return b
            except UsageError:
                continue
    return open_formal(None)


# ------------------------------------------------------------------------------ hits and the module filter

def _stacks_ids(value: Any) -> list[str]:
    return [f"stacks:{t}" for t in str(value or "").split()]


# The metadata a formal hit carries in ``Hit.fields``, and how long its texts may be
FORMAL_FIELDS = ("module", "signature", "docstring", "stacks", "generated", "aliases", "deprecated", "replaced_by",
                 "alias_of")
FIELD_CHARS = 600


def _aliases(value: Any) -> list[str]:
    """The ``aliases`` column ("A; B"; None where a bundle has no such column) as a list of names."""
    names = dict.fromkeys(" ".join(a.split()) for a in str(value or "").split("; "))
    return [snippet(a, FIELD_CHARS) for a in names if a]


_MODULE_CACHE: weakref.WeakKeyDictionary[Bundle, dict[tuple[str, ...], np.ndarray]] = weakref.WeakKeyDictionary()
_MODULE_LOCK = threading.Lock()


def module_mask(b: Bundle, prefixes: list[str], what: str = "modules") -> np.ndarray:
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
        raise UsageError(f"no declaration in bundle {b.name} lies in {what} {', '.join(prefixes)} "
                         "(modules look like Mathlib.NumberTheory.Padics.PadicVal; a prefix selects a subtree)")
    with _MODULE_LOCK:
        per_bundle = _MODULE_CACHE.setdefault(b, {})
        if len(per_bundle) >= 64:
            per_bundle.clear()
        per_bundle[key] = mask
    return mask


def formal_hit(h: Hit) -> Hit:
    """A hit as the formal tools show it: the qualified name, texts cut to ``FIELD_CHARS``, the
    Stacks tags as ids, the aliases as a list (empty when none, or when the bundle has no such
    column), the title in place of a missing module; ``deprecated`` (``since 2024-01-01``, a
    message, or ``deprecated``; "" when it is not), ``replaced_by`` (the id of the declaration to
    use instead, when known) and ``alias_of`` (the id of the declaration an ``alias`` stands for;
    its ``signature`` is that statement), each "" when none or when the bundle predates them."""
    x = h.fields
    h.name = h.id.split(":", 1)[1]  # the qualified name (the bundle's name column holds its words)
    h.fields = {"module": x.get("module") or h.title,
                "signature": snippet(x.get("signature"), FIELD_CHARS),
                "docstring": snippet(x.get("docstring"), FIELD_CHARS),
                "stacks": _stacks_ids(x.get("stacks")), "generated": x.get("generated") or "",
                "aliases": _aliases(x.get("aliases")),
                "deprecated": x.get("deprecated") or "", "replaced_by": x.get("replaced_by") or "",
                "alias_of": x.get("alias_of") or ""}
    return h


def current_mask(b: Bundle) -> np.ndarray | None:
    """Declarations that are not deprecated (``@[deprecated]``), for a search that leaves the
    deprecated out; None when none is (or the bundle predates the ``deprecated`` column)."""
    if "deprecated" not in b.table.column_names:
        return None
    with _MODULE_LOCK:
        cached = _MODULE_CACHE.setdefault(b, {}).get(("\0deprecated",))
    if cached is None:
        cached = b.table.column("deprecated").is_null().to_numpy(zero_copy_only=False).astype(bool)
        with _MODULE_LOCK:
            _MODULE_CACHE.setdefault(b, {})[("\0deprecated",)] = cached
    return None if cached.all() else cached


# ------------------------------------------------------------------------------ kinds

# Kinds a Lean source spells two ways: Mathlib's ``lemma`` is ``theorem`` under another keyword (53,399
# of Mathlib's 204,537 theorems are written so), so a filter on either means both
SAME_KIND = {"theorem": ("theorem", "lemma"), "lemma": ("theorem", "lemma")}
# The kinds whose declarations are proofs: a next step may use one as a term (``by exact NAME ...``)
PROOF_KINDS = frozenset(SAME_KIND["theorem"])


def formal_kinds(b: Bundle, kinds: tuple[str, ...]) -> tuple[str, ...]:
    """A kind filter as a formal bundle means it: ``theorem`` and ``lemma`` each with the other (those
    of them the bundle has). A kind the bundle lacks is kept as given, for the filter's check to name
    it with the bundle's kinds."""
    have = set(b.kind_names)
    out: list[str] = []
    for k in kinds:
        same = [x for x in SAME_KIND.get(k, ()) if x in have]
        out += same or [k]
    return tuple(dict.fromkeys(out))


# ------------------------------------------------------------------------------ an id a bundle lacks

SUGGESTED = 3  # the declaration names an unknown id's error suggests at most


def declarations_like(b: Bundle, doc_id: str) -> list[str]:
    """The ids of the declarations of the formal bundle ``b`` that ``doc_id`` (which it lacks) probably
    meant, the most used first, at most ``SUGGESTED``: the name in another case, the declarations whose
    name ends with it (``Prime.two_le``: ``lean:Nat.Prime.two_le``), else the name with its slip
    corrected (``mul_com``: ``lean:mul_comm``; ``mathlas.ranking.names.NameIndex.identifier``)."""
    from mathlas.ranking.names import NameIndex, by_pagerank, pagerank_of

    index = NameIndex.of(b)
    keys = index.exact(doc_id) or index.suffix(doc_id)
    if not keys and (name := index.identifier(doc_id, pagerank_of(b))):
        keys = index.exact(name) or index.suffix(name)
    ids = b.table.column("id")
    return [ids[k].as_py() for k in by_pagerank(b, keys)[:SUGGESTED]]


def ids_elsewhere(b: Bundle, doc_id: str) -> tuple[list[str], str]:
    """The ids ``doc_id`` probably meant when bundle ``b`` holds none like it, and why: in a formal
    bundle the nearest declaration names (``mul_com``: ``lean:mul_comm``; ``declarations_like``); in an
    informal one, the Lean declaration ``lean:<doc_id>`` of an installed formal bundle
    (``lean_declaration``), with the command that shows it."""
    from mathlas.engine import ID_SHOWN

    if "module" in b.table.column_names:
        from mathlas.ranking.names import NameIndex, absent_reason, pagerank_of

        found = NameIndex.of(b).identifier_why(doc_id, pagerank_of(b))
        if found is not None and found[1] != "spelling":  # not a slip: a name the bundle lacks (Lean core's)
            return declarations_like(b, doc_id), absent_reason(b, doc_id) + (
                ": its unprimed form" if found[1] == "prime" else ": these end the same way")
        return declarations_like(b, doc_id), "the nearest declaration names"
    if "lean" in b.manifest.sources or len(doc_id) > ID_SHOWN:
        return [], ""
    found = lean_declaration(doc_id)
    if found is None:
        return [], ""
    lean_id, formal = found
    return [lean_id], f"a Lean declaration of the formal bundle {formal}: `mathlas show {lean_id}`"


def unknown_id(b: Bundle, doc_id: str, error: UsageError) -> UsageError:
    """``error`` (``b`` lacks ``doc_id``, and suggests no id like it) with the ids ``ids_elsewhere``
    finds instead; ``error`` itself when it suggests one already or none is found."""
    from mathlas.engine import _no_document

    if "did you mean" in str(error) or not str(error).startswith("no document with id"):
        return error
    same, why = ids_elsewhere(b, doc_id)
    return UsageError(_no_document(doc_id, b.name, same, b.manifest.sources, why)) if same else error


def lean_declaration(doc_id: str) -> tuple[str, str] | None:
    """The id ``lean:<doc_id>`` (``doc_id`` itself when it has the prefix; its case may differ) and
    the label of the formal bundle holding it, for an id an informal bundle lacks: the first of the
    formal bundles a request without one means (``formal_bundle_specs``) that holds it; None when
    none does or none is installed (nothing is installed or built here)."""
    from mathlas.engine import open_bundle
    from mathlas.ranking.names import NameIndex
    from mathlas.releases.install import resolve_bundle

    source, sep, _ = doc_id.partition(":")
    if sep and source != "lean":
        return None
    for spec in formal_bundle_specs(None):
        try:
            b = open_bundle(resolve_bundle(spec, quiet=True, install=False))
        except MathlasError:
            continue
        if "module" not in b.table.column_names:
            continue
        keys = NameIndex.of(b).exact(doc_id if sep else f"lean:{doc_id}")
        if keys:
            return b.table.column("id")[keys[0]].as_py(), b.label
    return None


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

