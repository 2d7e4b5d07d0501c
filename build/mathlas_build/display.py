"""Display text: a statement's source LaTeX made ready for a reader (issue 21).

A document's ``body`` is what the page typesets with KaTeX and what the CLI and MCP summaries show; its
``statement`` (``latex.latex_to_text``) is what search reads. Readers used to put the raw source into
``body``: book macros KaTeX has never heard of (``\\prd``, ``\\Entails``), index and label debris
(``\\index{...}``, ``\\ollabel{...}``), PlanetMath's link markup (``\\PMlinkname{text}{target}``), section
commands, picture environments, mojibake (``CramÃ©r``) and HTML entities (``&#337;``). ``display_tex`` turns
such a body into LaTeX that only uses what KaTeX draws inside math and what the page renders outside it:

1. mojibake repaired (``ftfy.fix_encoding``, only where the text shows mojibake) and HTML entities unescaped;
2. ``%`` comments stripped; ``\\index``, ``\\label``, ``\\ollabel`` and PlanetMath's link-escape commands
   dropped, ``\\PMlinkname{text}{target}`` (and the other ``\\PMlink*``) -> text;
3. the corpus's own macros (the ``Macros`` table its reader already builds for the words) expanded, less
   the structural commands the page renders itself (``\\emph``, ``\\item``, ``\\ref``, ...);
4. display environments (``equation``, ``align``, ``eqnarray``, ``gather``, ``multline``, ``displaymath``,
   ``\\[...\\]``) -> ``$$...$$`` (alignments as ``aligned``, gatherings as ``gathered``); pictures
   (``pspicture``, ``picture``, ``tikzpicture``, ``figure``) and ``\\includegraphics`` dropped;
5. inside math: ``\\mbox`` / ``\\hbox`` / ``\\textsc`` ... -> ``\\text``, ``\\ensuremath{x}`` -> ``x``,
   ``\\label`` / ``\\qedhere`` / ``\\xspace`` dropped, ``\\bm`` -> ``\\boldsymbol``, ``\\mathds`` -> ``\\mathbb``;
6. outside math: ``\\section{x}`` and its kin -> a bold paragraph, ``\\footnote{x}`` -> `` (x)``,
   ``\\href{u}{t}`` -> ``t``, ``\\cref`` / ``\\autoref`` -> ``\\ref``, accents and named symbols -> Unicode
   (``\\'e`` -> é, ``\\S`` -> §), any other command -> its last braced argument (``\\textsc{x}`` -> ``x``) or
   nothing.

What KaTeX draws is the list ``katex_commands.txt`` (every ``"\\\\name"`` literal of the vendored
``katex.min.js``); ``DisplayAudit`` counts, per source, the documents whose display text still holds a
command outside it, split into the commands the corpus defines itself and the rest (packages such as
``xymatrix``), and prints the count at the end of each reader (the build log; docs/building.md).
"""
from __future__ import annotations

import html
import re
import sys
import unicodedata
from collections import Counter
from functools import lru_cache
from pathlib import Path
from collections.abc import Iterable

from mathlas_build.latex import Macros, definitions_out, expand_macros, strip_comments

KATEX: frozenset[str] = frozenset(
    line.strip() for line in (Path(__file__).with_name("katex_commands.txt")).read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#"))

# Commands the page renders outside math (mathlas/web/static/app.js textToHtml): never expanded, kept.
PAGE_TEXT = frozenset("""emph textit textsl textbf texttt text textrm mbox textup item begin end noindent medskip
smallskip bigskip par newline hfill quad qquad ref eqref cite bibitem em it sl bf""".split())
# Never expanded even where a corpus redefines them: the structure the cleaner or the page handles.
_NO_EXPAND = PAGE_TEXT | frozenset("""label index section subsection subsubsection paragraph subparagraph chapter
part footnote href url cref Cref autoref ensuremath""".split())

_MOJIBAKE = re.compile(r"[ÃÂâ][\u0080-\u00bf\u2018-\u203a\u20ac\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc]")
_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]+);")


def repair_text(s: str) -> str:
    """Mojibake repaired (UTF-8 read as cp1252/latin-1: ``CramÃ©r`` -> ``Cramér``) and HTML entities
    unescaped (``&#337;`` -> ``ő``, ``&amp;`` -> ``&``). Text without either comes back unchanged."""
    if _MOJIBAKE.search(s):
        try:
            import ftfy
        except ImportError:
            raise ImportError("repairing mojibake needs ftfy: pip install 'mathlas[build]' (or pip install ftfy)") \
                from None
        s = ftfy.fix_encoding(s)
    if "&" in s and _ENTITY.search(s):
        s = html.unescape(s)
    return s


# ------------------------------------------------------------------------------------------ command scanning

# \sqrt[n]{x}: the root sign of its index (another index written before the sign: ⁵√x)
ROOTS = {"": "√", "2": "√", "3": "∛", "4": "∜"}


def _group(tex: str, i: int, open_: str = "{", close: str = "}") -> tuple[str, int] | None:
    """The balanced group opening at ``tex[i]`` (after spaces): (content, index after it), else None."""
    j = i
    while j < len(tex) and tex[j] in " \t":
        j += 1
    if j >= len(tex) or tex[j] != open_:
        return None
    depth, k = 0, j
    while k < len(tex):
        c = tex[k]
        if c == "\\":
            k += 2
            continue
        if c == open_ or (open_ != "{" and c == "{"):
            depth += 1
        elif c == close or (open_ != "{" and c == "}"):
            depth -= 1
            if depth == 0:
                return tex[j + 1:k], k + 1
        k += 1
    return None


def _args(tex: str, i: int, n: int, optional: bool = True) -> tuple[list[str], int]:
    """Up to ``n`` braced arguments from ``tex[i]`` (optional ``*`` and ``[...]`` arguments skipped)."""
    if tex.startswith("*", i):
        i += 1
    while optional:
        g = _group(tex, i, "[", "]")
        if g is None:
            break
        i = g[1]
    out: list[str] = []
    while len(out) < n:
        g = _group(tex, i)
        if g is None:
            break
        out.append(g[0])
        i = g[1]
    return out, i


@lru_cache(maxsize=256)
def _command_re(names: tuple[str, ...]) -> re.Pattern:
    return re.compile(r"\\(%s)(?![A-Za-z@])" % "|".join(sorted(map(re.escape, names), key=len, reverse=True)))


def replace_command(tex: str, names: Iterable[str], nargs: int, render) -> str:
    """Every ``\\name`` of ``names`` with up to ``nargs`` braced arguments -> ``render(name, args)``."""
    if "\\" not in tex:
        return tex
    pat = _command_re(tuple(sorted(names)))
    if not pat.search(tex):
        return tex
    out, i = [], 0
    while True:
        m = pat.search(tex, i)
        if not m:
            out.append(tex[i:])
            return "".join(out)
        out.append(tex[i:m.start()])
        args, i = _args(tex, m.end(), nargs)
        out.append(render(m.group(1), args))


# ------------------------------------------------------------------------------------------ math segments

_MATH_ENVS = ("equation", "align", "alignat", "flalign", "gather", "multline", "eqnarray", "displaymath", "math",
              "xalignat", "dmath", "CD", "myeqn", "narrowmultline")   # the last two: the HoTT book on PlanetMath
_ENV_ALT = "|".join(e + r"\*?" for e in _MATH_ENVS)
# $$..$$, \[..\], \(..\), math environments, $..$ (an escaped \$ is text): the page's own pattern
MATH_RE = re.compile(r"\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\]|\\\(([\s\S]+?)\\\)|"
                     r"(\\begin\{(" + _ENV_ALT + r")\}([\s\S]*?)\\end\{\5\})|(?<!\\)\$((?:\\\$|[^$])+?)\$")


def segments(tex: str) -> list[tuple[bool, str]]:
    """``tex`` cut into (is_math, piece) as the page cuts it; a math piece keeps its delimiters."""
    out: list[tuple[bool, str]] = []
    last = 0
    for m in MATH_RE.finditer(tex):
        if m.start() > last:
            out.append((False, tex[last:m.start()]))
        out.append((True, m.group(0)))
        last = m.end()
    if last < len(tex):
        out.append((False, tex[last:]))
    return out


def _math_inner(piece: str) -> str:
    m = MATH_RE.fullmatch(piece)
    if not m:
        return piece
    for g in (1, 2, 3, 6, 7):
        if m.group(g) is not None:
            return m.group(g)
    return piece


_ALIGNING = {"align", "alignat", "flalign", "eqnarray", "xalignat"}
_GATHERING = {"gather", "multline", "dmath", "narrowmultline"}


def _display(piece: str) -> str:
    """A display piece (``\\[..\\]``, ``equation``, ``align``, ...) as ``$$...$$``; inline ones as ``$...$``."""
    m = MATH_RE.fullmatch(piece)
    if not m:
        return piece
    if m.group(7) is not None:
        return piece
    if m.group(3) is not None:
        return "$" + m.group(3) + "$"
    if m.group(4) is not None:
        env = m.group(5).rstrip("*")
        inner = re.sub(r"\\(?:nonumber|notag)(?![A-Za-z@])", "", m.group(6))    # numbering: the page has none
        if env == "CD":
            return "$$\\begin{CD}" + inner + "\\end{CD}$$"
        if env == "math":
            return "$" + inner + "$"
        if env in ("alignat", "xalignat"):
            inner = re.sub(r"\A\s*\{[^{}]*\}", "", inner)          # the column count
        if env in _ALIGNING:
            inner = inner.replace("&=&", "&=").replace("& = &", "&=")
            return "$$\\begin{aligned}" + inner.strip() + "\\end{aligned}$$"
        if env in _GATHERING and "\\\\" in inner:
            return "$$\\begin{gathered}" + inner.strip() + "\\end{gathered}$$"
        return "$$" + inner.strip() + "$$"
    return "$$" + (m.group(1) if m.group(1) is not None else m.group(2)).strip() + "$$"


# ------------------------------------------------------------------------------------------ cleaning

_DROP_1 = ("index", "indexdef", "label", "ollabel", "PMlinkescapeword", "PMlinkescapephrase",
           "includegraphics", "hypertarget", "phantomsection", "vspace", "hspace", "addcontentsline",
           "markboth", "pagestyle", "thispagestyle", "setlength", "setcounter", "addtocounter")
_LINKS_2 = ("PMlinkname", "PMlinkid", "PMlinkexternal", "PMlinktofile", "PMlinkescapetext", "href", "hyperref")
_PICTURES = ("pspicture", "pspicture*", "picture", "tikzpicture", "figure", "figure*", "xy", "psmatrix",
             "comment", "tikzcd")
_TEXT_IN_MATH = ("mbox", "hbox", "textsc", "textnormal", "textmd", "intertext", "textsf", "makebox", "fbox",
                 "textup", "textrm", "emph", "textit")
_MATH_FIX = {"bm": "boldsymbol", "mathds": "mathbb", "mathbbm": "mathbb", "mathbbmss": "mathbb", "Bbb": "mathbb", "cal": "mathcal",
             "slash": "/", "lefteqn": "", "mathscr": "mathscr", "mathpzc": "mathcal", "textsuperscript": "",
             "dddot": "dot", "operatorname": "operatorname", "mathsfit": "mathsf", "mathbfit": "boldsymbol",
             "nobreakdash": "", "colonequals": "coloneqq", "mathllap": "llap", "mathclap": "clap",
             "textmu": "mu", "textdegree": "degree", "bigstar": "bigstar", "dashrightarrow": "dashrightarrow",
             "lhd": "lhd", "rhd": "rhd", "unlhd": "unlhd", "unrhd": "unrhd", "dotsc": "dots", "dotsb": "dots",
             "dotsm": "dots", "dotsi": "dots", "dotso": "dots", "ltimes": "ltimes", "rtimes": "rtimes",
             "owns": "ni", "Tiny": "tiny", "footnotesize": "footnotesize", "mathbold": "mathbf",
             "textasciitilde": "sim", "bigoplus": "bigoplus", "tfrac": "tfrac", "textbackslash": "backslash",
             "varnothing": "varnothing", "ocircle": "bigcirc", "sslash": "/\\!\\!/", "nicefrac": "tfrac", "sfrac": "tfrac", "cfrac": "cfrac", "bbold": "mathbb",
             "sp": "^", "sb": "_", "comp": "complement"}   # plain TeX's scripts; PlanetMath's A^{\comp}
_MATH_DROP = ("qedhere", "xspace", "ensuremath", "nonumber", "notag", "displaybreak", "allowdisplaybreaks", "protect",
              "relax", "linebreak", "nolinebreak", "pagebreak", "noalign", "strut", "mathstrut", "smallskip",
              "medskip", "bigskip", "vfill", "hfil", "hfill", "newline")
_SECTIONS = ("part", "chapter", "section", "subsection", "subsubsection", "paragraph", "subparagraph")
_SYMBOLS = {"S": "§", "P": "¶", "ldots": "…", "dots": "…", "textellipsis": "…", "LaTeX": "LaTeX", "TeX": "TeX",
            "textendash": "–", "textemdash": "—", "copyright": "©", "ss": "ß", "o": "ø", "O": "Ø", "ae": "æ",
            "AE": "Æ", "oe": "œ", "OE": "Œ", "aa": "å", "AA": "Å", "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ",
            "dag": "†", "ddag": "‡", "pounds": "£", "textbullet": "•", "textdegree": "°", "times": "×",
            "textquoteright": "’", "textquoteleft": "‘", "textquotedblleft": "“", "textquotedblright": "”",
            "textasciitilde": "~", "textbar": "|", "textless": "<", "textgreater": ">", "checkmark": "✓",
            "qed": "∎", "qedsymbol": "∎", "euro": "€", "degree": "°", "cdot": "·", "infty": "∞", "pm": "±",
            "ge": "≥", "le": "≤", "geq": "≥", "leq": "≤", "neq": "≠", "to": "→", "rightarrow": "→",
            "Rightarrow": "⇒", "iff": "⇔", "implies": "⇒", "cdots": "⋯", "alpha": "α", "beta": "β",
            "gamma": "γ", "delta": "δ", "epsilon": "ε", "theta": "θ", "lambda": "λ", "mu": "μ", "pi": "π",
            "sigma": "σ", "phi": "φ", "omega": "ω", "Omega": "Ω", "Gamma": "Γ", "Delta": "Δ", "Sigma": "Σ"}
_ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303", "=": "\u0304",
            ".": "\u0307", "c": "\u0327", "v": "\u030c", "u": "\u0306", "H": "\u030b", "k": "\u0328", "r": "\u030a",
            "d": "\u0323", "b": "\u0331"}
_ACCENT_RE = re.compile(r"\\([`'^\"~=.])\s*(?:\{\s*\\?([A-Za-z])\s*\}|\\?([A-Za-z]))"
                        r"|\\([cvuHkrdb])(?:\s*\{\s*\\?([A-Za-z])\s*\}|\s+([A-Za-z]))")


def _accent(m: re.Match) -> str:
    mark = m.group(1) or m.group(4)
    letter = m.group(2) or m.group(3) or m.group(5) or m.group(6)
    import unicodedata
    return unicodedata.normalize("NFC", letter + _ACCENTS[mark])


_MATH_DROP_RE = re.compile(r"\\(?:%s)(?![A-Za-z@])" % "|".join(_MATH_DROP))
_MATH_FIX_RE = re.compile(r"\\(%s)(?![A-Za-z@])\s?" % "|".join(sorted(map(re.escape, _MATH_FIX), key=len, reverse=True)))
_MATH_CMD_RE = re.compile(r"\\([A-Za-z]+)")


def _fix(m: re.Match) -> str:
    to = _MATH_FIX[m.group(1)]
    return ("\\" + to if to and to[0].isalpha() else to) + ("" if to and not to[0].isalpha() else " ")


def _clean_math(piece: str) -> str:
    piece = re.sub(r"[ \t]*\n\s*", " ", piece)     # math has no paragraphs; a blank line there is a macro's
    if "\\" not in piece or not set(_MATH_CMD_RE.findall(piece)) - KATEX - {"begin", "end"}:
        return piece                                  # nothing KaTeX lacks: the common case
    piece = replace_command(piece, ["label", "index", "ollabel"], 1, lambda n, a: "")
    piece = replace_command(piece, _TEXT_IN_MATH, 1, lambda n, a: "\\text{" + (a[0] if a else "") + "}")
    piece = replace_command(piece, ["ref", "eqref"], 1, lambda n, a: "\\text{(" + (a[0] if a else "") + ")}")
    piece = _MATH_DROP_RE.sub("", piece)
    return _MATH_FIX_RE.sub(_fix, piece)


def _clean_text(piece: str) -> str:
    piece = replace_command(piece, _SECTIONS, 1, lambda n, a: "\n\n\\textbf{" + (a[0].strip() if a else "") + "}\n\n")
    piece = replace_command(piece, ["footnote"], 1, lambda n, a: " (" + (a[0].strip() if a else "") + ")")
    piece = replace_command(piece, ["url", "nolinkurl"], 1, lambda n, a: a[0] if a else "")
    piece = replace_command(piece, ["cref", "Cref", "autoref", "vref", "Vref", "cpageref"], 1,
                            lambda n, a: "\\ref{" + (a[0] if a else "") + "}")
    piece = replace_command(piece, ["citep", "citet", "citealp", "citeauthor", "citeyear"], 1,
                            lambda n, a: "\\cite{" + (a[0] if a else "") + "}")
    piece = re.sub(r"\\begin\{(?:tabular\*?|array|tabularx|longtable)\}\s*(?:\[[^\]]*\])?\s*(?:\{[^{}]*\})?\s*"
                   r"(?:\{(?:[^{}]|\{[^{}]*\})*\})?", "\n", piece)
    piece = re.sub(r"\\end\{(?:tabular\*?|array|tabularx|longtable)\}", "\n", piece)
    piece = re.sub(r"\\(?:hline|cline\{[^}]*\}|toprule|midrule|bottomrule)", "", piece)
    piece = _ACCENT_RE.sub(_accent, piece)
    piece = re.sub(r"(?<!\\)\\ ", " ", piece)      # a control space ("i.e.\ ", "G.\ L.\ Naber"): a space

    def other(m: re.Match) -> str:
        name = m.group(1)
        if name in PAGE_TEXT:
            return m.group(0)
        if name in _SYMBOLS:
            return _SYMBOLS[name] + (" " if m.group(2) else "")
        return " " if m.group(2) else ""
    piece = re.sub(r"\\([A-Za-z]+)(?![A-Za-z])\*?(\s?)(?!\s*[\[{])", other, piece)
    # a command with arguments: keep their text (\textsc{x} -> x, \underline{x} -> x), innermost first
    for _ in range(4):
        names = {n for n in re.findall(r"\\([A-Za-z]+)", piece) if n not in PAGE_TEXT}
        if not names:
            break
        piece = replace_command(piece, names, 4, lambda n, a: " ".join(a))
    return piece


def _replace_env(tex: str, names: Iterable[str], render) -> str:
    for env in names:
        pat = re.compile(r"\\begin\{%s\}" % re.escape(env))
        end = "\\end{%s}" % env
        while True:
            m = pat.search(tex)
            if not m:
                break
            j = tex.find(end, m.end())
            stop = len(tex) if j < 0 else j + len(end)
            tex = tex[:m.start()] + render(tex[m.end():j if j >= 0 else len(tex)]) + tex[stop:]
    return tex


_TABLES: dict[int, tuple[Macros, Macros]] = {}


def _expandable(macros: Macros) -> Macros:
    """``macros`` less the commands the cleaner or the page handles (one copy per table, kept)."""
    held = _TABLES.get(id(macros))
    if held is None or held[0] is not macros:
        table = {k: v for k, v in macros.items() if k not in _NO_EXPAND}
        table["xspace"] = (0, "")
        if len(_TABLES) > 64:
            _TABLES.clear()
        held = _TABLES[id(macros)] = (macros, table)
    return held[1]


def display_tex(tex: str, macros: Macros | None = None) -> str:
    """``tex`` (a statement as its source writes it) as display LaTeX: see the module docstring."""
    if not tex:
        return ""
    s = strip_comments(repair_text(tex))
    defined, s = definitions_out(s)     # a body's own \newcommand{\K}[0]{K}: expanded, never shown ("[0]{K}")
    if defined:
        macros = {**(macros or {}), **defined}
    s = re.sub(r"\\(begin|end|bibitem)\s+(?=[{\[])", r"\\\1", s)        # \end {proof}: as the page reads it
    s = replace_command(s, _DROP_1, 1, lambda n, a: "")
    s = replace_command(s, ["indexsee"], 2, lambda n, a: "")         # \indexsee{entry}{see}: two arguments
    s = replace_command(s, _LINKS_2, 2, lambda n, a: (a[-1] if n in ("href", "hyperref", "PMlinkescapetext")
                                                      else a[0]) if a else "")
    s = _replace_env(s, _PICTURES, lambda inner: "")
    if macros:
        s = expand_macros(s, _expandable(macros))
        s = replace_command(s, _DROP_1, 1, lambda n, a: "")
        s = replace_command(s, _LINKS_2, 2, lambda n, a: (a[-1] if n in ("href", "hyperref", "PMlinkescapetext")
                                                          else a[0]) if a else "")
    if "\\ensuremath" in s:    # outside math it is math: give it its dollars before the text is cut
        s = "".join(piece if is_math else
                    replace_command(piece, ["ensuremath"], 1, lambda n, a: "$" + (a[0] if a else "") + "$")
                    for is_math, piece in segments(s))
    out = []
    for is_math, piece in segments(s):
        if is_math:
            d = _display(piece)
            inner = _math_inner(d)
            cleaned = _clean_math(inner)
            out.append(d.replace(inner, cleaned, 1) if inner in d else d)
        else:
            out.append(_clean_text(piece))
    s = "".join(out)
    s = re.sub(r"[ \t]*\n[ \t]*", "\n", s)
    s = re.sub(r"\n{3,}", "\n\n", s)
    return s.strip()


# ------------------------------------------------------------------------------------------ measurement

def math_commands(tex: str) -> set[str]:
    """Control words inside the math of ``tex`` that KaTeX does not draw (environment names aside)."""
    found: set[str] = set()
    for is_math, piece in segments(tex):
        if is_math:
            found.update(c for c in re.findall(r"\\([A-Za-z]+)", _math_inner(piece)) if c not in KATEX)
    return found


def text_commands(tex: str) -> set[str]:
    """Control words outside math that the page does not render (they would show as raw text)."""
    found: set[str] = set()
    for is_math, piece in segments(tex):
        if not is_math:
            found.update(c for c in re.findall(r"\\([A-Za-z]+)", piece) if c not in PAGE_TEXT)
    return found


class DisplayAudit:
    """Per source: documents whose display text still holds a command KaTeX cannot draw (inside math) or
    the page does not render (outside math), split into those the corpus defines (``defined``) and others."""

    def __init__(self, source: str, defined: Iterable[str] = ()):
        self.source, self.defined = source, set(defined)
        self.docs = 0
        self.with_defined = 0
        self.with_other = 0
        self.commands: Counter = Counter()

    def add(self, body: str) -> None:
        self.docs += 1
        bad = math_commands(body) | text_commands(body)
        if bad & self.defined:
            self.with_defined += 1
        if bad - self.defined:
            self.with_other += 1
        self.commands.update(bad)

    def checked(self, body: str) -> str:
        """``add(body)``, then ``body`` (for a reader's ``Document(body=audit.checked(...))``)."""
        self.add(body)
        return body

    def line(self) -> str:
        top = ", ".join(f"\\{c} {n}" for c, n in self.commands.most_common(8))
        return (f"[display] {self.source}: {self.with_defined:,} of {self.docs:,} documents hold a macro the corpus "
                f"defines that KaTeX cannot draw; {self.with_other:,} another command KaTeX or the page does not "
                f"draw" + (f" ({top})" if top else ""))

    def report(self, quiet: bool = False) -> None:
        if not quiet:
            print(self.line(), file=sys.stderr, flush=True)


_SETMM_ASCII = re.compile(r"\|-|(?<![\\\w])(?:e\.|->|<->|C_(?![A-Za-z{\\\\])|/\\|\\/|A\.|E\.)(?![\w.])")
_LEAKS = (
    ("\\ollabel", re.compile(r"\\ollabel")),
    ("\\PMlink", re.compile(r"\\PMlink")),
    ("\\index", re.compile(r"\\index")),
    ("{{", re.compile(r"\{\{\s*[A-Za-z]")),
    ("!!", re.compile(r"!!")),
    ("mojibake", _MOJIBAKE),
    ("HTML entity", _ENTITY),
)


def leaks(tex: str, setmm: bool = False) -> list[str]:
    """What of a source's markup shows through a display text as a reader would see it: TeX commands
    outside math that the page does not render, Open Logic / PlanetMath / index markup, wiki templates and
    ``!!`` term macros outside math, mojibake, HTML entities, and (``setmm``) set.mm ASCII formulas given to KaTeX.
    ``[]`` for a clean text (the tests of every reader, and the issue-21 checks, use it)."""
    found: list[str] = []
    text = "".join(piece for is_math, piece in segments(tex) if not is_math)
    if text_commands(tex):
        found.append("TeX outside math: " + " ".join(sorted("\\" + c for c in text_commands(tex))[:5]))
    for name, pattern in _LEAKS:
        where = text if name in ("{{", "!!", "\\index") else tex
        if pattern.search(where):
            found.append(name)
    if setmm and any(is_math and _SETMM_ASCII.search(_math_inner(piece)) for is_math, piece in segments(tex)):
        found.append("set.mm ASCII in math")
    return found


# ------------------------------------------------------------------------------------------ Unicode text

_UNICODE_MATH = {
    "in": "∈", "notin": "∉", "ni": "∋", "subset": "⊂", "subseteq": "⊆", "subsetneq": "⊊", "supset": "⊃",
    "supseteq": "⊇", "cap": "∩", "cup": "∪", "bigcap": "⋂", "bigcup": "⋃", "setminus": "∖", "emptyset": "∅",
    "varnothing": "∅", "infty": "∞", "partial": "∂", "nabla": "∇", "sum": "∑", "prod": "∏", "coprod": "∐",
    "int": "∫", "oint": "∮", "forall": "∀", "exists": "∃", "nexists": "∄", "neg": "¬", "lnot": "¬",
    "wedge": "∧", "land": "∧", "vee": "∨", "lor": "∨", "to": "→", "rightarrow": "→", "longrightarrow": "⟶",
    "leftarrow": "←", "gets": "←", "mapsto": "↦", "Rightarrow": "⇒", "implies": "⟹", "Leftarrow": "⇐",
    "Leftrightarrow": "⇔", "iff": "⟺", "leftrightarrow": "↔", "hookrightarrow": "↪", "twoheadrightarrow": "↠",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈", "equiv": "≡",
    "cong": "≅", "simeq": "≃", "sim": "∼", "propto": "∝", "ll": "≪", "gg": "≫", "times": "×", "cdot": "·",
    "circ": "∘", "ast": "∗", "star": "⋆", "bullet": "•", "pm": "±", "mp": "∓", "div": "÷", "oplus": "⊕",
    "otimes": "⊗", "bigoplus": "⨁", "bigotimes": "⨂", "mid": "∣", "nmid": "∤", "divides": "∣", "parallel": "∥",
    "perp": "⊥", "vdash": "⊢", "models": "⊨", "vDash": "⊨", "top": "⊤", "bot": "⊥", "langle": "⟨",
    "rangle": "⟩", "lvert": "|", "rvert": "|", "vert": "|", "Vert": "‖", "lVert": "‖", "rVert": "‖",
    "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉", "ldots": "…", "cdots": "⋯", "dots": "…",
    "prime": "′", "aleph": "ℵ", "ell": "ℓ", "hbar": "ℏ", "wp": "℘", "Re": "ℜ", "Im": "ℑ", "angle": "∠",
    "triangle": "△", "square": "□", "colon": ":", "lbrace": "{", "rbrace": "}", "{": "{", "}": "}",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "varpi": "ϖ", "rho": "ρ", "varrho": "ϱ", "sigma": "σ", "varsigma": "ς", "tau": "τ",
    "upsilon": "υ", "phi": "ϕ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ",
    "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ",
    "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    # orders, lattices and the rest of KaTeX's relations and operators (issue: "preccurlyeq₁", "R ominus S"
    # were read as words in ProofWiki headings)
    "prec": "≺", "succ": "≻", "preceq": "⪯", "succeq": "⪰", "preccurlyeq": "≼", "succcurlyeq": "≽",
    "precsim": "≾", "succsim": "≿", "precapprox": "⪷", "succapprox": "⪸", "nprec": "⊀", "nsucc": "⊁",
    "npreceq": "⋠", "nsucceq": "⋡", "curlyeqprec": "⋞", "curlyeqsucc": "⋟", "nless": "≮", "ngtr": "≯",
    "nleq": "≰", "ngeq": "≱", "leqslant": "⩽", "geqslant": "⩾", "leqq": "≦", "geqq": "≧", "lneq": "⪇",
    "gneq": "⪈", "lneqq": "≨", "gneqq": "≩", "lesssim": "≲", "gtrsim": "≳", "lessgtr": "≶", "gtrless": "≷",
    "nsubseteq": "⊈", "nsupseteq": "⊉", "subsetneqq": "⫋", "supsetneq": "⊋", "supsetneqq": "⫌",
    "subseteqq": "⫅", "supseteqq": "⫆", "sqsubset": "⊏", "sqsupset": "⊐", "sqsubseteq": "⊑", "sqsupseteq": "⊒",
    "ominus": "⊖", "odot": "⊙", "oslash": "⊘", "bigodot": "⨀", "bigcirc": "◯", "boxtimes": "⊠",
    "boxplus": "⊞", "boxminus": "⊟", "boxdot": "⊡", "circledast": "⊛", "circledcirc": "⊚", "circleddash": "⊝",
    "sqcup": "⊔", "sqcap": "⊓", "bigsqcup": "⨆", "uplus": "⊎", "biguplus": "⨄", "bigvee": "⋁", "bigwedge": "⋀",
    "curlyvee": "⋎", "curlywedge": "⋏", "veebar": "⊻", "barwedge": "⊼", "lhd": "⊲", "rhd": "⊳", "unlhd": "⊴",
    "unrhd": "⊵", "triangleleft": "◃", "triangleright": "▹", "vartriangleleft": "⊲",
    "vartriangleright": "⊳", "trianglelefteq": "⊴", "trianglerighteq": "⊵", "ntriangleleft": "⋪",
    "ntriangleright": "⋫", "ltimes": "⋉", "rtimes": "⋊", "bowtie": "⋈", "Join": "⋈", "wr": "≀", "amalg": "⨿",
    "divideontimes": "⋇", "dagger": "†", "ddagger": "‡", "dag": "†", "ddag": "‡", "complement": "∁",
    "restriction": "↾", "upharpoonright": "↾", "intercal": "⊺", "cdotp": "·", "centerdot": "·",
    "smallsetminus": "∖", "dotsb": "⋯", "dotsm": "⋯", "dotsi": "⋯", "dotsc": "…", "dotso": "…", "ddots": "⋱",
    "vdots": "⋮", "iint": "∬", "iiint": "∭", "uparrow": "↑", "downarrow": "↓", "Uparrow": "⇑",
    "Downarrow": "⇓", "updownarrow": "↕", "Updownarrow": "⇕", "Longleftarrow": "⟸", "Longrightarrow": "⟹",
    "longleftarrow": "⟵", "longleftrightarrow": "⟷", "Longleftrightarrow": "⟺", "longmapsto": "⟼",
    "impliedby": "⟸", "leadsto": "⇝", "rightarrowtail": "↣", "leftarrowtail": "↢", "twoheadleftarrow": "↞",
    "hookleftarrow": "↩", "nrightarrow": "↛", "nleftarrow": "↚", "nRightarrow": "⇏", "nLeftarrow": "⇍",
    "nLeftrightarrow": "⇎", "nleftrightarrow": "↮", "rightleftharpoons": "⇌", "leftrightarrows": "⇆",
    "rightleftarrows": "⇄", "nearrow": "↗", "searrow": "↘", "nwarrow": "↖", "swarrow": "↙",
    "rightharpoonup": "⇀", "leftharpoonup": "↼", "circlearrowleft": "↺", "circlearrowright": "↻",
    "dashv": "⊣", "Vdash": "⊩", "nvdash": "⊬", "nvDash": "⊭", "asymp": "≍", "doteq": "≐", "coloneqq": "≔",
    "triangleq": "≜", "approxeq": "≊", "ncong": "≇", "nsim": "≁", "nparallel": "∦", "therefore": "∴",
    "because": "∵", "mho": "℧", "beth": "ℶ", "gimel": "ℷ", "daleth": "ℸ", "eth": "ð", "hslash": "ℏ",
    "imath": "ı", "jmath": "ȷ", "surd": "√", "flat": "♭", "sharp": "♯", "natural": "♮", "diamond": "⋄",
    "Box": "□", "blacksquare": "■", "lozenge": "◊", "measuredangle": "∡", "sphericalangle": "∢",
    "varpropto": "∝", "multimap": "⊸", "lll": "⋘", "ggg": "⋙", "backprime": "‵", "lbrack": "[", "rbrack": "]",
    "lang": "⟨", "rang": "⟩", "varkappa": "ϰ", "digamma": "ϝ", "Alpha": "Α", "Beta": "Β", "Epsilon": "Ε",
    "Zeta": "Ζ", "Eta": "Η", "Iota": "Ι", "Kappa": "Κ", "Mu": "Μ", "Nu": "Ν", "Omicron": "Ο", "omicron": "ο",
    "Rho": "Ρ", "Tau": "Τ", "Chi": "Χ", "varGamma": "Γ", "varDelta": "Δ", "varTheta": "Θ", "varLambda": "Λ",
    "varXi": "Ξ", "varPi": "Π", "varSigma": "Σ", "varUpsilon": "Υ", "varPhi": "Φ", "varPsi": "Ψ",
    "varOmega": "Ω",
}
# Symbols written with a space on each side: relations, arrows and binary operators.
_SPACED = frozenset("∈∉∋⊂⊆⊊⊃⊇∩∪∖→⟶←↦⇒⟹⇐⇔⟺↔↪↠≤≥≠≈≡≅≃∼∝≪≫×±∓÷⊕⊗∣∤∥⊢⊨∧∨≺≻⪯⪰≼≽≾≿⪷⪸⊀⊁⋠⋡⋞⋟≮≯≰≱⩽⩾≦≧⪇⪈≨≩"
                    "≲≳≶≷⊈⊉⫋⊋⫌⫅⫆⊏⊐⊑⊒⊖⊙⊘⊠⊞⊟⊡⊛⊚⊝⊔⊓⊎⊻⊼⋎⋏⊲⊳⊴⊵◃▹⋪⋫⋉⋊⋈≀⨿⋇↾⊺⟸⟹⟵⟷⟼⇝↣↢↞↩↛↚⇏⇍⇎↮⇌⇆⇄↗↘↖↙⇀↼"
                    "⊣⊩⊬⊭≍≐≔≜≊≇≁∦⊸⋘⋙↑↓⇑⇓↕⇕")
# Commands of one argument that are only its decoration in a line of text (\underbrace{x} -> x); of two,
# the second over or under the first (\stackrel{\text{def}}{=} -> =); dropped with their argument.
_DECORATIONS = {"underbrace", "overbrace", "boxed", "cancel", "bcancel", "xcancel", "pmb", "bm",
                "mathring", "check", "breve", "acute", "grave", "overrightarrow", "overleftarrow", "utilde",
                "mathnormal", "mathbfit", "mathsfit", "Bbb", "mathbbm", "mathds"}
_OVER = {"stackrel", "overset", "underset"}
_DROPPED_ARG = {"color", "tag", "label", "phantom", "hphantom", "vphantom"}
_SWITCHES = {"it", "bf", "rm", "sf", "tt", "cal", "scriptstyle", "scriptscriptstyle", "normalsize", "small",
             "large", "Large", "LARGE", "huge", "Huge", "tiny", "footnotesize", "hline", "nonumber", "notag",
             "allowbreak", "nobreak", "strut", "mathstrut"}
_BLACKBOARD = {"N": "ℕ", "Z": "ℤ", "Q": "ℚ", "R": "ℝ", "C": "ℂ", "P": "ℙ", "F": "𝔽", "H": "ℍ", "A": "𝔸"}
_SUPERSCRIPT = str.maketrans("0123456789+-=()n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿ")
_SUBSCRIPT = str.maketrans("0123456789+-=()", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎")
_MATH_WORDS = {"sin", "cos", "tan", "cot", "sec", "csc", "log", "ln", "exp", "lim", "sup", "inf", "max", "min",
               "det", "dim", "ker", "deg", "gcd", "arg", "sinh", "cosh", "tanh", "arctan", "arcsin", "arccos",
               "liminf", "limsup", "Pr", "hom", "coth", "sech", "csch", "cosec", "lg", "arccot", "arcsec",
               "arccsc", "injlim", "projlim"}


def _script(body: str, table: dict, mark: str) -> str:
    body = body.strip()
    if body and all(c in "0123456789+-=()" or (mark == "^" and c == "n") for c in body):
        return body.translate(table)
    return mark + (body if len(body) == 1 else "(" + body + ")")


# {n \brace k}, {n \brack k}, {n \choose k}, {n \atop k}: Stirling numbers and binomials written infix
_INFIX = re.compile(r"\{([^{}]*)\\(brace|brack|choose|atop)(?![A-Za-z])([^{}]*)\}")


def _infix(m: re.Match) -> str:
    a, b = (x.strip() if len(x.split()) < 2 or m.group(2) == "choose" else f"({x.strip()})"
            for x in (m.group(1), m.group(3)))                # {(n + 1) (m + 1)}: where each part ends
    return {"brace": f"\\{{{a} \\, {b}\\}}", "brack": f"[{a} \\, {b}]", "atop": f"({a} \\, {b})",
            "choose": f"({a} \\text{{ choose }} {b})"}[m.group(2)]


def _attach(out: list[str]) -> None:
    """A script or a prime sits on the symbol, word or character it follows ("log₁₀", "≼₁", "⪯'", "45^∘",
    "S⁺"), where the symbol's own spacing (" ≼ ", "log ") and the source's spaces stood between; after an
    operator or a bracket ("= ^n P_n") the space stays."""
    j = len(out)
    while j and out[j - 1] == " ":
        j -= 1
    if j and (len(out[j - 1]) > 1 and out[j - 1].endswith(" ") or out[j - 1].isalnum()):
        del out[j:]
        out[j - 1] = out[j - 1].rstrip()


def _math_unicode(tex: str) -> str:
    """One formula (no delimiters) as Unicode text: symbols, letters, scripts, fractions, roots."""
    def group(s: str, i: int) -> tuple[str, int]:
        while i < len(s) and s[i] == " ":
            i += 1
        if i < len(s) and s[i] == "{":
            g = _group(s, i)
            if g:
                return g
        if i < len(s) and s[i] == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", s[i:])
            return s[i:i + m.end()], i + m.end()
        return (s[i], i + 1) if i < len(s) else ("", i)

    tex = _INFIX.sub(_infix, tex)
    out: list[str] = []
    i = 0
    while i < len(tex):
        c = tex[i]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
            name, i = m.group(1), i + m.end()
            if name in ("frac", "dfrac", "tfrac", "cfrac"):
                a, i = group(tex, i)
                b, i = group(tex, i)
                a, b = _math_unicode(a).strip(), _math_unicode(b).strip()
                wrap = (lambda x: x if re.fullmatch(r"[\w′]+|\(.*\)", x) else f"({x})")
                out.append(f"{wrap(a)}/{wrap(b)}")
            elif name == "sqrt":
                index = ""
                at = len(tex[i:]) - len(tex[i:].lstrip())   # \sqrt [3] 2: spaces may come before the index
                if tex[i + at:i + at + 1] == "[":
                    j = tex.find("]", i + at)
                    if j > 0:
                        index, i = _math_unicode(tex[i + at + 1:j]).strip(), j + 1
                a, i = group(tex, i)
                a = _math_unicode(a).strip()
                root = ROOTS.get(index) or (f"{index}√" if index else "√")   # ∛2, not √2
                out.append(root + (a if re.fullmatch(r"\w", a) else f"({a})"))
            elif name in ("mathbb", "mathbf", "mathrm", "mathit", "mathsf", "mathcal", "mathfrak", "mathscr",
                          "text", "textrm", "textit", "textbf", "operatorname", "mbox", "boldsymbol", "mathtt",
                          "bar", "overline", "hat", "widehat", "tilde", "widetilde", "vec", "dot", "ddot", "substack",
                          "underline"):
                a, i = group(tex, i)
                inner = _math_unicode(a) if not name.startswith("text") and name != "mbox" else a
                if name == "mathbb" and inner.strip() in _BLACKBOARD:
                    inner = _BLACKBOARD[inner.strip()]
                accent = {"bar": "\u0305", "overline": "\u0305", "hat": "\u0302", "widehat": "\u0302",
                          "tilde": "\u0303", "widetilde": "\u0303", "vec": "\u20d7", "dot": "\u0307",
                          "ddot": "\u0308", "underline": "\u0332"}.get(name)
                out.append(inner + accent if accent and len(inner.strip()) == 1 else inner)
            elif name in ("binom", "dbinom", "tbinom"):
                a, i = group(tex, i)
                b, i = group(tex, i)
                out.append(f"({_math_unicode(a).strip()} choose {_math_unicode(b).strip()})")
            elif name in ("bmod", "mod"):
                out.append(" mod ")
            elif name in ("pmod", "pod"):
                a, i = group(tex, i)
                out.append(f" ({'mod ' if name == 'pmod' else ''}{_math_unicode(a).strip()})")
            elif name == "not":                   # \not = -> ≠, \not \in -> ∉: the symbol struck through
                a, i = group(tex, i)
                sym = _math_unicode(a).strip()
                sym = unicodedata.normalize("NFC", sym + "\u0338") if len(sym) == 1 else "¬" + sym
                out.append(f" {sym} " if sym[:1] in _SPACED or len(sym) > 1 else sym)
            elif name in _DECORATIONS:
                a, i = group(tex, i)
                inner = _math_unicode(a)
                out.append(_BLACKBOARD.get(inner.strip(), inner) if name in ("Bbb", "mathbbm", "mathds") else inner)
            elif name in _OVER:
                _, i = group(tex, i)
                a, i = group(tex, i)
                out.append(_math_unicode(a))
            elif name in _DROPPED_ARG:
                _, i = group(tex, i)
            elif name in _SWITCHES:
                pass
            elif name in _UNICODE_MATH:
                sym = _UNICODE_MATH[name]
                out.append(f" {sym} " if sym in _SPACED else sym)
            elif name in _MATH_WORDS:
                out.append(name + " ")
            elif name in (",", ";", ":", " ", "quad", "qquad", "!", "left", "right", "big", "Big", "bigl", "bigr",
                          "Bigl", "Bigr", "displaystyle", "textstyle", "mathop", "limits", "nolimits", "mathord",
                          "mathbin", "mathrel", "middle"):
                out.append(" " if name in (",", ";", " ", "quad", "qquad") else "")
                if name in ("left", "right", "middle") and tex.startswith(".", i):
                    i += 1                        # \left. : no delimiter
            elif name in ("{", "}", "|", "#", "$", "%", "&", "_"):
                out.append("‖" if name == "|" else name)
            elif name == "\\":
                out.append(", ")                  # a row of \substack or an array
            else:
                out.append(name)
        elif c in "^_":
            a, i = group(tex, i + 1)
            _attach(out)
            out.append(_script(_math_unicode(a), _SUPERSCRIPT if c == "^" else _SUBSCRIPT, c))
        elif c == "'":
            _attach(out)
            out.append(c)
            i += 1
        elif c in "{}":
            i += 1
        elif c == "-":
            out.append("−")
            i += 1
        else:
            out.append(c)
            i += 1
    s = re.sub(r"\s+", " ", "".join(out)).replace("( ", "(").replace(" )", ")").replace(" ,", ",")
    return re.sub(r"([∂∇¬√])\s+(?=\w)", r"\1", s)


def unicode_text(tex: str) -> str:
    """A display text (``display_tex``'s output) as one line of readable Unicode: the words of its
    prose and its formulas written with their symbols (``Then its boundary $\\partial K$ is compact`` ->
    ``Then its boundary ∂K is compact``; ``$U \\cap V = \\varnothing$`` -> ``U ∩ V = ∅``). For headings made
    from a statement (ProofWiki); search reads ``latex_to_text``'s words."""
    out = []
    for is_math, piece in segments(tex or ""):
        if is_math:
            out.append(_math_unicode(_math_inner(piece)).strip())
        else:
            text = re.sub(r"\\(?:emph|textit|textbf|textsl|texttt|text|textrm|mbox|textup)\{([^{}]*)\}", r"\1", piece)
            text = re.sub(r"\{\\(?:em|it|bf|sl)\s+([^{}]*)\}", r"\1", text)
            text = re.sub(r"\\(?:item|noindent|par|medskip|smallskip|bigskip|newline|hfill|quad|qquad)\b", " ", text)
            text = re.sub(r"\\(?:begin|end)\{[^}]*\}|\\(?:ref|eqref|cite|label)\{[^}]*\}|\\\\", " ", text)
            text = text.replace("~", " ").replace("``", "“").replace("''", "”").replace("---", "—").replace("--", "–")
            out.append(re.sub(r"[{}]", "", text))
    return " ".join(re.sub(r"[\u200b-\u200f\u2060\ufeff]", "", "".join(out)).split())
