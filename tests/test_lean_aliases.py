"""Issue 22: what a Lean declaration's name and signature lack, read without an LLM: aliases from the
project's docs/*.yaml lists and Stacks tags, a def's value, a structure's fields, the definitions a
statement mentions; and the BM25 fields they go to, searched through the real pipeline."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mathlas_build.retrieval_text import alias_field, context_field, gloss_field
from mathlas_build.sources import lean_aliases as la
from mathlas_build.sources.lean import read, split_words

from conftest import LEAN_PROJECT


def test_alias_files_titles_topics_and_lists(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "1000.yaml").write_text(
        "Q1:\n  title: Binomial theorem\n  decl: add_pow\n"
        "Q2:\n  title: Fourier inversion\n  decls:\n    - A.inv\n    - B.inv\n"
        "Q3:\n  title: Not yet\n", encoding="utf-8")
    (docs / "overview.yaml").write_text(
        "Algebra:\n  Numbers:\n    \"$p$-adic number\": 'Padic'\n    a link: 'https://example.org/x'\n",
        encoding="utf-8")
    (docs / "undergrad.yaml").write_text(": not yaml : [", encoding="utf-8")  # skipped, not fatal
    table = la.read_alias_files(docs)
    assert table == {"add_pow": ["Binomial theorem"], "A.inv": ["Fourier inversion"],
                     "B.inv": ["Fourier inversion"], "Padic": ["p-adic number"]}
    assert la.read_alias_files(tmp_path / "missing") == {}


def test_definition_value_and_fields():
    assert la.definition_value(" := #{i | x i ≠ y i}\n\ntheorem") == "#{i | x i ≠ y i} theorem"
    assert la.definition_value(" := by\n  exact foo") == ""           # a tactic block says how, not what
    assert la.definition_value(" where\n  toFun := f\n  map_one' := rfl") == "where toFun := f map_one' := rfl"
    assert la.definition_value(" := n + n\ntermination_by n") == "n + n"
    assert la.definition_value(" : Nat") == ""
    long = la.definition_value(" := " + "a + " * 200 + "b")
    assert long.endswith(" ...") and len(long) <= la.VALUE_CHARS + 4
    parts = {"fields": [{"name": "lo", "type": "Nat"}, {"name": "le", "type": "lo ≤  hi"}]}
    assert la.structure_fields(parts) == "lo : Nat; le : lo ≤ hi"
    assert la.structure_fields(None) == ""


def test_first_sentence_keeps_abbreviations():
    assert la.first_sentence("The divisors of `n`. More text.") == "The divisors of `n`."
    text = "A join (a.k.a. supremum, e.g. max) operation. Second."
    assert la.first_sentence(text) == "A join (a.k.a. supremum, e.g. max) operation."


def test_glossary_names_the_definitions_a_statement_mentions():
    decls = [{"full": "Nat.divisors", "kind": "def", "docstring": "`divisors n` is the `Finset` of divisors of `n`. Long."},
             {"full": "Finset.card", "kind": "def", "docstring": ""},
             {"full": "Nat.mul_comm", "kind": "theorem", "docstring": "Multiplication commutes."}]
    g = la.DefinitionGlossary(decls, split_words)
    sig = "(n : ℕ) : n.divisors.card = 0 ↔ n = 0"
    assert g.gloss(sig, ["Finset.card", "Nat.divisors", "Nat.mul_comm"]) == \
        "Nat divisors: `divisors n` is the `Finset` of divisors of `n`. Finset card."
    assert g.gloss(sig, ["Nat.mul_comm"]) == ""   # theorems are not glossed
    assert g.gloss("", ["Nat.divisors"]) == ""


def test_stacks_aliases_from_a_bundle(tmp_path):
    (tmp_path / "meta").mkdir()
    pq.write_table(pa.table({"id": ["stacks:00DV", "planetmath:X"], "name": ["Nakayama's lemma", "x"],
                             "slogan": ["", ""], "title": ["Commutative Algebra > Nakayama's lemma", "y"]}),
                   tmp_path / "meta" / "documents.parquet")
    assert la.stacks_aliases(tmp_path) == {"00DV": "Nakayama's lemma"}
    assert la.stacks_aliases(tmp_path / "none") == {}
    assert la.stacks_aliases(None) == {}


@pytest.fixture(scope="module")
def toy_docs():
    return {d.id: d for d in read(LEAN_PROJECT)}


def test_reader_fills_aliases_values_fields_and_context(toy_docs):
    even, gauss, double = toy_docs["lean:Toy.IsEven"], toy_docs["lean:Toy.gauss_sum"], toy_docs["lean:Toy.double"]
    assert even.extra["aliases"] == "even number"
    assert gauss.extra["aliases"] == "Gauss's Summation Formula"
    assert alias_field(gauss) == "Gauss's Summation Formula"
    assert double.extra["value"] == "n + n"
    assert "aliases" not in double.extra and alias_field(double) == ""
    assert toy_docs["lean:Toy.Interval"].extra["fields"].startswith("lo : Nat; hi : Nat")
    # the theorem's statement mentions IsEven and double: their names and docstrings describe it
    ctx = toy_docs["lean:Toy.isEven_double"].extra["context"]
    assert "Is Even: A natural number is even when it is the double of some number." in ctx
    assert "double n" in ctx
    assert "value" in toy_docs["lean:Toy.IsEven"].extra and "∃ k" in toy_docs["lean:Toy.IsEven"].extra["value"]
    # the definitions mentioned reach the gloss field, the def's value the context field
    assert "A natural number is even" in gloss_field(toy_docs["lean:Toy.isEven_double"])
    assert "A natural number is even" not in context_field(toy_docs["lean:Toy.isEven_double"])
    assert context_field(double).startswith("n + n.")


def test_aliases_option_off(tmp_path):
    docs = {d.id: d for d in read(LEAN_PROJECT, aliases=False)}
    assert all("aliases" not in d.extra for d in docs.values())


def test_alias_and_context_fields_are_searched(lean_project_bundle_dir):
    """Through the real build and runtime: a topic name found only in the project's overview.yaml and
    a definition's words found only in the context field."""
    from mathlas.engine import Bundle

    b = Bundle.open(lean_project_bundle_dir)
    assert {"alias", "context"} <= set(b.manifest.lexical["boosts"])
    assert b.search("triangular number", k=3, mode="lexical")[0].id == "lean:Toy.sumTo"
    assert b.column("aliases") is not None
    ids = [h.id for h in b.search("Gauss's Summation Formula", k=3, mode="lexical")]
    assert ids[0] == "lean:Toy.gauss_sum"
    # "twice" is in the docstrings of double and gauss_sum only; isEven_double's gloss field quotes
    # double's: the field is built, and searched only where a bundle's boosts say so (0 as shipped)
    assert b.manifest.lexical["boosts"]["gloss"] == 0
    hits = {h.id for h in b.search("twice", k=10, mode="lexical")}
    assert "lean:Toy.double" in hits and "lean:Toy.isEven_double" not in hits
    b.lexical.boosts = {**b.lexical.boosts, "gloss": 1.0}
    assert "lean:Toy.isEven_double" in {h.id for h in b.search("twice", k=10, mode="lexical")}


def test_toy_project_docs_are_not_read_as_lean(tmp_path):
    assert not any(Path(d.file).parts[0] == "docs" for d in read(LEAN_PROJECT))


def test_notation_commands_name_their_definition():
    text = ('/-- The lower integral. -/\nnoncomputable def lintegral (f : α → ℝ) : ℝ := 0\n'
            'notation3 "∫⁻ "(...)", "r:60:(scoped f => f)" ∂"μ:70 => lintegral μ r\n'
            '-- notation "∯" => lintegral\n'
            'infixl:65 " ∈ " => Membership.mem\n'
            'scoped[Foo] notation "𝓝" => nhds\n'
            'notation "#" s => Finset.card s\n')
    from mathlas_build.sources.lean import mask

    masked, _ = mask(text)
    extras: dict = {}
    la.scan_notations(text, masked, "F.lean", extras)
    # the commented one, the common ∈ and the ASCII # are left out; notation3 takes the last =>
    assert extras["notation_heads"] == [("∫⁻", "lintegral", "F.lean"), ("𝓝", "nhds", "F.lean")]

    class NoResolver:
        def context(self, *a):
            return None

        def resolve(self, token, ctx):
            return ()

    g = la.DefinitionGlossary([{"full": "MeasureTheory.lintegral", "kind": "def",
                                "docstring": "The **lower Lebesgue integral** of `f`."}], split_words)
    g.add_notations([("∫⁻", "lintegral", "F.lean"), ("∫", "unknownHead", "F.lean")], NoResolver())
    assert g.notation == {"∫⁻": "MeasureTheory.lintegral"}
    assert g.gloss("(f : α → ℝ) : ∫⁻ x, f x ∂μ = 0", []) == \
        "Measure Theory lintegral: The **lower Lebesgue integral** of `f`."
    assert g.gloss("(f : α → ℝ) : f = f", []) == ""


def test_a_semicolon_inside_a_name_does_not_split_it():
    # the aliases column is "; "-joined and split on "; " at run time: a Stacks slogan holding "; "
    # must stay one name
    from collections import Counter

    from mathlas_build.sources.lean import _describe

    extra = {"stacks": "00DV", "signature": ""}
    _describe(extra, "Foo.bar", None, [], {"Foo.bar": ["Nakayama's lemma"]},
              {"00DV": "Nakayama. If M is finite; then M = 0"}, la.DefinitionGlossary([], split_words), Counter())
    assert extra["aliases"].split("; ") == ["Nakayama's lemma", "Nakayama. If M is finite, then M = 0"]
