"""The Lean declaration splitter behind ``mathlas.tools.scaffold``: a formal bundle's declaration (its
kind and its signature, ``{G : Type*} [Group G] (hp : p.Prime) : ∀ x, P x → Q x``) in, its
preconditions, conclusion and variables out. Pure text work; the signature's top-level binders and
its type are read by ``mathlas.lean_gloss`` (``binders``, ``conclusion``), what follows here reads
the type.

- **Binders** (the signature's, and those of a leading ``∀``), in order:
  an instance ``[CommRing R]`` (``[inst : CommRing R]``) is a precondition as written (cue
  ``instance``); a hypothesis ``(hp : p.Prime)`` is a precondition, its type alone (cue
  ``hypothesis``); any other binder ``{p : ℕ}``, ``(I : Ideal R)``, ``∀ a b : G``, ``∀ x ∈ s``,
  ``∀ ε > 0`` is a variable, listed as ``for p : ℕ`` (cue ``for``: the problem must have such an
  object, as an informal "for every ..." precondition keeps its cue); a binder whose type is a
  universe (``{G : Type*}``, ``Type u``, ``Sort*``) states nothing to check and is left out of the
  preconditions (``[Group G]`` says what G is). A binder is a hypothesis when its type holds a
  relation or a negation at its top level (``(n_pos : 0 < n)``; not ``ℝ≥0``, a type), or its name
  starts with ``h`` (Mathlib's convention: ``hp``, ``hfg``, ``h₁``; not ``{h : G}``, whose type is a
  bare name), or ``H`` and its type holds a relation, or it is explicit and nothing after it uses its
  name (``(pp : p.Prime)``; not in a definition, whose body uses it), as
  ``mathlas.ranking.lean_text.bound`` reads hypotheses for search.
- **Premises**: the type's top-level ``→`` chain, each premise a precondition (cue ``→``), the last
  target the conclusion; a ``∀`` after an arrow (``a → ∀ x, b → c``) is read on. Not split: a
  type with a top-level ``↔`` (``a → b ↔ c`` is ``(a → b) ↔ c``: the iff is the conclusion) and
  whatever follows a binder that runs to the end of the term (``∃ x, p x → q x``, ``fun``, ``∑``,
  ``∀ᶠ``).
- **Definitions** (``def``, ``abbrev``, ``structure``, ``class``, ``inductive``, ``opaque``) state no
  result: their binders are read as above and the conclusion is empty.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from mathlas.lean_gloss import binders, conclusion
from mathlas.ranking.lean_text import outside_brackets
from mathlas.tools.latex_split import MAX_ITEMS, Precondition

DEFINITION_KINDS = frozenset({"def", "abbrev", "structure", "class", "inductive", "opaque"})

_OPEN = {"(": ")", "{": "}", "[": "]", "⦃": "⦄", "⟨": "⟩"}
_CLOSE = frozenset(_OPEN.values())
_BINDER_OPEN = "({[⦃"
# a binder whose body runs to the end of the term: an arrow or an iff after it is inside it
_TO_THE_END = re.compile(r"∃!?|∀ᶠ|∃ᶠ|∀|λ|Π|Σ|(?<![\w.'])fun(?![\w'])|[∑∏⋃⋂⨆⨅∫∮]")
_UNIVERSE = re.compile(r"^(?:Type|Sort)(?:\*|\s|_|$|\()")
# relations and connectives that make a binder's type a statement (not ≃ ≅: equivalences are data)
_RELATION = re.compile(r"[=≠≤<≥>↔∣∈∉⊆⊂⊇⊃∧∨¬]")
_NNREAL = re.compile(r"[ℝℚ]≥0∞?")  # the types ℝ≥0, ℝ≥0∞ and ℚ≥0 (NNReal, ENNReal, NNRat), not a relation
_IDENTS = re.compile(r"[^\W\d][\w'!?]*(?:\s+[^\W\d][\w'!?]*)*\s*")  # names apart (one way to match: no backtracking)
_IDENT = re.compile(r"[^\W\d][\w'!?]*")
_NAME = re.compile(r"[^\W\d][\w'!?.]*")
Used = Callable[[str], bool]   # whether the text after a binder names a name


@dataclass
class LeanSplit:
    """A declaration read as a checklist: its preconditions in order, its conclusion ("" for a
    definition), and its variables as (name, type) for the symbol mapping ("" where untyped)."""

    preconditions: list[Precondition]
    conclusion: str
    variables: list[tuple[str, str]]
    definition: bool


def _top(text: str):
    """(index, character) of each character of ``text`` outside brackets."""
    return outside_brackets(text, _OPEN, _CLOSE)


def _close(text: str, i: int) -> int:
    """Index just past the bracket that closes the one at ``text[i]`` (``len(text)`` if unclosed)."""
    depth = 0
    for j in range(i, len(text)):
        depth += (text[j] in _OPEN) - (text[j] in _CLOSE)
        if depth == 0:
            return j + 1
    return len(text)


def _top_colon(text: str) -> int:
    return next((i for i, c in _top(text) if c == ":" and not text.startswith(":=", i)), -1)


def _first_arrow(text: str) -> tuple[int, int] | None:
    """(start, end) of the first top-level ``→`` a type can be split at, or None: none before a binder
    that runs to the end of the term, or a top-level ``↔`` (binding looser than ``→``) makes the whole
    an iff."""
    arrow = None
    for i, c in _top(text):
        if _TO_THE_END.match(text, i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_'.")):
            break
        if c == "↔" or text.startswith("<->", i):
            return None
        if arrow is None and (c == "→" or text.startswith("->", i) and not (i and text[i - 1] == "<")):
            arrow = (i, i + (1 if c == "→" else 2))
    return arrow


def _is_hypothesis(bracket: str, names: list[str], kind: str, later: Used | None) -> bool:
    """Whether a binder ``(names : kind)`` is a hypothesis rather than a variable (module docstring);
    ``later``: whether the text after it uses a name (None: a definition's binder, which its body uses)."""
    kind = _NNREAL.sub("", kind).replace("->", "→")
    if _RELATION.search("".join(c for _, c in _top(kind))):
        return True
    # h, hp, hfg, h₁: a hypothesis, unless its type is a bare name ({h : G}: an element of the group G)
    if names and not _IDENT.fullmatch(kind) and all(
            n.startswith("h") or n.startswith("H") and _RELATION.search(kind) for n in names):
        return True
    if later is None or bracket != "(" or not names or "self" in names:
        return False
    return not any(later(n) for n in names)


def _names(text: str) -> Iterator[re.Match]:
    return _NAME.finditer(text)   # a name's first component is what a binder's name can be


def _used_after(text: str) -> Callable[[int], Used]:
    """For the binder that ends at each offset of ``text``: whether the text from there names a name.
    One pass over the text (each binder scanning the rest was quadratic in the binders)."""
    last: dict[str, int] = {}

    def used(end: int, name: str) -> bool:
        if not last:   # on first use
            last.update((m.group().partition(".")[0], m.start()) for m in _names(text))
            last.setdefault("", -1)
        return last.get(name, -1) >= end
    return lambda end: lambda name: used(end, name)


def _used_outside(signature: str) -> Callable[[str], Used]:
    """For a binder's inner text: whether the rest of ``signature`` (the other binders, the type,
    ``extends``) names a name, counted once for the whole signature."""
    counted: dict[str, Counter] = {}

    def count(text: str) -> Counter:   # on first use: most binders are decided before it is asked
        if text not in counted:
            counted[text] = Counter(m.group().partition(".")[0] for m in _names(text))
        return counted[text]

    def outside(inner: str) -> Used:
        return lambda name: count(signature)[name] > count(inner)[name]
    return outside


def _binder(bracket: str, inner: str, later: Used | None) -> tuple[Precondition | None, list[tuple[str, str]]]:
    """One binder (``bracket``: its opening bracket, "" for a bare ``∀`` binder) as a precondition (None:
    a universe) and the variables it names; ``later``: whether the text after it uses a name (None:
    a definition's, which its body uses)."""
    inner = " ".join(inner.split())
    colon = _top_colon(inner)
    if bracket == "[":
        if colon >= 0 and _NAME.fullmatch(inner[:colon].strip()):
            inner = inner[colon + 1:].strip()
        return Precondition(text=inner, cue="instance"), []
    head, kind = (inner[:colon].strip(), inner[colon + 1:].strip()) if colon >= 0 else (inner, "")
    default = next((i for i, c in _top(kind) if c == ":" and kind.startswith(":=", i)), -1)
    if default >= 0:   # (h : p ≠ [] := proof): an optional argument, checked as its type
        kind = kind[:default].strip()
    names = head.split() if _IDENTS.fullmatch(head + " ") else []
    if bracket == "" and not (colon >= 0 and names):   # ∀ x, ∀ x y, ∀ x ∈ s, ∀ ε > 0
        lead = _IDENTS.match(inner)
        found = lead.group().split() if lead else []
        return Precondition(text=f"for {inner}", cue="for"), [(n, inner[lead.end():].strip()) for n in found]
    if not kind:
        return Precondition(text=f"for {inner}", cue="for"), [(n, "") for n in names]
    if _UNIVERSE.match(kind):
        return None, [(n, kind) for n in names]
    if _is_hypothesis(bracket or "(", names, kind, later):
        return Precondition(text=kind, cue="hypothesis"), []
    return Precondition(text=f"for {head} : {kind}", cue="for"), [(n, kind) for n in names]


def _pieces(group: str) -> list[tuple[str, str, int]]:
    """A ``∀``'s binders: each bracket group as (bracket, inner, end), and a run of bare names before
    one as ("", names, end); anything else (``x y : α``, ``x ∈ s``, ``ε > 0``) is one bare piece."""
    out: list[tuple[str, str, int]] = []
    i, n = 0, len(group)
    while i < n:
        if group[i].isspace():
            i += 1
        elif group[i] in _BINDER_OPEN:
            end = _close(group, i)
            out.append((group[i], group[i + 1:end - 1], end))
            i = end
        elif (m := _IDENTS.match(group, i)) and m.end() < n and group[m.end()] in _BINDER_OPEN:
            out.append(("", m.group().strip(), m.end()))
            i = m.end()
        else:
            out.append(("", group[i:].strip(), n))
            break
    return out


def _read_binders(found: list[tuple[str, str, int]], text: str, pre: list[Precondition],
                  variables: list[tuple[str, str]]) -> None:
    used_after = _used_after(text)
    for bracket, inner, end in found:
        p, names = _binder(bracket, inner, used_after(end))
        variables += names
        if p is not None:
            pre.append(p)


def _split_type(text: str, pre: list[Precondition], variables: list[tuple[str, str]]) -> str:
    """Read the ``∀`` binders and ``→`` premises off a type into ``pre`` and ``variables``; the rest,
    the conclusion, is returned."""
    text = " ".join(text.split())
    while len(pre) < MAX_ITEMS:
        if text.startswith("∀") and not text.startswith("∀ᶠ"):
            comma = next((i for i, c in _top(text) if c == ","), -1)
            if comma < 0:
                break
            _read_binders(_pieces(text[1:comma]), text[1:], pre, variables)
            text = text[comma + 1:].strip()
            continue
        arrow = _first_arrow(text)
        if arrow is None:
            break
        premise, text = text[:arrow[0]].strip(), text[arrow[1]:].strip()
        if premise[:1] in _BINDER_OPEN and _close(premise, 0) == len(premise) and _top_colon(premise[1:-1]) >= 0:
            _read_binders([(premise[0], premise[1:-1], len(premise))], premise + " " + text, pre, variables)
        else:   # (x : α) → β x is a binder; anything else a premise
            pre.append(Precondition(text=premise, cue="→"))
    return text


def split_declaration(kind: str, signature: str) -> LeanSplit:
    """A Lean declaration's preconditions, conclusion and variables, from its ``kind`` (theorem,
    lemma, def, instance...) and ``signature`` (its binders, then ``:`` and its type)."""
    pre: list[Precondition] = []
    variables: list[tuple[str, str]] = []
    definition = kind in DEFINITION_KINDS
    outside = None if definition else _used_outside(signature)
    for bracket, inner in binders(signature):
        # what follows may use its names: the rest of the signature (a later binder, the type, `extends`)
        p, names = _binder(bracket, inner, None if outside is None else outside(inner))
        variables += names
        if p is not None:
            pre.append(p)
    target = conclusion(signature)
    goal = "" if definition or not target else _split_type(target, pre, variables)
    once: dict[tuple[str, str], Precondition] = {}
    for p in pre:   # a section variable the bundle states twice ([Field K] ... [Field K]) is one precondition
        once.setdefault((p.text, p.cue), p)
    return LeanSplit(list(once.values())[:MAX_ITEMS], goal, variables, definition)
