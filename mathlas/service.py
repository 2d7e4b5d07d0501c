"""The library's capabilities, one function each: ``search`` (informal), ``lean_search``,
``document`` and ``dependencies``. This is the seam every surface meets.

Each surface turns its own inputs into one request (``mathlas.request``: ``SearchRequest``,
``LeanSearchRequest``, ``DependencyRequest``), labelled with its own names for the arguments so a
message names what the person typed (``--kind`` on the CLI, ``kinds`` over MCP, ``kind`` over
HTTP, ``types`` in TheoremSearch's API), and calls one of these functions:

    library / MCP tools   mathlas.tools.informal, mathlas.tools.lean_search (plain typed functions)
    CLI                   mathlas.cli.search, mathlas.cli.lean
    HTTP                  mathlas.web.api (GET /api/*, TheoremSearch's POST /search, the page's API)

No surface speaks another's dialect: the CLI does not pack its flags into an MCP argument and the
HTTP API does not call the MCP tools. The results are dataclasses of ``Hit``/``Document``; what a
hit looks like as text is ``mathlas.render``'s, the one renderer. ``bundle`` is a spec (None: the
default, a name, ``name-version`` or a directory) or an open ``Bundle``.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Union

from mathlas.errors import MathlasError, UsageError
from mathlas.hit import Document, Hit, snippet
from mathlas.request import LABELS, DependencyRequest, LeanSearchRequest, SearchRequest, echoed

if TYPE_CHECKING:  # pragma: no cover
    from mathlas.engine import Bundle
    from mathlas.ranking.pipeline import Ranked

BundleSpec = Union[str, os.PathLike, "Bundle", None]

# How many top hits get a get_by_id suggestion in ``next``.
NEXT_FOR_TOP = 3
_NUMBER = re.compile(r"\s*[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?\s*")
# a query shaped like a Lean declaration name: Nat.add_comm, mul_comm, Finset.sum_range_succ (one token,
# identifier parts joined by dots, or words joined by underscores with one of three letters or more)
_LEAN_NAME = re.compile(r"(?:lean:)?(?:(?:[A-Za-z][\w'!?]*\.)+[A-Za-z_][\w'!?]+|[A-Za-z][^\W_]*'*(?:_[^\W_]+'*)+)")
# the last parts of file names and web addresses, which look like dotted names (www.example.com, node.js)
_NOT_LEAN = re.compile(r"(?i)(?:^www\.|^https?:|\.(?:com|org|net|edu|io|gov|txt|md|pdf|html?|js|py|json|csv|png|jpe?g)$)")
LEAN_NAME_NOTE = "it looks like a Lean declaration name, and no formal bundle is installed to look it up (docs/formal.md)"


# ------------------------------------------------------------------------------ results

@dataclass
class NextStep:
    """A tool call worth making next, with its arguments ready to send."""

    tool: str
    arguments: dict[str, Any]
    why: str


@dataclass
class SearchResult:
    """Ranked hits for a query, and which tool calls to make on the promising ones."""

    query: str
    bundle: str          # name-version of the bundle searched
    mode: str
    hits: list[Hit]
    next: list[NextStep] = field(default_factory=list)
    # how close the best hits are (mathlas.ranking.confidence): strong, weak or none, its 0-1 confidence and,
    # unless strong, one line saying what that means
    match: str = "weak"
    confidence: float = 0.0
    note: str = ""
    # what the query was searched as, one line: misspelt name words corrected ("searched for: fundamental
    # theorem of algebra (theorm -> theorem)", mathlas.ranking.names) and abbreviations expanded
    # (mathlas.ranking.abbreviations); "" when it was searched as asked
    expanded: str = ""
    # the query with its misspelt name words corrected, when some were ("" otherwise)
    searched_for: str = ""
    # where a long query was cut (``_cut``): {"dense": {"tokens", "words", "of"}, "lexical": {"words", "of"}},
    # each channel that read only the query's first words (the encoder's max_tokens, BM25's
    # lexical.MAX_QUERY_TERMS); {} when every channel read all of it
    cut: dict[str, Any] = field(default_factory=dict)  # Any: a plain object in the MCP output schema (its budget)


@dataclass
class FormalSearchResult(SearchResult):
    """Ranked Lean declarations for a query: ``SearchResult``'s fields and ``prior_weight``, the
    PageRank prior's weight used."""

    prior_weight: float = 0.0


@dataclass
class Dependency:
    """A declaration on a dependency walk, ``distance`` steps from where the walk began."""

    id: str
    kind: str
    module: str
    signature: str
    distance: int


@dataclass
class DependencyResult:
    """Declarations ``id`` uses (or that use it), breadth first up to ``depth`` steps; ``total``
    counts all of them, ``declarations`` holds the first ``limit``; ``note`` says what the walk
    cannot see (``formal.DEPENDENCY_NOTE``)."""

    id: str
    direction: str
    depth: int
    bundle: str
    total: int
    declarations: list[Dependency]
    truncated: bool
    note: str = ""


def _open(bundle: BundleSpec) -> Bundle:
    from mathlas.engine import Bundle, open_bundle

    return bundle if isinstance(bundle, Bundle) else open_bundle(bundle)


# ------------------------------------------------------------------------------ the capabilities

def search(req: SearchRequest, bundle: BundleSpec = None, *, findings: bool = True) -> SearchResult:
    """Informal search: ``req`` ranked over ``bundle`` (``mathlas.ranking``) and, with ``findings``
    (the default), the results saved with add_finding as extra documents of the same channels."""
    return search_ranked(req, bundle, findings=findings)[0]


def search_ranked(req: SearchRequest, bundle: BundleSpec = None, *,
                  findings: bool = True) -> tuple[SearchResult, Ranked]:
    """``search``'s result and the ``Ranked`` it was made from (each hit's channel ranks and raw
    scores: ``Ranked.top``), for a surface that shows more of the evidence (TheoremSearch's cosine)."""
    from mathlas.findings.store import open_store
    from mathlas.ranking.pipeline import pipeline_for

    b = _open(bundle)
    req = req.in_spelling_of(b)  # a source named in any case ("Stacks"); a miss names the closest source
    ranked = pipeline_for(b).rank(req, findings=open_store() if findings else None)
    hits = ranked.hits
    steps = [NextStep("get_by_id", {"id": h.id}, "the whole statement, link and license") for h in hits[:NEXT_FOR_TOP]]
    if _NUMBER.fullmatch(req.query):
        steps.insert(0, NextStep("identify_constant", {"value": req.query.strip()},
                                 "the query is a number: look for a closed form"))
    if not hits and req.filtered:
        steps.append(NextStep("search_existing_math", {"query": _again(req.query)},
                              "nothing passed the filters: search all sources"))
    match = _match(b, req, ranked)
    if match["match"] != "strong" and _looks_like_lean_name(req.query):
        if _formal_bundle_here():
            steps.insert(0, NextStep("search_formal_math", {"query": req.query.strip().strip("`").removeprefix("lean:")},
                                     "it looks like a Lean declaration name"))
        else:
            match["note"] = "; ".join(x for x in (match["note"], LEAN_NAME_NOTE) if x)
    result = SearchResult(query=echoed(req.query), bundle=b.label, mode=req.mode, hits=hits, next=steps, **match)
    return result, ranked


def _looks_like_lean_name(query: str) -> bool:
    """``Nat.add_comm``, ``mul_comm``: one token shaped like a Lean name (``_LEAN_NAME``), of five
    characters or more, with a part of three letters or more (not ``x_n`` or ``e.g``)."""
    q = query.strip().strip("`")
    return len(q) >= 5 and bool(_LEAN_NAME.fullmatch(q)) and not _NOT_LEAN.search(q) and \
        any(len(p) >= 3 for p in re.split(r"[._]", q.removeprefix("lean:")))


def _formal_bundle_here() -> bool:
    """Whether a formal (Lean) bundle can answer: ``$MATHLAS_FORMAL_BUNDLE`` names one or one is
    installed (the installed bundles' manifests are read; nothing is opened)."""
    from mathlas.releases.formal_specs import FORMAL_ENV, installed_formal

    return bool(os.environ.get(FORMAL_ENV)) or bool(installed_formal())


def lean_search(req: LeanSearchRequest, bundle: BundleSpec = None) -> FormalSearchResult:
    """Lean search: ``req`` over the formal bundle (``bundle``; None: ``$MATHLAS_FORMAL_BUNDLE``, else
    every installed formal bundle, ``mathlas.formal.formal_bundle_specs``), with the bundle's PageRank
    prior unless the request sets its weight, and without the deprecated declarations when
    ``req.deprecated`` is False."""
    from mathlas.formal import (FORMAL_FIELDS, PRIOR, current_mask, formal_bundle_specs,
                                formal_hit, formal_kinds, module_mask, open_formal)
    from mathlas.ranking.pipeline import pipeline_for

    if bundle is None and len(specs := formal_bundle_specs(None)) > 1:
        return _lean_search_many(req, specs)
    b = open_formal(bundle, req.labels.get("bundle", "bundle"))
    priors = None
    weight = 0.0
    if PRIOR in b.priors:
        weight = b.priors[PRIOR]["weight"] if req.prior_weight is None else float(req.prior_weight)
        priors = {PRIOR: weight}
    elif req.prior_weight:
        raise UsageError(f"bundle {b.label} declares no {PRIOR} prior; leave {req.labels['prior_weight']} out")
    mask = module_mask(b, list(req.modules), req.labels["modules"]) if req.modules else None
    current = None if req.deprecated else current_mask(b)  # leave @[deprecated] declarations out
    if current is not None:
        mask = current if mask is None else mask & current
    # LeanSearchRequest.make checked these through SearchRequest.make already: build, do not re-check.
    # A Lean alias and the declaration it stands for take one rank unless every copy is asked for
    # (req.collapse False); each hit's also_in names the other (docs/groups.md). A kind filter of
    # theorem takes the bundle's lemmas too, and lemma its theorems (formal_kinds)
    inner = SearchRequest(query=req.query, k=req.k, mode=req.mode, kinds=formal_kinds(b, req.kinds), offset=req.offset,
                          collapse=req.collapse, labels={**LABELS, "kinds": req.labels["kinds"]})
    ranked = pipeline_for(b).rank(replace(inner, mask=mask, priors=priors), fields=FORMAL_FIELDS)
    hits = [formal_hit(h) for h in ranked.hits]
    passed = _passed_back(bundle, b)  # one bundle: worked out once, not for each hit
    steps = _lean_next(req, [(passed, h) for h in hits])
    return FormalSearchResult(query=echoed(req.query), bundle=b.label, mode=req.mode, prior_weight=weight, hits=hits,
                              next=steps, **_match(b, req, ranked))


def _lean_search_many(req: LeanSearchRequest, specs: list[str]) -> FormalSearchResult:
    """``lean_search`` over several installed formal bundles (none named): each ranks its first
    ``offset + k``; the hits merge by score (formal bundles fuse alike: ``FORMAL_FUSION`` of the
    build), a declaration two of them hold (a project and the Mathlib it depends on) once, from the
    first (mathlib first); the answer's match is the most confident bundle's."""
    deep = replace(req, k=req.k + req.offset, offset=0)
    parts = [(spec, lean_search(deep, spec)) for spec in specs]
    merged: dict[str, tuple[str, Hit]] = {}
    for spec, h in sorted(((spec, h) for spec, r in parts for h in r.hits), key=lambda x: -x[1].score):
        merged.setdefault(h.id, (spec, h))  # a stable sort: bundle order breaks ties
    page = list(merged.values())[req.offset:req.offset + req.k]
    hits = [h for _, h in page]
    best = max((r for _, r in parts), key=lambda r: r.confidence)
    steps = _lean_next(req, page)
    return FormalSearchResult(query=echoed(req.query), bundle=", ".join(r.bundle for _, r in parts), mode=req.mode,
                              prior_weight=parts[0][1].prior_weight, hits=hits, next=steps, match=best.match,
                              confidence=best.confidence, note=best.note, expanded=best.expanded,
                              searched_for=best.searched_for, cut=best.cut)


def _passed_back(bundle: str | Bundle | None, b: Bundle) -> str | None:
    """The ``bundle`` argument a next step of a Lean search passes back, so that the call reaches the
    bundle searched: none where a call without one does (the default formal bundle, which a server's
    ``--formal-bundle`` sets; when several are installed and none is named, ``get_by_id`` finds the
    one holding the id); an installed bundle's ``name-version``; else the caller's own spelling (a
    local path). Never the server's path of a bundle it serves: over HTTP that argument is refused
    (and shows the server's disk)."""
    from mathlas.formal import formal_bundle_specs, open_formal
    from mathlas.releases.install import bundles_dir

    if not isinstance(bundle, str):
        return None if bundle is None else b.name
    here = b.root.resolve()
    defaults = formal_bundle_specs(None)
    if len(defaults) == 1:
        try:
            if open_formal(defaults[0]).root.resolve() == here:   # opened bundles are kept: no second read
                return None
        except MathlasError:
            pass
    if bundles_dir().resolve() in here.parents:
        return f"{b.name}-{b.version}"
    return bundle


def _lean_next(req: LeanSearchRequest, page: list[tuple[str | None, Hit]]) -> list[NextStep]:
    """The calls worth making after a Lean search, each hit with the ``bundle`` argument that reaches
    the formal bundle it came from (``_passed_back``; None: left out): the first two hits whole; what
    the best one is built on; and a proof that uses it, checked by the Lean kernel, only when it is a
    theorem or lemma (``by exact`` of a def, structure or class proves nothing): for any other kind,
    the declarations that use it (what is proved about it)."""
    from mathlas.formal import PROOF_KINDS

    def args(**given) -> dict:
        return {k: v for k, v in given.items() if v is not None}

    steps = [NextStep("get_by_id", args(id=h.id, bundle=spec), "signature, docstring, module, link and dependencies")
             for spec, h in page[:2]]
    if page:
        spec, best = page[0]
        steps.append(NextStep("get_dependencies", args(id=best.id, direction="uses", bundle=spec),
                              "what the best hit is built on"))
        if best.kind in PROOF_KINDS:
            steps.append(NextStep("verify_formal", {"statement": "<your statement>", "proof": f"by exact {best.name} ..."},
                                  "check a proof that uses the hit with the Lean kernel"))
        else:
            kind = best.kind or "declaration"
            steps.append(NextStep("get_dependencies", args(id=best.id, direction="used_by", bundle=spec),
                                  f"the best hit is {'an' if kind[0] in 'aeiou' else 'a'} {kind}, not a theorem: "
                                  "the declarations that use it (what is proved about it)"))
    elif req.modules:
        steps.append(NextStep("search_formal_math", {"query": _again(req.query)}, "nothing in those modules: search everything"))
    return steps


def _again(query: str) -> str:
    """A suggested call's query: the query itself when an answer may repeat it whole (``echoed``)."""
    return query if echoed(query) == query else "<the same query>"


def _match(b: Bundle, req, ranked: Ranked) -> dict:
    """``match``, ``confidence`` and ``note`` of an answer (``mathlas.ranking.confidence``), from the
    channels' own rankings of the bundle's documents (``Ranked.rankings``) and the answer's first
    hits (``Ranked.head``, before the offset: every page of a search says the same), the
    abbreviations the query was searched with, and where a long query was cut (``_cut``)."""
    from mathlas.ranking.abbreviations import describe
    from mathlas.ranking.confidence import NOTES, assess
    from mathlas.ranking.named import definition_of_other_kind, named_by_none
    from mathlas.ranking.names import named_first
    from mathlas.ranking.shape import is_statement, shape_first

    fixed = ranked.correction
    searched = fixed.query if fixed is not None else req.query
    learned = None
    if "learned" in ranked.notes:  # the bundle's learned stage ordered this answer: its own match model
        learned = {"scores": ranked.notes["learned"], "model": (b.manifest.ranker or {}).get("match")}
    head = ranked.top if ranked.head is None else ranked.head  # the answer from its first hit, whatever the page
    a = assess(ranked.rankings, req.mode, searched, b.manifest.fusion, has_hits=bool(len(head)), learned=learned)
    match, confidence, note = a.match, a.confidence, a.note
    # the query named the first hit (its exact name or id, or the end of its name that no other
    # declaration shares, typed as a name or as its words: "prime two le"): an answer by name, not a guess
    absent = fixed is not None and bool(fixed.note)  # the declaration named is not in the bundle (absent_note)
    words = ranked.notes.get("name_words")  # a name typed as words (names.NameWords)
    first = int(head.keys[0]) if len(head) else -1
    if len(head) and not absent and (named_first(b, req.query, first) or (words is not None and words.names(first))):
        match, confidence, note = "strong", max(confidence, 0.99), ""
    elif "shape" in head.marks and head.marks["shape"][:1].any() and shape_first(b, req.query, int(head.keys[0])):
        # the query is the first hit's statement, up to the names of its variables (a + b = b + a)
        match, confidence, note = "strong", max(confidence, 0.95), ""
    elif len(head) and not (words is not None and words.folded(first)) and _named_first_hit(b, searched, ranked, head):
        # the query is the first hit's own name or alias ("Banach fixed point theorem", "Nakayama's
        # lemma"), or that of a statement of the same fact shown with it: the entry of that name answers it;
        # not words read as a name that are the hit's name only up to a namespace or a variant's ₀ or '
        # ("pow le pow left": ENNReal.pow_le_pow_left, pow_le_pow_left' and pow_le_pow_left₀ alike)
        match, confidence, note = "strong", max(confidence, 0.95), ""
    elif match == "none" and any(m in head.marks and head.marks[m][:1].any() for m in ("names", "shape")):
        # declarations named so, or stating it, were found: not "nothing close"
        match, note = "weak", NOTES["named" if "names" in head.marks and head.marks["names"][:1].any() else "weak"]
    elif match == "strong" and is_statement(b, req.query):
        match, note = "weak", NOTES["weak"]  # a Lean statement whose first hit does not state it (shape_first)
    elif match == "strong" and absent:
        match, note = "weak", NOTES["weak"]  # the declaration named is not in the bundle (names.absent_note)
    elif match == "strong" and len(head) and definition_of_other_kind(b, searched, first):
        # "Vitali covering lemma" answered with the definition of a Vitali covering: the words, not the lemma
        match, note = "weak", NOTES["definition"]
    if match == "weak" and note == NOTES["weak"]:
        if req.mode in ("lexical", "dense"):
            note = NOTES["channel"]
        elif len(head) and named_by_none(b, searched, head.keys[:10].tolist()):
            note = NOTES["unnamed"]
        elif len(head) and definition_of_other_kind(b, searched, first):
            note = NOTES["definition"]
    lines = [x for x in ((fixed.describe() if fixed is not None else ""), words.describe() if words else "",
                         describe(ranked.expansions)) if x]
    return {"match": match, "confidence": confidence, "note": note, "expanded": "; ".join(lines),
            "searched_for": fixed.query if fixed is not None and fixed.query != req.query else "",
            "cut": _cut(b, ranked)}


def _cut(b: Bundle, ranked: Ranked) -> dict[str, dict[str, int]]:
    """Where each channel that ran cut the query it searched (``Ranked.query``), a channel that read
    all of it left out: ``{"dense": {"tokens": 256, "words": 212, "of": 1800}}`` (the encoder read
    its first 256 tokens, the first 212 of its 1,800 words), ``{"lexical": {"words": 256, "of": 1800}}``
    (BM25 searched its first 256 words, as ``lexical.query_terms`` counts them)."""
    from mathlas.ranking.query import dense_text

    out: dict[str, dict[str, int]] = {}
    text = ranked.query
    if "dense" in ranked.rankings:
        enc = b.encoder
        at = enc.cut(dense_text(text, b.manifest), enc.config.query_prompt)
        if at is not None:
            out["dense"] = {"tokens": at[0], "words": len(text[:at[1]].split()), "of": len(text.split())}
    if "lexical" in ranked.rankings:
        at = b.lexical.cut(text)
        if at is not None:
            out["lexical"] = {"words": at[0], "of": at[1]}
    return out


def _named_first_hit(b: Bundle, query: str, ranked: Ranked, head) -> bool:
    """Whether ``query`` names the first hit (the first row of ``head``, the answer before its offset)
    (``mathlas.ranking.named.named_keys``: its name, heading
    or one of its aliases, up to case, accents, possessives, hyphens and words like "theorem"), or a
    statement of the same fact that the hit shows as "also in" (Metamath's ``pnt`` is named by its
    alias "Prime number theorem", PlanetMath's copy by its name). A query with a kind word ("lemma",
    "theorem") names a definition only where the definition's name has that word too."""
    from mathlas.groups import groups_of
    from mathlas.ranking.named import definition_of_other_kind, named_as_another_result, named_keys
    from mathlas.ranking.names import _IDENTIFIER, NameIndex, name_query

    key = int(head.keys[0])
    if key >= len(b):  # a saved finding, named by the name it was saved with
        return ranked.first is not None and _same_name(ranked.first.name or "", query)
    q = name_query(query)
    if q is not None and _IDENTIFIER.search(q) and NameIndex.of(b).formal:
        # a declaration name is exact or it is not (named_first): folded like a theorem's name,
        # sdiff_eq_self_iff_disjoint' (left out as deprecated) named sdiff_eq_self_iff_disjoint
        return False
    keys = [key, *groups_of(b).group(key)]
    # a name that says what kind of result it is ("Vitali covering lemma") names a definition only where
    # the definition's own name says so too: the definition of a Vitali covering is not the lemma
    return any(ok and not definition_of_other_kind(b, query, k) and not named_as_another_result(b, query, k)
               for ok, k in zip(named_keys(b, query, keys), keys))


def _same_name(name: str, query: str) -> bool:
    """Whether ``query`` is ``name`` up to case, spacing and punctuation ("walk test finding",
    "Walk-test finding.")."""
    def fold(s: str) -> str:
        return re.sub(r"[\W_]+", " ", s).strip().casefold()

    return bool(fold(name)) and fold(name) == fold(query)


def document(doc_id: str, bundle: BundleSpec = None) -> Document:
    """The whole document behind a stable id: a saved finding (``finding:``), a Lean declaration
    (``lean:``, from the formal bundle when no bundle is named; its prefix may be left out when a
    formal bundle is named) or a document of ``bundle``. A
    Stacks document also lists the Lean declarations tagged with it (``fields["formal"]``)."""
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise UsageError("an id is required, e.g. stacks:00FN")
    doc_id = doc_id.strip()
    if doc_id.startswith("finding:"):
        return _finding_document(doc_id)
    if bundle is None and doc_id.startswith("lean:"):
        from mathlas.formal import open_formal_holding

        b = open_formal_holding(doc_id, None)  # Lean declarations live in the formal bundles
    else:
        b = _open(bundle)
    if ":" not in doc_id and "module" in b.table.column_names:
        # a Lean declaration's name without its lean: prefix (as `mathlas lean deps` takes it), where
        # exactly one declaration has that id
        from mathlas.ranking.names import LEAN_PREFIX

        try:
            b.key_of(LEAN_PREFIX + doc_id)
            doc_id = LEAN_PREFIX + doc_id
        except UsageError:
            pass
    try:
        doc = b.get(doc_id)
    except UsageError as e:  # an id the bundle lacks: the nearest declaration, or one of another bundle
        from mathlas.formal import unknown_id

        raise unknown_id(b, doc_id, e) from None
    if doc.source == "stacks":  # the formal<->informal bridge: Mathlib declarations tagged @[stacks TAG]
        from mathlas.formal import stacks_to_lean

        formal = stacks_to_lean(doc.id.split(":", 1)[1])
        if formal:
            doc.fields["formal"] = formal
    return doc


def _finding_document(fid: str) -> Document:
    from mathlas.findings import KIND, LICENSE, SOURCE
    from mathlas.findings.store import open_store

    f = open_store().get(fid)
    return Document(id=f.id, source=SOURCE, kind=KIND, name=f.name, title="", body=f.statement, slogan=f.slogan,
                    text=f.search_text, link=f.source_url, license=LICENSE, bundle=SOURCE,
                    fields={"added": f.added, "provenance": f.provenance, "source_url": f.source_url})


def dependencies(req: DependencyRequest, bundle: BundleSpec = None) -> DependencyResult:
    """The Lean declarations ``req.id`` uses (or that use it), breadth first, nearest first."""
    from mathlas.formal import DEPENDENCY_NOTE, open_formal_holding
    from mathlas.graph import graph_of

    b = open_formal_holding(req.id, bundle)  # none named: the installed formal bundle that holds the id
    try:
        key = b.key_of(req.id)
    except UsageError as e:
        from mathlas.formal import unknown_id

        raise unknown_id(b, req.id, e) from None
    walk = graph_of(b).walk(key, req.direction, req.depth)
    cols = {c: b.column(c) for c in ("id", "kind", "module", "signature")}
    deps = [Dependency(id=cols["id"][j].as_py(), kind=cols["kind"][j].as_py(),
                       module=cols["module"][j].as_py() or "", signature=snippet(cols["signature"][j].as_py(), 300),
                       distance=dist) for j, dist in walk[:req.limit]]
    return DependencyResult(id=req.id, direction=req.direction, depth=req.depth, bundle=b.label,
                            total=len(walk), declarations=deps, truncated=len(walk) > req.limit,
                            note=DEPENDENCY_NOTE)
