"""The text content of MCP answers: what a client model reads when it reads text.

Every answer carries structured content (the JSON its output schema describes). The text block
beside it is a second rendering of the same answer. For the search tools it is a listing, one line a
hit, since a model reads a listing faster than JSON and a second copy of the JSON would double what
it pays (a hit's line is ``mathlas.render.line``, the renderer the CLI uses too); for the other
tools it is the JSON, compact.
"""
from __future__ import annotations

import json
from typing import Any

from mathlas.render import line, search_notes

SEARCH_TOOLS = ("search_existing_math", "search_formal_math")


def compact_json(data: Any) -> str:
    """``data`` as compact JSON (no spaces: the SDK's indented default costs some 20% more)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def render(tool: str, data: dict[str, Any], arguments: dict[str, Any]) -> str:
    """The text block of ``tool``'s answer ``data`` (its structured content)."""
    if tool in SEARCH_TOOLS and isinstance(data.get("hits"), list):
        return search_listing(data, int(arguments.get("offset") or 0))
    return compact_json(data)


def search_listing(data: dict[str, Any], offset: int = 0) -> str:
    """A search answer as lines: a header, one line a hit, one line a suggested call."""
    hits = data["hits"]
    where = f"{data.get('bundle')}, {data.get('mode')}"
    if not hits:
        lines = [f"No hits ({where})."]
    else:
        notes = "".join(f" {note};" for note in search_notes(data, offset))  # searched as, how far to trust the hits
        lines = [f"Hits {offset + 1}-{offset + len(hits)} ({where});{notes} get_by_id(id) gives the whole statement:"]
        lines += [line(offset + i + 1, h) for i, h in enumerate(hits)]
    for step in data.get("next") or []:
        if step["tool"] != "get_by_id":  # the header says how to open a hit
            lines.append(f"next: {step['tool']}({compact_json(step['arguments'])}): {step['why']}")
    return "\n".join(lines)
