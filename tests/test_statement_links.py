"""Statement-first ranking: the build links proof and example entries to their statements (the
``about`` column) and search puts a statement right above the first proof of it that outranks it."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mathlas.ranking.candidates import Candidates, Fused
from mathlas.ranking.fusion import statements_first
from mathlas_build.document import Document
from mathlas_build.links import PROOF_OF, link_statements, name_key


def doc(i: str, name: str, kind: str = "theorem", source: str = "pm", **extra) -> Document:
    return Document(id=f"{source}:{i}", source=source, kind=kind, name=name, title="", body=name, statement=name,
                    extra=dict(extra))


def test_proof_of_names():
    assert PROOF_OF.match("proof of the Banach fixed point theorem").group(1) == "Banach fixed point theorem"
    assert PROOF_OF.match("another proof of Lucas's theorem (alternative)").group(1) == "Lucas's theorem"
    assert PROOF_OF.match("proofs for Pick's theorem").group(1) == "Pick's theorem"
    assert PROOF_OF.match("a proof that 2 is prime") is None
    assert name_key("The Banach  fixed-point theorem") == name_key("banach fixed point Theorem")


def test_link_statements_links_unique_names_within_a_source():
    docs = [doc("A", "Banach fixed point theorem"), doc("PA", "proof of the Banach fixed point theorem", "proof"),
            doc("PA2", "another proof of Banach fixed-point theorem", "proof"),
            doc("B", "Lucas's theorem"), doc("B2", "Lucas's theorem", "result"),  # two entries share the name
            doc("PB", "proof of Lucas's theorem", "proof"),
            doc("C", "group", "definition"), doc("EC", "examples of groups", "example"),
            doc("EC2", "examples of group", "example"), doc("FC", "examples of group", "feature"),
            doc("X", "proof of Zorn's lemma", "proof"),  # no such statement here...
            doc("Z", "Zorn's lemma", source="other"),  # ...nor across sources
            doc("EulerFermatTheorem", "Euler-Fermat theorem", canonicalname="EulerFermatTheorem"),
            doc("ProofOfEulerFermatTheorem", "proof of Euler's generalisation of Fermat", "proof",
                canonicalname="ProofOfEulerFermatTheorem")]
    assert link_statements(docs) == 4
    about = {d.id: d.extra.get("about") for d in docs}
    assert about["pm:PA"] == about["pm:PA2"] == "pm:A"
    assert about["pm:PB"] is None  # ambiguous: no guess
    assert about["pm:EC2"] == "pm:C" and about["pm:EC"] is None  # "groups" is not the name "group"
    assert about["pm:FC"] is None  # only example entries illustrate
    assert about["pm:X"] is None
    assert about["pm:ProofOfEulerFermatTheorem"] == "pm:EulerFermatTheorem"  # by canonical name
    assert all(about[d.id] is None for d in docs if d.kind not in ("proof", "example"))


def F(key: int, score: float) -> Fused:
    return Fused(key, score, {"lexical": key + 1, "dense": None})


def test_statements_first_lifts_moves_and_inserts():
    about = np.array([-1, 0, -1, 2, -1, 0])  # 1 and 5 prove 0; 3 illustrates 2
    fused = Candidates.from_rows([F(4, .9), F(1, .8), F(3, .7), F(0, .6), F(5, .5)])
    out = statements_first(fused, about)
    assert [f.key for f in out] == [4, 0, 1, 2, 3, 5]
    lifted = out[1]
    assert lifted.score == .8 and lifted.ranks == {"lexical": 1, "dense": None}  # its proof's score, its own ranks
    assert lifted.lifted_by == 1 and out[2].lifted_by == -1  # placed above hit key 1 (what the page says)
    assert out[3] == Fused(2, .7, {"lexical": None, "dense": None}, lifted_by=3)  # brought in: no channel ranked it
    assert out[4].key == 3 and np.isnan(out.raw[3]).all()
    # a statement already above its proof stays where it is; findings keys (past the array) have none
    assert [f.key for f in statements_first(Candidates.from_rows([F(0, .9), F(1, .8), F(9, .7)]), about)] == [0, 1, 9]
    # a filtered-out statement is not brought in
    allowed = np.array([True, True, False, True, True, True])
    assert [f.key for f in statements_first(fused, about, allowed)] == [4, 0, 1, 3, 5]
    assert [f.key for f in statements_first(fused, about, lambda keys: allowed[keys])] == [4, 0, 1, 3, 5]
    assert statements_first(fused, None) is fused
    assert [f.key for f in statements_first(fused, about, limit=3)] == [4, 0, 1]  # placed up to the answer's depth


@pytest.fixture(scope="module")
def linked_bundle(tmp_path_factory, encoder_dir):
    from mathlas_build.pipeline import build
    from mathlas_build.recipe import load_recipe

    tmp = tmp_path_factory.mktemp("linked")
    rows = [{"id": "nak", "name": "Nakayama's lemma", "kind": "theorem",
             "body": "Let M be a finitely generated module over a local ring with maximal ideal m. If mM = M then M = 0."},
            {"id": "proof-nak", "name": "proof of Nakayama's lemma", "kind": "proof",
             "body": "Nakayama's lemma: proof of Nakayama's lemma for a finitely generated module M with mM = M, "
                     "by the determinant trick of Nakayama's lemma."},
            {"id": "zorn", "name": "Zorn's lemma", "kind": "theorem",
             "body": "Every nonempty partially ordered set in which each chain has an upper bound has a maximal element."}]
    (tmp / "pm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    recipe = tmp / "linked.toml"
    recipe.write_text(f"""name = "linked"
version = "0.1.0"
[encoder]
path = "{encoder_dir.as_posix()}"
[[sources]]
reader = "generic"
path = "pm.jsonl"
options = {{ source = "pm", license = "CC0-1.0" }}
""")
    from mathlas.engine import open_bundle

    return open_bundle(build(load_recipe(recipe, tmp), tmp / "linked-0.1.0", cache_dir=None, quiet=True), shared=False)


def test_search_first_on_a_fresh_bundle_makes_its_links(linked_bundle):
    """The first search of a freshly opened bundle makes the links (about_keys), which makes the id
    order (key_of) under the same lazy-part lock: it must not wait on itself."""
    import threading

    from mathlas.engine import open_bundle

    fresh = open_bundle(linked_bundle.root, shared=False)
    got = []
    worker = threading.Thread(target=lambda: got.append([h.id for h in fresh.search("Nakayama's lemma", 2,
                                                                                    mode="lexical")]),
                              daemon=True)
    worker.start()
    worker.join(120)  # a deadlock never ends; the search itself takes milliseconds
    assert not worker.is_alive(), "the first search deadlocked"
    assert got == [["pm:nak", "pm:proof-nak"]]


def test_search_puts_the_statement_above_its_proof(linked_bundle):
    b = linked_bundle
    assert b.get("pm:proof-nak").fields["about"] == "pm:nak"
    q = "proof of Nakayama's lemma determinant trick"
    # lexically the proof wins: its text repeats the query's words
    assert [h.id for h in b.search(q, 3, mode="lexical")][:2] == ["pm:nak", "pm:proof-nak"]
    hits = b.search(q, 3, mode="lexical", kinds=["proof"])  # the filter keeps the statement out
    assert [h.id for h in hits] == ["pm:proof-nak"]
    hits = b.search(q, 1, mode="lexical")
    assert [h.id for h in hits] == ["pm:nak"] and hits[0].score == b.search(q, 2, mode="lexical")[1].score
    assert [h.id for h in b.search(q, 1, mode="lexical", offset=1)] == ["pm:proof-nak"]  # pages agree
    assert [h.id for h in b.search(q, 3, mode="lexical", kind_weights={"theorem": 0})] == ["pm:proof-nak"]
