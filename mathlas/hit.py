"""The one result shape: ``Hit`` (a ranked document, compact) and ``Document`` (all of it).

The library's ``Bundle.search`` returns ``Hit``s and ``Bundle.get`` a ``Document``; the tools put
the same classes into their results, so ``mathlas search --json``, the MCP tools' structured
content and the HTTP API carry the same keys. What a source knows beyond the common fields (a Lean
declaration's module and signature, a paper's authors) rides in ``fields``, never in another class.

Every hit and document also says what it is called, one meaning per field on every surface:
``heading`` (what a person reads first), ``label`` (the source's own name or id for it) and
``context`` (breadcrumb, category or module), made from its id, source, kind, name and title by
``mathlas.headings.describe`` when the object is made. ``name`` and ``title`` are the bundle's columns
as each source's reader filled them (their meaning differs by source: docs/bundle-format.md), kept
for the programs that read them; a Lean declaration's ``name`` is its qualified name everywhere, a
document's ``aliases`` field is a list, as a hit's is, and the bundle's ``label`` column (a statement's
``\\label`` in its LaTeX source) is its ``fields["tex_label"]``.

A hit and a document also say what their ``link`` leads to (``link_kind``, ``link_kind_of``): ``page``
(the statement at its source), ``search`` (a search of the source's site for the statement's words:
ProofWiki's pages are not known to the build, so its link is ProofWiki's own search) or ``""`` (no
link); every text surface says a search is one (``mathlas.render.link_text``).

``HitSummary`` is a view of a ``Hit``, not another result: the few fields an agent needs to choose
which hits to open (``summarize`` makes it, here and nowhere else). The MCP search tools answer with
it by default, since an agent pays for every character it reads; ``detail="full"`` gives the hits.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Mapping

from mathlas.headings import describe

# The metadata columns every document has; the others (bundle.OPTIONAL_META_COLUMNS) go to ``fields``.
CORE_COLUMNS = ("id", "source", "kind", "name", "title", "body", "text", "slogan", "link", "license")
SNIPPET_CHARS = 280
SUMMARY_SNIPPET_CHARS = 120    # at most 160 (issue 13); 120 keeps a k=10 answer under 3,000 characters
SUMMARY_ID_CHARS = 40          # an id longer than this takes its extra characters from the summary's snippet
KNOWN_AS = 3                   # a Lean hit's aliases a summary or a listing shows, each cut to KNOWN_AS_CHARS
KNOWN_AS_CHARS = 80
# what a link leads to (``link_kind``): the statement's own page, or a search of its source's site
LINK_KINDS = ("page", "search")
_SITE_SEARCH = re.compile(r"[?&]search=")


@dataclass
class Hit:
    """One ranked document. ``text`` is a snippet of the retrieval text; ``ranks`` gives each
    channel's 1-based rank (None: not in that channel's list); ``fields`` what the source knows
    beyond the common fields, for the tools that show it (formal: module, signature, docstring,
    stacks, generated, aliases); ``also_in`` where else the same fact is stated (``{"source",
    "label", "id"}`` each: ``mathlas.groups``; empty when nowhere)."""

    id: str
    source: str
    kind: str
    heading: str = field(default="", kw_only=True)
    label: str = field(default="", kw_only=True)
    context: str = field(default="", kw_only=True)
    name: str
    title: str
    text: str
    link: str
    link_kind: str = field(default="", kw_only=True)   # page, search or "" (no link): link_kind_of
    license: str
    score: float
    ranks: dict[str, int | None] = field(default_factory=dict)
    fields: dict[str, Any] = field(default_factory=dict)
    also_in: list[dict[str, str]] = field(default_factory=list, kw_only=True)

    def __post_init__(self) -> None:
        _described(self)
        self.link_kind = self.link_kind or link_kind_of(self.link, self.fields)


@dataclass
class Document:
    """A whole document: the statement as its source writes it (``body``), the retrieval text, the
    source's slogan when it has one, and where it comes from. ``fields`` holds what the source knows
    beyond that (paper: authors, year...; formal: module, signature, docstring, dependencies...)."""

    id: str
    source: str
    kind: str
    heading: str = field(default="", kw_only=True)
    label: str = field(default="", kw_only=True)
    context: str = field(default="", kw_only=True)
    name: str
    title: str
    body: str
    slogan: str
    text: str
    link: str
    link_kind: str = field(default="", kw_only=True)   # page, search or "" (no link): link_kind_of
    license: str
    bundle: str
    fields: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _described(self)
        self.link_kind = self.link_kind or link_kind_of(self.link, self.fields)
        if isinstance(self.fields.get("aliases"), str):   # the column holds "A; B": a list, as on a hit
            self.fields["aliases"] = aliases_list(self.fields["aliases"])
        if "label" in self.fields:   # the column: the statement's \label in its LaTeX source, not ``label``
            self.fields["tex_label"] = self.fields.pop("label")


def _described(x: Hit | Document) -> None:
    """Fill ``heading``, ``label`` and ``context`` (those not given) from the id, source, kind, name
    and title; a Lean declaration's ``name`` is its qualified name (the column holds its words)."""
    d = describe(x.id, x.source, x.kind, x.name, x.title, x.text)
    x.heading = x.heading or d.heading
    x.label = x.label or d.label
    x.context = x.context or d.context
    if x.source == "lean":
        x.name = d.label


def link_kind_of(link: str | None, fields: Mapping[str, Any] | None = None) -> str:
    """What ``link`` leads to: ``""`` when there is none; what the document's ``fields["link_kind"]``
    says (a bundle that stores it: the build's ``extra["link_kind"]``); else ``search`` for a link that
    searches its site (``?search=``: ProofWiki's links in bundles that do not store the kind), else
    ``page``."""
    if not link:
        return ""
    said = (fields or {}).get("link_kind")
    if said in LINK_KINDS:
        return said
    return "search" if _SITE_SEARCH.search(link) else "page"


def aliases_list(value: Any) -> list[str]:
    """An ``aliases`` value ("A; B" as the bundle column holds it, or a list) as a list of distinct
    names, whitespace collapsed."""
    items = value if isinstance(value, list) else str(value or "").split("; ")
    return [a for a in dict.fromkeys(" ".join(str(a).split()) for a in items) if a]


# every character str.split() splits on (str.isspace) but the plain space: what collapsing whitespace
# replaces besides runs of spaces (tests/test_hit_reading.py checks the list against str.isspace)
OTHER_SPACES = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_OTHER_SPACE = re.compile(f"[{OTHER_SPACES}]")


def snippet(text: str | None, limit: int = SNIPPET_CHARS) -> str:
    """Whitespace collapsed and cut at a word boundary (with `` …``) when longer than ``limit``."""
    text = text or ""
    if len(text) > limit and not text[0].isspace() and not text[limit].isspace() \
            and text.find("  ", 0, limit + 1) < 0 and not _OTHER_SPACE.search(text, 0, limit + 1):
        # its first limit + 1 characters are words and single spaces, the last one inside a word: the
        # whole text collapsed starts with them, and is longer than ``limit``
        cut = text.rfind(" ", 0, limit)
        return text[:cut if cut > limit // 2 else limit] + " …"
    reach = 2 * limit
    collapsed = ""
    if len(text) > reach:
        # a long text: its beginning collapsed (less a last word the cut may have split) is the start
        # of the whole text collapsed; when it is longer than ``limit`` it holds all the cut reads
        head = text[:reach].split()
        if not text[reach].isspace():
            head = head[:-1]
        collapsed = " ".join(head)
    if len(collapsed) <= limit:
        collapsed = " ".join(text.split())
        if len(collapsed) <= limit:
            return collapsed
    cut = collapsed.rfind(" ", 0, limit)
    return collapsed[:cut if cut > limit // 2 else limit] + " …"


def known_as(aliases: list[str] | None) -> list[str]:
    """The first ``KNOWN_AS`` of a Lean hit's aliases, each cut to ``KNOWN_AS_CHARS``: what a summary,
    a listing or a line shows (the hit itself has them all)."""
    return [snippet(a, KNOWN_AS_CHARS) for a in (aliases or [])[:KNOWN_AS]]


def deprecation(fields: Mapping[str, Any] | None) -> str:
    """``deprecated since 2025-01-01, use lean:Toy.sumTo_succ``: a Lean declaration's deprecation
    (``mathlas.formal.formal_hit``'s ``deprecated`` and ``replaced_by``) as the surfaces say it; ""
    when it is not deprecated."""
    fields = fields or {}
    note = str(fields.get("deprecated") or "")
    if not note:
        return ""
    said = "deprecated" if note == "deprecated" else f"deprecated {note}" if note.startswith("since ") \
        else f"deprecated: {note}"
    return f"{said}, use {fields['replaced_by']}" if fields.get("replaced_by") else said


@dataclass
class HitSummary:
    """A hit cut to what lets an agent choose: the id to open (the part before ":" is the source),
    the kind, the heading, one line of the statement and the score (4 decimals). ``get_by_id`` gives
    the rest: label, context, statement, link, license. A hit whose fact other documents state too
    gives a ``CopiesHitSummary`` (their ids as ``also_in``; the key is left out where there are none:
    an agent pays for every character)."""

    id: str
    kind: str
    heading: str
    snippet: str
    score: float


@dataclass
class CopiesHitSummary(HitSummary):
    """A ``HitSummary`` and the ids of the other statements of the same fact (``also_in``)."""

    also_in: list[str] = field(default_factory=list)


@dataclass
class LeanHitSummary(HitSummary):
    """A Lean hit's summary: a ``HitSummary`` and the names people use for the declaration that its
    own name lacks (``known_as``; empty when none), so an agent sees why it matched. A deprecated
    declaration's adds ``deprecated`` (``DeprecatedLeanHitSummary``; the key is left out for the others)."""

    aliases: list[str] = field(default_factory=list)


@dataclass
class CopiesLeanHitSummary(LeanHitSummary):
    """A ``LeanHitSummary`` and the ids of the other statements of the same fact (``also_in``)."""

    also_in: list[str] = field(default_factory=list)


@dataclass
class DeprecatedLeanHitSummary(LeanHitSummary):
    """A deprecated declaration's ``LeanHitSummary``: ``deprecated`` says so and names the
    replacement (``deprecation``: "deprecated since 2025-01-01, use lean:X")."""

    deprecated: str = ""


@dataclass
class CopiesDeprecatedLeanHitSummary(CopiesLeanHitSummary):
    """A deprecated declaration's ``CopiesLeanHitSummary`` (``deprecated`` as above)."""

    deprecated: str = ""


def summary_copies(also_in: list[dict[str, str]]) -> list[str]:
    """The ids a summary's ``also_in`` carries: the copies the "also in" line names
    (``mathlas.groups.shown_copies``: two a source, six in all); ``detail: "full"`` has every copy.
    With a formal bundle, Nakayama's lemma has seven Mathlib copies: all of them put a k=10 answer
    over its 3,000 characters."""
    from mathlas.groups import shown_copies

    return [c.id for c in shown_copies(also_in)]


def summarize(hit: Hit, limit: int = SUMMARY_SNIPPET_CHARS) -> HitSummary:
    """``hit`` as a ``HitSummary``. The snippet is the signature when the hit has one (Lean), else
    its text without the label and heading it usually starts with, cut at a word boundary so that
    heading and snippet together stay near ``limit`` + 20 characters (a long heading leaves a shorter
    snippet, never under 60), and an id over ``SUMMARY_ID_CHARS`` (Open Logic's paths, PlanetMath's long
    names) shortens it by as much again: a k=10 answer of such hits ("the compactness theorem for
    first-order logic", six of them) stays under its 3,000 characters. A Lean hit
    (``mathlas.formal.formal_hit``: its fields have ``aliases``) gives a ``LeanHitSummary``."""
    text = " ".join(str(hit.fields.get("signature") or hit.text or "").split())
    for lead in (hit.name.strip(), hit.label, hit.heading):
        if lead and text.lower().startswith(lead.lower()):
            text = text[len(lead):].lstrip(" .:;,")
    room = max(60, min(limit, limit + 20 - len(hit.heading) - max(0, len(hit.id) - SUMMARY_ID_CHARS)))
    summary = {"id": hit.id, "kind": hit.kind, "heading": hit.heading, "snippet": snippet(text, room),
               "score": round(hit.score, 4)}
    copies = {"also_in": summary_copies(hit.also_in)} if hit.also_in else {}
    if "aliases" in hit.fields:
        said = deprecation(hit.fields)
        kind = {(False, False): LeanHitSummary, (True, False): CopiesLeanHitSummary,
                (False, True): DeprecatedLeanHitSummary, (True, True): CopiesDeprecatedLeanHitSummary}
        return kind[bool(copies), bool(said)](**summary, aliases=known_as(hit.fields["aliases"]), **copies,
                                              **({"deprecated": said} if said else {}))
    return (CopiesHitSummary if copies else HitSummary)(**summary, **copies)
