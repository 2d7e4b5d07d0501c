"""Hits and documents as text: the one renderer every text surface calls.

``mathlas search`` / ``mathlas lean search`` print ``listing`` (a block per hit), the MCP search
tools' text content is ``line`` per hit (one line each: a model pays for every character), and
``mathlas show`` prints ``document``; what a search answer says beside its hits (what the query was
searched as, how far to trust the hits) is ``search_notes``, on stderr in the CLI and in the first line
of MCP's listing. Each reads a hit in its JSON form (``dataclasses.asdict`` of
``mathlas.hit.Hit``, or a ``HitSummary``), the same fields ``--json``, MCP's structured content and
the HTTP API carry, so a change of the hit's shape cannot break one text surface silently. A Lean
hit is one whose ``fields`` hold a ``signature``: it shows its kind, module, signature, docstring
(Markdown, shown as plain text: ``mathlas.headings.plain_markdown``) and Stacks tags instead of a
text snippet, and the names people use for it (its ``aliases``, a few, each cut short:
``mathlas.hit.known_as``) as "also known as".

Every surface names a document by its ``heading`` beside the id (left out where the id already says
it: a Lean name, a Metamath label without a title) and places it by its ``context``: the fields
``mathlas.headings.describe`` makes, the same for a hit and for the document (``name`` and ``title``
are the bundle's columns and mean different things per source).
"""
from __future__ import annotations

import re
import textwrap
from typing import Any
from collections.abc import Mapping

from mathlas.headings import describe, plain_markdown
from mathlas.hit import aliases_list, deprecation, known_as

SIGNATURE_CHARS = 300   # a Lean signature in a listing (the JSON has up to formal.FIELD_CHARS)


def _lean(h: Mapping[str, Any]) -> bool:
    """A Lean declaration: its fields hold a signature, which may be empty (``def Primes := {p // p.Prime}``
    has no binders and no type written: it was printed as an informal hit, its module as its title)."""
    return "signature" in (h.get("fields") or {})


def _described(h: Mapping[str, Any]) -> tuple[str, str, str]:
    """(heading, label, context) of a hit or document in its JSON form; made from its columns when
    the form lacks them (a hit written by an older mathlas)."""
    if "heading" in h:
        return h.get("heading") or "", h.get("label") or "", h.get("context") or ""
    return tuple(describe(h["id"], h.get("source") or "", h.get("kind") or "", h.get("name") or "",
                          h.get("title") or "", h.get("text") or h.get("snippet") or ""))


def _heading(h: Mapping[str, Any]) -> str:
    """The heading to show beside the id: none when the id already says it (``lean:<name>``)."""
    heading = _described(h)[0]
    return "" if not heading or h["id"].endswith(":" + heading) else heading


def also_known_as(h: Mapping[str, Any]) -> str:
    """``A; B``: the first few aliases (``known_as``) of a Lean hit (under ``fields``) or of its
    summary (``aliases``); empty when it has none."""
    return "; ".join(known_as(h.get("aliases") or (h.get("fields") or {}).get("aliases")))


def also_in(h: Mapping[str, Any]) -> str:
    """``also in PlanetMath `FundamentalTheoremOfAlgebra`, Metamath `fta```: where else the hit's fact
    is stated (its ``also_in``: copies, or a summary's ids; ``mathlas.groups.also_in_line``)."""
    from mathlas.groups import also_in_line

    return also_in_line(h.get("also_in") or [])


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
        heading, _, context = _described(h)
        lines = [f"{i:>2}. {h['id']}  {_heading(h)}".rstrip()]
        where = (fields.get("module") or context) if _lean(h) else context
        meta = " · ".join(x for x in (h.get("source"), h.get("kind"), where if where != heading else "") if x)
        why = why_here(h, positions)
        tags = fields.get("stacks") or []
        lines.append(f"    {meta}" + (f"  [{why}]" if why else "") + (f"  ({', '.join(tags)})" if tags else ""))
        if h.get("link"):
            lines.append(f"    {h['link']}")
        aka = also_known_as(h)
        if aka:
            lines.append(f"    also known as: {aka}")
        if h.get("also_in"):
            lines.append(f"    {also_in(h)}")
        if deprecation(fields):
            lines.append(f"    {deprecation(fields)}")
        if _lean(h):
            lines += textwrap.wrap(_cut(fields["signature"] or "", SIGNATURE_CHARS), width=width - 4, max_lines=3,
                                   placeholder=" …", initial_indent="    ", subsequent_indent="      ")
            if fields.get("docstring"):
                lines += textwrap.wrap(plain_markdown(fields["docstring"]), width=width - 4, max_lines=2, placeholder=" …",
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
    heading = _heading(h)
    if heading:
        head += f" · {heading}"
    fields = h.get("fields") or {}
    aka = also_known_as(h)
    if aka:
        head += f" [also known as: {aka}]"
    if h.get("also_in"):
        head += f" [{also_in(h)}]"
    said = h.get("deprecated") or deprecation(fields)  # a summary's, or a full hit's fields
    if said:
        head += f" [{said}]"
    text = h["snippet"] if "snippet" in h else fields.get("signature") or h.get("text") or ""
    out = f"{head}: {text}" if text else head
    out += f" ({h['score']:.4g})"
    if "link" in h:  # a full hit
        out += " " + " ".join(x for x in (h.get("link"), h.get("license")) if x)
    return out


# how a generated Lean declaration came to be (the reader's ``generated``), as ``show`` names it
_GENERATED = {"to_additive": "generated by @[to_additive] from", "simps": "generated by @[simps] from",
              "field": "a field of", "constructor": "a constructor of",
              "irreducible_def": "generated by irreducible_def from", "ext_iff": "generated by @[ext] from",
              **{t: f"generated by @[{t}] from" for t in ("ext", "reassoc", "elementwise", "to_app", "to_fun",
                                                         "mk_iff")}}


def document(doc: Mapping[str, Any]) -> str:
    """A whole document as ``mathlas show`` prints it: id and heading, source, kind and context,
    licence, then the statement as its source writes it (a Lean declaration: its signature, docstring
    as plain text, and module)."""
    fields = doc.get("fields") or {}
    heading, _, context = _described(doc)
    lean = doc.get("source") == "lean"
    out = [f"{doc['id']}  {_heading(doc)}".rstrip(),
           " · ".join(x for x in (doc.get("source"), doc.get("kind"), "" if lean else context) if x)]
    if doc.get("link"):
        out.append(doc["link"])
    out.append(f"license: {doc.get('license') or 'unknown'}")
    if doc.get("slogan"):
        out.append(f"\nslogan: {doc['slogan']}")
    if fields.get("module") or (lean and context):
        out.append(f"module: {fields.get('module') or context}")
    if fields.get("aliases"):
        out.append("also known as: " + "; ".join(aliases_list(fields["aliases"])))
    if deprecation(fields):
        out.append(deprecation(fields))
    if fields.get("alias_of"):  # an alias: its signature is the statement it stands for
        out.append(f"alias of: {fields['alias_of']}")
    if lean and fields.get("generated") and fields.get("generated_from"):  # made by Lean from what its link shows
        said = _GENERATED.get(fields["generated"], f"generated ({fields['generated']}) from")
        out.append(f"{said}: lean:{fields['generated_from']}")
    if fields.get("formal"):
        out.append("Lean declarations tagged with it: " + ", ".join(fields["formal"]))
    if fields.get("docstring"):
        out.append("\n" + plain_markdown(fields["docstring"]).strip())
    body = (doc.get("body") or "").strip()
    out.append("\n" + (body if lean else statement_text(body)))
    sig = " ".join(str(fields.get("signature") or "").split())
    # what `alias ⟨_, x⟩ := t` states, or a declaration with the section variables its header does not show
    if lean and sig and (fields.get("alias_of") or sig not in " ".join(body.split())):
        out.append(f"  -- states {fields['signature']}")
    return "\n".join(out) + "\n"


# Math the terminal keeps as its source writes it: $...$, $$...$$, \\[...\\], \\(...\\) and display environments.
_MATH_ENVS = ("equation|align|alignat|aligned|gather|gathered|multline|eqnarray|displaymath|math|array|cases|"
              "pmatrix|bmatrix|vmatrix|matrix|smallmatrix|CD|xy|xymatrix")
_MATH = re.compile(r"\$\$.*?\$\$|(?<!\\)\$(?:\\.|[^$\\])*\$|\\\[.*?\\\]|\\\(.*?\\\)"
                   rf"|\\begin\{{({_MATH_ENVS})\*?\}}.*?\\end\{{\1\*?\}}", re.S)
_LIST = re.compile(r"\\begin\{(enumerate|itemize|description)\}(?:\[[^\]]*\])?|\\end\{(?:enumerate|itemize|description)\}"
                   r"|\\item\b(?:\s*\[([^\]]*)\])?")
_UNWRAP = re.compile(r"\\(?:emph|textit|textbf|textsl|textsc|textup|textrm|textsf|text|mbox|texttt|underline|PMlinkescapetext)"
                     r"\s*\{([^{}]*)\}|\{\s*\\(?:em|it|bf|sl|sc|rm|sf|tt|normalfont|small|large)\s+([^{}]*)\}")
_TEXT_SUBS = [
    (re.compile(r"(?<!\\)%[^\n]*"), ""),                                       # comments
    (re.compile(r"\\label\{[^}]*\}"), ""),
    (re.compile(r"\\(?:eq)?ref\{([^}]*)\}"), r"(\1)"),
    (re.compile(r"\\cite(?:\[[^\]]*\])?\{([^}]*)\}"), r"[\1]"),
    (re.compile(r"\\PMlink(?:name|id|external|tofile)\{([^}]*)\}\{[^}]*\}"), r"\1"),
    (re.compile(r"\\PMlinkescape(?:word|phrase)\{[^}]*\}"), ""),
    (re.compile(r"\\bibitem(?:\[[^\]]*\])?\{([^}]*)\}"), "\x01[\\1] "),
    (re.compile(r"\\begin\{thebibliography\}\{[^}]*\}"), "\x02References:"),
    (re.compile(r"\\(?:noindent|medskip|smallskip|bigskip|hfill|quad|qquad|newline|par)\b"), " "),
    (re.compile(r"\\begin\{tabular\*?\}(?:\[[^\]]*\])?\{(?:[^{}]|\{[^{}]*\})*\}"), "\x02"),  # its column spec goes
    (re.compile(r"\\begin\{(?!enumerate|itemize|description)[A-Za-z*]+\}(?:\[[^\]]*\])?"
                r"|\\end\{(?!enumerate|itemize|description)[A-Za-z*]+\}"), "\x02"),  # theorem, proof, center...
    (re.compile(r"(\\item\b(?:\s*\[[^\]]*\])?)[\s\x02]*"), r"\1 "),  # no blank line opening an item
    (re.compile(r"(?<!\\)&"), " | "),                                          # a tabular's column break
    (re.compile(r"\\\\"), "\x01"), (re.compile(r"---"), "—"), (re.compile(r"--"), "–"),
    (re.compile(r"``"), "“"), (re.compile(r"''"), "”"), (re.compile(r"(?<!\\)~"), " "),
    (re.compile(r"\\([$%&_#{}])"), r"\1"),
]


def statement_text(body: str) -> str:
    """A statement's LaTeX source as ``mathlas show`` prints it in a terminal: math kept as written
    (``$IM = M$``), the structure around it made readable: ``enumerate`` / ``itemize`` / ``description``
    as numbered or bulleted lines indented by depth, emphasis and text macros unwrapped, references,
    citations and links as their keys, comments and layout commands dropped, paragraphs kept. The
    ``body`` field of ``--json``, MCP and the HTTP API stays the source as written."""
    maths: list[str] = []

    def keep(m: re.Match) -> str:
        maths.append(" ".join(m.group(0).split()) if m.group(0).startswith("$") else m.group(0))
        return f"\x03{len(maths) - 1}\x04"

    text = _MATH.sub(keep, body)
    text = re.sub(r"\n[ \t]*\n\s*", "\x02", text)  # a blank line: a paragraph
    for pattern, repl in _TEXT_SUBS:
        text = pattern.sub(repl, text)
    for _ in range(3):  # nested \emph{\textbf{..}}
        text = _UNWRAP.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)
    out, stack, at = [], [], 0
    for m in _LIST.finditer(text):
        out.append(text[at:m.start()])
        at = m.end()
        if m.group(0).startswith("\\begin"):
            stack.append([m.group(1), 0])
        elif m.group(0).startswith("\\end"):
            if stack:
                stack.pop()
            out.append("\x02")
        else:
            kind = stack[-1] if stack else ["itemize", 0]
            kind[1] += 1
            label = m.group(2)
            mark = (f"{label}:" if label else "•") if kind[0] == "description" else \
                f"{kind[1]}." if kind[0] == "enumerate" else (f"{label}" if label else "•")
            out.append("\x01\x05" + "   " * max(0, len(stack) - 1) + "  " + mark + " ")  # \x05: keep the indent
    out.append(text[at:])
    text = "".join(out).replace("{", "").replace("}", "")
    lines = []
    for para in text.split("\x02"):
        rows = [_row(r) for r in para.split("\x01")]
        rows = [r for r in rows if r.strip()]
        if rows:
            lines.append("\n".join(rows))
    text = "\n\n".join(lines)
    return re.sub("\x03(\\d+)\x04", lambda m: maths[int(m.group(1))], text)


def _row(r: str) -> str:
    """One line of ``statement_text``: spaces collapsed, a list item's indent (after ``\\x05``) kept."""
    if not r.startswith("\x05"):
        return " ".join(r.split())
    body = r[1:]
    return body[:len(body) - len(body.lstrip())] + " ".join(body.split())


def search_notes(answer: Any) -> list[str]:
    """What a search answer (``SearchResult``, ``FormalSearchResult`` or its JSON form) says beside its
    hits, one line each, both left out when there is nothing to say: what the query was searched as
    (``expanded``: misspelt names corrected, abbreviations expanded), then, when there are hits, how far
    to trust them (``mathlas.ranking.confidence``): ``likely among these hits, but not sure (match: weak,
    confidence 0.66)``, ``a clear match: most likely the first hit (match: strong, confidence 0.95)``."""
    def get(key: str) -> Any:
        return answer.get(key) if isinstance(answer, Mapping) else getattr(answer, key, None)

    notes = [get("expanded")] if get("expanded") else []
    match = get("match") or "strong"
    if get("hits"):
        note = STRONG_NOTE if match == "strong" else get("note") or ""
        notes.append(f"{note} (match: {match}, confidence {float(get('confidence') or 0):.2f})".lstrip())
    return notes


# what a strong answer says (its ``note`` is empty): on the judged collection's check queries a strong
# answer's first hit is right about nine times in ten (docs/benchmarks.md, "Answers you can trust")
STRONG_NOTE = "a clear match: most likely the first hit"


def _cut(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 2].rstrip() + " …"
