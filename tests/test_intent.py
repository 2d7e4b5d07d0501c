"""Issue 22 part 1: a query that reads as a noun phrase asks for a definition (mathlas.ranking.intent), and a
bundle that declares ``fusion.definition_intent`` weighs its definitions up for it."""
from __future__ import annotations

import json
import shutil

import numpy as np

import pytest

from mathlas.errors import BundleCorruptError
from mathlas.ranking.intent import definition_intent
from mathlas.ranking.pipeline import pipeline_for
from mathlas.request import SearchRequest


@pytest.mark.parametrize("query", [
    "positive divisors of a natural number", "deterministic finite automaton", "lattice",
    "a poset with binary joins and meets", "Dirichlet series of an arithmetic function",
    "strictly increasing and limit-preserving on well-orders", "what is a group",
    "definition of a Noetherian ring", "a poset with `⊔` and `⊓`", "normal function",
])
def test_noun_phrases(query):
    assert definition_intent(query)


@pytest.mark.parametrize("query", [
    "every finite integral domain is a field", "Fundamental Theorem of Algebra",
    "the square root of 2 is irrational", "`⨆ i, ⨅ j, f i j ≤ ⨅ j, ⨆ i, f i j`", "$a \\le b$ implies $f a \\le f b$",
    "Nat.Prime.two_le", "there are infinitely many primes", "Cauchy-Schwarz inequality", "", "   ",
    "a group of prime order has no nontrivial subgroups", "x" * 5000,
])
def test_claims_names_and_code(query):
    assert not definition_intent(query)


def _with_intent(src, tmp_path, spec):
    root = tmp_path / src.name
    shutil.copytree(src, root)
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["fusion"] = {**manifest.get("fusion", {}), "definition_intent": spec}
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


def test_plan_weighs_definitions_for_a_noun_phrase(lean_project_bundle_dir, tmp_path):
    from mathlas.engine import Bundle

    spec = {"kinds": ["def", "structure"], "factor": 4.0, "prior_factor": 2.0}
    b = Bundle.open(_with_intent(lean_project_bundle_dir, tmp_path, spec))
    kinds = b.column("kind").to_pylist()
    pipeline = pipeline_for(b)
    plan = pipeline.plan(SearchRequest(query="even natural number"))
    assert plan.intent == "definition"
    weights = plan.key_weights(np.arange(len(b)))
    assert {float(w) for w, k in zip(weights, kinds) if k in ("def", "structure")} == {4.0}
    assert {float(w) for w, k in zip(weights, kinds) if k not in ("def", "structure")} == {1.0}
    claim = pipeline.plan(SearchRequest(query="the double of an even number is even"))
    assert claim.intent is None and claim.key_weights is None
    # the definition comes first for the noun phrase; the rule leaves the claim's ranking alone
    hits = b.search("even natural number", k=5)
    assert hits[0].id == "lean:Toy.IsEven"
    assert [h.kind for h in hits[:1]] == ["def"]


def test_bad_spec_is_refused(lean_project_bundle_dir, tmp_path):
    from mathlas.engine import Bundle

    b = Bundle.open(_with_intent(lean_project_bundle_dir, tmp_path, {"kinds": "def", "factor": 2}))
    with pytest.raises(BundleCorruptError, match="definition_intent"):
        pipeline_for(b).plan(SearchRequest(query="even natural number"))
