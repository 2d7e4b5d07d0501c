"""English words for a Lean 4 declaration's signature, so that a BM25 index of Mathlib declarations
matches queries typed in English.

Two readers, both pure (no I/O) and conservative: whatever they cannot read with confidence they
skip rather than guess.

* ``binder_words(signature)`` reads the top-level binders of a header (what follows the declaration
  name) and renders the instance and hypothesis binders as short sentences: ``[Group G]`` ->
  "G is a group", ``(hp : p.Prime)`` -> "p is prime", ``(h : ¬IsCompact s)`` -> "s is not compact".
* ``NOTATION`` is a table of Lean/Mathlib notation -> (the words Mathlib's lemma names use for it,
  English words). It is checked by hand against Mathlib usage: each key is the notation as Mathlib
  writes it (``∑' n, f n`` is ``tsum``, ``f ≤ᵐ[μ] g`` is ``EventuallyLE (ae μ)``, ``#s`` is
  ``Finset.card``). Symbols that Mathlib uses for several unrelated things are left out (``μ``,
  ``∂`` -- it is the measure in ``∫ x, f x ∂μ``, not a derivative --, ``Ω``, ``∈``, ``⊤``) or are
  read only in a form that pins them down (``φ n`` totient, ``σ 1 n`` sum of divisors, ``n !``
  factorial, ``#s`` card). ``ζ`` is Mathlib's scoped notation for ``ArithmeticFunction.zeta`` and
  the usual name of a primitive root of unity (``IsCyclotomicExtension.zeta``); ``riemannZeta`` has
  no notation, so ``ζ`` only says "zeta". ``ℍ`` alone is the upper half plane (modular forms) or the
  real quaternions, both scoped; ``ℍ[R]`` is the quaternions.
  ``notation_gloss(text)`` gives the English words of the notation found in a text (build time);
  ``query_notation_words(text)`` gives both the naming words and the English words (query time).
"""
from __future__ import annotations

import re

# ---------------------------------------------------------------------------------------------------
# binders

_OPEN = {"(": ")", "{": "}", "[": "]", "⦃": "⦄", "⟨": "⟩"}
_CLOSE = {v: k for k, v in _OPEN.items()}
_BINDER_OPEN = "({[⦃"
# a simple Lean identifier: no dots, no quoting; λ Π Σ are keywords, not names
_IDENT = re.compile(r"(?![λΠΣ])[^\W\d][\w'!?]*")
# a possibly dotted name whose components are plain ASCII (class and predicate names)
_NAME = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_']*\.)*[A-Za-z_][A-Za-z0-9_']*")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])\d*|[A-Z]?[a-z]+\d*|\d+")
# a hypothesis' binder names start with h/H (``h``, ``hp``, ``h₁``, ``H``) or are ``_``; this keeps
# term binders such as ``(s : Set α)`` or ``(i : Fin n)`` out of the predicate rule
_HYP_NAME = re.compile(r"[hH][\w']*|_")


def _match(text: str, i: int) -> int:
    """Index just past the bracket closing the one at ``text[i]``; -1 when it is not closed."""
    stack = [_OPEN[text[i]]]
    j = i + 1
    while j < len(text):
        c = text[j]
        if c in _OPEN:
            stack.append(_OPEN[c])
        elif c in _CLOSE:
            if c != stack.pop():
                return -1
            if not stack:
                return j + 1
        j += 1
    return -1


def _top_level_colon(text: str) -> int:
    """Index of the first ``:`` outside brackets that is not part of ``:=``; -1 when none."""
    depth = 0
    for i, c in enumerate(text):
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        elif c == ":" and depth == 0 and not text.startswith(":=", i):
            return i
    return -1


def conclusion(signature: str) -> str:
    """What a signature states: the text after its top-level ``:`` ("" when there is none).

    >>> conclusion("{p : ℕ} (hp : p.Prime) : 2 ≤ p")
    '2 ≤ p'
    """
    i = _top_level_colon(signature)
    return signature[i + 1:].strip() if i >= 0 else ""


def binders(signature: str) -> list[tuple[str, str]]:
    """The top-level bracketed binders before the signature's top-level ``:``, as (opening bracket,
    inner text). Untyped names between binders are passed over; anything else ends the walk, as
    does an unmatched bracket."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(signature)
    while i < n:
        c = signature[i]
        if c.isspace():
            i += 1
        elif c in _BINDER_OPEN:
            end = _match(signature, i)
            if end < 0:
                break
            out.append((c, signature[i + 1:end - 1].strip()))
            i = end
        elif m := _IDENT.match(signature, i):
            i = m.end()
        else:  # the top-level ':' (or ':=', or something unreadable)
            break
    return out


def _words(name: str) -> list[str]:
    """CamelCase name (its last dotted component) -> lower-case words."""
    return [w.lower() for w in _CAMEL.findall(name.rsplit(".", 1)[-1])]


def _article(words: list[str]) -> str:
    first = words[0]
    if first[0] in "aeiou" and not first.startswith(("uni", "use", "usu", "eu", "one")):
        return "an"
    return "a"


def _predicate(type_: str) -> str | None:
    """``P x`` / ``x.P`` / ``¬ P x`` with one simple identifier ``x`` and ``P`` upper-case ->
    "x is [not] p words"; None for anything else."""
    t = type_.strip()
    neg = t.startswith("¬")
    if neg:
        t = t[1:].strip()
    parts = t.split()
    if len(parts) == 2 and _NAME.fullmatch(parts[0]) and _IDENT.fullmatch(parts[1]):
        pred, arg = parts
    elif len(parts) == 1 and t.count(".") == 1:
        arg, pred = t.split(".")
        # ``Nat.Prime`` alone is a name, not ``x.P``: a capitalised word is taken for a namespace
        if not (_IDENT.fullmatch(arg) and _NAME.fullmatch(pred)) or re.match(r"[A-Z][a-z]", arg):
            return None
    else:
        return None
    last = pred.rsplit(".", 1)[-1]
    if not last[:1].isupper() or last == "Fact":
        return None
    words = _words(last)
    if words and words[0] == "is":
        words = words[1:]
    if not words:
        return None
    return f"{arg} is {'not ' if neg else ''}{' '.join(words)}"


def _fact(type_: str) -> str | None:
    """``Fact P`` / ``Fact (P)`` -> the predicate rule on ``P`` ("" when it says nothing); None when
    the type is not a ``Fact``."""
    t = type_.strip()
    if not t.startswith("Fact ") and not t.startswith("Fact("):
        return None
    inner = t[4:].strip()
    if inner.startswith("(") and _match(inner, 0) == len(inner):
        inner = inner[1:-1]
    return _predicate(inner) or ""


def _instance(inner: str) -> str | None:
    colon = _top_level_colon(inner)
    if colon >= 0:
        if not _IDENT.fullmatch(inner[:colon].strip()):
            return None
        inner = inner[colon + 1:]
    if (fact := _fact(inner)) is not None:
        return fact
    parts = inner.split()
    if len(parts) < 2 or not _NAME.fullmatch(parts[0]) or not all(_IDENT.fullmatch(p) for p in parts[1:]):
        return None
    words = _words(parts[0])
    if not words or not parts[0].rsplit(".", 1)[-1][:1].isupper():
        return None
    if words[0] == "is":  # IsDomain, IsAlgClosed: adjective or noun, so no article
        return f"{parts[-1]} is {' '.join(words[1:])}" if len(words) > 1 else None
    return f"{parts[-1]} is {_article(words)} {' '.join(words)}"


def _hypothesis(inner: str) -> str | None:
    colon = _top_level_colon(inner)
    if colon < 0:
        return None
    names = inner[:colon].split()
    if not names or not all(_HYP_NAME.fullmatch(x) for x in names):
        return None
    type_ = inner[colon + 1:]
    fact = _fact(type_)
    return _predicate(type_) if fact is None else fact


def binder_words(signature: str) -> list[str]:
    """Short English sentences for the instance and hypothesis binders of a Lean 4 signature, in
    binder order, without duplicates.

    >>> binder_words("{G : Type*} [Group G] (p : ℕ) (hp : p.Prime) : True")
    ['G is a group', 'p is prime']
    """
    out: list[str] = []
    for bracket, inner in binders(signature):
        said = _instance(inner) if bracket == "[" else _hypothesis(inner)
        if said and said not in out:
            out.append(said)
    return out


def hypotheses(signature: str) -> list[tuple[str, bool]]:
    """Every instance and hypothesis binder of a signature in order, as (text, said in words): the
    words of ``binder_words`` where it has them, else the binder's own type (``p ≠ 2``), so that a
    claim built from them leaves no assumption out. Variables (``{p : ℕ}``) are not listed.

    >>> hypotheses("{p : ℕ} (hp : p.Prime) (h2 : p ≠ 2) : 3 ≤ p")
    [('p is prime', True), ('p ≠ 2', False)]
    """
    out: list[tuple[str, bool]] = []
    for bracket, inner in binders(signature):
        if bracket == "[":
            said = _instance(inner)
            colon = _top_level_colon(inner)
            raw = inner[colon + 1:].strip() if colon >= 0 and _IDENT.fullmatch(inner[:colon].strip()) else inner
        else:
            colon = _top_level_colon(inner)
            names = inner[:colon].split() if colon >= 0 else []
            if not names or not all(_HYP_NAME.fullmatch(x) for x in names):
                continue
            said, raw = _hypothesis(inner), inner[colon + 1:].strip()
        item = (said, True) if said else (" ".join(raw.split()), False)
        if item[0] and item not in out:
            out.append(item)
    return out


# ---------------------------------------------------------------------------------------------------
# notation

NOTATION: dict[str, tuple[str, str]] = {
    # integrals, filters, measure theory
    "∫⁻": ("lintegral", "lower Lebesgue integral"),
    "∫": ("integral", "integral"),
    "∮": ("circleIntegral", "circle integral"),
    "⨍": ("average", "average integral"),
    "≤ᵐ[": ("ae le", "almost everywhere less or equal"),
    "=ᵐ[": ("ae eq", "almost everywhere equal"),
    "∀ᵐ": ("ae", "almost everywhere"),
    "∃ᵐ": ("frequently ae", "frequently almost everywhere"),
    "∃ᶠ": ("frequently", "frequently"),
    "∀ᶠ": ("eventually", "eventually"),
    "=ᶠ[": ("eventually eq", "eventually equal"),
    "≤ᶠ[": ("eventually le", "eventually less or equal"),
    "𝓝": ("nhds", "neighborhood"),
    "𝓝[": ("nhdsWithin", "neighborhood within"),
    "𝓤": ("uniformity", "uniformity"),
    "𝓟": ("principal", "principal filter"),
    "𝔼[": ("integral", "expectation"),
    # coercions, counting, big operators
    "⇑": ("coe fn", "coercion to function"),
    "#": ("card", "number of elements cardinality"),
    "∑": ("sum", "sum"),
    "∑'": ("tsum", "infinite sum series"),
    "∏": ("prod", "product"),
    "∏'": ("tprod", "infinite product"),
    "⨆": ("iSup", "indexed supremum"),
    "⨅": ("iInf", "indexed infimum"),
    # morphisms
    "→+*": ("ring hom", "ring homomorphism"),
    "→*": ("monoid hom", "monoid homomorphism"),
    "→+": ("add monoid hom", "additive homomorphism"),
    "→ₗ[": ("linear map", "linear map"),
    "→L[": ("continuous linear map", "continuous linear map"),
    "→ₐ[": ("alg hom", "algebra homomorphism"),
    "→ᵃ[": ("affine map", "affine map"),
    "→o": ("order hom", "monotone map"),
    "≃+*": ("ring equiv", "ring isomorphism"),
    "≃ₗ[": ("linear equiv", "linear isomorphism"),
    "≃L[": ("continuous linear equiv", "continuous linear isomorphism"),
    "≃ₐ[": ("alg equiv", "algebra isomorphism"),
    "≃ₜ": ("homeomorph", "homeomorphism"),
    "≃*": ("mul equiv", "group isomorphism"),
    "≃+": ("add equiv", "additive isomorphism"),
    "≃o": ("order iso", "order isomorphism"),
    "≃": ("equiv", "equivalence bijection"),
    "↪": ("embedding", "embedding"),
    "⟶": ("hom", "morphism"),
    "≅": ("iso", "isomorphism"),
    "⥤": ("functor", "functor"),
    "⊣": ("adjunction", "adjoint"),
    # linear algebra and analysis
    "ᵀ": ("transpose", "transpose"),
    "ᴴ": ("conj transpose", "conjugate transpose"),
    "‖": ("norm", "norm"),
    "‖₊": ("nnnorm", "nonnegative norm"),
    "⟪": ("inner", "inner product"),
    "⁅": ("lie", "Lie bracket"),
    "⊗": ("tensor product", "tensor product"),
    "⊗ₜ": ("tmul", "pure tensor product"),
    "⧸": ("quotient", "quotient"),
    "√": ("sqrt", "square root"),
    "⌊": ("floor", "floor"),
    "⌈": ("ceil", "ceiling"),
    "∠": ("angle", "angle"),
    # number theory
    "∣": ("dvd", "divides"),
    "[MOD": ("ModEq", "congruent modulo"),
    "[ZMOD": ("ModEq", "congruent modulo"),
    "[PMOD": ("ModEq", "congruent modulo"),
    "!": ("factorial", "factorial"),
    "φ": ("totient", "Euler totient"),
    "σ": ("sigma", "sum of divisors"),
    "ζ": ("zeta", "zeta"),
    "π": ("pi", "pi"),
    "∞": ("top", "infinity"),
    # number systems
    "ℕ": ("nat", "natural number"),
    "ℤ": ("int", "integer"),
    "ℚ": ("rat", "rational number"),
    "ℝ": ("real", "real number"),
    "ℂ": ("complex", "complex number"),
    "ℍ": ("upper half plane quaternion", "upper half plane quaternion"),
    "ℍ[": ("quaternion", "quaternion"),
    # sets and orders
    "⁻¹'": ("preimage", "preimage"),
    "''": ("image", "image"),
    "ᶜ": ("compl", "complement"),
    "⊆": ("subset", "subset"),
    "⊂": ("ssubset", "strict subset"),
    "∆": ("symm diff", "symmetric difference"),
    "𝒫": ("powerset", "power set"),
    "⋃": ("iUnion", "union"),
    "⋂": ("iInter", "intersection"),
    "⋃₀": ("sUnion", "union of a family of sets"),
    "⋂₀": ("sInter", "intersection of a family of sets"),
    "ᵒᵈ": ("order dual", "order dual"),
    "∘": ("comp", "composition"),
}

# keys that are read only in a given context (regex around the escaped key)
_GUARDS: dict[str, str] = {
    "#": r"(?<![#\w]){}(?=[^\W\d]|\{{)",  # #s, #{x ∈ s | p x}, #α; not ## or a#b
    "''": r"(?<![\w'])''(?!')",  # f '' s; not the primes of x''
    "!": r"(?:(?<=[\w')]) !|(?<=\))!)(?![\w=!])",  # n !, (n + 1)!; not get! or !b
    "φ": r"(?<![\w.])φ(?= (?:\d|[nmpq]\b))",  # φ n; not a ring hom φ x
    "σ": r"(?<![\w.])σ(?= (?:\d|k\b))",  # σ 1 n, σ k n; not a permutation σ x
    "ζ": r"(?<![\w.])ζ(?![\w])",
    "π": r"(?<![\w.])π(?![\w])",
    "ℍ": r"(?<![\w.])ℍ(?![\w])",
    "∠": r"(?<![\w.])∠",
    "→o": r"→o(?!\w)",
    "≃o": r"≃o(?!\w)",
}

_KEYS = sorted(NOTATION, key=len, reverse=True)
_PATTERN = re.compile("|".join(
    f"(?P<k{i}>{_GUARDS[k].format(re.escape(k)) if k in _GUARDS else re.escape(k)})"
    for i, k in enumerate(_KEYS)))
_MAX_CHARS = 100_000


def _found(text: str) -> list[str]:
    """Table keys occurring in ``text``, in order of first occurrence, without duplicates."""
    out: list[str] = []
    for m in _PATTERN.finditer(text[:_MAX_CHARS]):
        key = _KEYS[int(m.lastgroup[1:])]
        if key not in out:
            out.append(key)
    return out


def notation_gloss(text: str) -> list[str]:
    """English words of the notation in ``text``, in order of first occurrence, no duplicates.
    A longer key hides a shorter one at the same place (``∫⁻`` is not also ``∫``).

    >>> notation_gloss("∫⁻ x, f x ∂μ ≤ ∑' n, g n")
    ['lower Lebesgue integral', 'infinite sum series']
    """
    out: list[str] = []
    for key in _found(text):
        words = NOTATION[key][1]
        if words not in out:
            out.append(words)
    return out


def query_notation_words(text: str) -> str:
    """Mathlib naming words and English words of the notation in a query, space-joined ("" when
    none)."""
    out: list[str] = []
    for key in _found(text):
        for words in NOTATION[key]:
            if words not in out:
                out.append(words)
    return " ".join(out)
