"""The shipped encoder trained further on a GPU, and the default bundle's documents embedded with it.

    python scripts/study_encoder_gpu.py prepare [--pairs work/pairs/math-pairs-2/pairs.jsonl] [--out .gpu]
                                                [--formal-bundle DIR] [--rounds 1,2,3] [--hold-out 4]
    python scripts/study_encoder_gpu.py train --data .gpu --out OUT [--budget 420] [--device cuda]
                                              [--variants mined+tune,tune,mined | mined+tune/0of2,...] [--no-keep]
    python scripts/study_encoder_gpu.py install --data .gpu --result OUT --bundle-out DIR
    python scripts/study_encoder_gpu.py crossfit --result OUT2 --bundle DIR --base-cache P.npz --out-cache CF.npz

``prepare`` (here, with the runtime) writes what a bare GPU machine needs into one folder (~45 MB):
- the default bundle's int8 query encoder (``encoder/``; the only copy of the round-2 weights, see
  docs/training.md);
- the retrieval text of every document in bundle row order;
- the collection's queries as the dense channel encodes them, with their relevant ids, split and
  judged-unrelated hits (``--rounds``: which rounds, the first by default; ``--hold-out``: rounds whose
  queries are scored as split ``held`` and never trained on);
- the mined pairs of ``mathlas-build pairs`` after the leak check of issue 30 (a pair is dropped when its
  positive is a relevant id of a check or informal-dev query, or its query is a collection query);
- with ``--formal-bundle``, formal-dev and formal-qr-dev over their targets and 30,000 seeded declarations.

``train`` (there: torch, tokenizers, transformers and onnx only; no mathlas runtime):
- dequantises the encoder (``mathlas_build.training.from_onnx``) and measures it;
- trains a fresh copy per variant with the trainer's loss (MultipleNegativesRankingLoss, scale 20, in-batch
  and hard negatives, a candidate that is one of the query's relevant documents masked out), word
  embeddings frozen;
- after each epoch, embeds all documents and scores the dense channel alone (exact scan) on tune / check /
  dev, and on the formal sets when prepared;
- ``mined+tune/0of2`` holds tune's fold 0 of 2 out and returns that fold's query vectors and every
  document's vector (``folds.npz``, ``fold0-*.i8.npy``) for ``crossfit``;
- keeps the variant and epoch with the best check MRR@20 (unless ``--no-keep``): its weights (fp16, without
  the frozen word embeddings) and document vectors (the bundle's row-wise int8 and scales) go to OUT with
  ``result.json`` (every figure, each query's rank, the CUDA timings; rewritten after every epoch).
``--budget`` (seconds) stops training early enough for the files to be written.

``install`` (here) rebuilds the HF checkpoint (the frozen dequantised word embeddings + the returned
weights), exports it as the runtime's int8 ONNX encoder, and writes a copy of the default bundle with the
new encoder and the returned vectors, ready for ``scripts/collection.py`` and ``scripts/train_ranker.py``
(``--bundle DIR``). ``crossfit`` writes a pool cache of that copy whose tune pools come from the fold
encoders, so that the learned stage retrained on it never sees a dense channel trained on its own query.
docs/training.md ("Round 3 of the encoder on a GPU") says what it measured.
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import shutil
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))
sys.path.insert(0, str(ROOT / "scripts"))

SPLITS = ("tune", "check", "dev", "held")  # "held": a round prepared with --hold-out (scored, never trained on)
FORMAL_SETS = ("formal-dev", "formal-qr-dev")
FORMAL_SAMPLE = 30_000  # declarations of the formal bundle beside the formal sets' targets
TEXT_CHARS = 600  # a pair's texts are cut here: training reads 96 tokens of a document (~450 characters)


def _norm(q: str) -> str:
    return " ".join(q.lower().split())


def _write_gz(path: Path, rows) -> int:
    n = 0
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
            n += 1
    return n


def _need(path: Path, how: str) -> Path:
    """``path``, or a one-line exit saying what makes it."""
    if not path.exists():
        raise SystemExit(f"study_encoder_gpu.py: no {path}: {how}")
    return path


def _save_i8(out: Path, stem: str, vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as the bundle stores them (``writer.quantize_i8``: row-wise int8), in two halves
    (``stem-a.i8.npy``, ``stem-b.i8.npy``: a file that comes back from the GPU machine is at most 16 MB);
    returns the scales."""
    from mathlas_build.writer import quantize_i8

    q8, scale = quantize_i8(np.asarray(vectors, dtype=np.float32))
    np.save(out / f"{stem}-a.i8.npy", q8[:len(q8) // 2])
    np.save(out / f"{stem}-b.i8.npy", q8[len(q8) // 2:])
    return scale


def _load_i8(where: Path, stem: str, scale: np.ndarray) -> np.ndarray:
    """The float vectors ``_save_i8`` wrote (int8 x scale, as the bundle reads them)."""
    q8 = np.concatenate([np.load(where / f"{stem}-a.i8.npy"), np.load(where / f"{stem}-b.i8.npy")])
    return q8.astype(np.float32) * np.asarray(scale, dtype=np.float32)[:, None]


def _read_gz(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# ---------------------------------------------------------------- prepare (here)

def prepare_formal(bundle_dir: Path, out: Path) -> dict:
    """The formal sets (shared/eval formal-dev, formal-qr-dev) as the formal bundle's dense channel encodes
    them, and the retrieval texts of their targets and ``FORMAL_SAMPLE`` seeded random declarations."""
    from mathlas.engine import open_bundle
    from mathlas.ranking.abbreviations import expand
    from mathlas.ranking.query import dense_text

    fb = open_bundle(str(bundle_dir))
    ids = fb.column("id").to_pylist()
    key = {x: i for i, x in enumerate(ids)}
    queries = []
    for name in FORMAL_SETS:
        path = ROOT.parent / "shared" / "eval" / f"{name}.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                rel = [t for t in q["targets"] if t in key]
                if rel:
                    queries.append({"qid": q["id"], "split": name, "relevant": rel,
                                    "query": dense_text(expand(q["query"])[0], fb.manifest)})
    need = {key[t] for q in queries for t in q["relevant"]}
    rest = [i for i in np.random.default_rng(0).permutation(len(ids)).tolist() if i not in need][:FORMAL_SAMPLE]
    rows = sorted(need | set(rest))
    texts = fb.column("text").to_pylist()
    _write_gz(out / "formal-texts.jsonl.gz", ({"id": ids[i], "text": texts[i]} for i in rows))
    _write_gz(out / "formal-queries.jsonl.gz", queries)
    return {"formal_documents": len(rows), "formal_queries": {s: sum(q["split"] == s for q in queries) for s in FORMAL_SETS}}


def prepare(pairs_path: Path, out: Path, max_pairs: int, formal_bundle: Path | None = None,
            rounds: tuple[int, ...] = (1,), hold_out: tuple[int, ...] = ()) -> None:
    """``rounds``: the collection's rounds whose queries come (their tune splits train, their check splits
    and informal-dev are scored); ``hold_out``: rounds whose queries are all scored and none trained on
    (split ``held``: the fourth round, drafted after 1.6.1's stage, held out from a study of the encoder)."""
    import collection as S

    from mathlas.engine import open_bundle
    from mathlas.ranking.abbreviations import expand
    from mathlas.ranking.query import dense_text

    _need(pairs_path, "run `mathlas-build pairs build/recipes/pairs-2.toml` first")  # before anything is written
    out.mkdir(parents=True, exist_ok=True)
    b = open_bundle(None)
    enc = out / "encoder"
    enc.mkdir(exist_ok=True)
    for f in ("model.onnx", "tokenizer.json", "encoder.json"):
        shutil.copyfile(Path(b.root) / "encoder" / f, enc / f)
    ids, texts = b.column("id").to_pylist(), b.column("text").to_pylist()
    _write_gz(out / "texts.jsonl.gz", ({"id": i, "text": t} for i, t in zip(ids, texts)))
    recs = [{**r, "split": "held"} if r.get("round") in hold_out else r
            for r in S.records(rounds=tuple(sorted({*rounds, *hold_out}))) if r["relevant"]]
    unrelated: dict[str, set[str]] = {}
    for (qid, doc), j in S.C.judgments(S.COLLECTION).items():
        if j["label"] == "unrelated":
            unrelated.setdefault(qid, set()).add(doc)
    # the text the dense channel encodes: dense_text of the query after abbreviation expansion
    queries = [{"qid": r["id"], "split": r["split"], "query": dense_text(expand(r["query"])[0], b.manifest),
                "relevant": r["relevant"], "unrelated": sorted(unrelated.get(r["id"], ()))} for r in recs]
    _write_gz(out / "queries.jsonl.gz", queries)
    held = {d for q in queries if q["split"] != "tune" for d in q["relevant"]}
    asked = {_norm(q["query"]) for q in queries}
    kept, dropped = [], {"positive held out": 0, "collection query": 0}
    with open(pairs_path, encoding="utf-8") as fh:
        for line in fh:
            p = json.loads(line)
            if p["pos_id"] in held:
                dropped["positive held out"] += 1
            elif _norm(p["query"]) in asked:
                dropped["collection query"] += 1
            else:
                kept.append({"kind": p["kind"], "query": p["query"], "pos_id": p["pos_id"], "pos": p["pos"][:TEXT_CHARS],
                             "neg_id": p.get("neg_id"), "neg": (p.get("neg") or "")[:TEXT_CHARS] or None})
    if max_pairs and len(kept) > max_pairs:
        kept = random.Random(0).sample(kept, max_pairs)
    _write_gz(out / "pairs.jsonl.gz", kept)
    info = {"documents": len(ids), "queries": {s: sum(q["split"] == s for q in queries) for s in SPLITS},
            "pairs": len(kept), "dropped": dropped, "pairs_file": str(pairs_path.name)}
    if formal_bundle:
        info |= prepare_formal(formal_bundle, out)
    (out / "prepared.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(json.dumps(info), f"{size / 1e6:.1f} MB", sep="\n")


# ---------------------------------------------------------------- train (on the GPU machine)

class Tok:
    def __init__(self, path: Path):
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(str(path))
        self.tok.no_padding()
        self.tok.no_truncation()

    def ids(self, texts: list[str], limit: int) -> list[list[int]]:
        out = []
        for e in self.tok.encode_batch(texts):
            ids = e.ids
            if len(ids) > limit:
                ids = ids[:limit - 1] + [ids[-1]]  # keep [SEP]
            out.append(ids)
        return out


def _batch(torch, rows: list[list[int]], device):
    n = max(len(r) for r in rows)
    ids = torch.zeros((len(rows), n), dtype=torch.long)
    mask = torch.zeros((len(rows), n), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, :len(r)] = torch.tensor(r)
        mask[i, :len(r)] = 1
    return ids.to(device, non_blocking=True), mask.to(device, non_blocking=True)


def _embed(torch, model, ids, mask):
    h = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).last_hidden_state
    m = mask.unsqueeze(-1).to(h.dtype)
    v = (h * m).sum(1) / m.sum(1).clamp(min=1)
    return torch.nn.functional.normalize(v.float(), dim=-1)


def embed_all(torch, model, token_rows: list[list[int]], device, max_tokens: int = 16384):
    """Every row embedded (no grad, bf16 autocast), batches by length; float32 (n, dims) on the device."""
    order = np.argsort([len(r) for r in token_rows])
    out = torch.empty((len(token_rows), 384), dtype=torch.float32, device=device)
    model.eval()
    with torch.no_grad(), torch.autocast(device_type=device.type, dtype=torch.bfloat16,
                                         enabled=device.type == "cuda"):
        a = 0
        while a < len(order):
            b = a + 1
            while b < len(order) and (b - a + 1) * len(token_rows[order[b]]) <= max_tokens and b - a < 1024:
                b += 1
            idx = order[a:b]
            ids, mask = _batch(torch, [token_rows[i] for i in idx], device)
            out[torch.as_tensor(idx, device=device)] = _embed(torch, model, ids, mask)
            a = b
    return out


def dense_eval(torch, Qv, Dv, queries: list[dict], key: dict[str, int], splits=SPLITS) -> dict:
    ranks = []
    for a in range(0, len(queries), 256):
        top = torch.topk(Qv[a:a + 256] @ Dv.T, 100, dim=1).indices.cpu().numpy()
        for row, q in zip(top, queries[a:a + 256]):
            pos = [key[d] for d in q["relevant"] if d in key]
            hit = np.flatnonzero(np.isin(row, pos))
            ranks.append(int(hit[0]) if len(hit) else None)
    out = {"ranks": {q["qid"]: r for q, r in zip(queries, ranks)}}
    for s in splits:
        rs = [r for q, r in zip(queries, ranks) if q["split"] == s]
        n = max(1, len(rs))
        out[s] = {"n": len(rs), "mrr@20": sum(1 / (r + 1) for r in rs if r is not None and r < 20) / n,
                  "hit@10": sum(r is not None and r < 10 for r in rs) / n,
                  "hit@100": sum(r is not None for r in rs) / n}
    return out


def tune_folds(queries: list[dict], k: int) -> dict[str, int]:
    """Each tune query's fold of ``k`` (a seeded shuffle of the sorted ids): the same here and there."""
    qids = sorted(q["qid"] for q in queries if q["split"] == "tune")
    random.Random(7).shuffle(qids)
    return {q: i % k for i, q in enumerate(qids)}


def training_rows(variant: str, pairs: list[dict], queries: list[dict], texts: dict[str, str],
                  tune_repeat: int) -> list[dict]:
    rows = []
    if "mined" in variant:
        for p in pairs:
            rows.append({"q": p["query"], "pos": p["pos"], "pos_id": p["pos_id"], "rel": [p["pos_id"]],
                         "neg": p.get("neg"), "neg_id": p.get("neg_id")})
    if "tune" in variant:
        rng = random.Random(1)
        for q in queries:
            if q["split"] != "tune":
                continue
            rel = [d for d in q["relevant"] if d in texts]
            for _ in range(tune_repeat):
                for d in rel:
                    neg = rng.choice(q["unrelated"]) if q["unrelated"] else None
                    rows.append({"q": q["query"], "pos": texts[d], "pos_id": d, "rel": rel,
                                 "neg": texts.get(neg) if neg else None, "neg_id": neg})
    return rows


def train(data: Path, out: Path, budget: float, device_name: str, batch_size: int, epochs: int,
          variants: list[str], tune_repeat: int, max_steps: int, sample_docs: int = 0, keep: bool = True) -> None:
    import torch
    from transformers import BertConfig, BertModel

    from mathlas_build.training.from_onnx import MINILM_CONFIG, dequantized_weights

    t_start = time.perf_counter()
    _need(data / "encoder" / "model.onnx", "run `prepare --out DIR` here and send DIR")  # before anything is written
    out.mkdir(parents=True, exist_ok=True)
    device = torch.device(device_name)
    result: dict = {"device": torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu",
                    "torch": torch.__version__, "variants": {}, "timings": {}}

    def save():
        (out / "result.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")

    def say(msg: str) -> None:
        print(f"[{time.perf_counter() - t_start:6.1f} s] {msg}", flush=True)

    weights = dequantized_weights(data / "encoder" / "model.onnx")
    tok = Tok(data / "encoder" / "tokenizer.json")
    docs = _read_gz(data / "texts.jsonl.gz")
    queries = _read_gz(data / "queries.jsonl.gz")
    splits = [x for x in SPLITS if any(q["split"] == x for q in queries)]  # "held" only when prepared with it
    pairs = _read_gz(data / "pairs.jsonl.gz")
    if sample_docs:  # a smoke test on a CPU: every relevant document and a sample of the rest
        need = {d for q in queries for d in q["relevant"]}
        rest = [d for d in docs if d["id"] not in need]
        docs = [d for d in docs if d["id"] in need] + random.Random(0).sample(rest, min(sample_docs, len(rest)))
        pairs = pairs[:sample_docs]
    key = {d["id"]: i for i, d in enumerate(docs)}
    texts = {d["id"]: d["text"] for d in docs}
    formal: dict = {}
    if (data / "formal-texts.jsonl.gz").is_file():
        fdocs = _read_gz(data / "formal-texts.jsonl.gz")
        fq = _read_gz(data / "formal-queries.jsonl.gz")
        if sample_docs:
            need = {d for q in fq for d in q["relevant"]}
            fdocs = [d for d in fdocs if d["id"] in need] + [d for d in fdocs if d["id"] not in need][:sample_docs]
        formal = {"queries": fq, "key": {d["id"]: i for i, d in enumerate(fdocs)},
                  "doc_tokens": tok.ids([d["text"] for d in fdocs], 256), "q_tokens": tok.ids([q["query"] for q in fq], 256)}
    t = time.perf_counter()
    doc_tokens = tok.ids([d["text"] for d in docs], 256)
    q_tokens = tok.ids([q["query"] for q in queries], 256)
    result["timings"]["tokenize_documents_s"] = round(time.perf_counter() - t, 2)
    say(f"{len(docs):,} documents, {len(queries)} queries, {len(pairs):,} pairs; tokenized")

    def fresh():
        m = BertModel(BertConfig(**MINILM_CONFIG), add_pooling_layer=False)
        got = m.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in weights.items()}, strict=False)
        missing = [k for k in got.missing_keys if not k.endswith("_ids")]
        if missing or got.unexpected_keys:
            raise SystemExit(f"the dequantised weights do not fill BertModel: {missing[:5]} {got.unexpected_keys[:5]}")
        return m.to(device)

    def measure(model, label: str) -> tuple:
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        Dv = embed_all(torch, model, doc_tokens, device)
        if device.type == "cuda":
            torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        Qv = embed_all(torch, model, q_tokens, device)
        ev = dense_eval(torch, Qv, Dv, queries, key, splits)
        ev["embed_documents_s"] = round(dt, 2)
        last["Qv"] = Qv
        shown = list(splits)
        if formal:  # the formal sets over their targets and the sampled declarations
            FD = embed_all(torch, model, formal["doc_tokens"], device)
            FQ = embed_all(torch, model, formal["q_tokens"], device)
            fev = dense_eval(torch, FQ, FD, formal["queries"], formal["key"], FORMAL_SETS)
            ev["formal"] = fev
            ev |= {s: fev[s] for s in FORMAL_SETS}
            shown += list(FORMAL_SETS)
        say(f"{label}: " + "; ".join(f"{s} {ev[s]['mrr@20']:.3f}/{ev[s]['hit@10']:.3f}/{ev[s]['hit@100']:.3f}"
                                     for s in shown) + f" (documents embedded in {dt:.1f} s)")
        return ev, Dv

    last: dict = {}
    folds: dict = {}
    base = fresh()
    ev0, _ = measure(base, "shipped (dequantised)")
    result["baseline"] = ev0
    result["timings"]["documents_per_s"] = round(len(docs) / ev0["embed_documents_s"])
    save()
    del base
    best = {"mrr": ev0["check"]["mrr@20"], "name": "shipped", "state": None, "vectors": None}

    def train_variant(variant: str, best: dict) -> dict:
        kind, _, fold = variant.partition("/")  # "mined+tune/1of2": tune's fold 1 of 2 held out
        held: set[str] = set()
        if fold:
            f, k = (int(x) for x in fold.split("of"))
            held = {q for q, g in tune_folds(queries, k).items() if g == f}
        rows = training_rows(kind, pairs, [q for q in queries if q["qid"] not in held], texts, tune_repeat)
        if not rows or time.perf_counter() - t_start > budget:
            return best
        model = fresh()
        model.embeddings.word_embeddings.weight.requires_grad_(False)
        params = [p for p in model.parameters() if p.requires_grad]
        steps_per_epoch = max(1, len(rows) // batch_size)
        total = steps_per_epoch * epochs if not max_steps else min(max_steps, steps_per_epoch * epochs)
        opt = torch.optim.AdamW(params, lr=2e-5, weight_decay=0.01)
        warm = min(100, total // 10 + 1)
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (total - s) / max(1, total - warm)) if s >= warm
            else (s + 1) / warm)
        info = {"pairs": len(rows), "batch": batch_size, "epochs": [], "steps": 0}
        result["variants"][variant] = info
        step = 0
        stopped = False
        for epoch in range(epochs):
            order = list(range(len(rows)))
            random.Random(1000 + epoch).shuffle(order)
            model.train()
            t0 = time.perf_counter()
            losses = []
            for s in range(steps_per_epoch):
                if step >= total or time.perf_counter() - t_start > budget:
                    stopped = True
                    break
                batch = [rows[i] for i in order[s * batch_size:(s + 1) * batch_size]]
                qi, qm = _batch(torch, tok.ids([r["q"] for r in batch], 64), device)
                cand = [(r["pos_id"], r["pos"]) for r in batch] + [(r["neg_id"], r["neg"]) for r in batch if r["neg"]]
                di, dm = _batch(torch, tok.ids([c[1] for c in cand], 96), device)
                with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                    q = _embed(torch, model, qi, qm)
                    d = _embed(torch, model, di, dm)
                logits = 20.0 * q @ d.T
                mask = torch.zeros_like(logits, dtype=torch.bool)
                for i, r in enumerate(batch):
                    rel = set(r["rel"])
                    for j, (cid, ctext) in enumerate(cand):
                        if j != i and (cid in rel or ctext == r["pos"]):
                            mask[i, j] = True
                logits = logits.masked_fill(mask, -1e4)
                loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(batch), device=device))
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                opt.step()
                sched.step()
                losses.append(float(loss.detach()))
                step += 1
                if step % 100 == 0:
                    say(f"{variant} step {step}/{total} loss {np.mean(losses[-100:]):.3f}")
            if device.type == "cuda":
                torch.cuda.synchronize()
            dt = time.perf_counter() - t0
            done = len(losses)
            if not done:
                break
            ev, Dv = measure(model, f"{variant} epoch {epoch + 1} ({done} steps)")
            info["epochs"].append({"epoch": epoch + 1, "steps": done, "loss": float(np.mean(losses)) if losses else None,
                                   "train_s": round(dt, 1), "steps_per_s": round(done / dt, 2) if dt else None,
                                   **{k: v for k, v in ev.items()}})
            info["steps"] = step
            if fold:  # the held-out fold's query vectors and every document's: pools for the learned stage
                at = [i for i, q in enumerate(queries) if q["qid"] in held]
                folds[fold] = {"qids": [queries[i]["qid"] for i in at],
                               "q": last["Qv"][at].cpu().numpy(), "d": Dv.cpu().numpy()}
                held_ranks = [ev["ranks"][queries[i]["qid"]] for i in at]
                info["held_out"] = {"n": len(at), "mrr@20": sum(1 / (r + 1) for r in held_ranks
                                                                if r is not None and r < 20) / max(1, len(at))}
                save()
                break
            if ev["check"]["mrr@20"] > best["mrr"]:
                best = {"mrr": ev["check"]["mrr@20"], "name": f"{variant}@{epoch + 1}",
                        "state": {k: v.detach().to("cpu", torch.float16).clone() for k, v in model.state_dict().items()
                                  if k != "embeddings.word_embeddings.weight" and not k.endswith("_ids")},
                        "vectors": Dv.cpu().numpy()}
            save()
            if stopped:
                break
        del model, opt
        if device.type == "cuda":
            torch.cuda.empty_cache()
        return best

    def finish(best: dict) -> None:
        result["kept"] = best["name"]
        if best["state"] is not None and keep:
            names = sorted(best["state"])
            half = len(names) // 2
            torch.save({k: best["state"][k] for k in names[:half]}, out / "weights-a.pt")
            torch.save({k: best["state"][k] for k in names[half:]}, out / "weights-b.pt")
            np.save(out / "vectors.scale.npy", _save_i8(out, "vectors", best["vectors"]))
        if folds:
            arrays = {}
            for n, (fold, v) in enumerate(sorted(folds.items())):
                scale = _save_i8(out, f"fold{n}", v["d"])
                arrays |= {f"name{n}": np.array(fold), f"scale{n}": scale, f"qids{n}": np.array(v["qids"]),
                           f"q{n}": v["q"].astype(np.float32)}
            np.savez(out / "folds.npz", **arrays)
        result["total_s"] = round(time.perf_counter() - t_start, 1)
        save()
        say(f"kept {best['name']} (check MRR@20 {best['mrr']:.3f})")


    for variant in variants:
        try:
            best = train_variant(variant, best)
        except Exception as e:  # one variant's failure keeps the others' figures
            result["variants"].setdefault(variant, {})["error"] = f"{type(e).__name__}: {e}"
            say(f"{variant} failed: {type(e).__name__}: {e}")
            save()
    finish(best)


# ---------------------------------------------------------------- install (here)

def install(data: Path, result: Path, bundle_out: Path) -> None:
    import torch
    from transformers import BertConfig, BertModel

    from mathlas.bundle import file_entries, read_manifest, write_manifest
    from mathlas.engine import open_bundle
    from mathlas_build.training.from_onnx import MINILM_CONFIG, dequantized_weights
    from mathlas_build.writer import write_vectors

    res = json.loads(_need(result / "result.json", "give the OUT of a `train` run").read_text(encoding="utf-8"))
    _need(result / "weights-a.pt", f"that run kept no weights (kept: {res.get('kept')}; `--no-keep`, or no variant "
                                   "beat the shipped encoder on check)")
    weights = dequantized_weights(_need(data / "encoder" / "model.onnx", "run `prepare` first"))
    state = {k: torch.from_numpy(np.array(v)) for k, v in weights.items()}
    for part in ("weights-a.pt", "weights-b.pt"):
        state.update({k: v.float() for k, v in torch.load(result / part).items()})
    model = BertModel(BertConfig(**MINILM_CONFIG), add_pooling_layer=False)
    model.load_state_dict(state, strict=False)
    hf = bundle_out.parent / (bundle_out.name + "-hf")
    model.save_pretrained(str(hf))
    shutil.copyfile(data / "encoder" / "tokenizer.json", hf / "tokenizer.json")
    b = open_bundle(None)
    if bundle_out.exists():
        shutil.rmtree(bundle_out)
    shutil.copytree(b.root, bundle_out)
    enc_dir = bundle_out / "encoder"
    export_int8(hf, enc_dir, res)
    V = _load_i8(result, "vectors", np.load(result / "vectors.scale.npy"))
    shutil.rmtree(bundle_out / "vectors")
    write_vectors(V, bundle_out)
    m = read_manifest(bundle_out)
    m.encoder = json.loads((enc_dir / "encoder.json").read_text(encoding="utf-8"))
    m.version = f"{m.version}+{bundle_out.name}"  # another label: no cache keyed by the bundle mixes the two
    m.files = file_entries(bundle_out)
    write_manifest(bundle_out, m)
    print(f"wrote {bundle_out} with {res['kept']}")


def export_int8(hf: Path, enc_dir: Path, res: dict) -> None:
    """The runtime's int8 encoder files from ``hf`` into ``enc_dir`` (model.onnx, encoder.json's training note)."""
    from mathlas_build import export_encoder as ee

    tmp = enc_dir.parent / "encoder-export"
    ee.export_encoder(str(hf), tmp, work_dir=enc_dir.parent / "encoder-export.work")
    shutil.copyfile(tmp / "model.onnx", enc_dir / "model.onnx")
    shutil.rmtree(enc_dir.parent / "encoder-export.work")
    cfg = json.loads((enc_dir / "encoder.json").read_text(encoding="utf-8"))
    cfg["name"] = "all-MiniLM-L6-v2-math-v3-study"
    cfg["training"] = {**cfg.get("training", {}), "round3_gpu_study": {"kept": res["kept"], "device": res["device"]}}
    (enc_dir / "encoder.json").write_text(json.dumps(cfg, indent=1) + "\n", encoding="utf-8")
    shutil.rmtree(tmp)


def crossfit(data: Path, result: Path, bundle: Path, base_cache: Path, out_cache: Path) -> None:
    """Pools for the learned stage whose tune queries are cross-fitted: each tune query's pool comes from
    the documents and query vector of the encoder trained without its fold (``train --variants
    mined+tune/0of2,mined+tune/1of2``), check's and dev's from ``bundle`` (the encoder trained on all of
    tune). Written as a pool cache of ``bundle`` for ``scripts/train_ranker.py --cache``."""
    import train_ranker as T

    from mathlas import encoder as E
    from mathlas.bundle import file_entries, read_manifest, write_manifest
    from mathlas.engine import open_bundle
    from mathlas.ranking.pipeline import pipeline_for
    from mathlas_build.training import ltr
    from mathlas_build.writer import write_vectors

    b = open_bundle(str(bundle))
    stamp = T.pool_stamp(b)
    have = T.load_pools(base_cache, stamp)
    if not have:
        raise SystemExit(f"{base_cache} holds no pools of {b.label}: run scripts/train_ranker.py --bundle "
                         f"{bundle} --cache {base_cache} first")
    recs = {r["id"]: r for r in T.records()}
    text = {q["qid"]: q["query"] for q in _read_gz(data / "queries.jsonl.gz")}
    z = np.load(_need(result / "folds.npz", "train with --variants mined+tune/0of2,mined+tune/1of2 first"))
    plain = E.Encoder.encode_queries
    n_folds = sum(1 for k in z.files if k.startswith("name"))
    for n in range(n_folds):
        fold_dir = bundle.parent / f"{bundle.name}-fold{n}"
        if fold_dir.exists():
            shutil.rmtree(fold_dir)
        shutil.copytree(bundle, fold_dir)
        V = _load_i8(result, f"fold{n}", z[f"scale{n}"])
        shutil.rmtree(fold_dir / "vectors")
        write_vectors(V, fold_dir)
        m = read_manifest(fold_dir)
        m.version = f"{m.version}-fold{n}"
        m.files = file_entries(fold_dir)
        write_manifest(fold_dir, m)
        fb = open_bundle(str(fold_dir))
        qids = z[f"qids{n}"].tolist()
        table = {text[q]: v for q, v in zip(qids, z[f"q{n}"])}  # exactly the texts the device encoded

        def encode(self, texts, _table=table):
            missing = [t for t in texts if t not in _table]
            if missing:
                raise KeyError(f"no fold query vector for {missing[0]!r}")
            return np.stack([_table[t] for t in texts]).astype(np.float32)

        E.Encoder.encode_queries = encode
        try:
            pipeline_for(fb).vectors.forget()
            for q in qids:
                have[q] = ltr.pool(fb, recs[q]["query"])
        finally:
            E.Encoder.encode_queries = plain
        print(f"fold {n} ({z[f'name{n}']}): {len(qids)} tune pools from {fold_dir.name}", file=sys.stderr)
    T.save_pools(out_cache, stamp, have)
    print(f"wrote {out_cache}: {len(have)} pools", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--pairs", type=Path, default=Path("work/pairs/math-pairs-2/pairs.jsonl"))
    p.add_argument("--out", type=Path, default=Path(".gpu"))
    p.add_argument("--max-pairs", type=int, default=0)
    p.add_argument("--formal-bundle", type=Path, help="also the formal sets over this formal bundle's declarations")
    p.add_argument("--rounds", default="1", help="the collection's rounds whose tune splits train (e.g. 1,2,3)")
    p.add_argument("--hold-out", default="", help="rounds scored and never trained on (e.g. 4)")
    t = sub.add_parser("train")
    t.add_argument("--data", type=Path, default=Path(".gpu"))
    t.add_argument("--out", type=Path, required=True)
    t.add_argument("--budget", type=float, default=420.0, help="seconds after which no training step starts")
    t.add_argument("--device", default="cuda")
    t.add_argument("--batch", type=int, default=64)
    t.add_argument("--epochs", type=int, default=2)
    t.add_argument("--variants", default="mined+tune,mined,tune")
    t.add_argument("--tune-repeat", type=int, default=3)
    t.add_argument("--max-steps", type=int, default=0, help="steps per variant at most (0: all epochs)")
    t.add_argument("--sample-docs", type=int, default=0, help="a smoke test: relevant documents + N others")
    t.add_argument("--no-keep", action="store_true", help="write figures only, no weights or vectors")
    i = sub.add_parser("install")
    i.add_argument("--data", type=Path, default=Path(".gpu"))
    i.add_argument("--result", type=Path, required=True)
    i.add_argument("--bundle-out", type=Path, required=True)
    c = sub.add_parser("crossfit")
    c.add_argument("--data", type=Path, default=Path(".gpu"))
    c.add_argument("--result", type=Path, required=True)
    c.add_argument("--bundle", type=Path, required=True)
    c.add_argument("--base-cache", type=Path, required=True)
    c.add_argument("--out-cache", type=Path, required=True)
    a = ap.parse_args()
    if a.cmd == "crossfit":
        crossfit(a.data, a.result, a.bundle, a.base_cache, a.out_cache)
    elif a.cmd == "prepare":
        from mathlas_build.training import collection as C

        prepare(a.pairs, a.out, a.max_pairs, a.formal_bundle, C.parse_rounds(a.rounds),
                C.parse_rounds(a.hold_out) if a.hold_out else ())
    elif a.cmd == "train":
        train(a.data, a.out, a.budget, a.device, a.batch, a.epochs, [v for v in a.variants.split(",") if v],
              a.tune_repeat, a.max_steps, a.sample_docs, keep=not a.no_keep)
    else:
        install(a.data, a.result, a.bundle_out)


if __name__ == "__main__":
    main()
