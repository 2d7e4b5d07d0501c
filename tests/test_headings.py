"""One meaning per field (issue 31, items 5, 6, 8 and 9 in text): every document has one ``heading``,
one ``label`` and one ``context``, the same in search and in ``show``, in the CLI, ``--json``, MCP,
``/api`` and the page (the page: tests/test_web_browser_display.py); TeX accents and ligatures read
as letters in headings and search text; a ProofWiki heading made from a formula reads as Unicode; a
Lean docstring's Markdown is plain text on the text surfaces.

``mathlas.headings.describe`` is tested on hand-written rows per source, then the surfaces on the
default bundle (the documents the issue names) and on the Lean project bundle.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from mathlas.headings import describe, formula_words, plain_markdown, tidy
from mathlas.hit import Document, Hit, summarize


# ------------------------------------------------------------------------------ describe, per source

@pytest.mark.parametrize("row,expected", [
    # Metamath: the comment's first sentence heads it, the label is its own name
    (("metamath:fta", "metamath", "theorem", "fta", "The Fundamental Theorem of Algebra"),
     ("The Fundamental Theorem of Algebra", "fta", "")),
    # PlanetMath: the entry's title heads it; its title column is the subject category: the context
    (("planetmath:PID", "planetmath", "definition", "PID", "Associative rings and algebras"),
     ("PID", "PID", "Associative rings and algebras")),
    # Stacks: the name, the tag, the breadcrumb
    (("stacks:00DV", "stacks", "lemma", "Nakayama's lemma", "Commutative Algebra > Nakayama's lemma"),
     ("Nakayama's lemma", "00DV", "Commutative Algebra > Nakayama's lemma")),
    # Open Logic: the \ollabel is the label; a numbered statement's label is its id
    (("openlogic:first-order-logic/completeness/maximally-consistent-sets#prop:mcs", "openlogic", "proposition",
      "mcs", "First-order Logic > The Completeness Theorem > Maximally Consistent Sets of Sentences"),
     ("mcs", "prop:mcs", "First-order Logic > The Completeness Theorem > Maximally Consistent Sets of Sentences")),
    # an untitled statement: its kind and the last part of its breadcrumb, never the whole breadcrumb
    (("napkin:H113/grp-intro:2", "napkin", "fact", "", "Starting Out > Groups > Properties of groups"),
     ("Fact in Properties of groups", "H113/grp-intro:2", "Starting Out > Groups > Properties of groups")),
    # Lean: the qualified name (the name column holds its words), the module as context
    (("lean:Toy.gauss_sum", "lean", "theorem", "Toy gauss sum", "Toy.Sum"),
     ("Toy.gauss_sum", "Toy.gauss_sum", "Toy.Sum")),
    # ProofWiki: the heading made from the statement, as the bundle holds it
    (("proofwiki:14f7d946-725a-46fe-a685-d79d8197d478", "proofwiki", "theorem", "", "Its boundary ∂K is compact"),
     ("Its boundary ∂K is compact", "14f7d946-725a-46fe-a685-d79d8197d478", "")),
    # ProofNet: the exercise, the book
    (("proofnet:Rudin|exercise_4_8b", "proofnet", "exercise", "Rudin exercise 4.8b",
      "Rudin, Principles of Mathematical Analysis"),
     ("Rudin exercise 4.8b", "Rudin|exercise_4_8b", "Rudin, Principles of Mathematical Analysis")),
])
def test_describe_per_source(row, expected):
    assert tuple(describe(*row)) == expected


def test_hit_and_document_carry_the_same_three_fields():
    common = dict(id="lean:Toy.gauss_sum", source="lean", kind="theorem", name="Toy gauss sum", title="Toy.Sum",
                  text="", link="", license="")
    hit = Hit(**common, score=1.0, fields={"aliases": ["Gauss's formula"]})
    doc = Document(**common, body="", slogan="", bundle="toy-0.1.0", fields={"aliases": "Gauss's formula; sum"})
    assert (hit.heading, hit.label, hit.context) == (doc.heading, doc.label, doc.context)
    assert hit.name == doc.name == "Toy.gauss_sum"                  # the qualified name, in search and in show
    assert doc.fields["aliases"] == ["Gauss's formula", "sum"]      # a list, as on a hit
    assert summarize(hit).heading == "Toy.gauss_sum"


def test_a_finding_without_a_name_is_headed_by_its_first_words():
    statement = "Every finite group of prime order is cyclic. By Lagrange the order of an element divides p."
    common = dict(id="finding:0123456789abcdef", source="findings", kind="finding", name="", title="",
                  link="https://example.org/note", license="unknown (web)")
    hit = Hit(**common, text=statement[:60], score=0.1)
    doc = Document(**common, text=statement, body=statement, slogan="", bundle="findings")
    assert hit.heading == doc.heading == "Every finite group of prime order is cyclic"
    assert hit.label == doc.label == "0123456789abcdef" and hit.context == doc.context == ""


def test_first_words_skip_the_list_of_defined_terms():
    """The retrieval text's "Defines …" sentence (mathlas_build.retrieval_text) ends with a period,
    whatever its terms hold: two PlanetMath entries end their terms with ';'."""
    from mathlas.headings import first_words

    assert first_words("UFD. Defines factorial ring, UFD. An integral domain D such that", ("UFD",)) == \
        "An integral domain D such that"
    assert first_words("X. Defines a; b; c. The statement here. More.", ("X",)) == "The statement here"
    assert first_words("Defines a, b", ()) == "Defines a, b"   # nothing after it: kept


def test_a_summary_does_not_repeat_the_heading():
    hit = Hit(id="metamath:fta", source="metamath", kind="theorem", name="fta",
              title="The Fundamental Theorem of Algebra",
              text="fta. The Fundamental Theorem of Algebra. Any polynomial with positive degree has a root.",
              link="", license="", score=0.5)
    s = summarize(hit)
    assert s.heading == "The Fundamental Theorem of Algebra" and s.snippet.startswith("Any polynomial")



def test_a_long_id_takes_its_extra_characters_from_the_snippet():
    from mathlas.hit import SUMMARY_ID_CHARS, SUMMARY_SNIPPET_CHARS

    text = " ".join(f"word{i}" for i in range(80))

    def summary(doc_id):
        return summarize(Hit(id=doc_id, source="openlogic", kind="theorem", name="Compactness", title="Compactness",
                             text=text, link="", license="", score=0.5))

    short = summary("openlogic:" + "a" * (SUMMARY_ID_CHARS - 10))
    long = summary("openlogic:" + "a" * (SUMMARY_ID_CHARS + 20))   # 30 characters over
    room = SUMMARY_SNIPPET_CHARS + 20 - len("Compactness") - 30
    assert len(long.snippet) <= room + 2 < len(short.snippet) and long.snippet.startswith("word0")
    assert len(summary("openlogic:" + "a" * 400).snippet) >= 60   # never under 60

# ------------------------------------------------------------------------------ tidying (items 6, 8, 9)

def test_tidy_reads_tex_left_in_headings():
    assert tidy("Karl Weierstra ss") == "Karl Weierstraß"                 # a \ss the build read as a word
    assert tidy("Bolzano-Weierstra ss") == "Bolzano-Weierstraß"
    assert tidy("The Lowenheim--Skolem Theorem") == "The Lowenheim–Skolem Theorem"
    assert tidy("Lambda f is \u200econtinuous") == "Lambda f is continuous"
    assert tidy("a class ssh") == "a class ssh"                           # words are left alone


@pytest.mark.parametrize("words,unicode", [
    ("Its boundary partial K is compact", "Its boundary ∂K is compact"),
    ("U intersection V is an open set of (S, NN)", "U ∩ V is an open set of (S, NN)"),
    ("There exist open sets U and V such that x in U, C subset V, and U intersection V = empty …",
     "There exist open sets U and V such that x ∈ U, C ⊆ V, and U ∩ V = ∅ …"),
    ("(1 - x) sum_(i = 0)^(n - 1) x^i = 1 - x^n", "(1 − x) ∑_(i = 0)^(n − 1) x^i = 1 − x^n"),
    ("Phi is injective", "Φ is injective"),
    # words, not formulas
    ("A partial order on a set is in the empty set", "A partial order on a set is in the empty set"),
    ("The gamma function is log-convex", "The gamma function is log-convex"),
    ("The sum of the angles of a triangle", "The sum of the angles of a triangle"),
])
def test_formula_words_back_to_symbols(words, unicode):
    assert formula_words(words) == unicode


def test_formula_words_alike_when_its_kept_tokens_are_dropped(monkeypatch):
    """What ``formula_words`` keeps per token (its split, whether it reads as a formula's) is cleared
    when full; the answers do not depend on what was kept."""
    import mathlas.headings as headings

    texts = ["U intersection V = empty", "(1 - x) sum_(i = 0)^(n - 1) x^i = 1 - x^n", "Phi is injective",
             "The gamma function is log-convex", "x not in A implies x in B", "Integral x d x"]
    first = [formula_words(t) for t in texts]
    monkeypatch.setattr(headings, "TOKENS_KEPT", 3)
    headings._SPLITS.clear()
    headings._FORMULA_TOKENS.clear()
    for _ in range(2):
        assert [formula_words(t) for t in texts] == first
    assert len(headings._SPLITS) <= 3 and len(headings._FORMULA_TOKENS) <= 3


def test_plain_markdown():
    assert plain_markdown("**Gauss's formula**: twice the sum of the first `n` numbers is `n * (n + 1)`.") == \
        "Gauss's formula: twice the sum of the first n numbers is n * (n + 1)."
    assert plain_markdown("See [Nat.Prime](https://example.org/a_(b)) and *this* or __that__.") == \
        "See Nat.Prime and this or that."
    assert plain_markdown("# Main results\n* one\n* two") == "Main results\n• one\n• two"
    assert plain_markdown("$a * b$ and a*b") == "$a * b$ and a*b"


# ------------------------------------------------------------------------------ item 6 at build time

def test_latex_to_text_reads_text_accents_and_ligatures():
    from mathlas_build.latex import latex_to_text

    assert latex_to_text(r"Karl Weierstra\ss") == "Karl Weierstraß"
    assert latex_to_text(r"Bolzano--Weierstra\ss{} theorem") == "Bolzano–Weierstraß theorem"
    assert latex_to_text(r"G\"odel, G\"{o}del, \v{S}ilov, Erd\H{o}s, Fran\c{c}ois") == "Gödel, Gödel, Šilov, Erdős, François"
    assert latex_to_text(r"L\"owenheim--Skolem --- a theorem") == "Löwenheim–Skolem — a theorem"
    assert latex_to_text(r"{\ss}e and \ae on") == "ße and æon"       # TeX: a control word eats the space after it


def test_lexical_words_adds_ascii_letters():
    from mathlas.bundle import lexical_words

    assert lexical_words("Karl Weierstraß and Gödel").split()[-2:] == ["Weierstrass", "Godel"]
    assert lexical_words("plain words") == "plain words"
    assert lexical_words("Erdős–Rényi", "tokenizer").split()[-2:] == ["Erdos", "Renyi"]


def test_a_proofwiki_heading_is_made_in_unicode():
    from mathlas_build.display import unicode_text
    from mathlas_build.sources.proofwiki import heading

    body = (r"Let $T = \left(S, \tau\right)$ be a Hausdorff topological space. Let $K \subset S$ be a compact "
            r"subspace of $T$. Then its boundary $\partial K$ is compact.")
    assert heading(unicode_text(body)) == "Its boundary ∂K is compact"
    assert unicode_text(r"$U \cap V = \varnothing$ and $\displaystyle \left(1 - x\right) \sum_{i \mathop = 0}^{n - 1} x^i$") \
        == "U ∩ V = ∅ and (1 − x) ∑_(i = 0)^(n − 1) x^i"


def test_a_body_that_defines_its_macros_shows_no_debris():
    from mathlas_build.display import display_tex

    out = display_tex("\\newcommand{\\K}[0]{K}\n\\newcommand{\\tr}[1]{#1^{T}}\n\nWe use $\\K$ and $\\tr{A}$.")
    assert out == "We use $K$ and $A^{T}$."


def test_display_text_without_the_page_debris():
    from mathlas_build.display import display_tex, math_commands

    out = display_tex(r"i.e.\ the set $(x)\sp2$ and $A^{\comp}$, resp.\ $B$; G.\ L.\ Naber. A\\ B")
    assert out == r"i.e. the set $(x)^2$ and $A^{\complement }$, resp. $B$; G. L. Naber. A\\ B"
    assert math_commands(out) == set()


def test_metamath_rm_with_a_group_is_mathrm():
    from mathlas_build.mmtex import fix_tex

    assert fix_tex(r"( \rm{Poly} ` S )") == r"( \mathrm{Poly} ` S )"


# ------------------------------------------------------------------------------ the surfaces, default bundle

def run(*argv: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("MATHLAS_BUNDLE",)}
    return subprocess.run([sys.executable, "-m", "mathlas", *argv], capture_output=True, text=True, timeout=300,
                          env=env, check=False)


def fields3(x: dict) -> tuple[str, str, str]:
    return x["heading"], x["label"], x["context"]


@pytest.mark.parametrize("query,source,doc_id", [
    ("fundamental theorem of algebra", "metamath", "metamath:fta"),
    ("PID", "planetmath", "planetmath:PID"),
    ("Nakayama's lemma", "stacks", "stacks:00DV"),
    ("boundary of a compact set in a Hausdorff space is compact", "proofwiki",
     "proofwiki:14f7d946-725a-46fe-a685-d79d8197d478"),
])
@pytest.mark.slow
def test_search_and_show_agree_on_every_surface(default_bundle_dir, query, source, doc_id):
    found = run("search", query, "--source", source, "-k", "10", "--json", "-q")
    assert found.returncode == 0, found.stderr
    hit = next(h for h in json.loads(found.stdout)["hits"] if h["id"] == doc_id)
    shown = run("show", doc_id, "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert fields3(hit) == fields3(doc)
    heading = hit["heading"]
    # the text surfaces: the listing and show both head the document with it; a heading the id already
    # says (planetmath:PID) gives its place to the statement's first words (mathlas.headings.first_words)
    listing = run("search", query, "--source", source, "-k", "10", "-q").stdout
    line = next(x for x in listing.splitlines() if f". {doc_id} " in x or x.rstrip().endswith(f". {doc_id}"))
    first = run("show", doc_id).stdout.splitlines()[0]
    if doc_id.endswith(":" + heading):
        from mathlas.headings import first_words

        words = first_words(doc["text"], (heading, doc["label"], doc["name"]))
        assert words and line.split(doc_id)[1].strip() == first_words(hit["text"], (heading, hit["label"], hit["name"]))
        assert first == f"{doc_id}  {words}"
    else:
        assert line.split(doc_id)[1].strip() == heading and first == f"{doc_id}  {heading}"
    assert "Associative rings and algebras" not in line           # a category is context, never a heading


def test_metamath_heading_on_the_api_and_mcp(default_bundle_dir):
    from mathlas.hit import summarize
    from mathlas.service import document
    from mathlas.tools.informal import get_statement, search_existing_math

    doc = document("metamath:fta")
    assert (doc.heading, doc.label, doc.context) == ("The Fundamental Theorem of Algebra", "fta", "")
    result = search_existing_math("fundamental theorem of algebra", k=3, source_filter={"include": ["metamath"]})
    top = result.hits[0]
    assert top.id == "metamath:fta" and top.heading == doc.heading
    assert summarize(top).heading == doc.heading      # what the MCP search tools answer with by default
    assert get_statement("metamath:fta").heading == doc.heading


# ------------------------------------------------------------------------------ the surfaces, a Lean bundle

@pytest.mark.slow
def test_lean_search_and_show_agree(lean_project_bundle_dir, monkeypatch):
    monkeypatch.setenv("MATHLAS_FORMAL_BUNDLE", str(lean_project_bundle_dir))
    env_run = lambda *a: subprocess.run([sys.executable, "-m", "mathlas", *a], capture_output=True, text=True,  # noqa: E731
                                        timeout=300, env={**os.environ}, check=False)
    found = env_run("lean", "search", "Gauss's formula", "-k", "3", "--json")
    assert found.returncode == 0, found.stderr
    hit = next(h for h in json.loads(found.stdout)["hits"] if h["id"] == "lean:Toy.gauss_sum")
    shown = env_run("show", "lean:Toy.gauss_sum", "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert fields3(hit) == fields3(doc) == ("Toy.gauss_sum", "Toy.gauss_sum", "Toy.Sum")
    assert hit["name"] == doc["name"] == "Toy.gauss_sum"
    assert isinstance(doc["fields"].get("aliases", []), list)
    # the docstring's Markdown is plain text in the text output (it showed "**Gauss's formula**")
    text = env_run("show", "lean:Toy.gauss_sum").stdout
    listing = env_run("lean", "search", "Gauss's formula", "-k", "3").stdout
    for out in (text, listing):
        assert "Gauss's formula: twice the sum" in out and "**" not in out, out


def test_an_old_bundles_proofwiki_title_gets_its_symbols_back_and_a_new_ones_is_left_as_it_is():
    """Bundles before 1.4.0 read a ProofWiki title's formulas out as words ("partial K"); later ones draw
    them in Unicode, where the words "in" and "product" are English ("⟨x_n⟩ in M", "matrix product A B")."""
    from types import SimpleNamespace

    from mathlas.headings import old_bundle_heading, old_proofwiki_titles

    pw = "proofwiki:14f7d946-725a-46fe-a685-d79d8197d478"
    assert describe(pw, "proofwiki", "theorem", "", "Its boundary partial K is compact",
                    formulas_as_words=True).heading == "Its boundary ∂K is compact"
    for title in ("Convergent sequence ⟨x_n⟩ in metric space M is bounded", "The matrix product A B is defined"):
        assert describe(pw, "proofwiki", "theorem", "", title).heading == title
    assert [old_proofwiki_titles("informal", v) for v in ("1.1.0", "1.3.0", "1.4.0", "1.6.0", "")] == \
        [True, True, False, False, False]
    assert not old_proofwiki_titles("mathlib", "1.0.0")
    old, new = SimpleNamespace(name="informal", version="1.3.0"), SimpleNamespace(name="informal", version="1.6.0")
    assert old_bundle_heading(old, pw, "proofwiki", "theorem", "", "Its boundary partial K is compact") == \
        "Its boundary ∂K is compact"
    assert old_bundle_heading(new, pw, "proofwiki", "theorem", "", "Its boundary partial K is compact") == ""
    assert old_bundle_heading(old, "stacks:00DV", "stacks", "lemma", "Nakayama's lemma", "Algebra") == ""


def test_a_metamath_comment_that_compares_is_its_heading_and_an_old_section_path_is_not():
    sentence = "If a finite friendship graph is k-regular with k > 1, then k must be 2"
    assert describe("metamath:frgrareggt1", "metamath", "theorem", "frgrareggt1", sentence).heading == sentence
    old = describe("metamath:x", "metamath", "theorem", "x", "GRAPH THEORY > Friendship graphs")
    assert (old.heading, old.context) == ("x", "GRAPH THEORY > Friendship graphs")


def test_a_stacks_statement_named_by_its_label_is_headed_by_its_kind_and_section():
    from mathlas.headings import stacks_heading

    title = "Commutative Algebra > Nakayama's lemma"
    assert stacks_heading("lemma", "when surjective local", title, "algebra-lemma-when-surjective-local") == \
        "Lemma in Nakayama's lemma"
    assert stacks_heading("lemma", "NAK localization", title, "algebra-lemma-NAK-localization") == \
        "Lemma in Nakayama's lemma"
    # a chapter stem with a hyphen
    assert stacks_heading("lemma", "derived complete zero", "More on Algebra > Derived Completion",
                          "more-algebra-lemma-derived-complete-zero") == "Lemma in Derived Completion"
    # a name the source gives is the heading, also one equal to the label's words but for case
    # (smoothing-theorem-popescu is [Popescu]), or a label word the reader spelt with its accents
    assert stacks_heading("lemma", "Nakayama's lemma", title, "algebra-lemma-NAK") == ""
    assert stacks_heading("theorem", "Popescu", "Smoothing Ring Maps > The main theorem", "smoothing-theorem-popescu") == ""
    assert stacks_heading("lemma", "Chinese remainder", "Algebra > Miscellany", "algebra-lemma-chinese-remainder") == ""
    assert stacks_heading("definition", "étale", "More on Algebra > Étale", "more-algebra-definition-etale") == ""
    assert stacks_heading("lemma", "Key Lemma (secondary ramification)", "X > Y", "x-lemma-secondary-ramification") == ""
    assert stacks_heading("lemma", "when surjective local", title, None) == ""


def test_stacks_label_headings_on_every_surface(default_bundle_dir):
    """A walkthrough read Stacks headings as junk: "0E8M when surjective local", "034V PID UFD" (the
    \\label's words, which the Stacks site never shows). Search, show, the API's document and the MCP
    summary head them by kind and section now; a Stacks name of its own (Nakayama's lemma) stays."""
    from mathlas.hit import summarize
    from mathlas.request import SearchRequest
    from mathlas.service import document, search

    doc = document("stacks:0E8M")
    assert (doc.heading, doc.label, doc.name) == ("Lemma in Nakayama's lemma", "0E8M", "when surjective local")
    got = search(SearchRequest.make("Nakayama lemma", 10), default_bundle_dir, findings=False)
    hit = next(h for h in got.hits if h.id == "stacks:0E8M")
    assert hit.heading == doc.heading and summarize(hit).heading == doc.heading
    assert document("stacks:00DV").heading == "Nakayama's lemma"
    assert document("stacks:07GC").heading == "Popescu" and document("stacks:00DT").heading == "Chinese remainder"
    listing = run("search", "Nakayama lemma", "-k", "10", "-q").stdout
    assert "stacks:0E8M  Lemma in Nakayama's lemma" in listing and "when surjective local\n" not in listing
