"""The same theorem in several sources: groups of documents that state one fact, "also stated in",
and the top k collapsed so that one theorem takes one rank.

``groups_of(bundle)`` gives a bundle's ``Groups`` (computed from its own columns and vectors on first
use, about half a second on the 65k default bundle, then kept while the bundle lives):

* ``group(key)``: the keys of the other documents that state the same fact;
* ``collapse(keys, k)``: a ranking with one rank per group: each group's best-ranked member, with the
  members of its group that ranked below it, at most ``k`` of them;
* ``also_in(key)``: where else it is stated, for display (``Copy(source, label, id)``), including the
  other bundle (formal <-> informal) where the link is explicit.

**Evidence** (precision first; docs/groups.md has the measured precision). Two documents of one
bundle are grouped when

1. **their names are equal** after ``normalise_name`` (case, accents, possessives, hyphens and dashes
   folded) and both are statements (theorem, lemma, proposition, corollary...) or both definitions,
   from two sources, each source holding that name once, and their vectors agree (cosine at least
   ``NAME_COSINE``; definitions ``DEFINITION_COSINE``). A name is the statement's *own* name: the
   ``[...]`` of a LaTeX environment, PlanetMath's title, the 1000+ list's names that the Metamath reader
   attaches as aliases; never words made from a ``\\label`` (Stacks' ``finite type`` lemmas are many
   different facts), never a generic name (``Main theorem``, ``Lemma 2``) or a single word;
2. **they are forms of one Metamath statement**: labels that differ by a form suffix (``addcom``,
   ``addcomi`` inference, ``addcomd`` deduction, ``addcomALT``) with the same description;
3. **they are dense near-duplicates confirmed by their headings**: cosine at least ``NEAR_COSINE``
   and the same heading words (a name, Metamath's and ProofWiki's description: ``Every field is an
   integral domain`` / ``A field is an integral domain``), from two sources, each once;
4. **one ProofWiki page restates another**: a statement's whole text (``RESTATEMENT_MIN_CHARS`` or
   more, whitespace folded) begins another statement of the same source, which then goes on
   ("There are infinitely many prime numbers." / the same sentence and a remark on Euclid; a formula
   and "where ... denotes ..."; ζ(6) and the same with its OEIS number). ProofWiki keeps one theorem on
   several pages (a theorem, its corollary, a named alias), each a self-contained statement, so the
   longer one states the shorter among more. Other sources are left out: Open Logic and Stacks state
   the same words in several chapters about different systems (soundness for propositional and for
   first-order logic), where the words alone do not make one fact.

Evidence across sources (1 and 3) also needs the two statements' own words to agree
(``wording_share`` at least ``WORDING_SHARE``): an equal name over statements that share no word
(Lowenheim-Skolem for any first-order language / for models of set theory) is refused.

A group never holds two documents of one source except forms of one Metamath statement and ProofWiki's
restatements (4): evidence
that would join two groups each holding a document of the same source is dropped (the name
``Sylow theorems`` on three Metamath labels is three facts). Stacks' copies of one statement for
schemes and for algebraic spaces are never grouped, whatever their text.

**Across bundles** only explicit links count: a Lean declaration tagged ``@[stacks TAG]`` and the
Stacks document ``stacks:TAG``; a Metamath label and the Lean declarations listed under the same
entry of the 1000+ theorems list (the bundle carries the entry's name as both documents' alias:
the Metamath reader's 1000+ names, Mathlib's ``docs/1000.yaml`` titles). The other bundle is read
only when it is installed (``mathlas.releases.formal_specs.formal_bundle_spec`` for the informal side, the default
bundle for the formal side); ``also_in`` then names its documents, ``group`` never does.
"""
from __future__ import annotations

import re
import threading
import weakref
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

# A bundle is any object with ``table``, ``column``, ``dense``, ``manifest``, ``root`` (mathlas.engine.Bundle);
# named by this alias, not imported: mathlas.engine imports the ranking pipeline, which collapses with this module.
Bundle = Any

# -- thresholds (measured on the default bundle: docs/groups.md, scripts/groups_eval.py) -----------------
NAME_COSINE = 0.40        # equal names, statements: vectors must agree at least this much
DEFINITION_COSINE = 0.65  # equal names, definitions (one term has other meanings in other fields)
NEAR_COSINE = 0.65        # near-duplicates: vectors this close, and the same heading words
FORM_COSINE = 0.75        # forms of one Metamath statement
# Across sources the statements' own words must agree too (``wording_share``): the shorter statement
# shares at least this much of its words with the other; one of fewer than ``WORDING_MIN_WORDS`` words (a
# formula) gives no evidence either way. Chosen on half of the judged census of cross-source pairs: higher
# shares cost correct links faster than wrong ones (docs/groups.md, "Measured").
WORDING_SHARE = 0.1
WORDING_MIN_WORDS = 3
# ProofWiki's restatements (rule 4): the shorter statement's text, whitespace folded, at least this long
RESTATED_SOURCES = ("proofwiki",)
RESTATEMENT_MIN_CHARS = 20

STATEMENT_KINDS = frozenset({"theorem", "lemma", "proposition", "corollary", "fact", "result", "claim"})
DEFINITION_KINDS = frozenset({"definition"})

# Words that name no particular fact: a name made only of these (and numbers) is generic.
GENERIC_WORDS = frozenset("""
a an the of and or for on in to with its their is are as at by from into over under
lemma lemmas theorem theorems proposition propositions corollary corollaries definition definitions
claim claims fact facts result results remark remarks example examples exercise exercises observation
notation convention conventions axiom axioms conjecture statement statements principle
main key basic technical auxiliary useful easy simple trivial important fundamental general special
first second third fourth last final part parts step steps case cases version versions variant
properties property characterization characterisation criterion criteria formula formulas
existence uniqueness equivalence equivalent definitions well defined standard elementary preliminary
i ii iii iv v vi vii viii ix x
""".split())

SOURCE_NAMES = {
    "stacks": "Stacks", "planetmath": "PlanetMath", "hott": "HoTT book", "openlogic": "Open Logic",
    "napkin": "Napkin", "proofnet": "ProofNet", "proofwiki": "ProofWiki", "metamath": "Metamath",
    "lean": "Lean", "arxiv": "arXiv", "finding": "findings",
}
# Sources whose labels are opaque ids a person does not read (``also in ProofWiki``, no uuid).
UNLABELLED = frozenset({"proofwiki", "napkin", "arxiv"})

# Metamath form suffixes: inference, deduction, closed ("g"eneral), alternative proof
_MM_FORM = re.compile(r"^(.+?)(i|d|g|ALT|ALT\d?)$")
# Metamath descriptions shared by different statements ("Lemma for pnt" on pntlema ... pntlemi)
_MM_GENERIC = re.compile(r"(?i)\s*(lemma|obsolete|alternate|alias)\b")


class Copy(NamedTuple):
    """Where else a fact is stated: the source's display name (``Metamath``), the label a person
    reads there (``fta``; "" when the source has none worth showing) and the document id."""

    source: str
    label: str
    id: str


# ------------------------------------------------------------------------------ names

# The folding, as RE2 patterns for pyarrow.compute, after NFKD and lower case (one pass over a whole
# column; the same code folds a single name, so both always agree).
_FOLD = (
    (r"\p{Mn}+", ""),                                  # accents
    (r"([\pL\pN])['\x{2019}]s\b", r"\1"),               # Zorn's -> zorn
    (r"s['\x{2019}]", "s"),                             # Gauss' -> gauss
    (r"[^\pL\pN_]+", " "),                             # hyphens, dashes, slashes, punctuation, spaces
    (r"^ ?(the )?", ""),
)


def fold_names(values: Sequence[str | None]) -> list[str]:
    """``normalise_name`` of every value (None as ""), in one pass of pyarrow.compute."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = pc.fill_null(pa.array(list(values), type=pa.string()), "")
    arr = pc.utf8_lower(pc.utf8_normalize(pc.replace_substring(arr, "\u00df", "ss"), "NFKD"))
    for pattern, replacement in _FOLD:
        arr = pc.replace_substring_regex(arr, pattern, replacement)
    return pc.utf8_rtrim(arr, " ").to_pylist()


def normalise_name(text: str) -> str:
    """A name folded for comparison: accents dropped, case folded, possessives (``Zorn's``,
    ``Gauss'``) and a leading "the" dropped, hyphens, dashes and slashes as spaces, other
    punctuation removed: ``The Cantor–Bernstein–Schröder theorem`` -> ``cantor bernstein schroder theorem``."""
    return fold_names([text])[0]


def is_generic(normalised: str) -> bool:
    """True for a name that names no particular fact: fewer than two words, or only generic words
    and numbers (``main theorem``, ``lemma 2``, ``basic properties``)."""
    words = normalised.split()
    if len(words) < 2:
        return True
    return all(w in GENERIC_WORDS or w.isdigit() or len(w) == 1 for w in words)


NAMED_SOURCES = ("stacks", "hott", "openlogic", "napkin", "planetmath")  # whose ``name`` may be the statement's own
_STACKS_NAME = re.compile(r"^(.*) \(([^()]*)\)$")    # "Nakayama's lemma (words of the label)"


def _own_name_text(source: str, name: str) -> str:
    """The part of the ``name`` column that may be the statement's own name (Stacks writes
    ``[name] (label words)`` where the label adds to a name, ``Kollár (injective pic)``)."""
    if source == "stacks":
        m = _STACKS_NAME.match(name or "")
        return m.group(1) if m else (name or "")
    return name or ""


def _from_label(folded: str, label_words: str) -> bool:
    """True when a name is only the words of the statement's ``\\label`` (``finite type`` from
    ``morphisms-lemma-finite-type``): the reader's fallback, not a name."""
    return bool(label_words) and (label_words == folded or label_words.endswith(" " + folded))


def own_names(source: str, name: str, label: str = "", aliases: str = "") -> list[str]:
    """The names a document is known by (normalised, generic ones dropped): the ``[...]`` name of its
    environment (not words made from its ``\\label``), PlanetMath's title, its aliases (the 1000+
    list's names on Metamath labels). ProofWiki, ProofNet, arXiv and Lean give none here (a Lean
    declaration's aliases mix several lists; they serve the links across bundles only)."""
    folded, words = fold_names([_own_name_text(source, name), re.sub(r"[-_:.]+", " ", label or "")])
    return _names(source, folded, words, aliases)


def _names(source: str, folded: str, label_words: str, aliases: str) -> list[str]:
    out: list[str] = []
    if source in NAMED_SOURCES and folded and (source == "planetmath" or not _from_label(folded, label_words)):
        out.append(folded)
    if aliases and source != "lean":
        # a plural name on one Metamath label ("Sylow theorems" on sylow1) names several facts
        out.extend(a for a in fold_names(aliases.split("; "))
                   if not (source == "metamath" and a.endswith(("theorems", "lemmas"))))
    return [n for n in dict.fromkeys(out) if n and not is_generic(n)]


def kind_class(kind: str) -> str | None:
    """``statement`` / ``definition`` (the two classes a name may join), else None."""
    kind = (kind or "").lower()
    if kind in STATEMENT_KINDS:
        return "statement"
    if kind in DEFINITION_KINDS:
        return "definition"
    return None


# ------------------------------------------------------------------------------ the groups

@dataclass
class Groups:
    """The groups of one bundle (see the module docstring). ``of[key]`` is the key's group number,
    -1 when it has none; ``members[g]`` the keys of group ``g`` in key order; ``external[key]`` the
    explicit copies in the other bundle; ``evidence`` counts the links each rule made."""

    ids: Sequence[str]
    sources: Sequence[str]
    labels: Sequence[str]
    of: np.ndarray
    members: list[list[int]]
    external: dict[int, list[Copy]] = field(default_factory=dict)
    evidence: dict[str, int] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list, repr=False)

    def group(self, key: int) -> list[int]:
        """The other documents of this bundle that state the same fact (keys, in key order)."""
        g = int(self.of[key])
        return [] if g < 0 else [m for m in self.members[g] if m != key]

    def collapse(self, keys: Iterable[int], k: int) -> list[tuple[int, list[int]]]:
        """``keys`` (a ranking, best first) with one rank per group: each group's best-ranked member
        with the members of its group that ranked below it (in rank order), at most ``k`` entries.
        A key without a group keeps its rank; a repeated key counts once."""
        out: list[tuple[int, list[int]]] = []
        slot: dict[int, int] = {}      # group -> its entry in out
        seen: set[int] = set()
        for key in keys:
            key = int(key)
            if key in seen:
                continue
            seen.add(key)
            g = int(self.of[key]) if 0 <= key < len(self.of) else -1
            if g >= 0 and g in slot:
                if slot[g] < len(out):
                    out[slot[g]][1].append(key)
                continue
            if len(out) >= k:
                if g >= 0:
                    slot[g] = k        # a group first met past the cut: its other members stay out too
                continue
            if g >= 0:
                slot[g] = len(out)
            out.append((key, []))
        return out

    def also_in(self, key: int) -> list[Copy]:
        """Where else the document ``key`` states its fact: the other members of its group and the
        explicit copies in the other bundle of any member, each once, by source then label."""
        key = int(key)
        if self.of[key] < 0 and key not in self.external:
            return []  # most documents: in no group, with no copy elsewhere
        others = self.group(key)
        out = [Copy(SOURCE_NAMES.get(self.sources[m], self.sources[m]),
                    "" if self.sources[m] in UNLABELLED else self.labels[m], self.ids[m]) for m in others]
        for m in [key, *others]:
            out += self.external.get(m, [])
        seen: set[str] = set()
        return [c for c in sorted(out, key=lambda c: (c.source, c.label)) if not (c.id in seen or seen.add(c.id))]

    def stats(self) -> dict:
        """Counts for docs and logs: groups, grouped documents (per source) and links per rule."""
        per_source: dict[str, int] = defaultdict(int)
        for members in self.members:
            for m in members:
                per_source[self.sources[m]] += 1
        return {"groups": len(self.members), "grouped": sum(per_source.values()),
                "per_source": dict(sorted(per_source.items())), "evidence": dict(self.evidence),
                "external": sum(len(v) for v in self.external.values())}


def as_copy(x: Copy | Mapping[str, str] | str) -> Copy:
    """A copy as ``also_in`` holds it in any form: a ``Copy``, its JSON (``{"source", "label", "id"}``)
    or a summary's bare id (``metamath:fta``: its source's name and label made from the id)."""
    if isinstance(x, Copy):
        return x
    if isinstance(x, Mapping):
        return Copy(str(x.get("source") or ""), str(x.get("label") or ""), str(x.get("id") or ""))
    source, _, label = str(x).partition(":")
    return Copy(SOURCE_NAMES.get(source, source), "" if source in UNLABELLED else label, str(x))


ALSO_IN_PER_SOURCE = 2   # copies an "also in" names of one source (the page's app.js says the same)
ALSO_IN_LIMIT = 6        # and in all


def _dealt(copies: list[Copy], limit: int, per_source: int) -> dict[str, tuple[list, int]]:
    """Each source's copies (in their order) and how many of them an "also in" names: dealt one a
    source at a time, at most ``per_source`` of a source and ``limit`` in all."""
    by_source: dict[str, list] = {}
    for c in copies:
        by_source.setdefault(c.source, []).append(c)
    room = dict.fromkeys(by_source, 0)
    left = limit
    for turn in range(per_source):
        for source, group in by_source.items():
            if left > 0 and len(group) > turn:
                room[source] += 1
                left -= 1
    return {source: (group, room[source]) for source, group in by_source.items()}


def shown_copies(copies: Sequence, limit: int = ALSO_IN_LIMIT, per_source: int = ALSO_IN_PER_SOURCE) -> list:
    """The copies an "also in" names (``Copy``s, in their order): dealt one a source at a time, at most
    ``per_source`` of a source and ``limit`` in all, so every source keeps its first (seven Mathlib
    copies of Nakayama's lemma no longer leave Stacks' tag out). ``also_in_line`` and an MCP summary's
    ``also_in`` (``mathlas.hit.summary_copies``) name these."""
    every = [as_copy(c) for c in copies]
    chosen = {id(c) for group, room in _dealt(every, limit, per_source).values() for c in group[:room]}
    return [c for c in every if id(c) in chosen]


def handle(c: Copy) -> str:
    """What a line names a copy by: its label, else (a source whose labels are opaque, ``UNLABELLED``)
    its id after the source, shortened where ``Bundle.key_of`` takes the start of an id
    (``mathlas.ranking.ids.short_id``: ``952b3052`` for a ProofWiki page), whole otherwise (the section
    path of a Napkin statement)."""
    from mathlas.ranking.ids import short_id

    return c.label or short_id(c.id) or c.id.partition(":")[2]


def also_in_line(copies: Sequence, limit: int = ALSO_IN_LIMIT, per_source: int = ALSO_IN_PER_SOURCE) -> str:
    """``also in ProofWiki `952b3052`, Metamath `fta`, Mathlib `Complex.exists_root``` (one line; "" when
    none): copies of one source share its name (``Metamath `addcomd`/`addcomi```); the copies
    ``shown_copies`` picks are named (``handle``), the rest of each source counted (``+4``): ``Mathlib
    `a`/`b` +5, Stacks `00DV```. ``copies``: ``Copy``s, their JSON or bare ids (``as_copy``)."""
    if not copies:
        return ""
    parts = []
    for source, (group, room) in _dealt([as_copy(c) for c in copies], limit, per_source).items():
        named = [x for x in (handle(c) for c in group[:room]) if x]
        hidden = sum(1 for c in group[room:] if handle(c))
        parts.append(source + (" " + "/".join(f"`{x}`" for x in named) if named else "") + (f" +{hidden}" if hidden else ""))
    return "also in " + ", ".join(parts)


# ------------------------------------------------------------------------------ computing them

class _Union:
    """Union-find over keys that refuses a union putting two documents of one source into a group
    (``allow_same``: a link within a source, such as forms of one Metamath statement)."""

    def __init__(self, sources: np.ndarray):
        self.parent: dict[int, int] = {}
        self.srcs: dict[int, set[int]] = {}
        self.sources = sources

    def find(self, x: int) -> int:
        p = self.parent.setdefault(x, x)
        if p != x:
            p = self.parent[x] = self.find(p)
        return p

    def union(self, a: int, b: int, allow_same: bool = False) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        sa = self.srcs.setdefault(ra, {int(self.sources[a])})
        sb = self.srcs.setdefault(rb, {int(self.sources[b])})
        if sa & sb and not (allow_same and sa == sb == {int(self.sources[a])}):
            return False
        self.parent[rb] = ra
        self.srcs[ra] = sa | sb
        self.srcs.pop(rb, None)
        return True


def _cosines(vectors, scales, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of the stored vectors of keys ``a[i]`` and ``b[i]`` (int8 rows times their scales)."""
    if vectors is None or len(a) == 0:
        return np.ones(len(a), dtype=np.float32) if vectors is None else np.zeros(0, dtype=np.float32)
    out = np.empty(len(a), dtype=np.float32)
    for s in range(0, len(a), 4096):
        va = np.asarray(vectors[a[s:s + 4096]], dtype=np.float32)
        vb = np.asarray(vectors[b[s:s + 4096]], dtype=np.float32)
        out[s:s + 4096] = np.einsum("ij,ij->i", va, vb) * scales[a[s:s + 4096]] * scales[b[s:s + 4096]]
    return out




# ------------------------------------------------------------------------------ Metamath assertions

_ASSERTION = re.compile(r"Assertion: \$\\vdash (.*?)\$")
_PROVED = re.compile(r"\$\\vdash (.*?)\$")
# A Metamath variable as the display writes it: one Latin letter, or a Greek letter's macro
_VARIABLE = re.compile(r"^(?:[A-Za-z]|\\(?:var)?(?:phi|psi|chi|theta|tau|eta|zeta|sigma|rho|mu|lambda|kappa|epsilon"
                       r"|iota|alpha|beta|gamma|delta|omega|xi|nu|upsilon))$")


def conclusions(body: str) -> frozenset[tuple[str, ...]]:
    """What a Metamath statement concludes, at every depth: its assertion (``⊢ ( A = B → X )``) and
    each consequent of its implications (``X``, and so on), variables renamed in order of first use,
    so that a closed form, its inference form (``⊢ X`` from hypotheses) and its deduction form
    (``⊢ ( φ → X )``) share one. Empty when the body shows no assertion."""
    m = _ASSERTION.search(body or "") or None
    if m is None:
        found = _PROVED.findall(body or "")
        if not found:
            return frozenset()
        text = found[-1]
    else:
        text = m.group(1)
    tokens = text.split()
    out = set()
    while tokens:
        out.add(_renamed(tokens))
        tokens = _consequent(tokens)
    return frozenset(t for t in out if len(t) >= 2)


def _renamed(tokens: list[str]) -> tuple[str, ...]:
    names: dict[str, str] = {}
    return tuple(names.setdefault(t, f"v{len(names)}") if _VARIABLE.match(t) else t for t in tokens)


def _consequent(tokens: list[str]) -> list[str]:
    """``( P → Q )`` -> ``Q`` (the implication at the top level), else []."""
    if len(tokens) < 3 or tokens[0] != "(" or tokens[-1] != ")":
        return []
    depth = 0
    for i, t in enumerate(tokens[1:-1], 1):
        if t == "(":
            depth += 1
        elif t == ")":
            depth -= 1
            if depth < 0:
                return []        # "( A ) = ( B )": the outer brackets are not one pair
        elif t == "\\rightarrow" and depth == 0:
            return tokens[i + 1:-1]
    return []


class Link(NamedTuple):
    """One piece of evidence that keys ``a`` and ``b`` state the same fact: the rule, the cosine and, for
    a link across sources, how much the two statements' words agree (``wording_share``; 1.0: not compared)."""

    a: int
    b: int
    rule: str
    cosine: float
    wording: float = 1.0


COLUMNS = ("id", "source", "kind", "name", "title", "label", "aliases")

HEADING_CHARS = 100   # a longer heading is a description, too particular to repeat word for word elsewhere
# Words a heading comparison ignores; a heading is what a document says it is (a name, Metamath's and
# ProofWiki's description), compared as a set of words.
_HEADING_STOP = frozenset("a an the of and or for on to with its is are be as by from every any all each "
                          "let then that this which there".split())


def _heading_text(source: str, name: str, title: str) -> str:
    """What a document says it is, as written: Metamath's and ProofWiki's title (their description
    and statement), the name elsewhere; "" when there is none to compare (Lean, ProofNet, arXiv, a
    ProofWiki heading that only sets up notation, a heading cut short or too long to repeat)."""
    if source == "metamath":
        text = "" if " > " in (title or "") else title
    elif source == "proofwiki":
        text = "" if (title or "").lower().startswith("let ") else title   # a hypothesis, not the fact
    elif source in NAMED_SOURCES:
        text = _own_name_text(source, name)
    else:
        return ""
    text = text or ""
    return "" if len(text) > HEADING_CHARS or text.endswith("…") else text


def _word(w: str) -> str | None:
    """A heading word as compared: None for a stop word, a plural's ``s`` dropped."""
    if w in _HEADING_STOP:
        return None
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def _heading_words(folded: str, cache: dict | None = None) -> frozenset[str] | None:
    cache = {} if cache is None else cache
    words = set()
    for w in folded.split():
        x = cache[w] if w in cache else cache.setdefault(w, _word(w))
        if x:
            words.add(x)
    return frozenset(words) if len(words) >= 2 else None


def heading_words(source: str, name: str, title: str) -> frozenset[str] | None:
    """The words of what a document says it is (stop words dropped, a plural folded), for
    near-duplicate confirmation; None when it has no heading to compare or only one word."""
    text = _heading_text(source, name, title)
    return _heading_words(normalise_name(text)) if text else None


# Where a statement ends and its proof, its references or (Metamath) its formal hypotheses begin
_STATEMENT_END = re.compile(r"\\begin\{proof\}|\{\\bf Proof|\\(?:emph|textbf|textit|em)\{Proof|\bProof[.:]"
                            r"|\\begin\{thebibliography\}|Hypotheses: ")
_MACRO = re.compile(r"\\[A-Za-z]+")
_STATEMENT_STOP = _HEADING_STOP | frozenset("then there let such where have has can also only not but into some "
                                            "other more than when given we if".split())
WORDING_RULES = frozenset({"name", "name-definition", "near-duplicate"})   # the links across sources


def statement_words(bodies: Sequence[str | None]) -> list[frozenset[str]]:
    """The words of each statement, for ``wording_share``: the body up to its proof, references or
    Metamath's hypotheses, LaTeX macros dropped, folded as names are, words of three letters or more
    but stop words, a plural's ``s`` dropped."""
    cut = []
    for body in bodies:
        text = body or ""
        m = _STATEMENT_END.search(text)
        cut.append(_MACRO.sub(" ", text[:m.start()] if m else text))
    out = []
    for folded in fold_names(cut):
        words = set()
        for w in folded.split():
            if len(w) >= 3 and w.isalpha() and w not in _STATEMENT_STOP:
                words.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
        out.append(frozenset(words))
    return out


def wording_share(a: frozenset[str], b: frozenset[str]) -> float:
    """How much two statements' words agree: the share of the shorter one's words that the other holds;
    1.0 (no evidence) when either has fewer than ``WORDING_MIN_WORDS`` (a formula, a bare name)."""
    if min(len(a), len(b)) < WORDING_MIN_WORDS:
        return 1.0
    return len(a & b) / min(len(a), len(b))


def candidate_links(cols: dict[str, list], vectors=None, scales=None,
                    body_of: Callable[[list[int]], list[str]] | None = None) -> list[Link]:
    """Every link the rules find among the documents of ``cols`` (the bundle's columns as lists,
    ``COLUMNS``), each with the cosine of the two documents' vectors (1.0 without vectors).
    ``body_of(keys)`` gives the bodies of some documents (the Metamath forms compare their
    assertions; without it, or a ``body`` column, that rule finds nothing)."""
    if body_of is None and cols.get("body") is not None:
        body_of = lambda keys: [cols["body"][k] or "" for k in keys]  # noqa: E731
    n = len(cols["id"])
    sources, kinds, names, titles = cols["source"], cols["kind"], cols["name"], cols["title"]
    labels = cols.get("label") or [None] * n
    aliases = cols.get("aliases") or [None] * n
    classes = [kind_class(k) for k in kinds]
    rows = [i for i in range(n) if classes[i] is not None]
    named = [i for i in rows if sources[i] in NAMED_SOURCES]
    texts = [_heading_text(sources[i], names[i], titles[i]) for i in rows]
    with_heading = [r for r, t in enumerate(texts) if t]
    folded = fold_names([_own_name_text(sources[i], names[i]) for i in named]
                        + [re.sub(r"[-_:.]+", " ", labels[i] or "") for i in named]
                        + [texts[r] for r in with_heading])
    own = dict(zip(named, folded[:len(named)]))
    label_words = dict(zip(named, folded[len(named):2 * len(named)]))
    headings = dict(zip(with_heading, folded[2 * len(named):]))
    plural: dict[str, str | None] = {}
    by_name: dict[tuple[str, str], list[int]] = defaultdict(list)
    by_heading: dict[tuple[str, frozenset], list[int]] = defaultdict(list)
    forms: dict[tuple[str, str], list[int]] = defaultdict(list)
    for r, i in enumerate(rows):
        cls, src = classes[i], sources[i]
        if src in NAMED_SOURCES or aliases[i]:
            for nm in _names(src, own.get(i, ""), label_words.get(i, ""), aliases[i] or ""):
                by_name[(cls, nm)].append(i)
        words = _heading_words(headings[r], plural) if r in headings else None
        if words and src in NAMED_SOURCES and src != "planetmath" and _from_label(own[i], label_words[i]):
            words = None      # label words (Stacks' "fundamental group" of a scheme) name no fact of their own
        if words:
            by_heading[(cls, words)].append(i)
        if src == "metamath" and cls == "statement" and titles[i] and not _MM_GENERIC.match(titles[i]):
            label = names[i] or cols["id"][i].split(":", 1)[1]
            m = _MM_FORM.match(label)
            title = " ".join(titles[i].casefold().split())
            for stem in {label, m.group(1)} if m else {label}:   # eqid is a stem itself (eqidd), not eqi + d
                forms[(stem, title)].append(i)

    pairs: list[tuple[int, int, str]] = []
    # 1. equal names, each source holding the name once
    for (cls, _), keys in by_name.items():
        per_source: dict[str, list[int]] = defaultdict(list)
        for i in dict.fromkeys(keys):
            per_source[sources[i]].append(i)
        single = [v[0] for v in per_source.values() if len(v) == 1]
        rule = "name" if cls == "statement" else "name-definition"
        pairs += [(single[x], single[y], rule) for x in range(len(single)) for y in range(x + 1, len(single))]
    # 2. forms of one Metamath statement: the same conclusion, variables renamed
    form_rows = sorted({i for keys in forms.values() if len(keys) > 1 for i in keys})
    if form_rows and body_of is not None:
        ends = dict(zip(form_rows, (conclusions(x) for x in body_of(form_rows))))
        seen: set[tuple[int, int]] = set()
        for keys in forms.values():
            for x in range(len(keys)):
                for y in range(x + 1, len(keys)):
                    pair = (min(keys[x], keys[y]), max(keys[x], keys[y]))
                    if pair not in seen and ends[pair[0]] & ends[pair[1]]:
                        seen.add(pair)
                        pairs.append((*pair, "metamath-form"))
    # 4. (before 3: it is within a source) one statement's whole text begins another's of the same source
    pairs += restatements(rows, sources, classes, body_of)
    # 3. near-duplicates confirmed by their headings: the same words, from two sources, each once
    for keys in by_heading.values():
        if len(keys) > 1:
            per_source = defaultdict(list)
            for i in keys:
                per_source[sources[i]].append(i)
            single = [v[0] for v in per_source.values() if len(v) == 1]
            pairs += [(single[x], single[y], "near-duplicate") for x in range(len(single))
                      for y in range(x + 1, len(single))]

    # 4. a Lean ``alias`` and its target, when it states the same (an ``alias ⟨mp, mpr⟩`` is one direction)
    if cols.get("alias_of") and cols.get("signature"):
        key_of = {doc_id: i for i, doc_id in enumerate(cols["id"])}
        sig = cols["signature"]
        for i, target in enumerate(cols["alias_of"]):
            j = key_of.get(target) if target else None
            if j is not None and j != i and sig[i] and " ".join(sig[i].split()) == " ".join((sig[j] or "").split()):
                pairs.append((j, i, "lean-alias"))

    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    cos = _cosines(vectors, scales, a, b)
    # 5. across sources, how much the two statements' words agree
    wording = [1.0] * len(pairs)
    cross = [k for k, p in enumerate(pairs) if p[2] in WORDING_RULES]
    if cross and body_of is not None:
        keys = sorted({i for k in cross for i in pairs[k][:2]})
        words = dict(zip(keys, statement_words(body_of(keys))))
        for k in cross:
            wording[k] = wording_share(words[pairs[k][0]], words[pairs[k][1]])
    return [Link(int(x), int(y), r, float(c), w) for (x, y, r), c, w in zip(pairs, cos, wording)]


def restatements(rows: list[int], sources: Sequence[str], classes: Sequence[str | None],
                 body_of: Callable[[list[int]], list[str]] | None) -> list[tuple[int, int, str]]:
    """Rule 4: pairs (shorter, longer) of statements of a ``RESTATED_SOURCES`` source whose shorter text
    (whitespace folded, ``RESTATEMENT_MIN_CHARS`` or more) is the whole beginning of the longer (or equal
    to it), ending at a word's end. Sorted, a text sits right before those it begins: one pass."""
    mine = [i for i in rows if sources[i] in RESTATED_SOURCES and classes[i] == "statement"]
    if not mine or body_of is None:
        return []
    texts = [" ".join((x or "").split()) for x in body_of(mine)]
    order = sorted(range(len(mine)), key=lambda r: (sources[mine[r]], texts[r], mine[r]))
    out: list[tuple[int, int, str]] = []
    for at, r in enumerate(order):
        s = texts[r]
        if len(s) < RESTATEMENT_MIN_CHARS:
            continue
        for r2 in order[at + 1:]:
            t = texts[r2]
            if sources[mine[r2]] != sources[mine[r]] or not t.startswith(s):
                break
            if len(t) == len(s) or not s[-1].isalnum() or t[len(s)] == " ":
                out.append((mine[r], mine[r2], "restatement"))
    return out


THRESHOLDS = {"lean-alias": -1.0, "restatement": -1.0, "name": NAME_COSINE, "name-definition": DEFINITION_COSINE,
              "metamath-form": FORM_COSINE, "near-duplicate": NEAR_COSINE}
RULE_ORDER = tuple(THRESHOLDS)           # strongest first: a union refused later never undoes an earlier one
SAME_SOURCE_RULES = frozenset({"metamath-form", "lean-alias", "restatement"})
FORMAL_COLUMNS = ("alias_of", "signature")


def build_groups(cols: dict[str, list], vectors=None, scales=None, external=None, body_of=None) -> Groups:
    """The ``Groups`` of documents given as columns (``COLUMNS``) and their int8 vectors with scales
    (None: a bundle without vectors groups by the name rules alone, never by a cosine);
    ``body_of`` as for ``candidate_links``."""
    n = len(cols["id"])
    _, codes = np.unique(np.asarray(cols["source"], dtype=object), return_inverse=True)
    union = _Union(codes)
    evidence: dict[str, int] = defaultdict(int)
    accepted: list[Link] = []
    links = candidate_links(cols, vectors, scales, body_of)
    links.sort(key=lambda x: (RULE_ORDER.index(x.rule), -x.cosine, x.a, x.b))
    for link in links:
        if vectors is None and link.rule == "near-duplicate":
            continue                      # a near-duplicate is a cosine; the other rules stand on their own
        if link.cosine < THRESHOLDS[link.rule]:
            continue
        if link.rule in WORDING_RULES and link.wording < WORDING_SHARE:
            continue                      # the same name or heading over statements that say different things
        if union.union(link.a, link.b, allow_same=link.rule in SAME_SOURCE_RULES):
            evidence[link.rule] += 1
            accepted.append(link)
    comps: dict[int, list[int]] = defaultdict(list)
    for x in union.parent:
        comps[union.find(x)].append(x)
    members = sorted((sorted(v) for v in comps.values() if len(v) > 1), key=lambda v: v[0])
    of = np.full(n, -1, dtype=np.int32)
    for g, keys in enumerate(members):
        of[keys] = g
    ids = cols["id"]
    labels = [x.split(":", 1)[1] if ":" in x else x for x in ids]
    return Groups(ids, cols["source"], labels, of, members, external or {}, dict(evidence), accepted)


# ------------------------------------------------------------------------------ across bundles

# A 1000+ name that stands for more Lean declarations than this is a topic, not one fact.
MAX_LEAN_PER_NAME = 3


def explicit_copies(this: dict[str, list], other: dict[str, list], this_formal: bool,
                    lean_label: str = "Lean") -> dict[int, list[Copy]]:
    """The copies in the other bundle that explicit evidence gives each key of this one: a Lean
    declaration tagged ``@[stacks TAG]`` and ``stacks:TAG``; a Metamath label and the Lean declarations
    that carry its 1000+ name (the Lean reader's aliases from Mathlib's ``docs/1000.yaml``), when the
    name is on one label and at most ``MAX_LEAN_PER_NAME`` declarations. ``this`` and ``other`` are
    columns (``id``, ``source``, ``aliases``; the formal side's ``stacks``); ``lean_label`` is how a
    Lean copy's source is shown (``Mathlib``)."""
    formal, informal = (this, other) if this_formal else (other, this)
    # Stacks tags
    stacks_of: dict[str, list[str]] = defaultdict(list)       # tag -> lean ids
    for doc_id, tags in zip(formal["id"], formal.get("stacks") or []):
        for tag in str(tags or "").split():
            stacks_of[tag.upper()].append(doc_id)
    # 1000+ names: Metamath label <- name -> Lean declarations
    mm_of: dict[str, list[str]] = defaultdict(list)           # folded name -> metamath ids
    for doc_id, src, al in zip(informal["id"], informal["source"], informal.get("aliases") or []):
        if src == "metamath" and al:
            for nm in fold_names(al.split("; ")):
                if not nm.endswith(("theorems", "lemmas")):
                    mm_of[nm].append(doc_id)
    lean_of: dict[str, list[str]] = defaultdict(list)         # folded name -> lean ids
    f_ids, f_aliases = formal["id"], formal.get("aliases") or []
    rows = [r for r, al in enumerate(f_aliases) if al]
    if mm_of and rows:
        folded = fold_names([a for r in rows for a in f_aliases[r].split("; ")])
        at = 0
        for r in rows:
            count = len(f_aliases[r].split("; "))
            for nm in folded[at:at + count]:
                if nm in mm_of:
                    lean_of[nm].append(f_ids[r])
            at += count
    pairs: list[tuple[str, str]] = []                          # (informal id, lean id)
    for tag, leans in stacks_of.items():
        pairs += [(f"stacks:{tag}", x) for x in leans]
    for nm, leans in lean_of.items():
        mms = mm_of[nm]
        if len(mms) == 1 and len(set(leans)) <= MAX_LEAN_PER_NAME:
            pairs += [(mms[0], x) for x in dict.fromkeys(leans)]
    key_of = {doc_id: i for i, doc_id in enumerate(this["id"])}
    out: dict[int, list[Copy]] = defaultdict(list)
    for inf, lean in pairs:
        mine, theirs = (lean, inf) if this_formal else (inf, lean)
        k = key_of.get(mine)
        if k is None:
            continue
        src, _, label = theirs.partition(":")
        copy = Copy(lean_label if src == "lean" else SOURCE_NAMES.get(src, src), label, theirs)
        if copy not in out[k]:
            out[k].append(copy)
    return dict(out)


def _partner_root(bundle: Bundle):
    """The installed bundle of the other kind (formal for an informal bundle, the default bundle for a
    formal one), or None; never installs anything."""
    import os
    from pathlib import Path

    from mathlas.bundle import MANIFEST
    from mathlas.releases.formal_specs import formal_bundle_spec
    from mathlas.releases.install import DEFAULT_BUNDLE, installed, split_spec

    formal = "module" in bundle.table.column_names
    spec = (os.environ.get("MATHLAS_BUNDLE") or DEFAULT_BUNDLE) if formal else formal_bundle_spec(None)
    path = Path(spec).expanduser()
    if (path / MANIFEST).is_file():
        root = path.resolve()
    else:
        try:
            name, version = split_spec(spec)
        except Exception:  # noqa: BLE001 - a malformed setting: no partner, the search goes on
            return None
        found = [b for b in installed() if (b.name == name and (version is None or b.version == version))
                 or b.path.name == spec]
        if not found:
            return None
        root = found[-1].path.resolve()
    return None if root == Path(bundle.root).resolve() else root


def _partner_columns(root) -> dict[str, list] | None:
    """The columns explicit links read from the bundle at ``root`` (None when it cannot be read)."""
    import pyarrow.parquet as pq

    from mathlas.bundle import META

    try:
        schema = pq.read_schema(root / META).names
        names = [c for c in ("id", "source", "aliases", "stacks") if c in schema]
        table = pq.read_table(root / META, columns=names)
    except Exception:  # noqa: BLE001 - an unreadable partner gives no links, never a failed search
        return None
    return {c: table.column(c).to_pylist() for c in names}


def _lean_label(root) -> str:
    """How the formal bundle's documents are shown: ``Mathlib`` for the Mathlib bundle, else ``Lean``."""
    from mathlas.releases.formal_specs import FORMAL_BUNDLE

    return "Mathlib" if root is not None and root.name.split("-", 1)[0] == FORMAL_BUNDLE else "Lean"


# ------------------------------------------------------------------------------ a bundle's groups

_CACHE: weakref.WeakKeyDictionary[Bundle, dict[bool, Groups]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
CACHE_DIR = "groups"     # under the data directory's cache/: computed groups, one file per bundle (and partner)


def groups_of(bundle: Bundle, across: bool = True, cache: bool = True) -> Groups:
    """The ``Groups`` of an open bundle: computed on first use from its columns and vectors (and,
    with ``across``, the explicit links to the installed bundle of the other kind), then kept while
    the bundle lives, and with ``cache`` in ``$MATHLAS_DATA_DIR/cache/groups`` for the next process
    (keyed by the bundle's and the partner's checksums and this module's source: a changed rule
    recomputes them; about a second on the default bundle, a few milliseconds from the cache)."""
    with _LOCK:
        cached = _CACHE.get(bundle, {}).get(across)
    if cached is not None:
        return cached
    table = bundle.table
    cols = {c: table.column(c).to_pylist() for c in ("id", "source")}
    root = _partner_root(bundle) if across else None
    path = _cache_file(bundle, root) if cache else None
    groups = _load(path, cols) if path is not None else None
    if groups is None:
        groups = _compute(bundle, root)
        if path is not None:
            _save(path, groups)
    with _LOCK:
        return _CACHE.setdefault(bundle, {}).setdefault(across, groups)


def _compute(bundle: Bundle, root) -> Groups:
    table = bundle.table
    cols = {c: table.column(c).to_pylist() for c in COLUMNS + FORMAL_COLUMNS if c in table.column_names}
    for c in COLUMNS:
        cols.setdefault(c, [None] * len(bundle))
    try:
        dense = bundle.dense
        vectors, scales = dense.vectors, np.asarray(dense.scales, dtype=np.float32)
    except Exception:  # noqa: BLE001 - a bundle without usable vectors groups by names alone
        vectors = scales = None
    external: dict[int, list[Copy]] = {}
    other = _partner_columns(root) if root is not None else None
    if other:
        mine = {c: cols[c] for c in ("id", "source", "aliases")}
        if "stacks" in table.column_names:
            mine["stacks"] = table.column("stacks").to_pylist()
        formal = "module" in table.column_names
        external = explicit_copies(mine, other, formal, _lean_label(root))
    bodies = table.column("body") if "body" in table.column_names else None
    body_of = (lambda keys: bodies.take(keys).to_pylist()) if bodies is not None else None  # noqa: E731
    return build_groups(cols, vectors, scales, external, body_of)


def _cache_file(bundle: Bundle, partner):
    """Where this bundle's groups (with this partner) are cached (``mathlas.paths.bundle_cache_file``:
    keyed by both bundles' checksums and this module's source), or None when it cannot say."""
    import json
    from pathlib import Path

    from mathlas.bundle import FLOAT_VECTORS, MANIFEST, META, META_ARROW
    from mathlas.paths import bundle_cache_file, checksums

    files = (META, META_ARROW, FLOAT_VECTORS)
    extra: list = []
    if partner is not None:
        try:
            pm = json.loads((Path(partner) / MANIFEST).read_text(encoding="utf-8"))
            extra = [pm.get("name"), pm.get("version"), checksums(pm.get("files") or {}, files)]
        except Exception:  # noqa: BLE001 - no cache, never a failed search
            return None
    return bundle_cache_file(CACHE_DIR, bundle, files, [__file__], ".npz", extra)


def _save(path, g: Groups) -> None:
    import io
    import json

    from mathlas.paths import save_cache

    flat = np.array([k for m in g.members for k in m], dtype=np.int64)
    offsets = np.cumsum([0] + [len(m) for m in g.members]).astype(np.int64)
    external = json.dumps([[k, *c] for k, cs in sorted(g.external.items()) for c in cs])
    buf = io.BytesIO()
    np.savez(buf, of=g.of, flat=flat, offsets=offsets, n=np.int64(len(g.of)),
             external=np.array(external), evidence=np.array(json.dumps(g.evidence)))
    save_cache(path, buf.getvalue())   # a read-only data directory: the next process computes them again


def _load(path, cols: dict[str, list]) -> Groups | None:
    import json

    try:
        with np.load(path, allow_pickle=False) as z:
            if int(z["n"]) != len(cols["id"]):
                return None
            of, flat, offsets = z["of"], z["flat"], z["offsets"]
            external_rows = json.loads(str(z["external"]))
            evidence = json.loads(str(z["evidence"]))
    except Exception:  # noqa: BLE001 - missing or unreadable: compute
        return None
    members = [flat[offsets[i]:offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]
    external: dict[int, list[Copy]] = defaultdict(list)
    for k, source, label, doc_id in external_rows:
        external[int(k)].append(Copy(source, label, doc_id))
    ids = cols["id"]
    labels = [x.split(":", 1)[1] if ":" in x else x for x in ids]
    return Groups(ids, cols["source"], labels, of.astype(np.int32), members, dict(external), evidence)
