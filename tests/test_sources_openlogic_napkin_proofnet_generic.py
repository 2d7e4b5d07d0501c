"""Source readers: Open Logic, Napkin, ProofNet (on the real corpora) and the generic JSONL/Parquet reader."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mathlas_build import display
from mathlas_build.display import leaks
from mathlas_build.document import Document
from mathlas_build.sources import generic, napkin, openlogic, proofnet, reader
from conftest import CORPORA, EVAL as EVAL_DIR
from conftest import by_id, corpus

EVAL = EVAL_DIR / "informal-dev.jsonl"


@pytest.fixture(scope="module")
def ol_docs() -> dict[str, Document]:
    return by_id(list(openlogic.read(corpus("open-logic"))), "Open Logic")


@pytest.fixture(scope="module")
def napkin_docs() -> dict[str, Document]:
    return by_id(list(napkin.read(corpus("napkin"))), "Napkin")


@pytest.fixture(scope="module")
def pn_docs() -> dict[str, Document]:
    return by_id(list(proofnet.read(corpus("proofnet"))), "ProofNet")


def _eval_targets(prefix: str) -> list[str]:
    if not EVAL.is_file():
        pytest.skip(f"eval set not found at {EVAL}")
    out = []
    for line in EVAL.read_text(encoding="utf-8").splitlines():
        if line.strip():
            out += [t for t in json.loads(line)["targets"] if t.startswith(prefix)]
    assert out, f"no {prefix} targets in {EVAL}"
    return out


def test_registry_modules_have_protocol():
    for key in ("openlogic", "napkin", "proofnet", "generic"):
        mod = reader(key)
        assert isinstance(mod.SOURCE, str) and isinstance(mod.LICENSE, str) and mod.ATTRIBUTION
        assert callable(mod.read)


# ------------------------------------------------------------------------------------------------ Open Logic

def test_openlogic_counts_and_kinds(ol_docs):
    assert 1200 <= len(ol_docs) <= 1300
    kinds = {d.kind for d in ol_docs.values()}
    assert kinds == {"theorem", "proposition", "lemma", "corollary", "definition", "axiom"}
    for d in ol_docs.values():
        assert d.source == "openlogic" and d.license == "CC-BY-4.0"
        assert re.fullmatch(r"openlogic:[A-Za-z0-9/_-]+#[^#\s]+", d.id), d.id
        assert d.link.startswith("https://github.com/OpenLogicProject/OpenLogic/blob/9620cc73f9c8e0ad003c514a5d3748f29611c4c0/content/")
        assert d.link.endswith(f"#L{d.line}") and d.file.startswith("content/") and d.line > 0
        assert d.statement.strip(), d.id
        for text in (d.statement, d.name, d.title):
            assert "!!" not in text and not re.search(r"![A-Z]", text), (d.id, text[:200])


def test_openlogic_known_statement(ol_docs):
    d = ol_docs["openlogic:computability/computability-theory/complement-ce#thm:ce-comp"]
    assert d.kind == "theorem" and d.name == "ce comp"
    assert d.title == "Computability > Computability Theory > Computably Enumerable Sets not Closed under Complement"
    assert "computably enumerable" in d.statement and "natural numbers" in d.statement
    assert re.search(r"[Cc]omplement (of )?A", d.statement)        # \Complement{A}: the word is kept
    assert d.link.endswith("content/computability/computability-theory/complement-ce.tex#L17")
    assert d.extra["label"] == "thm:ce-comp"
    # the line points at \begin{thm}
    src = (CORPORA / "open-logic" / d.file).read_text(encoding="utf-8").splitlines()
    assert src[d.line - 1].startswith("\\begin{thm}")


def test_openlogic_tokens_expanded(ol_docs):
    d = ol_docs["openlogic:first-order-logic/completeness/downward-ls#noidentity-ls"]
    assert "consistent set of sentences" in d.statement        # !!{sentence}s
    assert "a denumerable model" in d.statement                # !!a{denumerable}
    # a [Title] becomes the name, tokens in it expanded
    titled = ol_docs["openlogic:first-order-logic/axiomatic-deduction/proof-theoretic-notions#1"]
    assert titled.name == "Derivability" and not titled.body.startswith("[")     # the [Title] is the name
    # !A formula metavariables -> plain letters, in the words and in the display text
    assert not any(re.search(r"(?<![\\!])![A-Z]", x.statement + x.body) for x in ol_docs.values())
    # \iftag / \tagitem resolved, quantifier optional arguments expanded, \olref dropped
    d = ol_docs["openlogic:first-order-logic/completeness/compactness-direct#prop:fsat-instances"]
    assert "tagitem" not in d.statement and "prvEx" not in d.statement
    assert re.search(r"exists x\W*A\(x\)", d.statement.replace("\u2203", "exists")), d.statement
    assert not any(re.search(r"\[(fol|cmp|com)\]", x.statement) for x in ol_docs.values())


def test_openlogic_unlabelled_and_duplicate_labels(ol_docs):
    unlabelled = [d for d in ol_docs.values() if "label" not in d.extra]
    assert 500 <= len(unlabelled) <= 650
    for d in unlabelled:
        assert d.id.rsplit("#", 1)[1] == str(d.extra["n"])
    # a label repeated inside one file: the first keeps the label, the repeat gets its position
    dup = "openlogic:first-order-logic/completeness/construction-of-model#defn:termmodel"
    assert dup in ol_docs
    repeats = [d for d in ol_docs.values()
               if d.file.endswith("construction-of-model.tex") and d.extra.get("label") == "defn:termmodel"]
    assert len(repeats) == 2 and {r.id for r in repeats} - {dup}


def test_openlogic_eval_targets_resolve(ol_docs):
    for t in _eval_targets("openlogic:"):
        assert t in ol_docs, t


def test_openlogic_not_examples_or_problems(ol_docs):
    assert not any(d.body.startswith("\\begin{ex}") for d in ol_docs.values())
    assert all(d.extra["env"] in openlogic.KINDS for d in ol_docs.values())


def test_openlogic_xparse_macros():
    macros = openlogic.parse_xparse_macros(r"""
\DeclareDocumentMacro \Nat {\ensuremath{\mathbb{N}}}
\DeclareDocumentCommand \Complement { m } {\overline{#1}}
\DeclareDocumentCommand \Trm { o } {
    \IfNoValueTF {#1}
        { \mathrm{Trm} }
        { \mathrm{Trm}({\Lang #1}) }
}
\DeclareDocumentCommand \Value { o m m } {\mathrm{Val}^{#3}(#2)}
""")
    assert macros["Nat"] == (0, r"{\mathbb{N}}")
    assert macros["Complement"] == (1, r"\overline{#1}")
    assert macros["Trm"][0] == 0 and "Trm" in macros["Trm"][1] and "Lang" not in macros["Trm"][1]
    assert macros["Value"] == (2, r"\mathrm{Val}^{#2}(#1)")
    tokens = openlogic.parse_tokens(r"\settexttoken{constant}{constant symbol}{constant symbols}"
                                    "\n" r"\settexttoken{element}*{element}{elements}")
    text = openlogic.expand_tokens(r"!!^a{element} of !!{constant}s, !!^{constant}, !!a{constant}; $!A \lif !B$",
                                   tokens)
    assert text == r"An element of constant symbols, Constant symbol, a constant symbol; $A \lif B$"


def test_openlogic_optional_argument_commands_and_tags():
    defs = openlogic.parse_xparse_defs(r"""
\DeclareDocumentCommand \lforall { o o } {
    \forall
    \IfNoValueTF {#1} \relax { #1 }
    \IfNoValueTF {#2} \relax { \, #2 }
}
\DeclareDocumentCommand \eq { t{/} o o } {
  \IfNoValueTF {#3}
    { \IfBooleanTF{#1}{ \neq }{ = } }
    { \IfBooleanTF{#1}{ #2 \neq #3}{#2 = #3} }
}
\DeclareDocumentCommand \equal { o } { \IfNoValueTF {#1} {\eq} {\stackrel{#1}{\eq}} }
\DeclareDocumentMacro \aeq {\equal [\alpha]}
""")
    xp = openlogic.XParse(defs)
    squash = lambda t: re.sub(r"\s+", " ", t).strip()
    assert squash(xp.expand(r"$\lforall[x][A(x)]$")) == r"$ \forall x \, A(x) $"
    assert squash(xp.expand(r"$\eq/[s][t]$ and $a \eq b$")) == r"$ s \neq t $ and $a = b$"
    assert squash(xp.expand(r"\aeq")) == r"\stackrel{\alpha}{ = }"
    tags = openlogic.parse_tags(r"\tagtrue{prvEx,prvAll}" "\n" r"\tagfalse{defEx}")
    assert tags == {"prvEx": True, "notprvEx": False, "prvAll": True, "notprvAll": False,
                    "defEx": False, "notdefEx": True}
    text = openlogic.apply_tags(r"\begin{tagenumerate}{prvEx,defEx}\tagitem{prvEx}{E.}{}\tagitem{defEx}{D.}{}"
                                r"\end{tagenumerate}\iftag{notdefEx}{yes \iftag{defEx}{no}{inner}}{no}", tags)
    assert text == r"\begin{enumerate}\item E.\end{enumerate}yes inner"


def test_openlogic_metavariable_after_a_command(ol_docs):
    # deduction-theorem.tex:111 "$\{ !A, \lnot!A\} \Proves" and soundness.tex:15 "$\Gamma\Proves!A$"
    assert openlogic.expand_tokens(r"$\{ !A, \lnot!A\} \Proves !{B}$", {}) == r"$\{ A, \lnot A\} \Proves B$"
    d = ol_docs["openlogic:first-order-logic/axiomatic-deduction/deduction-theorem#prop:derivfacts"]
    assert r"$\{ A, \lnot A\} \vdash B$" in d.body and "{ A, not A} proves B" in d.statement
    d = ol_docs["openlogic:propositional-logic/syntax-and-semantics/soundness#thm:soundness"]
    assert d.body == r"If $\Gamma \vdash A$ then $\Gamma \vDash A$." and d.statement == "If Gamma proves A then Gamma models A."
    glued = re.compile(r"\\(?:lnot|Box|Diamond|Proves|vdash|neg)[A-Z]|(?:lnot|Box|Diamond|Proves)[A-Z]")
    assert not [d.id for d in ol_docs.values() if glued.search(d.body) or glued.search(d.statement)]


def test_openlogic_math_inside_text_stays_math(ol_docs):
    # rice-theorem.tex:114 "$\Setabs{x}{\text{$17$ is in the range of $\cfind{x}$}}$": the page cuts math at the
    # next dollar, so the inner formulas are written \( .. \) (KaTeX reads them inside \text)
    assert openlogic.text_math(r"$\{ x : \text{$17$ is in the range of $\varphi_{x}$} \}$ and \text{none}") == \
        r"$\{ x : \text{\(17\) is in the range of \(\varphi_{x}\)} \}$ and \text{none}"
    d = ol_docs["openlogic:computability/computability-theory/rice-theorem#2"]
    assert d.body.count("\\varphi_{x}") == 7 and "$ _{x} $" not in d.body
    for is_math, piece in display.segments(d.body):
        assert is_math or "_{x}" not in piece, piece
    assert "17 is in the range of phi_x" in d.statement


def test_openlogic_inactive_tagblock_not_indexed(ol_docs):
    # formulas.tex:133 "\begin{tagblock}{defNot,...}\begin{defn}..."; open-logic-config.sty \tagfalse's every def*
    # tag, so the default build leaves the block out (a comment); the definition is not in the book
    text = (CORPORA / "open-logic/content/propositional-logic/syntax-and-semantics/formulas.tex").read_text(
        encoding="utf-8")
    tags = openlogic.load_config(corpus("open-logic")).tags
    spans = openlogic.inactive_spans(text, tags)
    assert any("Formulas constructed using the defined operators" in text[a:b] for a, b in spans)
    assert not openlogic.inactive_spans(r"\begin{tagblock}{prvDiamond}x\end{tagblock}", tags)
    for gone in ("propositional-logic/syntax-and-semantics/formulas#2",
                 "first-order-logic/syntax-and-semantics/terms-formulas#3",
                 "normal-modal-logic/syntax-and-semantics/language-modal-logic#3"):
        assert "openlogic:" + gone not in ol_docs
    # the statements after it keep their positional ids
    assert ol_docs["openlogic:propositional-logic/syntax-and-semantics/formulas#3"].extra["n"] == 3
    assert ol_docs["openlogic:first-order-logic/syntax-and-semantics/terms-formulas#4"].extra["n"] == 4
    assert not any(re.search(r"\\begin\{enumerate\}\s*\\end\{enumerate\}", d.body) for d in ol_docs.values())
    assert "openlogic:normal-modal-logic/syntax-and-semantics/truth-at-w#prop:dual" in ol_docs   # tag on: kept


# ------------------------------------------------------------------------------------------------ Napkin

def test_napkin_counts_and_fields(napkin_docs):
    assert 900 <= len(napkin_docs) <= 960
    kinds = {d.kind for d in napkin_docs.values()}
    assert kinds == {"theorem", "proposition", "lemma", "corollary", "fact", "definition"}
    for d in napkin_docs.values():
        assert re.fullmatch(r"napkin:[A-Za-z0-9-]+/[A-Za-z0-9_-]+:\d+", d.id), d.id
        assert d.link == ("https://github.com/vEnhance/napkin/blob/3b108731587d71f0a3887b0b004a8814c423a003/"
                          f"{d.file}#L{d.line}")
        assert d.license == "CC-BY-SA-4.0" and d.statement.strip() and d.title


def test_napkin_numbering_and_titles(napkin_docs):
    # n counts every indexed environment of a chapter file, in order, from 1
    by_file: dict[str, list[int]] = {}
    for d in napkin_docs.values():
        by_file.setdefault(d.file, []).append(int(d.id.rsplit(":", 1)[1]))
    for f, ns in by_file.items():
        assert sorted(ns) == list(range(1, len(ns) + 1)), f
    first = napkin_docs["napkin:H113/action:1"]
    assert first.kind == "definition" and first.name == "group action"
    assert first.title == "More on Groups > Group actions overkill AIME problems > Definition of a group action"
    assert "group action" in first.keywords
    names = {d.name for d in napkin_docs.values()}
    assert "Zorn's lemma" in names                # [Title] on the line after \begin{theorem}
    assert any("Orbit-stabilizer" in n for n in names)
    zorn = next(d for d in napkin_docs.values() if d.name == "Zorn's lemma")
    src = (CORPORA / "napkin" / zorn.file).read_text(encoding="utf-8").splitlines()
    assert src[zorn.line - 1].lstrip().startswith("\\begin{theorem}")


def test_napkin_skips_commented_environments(napkin_docs):
    ch = [d for d in napkin_docs.values() if d.file == "tex/set-theory/CH.tex"]
    assert ch and all(d.name != "V neq L" for d in ch)
    assert not any("%\\begin" in d.body for d in napkin_docs.values())


# A chapter's own \newcommand (rep-theory/applications.tex, verbatim): the lemma's title is made with it.
NAPKIN_LOCAL_MACRO = r"""\chapter{Some applications}
\section{Frobenius divisibility}
First, we prove:
\newcommand{\tempuuujbhtkx}{$\ZZ[G]$}
\begin{lemma}[Elements of \tempuuujbhtkx\ are integral]
	\label{lem:group_ring_integral}
	Let $\alpha \in \ZZ[G]$.
	Then there exists a monic polynomial $P$ with integer coefficients
	such that $P(\alpha) = 0$.
\end{lemma}
"""


def test_napkin_chapter_macros_name_the_statement(tmp_path):
    chapter = tmp_path / "tex" / "rep-theory" / "applications.tex"
    chapter.parent.mkdir(parents=True)
    chapter.write_text(NAPKIN_LOCAL_MACRO, encoding="utf-8")
    (other := tmp_path / "tex" / "other" / "plain.tex").parent.mkdir(parents=True)
    other.write_text(NAPKIN_LOCAL_MACRO.replace("\\newcommand{\\tempuuujbhtkx}{$\\ZZ[G]$}", ""), encoding="utf-8")
    docs = by_id(list(napkin.read(tmp_path)), "Napkin")
    lemma = docs["napkin:rep-theory/applications:1"]
    assert lemma.name == "Elements of Z[G] are integral"         # was "Elements of tempuuujbhtkx are integral"
    assert lemma.title == "Some applications > Frobenius divisibility"
    assert lemma.statement.startswith("Let alpha in Z[G]")
    # the definition is the chapter's own: another chapter that uses the name without defining it is not helped
    assert "tempuuujbhtkx" in docs["napkin:other/plain:1"].name


# ------------------------------------------------------------------------------------------------ ProofNet

def test_proofnet(pn_docs):
    assert len(pn_docs) == 371
    d = pn_docs["proofnet:Rudin|exercise_3_7"]
    assert d.kind == "exercise" and d.name == "Rudin exercise 3.7" and d.link == "" and d.license == "MIT"
    assert "sqrt" in d.statement and d.extra["formal_statement"].startswith("theorem exercise_3_7")
    assert pn_docs["proofnet:Putnam|exercise_2018_a5"].name == "Putnam 2018 A5"
    assert proofnet.exercise_name("Dummit-Foote|exercise_8_3_6b") == "Dummit and Foote exercise 8.3.6b"
    for t in _eval_targets("proofnet:"):
        assert t in pn_docs, t


# ------------------------------------------------------------------------------------------------ generic

ROWS = [
    {"id": "a1", "name": "Lemma A", "body": r"If $x \in \RR$ then $x^2 \ge 0$.", "kind": "lemma",
     "link": "https://example.org/a1", "msc": "26A06", "keywords": ["squares", "reals"]},
    {"id": "mysrc:b2", "statement": "Every group of prime order is cyclic.", "title": "Groups"},
    {"id": 3, "body": "A plain sentence.", "slogan": "plain", "keywords": "one, two"},
]


def _write_jsonl(path: Path, rows, raw_lines=()):
    lines = [json.dumps(r) for r in rows] + list(raw_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_generic_jsonl(tmp_path):
    f = _write_jsonl(tmp_path / "rows.jsonl", ROWS)
    docs = list(generic.read(tmp_path, path="rows.jsonl", source="mysrc", license="CC0-1.0"))
    assert [d.id for d in docs] == ["mysrc:a1", "mysrc:b2", "mysrc:3"]
    a, b, c = docs
    assert a.source == "mysrc" and a.kind == "lemma" and a.name == "Lemma A" and a.license == "CC0-1.0"
    assert a.body == ROWS[0]["body"] and a.statement and "\\" not in a.statement
    assert a.extra == {"msc": "26A06"} and a.keywords == ["squares", "reals"] and a.link == "https://example.org/a1"
    assert b.body == ROWS[1]["statement"] and b.kind == "statement" and b.title == "Groups"
    assert c.slogan == "plain" and c.keywords == ["one", "two"] and c.line == 3 and c.file == "rows.jsonl"
    # root may be the file itself; custom field names
    other = _write_jsonl(tmp_path / "other.jsonl", [{"key": "x", "text": "Hello", "url": "u"}])
    docs = list(generic.read(other, source="o", id_field="key", body_field="text", link_field="url",
                             link_template="https://x/{id}"))
    assert docs[0].id == "o:x" and docs[0].body == "Hello" and docs[0].link == "u"
    docs = list(generic.read(tmp_path, path=str(f), source="mysrc", link_template="https://x/{id}"))
    assert docs[1].link == "https://x/b2"
    assert generic.SOURCE == "generic"


def test_generic_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    n = 2500
    table = pa.table({
        "id": [f"r{i}" for i in range(n)],
        "name": [f"Row {i}" for i in range(n)],
        "body": [f"Statement number ${i}$." for i in range(n)],
        "kind": ["theorem"] * n,
        "score": list(range(n)),
    })
    pq.write_table(table, tmp_path / "rows.parquet", row_group_size=700)
    docs = list(generic.read(tmp_path, path="rows.parquet", source="pq", batch_size=300))
    assert len(docs) == n and docs[0].id == "pq:r0" and docs[-1].id == f"pq:r{n - 1}"
    assert docs[1234].line == 1235 and docs[1234].extra == {"score": 1234} and docs[5].kind == "theorem"
    # a duplicate id in a parquet file names the row
    table = pa.table({"id": ["x", "y", "x"], "body": ["a", "b", "c"]})
    pq.write_table(table, tmp_path / "dup.parquet")
    with pytest.raises(ValueError, match=r"dup\.parquet: row 3: duplicate id 'pq:x' \(first at row 1\)"):
        list(generic.read(tmp_path, path="dup.parquet", source="pq"))


@pytest.mark.parametrize("rows, raw, message", [
    ([{"name": "no id", "body": "x"}], (), r"bad\.jsonl: line 1: missing id"),
    ([{"id": "a", "body": "x"}, {"id": "b", "body": "  "}], (), r"bad\.jsonl: line 2: id 'b': missing body"),
    ([{"id": "a", "body": "x"}, {"id": "b", "body": "y"}, {"id": "a", "body": "z"}], (),
     r"bad\.jsonl: line 3: duplicate id 'src:a' \(first at line 1\)"),
    ([{"id": "a", "body": "x"}], ['{"id": "b", "body": '], r"bad\.jsonl: line 2: bad JSON"),
    ([{"id": "a", "body": "x"}], ["[1, 2]"], r"bad\.jsonl: line 2: expected a JSON object"),
])
def test_generic_errors(tmp_path, rows, raw, message):
    _write_jsonl(tmp_path / "bad.jsonl", rows, raw)
    with pytest.raises(ValueError, match=message):
        list(generic.read(tmp_path, path="bad.jsonl", source="src"))


def test_generic_options_errors(tmp_path):
    _write_jsonl(tmp_path / "rows.jsonl", ROWS)
    with pytest.raises(ValueError, match="source"):
        list(generic.read(tmp_path, path="rows.jsonl"))
    with pytest.raises(FileNotFoundError):
        list(generic.read(tmp_path, path="missing.jsonl", source="s"))
    (tmp_path / "rows.csv").write_text("id,body\n", encoding="utf-8")
    with pytest.raises(ValueError, match="format"):
        list(generic.read(tmp_path, path="rows.csv", source="s"))


# ------------------------------------------------------------------------------------------------ texscan

# Statements whose 1.1.0 body showed Open Logic's markup: \\ollabel, !!{term} macros, \\iftag / \\tagitem,
# \\olref, \\indcase, and the project's macros (\\Proves, \\Entails, \\lforall, ...) KaTeX does not know
OL_DEBRIS = ("openlogic:applied-modal-logic/epistemic-logic/public-announcement-logic-semantics#defn:mmodels",
             "openlogic:first-order-logic/completeness/completeness-thm#thm:completeness",
             "openlogic:first-order-logic/tableaux/proof-theoretic-notions#prop:reflexivity",
             "openlogic:normal-modal-logic/frame-definability/properties-accessibility#thm:soundschemas",
             "openlogic:normal-modal-logic/axioms-systems/proofs-in-K#4",
             "openlogic:first-order-logic/axiomatic-deduction/soundness#thm:soundness")
NAPKIN_DEBRIS = ("napkin:H113/action:1", "napkin:linalg/vector-space:9", "napkin:set-theory/CH:5",
                 "napkin:cats/abelian:12", "napkin:alg-NT/artin:3")


def test_openlogic_display_text(ol_docs):
    for i in OL_DEBRIS:
        assert leaks(ol_docs[i].body) == [] and display.math_commands(ol_docs[i].body) == set(), \
            (i, leaks(ol_docs[i].body), display.math_commands(ol_docs[i].body))
    d = ol_docs["openlogic:first-order-logic/completeness/completeness-thm#thm:completeness"]
    assert d.body == "Let $\\Gamma$ be a set of sentences. If $\\Gamma$ is consistent, it is satisfiable."
    case = ol_docs[OL_DEBRIS[0]].body
    assert "$A \\equiv \\bot$: Never" in case and "indcase" not in case              # \\indcase typeset
    # what is left is package drawing (proof trees, \\xLongrightarrow), never the project's own macros
    defined = openlogic.load_config(corpus("open-logic")).macros
    assert not any(display.math_commands(d.body) & set(defined) for d in ol_docs.values())
    assert sum(bool(leaks(d.body)) for d in ol_docs.values()) <= 5


def test_napkin_display_text(napkin_docs):
    for i in NAPKIN_DEBRIS:
        assert leaks(napkin_docs[i].body) == [] and display.math_commands(napkin_docs[i].body) == set(), i
    action = napkin_docs["napkin:H113/action:1"].body                  # \\vocab{...} and \\ii (Napkin's \\item)
    assert "\\vocab" not in action and "\\ii " not in action and "\\item" in action
    assert sum(bool(leaks(d.body) or display.math_commands(d.body)) for d in napkin_docs.values()) <= 10


def test_texscan_groups_and_statements():
    from mathlas_build.sources import texscan

    assert texscan.braced("{a{b}c}d", 1) == ("a{b}c", 7)
    assert texscan.braced("a{b", 0) == ("a{b", 3)                       # unclosed: the rest
    assert texscan.read_group(" {a\\}b}x", 0) == ("a\\}b", 7)
    assert texscan.read_group("{ab", 0) is None                         # unclosed: none
    assert texscan.read_group("[a{]}b]c", 0, "[", "]") == ("a{]}b", 7)  # braces balance inside [...]
    assert texscan.read_group("\n\n[a]", 0, "[", "]", allow_newline=False) is None
    assert texscan.blank_comments("a % b\n\\% c") == "a    \n\\% c"
    assert texscan.label_tail_words("thm:orbit_stabilizer.v2") == "orbit stabilizer v2"
    tex = "x\n\\begin{thm}[T] a \\begin{thm} b \\end{thm} c\\label{thm:x}\\end{thm}\n\\begin{thm}open"
    env_re, label_re = texscan.re.compile(r"\\begin\{(thm)\}"), texscan.re.compile(r"\\label\{([^}]*)\}")
    nested = list(texscan.statements(tex, env_re, label_re, nested=True))
    flat = list(texscan.statements(tex, env_re, label_re, nested=False))
    assert [(s.n, s.line, s.heading, s.labels) for s in nested] == [(1, 2, "T", ["thm:x"]), (2, 2, "", [])]
    assert nested[0].body.endswith("c\\label{thm:x}") and flat[0].body == "[T] a \\begin{thm} b"
