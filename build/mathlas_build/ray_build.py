"""The shard work of ``shard.build_shard`` as Ray Data tasks, for several GPUs or machines.

A dataset of N rows ``{"shard": i}`` (one block each) is mapped by ``_embed_shard``, which runs exactly
what ``mathlas-build RECIPE --shard i/N`` runs, with ``num_gpus`` / ``num_cpus`` reserved per task, so
Ray places one shard per GPU and runs as many at once as the cluster has GPUs. Shards land in one
directory that every node can write (a shared filesystem); finished shards are skipped on a rerun, so
a failed job is resumed by running it again. The merge then runs on the driver.

Every node must see the recipe, the corpora, the encoder and the shard directory at the same paths as
the driver (the usual shared-filesystem cluster); the embedding cache (``--cache``) too, for the workers
to share it (each segment is written under its own name, so concurrent writers are safe). Ray is an
optional extra: ``pip install 'mathlas[ray]'``.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from mathlas.errors import MathlasError


def _embed_shard(row: dict[str, Any], *, recipe: str, corpora: str | None, root: str, count: int, cwd: str,
                 embed: dict[str, Any]) -> dict[str, Any]:
    """One Ray task: build shard ``row["shard"]`` of ``count`` (skips it when finished)."""
    from mathlas_build.recipe import load_recipe
    from mathlas_build.shard import build_shard

    if Path(cwd).is_dir():  # relative paths in the recipe resolve as on the driver
        os.chdir(cwd)
    path, built = build_shard(load_recipe(recipe, corpora), Path(root), int(row["shard"]), count, **embed)
    return {"shard": int(row["shard"]), "path": str(path), "built": built}


def build_shards_with_ray(recipe_path: Path, corpora: Path | None, root: Path, count: int, *,
                          address: str | None = None, gpus_per_shard: float = 0.0, cpus_per_shard: float = 1.0,
                          threads: int | None = None, provider: str = "auto", batch_size: int | None = None,
                          max_batch_tokens: int | None = None, cache_dir: Path | None = None,
                          quiet: bool = False, init_kwargs: dict[str, Any] | None = None) -> list[Path]:
    """Build shards ``0..count-1`` of a recipe into ``root`` as Ray Data tasks; returns their directories.

    Connects to ``address`` when given (or to a Ray already initialised by the caller), else starts a
    local Ray on this machine and shuts it down afterwards. ``init_kwargs`` go to ``ray.init`` (e.g.
    ``num_cpus`` for a small local Ray)."""
    try:
        import ray
    except ImportError:
        raise MathlasError("Ray is not installed: pip install 'mathlas[ray]' (ray[data])") from None
    if count < 1:
        raise ValueError("--shards must be at least 1")
    cwd = os.getcwd()
    embed = dict(threads=threads, provider=provider, batch_size=batch_size, max_batch_tokens=max_batch_tokens,
                 cache_dir=str(Path(cache_dir).resolve()) if cache_dir else None, quiet=quiet)
    started = False
    if not ray.is_initialized():
        here = Path(__file__).resolve()
        # workers import mathlas and mathlas_build from this checkout even when it is not pip-installed
        path = os.pathsep.join([str(here.parents[1]), str(here.parents[2]), os.environ.get("PYTHONPATH", "")])
        kwargs = {"include_dashboard": False, "log_to_driver": not quiet,
                  "runtime_env": {"env_vars": {"PYTHONPATH": path.rstrip(os.pathsep)}}, **(init_kwargs or {})}
        ray.init(address=address, **kwargs)
        started = True
    try:
        ds = ray.data.from_items([{"shard": i} for i in range(count)], override_num_blocks=count)
        ds = ds.map(_embed_shard, num_cpus=cpus_per_shard, num_gpus=gpus_per_shard or None,
                    fn_kwargs={"recipe": str(Path(recipe_path).resolve()),
                               "corpora": str(Path(corpora).resolve()) if corpora else None,
                               "root": str(Path(root).resolve()), "count": count, "cwd": cwd, "embed": embed})
        rows = sorted(ds.take_all(), key=lambda r: r["shard"])
    finally:
        if started:
            ray.shutdown()
    if not quiet:
        built = sum(r["built"] for r in rows)
        print(f"[ray] {count} shards: {built} built, {count - built} finished already", file=sys.stderr)
    return [Path(r["path"]) for r in rows]
