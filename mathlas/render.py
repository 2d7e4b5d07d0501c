"""Hits and documents as text: the one renderer every text surface calls.

``mathlas search`` / ``mathlas lean search`` print ``listing`` (a block per hit), the MCP search
tools' text content is ``line`` per hit (one line each: a model pays for every character), and
``mathlas show`` prints ``document``. Each reads a hit in its JSON form (``dataclasses.asdict`` of
``mathlas.hit.Hit``, or a ``HitSummary``), the same fields ``--json``, MCP's structured content and
the HTTP API carry, so a change of the hit's shape cannot break one text surface silently. A Lean
hit is one whose ``fields`` hold a ``signature``: it shows its kind, module, signature, docstring
and Stacks tags instead of a text snippet, and the names people use for it (its ``aliases``, a few,
each cut short: ``mathlas.hit.known_as``) as "also known as".
"""
from __future__ import annotations

import textwrap
from typing import Any, Mapping

from mathlas.hit import known_as

SIGNATURE_CHARS = 300   # a Lean signature in a listing (the JSON has up to formal.FIELD_CHARS)


def _lean(h: Mapping[str, Any]) -> bool:
    """A Lean declaration: its fields hold a signature, which may be empty (``def Primes := {p // p.Prime}``
    has no binders and no type written: it was printed as an informal hit, its module as its title)."""
    return "signature" in (h.get("fields") or {})


def _name(h: Mapping[str, Any]) -> str:
    """The name to show beside the id: none when the id already says it (Lean: ``lean:<name>``)."""
    name = (h.get("name") or "").strip()
    return "" if not name or h["id"].endswith(name) else name


def also_known_as(h: Mapping[str, Any]) -> str:
    """``A; B``: the first few aliases (``known_as``) of a Lean hit (under ``fields``) or of its
    summary (``aliases``); empty when it has none."""
    return "; ".join(known_as(h.get("aliases") or (h.get("fields") or {}).get("aliases")))


def why_here(h: Mapping[str, Any], positions: Mapping[str, int]) -> str:
    """Why a hit is in the list: each channel's rank (``lexical #3, dense #1``), or, for a statement
    placed above its own proof by the statement-first rule, ``statement of #N``."""
    ranks = ", ".join(f"{c} #{r}" for c, r in (h.get("ranks") or {}).items() if r is not None)
    of = (h.get("fields") or {}).get("statement_of")
    if of:
        at = positions.get(of)
        lifted = f"statement of #{at}" if at else f"statement of {of}"
        return f"{lifted}; {ranks}" if ranks else lifted
    return ranks


def listing(hits: list[Mapping[str, Any]], start: int = 1, width: int = 100) -> str:
    """Hits as the CLI prints them: a block per hit (id and name; source, kind, title or module and
    why it ranks; link; two lines of its statement, or a Lean declaration's signature and docstring)."""
    if not hits:
        return "no results"
    positions = {h["id"]: start + i for i, h in enumerate(hits)}
    blocks = []
    for i, h in enumerate(hits, start=start):
        fields = h.get("fields") or {}
        name = _name(h) or ("" if _lean(h) else h.get("title") or h.get("kind") or "")
        lines = [f"{i:>2}. {h['id']}  {name}".rstrip()]
        where = fields.get("module") if _lean(h) else h.get("title")
        meta = " · ".join(x for x in (h.get("source"), h.get("kind"), where if where and where != name else "") if x)
        why = why_here(h, positions)
        tags = fields.get("stacks") or []
        lines.append(f"    {meta}" + (f"  [{why}]" if why else "") + (f"  ({', '.join(tags)})" if tags else ""))
        if h.get("link"):
            lines.append(f"    {h['link']}")
        aka = also_known_as(h)
        if aka:
            lines.append(f"    also known as: {aka}")
        if _lean(h):
            lines += textwrap.wrap(_cut(fields["signature"] or "", SIGNATURE_CHARS), width=width - 4, max_lines=3,
                                   placeholder=" …", initial_indent="    ", subsequent_indent="      ")
            if fields.get("docstring"):
                lines += textwrap.wrap(fields["docstring"], width=width - 4, max_lines=2, placeholder=" …",
                                       initial_indent="    -- ", subsequent_indent="       ")
        else:
            text = h.get("text") or h.get("snippet") or ""
            lines += ["    " + x for x in textwrap.wrap(text, width=width - 4, max_lines=2, placeholder=" …")]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def line(rank: int, h: Mapping[str, Any]) -> str:
    """One hit on one line, as MCP text content shows it:
    ``3. stacks:00DV lemma · Nakayama's lemma: Let R be a ring ... (0.0328)``; a Lean hit's text is
    its signature, its aliases (a summary's or a full hit's) follow the kind in brackets
    (``1. lean:inner_mul_le_norm_mul_norm theorem [also known as: Cauchy-Schwarz inequality]: ...``);
    full hits (not summaries) add link and license."""
    head = f"{rank}. {h['id']} {h.get('kind') or '?'}"
    name = _name(h)
    if name:
        head += f" · {name}"
    fields = h.get("fields") or {}
    aka = also_known_as(h)
    if aka:
        head += f" [also known as: {aka}]"
    text = h["snippet"] if "snippet" in h else fields.get("signature") or h.get("text") or ""
    out = f"{head}: {text}" if text else head
    out += f" ({h['score']:.4g})"
    if "link" in h:  # a full hit
        out += " " + " ".join(x for x in (h.get("link"), h.get("license")) if x)
    return out


def document(doc: Mapping[str, Any]) -> str:
    """A whole document as ``mathlas show`` prints it: heading, where it comes from, licence, then
    the statement as its source writes it (a Lean declaration: its signature, docstring and module)."""
    fields = doc.get("fields") or {}
    out = [f"{doc['id']}  {doc.get('name') or ''}".rstrip(),
           " · ".join(x for x in (doc.get("source"), doc.get("kind"), doc.get("title")) if x)]
    if doc.get("link"):
        out.append(doc["link"])
    out.append(f"license: {doc.get('license') or 'unknown'}")
    if doc.get("slogan"):
        out.append(f"\nslogan: {doc['slogan']}")
    if fields.get("module"):
        out.append(f"module: {fields['module']}")
    if fields.get("aliases"):  # a Lean declaration's, "; "-joined as the bundle holds them
        out.append(f"also known as: {fields['aliases']}")
    if fields.get("formal"):
        out.append("Lean declarations tagged with it: " + ", ".join(fields["formal"]))
    if fields.get("docstring"):
        out.append("\n" + fields["docstring"].strip())
    out.append("\n" + (doc.get("body") or "").strip())
    return "\n".join(out) + "\n"


def _cut(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 2].rstrip() + " …"
