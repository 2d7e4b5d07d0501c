"""ProofNet reader (``shared/corpora/proofnet``): 371 undergraduate textbook exercises, informal LaTeX + Lean 3.

One Document per record of ``benchmark/test.jsonl`` and ``benchmark/valid.jsonl``:

* id ``proofnet:<id>`` with the record's id kept as-is, pipe included (``proofnet:Rudin|exercise_3_7``);
* kind ``exercise``; name = book + exercise words (``Rudin|exercise_3_7`` -> ``Rudin exercise 3.7``,
  ``Putnam|exercise_2018_a5`` -> ``Putnam 2018 A5``); title = the textbook;
* body = ``nl_statement`` (LaTeX) as display text (``display.display_tex``), statement = its words; ``extra["formal_statement"]`` = the Lean 3 statement.

ProofNet has no per-statement web page, so ``link`` is empty.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from collections.abc import Iterator

from mathlas_build.display import DisplayAudit, display_tex
from mathlas_build.document import Document
from mathlas_build.latex import latex_to_text

SOURCE = "proofnet"
LICENSE = "MIT"
ATTRIBUTION = ("ProofNet (Azerbayev, Piotrowski, Schoelkopf, Ayers, Radev, Avigad), "
               "github zhangir-azerbayev/ProofNet @ 509ad797, MIT")
SPLITS = ("test", "valid")

BOOKS = {
    "Rudin": "Rudin, Principles of Mathematical Analysis",
    "Munkres": "Munkres, Topology",
    "Dummit-Foote": "Dummit and Foote, Abstract Algebra",
    "Herstein": "Herstein, Topics in Algebra",
    "Axler": "Axler, Linear Algebra Done Right",
    "Artin": "Artin, Algebra",
    "Ireland-Rosen": "Ireland and Rosen, A Classical Introduction to Modern Number Theory",
    "Shakarchi": "Stein and Shakarchi, Complex Analysis",
    "Pugh": "Pugh, Real Mathematical Analysis",
    "Putnam": "Putnam Mathematical Competition",
    "Cambridge-Tripos": "Cambridge Mathematical Tripos",
}


def exercise_name(record_id: str) -> str:
    """``Rudin|exercise_3_7`` -> ``Rudin exercise 3.7``; ``Putnam|exercise_2018_a5`` -> ``Putnam 2018 A5``."""
    book, _, ex = record_id.partition("|")
    book_words = book.replace("-", " and ") if book in ("Dummit-Foote", "Ireland-Rosen") else book.replace("-", " ")
    m = re.fullmatch(r"exercise_(.*)", ex)
    if not m:
        return f"{book_words} {ex.replace('_', ' ')}".strip()
    if book == "Putnam":
        year, _, problem = m.group(1).partition("_")
        return f"Putnam {year} {problem.upper()}".strip()
    return f"{book_words} exercise {m.group(1).replace('_', '.')}"


def read(root: Path, **options) -> Iterator[Document]:
    """Yield one Document per ProofNet record (test split, then valid)."""
    root = Path(root)
    bench = root / "benchmark"
    files = [bench / f"{split}.jsonl" for split in SPLITS]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise FileNotFoundError(f"ProofNet benchmark file(s) not found: {', '.join(missing)}")
    seen: dict[str, str] = {}
    audit = DisplayAudit(SOURCE)
    for f, split in zip(files, SPLITS):
        with f.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{f}: line {lineno}: bad JSON: {e}") from e
                rid = str(rec.get("id") or "").strip()
                body = rec.get("nl_statement") or ""
                if not rid or not body.strip():
                    raise ValueError(f"{f}: line {lineno}: record without id or nl_statement")
                where = f"{f.name}:{lineno}"
                if rid in seen:
                    raise ValueError(f"{f}: line {lineno}: duplicate id {rid!r} (first at {seen[rid]})")
                seen[rid] = where
                book = rid.partition("|")[0]
                extra = {"formal_statement": rec.get("formal_statement") or "", "split": split, "book": book}
                yield Document(
                    id=f"{SOURCE}:{rid}", source=SOURCE, kind="exercise", name=exercise_name(rid),
                    title=BOOKS.get(book, book), body=audit.checked(display_tex(body.strip())),
                    statement=latex_to_text(body),
                    link="", license=LICENSE, file=f"benchmark/{f.name}", line=lineno, extra=extra,
                )
    audit.report()
