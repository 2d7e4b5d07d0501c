"""Evan Chen's *An Infinitely Large Napkin* reader (``shared/corpora/napkin``).

Statements are the ``theorem``, ``proposition``, ``lemma``, ``corollary``, ``fact`` and ``definition`` environments of
the chapter files ``tex/<topic>/<chapter>.tex`` (examples, exercises, problems, questions are not indexed; environments
inside ``%`` comments are skipped).

Stable id (DESIGN.md: ``napkin:<chapter-file>:<n>``, the n-th statement of the chapter). The chapter file is written as
its path relative to ``tex/`` without ``.tex`` (the topic folder keeps it unique and readable)::

    napkin:<topic>/<chapter>:<n>        e.g. napkin:H113/action:3   (n = 1-based, counting every indexed environment
                                                                    of that file in order)

Names: the ``[...]`` title of the environment (``\\begin{theorem}[Orbit-stabilizer theorem]``, sometimes on the next
line), else the words of its ``\\label``, else (definitions) the first ``\\vocab{...}`` term. Every ``\\vocab``/``\\emph``
term goes to ``keywords``. Title: ``Part > Chapter > Section`` (part from ``Napkin.tex``'s ``\\part``/``\\include`` order).

Macros: ``tex/macros.tex`` through ``parse_macros``, on top of a hand-written table of the ``evan.sty`` macros the text
uses (evan.sty is not in the repository), and a chapter's own ``\\newcommand``s in that chapter, names and text alike
(``\\begin{lemma}[Elements of \\tempuuujbhtkx\\ are integral]`` is named "Elements of Z[G] are integral", not by the
macro's name). The body is display text: the statement after its ``[title]``, labels dropped, through
``display.display_tex`` with those macros (``\\vocab{x}`` -> x, ``\\ii`` -> ``\\item``, ...).
"""
from __future__ import annotations

import re
from pathlib import Path
from collections.abc import Iterator

from mathlas_build.display import DisplayAudit, display_tex
from mathlas_build.document import Document
from mathlas_build.latex import Macros, latex_to_text, parse_macros
from mathlas_build.sources.texscan import blank_comments, headings, label_tail_words, read_group, read_tex, \
    statement_files, statements

SOURCE = "napkin"
LICENSE = "CC-BY-SA-4.0"
ATTRIBUTION = ("Evan Chen, An Infinitely Large Napkin, https://venhance.github.io/napkin/, "
               "github vEnhance/napkin @ 3b108731, text CC BY-SA 4.0")
COMMIT = "3b108731587d71f0a3887b0b004a8814c423a003"
LINK = "https://github.com/vEnhance/napkin/blob/" + COMMIT + "/tex/{path}#L{line}"

KINDS = {"theorem": "theorem", "proposition": "proposition", "lemma": "lemma", "corollary": "corollary",
         "fact": "fact", "definition": "definition"}
_ENV_RE = re.compile(r"\\begin\{(" + "|".join(KINDS) + r")\}")
_LABEL_RE = re.compile(r"\\label\s*\{([^{}]*)\}")
_TERM_RE = re.compile(r"\\(vocab|emph|textbf|textit)\s*\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}")
_STOP = {"a", "an", "the", "and", "or", "not", "is", "are", "of", "in", "on", "to", "any", "all", "every", "some",
         "each", "no", "only", "one", "exactly", "unique", "must", "can", "cannot", "if", "iff", "then", "this", "that"}
_NOT_CHAPTERS = {"preamble.tex", "macros.tex", "Qcircuit.tex"}

# evan.sty (not in the repo) and a few standard commands Napkin relies on.  macros.tex, parsed with parse_macros,
# overrides these where it defines the same name.
EVAN: Macros = {
    "ZZ": (0, "\\mathbb Z"), "QQ": (0, "\\mathbb Q"), "RR": (0, "\\mathbb R"), "CC": (0, "\\mathbb C"),
    "FF": (0, "\\mathbb F"), "NN": (0, "\\mathbb N"), "EE": (0, "\\mathbb E"), "TT": (0, "\\mathbb T"),
    "HH": (0, "\\mathbb H"), "PP": (0, "\\mathcal P"), "OO": (0, "\\mathcal O"), "AA": (0, "\\mathcal A"),
    "BB": (0, "\\mathcal B"), "VV": (0, "\\mathcal V"), "Aff": (0, "\\mathbb A"), "Po": (0, "\\mathbb P"),
    "RP": (0, "\\mathbb{RP}"), "CP": (0, "\\mathbb{CP}"),
    "eps": (0, "\\varepsilon"), "half": (0, "\\frac{1}{2}"), "inv": (0, "^{-1}"), "dg": (0, "^\\circ"),
    "defeq": (0, ":="), "id": (0, "\\mathrm{id}"), "ol": (1, "\\overline{#1}"), "ul": (1, "\\underline{#1}"),
    "wt": (1, "\\widetilde{#1}"), "wh": (1, "\\widehat{#1}"), "opname": (1, "\\operatorname{#1}"),
    "abs": (1, "\\left\\lvert #1 \\right\\rvert"), "norm": (1, "\\left\\lVert #1 \\right\\rVert"),
    "floor": (1, "\\left\\lfloor #1 \\right\\rfloor"), "ceiling": (1, "\\left\\lceil #1 \\right\\rceil"),
    "Zc": (1, "\\mathbb Z/#1\\mathbb Z"), "Zm": (1, "(\\mathbb Z/#1\\mathbb Z)^\\times"),
    "Stab": (0, "\\operatorname{Stab}"), "Fix": (0, "\\operatorname{Fix}"), "FixPt": (0, "\\operatorname{FixPt}"),
    "Aut": (0, "\\operatorname{Aut}"), "Inn": (0, "\\operatorname{Inn}"), "Hom": (0, "\\operatorname{Hom}"),
    "End": (0, "\\operatorname{End}"), "Ker": (0, "\\operatorname{Ker}"), "ker": (0, "\\operatorname{ker}"),
    "im": (0, "\\operatorname{im}"), "img": (0, "\\operatorname{im}"), "Img": (0, "\\operatorname{Im}"),
    "coker": (0, "\\operatorname{coker}"), "Spec": (0, "\\operatorname{Spec}"), "Proj": (0, "\\operatorname{Proj}"),
    "Gal": (0, "\\operatorname{Gal}"), "GL": (0, "\\operatorname{GL}"), "SL": (0, "\\operatorname{SL}"),
    "Tr": (0, "\\operatorname{Tr}"), "rank": (0, "\\operatorname{rank}"), "ord": (0, "\\operatorname{ord}"),
    "lcm": (0, "\\operatorname{lcm}"), "Frac": (0, "\\operatorname{Frac}"), "Ext": (0, "\\operatorname{Ext}"),
    "Tor": (0, "\\operatorname{Tor}"), "Res": (0, "\\operatorname{Res}"), "Frob": (0, "\\mathrm{Frob}"),
    "Norm": (0, "\\operatorname{N}"), "Cl": (0, "\\mathrm{Cl}"), "Mat": (0, "\\mathrm{Mat}"),
    "ka": (0, "\\mathfrak a"), "kb": (0, "\\mathfrak b"), "kp": (0, "\\mathfrak p"), "kq": (0, "\\mathfrak q"),
    "km": (0, "\\mathfrak m"), "kP": (0, "\\mathfrak P"), "kQ": (0, "\\mathfrak Q"), "kg": (0, "\\mathfrak g"),
    "SF": (0, "\\mathscr F"), "SG": (0, "\\mathscr G"), "SA": (0, "\\mathscr A"), "SB": (0, "\\mathscr B"),
    "SC": (0, "\\mathscr C"), "SH": (0, "\\mathscr H"), "MM": (0, "\\mathscr M"),
    "catname": (1, "\\mathsf{#1}"), "obj": (0, "\\operatorname{obj}"), "op": (0, "^{\\mathrm{op}}"),
    "normalin": (0, "\\trianglelefteq"), "injto": (0, "\\hookrightarrow"), "surjto": (0, "\\twoheadrightarrow"),
    "taking": (1, "\\xrightarrow{#1}"), "liff": (0, "\\leftrightarrow"), "lthen": (0, "\\rightarrow"),
    "cbrt": (1, "\\sqrt[3]{#1}"), "restrict": (1, "|_{#1}"), "ZFC": (0, "\\mathsf{ZFC}"),
    "CH": (0, "\\mathsf{CH}"), "On": (0, "\\mathrm{On}"), "HdR": (0, "H_{\\mathrm{dR}}"),
    "st": (0, "^{st}"), "nd": (0, "^{nd}"), "th": (0, "^{th}"), "ii": (0, "\\item"),
    "charin": (0, "\\text{ char }"), "cvec": (1, "\\begin{bmatrix} #1 \\end{bmatrix}"),
    "fpartial": (2, "\\frac{\\partial #1}{\\partial #2}"), "ee": (0, "\\mathbf e"),
    # macros.tex ones the statements use (kept here too so the text is right even where parse_macros misses them)
    "Vp": (0, "\\mathcal V_{\\text{pr}}"), "II": (0, "\\mathcal I_{\\text{rad}}"), "pre": (0, "^{\\text{pre}}"),
    "sh": (0, "^{\\mathrm{sh}}"), "ab": (0, "^{\\text{ab}}"), "cme": (0, "^{\\text{cm}}"), "Name": (0, "\\text{Name}"),
    "res": (0, "\\operatorname{res}"), "kf": (0, "\\mathfrak f"), "Coker": (0, "\\operatorname{Coker}"),
    "Wind": (0, "\\operatorname{I}"), "Ram": (0, "\\operatorname{Ram}"), "Opens": (0, "\\operatorname{OpenSets}"),
    "Cells": (0, "\\operatorname{Cells}"), "UQFT": (0, "U_{\\mathrm{QFT}}"), "triv": (0, "\\mathrm{triv}"),
    "Fun": (0, "\\operatorname{Fun}"), "Irrep": (0, "\\operatorname{Irrep}"), "Reg": (0, "\\operatorname{Reg}"),
    "diam": (0, "\\operatorname{diam}"), "sign": (0, "\\operatorname{sign}"), "Div": (0, "\\operatorname{div}"),
    "cof": (0, "\\operatorname{cof}"), "dom": (0, "\\operatorname{dom}"), "ran": (0, "\\operatorname{ran}"),
}
# Applied after macros.tex: presentation-only wrappers whose definitions carry colours and boxes.
OVERRIDES: Macros = {
    "vocab": (1, "#1"),
    "prototype": (1, ""),
    "mailto": (1, "#1"),
    "hrulebar": (0, ""),
    "listhack": (0, ""),
}


def load_macros(root: Path) -> Macros:
    macros: Macros = dict(EVAN)
    mf = root / "tex" / "macros.tex"
    if mf.is_file():
        macros.update(parse_macros(read_tex(mf)))
    macros.update(OVERRIDES)
    return macros


def chapter_macros(tex: str, book: Macros) -> Macros:
    """``book`` with the chapter's own ``\\newcommand``s: ``rep-theory/applications.tex`` defines
    ``\\tempuuujbhtkx`` as ``$\\ZZ[G]$`` for a lemma's title (``Elements of \\tempuuujbhtkx\\ are integral``), which
    macros.tex does not know. ``OVERRIDES`` still win."""
    local = parse_macros(tex) if ("\\newcommand" in tex or "\\def" in tex) else {}
    return {**book, **local, **OVERRIDES} if local else book


def part_titles(root: Path, macros: Macros) -> dict[str, str]:
    """Chapter path (relative to tex/, no extension) -> title of the ``\\part`` it is included under in Napkin.tex."""
    master = root / "Napkin.tex"
    if not master.is_file():
        return {}
    tex = blank_comments(read_tex(master))
    out: dict[str, str] = {}
    part = ""
    for m in re.finditer(r"\\part\*?\s*\{|\\include\s*\{\s*tex/([^}]+?)\s*\}", tex):
        if m.group(0).startswith("\\part"):
            g = read_group(tex, m.end() - 1)
            part = latex_to_text(g[0], macros).strip() if g else ""
        else:
            out[m.group(1).removesuffix(".tex")] = part
    return out


def _heading(tex: str, command: str, macros: Macros) -> list[tuple[int, str]]:
    """(offset, title words) of every ``\\command{...}`` in ``tex``."""
    pattern = r"\\" + command + r"\*?\s*(?:\[[^\]]*\])?\s*\{"
    found = headings(tex, pattern, lambda t: latex_to_text(t, macros), strict=True)
    return [(off, title) for off, _, title in found]


def read(root: Path, **options) -> Iterator[Document]:
    """Yield one Document per statement environment of ``root/tex/**/*.tex`` (sorted by path)."""
    root = Path(root)
    texdir = root / "tex"
    if not texdir.is_dir():
        raise FileNotFoundError(f"Napkin tex folder not found: {texdir}")
    book = load_macros(root)
    parts = part_titles(root, book)
    audit = DisplayAudit(SOURCE, book)
    for rel, tex in statement_files(texdir, _ENV_RE, skip=_NOT_CHAPTERS):
        chapter_id = rel.with_suffix("").as_posix()
        macros = chapter_macros(tex, book)
        chapters = _heading(tex, "chapter", macros)
        sections = _heading(tex, "section", macros)
        chapter_default = re.sub(r"[-_]+", " ", rel.stem).strip().capitalize()
        for st in statements(tex, _ENV_RE, _LABEL_RE, nested=False):
            label = st.labels[0].strip() if st.labels else ""
            clean = _LABEL_RE.sub(" ", st.inner)
            statement = latex_to_text(clean, macros)
            vocab: list[str] = []          # \vocab{...}: the terms a definition defines
            keywords: list[str] = []       # those, then emphasised words
            for tm in _TERM_RE.finditer(clean):
                w = latex_to_text(tm.group(2), macros).strip()
                if not w or len(w) >= 80 or w.lower() in _STOP or len(w) < 2:
                    continue
                if tm.group(1) == "vocab" and w not in vocab:
                    vocab.append(w)
                if w not in keywords:
                    keywords.append(w)
            keywords = vocab + [k for k in keywords if k not in vocab]
            if st.heading.strip():
                name = latex_to_text(st.heading, macros).strip()
            elif label:
                name = label_tail_words(label)
            elif st.env == "definition" and keywords:
                name = keywords[0]
            else:
                name = ""
            chapter = next((t for off, t in reversed(chapters) if off < st.start), "") or \
                (chapters[0][1] if chapters else chapter_default)
            section = next((t for off, t in reversed(sections) if off < st.start), "")
            crumbs = [parts.get(chapter_id, ""), chapter, section]
            title = " > ".join(c for c in crumbs if c)
            extra = {"env": st.env, "n": st.n}
            if label:
                extra["label"] = label
            yield Document(
                id=f"{SOURCE}:{chapter_id}:{st.n}", source=SOURCE, kind=KINDS[st.env], name=name, title=title,
                body=audit.checked(display_tex(clean, macros)), statement=statement,
                link=LINK.format(path=rel.as_posix(), line=st.line), license=LICENSE,
                keywords=keywords, file=f"tex/{rel.as_posix()}", line=st.line, extra=extra,
            )
    audit.report()
