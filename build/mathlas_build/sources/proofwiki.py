"""ProofWiki reader for the partial dump of PS-ProofWiki (``shared/corpora/ps-proofwiki``, CC BY-SA 3.0).

The folder holds ``output/{train,dev,test}.json`` of the NL premise-selection dataset (Ferreira & Freitas,
LREC 2020): ProofWiki statements keyed by UUID, each ``{text, category, type, premises}``. One Document per
distinct statement:

* id ``proofwiki:<uuid>``;
* kind from ``type`` (``theorem``, ``lemma``; the dataset's ``corollaries`` becomes ``corollary``);
* ``body`` = ``text`` as the dump has it (ProofWiki LaTeX with its macros ``\\struct``, ``\\map``, ``\\paren``...
  and wiki templates ``{{eqn}}``, ``{{iff}}``...); ``statement`` = its words: the templates rendered
  (``{{iff}}`` -> "if and only if", ``{{eqn | l = .. | r = ..}}`` -> the equation, maintenance templates such
  as ``{{explain}}`` / ``{{proofread}}`` dropped), ProofWiki's structural macros expanded, then ``latex_to_text``;
* ``title`` = the ProofWiki category (``Topology``, ``Abstract Algebra``, ...), the only context the dump keeps;
* ``name`` is empty except for Euclid's propositions (``{{EuclidPropStatement|book=V|prop=12|...}}`` ->
  "Euclid, Elements, Book V, Proposition 12"): **the dump has no page titles and no URLs** (its kb.json, which
  had them, is not in the corpus), so ``link`` is empty too and nothing names the ProofWiki page;
* ``extra``: ``split`` (where the statement was first found), ``category``, ``premises`` (how many premise
  UUIDs the dataset lists; the premises themselves are in the missing kb.json).

**Duplicates.** The UUIDs of the three splits do not overlap, but 47 statement texts occur under more than
one UUID (25 of them across splits). Each text becomes one document, under the lexicographically smallest
of its UUIDs (so the id does not depend on which split is read first); ``extra["duplicate_ids"]`` lists the
others, space separated.

Recipe options: ``splits`` (default ``["train", "dev", "test"]``): the split files to read.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterator

from mathlas_build.document import Document
from mathlas_build.latex import latex_to_text, parse_macros

SOURCE = "proofwiki"
LICENSE = "CC-BY-SA-3.0"
ATTRIBUTION = ("ProofWiki (https://proofwiki.org), its contributors, CC BY-SA 3.0; statements as extracted in "
               "PS-ProofWiki (Ferreira & Freitas, LREC 2020), github debymf/nl-ps @ b6590a59")
SPLITS = ("train", "dev", "test")
KINDS = {"theorem": "theorem", "lemma": "lemma", "corollaries": "corollary", "corollary": "corollary"}

# ProofWiki's structural macros (brackets and layout), so that the words around them survive; macros that
# name a concept (\norm, \card, \powerset, \divides, \order) are left to latex_to_text, which keeps the word.
MACROS = parse_macros(r"""
\newcommand{\struct}[1]{(#1)}
\newcommand{\map}[2]{#1(#2)}
\newcommand{\paren}[1]{(#1)}
\newcommand{\set}[1]{\{#1\}}
\newcommand{\tuple}[1]{(#1)}
\newcommand{\sqbrk}[1]{[#1]}
\newcommand{\sequence}[1]{(#1)}
\newcommand{\closedint}[2]{[#1, #2]}
\newcommand{\openint}[2]{(#1, #2)}
\newcommand{\hointl}[2]{(#1, #2]}
\newcommand{\hointr}[2]{[#1, #2)}
\newcommand{\size}[1]{|#1|}
\newcommand{\ds}{}
\newcommand{\rd}{d}
\newcommand{\d}{d}
\newcommand{\O}{\emptyset}
""")

# Wiki templates -> words. A template not named here (maintenance: {{explain}}, {{refactor}}, {{WIP}},
# {{proofread}}, {{MissingLinks}}, layout: {{begin-eqn}}, {{qed}}, ...) is dropped.
_WORDS = {"iff": "if and only if", "RHS": "right hand side", "LHS": "left hand side", "ProofWiki": "ProofWiki",
          "TFAE": "The following are equivalent"}


def _template_end(text: str, start: int) -> int:
    """Index just past the ``}}`` closing the template that opens at ``start`` (braces balanced)."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _params(inner: str) -> tuple[str, list[str], dict[str, str]]:
    """``name | a | k = v`` -> (name, positional, named), splitting at ``|`` outside braces."""
    parts, depth, cur = [], 0, []
    i = 0
    while i < len(inner):
        c = inner[i]
        if c == "\\" and i + 1 < len(inner):
            cur.append(inner[i:i + 2])
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c == "|" and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    name = parts[0].strip()
    positional, named = [], {}
    for p in parts[1:]:
        m = re.match(r"\s*([A-Za-z]\w*)\s*=(.*)", p, re.S)
        if m:
            named[m.group(1)] = m.group(2).strip()
        else:
            positional.append(p.strip())
    return name, positional, named


def _render(name: str, pos: list[str], named: dict[str, str]) -> str:
    first = pos[0] if pos else ""
    if name == "eqn":
        eq = " ".join(x for x in (named.get("l", ""), named.get("o", "="), named.get("r", "")) if x)
        c = named.get("c", "")
        return f"\n${eq}$" + (f" ({c})" if c else "") + "\n"
    if name == "TFAENocat":
        name = "TFAE"
    if name in _WORDS:
        if name == "TFAE" and named.get("def"):
            return f"The following definitions of {named['def']} are equivalent"
        return _WORDS[name]
    if name == "WRT":
        return f"with respect to {first}".strip()
    if name == "Defof":
        return f"definition of {first}"
    if name == "OEIS":
        return f"OEIS {first}"
    if name in ("AuthorRef", "WP", "DCFLink"):
        return (pos[1] if len(pos) > 1 else first).replace("_", " ")
    if name == "Namedfor":
        return f"named for {first}"
    if name == "BookLink":
        return f"{first} by {pos[1]}" if len(pos) > 1 else first
    if name == "EuclidPropStatement":
        return named.get("body", "")
    if name == "axiom":
        return "\n".join(v for k, v in named.items() if k in ("q", "m", "t"))
    return ""


def wiki_to_latex(text: str) -> str:
    """ProofWiki wiki markup -> LaTeX text: templates rendered or dropped, ``'''bold'''`` / ``''italic''``
    quotes and ``[[link|text]]`` brackets removed, the ``:`` indentation at line starts dropped."""
    out, i = [], 0
    while True:
        j = text.find("{{", i)
        if j < 0:
            out.append(text[i:])
            break
        out.append(text[i:j])
        k = _template_end(text, j)
        inner = text[j + 2:k - 2] if text.startswith("}}", k - 2) else text[j + 2:k]
        out.append(_render(*_params(wiki_to_latex(inner) if "{{" in inner else inner)))
        i = k
    s = "".join(out)
    s = re.sub(r"'{2,}", "", s)
    s = re.sub(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]", r"\1", s)
    return re.sub(r"(?m)^[:\s]+", "", s)


def euclid_name(text: str) -> str:
    m = re.search(r"\{\{\s*EuclidPropStatement\s*\|([^{}]*?)\|\s*body\s*=", text)
    if not m:
        return ""
    _, _, named = _params("x|" + m.group(1))
    book, prop = named.get("book", ""), named.get("prop", "")
    return f"Euclid, Elements, Book {book}, Proposition {prop}" if book and prop else ""


def read(root: Path, *, splits: list[str] | tuple[str, ...] = SPLITS, **options) -> Iterator[Document]:
    """Yield one Document per distinct statement text of the split files, in file order (train, dev, test)."""
    out = Path(root) / "output"
    files = [out / f"{s}.json" for s in splits]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise FileNotFoundError(f"PS-ProofWiki split file(s) not found: {', '.join(missing)}")
    records: list[tuple[str, str, dict]] = []          # (uuid, split, record) in file order
    seen: set[str] = set()
    for f, split in zip(files, splits):
        with f.open(encoding="utf-8") as fh:
            data = json.load(fh)
        for uuid, rec in data.items():
            if uuid in seen:
                continue                               # the same record in two splits: once
            seen.add(uuid)
            if not isinstance(rec, dict) or not str(rec.get("text") or "").strip():
                raise ValueError(f"{f}: record {uuid!r} without text")
            records.append((uuid, split, rec))
    by_text: dict[str, list[str]] = {}
    for uuid, _, rec in records:
        by_text.setdefault(rec["text"].strip(), []).append(uuid)
    for uuid, split, rec in records:
        text = rec["text"].strip()
        uuids = sorted(by_text[text])
        if uuid != uuids[0]:
            continue                                   # emitted under the smallest UUID of its text
        category = str(rec.get("category") or "").strip()
        kind = str(rec.get("type") or "").strip().lower()
        extra = {"split": split, "category": category, "premises": len(rec.get("premises") or [])}
        if len(uuids) > 1:
            extra["duplicate_ids"] = " ".join(f"{SOURCE}:{u}" for u in uuids[1:])
        yield Document(
            id=f"{SOURCE}:{uuid}", source=SOURCE, kind=KINDS.get(kind, kind or "theorem"), name=euclid_name(text),
            title=category, body=text, statement=latex_to_text(wiki_to_latex(text), MACROS), link="",
            license=LICENSE, file=f"output/{split}.json", line=0, extra=extra,
        )
