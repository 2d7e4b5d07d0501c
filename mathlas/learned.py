"""The learned ranking stage: features of a candidate pool and a small model evaluated in numpy.

Candidates are the union of every channel's ranking (lexical BM25 and dense, each ``depth`` deep).
Each candidate gets ``FEATURES``: its BM25 score and rank, its exact dense cosine (computed for every
candidate, the lexical-only ones too, from the bundle's int8 vectors) and rank, the RRF score, how
well the query matches its name and aliases (exact, after dropping possessives, accents, hyphens and
the words "theorem", "lemma"...; coverage both ways), lengths, its source and kind, and whether the
query reads as a noun phrase (definition intent) against the document's kind.

The model is gradient-boosted trees (trained offline with LightGBM's lambdarank objective by
``mathlas_build.training.ltr``) stored with the bundle as ``ranker/model.json``: each tree's nodes as
flat arrays, evaluated for all candidates and all trees at once, level by level, in numpy; or a
linear model (``{"kind": "linear", "weights": [...], "bias": b}``). The manifest's ``ranker`` block
names the file, the feature list it was trained with and its measured figures; a bundle without it
keeps RRF. The model's feature list must equal ``FEATURES`` (else the bundle is refused in one line).
"""
from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mathlas.errors import BundleCorruptError

RANKER_DIR = "ranker"
MODEL_FILE = "model.json"

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
ABSENT_RANK = 200.0

# Words that name what kind of result a name is, not which one: "Nakayama's lemma" = "Nakayama".
NAME_NOISE = frozenset("""the a an of theorem theorems lemma lemmas proposition corollary conjecture law
principle formula identity inequality criterion rule property""".split())
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")


def fold(text: str) -> str:
    """Lower case, accents off, possessives off: ``Bézout's`` -> ``bezout``."""
    text = _POSSESSIVE.sub("", text or "")
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not unicodedata.combining(c)).lower()


def words(text: str) -> list[str]:
    return _WORD.findall(fold(text))


def core(ws: list[str]) -> tuple[str, ...]:
    return tuple(w for w in ws if w not in NAME_NOISE)


@dataclass
class DocInfo:
    """Per-document arrays the features need, made once per bundle."""
    source: np.ndarray        # int8 index into SOURCES (-1: other)
    group: np.ndarray         # int8 index into GROUPS
    loglen: np.ndarray        # float32 log(1 + characters of the text)
    names: list               # per key: tuple of name words (folded)
    aliases: list             # per key: list of tuples of alias words
    idf: dict                 # name/alias word -> log(N / df) over the names and aliases

    @classmethod
    def of(cls, table) -> "DocInfo":
        src_code = {s: i for i, s in enumerate(SOURCES)}
        grp_code = {g: i for i, g in enumerate(GROUPS)}
        col = table.column
        source = np.array([src_code.get(s, -1) for s in col("source").to_pylist()], dtype=np.int8)
        group = np.array([grp_code[KIND_GROUPS.get(k or "", "other")] for k in col("kind").to_pylist()], dtype=np.int8)
        import pyarrow.compute as pc

        lengths = pc.fill_null(pc.utf8_length(col("text")), 0).to_numpy(zero_copy_only=False)
        loglen = np.log1p(lengths.astype(np.float32))
        names = [tuple(words(n or "")) for n in col("name").to_pylist()]
        alias_col = col("aliases").to_pylist() if "aliases" in table.column_names else [None] * len(names)
        aliases = [[tuple(words(a)) for a in (x or "").split(";") if a.strip()] for x in alias_col]
        df: dict[str, int] = {}
        for n, al in zip(names, aliases):
            for w in set(n).union(*al) if al else set(n):
                df[w] = df.get(w, 0) + 1
        total = max(1, len(names))
        idf = {w: math.log(total / c) for w, c in df.items()}
        return cls(source, group, loglen, names, aliases, idf)


def _logrank(ranking, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """log(1 + rank), raw score and presence of ``keys`` in one channel's ranking."""
    n = len(keys)
    logrank = np.full(n, math.log1p(ABSENT_RANK), dtype=np.float32)
    score = np.zeros(n, dtype=np.float32)
    present = np.zeros(n, dtype=np.float32)
    if ranking is None or not len(ranking):
        return logrank, score, present
    where = {int(k): i for i, k in enumerate(ranking.keys.tolist())}
    for j, k in enumerate(keys.tolist()):
        i = where.get(k)
        if i is not None:
            logrank[j] = math.log1p(i)
            score[j] = ranking.scores[i]
            present[j] = 1.0
    return logrank, score, present


def features(info: DocInfo, query: str, keys: np.ndarray, rankings: dict, cosines: np.ndarray,
             rrf_scores: np.ndarray, intent: bool) -> np.ndarray:
    """The ``FEATURES`` matrix (len(keys) x len(FEATURES)) of a candidate pool."""
    n = len(keys)
    X = np.zeros((n, len(FEATURES)), dtype=np.float32)
    lr, ls, lp = _logrank(rankings.get("lexical"), keys)
    dr, _, dp = _logrank(rankings.get("dense"), keys)
    top_lex = float(ls.max()) if n and ls.max() > 0 else 1.0
    X[:, F["lex_score"]] = ls
    X[:, F["lex_rel"]] = ls / top_lex
    X[:, F["lex_logrank"]] = lr
    X[:, F["in_lex"]] = lp
    X[:, F["cos"]] = cosines
    X[:, F["cos_gap"]] = cosines - (float(cosines.max()) if n else 0.0)
    X[:, F["dense_logrank"]] = dr
    X[:, F["in_dense"]] = dp
    X[:, F["rrf"]] = rrf_scores
    qw = words(query)
    qcore = core(qw)
    qset = set(qcore)
    qtuple = tuple(qw)
    idf = info.idf
    unseen = math.log(max(2, len(info.names)))  # a word no name holds: as rare as can be
    q_idf = {w: idf.get(w, unseen) for w in qset}
    q_mass = sum(q_idf.values()) or 1.0
    for j, k in enumerate(keys.tolist()):
        name = info.names[k]
        alias = info.aliases[k]
        if name and name == qtuple:
            X[j, F["name_exact"]] = 1.0
        ncore = core(list(name))
        if ncore and ncore == qcore:
            X[j, F["name_core_exact"]] = 1.0
        vocab = set(ncore)
        for a in alias:
            acore = core(list(a))
            vocab.update(acore)
            if acore and acore == qcore:
                X[j, F["alias_exact"]] = 1.0
        if qset:
            X[j, F["q_in_name"]] = len(qset & vocab) / len(qset)
        if ncore:
            nset = set(ncore)
            X[j, F["name_in_q"]] = len(nset & qset) / len(nset)
            n_mass = sum(idf.get(w, unseen) for w in nset) or 1.0
            X[j, F["name_in_q_idf"]] = sum(idf.get(w, unseen) for w in nset & qset) / n_mass
        if qset:
            X[j, F["q_in_name_idf"]] = sum(q_idf[w] for w in qset & vocab) / q_mass
    X[:, F["q_words"]] = math.log1p(len(qw))
    X[:, F["doc_loglen"]] = info.loglen[keys]
    src = info.source[keys]
    for i, s in enumerate(SOURCES):
        X[:, F[f"src_{s}"]] = src == i
    grp = info.group[keys]
    for i, g in enumerate(GROUPS):
        X[:, F[f"kind_{g}"]] = grp == i
    X[:, F["def_intent"]] = 1.0 if intent else 0.0
    X[:, F["def_intent_x_definition"]] = X[:, F["def_intent"]] * (grp == GROUPS.index("definition"))
    return X


class TreeModel:
    """Gradient-boosted regression trees as flat arrays, evaluated level by level for all trees."""

    def __init__(self, spec: dict):
        trees = spec["trees"]
        self.depth = int(spec["depth"])
        size = max(len(t["feature"]) for t in trees)
        T = len(trees)
        self.feature = np.zeros((T, size), dtype=np.int32)
        self.threshold = np.zeros((T, size), dtype=np.float32)
        self.left = np.zeros((T, size), dtype=np.int32)
        self.right = np.zeros((T, size), dtype=np.int32)
        self.value = np.zeros((T, size), dtype=np.float32)
        for i, t in enumerate(trees):
            m = len(t["feature"])
            self.feature[i, :m] = t["feature"]
            self.threshold[i, :m] = t["threshold"]
            self.left[i, :m] = t["left"]
            self.right[i, :m] = t["right"]
            self.value[i, :m] = t["value"]
        self.rows = np.arange(T)[:, None]
        self.base = float(spec.get("base", 0.0))

    def score(self, X: np.ndarray) -> np.ndarray:
        T = self.feature.shape[0]
        node = np.zeros((T, X.shape[0]), dtype=np.int32)
        cols = np.arange(X.shape[0])[None, :]
        for _ in range(self.depth):
            f = self.feature[self.rows, node]
            go_left = X[cols, f] <= self.threshold[self.rows, node]
            node = np.where(go_left, self.left[self.rows, node], self.right[self.rows, node])
        return self.value[self.rows, node].sum(axis=0) + self.base


class LinearModel:
    def __init__(self, spec: dict):
        self.w = np.asarray(spec["weights"], dtype=np.float32)
        self.mean = np.asarray(spec.get("mean", np.zeros_like(self.w)), dtype=np.float32)
        self.scale = np.asarray(spec.get("scale", np.ones_like(self.w)), dtype=np.float32)
        self.bias = float(spec.get("bias", 0.0))

    def score(self, X: np.ndarray) -> np.ndarray:
        return ((X - self.mean) / self.scale) @ self.w + self.bias


def model_from_spec(spec: dict):
    if spec.get("features") != list(FEATURES):
        raise ValueError("its feature list differs from this mathlas's (mathlas.learned.FEATURES)")
    if spec.get("kind") == "trees":
        return TreeModel(spec)
    if spec.get("kind") == "linear":
        return LinearModel(spec)
    raise ValueError(f"unknown model kind {spec.get('kind')!r}")


def load_model(root: Path, name: str):
    """The model a bundle's manifest names (``ranker.file``), refused in one line when unreadable."""
    path = Path(root) / RANKER_DIR / Path(name).name
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
        return model_from_spec(spec)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        raise BundleCorruptError(f"bundle {Path(root).name}: cannot read its ranking model {path.name} ({e}); "
                                 "reinstall the bundle") from None
