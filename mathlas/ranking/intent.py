"""Definition intent: does a query ask what something *is* rather than what is true of it?

"positive divisors of a natural number", "deterministic finite automaton", "a poset with binary joins
and meets" name a concept; the lemmas about it share their words and outnumber it, so they win on
words alone. A query with no claim in it (no verb of a statement, no relation symbol, no "theorem") is
a noun phrase; a bundle whose manifest declares ``fusion.definition_intent`` then weighs its
definitions, structures and classes up for such a query and gives "how much is built on this" (the
PageRank prior) more say (``mathlas.ranking.plan``). No model, no LLM: a fixed word list, below.
"""
from __future__ import annotations

import re

# words that make a query a claim (or ask for a result, not a concept)
CLAIM_WORDS = frozenset("""
is are was were be being been isn't aren't has have had holds hold equals equal implies imply iff
if then whenever exists exist there can cannot must should will not no never always only
converges converge diverges divides divide preserves preserve commutes commute vanishes vanish
contains contain satisfies satisfy admits admit lies lie maps map sends send factors splits agrees
agree coincides coincide tends tend gives give yields yield becomes become remains stays
theorem lemma proposition corollary formula inequality identity law rule criterion conjecture
equation estimate bound lower upper
""".split())
# a relation between two things is a claim
RELATIONS = re.compile(r"[=≠≤≥<>↔⇔→⟹⊆⊂⊇∣≡≃≅≈∈∉]|\\(?:le|leq|ge|geq|ne|neq|to|subseteq|subset|in|cong|simeq|"
                       r"equiv|mid|iff|implies|Rightarrow|Leftrightarrow)\b|\s-->?\s")
# how many there are is a claim ("infinitely many primes", "at most one fixed point"), though it has no
# verb; "finitely generated module" names a concept and stays one
COUNTS = re.compile(r"\b(?:in|un)?(?:finitely|countably)\s+many\b|\bat\s+(?:least|most)\b", re.IGNORECASE)
# "what is a group", "definition of a lattice": a concept asked for outright
ASKS_DEFINITION = re.compile(r"^\s*(?:what\s+is|what\s+are|define|definition\s+of|the\s+definition\s+of)\b",
                             re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")
# an identifier (``Nat.Prime``, ``two_le``): a name query, not a phrase
_CODE = re.compile(r"^\s*`?[\w.'!?]+`?\s*$")
MAX_WORDS = 16
MAX_CHARS = 200   # a noun phrase is short; a long query states something


def definition_intent(query: str) -> bool:
    """True when ``query`` reads as a noun phrase naming a concept (see the module docstring)."""
    q = query or ""
    if len(q) > MAX_CHARS or not q.strip() or (_CODE.match(q) and ("." in q or "_" in q)):
        return False
    if ASKS_DEFINITION.search(q):
        return True
    if RELATIONS.search(q) or COUNTS.search(q):
        return False
    words = [w.lower() for w in _WORD.findall(q)]
    if not words or len(words) > MAX_WORDS:
        return False
    return not any(w in CLAIM_WORDS for w in words)
