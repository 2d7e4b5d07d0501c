"""The embedded default bundle, installed from artifacts/ the way a user's first search does."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import mathlas
from mathlas.releases.install import DEFAULT_BUNDLE, installed


def test_first_use_installs_the_shipped_default(default_bundle_dir):
    assert default_bundle_dir.name.startswith(DEFAULT_BUNDLE + "-")
    assert any(b.path == default_bundle_dir for b in installed())
    m = mathlas.verify(default_bundle_dir)  # full checksums
    assert set(m.sources) == {"stacks", "planetmath", "hott", "openlogic", "napkin", "proofnet", "proofwiki", "metamath"}
    assert m.count > 25000
    for s in m.sources.values():
        assert s["license"] and s["attribution"]


def shown(hits) -> list[str]:
    """The ids a page of hits shows: each hit's own and those of the copies it lists as "also in" (the
    same theorem in other sources is one group, shown once: 1.4.0 shows Hilbert's basis theorem as
    Napkin's statement, "also in PlanetMath HilbertBasisTheorem")."""
    return [i for h in hits for i in (h.id, *(a["id"] for a in h.also_in))]


def test_readme_search_finds_nakayama(default_bundle_dir):
    from mathlas.request import SearchRequest
    from mathlas.service import search

    b = mathlas.open_bundle()
    assert b.root == default_bundle_dir
    # README: the dense channel ranks Nakayama's lemma first and BM25 misses it (not in its first 100).
    # RRF alone puts it eighth, right above its proof; from 1.4.0 the bundle's learned ranking stage
    # (docs/ranking.md) puts it first, its proof (the statement link) well below it.
    query = "a finitely generated module M over a local ring with M = mM is zero"
    hits = b.search(query, k=20)
    ids = [h.id for h in hits]
    assert ids[0] == "planetmath:NakayamasLemma", ids[:10]
    assert hits[0].ranks.get("dense") == 1 and hits[0].ranks.get("lexical") is None
    # its proof (the statement link) below it, out of the first page (13th on 1.4.0, 27th on 1.5.0)
    assert "planetmath:13C99-ProofOfNakayamasLemma" in [h.id for h in b.search(query, k=40)][10:]
    assert "stacks:09B9" in ids[:7]   # the Stacks lemma that generalises it (derived complete, M/IM = 0; 7th on 1.6.1)
    # the learned stage is what lifts it: RRF alone (a request that sets k_rrf keeps RRF) ranks it lower
    # (eighth on 1.3.0, fourth on 1.5.0's texts)
    rrf = [h.id for h in search(SearchRequest.make(query, 10, k_rrf=60), findings=False).hits]
    assert rrf.index("planetmath:NakayamasLemma") >= 3, rrf
    assert "stacks:00DV" in shown(b.search("Nakayama's lemma", k=5))   # Stacks' own, "also in" the first hit


@pytest.mark.parametrize("query, target", [
    ("Hilbert basis theorem", "planetmath:HilbertBasisTheorem"),
    ("Hedberg's theorem: a type with decidable equality is a set", "hott:thm:hedberg"),
    ("Munkres: the rationals are not locally compact", "proofnet:Munkres|exercise_29_1"),
])
def test_known_statements_rank_first_page(query, target):
    ids = shown(mathlas.open_bundle().search(query, k=10))
    assert target in ids, ids


@pytest.mark.slow
def test_cli_search_on_default(default_bundle_dir):
    p = subprocess.run([sys.executable, "-m", "mathlas", "search", "Nakayama lemma", "-k", "3", "--json"],
                       capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["bundle"].startswith(DEFAULT_BUNDLE) and len(data["hits"]) == 3
