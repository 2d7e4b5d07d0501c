"""Recipes: the small TOML files in build/recipes/ that describe a bundle reproducibly.

```toml
name = "informal"                    # bundle name (also the installed name)
version = "1.0.0"
description = "..."

[encoder]                            # one of path and release:
path = "work/encoders/minilm-l6-v2"  # an encoder/ directory (model.onnx, tokenizer.json, encoder.json)
release = "informal"                 # or: the encoder/ of a release in the repository's artifacts/catalog.json,
                                     # "name-version" exactly or "name" for its newest version; the archive
                                     # is checked against the catalog's sha256 and unpacked once, verified,
                                     # into <work>/releases/<name>-<version>-<sha12>/ (work/ of the current
                                     # directory); its int8 model embeds the documents
releases = "artifacts"               # optional: the catalog's directory (default: the repository's artifacts/)
carry = true                         # optional, with release: texts the release holds keep its vectors
                                     # (mathlas_build.carry), the build embeds only the others; its cache is
                                     # <work>/carry/<release dir>/, never the build's --cache
sha256 = "..."                       # optional: sha256 of its model file, checked before building
license = "Apache-2.0"               # optional: the licence encoder.json must declare, checked on loading
document_model = "fp32/model.onnx"   # optional, with path: a file in that directory used to embed the
                                     # documents (e.g. fp32 or fp16); only the query model goes into the bundle

[options]
batch_size = 32
threads = 2                          # onnxruntime intra-op threads (0 = onnxruntime's choice)
chunk = 2048                         # optional: texts embedded and saved to the embedding cache at a
                                     # time; also the unit shards are cut in
lexical_boosts = { text = 1.0 }      # BM25 fields a query searches (name, title, text) and their boosts
lexical_symbols = "lean"             # optional: queries' notation also searched as Mathlib naming words
binary_codes = "thermometer3"        # optional: codes of the binary HNSW stage, "sign" (default) or
                                     # "thermometer3" (3 bits per dimension; docs/bundle-format.md)
lexical_identifiers = "tokenizer"    # optional: "split" (default) appends identifier parts to the text
                                     # (ModEq -> Mod Eq); "tokenizer" leaves them to tantivy's split

[fusion]                             # optional: default RRF constant and channel weights of the bundle
k_rrf = 10
weights = { lexical = 1.0, dense = 1.0 }
# optional document priors added after fusion: score + weight * transform(meta column);
# transform log1 = log(max(x, 1)), identity = x; nulls add 0; weight 0 = off until a query asks
priors = { citations = { column = "citations", transform = "log1", weight = 0.0 } }

[ranker]                             # optional: the learned ranking model the bundle carries (ranker/model.json)
model = "artifacts/rankers/informal-ltr-1.json"   # a model JSON kept in the repository (scripts/train_ranker.py)
sha256 = "..."                       # required: its sha256, checked on loading
license = "..."                      # optional: recorded with the recipe in the manifest

[reranker]                           # optional: a cross-encoder the bundle carries (mathlas-build train-reranker)
path = "work/rerankers/minilm-math-rerank-v1"   # a reranker directory (model.onnx, tokenizer.json, reranker.json)
top_n = 40                           # fused hits it rescores
default = false                      # whether a search reranks when it does not say

[[sources]]
reader = "stacks"                    # a module of mathlas_build.sources
path = "stacks-project"              # relative to the corpora root (--corpora / $MATHLAS_CORPORA)
limit = 0                            # optional: keep only the first N documents (0 = all)
options = {}                         # optional: passed to the reader's read()
```
Relative encoder, ranker and reranker paths resolve against the current directory, then the recipe's
repository. The ranker is attached in the writer's temporary folder, before the bundle is renamed into
place (``mathlas_build.training.ltr.attach``). Every table, key and value is checked when the recipe is
read (``recipe_checks``): an unknown key is refused, not ignored.
Every build given a cache embeds through the per-text embedding cache (``textcache``); the former
option ``vector_store = true``, which once switched it on, is ignored.
A reader module may declare ``PRIORS`` (the TheoremSearch reader declares the citation prior): they
join ``fusion.priors`` unless the recipe's own table names them, so the manifest carries them.
"""
from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mathlas_build.recipe_checks import check_recipe


class RecipeError(ValueError):
    """A recipe file is malformed or names things that do not exist."""


@dataclass
class SourceSpec:
    reader: str
    path: Path
    limit: int = 0
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class Recipe:
    name: str
    version: str
    description: str
    encoder: Path
    encoder_sha256: str | None
    document_model: str | None
    sources: list[SourceSpec]
    options: dict[str, Any]
    raw: dict[str, Any]
    path: Path
    reranker: dict[str, Any] = field(default_factory=dict)  # [reranker] with ``path`` resolved
    # [encoder] release: {"release": "<name>-<version>", "archive", "sha256" (the archive's), "bundle" (unpacked)}
    release: dict[str, Any] = field(default_factory=dict)
    carry_cache: Path | None = None      # [encoder] carry: the embedding cache seeded with the release's vectors
    encoder_license: str | None = None   # [encoder] license
    ranker: dict[str, Any] = field(default_factory=dict)    # [ranker] with ``model`` resolved


def default_corpora() -> Path:
    env = os.environ.get("MATHLAS_CORPORA")
    if env:
        return Path(env)
    # a checkout of this repository sits beside shared/corpora
    return Path(__file__).resolve().parents[3] / "shared" / "corpora"


PRIOR_TRANSFORMS = ("log1", "identity")  # as mathlas.ranking.fusion.PRIOR_TRANSFORMS


def _add_priors(raw: dict[str, Any], sources: list[SourceSpec], path: Path) -> None:
    """Merge the priors the sources' readers declare into ``raw["fusion"]["priors"]`` and check them all."""
    from mathlas_build.sources import reader

    declared: dict[str, Any] = {}
    for spec in sources:
        try:
            declared.update(getattr(reader(spec.reader), "PRIORS", None) or {})
        except ValueError as e:  # unknown reader name
            raise RecipeError(f"{path}: {e}") from None
    fusion = raw.get("fusion") or {}
    priors = {**declared, **(fusion.get("priors") or {})}
    for name, p in priors.items():
        if not isinstance(p, dict) or not isinstance(p.get("column"), str) \
                or p.get("transform", "identity") not in PRIOR_TRANSFORMS \
                or isinstance(p.get("weight", 0.0), bool) or not isinstance(p.get("weight", 0.0), (int, float)):
            raise RecipeError(f"{path}: fusion.priors.{name} must be {{ column = \"...\", transform = "
                              f"{' | '.join(map(repr, PRIOR_TRANSFORMS))}, weight = <number> }}, got {p!r}")
    if priors:
        raw["fusion"] = {**fusion, "priors": {n: {"column": p["column"], "transform": p.get("transform", "identity"),
                                                  "weight": float(p.get("weight", 0.0))} for n, p in priors.items()}}


def read_toml(path: Path) -> dict[str, Any]:
    """A recipe file's TOML, or ``RecipeError`` saying it is missing or not TOML."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecipeError(f"recipe not found: {path}") from None
    except IsADirectoryError:
        raise RecipeError(f"{path} is a folder, not a recipe: pass a recipe file (e.g. build/recipes/informal.toml)") from None
    except UnicodeDecodeError:
        raise RecipeError(f"{path}: not a text file (a recipe is UTF-8 TOML)") from None
    except OSError as e:
        raise RecipeError(f"cannot read the recipe {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise RecipeError(f"{path}: not valid TOML ({e})") from None


def load_recipe(path: str | os.PathLike, corpora: str | os.PathLike | None = None,
                work_dir: str | os.PathLike = "work", *, quiet: bool = False) -> Recipe:
    """Read and check a recipe; ``work_dir`` is where a release's encoder is unpacked and its vectors
    carried (``releases/``, ``carry/``); ``quiet``: no line on stderr when a release is unpacked."""
    path = Path(path)
    raw = read_toml(path)
    for key in ("name", "version", "encoder", "sources"):
        if key not in raw:
            raise RecipeError(f"{path}: missing required key {key!r}")
    check_recipe(raw, str(path))  # every table, key and value, before anything is read or unpacked
    root = Path(corpora) if corpora else default_corpora()
    sources = []
    for i, s in enumerate(raw["sources"]):
        p = Path(s["path"])
        p = p if p.is_absolute() else root / p
        if not p.exists():
            raise RecipeError(f"{path}: sources[{i}] ({s['reader']}): {p} does not exist; set --corpora or MATHLAS_CORPORA")
        sources.append(SourceSpec(s["reader"], p, int(s.get("limit", 0)), dict(s.get("options", {}))))
    _add_priors(raw, sources, path)
    spec = raw["encoder"]
    if not isinstance(spec, dict) or ("path" in spec) == ("release" in spec):
        raise RecipeError(f"{path}: [encoder] needs path (an encoder directory) or release (a release of "
                          f"artifacts/catalog.json whose encoder/ to use), not both")
    release: dict[str, Any] = {}
    carry_cache = None
    if "release" in spec:
        if spec.get("document_model"):
            raise RecipeError(f"{path}: [encoder] document_model needs path: a release holds only its int8 "
                              f"query model, which then embeds the documents")
        release = _release(path, str(spec["release"]), spec.get("releases"), Path(work_dir), quiet)
        enc = release["bundle"] / "encoder"
        if spec.get("carry"):
            carry_cache = Path(work_dir) / "carry" / release["bundle"].name
    else:
        if spec.get("carry"):
            raise RecipeError(f"{path}: [encoder] carry needs release (the release whose vectors to carry); "
                              f"with path, seed a cache with python -m mathlas_build.carry")
        enc = _local_path(spec["path"])
    if not (enc / "encoder.json").is_file():
        raise RecipeError(f"{path}: encoder directory {enc} has no encoder.json "
                          f"(make it with scripts/export_default_encoder.py)")
    doc_model = spec.get("document_model")
    if doc_model and not (enc / doc_model).is_file():
        raise RecipeError(f"{path}: document_model {doc_model} not found in {enc}")
    license = spec.get("license")
    if license is not None:
        declared = json.loads((enc / "encoder.json").read_text(encoding="utf-8")).get("license")
        if declared != license:
            raise RecipeError(f"{path}: [encoder] license is {license!r}, the encoder's encoder.json says "
                              f"{declared!r}: correct the recipe or use the encoder it describes")
    ranker = _ranker(path, raw.get("ranker"))
    reranker = dict(raw.get("reranker") or {})
    if reranker:
        if "path" not in reranker:
            raise RecipeError(f"{path}: [reranker] needs path (a directory made by mathlas-build train-reranker)")
        reranker["path"] = _local_path(reranker["path"])
        if not (reranker["path"] / "reranker.json").is_file():
            raise RecipeError(f"{path}: reranker directory {reranker['path']} has no reranker.json")
    return Recipe(name=raw["name"], version=str(raw["version"]), description=raw.get("description", ""),
                  encoder=enc, encoder_sha256=spec.get("sha256"), document_model=doc_model, sources=sources,
                  options=dict(raw.get("options", {})), raw=raw, path=path, reranker=reranker,
                  release=release, carry_cache=carry_cache, encoder_license=license, ranker=ranker)


def _release(path: Path, wanted: str, catalog_dir: str | None, work_dir: Path, quiet: bool) -> dict[str, Any]:
    """``[encoder] release``: the catalog's release, its archive checked and unpacked under ``work_dir``."""
    from mathlas.errors import MathlasError
    from mathlas_build.release import find_release, unpack

    catalog = _local_path(catalog_dir) if catalog_dir else Path(__file__).resolve().parents[2] / "artifacts"
    try:
        entry, archive = find_release(catalog, wanted)
        bundle = unpack(archive, str(entry.get("sha256")), work_dir / "releases", quiet=quiet)
    except (ValueError, MathlasError) as e:
        raise RecipeError(f"{path}: [encoder] release: {e}") from None
    return {"release": f"{entry['name']}-{entry['version']}", "archive": archive, "sha256": entry["sha256"],
            "bundle": bundle}


def _ranker(path: Path, spec: Any) -> dict[str, Any]:
    """``[ranker]``: the model file resolved and checked against the sha256 the recipe records."""
    if not spec:
        return {}
    if not isinstance(spec, dict) or not isinstance(spec.get("model"), str):
        raise RecipeError(f"{path}: [ranker] needs model = \"<a model JSON, e.g. artifacts/rankers/NAME.json>\"")
    model = _local_path(spec["model"])
    if not model.is_file():
        raise RecipeError(f"{path}: [ranker] model {model} does not exist (scripts/train_ranker.py writes one)")
    from mathlas.bundle import sha256_file

    got = sha256_file(model)
    if spec.get("sha256") != got:
        said = f"says {spec['sha256']}" if spec.get("sha256") else "records none"
        raise RecipeError(f"{path}: [ranker] model {model} has sha256 {got}, the recipe {said}: "
                          f"set sha256 = \"{got}\" if this is the model to ship")
    from mathlas.ranking.learned import model_from_spec

    try:
        model_from_spec(json.loads(model.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError, IndexError) as e:
        raise RecipeError(f"{path}: [ranker] model {model} cannot be attached ({e}): train it again with "
                          f"scripts/train_ranker.py") from None
    return {**spec, "model": model, "sha256": got}


def _local_path(given: str) -> Path:
    """A recipe's path to a local directory: as given when absolute or present, else under the repository."""
    p = Path(given)
    if p.is_absolute() or p.exists():
        return p
    return Path(__file__).resolve().parents[2] / p
