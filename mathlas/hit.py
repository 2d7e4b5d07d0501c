"""``Hit``: the one result shape the library, the CLI's ``--json`` and the MCP tools all emit."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# The keys of a hit in ``mathlas search --json`` output (and the MCP search tool).
JSON_KEYS = ("id", "source", "kind", "name", "title", "text", "link", "license", "score", "ranks")


@dataclass
class Hit:
    """One ranked document. ``ranks`` gives each channel's 1-based rank (None: not in that channel's list)."""

    id: str
    source: str
    kind: str
    name: str
    title: str
    text: str          # a short snippet of the retrieval text
    body: str          # the statement as written in its source (LaTeX or Lean)
    link: str
    license: str
    score: float
    ranks: dict[str, int | None] = field(default_factory=dict)
    slogan: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The compact shape of ``--json`` search output."""
        d = asdict(self)
        return {k: d[k] for k in JSON_KEYS}
