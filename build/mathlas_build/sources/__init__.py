"""Source readers: one module per corpus, each exposing

    SOURCE: str          the source key used in ids and the manifest ("stacks", ...)
    LICENSE: str         SPDX-like license name
    ATTRIBUTION: str     one line naming the work, its authors and origin
    read(root: Path, **options) -> Iterator[Document]

and yielding ``mathlas_build.document.Document`` records with stable ids (DESIGN.md).
"""
from __future__ import annotations

import importlib
from types import ModuleType

READERS = {
    "stacks": "mathlas_build.sources.stacks",
    "planetmath": "mathlas_build.sources.planetmath",
    "hott": "mathlas_build.sources.hott",
    "openlogic": "mathlas_build.sources.openlogic",
    "napkin": "mathlas_build.sources.napkin",
    "proofnet": "mathlas_build.sources.proofnet",
    "proofwiki": "mathlas_build.sources.proofwiki",
    "metamath": "mathlas_build.sources.metamath",
    "generic": "mathlas_build.sources.generic",
    "lean": "mathlas_build.sources.lean",
    "theoremsearch": "mathlas_build.sources.theoremsearch",
}


def reader(kind: str) -> ModuleType:
    """The reader module for a source kind named in a recipe."""
    if kind not in READERS:
        raise ValueError(f"unknown source reader {kind!r}; known: {', '.join(sorted(READERS))}")
    return importlib.import_module(READERS[kind])
