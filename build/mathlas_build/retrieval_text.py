"""Retrieval text: what gets embedded and indexed for a document.

mathlas calls no LLM, so the words a user might type have to come from the document's structure:
its own name, the source's slogan, the words it defines, the statement as words, and the chapter >
section it sits in. The most specific parts come first, because the encoder truncates the end.
"""
from __future__ import annotations

from mathlas_build.document import Document
from mathlas_build.notation import notation_words


def _sentence(s: str) -> str:
    s = " ".join(s.split())
    return s if not s or s[-1] in ".:;!?" else s + "."


def retrieval_text(doc: Document) -> str:
    parts = []
    head = doc.name.strip()
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
    if doc.title.strip():
        parts.append(_sentence("In " + doc.title.strip()))
    return " ".join(parts)


def name_field(doc: Document) -> str:
    """The lexical ``name`` field: the statement's name and the words it defines."""
    return " ".join([doc.name, *doc.keywords]).strip()
