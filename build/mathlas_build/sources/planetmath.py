"""PlanetMath reader: one Document per entry file ``<NN_Class>/<MSC>-<CanonicalName>.tex``.

id ``planetmath:<\\pmcanonicalname>``; a canonical name that occurs in several files gives each of them
``planetmath:<file stem>``.  The body is the article between ``\\begin{document}`` and ``\\end{document}``,
turned into words with the macros of that entry's own preamble. The file's text is repaired first
(``display.repair_text``: 61 entries hold mojibake such as ``CramÃ©r``), and ``body`` is the display text
(``display.display_tex``: the preamble's macros expanded, ``\\PMlinkname{text}{target}`` -> text, sections as
bold paragraphs, display environments as ``$$...$$``).
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from collections.abc import Iterator

from mathlas_build.display import DisplayAudit, display_tex, repair_text
from mathlas_build.document import Document
from mathlas_build.latex import latex_to_text, parse_macros
from mathlas_build.sources.hott import DISPLAY_OVERRIDES as HOTT_BINDERS
from mathlas_build.sources.hott import split_binders
from mathlas_build.sources.texscan import braced, read_tex

SOURCE = "planetmath"
LICENSE = "CC-BY-SA-3.0"
ATTRIBUTION = ("PlanetMath, the Free Encyclopedia of Mathematics (2016 edition), by the PlanetMath authors, "
               "github planetmath/<MSC class> repositories (commits in planetmath/SOURCES.tsv), CC BY-SA 3.0")

_META_RE = re.compile(r"\\(pmcanonicalname|pmtitle|pmtype|pmclassification|pmdefines|pmsynonym|pmrelated|"
                      r"pmkeywords)\s*\{")
_BEGIN_DOC_RE = re.compile(r"\\begin\s*\{document\}")
_END_DOC_RE = re.compile(r"\\end\s*\{document\}")


def _document_delimiter(rx: re.Pattern, text: str, pos: int = 0) -> re.Match | None:
    """The first match of ``rx`` from ``pos`` that is not on a comment line: ``%\\end{document}`` in a
    commented-out block (PowerObject) or ``% ... before the \\begin{document}`` (ThisIsMySampleFile1) is
    not the document's end or start.  Only lines that start with ``%`` count as comments here: one entry
    (AnIntuitiveInsightIntoCrossProducts1) lost its newlines upstream, so a ``%`` in the middle of its one long
    line swallows the whole article, delimiters included, which its author did not mean."""
    for m in rx.finditer(text, pos):
        if not text[text.rfind("\n", 0, m.start()) + 1:m.start()].lstrip().startswith("%"):
            return m
    return None


def parse_metadata(text: str) -> dict:
    """The metadata macros before ``\\endmetadata`` (the whole text when there is none)."""
    end = text.find("\\endmetadata")
    head = text if end < 0 else text[:end]
    meta: dict = {"canonicalname": "", "title": "", "type": "", "msc": [], "defines": [], "synonyms": [],
                  "related": []}
    for m in _META_RE.finditer(head):
        # skip commented-out metadata lines (e.g. "%\pmkeywords{...}")
        line_start = head.rfind("\n", 0, m.start()) + 1
        if "%" in head[line_start:m.start()]:
            continue
        key = m.group(1)
        arg, after = braced(head, m.end())
        arg = arg.strip()
        if key == "pmcanonicalname":
            meta["canonicalname"] = meta["canonicalname"] or arg
        elif key == "pmtitle":
            meta["title"] = meta["title"] or arg
        elif key == "pmtype":
            meta["type"] = meta["type"] or arg
        elif key in ("pmclassification", "pmsynonym"):
            second = ""
            j = after
            while j < len(head) and head[j] in " \t":
                j += 1
            if j < len(head) and head[j] == "{":
                second, _ = braced(head, j + 1)
            if key == "pmclassification":
                if second.strip():
                    meta["msc"].append(second.strip())
            elif arg:
                meta["synonyms"].append(arg)
        elif key == "pmdefines":
            if arg:
                meta["defines"].append(arg)
        elif key == "pmrelated" and arg:
            meta["related"].append(arg)
    return meta


def class_title(folder: str) -> str:
    """``13_Commutative_rings_and_algebras`` -> ``Commutative rings and algebras``."""
    name = re.sub(r"^\d+_", "", folder).replace("_", " ").strip()
    return name[:1].upper() + name[1:]


def entry_files(root: Path) -> list[Path]:
    return sorted(p for p in Path(root).glob("*/*.tex") if p.is_file())


_PROOF_ENV_RE = re.compile(r"\\begin\s*\{proof\}.*?(?:\\end\s*\{proof\}|\Z)", re.S)
STATEMENT_MIN = 80   # characters of words an entry keeps without its proofs, else it keeps them


def without_proofs(body: str, macros: dict) -> str:
    """``body`` less its ``proof`` environments, when what is left still says something (``STATEMENT_MIN``
    characters as words); else ``body`` itself."""
    if "proof}" not in body:
        return body
    rest = _PROOF_ENV_RE.sub("\n", body)
    return rest if len(latex_to_text(rest, macros)) >= STATEMENT_MIN else body


def read(root: Path, *, folders: list[str] | None = None, proofs_in_text: bool = True,
         **options) -> Iterator[Document]:
    """Yield one Document per entry.  ``folders``: optional class folder names to restrict the output to
    (duplicate canonical names are still counted over the whole corpus, so ids do not change).
    ``proofs_in_text``: False leaves an entry's ``proof`` environments out of its retrieval text (not
    out of what is shown) unless the entry is a proof."""
    root = Path(root)
    paths = entry_files(root)
    texts: dict[Path, str] = {}
    metas: dict[Path, dict] = {}
    for p in paths:
        if folders is None or p.parent.name in folders:
            texts[p] = repair_text(read_tex(p))     # mojibake (CramÃ©r) and HTML entities, once
            metas[p] = parse_metadata(texts[p])
        else:  # only the canonical name is needed, for the duplicate count
            with open(p, encoding="utf-8", errors="replace") as fh:
                head = fh.read(4000)
            metas[p] = {"canonicalname": parse_metadata(head)["canonicalname"]}
    audit = DisplayAudit(SOURCE)
    counts = Counter((metas[p]["canonicalname"] or p.stem) for p in paths)
    for p in paths:
        if p not in texts:
            continue
        text = texts[p]
        meta = metas[p]
        canonical = meta["canonicalname"] or p.stem.split("-", 1)[-1]
        doc_id = f"planetmath:{canonical}" if counts[meta["canonicalname"] or p.stem] == 1 \
            else f"planetmath:{p.stem}"
        mb = _document_delimiter(_BEGIN_DOC_RE, text)
        meta_end = text.find("\\endmetadata")
        pre_start = meta_end + len("\\endmetadata") if meta_end >= 0 else 0
        if mb:
            preamble = text[pre_start:mb.start()]
            me = _document_delimiter(_END_DOC_RE, text, mb.end())
            body = text[mb.end():me.start() if me else len(text)]
            body_line = text.count("\n", 0, mb.end()) + 1
            # a few entries paste a whole second document into the body: its preamble joins the preamble
            inner = _document_delimiter(_BEGIN_DOC_RE, body)
            while inner:
                preamble += "\n" + body[:inner.start()]
                body_line += body.count("\n", 0, inner.end())
                body = body[inner.end():]
                inner = _document_delimiter(_BEGIN_DOC_RE, body)
        else:
            preamble = ""
            body = text[pre_start:]
            body_line = text.count("\n", 0, pre_start) + 1
        body = body.strip("\n")
        macros = parse_macros(preamble)
        # the HoTT book's chapters on PlanetMath use the book's binders without defining them, with as
        # many brace groups as the book's (\prd{x:A}{y:B}: two products; hott.split_binders)
        shown = macros
        if "\\prd" in body or "\\sm" in body or "\\lam" in body:
            shown = {**HOTT_BINDERS, **macros}
            if not any(name in macros for name in HOTT_BINDERS):
                body = split_binders(body)
        kind = meta["type"].lower().strip() or "entry"
        keywords = []
        for k in meta["defines"] + meta["synonyms"]:
            w = latex_to_text(k, macros)
            if w and w not in keywords:
                keywords.append(w)
        title = latex_to_text(meta["title"], macros) if meta["title"] else canonical
        yield Document(
            id=doc_id,
            source=SOURCE,
            kind=kind,
            name=title,
            title=class_title(p.parent.name),
            body=audit.checked(display_tex(body.strip(), shown)),
            statement=latex_to_text(body if proofs_in_text or kind == "proof" else without_proofs(body, macros),
                                    macros),
            link=f"https://planetmath.org/{canonical.lower()}",
            license=LICENSE,
            slogan="",
            keywords=keywords,
            file=f"{p.parent.name}/{p.name}",
            line=body_line,
            extra={"canonicalname": canonical, "msc": list(meta["msc"]), "related": list(meta["related"])},
        )
    audit.report()
