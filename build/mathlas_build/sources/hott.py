"""HoTT book reader: thm / lem / cor / defn / axiom environments of the chapter files \\include'd by main.tex
(``ex`` = Exercise and ``eg`` = Example are not statements and are left out).

id ``hott:<label>`` from the ``\\label{...}`` at the start of the environment; an unlabelled statement gets
``hott:<chapter file stem>:<n>``, n = 1-based position among the indexed statements of that file.
The body is display text (``display.display_tex`` with the book's macros, the binders as the book typesets
them: ``DISPLAY_OVERRIDES``, every brace group its own binder: ``split_binders``): no ``\\index`` / ``\\label``,
no macro KaTeX does not know. Comments join lines as in TeX, so ``\\indexdef{..}%`` lines leave no paragraph break.
"""
from __future__ import annotations

import bisect
import re
from pathlib import Path
from collections.abc import Iterator

from mathlas_build.display import DisplayAudit, display_tex
from mathlas_build.document import Document
from mathlas_build.latex import (LineIndex, label_words, latex_to_text, parse_macros, split_environments,
                                  strip_comments)
from mathlas_build.sources.texscan import headings, read_group, read_tex

SOURCE = "hott"
LICENSE = "CC-BY-SA-3.0"
ATTRIBUTION = ("Homotopy Type Theory: Univalent Foundations of Mathematics, The Univalent Foundations Program "
               "(Institute for Advanced Study), github HoTT/book @ 578b85cc8d586b1677ec4335148adeb443057d24, "
               "CC BY-SA 3.0")
COMMIT = "578b85cc8d586b1677ec4335148adeb443057d24"
LINK_BASE = f"https://github.com/HoTT/book/blob/{COMMIT}/"

KINDS = {"thm": "theorem", "lem": "lemma", "cor": "corollary", "defn": "definition", "axiom": "axiom"}
# Chapter files in book order when main.tex cannot be read.
DEFAULT_CHAPTERS = ["preliminaries", "basics", "logic", "equivalences", "induction", "hits", "hlevels",
                    "homotopy", "categories", "setmath", "reals", "formal"]

# Macros whose definitions are TeX programming (\@ifnextchar binders) get plain replacements: their braced
# arguments then stay as text ("\prd{x:A} P(x)" -> "product x:A P(x)").
MACRO_OVERRIDES = {
    "prd": (1, r"\prod(#1)\,"), "tprd": (1, r"\prod(#1)\,"), "dprd": (1, r"\prod(#1)\,"),
    "lprd": (1, r"\prod(#1)\,"), "sm": (1, r"\sum(#1)\,"), "tsm": (1, r"\sum(#1)\,"),
    "dsm": (1, r"\sum(#1)\,"), "lsm": (1, r"\sum(#1)\,"),
    "lam": (1, r"\lambda(#1).\,"), "lamu": (1, r"\lambda(#1).\,"), "lamt": (1, r"\lambda(#1).\,"),
    "fall": (1, r"\forall(#1).\,"), "exis": (1, r"\exists(#1).\,"),
    "wtype": (0, r"\mathsf{W}"), "lwtype": (0, r"\mathsf{W}"), "twtype": (0, r"\mathsf{W}"),
    "dwtype": (0, r"\mathsf{W}"), "wtypeh": (0, r"\mathsf{W}^h"),
    "ct": (0, r"\mathbin{\cdot}"),
    "define": (1, r"#1"),
    "sectionNotes": (0, ""), "sectionExercises": (1, ""),
}

_INCLUDE_RE = re.compile(r"\\(?:include|input)\s*\{([^}]*)\}")
_LEAD_RE = re.compile(r"\A(?:\s|\\(?:index|indexdef|indexsee|indexsee\*)\s*(?:\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}\s*)+)*"
                      r"\\label\s*\{([^}]*)\}")
_HEAD_RE = re.compile(r"\\(chapter|section)\*?\s*(?:\[[^\]]*\])?\s*\{")


# TeX's comment eats its line's end and the next line's leading spaces: a line that holds only "%" or
# "\\indexdef{..}%" joins its neighbours (strip_comments keeps the newline, which left a blank line, a
# paragraph break, in mid-sentence). The comment becomes a mark the body and titles drop with that white space;
# the file keeps its newlines, so line numbers hold.
_COMMENT_RE = re.compile(r"((?:^|[^\\])(?:\\\\)*)%[^\n]*", re.M)
_MARK = "\x00"
_MARK_RE = re.compile(_MARK + r"(?:\n[ \t]*)?")


def _mark_comments(tex: str) -> str:
    return _COMMENT_RE.sub(r"\1" + _MARK, tex)


def _join_comments(tex: str) -> str:
    return _MARK_RE.sub("", tex)


# A line that holds only index entries (or a label) is, to TeX, one more space: dropped with its newline, or
# removing the commands (display_tex) leaves a blank line where the sentence goes on.
_INDEX_LINE_RE = re.compile(r"\n[ \t]*(?:\\(?:index|indexdef|indexsee|label)\*?[ \t]*"
                            r"(?:\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}[ \t]*)+)+(?=\n)")


def _drop_index_lines(tex: str) -> str:
    return _INDEX_LINE_RE.sub("", tex)


def chapter_files(root: Path) -> list[str]:
    """Stems of the files main.tex \\include's, in book order (all of them; files without statements
    simply yield nothing)."""
    main = Path(root) / "main.tex"
    if not main.exists():
        return list(DEFAULT_CHAPTERS)
    text = strip_comments(read_tex(main))
    stems = []
    for m in re.finditer(r"\\include\s*\{([^}]*)\}", text):
        stem = Path(m.group(1).strip()).stem
        if stem not in stems and (Path(root) / f"{stem}.tex").exists():
            stems.append(stem)
    return stems or list(DEFAULT_CHAPTERS)


# For the display text: the book's binders as the book typesets them (the word overrides above give
# latex_to_text "product x:A", the page gets \prod_{(x:A)}).
DISPLAY_OVERRIDES = {
    "prd": (1, r"\prod_{(#1)}\,"), "tprd": (1, r"\prod_{(#1)}\,"), "dprd": (1, r"\prod_{(#1)}\,"),
    "lprd": (1, r"\prod_{(#1)}\,"), "sm": (1, r"\sum_{(#1)}\,"), "tsm": (1, r"\sum_{(#1)}\,"),
    "dsm": (1, r"\sum_{(#1)}\,"), "lsm": (1, r"\sum_{(#1)}\,"),
    "lam": (1, r"\lambda #1.\,"), "lamu": (1, r"\lambda #1.\,"), "lamt": (1, r"\lambda #1.\,"),
    "fall": (1, r"\forall (#1).\,"), "exis": (1, r"\exists (#1).\,"),
}


BINDERS = ("prd", "tprd", "dprd", "lprd", "sm", "tsm", "dsm", "lsm", "lam", "lamu", "lamt", "fall", "exis")
_BINDER_RE = re.compile(r"(?<!\\)\\(%s)(?![A-Za-z@])" % "|".join(sorted(BINDERS, key=len, reverse=True)))


def split_binders(tex: str) -> str:
    """``\\prd{x:A}{y:B}`` -> ``\\prd{x:A}\\prd{y:B}``: the book's binders take any number of brace groups
    (``\\@ifnextchar\\bgroup`` in macros.tex), the one-argument overrides one; a blank line ends the groups."""
    if "\\" not in tex or not _BINDER_RE.search(tex):
        return tex
    out, i = [], 0
    for m in _BINDER_RE.finditer(tex):
        if m.start() < i:      # inside groups already copied
            continue
        out.append(tex[i:m.start()])
        i = m.end()
        groups = []
        while (g := read_group(tex, i, allow_newline=False)) is not None:
            groups.append(g[0])
            i = g[1]
        if not groups:
            out.append(m.group(0))
        out.extend(f"{m.group(0)}{{{split_binders(x)}}}" for x in groups)
    out.append(tex[i:])
    return "".join(out)


def book_macros(root: Path) -> dict:
    macros = parse_macros(read_tex(Path(root) / "macros.tex"))
    macros.update(MACRO_OVERRIDES)
    return macros


def read(root: Path, **options) -> Iterator[Document]:
    root = Path(root)
    macros = book_macros(root)
    shown = {**macros, **DISPLAY_OVERRIDES}
    audit = DisplayAudit(SOURCE, macros)
    for stem in chapter_files(root):
        path = root / f"{stem}.tex"
        text = _mark_comments(read_tex(path))
        lines = LineIndex(text)
        chapter = ""
        heads: list[tuple[int, str]] = []  # (line, section title)
        for off, level, title in headings(text, _HEAD_RE, lambda t: latex_to_text(_join_comments(t), macros)):
            if level == "chapter":
                chapter = chapter or title
            else:
                heads.append((lines.line(off), title))
        head_lines = [h[0] for h in heads]
        n = 0
        for env in split_environments(text, KINDS, comments_stripped=True):
            n += 1
            content = _join_comments(env.content)
            lm = _LEAD_RE.match(content)
            label = lm.group(1).strip() if lm else ""
            if lm:
                content = re.sub(r"\\label\s*\{" + re.escape(lm.group(1)) + r"\}", "", content, count=1)
            body = split_binders(_drop_index_lines(content).strip())
            k = bisect.bisect_right(head_lines, env.start_line) - 1
            section = heads[k][1] if k >= 0 else ""
            title = " > ".join(x for x in (chapter, section) if x)
            opt = latex_to_text(_join_comments(env.optional_arg), macros) if env.optional_arg else ""
            name = opt or (label_words(label) if label else "")
            doc_id = f"hott:{label}" if label else f"hott:{stem}:{n}"
            yield Document(
                id=doc_id,
                source=SOURCE,
                kind=KINDS[env.name],
                name=name,
                title=title,
                body=audit.checked(display_tex(body, shown)),
                statement=latex_to_text(body, macros),
                link=f"{LINK_BASE}{path.name}#L{env.start_line}",
                license=LICENSE,
                slogan="",
                keywords=[],
                file=path.name,
                line=env.start_line,
                extra={"label": label, "env": env.name},
            )
    audit.report()
