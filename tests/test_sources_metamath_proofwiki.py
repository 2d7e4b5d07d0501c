"""Source readers: Metamath set.mm and the PS-ProofWiki dump (on the real corpora), and the set.mm parser."""
from __future__ import annotations

import hashlib
import json
import re

import pytest

from mathlas_build.display import leaks
from mathlas_build.document import Document
from mathlas_build.retrieval_text import retrieval_text
from mathlas_build import display
from mathlas_build.sources import metamath, proofwiki, reader
from conftest import by_id, corpus


@pytest.fixture(scope="module")
def mm_docs() -> dict[str, Document]:
    return by_id(list(metamath.read(corpus("metamath"))), "Metamath")


@pytest.fixture(scope="module")
def pw_docs() -> dict[str, Document]:
    return by_id(list(proofwiki.read(corpus("ps-proofwiki"))), "ProofWiki")


def _digest(docs) -> str:
    h = hashlib.sha256()
    for d in docs:
        h.update(repr((d.id, d.kind, d.name, d.title, d.body, d.statement, d.slogan, d.link, d.line,
                       sorted(d.extra.items()))).encode())
    return h.hexdigest()


def test_registry():
    for key, mod in (("metamath", metamath), ("proofwiki", proofwiki)):
        assert reader(key) is mod
        assert key == mod.SOURCE and mod.ATTRIBUTION and callable(mod.read)
    assert metamath.LICENSE == "CC0-1.0" and proofwiki.LICENSE == "CC-BY-SA-3.0"


# ------------------------------------------------------------------------------------------------ parser

TINY_MM = """$( Header comment $)
$c ( ) -> wff |- $.
$v ph ps $.
wph $f wff ph $.
wps $f wff ps $.
$( Implication is a wff. $)
wi $a wff ( ph -> ps ) $.
$(
#*#*#*#*#*#*#*#*#*#*
  Propositional calculus
#*#*#*#*#*#*#*#*#*#*
  Intro text of the chapter.
$)
${
  min $e |- ph $.
  maj $e |- ( ph -> ps ) $.
  $( Rule of Modus Ponens. (Contributed by NM, 5-Aug-1993.) $)
  ax-mp $a |- ps $.
$}
$( Define a thing. ` ( ph -> ps ) ` see ~ ax-mp . (New usage is discouraged.) $)
df-x $a |- ( ph -> ps ) $.
$d ph ps $.
$( Old version of ~ th1 .  (Proof modification is discouraged.) $)
th1OLD $p |- ( ph -> ph ) $= ? $.
$( A theorem. $)
th1 $p |- ( ph -> ph ) $=
  ( wi ) ABC $.
"""


def test_parser_on_a_tiny_database(tmp_path):
    sts = list(metamath.statements(TINY_MM))
    assert [s.label for s in sts] == ["ax-mp", "df-x", "th1OLD", "th1"]        # no wff syntax axiom, no $e, $f
    mp = sts[0]
    assert mp.keyword == "$a" and mp.expr == ["|-", "ps"]
    assert mp.hyps == [("min", ["|-", "ph"]), ("maj", ["|-", "(", "ph", "->", "ps", ")"])]
    assert mp.sections == ("", "Propositional calculus", "", "")
    assert " ".join(mp.comment.split()) == "Rule of Modus Ponens. (Contributed by NM, 5-Aug-1993.)"
    assert TINY_MM.splitlines()[mp.line - 1].strip().startswith("ax-mp $a")
    assert sts[1].hyps == [] and sts[3].line == len(TINY_MM.splitlines()) - 1     # scope closed; line of th1

    (tmp_path / "set.mm").write_text(TINY_MM, encoding="utf-8")
    docs = {d.name: d for d in metamath.read(tmp_path)}
    assert sorted(docs) == ["ax-mp", "df-x", "th1"]                              # th1OLD: obsolete, skipped
    assert [docs[k].kind for k in ("ax-mp", "df-x", "th1")] == ["axiom", "definition", "theorem"]
    assert docs["ax-mp"].body == ("Rule of Modus Ponens.\n\nmin $e |- ph $.\nmaj $e |- ( ph -> ps ) $.\n"
                                  "ax-mp $a |- ps $.")
    assert docs["ax-mp"].statement == "Given ph; ph implies ps, then ps"
    assert docs["df-x"].slogan == "Define a thing. ph implies ps see ax-mp."
    assert docs["df-x"].extra["discouraged"] is True and docs["th1"].extra["discouraged"] is False
    with_old = {d.name for d in metamath.read(tmp_path / "set.mm", obsolete=True)}
    assert "th1OLD" in with_old


def test_symbol_words():
    assert metamath.symbol_words("|- ( A e. B -> A C_ U. B )".split()) == \
        "A element of B implies A subset of union of B"
    assert metamath.symbol_words("|- ( A =/= (/) <-> -. A = (/) )".split()) == \
        "A not equal empty set if and only if not A equals empty set"
    assert all(isinstance(k, str) and " " not in k for k in metamath.SYMBOL_WORDS)
    assert len(metamath.SYMBOL_WORDS) <= 100                                      # a short table


def test_comment_cleaning():
    c = ("Define ` ( F `` A ) ` , see ~ cos0 and ~ http://www.cs.ru.nl/~~freek/100/ . A _single_ ` e. ` "
         "&amp; <HTML><b>x</b></HTML> (Contributed by NM, 1-Aug-1994.) (Revised by Mario Carneiro, "
         "3-May-2015.) (Proof shortened by Wolf Lammen, 2-Jan-2020.) (New usage is discouraged.) "
         "(Proof modification is discouraged.)")
    assert metamath.strip_markers(c) == ("Define ` ( F `` A ) ` , see ~ cos0 and ~ http://www.cs.ru.nl/~~freek/100/ . "
                                         "A _single_ ` e. ` &amp; <HTML><b>x</b></HTML>")
    assert metamath.comment_words(c) == ("Define F A, see cos0 and http://www.cs.ru.nl/~freek/100/. "
                                         "A single element of & x")


# ------------------------------------------------------------------------------------------------ set.mm

def test_metamath_counts_kinds_links(mm_docs):
    # set.mm (28-Dec-2020): 37,779 $p + 1,358 |- $a; 699 OLD / ALT / "Obsolete" statements skipped
    assert 37000 <= len(mm_docs) <= 40000
    kinds = {d.kind for d in mm_docs.values()}
    assert kinds == {"theorem", "axiom", "definition"}
    assert 1000 <= sum(d.kind == "definition" for d in mm_docs.values()) <= 1500
    assert 80 <= sum(d.kind == "axiom" for d in mm_docs.values()) <= 200
    for d in mm_docs.values():
        label = d.id.removeprefix("metamath:")
        assert re.fullmatch(r"metamath:[A-Za-z0-9._-]+", d.id) and d.name == label == d.extra["label"]
        assert d.link == f"https://us.metamath.org/mpeuni/{label}.html"
        assert d.source == "metamath" and d.license == "CC0-1.0" and d.file == "set.mm" and d.line > 0
        assert d.statement.strip() and f"{label} $" in d.extra["formula"]
        assert len(d.title.split()) >= 2, d.id                                  # titled (issue 21)
    # typeset: set.mm's ASCII reaches KaTeX only where a mathbox token has no latexdef, or where a comment
    # quotes set.mm in prose outside ` ... ` (a proof listing, as the author wrote it)
        assert d.kind != "definition" or label.startswith("df-")
        assert not re.search(r"(OLD|ALT)\d*$", label), label
    leaky = [d.id for d in mm_docs.values() if leaks(d.body, setmm=True)]
    assert len(leaky) <= 20, leaky[:20]
    assert "metamath:conventions" not in mm_docs and "metamath:helloworld" not in mm_docs   # guide page, joke
    assert "metamath:ex-fv" in mm_docs and "metamath:ex-natded5.2" in mm_docs              # examples stay


def test_metamath_display_text(mm_docs):
    # 1.1.0 gave KaTeX set.mm's ASCII ("|- ( J e. CNrm -> J e. Nrm )" drawn as italic letters) and left
    # HTML entities in the description; the title was the section path, the heading the label
    d = mm_docs["metamath:cnrmnrm"]
    assert d.body == "A completely normal space is normal.\n\n$\\vdash ( J \\in {\\rm CNrm} \\rightarrow J \\in {\\rm Nrm} )$"
    assert d.title == "A completely normal space is normal" and d.name == "cnrmnrm"
    assert d.extra["formula"] == "cnrmnrm $p |- ( J e. CNrm -> J e. Nrm ) $."
    inf3 = mm_docs["metamath:inf3"]
    assert "&" not in inf3.body and r"\texttt{ax-inf}" in inf3.body
    assert inf3.title == "Our Axiom of Infinity ax-inf implies the standard Axiom of Infinity"
    assert mm_docs["metamath:hbe1"].title == "𝑥 is not free in ∃ 𝑥 𝜑"                  # math from althtmldef
    assert "xrightarrow" in mm_docs["metamath:f1f"].body                                # -1-1-> without raisebox
    for i in ("metamath:ax-mp", "metamath:cnrmnrm", "metamath:inf3", "metamath:tcsni", "metamath:sylow1"):
        assert leaks(mm_docs[i].body, setmm=True) == [], i
        assert "In " + mm_docs[i].extra["context_title"] in retrieval_text(mm_docs[i])     # as in 1.1.0


def test_metamath_known_statements(mm_docs):
    mp = mm_docs["metamath:ax-mp"]
    assert mp.kind == "axiom" and mp.slogan.startswith("Rule of Modus Ponens.")
    assert mp.extra["formula"] == "min $e |- ph $.\nmaj $e |- ( ph -> ps ) $.\nax-mp $a |- ps $."
    assert mp.body.endswith("Hypotheses: $\\vdash \\varphi$ (\\texttt{min}); "
                            "$\\vdash ( \\varphi \\rightarrow \\psi )$ (\\texttt{maj}).\n\nAssertion: $\\vdash \\psi$")
    assert mp.title == "Rule of Modus Ponens"
    assert mp.extra["context_title"].startswith("CLASSICAL FIRST-ORDER LOGIC WITH EQUALITY > Propositional calculus")
    cleq = mm_docs["metamath:df-cleq"]
    assert cleq.kind == "definition" and "equality connective between classes" in cleq.slogan
    assert mm_docs["metamath:ax-ext"].kind == "axiom" and "Extensionality" in mm_docs["metamath:ax-ext"].slogan
    syl = mm_docs["metamath:sylow1"]
    assert syl.kind == "theorem" and syl.slogan.startswith("Sylow's first theorem.")
    assert "sylow1 $p |- ( ph -> E. g e. ( SubGrp ` G ) ( # ` g ) = ( P ^ N ) ) $." in syl.extra["formula"]
    assert syl.title == "Sylow's first theorem"
    assert "there exists g element of SubGrp G" in syl.statement and "P element of primes" in syl.statement
    fta = mm_docs["metamath:fta"]
    assert "Fundamental Theorem of Algebra" in fta.slogan and "complex numbers" in fta.statement
    text = retrieval_text(syl)
    assert text.startswith("sylow1. Sylow's first theorem.") and "In BASIC ALGEBRAIC STRUCTURES" in text


def test_metamath_comments_stripped(mm_docs):
    for d in mm_docs.values():
        for field in (d.slogan, d.body):
            assert "(New usage is discouraged" not in field and "(Proof modification is" not in field, d.id
            assert "(Contributed by" not in field and "(Revised by" not in field, d.id
    # ~ label references and ` math ` spans turned into words (a handful of comments write a literal
    # tilde or backtick as ~~ / `` in prose: those stay)
    assert sum("~ " in d.slogan or "`" in d.slogan for d in mm_docs.values()) <= 10
    # discouraged statements other than OLD/ALT are kept, and say so
    disc = [d for d in mm_docs.values() if d.extra["discouraged"]]
    assert 3000 <= len(disc) <= 6000


@pytest.mark.slow
def test_metamath_without_mathboxes_and_with_obsolete():
    root = corpus("metamath")
    core = [d.id for d in metamath.read(root, mathboxes=False)]
    assert 25000 <= len(core) <= 28000 and "metamath:sylow1" in core
    assert not any(d.startswith("metamath:bj-") for d in core)
    everything = {d.id for d in metamath.read(root, obsolete=True)}
    assert 39000 <= len(everything) <= 39300 and "metamath:ax12OLD" not in core


def test_metamath_deterministic(mm_docs):
    again = list(metamath.read(corpus("metamath")))
    assert [d.id for d in again] == list(mm_docs)
    assert _digest(again) == _digest(mm_docs.values())


@pytest.mark.slow
def test_training_uses_the_same_parser():
    from mathlas_build.training import metamath as training_metamath

    assert training_metamath.statements is metamath.statements
    root = corpus("metamath")
    train = [d.id for d in training_metamath.read(root, limit=3000)]
    ours = [d.id for d in metamath.read(root, obsolete=True)][:3000]
    assert train == ours


# ------------------------------------------------------------------------------------------------ ProofWiki

_TEMPLATE = re.compile(r"\{\{\s*(?:eqn|iff|begin-|end-|explain|refactor|WIP|proofread|MissingLinks|TFAE|AuthorRef|"
                       r"Euclid|Defof|OEIS|qed)", re.I)


def test_proofwiki_counts_kinds(pw_docs):
    # 11,060 records: 11,010 distinct texts
    assert len(pw_docs) == 11010
    kinds = {d.kind for d in pw_docs.values()}
    assert kinds == {"theorem", "lemma", "corollary"}
    cats = {d.extra["category"] for d in pw_docs.values()}
    assert {"Topology", "Abstract Algebra", "Set Theory", "Numbers"} <= cats and len(cats) == 10
    for d in pw_docs.values():
        assert re.fullmatch(r"proofwiki:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", d.id), d.id
        assert d.source == "proofwiki" and d.license == "CC-BY-SA-3.0"
        assert d.link.startswith("https://proofwiki.org/w/index.php?search=") and d.extra["link_kind"] == "search"
        assert d.title not in cats and len(d.title.split()) >= 2, d.id     # a heading, never the category
        assert d.body.strip() and d.statement.strip()
        assert not _TEMPLATE.search(d.statement) and "'''" not in d.statement, (d.id, d.statement[:200])
        assert d.extra["split"] in ("train", "dev", "test") and d.file == f"output/{d.extra['split']}.json"


def test_proofwiki_duplicates_once(pw_docs):
    dups = [d for d in pw_docs.values() if "duplicate_ids" in d.extra]
    assert len(dups) == 47
    assert len({d.statement for d in pw_docs.values()}) >= 10990      # (a few texts differ in markup only)
    for d in dups:
        others = d.extra["duplicate_ids"].split()
        assert all(o not in pw_docs and o > d.id for o in others)


def test_proofwiki_known_statements(pw_docs):
    d = pw_docs["proofwiki:3815bc3c-256a-4a72-8f11-f08f43b7217a"]
    assert d.kind == "theorem" and d.extra["category"] == "Topology" and d.extra["split"] == "train"
    assert d.title == "Fortissimo space T is not a first-countable space"          # was "T is not a ..."
    assert d.link == "https://proofwiki.org/w/index.php?search=Fortissimo+space+not+first-countable"
    assert d.body == "Let $T = \\left(S, \\tau_p\\right)$ be a Fortissimo space. Then $T$ is not a first-countable space."
    assert d.statement == "Let T = (S, tau_p) be a Fortissimo space. Then T is not a first-countable space."
    e = pw_docs["proofwiki:c07a95f1-492c-48aa-a263-902eccaf861b"]
    assert e.name == "Euclid, Elements, Book V, Proposition 12"
    assert e.statement.startswith("If any number of magnitudes be proportional")
    assert retrieval_text(e).startswith("Euclid, Elements, Book V, Proposition 12. If any number")


def test_proofwiki_display_text(pw_docs):
    # 1.1.0's bodies were the wiki source: {{eqn}} / {{iff}} templates, ":" indents, \\paren, \\struct,
    # \\closedint and ProofWiki's other MathJax macros; a wiki table
    for i in ("proofwiki:ca89e6a5-df51-4729-8e0f-5bbd6f02766b", "proofwiki:c07a95f1-492c-48aa-a263-902eccaf861b",
              "proofwiki:883710eb-83f3-47f0-b776-386a683feb9a", "proofwiki:6f702395-8a90-4865-a565-2750b37fdea5",
              "proofwiki:d140a820-5153-4591-ba0b-da6b40fe1fa0"):
        assert leaks(pw_docs[i].body) == [], (i, leaks(pw_docs[i].body))
        assert display.math_commands(pw_docs[i].body) == set(), i
    assert sum(bool(leaks(d.body)) for d in pw_docs.values()) <= 5
    assert sum(bool(display.math_commands(d.body)) for d in pw_docs.values()) == 0
    titled = [d.title for d in pw_docs.values()]
    assert len(set(titled)) > 10000 and not {"Topology", "Numbers", "Abstract Algebra"} & set(titled)


def test_wiki_display():
    w = proofwiki.wiki_to_display
    eq = w("Then:\n{{begin-eqn}}\n{{eqn | l = x\n | o = \\le\n | r = y\n | c = by [[Definition:Order|order]]\n}}\n"
           "{{end-eqn}}\n:$a = b$\nQ3BoldQ3 {{iff}}".replace("Q3", "\'\'\'"))
    assert eq == "Then:\n\n$$x \\le y$$\n(by order)\n\n$$a = b$$\n\\textbf{Bold} if and only if"
    assert proofwiki.heading("Let G be a group. Then G is abelian.", "Algebra") == "Group G is abelian"
    assert proofwiki.heading("Let x ∈ S. Then x is abelian.", "Algebra") == "x is abelian"   # nothing describes x
    assert proofwiki.search_link("G is abelian") == "https://proofwiki.org/w/index.php?search=abelian"


def test_wiki_templates():
    w = proofwiki.wiki_to_latex
    assert w("$X$ is countable {{iff}}: $a$") == "$X$ is countable if and only if: $a$"
    assert "explain" not in w("Let $A$ be a ring.\n{{explain|Can this be weakened?}}\nThen")
    eq = w("{{begin-eqn}}\n{{eqn | l = \\cos \\frac \\theta 2\n | r = +\\sqrt {\\frac {1 + x} 2}\n"
           " | c = for $x$ in quadrant I\n}}\n{{end-eqn}}")
    assert eq.strip() == "$\\cos \\frac \\theta 2 = +\\sqrt {\\frac {1 + x} 2}$ (for $x$ in quadrant I)"
    assert w("{{AuthorRef|Georg Cantor|Cantor}} and '''bold''' [[Definition:Set|sets]]") == "Cantor and bold sets"


def _pw_read(tmp_path, *texts: str) -> list[Document]:
    """Raw ProofWiki statements (copied from the dump) read by the real reader as a one-split dump."""
    (tmp_path / "output").mkdir()
    records = {f"00000000-0000-0000-0000-{i:012d}": {"text": t, "category": "Set Theory", "type": "theorem",
                                                     "premises": []} for i, t in enumerate(texts)}
    (tmp_path / "output" / "train.json").write_text(json.dumps(records), encoding="utf-8")
    return list(proofwiki.read(tmp_path, splits=["train"]))


def test_proofwiki_doubled_capitals_are_calligraphic(tmp_path, pw_docs):
    # \RR is a relation, \NN a neighborhood space (calligraphic); \N the natural numbers (blackboard bold)
    rel, nbhd = _pw_read(tmp_path, "Let $\\RR$ be a trichotomy.\nThen $\\RR$ is an antireflexive relation.",
                         "Let $\\struct {S, \\NN}$ be a neighborhood space.\n"
                         "Let $n \\in \\N_{>0}$ be a natural number.")
    assert rel.body == "Let ${\\mathcal{R}}$ be a trichotomy. Then ${\\mathcal{R}}$ is an antireflexive relation."
    assert rel.title == "Trichotomy R is an antireflexive relation"         # was "ℝ is ..."
    assert rel.statement == "Let R be a trichotomy. Then R is an antireflexive relation."   # was "RR"
    assert nbhd.body.startswith("Let $\\left(S, {\\mathcal{N}}\\right)$ be a neighborhood space. "
                                "Let $n \\in {\\mathbb{N}}_{>0}$")
    assert nbhd.statement == "Let (S, N) be a neighborhood space. Let n in N_(>0) be a natural number."
    assert proofwiki.katex_math("$\\EE$") == "$\\mathcal{E}$"
    assert "ℝ" not in pw_docs["proofwiki:a2cec8b4-ddd2-4657-be5c-44e2845f9236"].title
    assert not any(re.search(r"\\mathbb\{[BMK]\}", d.body) for d in pw_docs.values())


def test_proofwiki_braces_in_math_are_not_templates(tmp_path, pw_docs):
    # older ProofWiki TeX: \left\{{S}\right\} -- its "{{" was taken for a template and cut the statement there
    [d] = _pw_read(tmp_path, "Let $S$ be a transitive set.\n"
                             "Then its successor set $S\\,^+ = S \\cup \\left\\{{S}\\right\\}$ is also transitive.")
    assert d.body == ("Let $S$ be a transitive set. Then its successor set $S\\,^+ = S \\cup \\left\\{{S}\\right\\}$ "
                      "is also transitive.")
    assert d.statement == "Let S be a transitive set. Then its successor set S^(+) = S union {S} is also transitive."
    assert d.title == "Its successor set S⁺ = S ∪ {S} is also transitive"
    assert proofwiki.wiki_to_latex("$\\left\\{{x}\\right\\}$ {{iff}} <math>{{y}}</math> {{iff}}") == \
        "$\\left\\{{x}\\right\\}$ if and only if <math>{{y}}</math> if and only if"
    gamma = pw_docs["proofwiki:37a13033-da93-47f7-8fdb-7030f91d1574"]          # was "Let: $D_ε = \\"
    assert gamma.body.startswith("Let: $$D_\\epsilon = \\left\\{{z \\in") and "gamma function" in gamma.body


def test_proofwiki_axiom_formulas_keep_their_math(tmp_path):
    [d] = _pw_read(tmp_path, """Let $\\struct {G, \\circ, \\preceq}$ be an ordered group.
Let $x, y \\in G$.
Let $\\prec$ be the reflexive reduction of $\\preceq$.
Then the following equivalences hold:
{{begin-axiom}}
{{axiom | n = \\operatorname {OG} 3
        | m = x \\preceq y \\iff e \\prec y^{-1} \\preceq x^{-1}
}}
{{axiom | n = \\operatorname {OG} 3'
        | m = x \\prec y \\iff y^{-1} \\prec x^{-1}
}}
{{end-axiom}}""")
    # was "x  y ⇔ e  y^{-1}  x^{-1}": the formula outside math lost its symbols
    assert d.body.endswith("hold:\n\n$\\operatorname {OG} 3$: $$x \\preceq y \\iff e \\prec y^{-1} \\preceq "
                           "x^{-1}$$\n\n$\\operatorname {OG} 3'$: $$x \\prec y \\iff y^{-1} \\prec x^{-1}$$")
    assert d.statement.endswith("hold: OG 3: x preceq y iff e prec y^-1 preceq x^-1 OG 3': x prec y iff y^-1 prec x^-1")
    assert leaks(d.body) == [] and display.math_commands(d.body) == set()
    named = proofwiki.wiki_to_display("{{axiom | n = \\text N 2\n | lc= Multiplicativity:\n"
                                      " | q = \\forall x, y \\in \\Q_p\n | ml= \\norm {x \\cdot y}_p\n | mo= =\n"
                                      " | mr= \\norm x_p \\times \\norm y_p\n}}")
    assert named == ("$\\text N 2$: Multiplicativity: "
                     "$$\\forall x, y \\in \\Q_p: \\norm {x \\cdot y}_p = \\norm x_p \\times \\norm y_p$$")


def test_proofwiki_links_and_titles(tmp_path, pw_docs):
    three, fourteen, vandermonde, hyperbola = _pw_read(
        tmp_path,
        "{{EuclidPropStatement|book=XI|prop=3|body=If two planes cut one another, their common section is a straight "
        "line.}}",
        "{{EuclidPropStatement|book=XI|prop=14|body=Planes to which the same straight line is at right angles will be "
        "parallel.}}",
        "Let $V_n$ be the '''Vandermonde determinant of order $n$''' defined as the following formulation:\n"
        ":$V_n = \\begin {vmatrix}\n x_1 &  {x_1}^2 \\\\\n x_2 &  {x_2}^2\n\\end{vmatrix}$",
        "The right-hand branch of $K$ can be expressed in parametric form as:\n"
        ":$\\begin {cases} x = a \\cosh \\theta \\\\ y = b \\sinh \\theta \\end {cases}$")
    # the numerals are the identity (every Euclid proposition had the search "Euclid Elements Book Proposition")
    assert three.link == "https://proofwiki.org/w/index.php?search=Euclid+Elements+Book+XI+Proposition+3"
    assert fourteen.link == "https://proofwiki.org/w/index.php?search=Euclid+Elements+Book+XI+Proposition+14"
    assert proofwiki.search_link("Let C be a set of 2 elements") == \
        "https://proofwiki.org/w/index.php?search=set+elements"                 # a letter, a count: not kept
    # titles: \textbf{..} and environments as text (were "\textbfVandermonde ...", "begincases x = a cosh ...")
    assert vandermonde.title == ("Let V_n be the Vandermonde determinant of order n defined as the following "
                                 "formulation …")
    assert hyperbola.title == ("The right-hand branch of K can be expressed in parametric form as: "
                               "{ x = a cosh θ, y = b …")
    assert not [d.id for d in pw_docs.values() if re.search(r"\\textbf|begin(cases|[pbv]?matrix)", d.title)]
    euclid = [d for d in pw_docs.values() if d.name]
    assert len(euclid) > 250 and len({d.link for d in euclid}) == len({d.name for d in euclid})


def test_proofwiki_macros_in_words(tmp_path, pw_docs):
    eqclass, cmod, relcomp, innerprod = _pw_read(
        tmp_path,
        "Let $\\RR$ be an equivalence relation on $S$.\nLet $x, y \\in S$.\n{{TFAE}}\n:$x \\mathrel \\RR y$\n"
        ":$y \\in \\eqclass x \\RR$",
        "Let $z \\in \\C$ be a complex number.\nLet $\\cmod z$ be the modulus of $z$.\nThen:\n"
        ": $\\cmod {z^2} = \\cmod z^2$",
        ":$\\relcomp S {\\relcomp S T} = T$",
        "Let $\\mathbf u$ and $\\mathbf v$ be $1 \\times n$ column vectors.\nThen:\n"
        ":$\\innerprod {A \\mathbf u} {\\mathbf v} = \\innerprod {\\mathbf u} {A^\\intercal \\mathbf v}$")
    assert eqclass.statement.endswith("The following are equivalent x R y y in [x]_R")
    assert cmod.statement == "Let z in C be a complex number. Let |z| be the modulus of z. Then: |z^2 | = |z|^2"
    assert relcomp.statement == "complement_S(complement_S(T)) = T"
    assert innerprod.statement.endswith("Then: < A u, v > = < u, A^intercal v >")
    assert not [d.id for d in pw_docs.values()
                if re.search(r"\b(?:eqclass|cmod|relcomp|innerprod)\b", retrieval_text(d))]


def test_proofwiki_heading_describes_a_bare_subject(tmp_path):
    # statements as the dump holds them; the subject of the sentence picked was a bare variable ("T is a T₄
    # space") that the set-up describes: the heading says what it is
    docs = _pw_read(
        tmp_path,
        "Let $T = \\struct {S, \\tau}$ be a compact Hausdorff space.\nThen $T$ is a $T_4$ space.",
        "Let $T = \\struct {S, \\tau}$ be a topological space which is irreducible.\nThen $T$ is connected.",
        "Let $M = \\struct {A, d}$ be a metric space.\nLet $M$ be separable.\nThen $M$ is second-countable.",
        "Let $G$ be a cyclic group.\nLet $H$ be a subgroup of $G$.\nThen $H$ is cyclic.",
        "Let $T = \\struct {S, \\tau_p}$ be a Fort space on a countably infinite set $S$.\n"
        "Then $T$ is a separable space.",
        "Let $\\struct {S, \\vee, \\wedge, \\preceq}$ be a lattice.\nThen $S$ has at most one top.",
        "Let $\\struct {G, \\circ}$ be a group.\n"
        "Then $\\struct {G, \\circ}$ has exactly $1$ subgroup of order $1$: the trivial subgroup.",
        "Let $M = \\struct {A, d}$ be a metric space.\nLet $\\sequence {x_n}$ be a sequence in $M$ which is "
        "convergent, and so $x_n \\to l$ as $n \\to \\infty$.\nThen $\\sequence {x_n}$ is bounded.",
        "Let $\\mathbb K$ be a field.\nLet $V$ be a vector space over $\\mathbb K$.\n"
        "Let $f$ be a bilinear form on $V$.\nLet $f$ be reflexive.\nThen $f$ is symmetric or alternating.")
    assert [d.title for d in docs] == [
        "Compact Hausdorff space T is a T₄ space",                    # each was "T is a T₄ space", ...
        "Irreducible topological space T is connected",
        "Separable metric space M is second-countable",
        "Subgroup H of cyclic group G is cyclic",
        "Fort space T on a countably infinite set S is a separable space",
        "Lattice S has at most one top",
        "Group (G, ∘) has exactly 1 subgroup of order 1: the trivial subgroup",
        "Convergent sequence ⟨ x_n⟩ in metric space M is bounded",
        "Reflexive bilinear form f on vector space V over K is symmetric or alternating"]
    assert docs[0].link == "https://proofwiki.org/w/index.php?search=Compact+Hausdorff+space"   # was "space"
    assert docs[3].link == "https://proofwiki.org/w/index.php?search=Subgroup+cyclic+group"     # was "cyclic"


def test_proofwiki_heading_keeps_a_subject_it_cannot_describe(tmp_path):
    docs = _pw_read(
        tmp_path,
        # another set-up sentence says why: "Class A is proper" would claim it of every class
        "Let $A$ be a class.\nLet $\\mathrm P$ be a proper class.\nLet $f: A \\to \\mathrm P$ be a surjection.\n"
        "Then $A$ is proper.",
        # a plural ("the p-adic numbers ... is")
        "Let $p$ be a prime number.\nLet $\\norm {\\,\\cdot\\,}^\\Q_p$ be the p-adic norm on the rationals $\\Q$.\n"
        "Let $\\struct {\\Q_p, \\norm {\\,\\cdot\\,}_p}$ be the $p$-adic numbers.\n"
        "Then $\\struct {\\Q_p, \\norm {\\,\\cdot\\,}_p}$ is a completion of "
        "$\\struct {\\Q, \\norm {\\,\\cdot\\,}^\\Q_p}$",
        # a description cut from its definition: not every mapping
        "Let $S$ be a set.\nLet $f: S \\to S$ be a mapping defined as:\n:$\\forall x \\in S: \\map f x = x$\n"
        "Then $f$ is a bijection.",
        # more than one variable
        "Let $x, y \\in \\R$ be real numbers.\nThen $x$ is smaller than $x + 1$.")
    assert [d.title for d in docs] == [
        "A is proper", "(ℚ_p, ‖ · ‖_p) is a completion of (ℚ, ‖ · ‖^ℚ_p)", "f is a bijection",
        "x is smaller than x + 1"]


def test_proofwiki_heading_is_not_a_set_up_sentence(tmp_path, pw_docs):
    docs = _pw_read(
        tmp_path,
        # the sentence after a display formula has no full stop before it (was "Let L = (S, ∨ , ∧ , preceq)
        # be a complete lattice")
        "Let $L = \\struct {S, \\vee, \\wedge, \\preceq}$ be a complete lattice.\nLet $X, Y$ be subsets of $S$ such "
        "that\n:$X$ is order generating\nand\n:$X \\subseteq Y$\nThen $Y$ is order generating.",
        # a formula after a full stop starts a sentence (was "It is comparable with all other topologies on S")
        "Let $T = \\struct {S, \\tau}$ be an indiscrete topological space.\n:$\\tau$ is the coarsest topology on "
        "$S$.\nHence it is comparable with all other topologies on $S$.",
        # so does a display row (was "Let x be an ordinal")
        "Let $x$ be an ordinal.\nLet $1$ denote the ordinal one.\n{{begin-eqn}}\n{{eqn|l = x \\cdot 1\n     |r = x\n"
        "     |c = \n}}\n{{eqn|l = 1 \\cdot x\n     |r = x\n     |c = \n}}\n{{end-eqn}}",
        # "That is, such that ..." still sets up (was "That is, such that S has more than two distinct elements")
        "Let $T = \\struct {S, \\tau_p}$ be a particular point space such that $S$ is not a singleton or a "
        "doubleton.\nThat is, such that $S$ has more than two distinct elements.\nThen $T$ is not a $T_4$ space.")
    assert [d.title for d in docs] == [
        "Y is order generating", "τ is the coarsest topology on S", "x · 1 = x 1 · x = x",
        "Particular point space T such that S is not a singleton or a doubleton is not a T₄ space"]
    lets = [d.id for d in pw_docs.values() if re.match(r"(?:Let|Suppose|Assume|Consider)\b", d.title)]
    assert len(lets) <= 40, len(lets)                  # 863 of 11,010 before; what is left says nothing else


def test_proofwiki_titles_hold_no_command_names(tmp_path, pw_docs):
    simple, symdif, stirling = _pw_read(
        tmp_path,
        "Let $\\struct {S_1, \\preccurlyeq_1}$ and $\\struct {S_2, \\preccurlyeq_2}$ be ordered sets.\n"
        "Let $\\struct {S_1, \\preccurlyeq_1} \\otimes^s \\struct {S_2, \\preccurlyeq_2}$ denote the '''simple (order) "
        "product''' of $\\struct {S_1, \\preccurlyeq_1}$ and $\\struct {S_2, \\preccurlyeq_2}$.\n"
        "Then $\\struct {S_1, \\preccurlyeq_1} \\otimes^s \\struct {S_2, \\preccurlyeq_2}$ is also an ordered set.",
        "Let $R, S, T$ be sets.\nThen:\n"
        ":$R \\symdif S \\subseteq \\paren {R \\symdif T} \\cup \\paren {S \\symdif T}$\n"
        "where $R \\symdif S$ denotes the symmetric difference between $R$ and $S$.",
        "Let $m, n \\in \\Z_{\\ge 0}$.\n:$\\ds \\sum_k {k \\brace m} \\binom n k = {n + 1 \\brace m + 1}$\nwhere:\n"
        ":$\\ds {k \\brace m}$ denotes a Stirling number of the second kind\n:$\\dbinom n k$ denotes a binomial "
        "coefficient.")
    # were "(S₁, preccurlyeq₁) ⊗ ^s (S₂, preccurlyeq₂) ...", "R ominus S ⊆ ...", "Let m, n ∈ ℤ_(≥ 0). ∑_k k brace m"
    assert simple.title == "(S₁, ≼₁) ⊗^s (S₂, ≼₂) is also an ordered set"
    assert symdif.title == "R ⊖ S ⊆ (R ⊖ T) ∪ (S ⊖ T) where R ⊖ S denotes the symmetric difference between R and S"
    assert stirling.title == ("∑_k {k m} (n choose k) = {(n + 1) (m + 1)} where: {k m} denotes a Stirling number "
                              "of the …")
    names = re.compile(r"\b(?:preceq|succeq|preccurlyeq|succcurlyeq|prec|succ|precsim|ominus|odot|boxtimes|dbinom|"
                       r"binom|pmod|bmod|brace|brack|cdotp|dotsb|dotsc|ddots|vdots|Bbb|lhd|intercal|underline|"
                       r"mathcal|mathbb|operatorname)\b")
    assert [d.title for d in pw_docs.values() if names.search(d.title)] == []   # 708 titles in 1.5.1


def test_proofwiki_deterministic(pw_docs):
    again = list(proofwiki.read(corpus("ps-proofwiki")))
    assert [d.id for d in again] == list(pw_docs)
    assert _digest(again) == _digest(pw_docs.values())


@pytest.mark.slow
def test_metamath_aliases_from_the_1000_plus_list():
    # the list's theorem names reach the labels it lists, entities decoded; the option is relative to root
    corpus("1000-plus")
    docs = {d.id: d for d in metamath.read(corpus("metamath"), mathboxes=False, thousand_plus="../1000-plus")}
    assert docs["metamath:pythag"].extra["aliases"] == "Pythagorean theorem"
    assert docs["metamath:htth"].extra["aliases"] == "Hellinger–Toeplitz theorem"
    assert docs["metamath:sylow1"].extra["aliases"] == "Sylow theorems"
    assert 20 <= sum("aliases" in d.extra for d in docs.values()) <= 38
    assert "aliases" not in docs["metamath:ax-mp"].extra
    with pytest.raises(FileNotFoundError, match="1000\\+ theorems list"):
        metamath.thousand_aliases(corpus("metamath"), "nowhere")
    # the manifest names the list's licence beside set.mm's
    assert metamath.attribution({}) == metamath.ATTRIBUTION
    line = metamath.attribution({"thousand_plus": "../1000-plus"})
    assert line.startswith(metamath.ATTRIBUTION) and "1000+ theorems list" in line and "Unlicense" in line
