"""The statement of a ``@[to_additive]`` translation, as Lean's ``to_additive`` would write it.

``@[to_additive] theorem mul_comm : ∀ a b : G, a * b = b * a`` also declares ``add_comm``, whose
statement is ``∀ a b : G, a + b = b + a``. The reader has no elaborator, so the additive statement is
made from the multiplicative one's text (``additive_statement``):

* ``*`` -> ``+``, ``/`` -> ``-``, ``∏`` -> ``∑`` (``∏ᶠ`` -> ``∑ᶠ``), ``•`` -> ``+ᵥ``;
* a postfix ``x⁻¹`` -> ``-x`` (``(-x)`` as a function's argument: ``f x⁻¹`` -> ``f (-x)``);
* ``a ^ n`` -> ``n • a`` (the base an application ``f x``, the exponent left as it is: ``a ^ (m * n)``
  -> ``(m * n) • a``, where the ``*`` multiplies natural numbers);
* the identity ``1`` -> ``0``, not a ``1`` of natural-number arithmetic (beside ``+``, ``-`` or ``•``,
  or in an exponent: ``a ^ (n + 1) = a ^ n * a`` -> ``(n + 1) • a = n • a + a``);
* the project's multiplicative notation -> its additive twin's (``notation``, from
  ``additive_notation``): ``|a|ₘ`` (``mabs``) -> ``|a|``, ``Eₘ[s, t]`` (``Finset.mulEnergy``) ->
  ``E[s, t]``, ``f ⋆ₘₗ[μ] g`` -> ``f ⋆ₗ[μ] g``: the atoms of a notation whose head ``@[to_additive]``
  translates, replaced by those of the translation's notation where they differ;
* names by the rule the caller gives: the reader's is ``lean_generated.statement_names``, which renames
  the declarations ``@[to_additive]`` translates (``MonoidHom`` -> ``AddMonoidHom``, ``Finset.prod`` ->
  ``Finset.sum``) and leaves the rest (``Prod.fst``); ``Type*`` and ``Sort*`` are left alone.

A text rule, not Lean's type-directed one: a ``*`` between natural numbers outside an exponent is
translated too. ``additive_docstring`` is the docstring the attribute gives the translation
(``@[to_additive /-- ... -/]`` or ``"..."``), None when it gives none.
"""
from __future__ import annotations

import re
from collections.abc import Callable

_TOKEN = re.compile(r"\s+|∏ᶠ|⁻¹|\+ᵥ|(?:«[^»]*»|[^\W\d])(?:[\w'!?.₀-₉]|«[^»]*»)*|\d+(?:\.\d+)?|.", re.S)
_OPEN = {"(": ")", "[": "]", "{": "}", "⦃": "⦄", "⟨": "⟩", "⟪": "⟫", "⟦": "⟧", "‖": "‖", "|": "|"}
_CLOSE = {v: k for k, v in _OPEN.items() if v not in "|‖"}
_PREFIX = {"#", "↑", "⇑", "↥", "-", "¬", "√"}
_WORD = re.compile(r"(?:«[^»]*»|[^\W\d])")
_KEYWORDS = {"fun", "λ", "∀", "∃", "∃!", "if", "then", "else", "let", "have", "show", "from", "by", "at", "in",
             "Type", "Sort", "Prop"}
_SIMPLE = {"*": "+", "/": "-", "∏": "∑", "∏ᶠ": "∑ᶠ", "•": "+ᵥ"}
_NAT_OPS = {"+", "-", "•", "%", "÷", "!"}


def _atom(t: str) -> bool:
    """A token that can be (the start or end of) an operand: a name, a number, a made operand."""
    return bool(t) and (t[0].isdigit() or bool(_WORD.match(t)) and t not in _KEYWORDS or t[0] in "\x00·")


def _back(toks: list[str], i: int) -> int:
    """Start of the operand that ends just before ``i`` (spaces skipped): a bracketed group, a name or
    number; -1 when there is none."""
    j = i - 1
    while j >= 0 and toks[j].isspace():
        j -= 1
    if j < 0:
        return -1
    t = toks[j]
    if t == BAR_END:   # |a|ₘ ^ n, |a|ₘ⁻¹: the operand is the bars and what they hold (nested ones counted)
        depth = 0
        for k in range(j - 2, -1, -1):
            if toks[k] == BAR_END:
                depth += 1
            elif toks[k] == "|" and toks[k + 1] != BAR_END:   # an opening bar
                if depth == 0:
                    return k
                depth -= 1
        return -1
    if t in _CLOSE:
        depth, start = 0, -1
        for k in range(j, -1, -1):
            if toks[k] == t:
                depth += 1
            elif toks[k] == _CLOSE[t]:
                depth -= 1
                if depth == 0:
                    start = k
                    break
        # written against a name (no space): an index or a subscript, one operand with it (L[i], f⟨x⟩)
        while start > 0 and (_atom(toks[start - 1]) or toks[start - 1] in _CLOSE):
            start = _back(toks, start)
        return start
    return j if _atom(t) else -1


def _forward(toks: list[str], i: int) -> int:
    """End (exclusive) of the operand that starts at or after ``i`` (spaces skipped); -1 when none."""
    j = i
    while j < len(toks) and toks[j].isspace():
        j += 1
    if j >= len(toks):
        return -1
    t = toks[j]
    if t in _PREFIX:   # #s, ↑x, -x: the operator and its operand
        return _forward(toks, j + 1)
    if t in _OPEN and t != "|":
        depth = 0
        for k in range(j, len(toks)):
            if toks[k] == t:
                depth += 1
            elif toks[k] == _OPEN[t]:
                depth -= 1
                if depth == 0:
                    return k + 1
        return -1
    return j + 1 if _atom(t) else -1


def _chain_back(toks: list[str], i: int) -> int:
    """Start of the application (``f x y``) that ends just before ``i``."""
    start = _back(toks, i)
    while start > 0:
        k = _back(toks, start)
        if k < 0 or toks[k] in _KEYWORDS:
            break
        start = k
    return start


def _chain_forward(toks: list[str], i: int) -> int:
    end = _forward(toks, i)
    while end > 0:
        k = _forward(toks, end)
        if k < 0:
            break
        end = k
    return end


def _neighbour(toks: list[str], i: int, step: int) -> str:
    j = i + step
    while 0 <= j < len(toks) and toks[j].isspace():
        j += step
    return toks[j] if 0 <= j < len(toks) else ""


def _power(toks: list[str], i: int) -> bool:
    """``a ^ n``, not Lean's iteration ``f^[n]``."""
    return toks[i] == "^" and toks[i + 1:i + 2] != ["["]


def _made(text: str) -> str:
    """A rewritten operand, one token from now on (marked so that it counts as an operand)."""
    return "\x00" + text


def _text(toks: list[str]) -> str:
    return "".join(t.replace("\x00", "").replace(BAR_END, "") for t in toks)


# The mark a translated closing bar carries while the statement is rewritten (``|a|ₘ`` is
# ``mabs a``, an element of the group: ``|a|ₘ ^ n`` -> ``n • |a|``; a bar without it, ``|x|`` of
# an ordered field or a set-builder ``{x | p x}``, is no operand the rules rewrite)
BAR_END = "\x01"


def additive_statement(text: str, name: Callable[[str], str], keep: frozenset[str] | set[str] = frozenset(),
                       notation: Notation | None = None) -> str:
    """``text`` (a signature or header) with ``@[to_additive]``'s translation; ``name`` translates a
    name (``lean_generated.statement_names``, or ``additive_name`` where no translations are known).
    ``keep``: the ``(dont_translate := R)`` types; a name applied to one of them stays (``[Monoid R]``,
    ``DistribMulAction R k``), as to_additive leaves what is about a type it does not translate.
    ``notation``: the project's multiplicative notation atoms and their additive ones (``additive_notation``)."""
    if not text:
        return text
    if notation:
        text = notation.sub(text, keep)
    toks = _TOKEN.findall(text)
    # exponents are natural numbers or integers: nothing in them is translated
    kept = [False] * len(toks)
    for i in range(len(toks)):
        if _power(toks, i):
            end = _chain_forward(toks, i + 1)
            for k in range(i + 1, max(end, i + 1)):
                kept[k] = True
    out = []
    for i, t in enumerate(toks):
        if kept[i] or t.isspace():
            out.append(t)
        elif t in _SIMPLE:
            out.append(t if t == "*" and i and toks[i - 1] in ("Type", "Sort") else _SIMPLE[t])
        elif t == "1":  # (one in an exponent is kept above)
            near = {_neighbour(toks, i, -1), _neighbour(toks, i, 1)}
            out.append(t if near & _NAT_OPS else "0")
        elif _WORD.match(t) and t not in _KEYWORDS:
            out.append(t if keep and _neighbour(toks, i, 1) in keep else name(t))
        else:
            out.append(t)
    toks = out
    # x⁻¹ -> -x, left to right (x⁻¹⁻¹ -> - -x)
    i = 0
    while i < len(toks):
        if toks[i] == "⁻¹":
            start = _back(toks, i)
            if start >= 0:
                operand = _text(toks[start:i]).strip()
                neg = "- " + operand if operand.startswith("-") else "-" + operand
                before = _neighbour(toks, start, -1)
                if _atom(before) or before in _CLOSE or before in "↑⇑↥":   # an argument: f x⁻¹ -> f (-x)
                    neg = f"({neg})"
                toks[start:i + 1] = [_made(neg)]
                i = start
        i += 1
    # a ^ n -> n • a
    i = 0
    while i < len(toks):
        if _power(toks, i):
            start, end = _chain_back(toks, i), _chain_forward(toks, i + 1)
            if start >= 0 and end > 0:
                toks[start:end] = [_made(f"{_text(toks[i + 1:end]).strip()} • {_text(toks[start:i]).strip()}")]
                i = start
        i += 1
    return _text(toks)


_DOC = re.compile(r'/--\s*(.*?)\s*-/|"((?:[^"\\]|\\.)*)"', re.S)


def additive_docstring(attributes: list[str]) -> str | None:
    """The docstring ``@[to_additive /-- ... -/]`` (or ``"..."``) gives the additive declaration."""
    for a in attributes:
        if re.match(r"to_additive\b", a):
            m = _DOC.search(a)
            if m:
                return " ".join((m.group(1) if m.group(1) is not None else m.group(2)).split())
    return None


# A notation command of the project: its atoms (every quoted string before ``=>``) and the head it
# stands for (the first name after ``=>``, or after a macro's `` `( ``). ``notation3``, ``infixl``,
# ``macro`` (``macro:max atomic("|" noWs) a:term noWs "|ₘ" : term => `(mabs $a)``) alike.
_NOTATION_CMD = re.compile(r'^(?:@\[[^\]\n]*\]\s*)?(?:(?:scoped(?:\[[\w.]+\])?|local)\s+)?'
                           r'(?:notation3?|infixl?|infixr|prefix|postfix|macro)\b[^\n]*(?:\n[ \t]+[^\n]*)*', re.M)
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_NOTATION_HEAD = re.compile(r"=>\s*(?:`\(\s*)?@?([^\W\d][\w'!?.]*)")
_NAME_BEFORE = r"(?:«[^»]*»|[^\W\d])(?:[\w'!?.₀-₉]|«[^»]*»)*?"
_SCOPE = re.compile(r"^[ \t]*(?:noncomputable[ \t]+)?(namespace|section|end)\b[ \t]*([^\s]*)", re.M)


def scan_notation_atoms(text: str, masked: str, extras: dict) -> None:
    """A file's notation commands as ``extras["notation_atoms"]`` entries ``(atoms, head, namespace)``,
    for ``additive_notation`` (``("|", "|ₘ"), "mabs", ""``; ``("Eₘ[", ",", "]"), "Finset.mulEnergy", ""``;
    ``("⨂ₜ[", "]", ","), "tprod", "PiTensorProduct"``: the namespace it is written in resolves its head)."""
    scopes = [(m.start(), m.group(1), m.group(2)) for m in _SCOPE.finditer(masked)]
    stack: list[tuple[str, str]] = []
    at = 0
    for m in _NOTATION_CMD.finditer(text):
        if masked[m.start():m.start() + 3] != text[m.start():m.start() + 3]:
            continue  # inside a comment or a string
        while at < len(scopes) and scopes[at][0] < m.start():
            _, kind, name = scopes[at]
            if kind == "end":
                if stack:
                    stack.pop()
            else:
                stack.append((kind, name))
            at += 1
        cmd = m.group()
        head = _NOTATION_HEAD.search(cmd)
        if head is None:
            continue
        atoms = tuple(a.strip() for a in _QUOTED.findall(cmd[:head.start()]) if a.strip())
        if atoms:
            namespace = ".".join(name for kind, name in stack if kind == "namespace" and name)
            extras.setdefault("notation_atoms", []).append((atoms, head.group(1), namespace))


class Notation:
    """Multiplicative notation atoms -> additive ones, replaced in a text longest first (``sub``)."""

    def __init__(self, pairs: dict[str, str]):
        self.pairs = pairs
        atoms = "|".join(map(re.escape, sorted(pairs, key=len, reverse=True)))
        # an atom with the name written right before it (Rᵐᵒᵖ), which a (dont_translate := R) keeps
        self._pattern = re.compile(rf"(?P<name>{_NAME_BEFORE})?(?P<atom>{atoms})") if pairs else None

    def sub(self, text: str, keep: frozenset[str] | set[str] = frozenset()) -> str:
        """``text`` with each atom replaced (a closing bar marked ``BAR_END``), but where the name
        written right before it is one of the ``keep`` types."""
        def one(m: re.Match) -> str:
            name, atom = m.group("name") or "", m.group("atom")
            if name and name in keep:
                return m.group()
            new = self.pairs[atom]
            return name + (new + BAR_END if new.endswith("|") else new)
        return self._pattern.sub(one, text) if self._pattern else text

    def __bool__(self) -> bool:
        return bool(self.pairs)


def additive_notation(entries, translations: dict[str, str], declared: set[str] | frozenset[str] = frozenset()) -> Notation:
    """From ``scan_notation_atoms``' entries, ``@[to_additive]``'s translations (full name -> full
    name) and the project's declared names: for a notation whose head is a translated declaration,
    the translation's notation with as many atoms (the only one: a head with two of that length, one
    of them the multiplicative one's own, as ``MulActionHom``'s ``→[`` and ``→ₑ[``, is left alone),
    each atom that differs -> the translation's (``|ₘ`` -> ``|`` from ``mabs`` and ``abs``). A head
    resolves as Lean does, from the namespace it is written in outwards (``tprod`` in ``namespace
    PiTensorProduct`` is ``PiTensorProduct.tprod``, not the root ``tprod``); an atom that would map two
    ways is left out, as are ASCII ones (``*``, ``/``: the statement's own rules translate them)."""
    known = set(declared) | set(translations) | set(translations.values())

    def full_of(head: str, namespace: str) -> str | None:
        parts = namespace.split(".") if namespace else []
        for i in range(len(parts), -1, -1):
            name = ".".join([*parts[:i], head])
            if name in known:
                return name
        return None

    atoms_of: dict[str, set[tuple[str, ...]]] = {}
    for atoms, head, *where in entries:
        full = full_of(head, where[0] if where else "")
        if full is not None:
            atoms_of.setdefault(full, set()).add(atoms)
    pairs: dict[str, str] = {}
    refused: set[str] = set()
    for src, tgt in translations.items():
        adds = atoms_of.get(tgt, set())
        for mul in atoms_of.get(src, ()):
            same_length = [add for add in adds if len(add) == len(mul)]
            if mul in adds or len(same_length) != 1:
                continue
            for a, b in zip(mul, same_length[0]):
                if a == b or a.isascii():
                    continue
                if pairs.get(a, b) != b:
                    refused.add(a)
                pairs[a] = b
    return Notation({a: b for a, b in pairs.items() if a not in refused})
