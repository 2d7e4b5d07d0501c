"""How close an answer's best hits are to its query: a calibrated ``confidence`` in [0, 1] and a
``match`` of ``strong``, ``weak`` or ``none``, with a one-line ``note`` when it is not ``strong``.

Every search answers with ten hits whether or not the sources hold the math asked about. This module
reads the channels' own raw scores (``Bundle.rank(..., scores_out=...)`` hands over each channel's
ranking) and says how much those ten deserve to be trusted:

* dense: the top cosine ``d1``, its margin over the tenth ``d1 - d10`` and the top's lead over the
  rest of the top ten in their own spread (``(d1 - mean d2..d10) / std d1..d10``);
* lexical: the top BM25 score per distinct query word (BM25 adds one bounded term per matched
  word, so this is near its ceiling when the best document holds every rare word of the query), the
  same lead as for dense and ``log(l1 / l10)``;
* hybrid: whether the channels agree (the dense top hit is in the lexical top ten, or the lexical
  top hit in the dense top ten).

A logistic model of those features gives ``confidence``; ``none`` below ``none_below``, ``strong``
at ``strong_at`` or above, ``weak`` between. Its constants are fitted per mode by
``scripts/bench_match.py`` (on the judged collection: each query as asked, against the same queries
with their targets and the documents that restate them hidden, and asked of sources of another field;
``strong`` only where the first hit is a target 90% of the time); a bundle's manifest may carry its
own in ``fusion.match`` (``{"hybrid": {...}, ...}``), fitted the same way on its own dev set. The
numbers are in docs/benchmarks.md ("Knowing when nothing is known").

Plain arithmetic on the rankings' top ten: no model, no I/O, some 30 microseconds a query.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING
from collections.abc import Mapping

if TYPE_CHECKING:  # pragma: no cover
    from mathlas.ranking.candidates import Ranking

MATCHES = ("strong", "weak", "none")
STOPWORDS = frozenset("a an the of in on for and or to is are with by from as at its be that this every any "
                      "if then there".split())
# How many of each channel's top hits the features read (a ranking shorter than this is read whole).
TOP = 10
# The features each mode's model reads, in the order of its weights.
FEATURES = {
    "hybrid": ("d1", "d_margin", "d_lead", "l_per_word", "l_lead", "l_ratio", "agree"),
    "dense": ("d1", "d_margin", "d_lead"),
    "lexical": ("l_per_word", "l_lead", "l_ratio"),
    # a hybrid answer ordered by a bundle's learned model (mathlas.ranking.learned): its best scores
    "learned": ("s1", "s_margin", "s_lead", "d1", "l_per_word", "agree"),
}

# Fitted by scripts/bench_match.py on the default bundle (informal-1.6.1, whose channels are 1.6.0's; refit
# after every rebuild) and the judged collection's first round (``--set collection --strong-precision 0.9``:
# 464 queries with a target, its tune and check splits and informal-dev, each target and judged equivalent a
# target; refit when the later rounds' pooling judged more of their hits equivalent; weights over the raw
# features, in FEATURES order). On a bundle with a learned stage (1.4.0 on) a hybrid answer it
# orders uses the bundle's own model (mode "learned", manifest ranker.match); these serve every other
# answer: a channel alone, and hybrid answers that keep RRF. "strong" only where the queries at that
# confidence have their target first at least 90% of the time: the single channels never reach it on
# this collection (strong_at above 1: never strong). Leave-one-query-out, hybrid: false none .026
# [.01, .04]; none on the queries asked of sources of another field .899 [.87, .93]; none on the
# collection's 130 off-topic queries (50 sentences, 80 short) .946 (dense .985; lexical .19: BM25 alone
# finds words of a recipe somewhere). docs/benchmarks.md ("Knowing when nothing is known": the figures,
# and those of the informal-dev fit they replace, whose false none was .09-.17 on the collection).
FITTED_ON = "informal-1.6.1"  # the bundle DEFAULT_MATCH was fitted on (refit after a rebuild)
NEVER = 1.0001  # a strong_at no confidence reaches
DEFAULT_MATCH: dict[str, dict] = {
    "hybrid": {"weights": [8.9413, 2.9064, -0.0864, 0.1979, 0.242, 0.192, 0.3135], "bias": -7.1265,
               "none_below": 0.2207, "strong_at": 0.9053},
    "dense": {"weights": [9.7356, 4.72, -0.1537], "bias": -5.9966, "none_below": 0.2271, "strong_at": NEVER},
    "lexical": {"weights": [0.5626, 0.2629, -1.1714], "bias": -2.3946, "none_below": 0.314, "strong_at": NEVER},
}

NOTES = {
    "none": "nothing close was found: the sources may not hold this",
    "weak": "likely among these hits, but not sure",
    # weak, and why it says so (mathlas.service): a channel alone is never strong (its strong_at is NEVER)
    "channel": "likely among these hits, but not sure: one channel alone is never strong by its scores",
    # declarations named so were found where the channels found little: not "nothing close"
    "named": "declarations of this name were found, but the search's own confidence is low",
    # a query that reads as a result's name, and no hit is named so (mathlas.ranking.named.named_by_none)
    "unnamed": "no hit is named exactly so: likely among these hits, but not sure",
    # a result's name answered by a definition of its words (mathlas.ranking.named.definition_of_other_kind)
    "definition": "the first hit defines the name's words, not the result named: likely among these hits, but not sure",
    "empty": "nothing was found",
    "findings": "only saved findings were searched; their confidence is not calibrated",
}


@dataclass(frozen=True)
class Assessment:
    """An answer's ``confidence`` (0-1, two decimals), its ``match`` (strong, weak, none) and ``note`` (empty when strong)."""

    confidence: float
    match: str
    note: str


def _lead(s: list[float]) -> float:
    """The top score's lead over the rest of the top ``TOP``, in the spread of those scores."""
    if len(s) < 2:
        return 0.0
    mean = sum(s) / len(s)
    std = math.sqrt(sum((x - mean) ** 2 for x in s) / len(s))
    return (s[0] - sum(s[1:]) / (len(s) - 1)) / (std + 1e-6)


def query_words(query: str) -> int:
    """How many distinct words of ``query`` the lexical channel searches (stopwords left out)."""
    from mathlas.ranking.lexical import query_terms

    return len(set(query_terms(query)) - STOPWORDS)


def features(rankings: Mapping[str, Ranking], query: str = "") -> dict[str, float]:
    """The features of each channel's raw ranking for ``query`` (a missing or empty channel gives zeros)."""
    out = {name: 0.0 for name in ("d1", "d_margin", "d_lead", "l_per_word", "l_lead", "l_ratio", "agree")}
    dense, lexical = rankings.get("dense"), rankings.get("lexical")
    if dense is not None and len(dense):  # plain floats: numpy costs ~10x more on ten numbers
        d = dense.scores[:TOP].tolist()
        out.update(d1=d[0], d_margin=d[0] - d[-1], d_lead=_lead(d))
    if lexical is not None and len(lexical):
        s = lexical.scores[:TOP].tolist()
        out.update(l_per_word=s[0] / max(1, query_words(query)), l_lead=_lead(s),
                   l_ratio=math.log(max(s[0], 1e-6) / max(s[-1], 1e-6)))
    if dense is not None and lexical is not None and len(dense) and len(lexical):
        dk, lk = dense.keys[:TOP].tolist(), lexical.keys[:TOP].tolist()
        out["agree"] = float(dk[0] in lk or lk[0] in dk)
    return out


def learned_features(scores: list[float], rankings: Mapping[str, Ranking], query: str = "") -> dict[str, float]:
    """``features`` plus the learned model's best score ``s1``, its margin over the second and its
    lead over the rest of the top ten (``scores``: the model's ten best, best first)."""
    out = features(rankings, query)
    s = list(scores[:TOP])
    out.update(s1=s[0] if s else 0.0, s_margin=(s[0] - s[1]) if len(s) > 1 else 0.0, s_lead=_lead(s))
    return out


def model_for(mode: str, fusion: Mapping | None = None) -> dict:
    """The model for ``mode``: the bundle's ``fusion.match[mode]`` if it declares one, else the default."""
    declared = ((fusion or {}).get("match") or {}).get(mode)
    if isinstance(declared, Mapping) and len(declared.get("weights") or ()) == len(FEATURES[mode]):
        return {**DEFAULT_MATCH[mode], **declared}
    return DEFAULT_MATCH[mode]


def score(feats: Mapping[str, float], model: Mapping, mode: str) -> float:
    """The model's confidence for these features."""
    z = float(model["bias"]) + sum(float(w) * feats[f] for w, f in zip(model["weights"], FEATURES[mode]))
    return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))


def assess(rankings: Mapping[str, Ranking] | None, mode: str, query: str = "", fusion: Mapping | None = None,
           has_hits: bool = True, learned: Mapping | None = None) -> Assessment:
    """The confidence, match and note of the answer to ``query`` whose bundle channels ranked
    ``rankings`` in ``mode`` (``fusion``: the bundle's fusion block, for its own ``match`` models).
    ``learned``: where the bundle's learned stage ordered the answer, ``{"scores": its ten best
    scores, "model": the bundle's match model for them (manifest ``ranker.match``)}``."""
    if not has_hits:
        return Assessment(0.0, "none", NOTES["empty"])
    if not rankings or not any(len(r) for r in rankings.values()):  # only saved findings were searched
        return Assessment(0.5, "weak", NOTES["findings"])
    if learned is not None and learned.get("model"):
        model, feats, mode = learned["model"], learned_features(learned["scores"], rankings, query), "learned"
    else:
        model, feats = model_for(mode, fusion), features(rankings, query)
    c = score(feats, model, mode)
    match = "strong" if c >= float(model["strong_at"]) else "none" if c < float(model["none_below"]) else "weak"
    return Assessment(round(c, 2), match, NOTES.get(match, ""))
