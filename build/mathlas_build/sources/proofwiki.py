"""ProofWiki reader for the partial dump of PS-ProofWiki (``shared/corpora/ps-proofwiki``, CC BY-SA 3.0).

The folder holds ``output/{train,dev,test}.json`` of the NL premise-selection dataset (Ferreira & Freitas,
LREC 2020): ProofWiki statements keyed by UUID, each ``{text, category, type, premises}``. One Document per
distinct statement:

* id ``proofwiki:<uuid>``;
* kind from ``type`` (``theorem``, ``lemma``; the dataset's ``corollaries`` becomes ``corollary``);
* ``text`` is first repaired (``display.repair_text``: HTML entities such as ``&#337;``);
* ``body`` = display text: the wiki markup rendered (``wiki_to_display``: ``{{eqn}}`` rows and ``:$...$`` lines
  as display equations, ``{{axiom}}`` rows with their formulas as math, tables as rows, links as their text,
  maintenance templates dropped; a ``{{`` inside math, ``\\left\\{{x}\\right\\}``, is no template), ProofWiki's
  MathJax macros as standard TeX (``DISPLAY_MACROS``, then ``katex_math``; its doubled capitals ``\\RR``, ``\\CC``
  are calligraphic letters, ``_CALLIGRAPHIC``); ``statement`` = its words: the
  templates rendered (``{{iff}}`` -> "if and only if", ``{{eqn | l = .. | r = ..}}`` -> the equation,
  maintenance templates such as ``{{explain}}`` / ``{{proofread}}`` dropped), ProofWiki's structural macros
  expanded, then ``latex_to_text``;
* ``title`` = a heading made from the statement (``heading``: its first sentence after the ``Let ...`` /
  ``Suppose ...`` set-up, about 90 characters at most, two or more words, never the category), read from the
  display body with its formulas in Unicode (``title_lines``: ``title_tex``, then ``display.unicode_text``:
  "Its boundary ∂K is compact", where the words gave "Its boundary partial K is compact"). Sentences end at
  a full stop, at a capitalised Then / Let inside a run of text and after a display formula (the dump lost
  the line breaks: "... such that X ⊆ Y Then Y is order generating"), so a set-up sentence is a heading
  only where nothing else is said. A subject that is a bare variable the set-up describes gets its
  description (``_described``): "Let T = (S, τ) be a compact Hausdorff space. Then T is a T₄ space." ->
  "Compact Hausdorff space T is a T₄ space"; "... a topological space which is irreducible" -> "Irreducible
  topological space T ..."; "Let M be separable" -> "Separable metric space M ..."; "subgroup of G" ->
  "Subgroup H of cyclic group G ..."; not where the description is cut from a definition ("a real function
  defined as: ..."), a plural, two descriptions, a condition the set-up adds ("Let G act on S", "Suppose
  ..."), nor a bare noun where another set-up sentence names the variable ("Let A be a class. ... Let f:
  A → P be a surjection. Then A is proper" stays "A is proper"). The search link is made the same way from
  the words, keeps the numerals of "Book XI, Proposition 12" and each word once; the ProofWiki category (``Topology``,
  ``Abstract Algebra``, ...), the only context the dump keeps, is ``extra["category"]`` and
  ``extra["context_title"]`` (the retrieval text ends ``In <category>.`` as before);
* ``name`` is empty except for Euclid's propositions (``{{EuclidPropStatement|book=V|prop=12|...}}`` ->
  "Euclid, Elements, Book V, Proposition 12"): **the dump has no page titles and no URLs** (its kb.json, which
  had them, is not in the corpus), so ``link`` is ProofWiki's own search for the heading's key words
  (``search_link``; ``extra["link_kind"] = "search"``), the one link to the page a person can follow;
* ``extra``: ``split`` (where the statement was first found), ``category``, ``premises`` (how many premise
  UUIDs the dataset lists; the premises themselves are in the missing kb.json).

**Duplicates.** The UUIDs of the three splits do not overlap, but 47 statement texts occur under more than
one UUID (25 of them across splits). Each text becomes one document, under the lexicographically smallest
of its UUIDs (so the id does not depend on which split is read first); ``extra["duplicate_ids"]`` lists the
others, space separated.

Recipe options: ``splits`` (default ``["train", "dev", "test"]``): the split files to read.
"""
from __future__ import annotations

import json
import re
import string
from pathlib import Path
from collections.abc import Iterator
from urllib.parse import quote_plus

from mathlas_build.display import _MATH_WORDS, _UNICODE_MATH, DisplayAudit, display_tex, math_commands, repair_text, \
    replace_command, segments, unicode_text
from mathlas_build.document import Document
from mathlas_build.latex import latex_to_text, parse_macros

SOURCE = "proofwiki"
LICENSE = "CC-BY-SA-3.0"
ATTRIBUTION = ("ProofWiki (https://proofwiki.org), its contributors, CC BY-SA 3.0; statements as extracted in "
               "PS-ProofWiki (Ferreira & Freitas, LREC 2020), github debymf/nl-ps @ b6590a59")
SPLITS = ("train", "dev", "test")
KINDS = {"theorem": "theorem", "lemma": "lemma", "corollaries": "corollary", "corollary": "corollary"}

# ProofWiki's doubled capitals (\AA ... \ZZ) are its calligraphic letters: \RR a relation, \CC a collection or a
# cone, \BB a basis, \NN a neighborhood space; its number sets are the single letters \R, \C, \N, \Z, \Q. (The dump
# defines no macros; in its text 208 of the 243 statements using \RR say "relation", \NN is "the set of null
# sequences", while \N (552 statements) is the natural numbers.)
_CALLIGRAPHIC = "".join("\\newcommand{\\%s%s}{\\mathcal{%s}}\n" % (c, c, c) for c in string.ascii_uppercase)

# ProofWiki's structural macros (brackets and layout), so that the words around them survive; macros that
# name a concept (\norm, \card, \powerset, \divides, \order) are left to latex_to_text, which keeps the word.
MACROS = parse_macros(r"""
\newcommand{\struct}[1]{(#1)}
\newcommand{\map}[2]{#1(#2)}
\newcommand{\paren}[1]{(#1)}
\newcommand{\set}[1]{\{#1\}}
\newcommand{\tuple}[1]{(#1)}
\newcommand{\sqbrk}[1]{[#1]}
\newcommand{\sequence}[1]{(#1)}
\newcommand{\closedint}[2]{[#1, #2]}
\newcommand{\openint}[2]{(#1, #2)}
\newcommand{\hointl}[2]{(#1, #2]}
\newcommand{\hointr}[2]{[#1, #2)}
\newcommand{\size}[1]{|#1|}
\newcommand{\ds}{}
\newcommand{\rd}{d}
\newcommand{\d}{d}
\newcommand{\O}{\emptyset}
\newcommand{\eqclass}[2]{[#1]_{#2}}
\newcommand{\cmod}[1]{|#1|}
\newcommand{\relcomp}[2]{\complement_{#1}(#2)}
\newcommand{\innerprod}[2]{\langle #1, #2 \rangle}
""" + _CALLIGRAPHIC)

# Wiki templates -> words. A template not named here (maintenance: {{explain}}, {{refactor}}, {{WIP}},
# {{proofread}}, {{MissingLinks}}, layout: {{begin-eqn}}, {{qed}}, ...) is dropped.
_WORDS = {"iff": "if and only if", "RHS": "right hand side", "LHS": "left hand side", "ProofWiki": "ProofWiki",
          "TFAE": "The following are equivalent"}


def _template_end(text: str, start: int) -> int:
    """Index just past the ``}}`` closing the template that opens at ``start`` (braces balanced)."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _params(inner: str) -> tuple[str, list[str], dict[str, str]]:
    """``name | a | k = v`` -> (name, positional, named), splitting at ``|`` outside braces."""
    parts, depth, cur = [], 0, []
    i = 0
    while i < len(inner):
        c = inner[i]
        if c == "\\" and i + 1 < len(inner):
            cur.append(inner[i:i + 2])
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c == "|" and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    name = parts[0].strip()
    positional, named = [], {}
    for p in parts[1:]:
        m = re.match(r"\s*([A-Za-z]\w*)\s*=(.*)", p, re.S)
        if m:
            named[m.group(1)] = m.group(2).strip()
        else:
            positional.append(p.strip())
    return name, positional, named


def _render(name: str, pos: list[str], named: dict[str, str]) -> str:
    first = pos[0] if pos else ""
    if name == "eqn":
        eq = " ".join(x for x in (named.get("l", ""), named.get("o", "="), named.get("r", "")) if x)
        c = named.get("c", "")
        return f"\n${eq}$" + (f" ({c})" if c else "") + "\n"
    if name == "TFAENocat":
        name = "TFAE"
    if name in _WORDS:
        if name == "TFAE" and named.get("def"):
            return f"The following definitions of {named['def']} are equivalent"
        return _WORDS[name]
    if name == "WRT":
        return f"with respect to {first}".strip()
    if name == "Defof":
        return f"definition of {first}"
    if name == "OEIS":
        return f"OEIS {first}"
    if name in ("AuthorRef", "WP", "DCFLink"):
        return (pos[1] if len(pos) > 1 else first).replace("_", " ")
    if name == "Namedfor":
        return f"named for {first}"
    if name == "BookLink":
        return f"{first} by {pos[1]}" if len(pos) > 1 else first
    if name == "EuclidPropStatement":
        return named.get("body", "")
    if name == "axiom":
        return _axiom(named, "$")
    return ""


def _axiom(named: dict[str, str], delim: str) -> str:
    """One ``{{axiom}}`` row on its own line: its label ``n``, the words ``lc`` / ``t``, the formula
    (``q`` quantifier, ``m`` or ``ml mo mr``) between ``delim`` and the comment ``rc``; the label and formula
    are TeX, so they keep their delimiters (without them ``x \\preceq y`` lost its symbols on display)."""
    formula = named.get("m") or " ".join(named.get(k, "") for k in ("ml", "mo", "mr")).strip()
    if named.get("q"):
        formula = f"{named['q']}: {formula}" if formula else named["q"]
    label = named.get("n", "")
    parts = [f"${label}$:" if label else "", named.get("lc", ""), named.get("t", ""),
             f"{delim}{formula}{delim}" if formula else "", named.get("rc", "")]
    return "\n" + " ".join(p for p in parts if p) + "\n"


_SCAN = re.compile(r"\\.|\{\{|\$\$|\$|</?math>", re.S)


def _template_start(text: str, i: int) -> int:
    """Index of the next ``{{`` from ``i`` that opens a template, or -1: not an escaped brace nor one
    inside ``$...$``, ``$$...$$`` or ``<math>...</math>`` (older ProofWiki TeX writes ``\\left\\{{x}\\right\\}``)."""
    close = ""
    for m in _SCAN.finditer(text, i):
        tok = m.group()
        if close:
            close = "" if tok == close else close
        elif tok == "{{":
            return m.start()
        elif tok in ("$", "$$", "<math>"):
            close = "</math>" if tok == "<math>" else tok
    return -1


def _templates(text: str, render, again) -> str:
    """``text`` with each top-level ``{{...}}`` template replaced by ``render(*params)``; a template
    holding templates has them rendered first by ``again`` (the caller itself)."""
    out, i = [], 0
    while True:
        j = _template_start(text, i)
        if j < 0:
            out.append(text[i:])
            break
        out.append(text[i:j])
        k = _template_end(text, j)
        inner = text[j + 2:k - 2] if text.startswith("}}", k - 2) else text[j + 2:k]
        out.append(render(*_params(again(inner) if "{{" in inner else inner)))
        i = k
    return "".join(out)


def wiki_to_latex(text: str) -> str:
    """ProofWiki wiki markup -> LaTeX text: templates rendered or dropped, ``'''bold'''`` / ``''italic''``
    quotes and ``[[link|text]]`` brackets removed, the ``:`` indentation at line starts dropped."""
    s = _templates(text, _render, wiki_to_latex)
    s = re.sub(r"'{2,}", "", s)
    s = re.sub(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]", r"\1", s)
    return re.sub(r"(?m)^[:\s]+", "", s)


# For the display text: ProofWiki's macros (its MathJax configuration) as standard TeX KaTeX draws.
DISPLAY_MACROS = parse_macros(r"""
\newcommand{\struct}[1]{\left(#1\right)}
\newcommand{\map}[2]{#1\left(#2\right)}
\newcommand{\paren}[1]{\left(#1\right)}
\newcommand{\set}[1]{\left\{#1\right\}}
\newcommand{\tuple}[1]{\left(#1\right)}
\newcommand{\sqbrk}[1]{\left[#1\right]}
\newcommand{\sequence}[1]{\left\langle #1\right\rangle}
\newcommand{\family}[1]{\left\langle #1\right\rangle}
\newcommand{\closedint}[2]{\left[#1 \,.\,.\, #2\right]}
\newcommand{\openint}[2]{\left(#1 \,.\,.\, #2\right)}
\newcommand{\hointl}[2]{\left(#1 \,.\,.\, #2\right]}
\newcommand{\hointr}[2]{\left[#1 \,.\,.\, #2\right)}
\newcommand{\size}[1]{\left\lvert #1\right\rvert}
\newcommand{\card}[1]{\left\lvert #1\right\rvert}
\newcommand{\order}[1]{\left\lvert #1\right\rvert}
\newcommand{\norm}[1]{\left\lVert #1\right\rVert}
\newcommand{\powerset}[1]{\mathcal{P}\left(#1\right)}
\newcommand{\eqclass}[2]{\left[#1\right]_{#2}}
\newcommand{\divides}{\mid}
\newcommand{\ds}{\displaystyle}
\newcommand{\rd}{\mathrm{d}}
\newcommand{\d}{\mathrm{d}}
\newcommand{\O}{\varnothing}
\newcommand{\R}{\mathbb{R}}
\newcommand{\Q}{\mathbb{Q}}
\newcommand{\Z}{\mathbb{Z}}
\newcommand{\N}{\mathbb{N}}
\newcommand{\C}{\mathbb{C}}
\newcommand{\Img}{\operatorname{Img}}
\newcommand{\Dom}{\operatorname{Dom}}
\newcommand{\Cdm}{\operatorname{Cdm}}
\newcommand{\Preimg}{\operatorname{Preimg}}
\newcommand{\Rng}{\operatorname{Rng}}
\newcommand{\lcm}{\operatorname{lcm}}
\newcommand{\sgn}{\operatorname{sgn}}
\newcommand{\Area}{\operatorname{Area}}
\newcommand{\Arg}{\operatorname{Arg}}
\newcommand{\expect}[1]{E\left(#1\right)}
\newcommand{\var}[1]{\operatorname{var}\left(#1\right)}
\newcommand{\condprob}[2]{\Pr\left(#1 \mid #2\right)}
\newcommand{\Cl}{\operatorname{Cl}}
\newcommand{\Int}{\operatorname{Int}}
\newcommand{\diam}{\operatorname{diam}}
\newcommand{\cis}{\operatorname{cis}}
\newcommand{\Tr}{\operatorname{Tr}}
\newcommand{\adj}{\operatorname{adj}}
\newcommand{\rank}{\operatorname{rank}}
\newcommand{\Aut}{\operatorname{Aut}}
\newcommand{\Fix}{\operatorname{Fix}}
\newcommand{\Stab}{\operatorname{Stab}}
\newcommand{\Orb}{\operatorname{Orb}}
\newcommand{\Gal}{\operatorname{Gal}}
\newcommand{\Char}{\operatorname{Char}}
\newcommand{\Ln}{\operatorname{Ln}}
\newcommand{\floor}[1]{\left\lfloor #1\right\rfloor}
\newcommand{\ceiling}[1]{\left\lceil #1\right\rceil}
\newcommand{\gen}[1]{\left\langle #1\right\rangle}
\newcommand{\innerprod}[2]{\left\langle #1, #2\right\rangle}
\newcommand{\dotprod}{\cdot}
\newcommand{\cross}{\times}
\newcommand{\symdif}{\ominus}
\newcommand{\relcomp}[2]{\complement_{#1}\left(#2\right)}
\newcommand{\isomorphic}{\cong}
\newcommand{\pdiff}[2]{\frac{\partial #1}{\partial #2}}
\newcommand{\valueat}[2]{\left.#1\right|_{#2}}
\newcommand{\intlimits}[3]{\left[#1\right]_{#2}^{#3}}
\newcommand{\bigintlimits}[3]{\left[#1\right]_{#2}^{#3}}
\newcommand{\laptrans}[1]{\mathcal{L}\left\{#1\right\}}
\newcommand{\vect}[1]{\mathbf{#1}}
\newcommand{\lt}{<}
\newcommand{\gt}{>}
\newcommand{\degrees}{^\circ}
\newcommand{\cmod}[1]{\left\lvert #1\right\rvert}
\newcommand{\ideal}[1]{\left(#1\right)}
\newcommand{\conjclass}[1]{\left[#1\right]}
\newcommand{\fractpart}[1]{\left\{#1\right\}}
\newcommand{\bszero}{\mathbf{0}}
\newcommand{\bsone}{\mathbf{1}}
""" + _CALLIGRAPHIC)


def katex_math(tex: str) -> str:
    """What is left of ProofWiki's MathJax vocabulary after ``DISPLAY_MACROS``, inside math: a doubled
    capital as calligraphic (``_CALLIGRAPHIC`` defines all 26, so none is left), any other unknown name
    (``\\arcsec``, ``\\sech``, ``\\Res``) as an upright operator, which is how ProofWiki typesets them."""
    out = []
    for is_math, piece in segments(tex):
        if is_math and math_commands(piece):
            unknown = math_commands(piece)
            piece = re.sub(r"\\([A-Za-z]+)(?![A-Za-z])", lambda m: m.group(0) if m.group(1) not in unknown else (
                "\\mathcal{%s}" % m.group(1)[0] if re.fullmatch(r"([A-Z])\1", m.group(1))
                else "\\operatorname{%s}" % m.group(1)), piece)
        out.append(piece)
    return "".join(out)


# A 0-argument macro is one token to TeX (``\\overline \\R``): a symbol's expansion too, as a group (relations
# and operators keep their spacing: no group).
DISPLAY_MACROS = {k: ((0, "{" + v[1] + "}") if not v[0] and re.match(r"\\(?:mathbb|operatorname|mathrm|mathcal)\{", v[1])
                      else v) for k, v in DISPLAY_MACROS.items()}


def _display_template(name: str, pos: list[str], named: dict[str, str]) -> str:
    """One template as display LaTeX: ``{{eqn}}`` a display equation with its comment after it,
    everything else as ``_render`` writes it in words."""
    if name == "eqn":
        parts = [named.get(k, "") for k in ("q", "ll", "lo", "l")]
        if named.get("l") or named.get("r"):
            parts += [named.get("o", "="), named.get("r", "")]
        eq = " ".join(x for x in parts if x)
        c = named.get("c", "").strip()
        return (f"\n$${eq}$$" if eq.strip() else "") + (f"\n({c})" if c else "") + "\n"
    if name == "axiom":
        return _axiom(named, "$$")
    return _render(name, pos, named)


_BOLD = re.compile("'''(.+?)'''")


def _tables(s: str) -> str:
    """Wiki tables (``{| ... |- ... ! a !! b ... |}``) as one line a row, cells joined with `` | ``."""
    out = []
    for line in s.split("\n"):
        t = line.strip()
        if t.startswith(("{|", "|}", "|-", "|+")):
            if t.startswith("|}"):
                out.append("")
            continue
        if t.startswith(("!", "|")) and not t.startswith("||"):
            cells = re.split(r"\s*(?:!!|\|\|)\s*", t[1:])
            cells = [c.split("|", 1)[1] if "|" in c and "=" in c.split("|", 1)[0] else c for c in cells]
            out.append(" | ".join(c.strip() for c in cells))
            continue
        out.append(line)
    return "\n".join(out)
_ITALIC = re.compile("''(.+?)''")


def wiki_to_display(text: str) -> str:
    """ProofWiki wiki markup -> display LaTeX: ``{{eqn}}`` rows as display equations, ``:$...$`` lines as
    ``$$...$$``, bold and italic quotes as ``\\textbf`` / ``\\emph``, ``[[target|text]]`` as its text, other
    templates as ``_render`` gives them (maintenance templates dropped), ``:`` indents dropped."""
    text = re.sub(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]", r"\1", text)    # links first: their | is not a template's
    s = _tables(_templates(text, _display_template, wiki_to_display))
    s = re.sub(r"(?m)^:+\s*\$([^$]+)\$\s*([.,;:]?)\s*$", lambda m: f"$${m.group(1)}{m.group(2)}$$", s)
    s = _BOLD.sub(r"\\textbf{\1}", s)
    s = _ITALIC.sub(r"\\emph{\1}", s)
    s = re.sub(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]", r"\1", s)
    s = re.sub(r"(?m)^[:*#]+\s*", "", s)
    return re.sub(r"\n{3,}", "\n\n", s).strip()


_LEADS = re.compile(r"^(?:Let|Suppose|Consider|Assume|Given|Define|Fix|(?:For [^,]{1,40},? )?[Ww]e (?:use|define|write|"
                    r"denote|set)\b)\b", re.I)
_HEAD_STOP = set("""a an the of and or to in on for is are be let then that with as by at from this these those it
its which where such if iff there exists any all each every some denote denotes denoted we us""".split())
_CONNECTIVE = re.compile(r"^(?:Then|Hence|So|Thus|Therefore|Consequently|That is|In other words|Equivalently|"
                         r"We have(?: that)?)\b\s?[,:]?\s*")
_ELABORATES = re.compile(r"(?:That is|In other words|i\.e\.)\b")
# Where a sentence starts: after a full stop before a capital, a bracket or a formula ("Let m, n ∈ ℤ. ∑_k
# ..."), not after an abbreviation ("i.e. ∀ x"); and at a capitalised Then / Let / Suppose inside a run of
# text, or The / Every / If ... after a word that joins none ("Let S be a small class The rank of S ..."),
# since the dump lost the line breaks and the full stops after display formulas ("... such that X ⊆ Y
# Then Y is order generating").
_BREAK = re.compile(r"(?<=[^\s.][.;!?])\s+(?=[A-Z(])|(?<=[^\s.]\.)\s+(?=[^\W\da-z_]|[∑∏∫∀∃⟨|√∂∇¬⌊⌈∁{\[])"
                    r"|(?<=\S)\s+(?=(?:Then|Let|Suppose|Hence|Thus|Therefore)\b(?![-']))"
                    r"|(?<=[a-z])(?P<opener>\s+)(?=(?:The|This|Every|Each|It|If|There|For all)\s)")
_JOINS = frozenset("or and in of by as that either from to the a an with".split())
_ABBREVIATION = re.compile(r"(?:^|\s)(?:e\.g|i\.e|cf|etc|resp|viz|vs|Prop|Def|Thm|Eq|Fig|Vol|al)\.$")


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (a line break is always a cut: ``title_lines`` marks the ends of display
    formulas so)."""
    out: list[str] = []
    for line in text.split("\n"):
        line, start = " ".join(line.split()), 0
        for m in _BREAK.finditer(line):
            if _ABBREVIATION.search(line[start:m.start()]) or \
                    m.group("opener") and line[:m.start()].rsplit(" ", 1)[-1] in _JOINS:
                continue                               # "i.e. ∀ x", "either: ... or There exists"
            out.append(line[start:m.start()])
            start = m.end()
        out.append(line[start:])
    return [x.strip() for x in out if x.strip()]


# ------------------------------------------------------------------ what a heading's subject is (issue 44)
# "Let T = (S, τ) be a compact Hausdorff space. Then T is a T₄ space." said "T is a T₄ space": the subject
# of the sentence picked is a bare variable, which the set-up describes. The heading puts the description
# before it: "Compact Hausdorff space T is a T₄ space".

_VERB = ("is|are|has|have|can|cannot|does|do|converges|converge|contains|satisfies|may|might|forms|commutes|"
         "preserves|fulfils|fulfills|admits|consists|acts|equals|absorbs|generates|induces|holds|maps|serves|must|"
         "belongs|defines|inherits|intersects|attains|divides|lies|will|need|needs|also|always|never|determines|"
         "represents|reaches|passes|gives|tends|exists|remains|separates|distributes|coincides")
_SUBJECT = re.compile(rf"(?P<s>\S.{{0,39}}?)\s+(?P<rest>(?:{_VERB})\b.*)", re.S)
_SETUP = re.compile(r"(?:Let|Suppose(?: that)?|Assume(?: that)?)\s+(?P<v>\S.*?)\s+(?:be|denote|is)\s+"
                    r"(?P<desc>\S.*)", re.S)
_SUBSET = re.compile(r"Let\s+(?P<v>[^,\s]+)\s*(?:⊆|⊂|\bsubseteq\b|\bsubset\b)\s*(?P<of>[^,\s]+)")
_ARTICLE = re.compile(r"(?P<art>an?|the)\s+(?P<desc>\S.*)", re.S)
_ADJECTIVE = re.compile(r"(?:not |both |also )?[A-Za-z][A-Za-z'-]+(?: [A-Za-z][A-Za-z'-]+)?")
# math words a bare subject may hold: function names and, in the statement's words, TeX's names of symbols
# (tau, circ, preceq), less those that are English words
_MATH_NAMES = frozenset(_MATH_WORDS) | frozenset(k for k in _UNICODE_MATH if k.isalpha()) - frozenset(
    """angle triangle square star flat natural sharp diamond because therefore top bot models complement
    restriction lozenge surd Box""".split())
# where a description's head noun phrase ends: "subgroup | of G", "Fort space | on a countably infinite set S"
_TAIL = frozenset("""of on in over under for from to with at by along about modulo whose which that such where
satisfying consisting containing indexed defined given generated induced acting relative in which so
considered equipped endowed together whereby""".split())
_PARTICIPLE = frozenset("""depending consisting containing satisfying acting having lying passing preserving fixing
including corresponding converging""".split())
# a clause that only names a part ("whose identity is e", ", where ...") is dropped; one that states a
# condition ("such that ...", "which is ...") is kept, or the description not used at all
_NAMING = re.compile(r",?\s+(?:respectively\b|whose (?:zero|unity|identity|identity element|"
                     r"ring zero|ring unity|field zero|field unity|underlying set) is\b|with (?:identity|unity|"
                     r"zero|identity element) [^\s,]{1,6}$)")
_CONDITION = re.compile(r"\b(?:such that|so that|which|that|whose|in which|where|satisfying|defined|given by)\b")
_DEFINITION_END = re.compile(r"(?:,|\s+(?:[a-z]+ed (?:by|as|on|in)|defined|given|such that|so that|which|that|where|"
                             r"as follows|of the form|"
                             r"satisfying|as|by|namely)\b).*$")
HEADING_CHARS = 90


def _top(s: str, pattern: str) -> int:
    """Index of the first match of ``pattern`` outside brackets in ``s``, else -1."""
    depth = 0
    for m in re.finditer(r"[(\[{⟨]|[)\]}⟩]|" + pattern, s):
        t = m.group()
        if t in "([{⟨":
            depth += 1
        elif t in ")]}⟩":
            depth = max(depth - 1, 0)
        elif depth == 0:
            return m.start()
    return -1


def _head(v: str) -> str:
    """The variable a formula introduces: ``T`` of ``T = (S, τ)``, ``f`` of ``f: S → T``, ``x`` of
    ``x ∈ ℝ`` (``x in R`` in words); a structure ``(G, ∘)`` is its own."""
    v = v.strip()
    i = _top(v, r"\s*(?:=|:|∈|⊆|⊂|≤|\bin\b|\bsubseteq\b|\bsubset\b)\s*")
    return "".join((v[:i] if i > 0 else v).split())


def _bare(s: str) -> bool:
    """A subject that is a formula only: no word but math names (``T``, ``(G, ∘)``, ``f: S → T``)."""
    return not any(w not in _MATH_NAMES and not re.fullmatch(r"[A-Za-z](?:_\w+)?", w)
                   for w in re.findall(r"[A-Za-z]{2,}", s)) and _top(s, r",\s|\sand\s") < 0


def _names(v: str, var: str) -> bool:
    """Whether the formula ``v`` a set-up introduces is ``var``: ``T = (S, τ)`` is ``T``; a structure named by
    its carrier, ``(S, ∨, ∧, ⪯)``, is also ``S`` ("Let (S, ∨, ∧, ⪯) be a lattice. Then S has at most one top")."""
    head = _head(v)
    return head == var or head.startswith("(") and head[1:].split(",", 1)[0] == var and "," in head


def _description(var: str, setups: list[str]) -> tuple[str, str, str, bool] | None:
    """(article, description, adjectives, mentioned) of the variable ``var`` (its ``_head``) from the set-up
    sentences: "Let V [= ...] be a/an/the DESC", "Let V be ADJ" (adjectives), "Let V ⊆ S" (a subset of S);
    ``mentioned`` when another set-up sentence names it ("Let f: P → A be an injection"). None when they
    do not describe it once (two descriptions, or a condition the heading could not say: "Let G act on
    S", "Suppose T has ...")."""
    found, adjectives, mentioned = None, [], False
    letter = re.search(r"[^\W\d_]+", var)
    letter = letter.group() if letter else var

    def mentions(x: str) -> bool:
        return bool(re.search(rf"(?<!\w){re.escape(letter)}(?![\w′'])", x))

    for x in setups:
        x = x.rstrip(" .;,")
        m = _SETUP.fullmatch(x)
        sub = _SUBSET.fullmatch(x)
        if m and _names(m.group("v"), var):
            if _top(m.group("v"), r",\s|\sand\s") >= 0:
                return None                                    # "Let x, y ∈ S be ...": more than one
            a = _ARTICLE.fullmatch(m.group("desc"))
            if a and not found:
                found = (a.group("art").lower(), a.group("desc"))
            elif not a and _ADJECTIVE.fullmatch(m.group("desc")) and not _TAIL & set(m.group("desc").split()):
                adjectives.append(m.group("desc"))
            else:
                return None
        elif sub and "".join(sub.group("v").split()) == var and not found:
            found = ("a", f"subset of {sub.group('of')}")
        elif re.match(rf"(?:Let|Suppose|Assume)(?: that)?\s+{re.escape(letter)}(?![\w′'^_])", x) or \
                "".join(x.split()).startswith(("Let" + var, "Suppose" + var)) or \
                (re.match(r"(?:Suppose|Assume)\b", x) and mentions(x)):
            return None                                        # another condition on it
        elif mentions(x):
            mentioned = True
    if not found:
        return None
    return found[0], found[1], " ".join(a.removeprefix("both ").removeprefix("also ") for a in adjectives), mentioned


def _phrase(art: str, desc: str, adjectives: str) -> tuple[str, str, bool] | None:
    """(head, tail, conditional) of a description: "compact subspace of T" -> ("compact subspace", "of T");
    None when it says nothing (a variable), or only with a definition cut off ("a real function defined
    as: ..." is not every real function)."""
    desc = desc.strip(" .,;")
    defined = False
    i = _top(desc, r":\s")
    if i >= 0:                                                 # "the mapping defined as: ∀ x ∈ S: ..."
        desc, defined = _DEFINITION_END.sub("", desc[:i]).strip(), True
    m = _NAMING.search(desc)
    if m:
        desc = desc[:m.start()]
    i = _top(desc, r",\s(?=[a-z]{2})")                        # not a list: "product space of T₁, T₂, …, T_n"
    if i >= 0:
        dropped, desc = desc[i + 2:], desc[:i]
        if _CONDITION.match(dropped):
            return None                                        # ", where t ∈ ℝ": no heading reads well with it
    if defined and art != "the":
        return None
    words = desc.split()
    after = words[1:] + [""]
    cut = next((k for k, w in enumerate(words) if k and (w in _TAIL or w in _PARTICIPLE or w[:1] in "(:" and k > 1
                                                          or w.endswith("ed") and after[k] in _TAIL)), len(words))
    head, tail = " ".join(words[:cut]), " ".join(words[cut:])
    last = head.rsplit(" ", 1)[-1]
    if re.fullmatch(r"[a-z]+[^su']s", last) and last != "series":
        return None                                            # "the p-adic numbers": a plural takes "are"
    if re.search(r"\w\(", head) or not re.search(r"[A-Za-z]{2}", head.rsplit(" ", 1)[-1]):
        return None                                            # "the set P(S) ordered by ⊆" names its own formula
    m = re.fullmatch(r"(.*?)\s*\b(?:which|that) (?:is|are) (?:also )?((?:not )?(?:[a-z]+ly )?[A-Za-z][A-Za-z-]+)",
                     tail)
    if m:                                                      # "space which is irreducible" -> "irreducible space"
        head, tail = f"{m.group(2)} {head}", m.group(1)
    if adjectives:
        head = f"{adjectives} {head}"
    if not re.search(r"[A-Za-z]{3,}", head):
        return None
    return ("the " if art == "the" else "") + head, tail, bool(_CONDITION.search(tail))


def _described(pick: str, setups: list[str], depth: int = 0) -> str:
    """``pick`` with its bare subject described by the set-up, when that can be said in a heading."""
    m = _SUBJECT.fullmatch(pick)
    if not m or not _bare(m.group("s")) or m.group("s")[:1].isupper() and re.match(r"[A-Z][a-z]", m.group("s")):
        return pick
    subject, rest = m.group("s"), m.group("rest")
    d = _description(_head(subject), setups)
    if d and "".join(subject.split()) != _head(subject) and not any(
            (m := _SETUP.fullmatch(x.rstrip(" .;,"))) and "".join(m.group("v").split()) == "".join(subject.split())
            for x in setups):
        return pick             # "f: (X, τ'₁) → (Y, τ'₂)" is not the "f: (X, τ₁) → (Y, τ₂)" described
    p = d and _phrase(*d[:3])
    if not p:
        return pick
    head, tail, conditional = p
    if not depth and d[3] and d[0] != "the" and not d[2] and len(head.split()) <= 2 and (
            not tail or re.fullmatch(r"(?:of|on|in|over) \S+", tail)):
        return pick             # "Class A is proper" where "Let f: P → A be an injection" says why: no heading
    t = re.fullmatch(r"(of|on|in|over|under|for|from|to|with) (\S.*)", tail)
    if t and not depth and _bare(t.group(2)):                  # "subgroup H of G" -> "... of cyclic group G"
        inner = _described(f"{t.group(2)} is", setups, 1)
        if inner != f"{t.group(2)} is":
            wider = f"{t.group(1)} {inner[:-3]}"
            if len(f"{head} {subject} {wider} {rest}") <= HEADING_CHARS:
                tail = wider
    out = " ".join(x for x in (head, subject, tail, rest) if x)
    if depth or len(out) <= HEADING_CHARS or not conditional and len(out) - len(rest) <= 50:
        return out
    return pick


def heading(words: str, category: str = "") -> str:
    """A human heading from a statement's words: its first sentence that says something (the first one,
    or the first after the ``Let ...`` / ``Suppose ...`` set-up ones), its subject described when it is a bare
    variable the set-up introduces (``_described``: "Compact Hausdorff space T is a T₄ space"), at most about
    90 characters cut at a word, two or more words, never the category alone."""
    parts, at = sentences(words), None
    for k, x in enumerate(parts):
        parts[k] = _CONNECTIVE.sub("", x)
        if _LEADS.match(parts[k]) or k and _ELABORATES.match(x) or \
                re.match(r"(?:Thus|Hence|So)\b", x) and k + 1 < len(parts) and _LEADS.match(parts[k + 1]):
            continue            # "Let ...", "That is, such that ..." after it, "Thus ... is the unit circle. Let d ..."
        if len(parts[k].split()) >= 2:
            at = k
            break
    pick = _described(parts[at], parts[:at]) if at is not None else parts[0] if parts else " ".join(words.split())
    pick = pick.rstrip(" .:;,")
    if len(pick) > HEADING_CHARS:
        pick = pick[:HEADING_CHARS].rsplit(" ", 1)[0].rstrip(" ,;:") + " …"
    if len(pick.split()) < 2 or pick.lower() == category.lower():
        pick = f"{pick} ({category})" if category and pick else (pick or "ProofWiki statement")
        if len(pick.split()) < 2:
            pick = f"ProofWiki {pick}"
    first = pick.split(" ", 1)[0]
    return pick[:1].upper() + pick[1:] if re.fullmatch(r"[a-z]{2,}(?:[-'][a-z]+)*", first) and \
        first not in _MATH_WORDS else pick                     # "sin x = ..." stays as written


# An array environment in a heading, as its delimiters around its rows: unicode_text reads one formula's
# symbols but not \begin{cases} (it gave "begincases x = a cosh ...").
_ENV_DELIMS = {"cases": ("\\{", ""), "pmatrix": ("(", ")"), "bmatrix": ("[", "]"), "Bmatrix": ("\\{", "\\}"),
               "vmatrix": ("|", "|"), "Vmatrix": ("\\|", "\\|")}
_ENV = re.compile(r"\\begin\{(\w+\*?)\}(?:\{[^{}]*\})?((?:(?!\\begin\{).)*?)\\end\{\1\}", re.S)


def _rows(m: re.Match) -> str:
    open_, close = _ENV_DELIMS.get(m.group(1).rstrip("*"), ("", ""))
    rows = [r.replace("&", " ").strip() for r in re.split(r"\\\\", m.group(2))]
    return f" {open_} " + ", ".join(r for r in rows if r) + f" {close} "


def title_tex(body: str) -> str:
    """The display body made ready for ``unicode_text``'s heading: ``\\textbf{...}`` / ``\\emph{...}`` as their
    text (math inside them too) and array environments (cases, matrices) as rows between their delimiters."""
    s = replace_command(body, ["textbf", "emph", "textit"], 1, lambda _, a: a[0])
    while True:                                                 # innermost first: a matrix inside cases
        s, n = _ENV.subn(_rows, s)
        if not n:
            return s


_END = "\ue000"


def title_lines(body: str) -> str:
    """The display body as the Unicode text its heading is made from (``title_tex``, then ``unicode_text``),
    a line break where a sentence ends without a full stop: after a display formula that a capitalised word
    or an inline formula follows (``$$X \\subseteq Y$$ Then $Y$ is ...``), before a line that starts with a
    capital, and between a full stop and a formula (``... the ordinal one. $x \\cdot 1 = x$``); an image's
    width (``520px``) is dropped."""
    pieces = [p for p in segments(title_tex(body)) if p[0] or p[1].strip()]
    out = []
    for k, (is_math, piece) in enumerate(pieces):
        after_math, after = pieces[k + 1] if k + 1 < len(pieces) else (False, "")
        if not is_math:
            piece = re.sub(r"\n+(?=[ \t]*[A-Z])", f" {_END} ", re.sub(r"\b\d+px\b", "", piece))
            ends = after_math and re.search(r"[.!?]\s*$", piece) and not _ABBREVIATION.search(piece.rstrip())
        else:
            ends = piece.startswith("$$") and (after_math and not after.startswith("$$") or not after_math and
                                               re.match(r"\s*[A-Z][a-z]", after))
        out.append(piece + (f" {_END} " if ends else " " if k + 1 < len(pieces) and is_math and after_math else ""))
    return unicode_text("".join(out)).replace(_END, "\n")


SEARCH = "https://proofwiki.org/w/index.php?search={q}"


# A numeral after one of these words is the page's identity ("Book XI, Proposition 12"): kept in the search.
# ("volume V", "class C" name a quantity and a smoothness class: not in the list).
_NUMBERED = {"book", "proposition", "part", "chapter", "section", "axiom", "postulate", "theorem", "lemma",
             "corollary", "case", "type", "problem", "exercise", "law", "step"}
_KEY = re.compile(r"[A-Za-z][A-Za-z'-]{2,}|\b(?:\d+|[IVXLCDM]+)\b")


def _key(m: re.Match, words: str) -> bool:
    w = m.group()
    if not w[0].isdigit() and not re.fullmatch(r"[IVXLCDM]{1,2}", w):
        return w.lower() not in _HEAD_STOP
    before = re.search(r"([A-Za-z]+)[\s,.:]*$", words[:m.start()])
    return bool(before) and before.group(1).lower() in _NUMBERED


def search_link(words: str) -> str:
    """ProofWiki's own search for the key words of a heading: the dump keeps no page names, so this
    is the link a person can follow (a search, ``extra["link_kind"] = "search"``). Words of three letters
    or more, each once ("space" of "Fortissimo space T is not a σ-compact space"), and a numeral after
    ``Book``, ``Proposition``, ... (Euclid's 209 propositions differ only there)."""
    keys, seen = [], set()
    for m in _KEY.finditer(words):
        w = m.group()
        if _key(m, words) and (w[0].isdigit() or w.isupper() or w.lower() not in seen):
            keys.append(w)
            seen.add(w.lower())
    q = " ".join(keys[:8]) or " ".join(words.split()[:8])          # a formula: search its own text
    return SEARCH.format(q=quote_plus(q)) if q else ""


def euclid_name(text: str) -> str:
    m = re.search(r"\{\{\s*EuclidPropStatement\s*\|([^{}]*?)\|\s*body\s*=", text)
    if not m:
        return ""
    _, _, named = _params("x|" + m.group(1))
    book, prop = named.get("book", ""), named.get("prop", "")
    return f"Euclid, Elements, Book {book}, Proposition {prop}" if book and prop else ""


def read(root: Path, *, splits: list[str] | tuple[str, ...] = SPLITS, **options) -> Iterator[Document]:
    """Yield one Document per distinct statement text of the split files, in file order (train, dev, test)."""
    out = Path(root) / "output"
    files = [out / f"{s}.json" for s in splits]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise FileNotFoundError(f"PS-ProofWiki split file(s) not found: {', '.join(missing)}")
    records: list[tuple[str, str, dict]] = []          # (uuid, split, record) in file order
    seen: set[str] = set()
    for f, split in zip(files, splits):
        with f.open(encoding="utf-8") as fh:
            data = json.load(fh)
        for uuid, rec in data.items():
            if uuid in seen:
                continue                               # the same record in two splits: once
            seen.add(uuid)
            if not isinstance(rec, dict) or not str(rec.get("text") or "").strip():
                raise ValueError(f"{f}: record {uuid!r} without text")
            records.append((uuid, split, rec))
    audit = DisplayAudit(SOURCE, DISPLAY_MACROS)
    by_text: dict[str, list[str]] = {}
    for uuid, _, rec in records:
        by_text.setdefault(rec["text"].strip(), []).append(uuid)
    for uuid, split, rec in records:
        text = rec["text"].strip()
        uuids = sorted(by_text[text])
        if uuid != uuids[0]:
            continue                                   # emitted under the smallest UUID of its text
        category = str(rec.get("category") or "").strip()
        kind = str(rec.get("type") or "").strip().lower()
        extra = {"split": split, "category": category, "premises": len(rec.get("premises") or [])}
        if len(uuids) > 1:
            extra["duplicate_ids"] = " ".join(f"{SOURCE}:{u}" for u in uuids[1:])
        clean = repair_text(text)                      # HTML entities (&#337;) and mojibake, once
        shown = replace_command(clean, ["index"], 2, lambda n, a: "\\left[" + " : ".join(a) + "\\right]")  # [G : H]
        statement = latex_to_text(wiki_to_latex(clean), MACROS)
        name = euclid_name(clean)
        body = audit.checked(katex_math(display_tex(wiki_to_display(shown), DISPLAY_MACROS)))
        words = heading(statement, category)           # the search link's words (links as before)
        title = heading(title_lines(body), category)  # "U ∩ V = ∅", not "U intersection V"
        extra["link_kind"] = "search"
        extra["context_title"] = category              # the retrieval text's "In <category>." as before
        yield Document(
            id=f"{SOURCE}:{uuid}", source=SOURCE, kind=KINDS.get(kind, kind or "theorem"), name=name,
            title=title, body=body, statement=statement,
            link=search_link(name or words) or search_link(statement), license=LICENSE, file=f"output/{split}.json",
            line=0, extra=extra,
        )
    audit.report()
