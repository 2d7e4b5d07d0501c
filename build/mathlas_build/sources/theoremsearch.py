"""TheoremSearch dataset reader: arXiv theorems with LLM-written slogans and their papers' metadata.

The dataset is ``uw-math-ai/theorem-search-dataset`` on Hugging Face (CC BY-SA 4.0), released with
"Semantic Search over 9 Million Mathematical Theorems" (Alexander, Leonen, Szeto, Remizov, Tejeda,
Inchiostro, Ilin; arXiv:2602.05216): about 1.34 million theorem statements from about 210,000
papers. Download its three parquet files into one directory and point the recipe there::

    [[sources]]
    reader = "theoremsearch"
    path = "theorem-search-dataset"      # holds theorem.parquet, theorem_slogan.parquet, paper.parquet
    options = { slogan_model = "DeepSeek-V3.1" }

Schema. The dataset card lists the three files (configs ``theorem``, ``theorem_slogan``, ``paper``)
but not their columns. The columns below are the tables the files were exported from, as the
authors' repository declares them (github uw-math-ai/TheoremSearch, ``rds_schema.sql``), and they
match the columns that published readers of these files select (``theorem_id, paper_id, name,
body, label, link`` / ``slogan_id, theorem_id, slogan``; ``model`` filters slogans)::

    theorem.parquet         theorem_id (int), paper_id (str), name (str, "Theorem 3.1"), body (LaTeX),
                            label (str | null, the \\label), link (str | null), parsing_method (str)
    theorem_slogan.parquet  slogan_id (int), theorem_id (int), model (str), prompt_id (str), slogan (str)
    paper.parquet           paper_id (str, the arXiv id), title, authors (list of str), link,
                            last_updated (timestamp), summary, journal_ref (str | null),
                            primary_category (str), categories (list of str), citations (see below)

What could not be confirmed from the files themselves is assumed and handled loosely: ``citations``
arrives as floats, nulls and the string "None" mixed (read as a nullable int; anything that is not
a non-negative number is unknown), ``authors`` and ``categories`` may be lists or one string
(authors split on commas and " and ", categories on whitespace), and the year is taken from
``last_updated`` (the arXiv version date, which the authors' own demo shows as the year) or from a
``year`` column when the file has one. Every column name can be changed with the reader options
``theorem_columns``, ``slogan_columns`` and ``paper_columns`` (our name -> the file's name), and the
file names with ``theorem_file``, ``slogan_file`` and ``paper_file``.

Documents. One per theorem row: id ``arxiv:<paper_id>#<theorem name>`` (``#<theorem_id>`` when the
name is empty or already taken in that paper); kind from the name's first word (theorem, lemma,
proposition, corollary, definition...; else ``statement``); name = the theorem's name; title = the
paper's title; body = the LaTeX statement; slogan = the dataset's slogan (the retrieval text starts
with it); link = the theorem's link, else the paper's, else ``https://arxiv.org/abs/<paper_id>``.
``extra`` carries the paper fields of the bundle format (``paper_id``, ``paper_title``, ``authors``,
``year``, ``categories`` with the primary category first, ``citations``, ``journal_ref``) plus
``label`` and ``theorem_id``. A theorem with several slogans keeps one: the ``slogan_model`` /
``slogan_prompt`` options choose, else the first in file order.

``PRIORS`` declares the citation prior the recipe's manifest gets (``fusion.priors``; docs/papers.md).
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any
from collections.abc import Iterator

from mathlas_build.document import Document
from mathlas_build.latex import latex_to_text

SOURCE = "arxiv"
LICENSE = "CC-BY-SA-4.0"
ATTRIBUTION = ("TheoremSearch dataset (Alexander, Leonen, Szeto, Remizov, Tejeda, Inchiostro, Ilin), "
               "huggingface.co/datasets/uw-math-ai/theorem-search-dataset, CC BY-SA 4.0; "
               "theorems from arXiv papers, slogans written by an LLM")

# The citation prior, declared for every bundle built with this reader: score + weight *
# log(max(citations, 1)). Off (weight 0) until a weight is measured on queries over this corpus.
PRIORS = {"citations": {"column": "citations", "transform": "log1", "weight": 0.0}}

THEOREM_COLUMNS = {"theorem_id": "theorem_id", "paper_id": "paper_id", "name": "name", "body": "body",
                   "label": "label", "link": "link"}
SLOGAN_COLUMNS = {"theorem_id": "theorem_id", "slogan": "slogan", "model": "model", "prompt_id": "prompt_id"}
PAPER_COLUMNS = {"paper_id": "paper_id", "title": "title", "authors": "authors", "link": "link",
                 "last_updated": "last_updated", "year": "year", "journal_ref": "journal_ref",
                 "primary_category": "primary_category", "categories": "categories", "citations": "citations"}
KINDS = {"theorem", "lemma", "proposition", "corollary", "definition", "conjecture", "claim", "remark",
         "example", "fact", "observation", "assumption", "hypothesis", "axiom", "problem", "question"}
_KIND_WORDS = {"thm": "theorem", "lem": "lemma", "prop": "proposition", "cor": "corollary", "def": "definition",
               "conj": "conjecture"}
_AUTHOR_SPLIT = re.compile(r"\s*(?:,|;|\band\b)\s*")
_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d)(?!\d)")


def citations(value: Any) -> int | None:
    """The dataset's ``citations`` cell as a nullable int: 12.0 -> 12; None, NaN, "None", "", -1 -> None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        value = value.strip()
        if not value or value.lower() in ("none", "null", "nan"):
            return None
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return int(value) if value >= 0 else None
    return None


def year_of(value: Any) -> int | None:
    """A year from an int, a date/datetime, or a string holding a four-digit year."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 1000 <= value <= 9999 else None
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and 1000 <= value <= 9999 else None
    y = getattr(value, "year", None)
    if isinstance(y, int):
        return y
    m = _YEAR.search(str(value))
    return int(m.group(1)) if m else None


def _strings(value: Any, split: re.Pattern | None) -> list[str]:
    """A list cell (or a string cell split by ``split``) as clean non-empty strings, order kept."""
    if value is None:
        return []
    if isinstance(value, str):
        value = split.split(value) if split is not None else [value]
    elif not isinstance(value, (list, tuple)):
        return []
    out = []
    for v in value:
        s = " ".join(str(v).split()) if v is not None else ""
        if s and s.lower() != "none" and s not in out:
            out.append(s)
    return out


def kind_of(name: str) -> str:
    """``Theorem 3.1`` -> theorem, ``Lemma`` -> lemma, ``Thm.`` -> theorem; unknown -> statement."""
    m = re.match(r"[A-Za-z]+", name.strip())
    if not m:
        return "statement"
    w = m.group(0).lower()
    w = _KIND_WORDS.get(w, w)
    return w if w in KINDS else "statement"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    s = value if isinstance(value, str) else str(value)
    return "" if s.strip().lower() == "none" else s


def _rows(path: Path, columns: dict[str, str], batch_size: int) -> Iterator[dict[str, Any]]:
    """Rows of a parquet file with our column names; a column the file lacks reads as None."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    present = set(pf.schema_arrow.names)
    wanted = {ours: theirs for ours, theirs in columns.items() if theirs in present}
    for batch in pf.iter_batches(batch_size=batch_size, columns=sorted(set(wanted.values()))):
        for rec in batch.to_pylist():
            yield {ours: rec.get(theirs) for ours, theirs in columns.items()}


def _require(path: Path, columns: dict[str, str], needed: tuple[str, ...]) -> None:
    import pyarrow.parquet as pq

    if not path.is_file():
        raise FileNotFoundError(f"theoremsearch reader: {path} not found (download the dataset's parquet files)")
    names = set(pq.ParquetFile(path).schema_arrow.names)
    missing = [f"{columns[c]!r}" for c in needed if columns[c] not in names]
    if missing:
        raise ValueError(f"{path}: no column {', '.join(missing)}; it has {', '.join(sorted(names))} "
                         f"(map the names with the reader options theorem_columns / slogan_columns / paper_columns)")


def _columns(defaults: dict[str, str], given: Any, what: str) -> dict[str, str]:
    given = dict(given or {})
    unknown = set(given) - set(defaults)
    if unknown:
        raise ValueError(f"theoremsearch reader: {what} has no key {', '.join(sorted(unknown))}; "
                         f"keys: {', '.join(defaults)}")
    return {**defaults, **given}


def _slogans(path: Path, cols: dict[str, str], model: str | None, prompt: str | None,
             batch_size: int) -> dict[str, str]:
    """theorem_id -> the chosen slogan (preferred model and prompt first, then file order)."""
    best: dict[str, tuple[int, str]] = {}
    for r in _rows(path, cols, batch_size):
        text = _text(r["slogan"]).strip()
        if r["theorem_id"] is None or not text:
            continue
        if model is not None and r["model"] != model:
            continue
        rank = int(prompt is not None and r["prompt_id"] == prompt)
        tid = str(r["theorem_id"])
        if tid not in best or rank > best[tid][0]:
            best[tid] = (rank, text)
    return {tid: text for tid, (_, text) in best.items()}


def _papers(path: Path, cols: dict[str, str], batch_size: int) -> dict[str, dict[str, Any]]:
    papers = {}
    for r in _rows(path, cols, batch_size):
        pid = _text(r["paper_id"]).strip()
        if not pid:
            continue
        categories = _strings(r["categories"], re.compile(r"\s+"))
        primary = _text(r["primary_category"]).strip()
        if primary:
            categories = [primary] + [c for c in categories if c != primary]
        journal = " ".join(_text(r["journal_ref"]).split())
        papers[pid] = {
            "paper_title": " ".join(_text(r["title"]).split()),
            "authors": _strings(r["authors"], _AUTHOR_SPLIT),
            "year": year_of(r["year"]) or year_of(r["last_updated"]),
            "categories": categories,
            "citations": citations(r["citations"]),
            "journal_ref": journal or None,
            "link": _text(r["link"]).strip(),
        }
    return papers


def read(root: Path, **options) -> Iterator[Document]:
    """Yield one Document per theorem of ``root``/theorem.parquet; see the module docstring for the options."""
    root = Path(root)
    tcols = _columns(THEOREM_COLUMNS, options.get("theorem_columns"), "theorem_columns")
    scols = _columns(SLOGAN_COLUMNS, options.get("slogan_columns"), "slogan_columns")
    pcols = _columns(PAPER_COLUMNS, options.get("paper_columns"), "paper_columns")
    theorem_path = root / options.get("theorem_file", "theorem.parquet")
    slogan_path = root / options.get("slogan_file", "theorem_slogan.parquet")
    paper_path = root / options.get("paper_file", "paper.parquet")
    _require(theorem_path, tcols, ("theorem_id", "paper_id", "body"))
    _require(slogan_path, scols, ("theorem_id", "slogan"))
    _require(paper_path, pcols, ("paper_id",))
    source = options.get("source", SOURCE)
    license_ = options.get("license", LICENSE)
    batch_size = int(options.get("batch_size", 8192))

    slogans = _slogans(slogan_path, scols, options.get("slogan_model"), options.get("slogan_prompt"), batch_size)
    papers = _papers(paper_path, pcols, batch_size)
    seen: set[str] = set()
    for rowno, r in enumerate(_rows(theorem_path, tcols, batch_size), start=1):
        tid = _text(r["theorem_id"]).strip()
        pid = _text(r["paper_id"]).strip()
        body = _text(r["body"])
        if not tid or not pid or not body.strip():
            continue  # a theorem without id, paper or statement cannot be cited or searched
        name = " ".join(_text(r["name"]).split())
        doc_id = f"{source}:{pid}#{name}" if name else f"{source}:{pid}#{tid}"
        if doc_id in seen:
            doc_id = f"{source}:{pid}#{tid}"
            if doc_id in seen:
                raise ValueError(f"{theorem_path}: row {rowno}: duplicate theorem_id {tid!r} in paper {pid!r}")
        seen.add(doc_id)
        paper = papers.get(pid, {})
        link = (_text(r["link"]).strip() or paper.get("link") or f"https://arxiv.org/abs/{pid}")
        extra = {k: v for k, v in paper.items() if k != "link"}
        extra.update({"paper_id": pid, "theorem_id": tid})
        label = _text(r["label"]).strip()
        if label:
            extra["label"] = label
        yield Document(
            id=doc_id, source=source, kind=kind_of(name), name=name, title=paper.get("paper_title", ""),
            body=body, statement=latex_to_text(body), link=link, license=license_,
            slogan=slogans.get(tid, ""), file=theorem_path.name, line=rowno, extra=extra)
