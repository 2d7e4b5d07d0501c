"""A first-time Lean user's slips, in the form they meet them: an id with a slip (``lean deps mul_com``)
names the declarations meant; a bare Lean name shown against the informal bundle points at the
formal one; ``--kind theorem`` takes Mathlib's ``lemma`` declarations too; a search's next steps
propose ``by exact`` only of a theorem or lemma; a bundle that is not formal is refused in the
words of the surface (``--bundle`` on the CLI, ``bundle=`` in the library and over MCP)."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from test_journeys import mathlas, one_line


# ------------------------------------------------------------------------------ an id with a slip

def test_lean_deps_of_a_misspelt_name_suggests_the_declaration(formal_bundle_dir):
    line = one_line(mathlas("lean", "deps", "mul_com", "--bundle", str(formal_bundle_dir)), 2)
    assert line == ("mathlas: no document with id 'lean:mul_com' in bundle formaltest; did you mean "
                    "'lean:mul_comm'? (the nearest declaration names)")
    # a name without its namespace, and the suggested id works
    line = one_line(mathlas("lean", "deps", "Prime.two_le", "--bundle", str(formal_bundle_dir)), 2)
    assert line.endswith("did you mean 'lean:Nat.Prime.two_le'? (the nearest declaration names)"), line
    p = mathlas("lean", "deps", "lean:mul_comm", "--bundle", str(formal_bundle_dir))
    assert p.returncode == 0, p.stderr
    # nothing near: the message as before
    one_line(mathlas("lean", "deps", "zzqqxx_wvv", "--bundle", str(formal_bundle_dir)), 2,
             "no document with id 'lean:zzqqxx_wvv' in bundle formaltest; a search shows a document's id")


def test_a_lean_core_name_is_said_to_be_missing_and_show_takes_a_bare_name(formal_bundle_dir):
    """`lean deps Nat.add_comm` (Lean core's, not in a Mathlib bundle) answered "did you mean
    'lean:add_comm'? (the nearest declaration names)", as if mistyped; `show add_comm --bundle` refused
    the name `lean deps` takes without its lean: prefix."""
    line = one_line(mathlas("lean", "deps", "Nat.add_comm", "--bundle", str(formal_bundle_dir)), 2)
    assert line == ("mathlas: no document with id 'lean:Nat.add_comm' in bundle formaltest; did you mean "
                    "'lean:add_comm'? (Nat.add_comm is not in this bundle (Mathlib; Lean core's Init and Std are "
                    "not indexed): these end the same way)"), line
    p = mathlas("show", "add_comm", "--bundle", str(formal_bundle_dir))
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == "lean:add_comm"
    p = mathlas("show", "add_comm", "--bundle", str(formal_bundle_dir), "--json")
    assert json.loads(p.stdout)["id"] == "lean:add_comm"


def test_library_lookups_by_id_suggest_the_nearest_declaration(formal_bundle_dir):
    from mathlas.errors import UsageError
    from mathlas.tools.lean_search import get_dependencies

    with pytest.raises(UsageError, match=r"did you mean 'lean:mul_comm'\? \(the nearest declaration names\)$"):
        get_dependencies("mul_com", bundle=str(formal_bundle_dir))
    from mathlas.service import document

    with pytest.raises(UsageError, match=r"did you mean 'lean:Nat.Prime.two_le'\?"):
        document("lean:Nat.Prime.two_l", str(formal_bundle_dir))


def test_show_a_bare_lean_name_points_at_the_formal_bundle(default_bundle_dir, formal_bundle_dir):
    env = {"MATHLAS_FORMAL_BUNDLE": str(formal_bundle_dir)}
    line = one_line(mathlas("show", "Nat.Prime.two_le", env=env), 2)
    assert line == ("mathlas: no document with id 'Nat.Prime.two_le' in bundle informal; did you mean "
                    "'lean:Nat.Prime.two_le'? (a Lean declaration of the formal bundle formaltest-0.1.0: "
                    "`mathlas show lean:Nat.Prime.two_le`)")
    p = mathlas("show", "lean:Nat.Prime.two_le", env=env)  # the command it names
    assert p.returncode == 0 and p.stdout.startswith("lean:Nat.Prime.two_le"), p.stderr
    # no formal bundle to be found: the informal bundle's prefixes, as before
    line = one_line(mathlas("show", "Nat.Prime.two_le", env={"MATHLAS_FORMAL_BUNDLE": str(default_bundle_dir / "nope")}), 2)
    assert "its ids begin with stacks:" in line and "lean:" not in line


# ------------------------------------------------------------------------------ theorem is lemma

def test_kind_theorem_takes_lemmas_and_lemma_takes_theorems(formal_bundle_dir):
    from mathlas.tools.lean_search import search_formal_math

    b = str(formal_bundle_dir)
    everything = {h.kind for h in search_formal_math("prime coprime", k=50, bundle=b).hits}
    assert {"theorem", "lemma"} <= everything
    theorems = {h.kind for h in search_formal_math("prime coprime", k=50, kinds=["theorem"], bundle=b).hits}
    assert theorems == {"theorem", "lemma"}
    lemmas = {h.kind for h in search_formal_math("prime coprime", k=50, kinds=["lemma"], bundle=b).hits}
    assert lemmas == {"theorem", "lemma"}
    # the CLI as a person reads it: a lemma among the hits of --kind theorem
    p = mathlas("lean", "search", "Nat.Prime.one_le", "-k", "3", "--kind", "theorem", "--bundle", b)
    assert p.returncode == 0 and p.stdout.startswith(" 1. lean:Nat.Prime.one_le\n    lean · lemma · "), p.stdout
    # a slip is still refused with the bundle's kinds
    line = one_line(mathlas("lean", "search", "prime", "--kind", "theorm", "--bundle", b), 2,
                    "unknown kind 'theorm' in --kind (did you mean 'theorem'?); this bundle has: ")
    assert "lemma" in line and "def" in line


def test_formal_kinds_keep_what_the_bundle_lacks():
    from mathlas.formal import formal_kinds

    toy = SimpleNamespace(kind_names=["def", "structure", "theorem"])  # no lemma, as tests/data/lean-project
    assert formal_kinds(toy, ("lemma",)) == ("theorem",)
    assert formal_kinds(toy, ("theorem", "def")) == ("theorem", "def")
    assert formal_kinds(toy, ("theorm",)) == ("theorm",)  # for the filter's check to name it
    both = SimpleNamespace(kind_names=["lemma", "theorem"])
    assert formal_kinds(both, ("theorem",)) == ("theorem", "lemma")


# ------------------------------------------------------------------------------ next steps

def test_next_steps_propose_by_exact_only_of_a_theorem_or_lemma(formal_bundle_dir):
    from mathlas.tools.lean_search import search_formal_math

    b = str(formal_bundle_dir)
    r = search_formal_math("Nat.Prime", k=3, bundle=b)
    assert r.hits[0].id == "lean:Nat.Prime" and r.hits[0].kind == "def"
    assert "verify_formal" not in [s.tool for s in r.next]
    assert [(s.tool, s.arguments) for s in r.next[2:]] == [
        ("get_dependencies", {"id": "lean:Nat.Prime", "direction": "uses", "bundle": b}),
        ("get_dependencies", {"id": "lean:Nat.Prime", "direction": "used_by", "bundle": b})]
    assert "a def, not a theorem" in r.next[-1].why
    for name, kind in (("Nat.Prime.two_le", "theorem"), ("Nat.Prime.one_le", "lemma")):
        r = search_formal_math(name, k=3, bundle=b)
        assert (r.hits[0].name, r.hits[0].kind) == (name, kind)
        assert r.next[-1].tool == "verify_formal" and r.next[-1].arguments["proof"] == f"by exact {name} ..."
    # the same over the CLI's --json
    data = json.loads(mathlas("lean", "search", "Nat.Prime", "-k", "1", "--bundle", b, "--json").stdout)
    assert [s["tool"] for s in data["next"]] == ["get_by_id", "get_dependencies", "get_dependencies"]


# ------------------------------------------------------------------------------ the bundle, in the surface's words

def test_an_informal_bundle_is_refused_in_the_surfaces_words(default_bundle_dir):
    from mathlas.errors import UsageError
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search
    from mathlas.tools.lean_search import search_formal_math

    with pytest.raises(UsageError, match=r"is not a formal \(Lean\) bundle; pass bundle=<a formal bundle>"):
        search_formal_math("prime", bundle=str(default_bundle_dir))
    req = LeanSearchRequest.make("prime", labels={"bundle": "--bundle"})
    with pytest.raises(UsageError) as e:
        lean_search(req, str(default_bundle_dir))
    assert "; pass --bundle <a formal bundle>" in str(e.value) and "bundle=" not in str(e.value)


def test_cli_refuses_an_informal_bundle_naming_the_flag(default_bundle_dir):
    line = one_line(mathlas("lean", "search", "prime", "--bundle", str(default_bundle_dir)), 2,
                    "is not a formal (Lean) bundle; pass --bundle <a formal bundle>")
    assert "bundle=" not in line
