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


def test_readme_search_finds_nakayama(default_bundle_dir):
    b = mathlas.open_bundle()
    assert b.root == default_bundle_dir
    # README: the dense channel ranks Nakayama's lemma first; BM25 misses it (not in its first 100),
    # so with 1.3.0's vectors the fused ranking puts it in the top ten (eighth), lifted above its
    # proof (the statement link). 1.2.0 had it third: the README says so.
    hits = b.search("a finitely generated module M over a local ring with M = mM is zero", k=10)
    ids = [h.id for h in hits]
    nakayama = next(h for h in hits if h.id == "planetmath:NakayamasLemma")
    assert nakayama.ranks.get("dense") == 1 and nakayama.ranks.get("lexical") is None
    assert ids.index("planetmath:NakayamasLemma") < ids.index("planetmath:13C99-ProofOfNakayamasLemma")
    assert "stacks:09B9" in ids[:6]   # the Stacks lemma that generalises it (derived complete, M/IM = 0)
    assert "stacks:00DV" in [h.id for h in b.search("Nakayama's lemma", k=5)]


@pytest.mark.parametrize("query, target", [
    ("Hilbert basis theorem", "planetmath:HilbertBasisTheorem"),
    ("Hedberg's theorem: a type with decidable equality is a set", "hott:thm:hedberg"),
    ("Munkres: the rationals are not locally compact", "proofnet:Munkres|exercise_29_1"),
])
def test_known_statements_rank_first_page(query, target):
    ids = [h.id for h in mathlas.open_bundle().search(query, k=10)]
    assert target in ids


def test_cli_search_on_default(default_bundle_dir):
    p = subprocess.run([sys.executable, "-m", "mathlas", "search", "Nakayama lemma", "-k", "3", "--json"],
                       capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["bundle"].startswith(DEFAULT_BUNDLE) and len(data["hits"]) == 3
