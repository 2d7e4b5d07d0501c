"""mathlas.ranking.names: exact Lean names, their last components and misspelt name words, before any ranking."""
from __future__ import annotations

from pathlib import Path

import pytest

from mathlas.ranking.names import Correction, NameIndex, edit_distance, name_query

REPO = Path(__file__).resolve().parents[1]

IDS = ["lean:Finset.sum_range_succ", "lean:Finset.sum_range_succ_comm", "lean:Finset.prod_range_succ",
       "lean:Nat.Prime.two_le", "lean:Nat.prime_two", "lean:mul_comm", "lean:Nat.mul_comm", "lean:Int.mul_comm",
       "lean:Nat.prime", "lean:Nat.Prime", "lean:Toy.sumTo_succ", "lean:Toy.sumTo"]


def names(index_ids, keys):
    return [index_ids[k] for k in keys]


@pytest.fixture(scope="module")
def toy_index():
    return NameIndex(IDS)


def test_edit_distance():
    assert edit_distance("theorm", "theorem") == 1
    assert edit_distance("algrebra", "algebra") == 1
    assert edit_distance("hilbret", "hilbert") == 1  # a swap of neighbours is one edit
    assert edit_distance("kitten", "sitting", 5) == 3
    assert edit_distance("abcdef", "ghijkl") == 3  # past the limit: limit + 1
    assert edit_distance("same", "same") == 0


def test_name_query():
    assert name_query(" `Finset.sum_range_succ` ") == "Finset.sum_range_succ"
    assert name_query("sum of a range") is None
    assert name_query("   ") is None


def test_exact_name_as_typed_then_any_case(toy_index):
    assert names(IDS, toy_index.exact("Finset.sum_range_succ")) == ["lean:Finset.sum_range_succ"]
    assert names(IDS, toy_index.exact("lean:Finset.sum_range_succ")) == ["lean:Finset.sum_range_succ"]
    assert names(IDS, toy_index.exact("`mul_comm`")) == ["lean:mul_comm"]
    # the case as typed wins; only when nothing has it, any case
    assert names(IDS, toy_index.exact("Nat.prime")) == ["lean:Nat.prime"]
    assert names(IDS, toy_index.exact("nat.prime.two_le")) == ["lean:Nat.Prime.two_le"]
    assert sorted(names(IDS, toy_index.exact("NAT.PRIME"))) == ["lean:Nat.Prime", "lean:Nat.prime"]
    assert toy_index.exact("sum_range_succ") == [] and toy_index.exact("mul comm") == []


def test_suffix_is_whole_components(toy_index):
    assert names(IDS, toy_index.suffix("sum_range_succ")) == ["lean:Finset.sum_range_succ"]  # not ..._comm
    assert names(IDS, toy_index.suffix("Prime.two_le")) == ["lean:Nat.Prime.two_le"]
    assert names(IDS, toy_index.suffix("two_le")) == ["lean:Nat.Prime.two_le"]
    assert sorted(names(IDS, toy_index.suffix("mul_comm"))) == ["lean:Int.mul_comm", "lean:Nat.mul_comm",
                                                                "lean:mul_comm"]
    assert toy_index.suffix("range_succ") == []  # a part of a component is not a component
    assert names(IDS, toy_index.suffix("SUMTO_SUCC")) == ["lean:Toy.sumTo_succ"]  # any case when none as typed
    assert toy_index.suffix("sum range succ") == []


def test_a_concept_named_in_words_is_its_capitalised_declaration():
    ids = ["lean:CategoryTheory.Bicategory", "lean:CategoryTheory.Cat.bicategory", "lean:TopologicalSpace",
           "lean:TopologicalSpace.Opens", "lean:SheafOfModules", "lean:MeasureTheory.integral", "lean:MeasCat.Integral",
           "lean:Nat.prime_two", "lean:IsDedekindDomain", "lean:IsDedekindDomain.isDedekindDomainDvr",
           "lean:IsIntegral"]
    index = NameIndex(ids)
    # a predicate Mathlib names with "Is", when nothing is named by the words alone
    assert names(ids, index.concept("Dedekind domain")) == ["lean:IsDedekindDomain"]
    assert names(ids, index.concept("bicategory")) == ["lean:CategoryTheory.Bicategory"]  # not the instance
    assert names(ids, index.concept("topological space")) == ["lean:TopologicalSpace"]
    assert names(ids, index.concept("Sheaf of modules")) == ["lean:SheafOfModules"]
    # the words alone name MeasCat.Integral, so IsIntegral is not read (concept_keys weighs it, below)
    assert names(ids, index.concept("integral")) == ["lean:MeasCat.Integral"]
    # a theorem's snake_case name, a phrase of five words, digits, an identifier: no concept
    assert names(ids, index.concept("opens")) == ["lean:TopologicalSpace.Opens"]
    # a plural names the concept in the singular when nothing is named as typed
    assert names(ids, index.concept("bicategories")) == ["lean:CategoryTheory.Bicategory"]
    assert names(ids, index.concept("topological spaces")) == ["lean:TopologicalSpace"]
    assert names(ids, index.concept("sheaves of modules")) == ["lean:SheafOfModules"]
    for query in ("prime two", "a b c d e", "bicategory 2", "Nat.prime_two", "topological"):
        assert index.concept(query) == [], query
    assert NameIndex(["stacks:00FN"], ["bicategory"]).concept("bicategory") == []  # an informal bundle


class _Table:
    """A bundle's columns and nothing else: what ``concept_keys`` reads (ids, module, pagerank)."""

    def __init__(self, ids, pagerank):
        import pyarrow as pa

        self.table = pa.table({"id": ids, "module": ["M"] * len(ids), "pagerank": pagerank})

    def has_column(self, name):
        return name in self.table.column_names


def test_a_concept_goes_first_only_where_it_is_used_more_than_the_names_typed():
    from mathlas.ranking.names import concept_keys

    ids = ["lean:CategoryTheory.Bicategory", "lean:CategoryTheory.Cat.bicategory", "lean:MeasureTheory.integral",
           "lean:MeasCat.Integral", "lean:CategoryTheory.Sheaf", "lean:TopCat.Sheaf", "lean:Scheme.sheaf"]
    b = _Table(ids, [36.3, 2.4, 7.2, 0.25, 47.8, 4.5, 0.35])
    assert [ids[k] for k in concept_keys(b, "bicategory")] == ["lean:CategoryTheory.Bicategory"]
    assert concept_keys(b, "integral") == []  # MeasureTheory.integral is the one people mean
    assert [ids[k] for k in concept_keys(b, "sheaf")] == ["lean:CategoryTheory.Sheaf", "lean:TopCat.Sheaf"]
    # a plural weighs the concept against the names that end in its singular too
    assert [ids[k] for k in concept_keys(b, "sheaves")] == ["lean:CategoryTheory.Sheaf", "lean:TopCat.Sheaf"]
    assert concept_keys(b, "integrals") == []


def test_singular():
    from mathlas.ranking.text import singular

    got = [singular(w) for w in ("categories", "sheaves", "classes", "boxes", "spaces", "series", "basis", "of", "group")]
    assert got == ["category", "sheaf", "class", "box", "space", "series", "basis", "of", "group"]


def test_a_concept_query_puts_its_declaration_first(lean_project_bundle_dir):
    """"interval" names the structure Toy.Interval (no declaration ends in a lower-case "interval"):
    it comes first, and as the only one so named it is an answer by name."""
    for query in ("interval", "Interval"):
        r = lean(query, lean_project_bundle_dir)
        assert r.hits[0].id == "lean:Toy.Interval" and r.hits[0].ranks["names"] == 1, [h.id for h in r.hits]
        assert r.match == "strong", query
    r = lean("interval of naturals", lean_project_bundle_dir)
    assert r.hits[0].ranks.get("names") is None  # a phrase that is no declaration's name is ranked, not placed


def test_informal_index_has_no_suffixes():
    index = NameIndex(["stacks:00FN", "metamath:fta"], ["lemma", "fta"])
    assert not index.formal
    assert index.exact("metamath:fta") == [1]
    assert index.exact("fta") == [] and index.suffix("fta") == []


def test_correction_words_only_outside_names(toy_index):
    assert toy_index.correct("prme") == Correction("prime", {"prme": "prime"})
    # identifiers, formulas and code are never corrected, nor words of the vocabulary
    assert toy_index.correct("Nat.prme `prme` $prme$").corrected == {}
    assert toy_index.correct("prime").corrected == {}
    # a word the texts use about as often as its correction is a word of its own
    counts = {"prme": 5, "prime": 20}
    assert toy_index.correct("prme", count=lambda w: counts.get(w, 0)).corrected == {}
    counts["prime"] = 500
    assert toy_index.correct("prme", count=lambda w: counts.get(w, 0)).query == "prime"


# ------------------------------------------------------------------------------ on real bundles

@pytest.fixture(scope="module")
def lean_names(lean_project_bundle_dir):
    import mathlas

    b = mathlas.open_bundle(lean_project_bundle_dir)
    return b, NameIndex.of(b)


def test_toy_project_names(lean_names):
    b, index = lean_names
    ids = b.table.column("id").to_pylist()
    assert index.formal and NameIndex.of(b) is index
    assert names(ids, index.exact("Toy.sumTo_succ")) == ["lean:Toy.sumTo_succ"]
    assert names(ids, index.exact("toy.sumto_succ")) == ["lean:Toy.sumTo_succ"]
    assert names(ids, index.suffix("sumTo_succ")) == ["lean:Toy.sumTo_succ"]
    assert names(ids, index.suffix("IsEven.add")) == ["lean:Toy.IsEven.add"]
    assert names(ids, index.suffix("add_two")) == ["lean:Toy.IsEven.add_two"]
    # Toy.double and Toy.Interval.double
    assert sorted(names(ids, index.suffix("double"))) == ["lean:Toy.Interval.double", "lean:Toy.double"]
    assert index.correct("doubel sumTo").query == "double sumTo"  # two letters swapped: one edit


@pytest.fixture(scope="module")
def informal_names(default_bundle_dir):
    import mathlas

    b = mathlas.open_bundle(default_bundle_dir)
    return b, NameIndex.of(b)


def test_default_bundle_corrects_a_misspelt_name(informal_names):
    from mathlas.ranking.names import text_counter

    b, index = informal_names
    count = text_counter(b)
    fixed = index.correct("fundamental theorm of algrebra", count)
    assert fixed.query == "fundamental theorem of algebra"
    assert fixed.corrected == {"theorm": "theorem", "algrebra": "algebra"}
    assert fixed.describe() == ("searched for: fundamental theorem of algebra "
                                "(theorm -> theorem, algrebra -> algebra)")
    assert index.correct("Hilbret basis theorem", count).query == "Hilbert basis theorem"
    # spelt right, or a real word the texts use (Schwartz is not Schwarz): unchanged
    for query in ("Banach fixed point theorem", "Cauchy Schwartz inequality", "Nakayama's lemma"):
        assert index.correct(query, count) == Correction(query), query
    assert index.exact("metamath:fta") == [b.key_of("metamath:fta")]


# ------------------------------------------------------------------------------ in the ranking, on every surface

def lean(query, bundle, **kw):
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    return lean_search(LeanSearchRequest.make(query, kw.pop("k", 5), **kw), bundle)


def test_an_exact_lean_name_is_first_and_strong(lean_project_bundle_dir):
    # before: "sumTo_succ" ranked Toy.sumTo above Toy.sumTo_succ and every answer said "none"
    for query in ("sumTo_succ", "Toy.sumTo_succ", "toy.sumto_succ", "lean:Toy.sumTo_succ", "`Toy.sumTo_succ`"):
        r = lean(query, lean_project_bundle_dir)
        assert r.hits[0].id == "lean:Toy.sumTo_succ", (query, [h.id for h in r.hits])
        assert r.match == "strong" and r.note == "" and r.hits[0].ranks["names"] == 1, query
        assert [h.id for h in r.hits].count("lean:Toy.sumTo_succ") == 1  # placed, not repeated
    r = lean("IsEven.add", lean_project_bundle_dir)
    assert r.hits[0].id == "lean:Toy.IsEven.add" and r.match == "strong"
    assert r.hits[1].id != "lean:Toy.IsEven.add"


def test_name_endings_shared_go_first_in_ranked_order(lean_project_bundle_dir):
    r = lean("double", lean_project_bundle_dir)
    assert {h.id for h in r.hits[:2]} == {"lean:Toy.double", "lean:Toy.Interval.double"}
    assert [h.ranks["names"] for h in r.hits[:2]] == [1, 2] and r.hits[2].ranks["names"] is None
    assert r.match != "none"  # declarations of that name were found
    # "double" is not the whole name of either: not strong on its own
    assert r.match == "weak"


def test_filters_and_pages_hold(lean_project_bundle_dir):
    r = lean("Toy.sumTo_succ", lean_project_bundle_dir, kinds=["def"])
    assert "lean:Toy.sumTo_succ" not in {h.id for h in r.hits}  # a theorem: --kind def leaves it out
    r = lean("Toy.sumTo_succ", lean_project_bundle_dir, offset=1)
    # the next page leaves the named declaration out, and its match is still the search's: named, strong
    assert "lean:Toy.sumTo_succ" not in {h.id for h in r.hits} and r.match == "strong"
    # a phrase is ranked as before: no name placed
    r = lean("sum to succ", lean_project_bundle_dir)
    assert all(h.ranks.get("names") is None for h in r.hits)


def test_a_name_typed_as_words_is_joined_into_the_names_it_ends():
    """"prime two le" is how a Lean user says ``Nat.Prime.two_le``: the words joined by ``_`` or ``.``
    at each joint end declaration names (``NameIndex.joined``), whole components only."""
    index = NameIndex(IDS)
    keys, joinings = index.joined("prime two le")
    assert names(IDS, keys) == ["lean:Nat.Prime.two_le"] and joinings == ["prime.two_le"]
    keys, joinings = index.joined("mul comm")
    assert sorted(names(IDS, keys)) == ["lean:Int.mul_comm", "lean:Nat.mul_comm", "lean:mul_comm"]
    assert names(IDS, index.joined("sum range succ")[0]) == ["lean:Finset.sum_range_succ"]  # not ..._comm
    assert names(IDS, index.joined("nat prime two le")[0]) == ["lean:Nat.Prime.two_le"]
    assert names(IDS, index.joined("Finset sum range succ")[0]) == ["lean:Finset.sum_range_succ"]
    # no name ends so; one word; an identifier; words that are not a name's (a formula, punctuation)
    for query in ("sum of a range", "range succ", "prime", "mul_comm", "mul comm!", "two ≤ p", "prime 2 le"):
        assert index.joined(query) == ([], []), query
    assert NameIndex(IDS, formal=False).joined("mul comm") == ([], [])  # an informal bundle's ids are no names
    # a dot typed inside a word is a joint as typed (before, "nat.prime two le" was no name's words)
    assert index.joined("nat.prime two le") == ([IDS.index("lean:Nat.Prime.two_le")], ["nat.prime.two_le"])
    assert names(IDS, index.joined("Finset.sum range succ")[0]) == ["lean:Finset.sum_range_succ"]
    for query in ("sum.range succ", "nat. prime two le", "nat.prime", "prime.two le.x"):
        assert index.joined(query) == ([], []), query


def test_a_name_typed_as_words_goes_first_and_says_so(lean_project_bundle_dir):
    """Before, "double le double" was ranked as a description; now ``Toy.double_le_double``, the one
    declaration whose name ends with the words joined, is placed first and named in ``expanded``."""
    r = lean("double le double", lean_project_bundle_dir)
    assert r.hits[0].id == "lean:Toy.double_le_double" and r.hits[0].ranks["names"] == 1, [h.id for h in r.hits]
    assert r.expanded == "also searched as a name: double le double -> Toy.double_le_double"
    assert r.searched_for == ""
    # the words end one declaration, but not its namespace: likely, not named (on Mathlib, "pow le pow
    # left" answered strong with ENNReal.pow_le_pow_left beside pow_le_pow_left₀); with the namespace, named
    assert r.match == "weak"
    r = lean("toy double le double", lean_project_bundle_dir)
    assert r.hits[0].id == "lean:Toy.double_le_double" and r.match == "strong"
    r = lean("interval length double", lean_project_bundle_dir)   # before: Toy.Interval.double first
    assert r.hits[0].id == "lean:Toy.Interval.length_double" and r.match == "strong"
    # two plain words may join into a name by chance ("fixed point"): placed, but not an answer by
    # name (before, "double succ" put Toy.double first)
    r = lean("double succ", lean_project_bundle_dir)
    assert r.hits[0].id == "lean:Toy.double_succ" and r.hits[0].ranks["names"] == 1
    assert r.expanded == "also searched as a name: double succ -> Toy.double_succ" and r.match != "strong"
    # filters hold: a def asked for leaves the theorem out, and nothing is said of it
    r = lean("double le double", lean_project_bundle_dir, kinds=["def"])
    assert all(h.id != "lean:Toy.double_le_double" for h in r.hits) and r.expanded == ""


class _NoPagerank:
    """A bundle stand-in for ``NameWords.of`` without a PageRank (key order)."""

    def has_column(self, name):
        return False


def test_a_joinings_variants_are_endings_and_no_one_declaration_is_named():
    """"pow le pow left" ends ``ENNReal.pow_le_pow_left`` only, but ``pow_le_pow_left₀`` (the general
    lemma) and ``pow_le_pow_left'`` are the same name's variants: among the endings, and the words name
    no one declaration (before: ENNReal's, ``match: strong``)."""
    from mathlas.ranking.names import NameWords

    ids = ["lean:ENNReal.pow_le_pow_left", "lean:pow_le_pow_left₀", "lean:pow_le_pow_left'",
           "lean:pow_le_pow_leftx", "lean:Nat.Prime.two_le"]
    index = NameIndex(ids)
    keys, joinings = index.joined("pow le pow left")
    assert names(ids, keys) == ids[:3] and joinings == ["pow_le_pow_left"]
    words = NameWords.of(index, "pow le pow left", keys, joinings, _NoPagerank())
    assert words.endings == ("pow_le_pow_left", "pow_le_pow_left₀", "pow_le_pow_left'")
    assert not any(words.names(k) for k in keys) and all(words.folded(k) for k in keys)
    assert words.describe() == ("also searched as a name: pow le pow left -> pow_le_pow_left, pow_le_pow_left₀, "
                                "pow_le_pow_left' (3 declarations end so)")
    # one declaration: named when the words spell its namespace too, not when they leave it out
    alone = NameIndex(ids[:1] + ids[3:])
    for query, named in (("pow le pow left", False), ("ennreal pow le pow left", True)):
        keys, joinings = alone.joined(query)
        words = NameWords.of(alone, query, keys, joinings, _NoPagerank())
        assert names(ids[:1] + ids[3:], keys) == ["lean:ENNReal.pow_le_pow_left"]
        assert words.names(keys[0]) is named, query
    keys, joinings = alone.joined("prime two le")
    assert NameWords.of(alone, "prime two le", keys, joinings, _NoPagerank()).names(keys[0])


def test_a_variant_goes_after_the_declaration_whose_namespace_the_words_name():
    """"monoid exponent min" spells ``Monoid.exponent_min`` out; its variant ``Monoid.exponent_min'``,
    which the most used order put first, goes right after it (other endings keep their places)."""
    from mathlas.ranking.names import _variants_after_spelt

    ids = ["lean:Monoid.exponent_min'", "lean:Monoid.exponent_min", "lean:Other.Monoid.exponent_min"]
    index = NameIndex(ids)
    keys, joinings = index.joined("monoid exponent min")
    assert joinings == ["monoid.exponent_min"] and sorted(keys) == [0, 1, 2]
    assert _variants_after_spelt(index, [0, 1, 2], joinings) == [1, 2, 0]
    assert _variants_after_spelt(index, [1, 0, 2], joinings) == [1, 2, 0]
    keys, joinings = index.joined("exponent min")   # the namespace not named: as ranked
    assert _variants_after_spelt(index, [0, 1, 2], joinings) == [0, 1, 2]


VARIANT = """
/-- The sum of the first `n` numbers is at most `n * n`, by `omega` alone. -/
theorem sumTo_le' (n : Nat) : Toy.sumTo n ≤ n * n := by
  induction n with
  | zero => simp [Toy.sumTo]
  | succ k ih =>
    rw [Toy.sumTo_succ]
    simp only [Nat.mul_add, Nat.add_mul, Nat.mul_one, Nat.one_mul]
    omega

/-- The sum of the first `n` numbers is at most `n * n + n`. -/
theorem sumTo_le_add (n : Nat) : Toy.sumTo n ≤ n * n + n := Nat.le_trans (sumTo_le' n) (Nat.le_add_right _ _)

/-- The sum of the first `n` numbers is at most `n * n + n * 1`. -/
theorem sumTo_le_add_mul (n : Nat) : Toy.sumTo n ≤ n * n + n * 1 :=
  Nat.le_trans (sumTo_le' n) (Nat.le_add_right _ _)
"""


@pytest.fixture(scope="module")
def aliased_bundle_dir(tmp_path_factory, encoder_dir):
    """The toy project with one more alias whose words end another declaration's name: "add two" for
    ``Toy.double_succ`` ("Doubling a successor adds two"), as Mathlib's "triangle inequality" is
    ``norm_add_le``'s and ends ``Nat.dist.triangle_inequality``; "add two" ends ``Toy.IsEven.add_two``."""
    import shutil

    from mathlas_build.lean_build import lean_recipe
    from mathlas_build.pipeline import build

    project = tmp_path_factory.mktemp("aliasedproject") / "toy"
    shutil.copytree(REPO / "tests" / "data" / "lean-project", project)
    overview = project / "docs" / "overview.yaml"
    overview.write_text(overview.read_text(encoding="utf-8") + "  Doubling:\n    add two: 'Toy.double_succ'\n",
                        encoding="utf-8")
    # and a variant of Toy.sumTo_le outside the namespace, used more than it: sumTo_le' ("sumTo le" in words)
    source = project / "Toy" / "Sum.lean"
    source.write_text(source.read_text(encoding="utf-8") + VARIANT, encoding="utf-8")
    recipe = lean_recipe(project, encoder_dir, name="toyaliased", version="0.1.0")
    return build(recipe, tmp_path_factory.mktemp("bundles") / "toyaliased-0.1.0", cache_dir=None, quiet=True)


def test_the_declaration_the_words_are_an_alias_of_goes_first(aliased_bundle_dir):
    """Words that are a declaration's alias and end another's name: the alias holder first, the ending
    after it, and the line says what is first and why (it named the ending as if it were the answer)."""
    r = lean("add two", aliased_bundle_dir)
    assert [h.id for h in r.hits[:2]] == ["lean:Toy.double_succ", "lean:Toy.IsEven.add_two"], [h.id for h in r.hits]
    assert [h.ranks["names"] for h in r.hits[:2]] == [1, 2]
    assert r.expanded == ("also searched as a name: add two -> Toy.IsEven.add_two, "
                          "after Toy.double_succ (the words are its alias)")
    r = lean("iseven add two", aliased_bundle_dir)   # no alias: the ending first, nothing after
    assert r.hits[0].id == "lean:Toy.IsEven.add_two" and r.match == "strong"
    assert r.expanded == "also searched as a name: iseven add two -> Toy.IsEven.add_two"


def test_words_that_are_a_variants_name_in_words_do_not_name_it(aliased_bundle_dir):
    """"sumto le" ends ``Toy.sumTo_le`` and the variant ``sumTo_le'``, whose name in words is "sumTo
    le" (the prime dropped): the words name neither alone, so the answer is not ``strong`` by that
    name (``NameWords.folded``; on Mathlib "pow le pow left" and ``pow_le_pow_left'``)."""
    r = lean("sumto le", aliased_bundle_dir)
    assert {h.id for h in r.hits[:2]} == {"lean:Toy.sumTo_le", "lean:sumTo_le'"}, [h.id for h in r.hits]
    assert r.hits[0].id == "lean:sumTo_le'" and r.match == "weak"
    assert r.expanded == "also searched as a name: sumto le -> sumTo_le, sumTo_le' (2 declarations end so)", r.expanded


def test_a_phrase_is_no_name(lean_project_bundle_dir):
    """Words that join into no declaration's name are ranked as before: nothing placed, nothing said."""
    for query in ("double of a sum", "sum to succ", "even numbers add up"):
        r = lean(query, lean_project_bundle_dir)
        assert all(h.ranks.get("names") is None for h in r.hits) and r.expanded == "", query


def test_prose_uses_counts_the_docstrings_that_say_a_phrase(lean_project_bundle_dir):
    """``prose_uses``: the docstrings whose prose (code, formulas and identifiers out, punctuation a
    break, a dash a space) has the words in a row, any case; one count a docstring."""
    import mathlas
    from mathlas.ranking.names import prose_uses

    b = mathlas.open_bundle(lean_project_bundle_dir)
    # "the first `n` natural numbers" twice, "two consecutive natural numbers", "`[lo, hi]` of natural numbers"
    assert prose_uses(b, "natural numbers") == 4 and prose_uses(b, "Natural  Numbers") == 4
    assert prose_uses(b, "natural number") == 2   # a word is whole: not "natural numbers"
    assert prose_uses(b, "one point interval") == 2   # "The one-point interval", "A one-point interval"
    assert prose_uses(b, "double succ") == 0 and prose_uses(b, "n is") == 0   # "`double n` is": code
    assert prose_uses(b, "interval the") == 0   # "...the interval. The..." : punctuation ends a phrase
    assert prose_uses(b, "") == 0


def test_two_words_of_the_prose_are_english_not_a_name(lean_project_bundle_dir, monkeypatch):
    """Before, "fixed point" put ``Nat.Partrec.Code.fixed_point`` first on Mathlib (and "upper bound",
    "zero map"... theirs): two words the bundle's prose uses as a phrase (``PROSE_PHRASE_DOCS``
    docstrings or more) are not read as a name, unless they are a declaration's whole name. The toy's
    docstrings say none of its names, so what they say is set here."""
    import mathlas.ranking.names as names_module

    said = {"double succ", "toy double", "double le"}
    monkeypatch.setattr(names_module, "prose_uses", lambda bundle, phrase: 3 * (phrase in said), raising=False)
    r = lean("double succ", lean_project_bundle_dir)   # ends Toy.double_succ only
    assert all(h.ranks.get("names") is None for h in r.hits) and r.expanded == "", [h.id for h in r.hits]
    r = lean("toy double", lean_project_bundle_dir)    # Toy.double's whole name: still a name
    assert r.hits[0].id == "lean:Toy.double" and r.expanded == "also searched as a name: toy double -> Toy.double"
    r = lean("double le double", lean_project_bundle_dir)   # three words: read as they are
    assert r.hits[0].id == "lean:Toy.double_le_double" and r.hits[0].ranks["names"] == 1
    monkeypatch.setattr(names_module, "prose_uses", lambda bundle, phrase: 2 * (phrase in said))
    r = lean("double succ", lean_project_bundle_dir)   # fewer docstrings than PROSE_PHRASE_DOCS: a name
    assert r.hits[0].id == "lean:Toy.double_succ" and r.hits[0].ranks["names"] == 1


TYPO = "fundamental theorm of algrebra"
SEARCHED = "searched for: fundamental theorem of algebra (theorm -> theorem, algrebra -> algebra)"


def test_a_misspelt_name_is_searched_corrected(default_bundle_dir):
    from mathlas.request import SearchRequest
    from mathlas.service import search

    # before: "nothing close was found" (match: none) over hits about fundamental groups
    r = search(SearchRequest.make(TYPO, 5), findings=False)
    assert r.searched_for == "fundamental theorem of algebra" and r.expanded == SEARCHED
    assert {"metamath:fta", "planetmath:FundamentalTheoremOfAlgebra"} & {h.id for h in r.hits[:3]}
    assert r.match != "none"
    right = search(SearchRequest.make("fundamental theorem of algebra", 5), findings=False)
    assert [h.id for h in r.hits] == [h.id for h in right.hits]
    assert right.searched_for == "" and right.expanded == ""
    # corrected, then abbreviations expanded: one line says both
    both = search(SearchRequest.make("CRT and theorm", 3), findings=False)
    assert both.expanded == "searched for: CRT and theorem (theorm -> theorem); expanded CRT: Chinese remainder theorem"


@pytest.mark.slow
def test_every_surface_says_what_it_searched_for(default_bundle_dir):
    import dataclasses
    import json
    import os
    import subprocess
    import sys

    from mathlas.mcp.registry import search_answer
    from mathlas.mcp.text import render
    from mathlas.request import SearchRequest
    from mathlas.service import search
    from mathlas.web.api import search as api_search

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "mathlas", "search", TYPO, "-k", "3", *args],
                              capture_output=True, text=True, env=dict(os.environ), timeout=300)

    p = cli()
    assert p.returncode == 0 and f"mathlas: {SEARCHED}" in p.stderr.splitlines(), p.stderr
    data = json.loads(cli("--json").stdout)
    assert data["searched_for"] == "fundamental theorem of algebra" and data["expanded"] == SEARCHED
    answer = dataclasses.asdict(search_answer("search_existing_math",
                                              search(SearchRequest.make(TYPO, 10), findings=False), "summary"))
    assert answer["expanded"] == SEARCHED
    assert f" {SEARCHED};" in render("search_existing_math", answer, {}).splitlines()[0]
    http = api_search(TYPO, k=3)
    assert http["searched_for"] == "fundamental theorem of algebra" and http["expanded"] == SEARCHED


def test_misspellings_of_the_collection(default_bundle_dir):
    """The judged collection's drafts mark their misspelt names (``typo``): the correction finds
    nearly all of them and leaves the other statements and names (and real words: "members" is not
    "numbers", "midpoints" not a misspelling of "midpoint", Gödel is Godel) as they are."""
    import json
    from pathlib import Path

    import mathlas
    from mathlas.ranking.names import correction_for

    b = mathlas.open_bundle(default_bundle_dir)
    root = Path(__file__).resolve().parents[1] / "eval" / "collection"
    drafts = [json.loads(line) for f in ("drafts-a.jsonl", "drafts-b.jsonl")
              for line in (root / f).read_text(encoding="utf-8").splitlines() if line.strip()]
    typos = [d["query"] for d in drafts if d.get("typo")]
    others = [d["query"] for d in drafts if not d.get("typo")]
    fixed = [q for q in typos if correction_for(b, q).corrected]
    fixes = {q: correction_for(b, q).corrected for q in others}
    # a possessive typed without its apostrophe ("Zorns lemma", drafted as a name without accents or
    # apostrophes) is searched with it: that is no misspelling mended, and is counted apart
    owned = sorted(q for q, f in fixes.items() if f and all(m == w[:-1] + "'s" for w, m in f.items()))
    changed = [q for q, f in fixes.items() if f and q not in owned]
    # left: "univalance", which the BM25 stemmer already makes the name word it misspells (univalen)
    assert len(typos) >= 20 and len(fixed) >= len(typos) - 1, sorted(set(typos) - set(fixed))
    assert len(changed) <= 2, changed
    assert owned == ["Wilsons theorem", "Zorns lemma"], owned
    assert correction_for(b, "Hadamard three circles theorem").corrected == {}  # a plural, no possessive
    for q in ("the Jordan–Hölder theorem", "valuation rings are maximal among subrings", "members of a set"):
        assert correction_for(b, q).corrected == {}, q


def test_a_name_misspelt_into_a_real_word(default_bundle_dir):
    """"Bear's criterion": "bear" is a word of the language and of the texts, so no single word is a
    misspelling; but the query reads as a name that no document has, and "baer" (one edit) makes it
    the name of Stacks' Baer's criterion. A name the bundle has, or a phrase that is no name, stays."""
    import mathlas
    from mathlas.ranking.names import correction_for
    from mathlas.request import SearchRequest
    from mathlas.service import search

    b = mathlas.open_bundle(default_bundle_dir)
    fixed = correction_for(b, "Bear's criterion")
    assert fixed.query == "Baer's criterion" and fixed.corrected == {"bear": "baer"}
    for query in ("Green's theorem", "Zorn's lemma", "a bear in the woods", "Baer's criterion"):
        assert correction_for(b, query).corrected == {}, query
    answer = search(SearchRequest.make("Bear's criterion", 5), default_bundle_dir, findings=False)
    assert answer.hits[0].id == "stacks:05NU"
    assert answer.match != "none" and answer.searched_for == "Baer's criterion"


def test_a_short_word_two_letters_off_that_the_rest_of_the_name_confirms(default_bundle_dir):
    """"Cauchy Swarz": five letters allow one edit alone, and "schwarz" is two away; with "Cauchy"
    the query is the core of a name the bundle holds (Cauchy-Schwarz inequality), which confirms it.
    A word that makes no name with the others, or a query that already names something, stays."""
    import mathlas
    from mathlas.ranking.names import correction_for
    from mathlas.request import SearchRequest
    from mathlas.service import search

    b = mathlas.open_bundle(default_bundle_dir)
    fixed = correction_for(b, "Cauchy Swarz")
    assert fixed.query == "Cauchy Schwarz" and fixed.corrected == {"swarz": "schwarz"}
    assert correction_for(b, "cauchy swarz inequality").corrected == {"swarz": "schwarz"}
    for query in ("Banach swarz", "Cauchy Schwarz", "Cauchy sequence"):
        assert correction_for(b, query).corrected == {}, query
    answer = search(SearchRequest.make("Cauchy Swarz", 5), default_bundle_dir, findings=False)
    assert answer.searched_for == "Cauchy Schwarz" and answer.match != "none"
    assert "Cauchy" in answer.hits[0].heading and "Schwarz" in answer.hits[0].heading


def test_the_name_cores_are_kept_for_the_next_process(default_bundle_dir, tmp_path, monkeypatch):
    """The core words of every name and alias (what "does the query name a result" reads) are made
    once per bundle and kept under the data directory; read back, they are the same; a file cut short
    or unreadable is made again, never half used."""
    import mathlas
    from mathlas.ranking import names as N

    monkeypatch.setenv("MATHLAS_DATA_DIR", str(tmp_path))
    b = mathlas.open_bundle(default_bundle_dir)
    N._NAME_CORES.pop(b, None)
    made = N._name_cores(b)
    path = N._cores_file(b)
    assert path is not None and path.is_file() and path.parent == tmp_path / "cache" / "names"
    assert N.core_key(["nakayama"]) in made and N.core_key(["baer"]) in made   # Nakayama's lemma, Baer's criterion
    N._NAME_CORES.pop(b, None)
    assert N._name_cores(b) == made
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[:len(lines) // 2]) + "\n", encoding="utf-8")
    assert N._read_cores(path) is None
    N._NAME_CORES.pop(b, None)
    assert N._name_cores(b) == made and N._read_cores(path) == made


def test_word_forms_and_accents():
    from mathlas.ranking.names import fold, inflected

    assert inflected("midpoints", "midpoint") and inflected("ramifies", "ramified")
    assert inflected("conjunctive", "conjunction") and inflected("bijectively", "bijective")
    assert not inflected("borell", "borel") and not inflected("theorm", "theorem")
    assert fold("gödel") == "godel" and fold("arzelà") == "arzela" and fold("plain") == "plain"


def test_a_misspelt_identifier_is_the_name_it_is_close_to(toy_index):
    """`mul_com` is `mul_comm`, `Nat.Prime.twoLe` is `Nat.Prime.two_le` (case and underscores folded),
    `Finset.sum_range_suc` is `Finset.sum_range_succ` (its other components as typed); the most used of
    several (popularity) wins; a name as typed, or one that ends a declaration's name, is left alone;
    a plain word is no identifier; nothing close gives None."""
    assert toy_index.identifier("mul_com") == "mul_comm"
    assert toy_index.identifier("Nat.Prime.twoLe") == "Nat.Prime.two_le"
    assert toy_index.identifier("nat.prime.twole") == "Nat.Prime.two_le"
    assert toy_index.identifier("Finset.sum_range_suc") == "Finset.sum_range_succ"
    assert toy_index.identifier("Finset.sum_rnage_succ") == "Finset.sum_range_succ"  # a swap is one edit
    assert toy_index.identifier("Toy.sumto_succ") is None          # any case: suffix() finds it already
    assert toy_index.identifier("Toy.sumTo_suc") == "Toy.sumTo_succ"
    assert toy_index.identifier("mul_comm") is None and toy_index.identifier("sum_range_succ") is None
    assert toy_index.identifier("xyzzy_qux") is None and toy_index.identifier("mulcomm") is None  # no identifier
    assert toy_index.identifier("mul comm") is None
    # popularity: Nat.prime_two (key 4) against a made-up rival one edit away the other way
    index = NameIndex(["lean:Nat.prime_two", "lean:Int.prime_twos"])
    assert index.identifier("prime_tw") == "prime_two"                      # a letter left out: the likeliest slip
    pop = NameIndex(["lean:A.prime_two", "lean:B.prime_two", "lean:C.prime_twp"])
    assert pop.identifier("prime_twq", lambda keys: [float(k == 2) for k in keys]) == "prime_twp"
    assert pop.identifier("prime_twq") == "prime_two"                       # without: how many end so


def test_a_slip_is_never_two_letters_of_a_short_word_and_a_foreign_namespace_drops():
    """Eight letters allow two edits, but not both in a three-letter word: Lean core's `Nat.add_comm`
    was corrected to `Nat.avg_comm` (strong). A namespace no declaration of that name has is dropped:
    `Nat.add_comm` in a bundle without it is searched as `add_comm`."""
    index = NameIndex(["lean:Nat.avg_comm", "lean:add_comm", "lean:Order.le_of_lt_succ"])
    assert index.identifier("Nat.add_comm") == "add_comm"
    assert index.identifier("Nat.le_of_lt_succ") == "le_of_lt_succ"
    assert NameIndex(["lean:Nat.avg_comm"]).identifier("Nat.add_comm") is None
    assert NameIndex(["lean:Nat.avg_comm"]).identifier("Nat.avg_com") == "Nat.avg_comm"   # one letter: a slip
    assert NameIndex(["lean:mul_comm_assoc"]).identifier("mul_comm_asoc") == "mul_comm_assoc"
    # dropping the namespace is no slip: the answer says the name is not in the bundle
    assert index.identifier_why("Nat.add_comm") == ("add_comm", "namespace")
    assert NameIndex(["lean:Nat.avg_comm"]).identifier_why("Nat.avg_com") == ("Nat.avg_comm", "spelling")


def test_a_name_word_typed_is_no_slip_of_another_word():
    """An old Mathlib name the bundle no longer holds was "corrected" into another declaration one or
    two edits away: `card_le_of_subset` (renamed `Finset.card_le_card`) into `Matroid.cRk_le_of_subset`,
    `nat_sub_le` into `nat_succ_le`, `mul_le_mul_of_le_of_le` into `mul_lt_mul_of_lt_of_le` (≤ became
    <). A word that NAME_WORD_USES or more components of the bundle's names are was typed on purpose;
    a rarer word is still a slip, and so is a name word that a left-out letter, a swap, a word cut
    short or a dropped subscript makes (`if` for `iff`)."""
    import mathlas.ranking.names as names_module

    NAME_WORD_USES = getattr(names_module, "NAME_WORD_USES", 20)   # (before: no such rule)
    olds = ["card_le_of_subset", "nat_sub_le", "mul_le_mul_of_le_of_le"]
    targets = ["lean:Matroid.cRk_le_of_subset", "lean:nat_succ_le", "lean:mul_lt_mul_of_lt_of_le",
               "lean:Finset.card_le_card", "lean:Nat.succ_le_iff", "lean:tendsto_ae"]
    # the words of the old names, each the component of NAME_WORD_USES names (as on Mathlib: le 14,346, card 2,529)
    used = [f"lean:Filler{i}.card_le_of_sub_nat_mul_if_ne" for i in range(NAME_WORD_USES)]
    index = NameIndex(targets + used)
    for old in olds:
        assert index.identifier_why(old) is None, old
    assert index.identifier("Nat.succ_le_if") == "Nat.succ_le_iff"   # a letter left out of iff: a slip
    assert index.identifier("Nat.succ_el_iff") == "Nat.succ_le_iff"  # two letters swapped
    assert index.identifier("tendsto_ne") is None                     # a letter mistyped into a name word
    # fewer uses (half the fillers: le is then 15 components, card 12), and each is a slip of the name
    # one or two edits away, as before
    rare = NameIndex(targets + used[:NAME_WORD_USES // 2])
    assert [rare.identifier(old) for old in olds] == ["cRk_le_of_subset", "nat_succ_le", "mul_lt_mul_of_lt_of_le"]
    assert rare.identifier("tendsto_ne") == "tendsto_ae"


def test_the_renamed_names_bench_leaves_the_deprecated_out_and_puts_the_index_back(lean_project_bundle_dir):
    """scripts/bench_renamed_names.py: the toy's deprecated `Toy.sumTo_add_one` (replaced by
    `Toy.sumTo_succ`) searched as if it were gone (no name index entry, no hit), and the bundle's own
    index in use again after."""
    import sys

    from mathlas.formal import open_formal

    sys.path.insert(0, str(REPO / "scripts"))
    import bench_renamed_names as bench

    b = open_formal(lean_project_bundle_dir)
    assert bench.pairs(b) == [("Toy.sumTo_add_one", "Toy.sumTo_succ")]
    res = bench.run(str(lean_project_bundle_dir), 0, 0)
    rows = {r["form"]: r for r in res["rows"]}
    assert rows["full"]["query"] == "Toy.sumTo_add_one" and rows["last"]["query"] == "sumTo_add_one"
    assert all(r["first"] != "Toy.sumTo_add_one" for r in res["rows"])   # left out of the answers
    assert res["full"]["first"]["n"] == 1 and res["last"]["first"]["n"] == 1
    assert NameIndex.of(b).exact("Toy.sumTo_add_one")   # the bundle's own index again


def test_a_known_last_component_or_a_namespace_is_no_slip():
    """Mathlib has no `Function.Injective` (Lean core's), but `Function.Injective2`, `Module.Injective`
    and 253 `Function.Injective.…`: the typed name was corrected to `Function.Injective2`. A last
    component that some declaration has is a name, not a slip; a namespace of declarations is not
    corrected at all (the answer says it is not a declaration of the bundle)."""
    index = NameIndex(["lean:Function.Injective2", "lean:Module.Injective"])
    assert index.identifier_why("Function.Injective") == ("Injective", "namespace")
    index = NameIndex(["lean:Function.Injective2", "lean:Module.Injective", "lean:Function.Injective.comp"])
    assert index.identifier("Function.Injective") is None
    assert index.namespace_size("Function.Injective") == 1 and index.namespace_size("Function") == 2
    assert index.namespace_size("Module.Injective") == 0
    # an unknown last component is still a slip
    assert NameIndex(["lean:Function.Injective2", "lean:Function.Injective.comp"]).identifier("Function.Injectiv2") \
        == "Function.Injective2"


def test_a_primed_name_tries_its_unprimed_form_before_any_edit():
    """`add_comm'` (not in Mathlib) was corrected to `MeasureTheory.Measure.add_comp'`, one edit away."""
    index = NameIndex(["lean:add_comm", "lean:MeasureTheory.Measure.add_comp'", "lean:Nat.Prime.two_le"])
    assert index.identifier_why("add_comm'") == ("add_comm", "prime")
    assert index.identifier_why("Prime.two_le''") == ("Prime.two_le", "prime")
    assert index.identifier("add_comp'") is None                       # it ends a name as typed
    assert index.identifier_why("add_comp''") == ("add_comp'", "prime")


def test_a_namespace_is_not_a_concept_predicate():
    """"Nat" found Mathlib's `IsNat` (the "Is" form of a concept) and answered `strong`: a word that
    is a namespace of the bundle's declarations names that namespace's type (Lean core's `Nat`)."""
    assert NameIndex(["lean:Mathlib.Meta.NormNum.IsNat"]).concept("nat") == [0]
    assert NameIndex(["lean:Mathlib.Meta.NormNum.IsNat", "lean:Nat.succ_le"]).concept("Nat") == []
    assert NameIndex(["lean:AlgebraicGeometry.IsClosedImmersion", "lean:Nat.succ_le"]).concept("closed immersion") == [0]


def test_a_word_whose_inflections_the_vocabulary_holds_is_a_word():
    """"how do I bake bread" was searched as "how do I base bread": a WordPiece vocabulary of 30k
    words holds "baked", "baker" and "baking" but not "bake". One inflection alone is chance."""
    from mathlas.ranking.names import in_language

    vocab = {"baked", "baker", "baking", "field", "theorem"}.__contains__
    assert in_language(vocab, "bake") and in_language(vocab, "theorem")
    assert not in_language(vocab, "fiel") and not in_language(vocab, "theorm")
    index = NameIndex(["lean:base_le", "lean:Field.foo"])
    assert index.correct("how do I bake bread", known=lambda w: in_language(vocab, w)).query == "how do I bake bread"
    assert index.correct("how do I bake bread").query == "how do I base bread"   # without the vocabulary


def test_a_name_the_bundle_lacks_is_said_plainly(formal_bundle_dir):
    """Lean core's names in a bundle of Mathlib files: `Nat.add_comm` said "searched for: add_comm
    (Nat.add_comm -> add_comm)", a spelling correction; now every surface (``expanded``) says the
    name is not in the bundle and what it holds, and the answer is never `strong`."""
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    r = lean_search(LeanSearchRequest.make("Nat.add_comm", k=3), formal_bundle_dir)
    assert r.expanded == ("Nat.add_comm is not in this bundle (Mathlib; Lean core's Init and Std are not indexed): "
                          "showing declarations that end the same way, add_comm"), r.expanded
    assert r.hits[0].id == "lean:add_comm" and r.match != "strong" and r.searched_for == "add_comm"
    r = lean_search(LeanSearchRequest.make("Nat", k=3), formal_bundle_dir)
    assert r.expanded.startswith("Nat is not in this bundle (Mathlib; Lean core's Init and Std are not indexed): ")
    assert r.expanded.endswith("declarations are in its namespace (Nat.…)") and r.match != "strong"
    assert r.searched_for == ""
    r = lean_search(LeanSearchRequest.make("mul_comm'", k=3), formal_bundle_dir)
    assert r.expanded.endswith(": showing mul_comm") and r.hits[0].id == "lean:mul_comm" and r.match != "strong"


def test_lean_search_says_what_it_searched_for_a_misspelt_name(formal_bundle_dir):
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    r = lean_search(LeanSearchRequest.make("Nat.Prime.twoLe", k=3), formal_bundle_dir)
    assert r.hits[0].id == "lean:Nat.Prime.two_le"
    assert r.expanded == "searched for: Nat.Prime.two_le (Nat.Prime.twoLe -> Nat.Prime.two_le)"
    r = lean_search(LeanSearchRequest.make("mul_com", k=3), formal_bundle_dir)
    assert r.hits[0].id == "lean:mul_comm" and r.match != "none"
    assert r.expanded == "searched for: mul_comm (mul_com -> mul_comm)"


def test_how_many_there_are_is_a_claim_not_a_concept():
    """"infinitely many primes" has no verb but states something: on Mathlib the definition intent put
    Nat.Primes, Infinite and Prime first. A count ("infinitely many", "at most") makes a claim;
    "finitely generated module" still names a concept."""
    from mathlas.ranking.intent import definition_intent

    for claim in ("infinitely many primes", "uncountably many real numbers", "a group with at most one involution",
                  "at least two fixed points"):
        assert not definition_intent(claim), claim
    for concept in ("finitely generated module", "countably compact space", "a poset with binary joins and meets"):
        assert definition_intent(concept), concept


def test_declarations_ending_as_typed_come_most_used_first(formal_bundle_dir):
    """``sum_range_succ`` on Mathlib put List.sum_range_succ (PageRank 0.25) before Finset.sum_range_succ
    (5.16): the declarations whose names end with the query follow the exact answer most used first.
    Checked on the tests' formal bundle: every last component two declarations share."""
    from collections import defaultdict

    import mathlas
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    b = mathlas.open_bundle(formal_bundle_dir)
    pr = dict(zip(b.column("id").to_pylist(), b.column("pagerank").to_pylist()))
    ends = defaultdict(list)
    for doc_id in pr:
        ends[doc_id.rsplit(".", 1)[-1]].append(doc_id)
    shared = {last: ids for last, ids in ends.items() if len(ids) > 1 and "_" in last and len({pr[i] for i in ids}) > 1}
    assert shared, "the tests' formal bundle has a last component two declarations share"
    for last, ids in shared.items():
        hits = [h.id for h in lean_search(LeanSearchRequest.make(last, k=10), formal_bundle_dir).hits]
        placed = [h for h in hits if h in ids and h != f"lean:{last}"]
        assert placed == sorted(placed, key=lambda i: -pr[i]), (last, placed)


def test_a_declaration_name_that_differs_by_a_prime_is_not_its_own_name(formal_bundle_dir):
    """A theorem's name folds case, possessives and punctuation ("Zorn's lemma" is "zorns lemma"); a
    declaration name does not: ``Nat.Prime.two_le'`` (no such declaration) must not count as the name of
    ``Nat.Prime.two_le``, which it folds to. (On Mathlib, ``sdiff_eq_self_iff_disjoint'`` left out as
    deprecated answered "strong" by that fold with the unprimed declaration.)"""
    from types import SimpleNamespace

    import numpy as np

    import mathlas
    from mathlas.ranking.named import named_keys
    from mathlas.service import _named_first_hit

    b = mathlas.open_bundle(formal_bundle_dir)
    key = b.key_of("lean:Nat.Prime.two_le")
    first = SimpleNamespace(top=SimpleNamespace(keys=np.array([key])))   # an answer whose first hit it is
    assert any(named_keys(b, "Nat.Prime.two_le'", [key]))                  # the fold a theorem's name gets
    assert not _named_first_hit(b, "Nat.Prime.two_le'", first, first.top)
