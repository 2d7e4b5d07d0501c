"""Open Logic Project reader (``shared/corpora/open-logic``).

Statements are the ``thm``, ``prop``, ``lem``, ``cor``, ``defn`` and ``axiom`` environments of the section files
``content/<part>/<chapter>/<section>.tex`` (``ex`` is Example and ``prob`` is Problem: not indexed).

Stable id (DESIGN.md, shared/eval/README.md)::

    openlogic:<path under content/ without .tex>#<\\ollabel value>     e.g. openlogic:computability/computability-theory/complement-ce#thm:ce-comp
    openlogic:<path under content/ without .tex>#<n>                  no \\ollabel: n = 1-based index of the statement
                                                                      among the indexed environments of that file

The label is the first ``\\ollabel{...}`` inside the environment (a few environments only label their ``\\item``s;
the first of those is then the id, which is what a plain "the ``\\ollabel`` inside the environment" resolver gives).
All labels of the environment are kept in ``extra["labels"]`` (space separated).

Open Logic's own tokens are rewritten before ``latex_to_text``:

* ``!!{term}``, ``!!{term}s``, ``!!^{term}``, ``!!a{term}``, ``!!^a{term}s`` (localisable terms) become the words
  ``\\settexttoken`` gives them in ``open-logic-config.sty`` (``!!{constant}`` -> "constant symbol");
* ``!A`` (formula metavariable) becomes ``A``;
* the xparse macros of the project's ``.sty`` files (``\\DeclareDocumentMacro``, ``\\DeclareDocumentCommand``) are
  turned into plain ``Macros`` entries (optional arguments dropped), merged with ``parse_macros`` of the same files.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

from mathlas_build.document import Document
from mathlas_build.latex import Macros, latex_to_text, parse_macros

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
_EMPH_RE = re.compile(r"\\(?:emph|textbf|textit|defemph)\s*\{((?:[^{}]|\{[^{}]*\})*)\}")

# Sty files whose macros are typesetting machinery (pictures, proof trees), not mathematical notation.
_SKIP_STY = {"ptolemaicastronomy.sty", "open-logic-debug.sty", "open-logic-defer.sty"}
# Macro bodies with these are TeX programming, not notation: leave such macros to latex_to_text's defaults.
_PROGRAMMING = re.compile(r"\\(?:csname|expandafter|Package(?:Info|Warning|Error)|gdef|edef|xdef|setlength|"
                          r"ifdefined|ifcsname|def\b|let\b|@|newcommand|renewcommand|begin\{tikzpicture|"
                          r"includegraphics|selectfont|color\b|IfNoValue|IfValue|IfBoolean)")


# ---------------------------------------------------------------- small LaTeX scanning helpers

def strip_comments(tex: str) -> str:
    """Blank out ``%`` comments (not ``\\%``) with spaces, so offsets and line numbers stay right."""
    return re.sub(r"(?<!\\)((?:\\\\)*)(%[^\n]*)", lambda m: m.group(1) + " " * len(m.group(2)), tex)


def read_group(tex: str, i: int, open_: str = "{", close: str = "}", skip_ws: bool = True,
               allow_newline: bool = True) -> tuple[str, int] | None:
    """The balanced ``open_ ... close`` group starting at ``tex[i]`` (after optional whitespace):
    (content, index after the group), or None when there is none.  Braces inside ``[...]`` are balanced too."""
    j = i
    if skip_ws:
        while j < len(tex) and tex[j] in " \t\r\n":
            j += 1
        if not allow_newline and tex[i:j].count("\n") > 1:  # a blank line ends the search (\par)
            return None
    if j >= len(tex) or tex[j] != open_:
        return None
    depth = 0
    brace = 0
    k = j
    while k < len(tex):
        c = tex[k]
        if c == "\\":
            k += 2
            continue
        if c == "{" and open_ != "{":
            brace += 1
        elif c == "}" and open_ != "{":
            brace -= 1
        elif c == open_ and brace == 0:
            depth += 1
        elif c == close and brace == 0:
            depth -= 1
            if depth == 0:
                return tex[j + 1:k], k + 1
        k += 1
    return None


def label_words(label: str) -> str:
    """``thm:ce-comp`` -> ``ce comp``: the label without its kind prefix, separators as spaces."""
    words = label.split(":", 1)[1] if ":" in label else label
    return re.sub(r"[-_:.]+", " ", words).strip()


def find_env_end(tex: str, env: str, start: int) -> int:
    """Index of the ``\\end{env}`` closing the environment whose body starts at ``start`` (-1 if none)."""
    begin, end = "\\begin{%s}" % env, "\\end{%s}" % env
    depth, i = 1, start
    while True:
        e = tex.find(end, i)
        if e < 0:
            return -1
        b = tex.find(begin, i)
        if 0 <= b < e:
            depth += 1
            i = b + len(begin)
            continue
        depth -= 1
        if depth == 0:
            return e
        i = e + len(end)


# ---------------------------------------------------------------- Open Logic tokens and macros

def parse_tokens(config_tex: str) -> dict[str, dict[str, str]]:
    """``\\settexttoken{token}*{singular}{plural}[Singular][Plural]`` -> {token: {s, p, S, P, a, A}}."""
    tokens: dict[str, dict[str, str]] = {}
    tex = strip_comments(config_tex)
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
    tex = re.sub(r"!\{([A-Z])\}", r"\1", tex)
    return re.sub(r"!([A-Z])", r"\1", tex)


def _xparse_body(spec: str, body: str) -> tuple[int, str]:
    """Turn an xparse argument spec and body into (number of mandatory args, body using #1..#n only).
    Optional/boolean arguments are taken as absent: ``\\IfNoValueTF{#k}{A}{B}`` -> A, ``\\IfBooleanTF`` -> false."""
    kinds: list[tuple[str, str | None]] = []
    i = 0
    spec = spec.strip()
    while i < len(spec):
        c = spec[i]
        if c in " \t\n!+":
            i += 1
            continue
        if c in "mo sv":
            kinds.append((c, None))
            i += 1
        elif c in "O":                      # O{default}
            g = read_group(spec, i + 1)
            kinds.append(("O", g[0] if g else ""))
            i = g[1] if g else i + 1
        elif c in "t":                      # t<char>
            kinds.append(("s", None))
            i += 2
            if i - 1 < len(spec) and spec[i - 1] == "{":
                g = read_group(spec, i - 1)
                i = g[1] if g else i
        elif c in "dD":                     # d<open><close>, D<open><close>{default}
            kinds.append(("o", None))
            i += 3
            if c == "D":
                g = read_group(spec, i)
                i = g[1] if g else i
        elif c in "rR":                     # required delimited: count as mandatory
            kinds.append(("m", None))
            i += 3
            if c == "R":
                g = read_group(spec, i)
                i = g[1] if g else i
        else:
            i += 1

    def resolve(text: str) -> str:
        out, k = [], 0
        cond = re.compile(r"\\(IfNoValueTF|IfValueTF|IfBooleanTF|IfNoValueT|IfNoValueF|IfValueT|IfValueF|"
                          r"IfBooleanT|IfBooleanF)\s*")
        while True:
            m = cond.search(text, k)
            if not m:
                out.append(text[k:])
                break
            out.append(text[k:m.start()])
            name = m.group(1)
            j = m.end()
            g = read_group(text, j)
            if not g:                       # \IfNoValueTF #1 {..}{..} without braces
                gm = re.match(r"\s*(#\d)", text[j:])
                if not gm:
                    out.append(m.group(0))
                    k = m.end()
                    continue
                g = (gm.group(1), j + gm.end())
            _arg, j = g
            branches = []
            n_br = 2 if name.endswith("TF") else 1
            for _ in range(n_br):
                b = read_group(text, j)
                if b is None:
                    # bare token branch such as \IfBooleanTF {#1} \mathexclaim \relax
                    bm = re.match(r"\s*(\\[A-Za-z@]+|.)", text[j:], re.S)
                    b = (bm.group(1), j + bm.end()) if bm else ("", j)
                branches.append(b[0])
                j = b[1]
            absent_first = name in ("IfNoValueTF", "IfNoValueT")   # "no value"/"false" branch is taken
            if name.startswith("IfBoolean") or name.startswith("IfValue"):
                # true branch first; arguments are taken as absent/false, so take the false branch
                chosen = branches[1] if name.endswith("TF") else ("" if name.endswith("T") else branches[0])
            elif name == "IfNoValueTF":
                chosen = branches[0]
            else:  # IfNoValueT -> its branch; IfNoValueF -> nothing
                chosen = branches[0] if absent_first else ""
            out.append(resolve(chosen))
            k = j
        return "".join(out)

    body = resolve(body)
    mapping: dict[int, str] = {}
    n = 0
    for idx, (kind, default) in enumerate(kinds, start=1):
        if kind == "m":
            n += 1
            mapping[idx] = "#%d" % n
        elif kind == "O":
            mapping[idx] = default or ""
        else:
            mapping[idx] = ""
    body = re.sub(r"#(\d)", lambda m: mapping.get(int(m.group(1)), ""), body)
    body = body.replace("\\relax", " ").replace("\\ensuremath", "")
    return n, body.strip()


def parse_xparse_macros(tex: str) -> Macros:
    """``\\DeclareDocumentMacro \\X {body}`` and ``\\(Declare|New|Renew|Provide)DocumentCommand \\X {spec} {body}``."""
    tex = strip_comments(tex)
    macros: Macros = {}
    for m in re.finditer(r"\\(DeclareDocumentMacro|DeclareDocumentCommand|NewDocumentCommand|"
                         r"RenewDocumentCommand|ProvideDocumentCommand)\s*(?:\{\s*\\([A-Za-z@]+)\s*\}|\\([A-Za-z@]+))",
                         tex):
        name = m.group(2) or m.group(3)
        i = m.end()
        if m.group(1) == "DeclareDocumentMacro":
            g = read_group(tex, i)
            if g:
                macros[name] = (0, g[0].replace("\\ensuremath", "").strip())
            continue
        spec = read_group(tex, i)
        if not spec:
            continue
        body = read_group(tex, spec[1])
        if not body:
            continue
        macros[name] = _xparse_body(spec[0], body[0])
    return macros


def load_macros(root: Path) -> tuple[Macros, dict[str, dict[str, str]]]:
    """Macros and localisable tokens from ``sty/*.sty`` and the top-level ``open-logic-*.sty``."""
    files = sorted(root.glob("open-logic-*.sty")) + sorted((root / "sty").glob("*.sty"))
    macros: Macros = {}
    tokens: dict[str, dict[str, str]] = {}
    for f in files:
        if f.name in _SKIP_STY:
            continue
        tex = f.read_text(encoding="utf-8", errors="replace")
        parsed = {**parse_macros(tex), **parse_xparse_macros(tex)}
        for name, (nargs, body) in parsed.items():
            if _PROGRAMMING.search(body) or "@" in name:
                continue
            macros[name] = (nargs, body)
        tokens.update(parse_tokens(tex))
    # Greek formula letters are written !A; \formula is the lookup machinery behind them.
    macros.pop("formula", None)
    return macros, tokens


# ---------------------------------------------------------------- titles

def _tex_title(raw: str, macros: Macros, tokens: dict) -> str:
    return latex_to_text(expand_tokens(raw, tokens), macros).strip()


def _path_words(stem: str) -> str:
    return re.sub(r"[-_]+", " ", stem).strip().capitalize()


class _Titles:
    """Part / chapter titles from ``\\olpart`` / ``\\olchapter`` in ``<part>/<part>.tex`` and
    ``<part>/<chapter>/<chapter>.tex``, falling back to the folder names."""

    def __init__(self, content: Path, macros: Macros, tokens: dict):
        self.content, self.macros, self.tokens = content, macros, tokens
        self._cache: dict[Path, str] = {}

    def of(self, folder: Path, command: str) -> str:
        key = folder
        if key in self._cache:
            return self._cache[key]
        title = ""
        f = folder / (folder.name + ".tex")
        if f.is_file():
            tex = strip_comments(f.read_text(encoding="utf-8", errors="replace"))
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
                    title = _tex_title(groups[-1], self.macros, self.tokens)
        self._cache[key] = title or _path_words(folder.name)
        return self._cache[key]


def _section_title(tex: str, macros: Macros, tokens: dict) -> str:
    m = re.search(r"\\(?:olsection|section)\*?\s*(?:\[[^\]]*\])?\s*\{", tex)
    if not m:
        return ""
    g = read_group(tex, m.end() - 1)
    return _tex_title(g[0], macros, tokens) if g else ""


# ---------------------------------------------------------------- reader

def read(root: Path, **options) -> Iterator[Document]:
    """Yield one Document per statement environment of ``root/content/**/*.tex`` (sorted by path)."""
    root = Path(root)
    content = root / "content"
    if not content.is_dir():
        raise FileNotFoundError(f"Open Logic content folder not found: {content}")
    macros, tokens = load_macros(root)
    titles = _Titles(content, macros, tokens)
    for f in sorted(content.rglob("*.tex")):
        rel = f.relative_to(content)
        raw = f.read_text(encoding="utf-8", errors="replace")
        tex = strip_comments(raw)
        if not _ENV_RE.search(tex):
            continue
        parts = rel.with_suffix("").parts
        crumbs = []
        if len(parts) >= 2:
            crumbs.append(titles.of(content / parts[0], "olpart"))
        if len(parts) >= 3:
            crumbs.append(titles.of(content / parts[0] / parts[1], "olchapter"))
        section = _section_title(tex, macros, tokens) or _path_words(parts[-1])
        if not crumbs or crumbs[-1] != section:
            crumbs.append(section)
        title = " > ".join(c for c in crumbs if c)
        path_id = "/".join(parts)
        n = 0
        seen: set[str] = set()
        for m in _ENV_RE.finditer(tex):
            env = m.group(1)
            end = find_env_end(tex, env, m.end())
            if end < 0:
                continue
            n += 1
            line = tex.count("\n", 0, m.start()) + 1
            i = m.end()
            opt = read_group(tex, i, "[", "]", allow_newline=False)
            heading = ""
            if opt:
                heading, i = opt
            inner = tex[i:end]
            labels = _LABEL_RE.findall(inner)
            label = labels[0].strip() if labels else ""
            if label and label not in seen:
                doc_id = f"{SOURCE}:{path_id}#{label}"
            else:   # unlabelled, or a label repeated in the same file (2 upstream cases): positional id
                doc_id = f"{SOURCE}:{path_id}#{n}"
            seen.add(label)
            clean = _LABEL_RE.sub(" ", inner)
            expanded = expand_tokens(clean, tokens)
            statement = latex_to_text(expanded, macros)
            keywords = []
            for em in _EMPH_RE.finditer(expanded):
                w = latex_to_text(em.group(1), macros).strip()
                if w and w not in keywords and len(w) < 80:
                    keywords.append(w)
            if heading:
                name = _tex_title(heading, macros, tokens)
            elif label:
                name = label_words(label)
            elif env == "defn" and keywords:
                name = keywords[0]
            else:
                name = ""
            extra = {"env": env, "n": n}
            if label:
                extra["label"] = label
            if len(labels) > 1:
                extra["labels"] = " ".join(x.strip() for x in labels)
            yield Document(
                id=doc_id, source=SOURCE, kind=KINDS[env], name=name, title=title,
                body=re.sub(r"[ \t]+\n", "\n", tex[m.end():end]).strip(), statement=statement,
                link=LINK.format(path=rel.as_posix(), line=line), license=LICENSE,
                keywords=keywords, file=f"content/{rel.as_posix()}", line=line, extra=extra,
            )

