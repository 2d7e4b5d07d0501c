"""Training pairs from the corpora, with no LLM: a *way of asking* paired with *the statement that answers it*.

``build_pairs(recipe)`` reads the recipe's sources with the bundle readers (so ids are the stable ids
and document texts come from ``retrieval_text``, as the bundle embeds them), builds the candidate
pairs of each kind, drops every pair that touches a dev-set target, samples each kind down to the
recipe's cap (seeded), mines one hard negative per pair (``negatives.Miner``) and writes
``pairs.jsonl``, the dense-proxy eval corpora and the data card (``card.py``).

The positive is the document's retrieval text **without the field the query was taken from** (its
name, slogan, one defined word, docstring, Metamath comment): with that field left in, the query
would sit verbatim in its own positive and the pair would teach string copying. The text is made by
``retrieval_text`` itself on the document with that one field blanked, so it is otherwise exactly
what the bundle embeds; a kind's negatives are shown in the same view, so "which field is missing"
tells the model nothing. Kinds whose query is another document (Stacks <-> Lean, 1000-plus titles,
ProofNet informal <-> formal, PlanetMath "proof of X") use the full retrieval text.
"""
from __future__ import annotations

import json
import random
import re
import sys
import time
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from collections.abc import Callable, Iterator

from mathlas_build.document import Document
from mathlas_build.latex import label_words
from mathlas_build.links import PROOF_OF, name_key
from mathlas_build.retrieval_text import retrieval_text
from mathlas_build.sources import reader
from mathlas_build.sources.texscan import label_tail_words
from mathlas_build.training.negatives import DenseBundle, DenseMiner, Miner, normalise
from mathlas_build.training.recipe import TrainingRecipe

# Stored document texts are cut here: far past what any encoder embeds (256 tokens), and PlanetMath
# entries can run to 50k characters.
TEXT_LIMIT = 3000
INFORMAL_SOURCES = ("stacks", "planetmath", "hott", "openlogic", "proofnet")  # as mathlas.evaluate labels them


@dataclass
class Pair:
    kind: str
    query: str
    pos_id: str
    pos: str
    query_id: str = ""          # the document the query was taken from, when there is one
    neg_id: str = ""
    neg: str = ""
    neg_by: str = ""            # what mined the negative: "dense", "bm25", or "" (given by the kind, or none)
    licenses: tuple[str, ...] = ()


@dataclass
class Corpus:
    """Documents of every source the recipe reads, by source, plus the 1000-plus entries."""
    docs: dict[str, list[Document]]
    by_id: dict[str, Document]
    named: list                                  # thousand.NamedTheorem
    info: dict[str, dict]                        # source -> count, license, attribution


def clip(text: str, limit: int = 300) -> str:
    """White space collapsed, cut at the last sentence end (else word) before ``limit`` characters."""
    s = " ".join(text.split())
    if len(s) <= limit:
        return s
    cut = s[:limit]
    end = max(cut.rfind(". "), cut.rfind("? "), cut.rfind("! "))
    return cut[:end + 1] if end > limit // 3 else cut.rsplit(" ", 1)[0]


def full(doc: Document) -> str:
    return retrieval_text(doc)


def without(**fields) -> Callable[[Document], str]:
    """The view of a document with some fields blanked (``docstring`` blanks Lean's ``extra`` entry)."""
    def view(doc: Document) -> str:
        changes = dict(fields)
        if "docstring" in changes:
            changes = {"extra": {**doc.extra, "docstring": changes.pop("docstring")}, **changes}
        if "name" in changes and callable(changes["name"]):
            changes["name"] = changes["name"](doc)
        return retrieval_text(replace(doc, **changes))
    return view


# ------------------------------------------------------------------------ names hidden in the readers' fields

def stacks_label_words(doc: Document) -> str:
    label = doc.extra.get("label", "")
    stem = Path(doc.file).stem
    return label_words(label[len(stem) + 1:] if label.startswith(stem + "-") else label)


def stacks_given_name(doc: Document) -> str:
    """The ``[Nakayama's lemma]`` of ``\\begin{lemma}[Nakayama's lemma]`` (the reader's name is "opt (label words)")."""
    words = stacks_label_words(doc)
    if words and doc.name.endswith(f" ({words})"):
        return doc.name[:-len(words) - 3].strip()
    return doc.name if doc.name != words else ""


def label_name(doc: Document) -> str:
    """What the reader would name the statement from its label alone (HoTT, Open Logic, Napkin)."""
    label = doc.extra.get("label", "")
    if not label:
        return ""
    return label_words(label) if doc.source == "hott" else label_tail_words(label)


def real_name(doc: Document) -> str:
    """A HoTT / Open Logic / Napkin statement's own name (heading or defined word), not its label's words."""
    name = doc.name.strip()
    return name if name and normalise(name) != normalise(label_name(doc)) else ""


_SKIP_LEAN = re.compile(r"^(?:Mathlib|Batteries)\.(?:Tactic|Lean|Util|CodeAction|Deprecated|Linter|Meta)\b|^Lean\.")
_SKIP_MM_SECTION = ("MATHBOX", "DEPRECATED")
_SKIP_MM_COMMENT = re.compile(r"^(?:Deduction|Inference|Closed|Version|Alias|Obsolete|Lemma for|Commuted|"
                              r"Variant|Reverse|Analog|Analogue|Generalization of|Restatement|Weak|Special case of \S+ "
                              r"[.]|Theorem form|Hypothesis|Define|Definition|Syntax)", re.I)


def lean_ok(doc: Document) -> bool:
    module = doc.extra.get("module", "")
    return not (_SKIP_LEAN.match(module) or ".Meta." in doc.id or doc.id.startswith("lean:Mathlib.Meta"))


# ------------------------------------------------------------------------ the kinds

def _stacks_slogan(c: Corpus):
    for d in c.docs.get("stacks", []):
        if d.slogan.strip():
            yield Pair("stacks-slogan", clip(d.slogan), d.id, without(slogan="")(d), d.id)


def _stacks_name(c: Corpus):
    for d in c.docs.get("stacks", []):
        name = stacks_given_name(d)
        if name:
            yield Pair("stacks-name", name, d.id, without(name="")(d), d.id)


def _stacks_label(c: Corpus):
    for d in c.docs.get("stacks", []):
        words = stacks_label_words(d)
        if len(words.split()) >= 2 and not stacks_given_name(d):
            yield Pair("stacks-label", words, d.id, without(name="")(d), d.id)


def _pm_entries(c: Corpus) -> Iterator[Document]:
    for d in c.docs.get("planetmath", []):
        if d.kind not in ("biography", "bibliography", "proof", "data structure") \
                and not d.name.lower().startswith("proof of"):
            yield d


def _pm_title(c: Corpus):
    for d in _pm_entries(c):
        yield Pair("planetmath-title", d.name, d.id, without(name="")(d), d.id)


def _pm_defines(c: Corpus):
    for d in _pm_entries(c):
        for k in d.keywords:
            if normalise(k) and normalise(k) != normalise(d.name):
                yield Pair("planetmath-defines", k, d.id,
                           retrieval_text(replace(d, keywords=[w for w in d.keywords if w != k])), d.id)


def _pm_proof_of(c: Corpus):
    """PlanetMath "proof of X" entries: X's title asks for X (the statement); the proof is X's hard negative."""
    by_title: dict[str, list[Document]] = defaultdict(list)
    for d in _pm_entries(c):
        by_title[name_key(d.name)].append(d)
    for p in c.docs.get("planetmath", []):
        m = PROOF_OF.match(p.name.strip())
        if not m:
            continue
        targets = by_title.get(name_key(m.group(1)), [])
        if len(targets) == 1:
            x = targets[0]
            yield Pair("planetmath-proof-of", x.name, x.id, full(x), x.id, neg_id=p.id, neg=full(p))


def _named(c: Corpus):
    for src in ("hott", "openlogic", "napkin"):
        for d in c.docs.get(src, []):
            name = real_name(d)
            if name:
                yield Pair("named-statement", name, d.id, without(name=label_name)(d), d.id)


def _metamath(c: Corpus):
    for d in c.docs.get("metamath", []):
        comment = d.slogan
        if len(comment.split()) < 4 or "~" in d.extra.get("comment_raw", "")[:80] or _SKIP_MM_COMMENT.match(comment) \
                or any(s in d.title.upper() for s in _SKIP_MM_SECTION):
            continue
        yield Pair("metamath-comment", clip(comment, 250), d.id, without(slogan="")(d), d.id)


def _lean_docstring(c: Corpus):
    for d in c.docs.get("lean", []):
        doc = " ".join(d.extra.get("docstring", "").split())
        if len(doc.split()) >= 4 and lean_ok(d):
            yield Pair("lean-docstring", clip(doc), d.id, without(docstring="")(d), d.id)


def _stacks_lean(c: Corpus):
    for d in c.docs.get("lean", []):
        for tag in d.extra.get("stacks", "").split():
            s = c.by_id.get(f"stacks:{tag}")
            if s is None:
                continue
            yield Pair("stacks-to-lean", clip(" ".join(filter(None, [s.slogan, s.statement]))), d.id, full(d), s.id)
            ask = d.extra.get("docstring") or f"{d.extra.get('full_name', d.id[5:])}: {d.extra.get('signature', '')}"
            yield Pair("lean-to-stacks", clip(ask), s.id, full(s), d.id)


def _thousand(c: Corpus):
    for t in c.named:
        for name in t.lean:
            d = c.by_id.get(f"lean:{name}")
            if d is not None:
                yield Pair("thousand-lean", t.title, d.id, full(d), "")
        for label in t.metamath:
            d = c.by_id.get(f"metamath:{label}")
            if d is not None:
                yield Pair("thousand-metamath", t.title, d.id, full(d), "")


def _proofnet(c: Corpus):
    for d in c.docs.get("proofnet", []):
        formal = c.by_id.get(f"proofnet-formal:{d.id.split(':', 1)[1]}")
        if formal is None:
            continue
        yield Pair("proofnet-to-formal", clip(d.statement), formal.id, formal.statement, d.id)
        yield Pair("proofnet-to-informal", clip(formal.statement), d.id, full(d), formal.id)


def _lean_alias(c: Corpus):
    """The project's own names for a declaration (docs/100.yaml, 1000.yaml, overview.yaml,
    undergrad.yaml; the Stacks statement of an ``@[stacks]`` tag: ``lean_aliases``) -> the declaration.
    The alias field the lexical channel reads is not in the embedded text, so the full text is the positive."""
    for d in c.docs.get("lean", []):
        if not lean_ok(d):
            continue
        for alias in str(d.extra.get("aliases") or "").split("; "):
            if len(alias.split()) >= 1 and len(alias) >= 4:
                yield Pair("lean-alias", clip(alias, 200), d.id, full(d), "")


_TRIVIAL_VALUE = re.compile(r"^[\w.'₀-₉]+$")


def _lean_value(c: Corpus):
    """A definition's value, as people write the notation (``#{i | x i ≠ y i}``) -> the definition
    (whose embedded text has its name, docstring and type, not the value)."""
    for d in c.docs.get("lean", []):
        value = " ".join(str(d.extra.get("value") or "").split())
        if lean_ok(d) and len(value) >= 8 and len(value.split()) >= 2 and not _TRIVIAL_VALUE.match(value):
            yield Pair("lean-value", clip(value, 200), d.id, full(d), "")


def _lean_claim(c: Corpus):
    """A theorem's claim with its hypotheses in words where ``lean_gloss`` has them ("p is prime"),
    the others as written (``p ≠ 2``: no assumption is left out, or the claim would be false), and its
    notation named ("lower Lebesgue integral") -> the declaration without its docstring. Only
    theorems with at least one hypothesis said in words."""
    from mathlas.lean_gloss import conclusion, hypotheses, notation_gloss

    for d in c.docs.get("lean", []):
        if d.kind not in ("theorem", "lemma") or not lean_ok(d):
            continue
        sig = str(d.extra.get("signature") or "")
        hyps, claim = hypotheses(sig), conclusion(sig)
        if not any(said for _, said in hyps) or not claim or len(claim) > 160:
            continue
        named = notation_gloss(claim)
        query = f"If {', '.join(h for h, _ in hyps)}, then {claim}" + (f" ({', '.join(named)})" if named else "")
        yield Pair("lean-claim", clip(query, 300), d.id, without(docstring="")(d), d.id)


@dataclass
class Kind:
    build: Callable[[Corpus], Iterator[Pair]]
    pool: str                                 # the source whose documents the negatives come from
    view: Callable[[Document], str]           # the text a negative shows: the positives' view
    about: str


KINDS: dict[str, Kind] = {
    "stacks-slogan": Kind(_stacks_slogan, "stacks", without(slogan=""), "Stacks \\begin{slogan} -> the statement"),
    "stacks-name": Kind(_stacks_name, "stacks", without(name=""), "Stacks [Named lemma] -> the statement"),
    "stacks-label": Kind(_stacks_label, "stacks", without(name=""), "Stacks label words -> the statement"),
    "planetmath-title": Kind(_pm_title, "planetmath", without(name=""), "PlanetMath title -> entry"),
    "planetmath-defines": Kind(_pm_defines, "planetmath", full,
                               "PlanetMath \\pmdefines / \\pmsynonym -> entry (that word left out)"),
    "planetmath-proof-of": Kind(_pm_proof_of, "planetmath", full,
                                "PlanetMath title of X -> X, with the 'proof of X' entry as the negative"),
    "named-statement": Kind(_named, "*", without(name=label_name), "HoTT / Open Logic / Napkin named statement"),
    "metamath-comment": Kind(_metamath, "metamath", without(slogan=""), "Metamath comment -> statement"),
    "lean-docstring": Kind(_lean_docstring, "lean", without(docstring=""), "Mathlib docstring -> name + signature"),
    "stacks-to-lean": Kind(_stacks_lean, "lean", full, "@[stacks TAG]: Stacks statement -> Lean declaration"),
    "lean-to-stacks": Kind(_stacks_lean, "stacks", full, "@[stacks TAG]: Lean declaration -> Stacks statement"),
    "lean-alias": Kind(_lean_alias, "lean", full, "the project's lists and Stacks tags: alias -> Lean declaration"),
    "lean-value": Kind(_lean_value, "lean", full, "a Lean definition's value (notation) -> the definition"),
    "lean-claim": Kind(_lean_claim, "lean", without(docstring=""),
                       "hypotheses in words + the claim -> the Lean theorem (docstring left out)"),
    "thousand-lean": Kind(_thousand, "lean", full, "1000-plus theorem name -> the Lean declarations it lists"),
    "thousand-metamath": Kind(_thousand, "metamath", full, "1000-plus theorem name -> the Metamath labels it lists"),
    "proofnet-to-formal": Kind(_proofnet, "proofnet-formal", lambda d: d.statement,
                               "ProofNet informal statement -> its Lean 3 statement"),
    "proofnet-to-informal": Kind(_proofnet, "proofnet", full, "ProofNet Lean 3 statement -> informal statement"),
}


# ------------------------------------------------------------------------ reading

def read_corpus(recipe: TrainingRecipe, quiet: bool = False) -> Corpus:
    from mathlas_build.training import metamath, thousand

    docs: dict[str, list[Document]] = defaultdict(list)
    info: dict[str, dict] = {}

    def add(source_docs, mod, what: str, t0: float) -> None:
        n = 0
        for d in source_docs:
            docs[d.source].append(d)
            e = info.setdefault(d.source, {"count": 0, "license": d.license or mod.LICENSE,
                                           "attribution": mod.ATTRIBUTION})
            e["count"] += 1
            n += 1
        if not quiet:
            print(f"[pairs] read {what}: {n:,} documents in {time.perf_counter() - t0:.1f} s", file=sys.stderr,
                  flush=True)

    for spec in recipe.sources:
        mod = reader(spec.reader)
        t0 = time.perf_counter()
        it = mod.read(spec.path, **spec.options)
        add((d for i, d in enumerate(it) if not spec.limit or i < spec.limit), mod, spec.reader, t0)
    if "metamath" in recipe.extra:
        t0 = time.perf_counter()
        add(metamath.read(recipe.extra["metamath"]), metamath, "metamath", t0)
    if docs.get("proofnet"):
        from mathlas_build.sources import proofnet

        formal = [Document(id=f"proofnet-formal:{d.id.split(':', 1)[1]}", source="proofnet-formal", kind="exercise",
                           name="", title=d.title, body=d.extra.get("formal_statement", ""),
                           statement=" ".join(d.extra.get("formal_statement", "").split()), license=d.license)
                  for d in docs["proofnet"] if d.extra.get("formal_statement")]
        add(formal, proofnet, "proofnet formal statements", time.perf_counter())
    named = thousand.read(recipe.extra["thousand_plus"]) if "thousand_plus" in recipe.extra else []
    if named:
        info["1000-plus"] = {"count": len(named), "license": thousand.LICENSE, "attribution": thousand.ATTRIBUTION}
    by_id = {d.id: d for ds in docs.values() for d in ds}
    return Corpus(dict(docs), by_id, named, info)


# ------------------------------------------------------------------------ dev-set exclusion

@dataclass
class DevSets:
    targets: set[str]
    queries: set[str]          # normalised query texts
    blocked: set[str]          # targets plus their generated twins (@[to_additive], ...)


def load_dev_sets(files: list[Path], corpus: Corpus | None = None) -> DevSets:
    targets, queries = set(), set()
    for f in files:
        for line in Path(f).read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                targets.update(q["targets"])
                queries.add(normalise(q["query"]))
    blocked = set(targets)
    for d in (corpus.docs.get("lean", []) if corpus else []):
        src = d.extra.get("generated_from")
        if src and (f"lean:{src}" in targets or d.id in targets):
            blocked.update((d.id, f"lean:{src}"))
    return DevSets(targets, queries, blocked)


def exclusion_reason(p: Pair, dev: DevSets) -> str:
    if p.pos_id in dev.targets:
        return "positive is a dev target"
    if p.query_id in dev.targets:
        return "query taken from a dev target"
    if p.pos_id in dev.blocked or p.query_id in dev.blocked:
        return "twin of a dev target (generated declaration)"
    if normalise(p.query) in dev.queries:
        return "query equals a dev query"
    return ""


# ------------------------------------------------------------------------ the build

def _rng(seed: int, *parts: str) -> random.Random:
    return random.Random(seed * 1_000_003 + zlib.crc32("/".join(parts).encode()))


def _license(c: Corpus, doc_id: str) -> str:
    d = c.by_id.get(doc_id)
    return d.license if d is not None else ""


def build_pairs(recipe: TrainingRecipe, out: Path | None = None, quiet: bool = False) -> dict:
    """Build, filter, sample and mine the recipe's pairs; write them with the card; return the card."""
    from mathlas_build.training.card import write_card
    from mathlas_build.training.evalset import write_eval_corpora

    t_start = time.perf_counter()
    out = Path(out or recipe.pairs_dir)
    out.mkdir(parents=True, exist_ok=True)
    corpus = read_corpus(recipe, quiet)
    dev = load_dev_sets(recipe.exclude_files, corpus)
    t_read = time.perf_counter() - t_start
    neg_opts = {"top": int(recipe.negatives.get("top", 30)), "pick_from": int(recipe.negatives.get("pick_from", 5))}
    overlap = float(recipe.negatives.get("max_overlap", 0.8))
    miners: dict[str, Miner] = {}
    built: dict[str, int] = {}
    excluded: Counter = Counter()
    excluded_by_kind: dict[str, Counter] = defaultdict(Counter)
    no_negative: Counter = Counter()
    kept: list[Pair] = []
    done_builders: dict[Callable, list[Pair]] = {}
    dense = [DenseBundle(Path(b)) for b in recipe.negatives.get("dense_bundles", [])]
    dense_share = float(recipe.negatives.get("dense_share", 1.0))
    dense_margin = float(recipe.negatives.get("dense_margin", 0.95))
    dense_miners: dict[str, DenseMiner | None] = {}
    mined_by: dict[str, Counter] = defaultdict(Counter)
    for name, cap in recipe.pairs.items():
        kind = KINDS[name]
        if kind.build not in done_builders:
            done_builders[kind.build] = list(kind.build(corpus))
        seen: set[tuple[str, str]] = set()
        cands = []
        for p in done_builders[kind.build]:
            if p.kind != name or not p.query.strip() or normalise(p.query) == normalise(p.pos):
                continue
            key = (normalise(p.query), p.pos_id)
            if key in seen:
                continue
            seen.add(key)
            why = exclusion_reason(p, dev)
            if why:
                excluded[why] += 1
                excluded_by_kind[name][why] += 1
                continue
            cands.append(p)
        built[name] = len(cands)
        if cap and len(cands) > cap:
            cands = _rng(recipe.seed, "sample", name).sample(cands, cap)
        rng = _rng(recipe.seed, "negatives", name)
        t0 = time.perf_counter()
        dense_got = _mine_dense(cands, kind, corpus, dense, dense_miners, dense_share, recipe.seed, name, neg_opts,
                                dev, overlap, dense_margin) if dense else {}
        for k, p in enumerate(cands):
            if not p.neg_id and k in dense_got:
                p.neg_id, p.neg = dense_got[k]
                p.neg_by = "dense"
                mined_by[name]["dense"] += 1
            elif not p.neg_id:
                pool = _pool_of(p, kind, corpus)
                if pool not in miners:
                    docs = corpus.docs.get(pool, [])
                    miners[pool] = Miner(docs, excluded=dev.blocked, max_overlap=overlap)
                got = miners[pool].mine(p.query, p.pos_id, p.pos, kind.view, rng, **neg_opts)
                if got is None:
                    no_negative[name] += 1
                else:
                    p.neg_id, p.neg = got
                    p.neg_by = "bm25"
                    mined_by[name]["bm25"] += 1
            p.licenses = tuple(sorted({x for x in (_license(corpus, p.query_id), _license(corpus, p.pos_id),
                                                  _license(corpus, p.neg_id)) if x}
                                      | ({"Unlicense"} if name.startswith("thousand") else set())))
        kept.extend(cands)
        if not quiet:
            print(f"[pairs] {name}: {len(cands):,} kept of {built[name]:,} "
                  f"({sum(excluded_by_kind[name].values()):,} excluded as dev targets, "
                  f"{no_negative[name]:,} without a negative, {mined_by[name]['dense']:,} dense; "
                  f"negatives {time.perf_counter() - t0:.1f} s)",
                  file=sys.stderr, flush=True)
    with open(out / "pairs.jsonl", "w", encoding="utf-8") as fh:
        for p in kept:
            fh.write(json.dumps({"kind": p.kind, "query": p.query, "pos_id": p.pos_id, "pos": p.pos[:TEXT_LIMIT],
                                 "neg_id": p.neg_id, "neg": p.neg[:TEXT_LIMIT], "neg_by": p.neg_by, "query_id": p.query_id,
                                 "licenses": list(p.licenses)}, ensure_ascii=False) + "\n")
    eval_info = write_eval_corpora(recipe, corpus, dev, out)
    mining = {"dense_bundles": [b.label for b in dense], "dense_share": dense_share if dense else 0.0,
              "pool_coverage": {pool: round(m.coverage, 4) for pool, m in dense_miners.items() if m is not None},
              "by_kind": {k: dict(v) for k, v in mined_by.items()}}
    return write_card(recipe, out, kept, built, excluded, excluded_by_kind, no_negative, corpus.info, eval_info,
                      timings={"read_s": round(t_read, 1), "total_s": round(time.perf_counter() - t_start, 1)},
                      mining=mining)


def _pool_of(p: Pair, kind: Kind, corpus: Corpus) -> str:
    """The source a pair's negatives come from: the kind's pool, or the positive's own source ("*")."""
    return corpus.by_id[p.pos_id].source if kind.pool == "*" else kind.pool


# A dense miner serves a pool when the bundle holds at least this share of the pool's documents.
DENSE_COVERAGE = 0.5


def _dense_miner(pool: str, corpus: Corpus, dense: list[DenseBundle], dev: DevSets, overlap: float,
                 margin: float) -> DenseMiner | None:
    docs = corpus.docs.get(pool, [])
    best = None
    for b in dense:
        m = DenseMiner(docs, b, excluded=dev.blocked, max_overlap=overlap, margin=margin)
        if m.coverage >= DENSE_COVERAGE and (best is None or m.coverage > best.coverage):
            best = m
    return best


def _mine_dense(cands: list[Pair], kind: Kind, corpus: Corpus, dense: list[DenseBundle], miners: dict,
                share: float, seed: int, name: str, neg_opts: dict, dev: DevSets, overlap: float,
                margin: float) -> dict:
    """Dense negatives (position in ``cands`` -> (id, text)) for the seeded ``share`` of a kind's pairs
    whose pool a bundle covers; the others, and any the dense miner finds nothing for, go to BM25."""
    pick = _rng(seed, "dense-share", name)
    by_pool: dict[str, list[int]] = defaultdict(list)
    for k, p in enumerate(cands):
        if not p.neg_id and pick.random() < share:
            by_pool[_pool_of(p, kind, corpus)].append(k)
    out = {}
    for pool, ks in by_pool.items():
        if pool not in miners:
            miners[pool] = _dense_miner(pool, corpus, dense, dev, overlap, margin)
        m = miners[pool]
        if m is None:
            continue
        rng = _rng(seed, "dense-negatives", name, pool)
        got = m.mine_many([cands[k] for k in ks], kind.view, rng, top=neg_opts["top"], pick_from=neg_opts["pick_from"])
        out.update({k: g for k, g in zip(ks, got) if g is not None})
    return out
