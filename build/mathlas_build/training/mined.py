"""Training pairs mined from the corpora for the learned ranking stage, with a leak check (issue 30 part 1).

A mined pair is a *way of asking* taken from a source's own metadata and *the statements that answer
it*, in the default (informal) bundle's ids: ``{"id", "query", "targets", "origin", "views"}``, one JSON
line each (``write`` / ``read``). Origins:

- ``stacks-slogan``: a Stacks ``\\begin{slogan}`` -> its tag (the bundle's ``slogan`` column holds every
  slogan of the raw .tex, all 244, and each is a sentence of that tag's indexed text);
- ``planetmath-defines`` / ``planetmath-synonym``: an entry's ``\\pmdefines`` / ``\\pmsynonym`` -> the
  entry (every entry that lists the same words: one pair, several targets; words equal to the entry's
  title and words no reader could search, such as a bare formula, are left out);
- ``thousand-metamath``: a theorem's name in the 1000+ list -> the set.mm statements it lists.

Not mined: Mathlib docstrings and the formal-qr-dev style (the formal bundle's); ProofNet (the
informal bundle's ``proofnet:`` documents *are* the informal statements and their formal side is not
in it: a pair would be a document asking for itself, and with its own text masked nothing is left).

**Leak check** (``leak_check``): a pair is dropped by the first rule it breaks, and each rule's count is
kept (``stats``):

1. ``collection-query``: its query is a collection, informal-dev or off-topic query (same folded
   words, or word sets with Jaccard >= ``QUERY_JACCARD`` when both have 3 words or more);
2. ``collection-target``: one of its targets, or a document grouped with one (``mathlas.groups``: the
   same fact in another source), is a target or judged-equivalent hit of a collection / dev query;
3. ``own-text``: the query was taken from the target's own indexed text (the slogan is a sentence of
   it; a PlanetMath entry's "Defines ..." sentence lists its defines and synonyms; the 1000+ names
   are the Metamath statements' ``aliases``). The pair keeps a *view* of each target, that text (or
   alias list) with the query's words taken out, and ``masked_pool`` computes the pair's candidate pool
   as if the bundle held the view: the target's BM25 (``masked_bm25``: tantivy's own explanation of
   the score, each term's frequency and the field length lowered by what the view removed), its
   dense cosine (the stored cosine moved by the encoder's difference between the view and the full
   text), both channels' ranks and the RRF score that follow, and the name features read from the
   view's aliases. A pair whose view cannot be made (the sentence is not where the reader puts it)
   is dropped (``unmaskable``).

**Labels** (``labels``): 2 for a target, 1 for a document grouped with one, 0 for the rest, and -1
(left out of training) for a candidate nobody judged whose name or alias *is* the query (another
source's "Spin group" entry for the PlanetMath pair "spin group"): most are right answers, and calling
them wrong would teach the model to push exact names down.

    python -m mathlas_build.training.mined --out pairs.jsonl     # mine, check, print the counts
"""
from __future__ import annotations

import hashlib
import json
import math
import random
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ORIGINS = ("stacks-slogan", "planetmath-defines", "planetmath-synonym", "thousand-metamath")
QUERY_JACCARD = 0.8
MAX_TARGETS = 5          # words several PlanetMath entries define: more entries than this is too vague to label
DEPTH = 100              # as mathlas_build.training.ltr.DEPTH
_LETTERS = re.compile(r"[^\W\d_]{3,}")
_PM_SKIP_KINDS = ("biography", "bibliography", "proof", "data structure")


@dataclass
class MinedPair:
    query: str
    targets: list[str]
    origin: str
    # target id -> the fields of its indexed view that differ from the bundle's: "text" and/or "aliases"
    views: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return "mp-" + hashlib.sha1(f"{self.origin}\0{self.query}".encode()).hexdigest()[:12]

    def to_json(self) -> dict:
        return {"id": self.id, "query": self.query, "targets": self.targets, "origin": self.origin,
                "views": self.views}


def folded(text: str) -> tuple[str, ...]:
    """A query's words as the learned stage reads names (case, accents, possessives folded)."""
    from mathlas.ranking.learned import words

    return tuple(words(text))


def sentence(s: str) -> str:
    """As ``mathlas_build.retrieval_text`` writes a field into the indexed text."""
    s = " ".join(s.split())
    return s if not s or s[-1] in ".:;!?" else s + "."


def _cut(text: str, part: str, new: str = "") -> str | None:
    """``text`` with the sentence ``part`` replaced by ``new`` (None when ``part`` is not in it)."""
    i = text.find(part)
    if not part or i < 0:
        return None
    return " ".join((text[:i] + new + text[i + len(part):]).split())


# ------------------------------------------------------------------------------------------ mining

def mine_stacks(table) -> tuple[list[MinedPair], Counter]:
    """Each Stacks slogan -> its tag, the view without the slogan's sentence."""
    stats: Counter = Counter()
    out = []
    cols = {c: table.column(c).to_pylist() for c in ("id", "source", "slogan", "text")}
    for i, src in enumerate(cols["source"]):
        slogan = (cols["slogan"][i] or "").strip() if src == "stacks" else ""
        if not slogan:
            continue
        stats["stacks-slogan:read"] += 1
        view = _cut(cols["text"][i], sentence(slogan))
        if view is None:
            stats["stacks-slogan:unmaskable"] += 1
            continue
        out.append(MinedPair(" ".join(slogan.split()), [cols["id"][i]], "stacks-slogan", {cols["id"][i]: {"text": view}}))
    return out, stats


def _pm_origins(path: Path) -> set[tuple[str, ...]]:
    """The folded words of an entry's ``\\pmsynonym``s (raw .tex; the reader keeps defines and synonyms
    as one list of keywords)."""
    from mathlas_build.latex import latex_to_text
    from mathlas_build.sources.planetmath import parse_metadata
    from mathlas_build.sources.texscan import read_tex

    try:
        meta = parse_metadata(read_tex(path))
    except OSError:
        return set()
    return {folded(latex_to_text(s, {})) for s in meta["synonyms"]}


def mine_planetmath(table, root: Path, docs=None) -> tuple[list[MinedPair], Counter]:
    """Each entry's defines and synonyms -> the entries that list them, the view without them."""
    from mathlas_build.sources import planetmath

    stats: Counter = Counter()
    ids = table.column("id").to_pylist()
    text_of = dict(zip(ids, table.column("text").to_pylist()))
    by_words: dict[tuple, dict] = {}
    for d in docs if docs is not None else planetmath.read(Path(root)):
        if d.kind in _PM_SKIP_KINDS or d.name.lower().startswith("proof of") or not d.keywords:
            continue
        text = text_of.get(d.id)
        head = d.name.strip()
        words = [k for k in dict.fromkeys(w.strip() for w in d.keywords) if k and k.lower() != head.lower()]
        synonyms = _pm_origins(Path(root) / d.file)
        for k in words:
            origin = "planetmath-synonym" if folded(k) in synonyms else "planetmath-defines"
            stats[f"{origin}:read"] += 1
            q = folded(k)
            if not q or q == folded(head):
                stats[f"{origin}:same-as-title"] += 1
                continue
            if not _LETTERS.search(k):
                stats[f"{origin}:no-words"] += 1
                continue
            if text is None:
                stats[f"{origin}:not-in-bundle"] += 1
                continue
            rest = [w for w in words if folded(w) != q]
            view = _cut(text, sentence("Defines " + ", ".join(words)),
                        sentence("Defines " + ", ".join(rest)) if rest else "")
            if view is None:
                stats[f"{origin}:unmaskable"] += 1
                continue
            entry = by_words.setdefault(q, {"query": " ".join(k.split()), "origin": origin, "views": {}})
            entry["views"][d.id] = {"text": view}
    out = []
    for _q, e in by_words.items():
        if len(e["views"]) > MAX_TARGETS:
            stats[f"{e['origin']}:ambiguous"] += 1
            continue
        out.append(MinedPair(e["query"], sorted(e["views"]), e["origin"], e["views"]))
    return out, stats


def mine_thousand(table, root: Path) -> tuple[list[MinedPair], Counter]:
    """Each 1000+ name -> the set.mm labels it lists; the view drops that name from the aliases."""
    from mathlas_build.training import thousand

    stats: Counter = Counter()
    ids = table.column("id").to_pylist()
    aliases = dict(zip(ids, table.column("aliases").to_pylist()))
    out = []
    for t in thousand.read(Path(root)):
        if not t.metamath:
            continue
        stats["thousand-metamath:read"] += 1
        targets = [f"metamath:{label}" for label in t.metamath if f"metamath:{label}" in aliases]
        if not targets:
            stats["thousand-metamath:not-in-bundle"] += 1
            continue
        views = {}
        q = folded(t.title)
        for tid in targets:
            have = [a for a in (aliases[tid] or "").split("; ") if a.strip()]
            kept = [a for a in have if folded(a) != q]
            if len(kept) != len(have):
                views[tid] = {"aliases": "; ".join(kept)}
        out.append(MinedPair(t.title, targets, "thousand-metamath", views))
    return out, stats


# ------------------------------------------------------------------------------------------ leak check

def leak_check(pairs: list[MinedPair], records: list[dict], *, groups=None, ids=None) -> tuple[list[MinedPair], Counter]:
    """The pairs that pass rules 1 and 2 of the module docstring (rule 3 is the views) and the count
    each rule dropped, by origin. ``records``: every collection, dev and off-topic query (``query``,
    ``targets``, ``relevant``); ``groups`` / ``ids``: the bundle's ``Groups`` and id column, to widen
    a target to the documents grouped with it."""
    queries = [folded(r["query"]) for r in records]
    exact = set(queries)
    sets = [set(q) for q in queries if len(q) >= 3]
    protected = {d for r in records for d in (*(r.get("targets") or ()), *(r.get("relevant") or ()))}
    key_of = {d: k for k, d in enumerate(ids)} if ids is not None else {}
    stats: Counter = Counter()
    kept, seen = [], set()
    for p in pairs:
        q = folded(p.query)
        if q in exact or (len(q) >= 3 and any(len(s & set(q)) / len(s | set(q)) >= QUERY_JACCARD for s in sets)):
            stats[f"{p.origin}:collection-query"] += 1
            continue
        wide = set(p.targets)
        if groups is not None:
            for t in p.targets:
                if t in key_of:
                    wide.update(ids[g] for g in groups.group(key_of[t]))
        if wide & protected:
            stats[f"{p.origin}:collection-target"] += 1
            continue
        if (p.origin, q) in seen:
            stats[f"{p.origin}:duplicate"] += 1
            continue
        seen.add((p.origin, q))
        stats[f"{p.origin}:masked"] += bool(p.views)
        stats[f"{p.origin}:kept"] += 1
        kept.append(p)
    return kept, stats


def write(pairs: list[MinedPair], path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(p.to_json(), ensure_ascii=False) + "\n" for p in pairs), encoding="utf-8")


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


# ------------------------------------------------------------------------------------------ the masked pool

def analyzer():
    """tantivy's ``en_stem`` (mathlas.bundle.LEXICAL_TOKENIZER) as a Python analyzer."""
    import tantivy

    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(40))
            .filter(tantivy.Filter.lowercase()).filter(tantivy.Filter.stemmer("english")).build())


_ANALYZER = None


def removed_terms(full: str, view: str, identifiers: str = "split") -> tuple[Counter, int]:
    """The indexed terms (and how many tokens) the view lacks, as the BM25 field sees them."""
    global _ANALYZER
    from mathlas.bundle import lexical_words

    if _ANALYZER is None:
        _ANALYZER = analyzer()
    a = Counter(_ANALYZER.analyze(lexical_words(full or "", identifiers)))
    b = Counter(_ANALYZER.analyze(lexical_words(view or "", identifiers)))
    return a - b, sum(a.values()) - sum(b.values())


class Unmaskable(ValueError):
    """A score whose explanation ``masked_bm25`` cannot lower (a phrase: ``sigma_1`` is the phrase
    "sigma 1"); the pair is left out of training, and counted."""


_TERM = re.compile(r'Term=Term\(field=(\d+), type=Str, "(.*)"\)$')


def masked_bm25(explanation: dict, removed: dict[int, tuple[Counter, int]]) -> float:
    """A document's BM25 score with ``removed[field] = (terms, tokens)`` taken out of its fields, from
    tantivy's explanation of its score (``Query.explain(...).to_json()``): each term's frequency and
    the field's length lowered, the field's average length lowered by tokens / N. A term left with no
    occurrence scores 0. (The document's other scores do not move: the other documents' lengths and
    frequencies are as they were.)"""
    def walk(node: dict) -> float:
        desc, kids = node["description"], node.get("details") or []
        if desc.startswith("TermQuery"):
            m = _TERM.match((node.get("context") or [""])[0])
            if not m:
                raise Unmaskable(f"masked_bm25: unexplained term {node.get('context')}")
            fld, term = int(m.group(1)), m.group(2)
            terms, tokens = removed.get(fld, (Counter(), 0))
            if not terms.get(term) and not tokens:
                return node["value"]
            idf = next(k for k in kids if k["description"].startswith("idf"))
            tfn = next(k for k in kids if k["description"].startswith("freq /"))
            v = {k["description"].split(",")[0]: k["value"] for k in tfn["details"]}
            n_docs = next(k["value"] for k in idf["details"] if k["description"].startswith("N,"))
            freq = v["freq"] - terms.get(term, 0)
            if freq <= 0:
                return 0.0
            dl = max(1.0, v["dl"] - tokens)
            avgdl = max(1e-9, v["avgdl"] - tokens / max(1.0, n_docs))
            new = freq / (freq + v["k1"] * (1 - v["b"] + v["b"] * dl / avgdl))
            return node["value"] * new / tfn["value"] if tfn["value"] else 0.0
        if desc.startswith("Boost"):
            child = kids[0]
            return node["value"] / child["value"] * walk(child) if child["value"] else 0.0
        if desc.startswith("BooleanClause"):
            return sum(walk(k) for k in kids)
        if not any(t or n for t, n in removed.values()):
            return node["value"]
        raise Unmaskable(f"masked_bm25: cannot lower a {desc!r} score")
    return float(walk(explanation))


class Encodings:
    """Document vectors of texts, kept by the text's hash (an .npz when ``path`` is given): a pair's
    pool is made again for every training run, and encoding is what costs."""

    def __init__(self, encoder, path: Path | None = None):
        self.encoder, self.path, self.made = encoder, Path(path) if path else None, 0
        self.kept: dict[str, np.ndarray] = {}
        if self.path and self.path.is_file():
            z = np.load(self.path, allow_pickle=False)
            self.kept = dict(zip(z["keys"].tolist(), z["vectors"]))

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode()).hexdigest()

    def need(self, texts: list[str], batch_size: int = 32) -> None:
        todo = list(dict.fromkeys(t for t in texts if self.key(t) not in self.kept))
        if todo:
            for a in range(0, len(todo), 256):
                chunk = todo[a:a + 256]
                for t, v in zip(chunk, self.encoder.encode_documents(chunk, batch_size=batch_size)):
                    self.kept[self.key(t)] = np.asarray(v, dtype=np.float32)
                self.made += len(chunk)
                self.save()

    def __call__(self, text: str) -> np.ndarray:
        self.need([text])
        return self.kept[self.key(text)]

    def save(self) -> None:
        if self.path and self.kept:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            keys = sorted(self.kept)
            np.savez(self.path, keys=np.array(keys), vectors=np.stack([self.kept[k] for k in keys]))


def _alias_rows(info, query: str, X: np.ndarray, rows: list[int], names: list[str], aliases: list[str]) -> None:
    """``alias_exact``, ``q_in_name`` and ``q_in_name_idf`` of some candidates recomputed from the view's
    aliases (as ``mathlas.ranking.learned.features`` computes them from the bundle's)."""
    from mathlas.ranking.learned import F, core, words

    qcore = core(words(query))
    qset = set(qcore)
    if not qset:
        return
    unseen = math.log(max(2, len(info.name_hash)))
    q_known = [info.vocab[w] for w in qset if w in info.vocab]
    q_mass = (float(info.idf[q_known].sum()) + unseen * (len(qset) - len(q_known))) or 1.0
    for row, name, al in zip(rows, names, aliases):
        cores = [core(words(a)) for a in (al or "").split(";")]
        anyw = set(core(words(name or ""))).union(*[set(c) for c in cores if c])
        hit = qset & anyw
        X[row, F["alias_exact"]] = float(any(c == qcore for c in cores if c))
        X[row, F["q_in_name"]] = len(hit) / len(qset)
        X[row, F["q_in_name_idf"]] = sum(info.idf[info.vocab[w]] for w in hit if w in info.vocab) / q_mass


def masked_pool(bundle, query: str, views: dict[str, dict[str, str]], *, encodings: Encodings | None = None,
                depth: int = DEPTH):
    """The candidate pool of ``query`` (``mathlas_build.training.ltr.Pool``) as if each document of
    ``views`` (id -> {"text": ..., "aliases": ...}) held that view instead of its indexed text and
    aliases. With no views it is ``ltr.pool`` (kept in step with it: tests/test_mined.py)."""
    import tantivy

    from mathlas.bundle import LEXICAL_FIELDS
    from mathlas.ranking.abbreviations import expand_for
    from mathlas.ranking.candidates import Ranking
    from mathlas.ranking.filters import Filters
    from mathlas.ranking.fusion import rrf
    from mathlas.ranking.intent import definition_intent
    from mathlas.ranking.learned import features, ranks_in
    from mathlas.ranking.lexical import query_terms
    from mathlas.ranking.pipeline import pipeline_for
    from mathlas_build.training.ltr import Pool, doc_info

    q, _ = expand_for(bundle, query)
    pipeline = pipeline_for(bundle)
    vector = pipeline.query_vector(q)
    extra = 1 if views else 0  # one more, so a masked target that falls out lets the next one in
    rankings = pipeline.search_channels(q, depth + extra, Filters(), "hybrid", None, vector)
    key_of = {}
    if views:
        ids = bundle.column("id")
        index = {d: k for k, d in enumerate(ids.to_pylist())} if len(views) else {}
        key_of = {index[d]: v for d, v in views.items() if d in index}
    cos_of: dict[int, float] = {}
    if key_of:
        lex = pipeline.channel("lexical")
        fields = {f: 1 + i for i, f in enumerate(LEXICAL_FIELDS)}  # field 0 is the key
        full_text = bundle.column("text")
        full_alias = bundle.column("aliases") if "aliases" in bundle.table.column_names else None
        r = rankings.get("lexical")
        if r is not None and len(r):
            if not lex._doc_is_key:
                raise ValueError("masked_pool: the BM25 index has several segments; masking needs one")
            terms = query_terms(q, lex.identifiers)
            qobj = lex._text_query(terms) if terms else None
            scores = r.scores.astype(np.float64).copy()
            for i, k in enumerate(r.keys.tolist()):
                view = key_of.get(k)
                if view is None or qobj is None:
                    continue
                removed = {}
                if "text" in view:
                    removed[fields["text"]] = removed_terms(full_text[k].as_py() or "", view["text"], lex.identifiers)
                if "aliases" in view and full_alias is not None:
                    removed[fields["alias"]] = removed_terms(full_alias[k].as_py() or "", view["aliases"], lex.identifiers)
                e = json.loads(qobj.explain(lex.searcher, tantivy.DocAddress(0, int(k))).to_json())
                scores[i] = masked_bm25(e, removed)
            keep = scores > 0
            order = np.argsort(-scores[keep], kind="stable")[:depth]
            rankings["lexical"] = Ranking(r.keys[keep][order], scores[keep][order].astype(np.float32))
        d = rankings.get("dense")
        texts = {k: v["text"] for k, v in key_of.items() if "text" in v}
        if texts:
            enc = encodings or Encodings(bundle.encoder)
            enc.need([full_text[k].as_py() or "" for k in texts] + list(texts.values()))
            ks = np.array(sorted(texts), dtype=np.int64)
            stored = bundle.dense.rescore(vector, ks)
            for k, s in zip(ks.tolist(), stored.tolist()):
                delta = float(enc(texts[k]) @ vector) - float(enc(full_text[k].as_py() or "") @ vector)
                cos_of[k] = s + delta
            if d is not None:
                dk = [k for k in d.keys.tolist() if k not in cos_of]
                ds = [float(s) for k, s in zip(d.keys.tolist(), d.scores.tolist()) if k not in cos_of]
                dk += list(cos_of)
                ds += list(cos_of.values())
                o = np.argsort(-np.asarray(ds), kind="stable")[:depth]
                rankings["dense"] = Ranking(np.asarray(dk, dtype=np.int64)[o], np.asarray(ds, dtype=np.float32)[o])
        for name in rankings:  # the unmasked channels cut back to the depth
            rr = rankings[name]
            if len(rr) > depth:
                rankings[name] = Ranking(rr.keys[:depth], rr.scores[:depth])
    fusion = bundle.fusion
    fused = rrf(rankings, 2 * depth, k_rrf=float(fusion["k_rrf"]), channel_weights=dict(fusion["weights"]))
    keys = np.array([f.key for f in fused], dtype=np.int64)
    rrf_scores = np.array([f.score for f in fused], dtype=np.float32)
    cos = bundle.dense.rescore(vector, keys) if len(keys) else np.zeros(0, dtype=np.float32)
    for i, k in enumerate(keys.tolist()):
        if k in cos_of:
            cos[i] = cos_of[k]
    lex_rank, lex_raw = ranks_in(rankings.get("lexical"), keys)
    dense_rank, _ = ranks_in(rankings.get("dense"), keys)
    info = doc_info(bundle)
    X = features(info, q, keys, lex_rank, lex_raw, dense_rank, cos, rrf_scores, definition_intent(query))
    alias_keys = [k for k, v in key_of.items() if "aliases" in v]
    if alias_keys:
        where = {k: i for i, k in enumerate(keys.tolist())}
        rows = [(where[k], k) for k in alias_keys if k in where]
        names = bundle.column("name")
        _alias_rows(info, q, X, [i for i, _ in rows], [names[k].as_py() for _, k in rows],
                    [key_of[k]["aliases"] for _, k in rows])
    return Pool(keys, X, keys)


def labels(bundle, pool, targets: set[str], groups=None) -> np.ndarray:
    """2: a target; 1: grouped with one; -1: no judgment and its name or alias is the query (left out of
    training); 0: the rest (module docstring)."""
    from mathlas.ranking.learned import F

    ids = bundle.column("id")
    y = np.zeros(len(pool.keys), dtype=np.int32)
    near: set[int] = set()
    for i, k in enumerate(pool.keys.tolist()):
        if ids[k].as_py() in targets:
            y[i] = 2
            if groups is not None:
                near.update(groups.group(k))
    named = (pool.X[:, F["name_exact"]] > 0) | (pool.X[:, F["name_core_exact"]] > 0) | (pool.X[:, F["alias_exact"]] > 0)
    for i, k in enumerate(pool.keys.tolist()):
        if y[i] == 2:
            continue
        if k in near:
            y[i] = 1
        elif named[i]:
            y[i] = -1
    return y


# ------------------------------------------------------------------------------------------ command

def mine(bundle, corpora: Path, records: list[dict], *, seed: int = 0, pm_docs=None) -> tuple[list[MinedPair], dict]:
    """Every origin mined from ``corpora`` (shared/corpora) against ``bundle``, leak-checked and
    shuffled by ``seed``; the counts (read, dropped by each rule, masked, kept) by origin."""
    from mathlas.groups import groups_of

    table = bundle.table
    pairs, stats = [], Counter()
    for got, st in (mine_stacks(table), mine_planetmath(table, corpora / "planetmath", pm_docs),
                    mine_thousand(table, corpora / "1000-plus")):
        pairs += got
        stats += st
    raw = Counter(p.origin for p in pairs)
    kept, st = leak_check(pairs, records, groups=groups_of(bundle), ids=bundle.column("id").to_pylist())
    stats += st
    for o, n in raw.items():
        stats[f"{o}:pairs"] = n
    stacks = corpora / "stacks-project"
    if stacks.is_dir():
        stats["stacks-slogan:raw-tex"] = sum(p.read_text(encoding="utf-8", errors="replace").count("\\begin{slogan}")
                                             for p in stacks.glob("*.tex"))
    random.Random(seed).shuffle(kept)
    table_out: dict[str, dict[str, int]] = defaultdict(dict)
    for k, v in sorted(stats.items()):
        o, rule = k.split(":", 1)
        table_out[o][rule] = v
    return kept, dict(table_out)


def main(argv=None) -> None:
    import argparse

    repo = Path(__file__).resolve().parents[3]
    ap = argparse.ArgumentParser(description="Mine leak-checked training pairs for the learned ranking stage.")
    ap.add_argument("--out", required=True, help="JSON lines to write")
    ap.add_argument("--corpora", default=str(repo.parent / "shared" / "corpora"))
    ap.add_argument("--collection", default=str(repo / "eval" / "collection"))
    ap.add_argument("--dev", default=str(repo.parent / "shared" / "eval" / "informal-dev.jsonl"))
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)

    from mathlas.engine import open_bundle
    from mathlas_build.training import collection as C

    recs = C.load(Path(a.collection), with_offtopic=True)
    if Path(a.dev).is_file():
        recs += [json.loads(x) for x in Path(a.dev).read_text(encoding="utf-8").splitlines() if x.strip()]
        equivalent = defaultdict(set)  # the dev queries' judged hits too
        for (qid, doc), j in C.judgments(Path(a.collection)).items():
            if j["label"] == "equivalent":
                equivalent[qid].add(doc)
        for r in recs:
            r["relevant"] = sorted(set(r.get("relevant") or ()) | equivalent[r["id"]])
    else:
        print(f"mined: no dev set at {a.dev}; its queries are not checked (--dev FILE)", file=sys.stderr)
    corpora = Path(a.corpora)
    if not corpora.is_dir():
        raise SystemExit(f"mined: no corpora at {corpora} (--corpora shared/corpora)")
    pairs, stats = mine(open_bundle(), corpora, recs, seed=a.seed)
    write(pairs, Path(a.out))
    print(json.dumps(stats, indent=1))
    print(f"{len(pairs)} pairs -> {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
