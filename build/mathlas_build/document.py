"""The one record every source reader yields."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Document:
    """One statement (theorem, lemma, definition, ...) from one source.

    ``id`` follows the stable-id table of DESIGN.md exactly (``stacks:<TAG>``, ``hott:<label>``...).
    ``body`` is the raw source text (LaTeX or Lean); ``statement`` is that body turned into readable
    words by ``mathlas_build.latex.latex_to_text`` with the source's own macros expanded. The retrieval
    text that gets embedded and indexed is assembled later from name, context, slogan and statement.
    """

    id: str
    source: str              # short source key: stacks, planetmath, hott, openlogic, napkin, proofnet, ...
    kind: str                # theorem, lemma, proposition, corollary, definition, axiom, exercise, ...
    name: str                # the statement's own name: "[Nakayama's lemma]" title, PlanetMath title, label words
    title: str               # where it lives: "Commutative Algebra > Nakayama's lemma" (chapter > section)
    body: str                # raw LaTeX / Lean of the statement
    statement: str           # body as readable words (macros expanded, LaTeX commands turned into words)
    link: str = ""
    license: str = ""
    slogan: str = ""         # a one-line natural-language summary when the source has one
    keywords: list[str] = field(default_factory=list)  # extra words: PlanetMath \pmdefines, synonyms, MSC names
    file: str = ""           # path relative to the source root
    line: int = 0            # 1-based line of the statement's start in ``file``
    extra: dict = field(default_factory=dict)  # source-specific scalar fields (msc, label, ...)
