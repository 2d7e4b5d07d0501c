"""search_directive's key terms, and mapping_scaffold's signature terms, follow a problem's mathematical noun
phrases (mathlas/tools/key_phrases.py).

Before, a phrase was the last three words of a run between stop words: "is every finitely generated flat
module over a local ring free?" gave "generated flat module", "local ring free" and the lone adverb
"finitely", and an arXiv query AND-ing them.
"""
from __future__ import annotations

import json
import re

import pytest

from mathlas.tools.key_phrases import (ADJECTIVES, COMPOUND_MODIFIERS, STOP, VERBS, is_adverb, key_phrases,
                                       noun_phrases)

FLAT = "is every finitely generated flat module over a local ring free?"

# problem -> its phrases (all of them, in order)
EXPECTED = {
    FLAT: ["finitely generated flat module", "local ring"],
    "Is every compact Hausdorff space normal?": ["compact hausdorff space"],
    "Prove that every continuous function on a compact set is uniformly continuous.":
        ["continuous function", "compact set", "uniformly continuous"],
    "Let $M$ be a finitely generated $R$-module over a local ring with $\\mathfrak m M = M$. Prove that $M = 0$.":
        ["finitely generated module", "local ring"],
    "Is every simply connected compact 3-manifold homeomorphic to the 3-sphere?":
        ["simply connected compact manifold"],
    "Are there infinitely many primes $p$ such that $p+2$ is prime?": ["infinitely many primes"],
    "Is every locally compact Hausdorff topological group metrizable?":
        ["locally compact hausdorff topological group"],
    "Is the fundamental group of a compact Riemann surface of genus at least two residually finite?":
        ["fundamental group", "compact riemann surface", "residually finite"],
    "Is every countable dense subset of the real line order isomorphic to the rationals?":
        ["countable dense subset", "real line", "order isomorphic"],
    "Is every closed subspace of a reflexive Banach space reflexive?": ["closed subspace", "reflexive banach space"],
    "Is every projective module over a polynomial ring over a field free?": ["projective module", "polynomial ring"],
}

MORE = [
    "Does every bounded sequence of real numbers have a convergent subsequence?",
    "Does every finite group of odd order admit a solvable series?",
    "Let $G$ be a finite $p$-group. Show that the center of $G$ is nontrivial.",
    "Is every absolutely convergent series of complex numbers convergent?",
    "Does every separable Banach space have a Schauder basis?",
    "Is the ring of integers of a number field a Dedekind domain?",
    "Can a Noetherian local ring of dimension one fail to be Cohen-Macaulay?",
    "Does the Riemann zeta function have infinitely many zeros on the critical line?",
    "Prove that a uniformly continuous map on a totally bounded metric space extends to its completion.",
    "Find all integer solutions of $x^2 + y^2 = z^2$.",
    "Is every algebraically closed field of characteristic zero isomorphic to the complex numbers?",
    "Does every nonzero commutative ring have a maximal ideal?",
    "Is every path connected space locally path connected?",
    "Show that every finitely generated module over a PID is a direct sum of cyclic modules",
    "Which finitely presented groups have solvable word problem?",
    "Is every second countable regular space metrizable?",
    "When is a smooth projective variety over the complex numbers rational?",
    "How many Sylow 3-subgroups does a simple group of order 168 have?",
]


def _plain(text: str) -> str:
    """The problem as the phrases may quote it: lower case, math that prefixes a word dropped
    ("$R$-module" -> "module"), other math and punctuation as breaks."""
    text = re.sub(r"(\$[^$]+\$|\d+)-(?=[A-Za-z])", "", text.lower().replace("’", "'"))
    return " " + re.sub(r"\$[^$]*\$|[^\w'\- ]+", " | ", text) + " "


def _is_verb_or_stop(w: str) -> bool:
    return w in STOP or w in VERBS


@pytest.mark.parametrize("problem", list(EXPECTED) + MORE)
def test_phrases_are_noun_phrases_of_the_text(problem):
    phrases, singles = noun_phrases(problem)
    plain = _plain(problem)
    for p in phrases:
        ws = p.split()
        assert 2 <= len(ws) <= 5, p
        assert not _is_verb_or_stop(ws[0]) and not _is_verb_or_stop(ws[-1]), p
        assert not is_adverb(ws[-1]), p                       # "... finitely" never ends a phrase
        assert f" {p} " in " ".join(plain.split()).join("  "), (p, plain)   # contiguous in the text
        # a noun phrase does not end with a predicate glued on ("local ring free"), unless the phrase is a
        # modifier itself ("uniformly continuous", "order isomorphic", "residually finite")
        if ws[-1] in ADJECTIVES:
            assert is_adverb(ws[-2]) or tuple(ws[-2:]) in COMPOUND_MODIFIERS, p
    for w in singles:
        assert " " not in w and not _is_verb_or_stop(w) and not is_adverb(w), w
    terms = key_phrases(problem)
    assert len(terms) == len(set(terms)) <= 12


@pytest.mark.parametrize("problem, expected", list(EXPECTED.items()))
def test_expected_phrases(problem, expected):
    assert noun_phrases(problem)[0] == expected


def test_the_flat_module_question():
    assert key_phrases(FLAT) == ["finitely generated flat module", "local ring", "flat", "module", "local", "ring",
                                 "free"]
    assert "finitely" not in key_phrases(FLAT)     # no lone adverb
    assert ("path", "connected") in COMPOUND_MODIFIERS
    assert noun_phrases("Is every path connected space locally path connected?")[0] == ["path connected space",
                                                                                         "locally path connected"]


def test_mapping_scaffold_terms_are_the_key_phrases():
    # one rule for a problem's key terms: mapping_scaffold's signature had its own (the last three words of a
    # run between stop words: "generated flat module", "local ring free", the lone adverb "finitely")
    from mathlas.tools.scaffold import mapping_scaffold

    m = mapping_scaffold(FLAT, "Let $R$ be a local ring. Then every finitely generated projective $R$-module is free.")
    assert m.problem_signature.terms == key_phrases(FLAT)
    assert m.problem_signature.terms[:2] == ["finitely generated flat module", "local ring"]


def test_directive_queries_follow_the_phrases(default_bundle_dir, capsys):
    from mathlas.cli.main import main

    assert main(["directive", FLAT, "--bundle", str(default_bundle_dir), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["key_terms"][:2] == ["finitely generated flat module", "local ring"]
    queries = [q["query"] for q in out["arxiv_queries"]]
    assert queries[0] == 'abs:"finitely generated flat module" AND abs:"local ring" AND abs:free'
    assert not any("finitely" in q and '"finitely' not in q for q in queries)   # no all:finitely
    assert not any("local ring free" in q or '"generated flat' in q for q in queries)
    assert main(["directive", FLAT, "--bundle", str(default_bundle_dir)]) == 0
    out = capsys.readouterr().out
    assert "key terms: finitely generated flat module, local ring, flat, module, local, ring, free" in out
    assert '  abs:"finitely generated flat module" AND abs:"local ring" AND abs:free\n' in out
