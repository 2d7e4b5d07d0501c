"""Reading Lean statements as tokens, the way ``mathlas.ranking.shape`` compares them.

A signature as the formal bundle prints it (``{G : Type*} [AddCommMagma G] : ∀ a b : G, a + b = b + a``)
and a statement as a person types it (``x+y=y+x``, ``∑ i in range (n+1), f i``, ``(n : ℝ) ≤ m``) are
read into the same tokens: ``tokens`` (identifiers with their dots, numbers, single symbols; ASCII
spellings folded; coercion arrows dropped; notations read as the functions they stand for), then
``split_binders`` / ``bound`` (a signature's binders: the names they bind and which are hypotheses),
``strip_forall`` and ``canonical`` (leading ``∀`` binders off, binders' types and type ascriptions
left out, ``≥`` / ``>`` turned round), ``redundant_parens`` (the parentheses a person leaves out).
Only token lists here: what a shape is and how the index and the stage use it is
``mathlas.ranking.shape``.
"""
from __future__ import annotations

import re

# folded before reading tokens: ASCII spellings of Lean's symbols
ASCII = [("<->", "↔"), ("<=", "≤"), (">=", "≥"), ("!=", "≠"), ("->", "→"), ("=>", "↦"), ("λ", "fun")]
TOKEN = re.compile(r"∃!|∀ᶠ|∃ᶠ|⁻¹|[^\W\d][\w'!?]*(?:\.[^\W\d][\w'!?]*)*|\d+(?:\.\d+)?|\.\w[\w'!?]*|\S")
# postfix letters Mathlib writes glued to a name (sᶜ, Mᵀ, Aᴴ, Cᵒᵖ, Mˣ): split off, so the name is a name
POSTFIX_LETTERS = ("ᵐᵒᵖ", "ᵃᵒᵖ", "ᵒᵖ", "ᵒᵈ", "ᶜ", "ᵀ", "ᴴ", "ˣ")
_POSTFIX = re.compile("(" + "|".join(POSTFIX_LETTERS) + ")+$")
# a variable wherever it stands: one letter, with digits, subscripts or primes (x, x₁, a', n2)
SHORT = re.compile(r"(?![ℕℤℚℝℂ])[^\W\d_][\d₀-₉'ᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ]*")  # not ℕ ℤ ℚ ℝ ℂ: constants
# a hypothesis' name (hp, hx, hab, h₁, h'): a variable wherever it stands (a section's variables
# are not in the signature, so a name the binders do not bind may still be one)
HYPOTHESIS = re.compile(r"h[a-z\d₀-₉']{0,3}|H[a-z\d₀-₉']{0,2}")
DROP = frozenset({"↑", "⇑", "↥", "@"})
OPEN, CLOSE = frozenset("([{⦃⟨"), frozenset(")]}⦄⟩")
BINDERS = frozenset({"∀", "∃", "∃!", "fun", "∑", "∏", "⋃", "⋂", "⨆", "⨅", "∫", "∮", "Π", "Σ"})
# the relations and operators one of which a statement has (a query without any is words)
OPERATORS = frozenset({"=", "≠", "≤", "<", "≥", ">", "↔", "∣", "∈", "∉", "⊆", "⊂", "⊇", "⊃", "≃", "≅", "≡",
                       "∧", "∨", "¬", "→", "≈", "⟂", "∼", "~", "⊢", "≪", "≫", "⊓", "⊔", "+", "*", "-", "/",
                       "^", "•", "∘", "‖", "∑", "∏", "∫", "⁻¹", "×", "∩", "∪", "\\", "⊤", "⊥", "∅", "!"})
FLIP = {"≥": "≤", ">": "<"}
# the relations a statement's sides stand around
RELATIONS = frozenset({"=", "≠", "≤", "<", "≥", ">", "↔", "∣", "∈", "∉", "⊆", "⊂", "⊇", "⊃", "∧", "∨", "≃", "≅"})
BIG = frozenset({"∑", "∏", "⋃", "⋂", "⨆", "⨅", "∀ᶠ", "∃ᶠ"})  # big operators, whose binder may be spelt with "in"


def tokens(text: str, receiver=None) -> list[str]:
    """``text`` as tokens (identifiers with their dots, numbers, single symbols), ASCII folded,
    coercion arrows dropped, ``in`` read as ``∈``, and notations read as the functions they stand
    for (``notations``); with ``receiver`` (a name -> the position ``receiver_position`` gives, or
    None), a function applied by its name with its receiver first, as its dot notation reads
    (``receiver_first``)."""
    import unicodedata

    text = "".join(c for c in unicodedata.normalize("NFC", text) if unicodedata.category(c) not in ("Cf", "Cc")
                   or c in " \t\n")
    for a, b in ASCII:
        text = text.replace(a, b)
    found: list[str] = []
    for t in TOKEN.findall(text):
        m = _POSTFIX.search(t) if t[:1].isalpha() else None
        if m and m.start():   # sᶜᶜ: s then ᶜ ᶜ
            found.append(t[:m.start()])
            found += re.findall("|".join(POSTFIX_LETTERS), m.group())
        else:
            found.append(t)
    # ``∑ x in s, f x``: the old spelling of ``∈`` in a big operator (elsewhere "in" is a word)
    big = not BIG.isdisjoint(found)
    found = ["∈" if big and t == "in" else t for t in found]
    found = [t for i, t in enumerate(found) if t not in DROP or _cast_of_term(found, i)]
    if receiver is not None:
        found = receiver_first(found, receiver)
    return big_operators(notations(found))


# types a signature writes by a notation, as the namespace of their functions (R[X]: Polynomial R)
_TYPE_NAMESPACES = {"ℕ": "Nat", "ℤ": "Int", "ℚ": "Rat", "ℝ": "Real", "ℂ": "Complex"}


def _type_namespace(kind: list[str]) -> str:
    if kind[1:4] == ["[", "X", "]"]:
        return "Polynomial"
    head = kind[0] if kind else ""
    return _TYPE_NAMESPACES.get(head, head.rsplit(".", 1)[-1])


def receiver_position(name: str, signature: str) -> int | None:
    """Where Lean's dot notation puts its receiver among the explicit arguments of the function
    ``name`` (``NS.f``), read from its signature: the first explicit binder whose type is ``NS``'s
    (``Polynomial.eval (x : R) (p : R[X])``: 1, so ``p.eval x`` is ``Polynomial.eval x p``); None where
    that is the first (the two forms already read alike) or no binder before the colon is."""
    space = name.rpartition(".")[0].rsplit(".", 1)[-1]
    if not space:
        return None
    binders, _ = split_binders(tokens(signature))
    i, at = 0, 0
    while i < len(binders):
        if binders[i] not in OPEN:
            i += 1
            continue
        end = _argument_end(binders, i)
        if end is None:
            return None
        group = binders[i + 1:end - 1]
        if binders[i] == "(" and ":" in group:
            c = group.index(":")
            if _type_namespace(group[c + 1:]) == space:
                return at or None
            at += sum(1 for t in group[:c] if is_name(t))
        i = end
    return None


def receiver_first(toks: list[str], receiver) -> list[str]:
    """``toks`` with each function that ``receiver`` knows (name -> the position of its receiver
    among its explicit arguments), applied by its name to that many arguments and more, written with
    its receiver first, as its dot notation reads once ``notations`` has read it (``Polynomial.eval
    x (p + q)`` as ``Polynomial.eval (p + q) x``, which ``(p + q).eval x`` is read as); an application
    with fewer arguments, or one that is not a name or a group, is left as it is."""
    out: list[str] = []
    i, n = 0, len(toks)
    while i < n:
        t = toks[i]
        k = receiver(t) if is_name(t) else None
        if k:
            spans, j = [], i + 1
            while len(spans) <= k:
                end = _argument_end(toks, j)
                if end is None:
                    break
                spans.append((j, end))
                j = end
            if len(spans) > k:
                args = [receiver_first(toks[a:b], receiver) for a, b in spans]
                out += [t, *args[k], *(x for a in args[:k] for x in a)]
                i = j
                continue
        out.append(t)
        i += 1
    return out


CAST = "cast"   # what ↑(m + n) and ((m + n : ℕ) : R) are read as: cast (m + n)


def _cast_of_term(toks: list[str], i: int) -> bool:
    """Whether ``toks[i]`` is an ``↑`` before a bracketed term of more than one token (``↑(m + n)``: a
    cast lemma's content); the ``↑`` before a name (``↑n``) is dropped as Lean infers it."""
    if toks[i] != "↑" or toks[i + 1:i + 2] != ["("]:
        return False
    end = _argument_end(toks, i + 1)
    return end is not None and end - i > 4


def group_start(toks: list[str], end: int) -> int | None:
    """The index of the bracket that opens the group closed at ``end``."""
    depth = 0
    for i in range(end, -1, -1):
        depth += (toks[i] in CLOSE) - (toks[i] in OPEN)
        if depth == 0:
            return i
    return None


def notations(toks: list[str]) -> list[str]:
    """Notations as the functions they stand for, as a signature prints one and a person types the
    other: ``√x`` is ``sqrt x``, ``#s`` is ``card s``, ``n !`` / ``n!`` / ``(n + 1)!`` are
    ``factorial n`` / ``factorial (n + 1)``, ``(p * q).degree`` is ``degree (p * q)``, and ``|a|ₘ``
    (the additive twins' statements print the multiplicative bars) is ``|a|``."""
    out: list[str] = []
    for t in toks:
        if t == "↑":
            out.append(CAST)
        elif t == "√":
            out.append("sqrt")
        elif t == "#":
            out.append("card")
        elif t == "ₘ" and out[-1:] == ["|"]:
            continue
        elif t == "!" and out and (out[-1] == ")" or is_name(out[-1]) or out[-1][:1].isdigit()):
            start = group_start(out, len(out) - 1) if out[-1] == ")" else len(out) - 1
            if start is None:
                out.append(t)
            else:
                out.insert(start, "factorial")
        elif t.endswith("!") and SHORT.fullmatch(t[:-1]):   # n!: a variable's factorial
            out += ["factorial", t[:-1]]
        elif t[:1] == "." and len(t) > 1 and out[-1:] == [")"]:
            start = group_start(out, len(out) - 1)
            if start is None:
                out.append(t)
            else:
                out.insert(start, t[1:])
        else:
            out.append(t)
    return out


# ``Finset.sum s f`` and ``s.sum f`` are the functions ``∑ x ∈ s, f x`` stands for (``prod``: ``∏``)
_BIG_FUNCTIONS = {"sum": "∑", "prod": "∏"}
_FRESH = ("x", "y", "z", "i", "j", "k", "x₉")


def _argument_end(toks: list[str], i: int) -> int | None:
    """The index after the argument that starts at ``i``: a bracket group, a name or a number."""
    if i >= len(toks):
        return None
    if toks[i] in OPEN:
        depth = 0
        for j in range(i, len(toks)):
            depth += (toks[j] in OPEN) - (toks[j] in CLOSE)
            if depth == 0:
                return j + 1
        return None
    if is_name(toks[i]) or toks[i][:1].isdigit():
        return i + 1
    return None


def _big_function(t: str) -> str | None:
    """``∑`` for ``Finset.sum``, ``sum`` (as ``(range n).sum`` reads) and ``s.sum`` (a variable's dot
    notation); ``∏`` for the ``prod`` ones; None for any other token."""
    head, dot, last = t.rpartition(".")
    if last not in _BIG_FUNCTIONS or dot and head != "Finset" and not SHORT.fullmatch(head):
        return None
    return _BIG_FUNCTIONS[last]


def big_operators(toks: list[str]) -> list[str]:
    """``Finset.sum s f``, ``s.sum f`` and ``(range n).sum f`` as the ``(∑ x ∈ s, f x)`` Mathlib writes
    (over ``univ``: ``(∑ x, f x)``; ``f`` a ``fun i ↦ t``: ``(∑ i ∈ s, t)``), so that a statement typed
    either way has one shape; ``prod`` as ``∏``. Only a call with both arguments is read so (``l.sum`` of
    a list, one argument, is left as it is)."""
    if not any(_big_function(t) for t in toks):
        return toks
    out: list[str] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        op = _big_function(t)
        head = t.rpartition(".")[0]
        dotted = bool(head) and head != "Finset"      # s.sum f: the set is s
        a_end = i + 1 if dotted else _argument_end(toks, i + 1)
        if t in _BIG_FUNCTIONS and toks[i + 1:i + 2] != ["("]:
            a_end = None    # a bare sum is (range n).sum's: its set is a group ("sum of the first n": words)
        f_end = _argument_end(toks, a_end) if a_end is not None else None
        if op is None or f_end is None:
            out.append(t)
            i += 1
            continue
        domain = [head] if dotted else toks[i + 1:a_end]
        fn = toks[a_end:f_end]
        if fn[:1] == ["("] and fn[1:2] == ["fun"] and len(fn) > 5 and is_name(fn[2]) and fn[3] == "↦":
            var, term = fn[2], fn[4:-1]
        else:
            used = {u.partition(".")[0] for u in toks}
            var = next((v for v in _FRESH if v not in used), _FRESH[-1])
            term = [*fn, var]
        over = [] if [d.rpartition(".")[2] for d in domain] == ["univ"] else ["∈", *domain]
        out += ["(", op, var, *over, ",", *term, ")"]
        i = f_end
    return out


def outside_brackets(items, opens=OPEN, closes=CLOSE, clamp: bool = True):
    """(index, item) of each item of ``items`` (tokens, or a text's characters) outside brackets, the
    brackets themselves left out. ``clamp``: an unmatched closing bracket does not take the depth
    below zero (what follows it is outside again); without, nothing after it is."""
    depth = 0
    for i, t in enumerate(items):
        if t in opens:
            depth += 1
        elif t in closes:
            depth = max(0, depth - 1) if clamp else depth - 1
        elif depth == 0:
            yield i, t


def split_binders(toks: list[str]) -> tuple[list[str], list[str]]:
    """(the binders, the statement) of a signature: split at the first top-level ``:``."""
    i = next((i for i, t in outside_brackets(toks) if t == ":"), None)
    return (toks, []) if i is None else (toks[:i], toks[i + 1:])


def bound(binders: list[str], stmt: list[str] = ()) -> tuple[set[str], list[list[str]]]:
    """(the names the binders bind, the types of the hypotheses among them: binders named ``h…``, and
    explicit binders whose names the statement never uses, ``(pp : p.Prime)``, of a type that is not a
    universe)."""
    used = {t.partition(".")[0] for t in stmt if is_name(t)}
    names: set[str] = set()
    hyps: list[list[str]] = []
    i, n = 0, len(binders)
    while i < n:
        if binders[i] in OPEN:
            depth, j = 1, i + 1
            while j < n and depth:
                depth += binders[j] in OPEN
                depth -= binders[j] in CLOSE
                j += 1
            group = binders[i + 1:j - 1]
            if ":" in group:
                c = group.index(":")
                bound = [t for t in group[:c] if is_name(t)]
                names.update(bound)
                kind = group[c + 1:]
                universe = kind[:1] in (["Type"], ["Sort"], ["Type*"]) or "Type" in kind[:1]
                # h… names a hypothesis; H… only one whose type states something ({H : Subgroup G} is
                # a subgroup, {H : Type*} a type)
                named = bound and binders[i] in "({⦃" and not universe and all(
                    b[:1] == "h" or b[:1] == "H" and not RELATIONS.isdisjoint(kind) for b in bound)
                unused = bound and binders[i] == "(" and stmt and not used & set(bound) and not universe
                if named or unused:
                    hyps += [kind] * len(bound)
            i = j
        else:
            i += 1
    return names, hyps


# classes that state a condition of the lemma (a characteristic, a fact); NeZero, Nontrivial and the
# like hold where such lemmas are used, and a person leaves them out as the lemma does its name
_CONDITION_CLASSES = frozenset({"Fact", "CharP", "ExpChar", "ringChar"})
_SOFT_CLASSES = frozenset({"NeZero", "Nontrivial", "NoZeroDivisors", "CharZero", "Nonempty", "Invertible"})


def instance_conditions(binders: list[str]) -> int:
    """How many instance binders state a condition rather than a structure (``[CharP R 2]``,
    ``[Fact (1 < p)]``; not ``[NeZero n]``): a lemma that needs one states less than one that does not."""
    count, i, n = 0, 0, len(binders)
    while i < n:
        if binders[i] == "[":
            depth, j = 1, i + 1
            while j < n and depth:
                depth += (binders[j] in OPEN) - (binders[j] in CLOSE)
                j += 1
            group = binders[i + 1:j - 1]
            if ":" in group:
                group = group[group.index(":") + 1:]
            head = group[0].rsplit(".", 1)[-1] if group else ""
            if head in _CONDITION_CLASSES or head not in _SOFT_CLASSES and (
                    not RELATIONS.isdisjoint(group) or any(t[:1].isdigit() for t in group)):
                count += 1
            i = j
        else:
            i += 1
    return count


def is_name(t: str) -> bool:
    """Whether a token is a name (not a postfix letter such as ``ᶜ``, which ``tokens`` splits off)."""
    return bool(t) and (t[0].isalpha() or t[0] == "_") and t not in POSTFIX_LETTERS


def strip_forall(toks: list[str], names: set[str]) -> list[str]:
    """``toks`` without leading ``∀ x y : G,`` binders (their names added to ``names``)."""
    while toks and toks[0] == "∀":
        commas = top_level(toks, {","})
        if not commas:
            return toks
        names.update(x for x in toks[1:commas[0]] if is_name(x))
        toks = toks[commas[0] + 1:]
    return toks


def top_level(toks: list[str], wanted) -> list[int]:
    """The places of ``wanted`` tokens outside brackets (none after an unmatched closing one)."""
    return [i for i, t in outside_brackets(toks, clamp=False) if t in wanted]


def binder_names(toks: list[str]) -> set[str]:
    """Names bound inside a statement: after ``∀ ∃ fun ∑ ∏ …`` up to ``,`` ``:`` ``∈`` or ``↦``."""
    return {x for i, t in enumerate(toks) if t in BINDERS for x in _bound_at(toks, i, _NAMES_END, 5)}


def _bound_at(toks: list[str], i: int, end: frozenset, width: int) -> list[str]:
    """The names the binder at ``i`` binds: those among the next ``width`` tokens before one of ``end``."""
    names = []
    for x in toks[i + 1:i + 1 + width]:
        if x in end:
            break
        if is_name(x):
            names.append(x)
    return names


_NAMES_END = frozenset({",", ":", "∈", "↦", "⊆"})




BOUND = "ϰ"   # bound variables are renamed ϰ₁, ϰ₂, … by their binders' order (a letter nobody types)
_BINDER_END = frozenset({",", ":", "∈", "∉", "↦", "⊆", "<", "≤", ">", "≥", "≠", "in"})
_SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def bound_renamed(toks: list[str]) -> list[str]:
    """``toks`` with the names bound inside them (by ``∑ ∏ ∀ ∃ fun …``) renamed by their binders' order,
    each within its binder's scope (to the end of its bracket group, an inner binder of the same name
    shadowing it): ``(∑ x ∈ s, f x) = ∑ i ∈ t, g i`` and ``(∑ i ∈ s, f i) = ∑ x ∈ t, g x`` are one
    statement."""
    at = [i for i, t in enumerate(toks) if t in BINDERS]
    if not at:
        return toks
    binds = [(i, _bound_at(toks, i, _BINDER_END, 7)) for i in at]
    numbers, n = [], 0
    for _, names in binds:
        numbers.append(list(range(n + 1, n + 1 + len(names))))
        n += len(names)
    out = list(toks)
    for (i, names), nums in reversed(list(zip(binds, numbers))):
        depth, end = 0, len(out)
        for k in range(i, len(out)):
            depth += (out[k] in OPEN) - (out[k] in CLOSE)
            if depth < 0:
                end = k
                break
        for name, num in zip(names, nums):
            new = BOUND + str(num).translate(_SUBSCRIPT)
            for k in range(i + 1, end):
                t = out[k]
                if t == name or t.startswith(name + "."):
                    out[k] = new + t[len(name):]
    return out


# Lean's precedences of the binary operators, relations and connectives whose parentheses a person
# leaves out as the grammar allows (``(a * b) * c`` is ``a * b * c``, ``a + (b * c)`` is ``a + b * c``,
# ``(a = b) → c`` is ``a = b → c``, but ``(a ↔ b) → c`` is not ``a ↔ b → c``); prefix ``-`` binds at 75,
# ``¬`` at 40; a big operator's term (``∑ x ∈ s, f x``) is read at 67; a binder (``∀``, ``∃``, ``fun``)
# takes everything to its right
PRECEDENCE = {"+": 65, "-": 65, "∪": 65, "⊔": 68, "*": 70, "/": 70, "%": 70, "∩": 70, "⊓": 69, "\\": 70,
              "•": 73, "^": 75, "∘": 90, "=": 50, "≠": 50, "≤": 50, "<": 50, "≥": 50, ">": 50, "∣": 50,
              "∈": 50, "∉": 50, "⊆": 50, "⊂": 50, "⊇": 50, "⊃": 50, "∧": 35, "∨": 30, "→": 25, "↔": 20}
RIGHT_ASSOC = frozenset({"^", "•", "∘", "∧", "∨", "→"})
APPLICATION = 1024   # a group with no operator at its top (f x, a name): it binds tighter than any
BIG_TERM = 67        # the precedence a big operator's term is read at (Mathlib's "∑ … , " term:67)
PREFIX_OR_POSTFIX = frozenset({"-", "⁻¹", "!", "ᶜ", "ᵀ", "ᴴ", "ˣ", "′", "¬"})   # -a, a⁻¹, n !, sᶜ, ¬p: no binary operator


def _binary(toks: list[str], i: int) -> bool:
    """Whether the operator at ``i`` is binary: an operand stands right before it (a name, a number,
    a closing bracket); ``-`` after an operator or at a start is prefix."""
    if toks[i] not in PRECEDENCE or i == 0:
        return False
    before = toks[i - 1]
    return before in CLOSE or is_name(before) or before[:1].isdigit() or before in POSTFIX


def _group_precedence(toks: list[str], a: int, b: int) -> int | None:
    """The loosest precedence among the operators at the top of the group ``toks[a:b+1]`` (``(`` at
    ``a``, ``)`` at ``b``): ``APPLICATION`` when it has none, ``BIG_TERM`` for a big operator's term,
    0 for a binder's; None when it holds what the table does not order (a comma, an operator it lacks)."""
    first = toks[a + 1]
    if first in ("∑", "∏"):
        return BIG_TERM
    if first in BINDERS or first == "fun":
        return 0
    depth, lowest = 0, APPLICATION
    for i in range(a + 1, b):
        t = toks[i]
        if t in OPEN:
            depth += 1
        elif t in CLOSE:
            depth -= 1
        elif depth == 0:
            if _binary(toks, i):
                lowest = min(lowest, PRECEDENCE[t])
            elif not (is_name(t) or t[:1].isdigit() or t in PREFIX_OR_POSTFIX):
                return None   # a comma, a type ascription, an operator the table lacks (≫)
    return lowest


POSTFIX = frozenset({"⁻¹", "ᶜ", "ᵀ", "ᴴ", "ˣ", "!"})


def _pairs(toks: list[str]) -> list[tuple[int, int]]:
    """The matched ``(`` … ``)`` pairs of ``toks``, as (open, close) indices."""
    pairs: list[tuple[int, int]] = []
    stack: list[int] = []
    for i, t in enumerate(toks):
        if t == "(":
            stack.append(i)
        elif t == ")" and stack:
            pairs.append((stack.pop(), i))
    return pairs


def _single_parens(toks: list[str]) -> list[str]:
    """``((x ^ y))`` as ``(x ^ y)``: a pair whose whole content is another pair is one pair (an
    ascription left out, ``(↑(x ^ y) : ℂ)``, leaves two), so that the two are not judged apart."""
    while True:
        pairs = set(_pairs(toks))
        double = next(((a, b) for a, b in pairs if (a + 1, b - 1) in pairs), None)
        if double is None:
            return toks
        toks = toks[:double[0]] + toks[double[0] + 1:double[1]] + toks[double[1] + 1:]


def _atom(toks: list[str], a: int, b: int) -> bool:
    """Whether the group ``toks[a:b+1]`` is one name or number with prefix ``-`` and postfix
    operators only (``a⁻¹``, ``-a``, ``sᶜ``), no application."""
    inner = [t for t in toks[a + 1:b] if t not in POSTFIX and t != "-"]
    return len(inner) == 1 and (is_name(inner[0]) or inner[0][:1].isdigit())


def redundant_parens(toks: list[str]) -> list[str]:
    """``toks`` without the parentheses Lean's grammar makes redundant, which a person leaves out:
    around the whole, around one token, and wherever the precedences of the operators inside and
    beside them do not need them (``(a * b) * c``, ``a + (b * c)``, ``(a = b) → c``, ``(f x) + y``,
    ``(∑ x ∈ s, f x) + f n``, ``¬(a = b)``); those that group an operation inside another stay
    (``a ^ (m * n)``, ``-(a * b)``, ``(a ↔ b) → c``, ``(∀ x, p x) → q``, ``(∑ x ∈ s, f x) * c``)."""
    toks = _single_parens(toks)
    pairs = _pairs(toks)
    drop: set[int] = set()
    n = len(toks)

    def end(t: str | None) -> bool:
        return t is None or t in ("(", ")", ",", ":")

    for a, b in pairs:
        if b - a == 2:   # (x)
            drop |= {a, b}
            continue
        inner = _group_precedence(toks, a, b)
        if inner is None:
            continue
        left = toks[a - 1] if a > 0 else None
        right = toks[b + 1] if b + 1 < n else None
        if inner == APPLICATION and _atom(toks, a, b) and (
                right in POSTFIX and toks[a + 1] != "-" or left == "-" and not _binary(toks, a - 1)):
            drop |= {a, b}   # (a⁻¹)⁻¹ is a⁻¹⁻¹, -(-a) is - -a, as Mathlib prints them
            continue
        right_ok = end(right) or (b + 1 < n and _binary(toks, b + 1) and (
            inner > PRECEDENCE[right] or inner == PRECEDENCE[right] and right not in RIGHT_ASSOC))
        left_ok = end(left) or (left == "¬" and inner > 40) or (a > 0 and _binary(toks, a - 1) and (
            inner > PRECEDENCE[left] or inner == PRECEDENCE[left] and left in RIGHT_ASSOC))
        if right_ok and left_ok:
            drop |= {a, b}
    return [t for i, t in enumerate(toks) if i not in drop]


def plain_binders(toks: list[str]) -> list[str]:
    """``∀ (x : α) (y : β), …`` and ``∃ n : ℕ, …`` as ``∀ x y, …`` and ``∃ n, …``: a binder's type is
    what Lean infers, and a person leaves it out (a bounded binder, ``∀ x ∈ s,``, is kept)."""
    out: list[str] = []
    i, n = 0, len(toks)
    while i < n:
        t = toks[i]
        out.append(t)
        i += 1
        if t not in ("∀", "∃", "∃!"):
            continue
        depth, j = 0, i
        while j < n and not (depth == 0 and toks[j] == ","):
            depth += (toks[j] in OPEN) - (toks[j] in CLOSE)
            j += 1
        segment = toks[i:j]
        if ":" in segment and j < n:
            names, keep, depth = [], True, 0
            for x in segment:
                if x in OPEN:
                    depth += 1
                    keep = True
                elif x in CLOSE:
                    depth -= 1
                elif x == ":":
                    keep = False
                elif keep and is_name(x):
                    names.append(x)
            out += names
            i = j
    return out


def no_ascriptions(toks: list[str]) -> list[str]:
    """Type ascriptions left out, which a person does not type and a lemma over a type variable does
    not write: ``(n : ℝ)`` as ``(n)``, ``(0 : A)`` as ``(0)``, ``({a} : Set α)`` as ``({a})`` (the
    parentheses then go where Lean does not need them: ``redundant_parens``), and ``fun x : 𝕜 ↦`` as
    ``fun x ↦``. A group holding a comma or ``↦`` before its colon (a binder, a tuple) is left as it is."""
    out: list[str] = []
    i, n = 0, len(toks)
    while i < n:
        t = toks[i]
        if t == "(":
            depth, j, colon = 1, i + 1, None
            while j < n and depth:
                depth += (toks[j] in OPEN) - (toks[j] in CLOSE)
                if depth == 1 and toks[j] == ":" and colon is None:
                    colon = j
                j += 1
            if depth == 0 and colon is not None and colon > i + 1 and \
                    not {",", "↦", "∀", "∃", "fun"} & set(toks[i + 1:colon]):
                inner = no_ascriptions(toks[i + 1:colon])
                if toks[i + 1] == "(" and _argument_end(toks, i + 1) == colon and toks[i + 2:i + 3] != [CAST] \
                        and any(u == ":" for u in toks[i + 2:colon - 1]) and len(inner) > 3:
                    inner = [CAST, *inner]   # ((m + n : ℕ) : R): m + n cast to R
                out += ["(", *inner, ")"]
                i = j
                continue
        if t == "fun" and i + 2 < n and is_name(toks[i + 1]) and toks[i + 2] == ":":
            j = i + 3
            while j < n and toks[j] not in ("↦", ","):
                j += 1
            out += ["fun", toks[i + 1]]
            i = j
            continue
        out.append(t)
        i += 1
    return out


def canonical(toks: list[str]) -> list[str]:
    """``toks`` with each ``a ≥ b`` / ``a > b`` read as the ``b ≤ a`` / ``b < a`` it stands for: in each
    part between top-level arrows that has that one top-level relation; binders' types left out
    (``plain_binders``)."""
    toks = plain_binders(no_ascriptions(toks))
    arrows = top_level(toks, {"→"})
    out: list[str] = []
    start = 0
    for end in [*arrows, len(toks)]:
        part = toks[start:end]
        rel = top_level(part, RELATIONS)
        if len(rel) == 1 and part[rel[0]] in FLIP:
            i = rel[0]
            part = part[i + 1:] + [FLIP[part[i]]] + part[:i]
        out += part
        if end < len(toks):
            out.append(toks[end])
        start = end + 1
    return out


def grouped(hyp: list[str]) -> list[str]:
    """A hypothesis as it stands left of an arrow: in parentheses when it is a binder or an arrow."""
    if hyp[:1] and hyp[0] in ("∀", "∃", "∃!") or top_level(hyp, {"→", "↔"}):
        return ["(", *hyp, ")"]
    return hyp


# operators whose operands a person writes in either order (``1 + x`` for ``x + 1``, ``b ∧ a``); ``*``
# among them though a ring need not commute: a match through this order is a looser one, placed after
# the others and never ``strong`` (``mathlas.ranking.shape``), so it ranks candidates and proves nothing
COMMUTATIVE = frozenset({"+", "*", "∧", "∨", "∩", "∪", "⊓", "⊔"})
_BARS = frozenset({"‖", "|"})   # ‖a‖, |a|: a pair of bars is a group


def _items(toks: list[str]) -> list[tuple[int, int]] | None:
    """``toks`` at its top level as spans: a bracket group or a pair of bars (``‖a + b‖``) is one,
    any other token one; None where the brackets or bars do not pair."""
    items, i, n = [], 0, len(toks)
    while i < n:
        t = toks[i]
        if t in OPEN:
            end = _argument_end(toks, i)
            if end is None:
                return None
            items.append((i, end))
            i = end
        elif t in _BARS:
            j = next((j for j in range(i + 1, n) if toks[j] == t), None)
            if j is None or toks[i + 1:j].count("(") != toks[i + 1:j].count(")"):
                return None
            items.append((i, j + 1))
            i = j + 1
        elif t in CLOSE:
            return None
        else:
            items.append((i, i + 1))
            i += 1
    return items


def commuted(toks: list[str], variable) -> list[str]:
    """``toks`` with the operands of each ``COMMUTATIVE`` operator in one order, whatever order they
    were typed in: sorted by their tokens with the variables (``variable(name)``) read alike and
    constants by their last component (``Real.exp x ≥ 1 + x`` and ``x + 1 ≤ exp x`` read alike once
    ``≥`` is turned round); operands that differ only in their variables keep their order. A level
    holding what Lean's precedences do not order (a binder, a comma, ``≫``) is left as it is; the
    groups inside it are still read."""
    items = _items(toks)
    if items is None:
        return toks
    parts: list[list[str]] = []
    for a, b in items:
        t = toks[a]
        if b - a > 1 and t in OPEN:
            parts.append([t, *commuted(toks[a + 1:b - 1], variable), toks[b - 1]])
        elif b - a > 1:   # bars
            parts.append([t, *commuted(toks[a + 1:b - 1], variable), t])
        else:
            parts.append([t])
    return [t for part in _commute_level(parts, variable) for t in part]


def _operand(part: list[str]) -> bool:
    t = part[0]
    return len(part) > 1 or is_name(t) or t[:1].isdigit() or t in POSTFIX


def _commute_level(parts: list[list[str]], variable) -> list[list[str]]:
    """One level of ``commuted``: split at its loosest binary operators, the operands sorted where
    that operator is one ``COMMUTATIVE`` one, each operand read the same way in turn."""
    ops = []
    for i, part in enumerate(parts):
        t = part[0] if len(part) == 1 else None
        if t in PRECEDENCE and i > 0 and _operand(parts[i - 1]):
            ops.append(i)
        elif t is not None and not (_operand(part) or t in PREFIX_OR_POSTFIX or t == CAST):
            return parts   # a binder, a comma, an operator the table lacks: its extent is not known here
    if not ops:
        return parts
    loosest = min(PRECEDENCE[parts[i][0]] for i in ops)
    at = [i for i in ops if PRECEDENCE[parts[i][0]] == loosest]
    pieces = [parts[a + 1:b] for a, b in zip([-1, *at], [*at, len(parts)])]
    pieces = [_commute_level(p, variable) for p in pieces]
    symbols = {parts[i][0] for i in at}
    if len(symbols) == 1 and symbols <= COMMUTATIVE and all(pieces):
        def key(piece):
            return [("#" if is_name(t) and variable(t.partition(".")[0]) else t.rsplit(".", 1)[-1])
                    for part in piece for t in part]
        pieces = sorted(pieces, key=key)
    out = list(pieces[0])
    for i, piece in zip(at, pieces[1:]):
        out += [parts[i], *piece]
    return out
