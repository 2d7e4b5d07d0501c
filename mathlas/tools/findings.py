"""``add_finding``: keep a result the agent found on the web, searchable at once by search_existing_math.

The store is ``mathlas.findings.store`` (``data_dir()/findings/findings.jsonl``). Importing this module is
light: the store, numpy and any encoder load inside the call.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from mathlas.service import NextStep

log = logging.getLogger(__name__)


@dataclass
class FindingResult:
    """The finding as stored. ``added`` is false when the same statement (same content hash) was
    already stored: ``duplicate`` is then true and the fields are the stored finding's. ``vector``
    tells whether a dense vector is stored for it (else ``mathlas findings reindex`` adds one)."""

    id: str
    statement: str
    source_url: str
    name: str
    slogan: str
    added_at: str        # UTC, ISO 8601
    provenance: str
    added: bool
    duplicate: bool
    vector: bool
    store: str           # the findings file
    next: list[NextStep] = field(default_factory=list)


def _embed_now(store, finding) -> bool:
    """Embed ``finding`` with an already loaded encoder (never load one: adding must stay fast)."""
    from mathlas.engine import OPEN_BUNDLES

    loaded = [b for b in OPEN_BUNDLES.loaded() if b.model_loaded]
    if not loaded:
        return False
    vec = store.vectors()
    # keep one encoder per sidecar: prefer the encoder whose vectors are already there
    if vec is not None:
        loaded.sort(key=lambda b: b.encoder_fingerprint != vec[2])
        if loaded[0].encoder_fingerprint != vec[2]:
            return False
    try:
        store.embed(loaded[0], [finding])
    except Exception as e:  # noqa: BLE001 - the finding is stored; only its vector is missing
        log.warning("mathlas: findings: no vector for %s (%s: %s); `mathlas findings reindex` adds it",
                    finding.id, type(e).__name__, e)
        return False
    return True


def add_finding(statement: str, source_url: str, name: str | None = None,
                slogan: str | None = None) -> FindingResult:
    """Save a result found on the web: search_existing_math returns it from now on (source
    "findings") with its link. The same statement is stored once. For checked results, not your
    own conjectures.

    Args:
        statement: as its source writes it (prose or LaTeX).
        source_url: where you read it.
        name: its usual name, e.g. "Nakayama's lemma".
        slogan: one line on what it is good for.
    """
    from mathlas.findings.store import open_store

    store = open_store()
    finding, added = store.add(statement, source_url, name=name, slogan=slogan)
    vec = store.vectors()
    has_vector = vec is not None and finding.id in vec[0]
    if added and not has_vector:
        has_vector = _embed_now(store, finding)
    query = finding.name or finding.slogan or finding.statement[:200]
    steps = [NextStep("search_existing_math", {"query": query},
                      "related statements in the bundle, with this finding among them")]
    return FindingResult(id=finding.id, statement=finding.statement, source_url=finding.source_url,
                         name=finding.name, slogan=finding.slogan, added_at=finding.added,
                         provenance=finding.provenance, added=added, duplicate=not added,
                         vector=has_vector, store=str(store.path), next=steps)
