"""Deprecated declarations and aliases (issue 31, item 17): the Lean reader records ``@[deprecated]``
(the note, the replacement) and what an ``alias`` stands for (its target, and the target's statement
as its signature, one direction of an ``↔`` for ``alias ⟨mp, mpr⟩``); the formal tools flag the
deprecated, rank them after their replacement and leave them out when asked."""
from __future__ import annotations

from pathlib import Path

import pytest

from mathlas_build.sources.lean import alias_signature, deprecation, read

SOURCE = '''namespace Foo
theorem sq_pos_iff {a : Int} : 0 < a ^ 2 ↔ a ≠ 0 := sorry
theorem bar : 1 = 1 := rfl
alias ⟨_, sq_pos_of_ne_zero⟩ := sq_pos_iff
alias pow_two_pos_of_ne_zero := sq_pos_of_ne_zero
@[deprecated (since := "2024-01-01")] alias baz := bar
@[deprecated bar (since := "2024-01-02")]
theorem qux : 1 = 1 := rfl
@[deprecated "Use simp" (since := "2024-02-01")]
theorem quux : 2 = 2 := rfl
@[deprecated Nat.not_here (since := "2024-03-01")]
theorem corge : 3 = 3 := rfl
theorem lt_iff (n : Nat) : ∀ m, n < m ↔ n + 1 ≤ m := sorry
alias ⟨of_lt, to_lt⟩ := lt_iff
alias ext := Nat.ext_not_read
end Foo
namespace CharTwo
theorem sq_injective : 4 = 4 := rfl
@[deprecated (since := "2026-02-05")] alias CommRing.sq_injective := sq_injective
end CharTwo
'''


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("deprecated")
    (root / "Foo").mkdir()
    (root / "Foo" / "A.lean").write_text(SOURCE, encoding="utf-8")
    return {d.id: d for d in read(Path(root), aliases=False)}


def test_alias_shows_the_statement_it_stands_for(docs):
    d = docs["lean:Foo.sq_pos_of_ne_zero"]
    # it showed `⟨_, sq_pos_of_ne_zero⟩` as its signature: now the mpr direction of sq_pos_iff
    assert d.extra["signature"] == "{a : Int} : a ≠ 0 → 0 < a ^ 2"
    assert d.extra["alias_of"] == "lean:Foo.sq_pos_iff" and d.extra["dependencies"] == ["Foo.sq_pos_iff"]
    assert d.body == "alias ⟨_, sq_pos_of_ne_zero⟩ := sq_pos_iff"  # as written
    assert "a ≠ 0 → 0 < a ^ 2" in d.statement  # what is searched
    # an alias of an alias: the same statement
    assert docs["lean:Foo.pow_two_pos_of_ne_zero"].extra["signature"] == "{a : Int} : a ≠ 0 → 0 < a ^ 2"
    assert docs["lean:Foo.baz"].extra["signature"] == ": 1 = 1"
    # ∀ binders stay in front; each name of ⟨mp, mpr⟩ its own direction, not a dependency of the other
    assert docs["lean:Foo.of_lt"].extra["signature"] == "(n : Nat) : ∀ m, n < m → n + 1 ≤ m"
    assert docs["lean:Foo.to_lt"].extra["signature"] == "(n : Nat) : ∀ m, n + 1 ≤ m → n < m"
    assert docs["lean:Foo.to_lt"].extra["dependencies"] == ["Foo.lt_iff"]
    # the target is named where the command is written (CharTwo), not under the alias's own prefix
    # (CharTwo.CommRing.sq_injective is the alias itself)
    assert docs["lean:CharTwo.CommRing.sq_injective"].extra["alias_of"] == "lean:CharTwo.sq_injective"
    # a target outside what was read: no statement to show (not the alias's own name)
    assert docs["lean:Foo.ext"].extra["signature"] == "" and "alias_of" not in docs["lean:Foo.ext"].extra


def test_deprecated_recorded_with_replacement(docs):
    baz, qux, quux, corge = (docs[f"lean:Foo.{n}"].extra for n in ("baz", "qux", "quux", "corge"))
    assert baz["deprecated"] == "since 2024-01-01" and baz["replaced_by"] == "lean:Foo.bar"  # the alias's target
    assert qux["deprecated"] == "since 2024-01-02" and qux["replaced_by"] == "lean:Foo.bar"  # resolved in Foo
    assert quux["deprecated"] == "since 2024-02-01: Use simp" and "replaced_by" not in quux
    assert corge["deprecated"] == "since 2024-03-01; use Nat.not_here" and "replaced_by" not in corge
    assert "deprecated" not in docs["lean:Foo.bar"].extra
    # the header keeps the attribute's strings (they were blanked: `(since := " ")`)
    assert docs["lean:Foo.qux"].body == '@[deprecated bar (since := "2024-01-02")] theorem qux : 1 = 1'


def test_alias_signature_and_deprecation_helpers():
    assert alias_signature("{a : R} : 0 < a ↔ b", "mp") == "{a : R} : 0 < a → b"
    assert alias_signature(": (a → b) ↔ c", "mpr") == ": c → (a → b)"
    assert alias_signature(": a → b ↔ c", "mp") == ": (a → b) → c"  # ↔ binds more loosely than →
    assert alias_signature(": a = b", "mp") == ""  # not an iff
    assert alias_signature(": a = b") == ": a = b"
    assert deprecation(["simp", 'deprecated foo (since := "2024-01-01")']) == ("since 2024-01-01", "foo")
    assert deprecation(["deprecated"]) == ("deprecated", "")
    assert deprecation(["deprecated_attr"]) is None and deprecation([]) is None


# ------------------------------------------------------------------------------ on every surface (toy project)

DEPRECATED = "lean:Toy.sumTo_add_one"
REPLACEMENT = "lean:Toy.sumTo_succ"
SAID = "deprecated since 2025-01-01, use lean:Toy.sumTo_succ"


def lean(query, bundle, **kw):
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    return lean_search(LeanSearchRequest.make(query, kw.pop("k", 10), **kw), bundle)


def test_deprecated_flagged_after_its_replacement_and_left_out_on_request(lean_project_bundle_dir):
    r = lean("sumTo add one", lean_project_bundle_dir)
    ids = [h.id for h in r.hits]
    # BM25 ranks the deprecated name first (its words are the query's); it goes after its replacement
    assert r.hits[ids.index(DEPRECATED)].ranks["lexical"] == 1
    assert ids.index(REPLACEMENT) < ids.index(DEPRECATED)
    dep = r.hits[ids.index(DEPRECATED)].fields
    assert dep["deprecated"] == "since 2025-01-01" and dep["replaced_by"] == REPLACEMENT
    assert r.hits[ids.index(REPLACEMENT)].fields["deprecated"] == ""
    assert all(h.fields["alias_of"] == "" for h in r.hits)
    gone = lean("sumTo add one", lean_project_bundle_dir, deprecated=False)
    assert DEPRECATED not in {h.id for h in gone.hits} and REPLACEMENT in {h.id for h in gone.hits}
    # asked for by name: itself first (what was asked), its replacement right after it
    named = lean("Toy.sumTo_add_one", lean_project_bundle_dir)
    assert [h.id for h in named.hits[:2]] == [DEPRECATED, REPLACEMENT] and named.match == "strong"
    with pytest.raises(Exception, match="deprecated must be true or false"):
        lean("x", lean_project_bundle_dir, deprecated="no")


@pytest.mark.slow
def test_cli_mcp_and_show_say_deprecated(lean_project_bundle_dir):
    import dataclasses
    import json
    import os
    import subprocess
    import sys

    from mathlas.mcp.registry import search_answer
    from mathlas.mcp.text import render

    env = {**os.environ, "MATHLAS_FORMAL_BUNDLE": str(lean_project_bundle_dir)}

    def cli(*args):
        p = subprocess.run([sys.executable, "-m", "mathlas", *args], capture_output=True, text=True, env=env,
                           timeout=300)
        assert p.returncode == 0, p.stderr
        return p.stdout

    out = cli("lean", "search", "sumTo add one", "-k", "5")
    assert f"    {SAID}" in out.splitlines()
    assert DEPRECATED not in cli("lean", "search", "sumTo add one", "-k", "5", "--no-deprecated")
    data = json.loads(cli("lean", "search", "sumTo add one", "-k", "5", "--json"))
    hit = next(h for h in data["hits"] if h["id"] == DEPRECATED)
    assert hit["fields"]["deprecated"] == "since 2025-01-01" and hit["fields"]["replaced_by"] == REPLACEMENT
    assert SAID in cli("show", DEPRECATED).splitlines()
    answer = dataclasses.asdict(search_answer("search_formal_math", lean("sumTo add one", lean_project_bundle_dir),
                                              "summary"))
    summary = next(h for h in answer["hits"] if h["id"] == DEPRECATED)
    assert summary["deprecated"] == SAID
    assert "deprecated" not in next(h for h in answer["hits"] if h["id"] == REPLACEMENT)  # only where it is
    assert any(f"[{SAID}]" in line for line in render("search_formal_math", answer, {}).splitlines())


@pytest.mark.slow
def test_http_flags_and_leaves_out(lean_project_bundle_dir, tiny_bundle_dir):
    from test_web_serve import WebServer, assert_clean

    server = WebServer("--bundle", str(tiny_bundle_dir), "--formal-bundle", str(lean_project_bundle_dir))
    try:
        hits = server.get("/api/lean/search", params={"q": "sumTo add one", "k": 5}).json()["hits"]
        assert next(h for h in hits if h["id"] == DEPRECATED)["fields"]["replaced_by"] == REPLACEMENT
        left = server.get("/api/lean/search", params={"q": "sumTo add one", "k": 5, "deprecated": "false"}).json()
        assert DEPRECATED not in {h["id"] for h in left["hits"]}
        bad = server.get("/api/lean/search", params={"q": "sumTo", "deprecated": "maybe"})
        assert bad.status_code == 422 and "deprecated must be true or false" in bad.json()["error"]
    finally:
        server.stop()
    assert_clean(server)


# ------------------------------------------------------------------------------ an alias (real Mathlib files)

def test_an_alias_shows_the_statement_it_stands_for(formal_bundle_dir):
    import mathlas
    from mathlas.render import document
    from mathlas.service import document as get_document

    b = mathlas.open_bundle(formal_bundle_dir)
    r = lean("Nat.Prime.dvd_or_dvd", b, k=3)
    hit = r.hits[0]
    # `alias ⟨Prime.dvd_or_dvd, _⟩ := Prime.dvd_mul` showed `⟨Prime.dvd_or_dvd, _⟩` as its signature
    assert hit.id == "lean:Nat.Prime.dvd_or_dvd" and hit.fields["alias_of"] == "lean:Nat.Prime.dvd_mul"
    assert hit.fields["signature"] == "{p m n : ℕ} (pp : Prime p) : p ∣ m * n → p ∣ m ∨ p ∣ n"
    shown = document(__import__("dataclasses").asdict(get_document("lean:Nat.Prime.dvd_or_dvd", b)))
    assert "alias of: lean:Nat.Prime.dvd_mul" in shown.splitlines()
    assert "  -- states {p m n : ℕ} (pp : Prime p) : p ∣ m * n → p ∣ m ∨ p ∣ n" in shown.splitlines()


def test_a_to_additive_declaration_shows_its_own_statement_and_where_it_comes_from(formal_bundle_dir):
    """`show lean:add_comm`: a + b = b + a (it showed mul_comm's a * b = b * a), and that @[to_additive]
    made it from mul_comm, whose line its link shows."""
    import mathlas
    from mathlas.render import document
    from mathlas.service import document as get_document

    b = mathlas.open_bundle(formal_bundle_dir)
    shown = document(__import__("dataclasses").asdict(get_document("lean:add_comm", b))).splitlines()
    assert "generated by @[to_additive] from: lean:mul_comm" in shown
    assert "theorem add_comm {G : Type*} [AddCommMagma G] : ∀ a b : G, a + b = b + a" in shown
    assert not any("a * b" in line for line in shown)
    plain = document(__import__("dataclasses").asdict(get_document("lean:mul_comm", b))).splitlines()
    assert not any(line.startswith("generated by") for line in plain)


def test_show_states_a_declaration_with_its_section_variables(formal_bundle_dir):
    """`show lean:mul_left_cancel`: its header as written (`theorem mul_left_cancel : a * b = a * c → b =
    c`), then the statement with the variables of its section, which the header does not show."""
    import dataclasses

    import mathlas
    from mathlas.render import document
    from mathlas.service import document as get_document

    b = mathlas.open_bundle(formal_bundle_dir)
    shown = document(dataclasses.asdict(get_document("lean:mul_left_cancel", b))).splitlines()
    assert "@[to_additive] theorem mul_left_cancel : a * b = a * c → b = c" in shown
    assert "  -- states {G : Type*} [Mul G] [IsLeftCancelMul G] {a b c : G} : a * b = a * c → b = c" in shown
    # a twin's header is made from its whole statement: nothing more to say
    twin = document(dataclasses.asdict(get_document("lean:add_left_cancel", b))).splitlines()
    assert not any(line.startswith("  -- states") for line in twin)


def test_a_lemma_an_attribute_makes_says_which(formal_bundle_dir):
    """`@[ext] class CommMagma` (Mathlib/Algebra/Group/Defs.lean) makes `CommMagma.ext_iff`: `show` says
    the attribute and its source."""
    import dataclasses

    import mathlas
    from mathlas.render import document
    from mathlas.service import document as get_document

    b = mathlas.open_bundle(formal_bundle_dir)
    shown = document(dataclasses.asdict(get_document("lean:CommMagma.ext_iff", b))).splitlines()
    assert "generated by @[ext] from: lean:CommMagma" in shown
    assert "@[ext] CommMagma" in shown
