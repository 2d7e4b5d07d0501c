"""Metamath ``set.mm`` statements with their English comments, for training pairs (CC0).

Not a bundle source (yet): the training package needs the statements as ``Document``s with the
stable ids of DESIGN.md (``metamath:<label>``) so that pairs and negatives can name them. The
formula is the ``$p`` / ``$a`` expression (hypotheses first) with every token replaced by its
``latexdef`` from the ``$t`` typesetting block, then ``latex_to_text`` — the same words every other
source gets. The comment before a statement becomes ``Document.slogan`` (the pair's query);
``extra["comment"]`` keeps it whole.

Parsing is ``mathlas_build.sources.metamath.statements``, the set.mm parser of the bundle reader.
"""
from __future__ import annotations

import re
from pathlib import Path
from collections.abc import Iterator

from mathlas_build.document import Document
from mathlas_build.latex import latex_to_text
from mathlas_build.sources.metamath import ATTRIBUTION, LICENSE, LINK, SOURCE, statements  # noqa: F401

_LATEXDEF = re.compile(r"latexdef\s+(\"(?:[^\"]|\"\")*\"|'(?:[^']|'')*')\s+as\s+"
                       r"((?:(?:\"(?:[^\"]|\"\")*\"|'(?:[^']|'')*')\s*\+?\s*)+);")
_QUOTED = re.compile(r"\"((?:[^\"]|\"\")*)\"|'((?:[^']|'')*)'")
_CREDIT = re.compile(r"\((?:Contributed|Revised|Proof shortened|Proof modification|New usage|Modified|Revision)"
                     r"[^()]*\)", re.S)
_MATH = re.compile(r"`([^`]*)`")
_REF = re.compile(r"~\s*(\S+)")


def _unquote(s: str) -> str:
    out = []
    for m in _QUOTED.finditer(s):
        out.append(m.group(1).replace('""', '"') if m.group(1) is not None else m.group(2).replace("''", "'"))
    return "".join(out)


def latexdefs(text: str) -> dict[str, str]:
    """token -> LaTeX, from the ``$t`` comment block."""
    start = text.find("$( $t")
    if start < 0:
        return {}
    end = text.find("$)", start)
    return {_unquote(m.group(1)): _unquote(m.group(2)) for m in _LATEXDEF.finditer(text, start, end)}


def render(tokens: list[str], defs: dict[str, str]) -> str:
    """Math tokens -> readable words (``|- ( A + B ) = ( B + A )`` -> ``A + B = B + A``)."""
    toks = tokens[1:] if tokens and tokens[0] == "|-" else tokens
    return latex_to_text(" ".join(defs.get(t, t) for t in toks))


def clean_comment(comment: str, defs: dict[str, str]) -> str:
    """A comment as words: credits dropped, ``~ label`` -> label, `` ` math ` `` rendered."""
    s = _CREDIT.sub(" ", comment)
    s = _MATH.sub(lambda m: " " + render(m.group(1).split(), defs) + " ", s)
    s = _REF.sub(r"\1", s)
    return " ".join(s.split())


def read(path: Path, *, limit: int = 0, **options) -> Iterator[Document]:
    """Yield one Document per ``$p`` / ``$a`` statement of a set.mm file (``path``: the file or its folder)."""
    path = Path(path)
    if path.is_dir():
        path = path / "set.mm"
    text = path.read_text(encoding="utf-8", errors="replace")
    defs = latexdefs(text)
    emitted = 0
    for st in statements(text):
        expr, label, kw = st.expr, st.label, st.keyword
        hyps = [h for _, h in st.hyps]
        statement = render(expr, defs)
        if hyps:
            statement = "Given " + "; ".join(render(h, defs) for h in hyps) + ", then " + statement
        title = " > ".join(h for h in st.sections if h)
        raw = " ".join(st.comment.split())
        comment = clean_comment(raw, defs)
        yield Document(
            id=f"{SOURCE}:{label}", source=SOURCE, kind="theorem" if kw == "$p" else "axiom", name=label,
            title=title, body=" ".join(expr), statement=statement, link=LINK.format(label=label),
            license=LICENSE, slogan=comment, extra={"label": label, "comment": comment, "comment_raw": raw[:400]},
        )
        emitted += 1
        if limit and emitted >= limit:
            return
