"""Words implied by standard notation, for retrieval text.

A statement written in notation shares no words with the query a mathematician types: "R[x] is
Noetherian" never says "polynomial ring", "H^i(X, F)" never says "cohomology", "Con_PA" never says
"consistency". This module names the concepts behind widespread, unambiguous notational
conventions, reading the statement after ``latex_to_text`` (macros expanded). The table is about
notation in general, not about particular statements; each entry must hold across sources.
"""
from __future__ import annotations

import re

# (pattern over the cleaned statement, words it implies)
_RULES: list[tuple[re.Pattern, str]] = [(re.compile(p), w) for p, w in [
    # rings and modules
    (r"\b[A-Za-z](?:_[\w{}]+)?\[\s*[A-Za-z](?:_[\w{}]+)?\s*(?:,[^\[\]]{0,40})?\]", "polynomial ring"),
    (r"\[\[\s*[A-Za-z](?:_[\w{}]+)?\s*(?:,[^\[\]]{0,40})?\]\]", "formal power series ring"),
    (r"\bkappa\s*\(", "residue field"),
    (r"\bSpec\s*\(?", "spectrum of a ring"),
    (r"\bProj\b", "projective spectrum"),
    (r"\bO_[A-Z]\b", "structure sheaf"),
    (r"\bZ\s*/\s*\(?[a-z0-9]+\s*Z\b|\bZ\s*/\s*[a-z0-9]\b", "integers modulo n"),
    (r"\bGL_", "general linear group"),
    (r"\bSL_", "special linear group"),
    (r"\bAut\s*\(", "automorphism group"),
    (r"\bGal\s*\(", "Galois group"),
    (r"\bHom\s*[_(]", "homomorphisms"),
    (r"\bEnd\s*[_(]", "endomorphisms"),
    (r"\bExt\s*[_^(]", "Ext groups"),
    (r"\bTor\s*[_^(]", "Tor groups"),
    (r"\bdim\b", "dimension"),
    (r"\bdepth\b", "depth"),
    (r"\bcolim\b", "colimit"),
    # cohomology
    (r"\bH\s*(?:_\{?\w+\}?)?\s*\^\s*\{?[0-9a-z*+-]{1,3}\}?\s*\(", "cohomology"),
    (r"\bH\s*_\s*\{?[0-9a-z]{1,3}\}?\s*\(", "homology"),
    (r"\bR\s*\^?\s*\{?[0-9a-z]\}?\s*[a-z]_\s*\*", "higher direct image"),
    (r"\bR\s*Gamma\b", "derived global sections"),
    (r"\b[a-z]_\s*\*\s*[A-Z]", "pushforward"),
    (r"\b[a-z]\s*\^\s*\*\s*[A-Z]|\b[a-z]\s*\^\s*\{?-1\}?\s*[A-Z]", "pullback"),
    (r"\bpi_\s*\{?1\}?\s*\(", "fundamental group"),
    (r"\bpi_\s*\{?n\}?\s*\(", "homotopy groups"),
    # logic and arithmetic
    (r"\bCon_", "consistency"),
    (r"\bPA\b", "Peano arithmetic"),
    (r"\bZFC?\b", "set theory"),
    (r"\bgcd\b", "greatest common divisor"),
    (r"\blcm\b", "least common multiple"),
    (r"\bphi\s*\(\s*n\s*\)", "Euler totient function"),
    (r"\bmod\b|\bpmod\b", "congruence"),
]]


def notation_words(statement: str) -> list[str]:
    """Concept words for the notation found in a cleaned statement, in table order, no repeats."""
    if not statement:
        return []
    return [w for rx, w in _RULES if rx.search(statement)]
