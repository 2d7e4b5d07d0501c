"""set.mm's own typesetting: its formulas as TeX for KaTeX, as Unicode for titles (issue 21).

A Metamath database says how to typeset every math token in its ``$t`` comment::

    latexdef "e." as "\\in";
    althtmldef "ph" as '<SPAN CLASS=wff STYLE="color:blue">&#x1D711;</SPAN>';

``typesetting(text)`` reads those definitions (strings in ``"..."`` or ``'...'``, a doubled quote inside
being the quote, ``+`` joining pieces, ``/* */`` comments); ``formula_tex(tokens)`` writes a formula as TeX
from the ``latexdef`` of each token (``|- ( J e. CNrm -> J e. Nrm )`` ->
``\\vdash ( J \\in {\\rm CNrm} \\rightarrow J \\in {\\rm Nrm} )``), with the few LaTeX-only commands set.mm
uses that KaTeX lacks (``\\mbox``, ``\\boldmath``, ``\\underaccent``, ...) replaced; ``formula_text`` writes
it in Unicode from the ``althtmldef`` (tags dropped, entities unescaped: ``𝜑 → 𝜓``), for plain-text
titles; ``comment_tex`` turns a statement's description into display LaTeX (`` `math` `` spans as
``$...$``, ``~ label`` references as ``\\texttt{label}``, HTML tags dropped, entities unescaped,
``_italics_`` as ``\\emph``); ``first_sentence`` gives the title.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

_STR = r'"(?:[^"]|"")*"|\'(?:[^\']|\'\')*\''
_DEF = re.compile(r"\b(latexdef|althtmldef|htmldef)\s+(" + _STR + r")\s+as\s+((?:" + _STR + r")(?:\s*\+\s*(?:"
                  + _STR + r"))*)\s*;", re.S)
_PIECE = re.compile(_STR, re.S)

# LaTeX-only commands in set.mm's latexdefs -> what KaTeX draws
_TEX_FIXES = (
    (re.compile(r"\\mbox\{\\large\\boldmath\s*\$\\times\$\}"), r"\\boldsymbol{\\times}"),
    (re.compile(r"\\mbox\{\\boldmath\s*\$([^$]*)\$\}\}?"), r"\\boldsymbol{\1}"),
    (re.compile(r"\\underaccent\{\\dot\}\{(.)\}"), r"\\underset{.}{\1}"),
    (re.compile(r"\\mathrm\{\\rotatebox\[origin=C\]\{180\}\{\$\\iota\$\}\}"), r"\\text{\\rotatebox{180}{$\\iota$}}"),
    (re.compile(r"\\rotatebox(?:\[[^\]]*\])?\{[^}]*\}\{\$?([^$}]*)\$?\}"), r"\1"),
    (re.compile(r"\\mathsfbf\{"), r"\\mathsf{"),
    (re.compile(r"\\L\{"), r"\\angle{"),
    (re.compile(r"\\lParen"), r"(\\!("),
    (re.compile(r"\\rParen"), r")\\!)"),
    (re.compile(r"\\string\^"), r"\\hat{}"),
    (re.compile(r"\{\\bb\s+"), r"{\\mathbb "),
    (re.compile(r"\\mbox\{"), r"\\text{"),
    # \rm{Poly}: the old font switch given a group; KaTeX would set the rest of the formula upright
    (re.compile(r"\\(rm|bf|it|sf|tt)\s*\{"), r"\\math\1{"),
)
_TEXT_IOTA = re.compile(r"\\text\{\\rotatebox\{180\}\{\$\\iota\$\}\}")


def _unquote(s: str) -> str:
    q = s[0]
    return s[1:-1].replace(q + q, q)


def fix_tex(tex: str) -> str:
    """A latexdef with what KaTeX lacks replaced (``\\mbox`` -> ``\\text``, ``\\underaccent`` ...), and the
    characters that mean something else to KaTeX escaped (a bare ``&`` or ``#``, a ``^`` or ``\\^`` with
    nothing to put up: ``..^``, ``RR^``)."""
    for pat, to in _TEX_FIXES:
        tex = pat.sub(to, tex)
    tex = _TEXT_IOTA.sub(r"\\mathrm{\\iota}", tex)
    tex = re.sub(r"\\text\{\\iota\}", r"\\mathrm{\\iota}", tex)   # KaTeX has no \rotatebox: a plain iota
    tex = re.sub(r"(?<!\\)([&#])", r"\\\1", tex)
    return re.sub(r"\\?\^(?=\s*(?:\}|$))", r"\\hat{}", tex)


# set.mm draws its arrow-with-labels relations with \raisebox and a nested $...$, which neither KaTeX nor
# the page's $...$ pattern can take: the same arrows as KaTeX writes them.
ARROWS = {
    "-1-1->": r"\xrightarrow{1\text{-}1}",
    "-onto->": r"\xrightarrow[\text{onto}]{}",
    "-1-1-onto->": r"\xrightarrow[\text{onto}]{1\text{-}1}",
    "-cn->": r"\xrightarrow{\text{cn}}",
}


@dataclass
class Typesetting:
    """The ``latexdef`` and ``althtmldef`` tables of one database (token -> TeX / HTML)."""

    latex: dict[str, str] = field(default_factory=dict)
    html: dict[str, str] = field(default_factory=dict)


def typesetting(text: str) -> Typesetting:
    """The typesetting definitions of the database ``text`` (every ``$t`` comment)."""
    ts = Typesetting()
    for m in re.finditer(r"\$\(\s*\$t(.*?)\$\)", text, re.S):
        block = re.sub(r"/\*.*?\*/", " ", m.group(1), flags=re.S)
        for d in _DEF.finditer(block):
            value = "".join(_unquote(p) for p in _PIECE.findall(d.group(3)))
            token = _unquote(d.group(2))
            if d.group(1) == "latexdef":
                ts.latex[token] = ARROWS.get(token) or fix_tex(value)
            elif d.group(1) == "althtmldef":
                ts.html[token] = value
    return ts


_TEX_SPECIAL = re.compile(r"([\\{}$&#^_%~])")


_TEX_ESCAPE = {"\\": r"\backslash ", "^": r"\hat{}", "~": r"\sim "}


def _unknown_tex(token: str) -> str:
    """A token without a latexdef: upright, its TeX specials escaped."""
    return r"\mathrm{" + _TEX_SPECIAL.sub(lambda m: _TEX_ESCAPE.get(m.group(1), "\\" + m.group(1)), token) + "}"


def formula_tex(tokens: list[str], ts: Typesetting) -> str:
    """Math tokens as TeX from the latexdefs (a token without one as ``\\mathrm{token}``)."""
    out = []
    for t in tokens:
        tex = ts.latex.get(t)
        out.append(_unknown_tex(t) if tex is None else tex.strip() or "{}")
    s = " ".join(out)
    return re.sub(r"\s+", " ", s).strip()


_TAG = re.compile(r"<[^<>]*>")


def formula_text(tokens: list[str], ts: Typesetting) -> str:
    """Math tokens in Unicode from the althtmldefs (tags dropped, entities unescaped)."""
    out = []
    for t in tokens:
        h = ts.html.get(t)
        out.append(t if h is None else html.unescape(_TAG.sub("", h)).strip())
    s = " ".join(x for x in out if x)
    s = re.sub(r"\s+", " ", s)
    return re.sub(r"([(\[{]) | ([)\]},])", lambda m: m.group(1) or m.group(2), s).strip()


# ------------------------------------------------------------------------------------------ comments

_MATH = re.compile(r"`((?:[^`]|``)*)`")
_REF = re.compile(r"~\s+(\S+)")
_ITALIC = re.compile(r"(?<![\w])_([^_\s](?:[^_]*?[^_\s])?)_(?![\w])")
_HTML_BLOCK = re.compile(r"<HTML>(.*?)</HTML>", re.S | re.I)
_PROSE_SPECIAL = re.compile(r"([{}%$])")


def _prose(s: str) -> str:
    """Comment prose for the page: entities unescaped, TeX specials escaped."""
    s = html.unescape(_TAG.sub(" ", s))
    s = s.replace("\\", "/")
    return _PROSE_SPECIAL.sub(r"\\\1", s)


def comment_tex(comment: str, ts: Typesetting) -> str:
    """A statement's description (credits and markers already stripped) as display LaTeX."""
    s = _HTML_BLOCK.sub(lambda m: _TAG.sub(" ", m.group(1)), comment)
    out, last = [], 0
    for m in _MATH.finditer(s):
        out.append(_prose_refs(s[last:m.start()]))
        tokens = m.group(1).replace("``", " ` ").split()
        out.append("$" + formula_tex(tokens, ts) + "$" if tokens else "")
        last = m.end()
    out.append(_prose_refs(s[last:]))
    text = re.sub(r"[ \t]+", " ", "".join(out)).strip()
    text = re.sub(r"([$}]) ([:)])", r"\1\2", text)
    return re.sub(r" ([.,;])(?=\s|$)", r"\1", text)     # "~ mto ." / "` ps ` ,": set.mm's spaces before punctuation


def _prose_refs(s: str) -> str:
    s = s.replace("~~", "\x00")
    s = _ITALIC.sub(lambda m: "\x01" + m.group(1) + "\x02", s)
    parts, last = [], 0
    for m in _REF.finditer(s):
        parts.append(_prose(s[last:m.start()]))
        parts.append(r"\texttt{" + _prose(m.group(1)).replace("_", r"\_") + "}")
        last = m.end()
    parts.append(_prose(s[last:]))
    return "".join(parts).replace("\x00", "~").replace("\x01", r"\emph{").replace("\x02", "}")


def comment_text(comment: str, ts: Typesetting) -> str:
    """A description as plain text: math in Unicode (althtmldef), ``~ label`` as the label, tags dropped."""
    s = _HTML_BLOCK.sub(lambda m: m.group(1), comment)
    s = _MATH.sub(lambda m: formula_text(m.group(1).replace("``", " ` ").split(), ts), s)
    s = _REF.sub(r"\1", s.replace("~~", "\x00")).replace("\x00", "~")
    s = html.unescape(_TAG.sub(" ", s))
    s = _ITALIC.sub(r"\1", s)
    s = " ".join(s.split())
    return re.sub(r" ([,.;:)])", r"\1", s)


_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|cf|etc|resp|viz|vs|Thm|Prop|Def|Lem|Cor|Ex|Sec|Ch|Eq|Eqn|Fig|Vol|No|p|pp|"
                     r"ff|ch|sec|eq|ex|def|thm|prop|lem|cor|St|Dr|Prof|Mr|Ms|al|Jr|Sr|approx|incl|ed|eds|rev|"
                     r"[A-Z]))\.$")


def first_sentence(text: str, limit: int = 120) -> str:
    """The first sentence of plain ``text`` (abbreviations such as ``e.g.``, ``Thm.``, ``p.`` and initials do
    not end it, nor a full stop before a lower-case word), cut at a word to about ``limit`` characters (``…``)."""
    words = text.split()
    out: list[str] = []
    for k, w in enumerate(words):
        out.append(w)
        after = words[k + 1] if k + 1 < len(words) else ""
        if w[-1:] in ".?!" and not _ABBREV.search(w) and len(out) >= 2 and not after[:1].islower():
            break
    s = " ".join(out).rstrip()
    if s.endswith(".") and not s.endswith(".."):
        s = s[:-1]
    if len(s) > limit:
        s = s[:limit].rsplit(" ", 1)[0].rstrip(" ,;:") + " …"
    return s
