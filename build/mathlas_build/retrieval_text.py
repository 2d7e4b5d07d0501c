"""Retrieval text: what gets embedded and indexed for a document.

mathlas calls no LLM, so the words a user might type have to come from the document's structure:
its own name, the source's slogan, the words it defines, the statement as words, and the chapter >
section it sits in. The most specific parts come first, because the encoder truncates the end.
"""
from __future__ import annotations

import re

from mathlas.bundle import symbol_words
from mathlas_build.document import Document
from mathlas_build.notation import notation_words

_MODULE_WORD = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|\.")


def _sentence(s: str) -> str:
    s = " ".join(s.split())
    return s if not s or s[-1] in ".:;!?" else s + "."


def module_words(module: str) -> str:
    """``Mathlib.NumberTheory.Padics.PadicVal`` -> ``Number Theory Padics Padic Val``."""
    return " ".join(w for w in _MODULE_WORD.split(module.removeprefix("Mathlib.")) if w)


def own_signature(x: dict) -> str:
    """A Lean declaration's signature without the section variables shown before it (``variables``):
    what the texts searched read. Searched with them too, the two formal dev sets pooled gave the same out
    of fold, and formal-dev lost .016 MRR@20 with the stage bundles carry (docs/formal.md, "Searched, or
    only shown?")."""
    sig = x.get("signature") or ""
    v = x.get("variables") or ""
    return sig[len(v):].strip() if v and sig.startswith(v) else sig


def lean_retrieval_text(doc: Document) -> str:
    """A Lean declaration: qualified name and its words, docstring, signature with its notation as
    Mathlib naming words, kind and the module as words (the encoder truncates from the end)."""
    x = doc.extra
    full = x.get("full_name") or doc.id.removeprefix("lean:")
    parts = [_sentence(f"{full}: {doc.name}")]
    if x.get("docstring"):
        parts.append(_sentence(x["docstring"]))
    sig = own_signature(x)
    if sig:
        parts.append(_sentence(sig))
        words = symbol_words(sig)
        if words:
            parts.append(_sentence("Notation: " + words))
    parts.append(_sentence(f"{doc.kind.capitalize()} in {module_words(x.get('module') or doc.title)}"))
    return " ".join(parts)


# BM25F-style weight of a Lean docstring inside the one BM25 field (its words counted this often):
# docstrings are written in the words users search with. MRR@20 on formal-dev, numpy BM25 with
# tantivy's k1/b: weight 1 .460, 2 .509, 3 .526, 4 .524 (docs/formal.md).
LEAN_DOCSTRING_WEIGHT = 3


def lexical_text(doc: Document, text: str) -> str:
    """The BM25 ``text`` field of a document whose embedded retrieval text is ``text``.

    For a Lean declaration: its name words, docstring (``LEAN_DOCSTRING_WEIGHT`` times) and
    signature only. The qualified name, notation words and module words that help the encoder put
    common words (``algebra``, ``mul``, ``eq``) into nearly every document and cost BM25 on
    shared/eval/formal-dev.jsonl (docs/formal.md). Other sources index the retrieval text itself."""
    if doc.source != "lean":
        return text
    x = doc.extra
    doc_text = _sentence(x["docstring"]) if x.get("docstring") else ""
    parts = (_sentence(doc.name), *([doc_text] * LEAN_DOCSTRING_WEIGHT), _sentence(own_signature(x)))
    return " ".join(p for p in parts if p)


def retrieval_text(doc: Document) -> str:
    if doc.source == "lean":
        return lean_retrieval_text(doc)
    parts = []
    head = str(doc.extra.get("indexed_name") or doc.name).strip()   # Stacks: the label's own words
    if head:
        parts.append(_sentence(head))
    if doc.slogan.strip():
        parts.append(_sentence(doc.slogan))
    if doc.keywords:
        words = [k for k in dict.fromkeys(w.strip() for w in doc.keywords) if k and k.lower() != head.lower()]
        if words:
            parts.append(_sentence("Defines " + ", ".join(words)))
    if doc.statement.strip():
        parts.append(_sentence(doc.statement))
        implied = notation_words(doc.statement)
        if implied:
            parts.append(_sentence("Notation: " + ", ".join(implied)))
    where = str(doc.extra.get("context_title") or doc.title).strip()   # a reader whose title is not the place
    if where:
        parts.append(_sentence("In " + where))
    return " ".join(parts)


def alias_field(doc: Document) -> str:
    """The lexical ``alias`` field: names people use for the statement that its own text lacks
    (Lean: the project's lists of named results and Stacks tags, mathlas_build.sources.lean_aliases)."""
    return str(doc.extra.get("aliases") or "")


def context_field(doc: Document) -> str:
    """The lexical ``context`` field of a Lean declaration: what a ``def`` is (its value), a
    structure's fields, its binders as words (``[Group G]`` -> "G is a group") and its notation as
    words (``∫⁻`` -> "lower Lebesgue integral"). Empty for other sources (their statements are words
    already)."""
    if doc.source != "lean":
        return ""
    from mathlas.lean_gloss import binder_words, notation_gloss

    x = doc.extra
    sig = own_signature(x)
    value = x.get("value") or ""
    parts = [value, x.get("fields") or "", *binder_words(sig), " ".join(notation_gloss(f"{sig} {value}"))]
    return " ".join(_sentence(p) for p in parts if p and p.strip())


def gloss_field(doc: Document) -> str:
    """The lexical ``gloss`` field of a Lean declaration: the definitions its statement mentions, by
    name or through the project's notation, with their docstrings' first sentences
    (``extra["context"]``, mathlas_build.sources.lean_aliases.DefinitionGlossary)."""
    return str(doc.extra.get("context") or "") if doc.source == "lean" else ""


def name_field(doc: Document) -> str:
    """The lexical ``name`` field: the statement's name and the words it defines."""
    if doc.source == "lean":
        return " ".join(filter(None, [doc.extra.get("full_name", ""), doc.name])).strip()
    return " ".join([str(doc.extra.get("indexed_name") or doc.name), *doc.keywords]).strip()
