"""The ``variable`` binders a Lean 4 declaration takes from its sections, so that its signature reads
as Lean states it (``{R : Type*} [CommRing R] (I : Ideal R) : I.height ≤ …``, not ``: I.height ≤ …``).

Lean 4 adds to a declaration the section variables it uses; for a theorem (since 2024) only those its
*statement* uses, for a definition also those its body uses. Used, transitively: a variable whose
type mentions another (``(I : Ideal R)`` brings ``R``). An instance binder (``[CommRing R]``, named or
not) comes when every variable its type mentions has come; so does an implicit variable written
for instance resolution (a name that begins with ``_``, or a ``MeasurableSpace``/``TopologicalSpace``
… structure: Lean elaborates the statement with every variable in scope and keeps those it used). ``include h`` brings ``h`` whatever the
statement says; ``omit [Fintype α]`` / ``omit h`` leave one out. ``variable (R)`` without a type
changes how an earlier ``R`` is bound (explicit, implicit, …); redeclaring a name shadows the earlier
one. ``variable … in``, ``include … in`` and ``omit … in`` change the next command only.

* ``parse(text)``: the binder groups of a ``variable`` command's text.
* ``Scope``: the variables of one section/namespace (``add``, ``include``, ``omit``).
* ``binders_for(scopes, statement, body)``: the binders, as Lean writes them, a declaration takes.

The rule reads names only (a local ``∀ x`` that shadows a variable ``x`` still brings it), and an
instance is matched to an ``omit`` by its text; both are rare in Mathlib."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from mathlas_build.sources import lean_generated as gen

_OPENERS = {"(": ")", "{": "}", "⦃": "⦄", "[": "]"}
_NAME = re.compile(r"[^\W\d][\w'!?]*")
# structures Mathlib passes as implicit variables for instance resolution to find
# (``{m : MeasurableSpace Ω}``): Lean takes one wherever the statement needs it, as an instance
_INSTANCE_LIKE = ("MeasurableSpace", "TopologicalSpace", "UniformSpace", "Bornology")
# a mention: an identifier's first dotted part (``f.comp g`` uses ``f``), not a field name (``.foo``)
# and not an explicit universe or a name inside «»
_MENTION = re.compile(r"(?<![\w'!?.«])@?([^\W\d][\w'!?]*)")


@dataclass
class Var:
    name: str        # "" for an anonymous instance binder
    bracket: str     # "(", "{", "⦃", "{{", "["
    type: str
    group: int       # binders written in one group (and bound alike) are shown in one group


def _close(bracket: str) -> str:
    return "}}" if bracket == "{{" else _OPENERS[bracket]


def _match(s: str, i: int) -> int:
    """Index just past the bracket group opening at ``s[i]`` (the end of ``s`` when unbalanced)."""
    depth = 0
    for j in range(i, len(s)):
        c = s[j]
        if c in "({[⦃⟨":
            depth += 1
        elif c in ")}]⦄⟩":
            depth -= 1
            if depth <= 0:
                return j + 1
    return len(s)


def parse(text: str) -> list[tuple[str, list[str], str | None]]:
    """The binder groups of ``text`` (a ``variable`` command's arguments) as (bracket, names, type):
    ``{R S : Type*}`` -> ("{", ["R", "S"], "Type*"); ``[CommRing R]`` -> ("[", [], "CommRing R");
    ``[inst : Foo]`` -> ("[", ["inst"], "Foo"); ``(R)`` (a binder update) -> ("(", ["R"], None).
    Reading stops at anything that is not a binder group (a trailing ``in``, a structure's ``extends``;
    ``mathlas.lean_gloss.binders`` passes over such words and would read ``extends P (f I c)``'s group)."""
    out: list[tuple[str, list[str], str | None]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if c not in _OPENERS:
            break
        e = _match(text, i)
        inner = text[i + 1:e - 1]
        bracket = c
        if c == "{" and inner.startswith("{") and inner.endswith("}"):
            bracket, inner = "{{", inner[1:-1]
        inner = " ".join(inner.split())
        colon = gen.top_level(inner, ":")
        if bracket == "[":
            head = inner[:colon].strip() if colon >= 0 else ""
            if colon >= 0 and _NAME.fullmatch(head):
                out.append(("[", [head], inner[colon + 1:].strip()))
            elif inner:
                out.append(("[", [], inner))
        elif colon >= 0:
            names = inner[:colon].split()
            if names and all(_NAME.fullmatch(x) or x == "_" for x in names):
                out.append((bracket, names, inner[colon + 1:].strip()))
        else:
            names = inner.split()
            if names and all(_NAME.fullmatch(x) for x in names):
                out.append((bracket, names, None))
        i = e
    return out


_groups = iter(range(1, 1 << 62))


@dataclass
class Scope:
    """What one section or namespace (or one ``… in`` prefix) adds: variables, binder updates,
    included names and omitted ones, in the order written."""
    steps: list[tuple[str, object]] = field(default_factory=list)

    def command(self, keyword: str, text: str) -> None:
        """What the command ``keyword`` (``variable``, ``include``, ``omit``) with arguments ``text`` adds."""
        {"variable": self.add, "include": self.include, "omit": self.omit}[keyword](text)

    def add(self, text: str) -> None:
        for bracket, names, typ in parse(text):
            if typ is None:
                self.steps.extend(("update", (x, bracket, next(_groups))) for x in names)
                continue
            g = next(_groups)
            self.steps.extend(("var", Var(x, bracket, typ, g)) for x in (names or [""]))

    def include(self, text: str) -> None:
        self.steps.extend(("include", x) for x in _NAME.findall(text))

    def omit(self, text: str) -> None:
        for bracket, names, typ in parse(text):
            if bracket == "[" and not names:
                self.steps.append(("omit_type", typ))
            else:
                self.steps.extend(("omit", x) for x in names)
        rest = re.sub(r"[(\[{⦃][^)\]}⦄]*[)\]}⦄]", " ", text)  # `omit h hx in`
        self.steps.extend(("omit", x) for x in _NAME.findall(rest) if x != "in")

    def __bool__(self) -> bool:
        return bool(self.steps)


def _instance_like(v: Var) -> bool:
    return v.bracket in ("{", "[") and (v.name.startswith("_") or v.type.startswith(_INSTANCE_LIKE))


def mentions(text: str) -> set[str]:
    return set(_MENTION.findall(text))


# a binder inside a term: what follows it up to its `,` / `=>` / `↦` names locals
_TERM_BINDER = re.compile(r"(?:∀|∃!?|fun|λ|Π|Σ|∑|∏|⋃|⋂|⨆|⨅|∫⁻?)(?![\w'])\s*([^,↦]*?)(?:,|=>|↦)")
_STOP = re.compile(r"[:∈∉<>≤≥⊆⊂∣≠]")


def bound(text: str) -> set[str]:
    """Names bound inside ``text`` by ``∀ x y : T,``, ``∃ x ∈ s,``, ``fun (a : α) ↦``, ``∑ i ∈ s,`` …:
    a variable of the same name is not what the statement mentions (``∀ a b : G, a * b = b * a``
    takes no variable ``a``)."""
    out: set[str] = set()
    for m in _TERM_BINDER.finditer(text):
        zone = m.group(1)
        for g in re.finditer(r"[(\[{⦃⟨]([^()\[\]{}⦃⦄⟨⟩]*)", zone):  # `(x y : T)`, `⟨a, b⟩`
            inner = g.group(1)
            c = _STOP.search(inner)
            out.update(_NAME.findall(inner[:c.start()] if c else inner))
        head = re.sub(r"[(\[{⦃⟨].*", "", zone)
        c = _STOP.search(head)
        out.update(_NAME.findall(head[:c.start()] if c else head))
    return out


def _effective(scopes) -> tuple[list[Var], set[str], set[str], set[str]]:
    """The variables in force after ``scopes`` (outermost first), with the included names and the
    omitted names and instance types."""
    by_key: dict[object, Var] = {}
    included: set[str] = set()
    omitted: set[str] = set()
    omitted_types: set[str] = set()
    for scope in scopes:
        for kind, x in scope.steps:
            if kind == "var":
                key = x.name or object()
                by_key.pop(key, None)   # a redeclared name shadows the earlier one
                by_key[key] = x
                included.discard(x.name)
            elif kind == "update":
                name, bracket, g = x
                v = by_key.get(name)
                if v is not None:
                    by_key[name] = Var(name, bracket, v.type, g)
            elif kind == "include":
                included.add(x)
            elif kind == "omit":
                omitted.add(x)
            elif kind == "omit_type":
                omitted_types.add(" ".join(str(x).split()))
    return list(by_key.values()), included, omitted, omitted_types


def binders_for(scopes, statement: str, body: str = "") -> str:
    """The binders (as Lean writes them, one group per group written) of the variables in ``scopes``
    (outermost first) that a declaration with this statement (its header after the name) and body
    (a definition's; "" for a theorem) takes; "" when none."""
    vars_, forced, omitted, omitted_types = _effective(scopes)
    if not vars_:
        return ""
    named = {v.name: v for v in vars_ if v.name}
    own = {n for _, names, _ in parse(statement) for n in names}   # `(L)` without a type binds `L` too
    used = (mentions(statement) - bound(statement) | mentions(body) - bound(body)) - own
    take = {n for n in used if n in named} | {n for n in forced if n in named}
    take -= omitted
    todo = list(take)
    while todo:  # a variable's type brings the variables it mentions
        for m in mentions(named[todo.pop()].type):
            if m in named and m not in take and m not in omitted:
                take.add(m)
                todo.append(m)
    chosen: list[Var] = []
    for v in vars_:
        if v.name and not (v.name in take or _instance_like(v) and v.name not in omitted):
            continue
        if v.name in take:
            chosen.append(v)
            continue
        if " ".join(v.type.split()) in omitted_types:
            continue
        deps = {m for m in mentions(v.type) if m in named}
        if deps and deps <= take:
            chosen.append(v)
    out: list[str] = []
    k = 0
    while k < len(chosen):
        v = chosen[k]
        j = k + 1
        while j < len(chosen) and chosen[j].group == v.group and chosen[j].bracket == v.bracket and v.name:
            j += 1
        names = " ".join(x.name for x in chosen[k:j])
        inner = f"{names} : {v.type}" if names else v.type
        out.append(f"{v.bracket}{inner}{_close(v.bracket)}")
        k = j
    return " ".join(out)
