"""Open Logic Project reader (``shared/corpora/open-logic``).

Statements are the ``thm``, ``prop``, ``lem``, ``cor``, ``defn`` and ``axiom`` environments of the section files
``content/<part>/<chapter>/<section>.tex`` (``ex`` is Example and ``prob`` is Problem: not indexed).

Stable id (DESIGN.md, shared/eval/README.md)::

    openlogic:<path under content/ without .tex>#<\\ollabel value>     e.g. openlogic:computability/computability-theory/complement-ce#thm:ce-comp
    openlogic:<path under content/ without .tex>#<n>                  no \\ollabel: n = 1-based index of the statement
                                                                      among the indexed environments of that file
                                                                      (one in an inactive tagblock counts too)

The label is the first ``\\ollabel{...}`` inside the environment (a few environments only label their ``\\item``s;
the first of those is then the id, which is what a plain "the ``\\ollabel`` inside the environment" resolver gives).
All labels of the environment are kept in ``extra["labels"]`` (space separated). Two upstream files repeat a label
in two environments (``construction-of-model#defn:termmodel``, ``modalities-ccs#prop:diamond``): the first keeps
the label id, the repeat gets its positional ``#<n>`` id.

Open Logic's own markup is rewritten before ``latex_to_text``:

* ``!!{term}``, ``!!{term}s``, ``!!^{term}``, ``!!a{term}``, ``!!^a{term}s`` (localisable terms) and
  ``\\printtoken{P}{term}`` become the words ``\\settexttoken`` gives them in ``open-logic-config.sty``
  (``!!{constant}`` -> "constant symbol");
* ``!A`` (formula metavariable) becomes ``A``;
* selective-inclusion markup (``\\iftag``, ``\\tagitem``, ``tagenumerate``, ``tagblock``) is resolved with the
  ``\\tagtrue``/``\\tagfalse`` defaults of the configuration (a statement inside a ``tagblock`` whose tags are all
  off is not in the default book and is not indexed: the def* blocks); ``\\olref[..]{..}`` cross-references are
  dropped;
* xparse commands (``\\DeclareDocumentCommand``) taking optional arguments or flags are expanded at their call
  sites (``\\lforall[x][!A(x)]`` -> ``\\forall x\\, A(x)``, ``\\eq/[s][t]`` -> ``s \\neq t``); all other macros of
  the project's ``.sty`` files go to ``latex_to_text`` as a ``Macros`` table (``parse_macros`` plus the xparse ones),
  less TeX machinery, self-referential definitions and a few overrides (``\\Complement{A}`` -> "complement of A").

Titles are ``Part > Chapter > Section`` from ``\\olpart``, ``\\olchapter`` and ``\\olsection``. The ``body`` is display
text: the statement after its ``[title]``, prepared as above (tokens as words, tags resolved, ``\\olref`` and
``\\ollabel`` dropped, ``\\indcase`` typeset as the configuration does), then ``display.display_tex`` with the
``.sty`` macros, so KaTeX gets standard TeX.
"""
from __future__ import annotations

import re
from pathlib import Path
from collections.abc import Iterator

from mathlas_build.display import DisplayAudit, _args, display_tex
from mathlas_build.document import Document
from mathlas_build.latex import Macros, latex_to_text, parse_macros
from mathlas_build.sources.texscan import blank_comments, label_tail_words, read_group, read_tex, statement_files, \
    statements

SOURCE = "openlogic"
LICENSE = "CC-BY-4.0"
ATTRIBUTION = ("The Open Logic Project (Richard Zach et al.), https://openlogicproject.org, "
               "github OpenLogicProject/OpenLogic @ 9620cc73, CC BY 4.0")
COMMIT = "9620cc73f9c8e0ad003c514a5d3748f29611c4c0"
LINK = "https://github.com/OpenLogicProject/OpenLogic/blob/" + COMMIT + "/content/{path}#L{line}"

KINDS = {"thm": "theorem", "prop": "proposition", "lem": "lemma", "cor": "corollary",
         "defn": "definition", "axiom": "axiom"}
_ENV_RE = re.compile(r"\\begin\{(" + "|".join(KINDS) + r")\}")
_LABEL_RE = re.compile(r"\\ollabel\s*\{([^{}]*)\}")
_OLREF_RE = re.compile(r"\\(?:olref|olimport|olfileid)\*?(?:\s*\[[^\]]*\])*\s*\{[^{}]*\}")
_EMPH_RE = re.compile(r"\\(?:emph|textbf|textit|defemph)\s*\{((?:[^{}]|\{[^{}]*\})*)\}")

# Sty files whose macros are typesetting machinery (pictures, proof trees), not mathematical notation.
_SKIP_STY = {"ptolemaicastronomy.sty", "open-logic-debug.sty", "open-logic-defer.sty"}
# Macro bodies with these are TeX programming, not notation: leave such macros to latex_to_text's defaults.
_PROGRAMMING = re.compile(r"\\(?:csname|expandafter|Package(?:Info|Warning|Error)|gdef|edef|xdef|setlength|"
                          r"ifdefined|ifcsname|def\b|let\b|@|newcommand|renewcommand|begin\{tikzpicture|"
                          r"includegraphics|selectfont|color\b|IfNoValue|IfValue|IfBoolean|global\b|"
                          r"DeclareDocument|NewDocument|hbox|prepUnary)")
_PROGRAMMING_CORE = re.compile(r"\\(?:csname|expandafter|Package(?:Info|Warning|Error)|gdef|edef|xdef|setlength|"
                               r"ifdefined|ifcsname|def\b|let\b|@|global\b|DeclareDocument|NewDocument|hbox)")
# Notation whose definition loses the meaning (or is TeX machinery): replaced after loading the .sty files.
OVERRIDES: Macros = {
    "Complement": (1, "\\text{complement of } #1"),    # \overline{#1}: keep the word
    "applytofirst": (2, "#1{#2}"),                      # \def\applytofirst#1#2{{\expandafter#1#2}}
    "Gn": (1, "\\ulcorner #1 \\urcorner"),             # Goedel number, typeset with \reflectbox'ed #
    "sFmla": (2, "#1 #2"),                              # signed formula, typeset with \hbox
    "mathsfit": (1, "#1"),                              # sans-serif italic font (\Obj)
    "mathexclaim": (0, "!"),                            # \lexists! (unique existence), \fact
    "pto": (0, "\\rightharpoonup"),                      # partial function arrow built with \ooalign
}
# Structural commands the .sty files redefine for their own bookkeeping; latex_to_text knows them better.
_KEEP_BUILTIN = {"item", "tagitem", "label", "ref", "olref"}


# ---------------------------------------------------------------- small LaTeX scanning helpers

# ---------------------------------------------------------------- Open Logic tokens and macros

def parse_tokens(config_tex: str) -> dict[str, dict[str, str]]:
    """``\\settexttoken{token}*{singular}{plural}[Singular][Plural]`` -> {token: {s, p, S, P, a, A}}."""
    tokens: dict[str, dict[str, str]] = {}
    tex = blank_comments(config_tex)
    for m in re.finditer(r"\\settexttoken\s*", tex):
        i = m.end()
        g = read_group(tex, i)
        if not g:
            continue
        name, i = g
        star = False
        j = i
        while j < len(tex) and tex[j] in " \t":
            j += 1
        if j < len(tex) and tex[j] == "*":
            star, i = True, j + 1
        sg = read_group(tex, i)
        if not sg:
            continue
        sing, i = sg
        pl = read_group(tex, i)
        plural, i = pl if pl else (sing + "s", i)
        up = read_group(tex, i, "[", "]", allow_newline=False)
        using, i = up if up else (sing[:1].upper() + sing[1:], i)
        upl = read_group(tex, i, "[", "]", allow_newline=False)
        uplural = upl[0] if upl else plural[:1].upper() + plural[1:]
        tokens[name.strip()] = {"s": sing, "p": plural, "S": using, "P": uplural,
                                "a": "an" if star else "a", "A": "An" if star else "A"}
    return tokens


_TOKEN_RE = re.compile(r"!!(\^)?(a)?\{([^{}]*)\}(s)?")


def expand_tokens(tex: str, tokens: dict[str, dict[str, str]]) -> str:
    """Rewrite ``!!{term}``-style tokens to words, then ``!A`` metavariables to ``A``."""
    def token(m: re.Match) -> str:
        upper, article, name, plural = m.group(1), m.group(2), m.group(3).strip(), m.group(4)
        t = tokens.get(name)
        if t is None and name.endswith("s") and name[:-1] in tokens:   # typo form !!{sentences}
            t, plural = tokens[name[:-1]], "s"
        if t is None:
            t = {"s": name, "p": name + "s", "S": name[:1].upper() + name[1:],
                 "P": name[:1].upper() + name[1:] + "s", "a": "a", "A": "A"}
        if article:
            art = t["A"] if upper else t["a"]
            return art + " " + (t["p"] if plural else t["s"])
        if upper:
            return t["P"] if plural else t["S"]
        return t["p"] if plural else t["s"]

    tex = _TOKEN_RE.sub(token, tex)

    def printed(m: re.Match) -> str:          # \printtoken{P}{formula}, \usetoken{s}{sentence}
        form, name = m.group(1).strip(), m.group(2).strip()
        t = tokens.get(name)
        if t is None:
            return name
        return t.get(form, t["s"])

    tex = re.sub(r"\\(?:printtoken|usetoken)\s*\{([^{}]*)\}\s*\{([^{}]*)\}", printed, tex)
    tex = re.sub(r"\\(article|Article)\s*\{([^{}]*)\}",
                 lambda m: tokens.get(m.group(2).strip(), {}).get("a" if m.group(1) == "article" else "A",
                                                                 "a" if m.group(1) == "article" else "A"), tex)
    # a control word keeps its name apart: \lnot!A -> \lnot A (not the undefined \lnotA)
    return _METAVAR_RE.sub(lambda m: (m.group(1) + " " if m.group(1) else "") + (m.group(2) or m.group(3)), tex)


_METAVAR_RE = re.compile(r"(\\[A-Za-z@]+)?!(?:\{([A-Z])\}|([A-Z]))")


def parse_tags(tex: str) -> dict[str, bool]:
    """``\\tagtrue{a,b}`` / ``\\tagfalse{c}`` -> {a: True, nota: False, b: True, ..., c: False, notc: True}."""
    tags: dict[str, bool] = {}
    for m in re.finditer(r"^\s*\\tag(true|false)\s*\{([^{}]*)\}", blank_comments(tex), re.M):
        value = m.group(1) == "true"
        for tag in m.group(2).split(","):
            tag = tag.strip()
            if tag:
                tags[tag], tags["not" + tag] = value, not value
    return tags


def apply_tags(tex: str, tags: dict[str, bool]) -> str:
    """Resolve Open Logic's selective-inclusion commands the way the default configuration typesets them:
    ``\\iftag{tags}{tagged}{untagged}``, ``\\tagitem{tags}{tagged}{untagged}``, ``tagenumerate``, ``tagblock``."""
    def active(spec: str) -> bool:
        return any(tags.get(t.strip(), False) for t in spec.split(","))

    out, i = [], 0
    while True:
        m = _TAG_CMD_RE.search(tex, i)
        if not m:
            out.append(tex[i:])
            break
        out.append(tex[i:m.start()])
        if m.group(3) is not None:                       # \begin{tagblock}{tags} ... \end{tagblock}
            end = tex.find("\\end{tagblock}", m.end())
            end = len(tex) if end < 0 else end
            if active(m.group(3)):
                out.append(apply_tags(tex[m.end():end], tags))
            i = min(len(tex), end + len("\\end{tagblock}"))
            continue
        first = read_group(tex, m.end())
        if not first:
            out.append(m.group(0))
            i = m.end()
            continue
        second = read_group(tex, first[1])
        chosen = first[0] if active(m.group(2)) else (second[0] if second else "")
        if m.group(1) == "tagitem" and chosen.strip():
            chosen = "\\item " + chosen
        out.append(apply_tags(chosen, tags))
        i = second[1] if second else first[1]
    return _TAGENUM_RE.sub(lambda m: "\\%s{enumerate}" % m.group(1), "".join(out))


def inactive_spans(tex: str, tags: dict[str, bool]) -> list[tuple[int, int]]:
    """(start, end) offsets of the ``tagblock`` environments of ``tex`` whose tags are all off: the default build
    typesets none of them (open-logic-selective.sty makes an inactive tagblock a ``comment``)."""
    tex = blank_comments(tex)
    spans = []
    for m in re.finditer(r"\\begin\{tagblock\}\s*\{([^{}]*)\}", tex):
        if not any(tags.get(t.strip(), False) for t in m.group(1).split(",")):
            end = tex.find("\\end{tagblock}", m.end())
            spans.append((m.start(), len(tex) if end < 0 else end))
    return spans


_TAG_CMD_RE = re.compile(r"\\(iftag|tagitem)\s*\{([^{}]*)\}|\\begin\{tagblock\}\s*\{([^{}]*)\}")
_TAGENUM_RE = re.compile(r"\\(begin|end)\{tagenumerate\}(\s*\{[^{}]*\})?")


# ---------------------------------------------------------------- xparse (\DeclareDocumentCommand) macros

# One argument of an xparse spec: kind is "m" (mandatory), "o" (optional, delimited by open/close), "s" (a flag
# char, "*" for s), "O" (optional with default), "r" (required delimited).
_Arg = tuple  # (kind, open, close, default)


def parse_xparse_spec(spec: str) -> list[_Arg]:
    """``t{!} o m O{x} d()`` -> [("s", "!", "", None), ("o", "[", "]", None), ("m", ...), ...]."""
    args: list[_Arg] = []
    i = 0
    while i < len(spec):
        c = spec[i]
        if c in " \t\n!+>=":
            i += 1
            continue
        if c in "mv":
            args.append(("m", "{", "}", None))
            i += 1
        elif c == "o":
            args.append(("o", "[", "]", None))
            i += 1
        elif c == "O":
            g = read_group(spec, i + 1)
            args.append(("O", "[", "]", g[0] if g else ""))
            i = g[1] if g else i + 1
        elif c == "s":
            args.append(("s", "*", "", None))
            i += 1
        elif c == "t":
            if spec[i + 1:i + 2] == "{":
                g = read_group(spec, i + 1)
                args.append(("s", g[0] if g else "", "", None))
                i = g[1] if g else i + 2
            else:
                args.append(("s", spec[i + 1:i + 2], "", None))
                i += 2
        elif c in "dDrR":
            open_, close = spec[i + 1:i + 2], spec[i + 2:i + 3]
            i += 3
            default = None
            if c in "DR":
                g = read_group(spec, i)
                default = g[0] if g else ""
                i = g[1] if g else i
            args.append(("m" if c in "rR" else ("O" if c == "D" else "o"), open_, close, default))
        else:
            i += 1
    return args


_COND_RE = re.compile(r"\\(IfNoValueTF|IfValueTF|IfBooleanTF|IfNoValueT|IfNoValueF|IfValueT|IfValueF|"
                      r"IfBooleanT|IfBooleanF)\s*")


def instantiate(args: list[_Arg], body: str, values: list) -> str:
    """The body with its conditionals decided and ``#k`` replaced: ``values[k-1]`` is the argument's text,
    None when an optional argument is absent, True/False for a flag."""
    def present(k: int) -> bool:
        v = values[k - 1] if 0 < k <= len(values) else None
        return bool(v) if isinstance(v, bool) else v is not None

    def resolve(text: str) -> str:
        out, k = [], 0
        while True:
            m = _COND_RE.search(text, k)
            if not m:
                out.append(text[k:])
                return "".join(out)
            out.append(text[k:m.start()])
            name, j = m.group(1), m.end()
            g = read_group(text, j)
            if g is None:
                gm = re.match(r"\s*#(\d)", text[j:])
                if not gm:
                    out.append(m.group(0))
                    k = m.end()
                    continue
                g = (gm.group(0), j + gm.end())
            am = re.search(r"#(\d)", g[0])
            on = present(int(am.group(1))) if am else False
            j = g[1]
            branches = []
            for _ in range(2 if name.endswith("TF") else 1):
                b = read_group(text, j)
                if b is None:      # bare-token branch: \IfBooleanTF {#1} \mathexclaim \relax
                    bm = re.match(r"\s*(\\[A-Za-z@]+|[^\s])", text[j:])
                    b = (bm.group(1), j + bm.end()) if bm else ("", j)
                branches.append(b[0])
                j = b[1]
            if name.startswith("IfNoValue"):
                on = not on
            if name.endswith("TF"):
                chosen = branches[0] if on else branches[1]
            elif name.endswith("T"):
                chosen = branches[0] if on else ""
            else:
                chosen = "" if on else branches[0]
            out.append(resolve(chosen))
            k = j

    def arg(m: re.Match) -> str:
        k = int(m.group(1))
        if not 0 < k <= len(values):
            return ""
        v = values[k - 1]
        if isinstance(v, bool) or v is None:
            return args[k - 1][3] or "" if args[k - 1][0] == "O" and v is None else ""
        return v

    text = re.sub(r"#(\d)", arg, resolve(body))
    return text.replace("\\relax", " ").replace("\\ensuremath", "")


def parse_xparse_defs(tex: str) -> dict[str, tuple[list[_Arg], str]]:
    """``\\DeclareDocumentMacro \\X {body}`` and ``\\(Declare|New|Renew|Provide)DocumentCommand \\X {spec} {body}``
    -> {name: (argument spec, body)}."""
    tex = blank_comments(tex)
    defs: dict[str, tuple[list[_Arg], str]] = {}
    for m in re.finditer(r"\\(DeclareDocumentMacro|DeclareDocumentCommand|NewDocumentCommand|"
                         r"RenewDocumentCommand|ProvideDocumentCommand)\s*(?:\{\s*\\([A-Za-z@]+)\s*\}|\\([A-Za-z@]+))",
                         tex):
        name = m.group(2) or m.group(3)
        i = m.end()
        if m.group(1) == "DeclareDocumentMacro":
            g = read_group(tex, i)
            if g:
                defs[name] = ([], g[0])
            continue
        spec = read_group(tex, i)
        body = read_group(tex, spec[1]) if spec else None
        if spec and body:
            defs[name] = (parse_xparse_spec(spec[0]), body[0])
    return defs


def parse_xparse_macros(tex: str) -> Macros:
    """The xparse definitions of ``tex`` as plain Macros (optional arguments taken as absent)."""
    out: Macros = {}
    for name, (args, body) in parse_xparse_defs(tex).items():
        values: list = []
        n = 0
        for kind, *_ in args:
            if kind == "m":
                n += 1
                values.append("#%d" % n)
            else:
                values.append(None if kind in "oO" else False)
        out[name] = (n, instantiate(args, body, values).strip())
    return out


class XParse:
    """Expands, in statement text, the calls of xparse commands that take optional arguments or flags
    (``\\lforall[x][!A(x)]`` -> ``\\forall x\\, A(x)``, ``\\eq/[s][t]`` -> ``s \\neq t``), which a plain
    Macros table cannot express; everything else is left to ``latex_to_text``."""

    def __init__(self, defs: dict[str, tuple[list[_Arg], str]]):
        eager = {n for n, (args, body) in defs.items()
                 if any(a[0] != "m" for a in args) and not _PROGRAMMING_CORE.search(body)}
        changed = True
        while changed:         # 0-argument macros whose body calls one of them: \aeq -> \equal [\alpha]
            changed = False
            for n, (args, body) in defs.items():
                if n not in eager and not args and any(re.search(r"\\%s(?![A-Za-z@])" % re.escape(e), body)
                                                       for e in eager):
                    eager.add(n)
                    changed = True
        self.defs = {n: defs[n] for n in eager}
        self.re = re.compile(r"\\(%s)(?![A-Za-z@])" % "|".join(sorted(map(re.escape, eager), key=len, reverse=True))
                             ) if eager else None

    def _call(self, tex: str, i: int, args: list[_Arg]) -> tuple[list, int]:
        values: list = []
        for kind, open_, close, _default in args:
            j = i
            while j < len(tex) and tex[j] in " \t":
                j += 1
            if kind == "s":
                if open_ and tex.startswith(open_, j):
                    values.append(True)
                    i = j + len(open_)
                else:
                    values.append(False)
            elif kind in "oO":
                g = read_group(tex, j, open_, close, skip_ws=False) if tex[j:j + 1] == open_ else None
                values.append(g[0] if g else None)
                i = g[1] if g else i
            else:
                g = read_group(tex, j) if tex[j:j + 1] == "{" else None
                if g:
                    values.append(g[0])
                    i = g[1]
                else:
                    while j < len(tex) and tex[j] in " \t\n":
                        j += 1
                    tm = re.match(r"\\[A-Za-z@]+|\\.|.", tex[j:], re.S)
                    values.append(tm.group(0) if tm else "")
                    i = j + (tm.end() if tm else 0)
        return values, i

    def expand(self, tex: str, depth: int = 0) -> str:
        if self.re is None or depth > 8:
            return tex
        out, i = [], 0
        while True:
            m = self.re.search(tex, i)
            if not m:
                out.append(tex[i:])
                break
            out.append(tex[i:m.start()])
            args, body = self.defs[m.group(1)]
            values, i = self._call(tex, m.end(), args)
            values = [self.expand(v, depth + 1) if isinstance(v, str) else v for v in values]
            out.append(" " + self.expand(instantiate(args, body, values), depth + 1) + " ")
        return "".join(out)


_TEXT_RE = re.compile(r"\\(?:text|mbox|hbox|textrm|textup|textnormal)\s*\{")
_DOLLARS_RE = re.compile(r"(?<!\\)\$((?:\\\$|[^$])+?)\$")


def text_math(tex: str) -> str:
    """``$x$`` inside ``\\text{...}`` written ``\\(x\\)``: KaTeX reads both, but the page cuts math at the next
    dollar, so ``$\\{x : \\text{$17$ is in the range of $\\cfind{x}$}\\}$`` fell apart into pieces of math and
    text (and ``\\varphi_{x}``, left in a text piece, lost its command)."""
    out, i = [], 0
    for m in _TEXT_RE.finditer(tex):
        g = read_group(tex, m.end() - 1, skip_ws=False) if m.start() >= i else None
        if g is None or "$" not in g[0]:
            continue
        out.append(tex[i:m.end()] + _DOLLARS_RE.sub(lambda d: "\\(" + d.group(1) + "\\)", g[0]) + "}")
        i = g[1]
    out.append(tex[i:])
    return "".join(out)


_INDCASE = re.compile(r"\\indcase(?![A-Za-z@])\s*(\*)?\s*(!)?")


def indcases(tex: str) -> str:
    """``\\indcase{A}{B \\land C}{text}`` (an xparse command with ``\\DeclareDocumentMacro`` inside, which no
    table expresses) as the config typesets it: ``$A \\ident B \\land C$: text``, with ``\\indfrm`` (A) and
    ``\\indcomplex`` (B \\land C) replaced in the text; the starred (atomic) case ``$A$ is atomic: text``."""
    out, i = [], 0
    while True:
        m = _INDCASE.search(tex, i)
        if not m:
            out.append(tex[i:])
            return "".join(out)
        out.append(tex[i:m.start()])
        args, i = _args(tex, m.end(), 3, optional=False)
        args += [""] * (3 - len(args))
        frm, complex_, text = args
        text = "exercise." if m.group(2) else text
        text = re.sub(r"\\indfrmp?(?![A-Za-z@])", lambda _: " " + frm + " ", text)
        text = re.sub(r"\\indcomplex(?![A-Za-z@])", lambda _: " " + complex_ + " ", text)
        head = f"${frm}$ is atomic: " if m.group(1) else f"${frm} \\ident {complex_}$: "
        out.append(head + text)


class Config:
    """What the project's ``.sty`` files define: macros, localisable tokens, selective-inclusion tags and the
    xparse commands with optional arguments; ``text(tex)`` turns Open Logic LaTeX into words with all of them."""

    def __init__(self, macros: Macros, tokens: dict[str, dict[str, str]], tags: dict[str, bool], xparse: XParse):
        self.macros, self.tokens, self.tags, self.xparse = macros, tokens, tags, xparse

    def prepare(self, tex: str) -> str:
        """Open Logic LaTeX with tags resolved, tokens and optional-argument commands expanded,
        cross-references (``\\olref[fol][com][cpd]{prop:x}``) dropped."""
        tex = _OLREF_RE.sub(" ", apply_tags(tex, self.tags))
        return self.xparse.expand(expand_tokens(tex, self.tokens))

    def text(self, tex: str) -> str:
        return latex_to_text(self.prepare(tex), self.macros).strip()


def load_config(root: Path) -> Config:
    """Read ``sty/*.sty`` and the top-level ``open-logic-*.sty`` of an Open Logic checkout."""
    files = sorted(root.glob("open-logic-*.sty")) + sorted((root / "sty").glob("*.sty"))
    macros: Macros = {}
    tokens: dict[str, dict[str, str]] = {}
    tags: dict[str, bool] = {}
    defs: dict[str, tuple[list, str]] = {}
    for f in files:
        if f.name in _SKIP_STY:
            continue
        tex = read_tex(f)
        parsed = {**parse_macros(tex), **parse_xparse_macros(tex)}
        for name, (nargs, body) in parsed.items():
            if _PROGRAMMING.search(body) or "@" in name:
                continue
            macros[name] = (nargs, body)
        defs.update(parse_xparse_defs(tex))
        tokens.update(parse_tokens(tex))
        tags.update(parse_tags(tex))
    # Greek formula letters are written !A; \formula is the lookup machinery behind them.
    macros.pop("formula", None)
    for name in _KEEP_BUILTIN:
        macros.pop(name, None)
        defs.pop(name, None)
    macros.update(OVERRIDES)
    for name in OVERRIDES:
        defs.pop(name, None)
    return Config(_drop_cycles(macros), tokens, tags, XParse(defs))


def load_macros(root: Path) -> tuple[Macros, dict[str, dict[str, str]], dict[str, bool]]:
    """(macros, tokens, tags) of ``load_config``."""
    cfg = load_config(root)
    return cfg.macros, cfg.tokens, cfg.tags


def _drop_cycles(macros: Macros) -> Macros:
    """Remove macros that (through other macros) expand to themselves, e.g. ``\\item`` -> ``\\item``."""
    refs = {name: {r for r in re.findall(r"\\([A-Za-z]+)", body) if r in macros}
            for name, (_n, body) in macros.items()}
    cyclic: set[str] = set()
    for start in macros:
        stack, seen = list(refs[start]), set()
        while stack:
            cur = stack.pop()
            if cur == start:
                cyclic.add(start)
                break
            if cur not in seen:
                seen.add(cur)
                stack.extend(refs.get(cur, ()))
    return {k: v for k, v in macros.items() if k not in cyclic}


# ---------------------------------------------------------------- titles

def _path_words(stem: str) -> str:
    return re.sub(r"[-_]+", " ", stem).strip().capitalize()


class _Titles:
    """Part / chapter titles from ``\\olpart`` / ``\\olchapter`` in ``<part>/<part>.tex`` and
    ``<part>/<chapter>/<chapter>.tex``, falling back to the folder names."""

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self._cache: dict[Path, str] = {}

    def of(self, folder: Path, command: str) -> str:
        if folder in self._cache:
            return self._cache[folder]
        title = ""
        f = folder / (folder.name + ".tex")
        if f.is_file():
            tex = blank_comments(read_tex(f))
            m = re.search(r"\\" + command + r"\b", tex)
            if m:
                # \olpart{id}{Title}, \olchapter{part id}{chapter id}{Title}: the title is the last group
                groups, i = [], m.end()
                opt = read_group(tex, i, "[", "]")
                if opt:
                    i = opt[1]
                while len(groups) < (2 if command == "olpart" else 3):
                    g = read_group(tex, i)
                    if not g:
                        break
                    groups.append(g[0])
                    i = g[1]
                if groups:
                    title = self.cfg.text(groups[-1])
        self._cache[folder] = title or _path_words(folder.name)
        return self._cache[folder]


def _section_title(tex: str, cfg: Config) -> str:
    m = re.search(r"\\(?:olsection|section)\*?\s*(?:\[[^\]]*\])?\s*\{", tex)
    if not m:
        return ""
    g = read_group(tex, m.end() - 1)
    return cfg.text(g[0]) if g else ""


# ---------------------------------------------------------------- reader

def read(root: Path, **options) -> Iterator[Document]:
    """Yield one Document per statement environment of ``root/content/**/*.tex`` (sorted by path)."""
    root = Path(root)
    content = root / "content"
    if not content.is_dir():
        raise FileNotFoundError(f"Open Logic content folder not found: {content}")
    cfg = load_config(root)
    titles = _Titles(cfg)
    audit = DisplayAudit(SOURCE, cfg.macros)
    for rel, tex in statement_files(content, _ENV_RE):
        parts = rel.with_suffix("").parts
        crumbs = []
        if len(parts) >= 2:
            crumbs.append(titles.of(content / parts[0], "olpart"))
        if len(parts) >= 3:
            crumbs.append(titles.of(content / parts[0] / parts[1], "olchapter"))
        section = _section_title(tex, cfg) or _path_words(parts[-1])
        if not crumbs or crumbs[-1] != section:
            crumbs.append(section)
        title = " > ".join(c for c in crumbs if c)
        path_id = "/".join(parts)
        seen: set[str] = set()
        dropped = inactive_spans(tex, cfg.tags)
        for st in statements(tex, _ENV_RE, _LABEL_RE, nested=True):
            if any(a <= st.start < b for a, b in dropped):   # not in the book; later #n ids stay as they were
                continue
            labels = st.labels
            label = labels[0].strip() if labels else ""
            if label and label not in seen:
                doc_id = f"{SOURCE}:{path_id}#{label}"
            else:   # unlabelled, or a label repeated in the same file (2 upstream cases): positional id
                doc_id = f"{SOURCE}:{path_id}#{st.n}"
            seen.add(label)
            prepared = cfg.prepare(_LABEL_RE.sub(" ", st.inner))
            statement = latex_to_text(prepared, cfg.macros)
            keywords: list[str] = []
            for em in _EMPH_RE.finditer(prepared):
                w = latex_to_text(em.group(1), cfg.macros).strip()
                if w and w not in keywords and len(w) < 80:
                    keywords.append(w)
            if st.heading:
                name = cfg.text(st.heading)
            elif label:
                name = label_tail_words(label)
            elif st.env == "defn" and keywords:
                name = keywords[0]
            else:
                name = ""
            extra: dict = {"env": st.env, "n": st.n}
            if label:
                extra["label"] = label
            if len(labels) > 1:
                extra["labels"] = " ".join(x.strip() for x in labels)
            yield Document(
                id=doc_id, source=SOURCE, kind=KINDS[st.env], name=name, title=title,
                body=audit.checked(display_tex(text_math(cfg.prepare(indcases(_LABEL_RE.sub(" ", st.inner)))),
                                               cfg.macros)),
                statement=statement,
                link=LINK.format(path=rel.as_posix(), line=st.line), license=LICENSE,
                keywords=keywords, file=f"content/{rel.as_posix()}", line=st.line, extra=extra,
            )
    audit.report()
