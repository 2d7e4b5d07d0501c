"""Declarations Lean generates from a structure, class or inductive, parsed from source text.

Used by ``lean.parse_file`` (parsing, per file) and ``lean.read`` (emitting, once every name is known):

* ``structure_parts``: a ``structure``/``class`` header's ``extends`` parents (each gives the projection
  ``S.to<Parent>``, Lean's name for it), the constructor (``mk`` unless ``name ::`` is written) and the
  fields of its ``where`` block: ``name binders : type (:= default)``, ``(a b : T)``, ``{a : T}``,
  ``[inst : C]``, each with its docstring and line. ``name := value`` lines set a parent field's default
  and declare nothing; anonymous ``[C α]`` fields are skipped (their name is not written).
* ``inductive_ctors``: the ``| name binders : type`` constructors of an ``inductive``.
* ``generated_names``: the generated declarations of one parsed declaration (for ``lean.read``), with
  ``attribute_lemmas``: what ``@[ext]``, ``@[reassoc]``, ``@[elementwise]``, ``@[to_app]``, ``@[to_fun]``
  and ``@[mk_iff]`` add (names only: the statements are Lean's to compute); ``lean.read`` hands it the
  attributes of ``attribute [..] x`` commands too.
* ``simps_request`` / ``simps_names`` / ``simps_lemmas``: the lemma names of ``@[simps]``.
* ``to_additive_target``: the name ``@[to_additive]`` gives a declaration.

``@[simps]`` — what is emitted (``simps_lemmas`` puts it together) and what is not determinable here:

* explicit projections ``@[simps a b_c]`` (config and ``-opt``/``+opt`` flags ignored): always
  ``<decl>_a``, ``<decl>_b_c`` — that is Lean's naming, whatever the value looks like;
* no list: when the declared type's head is a structure/class parsed from the sources read (directly, or
  through a ``notation``/``infix`` whose right-hand side starts with it, so ``M →* N`` is ``MonoidHom``),
  and the value is written as a constructor (``where``, ``{ .. }``, ``⟨..⟩``, ``(a, b)``, ``.mk``) or the
  attribute is ``simps!``: one lemma per projection of the structure with parents flattened, renamed,
  hidden, added or made prefix (``as_prefix``) as ``initialize_simps_projections`` says, proof fields
  left out (a field is taken as a proof when its name is snake_case — Mathlib's naming rule for
  proofs — or its type concludes in a relation);
* ``to_additive (attr := simps ..)``: the same lemmas under the additive declaration's name;
* not determinable, skipped: a target structure not in the sources (``Prod``, Lean core), a field whose
  type is itself a structure from the sources (simps recurses into the value, ``foo_f_g``), a plain
  ``simps`` on a value that is a constructor only after unfolding, and anonymous instances.
"""
from __future__ import annotations

import re

from mathlas_build.sources import lean_refs as lref

_IDENT = re.compile(r"(?:«[^»]*»|[^\W\d])(?:[\w'!?]|«[^»]*»|\.(?=[^\W\d]|«))*")
_MODS = re.compile(r"(?:(?:private|protected)\s+|@\[[^\]]*\]\s*)*")
# brackets whose insides are never top level: ⟮ ⟯ holds manifold notation (C^∞⟮I, G; 𝕜⟯), ⁅ ⁆ Lie brackets
_OPEN = {"(": ")", "[": "]", "{": "}", "⦃": "⦄", "⟨": "⟩", "⟪": "⟫", "⟮": "⟯", "⁅": "⁆"}
_CLOSE = set(_OPEN.values())
_REL = re.compile(r"(?<![<>=:≤≥])(?:=|≠|≤|<|≥|>|↔|∈|∉|⊆|⊂|∣|≡|⊥)(?![=>])|^\s*[¬∃]")


def _ws(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def top_level(s: str, pattern: str) -> int:
    """Index of the first occurrence of ``pattern`` in ``s`` outside brackets (-1 if none)."""
    depth = 0
    i = 0
    while i < len(s):
        c = s[i]
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth = max(0, depth - 1)
        elif depth == 0 and s.startswith(pattern, i):
            if pattern == ":" and s.startswith(":=", i) or pattern == ":" and s.startswith("::", i):
                i += 2
                continue
            return i
        i += 1
    return -1


def split_top(s: str, sep: str = ",") -> list[str]:
    out, depth, cur = [], 0, []
    for c in s:
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth = max(0, depth - 1)
        if c == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    out.append("".join(cur))
    return [x.strip() for x in out if x.strip()]


def header_parts(sig: str) -> tuple[str, list[str], str]:
    """``(α : Type*) [Foo α] extends A α, B : Type where`` -> (binders, parent texts, sort)."""
    ext = top_level(sig, "extends")
    colon = top_level(sig, ":")
    binders = sig[:ext if ext >= 0 else (colon if colon >= 0 else len(sig))]
    parents: list[str] = []
    if ext >= 0:
        rest = sig[ext + len("extends"):]
        c = top_level(rest, ":")
        # `extends toP : P` names the projection: a colon right after one identifier
        if c >= 0 and not re.fullmatch(r"\s*[^\W\d][\w'!?]*\s*", rest[:c]):
            rest = rest[:c]
        parents = split_top(rest)
    return binders.strip(), parents, sig[colon + 1:].strip() if colon >= 0 and (ext < 0 or colon < ext) else ""


def explicit_params(binders: str) -> list[str]:
    """Names of the explicit ``(a b : T)`` binders of a header (what ``S a b`` is applied to)."""
    out: list[str] = []
    for m in re.finditer(r"\(\s*((?:[^\W\d][\w'!?]*\s+)*[^\W\d][\w'!?]*)\s*:", binders):
        out.extend(m.group(1).split())
    return out


def type_head(typ: str, atoms: dict[str, str] | None = None) -> str:
    """The constant a type is built from: the structure behind a notation atom at top level
    (``M →* N`` -> ``MonoidHom`` via ``atoms``, longest atom first) or the leading identifier."""
    if atoms:
        flat = typ
        for _ in range(4):
            flat = re.sub(r"\([^()]*\)|\{[^{}]*\}", " ", flat)
        # an infix atom, written after a space (`M →* N`); not `f`, `dist` or a postfix like `αᵒᵈ`
        for a in sorted((a for a in atoms if " " + a in flat and not (a[0].isalnum() or a[0] in "_'")),
                        key=len, reverse=True):
            return atoms[a]
    m = re.match(r"\s*\(*\s*@?((?:«[^»]*»|[^\W\d])(?:[\w'!?]|«[^»]*»|\.(?=[^\W\d]|«))*)", typ)
    return m.group(1) if m else ""


def parent_projection(parent: str, atoms: dict[str, str] | None = None) -> tuple[str, str, str]:
    """``Monoid M`` -> (``toMonoid``, ``Monoid``, ``Monoid M``); ``toP : P α`` -> (``toP``, ``P``, ``P α``)."""
    m = re.match(r"\s*([^\W\d][\w'!?]*)\s*:\s*(.*)", parent, re.S)
    if m and not parent.lstrip().startswith("("):
        return m.group(1), type_head(m.group(2), atoms), _ws(m.group(2))
    head = type_head(parent, atoms)
    if not head:
        return "", "", ""
    return "to" + head.split(".")[-1], head, _ws(parent)


def _items(masked: str, text: str, a: int, b: int) -> list[int]:
    """Start offsets of the items of an indented block ``masked[a:b]`` (first line sets the indentation)."""
    starts: list[int] = []
    base = None
    pos = a
    first = True
    while pos < b:
        e = masked.find("\n", pos, b)
        e = b if e < 0 else e
        line = masked[pos:e]
        if line.strip():
            off = len(line) - len(line.lstrip())
            ind = len(text[pos:e]) - len(text[pos:e].lstrip())  # a docstring counts as content
            if first and pos == a and masked[a - 1:a] != "\n" and a > 0 and masked[a - 1] != "\n":
                starts.append(pos + off)  # content on the `where` line itself
            elif base is None or ind <= base:
                if base is None:
                    base = ind
                starts.append(pos + off)
            first = False
        pos = e + 1
    return starts


def _field_entries(item: str) -> list[tuple[str, str, str]]:
    """(name, binders, type) for each field an item declares; [] for a default-value override."""
    item = _MODS.sub("", item, count=1).strip()
    out = []
    if item[:1] in "({[⦃":
        i = 0
        while i < len(item) and item[i] in "({[⦃":
            depth, j = 0, i
            while j < len(item):
                if item[j] in _OPEN:
                    depth += 1
                elif item[j] in _CLOSE:
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            inner = item[i + 1:j]
            c = top_level(inner, ":")
            if c >= 0:
                typ = inner[c + 1:]
                d = top_level(typ, ":=")
                typ = typ[:d] if d >= 0 else typ
                for nm in inner[:c].split():
                    if _IDENT.fullmatch(nm):
                        out.append((nm, "", _ws(typ)))
            i = j + 1
            while i < len(item) and item[i].isspace():
                i += 1
        return out
    m = _IDENT.match(item)
    if not m:
        return []
    rest = item[m.end():]
    c = top_level(rest, ":")
    d = top_level(rest, ":=")
    if c < 0 or 0 <= d < c:
        return []
    typ = rest[c + 1:]
    d = top_level(typ, ":=")
    return [(m.group(), _ws(rest[:c]), _ws(typ[:d] if d >= 0 else typ))]


def structure_parts(masked: str, text: str, sig: str, a: int, b: int, doc_at: dict, line_of) -> dict:
    """Parents, constructor and fields of a ``structure``/``class`` whose header ends at ``a``."""
    binders, parents, _ = header_parts(sig)
    info = {"params": explicit_params(binders), "parents": parents,
            "ctor": ("mk", False, 0, ""), "fields": []}
    m = re.match(r"\s*where\b", masked[a:b])
    if not m:
        return info
    p = a + m.end()
    cm = re.match(r"(\s*)((?:(?:private|protected)\s+)?)([^\W\d][\w'!?]*)\s*::", masked[p:b])
    if cm:
        q = p + len(cm.group(1))
        info["ctor"] = (cm.group(3), True, line_of(q), doc_at.get(q, ""))
        p += cm.end()
    starts = _items(masked, text, p, b)
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else b
        item = masked[s:e]
        dm = re.search(r"\n\s*deriving\b", item)
        if dm:
            item = item[:dm.start()]
        for name, fb, typ in _field_entries(item):
            info["fields"].append({"name": name, "binders": fb, "type": typ, "line": line_of(s),
                                   "docstring": doc_at.get(s, "")})
        if dm:
            break
    return info


_CTOR = re.compile(r"(?:^|(?<=\s))\|\s+((?:(?:private|protected)\s+)?)([^\W\d][\w'!?]*)")


def inductive_ctors(masked: str, a: int, b: int, doc_at: dict, line_of) -> list[dict]:
    """``| name binders : type`` constructors in ``masked[a:b]`` (the text after an inductive's header)."""
    region = masked[a:b]
    dm = re.search(r"(?:^|\n)\s*deriving\b", region)
    if dm:
        region = region[:dm.start()]
    found = []
    depth = 0
    last = 0
    for m in _CTOR.finditer(region):
        for c in region[last:m.start()]:
            if c in _OPEN:
                depth += 1
            elif c in _CLOSE:
                depth = max(0, depth - 1)
        last = m.start()
        line_start = region.rfind("\n", 0, m.start()) + 1
        before = region[line_start:m.start()]
        if depth or ":" in before:
            continue
        found.append(m)
    out = []
    for k, m in enumerate(found):
        e = found[k + 1].start() if k + 1 < len(found) else len(region)
        pos = a + m.start()
        out.append({"name": m.group(2), "signature": _ws(region[m.end():e]), "line": line_of(pos),
                    "docstring": doc_at.get(pos, doc_at.get(a + m.start(2), ""))})
    return out


def simps_request(attrs: list[str]) -> dict | None:
    """``simps``/``simps!`` attribute, also inside ``to_additive (attr := simps ..)`` (then the additive
    declaration gets the same lemmas): {"bang", "names" (explicit projections), "additive"} or None."""
    for a in attrs:
        additive = False
        m = re.match(r"simps(!?)(?:\s+(.*))?$", a)
        if not m:
            tm = re.match(r"to_additive\b.*?\(attr\s*:=\s*([^()]*)\)", a)
            if not tm:
                continue
            m = next((re.match(r"simps(!?)(?:\s+(.*))?$", x) for x in split_top(tm.group(1))
                      if x.startswith("simps")), None)
            if not m:
                continue
            additive = True
        args = re.sub(r"\([^()]*(?:\([^()]*\)[^()]*)*\)", " ", m.group(2) or "")
        names = [w for w in args.split() if w[0] not in "-+" and _IDENT.fullmatch(w)]
        return {"bang": bool(m.group(1)), "names": names, "additive": additive}
    return None


def constructor_value(body: str) -> bool:
    """True when a definition's value is written as a constructor: ``where``, ``{ .. }``, ``⟨..⟩``, ``(a, b)``."""
    m = re.match(r"\s*(?:where\b|:=\s*(?:\{|⟨|\((?=[^()]*,)|[\w.]*\.mk\b|\.mk\b))", body)
    return bool(m)


def is_prop_field(name: str, typ: str) -> bool:
    """Heuristic: the field holds a proof. Mathlib names proofs in snake_case and data in lowerCamelCase
    (``map_mul'``, ``left_inv`` vs ``toFun``, ``npow``), so an underscore decides; otherwise a relation
    at top level of the type's conclusion (``=``, ``≤``, ``↔``, ``∈``...), ``¬`` or ``∃``."""
    if "_" in name.strip("_"):
        return True
    concl = typ
    cut = top_level(concl, ",")
    while cut >= 0 and re.match(r"\s*[∀∃]", concl):
        concl = concl[cut + 1:]
        cut = top_level(concl, ",")
    arrows = [x for x in re.split(r"→", concl)]
    last = arrows[-1] if top_level(concl, "→") >= 0 else concl
    flat = re.sub(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}", " ", last)
    return bool(_REL.search(flat)) or last.strip() in ("Prop", "True", "False")


def simps_names(decl: str, proj: list[tuple[str, bool]], request: dict) -> list[str]:
    """Lemma names of ``@[simps]`` on ``decl``: ``<decl>_<projection>`` (``<prefix>_<decl>`` for an
    ``as_prefix`` projection), for the listed projections or else for every non-Prop one in ``proj``
    (pairs (name, as_prefix), already renamed, hidden ones and Prop fields removed)."""
    ns, _, last = decl.rpartition(".")
    pre = {n for n, p in proj if p}
    names = request["names"] or [n for n, _ in proj]
    out = []
    for n in names:
        first = n.split("_")[0]
        if n in pre or first in pre and n not in {x for x, _ in proj}:
            nm = f"{n}_{last}"
        else:
            nm = f"{last}_{n}"
        out.append(f"{ns}.{nm}" if ns else nm)
    return out


# Lean's own rule for the name ``@[to_additive]`` gives a declaration (Mathlib/Tactic/Translate/GuessName.lean,
# guessName, with the dictionaries of Mathlib/Tactic/Translate/ToAdditive.lean): the last part of the name
# split at capitals and underscores, each word translated by NAME_DICT (capitalised as the word was), then
# the abbreviations ABBREVIATION_DICT fixes ("addIndicator" -> "indicator", "zero_le" -> "nonneg"); the
# other parts are translated only where they name a declaration that has a translation (Translate/Core
# targetName: ``Name.mapPrefix``), so ``Finset`` and ``Prod`` stay and ``Submonoid`` becomes ``AddSubmonoid``.
NAME_DICT: dict[str, list[str]] = {
    "one": ["Zero"], "mul": ["Add"], "smul": ["VAdd"], "inv": ["Neg"], "div": ["Sub"], "prod": ["Sum"],
    "hmul": ["HAdd"], "hsmul": ["HVAdd"], "hdiv": ["HSub"], "hpow": ["HSMul"], "finprod": ["Finsum"],
    "tprod": ["TSum"], "pow": ["NSMul"], "npow": ["NSMul"], "zpow": ["ZSMul"], "mabs": ["Abs"],
    "monoid": ["Add", "Monoid"], "submonoid": ["Add", "Submonoid"], "group": ["Add", "Group"],
    "subgroup": ["Add", "Subgroup"], "semigroup": ["Add", "Semigroup"], "magma": ["Add", "Magma"],
    "haar": ["Add", "Haar"], "prehaar": ["Add", "Prehaar"], "unit": ["Add", "Unit"], "units": ["Add", "Units"],
    "cyclic": ["Add", "Cyclic"], "semigrp": ["Add", "Semigrp"], "grp": ["Add", "Grp"],
    "commute": ["Add", "Commute"], "semiconj": ["Add", "Semiconj"], "rootable": ["Divisible"],
    "zpowers": ["ZMultiples"], "powers": ["Multiples"], "multipliable": ["Summable"], "gpfree": ["APFree"],
    "quantale": ["Add", "Quantale"], "square": ["Even"], "mconv": ["Conv"], "irreducible": ["Add", "Irreducible"],
    "mlconvolution": ["LConvolution"],
}
ABBREVIATION_DICT: dict[str, str] = {
    "isCancelAdd": "IsCancelAdd", "isLeftCancelAdd": "IsLeftCancelAdd", "isRightCancelAdd": "IsRightCancelAdd",
    "cancelAdd": "AddCancel", "leftCancelAdd": "AddLeftCancel", "rightCancelAdd": "AddRightCancel",
    "cancelCommAdd": "AddCancelComm", "commAdd": "AddComm", "zero_le": "Nonneg", "zeroLE": "Nonneg",
    "zero_lt": "Pos", "zeroLT": "Pos", "lezero": "Nonpos", "le_zero": "Nonpos", "ltzero": "Neg", "lt_zero": "Neg",
    "addSingle": "Single", "addSupport": "Support", "addTSupport": "TSupport", "addIndicator": "Indicator",
    "isEven": "Even", "isRegular": "IsAddRegular", "isLeftRegular": "IsAddLeftRegular",
    "isRightRegular": "IsAddRightRegular", "hasFundamentalDomain": "HasAddFundamentalDomain",
    "quotientMeasure": "AddQuotientMeasure", "negFun": "InvFun", "uniqueProds": "UniqueSums",
    "orderOf": "AddOrderOf", "zeroLePart": "PosPart", "leZeroPart": "NegPart", "isScalarTower": "VAddAssocClass",
    "isOfFinOrder": "IsOfFinAddOrder", "isCentralScalar": "IsCentralVAdd",
    "function_addSemiconj": "Function_semiconj", "function_addCommute": "Function_commute",
    "divisionAddMonoid": "SubtractionMonoid", "subNegZeroAddMonoid": "SubNegZeroMonoid",
    "modularCharacter": "AddModularCharacter", "isQuotientCoveringMap": "IsAddQuotientCoveringMap",
    "addExact": "exact",
}
END_CAPITAL_NAMES: dict[str, list[str]] = {"LE": [""], "LT": [""], "GE": [""], "GT": [""], "WF": [""],
                                           "Coe": ["TC", "T", "HTCT"]}


def _upper(c: str) -> bool:
    return "A" <= c <= "Z"   # Lean's Char.isUpper: ASCII only


def split_case(s: str) -> list[str]:
    """GuessName's ``String.splitCase``: ``InvHMulLEConjugate₂SMul_ne_top`` -> ``Inv, HMul, LE,
    Conjugate₂, SMul, _, ne, _, top``."""
    out: list[str] = []
    i0 = 0
    while True:
        i1 = i0 + 1
        if i1 >= len(s):
            out.append(s)
            return out
        if s[i0] == "_" or s[i1] == "_":
            out.append(s[:i1])
            s, i0 = s[i1:], 0
            continue
        if _upper(s[i1]):
            ends = END_CAPITAL_NAMES.get(s[:i1])
            if ends is not None:
                hit = next((x for x in ends if s[i1:].startswith(x)), None)
                if hit is not None:
                    out.append(s[:i1] + hit)
                    s, i0 = s[i1 + len(hit):], 0
                    continue
            if not _upper(s[i0]):
                out.append(s[:i1])
                s, i0 = s[i1:], 0
                continue
        i0 = i1


def _decapitalize_seq(s: str) -> str:
    i = 0
    while i < len(s) and _upper(s[i]):
        i += 1
    return s[:i].lower() + s[i:]


def _decapitalize_like(r: str, s: str) -> str:
    return s if not r or _upper(r[0]) else _decapitalize_seq(s)


def _apply_name_dict(words: list[str]) -> list[str]:
    out: list[str] = []
    for x in words:
        y = NAME_DICT.get(x.lower())
        out.extend([_decapitalize_like(x, y[0]), *y[1:]] if y else [x])
    return out


def _fix_abbreviation(words: list[str]) -> str:
    """GuessName's ``fixAbbreviation`` (its recursion as a loop)."""
    out: list[str] = []
    rest, held = list(words), []
    while rest or held:
        if not rest:
            out.append(held[0])
            rest, held = held[1:], []
            continue
        pre, rest = rest[0], rest[1:]
        held = held + [pre]
        t = "".join(held)
        if pre == "_" and t and _upper(t[0]):
            out.append(held[0])
            rest, held = held[1:] + rest, []
            continue
        post = ABBREVIATION_DICT.get(_decapitalize_seq(t))
        if post is not None:
            out.append(_decapitalize_like(t, post))
            held = []
    return "".join(out)


def guess_name(s: str) -> str:
    """Lean's ``guessName`` for one part of a name: ``mul_one`` -> ``add_zero``, ``prod_mulIndicator``
    -> ``sum_indicator``, ``one_le_of_le`` -> ``nonneg_of_le``, ``orderOf_pos`` -> ``addOrderOf_pos``."""
    return "'".join(_fix_abbreviation(_apply_name_dict(split_case(tok))) for tok in s.split("'"))


def additive_name(name: str) -> str:
    """Every part of ``name`` by ``guess_name`` (``MonoidHom.map_mul`` -> ``AddMonoidHom.map_add``): the
    rule where the declarations that have translations are not known (``to_additive_target`` knows them)."""
    return ".".join(guess_name(part) for part in name.split("."))


def map_prefix(parts: list[str], translations: dict[str, str]) -> list[str]:
    """Lean's ``Name.mapPrefix``: the longest leading parts that name a translated declaration, translated."""
    for k in range(len(parts), 0, -1):
        hit = translations.get(".".join(parts[:k]))
        if hit is not None:
            return hit.split(".") + parts[k:]
    return list(parts)


def statement_names(translations: dict[str, str]):
    """The name rule of a translated statement: a translated declaration by its translation
    (``Submonoid`` -> ``AddSubmonoid``, ``Finset.prod`` -> ``Finset.sum``). Otherwise a name under a
    namespace nothing translates stays (``Prod.fst``, ``Nat.mul``); a name alone or after a variable (dot
    notation: ``s.prod``, ``f.prodMap``) has its last part translated when it is the last part of a
    translated declaration: as every such translation renames it (``orderOf`` -> ``addOrderOf``,
    ``prodMap`` stays), or by ``guess_name`` where they differ (``prod``: ``Finset.prod`` -> ``sum``, but
    ``MonoidHom.prod`` stays); anything else as it is (a variable, ``fst``)."""
    lasts: dict[str, set[str]] = {}
    for src, tgt in translations.items():
        lasts.setdefault(src.rsplit(".", 1)[-1], set()).add(tgt.rsplit(".", 1)[-1])

    def last_part(last: str) -> str:
        seen = lasts.get(last)
        if not seen:
            return last
        return next(iter(seen)) if len(seen) == 1 else guess_name(last)

    def name(ident: str) -> str:
        hit = translations.get(ident)
        if hit is not None:
            return hit
        parts = ident.split(".")
        head = map_prefix(parts[:-1], translations)
        if parts[:-1] and head == parts[:-1] and _upper(parts[0][:1]):
            return ident        # a namespace Lean does not translate: Prod.fst, Nat.mul
        return ".".join(head + [last_part(parts[-1])])
    return name


def to_additive_target(attrs: list[str], full: str, translations: dict[str, str] | None = None, *,
                       existing: bool = False) -> str | None:
    """The name ``@[to_additive]`` gives the additive version of ``full`` (None without the attribute, or
    with ``existing`` unless ``existing=True`` asks for the name it points at): the explicit name when the
    attribute gives one (a k-part name replaces the last k parts), else the prefix through ``translations``
    (the declarations translated so far: ``map_prefix``) and ``guess_name`` of the last part, as Lean's
    Translate/Core ``targetName``. Without ``translations`` every part is guessed (``additive_name``)."""
    for a in attrs:
        tm = re.match(r"to_additive\b(.*)", a)
        if not tm:
            continue
        if "existing" in tm.group(1).split() and not existing:
            return None
        arg = re.sub(r"/-.*?(?:-/|$)", " ", tm.group(1), flags=re.S)
        while True:  # innermost (..) groups first: `(attr := simp (config := x))`
            arg, k = re.subn(r"\([^()]*\)", " ", arg)
            if not k:
                break
        arg = re.sub(r'"[^"]*"', " ", arg).split()
        arg = [x for x in arg if x not in ("existing", "self", "(reorder", "?") and not x[0].isdigit()]
        parts = full.split(".")
        pre = (map_prefix(parts[:-1], translations) if translations is not None
               else additive_name(full).split(".")[:-1])
        if arg:
            if arg[0].startswith("_root_."):
                return arg[0].removeprefix("_root_.")
            # Lean (Translate/Core.targetName): a k-part name replaces the last k parts of the name
            tgt = arg[0].split(".")
            return ".".join(pre[:max(0, len(pre) - (len(tgt) - 1))] + tgt)
        return ".".join(pre + [guess_name(parts[-1])])
    return None


def generated_names(d: dict, full: str, add: str | None, atoms: dict[str, str]) -> list[dict]:
    """Names Lean makes from declaration ``d`` (emitted as ``full``): fields, parent projections and the
    constructor of a structure/class, constructors of an inductive, ``irreducible_def``'s ``_def``
    lemma; the same under the additive name ``add`` for a ``@[to_additive]`` structure."""
    out: list[dict] = []
    parts = d["parts"] or {}
    if "fields" in parts and parts["parents"] and isinstance(parts["parents"][0], str):
        parts["parents"] = [parent_projection(p, atoms) for p in parts["parents"]]
    for owner in (full, add):
        if not owner:
            continue
        tr = (lambda x: x) if owner == full else additive_name
        if "fields" in parts:
            cls = d["keyword"] == "class"
            applied = " ".join([owner] + parts["params"])
            self_b = f"[self : {applied}]" if cls else f"(self : {applied})"
            for proj, head, ptext in parts["parents"]:
                if proj:
                    out.append({"name": f"{owner}.{tr(proj)}", "kind": "field", "generated": "field",
                                "signature": f"{self_b} : {ptext}", "line": d["line"], "docstring": "",
                                "tokens": (head,), "from": owner, "parent": head})
            for f in parts["fields"]:
                fsig = " ".join(x for x in (self_b, f["binders"], ":", f["type"]) if x)
                out.append({"name": f"{owner}.{tr(f['name'])}", "kind": "field", "generated": "field",
                            "signature": fsig, "line": f["line"], "docstring": f["docstring"],
                            "tokens": lref.identifiers(f["binders"] + " " + f["type"]), "from": owner})
            ctor, written, cline, cdoc = parts["ctor"]
            binders = [f"({tr(p)} : {t})" for p, _, t in parts["parents"] if p]
            binders += [f"({tr(f['name'])} : {f['type']})" for f in parts["fields"]]
            out.append({"name": f"{owner}.{ctor}", "kind": "constructor", "generated": "constructor",
                        "signature": " ".join(binders + [":", applied]), "line": cline or d["line"],
                        "docstring": cdoc, "tokens": (), "from": owner, "written": written})
        for c in parts.get("ctors", ()):
            out.append({"name": f"{owner}.{tr(c['name'])}", "kind": "constructor", "generated": "constructor",
                        "signature": c["signature"], "line": c["line"], "docstring": c["docstring"],
                        "tokens": lref.identifiers(c["signature"]), "from": owner, "written": True})
    if d["keyword"] == "irreducible_def":
        out.append({"name": f"{full}_def", "kind": "theorem", "generated": "irreducible_def",
                    "signature": "", "line": d["line"], "docstring": "", "tokens": (), "from": full})
    out.extend(attribute_lemmas(d, full, add))
    return out


# Lemmas an attribute adds (see ``attribute_lemmas``). Mathlib's ``addRelatedDecl`` (Util/AddRelatedDecl.lean)
# makes ``reassoc`` (Tactic/CategoryTheory/Reassoc.lean), ``elementwise`` (Elementwise.lean), ``to_app``
# (ToApp.lean) and ``to_fun`` (Tactic/ToFun.lean) lemmas: a suffix after the last part of the name (a
# prefix for to_fun), the ``(attr := ..)`` attributes applied to both the source and the new lemma.
_RELATED = {"reassoc": ("", "_assoc"), "elementwise": ("", "_apply"), "to_app": ("", "_app"),
            "to_fun": ("fun_", "")}
_ATTR_WORD = re.compile(r"(?:(?:local|scoped)\s+)?([^\W\d][\w.]*)")


def _nested_attrs(attr: str) -> list[str]:
    """The attributes of an ``(attr := a, b (attr := c))`` option (outermost only): ``["a", "b (attr := c)"]``."""
    m = re.search(r"\(\s*attr\s*:=", attr)
    if not m:
        return []
    depth = 0
    for j in range(m.start(), len(attr)):
        if attr[j] in _OPEN:
            depth += 1
        elif attr[j] in _CLOSE:
            depth -= 1
            if depth == 0:
                return split_top(attr[m.end():j])
    return split_top(attr[m.end():])


def _rename_last(name: str, before: str = "", after: str = "") -> str:
    """Lean's ``Name.appendBefore``/``appendAfter``: the last part of ``name`` with a prefix/suffix."""
    ns, _, last = name.rpartition(".")
    if last.startswith("«") and last.endswith("»"):
        last = f"«{before}{last[1:-1]}{after}»"
    else:
        last = f"{before}{last}{after}"
    return f"{ns}.{last}" if ns else last


def _attribute_lemmas(attr: str, src: str, shape: str) -> list[tuple[str, str, str]]:
    """(name, tag, source) of the lemmas one attribute on ``src`` makes; ``shape`` is "structure",
    "inductive" or "other" (what ``src`` is)."""
    m = _ATTR_WORD.match(attr)
    word = m.group(1) if m else ""
    out: list[tuple[str, str, str]] = []
    if word == "ext":
        # Lean core (Elab/Tactic/Ext.lean): on a structure, realizeExtTheorem makes `S.ext`; the iff form
        # of an ext theorem `n.s` is `n.s_iff` (realizeExtIffTheorem), unless `(iff := false)`
        ext = src
        if shape == "structure":
            ext = f"{src}.ext"
            out.append((ext, "ext", src))
        if not re.search(r"\(\s*iff\s*:=\s*false\s*\)", attr):
            out.append((_rename_last(ext, after="_iff"), "ext_iff", src))
    elif word == "mk_iff" and shape != "other":
        # MkIffOfInductiveProp.lean: `mk_iff` -> the name decapitalized (ASCII first letter) + `_iff`;
        # `mk_iff bar` -> `bar` in the declaration's namespace (mkDeclName), `_root_.bar` -> `bar`
        arg = attr[m.end():].split()
        if arg:
            ns = src.rpartition(".")[0]
            tgt = arg[0].removeprefix("_root_.") if arg[0].startswith("_root_.") else \
                ".".join(x for x in (ns, arg[0]) if x)
        else:
            ns, _, last = src.rpartition(".")
            last = last[:1].lower() + last[1:] if "A" <= last[:1] <= "Z" else last
            tgt = f"{ns}.{last}_iff" if ns else f"{last}_iff"
        out.append((tgt, "mk_iff", src))
    elif word in _RELATED:
        before, after = _RELATED[word]
        tgt = _rename_last(src, before, after)
        out.append((tgt, word, src))
        for a in _nested_attrs(attr):   # addRelatedDecl applies them to the source and the new lemma
            out.extend(_attribute_lemmas(a, src, shape))
            out.extend(_attribute_lemmas(a, tgt, "other"))
    elif word == "to_dual":
        # the dual declaration is not read here; its `(attr := ..)` also applies to the source
        for a in _nested_attrs(attr):
            out.extend(_attribute_lemmas(a, src, shape))
    return out


def attribute_lemmas(d: dict, full: str, add: str | None) -> list[dict]:
    """Lemmas Lean makes from ``d``'s attributes: ``@[ext]`` (``S.ext`` and ``S.ext_iff`` of a structure or
    class, ``foo_iff`` of an ext theorem ``foo``), ``@[reassoc]`` (``foo_assoc``), ``@[elementwise]``
    (``foo_apply``), ``@[to_app]`` (``foo_app``), ``@[to_fun]`` (``fun_foo``), ``@[mk_iff]`` (``foo_iff``
    of an inductive ``Foo``), nested ``(attr := ..)`` ones too; under the additive name ``add`` as well
    for the attributes of ``to_additive (attr := ..)``. Protected where Lean makes them protected."""
    kw = d["keyword"]
    shape = "structure" if kw in ("structure", "class") else \
        "inductive" if kw in ("inductive", "class inductive") else "other"
    found: list[tuple[str, str, str]] = []
    for a in d["attributes"]:
        m = _ATTR_WORD.match(a)
        if m and m.group(1) == "to_additive":
            for owner in (full, add):
                for n in _nested_attrs(a) if owner else ():
                    found.extend(_attribute_lemmas(n, owner, shape))
        else:
            found.extend(_attribute_lemmas(a, full, shape))
    protected = "protected" in d["modifiers"]
    out: list[dict] = []
    for name, tag, src in found:
        word = {"ext_iff": "ext"}.get(tag, tag)
        # Mathlib's addRelatedDecl gives the new lemma its source's docstring (to_fun: after a line of its own)
        doc = d["docstring"] if tag in _RELATED else ""
        if tag == "to_fun":
            doc = f"Eta-expanded form of `{src}`" + (f"\n\n---\n\n{doc}" if doc else "")
        out.append({"name": name, "kind": "theorem", "generated": tag, "signature": "", "line": d["line"],
                    "docstring": doc, "tokens": (), "from": src, "body": f"@[{word}] {src}",
                    # Lean protects S.ext, a namespaced ext_iff, and a related lemma of a protected source
                    "protected": tag == "ext" or tag == "ext_iff" and "." in name
                    or tag in _RELATED and protected})
    return out


def simps_lemmas(decls: list[dict], extras: dict, resolver: lref.Resolver, atom_heads: dict[str, str],
           add_of: dict[str, str]) -> dict[int, list[tuple[str, str]]]:
    """``@[simps]`` lemma names per declaration index: [(lemma name, projection)] (see lean_generated)."""
    structs = {d["full"]: d for d in decls if d.get("full") and d["parts"] and "fields" in d["parts"]}

    def struct_of(token: str, ns: str, opens: tuple, file: str) -> str | None:
        for r in resolver.resolve(token, resolver.context(ns, opens, file)):
            if r in structs:
                return r
        return None

    flat_cache: dict[str, list | None] = {}

    def flat(s: str, depth: int = 0) -> list | None:
        if s in flat_cache:
            return flat_cache[s]
        d = structs[s]
        out: list = []
        for _, head, _ in d["parts"]["parents"]:
            p = struct_of(head, d["ns"], d["opens"], d["rel"]) if depth < 12 else None
            sub = flat(p, depth + 1) if p else None
            if sub is None:
                flat_cache[s] = None
                return None
            out.extend(x for x in sub if x[0] not in {y[0] for y in out})
        for f in d["parts"]["fields"]:
            if f["name"] not in {y[0] for y in out}:
                head = type_head(f["type"], atom_heads)
                nested = bool(head and struct_of(head, d["ns"], d["opens"], d["rel"]))
                out.append((f["name"], is_prop_field(f["name"], f["type"]), nested))
        flat_cache[s] = out
        return out

    rules: dict[str, str] = {}
    for s, r, ns, opens, rel in extras.get("simps_projections", ()):
        full = struct_of(s, ns, opens, rel)
        if full:
            rules[full] = r
    atoms: dict[str, str] = {}
    for atom, head, ns, opens, rel in extras.get("notations", ()):
        full = struct_of(head, ns, opens, rel)
        if full and atom not in atoms:
            atoms[atom] = full

    def projections(s: str) -> list[tuple[str, bool]] | None:
        fl = flat(s)
        if fl is None:
            return None
        rename, hidden, prefix, added = {}, set(), set(), []
        for rule in split_top(rules.get(s, "")):
            rm = re.match(r"(\S+)\s*→\s*(\S+)", rule)
            if rm:
                rename[rm.group(1).split("_")[-1]] = rm.group(2)
            elif rule.startswith("-"):
                hidden.add(rule[1:].strip())
            elif rule.startswith("+"):
                added.append(rule[1:].strip())
            elif rule.startswith("as_prefix"):
                prefix.update(rule.split()[1:])
        out = []
        for name, is_prop, nested in fl:
            new = rename.get(name, name)
            if is_prop or nested or name in hidden or new in hidden:
                continue
            out.append((new, new in prefix))
        out.extend((a, a in prefix) for a in added)
        return out

    result: dict[int, list[tuple[str, str]]] = {}
    for k, d in enumerate(decls):
        req = d["simps"]
        if req is None or not d.get("full") or d["derived"]:
            continue
        typ = d["simps"]["type"]
        s = type_head(typ, atoms)
        s = s if s in structs else struct_of(s, d["ns"], d["opens"], d["rel"]) if s else None
        proj = projections(s) if s else None
        if not req["names"] and (proj is None or not (req["bang"] or req["ctor_value"])):
            continue
        projs = req["names"] or [p for p, _ in proj]
        owners = [d["full"]] + ([add_of[d["full"]]] if req["additive"] and d["full"] in add_of else [])
        result[k] = [(n, p, o) for o in owners for n, p in zip(simps_names(o, proj or [], req), projs)]
    return result
