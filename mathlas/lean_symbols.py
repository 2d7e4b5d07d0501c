"""Lean notation as the words Mathlib's lemma names use for it.

Mathlib names a lemma after its statement: ``a * b ∈ I`` becomes ``mul_mem``, ``a ≤ b → ...`` becomes
``..._of_le``, ``∑ i, f i`` becomes ``sum``. A word tokenizer drops symbols, so a query written in
notation (``b ∈ I → a * b ∈ I``) would keep only the one-letter names. :func:`symbol_words` turns the
symbols of a text into those naming words, so the words of a query written in notation meet the
words of the declaration names (which the lexical index splits on ``.``, ``_`` and camelCase).

The table follows Mathlib's naming conventions (``Mathlib/Tactic/..``/ "Naming conventions" in the
Mathlib docs). It is used on both sides: by the build for a declaration's signature and at query time
by bundles whose manifest says ``lexical.symbols = "lean"``.
"""
from __future__ import annotations

import re

# Longest symbols first where one is a prefix of another (``→+*`` before ``→``).
SYMBOL_WORDS: dict[str, str] = {
    "→+*": "ring hom", "→*": "monoid hom", "→+": "add monoid hom", "→ₗ": "linear map",
    "→L": "continuous linear map", "→ₐ": "alg hom", "≃+*": "ring equiv", "≃*": "mul equiv",
    "≃+": "add equiv", "≃ₗ": "linear equiv", "≃ₜ": "homeomorph", "≃o": "order iso",
    "↪": "embedding", "≃": "equiv", "≅": "iso", "⟶": "hom",
    "↔": "iff", "→": "imp", "∀": "forall", "∃": "exists", "¬": "not", "∧": "and", "∨": "or",
    "≠": "ne", "=": "eq", "≤": "le", "<": "lt", "≥": "ge", ">": "gt",
    "∉": "not mem", "∈": "mem", "⊆": "subset", "⊂": "ssubset", "⊇": "superset",
    "∩": "inter", "∪": "union", "ᶜ": "compl", "⋃": "iUnion", "⋂": "iInter", "∅": "empty",
    "∑": "sum", "∏": "prod", "∫": "integral", "∂": "deriv",
    "+": "add", "*": "mul", "/": "div", "^": "pow", "•": "smul", "⁻¹": "inv", "∣": "dvd", "%": "mod",
    "√": "sqrt", "‖": "norm", "∘": "comp", "⊔": "sup", "⊓": "inf", "⨆": "iSup", "⨅": "iInf",
    "⊤": "top", "⊥": "bot", "⊗": "tensor product", "⊕": "sum", "×ˢ": "prod", "×": "prod",
    "ℕ": "nat", "ℤ": "int", "ℚ": "rat", "ℝ": "real", "ℂ": "complex", "π": "pi", "∞": "top",
    "!": "factorial", "∆": "symm diff", "⧸": "quotient", "⋆": "star", "†": "adjoint",
    "⟪": "inner", "ⁿ": "pow", "²": "sq", "√2": "sqrt two",
    # syntax, not notation: matched so that their characters are not read as = > : |
    "=>": "", "↦": "", ":=": "", "<|": "", "|>": "", "|>.": "",
}
_SYMBOLS = re.compile("|".join(re.escape(s) for s in sorted(SYMBOL_WORDS, key=len, reverse=True)))
# ``-`` is ``sub`` between operands and ``neg`` in front of one; arrows like ``->`` are ASCII ``→``.
_ASCII = {"->": "→", "<->": "↔", "<=": "≤", ">=": "≥", "!=": "≠"}
_ASCII_RE = re.compile(r"<->|->|<=|>=|!=")
_MINUS = re.compile(r"(?<![-<>!])-(?![->])")
_OPERAND_BEFORE = re.compile(r"[\w)\]}'⁻¹]\s*$")


def symbol_words(text: str) -> str:
    """The naming words for the notation in ``text``, in order (``"a * b ∈ I"`` -> ``"mul mem"``)."""
    if not text:
        return ""
    text = _ASCII_RE.sub(lambda m: _ASCII[m.group()], text)
    words: list[tuple[int, str]] = [(m.start(), SYMBOL_WORDS[m.group()]) for m in _SYMBOLS.finditer(text)
                                    if SYMBOL_WORDS[m.group()]]
    for m in _MINUS.finditer(text):
        binary = _OPERAND_BEFORE.search(text, max(0, m.start() - 8), m.start()) is not None
        words.append((m.start(), "sub" if binary else "neg"))
    words.sort()
    return " ".join(w for _, w in words)


def with_symbol_words(text: str) -> str:
    """``text`` followed by its symbol words (unchanged when it has none)."""
    extra = symbol_words(text)
    return f"{text} {extra}" if extra else text
