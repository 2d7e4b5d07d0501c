"""What a document is called, the same on every surface: its **heading**, **label** and **context**.

A bundle's ``name`` and ``title`` columns hold what each source's reader found, and that differs by
source (docs/bundle-format.md has the table): PlanetMath's ``title`` is its subject category, Stacks' a
chapter > section breadcrumb, Metamath's the comment's first sentence, ProofWiki's a heading made from
the statement; Metamath's ``name`` is its label, a Lean declaration's the words of its name. ``describe``
reads them, with the id and the source, into three fields that mean one thing everywhere:

* ``heading``: what a person reads first. The statement's own name (``Nakayama's lemma``, PlanetMath's
  entry title), Metamath's and ProofWiki's human title, a Lean declaration's qualified name; a statement
  the source leaves untitled is called by its kind and the section it sits in (``Definition in
  Integral domains``), never by the whole breadcrumb.
* ``label``: the source's own name or id for it: a Stacks tag, a Metamath label, a PlanetMath canonical
  name, a LaTeX ``\\label`` (HoTT, Open Logic), a Lean name; else the id without its ``source:`` prefix.
* ``context``: where it lives: a breadcrumb (Stacks, HoTT, Open Logic, Napkin), PlanetMath's category,
  a ProofNet book, a Lean module; empty where the bundle does not say.

A saved finding is headed by its name, else by the first words of its statement. A Stacks statement
whose name is only its ``\\label``'s words is headed by its kind and section (``stacks_heading``, which
the bundle calls with its ``label`` column).

The function reads only ``id``, ``source``, ``kind``, ``name`` and ``title``, which every hit and every
document carry, so ``mathlas search`` and ``mathlas show`` (CLI, ``--json``, MCP, ``/api``, the page) agree
on any bundle, old ones included. It also tidies what older builds left in headings: TeX's ``--`` as an
en dash, a ``\\ss`` the build lost (``Weierstra ss``), and a ProofWiki heading made from a formula read
out as words (``U intersection V = empty``, the default bundles before 1.4.0) as Unicode (``U ∩ V = ∅``):
``formula_words``.

``plain_markdown`` is a Lean docstring (Markdown) as plain text, for the text surfaces.
"""
from __future__ import annotations

import re
from typing import NamedTuple


class Described(NamedTuple):
    heading: str
    label: str
    context: str


HEADING_CHARS = 160    # a heading longer than this is cut at a word (``…``)
FINDING_HEADING_CHARS = 80   # a saved finding without a name: its statement's first words

_INVISIBLE = re.compile(r"[\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff\x01]")


def describe(doc_id: str, source: str, kind: str = "", name: str = "", title: str = "", text: str = "",
             formulas_as_words: bool = False) -> Described:
    """The heading, label and context of a document from its id, source, kind, name and title
    (the bundle's columns): see the module docstring. ``text`` (the retrieval text, or a hit's snippet
    of it) heads a saved finding that has no name: its first words. ``formulas_as_words``: the bundle's
    ProofWiki titles read their formulas out as words (the default bundles before 1.4.0:
    ``old_proofwiki_titles``), which ``formula_words`` puts back as symbols; a title in Unicode is
    left as it is (there ``formula_words`` would read "sequence ⟨x_n⟩ in M" as "⟨x_n⟩ ∈ M")."""
    local = doc_id.split(":", 1)[1] if ":" in doc_id else doc_id
    name, title = tidy(name), tidy(title)
    if source == "lean":
        return Described(local, local, title)
    if source == "metamath":
        label = name or local
        if title and not _breadcrumb(title):   # the comment's first sentence (bundles from 1.2 on)
            return Described(_cut(title), label, "")
        return Described(label, label, title)  # older bundles: the title was the section path
    if source == "proofwiki":
        heading = name or (formula_words(title) if formulas_as_words else title)
        return Described(_cut(heading) or _untitled(kind, ""), local, "")
    if source == "findings" and not name:
        return Described(first_words(text) or "Finding", local, "")
    heading = name or _untitled(kind, title)
    label = local
    if source == "openlogic" and "#" in local and not local.rsplit("#", 1)[1].isdigit():
        label = local.rsplit("#", 1)[1]                         # the \ollabel; a number is mathlas's own
    return Described(_cut(heading), label, title)


# a " > " that compares: a number or a one-letter name after it ("If n > 1, then …", "k > 1")
_COMPARISON = re.compile(r" > (?:\d|[^\W\d_](?:\W|$))")


def _breadcrumb(title: str) -> bool:
    """Whether an older Metamath bundle's title is its section path ("SET THEORY > Ordinals"), not a
    comment's sentence that compares ("If n > 1, then …")."""
    return " > " in title and not _COMPARISON.search(title)


def old_proofwiki_titles(bundle_name: str, version: str) -> bool:
    """Whether a bundle's ProofWiki titles read formulas out as words (``U intersection V = empty``):
    the default ``informal`` bundles 1.1.0 to 1.3.x, built before the reader drew them in Unicode."""
    if bundle_name != "informal":
        return False
    parts = re.findall(r"\d+", version or "")[:2]
    return len(parts) == 2 and (int(parts[0]), int(parts[1])) < (1, 4)


def old_bundle_heading(manifest, doc_id: str, source: str | None, kind: str | None, name: str | None,
                       title: str | None) -> str:
    """The heading of a ProofWiki statement of a bundle (its ``manifest``) whose ProofWiki titles read
    formulas out as words (``old_proofwiki_titles``), with the symbols put back; "" for any other
    document or bundle (a hit or document then describes itself from its columns)."""
    if source != "proofwiki" or not old_proofwiki_titles(manifest.name, manifest.version):
        return ""
    return describe(doc_id, source, kind or "", name or "", title or "", formulas_as_words=True).heading


# a Stacks \label as the bundle's ``label`` column holds it: the chapter's file stem, the environment, the words
_STACKS_LABEL = re.compile(r"(?:^|-)(?:lemma|theorem|proposition|definition|corollary|remark|remarks|example|"
                           r"exercise|situation|section|subsection|equation|item)-(.+)$")


def stacks_heading(kind: str | None, name: str | None, title: str | None, tex_label: str | None) -> str:
    r"""The heading of a Stacks statement whose name is its ``\label``'s words as written ("when surjective
    local" of ``algebra-lemma-when-surjective-local``, "NAK localization", "PID UFD"): by its kind and
    section, as any untitled statement (``Lemma in Nakayama's lemma``); "" when the name is the source's
    own or the label is not read. The comparison is exact: the reader keeps a ``[...]`` name equal to
    the label's words but for case ("Popescu" of ``smoothing-theorem-popescu``, "Chinese remainder",
    "Smooth base change"), and spells a label word with the accents or capital its chapter writes it
    with, so a name that differs from the label's words in any letter is kept as the heading. The
    label's words stay what search reads (the retrieval text), and the tag is the hit's label."""
    m = _STACKS_LABEL.search(tex_label or "")
    if not name or not m:
        return ""
    if " ".join(name.split()) != " ".join(re.split(r"[-_:]+", m.group(1))).strip():
        return ""
    return _untitled(kind or "", tidy(title))


def first_words(text: str, leads: tuple[str, ...] = (), limit: int = FINDING_HEADING_CHARS) -> str:
    """The first sentence of a statement's ``text`` (its retrieval text, or a hit's snippet of it), cut
    at a word to ``limit`` characters, without the name or label it starts with (any of ``leads``: the
    retrieval text repeats them): what heads a statement whose heading says nothing the id does not
    (``mathlas.render``), and a saved finding without a name."""
    text = " ".join((text or "").split())
    for lead in leads:
        if lead and text.lower().startswith(lead.lower()):
            text = text[len(lead):].lstrip(" .:;,")
    if text.startswith(DEFINES) and ". " in text:
        # the retrieval text's list of the terms an entry defines ("Defines factorial ring, prime
        # factor, …."; a sentence the build ends with a period, whatever the terms hold): the statement follows
        text = text.split(". ", 1)[1].strip() or text
    first = re.split(r"(?<=[.;!?])\s", text, maxsplit=1)[0]
    return _cut(first.rstrip("."), limit)


# how a retrieval text lists the terms its entry defines, after the name (mathlas_build.retrieval_text, for
# every source whose reader gives the terms a statement defines)
DEFINES = "Defines "


def _untitled(kind: str, context: str) -> str:
    """``Definition in Integral domains``: a statement without a name, by its kind and the last part
    of its breadcrumb (the whole breadcrumb is the context)."""
    what = (kind or "statement").strip()
    what = what[:1].upper() + what[1:]
    last = context.rsplit(" > ", 1)[-1].strip() if context else ""
    return f"{what} in {last}" if last else what


def _cut(text: str, limit: int = HEADING_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[:cut if cut > limit // 2 else limit].rstrip(" ,;:") + " …"


# ------------------------------------------------------------------------------ tidying text

_SS = re.compile(r"(?<=[a-z]{2}) ss(?=$|[\s,.;:)'’-])")     # "Weierstra ss": a \ss the build read as a word
_EN_DASH = re.compile(r"(?<=\w)--(?=\w)")
_EM_DASH = re.compile(r"(?<=\w)---(?=\w)| --- ")


def tidy(text: str | None) -> str:
    """One line of a heading: invisible marks dropped, whitespace collapsed, TeX's ``---`` / ``--``
    between words as dashes, and a ``\\ss`` an older build read out as `` ss`` as ``ß``."""
    text = text or ""
    if not text.isascii() or "\x01" in text:  # _INVISIBLE's marks: all but \x01 outside ASCII
        text = _INVISIBLE.sub("", text)
    text = " ".join(text.split())
    if "--" in text:
        text = _EM_DASH.sub(lambda m: "—" if m.group(0) == "---" else " — ", text)
        text = _EN_DASH.sub("–", text)
    if " ss" in text:
        text = _SS.sub("ß", text)
    return text


# ------------------------------------------------------------------------------ formulas read out as words

# What mathlas_build.latex.latex_to_text writes for a TeX symbol, back to the symbol: the words of a
# ProofWiki heading that came from a formula. An infix word becomes its symbol between two tokens of
# the formula, a prefix word before one, a Greek letter's name wherever it stands (but before
# "function": the gamma function keeps its word); elsewhere they stay words ("in", "partial order",
# "the empty set", "U and V").
_INFIX = {
    "intersection": "∩", "union": "∪", "in": "∈", "not in": "∉", "subset": "⊆", "proper subset": "⊊",
    "superset": "⊇", "times": "×", "circ": "∘", "minus": "∖", "isomorphic": "≅", "equiv": "≡",
    "approx": "≈", "direct sum": "⊕", "tensor": "⊗", "maps to": "↦", "implies": "⟹", "iff": "⟺",
    "divides": "∣", "does not divide": "∤", "models": "⊨", "proves": "⊢", "disjoint union": "⊔",
}
_PREFIX = {"partial": "∂", "sum": "∑", "product": "∏", "integral": "∫", "nabla": "∇", "sqrt": "√"}
_BIG = {**_PREFIX, "union": "⋃", "intersection": "⋂"}      # with scripts: union_(i ∈ I) -> ⋃_(i ∈ I)
_ALONE = {"empty set": "∅", "empty": "∅", "infinity": "∞"}
_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "zeta": "ζ", "eta": "η",
    "theta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π",
    "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Phi": "Φ",
    "Psi": "Ψ", "Omega": "Ω",
}
_OPERATORS = {"<=": "≤", ">=": "≥", "!=": "≠", "+-": "±"}
_AFTER_EQUALS = ("=", "≠", "∈", "∉", "⊆", "∩", "∪")
_SYMBOLS = "∂∑∏∫∇√∅∞∈∉⊆∩∪" + "".join(_GREEK.values())
_SPLIT = re.compile(r"\A([(\[{|]*)(.*?)([)\]}|,.;:…]*)\Z")
_SCRIPTED = re.compile(r"\A([A-Za-z]+)([_^(].*)\Z")
_IN_SCRIPT = re.compile(r"(?<=[_^(])(infinity|%s)(?![A-Za-z])" % "|".join(_GREEK))
_NOT_A_LETTER = ("function", "functions", "distribution", "distributions")


# What a token is, kept by token (a heading's words are mostly words other headings have): its
# (lead, core, trail) split, whether it reads as a formula's token, and whether it is plain. Read three
# times a token by ``formula_words``, they were most of a ProofWiki hit's cost. Each table is cleared
# when it holds TOKENS_KEPT tokens (a plain dict: ``query.Kept``'s lock would cost more than the work).
TOKENS_KEPT = 1 << 16


def _kept_by_token(make):
    """``make(tok)``, kept in a dict by token (the dict is the function's ``kept``)."""
    kept: dict = {}

    def get(tok: str):
        got = kept.get(tok)
        if got is None:
            if len(kept) >= TOKENS_KEPT:
                kept.clear()
            got = kept[tok] = make(tok)
        return got
    get.kept = kept
    return get


# ``tok`` as (opening brackets, core, closing brackets and punctuation)
_split = _kept_by_token(lambda tok: _SPLIT.match(tok).groups())
_SPLITS = _split.kept


def _core(tok: str | None) -> str:
    return _split(tok)[1] if tok else ""


def _formula_token(tok: str | None) -> bool:
    """A token of a formula read out: a letter or number (with its scripts and brackets), an operator,
    a Greek letter's name, a symbol already put back."""
    return _formula_kept(tok) if tok else False


# the first words of the two-word rules (``not in``, ``empty set``)
_FIRST_WORDS = frozenset(k.split(" ")[0] for k in (*_INFIX, *_ALONE) if " " in k)


def _is_plain(tok: str) -> bool:
    """Whether no rule of ``formula_words`` can change ``tok`` whatever its neighbours (most words
    of a heading): it is written as it is without reading them."""
    lead, core, trail = _split(tok)
    m = _SCRIPTED.match(core)
    return not (
        tok in _FIRST_WORDS or tok in _INFIX or core in _ALONE or core in _PREFIX or core in _GREEK
        or tok in _OPERATORS or tok == "-" or (m is not None and (m.group(1) in _BIG or m.group(1) in _GREEK))
        or (re.search(r"[_^(]", tok) is not None and _formula_token(tok)))


_plain = _kept_by_token(_is_plain)


def _reads_as_formula(tok: str) -> bool:
    core = _core(tok) or tok
    if core in _GREEK or core[:1] in _SYMBOLS or core in _OPERATORS or core in _PREFIX:
        return True
    if re.fullmatch(r"[A-Za-z]'*|\d+(?:\.\d+)?|[-+*/=<>|≤≥≠±−]+", core):
        return True
    return bool(re.search(r"[=^_(){}\[\]<>+*/|]", tok)) and not core.isalpha()


_formula_kept = _kept_by_token(_reads_as_formula)
_FORMULA_TOKENS = _formula_kept.kept


def _symbol(m: re.Match) -> str:
    word = m.group(1)
    return "∞" if word == "infinity" else _GREEK[word]


def formula_words(text: str) -> str:
    """A heading whose formulas were read out as words, with the symbols put back:
    ``Its boundary partial K is compact`` -> ``Its boundary ∂K is compact``; ``U intersection V =
    empty`` -> ``U ∩ V = ∅``; ``(1 - x) sum_(i = 0)^(n - 1) x^i = 1 - x^n`` -> ``(1 − x) ∑_(i = 0)^(n − 1)
    x^i = 1 − x^n``. Words outside a formula stay words."""
    toks = text.split(" ")
    if len(toks) < 2:
        return text
    out: list[str] = []
    i = 0
    while i < len(toks):
        tok = toks[i]
        if i and _plain(tok):
            out.append(tok)
            i += 1
            continue
        if i == 0 and tok[:1].isupper() and tok.lower() in _PREFIX:   # the heading's capital: "Integral x d x"
            tok = tok.lower()
        lead, core, trail = _split(tok)
        prev = out[-1] if out else None
        after = toks[i + 1] if i + 1 < len(toks) else None
        after_core = _core(after)
        after2 = toks[i + 2] if i + 2 < len(toks) else None
        two = f"{tok} {after_core}" if after else ""
        if two in _INFIX and _formula_token(prev) and _formula_token(after2):
            out.append(_INFIX[two] + _split(after)[2])
            i += 2
            continue
        if two in _ALONE and (prev in _AFTER_EQUALS or after2 in ("=", "≠")):
            out.append(lead + _ALONE[two] + _split(after)[2])
            i += 2
            continue
        if not lead and tok in _INFIX and _formula_token(prev) and _formula_token(after):
            out.append(_INFIX[tok])
        elif core in _ALONE and (prev in _AFTER_EQUALS or after in ("=", "≠")):
            out.append(lead + _ALONE[core] + trail)
        elif core in _PREFIX and not trail and _formula_token(after) and after_core not in _INFIX:
            nxt = _IN_SCRIPT.sub(_symbol, after)
            out.append(lead + _PREFIX[core] + (nxt if len(after_core) <= 2 or not after_core.isalpha()
                                               else " " + nxt))
            i += 1
        elif (m := _SCRIPTED.match(core)) and m.group(1) in _BIG and m.group(2)[:1] in "_^":
            out.append(lead + _BIG[m.group(1)] + _IN_SCRIPT.sub(_symbol, m.group(2)) + trail)
        elif ((m := _SCRIPTED.match(core)) or core in _GREEK) and (m.group(1) if m else core) in _GREEK \
                and after_core not in _NOT_A_LETTER:
            word = m.group(1) if m else core
            out.append(lead + _GREEK[word] + _IN_SCRIPT.sub(_symbol, core[len(word):]) + trail)
        elif tok in _OPERATORS:
            out.append(_OPERATORS[tok])
        elif tok == "-" and _formula_token(prev) and _formula_token(after):
            out.append("−")
        elif _formula_token(tok) and re.search(r"[_^(]", tok):
            out.append(_IN_SCRIPT.sub(_symbol, tok))
        else:
            out.append(toks[i])
        i += 1
    return " ".join(out)


# ------------------------------------------------------------------------------ Markdown as text

_MD_CODE = re.compile(r"`+([^`]+?)`+")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\((?:[^()\s]|\([^()\s]*\))*\)")
_MD_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_MD_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_MD_EM = re.compile(r"(?<![\w*])([*_])(?=[^\s*_])(.+?)(?<=[^\s*_])\1(?![\w*])")
_MD_HEAD = re.compile(r"^\s{0,3}#{1,6}\s+", re.M)
_MD_BULLET = re.compile(r"^\s*[*+-]\s+", re.M)
_MD_QUOTE = re.compile(r"^\s*>\s?", re.M)


def plain_markdown(text: str | None) -> str:
    """A Markdown text (a Lean docstring) as plain text: ``**Gauss's formula**`` -> ``Gauss's formula``,
    `` `Nat.Prime` `` -> ``Nat.Prime``, ``[text](url)`` -> ``text``, headings and bullets unmarked.
    Code keeps its characters (``a * b`` stays), math stays as written (``$x^2$``)."""
    text = text or ""
    if not text:
        return text
    codes: list[str] = []

    def keep(m: re.Match) -> str:
        codes.append(m.group(1))
        return f"\x00{len(codes) - 1}\x00"

    text = _MD_CODE.sub(keep, text)
    text = _MD_LINK.sub(lambda m: m.group(1), text)
    text = _MD_REF_LINK.sub(lambda m: m.group(1), text)
    for _ in range(2):
        text = _MD_STRONG.sub(lambda m: m.group(2), text)
    text = _MD_EM.sub(lambda m: m.group(2), text)
    text = _MD_HEAD.sub("", text)
    text = _MD_BULLET.sub("• ", text)
    text = _MD_QUOTE.sub("", text)
    text = text.replace("\\*", "*").replace("\\_", "_")
    return re.sub("\x00(\\d+)\x00", lambda m: codes[int(m.group(1))], text)
