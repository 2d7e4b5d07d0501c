"""Names as people type them: an exact Lean declaration name, its last components, a misspelt word.

Ranking finds documents by what they say; a person who types ``Finset.sum_range_succ`` or
``sum_range_succ`` wants that declaration, and one who types "fundamental theorm of algrebra" wants
the fundamental theorem of algebra. ``NameIndex`` answers both before any ranking, from a bundle's
columns alone (``id``, ``name``, ``aliases``), built on first use and kept with the bundle:

* ``exact(query)``: the keys of the documents whose id is the query (``stacks:00FN``) or, in a formal
  bundle, whose declaration name is (``Finset.sum_range_succ``, ``lean:`` prefix optional, backticks
  allowed); the case as typed first, then any case (``nat.prime.two_le``, ``stacks:00fn``); the ids
  and Stacks tags inside a phrase ("Stacks tag 00FN") are read by ``mathlas.ranking.ids``;
* ``suffix(query)``: in a formal bundle, the declarations whose name ends with the query's whole
  dot-separated components (``sum_range_succ`` -> ``Finset.sum_range_succ``, ``Prime.two_le`` ->
  ``Nat.Prime.two_le``; never ``Finset.sum_range_succ_comm``), the case as typed first, then any case;
* ``joined(query)``: in a formal bundle, a name typed as words, as Lean users say one ("prime two le"):
  the declarations whose name ends with the words joined by ``_`` or ``.`` (``Nat.Prime.two_le``);
* ``correct(query)``: the query with each word that is not a name or alias word of the bundle, but is
  within two edits of one (one edit for a word of four letters), replaced by that word, and what was
  replaced. A word the bundle's texts use about as often as the correction (``count``) stays as typed:
  a real word that no name happens to contain is not a typo.

How: the ids sorted once (Arrow's sort, 8 bytes a document for the order), their lower-cased and
reversed forms likewise for a formal bundle, and binary search over them (a name is a prefix of its
sorted reversed suffixes' range). The misspelling index is SymSpell's (every word's deletions of up to
two letters, of its first ``PREFIX`` letters, hashed and sorted in numpy arrays, then the candidates
checked with the real edit distance), over the distinct name and alias words only, built the first
time a query has a word outside them. No I/O, no model: some tens of microseconds a lookup.
"""
from __future__ import annotations

import bisect
import itertools
import re
import threading
import weakref
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, TypeVar
from collections.abc import Callable, Iterable, Iterator

import numpy as np

from mathlas.ranking.ids import mentioned_ids
from mathlas.ranking.query import Kept
from mathlas.ranking.text import singular, strip_accents

Bundle = Any  # an open bundle (mathlas.engine.Bundle): the ranking reads the bundle it is given

LEAN_PREFIX = "lean:"
# A word is corrected only when it has at least this many letters; words of MIN_TWO_EDITS letters and
# more may be two edits away from their correction, shorter ones one edit (every misspelling of the
# collection's 20 is one edit away; at two, a name the bundle lacks meets another name: "moivre" is
# two edits from "motive", "quartic" from "quadratic").
MIN_WORD = 4
MIN_TWO_EDITS = 8
MAX_EDITS = 2
# SymSpell's prefix: deletions are made of a word's first PREFIX letters (a word and its misspelling
# within two edits keep prefixes within two edits), which bounds the index at 29 entries a word.
PREFIX = 7
# A typed word the bundle's texts use in at least 1/KEEP_RATIO as many documents as its correction
# is a word of its own, not a misspelling ("schwartz": 34 documents, against "schwarz": 47); so is
# one they use in REAL_WORD_DOCS documents or more ("holes": 44, not "holds"; the misspelling
# "continous" is in 17 of the default bundle's). A correction two edits away is made only for a
# word no document uses ("members" is not "numbers").
KEEP_RATIO = 10
REAL_WORD_DOCS = 20
# A name word that at most RARE names and documents use may itself be a misspelling (``lema``).
RARE = 2
# Only the first words of a long query are looked at (a pasted statement is not a name).
MAX_QUERY_WORDS = 64
STOPWORDS = frozenset("a an the of in on for and or to is are with by from as at its be that this every any "
                      "if then there than not no into over under".split())
_WORD = re.compile(r"[^\W\d_]+")
# what a word is not corrected inside: code and formulas, and identifiers (Nat.Prime, two_le, camelCase)
_MASK = re.compile(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]|\S*[._]\S*", re.DOTALL)
_MASKED = re.compile(r"[`$\\._]")
_NAME_TOKEN = re.compile(r"[^\s`]+")


def name_query(query: str) -> str | None:
    """The declaration name or id a query is, if it is one token (backticks and a ``lean:`` prefix
    allowed): ``"`Finset.sum_range_succ`"`` -> ``Finset.sum_range_succ``; None for a phrase."""
    q = query.strip().strip("`").strip()
    if not q or any(c.isspace() for c in q) or len(q) > 300:
        return None
    return q


@dataclass(frozen=True)
class Correction:
    """A query with its misspelt words replaced (``query``; the query unchanged when nothing was),
    and what was replaced (``corrected``: typed word -> the name word searched instead)."""

    query: str
    corrected: dict[str, str] = field(default_factory=dict)
    # a declaration name the bundle lacks, said plainly instead of as a slip (``absent_note``): "Nat.succ_le_iff
    # is not in this bundle (…): showing declarations that end the same way, succ_le_iff"
    note: str = ""

    def describe(self) -> str:
        """One line for the answer: ``searched for: fundamental theorem of algebra (theorm -> theorem,
        algrebra -> algebra)``, or the ``note`` on a name the bundle lacks; "" when nothing was corrected."""
        if self.note:
            return self.note
        if not self.corrected:
            return ""
        fixes = ", ".join(f"{a} -> {b}" for a, b in self.corrected.items())
        return f"searched for: {self.query} ({fixes})"


def edit_distance(a: str, b: str, limit: int = MAX_EDITS) -> int:
    """The optimal-string-alignment distance of ``a`` and ``b`` (insertions, deletions,
    substitutions and swaps of neighbours), or ``limit + 1`` as soon as it must exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    if a == b:
        return 0
    over = limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        left = i
        best = i
        pa = a[i - 2] if i > 1 else ""
        for j, cb in enumerate(b, 1):
            v = prev[j - 1] if ca == cb else prev[j - 1] + 1
            if prev[j] + 1 < v:
                v = prev[j] + 1
            if left + 1 < v:
                v = left + 1
            if j > 1 and i > 1 and ca == b[j - 2] and pa == cb and prev2[j - 2] + 1 < v:
                v = prev2[j - 2] + 1
            cur.append(v)
            left = v
            if v < best:
                best = v
        if best > limit:
            return over
        prev2, prev = prev, cur
    return prev[-1] if prev[-1] <= limit else over


def _patterns(width: int, edits: int) -> np.ndarray:
    """Gather indices over ``width`` letters and a zero column (index ``width``): one row per way of
    deleting up to ``edits`` (at most 2) positions, the kept letters first, zeros after."""
    rows = [list(range(width))]
    for i in range(width):
        rows.append([p for p in range(width) if p != i] + [width])
    if edits > 1:
        for i in range(width):
            for j in range(i + 1, width):
                rows.append([p for p in range(width) if p not in (i, j)] + [width, width])
    return np.asarray(rows, dtype=np.intp)


_POWERS = np.array([pow(0x100000001B3, k, 1 << 64) for k in range(PREFIX)], dtype=np.uint64)


def _deletion_hashes(prefixes: list[str], edits: int) -> np.ndarray:
    """A 64-bit hash of each deletion of up to ``edits`` letters of each of ``prefixes`` (at most
    ``PREFIX`` letters each): shape (len(prefixes), patterns), vectorised (a deletion of a padding
    position repeats another deletion, which only repeats a candidate)."""
    text = "".join(p[:PREFIX].ljust(PREFIX, "\0") for p in prefixes)
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).reshape(len(prefixes), PREFIX)
    codes = np.concatenate([codes, np.zeros((len(prefixes), 1), dtype=np.uint32)], axis=1).astype(np.uint64)
    patterns = _patterns(PREFIX, edits)
    out = np.empty((len(prefixes), len(patterns)), dtype=np.uint64)
    for j, kept in enumerate(patterns):  # one pattern at a time: 20x faster than one (n, 29, 7) gather
        out[:, j] = codes[:, kept] @ _POWERS  # integer matmul wraps modulo 2^64
    return out.view(np.int64)


# Word endings that make another form of a word, not a misspelling of it (midpoint-s, ramifi-es/-ed,
# bijective-ly, connective-s, conjunct-ive/-ion)
_ENDINGS = frozenset("s es d ed ing ly al ally e y ies ied ic ical ive ion ions ness ity ent ence ant ance ate ates "
                     "ation or ors er ers".split()) | {""}


def inflected(typed: str, word: str) -> bool:
    """Whether ``typed`` and ``word`` are forms of one word: past their common beginning, each ends
    in nothing or a common ending (``_ENDINGS``)."""
    n = 0
    while n < min(len(typed), len(word)) and typed[n] == word[n]:
        n += 1
    # back off a letter or two: conjuncti-ve / conjuncti-on share "conjunct" + ive / ion
    return any(typed[k:] in _ENDINGS and word[k:] in _ENDINGS for k in range(n, max(n - 3, 2), -1))


def allowed_edits(word: str) -> int:
    """How many edits a misspelling of ``word`` may be from its correction (0: not corrected)."""
    return 0 if len(word) < MIN_WORD else 1 if len(word) < MIN_TWO_EDITS else MAX_EDITS


class _Sorted:
    """Strings sorted once (code point order: Arrow sorts UTF-8 bytes, the same order) with the
    document key of each, searched by binary search."""

    def __init__(self, strings, keys: np.ndarray | None = None):
        import pyarrow as pa
        import pyarrow.compute as pc

        arr = strings.combine_chunks() if isinstance(strings, pa.ChunkedArray) else strings
        order = pc.sort_indices(arr).to_numpy().astype(np.int64)
        self.values = pc.take(arr, pa.array(order))  # contiguous: one string buffer, O(1) indexing
        self.keys = order if keys is None else keys[order]

    def _at(self, i: int) -> str:
        return self.values[i].as_py()

    def range(self, prefix: str, exact: bool = False) -> tuple[int, int]:
        """[lo, hi) of the strings equal to ``prefix`` (``exact``) or starting with it."""
        n = len(self.values)
        lo = bisect.bisect_left(range(n), prefix, key=self._at)
        if exact:
            hi = lo
            while hi < n and self._at(hi) == prefix:
                hi += 1
            return lo, hi
        # the first string past every string that starts with ``prefix``
        hi = bisect.bisect_left(range(lo, n), prefix + "\U0010ffff", key=self._at) + lo
        return lo, hi

    def keys_in(self, lo: int, hi: int) -> list[int]:
        return sorted(int(k) for k in self.keys[lo:hi])


def fold_identifier(name):
    """A declaration name (or an Arrow array of them) lower-cased without underscores: the form in
    which ``Nat.Prime.twoLe`` and ``Nat.Prime.two_le`` meet."""
    if isinstance(name, str):
        return name.lower().replace("_", "")
    import pyarrow.compute as pc

    return pc.replace_substring(pc.utf8_lower(name), "_", "")


def _parts_close(typed: str, cand: str, uses: Callable[[str], int] | None = None) -> bool:
    """Whether a declaration name's last component ``cand`` is a slip of ``typed`` word by word: when
    both have the same underscore-separated words, no word of three letters or fewer may take two
    edits or more (``mul_com`` is ``mul_comm``, one letter; ``add_comm`` is not ``avg_comm``, where the
    two edits allowed a word of eight letters all fall in ``add``), and a word that ``NAME_WORD_USES``
    or more components of the bundle's names are (``uses``: ``card``, ``le``, ``sub``) was typed on
    purpose, unless the slip is one that lands on such a word by chance (``_likely_slip``): an old
    name is no slip of another's (``card_le_of_subset`` is not ``cRk_le_of_subset``, ``nat_sub_le`` not
    ``nat_succ_le``, ``mul_le_mul_of_le_of_le`` not ``mul_lt_mul_of_lt_of_le``). Other splits: the
    whole word's allowance alone decides."""
    a, b = typed.split("_"), cand.split("_")
    if len(a) != len(b):
        return True
    return all(x == y or ((max(len(x), len(y)) > 3 or edit_distance(x, y, 1) <= 1)
                          and (uses is None or uses(x) < NAME_WORD_USES or _likely_slip(x, y)))
               for x, y in zip(a, b))


# A word that this many components of a bundle's declaration names are (between dots and underscores,
# any case) is a name word typed on purpose, not a slip (``_parts_close``): scripts/bench_renamed_names.py
NAME_WORD_USES = 20
_MARKS = "₀₁₂₃₄₅₆₇₈₉'"


def _likely_slip(typed: str, word: str) -> bool:
    """Whether ``typed`` is ``word`` with a letter left out, two neighbours swapped, cut short, or
    without the subscripts and primes Mathlib adds (``iff₀``): the slips that land on another name
    word most (``if`` for ``iff``, ``suc`` for ``succ``), kept when the word typed is a name word."""
    if word.startswith(typed) or typed.rstrip(_MARKS) == word.rstrip(_MARKS):
        return True
    if len(word) == len(typed) + 1 and any(word[:i] + word[i + 1:] == typed for i in range(len(word))):
        return True
    return len(typed) == len(word) and any(typed == word[:i] + word[i + 1] + word[i] + word[i + 2:]
                                           for i in range(len(word) - 1))


def slip_kind(cand: str, typed: str) -> int:
    """How likely a slip ``typed`` is for ``cand``: 0, a letter left out or two swapped (``theorm`` for
    ``theorem``); 1, one mistyped; 2, one too many (``lema`` is ``lemma`` before ``lem``)."""
    if len(cand) > len(typed) or (len(cand) == len(typed) and sorted(cand) == sorted(typed)):
        return 0
    return 1 if len(cand) == len(typed) else 2


class _Deletions:
    """Words with SymSpell's deletion index (every deletion of up to ``MAX_EDITS`` letters of each
    word's first ``PREFIX`` letters, hashed and sorted): the name words' (``NameIndex.nearest``) and
    the declaration names' last components' (``NameIndex.identifier``)."""

    def __init__(self, words: list[str]):
        self.words = sorted(w for w in words if w)
        # words that share their first PREFIX letters share their deletions: made once
        prefixes: dict[str, list[int]] = {}
        for i, w in enumerate(self.words):
            prefixes.setdefault(w[:PREFIX], []).append(i)
        hashes = _deletion_hashes(list(prefixes), MAX_EDITS)  # (groups, patterns)
        group_of = np.repeat(np.arange(len(prefixes), dtype=np.int32), hashes.shape[1])
        h = hashes.ravel()
        order = np.argsort(h)
        self.hashes, self.group_of, self.groups = h[order], group_of[order], list(prefixes.values())

    def within(self, word: str, edits: int) -> dict[str, int]:
        """The words other than ``word`` within ``edits`` of it, with their distances; never one whose
        first letter differs (a slip rarely hits the first letter: "poset" is no "coset")."""
        probes = np.unique(_deletion_hashes([word[:PREFIX]], edits).ravel())
        lo = np.searchsorted(self.hashes, probes, side="left")
        hi = np.searchsorted(self.hashes, probes, side="right")
        seen: set[int] = set()
        found: dict[str, int] = {}
        for a, b in zip(lo.tolist(), hi.tolist()):
            for g in self.group_of[a:b].tolist():
                if g in seen:
                    continue
                seen.add(g)
                for i in self.groups[g]:
                    cand = self.words[i]
                    if cand[0] != word[0]:
                        continue
                    d = edit_distance(word, cand, edits)
                    if 0 < d <= edits:
                        found[cand] = d
        return found


class NameIndex:
    """Exact-name, name-suffix and misspelling lookups over one bundle's documents (see the module
    docstring). Build one with ``NameIndex.of(bundle)`` (kept with the bundle) or from columns."""

    def __init__(self, ids, names=None, aliases=None, *, formal: bool | None = None):
        import pyarrow as pa
        import pyarrow.compute as pc

        self._ids = ids if isinstance(ids, (pa.Array, pa.ChunkedArray)) else pa.array(list(ids), type=pa.string())
        self._names = names
        self._aliases = aliases
        n = len(self._ids)
        if formal is None:  # a formal bundle: every id is a Lean declaration's
            formal = n > 0 and bool(pc.all(pc.starts_with(self._ids, LEAN_PREFIX)).as_py())
        self.formal = formal
        self._lock = threading.Lock()
        self._exact: _Sorted | None = None
        self._lower: _Sorted | None = None
        self._reversed: _Sorted | None = None
        self._reversed_lower: _Sorted | None = None
        self._reversed_folded: _Sorted | None = None
        self._vocab: dict[str, int] | None = None
        self._deletions: _Deletions | None = None  # the name words' misspelling index
        self._lasts: _Deletions | None = None  # formal: the declaration names' last components'
        self._uses: dict[str, int] | None = None  # formal: how many name components each word is

    @classmethod
    def of(cls, bundle: Bundle) -> NameIndex:
        """The name index of an open bundle, made on first use and kept while the bundle lives."""
        with _CACHE_LOCK:
            index = _CACHE.get(bundle)
            if index is None:
                cols = bundle.table.column_names
                index = _CACHE[bundle] = cls(bundle.table.column("id"),
                                             bundle.table.column("name") if "name" in cols else None,
                                             bundle.table.column("aliases") if "aliases" in cols else None,
                                             formal="module" in cols or None)
            return index

    def __len__(self) -> int:
        return len(self._ids)

    # -- the sorted forms, each made on first use ------------------------------------------
    def _made(self, attr: str, make: Callable[[], object]):
        if getattr(self, attr) is None:
            with self._lock:
                if getattr(self, attr) is None:
                    setattr(self, attr, make())
        return getattr(self, attr)

    def _sorted(self, which: str) -> _Sorted:
        import pyarrow.compute as pc

        makers = {
            "_exact": lambda: _Sorted(self._ids),
            "_lower": lambda: _Sorted(pc.utf8_lower(self._ids)),
            "_reversed": lambda: _Sorted(pc.utf8_reverse(self._ids)),
            "_reversed_lower": lambda: _Sorted(pc.utf8_reverse(pc.utf8_lower(self._ids))),
            "_reversed_folded": lambda: _Sorted(pc.utf8_reverse(fold_identifier(self._ids))),
        }
        return self._made(which, makers[which])

    def build(self) -> NameIndex:
        """Make every part now (the lookups make what they need on first use)."""
        for which in ("_exact", *(("_lower", "_reversed", "_reversed_lower") if self.formal else ())):
            self._sorted(which)
        self._fuzzy()
        return self

    # -- lookups ------------------------------------------------------------------------------
    def _candidates(self, q: str) -> list[str]:
        """The ids a name query may be: itself, and in a formal bundle ``lean:`` + it."""
        if self.formal:
            name = q[len(LEAN_PREFIX):] if q.startswith(LEAN_PREFIX) else q
            return [LEAN_PREFIX + name] if name else []
        return [q]

    def exact(self, query: str) -> list[int]:
        """Keys of the documents whose id (formal bundles: declaration name) is ``query``, as typed,
        else in any case: in a formal bundle every declaration so named (``NAT.PRIME``), in another
        the one document whose id it is (``stacks:00dv``, ``planetmath:nakayamaslemma``; none where
        two ids differ only in case, ``planetmath:OmegaLimitSet`` and ``planetmath:omegalimitSet``);
        [] when none or when the query is a phrase."""
        q = name_query(query)
        if q is None:
            return []
        cands = self._candidates(q)
        idx = self._sorted("_exact")
        keys = [k for c in cands for k in idx.keys_in(*idx.range(c, exact=True))]
        if keys or (not self.formal and ":" not in q):  # an informal id is source:local
            return keys
        low = self._sorted("_lower")
        keys = [k for c in cands for k in low.keys_in(*low.range(c.lower(), exact=True))]
        return keys if self.formal or len(keys) == 1 else []

    def suffix(self, query: str, limit: int | None = None) -> list[int]:
        """Keys of the declarations (formal bundles) whose name ends with ``query``'s whole components
        (``two_le``: ``Nat.Prime.two_le``, ``Nat.two_le``... and ``two_le`` itself), as typed, else in
        any case; at most ``limit`` of them (key order). [] for an informal bundle or a phrase."""
        q = name_query(query)
        if q is None or not self.formal:
            return []
        q = q[len(LEAN_PREFIX):] if q.startswith(LEAN_PREFIX) else q
        q = q.lstrip(".")
        if not q:
            return []
        for which, typed in (("_reversed", q), ("_reversed_lower", q.lower())):
            idx = self._sorted(which)
            rq = typed[::-1]
            keys: list[int] = []
            for tail in (".", ":"):  # ends with ".q", or is q ("lean:" + q reversed ends with ":")
                keys += idx.keys_in(*idx.range(rq + tail))
            if keys:
                keys.sort()
                return keys[:limit] if limit is not None else keys
        return []

    def concept(self, query: str) -> list[int]:
        """Keys of the declarations (formal bundles) that a plain phrase names the way Lean names a
        concept: those whose last component, in any case, is the phrase's words run together and
        begins with a capital (Lean's UpperCamelCase for types, structures, classes and propositions;
        theorems are snake_case): "bicategory" -> ``CategoryTheory.Bicategory``, "topological space"
        -> ``TopologicalSpace``, "sheaf of modules" -> ``SheafOfModules``. Key order; [] for an
        informal bundle or anything but one to ``CONCEPT_WORDS`` words of letters."""
        if not self.formal or not _CONCEPT.fullmatch(query.strip()):
            return []
        words = _CONCEPT_JOIN.split(query.strip().lower())
        idx = self._sorted("_reversed_lower")
        # as typed, else with some of its plural words made singular ("sheaves of modules": SheafOfModules);
        # failing those, as the predicate Mathlib names with "Is" ("dedekind domain": IsDedekindDomain)
        forms = list(dict.fromkeys("".join(f) for f in itertools.product(*((w, singular(w)) for w in words))))
        # not for a namespace of declarations: "nat", "list", "option" are Lean core's Nat, List, Option
        # (Nat.succ_le_iff...), not Mathlib's IsNat, Lists.IsList, SetTheory.PGame.IsOption
        low = self._sorted("_lower")

        def namespace(form: str) -> bool:
            lo, hi = low.range(LEAN_PREFIX + form + ".")
            return hi > lo

        predicates = ["is" + form for form in forms if not namespace(form)]
        for name in forms + predicates:
            keys = sorted(k for tail in (".", ":") for k in idx.keys_in(*idx.range(name[::-1] + tail)))
            keys = [k for k in keys
                    if self._ids[k].as_py().rsplit(".", 1)[-1].removeprefix(LEAN_PREFIX)[:1].isupper()]
            if keys:
                return keys
        return []

    def joined(self, query: str) -> tuple[list[int], list[str]]:
        """A declaration name typed as words, as Lean users say one (formal bundles): the keys of the
        declarations whose name ends with the query's words joined by ``_`` or ``.`` at each joint
        (``suffix`` of each joining: "mul pos" -> ``mul_pos``, "prime two le" -> ``Nat.Prime.two_le``
        by ``prime.two_le``, "card le card" -> ``Finset.card_le_card``), in key order, and the joinings
        that found them (``_`` joints first); at most ``JOINED_DOTS`` joints are dots. The keys hold
        the declarations that end with a joining and one of ``JOINED_VARIANTS`` (``pow_le_pow_left₀``
        for "pow le pow left"), the joinings only the words joined. A dot typed inside a word is a
        joint as typed ("nat.prime two le": ``nat.prime.two_le``). ([], []) for anything but
        ``JOINED_WORDS`` words of letters (digits and primes after the first letter)."""
        typed = [t.split(".") for t in query.split()]
        # a dot typed inside a word is a joint as typed ("nat.prime two le": nat.prime.two_le)
        words = [w for parts in typed for w in parts]
        dots: set[int] = set()   # the joints typed as dots (joint i: between words i - 1 and i)
        at = 0
        for parts in typed:
            dots.update(range(at + 1, at + len(parts)))
            at += len(parts)
        if not self.formal or len(typed) < JOINED_WORDS[0] or len(words) > JOINED_WORDS[1] \
                or not all(_JOINED_WORD.fullmatch(w) for w in words):
            return [], []
        # the words from which a last component may begin: those that, joined by ``_``, end some name's
        # (a dozen lookups rule out most joinings of a phrase); not before a dot typed
        first = max(dots, default=0)
        lasts = {i for i in range(first, len(words)) if self.suffix("_".join(words[i:]), limit=1)}
        found: dict[int, None] = {}
        joinings: list[str] = []
        for joints in itertools.product("_.", repeat=len(words) - 1):
            last = max((i + 1 for i, j in enumerate(joints) if j == "."), default=0)
            if any(joints[i - 1] != "." for i in dots) or joints.count(".") - len(dots) > JOINED_DOTS \
                    or last not in lasts:
                continue
            name = words[0] + "".join(j + w for j, w in zip(joints, words[1:]))
            keys = self.suffix(name)
            if keys:
                joinings.append(name)
                found.update(dict.fromkeys(keys))
        # a joining's ``₀`` and ``'`` variants end a name too (pow_le_pow_left: pow_le_pow_left₀, the
        # general lemma, beside ENNReal.pow_le_pow_left); they are endings, never a whole name typed
        for name in list(joinings):
            for variant in (name + tail for tail in JOINED_VARIANTS):
                found.update(dict.fromkeys(self.suffix(variant)))
        return sorted(found), joinings

    def name_of(self, key: int) -> str:
        """The declaration name (formal bundles) or id of the document ``key``."""
        return self._ids[key].as_py().removeprefix(LEAN_PREFIX) if self.formal else self._ids[key].as_py()

    def suffix_count(self, query: str) -> int:
        """How many declarations ``suffix(query)`` finds."""
        return len(self.suffix(query))

    # -- misspelt identifiers (formal bundles) ----------------------------------------------------
    def identifier(self, query: str, popularity: Callable[[list[int]], list[float]] | None = None) -> str | None:
        """The name ``query`` is searched as when it is a declaration name the bundle lacks
        (``identifier_why``'s name), else None."""
        found = self.identifier_why(query, popularity)
        return found[0] if found is not None else None

    def identifier_why(self, query: str,
                       popularity: Callable[[list[int]], list[float]] | None = None) -> tuple[str, str] | None:
        """A declaration name the bundle lacks, as the name to search instead and why (formal bundles;
        None when ``query`` is no identifier, names a declaration as typed, ends one's name, is a
        namespace of the bundle's declarations (``Function.Injective``: ``namespace_size``), or
        nothing is close):

        * ``spelling``, typed in another case or without its underscores (``Nat.Prime.twoLe``,
          ``nat.prime.two_le`` is ``exact``'s already): the name whose components, lower-cased without
          underscores, end the same way (``Nat.Prime.two_le``);
        * ``prime``, a primed name: its unprimed form, when that names or ends declarations
          (``add_comm'``: ``add_comm``), before any edit;
        * ``spelling``, its last component, which no declaration's is, within ``allowed_edits`` of
          a declaration's (``mul_com``: ``mul_comm``; a name word of the bundle is not edited into
          another, ``_parts_close``: ``card_le_of_subset`` is no slip of ``cRk_le_of_subset``), its other components as typed: the nearest,
          then the likeliest slip, then the most used (``popularity``: one figure per key, the
          PageRank; else how many declarations end so). A last component some declaration has is a
          name, not a slip (``Function.Injective`` is not ``Function.Injective2``);
        * ``namespace``, a namespace no declaration of that name has (Lean core's ``Nat.add_comm`` in
          a Mathlib bundle): its last component alone, when declarations end with it (``add_comm``).
          Not a slip: the name is not in the bundle, and the answer says so (``absent_note``).
        """
        q = name_query(query)
        if q is None or not self.formal or not _IDENTIFIER.search(q):
            return None
        q = q[len(LEAN_PREFIX):] if q.startswith(LEAN_PREFIX) else q
        if not _LEAN_NAME.fullmatch(q):
            return None  # "π-system" is a word, not a name with a slip
        if self.exact(q) or self.suffix(q) or self.namespace_size(q):
            return None
        parts = q.split(".")
        idx = self._sorted("_reversed_folded")
        rq = fold_identifier(q)[::-1]
        keys = [k for tail in (".", ":") for k in idx.keys_in(*idx.range(rq + tail))]
        if keys:
            return self._named(self._most_used(keys, popularity)[0], len(parts)), "spelling"
        for n in range(1, len(q) - len(q.rstrip("'")) + 1):  # add_comm'' : add_comm', then add_comm
            if self.exact(q[:-n]) or self.suffix(q[:-n]):
                return q[:-n], "prime"
        last = parts[-1].lower()
        edits = allowed_edits(last)
        known = len(parts) > 1 and bool(self.suffix(parts[-1]))  # a name of its own, not a slip
        components = self._component_uses() if edits and not known else {}
        uses = lambda w: components.get(w, 0)  # noqa: E731
        best: tuple | None = None
        for cand, distance in sorted(self._last_components().within(last, edits).items()) if edits and not known else ():
            if not _parts_close(last, cand, uses):
                continue  # add_comm is no slip of avg_comm (two letters of a three-letter word), nor
                # card_le_of_subset of cRk_le_of_subset (card is a name word)
            keys = self.suffix(".".join(parts[:-1] + [cand]))
            if not keys:
                continue
            key, used = self._most_used(keys, popularity)
            rank = (distance, slip_kind(cand, last), -used)
            if best is None or rank < best[0]:
                best = (rank, key)
        if best is not None:
            return self._named(best[1], len(parts)), "spelling"
        if len(parts) > 1 and self.suffix(parts[-1]):
            # a namespace the bundle does not hold, a name it does: Lean core's Nat.add_comm (not in
            # Mathlib's bundle) is searched as add_comm, and the answer says so
            return parts[-1], "namespace"
        return None

    def namespace_size(self, name: str) -> int:
        """How many declarations (formal bundles) are named ``name.…``, as typed: ``Nat`` in a Mathlib
        bundle, where Lean core's ``Nat`` itself is not; 0 for an informal bundle."""
        q = name_query(name)
        if q is None or not self.formal:
            return 0
        q = q[len(LEAN_PREFIX):] if q.startswith(LEAN_PREFIX) else q
        lo, hi = self._sorted("_exact").range(LEAN_PREFIX + q + ".")
        return hi - lo

    @staticmethod
    def _most_used(keys: list[int], popularity) -> tuple[int, float]:
        """The most used of ``keys`` and how much: its ``popularity``, else the first key and how many
        ``keys`` there are (how many declarations end so)."""
        if popularity is None:
            return keys[0], float(len(keys))
        score = dict(zip(keys, popularity(keys)))
        key = max(keys, key=lambda k: (score[k], -k))
        return key, score[key]

    def _named(self, key: int, components: int) -> str:
        """The last ``components`` components of the declaration name of ``key``."""
        name = self._ids[key].as_py()[len(LEAN_PREFIX):]
        return ".".join(name.split(".")[-components:])

    def _component_uses(self) -> dict[str, int]:
        """How many components of the declaration names (between dots and underscores) each word is,
        lower-cased (``le``: 40,000 and more on Mathlib; made on the first misspelt name, 0.3 s)."""
        def make() -> dict[str, int]:
            import pyarrow as pa
            import pyarrow.compute as pc

            names = pc.utf8_slice_codeunits(self._ids, len(LEAN_PREFIX))
            words = pc.list_flatten(pc.split_pattern_regex(pc.utf8_lower(names), r"[._]"))
            words = words.combine_chunks() if isinstance(words, pa.ChunkedArray) else words
            counted = pc.value_counts(words)
            return {w: n for w, n in zip(counted.field(0).to_pylist(), counted.field(1).to_pylist()) if w}
        return self._made("_uses", make)

    def _last_components(self) -> _Deletions:
        def make() -> _Deletions:
            import pyarrow.compute as pc

            lasts = pc.replace_substring_regex(pc.utf8_lower(self._ids), r"^.*[.:]", "")
            return _Deletions(pc.unique(lasts).to_pylist())
        return self._made("_lasts", make)

    # -- misspellings --------------------------------------------------------------------------
    def _name_words(self) -> dict[str, int]:
        """Each lower-cased word of the names and aliases (formal: of the declaration names, split on
        dots, underscores and camelCase, and of the aliases), with how often they use it (Arrow's
        kernels: 0.1 s for the default bundle's 65k names, 0.8 s for Mathlib's 277k declarations)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        vocab: dict[str, int] = {}

        def add(col, weights=None) -> None:
            """The words of a string column, each weighted by its row's weight (default 1)."""
            col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
            split = pc.split_pattern_regex(pc.utf8_lower(col), r"[^\p{L}]+")
            words = pc.list_flatten(split)
            weight = np.ones(len(words), dtype=np.int64) if weights is None else \
                np.repeat(weights, pc.fill_null(pc.list_value_length(split), 0).to_numpy())
            keep = pc.greater_equal(pc.utf8_length(words), 3)
            grouped = pa.table({"w": words.filter(keep), "n": weight[keep.to_numpy(zero_copy_only=False)]}) \
                .group_by("w").aggregate([("n", "sum")])
            for w, n in zip(grouped.column("w").to_pylist(), grouped.column("n_sum").to_pylist()):
                vocab[w] = vocab.get(w, 0) + n

        if self.formal:
            # a name's components first (Nat, Prime, two, le: literal splits), their camelCase words on
            # the distinct components only (a regex over every name costs twice as much)
            names = pc.utf8_slice_codeunits(self._ids, len(LEAN_PREFIX))
            parts = pc.list_flatten(pc.split_pattern(pc.list_flatten(pc.split_pattern(names, ".")), "_"))
            counted = pc.value_counts(parts.combine_chunks() if isinstance(parts, pa.ChunkedArray) else parts)
            words = pc.replace_substring_regex(counted.field(0), r"(\p{Ll}|\p{Nd})(\p{Lu})", r"\1 \2")  # camelCase
            words = pc.replace_substring_regex(words, r"(\p{Lu})(\p{Lu}\p{Ll})", r"\1 \2")  # HTTPServer
            add(words, counted.field(1).to_numpy())
        elif self._names is not None:
            add(self._names)
        if self._aliases is not None:
            add(self._aliases)
        return vocab

    def _fuzzy(self) -> dict[str, int]:
        """The name words with their counts; the deletion index is made with it, on first use."""
        if self._vocab is None:
            with self._lock:
                if self._vocab is None:
                    vocab = self._name_words()
                    self._deletions = _Deletions(list(vocab))
                    self._vocab = vocab
        return self._vocab

    def knows(self, word: str) -> bool:
        """Whether ``word`` (any case) is a word of some name or alias."""
        return word.lower() in self._fuzzy()

    def nearest(self, word: str, exclude_self: bool = False,
                count: Callable[[str], int] | None = None) -> tuple[str, int] | None:
        """The name or alias word nearest to ``word`` within its allowed edits and its distance;
        None when there is none. Among the nearest, the likeliest slip (a letter left out or two
        swapped, then one mistyped, then one too many: ``theorm`` is ``theorem``, not ``theory``;
        ``lema`` is ``lemma``, not ``lem``), then the word the bundle's documents use most
        (``count``, when given), then the one most names use, then alphabetical.
        ``exclude_self``: another word than ``word`` itself."""
        w = word.lower()
        edits = allowed_edits(w)
        if not edits:
            return None
        vocab = self._fuzzy()
        if w in vocab and not exclude_self:
            return w, 0
        assert self._deletions is not None
        found = self._deletions.within(w, edits)
        if not found:
            return None
        fewest = min(found.values())
        # the likeliest slip first: a letter left out or two swapped, then one mistyped, then one too many
        slip = {c: slip_kind(c, w) for c, d in found.items() if d == fewest}
        likeliest = min(slip.values())
        closest = [c for c, k in slip.items() if k == likeliest]
        if count is not None and len(closest) > 1:
            docs = {c: count(c) for c in sorted(closest, key=lambda c: -vocab[c])[:8]}
            closest = sorted(docs, key=lambda c: (-docs[c], -vocab[c], c))
        else:
            closest.sort(key=lambda c: (-vocab[c], c))
        return closest[0], fewest

    def correct(self, query: str, count: Callable[[str], int] | None = None,
                known: Callable[[str], bool] | None = None, named: Callable[[str], int] | None = None) -> Correction:
        """``query`` with each misspelt word replaced by the nearest name or alias word (see the
        module docstring). ``count(word)``, when given, is how many of the bundle's documents use a
        word (``KEEP_RATIO``, ``REAL_WORD_DOCS``: a word of its own is kept); ``known(word)``, when
        given, says a word is a word of the language anyway (the encoder's vocabulary: "feet",
        "actor", "banana" are not misspellings of "meet", "factor", "banach"); ``named(word)``,
        when given, is how many documents' names or aliases use a word (the BM25 index: a query's
        words are checked without making the misspelling index, which only a likely misspelling
        needs), else the index's own name words say it."""
        if named is None:
            named = lambda w: self._fuzzy().get(w, 0)  # noqa: E731
        # every part _MASK blanks has one of these characters (most queries have none)
        scan = _MASK.sub(lambda m: " " * len(m.group()), query) if _MASKED.search(query) else query
        fixes: dict[str, str] = {}
        spans: list[tuple[int, int, str]] = []
        for n, m in enumerate(_WORD.finditer(scan)):
            if n >= MAX_QUERY_WORDS:
                break
            typed = m.group()
            low = typed.lower()
            rest = typed[1:]
            if low in STOPWORDS or not allowed_edits(low) or (rest != rest.lower() if rest.isascii()
                                                              else any(c.isupper() for c in rest)):
                continue  # also an abbreviation (FTA) or a camelCase identifier (sumTo): not a word
            if low in fixes:
                spans.append((m.start(), m.end(), fixes[low]))
                continue
            if known is not None and known(low):
                # a word of the language is not a misspelling (asked first: a set lookup, where the
                # checks below are BM25 searches, and any of them keeps the word)
                continue
            in_names = named(low)
            if in_names > RARE or (in_names and not (count is not None and count(low) <= RARE)):
                continue  # a name word (one that at most RARE names and documents use may be a slip: "lema")
            folded = fold(low)
            if folded != low and named(folded):
                continue  # Gödel is Godel
            found = self.nearest(folded, exclude_self=True, count=count)
            if found is None:
                continue
            better, edits = found
            if inflected(low, better):
                continue  # "midpoints", "ramifies": another form of the word, which the index stems alike
            if count is not None:
                have, theirs = count(low), count(better)
                # the same count: the index's stemmer makes them one word (borell, borel), a misspelling
                # it happens to mend for BM25 but not for the encoder
                if have and have != theirs and (have >= REAL_WORD_DOCS or edits > 1 or have * KEEP_RATIO >= theirs):
                    continue
            fixes[low] = better
            spans.append((m.start(), m.end(), better))
        if not spans:
            return Correction(query)
        out, last = [], 0
        for a, b, word in spans:
            typed = query[a:b]
            out.append(query[last:a])
            out.append(as_typed(typed, word))
            last = b
        out.append(query[last:])
        return Correction("".join(out), fixes)


_CACHE: weakref.WeakKeyDictionary[Any, NameIndex] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()

_T = TypeVar("_T")


def _per_bundle(cache: weakref.WeakKeyDictionary[Any, _T], bundle: Bundle, make: Callable[[], _T]) -> _T:
    """What ``cache`` keeps for ``bundle``, made by ``make`` (outside the lock) on first use and kept
    while the bundle lives; two threads that make it at once keep the first."""
    with _CACHE_LOCK:
        if bundle in cache:
            return cache[bundle]
    got = make()
    with _CACHE_LOCK:
        return cache.setdefault(bundle, got)


# Word counts kept per bundle and counter (a word and an int each): the words of a query are mostly
# words earlier queries had, and each count is a BM25 index search (some 10 microseconds)
WORD_COUNTS_KEPT = 4096


_COUNTERS: weakref.WeakKeyDictionary[Any, dict[str, Kept]] = weakref.WeakKeyDictionary()


def _kept_counter(bundle: Bundle, which: str, make: Callable[[], Callable[[str], Any]]) -> Kept:
    with _CACHE_LOCK:
        got = _COUNTERS.setdefault(bundle, {}).get(which)
    if got is None:
        made = Kept(make(), WORD_COUNTS_KEPT)
        with _CACHE_LOCK:
            got = _COUNTERS[bundle].setdefault(which, made)
    return got


def forget_word_counts(bundle: Bundle) -> None:
    """Drop the kept word counts of ``bundle`` (``scripts/bench_search.py``: a new query's words are
    counted again)."""
    with _CACHE_LOCK:
        kept = list(_COUNTERS.get(bundle, {}).values())
    for k in kept:
        k.forget()
    lexical = getattr(bundle, "_lexical", None)   # opened: its spelling counts too (never opened for this)
    if lexical is not None:
        lexical.forget_counts()


def text_counter(bundle: Bundle) -> Callable[[str], int]:
    """``count(word)``: how many of ``bundle``'s documents use ``word`` in their retrieval text (its
    BM25 index, stemmed as it indexes), for ``NameIndex.correct``; the last counts kept per bundle."""

    def make() -> Callable[[str], int]:
        lexical = bundle.lexical

        def count(word: str) -> int:
            return lexical.documents_using(word) if _WORD.fullmatch(word) else 0

        return count

    return _kept_counter(bundle, "text", make)


# ------------------------------------------------------------------------------ the ranking stage

# The places at the head of an answer that name matches may take (the rest of the answer follows).
TOP_SLOTS = 10
# A plain phrase of one to CONCEPT_WORDS words that names declarations as Lean names a concept
# (``NameIndex.concept``) puts at most CONCEPT_SLOTS of them first, the most used first.
CONCEPT_WORDS = 4
CONCEPT_SLOTS = 3
_CONCEPT = re.compile(r"[^\W\d_]+(?:[ -][^\W\d_]+){0,%d}" % (CONCEPT_WORDS - 1))
_CONCEPT_JOIN = re.compile(r"[ -]")
# A phrase of JOINED_WORDS words may be a declaration name typed as words ("mul pos", "prime two le":
# ``NameIndex.joined``). However many declarations end so, the most used are placed, as for a name
# typed as one: no English phrase measured ends more than 18 (docs/formal.md, "A name typed as words")
JOINED_WORDS = (2, 8)
JOINED_DOTS = 2   # joints read as a dot, at most (a namespace and its last component: ``Nat.Prime.two_le``)
# The words name the one declaration that ends so (``match: strong``) only when they are at least
# JOINED_NAMES_ONE: two plain words join into a name by chance ("fixed point" ends
# ``Nat.Partrec.Code.fixed_point``, "uniform continuity" ``ContinuousMap.uniform_continuity``)
JOINED_NAMES_ONE = 3
# what Mathlib appends to a name for a variant of its lemma (``pow_le_pow_left₀``, ``mul_le_mul'``):
# a joining's variants are among its endings, and where one exists the words name no one declaration
JOINED_VARIANTS = ("₀", "'")
_JOINED_WORD = re.compile(r"[^\W\d_][^\W_]*'*")
# Two words that the bundle's own prose uses as a phrase, in PROSE_PHRASE_DOCS docstrings or more
# (``prose_uses``: "fixed point" 84, "upper bound" 125, "uniform continuity" 8; "mul pos", "two le",
# "card le" none), are English, not a name typed as words, unless they join into a declaration's
# whole name (``Polynomial.ring``, ``banach_steinhaus``). Longer phrases are read as they are: three
# words joined into a name are seldom chance (docs/formal.md, "A name typed as words")
PROSE_PHRASE_DOCS = 3
_IDENTIFIER = re.compile(r"[._\d]|[^\x00-\x7f]|.[A-Z]")
# what a Lean declaration name may be made of (letters, digits, _ ' ! ? and subscripts, dot-separated)
_LEAN_NAME = re.compile(r"[^\W\d][\w'!?₀-₉]*(?:\.[^\W\d][\w'!?₀-₉]*)*")


def name_counter(bundle: Bundle) -> Callable[[str], int]:
    """``named(word)``: how many of ``bundle``'s documents use ``word`` in their name or aliases (the
    BM25 index's ``name`` and ``alias`` fields, stemmed as it indexes): a few microseconds a word;
    the last counts kept per bundle."""

    def make() -> Callable[[str], int]:
        lexical = bundle.lexical
        fields = [f for f in ("name", "alias") if f in _schema_fields(lexical)]

        def named(word: str) -> int:
            if not fields or not _WORD.fullmatch(word):
                return 0
            try:
                return int(lexical.searcher.search(lexical.index.parse_query(word, fields), 1).count)
            except ValueError:
                return 0

        return named

    return _kept_counter(bundle, "name", make)


def _schema_fields(lexical) -> set[str]:
    """Which of the name fields the lexical channel's tantivy index has (a bundle built before the
    ``alias`` field has none of it: tantivy refuses a query of a field it does not define)."""
    out = set()
    for f in ("name", "alias"):
        try:
            lexical.index.parse_query("x", [f])
            out.add(f)
        except ValueError:
            pass
    return out


def correction_for(bundle: Bundle, query: str) -> Correction:
    """``query`` with its misspelt name words corrected over ``bundle`` (``NameIndex.correct``, the
    bundle's texts and its encoder's vocabulary deciding what is a word of its own); a query that is
    an exact name or id as typed is left alone."""
    index = NameIndex.of(bundle)
    if name_query(query) is not None and index.exact(query):
        return Correction(query)
    if index.formal:  # a declaration name with a slip: mul_com is mul_comm, Nat.Prime.twoLe Nat.Prime.two_le
        found = index.identifier_why(query, pagerank_of(bundle))
        if found is not None:  # the query is a name, then (name_query)
            fixed, why = found
            if why == "spelling":
                return Correction(fixed, {name_query(query): fixed})
            return Correction(fixed, note=absent_note(bundle, query, fixed, why))
        if name_query(query) is not None and _LEAN_NAME.fullmatch(query.strip().strip("`").strip()) \
                and index.namespace_size(query):  # Nat, Function.Injective: a namespace, not a declaration
            return Correction(query.strip(), note=absent_note(bundle, query, "", "namespace"))
    if _names_a_result(bundle, query):
        return Correction(query)  # "Wald's equation" is a name the bundle holds, not a slip for "Walk's"
    owned = _possessive_name(bundle, query)
    if owned is not None:
        return owned  # "fatous lemma": Fatou's lemma
    vocab = vocabulary_of(bundle)
    known = (lambda w: in_language(vocab, w)) if vocab else (lambda _: False)  # noqa: E731
    count = text_counter(bundle)
    got = index.correct(query, count, known, name_counter(bundle))
    if got.corrected:
        return got
    return name_phrase(bundle, query, index) or name_in_context(bundle, query, index, count, known) or got


def absent_note(bundle: Bundle, query: str, searched: str, why: str) -> str:
    """The line that says a declaration name ``query`` is not in ``bundle`` and what is shown instead
    (``searched``, for ``why`` of ``NameIndex.identifier_why``; "" when it is searched as typed, a
    namespace of the bundle's declarations): "Nat.succ_le_iff is not in this bundle (Mathlib, Batteries,
    …; Lean core's Init and Std are not indexed): showing declarations that end the same way,
    succ_le_iff". Every surface shows it (the answer's ``expanded``)."""
    name = (name_query(query) or query.strip()).removeprefix(LEAN_PREFIX)
    if why == "prime":
        shown = f"showing {searched}"
    elif searched:
        shown = f"showing declarations that end the same way, {searched}"
    else:
        shown = f"{NameIndex.of(bundle).namespace_size(name):,} declarations are in its namespace ({name}.…)"
    return f"{absent_reason(bundle, name)}: {shown}"


def absent_reason(bundle: Bundle, name: str) -> str:
    """"Nat.add_comm is not in this bundle (Mathlib, Batteries, …; Lean core's Init and Std are not
    indexed)": a declaration name ``bundle`` lacks, and what it holds (``bundle_holds``)."""
    return f"{name.removeprefix(LEAN_PREFIX)} is not in this bundle ({bundle_holds(bundle)})"


_HOLDS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
# the top modules of Lean's own library: a project's bundle indexes its folders and .lake/packages, never these
LEAN_CORE_ROOTS = ("Init", "Std")


def bundle_holds(bundle: Bundle) -> str:
    """What a formal bundle indexes, in words: its modules' first components, the most declarations
    first, and that Lean core's are not among them ("Mathlib, Batteries, Archive, Counterexamples;
    Lean core's Init and Std are not indexed"); kept per bundle."""
    def make() -> str:
        import pyarrow.compute as pc

        roots = pc.value_counts(pc.list_element(pc.split_pattern(bundle.table.column("module").combine_chunks(), "."), 0))
        ranked = sorted(zip(roots.field(1).to_pylist(), roots.field(0).to_pylist()), key=lambda x: (-x[0], x[1] or ""))
        names = [r for _, r in ranked if r]
        shown = ", ".join(names[:6]) + (", …" if len(names) > 6 else "")
        if not set(LEAN_CORE_ROOTS) & set(names):
            shown += "; Lean core's Init and Std are not indexed"
        return shown
    return _per_bundle(_HOLDS, bundle, make)


# A query of at most NAME_PHRASE_WORDS words that reads as a result's name: a possessive ("Bear's
# criterion") or the kind of result ("... lemma", "... criterion").
NAME_PHRASE_WORDS = 6
_NAME_CORES: weakref.WeakKeyDictionary[Any, frozenset[str]] = weakref.WeakKeyDictionary()


def _name_cores(bundle: Bundle) -> frozenset:
    """The core words (``mathlas.ranking.learned.core``: "Baer's criterion" -> {baer}) of every name
    and alias of the bundle, each as ``core_key`` writes it; a name's parenthesised label words ("(criterion baer)") left
    out. Made on the first name-like query that names nothing (~0.3 s for 65k documents, ~2-5 s for
    Mathlib's 289k), then kept with the bundle and in ``$MATHLAS_DATA_DIR/cache/names`` for the next
    process (``_cores_file``: a changed bundle or rule makes them again; read back in ~0.2 s)."""
    def make() -> frozenset:
        path = _cores_file(bundle)
        got = _read_cores(path) if path is not None else None
        if got is None:
            got = _make_cores(bundle)
            if path is not None:
                _write_cores(path, got)
        return got
    return _per_bundle(_NAME_CORES, bundle, make)


def core_key(words) -> str:
    """A name's core words as ``_name_cores`` holds them: the distinct words, sorted, space-separated
    (a set of strings: 0.03 s to read back for Mathlib, where a set of frozensets takes 0.8 s)."""
    return " ".join(sorted(set(words)))


def _core_keys(texts: Iterable[str]) -> Iterator[str]:
    """Each name's or alias's core words as ``core_key`` writes them, "" for one without any: the
    words of ``mathlas.ranking.learned.words`` without its kept texts (a bulk pass would only churn them)."""
    from mathlas.ranking.learned import _WORD, core, fold

    for text in texts:
        c = core(_WORD.findall(fold(text)))
        yield core_key(c) if c else ""


def _make_cores(bundle: Bundle) -> frozenset:
    cores: set[str] = set()
    have = bundle.table.column_names
    for column in ("name", "aliases"):
        if column not in have:
            continue
        names = (name.split(" (")[0] for value in bundle.column(column).to_pylist()
                 for name in ((value or "").split(";") if column == "aliases" else [value or ""]))
        cores.update(_core_keys(names))
    cores.discard("")
    return frozenset(cores)


CORES_DIR = "names"   # under the data directory's cache/: each bundle's name cores, one file per bundle


def _cores_file(bundle: Bundle):
    """Where a bundle's name cores are kept between processes (``mathlas.paths.bundle_cache_file``):
    named by the bundle and a hash of its table's checksums and of the rules that make them (this
    module and ``mathlas.ranking.learned``); None when that cannot be said (no cache, never a failed
    search)."""
    import sys

    from mathlas.bundle import META, META_ARROW
    from mathlas.paths import bundle_cache_file
    from mathlas.ranking.learned import core  # the rules' module, loaded

    rules = [sys.modules[name].__file__ for name in (core.__module__, __name__)]
    return bundle_cache_file(CORES_DIR, bundle, (META, META_ARROW), rules, ".txt")


def _read_cores(path) -> frozenset | None:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    head, _, body = text.partition("\n")
    got = frozenset(line for line in body.split("\n") if line)
    return got if head == f"# {len(got)} name cores" else None   # a file cut short is made again


def _write_cores(path, cores: frozenset) -> None:
    """One line per core, its words sorted and space-separated (a word never holds a space); written
    atomically (``mathlas.paths.save_cache``), so that a reader never sees half of it."""
    from mathlas.paths import save_cache

    save_cache(path, f"# {len(cores)} name cores\n" + "\n".join(sorted(cores)) + "\n")


def _names_a_result(bundle: Bundle, query: str) -> bool:
    """Whether ``query`` reads as a result's name (``mathlas.ranking.named.name_core``) and its core
    words are those of a name or alias the bundle holds (``_name_cores``): such a query is not
    corrected, however rare its words ("Wald's equation", "local Nagano theorem")."""
    from mathlas.ranking.named import name_core

    c = name_core(query)
    return c is not None and core_key(c) in _name_cores(bundle)


def _possessive_name(bundle: Bundle, query: str) -> Correction | None:
    """A possessive typed without its apostrophe ("fatous lemma", "itos lemma"): when the query with
    it (``mathlas.ranking.named.spellings``) is a name the bundle holds, that is what is searched."""
    from mathlas.ranking.named import spellings

    forms = spellings(query)
    if len(forms) < 2:   # no word that could be a bare possessive: the bundle's possessors are not read
        return None
    owners = _possessors(bundle)
    typed = query.split()
    for meant in forms[1:]:  # every candidate made a possessive first, then each choice of them
        words_meant = meant.split()
        if len(typed) != len(words_meant):
            continue
        fixes = {a.lower(): b.lower() for a, b in zip(typed, words_meant) if a != b}
        # each word made a possessive is one that a name holds as one ("Fatou's"), not a plural ("circles")
        if fixes and all(strip_accents(b[:-2]) in owners for b in fixes.values()) and _names_a_result(bundle, meant):
            return Correction(meant, fixes)
    return None


_POSSESSORS: weakref.WeakKeyDictionary[Any, frozenset] = weakref.WeakKeyDictionary()
_OWNER = re.compile(r"([^\W\d_]+)['’]s\b")


def _possessors(bundle: Bundle) -> frozenset:
    """The words (lower case, accents off) that the bundle's names and aliases use as possessives
    ("fatou" of "Fatou's lemma"); made once per bundle."""
    def make() -> frozenset:
        have = bundle.table.column_names
        owners: set[str] = set()
        for column in ("name", "aliases", "title"):
            if column in have:
                for value in bundle.column(column).to_pylist():
                    if value and ("'" in value or "’" in value):
                        owners.update(strip_accents(w).lower() for w in _OWNER.findall(value))
        return frozenset(owners)
    return _per_bundle(_POSSESSORS, bundle, make)


def name_phrase(bundle: Bundle, query: str, index: NameIndex) -> Correction | None:
    """A name misspelt into real words: ``correct`` leaves "Bear's criterion" alone ("bear" is a word
    of the language and of the texts), but the query reads as a result's name, names nothing the
    bundle holds, and one word one edit away from a name word (``nearest``: "baer") makes it a name
    the bundle holds (the core words of a name or alias: Baer's criterion). Then that is what was
    meant. None when the query is no such name, already names something, or no single-word change
    makes it one."""
    from mathlas.ranking.learned import _POSSESSIVE, NAME_NOISE, core, words

    ws = words(query)
    if not 2 <= len(ws) <= NAME_PHRASE_WORDS or "`" in query or "$" in query:
        return None
    if not (_POSSESSIVE.search(query) or set(ws) & (NAME_NOISE - {"the", "a", "an", "of"})):
        return None
    cores = _name_cores(bundle)
    if core_key(core(ws)) in cores:
        return None
    for m in _WORD.finditer(query):
        low = m.group().lower()
        if low in STOPWORDS or low in NAME_NOISE or not allowed_edits(low):
            continue
        found = index.nearest(fold(low), exclude_self=True)
        if found is None or found[1] > 1 or inflected(low, found[0]):
            continue
        named = _named_with(query, m, ws, fold(low), found[0], cores)
        if named is not None:
            return named
    return None


def name_in_context(bundle: Bundle, query: str, index: NameIndex, count: Callable[[str], int],
                    known: Callable[[str], bool]) -> Correction | None:
    """A short word misspelt by two letters, which the other words of the query confirm: "Cauchy
    Swarz" (``swarz`` has five letters, so ``correct`` allows it one edit, and ``schwarz`` is two away).
    A query of two to ``NAME_PHRASE_WORDS`` words that names nothing the bundle holds, one word of
    which no document, name or the encoder's vocabulary knows: that word within ``MAX_EDITS`` of a
    name word (nearest first, then the likeliest slip) such that the query then is the core of a
    name or alias the bundle holds (Cauchy-Schwarz inequality). Only one word is changed; None when
    nothing qualifies."""
    from mathlas.ranking.learned import NAME_NOISE, core, words

    ws = words(query)
    if not 2 <= len(ws) <= NAME_PHRASE_WORDS or "`" in query or "$" in query:
        return None
    cores = _name_cores(bundle)
    if core_key(core(ws)) in cores:
        return None
    index._fuzzy()
    assert index._deletions is not None
    for m in _WORD.finditer(query):
        low = m.group().lower()
        if low in STOPWORDS or low in NAME_NOISE or len(low) < MIN_WORD or index.knows(low) or known(low) or count(low):
            continue
        folded = fold(low)
        found = index._deletions.within(folded, MAX_EDITS)
        for better in sorted(found, key=lambda c: (found[c], slip_kind(c, folded), c)):
            named = _named_with(query, m, ws, folded, better, cores)
            if named is not None:
                return named
    return None


def _named_with(query: str, m: re.Match, ws: list[str], folded: str, better: str, cores: frozenset) -> Correction | None:
    """``query`` with its word ``m`` (``folded``) replaced by ``better``, when that makes its core words
    (of ``ws``, the query's words) those of a name or alias the bundle holds (``cores``); else None."""
    from mathlas.ranking.learned import core

    fixed = core([better if w == folded else w for w in ws])
    if not fixed or core_key(fixed) not in cores:
        return None
    return Correction(query[:m.start()] + as_typed(m.group(), better) + query[m.end():], {m.group().lower(): better})


def as_typed(typed: str, word: str) -> str:
    """``word`` (lower case) capitalised as ``typed`` is, when ``typed`` is a capitalised word."""
    return word.capitalize() if typed[:1].isupper() and typed[1:].islower() else word


def fold(word: str) -> str:
    """``word`` without its accents (``gödel`` -> ``godel``)."""
    return strip_accents(word)


def inflections(word: str) -> set[str]:
    """The regular inflections of an English word: ``bake``: bakes, baked, baker, baking, ...."""
    forms = {word + e for e in ("s", "es", "ed", "er", "ing", "ly")}
    if word.endswith("e"):
        forms |= {word + "d", word + "r", word[:-1] + "ing"}
    return forms - {word}


# A word at least this many of whose inflections are words of the language is one (``bake``: baked,
# baker, baking), though the encoder's vocabulary lacks it; one alone may be a misspelling's chance
# ("fiel" + d is "field")
INFLECTIONS_KNOWN = 2


def in_language(vocab: Callable[[str], bool], word: str) -> bool:
    """Whether ``word`` is a word of the language by ``vocab`` (the encoder's vocabulary,
    ``vocabulary_of``): one of it, or a word ``INFLECTIONS_KNOWN`` of whose inflections are (a
    WordPiece vocabulary of 30k words holds "baked", "baker" and "baking" but not "bake")."""
    return vocab(word) or sum(1 for f in inflections(word) if vocab(f)) >= INFLECTIONS_KNOWN


_VOCABULARIES: weakref.WeakKeyDictionary[Any, Callable[[str], bool] | None] = weakref.WeakKeyDictionary()


def vocabulary_of(bundle: Bundle) -> Callable[[str], bool] | None:
    """Whether a word is a whole word of the bundle's query encoder's vocabulary (its
    ``tokenizer.json``: WordPiece words, or BPE words with their space mark): the words of the
    language the encoder was trained on, which no misspelling correction should touch. None when
    the bundle has no readable tokenizer. Read once per bundle (30k words: ~20 ms)."""
    def make() -> Callable[[str], bool] | None:
        import json

        from mathlas.bundle import ENCODER_DIR

        words: set[str] | None = None
        try:
            model = json.loads((bundle.root / ENCODER_DIR / "tokenizer.json").read_text(encoding="utf-8"))["model"]
            vocab = model["vocab"]
            words = {w.lstrip("Ġ▁").lower() for w in (vocab if isinstance(vocab, dict) else [v[0] for v in vocab])
                     if w[:1] in "Ġ▁" or (model.get("type") == "WordPiece" and not w.startswith("##"))}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            words = None
        return (lambda w: w in words) if words else None
    return _per_bundle(_VOCABULARIES, bundle, make)


class NameMatch:
    """A ranking stage (``mathlas.ranking.stages``): a query that is a document's id or, in a formal
    bundle, a declaration's name puts that document first (an exact-name answer), as does, failing
    that, in another bundle, a query that names ids or Stacks tags (``mentioned_ids``: "Stacks tag
    00DV", "00DV", "see stacks:00dv"; each in the order named), and in a formal bundle a plain phrase
    that names a concept (``concept_keys``: "bicategory"); the declarations
    whose names end with the query's components (``Finset.sum_range_succ`` for ``sum_range_succ``)
    follow it, the most used first where the bundle has a PageRank (``Finset.sum_range_succ`` before
    ``List.sum_range_succ``, which the ranking put first), else in the order the ranking gave them,
    and those it did not rank after them, up to ``TOP_SLOTS`` places in all; the rest of the pool
    follows unchanged.
    Each placed row is marked ``names`` with its place (1, 2, ...), which its hit shows in ``ranks``.
    Suffix matches are taken for a query shaped like an identifier (``.``, ``_``, a digit, an inner
    capital, a non-ASCII letter) or when at most ``TOP_SLOTS`` declarations end so (a plain word that
    many names end with, ``add``, is as likely a word as a name).
    A phrase of a few words that, joined by ``_`` or ``.``, ends declaration names (``NameIndex.joined``:
    "prime two le", ``Nat.Prime.two_le``) places those declarations as it places a name's endings,
    after a concept the phrase names, the declarations one of whose aliases the phrase is
    (``alias_keys``: "triangle inequality" keeps ``norm_add_le`` first) and the declaration whose whole
    name is the words joined by ``_``; a deprecated one goes right after its replacement (a likely
    reading, not a name typed). Two words the bundle's docstrings use as a phrase ("fixed point":
    ``prose_uses``, ``PROSE_PHRASE_DOCS``) are English, and only the declarations they are an alias
    of are placed, unless they make a declaration's whole name. What the words were read as is left for the answer
    (``ctx.notes["name_words"]``, a ``NameWords``).
    A deprecated declaration asked for by name has its replacement placed right after it. Only
    documents the request's filters and weights allow are placed. Runs last: what it places is what
    was asked for by name, and no later stage reorders it."""

    name = "names"

    def __call__(self, pool, ctx):
        plan = ctx.plan
        # the name searched: a misspelt declaration name as corrected (mul_com: mul_comm)
        searched = plan.correction.query if plan.correction is not None else ctx.request.query
        q = name_query(searched)
        if not plan.bundle_part:
            return pool
        bundle = ctx.bundle
        index = NameIndex.of(bundle)
        exact = index.exact(q) if q is not None else []
        if not exact and index.formal:  # a concept named in words: "bicategory", "topological space"
            exact = concept_keys(bundle, searched)
        elif not exact:  # ids and Stacks tags as typed: "Stacks tag 00DV", "00DV", "see stacks:00dv"
            exact = mentioned_ids(index, ctx.request.query)
        joined, joinings = index.joined(searched) if q is None else ([], [])
        if q is None and not exact and not joined:
            return pool
        # two words of the prose ("fixed point", "upper bound") are English, not a name typed as words:
        # only the declarations the phrase is an alias of are placed
        english = bool(joined) and _english(bundle, index, searched, joined, joinings)
        suffix: list[int] = []
        holders: list[int] = []
        if index.formal and q is not None:
            taken = set(exact)
            ends = [k for k in index.suffix(q) if k not in taken]
            suffix = ends if _IDENTIFIER.search(q) or len(ends) <= TOP_SLOTS else []
        elif joined:  # a name typed as words ("prime two le"): its declarations placed as a name's endings
            # after the declarations the phrase is an alias of, in the ranking's order ("triangle
            # inequality": norm_add_le), and the one whose whole name is the words joined by ``_``, as a
            # name typed so would be (banach_steinhaus before PolynormableSpace.banach_steinhaus)
            at = {k: i for i, k in enumerate(pool.keys.tolist())}
            # (the holders the pool lacks after those it has, most used first: a stable sort of alias_keys)
            holders = sorted(alias_keys(bundle, searched), key=lambda k: at.get(k, len(at)))
            if english:
                joined, joinings = [], []
            whole = {j.lower() for j in joinings if "." not in j}
            exact = list(dict.fromkeys(exact + holders + [k for k in joined if index.name_of(k).lower() in whole]))
            suffix = [k for k in joined if k not in exact]
        if not exact and not suffix:
            return pool
        ok = plan.allowed(np.asarray(exact + suffix, dtype=np.int64)).tolist()
        exact, suffix = ([k for k, good in zip(exact, ok) if good],
                         [k for k, good in zip(suffix, ok[len(exact):]) if good])
        if not exact and not suffix:
            return pool
        at = {k: i for i, k in enumerate(pool.keys.tolist())}
        slots = max(0, TOP_SLOTS - len(exact))
        ranked = by_pagerank(bundle, [k for k in suffix if k in at]) if bundle.has_column("pagerank") else \
            sorted((k for k in suffix if k in at), key=at.__getitem__)
        if len(ranked) < slots:
            ranked += by_pagerank(bundle, [k for k in suffix if k not in at])[:slots - len(ranked)]
        if joined:
            ranked = _variants_after_spelt(index, ranked, joinings)
        placed = exact + ranked[:slots]
        # a deprecated declaration asked for by name: its replacement right after it
        for k in _replacements(bundle, exact):
            if k not in placed and plan.allowed(np.asarray([k], dtype=np.int64))[0]:
                placed.insert(placed.index(exact[-1]) + 1, k)
        if joined:  # a deprecated declaration the words name: right after its replacement, as ranked
            placed = _replacements_before(bundle, placed, plan)
        placed = placed[:max(TOP_SLOTS, len(exact))]
        if joined and set(placed) & set(joined):
            after = None
            if placed[0] not in set(joined):  # the first hit is none the words end: say what it is
                why = ("the words are its alias" if placed[0] in holders else
                       "its replacement" if placed[0] in _replacements(bundle, [k for k in joined if k in placed])
                       else "the concept the words name")
                after = (index.name_of(placed[0]), why)
            ctx.notes["name_words"] = NameWords.of(index, searched, joined, joinings, bundle, after)
        return pool.placed_first(placed, self.name)


def _variants_after_spelt(index: NameIndex, ranked: list[int], joinings: list[str]) -> list[int]:
    """``ranked`` with the ``JOINED_VARIANTS`` variants (``Monoid.exponent_min'``) that the most used
    order put before a declaration whose namespace the words name too ("monoid exponent min":
    ``Monoid.exponent_min``, found by ``monoid.exponent_min``) moved right after the last such one;
    the rest as ranked."""
    low = [j.lower() for j in joinings]
    names = {k: index.name_of(k).lower() for k in ranked}
    plain = {k for k, n in names.items() if any(n == j or n.endswith("." + j) for j in low)}
    spelt = [i for i, k in enumerate(ranked)
             if k in plain and any("." in j and (names[k] == j or names[k].endswith("." + j)) for j in low)]
    if not spelt:
        return ranked
    last = spelt[-1]
    ahead = [k for k in ranked[:last] if k not in plain]
    return [k for k in ranked[:last + 1] if k in plain] + ahead + ranked[last + 1:]


def _english(bundle: Bundle, index: NameIndex, words: str, keys: list[int], joinings: list[str]) -> bool:
    """Whether a phrase that ``NameIndex.joined`` read as a name (``keys``, by ``joinings``) is English
    instead: two words (fewer than ``JOINED_NAMES_ONE``) that ``PROSE_PHRASE_DOCS`` or more of the
    bundle's docstrings use as a phrase (``prose_uses``), no joining of which is a declaration's whole
    name ("fixed point", which ends ``Nat.Partrec.Code.fixed_point``; not "polynomial ring",
    ``Polynomial.ring``, nor "mul pos", which no docstring says)."""
    if len(words.split()) >= JOINED_NAMES_ONE:
        return False
    low = {j.lower() for j in joinings}
    if any(index.name_of(k).lower() in low for k in keys):
        return False
    return prose_uses(bundle, words) >= PROSE_PHRASE_DOCS


_PROSE: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
# what is not prose in a docstring: code, formulas and identifiers (``Nat.Prime``, ``two_le``)
_NOT_PROSE = r"(?s)`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]|[\p{L}\p{N}_']+(?:[._][\p{L}\p{N}_']+)+"


def prose_uses(bundle: Bundle, phrase: str) -> int:
    """How many of ``bundle``'s docstrings use ``phrase``'s words in a row, any case, in their prose:
    code, formulas and identifiers are not prose, and punctuation ends a phrase ("a fixed point. Zero"
    has no "point zero"); a dash joins words as a space does ("fixed-point", "Heine–Borel"). 0 for a
    bundle without docstrings. The docstrings' prose is made once per bundle, one line each (0.3 s
    for Mathlib's 74,118), a count then takes some 3 ms."""
    prose = _per_bundle(_PROSE, bundle, lambda: _prose_of(bundle))
    needle = " " + " ".join(phrase.lower().split()) + " "
    n, at = 0, prose.find(needle) if needle.strip() else -1
    while at >= 0:
        n += 1
        at = prose.find("\n", at)
        at = prose.find(needle, at) if at >= 0 else -1
    return n


def _prose_of(bundle: Bundle) -> str:
    """The prose of ``bundle``'s docstrings (``prose_uses``): one line each, lower-cased words between
    spaces, ``|`` where code, a formula, an identifier or punctuation was."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not bundle.has_column("docstring"):
        return ""
    d = bundle.table.column("docstring")
    d = d.combine_chunks() if isinstance(d, pa.ChunkedArray) else d
    d = d.filter(pc.greater(pc.utf8_length(pc.fill_null(d, "")), 0))
    d = pc.utf8_lower(pc.replace_substring_regex(d, _NOT_PROSE, " | "))
    d = pc.replace_substring_regex(d, r"\p{Pd}", " ")
    d = pc.replace_substring_regex(d, r"[^\p{L}\s]+", " | ")
    d = pc.replace_substring_regex(d, r"\s+", " ")
    return "\n".join(" " + line + " " for line in d.to_pylist())


def _replacements_before(bundle, placed: list[int], plan) -> list[int]:
    """``placed`` with the replacement of each deprecated declaration in it right before it (moved
    up, or added where the request allows it): words read as a declaration's name are a likely
    reading, not a name typed, and the user meets the replacement first (``ReplacementsFirst``)."""
    moved = _replaced_by(bundle, placed)
    if not moved:
        return placed
    out: list[int] = []
    for k in placed:
        r = moved.get(k)
        if r is not None and r not in out and plan.allowed(np.asarray([r], dtype=np.int64))[0]:
            out.append(r)
        if k not in out:
            out.append(k)
    return out


@dataclass(frozen=True)
class NameWords:
    """A phrase read as a declaration name typed as words (``NameIndex.joined``), for the answer:
    the ``words`` as searched, the name endings they made as the bundle writes them (``endings``:
    ``Prime.two_le`` for "prime two le"; a joining's ``JOINED_VARIANTS`` too, ``pow_le_pow_left₀``),
    and the declarations that end so (``keys``: all of them, whatever the request's filters; the name
    stage placed the first ``TOP_SLOTS`` it allows). ``spelt``: the words joined are the one
    declaration's whole name, or name its namespace too (``prime.two_le``: ``Nat.Prime.two_le``; not
    ``pow_le_pow_left``: ``ENNReal.pow_le_pow_left``). ``after``: what the name stage put first when
    it is none of them, and why (``norm_add_le``, "the words are its alias")."""

    words: str
    endings: tuple[str, ...]
    keys: tuple[int, ...]
    first: str  # the name of the most used of them
    spelt: bool = False
    after: tuple[str, str] | None = None
    wholes: tuple[int, ...] = ()  # those whose whole name is a joining (mul_pos; not pow_le_pow_left')

    @classmethod
    def of(cls, index: NameIndex, words: str, keys: list[int], joinings: list[str], bundle: Bundle,
           after: tuple[str, str] | None = None) -> NameWords:
        names = [index.name_of(k) for k in by_pagerank(bundle, keys)]
        low = [n.lower() for n in names]

        def ending(j: str) -> str | None:  # a joining as the most used declaration that ends with it writes it
            j = j.lower()
            return next((n[-len(j):] for n, m in zip(names, low) if m == j or m.endswith("." + j)), None)

        # each joining (prime.two_le: Prime.two_le), then its variants that end a name (pow_le_pow_left₀)
        endings = [ending(j) or j for j in joinings]
        endings += [e for j in joinings for e in (ending(j + t) for t in JOINED_VARIANTS) if e]
        one = low[0] if len(low) == 1 else ""
        spelt = bool(one) and any(one == j.lower() or ("." in j and one.endswith("." + j.lower())) for j in joinings)
        joints = {j.lower() for j in joinings}
        wholes = tuple(k for k in keys if index.name_of(k).lower() in joints)
        return cls(" ".join(words.split()), tuple(dict.fromkeys(endings)), tuple(keys), names[0], spelt, after,
                   wholes)

    def folded(self, key: int) -> bool:
        """Whether ``key`` is one of the declarations the words end whose whole name they are only up
        to a variant's ``₀`` or ``'`` or a namespace (``pow_le_pow_left'``, ``ENNReal.pow_le_pow_left``
        for "pow le pow left"): the words are its name in words, but not its name alone."""
        return key in self.keys and key not in self.wholes

    def names(self, key: int) -> bool:
        """Whether the words name the document ``key`` alone (an answer by name, ``match: strong``): it
        is the one declaration that ends so (no ``JOINED_VARIANTS`` variant beside it), the words joined
        are its whole name or name its namespace too (``spelt``: "prime two le", not "pow le pow left"
        for ``ENNReal.pow_le_pow_left``), and they are at least ``JOINED_NAMES_ONE`` words."""
        return self.keys == (key,) and self.spelt and len(self.words.split()) >= JOINED_NAMES_ONE

    def describe(self) -> str:
        """One line for the answer: ``also searched as a name: prime two le -> Nat.Prime.two_le``; with
        several declarations, the endings and how many end so: ``also searched as a name: mul pos ->
        mul_pos (10 declarations end so)``; where the first hit is none of them, what it is: ``…,
        after norm_add_le (the words are its alias)``."""
        if len(self.keys) == 1:
            line = f"also searched as a name: {self.words} -> {self.first}"
        else:
            line = (f"also searched as a name: {self.words} -> {', '.join(self.endings)} "
                    f"({len(self.keys)} declarations end so)")
        return line + (f", after {self.after[0]} ({self.after[1]})" if self.after else "")


_ALIASED: weakref.WeakKeyDictionary[Any, dict[str, list[int]]] = weakref.WeakKeyDictionary()


def alias_keys(bundle: Bundle, query: str) -> list[int]:
    """The documents one of whose aliases is ``query`` up to case, accents and the words that say
    what kind of result it is (their core words, ``mathlas.ranking.learned.core``): "triangle
    inequality" -> ``norm_add_le`` ("The Triangle Inequality"); the most used first. The aliases are
    read once per bundle (a formal bundle holds few: 879 of Mathlib's 288,733 declarations)."""
    from mathlas.ranking.learned import core, words

    def make() -> dict[str, list[int]]:
        import pyarrow.compute as pc

        held: dict[str, list[int]] = {}
        if bundle.has_column("aliases"):
            column = bundle.table.column("aliases")
            some = pc.indices_nonzero(pc.is_valid(column)).to_pylist()
            pairs = [(key, alias) for key, value in zip(some, column.take(some).to_pylist()) for alias in value.split(";")]
            for (key, _), c in zip(pairs, _core_keys(alias for _, alias in pairs)):
                if c:
                    held.setdefault(c, []).append(key)
        return held
    held = _per_bundle(_ALIASED, bundle, make)
    c = core(words(query))
    return by_pagerank(bundle, sorted(set(held.get(core_key(c), ())))) if c else []


def concept_keys(bundle: Bundle, query: str) -> list[int]:
    """The declarations a plain phrase names as a concept (``NameIndex.concept``) that ``NameMatch``
    puts first: at most ``CONCEPT_SLOTS``, the most used first, and only those used more than every
    declaration the query names as typed or in the singular (lower-case last components): "bicategory" is
    ``CategoryTheory.Bicategory`` before the ten instances named ``….bicategory``, but "integral" stays
    ``MeasureTheory.integral``'s, not the little-used ``MeasCat.Integral``'s. Without a ``pagerank``
    column, only where no declaration is named so as typed. Kept per bundle and query: the name stage
    and ``match`` (``named_first``) both ask for each answer."""
    index = NameIndex.of(bundle)
    if not index.formal:
        return []

    def make() -> Callable[[str], tuple[int, ...]]:
        rank = pagerank_of(bundle)   # holds the column, not the bundle (kept beside it, per bundle)

        def keys(query: str) -> tuple[int, ...]:
            found = index.concept(query)
            if not found:
                return ()
            q = name_query(query)
            typed: list[int] = []
            if q is not None:  # one word: the names that end with it, as typed or in the singular
                one = singular(q.lower())
                typed = index.suffix(q) + (index.suffix(one) if one != q.lower() else [])
            taken = set(found)
            rivals = [k for k in dict.fromkeys(typed) if k not in taken]
            if rank is None:
                return () if rivals else tuple(found[:CONCEPT_SLOTS])
            floor = max(rank(rivals)) if rivals else -1.0
            used = sorted(zip(rank(found), found), key=lambda x: (-x[0], x[1]))
            return tuple(k for r, k in used if r > floor)[:CONCEPT_SLOTS]

        return keys

    return list(_kept_counter(bundle, "concepts", make)(query))


def _replacements(bundle, keys: list[int]) -> list[int]:
    """The keys of the replacements of the deprecated declarations among ``keys`` (the
    ``replaced_by`` column; none where the bundle has no such column)."""
    return list(_replaced_by(bundle, keys).values())


def _replaced_by(bundle, keys: list[int]) -> dict[int, int]:
    """Each deprecated declaration among ``keys`` with the key of its replacement (``_replacements``)."""
    if not keys or not bundle.has_column("replaced_by"):
        return {}
    out = {}
    for key, rid in zip(keys, bundle.strings("replaced_by")(keys)):
        if rid:
            found = NameIndex.of(bundle).exact(rid)
            if found:
                out[key] = found[0]
    return out


def named_first(bundle: Bundle, query: str, key: int) -> bool:
    """Whether ``query`` names the document ``key``: its id or declaration name (``NameIndex.exact``),
    in a bundle that is not formal an id or Stacks tag it names (``mentioned_ids``: "Stacks tag 00DV"),
    the one concept a plain phrase names (``concept_keys``), or the end of a declaration name that no
    other declaration shares (what ``NameMatch`` puts first); such an answer is one by name, not a guess."""
    index = NameIndex.of(bundle)
    if not index.formal:
        return key in (index.exact(query) or mentioned_ids(index, query))
    if name_query(query) is None:
        return concept_keys(bundle, query) == [key]
    exact = index.exact(query)
    if exact:
        return key in exact
    if concept_keys(bundle, query) == [key] and _last_is(index, key, query):
        return True
    return index.suffix(query, limit=2) == [key]


def _last_is(index: NameIndex, key: int, word: str) -> bool:
    """Whether the declaration ``key``'s last component is ``word`` in any case, or its singular: a
    one-word query names the concept ``Bicategory`` ("bicategory", "bicategories"), not ``IsNat``
    ("Nat", which only the name stage's "Is" form found)."""
    last = index._ids[key].as_py().rsplit(".", 1)[-1].removeprefix(LEAN_PREFIX).lower()
    w = word.strip().strip("`").lower()
    return last in (w, singular(w))


def pagerank_of(bundle) -> Callable[[list[int]], list[float]] | None:
    """Each key's PageRank (how much is built on the declaration), where the bundle has the column."""
    if not bundle.has_column("pagerank"):
        return None
    column = bundle.table.column("pagerank")

    def of(keys: list[int]) -> list[float]:
        import pyarrow as pa
        import pyarrow.compute as pc

        col = column.take(pa.array(keys, type=pa.int64()))
        return pc.fill_null(col.cast(pa.float64()), 0.0).to_pylist()
    return of


def by_pagerank(bundle, keys: list[int]) -> list[int]:
    """``keys``, the most used declarations first (the ``pagerank`` column), else in key order."""
    rank = pagerank_of(bundle) if keys else None
    if rank is None:
        return sorted(keys)
    ranks = rank(keys)
    return [k for _, k in sorted(zip((-r for r in ranks), keys))]
