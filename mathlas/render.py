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

Every surface names a document by its ``heading`` beside the id and places it by its ``context``: the
fields ``mathlas.headings.describe`` makes, the same for a hit and for the document (``name`` and
``title`` are the bundle's columns and mean different things per source). A heading that only repeats
the id (a Lean name; a label such as HoTT's ``cor:pi1s1``, headed "pi1s1", or Open Logic's
``defn:since-until``, "since until") says nothing more: a Lean hit shows none, and the others show
the first words of their statement in its place (``mathlas.headings.first_words``; a ``line`` has them
right after the kind, so it shows none). A link is shown as what it is (``link_text``): a link that
searches the source's site (``link_kind`` "search": ProofWiki's) reads ``search ProofWiki: <url>``.
"""
from __future__ import annotations

import re
import textwrap
from typing import Any
from collections.abc import Mapping

from mathlas.headings import describe, first_words, plain_markdown
from mathlas.hit import aliases_list, deprecation, known_as, link_kind_of

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


def _heading(h: Mapping[str, Any], instead: bool = True) -> str:
    """The heading to show beside the id. One that only repeats the id (``_says_the_id``) is left out
    for a Lean declaration (its name is its heading) and, with ``instead`` False, for every hit; else
    the first words of the statement take its place (``hott:cor:pi1s1`` is headed "pi_1(S^1) = Z,
    while pi_n(S^1) = 0 for n>1", not "pi1s1")."""
    heading, label, _ = _described(h)
    if not heading or not _says_the_id(h["id"], heading, label):
        return heading
    if not instead or _lean(h) or h.get("source") == "lean":
        return ""
    return first_words(h.get("text") or h.get("snippet") or "", (heading, label, h.get("name") or ""))


def _says_the_id(doc_id: str, heading: str, label: str) -> bool:
    """Whether ``heading`` is only what the id says: its end (``lean:Nat.add_comm``,
    ``planetmath:QED``), or the words of a LaTeX label's name (``cor:pi1s1`` -> "pi1s1",
    ``defn:since-until`` -> "since until"), up to case and punctuation."""
    if doc_id.endswith(":" + heading):
        return True
    if ":" not in label:
        return False
    return _words(heading) == _words(label.rsplit(":", 1)[1]) != ""


def _words(text: str) -> str:
    return " ".join(re.sub(r"[\W_]+", " ", text).split()).casefold()


def link_text(h: Mapping[str, Any]) -> str:
    """A hit's or document's link as the text surfaces show it: the address, or ``search ProofWiki:
    <address>`` for a link that searches its source's site (``link_kind`` "search",
    ``mathlas.hit.link_kind_of``); "" without a link."""
    from mathlas.groups import SOURCE_NAMES

    link = h.get("link") or ""
    if not link:
        return ""
    if (h.get("link_kind") or link_kind_of(link, h.get("fields"))) == "search":
        source = h.get("source") or ""
        return f"search {SOURCE_NAMES.get(source, source) or 'the source'}: {link}"
    return link


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
            lines.append(f"    {link_text(h)}")
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
    heading = _heading(h, instead=False)  # the statement's first words follow the kind
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
        out += " " + " ".join(x for x in (link_text(h), h.get("license")) if x)
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
        out.append(link_text(doc))
    out.append(f"license: {doc.get('license') or 'unknown'}")
    body = (doc.get("body") or "").strip()
    text = body if lean else statement_text(body)
    if doc.get("slogan") and not restates(text, doc["slogan"]):
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
    out.append("\n" + text)
    sig = " ".join(str(fields.get("signature") or "").split())
    # what `alias ⟨_, x⟩ := t` states, or a declaration with the section variables its header does not show
    if lean and sig and (fields.get("alias_of") or sig not in " ".join(body.split())):
        out.append(f"  -- states {fields['signature']}")
    return "\n".join(out) + "\n"


def restates(text: str, slogan: str) -> bool:
    """Whether a statement (``text``: as ``statement_text`` prints it) already says what its ``slogan``
    says, so ``show`` prints it once: the slogan is in it, letters and digits compared; or its first
    paragraph, its math standing for any words, opens the slogan (Metamath's slogan is its comment
    with the math read out as words, and the statement opens with the comment, math typeset: on
    informal-1.5.1, 26,734 of 26,753 Metamath slogans; one of Stacks' 244, whose statement ends with it)."""
    said = _squash(slogan)
    if not said or said in _squash(text):
        return True
    pieces = [p for p in (_squash(x) for x in _MATH.sub("\x00", text.split("\n\n", 1)[0]).split("\x00")) if p]
    if sum(map(len, pieces)) < 8:
        return False
    math = ".{0,200}?"  # what a formula of the statement reads as in the slogan
    lead = math if _MATH.match(text) else ""
    return re.match(lead + math.join(map(re.escape, pieces)), said) is not None


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


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


def search_notes(answer: Any, offset: int = 0) -> list[str]:
    """What a search answer (``SearchResult``, ``FormalSearchResult`` or its JSON form) says beside its
    hits, one line each, each left out when there is nothing to say: what the query was searched as
    (``expanded``: misspelt names corrected, abbreviations expanded), where a long query was cut
    (``cut``: ``cut_note``), then, when there are hits, how far to trust them
    (``mathlas.ranking.confidence``): ``likely among these hits, but not sure (match: weak, confidence
    0.66)``, ``a clear match: most likely the first hit (match: strong, confidence 0.95)``. The match
    is the search's, read from its first hits whatever the page: on a later page (``offset``) the line
    says so (``…, for the search from hit #1``) and a weak one points to the first hits."""
    def get(key: str) -> Any:
        return _field(answer, key)

    notes = [get("expanded")] if get("expanded") else []
    if get("cut"):
        notes.append(cut_note(get("cut")))
    match = get("match") or "strong"
    hits = get("hits")
    if hits:
        note = STRONG_NOTE if match == "strong" else get("note") or ""
        page = ""
        if offset:
            note, page = note.replace("among these hits", "among the first hits"), ", for the search from hit #1"
        if match != "none" and not offset:
            note += conjecture_note(hits[0])
        notes.append(f"{note} (match: {match}, confidence {float(get('confidence') or 0):.2f}{page})".lstrip())
    return notes


def conjecture_note(hit: Any) -> str:
    """What the match line adds when the first hit is an open question, not an answer to "is this
    known?": a conjecture (its kind), or a statement whose heading names one (ProofWiki's "The Goldbach
    Conjecture: …" page proves that it implies the weak conjecture, and is kind "theorem")."""
    if _field(hit, "kind") == "conjecture":
        return "; the first hit states a conjecture: check whether it has been proved"
    if _CONJECTURE.search(str(_field(hit, "heading") or _field(hit, "name") or "")):
        return "; the first hit is about a conjecture: read what it proves"
    return ""


_CONJECTURE = re.compile(r"(?i)\bconjecture\b")


def _field(x: Any, key: str) -> Any:
    """``key`` of an answer or a hit as an object (``SearchResult``, ``Hit``) or as its JSON form."""
    return x.get(key) if isinstance(x, Mapping) else getattr(x, key, None)


def cut_note(cut: Mapping[str, Mapping[str, int]]) -> str:
    """A search answer's ``cut`` in words: ``the query was cut: the encoder read its first 212 of 1500
    words (256 tokens) and BM25 its first 256; a key sentence or its words search better``."""
    parts = []
    if "dense" in cut:
        d = cut["dense"]
        parts.append(f"the encoder read its first {d['words']:,} of {d['of']:,} words ({d['tokens']} tokens)")
    if "lexical" in cut:
        w = cut["lexical"]
        parts.append(f"BM25 its first {w['words']:,}" if parts else f"BM25 read its first {w['words']:,} of {w['of']:,} words")
    return f"the query was cut: {' and '.join(parts)}; a key sentence or its words search better"


# what a strong answer says (its ``note`` is empty): on the judged collection's check queries a strong
# answer's first hit is right about nine times in ten (docs/benchmarks.md, "Answers you can trust")
STRONG_NOTE = "a clear match: most likely the first hit"


def _cut(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 2].rstrip() + " …"
