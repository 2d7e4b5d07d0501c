"""A request fitted to a bundle: the checks that need the bundle, the filters every channel applies,
the weights fusion uses, the priors, how deep each channel ranks, and whether saved findings take
part (``Plan``; made by ``make_plan``).

Every check names the caller's own label for the argument (``SearchRequest.labels``: ``--kind`` on
the CLI, ``types`` in TheoremSearch's API), in one line with what the bundle has.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from mathlas.errors import UsageError
from mathlas.ranking.abbreviations import expand_for
from mathlas.ranking.filters import Filters, PaperFilter
from mathlas.ranking.intent import definition_intent
from mathlas.ranking.names import correction_for
import mathlas.ranking.settings as settings
from mathlas.ranking.query import Kept, Query
from mathlas.request import MAX_K, SearchRequest

if TYPE_CHECKING:  # pragma: no cover
    from mathlas.findings.search import FindingsDocuments
    from mathlas.ranking.names import Correction

# Each channel returns this many candidates (at least k) for fusion.
FUSION_DEPTH = 100
# The channels a mode runs, in fusion order.
MODE_CHANNELS = {"hybrid": ("lexical", "dense"), "lexical": ("lexical",), "dense": ("dense",)}
# Source/kind masks kept per bundle (one byte per document each), for requests that repeat a filter
MASKS_KEPT = 8


class KeyWeights:
    """Each candidate's factor on its fused score: its source's weight times its kind's (tables over
    the bundle's source and kind codes), and for saved findings the ``findings`` source weight.
    Called with an array of keys; computed for the candidates only, never for the whole bundle."""

    def __init__(self, source_codes: np.ndarray, kind_codes: np.ndarray, per_source: np.ndarray | None,
                 per_kind: np.ndarray | None, extra: float = 1.0):
        self.source_codes, self.kind_codes = source_codes, kind_codes
        self.per_source, self.per_kind = per_source, per_kind
        self.n = len(source_codes)
        self.extra = extra

    def __call__(self, keys: np.ndarray) -> np.ndarray:
        keys = np.asarray(keys, dtype=np.int64)
        out = np.ones(len(keys), dtype=np.float64)
        ours = keys < self.n
        mine = keys[ours]
        if self.per_source is not None:
            out[ours] *= self.per_source[self.source_codes[mine]]
        if self.per_kind is not None:
            out[ours] *= self.per_kind[self.kind_codes[mine]]
        out[~ours] = self.extra
        return out


@dataclass
class Plan:
    """What ``Pipeline.rank`` does for one request on one bundle.

    ``query``: what the channels search (misspelt name words corrected, ``correction`` says which;
    abbreviations expanded, ``expansions`` says which);
    ``channels``: the channels the mode runs, with their fusion ``channel_weights`` and ``k_rrf``;
    ``filters``: what every channel applies before its cut; ``bundle_part``: whether the bundle's
    documents take part (not when only findings are asked for); ``key_weights``: per-candidate
    factors (None: all 1); ``priors``: active document priors and their weights; ``depth``: how
    deep each channel ranks; ``top``: how many hits the answer reaches (``k + offset``);
    ``rerank_depth``: how many fused hits the reranker rescores (0: none); ``about``: per key, the
    statement it proves (statement links; None: none); ``extra``: saved findings as extra
    documents (None: none) and ``extra_weight`` their source weight; ``intent``: "definition" when
    the query reads as a noun phrase and the bundle declares what to do about it."""

    request: SearchRequest
    query: Query
    channels: tuple[str, ...]
    channel_weights: dict[str, float]
    k_rrf: float
    filters: Filters
    bundle_part: bool
    key_weights: KeyWeights | None
    priors: dict[str, float]
    depth: int
    top: int
    rerank_depth: int
    about: np.ndarray | None
    extra: FindingsDocuments | None = None
    extra_weight: float = 1.0
    intent: str | None = None
    expansions: dict = field(default_factory=dict)
    correction: Correction | None = None

    def allowed(self, keys: np.ndarray) -> np.ndarray:
        """Whether the request lets each of ``keys`` rank at all (filters, and weights above 0)."""
        ok = np.ones(len(keys), dtype=bool) if self.filters.allowed is None else self.filters.allowed[keys]
        if self.key_weights is not None:
            ok &= self.key_weights(keys) > 0
        return ok


# ------------------------------------------------------------------------------ checks

def check_sources(bundle, names: Iterable[str], what: str, findings: bool = False) -> tuple[str, ...]:
    """``names``, each a source of ``bundle`` (or saved findings, when they take part)."""
    from mathlas.findings import SOURCE as FINDINGS

    names = tuple(names)
    unknown = [n for n in names if n not in bundle.source_names and not (findings and n == FINDINGS)]
    if unknown:
        also = f" and {FINDINGS} (results saved with add_finding)" if findings else ""
        raise UsageError(f"unknown source {', '.join(map(repr, unknown))} in {what}; "
                         f"this bundle has: {', '.join(bundle.source_names)}{also} (bundle {bundle.label})")
    return names


def check_kinds(bundle, names: Iterable[str], what: str, findings: bool = False) -> tuple[str, ...]:
    """``names``, each a kind of ``bundle``'s documents (or ``finding``, when findings take part)."""
    from mathlas.findings import KIND as FINDING

    names = tuple(names)
    kinds = bundle.kind_names
    unknown = [x for x in names if x not in kinds and not (findings and x == FINDING)]
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], kinds, n=1, cutoff=0.6)
        also = f" and {FINDING} (results saved with add_finding)" if findings else ""
        raise UsageError(f"unknown kind {', '.join(map(repr, unknown))} in {what}"
                         + (f" (did you mean {close[0]!r}?)" if close else "")
                         + f"; this bundle has: {', '.join(kinds)}{also} (bundle {bundle.label})")
    return names


def prior_weights(bundle, priors: Mapping[str, float] | None) -> dict[str, float]:
    """The active priors (weight != 0): the manifest's default weights, overridden by ``priors``."""
    declared = settings.priors(bundle)
    unknown = [n for n in priors or {} if n not in declared]
    if unknown:
        known = ", ".join(sorted(declared)) or "none"
        raise UsageError(f"unknown prior {', '.join(map(repr, unknown))}; bundle {bundle.name} declares: {known}")
    weights = {n: spec["weight"] for n, spec in declared.items()}
    weights.update(priors or {})
    return {n: w for n, w in weights.items() if w != 0}


def key_weights(bundle, source_weights: Mapping[str, float], kind_weights: Mapping[str, float] | None,
                label: str = "kind_weights") -> KeyWeights | None:
    """Each key's factor on its fused score: its source's weight times its kind's (over the
    bundle's measured ``fusion.kind_weights``); None when every factor is 1."""
    kind_names = bundle.kind_names
    unknown = [x for x in kind_weights or {} if x not in kind_names]
    if unknown:
        raise UsageError(f"unknown kind {', '.join(map(repr, unknown))} in {label}; "
                         f"this bundle has: {', '.join(kind_names)}")
    kinds = {x: w for x, w in {**settings.kind_weights(bundle), **(kind_weights or {})}.items()
             if x in kind_names and w != 1}
    if not source_weights and not kinds:
        return None
    per_source = per_kind = None
    if source_weights:
        per_source = np.ones(len(bundle.source_names), dtype=np.float64)
        for s, w in source_weights.items():
            per_source[bundle.source_names.index(s)] = w
    if kinds:
        per_kind = np.ones(len(kind_names) + 1, dtype=np.float64)  # the last: rows with no kind (code -1)
        for x, w in kinds.items():
            per_kind[kind_names.index(x)] = w
    return KeyWeights(bundle.source_codes, bundle.kind_codes, per_source, per_kind)


# ------------------------------------------------------------------------------ filters

class Masks:
    """A bundle's source/kind masks, the last ``MASKS_KEPT`` kept (a filter a client repeats costs
    one pass over the codes once)."""

    def __init__(self, bundle) -> None:
        self._kept = Kept(lambda key: source_kind_mask(bundle, *key), MASKS_KEPT)

    def get(self, include: tuple, exclude: tuple, kinds: tuple) -> np.ndarray:
        return self._kept((include, exclude, kinds))


def source_kind_mask(bundle, include: tuple, exclude: tuple, kinds: tuple) -> np.ndarray:
    """Which of ``bundle``'s documents are of a source in ``include`` (any, when empty) and not in
    ``exclude``, and of a kind in ``kinds`` (any, when empty): a read-only boolean array over keys."""
    allowed = np.ones(len(bundle), dtype=bool)
    if include:
        allowed &= np.isin(bundle.source_codes, [bundle.source_names.index(s) for s in include])
    if exclude:
        allowed &= ~np.isin(bundle.source_codes, [bundle.source_names.index(s) for s in exclude])
    if kinds:
        allowed &= np.isin(bundle.kind_codes, [i for i, n in enumerate(bundle.kind_names) if n in kinds])
    allowed.setflags(write=False)
    return allowed


def make_filters(bundle, masks: Masks, sources: Sequence[str] = (), exclude_sources: Sequence[str] = (),
                 kinds: Sequence[str] = (), paper: PaperFilter | None = None, mask: np.ndarray | None = None) -> Filters:
    """Checked filter values (``SearchRequest``) as the ``Filters`` every channel applies. Sources
    must be the bundle's; ``mask``: a boolean array over document keys of the caller's own (the
    formal tools' module filter)."""
    include, exclude, kinds = tuple(sources), set(exclude_sources), tuple(kinds)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != bool or mask.shape != (len(bundle),):
            raise UsageError(f"mask must be a boolean array of length {len(bundle)}")
    if not include and not exclude and not kinds and paper is None and mask is None:
        return Filters()
    if paper is None and mask is None:
        allowed = masks.get(include, tuple(sorted(exclude)), kinds)
    else:
        allowed = np.ones(len(bundle), dtype=bool) if paper is None else bundle.paper_columns.mask(paper)
        if mask is not None:
            allowed &= mask
        allowed &= masks.get(include, tuple(sorted(exclude)), kinds)
    if exclude:
        include = tuple(s for s in include if s not in exclude)
    return Filters(include, tuple(sorted(exclude)), kinds, allowed, paper, custom=mask is not None)


# ------------------------------------------------------------------------------ the plan

def make_plan(bundle, req: SearchRequest, *, masks: Masks, vectors, findings: Any = None) -> Plan:
    """Fit ``req`` to ``bundle``: every check that needs the bundle, the filters, weights, priors,
    depth and the findings' part (``findings``: a findings store, or None)."""
    from mathlas.findings import KIND as F_KIND
    from mathlas.findings import SOURCE as F_SOURCE

    with_findings = findings is not None
    labels = req.labels
    check_sources(bundle, req.sources, labels["sources"], with_findings)
    check_sources(bundle, req.exclude_sources, labels["exclude_sources"], with_findings)
    check_kinds(bundle, req.kinds, labels["kinds"], with_findings)
    weights = dict(req.source_weights or {})
    check_sources(bundle, weights, labels["source_weights"], with_findings)
    priors = prior_weights(bundle, req.priors)
    f_weight = weights.pop(F_SOURCE, 1.0) if with_findings else 0.0
    use_findings = (with_findings and f_weight > 0 and F_SOURCE not in req.exclude_sources
                    and req.paper is None and req.mask is None
                    and (not req.sources or F_SOURCE in req.sources) and (not req.kinds or F_KIND in req.kinds))
    include = tuple(s for s in req.sources if s != F_SOURCE)
    kinds = tuple(x for x in req.kinds if x != F_KIND) if with_findings else req.kinds
    # only findings asked for (by source or kind): the bundle's channels have nothing to add
    bundle_part = not ((req.sources and not include) or (req.kinds and not kinds))
    exclude = set(s for s in req.exclude_sources if s != F_SOURCE) | {s for s, w in weights.items() if w == 0}
    # a misspelt name word is searched as the name word it is within two edits of (mathlas.ranking.names)
    correction = correction_for(bundle, req.query) if bundle_part else None
    asked = correction.query if correction is not None else req.query
    text, used = expand_for(bundle, asked)
    declared = settings.definition_intent(bundle) if bundle_part else None  # the manifest first: most bundles have none
    intent = declared if declared and definition_intent(asked) else None
    kind_names = bundle.kind_names
    if intent:  # a noun phrase: definitions first, and "how much is built on this" counts more
        favoured = {x: intent["factor"] for x in intent["kinds"] if x in kind_names}
        kind_weights = {**favoured, **(req.kind_weights or {})}
        priors = {n: w * intent["prior_factor"] for n, w in priors.items()}
    else:
        kind_weights = req.kind_weights
    kw = key_weights(bundle, weights, kind_weights, labels["kind_weights"])
    about = bundle.about_keys if bundle_part else None
    rerank_depth = bundle_rerank_depth(bundle, req)
    extra = None
    if use_findings:
        from mathlas.findings.search import FindingsDocuments

        extra = FindingsDocuments(findings, base=len(bundle), encoder=bundle.encoder_fingerprint,
                                  lexical=lambda: bundle.lexical, encode=bundle.encoder.encode_documents)
        extra = extra if len(extra) else None
    if extra is not None:
        kw = kw or KeyWeights(bundle.source_codes, bundle.kind_codes, None, None)
        kw.extra = f_weight
    # Fusion, priors and the statement-first rule need candidates beyond k: each channel then
    # ranks FUSION_DEPTH deep whatever k is, so ranks and order do not depend on k.
    deep = req.mode == "hybrid" or kw is not None or bool(priors) or use_findings or about is not None
    top = req.k + req.offset
    reach = max(top, rerank_depth)  # ranked through (and reranked), offset hits skipped
    depth = min(max(reach, FUSION_DEPTH), MAX_K) if deep else reach
    filters = make_filters(bundle, masks, include, sorted(exclude), kinds, req.paper, req.mask) if bundle_part \
        else Filters()
    fusion = settings.fusion(bundle)
    channel_weights = dict(fusion["weights"] if req.channel_weights is None else req.channel_weights)
    return Plan(request=req, query=Query(text, vectors, req.pool), channels=MODE_CHANNELS[req.mode],
                channel_weights=channel_weights, k_rrf=float(fusion["k_rrf"] if req.k_rrf is None else req.k_rrf),
                filters=filters, bundle_part=bundle_part, key_weights=kw, priors=priors, depth=depth, top=top,
                rerank_depth=rerank_depth, about=about, extra=extra, extra_weight=f_weight,
                intent="definition" if intent else None, expansions=used,
                correction=correction if correction is not None and (correction.corrected or correction.note) else None)


def bundle_rerank_depth(bundle, req: SearchRequest) -> int:
    """How many fused hits the reranker rescores for ``req`` (0: it does not rerank)."""
    from mathlas.bundle import DEFAULT_RERANK_TOP_N

    declared = bundle.manifest.reranker or {}
    if not (declared.get("default", False) if req.rerank is None else req.rerank):
        return 0
    if not declared:
        raise UsageError(f"bundle {bundle.label} has no reranker; search without rerank "
                         f"(`mathlas-build add-reranker` adds one to a bundle you built)")
    return int(declared.get("top_n", DEFAULT_RERANK_TOP_N))
