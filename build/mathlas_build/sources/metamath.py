r"""Metamath reader: the ``$p`` theorems and the ``$a`` axioms and definitions of ``set.mm`` (CC0 1.0).

One Document per ``|-`` statement (``label $p |- ... $= proof $.`` or ``label $a |- ... $.``):

* id ``metamath:<label>``, link ``https://us.metamath.org/mpeuni/<label>.html``, ``name`` = the label;
* kind ``theorem`` for ``$p``; for ``$a`` by set.mm's label convention ``definition`` (``df-``) or
  ``axiom`` (``ax-`` and anything else);
* ``title`` = the description's first sentence in plain text, its math in Unicode from set.mm's
  ``althtmldef``\ s (``mmtex.first_sentence``; "A completely normal space is normal"); the section path from
  the ruler comments (part > chapter > section > subsection) is ``extra["context_title"]``, and the retrieval
  text still ends with it;
* ``body`` = display text (``display_body``): the description (``mmtex.comment_tex``), then the hypotheses and
  the assertion typeset from set.mm's own ``latexdef``\ s, each in ``$...$``
  (``Hypotheses: $\\vdash \\varphi$ (\\texttt{min}); ... Assertion: $\\vdash \\psi$``); a database without a
  ``$t`` comment keeps the statement as it writes it; ``extra["formula"]`` = the statement as set.mm writes it,
  hypotheses first (``min $e |- ph $.`` / ``maj $e |- ( ph -> ps ) $.`` / ``ax-mp $a |- ps $.``);
* ``slogan`` = the description in words: the comment that precedes the statement, with the credit lines
  (``(Contributed by NM, 5-Aug-1993.)``, ``(Revised by ...)``, ``(Proof shortened by ...)``) and the
  ``(New usage is discouraged.)`` / ``(Proof modification is discouraged.)`` markers stripped,
  ``~ label`` references as the bare label, `` ` math ` `` spans and HTML markup turned into words;
* ``statement`` = the hypotheses and the assertion in words (``Given ...; ..., then ...``) through the small
  ``SYMBOL_WORDS`` table below; tokens it does not name stay as written (``Grp``, ``sin``, ``A``, ``ph``).

The shared retrieval text is then ``label. description. statement words. In section path.`` (the label is
one word, so the English description leads what the encoder reads), as in 1.1.0.

Not documents: syntax axioms (``$a`` with the typecodes ``wff`` / ``class`` / ``setvar``), ``$f`` variable
types, ``$e`` hypotheses (they are part of the statement they belong to), the ``$t`` / ``$j`` blocks, the two
guide pages written as dummy theorems (``conventions``, ``conventions-label``: long texts on set.mm's
conventions over ``|- ph``) and the April Fool's theorems (chapter "Humor").

**Obsolete and alternative versions are skipped** by default: labels ending in ``OLD`` or ``ALT`` (with an
optional counter, ``ax12OLD``, ``ax5ALT2``), and statements whose description starts with "Obsolete" /
"Alternate proof" / "Alternative proof". set.mm keeps these as older proofs or older wordings of a statement
that is in the database under its real label; as search hits they would be near-duplicates that crowd the
real one out of the top 10, and set.mm marks them "(New usage is discouraged.)" for that reason. Other
statements marked "(New usage is discouraged.)" are kept (they are real statements, e.g. axioms shown to be
redundant, the Hilbert-space explorer's and the complex-number construction's internals) with
``extra["discouraged"] = True``.

Recipe options (``[[sources]] options = {...}``):

``file``        the database file under the source folder (default ``set.mm``), e.g. a newer set.mm under
                another name. iset.mm is not supported: its pages are under ``/ileuni/`` and its labels
                collide with set.mm's.
``obsolete``    ``true`` keeps the OLD / ALT / "Obsolete" statements too (default ``false``).
``mathboxes``   ``false`` leaves out the users' mathboxes (the last part of set.mm, "SUPPLEMENTARY MATERIAL
                (USER'S MATHBOXES)"; default ``true``).

The parser (``statements``) is token based, as set.mm separates every keyword by white space: ``${ $}`` scopes
for ``$e`` hypotheses, ``$( $)`` comments (section headings are the comments with ``####``, ``#*#*``, ``=-=-``
or ``-.-.`` rulers), ``$c $v $d`` skipped, ``$= ... $.`` proofs skipped. It is the one set.mm parser in the
tree: ``mathlas_build.training.metamath`` builds its training documents from it.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterator

from mathlas_build.display import DisplayAudit
from mathlas_build.document import Document
from mathlas_build.mmtex import Typesetting, comment_tex, comment_text, first_sentence, formula_tex, typesetting

SOURCE = "metamath"
LICENSE = "CC0-1.0"
ATTRIBUTION = "Metamath set.mm (Version of 28-Dec-2020, Debian metamath-databases), the Metamath authors, CC0 1.0"
LINK = "https://us.metamath.org/mpeuni/{label}.html"

# ------------------------------------------------------------------------------------------------ parser

_RULERS = ("####", "#*#*", "=-=-", "-.-.")      # part, chapter, section, subsection headings
_TOKEN = re.compile(r"\S+")
_END_COMMENT = re.compile(r"\s\$\)(?!\S)")
_END_EXPR = re.compile(r"\s\$[.=](?!\S)")
_END_STMT = re.compile(r"\s\$\.(?!\S)")
_END_INCLUDE = re.compile(r"\s\$\](?!\S)")


@dataclass(frozen=True)
class Statement:
    """One ``|-`` assertion of a Metamath database, as the parser found it."""

    label: str
    keyword: str                            # "$p" or "$a"
    expr: list[str]                         # the math tokens, typecode "|-" first
    hyps: list[tuple[str, list[str]]]       # the $e hypotheses in scope (label, tokens), outermost first
    sections: tuple[str, str, str, str]     # part, chapter, section, subsection titles ("" where none)
    comment: str                            # the comment before it, raw text between "$(" and "$)"
    line: int                               # 1-based line of the label


_SCRIPT_TAG = re.compile(r"<(sup|sub)>(.*?)</\1>", re.I)


def heading_text(title: str) -> str:
    """A ruler comment's title as plain text: set.mm writes them in HTML (``B&eacute;zout's identity``,
    ``<i>p</i>-adic number fields``, ``&pi;<sup>2</sup>/6``) -> ``Bézout's identity``, ``p-adic number
    fields``, ``π^2/6``."""
    s = _SCRIPT_TAG.sub(lambda m: ("^" if m.group(1).lower() == "sup" else "_") + m.group(2), title)
    return " ".join(html.unescape(_TAG.sub("", s)).split())


def statements(text: str) -> Iterator[Statement]:
    """Every ``$p`` / ``$a`` statement with typecode ``|-`` of a Metamath database text, in file order.

    The description is the last plain comment seen since the previous statement (a ruler comment, a
    ``$f`` or a syntax axiom clears it; ``$e``, ``${``, ``$d`` do not)."""
    scopes: list[list[tuple[str, list[str]]]] = [[]]
    heads = ["", "", "", ""]
    last_comment = ""
    line, line_pos = 1, 0
    pos, n = 0, len(text)
    while True:
        m = _TOKEN.search(text, pos)
        if m is None:
            return
        t = m.group()
        pos = m.end()
        if t == "$(":
            e = _END_COMMENT.search(text, pos - 1)
            end = e.start() if e else n
            body = text[pos:end]
            pos = e.end() if e else n
            words = body.split()
            if words and words[0].startswith(("$t", "$j")):
                continue
            if words and words[0][:4] in _RULERS:
                level = _RULERS.index(words[0][:4])
                cut = next((k for k, w in enumerate(words[1:], 1) if w[:4] in _RULERS), len(words))
                heads[level] = heading_text(" ".join(words[1:cut]))
                for k in range(level + 1, len(heads)):
                    heads[k] = ""
                last_comment = ""
            else:
                last_comment = body
            continue
        if t == "${":
            scopes.append([])
            continue
        if t == "$}":
            if len(scopes) > 1:
                scopes.pop()
            continue
        if t in ("$c", "$v", "$d"):
            e = _END_STMT.search(text, pos - 1)
            pos = e.end() if e else n
            continue
        if t == "$[":
            e = _END_INCLUDE.search(text, pos - 1)
            pos = e.end() if e else n
            continue
        k = _TOKEN.search(text, pos)
        kw = k.group() if k else ""
        if kw not in ("$e", "$p", "$a", "$f"):
            continue                        # a stray token: move on one token, as a reader of tokens would
        label, label_start = t, m.start()
        e = _END_EXPR.search(text, k.end() - 1)
        expr = text[k.end():e.start() if e else n].split()
        pos = e.end() if e else n
        if e is not None and e.group().endswith("$="):
            p = _END_STMT.search(text, pos - 1)
            pos = p.end() if p else n
        if kw == "$e":
            scopes[-1].append((label, expr))
            continue
        if kw == "$f" or not expr or expr[0] != "|-":
            last_comment = ""
            continue
        line += text.count("\n", line_pos, label_start)
        line_pos = label_start
        yield Statement(label=label, keyword=kw, expr=expr, hyps=[h for scope in scopes for h in scope],
                        sections=(heads[0], heads[1], heads[2], heads[3]), comment=last_comment, line=line)
        last_comment = ""


# ------------------------------------------------------------------------------------------------ words

# Metamath token -> words, for the retrieval text. Deliberately small: the connectives, quantifiers, the set
# and function vocabulary and the number sets that most statements use; every other token (a class name
# such as ``Grp`` or ``Base``, a function such as ``sin``, a variable) stays as written. ``""`` drops
# punctuation that carries no word (parentheses, the ``|-`` typecode, the application backtick).
SYMBOL_WORDS: dict[str, str] = {
    "|-": "", "(": "", ")": "", "`": "", ",": "", "{": "", "}": "", "<.": "", ">.": "",
    "->": "implies", "<->": "if and only if", "-.": "not", "/\\": "and", "\\/": "or",
    "A.": "for all", "E.": "there exists", "E!": "there exists a unique", "E*": "there exists at most one",
    "=": "equals", "=/=": "not equal", "e.": "element of", "e/": "not element of",
    "C_": "subset of", "C.": "proper subset of", "i^i": "intersection", "u.": "union", "\\": "minus",
    "(/)": "empty set", "~P": "power set", "U.": "union of", "|^|": "intersection of", "|": "such that",
    "X.": "cross product", "dom": "domain", "ran": "range", "|`": "restricted to", "`'": "converse",
    "o.": "composed with", "|->": "maps to", "-->": "function to", "-1-1->": "one-to-one function to",
    "-onto->": "onto function to", "-1-1-onto->": "bijection to", "~~": "equinumerous to",
    "<_": "less than or equal to", "<": "less than", "+": "plus", "-": "minus", "x.": "times",
    "/": "divided by", "^": "to the power", "-u": "negative", "||": "divides", "!": "factorial",
    "...": "to", "sum_": "sum", "prod_": "product", "abs": "absolute value", "sqrt": "square root",
    "RR": "real numbers", "CC": "complex numbers", "QQ": "rational numbers", "ZZ": "integers",
    "NN": "positive integers", "NN0": "nonnegative integers", "RR+": "positive reals", "RR*": "extended reals",
    "+oo": "plus infinity", "-oo": "minus infinity", "_om": "omega", "On": "ordinals", "Prime": "primes",
    "#": "size of", "card": "cardinality of",
}


# Proper substitution, ``[ y / x ] ph`` ("ph with y for x"; ``[. A / x ].`` and ``[_ A / x ]_`` for a class,
# ``[b t /b x ]b`` in a mathbox): opener -> (its slash, its closer). The slash is not a division, so the
# substitution keeps set.mm's own compact form ``[y/x]`` rather than "[ y divided by x ]".
_SUBSTITUTION = {"[": ("/", "]"), "[.": ("/", "]."), "[_": ("/", "]_"), "[b": ("/b", "]b")}
_CLOSERS = {close for _, close in _SUBSTITUTION.values()}


def _substitution_close(tokens: list[str], i: int) -> int:
    """The index of the closer of the substitution opened at ``tokens[i]`` (``[ A / x ]``: the last token of
    ``[``, the class, the slash, one variable, the closer), or -1: an equivalence class ``[ A ] R`` is not one."""
    slash, close = _SUBSTITUTION[tokens[i]]
    depth = 0
    for j in range(i + 1, len(tokens)):
        t = tokens[j]
        if t in _SUBSTITUTION:
            depth += 1
        elif t in _CLOSERS:
            if depth:
                depth -= 1
                continue
            return j if t == close and j - 3 > i and tokens[j - 2] == slash else -1
    return -1


def symbol_words(tokens: list[str]) -> str:
    """Math tokens -> words (``|- ( A e. B -> A C_ U. B )`` -> ``A element of B implies A subset of union of B``;
    ``[ y / x ] ph`` -> ``[y/x] ph``)."""
    words = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        j = _substitution_close(tokens, i) if t in _SUBSTITUTION else -1
        if j >= 0:
            var = tokens[j - 1]
            words.append(f"[{symbol_words(tokens[i + 1:j - 2])}/{SYMBOL_WORDS.get(var, var)}]")
            i = j + 1
            continue
        words.append(SYMBOL_WORDS.get(t, t))
        i += 1
    return " ".join(w for w in words if w)


_MARKERS = re.compile(r"\(\s*(?:New\s+usage|Proof\s+modification)\s+is\s+discouraged\.?\s*\)", re.I)
_CREDIT = re.compile(r"\((?:Contributed|Revised|Proof\s+shortened|Modified|Revision|Shortened|Dummy\s+variables?"
                     r"|Moved)[^()]*\)", re.S)
_MATH = re.compile(r"`([^`]*)`")
_MATH_BREAK = re.compile(r"`\s+`")
_REF = re.compile(r"~\s+(\S+)")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_ITALIC = re.compile(r"(?<![\w])_([^_\s](?:[^_]*?[^_\s])?)_(?![\w])")


def strip_markers(comment: str) -> str:
    """The description without the discouragement markers and the credit lines, white space normalised."""
    return " ".join(_CREDIT.sub(" ", _MARKERS.sub(" ", comment)).split())


def comment_words(comment: str) -> str:
    """The description in words: markers and credits stripped, `` `math` `` through ``SYMBOL_WORDS``,
    ``~ label`` as the label, HTML tags, entities and ``_italics_`` markup dropped."""
    s = strip_markers(comment).replace("``", "\x00")      # ``: a literal backtick inside math
    s = _MATH_BREAK.sub(" ", s)      # one formula over several lines: ` ... [_ A / x ` ` ]_ C ... `
    s = _MATH.sub(lambda m: " " + symbol_words(m.group(1).replace("\x00", " ` ").split()) + " ", s)
    s = s.replace("\x00", "`").replace("~~", "\x00")       # ~~: a literal tilde outside math
    s = _REF.sub(r"\1", s).replace("\x00", "~")
    s = _TAG.sub(" ", s)
    s = html.unescape(s)
    s = _ITALIC.sub(r"\1", s)
    s = " ".join(s.split())
    return re.sub(r" ([,.;:)])", r"\1", s)


# ------------------------------------------------------------------------------------------------ reader

_OBSOLETE_LABEL = re.compile(r"(?:OLD|ALT)[0-9]*$")
_OBSOLETE_COMMENT = re.compile(r"\s*(?:Obsolete|Alternate\s+proof|Alternative\s+proof)\b", re.I)
MATHBOXES = "SUPPLEMENTARY MATERIAL (USER'S MATHBOXES)"
_NOT_STATEMENTS = ("Conventions", "Humor")      # a section title on the statement's path: guide pages, jokes


def is_statement(st: Statement) -> bool:
    """False for set.mm's guide pages written as theorems and its April Fool's theorems."""
    return not (st.sections[0] == "GUIDES AND MISCELLANEA" and any(h in _NOT_STATEMENTS for h in st.sections[1:]))


def kind_of(st: Statement) -> str:
    if st.keyword == "$p":
        return "theorem"
    return "definition" if st.label.startswith("df-") else "axiom"


def is_obsolete(st: Statement) -> bool:
    """An older or alternative version of a statement that set.mm has under another label."""
    return bool(_OBSOLETE_LABEL.search(st.label) or _OBSOLETE_COMMENT.match(st.comment))


def metamath_text(st: Statement) -> str:
    """The statement as set.mm writes it (proof left out): hypotheses, then the assertion."""
    lines = [f"{label} $e {' '.join(expr)} $." for label, expr in st.hyps]
    lines.append(f"{st.label} {st.keyword} {' '.join(st.expr)} $.")
    return "\n".join(lines)


def display_body(st: Statement, description: str, ts: Typesetting) -> str:
    """The display text: the description (``mmtex.comment_tex``), then the hypotheses and the assertion
    typeset from set.mm's own latexdefs, each in ``$...$`` (``$\\vdash ( J \\in {\\rm CNrm} \\rightarrow ...)$``)."""
    if not ts.latex:      # a database without a $t comment: the statement as it writes it, not as math
        return f"{description}\n\n{metamath_text(st)}" if description else metamath_text(st)
    parts = [comment_tex(description, ts)] if description else []
    if st.hyps:
        parts.append("Hypotheses: " + "; ".join(f"${formula_tex(expr, ts)}$ (\\texttt{{{label}}})"
                                                for label, expr in st.hyps) + ".")
        parts.append(f"Assertion: ${formula_tex(st.expr, ts)}$")
    else:
        parts.append(f"${formula_tex(st.expr, ts)}$")
    return "\n\n".join(parts)


def title_of(st: Statement, description: str, ts: Typesetting) -> str:
    """The human title: the description's first sentence in plain text (math in Unicode from set.mm's
    althtmldefs), else the statement's kind and label; never a single word."""
    title = first_sentence(comment_text(description, ts)) if description else ""
    if len(title.split()) < 2:
        title = " ".join(x for x in (title, f"({kind_of(st)} {st.label})") if x)
    return title


def statement_words(st: Statement) -> str:
    words = symbol_words(st.expr)
    if st.hyps:
        return "Given " + "; ".join(symbol_words(h) for _, h in st.hyps) + ", then " + words
    return words


def attribution(options: dict) -> str:
    """The manifest's attribution line: set.mm's, and the 1000+ list's when its names are aliases."""
    if not options.get("thousand_plus"):
        return ATTRIBUTION
    from mathlas_build.training import thousand

    return f"{ATTRIBUTION}; aliases (theorem names) from the {thousand.ATTRIBUTION}"


def thousand_aliases(root: Path, thousand_plus) -> dict[str, str]:
    """set.mm label -> the 1000+ list's names for it, "; "-joined (the aliases column's form)."""
    if not thousand_plus:
        return {}
    import html

    from mathlas_build.training import thousand

    base = Path(root) if Path(root).is_dir() else Path(root).parent
    where = Path(thousand_plus)
    where = where if where.is_absolute() else base / where
    if not (where / "_thm").is_dir():
        raise FileNotFoundError(f"1000+ theorems list not found at {where} (thousand_plus: the folder holding _thm/)")
    names: dict[str, list[str]] = {}
    for t in thousand.read(where):
        title = " ".join(html.unescape(t.title).replace("; ", ", ").split())
        for label in t.metamath:
            names.setdefault(label, [])
            if title not in names[label]:
                names[label].append(title)
    return {label: "; ".join(v) for label, v in names.items()}


def database(root: Path, file: str = "set.mm") -> Path:
    root = Path(root)
    path = root / file if root.is_dir() else root
    if not path.is_file():
        raise FileNotFoundError(f"Metamath database not found: {path}")
    return path


def read(root: Path, *, file: str = "set.mm", obsolete: bool = False, mathboxes: bool = True,
         **options) -> Iterator[Document]:
    """Yield one Document per ``|-`` statement of ``root/file`` (``root`` may be the file itself).

    ``thousand_plus`` (a path, relative to ``root``): the 1000+ theorems list, whose theorem names
    become the ``aliases`` of the set.mm labels it lists ("Pythagorean theorem" for ``pythag``)."""
    path = database(root, file)
    aliases = thousand_aliases(root, options.get("thousand_plus"))
    text = path.read_text(encoding="utf-8", errors="replace")
    ts = typesetting(text)
    audit = DisplayAudit(SOURCE)
    for st in statements(text):
        if not is_statement(st) or (not obsolete and is_obsolete(st)):
            continue
        if not mathboxes and st.sections[0] == MATHBOXES:
            continue
        description = strip_markers(st.comment)
        yield Document(
            id=f"{SOURCE}:{st.label}", source=SOURCE, kind=kind_of(st), name=st.label,
            title=title_of(st, description, ts), body=audit.checked(display_body(st, description, ts)),
            statement=statement_words(st), link=LINK.format(label=st.label), license=LICENSE,
            slogan=comment_words(st.comment), file=path.name, line=st.line,
            extra={"label": st.label, "discouraged": bool(_MARKERS.search(st.comment)),
                   "context_title": " > ".join(h for h in st.sections if h), "formula": metamath_text(st),
                   **({"aliases": aliases[st.label]} if st.label in aliases else {})},
        )
    audit.report()
