"""The learned ranking stage: features of a candidate pool and a small model evaluated in numpy.

Candidates are the union of every channel's ranking (lexical BM25 and dense, each ``depth`` deep).
Each candidate gets ``FEATURES``: its BM25 score and rank, its exact dense cosine (computed for every
candidate, the lexical-only ones too, from the bundle's int8 vectors) and rank, the RRF score, how
well the query matches its name and aliases (exact, after dropping possessives, accents, hyphens and
the words "theorem", "lemma"...; coverage both ways), lengths, its source and kind, and whether the
query reads as a noun phrase (definition intent) against the document's kind.

The model is gradient-boosted trees (trained offline with LightGBM's lambdarank objective by
``mathlas_build.training.ltr``) stored with the bundle as ``ranker/model.json``: each tree's nodes as
flat arrays, evaluated for all candidates and all trees at once in numpy (``TreeModel``); or a
linear model (``{"kind": "linear", "weights": [...], "bias": b}``). The manifest's ``ranker`` block
names the file, the feature list it was trained with and its measured figures; a bundle without it
keeps RRF. The model's feature list must be ``FEATURES``, optionally followed by some of
``EXTRA_FEATURES`` in their order (else the bundle is refused in one line): per-document columns a
formal bundle knows (its declarations' PageRank; 0 on a bundle without the column), read only by a
model trained with them.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mathlas.errors import BundleCorruptError
from mathlas.ranking.query import Kept
from mathlas.ranking.text import strip_accents

RANKER_DIR = "ranker"
MODEL_FILE = "model.json"
DOCINFO_FILE = "docinfo.npz"

SOURCES = ("stacks", "planetmath", "proofwiki", "metamath", "hott", "openlogic", "napkin", "proofnet", "lean")
KIND_GROUPS = {
    "theorem": "statement", "lemma": "statement", "proposition": "statement", "corollary": "statement",
    "result": "statement", "axiom": "statement", "conjecture": "statement", "fact": "statement",
    "definition": "definition", "def": "definition", "structure": "definition", "class": "definition",
    "inductive": "definition", "abbrev": "definition", "instance": "definition",
    "proof": "proof", "example": "example", "exercise": "example", "remark": "other",
}
GROUPS = ("statement", "definition", "proof", "example", "other")
FEATURES = (
    "lex_score", "lex_rel", "lex_logrank", "in_lex",
    "cos", "cos_gap", "dense_logrank", "in_dense",
    "rrf",
    "name_exact", "name_core_exact", "q_in_name", "name_in_q", "alias_exact", "q_in_name_idf", "name_in_q_idf",
    "q_words", "doc_loglen",
    *(f"src_{s}" for s in SOURCES),
    *(f"kind_{g}" for g in GROUPS),
    "def_intent", "def_intent_x_definition",
)
F = {name: i for i, name in enumerate(FEATURES)}
# Per-document columns a model may read after FEATURES (its spec names them): ``log_pagerank`` is
# log(N x PageRank) of a declaration in its bundle's dependency graph (how much rests on it; the
# ``pagerank`` column of a formal bundle), ``deprecated`` whether it is, ``generated`` whether a tool
# made the declaration (``@[simps]``, ``to_additive``). A bundle without the column gives 0.
EXTRA_FEATURES = ("log_pagerank", "deprecated", "generated")
ABSENT_RANK = 200.0
# The channel depth the features read, whatever the request's depth (mathlas.ranking.plan.FUSION_DEPTH,
# what a request of up to 100 hits ranks and what the models were trained on): see LearnedRank._capped
FEATURE_DEPTH = 100


def extras_of(names) -> tuple[str, ...]:
    """The extra features a model's feature list adds to ``FEATURES``; ValueError when the list is
    not ``FEATURES`` followed by some of ``EXTRA_FEATURES`` in their order."""
    names = list(names or ())
    extras = tuple(names[len(FEATURES):])
    if names[:len(FEATURES)] != list(FEATURES) or [e for e in EXTRA_FEATURES if e in extras] != list(extras):
        raise ValueError("its feature list differs from this mathlas's (mathlas.ranking.learned.FEATURES, "
                         "then some of EXTRA_FEATURES)")
    return extras

# Words that name what kind of result a name is, not which one: "Nakayama's lemma" = "Nakayama".
NAME_NOISE = frozenset("""the a an of theorem theorems lemma lemmas proposition corollary conjecture law
principle formula identity inequality criterion rule property""".split())
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")


def fold(text: str) -> str:
    """Lower case, accents off, possessives off: ``Bézout's`` -> ``bezout``."""
    return strip_accents(_POSSESSIVE.sub("", text or "")).lower()


# A query's words are read some six times a search (the plan's name checks, the features, the named
# stage), each a regex pass or two: the last WORDS_KEPT texts' words are kept (``forget_words``).
WORDS_KEPT = 4096
_WORDS = Kept(lambda text: tuple(_WORD.findall(fold(text))), WORDS_KEPT)


def words(text: str) -> list[str]:
    """The words of ``text`` as names are compared: ``fold``ed (lower case, accents and possessives
    off), letters and digits only."""
    return list(_WORDS(text))


def forget_words() -> None:
    """Drop the kept words (``Pipeline.forget_queries``: a benchmark's new query reads its own again)."""
    _WORDS.forget()


def core(ws: list[str]) -> tuple[str, ...]:
    return tuple(w for w in ws if w not in NAME_NOISE)


def _hash(ws) -> int:
    """A stable 63-bit hash of a word sequence (the same in every process: it is stored with the bundle)."""
    digest = hashlib.blake2b("\x1f".join(ws).encode("utf-8"), digest_size=8).digest()
    return (int.from_bytes(digest, "little") >> 1) or 1


def _csr(sets: list, vocab: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(sets) + 1, dtype=np.int64)
    ids: list[int] = []
    for i, ws in enumerate(sets):
        ids.extend(vocab[w] for w in ws)
        ptr[i + 1] = len(ids)
    return ptr, np.asarray(ids, dtype=np.int64)


LABEL_NAMED = frozenset({"stacks", "hott"})


@dataclass
class DocInfo:
    """Per-document arrays the features need, made once per bundle (~0.5 s for 65k documents)."""
    source: np.ndarray        # int8 index into SOURCES (-1: other)
    group: np.ndarray         # int8 index into GROUPS
    loglen: np.ndarray        # float32 log(1 + characters of the text)
    vocab: dict               # name/alias word -> id
    idf: np.ndarray           # per word id: log(N / df) over the names and aliases
    name_ptr: np.ndarray      # CSR: the distinct core words of each name
    name_ids: np.ndarray
    name_mass: np.ndarray     # per key: the idf mass of its core name words
    any_ptr: np.ndarray       # CSR: the distinct core words of its name and aliases
    any_ids: np.ndarray
    name_hash: np.ndarray     # per key: hash of its whole name's words (0: no name)
    core_hash: np.ndarray     # per key: hash of its name's core words (0: none)
    alias_cores: dict         # hash of an alias's core words -> keys holding it
    extra: dict = field(default_factory=dict)   # EXTRA_FEATURES name -> float32 per key (the bundle has it)

    @classmethod
    def of(cls, table) -> DocInfo:
        src_code = {s: i for i, s in enumerate(SOURCES)}
        grp_code = {g: i for i, g in enumerate(GROUPS)}
        col = table.column
        source = np.array([src_code.get(s, -1) for s in col("source").to_pylist()], dtype=np.int8)
        group = np.array([grp_code[KIND_GROUPS.get(k or "", "other")] for k in col("kind").to_pylist()], dtype=np.int8)
        import pyarrow.compute as pc

        lengths = pc.fill_null(pc.utf8_length(col("text")), 0).to_numpy(zero_copy_only=False)
        loglen = np.log1p(lengths.astype(np.float32))
        names = [words(n) if n else [] for n in col("name").to_pylist()]
        alias_col = col("aliases").to_pylist() if "aliases" in table.column_names else [None] * len(names)
        n = len(names)
        name_sets, any_sets = [], []
        name_hash = np.zeros(n, dtype=np.int64)
        core_hash = np.zeros(n, dtype=np.int64)
        alias_cores: dict[int, list[int]] = {}
        df: dict[str, int] = {}
        for key, (name, al) in enumerate(zip(names, alias_col)):
            c = core(name)
            if name:
                name_hash[key] = _hash(name)
            if c:
                core_hash[key] = _hash(c)
            ns = set(c)
            anyw = set(ns)
            if al:
                for a in al.split(";"):
                    ac = core(words(a))
                    if ac:
                        alias_cores.setdefault(_hash(ac), []).append(key)
                        anyw.update(ac)
            name_sets.append(ns)
            any_sets.append(anyw)
            for w in anyw:
                df[w] = df.get(w, 0) + 1
        vocab = {w: i for i, w in enumerate(df)}
        idf = np.array([math.log(max(1, n) / df[w]) for w in df], dtype=np.float64)
        name_ptr, name_ids = _csr(name_sets, vocab)
        any_ptr, any_ids = _csr(any_sets, vocab)
        seg = np.repeat(np.arange(n), np.diff(name_ptr))
        name_mass = np.bincount(seg, weights=idf[name_ids], minlength=n)
        return cls(source, group, loglen, vocab, idf, name_ptr, name_ids, name_mass, any_ptr, any_ids,
                   name_hash, core_hash, {h: np.asarray(v, dtype=np.int64) for h, v in alias_cores.items()},
                   extra_columns(table))

    ARRAYS = ("source", "group", "loglen", "idf", "name_ptr", "name_ids", "name_mass", "any_ptr", "any_ids",
              "name_hash", "core_hash")

    def one_hot_rows(self) -> np.ndarray | None:
        """The two rows of ``FEATURES`` each document sets to 1 (its source's and its kind group's), a
        (2 x documents) array made on first use; None when a document's source is outside ``SOURCES``."""
        got = self.__dict__.get("_one_hot")
        if got is None:
            known = not len(self.source) or int(self.source.min()) >= 0
            got = self.__dict__["_one_hot"] = (np.stack((_SRC0 + self.source.astype(np.intp),
                                                         _GRP0 + self.group.astype(np.intp))) if known else False)
        return got if got is not False else None

    def both(self) -> tuple[np.ndarray, np.ndarray]:
        """One CSR of ``2 * documents`` rows, made on first use: row ``key`` the key's ``any`` words,
        row ``documents + key`` its ``name`` words (``features`` reads both in one pass)."""
        got = self.__dict__.get("_both")
        if got is None:
            ptr = np.concatenate((self.any_ptr[:-1], self.name_ptr + self.any_ptr[-1]))
            got = self.__dict__["_both"] = (ptr, np.concatenate((self.any_ids, self.name_ids)))
        return got

    def save(self, path: Path) -> None:
        """Write the arrays (``ranker/docinfo.npz``): a bundle that carries them opens its learned
        stage without reading every name (about 0.5 s for 65k documents)."""
        holders = sorted(self.alias_cores.items())
        arrays = {k: getattr(self, k) for k in self.ARRAYS}
        for k in ("name_ptr", "name_ids", "any_ptr", "any_ids"):  # int32 on disk: half the bytes
            arrays[k] = arrays[k].astype(np.int32)
        encoded = [w.encode("utf-8") for w in self.vocab]
        arrays["words"] = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        arrays["words_ptr"] = np.cumsum([0] + [len(w) for w in encoded]).astype(np.int64)
        arrays["alias_hash"] = np.array([h for h, _ in holders], dtype=np.int64)
        arrays["alias_ptr"] = np.cumsum([0] + [len(v) for _, v in holders]).astype(np.int64)
        arrays["alias_keys"] = (np.concatenate([v for _, v in holders]) if holders
                                else np.zeros(0, dtype=np.int64)).astype(np.int64)
        for k, v in self.extra.items():
            arrays[f"extra_{k}"] = v
        with open(path, "wb") as f:
            np.savez(f, **arrays)

    @classmethod
    def load(cls, path: Path, count: int) -> DocInfo:
        with np.load(path, allow_pickle=False) as z:
            extra = {k[len("extra_"):]: z[k] for k in z.files if k.startswith("extra_")}
            got = {k: z[k] for k in cls.ARRAYS}
            for k in ("name_ptr", "name_ids", "any_ptr", "any_ids"):
                got[k] = got[k].astype(np.int64)
            blob, ptr = z["words"].tobytes(), z["words_ptr"].tolist()
            words_ = [blob[ptr[i]:ptr[i + 1]].decode("utf-8") for i in range(len(ptr) - 1)]
            ah, ap, ak = z["alias_hash"], z["alias_ptr"], z["alias_keys"]
        if len(got["source"]) != count or len(got["name_ptr"]) != count + 1 or len(words_) != len(got["idf"]):
            raise ValueError(f"it describes {len(got['source'])} documents, the bundle has {count}")
        alias = {int(h): ak[ap[i]:ap[i + 1]] for i, h in enumerate(ah.tolist())}
        if any(len(v) != count for v in extra.values()):
            raise ValueError(f"its extra columns do not describe the bundle's {count} documents")
        return cls(vocab={w: i for i, w in enumerate(words_)}, alias_cores=alias, extra=extra, **got)


def extra_columns(table) -> dict[str, np.ndarray]:
    """The ``EXTRA_FEATURES`` a bundle's table holds the columns for (float32 per key)."""
    have = table.column_names
    out: dict[str, np.ndarray] = {}
    if "pagerank" in have:
        pr = np.asarray(table.column("pagerank").to_numpy(zero_copy_only=False), dtype=np.float64)
        out["log_pagerank"] = np.log(np.maximum(np.nan_to_num(pr), 1e-6)).astype(np.float32)
    for name in ("deprecated", "generated"):
        if name in have:
            out[name] = np.array([1.0 if x not in (None, "", False, 0) else 0.0
                                  for x in table.column(name).to_pylist()], dtype=np.float32)
    return out


def _segments(ptr: np.ndarray, ids: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The word ids of ``keys``' CSR rows, concatenated, the row (0..len(keys)-1) each belongs to, and
    each row's length."""
    starts = ptr[keys]
    lens = ptr[keys + 1] - starts
    seg = np.repeat(np.arange(len(keys)), lens)
    if not len(seg):
        return ids[:0], seg, lens
    offsets = np.cumsum(lens) - lens
    return ids[np.repeat(starts - offsets, lens) + np.arange(len(seg))], seg, lens


def _log_ranks(rank: np.ndarray) -> np.ndarray:
    """log(1 + 0-based rank) as float32, log(1 + ABSENT_RANK) for an absent one (rank 0), from a 1-based rank."""
    if not len(rank) or rank.dtype.kind not in "iu" or rank.max() >= len(_LOG_RANK):
        return np.where(rank > 0, np.log1p(np.maximum(rank - 1, 0)), math.log1p(ABSENT_RANK)).astype(np.float32)
    return np.take(_LOG_RANK, rank, mode="clip")  # clip: a rank below 1 is absent, as the formula has it


# the same formula over every rank up to 1024, once (a rank is a small integer; the table is 4 KB)
_ranks = np.arange(1025, dtype=np.int64)
_LOG_RANK = np.where(_ranks > 0, np.log1p(np.maximum(_ranks - 1, 0)), math.log1p(ABSENT_RANK)).astype(np.float32)
del _ranks


def ranks_in(ranking, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """1-based rank (0: absent) and raw score (NaN: absent) of ``keys`` in one channel's ``Ranking``."""
    rank = np.zeros(len(keys), dtype=np.int64)
    raw = np.full(len(keys), np.nan)
    if ranking is None or not len(ranking):
        return rank, raw
    where = {int(k): i for i, k in enumerate(ranking.keys.tolist())}
    for j, k in enumerate(keys.tolist()):
        i = where.get(k)
        if i is not None:
            rank[j] = i + 1
            raw[j] = ranking.scores[i]
    return rank, raw


def features(info: DocInfo, query: str, keys: np.ndarray, lex_rank: np.ndarray, lex_raw: np.ndarray,
             dense_rank: np.ndarray, cosines: np.ndarray, rrf_scores: np.ndarray, intent: bool,
             extras: tuple[str, ...] = ()) -> np.ndarray:
    """The ``FEATURES`` matrix (len(keys) x len(FEATURES)) of a candidate pool: ranks 1-based (0: the
    channel did not rank it), ``lex_raw`` BM25 (NaN: absent), ``cosines`` for every candidate; with
    ``extras`` (some of ``EXTRA_FEATURES``), those columns after them (0 where the bundle lacks one).

    Filled one feature at a time into a feature-major array and returned as its transpose (a view):
    each feature is one contiguous write, and ``TreeModel.score`` reads the features of every node
    as contiguous rows (``X.T``)."""
    n = len(keys)
    Xt = np.zeros((len(FEATURES) + len(extras), n), dtype=np.float32)
    for j, name in enumerate(extras):
        column = info.extra.get(name)
        if column is not None and n:
            Xt[len(FEATURES) + j] = column[keys]
    lex_rank, lex_raw, dense_rank = np.asarray(lex_rank), np.asarray(lex_raw), np.asarray(dense_rank)
    present = lex_rank > 0
    ls = Xt[_LEX_SCORE]
    ls[:] = np.where(present & (lex_raw == lex_raw), lex_raw, 0.0)   # absent or NaN: 0
    top_lex = float(ls.max()) if n else 0.0
    Xt[_LEX_REL] = ls / (top_lex if top_lex > 0 else 1.0)
    Xt[_LEX_LOGRANK] = _log_ranks(lex_rank)
    Xt[_IN_LEX] = present
    Xt[_COS] = cosines
    Xt[_COS_GAP] = cosines - (float(cosines.max()) if n else 0.0)
    Xt[_DENSE_LOGRANK] = _log_ranks(dense_rank)
    Xt[_IN_DENSE] = dense_rank > 0
    Xt[_RRF] = rrf_scores
    qw = words(query)
    qcore = core(qw)
    qset = set(qcore)
    unseen = math.log(max(2, len(info.name_hash)))  # a word no name holds: as rare as can be
    q_known = np.array([info.vocab[w] for w in qset if w in info.vocab], dtype=np.int64)
    q_mass = (float(info.idf[q_known].sum()) + unseen * (len(qset) - len(q_known))) or 1.0
    if n:
        if qw:
            Xt[_NAME_EXACT] = info.name_hash[keys] == _hash(qw)
        if qcore:
            h = _hash(qcore)
            Xt[_NAME_CORE_EXACT] = info.core_hash[keys] == h
            holders = info.alias_cores.get(h)
            if holders is not None:
                Xt[_ALIAS_EXACT] = np.isin(keys, holders)
        # the name-word features: 0 unless a query word is a name word a candidate's name holds.
        # One pass over both CSRs (``DocInfo.both``): rows 0..n-1 the candidates' name-and-alias
        # words, rows n..2n-1 their name words, each row's words in its own order (the sums too)
        if len(q_known):
            in_q = np.zeros(len(info.idf) + 1, dtype=bool)
            in_q[q_known] = True
            ptr, ids = info.both()
            w, seg, size = _segments(ptr, ids, np.concatenate((keys, keys + len(info.name_hash))))
            hit = in_q[w]
            if hit.any():
                count = np.bincount(seg, weights=hit, minlength=2 * n)
                mass_hit = np.bincount(seg, weights=hit * info.idf[w], minlength=2 * n)
                Xt[_Q_IN_NAME] = count[:n] / len(qset)
                Xt[_Q_IN_NAME_IDF] = mass_hit[:n] / q_mass
                has = size[n:] > 0
                Xt[_NAME_IN_Q] = np.where(has, count[n:] / np.maximum(size[n:], 1), 0)
                mass = info.name_mass[keys]
                Xt[_NAME_IN_Q_IDF] = np.where(has, mass_hit[n:] / np.where(mass > 0, mass, 1.0), 0)
    Xt[_Q_WORDS] = math.log1p(len(qw))
    Xt[_DOC_LOGLEN] = info.loglen[keys]
    # one-hot source and kind group: one scattered write (a source outside SOURCES, -1, sets none)
    cols = np.arange(n)
    rows = info.one_hot_rows()
    if rows is not None:  # every document of a source in SOURCES: both rows of every candidate at once
        if n:
            Xt[rows[:, keys], cols] = 1.0
    else:
        for first, code in ((_SRC0, info.source[keys]), (_GRP0, info.group[keys])):
            if n and code.min() >= 0:
                Xt[first + code.astype(np.intp), cols] = 1.0
            elif n:
                known = code >= 0
                Xt[first + code[known].astype(np.intp), cols[known]] = 1.0
    if intent:
        Xt[_DEF_INTENT] = 1.0
        Xt[_DEF_INTENT_X_DEFINITION] = info.group[keys] == _DEFINITION
    return Xt.T


(_LEX_SCORE, _LEX_REL, _LEX_LOGRANK, _IN_LEX, _COS, _COS_GAP, _DENSE_LOGRANK, _IN_DENSE, _RRF, _NAME_EXACT,
 _NAME_CORE_EXACT, _Q_IN_NAME, _NAME_IN_Q, _ALIAS_EXACT, _Q_IN_NAME_IDF, _NAME_IN_Q_IDF, _Q_WORDS, _DOC_LOGLEN) = (
    F[f] for f in ("lex_score", "lex_rel", "lex_logrank", "in_lex", "cos", "cos_gap", "dense_logrank", "in_dense",
                   "rrf", "name_exact", "name_core_exact", "q_in_name", "name_in_q", "alias_exact", "q_in_name_idf",
                   "name_in_q_idf", "q_words", "doc_loglen"))
_DEF_INTENT, _DEF_INTENT_X_DEFINITION = F["def_intent"], F["def_intent_x_definition"]
_SRC0 = F[f"src_{SOURCES[0]}"]
_GRP0 = F[f"kind_{GROUPS[0]}"]
_DEFINITION = GROUPS.index("definition")
assert [F[f"src_{s}"] for s in SOURCES] == list(range(_SRC0, _SRC0 + len(SOURCES)))
assert [F[f"kind_{g}"] for g in GROUPS] == list(range(_GRP0, _GRP0 + len(GROUPS)))


class TreeModel:
    """Gradient-boosted regression trees, scored for every candidate and every tree at once.

    The trees come as flat node arrays (``feature``, ``threshold``, ``left``, ``right``, ``value``; a
    leaf points to itself). They are scored the QuickScorer way (Lucchese et al., SIGIR 2015): each
    internal node carries the bitmask of its left subtree's leaves, which a candidate cannot reach
    when the node's test fails; a candidate's leaf in a tree is the lowest leaf that no failed test
    of that tree rules out. So a pool is one comparison of every candidate against every node's
    threshold, one OR over each tree's nodes and one lookup: no loop over levels or trees in Python.
    At most 64 leaves a tree.

    Node-major arrays, a tree's nodes at the same slot of every tree side by side (trees with fewer
    nodes padded with tests that never fail), so the OR over a tree's nodes is an OR of whole
    slices; masks as narrow as the widest tree allows (16 bits for 15 leaves), and the lowest leaf
    left read from a table. The leaf values are summed per candidate in tree order, one contiguous
    row each.
    """

    def __init__(self, spec: dict):
        trees, leaf_values, offsets, constant = [], [], [], 0.0
        for t in spec["trees"]:
            feature, threshold = t["feature"], t["threshold"]
            left, right, value = t["left"], t["right"], t["value"]
            leaves: list[int] = []        # node ids of the leaves, left to right
            first: dict[int, int] = {}    # node -> index of its subtree's first leaf
            count: dict[int, int] = {}    # node -> number of leaves in its subtree
            internal: list[int] = []

            def walk(i: int) -> None:
                first[i] = len(leaves)
                if left[i] == i:
                    leaves.append(i)
                else:
                    internal.append(i)
                    walk(left[i])
                    walk(right[i])
                count[i] = len(leaves) - first[i]

            walk(0)
            if len(leaves) > 64:
                raise ValueError(f"a tree has {len(leaves)} leaves; at most 64")
            if not internal:  # a single leaf adds a constant
                constant += float(value[leaves[0]])
                continue
            # per internal node: its feature, its threshold and the leaves of its left subtree
            trees.append([(int(feature[i]), float(threshold[i]), ((1 << count[left[i]]) - 1) << first[left[i]])
                          for i in internal])
            offsets.append(len(leaf_values))
            leaf_values.extend(float(value[i]) for i in leaves)
        widest = max((len(v) for v in trees), default=0) + 1     # leaves = internal nodes + 1
        bits = next(b for b in (8, 16, 32, 64) if widest <= b)
        self.bits = np.dtype(f"uint{bits}")
        slots = widest - 1
        # slot j of tree t at row j * len(trees) + t; a padding node never fails (x > +inf) and rules out nothing
        self.feature = np.zeros(slots * len(trees), dtype=np.intp)
        self.threshold = np.full(slots * len(trees), np.inf, dtype=np.float32)
        self.left_leaves = np.zeros(slots * len(trees), dtype=self.bits)
        for t, nodes in enumerate(trees):
            for j, (f, thr, mask) in enumerate(nodes):
                self.feature[j * len(trees) + t], self.threshold[j * len(trees) + t] = f, thr
                self.left_leaves[j * len(trees) + t] = mask
        self.slots = slots
        self.offsets = np.asarray(offsets, dtype=np.intp)
        self.leaf_values = np.asarray(leaf_values, dtype=np.float64)
        self.base = float(spec.get("base", 0.0)) + constant
        self.trees = len(spec["trees"])
        self._threshold_col = self.threshold[:, None]
        self._left_col = self.left_leaves[:, None]
        self._shaped = Kept(self._shape, SHAPED_KEPT)

    def _for(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The thresholds and left-leaf masks as (nodes x ``n``) arrays, made once for the last few
        pool sizes: a comparison of two whole arrays is one loop, where a column broadcast over
        ``n`` candidates runs one short loop per node (some 3x the time at 100 candidates)."""
        return (self._threshold_col, self._left_col) if n > SHAPED_MAX else self._shaped(n)

    def _shape(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        shaped = (np.repeat(self._threshold_col, n, axis=1), np.repeat(self._left_col, n, axis=1))
        for a in shaped:
            a.setflags(write=False)  # shared by every thread that scores a pool of this size
        return shaped

    def score(self, X: np.ndarray) -> np.ndarray:
        if not len(self.offsets):
            return np.full(len(X), self.base)
        n, m = len(X), len(self.offsets)
        Xt = X.T if X.T.flags.c_contiguous else np.ascontiguousarray(X.T)   # features x candidates
        threshold, left = self._for(n)
        # the test "x <= threshold" fails (go right): the node's left leaves are out of reach
        out = (np.take(Xt, self.feature, axis=0) > threshold) * left
        ruled_out = np.bitwise_or.reduce(out.reshape(self.slots, m, n), axis=0)   # trees x candidates
        if self.bits.itemsize <= 2:
            leaf = np.take(_LOWEST_ZERO, ruled_out)
        else:
            reach = ~ruled_out
            leaf = np.log2((reach & (~reach + self.bits.type(1))).astype(np.float64)).astype(np.intp)
        # candidates x trees, contiguous: each candidate's sum over its trees in tree order (one addition
        # into a C-ordered array, not an addition and a transposing copy)
        index = np.add(leaf.T, self.offsets, out=np.empty((n, m), dtype=np.intp))
        return self.leaf_values[index].sum(axis=1) + self.base


# TreeModel._for: pool sizes whose node-shaped arrays are kept (a hybrid pool is mostly the fusion
# depth, 100), and the largest (some 8 bytes a node and candidate: 1.1 MB for 1,400 nodes x 100)
SHAPED_KEPT = 4
SHAPED_MAX = 512


def _lowest_zeros() -> np.ndarray:
    """Per 16-bit value, the index of its lowest zero bit (the exit leaf: the lowest not ruled out)."""
    out = np.zeros(1 << 16, dtype=np.uint8)
    for b in range(16):
        out[(1 << b) - 1::1 << (b + 1)] = b   # the values whose lowest b bits are 1 and bit b is 0
    return out


_LOWEST_ZERO = _lowest_zeros()


class LinearModel:
    def __init__(self, spec: dict):
        self.w = np.asarray(spec["weights"], dtype=np.float32)
        self.mean = np.asarray(spec.get("mean", np.zeros_like(self.w)), dtype=np.float32)
        self.scale = np.asarray(spec.get("scale", np.ones_like(self.w)), dtype=np.float32)
        self.bias = float(spec.get("bias", 0.0))

    def score(self, X: np.ndarray) -> np.ndarray:
        X = np.ascontiguousarray(X)  # one row per candidate, as the products were always taken
        return ((X - self.mean) / self.scale) @ self.w + self.bias


def model_from_spec(spec: dict):
    """The model of a spec (``kind`` trees or linear); its ``extras``: the ``EXTRA_FEATURES`` it reads."""
    extras = extras_of(spec.get("features"))
    if spec.get("kind") == "trees":
        model = TreeModel(spec)
    elif spec.get("kind") == "linear":
        model = LinearModel(spec)
    else:
        raise ValueError(f"unknown model kind {spec.get('kind')!r}")
    model.extras = extras
    return model


def load_model(root: Path, name: str):
    """The model a bundle's manifest names (``ranker.file``), refused in one line when unreadable."""
    path = Path(root) / RANKER_DIR / Path(name).name
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
        return model_from_spec(spec)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        raise BundleCorruptError(f"bundle {Path(root).name}: cannot read its ranking model {path.name} ({e}); "
                                 "reinstall the bundle") from None


# ------------------------------------------------------------------------------ the stage

_MODELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_MODELS_LOCK = threading.Lock()


def bundle_model(bundle):
    """(model, DocInfo) of a bundle whose manifest declares a ``ranker``, made once per bundle; None
    for a bundle without one (it keeps RRF)."""
    spec = getattr(bundle.manifest, "ranker", None) or {}
    if not spec:
        return None
    with _MODELS_LOCK:
        got = _MODELS.get(bundle)
        if got is None:
            try:
                extras_of(spec.get("features"))
            except ValueError:
                raise BundleCorruptError(f"bundle {bundle.root.name}: its ranking model reads other features than "
                                         "this mathlas computes; install a bundle made for this version") from None
            model = load_model(bundle.root, spec.get("file", MODEL_FILE))
            info = _doc_info(bundle, spec)
            if any(e not in info.extra for e in model.extras):   # a docinfo.npz made before the column was read
                info.extra.update(extra_columns(bundle.table))
            got = _MODELS[bundle] = (model, info)
        return got


def _doc_info(bundle, spec: dict) -> DocInfo:
    """The bundle's ``ranker/docinfo.npz`` when it carries one (``spec["docinfo"]``), else made from its table."""
    name = spec.get("docinfo")
    if not name:
        return DocInfo.of(bundle.table)
    path = Path(bundle.root) / RANKER_DIR / Path(name).name
    try:
        return DocInfo.load(path, len(bundle))
    except (OSError, ValueError, KeyError) as e:
        raise BundleCorruptError(f"bundle {bundle.root.name}: cannot read {RANKER_DIR}/{path.name} ({e}); "
                                 "reinstall the bundle") from None


class LearnedRank:
    """The learned ranking stage: the bundle's model (manifest ``ranker``) scores the fused pool's
    documents from ``FEATURES`` and they take its order. Runs for hybrid requests that leave the
    fusion settings (``k_rrf``, ``channel_weights``) alone, on bundles with a model; anything else
    keeps RRF. Source and kind weights still count: ``log(weight)`` is added to the model's score
    (weight 0 already keeps a document out of the pool). Saved findings (extra documents) are scored
    by the same model from their channel evidence (``_findings``) and take their place among them."""

    name = "learned"

    def __call__(self, pool, ctx):
        req = ctx.request
        if (len(pool) < 2 or req.mode != "hybrid" or req.k_rrf is not None or req.channel_weights is not None
                or not getattr(req, "learned", True)):
            return pool
        got = bundle_model(ctx.bundle)
        if got is None:
            return pool
        model, info = got
        from mathlas.ranking.intent import definition_intent

        n = len(ctx.bundle)
        mine = pool.keys < n
        everyone = bool(mine.all())
        ours = np.arange(len(pool)) if everyone else np.flatnonzero(mine)
        if len(ours) < 2:
            return pool
        keys = pool.keys if everyone else pool.keys[ours]
        # the exact cosine of every candidate: the dense channel's own for those it ranked (it rescored
        # them with the same vectors), computed for the others
        cos = (pool.raw_in("dense") if everyone else pool.raw_in("dense")[ours]).astype(np.float32)
        missing = np.isnan(cos)
        if missing.any():
            cos[missing] = ctx.bundle.dense.rescore(ctx.query.vector(), keys[missing])
        if everyone:
            lex, dense, fused, lex_raw = pool.rank_in("lexical"), pool.rank_in("dense"), pool.scores, pool.raw_in("lexical")
        else:  # saved findings took places: the documents' own ranks, as without them
            lex, dense, fused = self._own(pool, ours, ctx.plan)
            lex_raw = pool.raw_in("lexical")[ours]
        if ctx.plan.depth > FEATURE_DEPTH:
            lex, dense, fused, lex_raw = self._capped(lex, dense, lex_raw, pool, ctx.plan)
        intent = definition_intent(ctx.plan.correction.query if ctx.plan.correction else req.query)
        X = features(info, ctx.query.text, keys, lex, lex_raw, dense, cos, fused.astype(np.float32), intent,
                     model.extras)
        score = model.score(X)
        if ctx.plan.key_weights is not None:
            w = np.asarray(ctx.plan.key_weights(keys), dtype=np.float64)
            score = score + np.log(np.where(w > 0, w, 1e-12))
        # the answer's confidence reads the model's best scores of the bundle's documents (mode "learned")
        ctx.notes["learned"] = np.sort(score)[::-1][:10].tolist()
        if everyone:
            scores = np.asarray(score, dtype=np.float64)
        else:
            scores = pool.scores.astype(np.float64)
            scores[ours] = score
            # saved findings: scored by the same model, as documents without a name or source
            extra = np.flatnonzero(~mine)
            scores[extra] = self._findings(model, info, ctx, pool, extra, X, n, intent)
        order = np.lexsort((pool.keys, -scores))              # ties: the lower key first (deterministic)
        return pool.take(order).rescored(scores[order])

    @staticmethod
    def _capped(lex: np.ndarray, dense: np.ndarray, lex_raw: np.ndarray, pool, plan):
        """The channel evidence as a pool ``FEATURE_DEPTH`` deep has it: a rank beyond it absent (no
        BM25 score), the RRF score made of the ranks left. A request of more than ``FEATURE_DEPTH`` hits
        ranks each channel deeper, and without this a document BM25 ranks 151st would read as lexical
        evidence at k = 200 and as none at k = 10: the order and the confidence of the first hits
        would depend on k."""
        lex = np.where(lex > FEATURE_DEPTH, 0, lex)
        dense = np.where(dense > FEATURE_DEPTH, 0, dense)
        lex_raw = np.where(lex > 0, lex_raw, np.nan)
        return lex, dense, LearnedRank._fused({"lexical": lex, "dense": dense}, pool, plan), lex_raw

    @staticmethod
    def _fused(own: dict, pool, plan) -> np.ndarray:
        """The RRF score of each channel's ranks in ``own`` (1-based, 0 absent), fused as the plan fuses."""
        from mathlas.ranking.fusion import rrf_scores

        channels = [c for c in pool.channels if c in own]
        weights = np.array([float(plan.channel_weights.get(c, 1.0)) for c in channels])
        return rrf_scores(np.stack([own[c] for c in channels], axis=1), weights, plan.k_rrf)

    @staticmethod
    def _own(pool, ours: np.ndarray, plan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The bundle documents' ranks in each channel and their RRF score as the bundle's own rankings
        give them, without the saved findings merged in: a finding takes a place, it does not change
        what the model reads of the documents (so their order is theirs)."""
        extra = np.ones(len(pool), dtype=bool)
        extra[ours] = False
        own = {}
        for c in ("lexical", "dense"):
            r = pool.rank_in(c)
            taken = np.sort(r[extra & (r > 0)])
            mine = r[ours]
            own[c] = np.where(mine > 0, mine - np.searchsorted(taken, mine), 0)
        return own["lexical"], own["dense"], LearnedRank._fused(own, pool, plan)

    @staticmethod
    def _findings(model, info: DocInfo, ctx, pool, rows: np.ndarray, X: np.ndarray, n: int,
                  intent: bool) -> np.ndarray:
        """The model's scores of saved findings (pool ``rows``): their channel evidence as the pool has it
        (BM25 on the bundle's statistics, cosine), their length, the kind of a statement; no name or source.
        The relative features (share of the best BM25, gap to the best cosine) read the best over the
        bundle's candidates and the findings together."""
        m = len(rows)
        positions = pool.keys[rows] - n
        cos = np.nan_to_num(pool.raw_in("dense")[rows].astype(np.float32), nan=np.float32(X[:, F["cos"]].min()))
        empty = np.zeros(m + 1, dtype=np.int64)
        texts = [ctx.extra.text(int(p)) for p in positions]
        # a saved finding is a statement someone found (its kind for the model), of no source of the bundle
        finfo = DocInfo(source=np.full(m, -1, dtype=np.int8), group=np.full(m, GROUPS.index("statement"), dtype=np.int8),
                        loglen=np.log1p(np.array([len(t) for t in texts], dtype=np.float32)), vocab=info.vocab,
                        idf=info.idf, name_ptr=empty, name_ids=empty[:0], name_mass=np.zeros(m), any_ptr=empty,
                        any_ids=empty[:0], name_hash=np.zeros(m, dtype=np.int64),
                        core_hash=np.zeros(m, dtype=np.int64), alias_cores={})
        Xf = features(finfo, ctx.query.text, np.arange(m), pool.rank_in("lexical")[rows], pool.raw_in("lexical")[rows],
                      pool.rank_in("dense")[rows], cos, pool.scores[rows].astype(np.float32), intent, model.extras)
        top_lex = max(float(X[:, F["lex_score"]].max()), float(Xf[:, F["lex_score"]].max()))
        Xf[:, F["lex_rel"]] = Xf[:, F["lex_score"]] / (top_lex if top_lex > 0 else 1.0)
        Xf[:, F["cos_gap"]] = Xf[:, F["cos"]] - max(float(X[:, F["cos"]].max()), float(Xf[:, F["cos"]].max()))
        return model.score(Xf)
