"""The 1000-plus list (``shared/corpora/1000-plus/_thm/Q<wikidata>.md``, Unlicense): named theorems and
the formalizations they list — Lean declaration names and Metamath labels — for training pairs.

Each file is a ``# Title`` line and YAML front matter; the title line is a YAML comment, so it is
read by hand before the YAML is parsed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

LICENSE = "Unlicense"
ATTRIBUTION = "1000+ theorems list (github 1000-plus/1000-plus.github.io @ 8e04b97d), Unlicense"

_TITLE = re.compile(r"^#\s+(.+?)\s*$", re.M)
_MM_URL = re.compile(r"/mpeuni/([^/]+)\.html")


@dataclass
class NamedTheorem:
    wikidata: str
    title: str
    lean: list[str] = field(default_factory=list)       # fully qualified Lean names
    metamath: list[str] = field(default_factory=list)   # set.mm labels


def read(root: Path) -> list[NamedTheorem]:
    """Every ``_thm/*.md`` entry with a title, in file-name order."""
    import yaml

    out = []
    for p in sorted(Path(root, "_thm").glob("*.md")):
        text = p.read_text(encoding="utf-8")
        m = _TITLE.search(text)
        if not m:
            continue
        try:
            meta = yaml.safe_load(text.strip().strip("-")) or {}
        except yaml.YAMLError:
            continue
        lean = [i for e in meta.get("lean") or [] for i in (e.get("identifiers") or []) if isinstance(i, str)]
        mm = [u.group(1) for e in meta.get("metamath") or [] for u in [_MM_URL.search(str(e.get("url", "")))] if u]
        out.append(NamedTheorem(str(meta.get("wikidata") or p.stem), m.group(1), lean, mm))
    return out
