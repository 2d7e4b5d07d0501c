"""A Lean statement typed as a query finds the declarations that state it (mathlas.ranking.shape):
``a + b = b + a`` is ``add_comm``'s statement up to its variables' names, whatever the binders,
spacing, ASCII spellings, parentheses or the side the equation was typed from."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mathlas.ranking import shape as S

ADD_COMM = "{G : Type*} [AddCommMagma G] : ∀ a b : G, a + b = b + a"
SUM_RANGE_SUCC = ("{M : Type*} [AddCommMonoid M] (f : ℕ → M) (n : ℕ) : "
                  "(∑ x ∈ range (n + 1), f x) = (∑ x ∈ range n, f x) + f n")
TWO_LE = "{p : ℕ} (hp : p.Prime) : 2 ≤ p"
SET_EXT = "{α : Type u} {a b : Set α} (h : ∀ (x : α), x ∈ a ↔ x ∈ b) : a = b"
MUL_ADD = "{R : Type*} [Mul R] [Add R] [LeftDistribClass R] (a b c : R) : a * (b + c) = a * b + a * c"
CAST_ADD = "{R : Type*} [AddMonoidWithOne R] (m n : ℕ) : ((m + n : ℕ) : R) = m + n"
SIGNATURES = [ADD_COMM, SUM_RANGE_SUCC, TWO_LE, SET_EXT, MUL_ADD, "", "(G H : Type*) [Add G]", CAST_ADD]


def statement(signature: str) -> str:
    return dict(S.statement_shapes(signature)[0])["S"]


@pytest.fixture(scope="module")
def index() -> S.ShapeIndex:
    return S.ShapeIndex(SIGNATURES)


def test_a_statement_is_its_tokens_with_variables_renamed_by_first_appearance():
    assert statement(ADD_COMM) == "#1 + #2 = #2 + #1"
    assert statement(MUL_ADD) == "#1 * ( #2 + #3 ) = #1 * #2 + #1 * #3"
    # a constant by its last component, the binders' types left out, the parentheses Lean does not need
    # left out (a big operator's term is read at 67: (∑ …) + f n is ∑ … , f x + f n), those it needs kept;
    # a bound variable numbered by its binder, whatever its name (two binders of x are two variables)
    assert statement(SUM_RANGE_SUCC) == "∑ #1 ∈ range ( #2 + 1 ) , #3 #1 = ∑ #4 ∈ range #2 , #3 #4 + #3 #2"
    assert dict(S.statement_shapes(TWO_LE)[0])["A"] == "Prime #1 → 2 ≤ #1"
    # a hypothesis that is a binder is put in parentheses, as a person types it
    assert dict(S.statement_shapes(SET_EXT)[0])["A"] == "( ∀ #1 , #1 ∈ #2 ↔ #1 ∈ #3 ) → #2 = #3"
    assert S.statement_shapes("(G H : Type*) [Add G]") == ([], set(), 0, 0)  # no statement


@pytest.mark.parametrize("query, row", [
    ("a + b = b + a", 0),
    ("x+y=y+x", 0),
    ("`b + a = a + b`", 0),                                   # the other side first
    ("∀ a b : G, a + b = b + a", 0),
    ("∑ i in range (n+1), f i = ∑ i in range n, f i + f n", 1),  # old spelling, no outer parentheses
    ("∑ i in range (n+1), f i = ∑ j in range n, f j + f n", 1),  # bound variables named apart
    ("Finset.sum (range (n + 1)) f = 0", None),                 # another statement
    ("Finset.sum (range (n + 1)) f = Finset.sum (range n) f + f n", 1),  # the function ∑ stands for
    ("(range (n+1)).sum f = (range n).sum f + f n", 1),         # … by dot notation
    ("(range (n+1)).sum (fun i => f i) = (range n).sum f + f n", 1),  # … with a fun
    ("p.Prime → 2 ≤ p", 2),
    ("Nat.Prime q -> q >= 2", 2),                               # ASCII, ≥ read as ≤ turned round
    ("(∀ x, x ∈ S ↔ x ∈ T) → S = T", 3),
    ("theorem foo (u v w : R) : u * (v + w) = u * v + u * w", 4),  # a pasted signature
    ("((a + b : ℕ) : ℝ) = a + b", 7),                             # a cast of a term, as Mathlib writes it
    ("(↑(a + b) : ℝ) = ↑a + ↑b", 7),                            # … with the arrow
])
def test_a_query_finds_the_declaration_that_states_it(index, query, row):
    found = [r for tier in index.find(query) for r in tier]
    if row is None:
        assert row not in found and found == []
    else:
        assert found[:1] == [row], (query, S.query_shapes(query, index.constants))


POW_MUL = "{M : Type*} [Monoid M] (a : M) (m n : ℕ) : a ^ (m * n) = (a ^ m) ^ n"
CAST_LE = "{α : Type*} [OrderedSemiring α] [CharZero α] {m n : ℕ} : (m : α) ≤ n ↔ m ≤ n"
UNNAMED = "{p : ℕ} (pp : p.Prime) : 2 ≤ p"
FACT_POS = "(n : ℕ) : 0 < n !"
DEGREE = "{R : Type*} [Semiring R] [NoZeroDivisors R] {p q : R[X]} : (p * q).degree = p.degree + q.degree"
SQRT = "(x : ℝ) (h : 0 ≤ x) : √x ^ 2 = x"
MABS = "{α : Type*} [AddGroup α] [Lattice α] (a : α) : 0 ≤ |a|ₘ"
SMUL_ZERO = "{M A : Type*} [Zero A] [SMulZeroClass M A] (a : M) : a • (0 : A) = 0"
INV_ONE = "{G : Type*} [InvOneClass G] : (1 : G)⁻¹ = 1"
MEM_SINGLETON = "{α : Type u} (a : α) : a ∈ ({a} : Set α)"
COMPL_COMPL = "{α : Type*} [BooleanAlgebra α] (x : α) : xᶜᶜ = x"
INV_INV = "{G : Type*} [InvolutiveInv G] (a : G) : a⁻¹⁻¹ = a"
MUL_LE_MUL = "{α : Type*} [Mul α] [Zero α] [Preorder α] {a b c d : α} (h₁ : a ≤ b) (h₂ : c ≤ d) (hc : 0 ≤ c) (hb : 0 ≤ b) : a * c ≤ b * d"


@pytest.mark.parametrize("signature, query", [
    (FACT_POS, "0 < n!"), (FACT_POS, "0 < Nat.factorial n"), (FACT_POS, "n.factorial > 0"),
    (DEGREE, "degree (p * q) = degree p + degree q"), (SQRT, "Real.sqrt x ^ 2 = x"),
    (MABS, "0 ≤ |a|"), (CAST_LE, "(n : ℝ) ≤ m ↔ n ≤ m"), (CAST_LE, "((a : ℝ) ≤ b) ↔ a ≤ b"),
    (UNNAMED, "Nat.Prime p → 2 ≤ p"),
    # ascriptions on terms, postfix letters glued to a variable, parentheses beside ⁻¹, an invisible
    # character, a pasted declaration with its hypotheses, attributes, modifier and proof
    (SMUL_ZERO, "a • 0 = 0"), (INV_ONE, "1⁻¹ = 1"), (MEM_SINGLETON, "x ∈ {x}"),
    (COMPL_COMPL, "sᶜᶜ = s"), (INV_INV, "(a⁻¹)⁻¹ = a"), (INV_INV, "b\u200b⁻¹⁻¹ = b"),
    (MUL_LE_MUL, "theorem X {a b c d : α} (h₁ : a ≤ b) (h₂ : c ≤ d) (c0 : 0 ≤ c) (b0 : 0 ≤ b) : a * c ≤ b * d"),
    (MUL_LE_MUL, "@[simp] protected lemma foo (h₁ : a ≤ b) (h₂ : c ≤ d) (hc : 0 ≤ c) (hb : 0 ≤ b) : a * c ≤ b * d := by\n  nlinarith"),
])
def test_what_a_lean_user_types_is_read_as_the_signature_prints_it(signature, query):
    index = S.ShapeIndex([signature])
    assert [r for tier in index.find(query) for r in tier] == [0], (query, S.query_shapes(query, index.constants),
                                                                   S.statement_shapes(signature)[0])


@pytest.mark.parametrize("typed, read", [
    ("(a * b) * c = a * (b * c)", "a * b * c = a * ( b * c )"),   # left-associative: the first pair is redundant
    ("a ^ (m * n) = (a ^ m) ^ n", "a ^ ( m * n ) = ( a ^ m ) ^ n"),  # ^ is right-associative
    ("-(a * b) = -a * b", "- ( a * b ) = - a * b"),              # prefix - binds tighter than *
    ("(a = b) → c", "a = b → c"), ("(a ↔ b) → c", "( a ↔ b ) → c"),
    ("(∀ x, p x) → q", "( ∀ x , p x ) → q"),                     # a binder takes everything to its right
    ("(∑ x ∈ s, f x) + f n", "∑ x ∈ s , f x + f n"), ("(∑ x ∈ s, f x) * c", "( ∑ x ∈ s , f x ) * c"),
    ("¬(a = b)", "¬ a = b"), ("(f x) + y", "f x + y"), ("g (f x) + y", "g ( f x ) + y"),
    ("a + (f ≫ g)", "a + ( f ≫ g )"),                            # an operator the table lacks: kept
])
def test_the_parentheses_lean_needs_are_kept_and_the_others_left_out(typed, read):
    from mathlas.ranking.lean_text import redundant_parens, tokens

    assert " ".join(redundant_parens(tokens(typed))) == read


def test_a_match_without_any_parentheses_is_placed_after_and_never_strong(monkeypatch):
    index = S.ShapeIndex([POW_MUL, SUM_RANGE_SUCC, "{M : Type*} [Monoid M] (a b c : M) : a * b * c = a * (b * c)"])
    assert index.find("a ^ (m * n) = (a ^ m) ^ n") == [[0]]
    assert index.find("(a * b) * c = a * (b * c)") == [[2]]
    assert index.find("∑ i in range (n+1), f i = ∑ i in range n, f i + f n") == [[1]]
    # a ^ m ^ n is a ^ (m ^ n): pow_mul only looks like it without parentheses (a looser match)
    assert index.find("a ^ (m * n) = a ^ m ^ n") == [[0]]
    monkeypatch.setattr(S.ShapeIndex, "of", classmethod(lambda cls, bundle: index))
    assert S.shape_first(None, "a ^ (m * n) = (a ^ m) ^ n", 0) is True
    assert S.shape_first(None, "a ^ (m * n) = a ^ m ^ n", 0) is False




def test_a_type_named_h_is_no_hypothesis_and_a_double_pair_keeps_its_grouping():
    assert S.statement_shapes("{H : Type*} [Group H] (a : H) : a * 1 = a")[2] == 0
    assert S.statement_shapes("{G : Type*} [Group G] {H : Subgroup G} (a : G) : a ∈ H ↔ a⁻¹ ∈ H")[2] == 0
    assert S.statement_shapes("{a b : ℕ} (H : a ≤ b) : a < b + 1")[2] == 1
    # conditions given as instances are counted apart: no typed statement shows them
    char_two = "{R : Type*} [CommSemiring R] [CharP R 2] (x y : R) : (x + y) ^ 2 = x ^ 2 + y ^ 2"
    assert S.statement_shapes(char_two)[2:] == (0, 1)
    assert S.statement_shapes("{p : ℕ} [Fact (1 < p)] (hp : p.Prime) : 2 ≤ p")[2:] == (1, 1)
    assert S.statement_shapes("{R : Type*} [CommRing R] (a : R) : a * 1 = a")[2:] == (0, 0)
    cpow = "{x : ℝ} (hx : 0 ≤ x) (y : ℝ) (z : ℂ) : (x : ℂ) ^ (↑y * z) = (↑(x ^ y) : ℂ) ^ z"
    assert dict(S.statement_shapes(cpow)[0])["S"] == "#1 ^ ( #2 * #3 ) = cast ( #1 ^ #2 ) ^ #3"  # a cast


def test_hypotheses_are_counted_and_qualified_names_name_namespaces():
    index = S.ShapeIndex([ADD_COMM, TWO_LE, UNNAMED, SET_EXT, "(b : ℕ) : b = b"])
    assert index.hyps.tolist() == [0, 1, 1, 1, 0]
    assert S.query_namespaces("Nat.gcd a b * Nat.lcm a b = a * b") == {"Nat"}
    assert S.query_namespaces("Finset.card (Finset.range n) = n") == {"Finset"}
    assert S.query_namespaces("p.Prime → 2 ≤ p") == set() and S.query_namespaces("a + b = b + a") == set()


@pytest.mark.parametrize("query", [
    "commutativity of addition", "offside rule in soccer explained", "π-system", "a = b ∧", "",
    "x" * 700, "sum of the first n numbers is n(n+1)/2",
])
def test_prose_and_fragments_are_not_statements(index, query):
    assert index.find(query) == []


def test_a_conclusion_alone_is_found_but_a_short_one_is_no_exact_answer(index, monkeypatch):
    assert index.find("2 ≤ p") == [[2]]   # TWO_LE's conclusion (no declaration states just this)
    monkeypatch.setattr(S.ShapeIndex, "of", classmethod(lambda cls, bundle: index))
    assert S.shape_first(None, "2 ≤ p", 2) is False           # three tokens say little
    assert S.shape_first(None, "p.Prime → 2 ≤ p", 2) is True  # the statement, hypothesis and all
    assert S.shape_first(None, "a + b = b + a", 0) is True
    assert S.shape_first(None, "a + b = b + a", 4) is False


def test_a_shape_too_many_declarations_share_places_nothing():
    many = S.ShapeIndex([ADD_COMM] * (S.MAX_SHARED + 1))
    assert many.find("a + b = b + a") == []
    few = S.ShapeIndex([ADD_COMM] * 3)
    assert few.find("a + b = b + a") == [[0, 1, 2]]


def test_the_cache_key_reads_both_modules_that_make_the_index(monkeypatch):
    """A change to how statements are read (mathlas.ranking.lean_text) or shaped makes the index again."""
    import mathlas.paths
    from mathlas.ranking import lean_text

    asked = {}
    monkeypatch.setattr(mathlas.paths, "bundle_cache_file", lambda kind, bundle, files, rules, suffix: asked.update(
        kind=kind, rules=[str(r) for r in rules], suffix=suffix))
    S._cache_file(object())
    assert asked == {"kind": S.CACHE_KIND, "rules": [S.__file__, lean_text.__file__], "suffix": ".npz"}


def test_the_index_is_kept_and_read_back_whole(index, tmp_path):
    path = tmp_path / "shapes.npz"
    index.save(path)
    back = S.ShapeIndex.load(path)
    assert back is not None and back.constants == index.constants
    assert np.array_equal(back.hashes, index.hashes) and np.array_equal(back.rows, index.rows)
    assert back.find("a + b = b + a") == index.find("a + b = b + a") == [[0]]
    path.write_bytes(path.read_bytes()[:100])       # cut short: made again, never a failed search
    assert S.ShapeIndex.load(path) is None
    assert S.ShapeIndex.load(tmp_path / "none.npz") is None


# ------------------------------------------------------------------------------ on a real formal bundle

@pytest.mark.slow
def test_lean_search_by_statement_in_every_form(lean_project_bundle_dir, tmp_path, monkeypatch, capfd):
    """``mathlas lean search`` with the statement of Toy.sumTo_succ typed with other variables: the
    declaration first (its deprecated twin with the same statement after it), ``strong``, in the human
    form, --json (the ``shape`` place) and the library call; prose is searched as before."""
    from test_cli_messages import run_main

    from mathlas.formal import open_formal
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    monkeypatch.setenv("MATHLAS_DATA_DIR", str(tmp_path / "data"))
    bundle = str(lean_project_bundle_dir)
    rc, out, err = run_main(["lean", "search", "sumTo (m + 1) = sumTo m + (m + 1)", "--bundle", bundle, "-k", "3"], capfd)
    assert rc == 0, err
    # the first statement asked reads the bundle's statements, once, and says so on stderr
    assert "reading the statements of toy-0.1.0 for search by statement" in err and " statement shapes in " in err
    lines = out.splitlines()
    assert "Toy.sumTo_succ" in lines[0] and "a clear match" in err and "match: strong" in err, (out, err)
    assert out.index("Toy.sumTo_succ") < out.index("Toy.sumTo_add_one"), out  # the deprecated twin after it
    rc, out, err = run_main(["lean", "search", "sumTo k <= k * k", "--bundle", bundle, "--json"], capfd)
    got = json.loads(out)
    assert rc == 0 and got["hits"][0]["id"] == "lean:Toy.sumTo_le" and got["match"] == "strong"
    assert got["hits"][0]["ranks"]["shape"] == 1
    # the index was kept in the data directory: a second process reads it back
    assert list((tmp_path / "data" / "cache" / S.CACHE_KIND).glob("*.npz"))
    b = open_formal(bundle)
    res = lean_search(LeanSearchRequest.make("double (sumTo n) = n * (n + 1)", 5), b)
    assert res.hits[0].id == "lean:Toy.gauss_sum" and res.match == "strong"
    # a statement no declaration states is never a clear match, whatever words and meaning agree on
    other = lean_search(LeanSearchRequest.make("sumTo n = n * n * n", 5), b)
    assert other.match != "strong" and not (other.hits[0].ranks or {}).get("shape")
    prose = lean_search(LeanSearchRequest.make("sum of the first n numbers", 5), b)
    assert all("shape" not in (h.ranks or {}) or not h.ranks.get("shape") for h in prose.hits)


class FakeBundle:
    """What the ordering reads of a bundle: ids and kinds by key."""

    def __init__(self, ids, kinds):
        self.columns = {"id": ids, "kind": kinds}

    def has_column(self, name):
        return name in self.columns

    def strings(self, name):
        return lambda keys: [self.columns[name][k] for k in keys]


def test_the_order_within_a_tier_reads_namespaces_fields_and_groups(monkeypatch):
    import mathlas.groups

    b = FakeBundle(["lean:PNat.gcd_mul_lcm", "lean:gcd_mul_lcm", "lean:Nat.gcd_mul_lcm", "lean:InvOneClass.inv_one",
                    "lean:inv_one", "lean:mul_add", "lean:left_distrib"],
                   ["theorem", "theorem", "theorem", "field", "theorem", "theorem", "alias"])
    # another namespace is outside; the root one and the one the query names are not
    assert S._outside(b, [0, 1, 2], {"Nat"}) == {0}
    assert S._outside(b, [0, 1, 2], set()) == set()
    assert S._fields(b, [3, 4]) == {3}
    # one declaration a fact: an alias whose group already has a placed member is not placed again
    monkeypatch.setattr(mathlas.groups, "groups_of", lambda bundle: type("G", (), {
        "group": staticmethod(lambda k: {5: [6], 6: [5]}.get(k, []))})())
    assert S._one_per_group(b, [5, 6, 4]) == [5, 4]


@pytest.mark.parametrize("query, may", [
    ("a + b = b + a", True), ("p.Prime → 2 ≤ p", True), ("x ∣ y", True),
    ("sum of the first n numbers", False), ("Nat.add_comm", False), ("", False), ("a +", False),
    ("x" * 700 + " = 1", False),
])
def test_words_and_names_never_read_the_statements(query, may):
    """A query without a relation or an operator (or too short, or too long) does not build the index."""
    assert S.may_be_statement(query) is may


def test_sum_and_prod_as_functions_read_as_the_big_operators_they_stand_for():
    from mathlas.ranking.lean_text import tokens
    assert " ".join(tokens("s.sum f = 0")) == "( ∑ x ∈ s , f x ) = 0"
    assert " ".join(tokens("Finset.prod Finset.univ (fun i => g i) = 1")) == "( ∏ i , g i ) = 1"
    assert " ".join(tokens("∑ x ∈ s, x.sum f = 0")) == "∑ x ∈ s , ( ∑ y ∈ x , f y ) = 0"  # a fresh name


def test_bound_variables_are_numbered_by_their_binders_within_their_scope():
    from mathlas.ranking.lean_text import bound_renamed, tokens

    def renamed(text):
        return " ".join(bound_renamed(tokens(text)))
    assert renamed("(∑ i ∈ s, f i) = ∑ x ∈ t, g x") == renamed("(∑ x ∈ s, f x) = ∑ i ∈ t, g i") == \
        "( ∑ ϰ₁ ∈ s , f ϰ₁ ) = ∑ ϰ₂ ∈ t , g ϰ₂"
    # the scope ends with the binder's group: the x outside is free; an inner binder of x shadows
    assert renamed("(∃ x, p x) ∧ q x") == "( ∃ ϰ₁ , p ϰ₁ ) ∧ q x"
    assert renamed("∀ x, (∃ x, p x) ∧ q x.succ") == "∀ ϰ₁ , ( ∃ ϰ₂ , p ϰ₂ ) ∧ q ϰ₁.succ"
    assert renamed("∫ x in a..b, f x = 0").split()[:3] == ["∫", "ϰ₁", "in"]
    # one argument (a list's or a multiset's sum), or a name that only ends in sum, stays as it is
    assert tokens("l.sum = 0") == ["l.sum", "=", "0"]
    assert tokens("Multiset.sum (s.map f) = 0")[:1] == ["Multiset.sum"]
    assert tokens("Finset.sum_comm") == ["Finset.sum_comm"]


def test_a_cast_of_a_term_is_read_as_one_and_only_the_looser_match_leaves_it_out():
    from mathlas.ranking.lean_text import no_ascriptions, tokens

    def read(text):
        return " ".join(no_ascriptions(tokens(text)))
    assert read("((m + n : ℕ) : R) = m + n") == read("(↑(m + n) : R) = ↑m + ↑n") == "( cast ( m + n ) ) = m + n"
    # the arrow before a name, and an ascription of a name, are what Lean infers: left out as before
    assert read("(↑n : ℝ) ≤ ↑m") == "( n ) ≤ m"
    assert read("((n : ℕ) : ℤ) = 1") == "( ( n ) ) = 1"
    # the statement with its cast is not m + n = m + n; without parentheses (never strong) it is
    shapes = dict(S.statement_shapes(CAST_ADD)[0])
    assert shapes["S"] == "cast ( #1 + #2 ) = #1 + #2"
    assert shapes["S-"] == "#1 + #2 = #1 + #2"


ADD_ONE_LE_EXP = "(x : ℝ) : x + 1 ≤ Real.exp x"
ONE_ADD_LE_EXP = "(x : ℝ) : 1 + x ≤ Real.exp x"
SUB_LE = "{α : Type*} [OrderedAddCommGroup α] {a b : α} (h : 0 ≤ b) : a - b ≤ a"
NORM_ADD_LE = "{E : Type*} [SeminormedAddGroup E] (a b : E) : ‖a + b‖ ≤ ‖a‖ + ‖b‖"


@pytest.mark.parametrize("typed, read", [
    ("1 + x ≤ exp x", "x + 1 ≤ exp x"),          # a variable before a number, whichever was typed first
    ("c * (a + 2) = 2 * c", "c * ( a + 2 ) = c * 2"),
    ("‖2 * a‖ ≤ ‖b‖ + ‖a‖", "‖ a * 2 ‖ ≤ ‖ b ‖ + ‖ a ‖"),   # inside bars; operands alike but their names keep their order
    ("a + b - c = 1", "a + b - c = 1"),          # + beside -: not one commutative operator, no order
    ("2 * (∑ i ∈ s, f i) = 2 * c", "( ∑ i ∈ s , f i ) * 2 = c * 2"),   # a group is one operand
    ("∑ i ∈ s, 2 * f i = 0", "∑ i ∈ s , 2 * f i = 0"),   # a binder's level is left as it is
])
def test_the_operands_of_a_commutative_operator_are_read_in_one_order(typed, read):
    from mathlas.ranking.lean_text import canonical, commuted, redundant_parens, tokens

    toks = redundant_parens(canonical(tokens(typed)))
    assert " ".join(commuted(toks, S._variable_in({"a", "b", "c", "x"}))) == read


def test_operands_typed_in_another_order_are_a_looser_match_never_strong(monkeypatch):
    index = S.ShapeIndex([ADD_ONE_LE_EXP, SUB_LE, NORM_ADD_LE])
    assert index.find("exp x ≥ 1 + x") == [[0]]          # x + 1 ≤ Real.exp x
    assert index.find("‖b + a‖ ≤ ‖b‖ + ‖a‖") == [[2]]     # ‖a + b‖ ≤ ‖a‖ + ‖b‖ by another order of names: as typed
    assert index.find("a - b ≤ a") == [[1]]
    assert index.find("a - 1 ≤ a") == []
    assert index.find("1 - a ≤ a") == []                  # - is not commutative
    monkeypatch.setattr(S.ShapeIndex, "of", classmethod(lambda cls, bundle: index))
    assert S.shape_first(None, "exp x ≥ x + 1", 0) is True
    assert S.shape_first(None, "exp x ≥ 1 + x", 0) is False   # found, but through the looser match
    both = S.ShapeIndex([ADD_ONE_LE_EXP, ONE_ADD_LE_EXP])
    assert both.find("1 + x ≤ exp x") == [[1], [0]]   # as typed first, the other order after


def test_the_looser_order_never_crowds_out_a_match_as_typed():
    many = S.ShapeIndex([ADD_ONE_LE_EXP] + [ONE_ADD_LE_EXP] * S.MAX_SHARED)
    assert many.find("x + 1 ≤ exp x") == [[0]]   # the 200 in the other order would make too many: left out


EVAL = "{R : Type u} [Semiring R] (x : R) (p : R[X]) : R"
EVAL_ADD = "{R : Type u} [Semiring R] {p q : R[X]} {x : R} : (p + q).eval x = p.eval x + q.eval x"
EVAL_MUL = "{R : Type u} [CommSemiring R] {p q : R[X]} {x : R} : eval x (p * q) = eval x p * eval x q"


def test_the_receiver_of_dot_notation_is_read_where_the_function_takes_it():
    from mathlas.ranking.lean_text import receiver_position

    assert receiver_position("Polynomial.eval", EVAL) == 1        # p.eval x is Polynomial.eval x p
    assert receiver_position("Polynomial.degree", "{R : Type u} [Semiring R] (p : R[X]) : WithBot ℕ") is None
    index = S.ShapeIndex([EVAL, EVAL_ADD, EVAL_MUL], ["Polynomial.eval", "Polynomial.eval_add", "Polynomial.eval_mul"],
                         ["def", "theorem", "theorem"])
    assert index.receivers == {"Polynomial.eval": 1}
    # the function by its full name finds the statement in dot notation; each form finds itself
    assert index.find("Polynomial.eval x (p + q) = Polynomial.eval x p + Polynomial.eval x q") == [[1]]
    assert index.find("(p + q).eval x = p.eval x + q.eval x") == [[1]]
    assert index.find("eval x (p * q) = eval x p * eval x q") == [[2]]
    assert index.find("Polynomial.eval x (p * q) = Polynomial.eval x p * Polynomial.eval x q") == [[2]]
    # a signature's own function form is not read the other way (its names are not resolved)
    assert index.find("(p * q).eval x = p.eval x * q.eval x") == []
    assert S.ShapeIndex([EVAL, EVAL_ADD]).find("Polynomial.eval x (p + q) = Polynomial.eval x p + Polynomial.eval x q") == []


def test_the_receivers_are_kept_with_the_index(tmp_path):
    index = S.ShapeIndex([EVAL, EVAL_ADD], ["Polynomial.eval", "Polynomial.eval_add"], ["def", "theorem"])
    index.save(tmp_path / "i.npz")
    back = S.ShapeIndex.load(tmp_path / "i.npz")
    assert back.receivers == {"Polynomial.eval": 1}
    assert back.find("Polynomial.eval x (p + q) = Polynomial.eval x p + Polynomial.eval x q") == [[1]]
