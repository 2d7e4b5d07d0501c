"""Statement links: the ``about`` column ties a proof or an example entry to the statement it
proves or illustrates, so that search can show the statement first (``mathlas.engine``).

A source's entries are linked by their names, inside the source: an entry named "proof of X"
("another proof of X", "proof of the X (alternative)") proves the entry named X, and one named
"example(s) of X" illustrates it. Names are compared up to case, punctuation, spacing and a
leading "the"; a name that several entries of the source share links nothing (no guessing), and
an entry never links to another proof or example. PlanetMath entries whose title does not match
are linked by canonical name instead ("proof of arithmetic-geometric means inequality" ->
``ArithmeticGeometricMeansInequality``, ``ProofOfEulerFermatTheorem`` -> ``EulerFermatTheorem``).
The training pairs (``training.pairs``) use the same "proof of X" rule.
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Sequence

from mathlas_build.document import Document

COLUMN = "about"

_LEAD = r"^(?:an?\s+|another\s+|alternative\s+|alternate\s+|second\s+|third\s+)?"
_TAIL = r"(?:\s*\(.*\))?$"
PROOF_OF = re.compile(_LEAD + r"proofs?\s+(?:of|for)\s+(?:the\s+)?(.+?)" + _TAIL, re.I)
EXAMPLE_OF = re.compile(r"^(?:an?\s+|some\s+|more\s+|further\s+)?examples?\s+of\s+(?:the\s+)?(.+?)" + _TAIL, re.I)
# kinds that are about another entry, never the statement a link points to
NOT_STATEMENTS = frozenset({"proof", "example", "biography", "bibliography", "data structure"})
_WORD = re.compile(r"[^\W_]+")


def name_key(name: str) -> str:
    """What two names share when they name the same thing (case, punctuation, a leading "the")."""
    return " ".join(_WORD.findall(re.sub(r"^the\s+", "", name.strip(), flags=re.I).lower()))


def is_statement(doc: Document) -> bool:
    return doc.kind not in NOT_STATEMENTS and not PROOF_OF.match(doc.name.strip()) \
        and not EXAMPLE_OF.match(doc.name.strip())


def named_target(doc: Document) -> str | None:
    """The name of the statement ``doc`` proves or illustrates, from its own name (None: neither)."""
    name = doc.name.strip()
    m = PROOF_OF.match(name) or (EXAMPLE_OF.match(name) if doc.kind == "example" else None)
    return m.group(1) if m else None


def link_statements(docs: Sequence[Document]) -> int:
    """Set ``extra["about"]`` (the statement's id) on every proof or example entry that names one
    statement of its source; returns how many were linked."""
    n = 0
    for doc, statement in _links(docs, examples=True, canonical=True):
        doc.extra[COLUMN] = statement.id
        n += 1
    return n


def _squash(text: str) -> str:
    return "".join(_WORD.findall(text.lower()))


def _links(docs: Sequence[Document], *, examples: bool, canonical: bool) -> Iterator[tuple[Document, Document]]:
    by_name: dict[tuple[str, str], list[Document]] = defaultdict(list)
    by_canonical: dict[tuple[str, str], list[Document]] = defaultdict(list)
    for d in docs:
        if is_statement(d):
            by_name[(d.source, name_key(d.name))].append(d)
            cn = d.extra.get("canonicalname") if canonical else None
            if cn:
                by_canonical[(d.source, _squash(cn))].append(d)
    for d in docs:
        name = d.name.strip()
        m = PROOF_OF.match(name) or (EXAMPLE_OF.match(name) if examples and d.kind == "example" else None)
        if not m:
            continue
        found = by_name.get((d.source, name_key(m.group(1))), [])
        if not found and canonical:  # "proof of arithmetic-geometric means inequality" -> ArithmeticGeometricMeansInequality
            found = by_canonical.get((d.source, _squash(m.group(1))), [])
            own = d.extra.get("canonicalname") or ""
            stripped = re.sub(r"^(?:Proofs?|Examples?)(?:Of|That)", "", own)
            if not found and stripped != own:  # ProofOfEulerFermatTheorem -> EulerFermatTheorem
                found = by_canonical.get((d.source, _squash(stripped)), [])
        if len(found) == 1 and found[0] is not d:
            yield d, found[0]
