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
    return "".join(t.replace("\x00", "") for t in toks)


def additive_statement(text: str, name: Callable[[str], str], keep: frozenset[str] | set[str] = frozenset()) -> str:
    """``text`` (a signature or header) with ``@[to_additive]``'s translation; ``name`` translates a
    name (``lean_generated.statement_names``, or ``additive_name`` where no translations are known).
    ``keep``: the ``(dont_translate := R)`` types; a name applied to one of them stays (``[Monoid R]``,
    ``DistribMulAction R k``), as to_additive leaves what is about a type it does not translate."""
    if not text:
        return text
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
