"""Ids as people type them in a search: a document's id inside a phrase, a Stacks tag without its prefix.

``NameIndex.exact`` answers a query that is an id (``stacks:00DV``, in any case where no other id
differs from it only in case). People also write "what does Stacks tag 00DV say?", "tag 00DV",
"Stacks Project tag 0AG0", "stacks 00dv", a bare "00DV", or "see stacks:00dv for the proof".
``mentioned_ids`` reads those as the ids they are, for the name stage (``NameMatch``), which puts the
document first, and for ``named_first``, which makes such an answer one by name (``match: strong``):

* a word of the query that is an id (``source:local``, any case as ``NameIndex.exact`` allows,
  punctuation around it left out);
* a word of four letters and digits that is a Stacks tag the bundle holds (``stacks:`` + the word
  in capitals), when the query gives a reason to read it so: it says "Stacks", "tag" or "tags", or
  the word is the whole query and written as the Stacks Project writes its tags (capitals and at
  least one digit: ``00DV``, not ``00dv`` or ``RING``). A word of letters only is a tag only in
  capitals: "ring" in "Stacks tag ring" is a word, whatever tags a bundle holds. A four-character
  word ("ring", "2024", "A4B5") is never read as a tag the bundle lacks.

No model, no I/O: a regular expression and a binary search over the sorted ids a word.
"""
from __future__ import annotations

import re
from typing import Any

STACKS_PREFIX = "stacks:"
# A ProofWiki page's id is a uuid no one reads: an "also in" line names the page by its first SHORT_ID
# characters (``short_id``, mathlas.groups.also_in_line), and ``Bundle.key_of`` takes any start of that
# length or longer that begins one id. Not for names: "lean:Nat.Prime.two_l" is another declaration's.
SHORT_ID_SOURCES = frozenset({"proofwiki"})
SHORT_ID = 8


def short_id(doc_id: str) -> str | None:
    """The start of ``doc_id`` after its source that names it (``952b3052`` for
    ``proofwiki:952b3052-879d-…``), for a source of ``SHORT_ID_SOURCES``; None for the others."""
    source, _, rest = doc_id.partition(":")
    return rest[:SHORT_ID] if source in SHORT_ID_SOURCES else None
# the words that say a four-character word is a Stacks tag ("Stacks Project tag 0AG0")
TAG_WORDS = frozenset({"stacks", "tag", "tags"})
_TAG = re.compile(r"[0-9A-Za-z]{4}")
_TAG_SHAPE = re.compile(r"(?=.*\d)[0-9A-Z]{4}")  # as the Stacks Project writes a tag, a digit in it
_ID = re.compile(r"[A-Za-z][\w-]*:\S+")   # source:local
# what may stand around a word without being part of it: quotes, brackets, the end of a sentence
_OPEN = "`'\"([{<"
_CLOSE = "`'\")]}>.,;:?!"
# Only the first words of a long query are looked at (a pasted statement names no id)
MAX_WORDS = 64


def mentioned_ids(index: Any, query: str) -> list[int]:
    """The keys of the documents ``query`` names by id or Stacks tag (see the module docstring), in
    the order it names them; [] when it names none. ``index`` is the bundle's ``NameIndex``
    (``exact(id)``: the keys of that id)."""
    words = query.split()[:MAX_WORDS]
    plain = [w.strip(_OPEN).rstrip(_CLOSE) for w in words]
    said = {w.lower() for w in plain} & TAG_WORDS
    whole = len(plain) == 1
    keys: list[int] = []
    for typed, word in zip(words, plain):
        found: list[int] = []
        if ":" in typed and _ID.fullmatch(typed.strip(_OPEN)):
            # the word as typed first ("hott:setmath:28" ends with a colon-free part; "#1" stays)
            found = index.exact(typed.strip(_OPEN)) or index.exact(word)
        elif _TAG.fullmatch(word) and (said or (whole and _TAG_SHAPE.fullmatch(word))):
            if not word.isalpha() or word.isupper():
                found = index.exact(STACKS_PREFIX + word.upper())
        keys += [k for k in found if k not in keys]
    return keys
