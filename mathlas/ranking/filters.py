"""Search filters, resolved once per query and applied inside every channel before its top-k cut.

Two kinds of filter:

* **source / kind** (every bundle): the lexical channel expresses them as tantivy term filters;
* **paper** (bundles with the paper columns of ``mathlas.bundle.PAPER_COLUMNS``, e.g. one built
  from the TheoremSearch dataset): authors, arXiv categories, year range, citation range,
  journal-published. The BM25 index holds no paper fields, so these exist only as the mask.

``Filters.allowed`` is the boolean mask over document keys that says it all (None: everything
allowed). The dense channel uses it directly; the lexical channel uses its term filters and, when a
paper filter is present, the mask too (``LexicalChannel`` keeps its top-k exact either way).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields
from typing import Any
from collections.abc import Mapping

import numpy as np

from mathlas.errors import UsageError
from mathlas.ranking.text import strip_accents


@dataclass(frozen=True)
class PaperFilter:
    """Paper-metadata filter; every set field must hold (AND), values inside a field are alternatives (OR).

    ``authors``: a document passes when one of its authors matches one of these names: case- and
    accent-insensitive, whole words ("tao" matches "Terence Tao", not "Taormina").
    ``categories``: arXiv categories; ``math.AG`` matches exactly, an archive without a dot
    (``math``) matches all of its categories (``math.AG``, ``math.NT``...).
    ``year_min`` / ``year_max``, ``citations_min`` / ``citations_max``: inclusive bounds; a document
    whose year (citation count) is unknown fails any bound on it.
    ``journal_published``: True keeps papers with a journal reference, False those without.
    """

    authors: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    year_min: int | None = None
    year_max: int | None = None
    citations_min: int | None = None
    citations_max: int | None = None
    journal_published: bool | None = None

    @classmethod
    def parse(cls, value: PaperFilter | Mapping[str, Any] | None) -> PaperFilter | None:
        """Validate a user's filter (a mapping with this class's field names); None when it sets nothing."""
        if value is None or isinstance(value, PaperFilter):
            return value if value is None or value.active else None
        if not isinstance(value, Mapping):
            raise UsageError('paper_filter must be an object like {"authors": ["Serre"], "year_min": 1990}')
        known = [f.name for f in fields(cls)]
        extra = sorted(set(value) - set(known))
        if extra:
            raise UsageError(f"paper_filter has no key {', '.join(map(repr, extra))}; it takes {', '.join(known)}")
        args: dict[str, Any] = {}
        for key in ("authors", "categories"):
            items = value.get(key)
            if items is None:
                continue
            if isinstance(items, str):
                items = [items]
            if not isinstance(items, (list, tuple)) or not all(isinstance(s, str) and s.strip() for s in items):
                raise UsageError(f"paper_filter.{key} must be a list of non-empty strings, got {items!r}")
            args[key] = tuple(dict.fromkeys(s.strip() for s in items))
        for key in ("year_min", "year_max", "citations_min", "citations_max"):
            v = value.get(key)
            if v is None:
                continue
            if isinstance(v, float) and math.isfinite(v) and v == int(v):
                v = int(v)
            if isinstance(v, bool) or not isinstance(v, int):
                raise UsageError(f"paper_filter.{key} must be an integer, got {v!r}")
            args[key] = v
        for lo, hi in (("year_min", "year_max"), ("citations_min", "citations_max")):
            if lo in args and hi in args and args[lo] > args[hi]:
                raise UsageError(f"paper_filter: {lo} ({args[lo]}) is greater than {hi} ({args[hi]})")
        jp = value.get("journal_published")
        if jp is not None:
            if not isinstance(jp, bool):
                raise UsageError(f"paper_filter.journal_published must be true or false, got {jp!r}")
            args["journal_published"] = jp
        pf = cls(**args)
        return pf if pf.active else None

    @property
    def active(self) -> bool:
        return any(getattr(self, f.name) not in ((), None) for f in fields(self))

    def columns(self) -> list[str]:
        """The metadata columns this filter reads."""
        need = []
        if self.authors:
            need.append("authors")
        if self.categories:
            need.append("categories")
        if self.year_min is not None or self.year_max is not None:
            need.append("year")
        if self.citations_min is not None or self.citations_max is not None:
            need.append("citations")
        if self.journal_published is not None:
            need.append("journal_ref")
        return need

    def to_json(self) -> dict[str, Any]:
        return {f.name: list(v) if isinstance(v, tuple) else v
                for f in fields(self) if (v := getattr(self, f.name)) not in ((), None)}


@dataclass(frozen=True)
class Filters:
    """``allowed`` is a boolean mask over document keys (None: everything allowed).

    The lexical channel uses the source/kind sets as tantivy term filters, and the mask when
    ``paper`` is set (the mask then says more than the term filters); the dense channel uses the
    mask. Both describe the same set of documents.
    """

    include_sources: tuple[str, ...] = ()
    exclude_sources: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    allowed: np.ndarray | None = None
    paper: PaperFilter | None = None
    custom: bool = False     # the caller's own mask (e.g. Lean modules) is part of ``allowed``

    @property
    def mask_only(self) -> bool:
        """True when ``allowed`` says more than the source/kind term filters can express."""
        return self.allowed is not None and (self.paper is not None or self.custom)


# ------------------------------------------------------------------------------ paper masks

def fold(text: str) -> str:
    """Lower-case, accents dropped, whitespace collapsed: how author names are compared."""
    return " ".join(strip_accents(text.casefold()).split())


# RE2's \W is ASCII-only; names keep letters such as "ł" after folding, so word edges are Unicode.
_NON_WORD = r"[^\pL\pN_]"


def _word_pattern(name: str) -> str:
    """An RE2 pattern matching ``name`` (already folded) as whole words, any spacing between them.

    An initial ("t." or "t") matches any name with that first letter, so "T. Tao" finds "Terence Tao".
    """
    parts = []
    for w in name.split():
        if re.fullmatch(r"\w\.?", w):
            parts.append(re.escape(w[0]) + r"[\pL\pN_-]*\.?")
        else:
            parts.append(re.sub(r"([^\w\s])", r"\\\1", w))
    return rf"(?:^|{_NON_WORD})" + r"\s*".join(parts) + rf"(?:$|{_NON_WORD})"


class PaperColumns:
    """The paper columns of a bundle's metadata table, prepared once for fast masks.

    List columns are flattened with their row index (so one vectorised pass matches every author
    of every document); numeric columns become float arrays with NaN for unknown.
    """

    def __init__(self, table, bundle_name: str = "bundle"):
        self.table = table
        self.n = table.num_rows
        self.bundle_name = bundle_name
        self._cache: dict[str, Any] = {}

    def require(self, columns: list[str]) -> None:
        missing = [c for c in columns if c not in self.table.column_names]
        if missing:
            raise UsageError(
                f"bundle {self.bundle_name} has no paper metadata ({', '.join(missing)}): paper filters work on "
                f"bundles built from paper sources such as the TheoremSearch dataset (docs/papers.md)")

    def _flat(self, column: str, folded: bool):
        """(distinct values, value index per entry, row per entry) of a list<string> column (a string
        column counts as one value per row). Matching runs over the distinct values only: a corpus
        repeats each author over every theorem of every paper."""
        key = f"flat:{column}:{folded}"
        if key not in self._cache:
            import pyarrow as pa
            import pyarrow.compute as pc

            col = self.table.column(column).combine_chunks()
            if column == "categories" and (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
                col = pc.utf8_split_whitespace(col)  # "math.AG math.NT"
            if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
                values = pc.list_flatten(col)
                rows = np.asarray(pc.list_parent_indices(col).to_numpy(zero_copy_only=False), dtype=np.int64)
            else:  # one string per row ("A. Author and B. Author")
                values, rows = col, np.arange(len(col), dtype=np.int64)
            encoded = pc.dictionary_encode(pc.fill_null(values.cast(pa.string()), ""))
            distinct = encoded.dictionary
            if folded:
                distinct = pc.utf8_normalize(pc.utf8_lower(distinct), "NFKD")
                distinct = pc.replace_substring_regex(distinct, r"\p{Mn}", "")
                distinct = pc.replace_substring_regex(distinct, r"\s+", " ")
            index = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
            self._cache[key] = (distinct, index, rows)
        return self._cache[key]

    def _numbers(self, column: str) -> np.ndarray:
        key = f"num:{column}"
        if key not in self._cache:
            import pyarrow as pa
            import pyarrow.compute as pc

            col = self.table.column(column).combine_chunks()
            if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_null(col.type)):
                raise UsageError(f"bundle {self.bundle_name}: column {column} is {col.type}, not a number")
            self._cache[key] = pc.fill_null(col.cast(pa.float64()), float("nan")).to_numpy(zero_copy_only=False)
        return self._cache[key]

    def _rows_where(self, column: str, folded: bool, match) -> np.ndarray:
        """Rows with at least one value of ``column`` for which ``match(distinct values)`` is true."""
        distinct, index, rows = self._flat(column, folded)
        hit = np.asarray(match(distinct).to_numpy(zero_copy_only=False), dtype=bool)
        out = np.zeros(self.n, dtype=bool)
        out[rows[hit[index]]] = True
        return out

    def _author_match(self, names, wanted: tuple[str, ...]):
        """Which distinct (folded) author names match one of ``wanted``: a word index narrows the
        candidates to names holding the query's longest word, the regex decides among those."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if "author_words" not in self._cache:
            words = pc.split_pattern_regex(names, _NON_WORD + "+")
            encoded = pc.dictionary_encode(pc.list_flatten(words))
            self._cache["author_words"] = (encoded.dictionary,
                                           np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64),
                                           np.asarray(pc.list_parent_indices(words).to_numpy(zero_copy_only=False),
                                                      dtype=np.int64))
        vocab, word_of, name_of = self._cache["author_words"]
        hit = np.zeros(len(names), dtype=bool)
        for a in wanted:
            a = fold(a)
            words = [w for w in re.findall(r"\w+", a) if len(w) > 1]
            if words:
                key = np.flatnonzero(np.asarray(pc.equal(vocab, max(words, key=len)).to_numpy(zero_copy_only=False),
                                                dtype=bool))
                candidates = np.unique(name_of[np.isin(word_of, key)])
            else:  # initials only: every name is a candidate
                candidates = np.arange(len(names))
            if len(candidates):
                ok = pc.match_substring_regex(names.take(pa.array(candidates)), _word_pattern(a))
                hit[candidates[np.asarray(ok.to_numpy(zero_copy_only=False), dtype=bool)]] = True
        return pa.array(hit)

    def mask(self, pf: PaperFilter) -> np.ndarray:
        """The documents passing ``pf``."""
        import pyarrow.compute as pc

        self.require(pf.columns())
        mask = np.ones(self.n, dtype=bool)
        if pf.authors:
            mask &= self._rows_where("authors", True, lambda v: self._author_match(v, pf.authors))
        if pf.categories:
            def categories(values):
                values, hit = pc.utf8_lower(values), None
                for c in pf.categories:
                    c = c.strip().lower()
                    one = pc.or_(pc.equal(values, c), pc.starts_with(values, c + "."))
                    hit = one if hit is None else pc.or_(hit, one)
                return hit
            mask &= self._rows_where("categories", False, categories)
        for column, lo, hi in (("year", pf.year_min, pf.year_max), ("citations", pf.citations_min, pf.citations_max)):
            if lo is None and hi is None:
                continue
            x = self._numbers(column)
            with np.errstate(invalid="ignore"):
                ok = ~np.isnan(x)
                if lo is not None:
                    ok &= x >= lo
                if hi is not None:
                    ok &= x <= hi
            mask &= ok
        if pf.journal_published is not None:
            if "journal" not in self._cache:
                col = self.table.column("journal_ref")
                has = pc.fill_null(pc.greater(pc.utf8_length(pc.utf8_trim_whitespace(col.cast("string"))), 0), False)
                self._cache["journal"] = np.asarray(has.to_numpy(), dtype=bool)
            has = self._cache["journal"]
            mask &= has if pf.journal_published else ~has
        return mask


# ------------------------------------------------------------------------------ masks of TheoremSearch's filters

def title_mask(table, needle: str) -> np.ndarray:
    """Documents whose paper title holds ``needle`` (case-insensitive; TheoremSearch's ``paper_title``)."""
    import pyarrow.compute as pc

    col = table.column("paper_title")
    return pc.fill_null(pc.match_substring(col, needle, ignore_case=True), False).to_numpy(zero_copy_only=False)


def citation_mask(table, lo: int | None, hi: int | None) -> np.ndarray:
    """Documents whose citation count is unknown, or within [lo, hi] (TheoremSearch's citation range,
    which keeps unknown counts where ``PaperFilter`` refuses them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = table.column("citations").cast(pa.float64())
    vals = pc.fill_null(col, np.nan).to_numpy(zero_copy_only=False)
    unknown = np.isnan(vals)
    inside = ~unknown
    if lo is not None:
        inside &= vals >= lo
    if hi is not None:
        inside &= vals <= hi
    return unknown | inside
