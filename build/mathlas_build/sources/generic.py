"""Generic reader: one Document per row of a JSON Lines or Parquet file, for corpora that have no reader of their own.

Recipe options (all but ``source`` optional)::

    read(root, path="statements.jsonl", source="mysource", license="CC-BY-4.0")

``path``        the file, relative to ``root`` (or absolute); when left out, ``root`` itself must be the file
                (a recipe's ``path = "mydata/rows.jsonl"`` arrives as ``root``).
``source``      the source key: ``Document.source`` and the id prefix (required; this module's SOURCE is "generic").
``format``      ``jsonl`` (also ``.ndjson``/``.json``, a JSON array file, and ``.gz`` of those) or ``parquet``;
                guessed from the file name when left out.
``license``     license of every row (a row's own ``license`` field wins).
``prefix_ids``  True (default): ids get ``<source>:`` in front unless they already start with it.
``id_field``, ``name_field``, ``body_field``, ``kind_field``, ``link_field``, ``slogan_field``, ``title_field``,
``keywords_field``, ``license_field``
                the row fields to read; defaults ``id``, ``name``, ``body`` (falling back to ``statement`` when no
                ``body_field`` is given), ``kind``, ``link``, ``slogan``, ``title``, ``keywords``, ``license``.
``default_kind`` kind when a row has none (``statement``).
``link_template`` e.g. ``https://example.org/{id}`` for rows without a link (``{id}`` is the id without prefix).
``macros``      LaTeX macros: a dict ``name -> (nargs, replacement)``, or a path (relative to root) to a .tex/.sty
                file read with ``parse_macros``.
``batch_size``  Parquet rows per batch (rows are converted to Python objects one batch at a time).
``attribution`` not used here; the build CLI puts it in the bundle manifest.

The body is the raw text (LaTeX or plain); ``statement = latex_to_text(body, macros)``. Every other scalar field of a
row goes to ``Document.extra``. ``Document.line`` is the 1-based row number (the line number for JSON Lines).
A row without id or body, a duplicate id, or a line that is not a JSON object raises ValueError naming file and row.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any
from collections.abc import Iterator

from mathlas_build.document import Document
from mathlas_build.latex import Macros, latex_to_text, parse_macros

SOURCE = "generic"
LICENSE = ""
ATTRIBUTION = "rows of a user-supplied JSON Lines / Parquet file"

_DEFAULT_FIELDS = {"id": "id", "name": "name", "kind": "kind", "link": "link", "slogan": "slogan",
                   "title": "title", "keywords": "keywords", "license": "license"}
_BODY_FALLBACK = ("body", "statement")
_SCALARS = (str, int, float, bool)


def _format_of(path: Path) -> str:
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(".parquet") or name.endswith(".pq"):
        return "parquet"
    if name.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    raise ValueError(f"{path}: cannot tell the format from the file name; pass format='jsonl' or 'parquet'")


def _open_text(path: Path):
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def _jsonl_rows(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed object) for each non-blank line; a file starting with ``[`` is one JSON array."""
    with _open_text(path) as fh:
        first = ""
        while True:
            ch = fh.read(1)
            if not ch or not ch.isspace():
                first = ch
                break
        fh.seek(0)
        if first == "[":
            try:
                rows = json.load(fh)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}: bad JSON array at line {e.lineno}: {e.msg}") from e
            yield from enumerate(rows, start=1)
            return
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}: line {lineno}: bad JSON: {e.msg} (column {e.colno})") from e


def _parquet_rows(path: Path, batch_size: int) -> Iterator[tuple[int, Any]]:
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    row = 0
    for batch in pf.iter_batches(batch_size=batch_size):
        for rec in batch.to_pylist():
            row += 1
            yield row, rec


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _load_macros(root: Path, macros: Any) -> Macros | None:
    if macros is None or isinstance(macros, dict):
        return macros
    p = Path(macros)
    if not p.is_absolute():
        p = root / p
    return parse_macros(p.read_text(encoding="utf-8", errors="replace"))


def read(root: Path, **options) -> Iterator[Document]:
    """Yield one Document per row; see the module docstring for the options."""
    root = Path(root)
    source = options.get("source")
    if not source or not isinstance(source, str):
        raise ValueError("generic reader: option 'source' (the source key, e.g. source='mysource') is required")
    path = options.get("path")
    if path is None:
        path = root
    else:
        path = Path(path)
        if not path.is_absolute():
            path = (root / path) if root.is_dir() else (root.parent / path)
    if not path.is_file():
        raise FileNotFoundError(f"generic reader ({source}): file not found: {path}")
    fmt = (options.get("format") or _format_of(path)).lower()
    if fmt in ("json", "ndjson"):
        fmt = "jsonl"
    if fmt not in ("jsonl", "parquet"):
        raise ValueError(f"{path}: unknown format {fmt!r} (jsonl or parquet)")

    fields = {k: options.get(f"{k}_field", v) for k, v in _DEFAULT_FIELDS.items()}
    body_fields = (options["body_field"],) if options.get("body_field") else _BODY_FALLBACK
    used = set(fields.values()) | set(body_fields)
    license_ = options.get("license", "") or ""
    default_kind = options.get("default_kind", "statement")
    link_template = options.get("link_template", "") or ""
    prefix_ids = options.get("prefix_ids", True)
    macros = _load_macros(root, options.get("macros"))
    batch_size = int(options.get("batch_size", 4096))
    try:
        rel = path.relative_to(root).as_posix() if root.is_dir() else path.name
    except ValueError:
        rel = path.name

    rows = _jsonl_rows(path) if fmt == "jsonl" else _parquet_rows(path, batch_size)
    unit = "line" if fmt == "jsonl" else "row"
    seen: dict[str, int] = {}
    prefix = f"{source}:"
    for rowno, rec in rows:
        where = f"{path}: {unit} {rowno}"
        if not isinstance(rec, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(rec).__name__}")
        raw_id = _text(rec.get(fields["id"])).strip()
        if not raw_id:
            raise ValueError(f"{where}: missing id (field {fields['id']!r})")
        body_field = next((f for f in body_fields if _text(rec.get(f)).strip()), None)
        if body_field is None:
            raise ValueError(f"{where}: id {raw_id!r}: missing body (field {' or '.join(map(repr, body_fields))})")
        body = _text(rec.get(body_field))
        doc_id = raw_id if (not prefix_ids or raw_id.startswith(prefix)) else prefix + raw_id
        if doc_id in seen:
            raise ValueError(f"{where}: duplicate id {doc_id!r} (first at {unit} {seen[doc_id]})")
        seen[doc_id] = rowno
        bare_id = doc_id[len(prefix):] if doc_id.startswith(prefix) else doc_id
        kw = rec.get(fields["keywords"])
        if isinstance(kw, str):
            keywords = [w.strip() for w in kw.split(",") if w.strip()]
        elif isinstance(kw, (list, tuple)):
            keywords = [_text(w).strip() for w in kw if _text(w).strip()]
        else:
            keywords = []
        link = _text(rec.get(fields["link"])).strip()
        if not link and link_template:
            link = link_template.format(id=bare_id)
        extra = {k: v for k, v in rec.items()
                 if k not in used and isinstance(v, _SCALARS) and not (isinstance(v, str) and not v)}
        yield Document(
            id=doc_id, source=source, kind=_text(rec.get(fields["kind"])).strip() or default_kind,
            name=_text(rec.get(fields["name"])).strip(), title=_text(rec.get(fields["title"])).strip(),
            body=body, statement=latex_to_text(body, macros),
            link=link, license=_text(rec.get(fields["license"])).strip() or license_,
            slogan=_text(rec.get(fields["slogan"])).strip(), keywords=keywords,
            file=rel, line=rowno, extra=extra,
        )
