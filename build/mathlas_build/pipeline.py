"""The build pipeline: read a recipe's sources -> retrieval texts -> embed -> write the bundle.

``mathlas_build.cli`` is the command line over these functions; ``shard`` (sharded and Ray builds)
and ``lean_build`` (``mathlas index build-lean``) call them too.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
import time
from pathlib import Path

from mathlas_build.document import Document
from mathlas_build.links import link_statements
from mathlas_build.recipe import Recipe, RecipeError
from mathlas_build.retrieval_text import name_field, retrieval_text
from mathlas_build.sources import reader

PROVIDERS = ("auto", "cpu", "cuda")


def read_sources(recipe: Recipe, quiet: bool = False) -> tuple[list[Document], dict[str, dict]]:
    """Read every source of a recipe; returns documents and the manifest's ``sources`` block."""
    docs: list[Document] = []
    info: dict[str, dict] = {}
    for spec in recipe.sources:
        mod = reader(spec.reader)
        t0 = time.perf_counter()
        n0 = len(docs)
        # a reader's own statistics line (lean, stacks) is talk: -q silences it as it does [read]
        with contextlib.redirect_stderr(io.StringIO()) if quiet else contextlib.nullcontext():
            for doc in mod.read(spec.path, **spec.options):
                docs.append(doc)
                if spec.limit and len(docs) - n0 >= spec.limit:
                    break
        got = docs[n0:]
        # a reader whose options bring in another work's data (metamath's thousand_plus) says so
        attribution = spec.options.get("attribution") or (
            mod.attribution(spec.options) if hasattr(mod, "attribution") else mod.ATTRIBUTION)
        for d in got:
            entry = info.setdefault(d.source, {"count": 0, "license": d.license or mod.LICENSE,
                                               "attribution": attribution})
            entry["count"] += 1
        if not quiet:
            print(f"[read] {spec.reader}: {len(got):,} documents in {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr, flush=True)
    return docs, info


def check_encoder(recipe: Recipe) -> None:
    """Refuse an encoder whose model file does not have the sha256 the recipe pins (a release's
    encoder was verified against its manifest when unpacked; the pin says it is still the one meant)."""
    if recipe.encoder_sha256:
        from mathlas.bundle import sha256_file
        from mathlas.encoder import EncoderConfig

        model_file = EncoderConfig.load(recipe.encoder / "encoder.json").model_file
        got = sha256_file(recipe.encoder / model_file)
        if got != recipe.encoder_sha256:
            where = f" (release {recipe.release['release']})" if recipe.release else ""
            raise RecipeError(f"encoder model {recipe.encoder / model_file}{where} has sha256 {got}, "
                              f"the recipe expects {recipe.encoder_sha256}: re-export it or update the recipe")


def read_corpus(recipe: Recipe, quiet: bool = False) -> tuple[list[Document], dict[str, dict]]:
    """The encoder check, then every document of the recipe in bundle row order (refuses an empty
    corpus), proofs and examples linked to their statements (``links``)."""
    check_encoder(recipe)
    docs, sources = read_sources(recipe, quiet)
    if not docs:
        raise RecipeError(f"{recipe.path}: the sources yielded no documents")
    linked = link_statements(docs)
    if linked and not quiet:
        print(f"[read] {linked:,} proof and example entries linked to their statements (column about)",
              file=sys.stderr, flush=True)
    return docs, sources


def embed_texts(recipe: Recipe, texts: list[str], *, threads: int | None = None, provider: str = "auto",
                batch_size: int | None = None, max_batch_tokens: int | None = None,
                cache_dir: Path | None = None, quiet: bool = False):
    """Embed retrieval texts with the recipe's encoder and options; with ``cache_dir``, through the
    embedding cache (``textcache``: one vector per distinct text, only texts it lacks are embedded).
    A recipe that carries a release's vectors (``[encoder] carry``) embeds through its own cache
    instead, seeded with them (``carry_release``)."""
    from mathlas_build.embed import embed_documents

    if recipe.carry_cache is not None:
        cache_dir = carry_release(recipe, quiet=quiet)
    return embed_documents(texts, recipe.encoder, cache_dir=cache_dir, chunk=chunk_size(recipe),
                           threads=threads or recipe.options.get("threads"), provider=provider,
                           batch_size=batch_size or int(recipe.options.get("batch_size", 32)),
                           max_batch_tokens=max_batch_tokens or recipe.options.get("max_batch_tokens"),
                           model_file=recipe.document_model, quiet=quiet)


def carry_release(recipe: Recipe, *, quiet: bool = False) -> Path:
    """Seed the recipe's carry cache with its release's document vectors (``carry``: every retrieval text
    of the release -> its ``float.i8 x scale`` vector, under the fingerprint of the release's encoder,
    the one that embeds the texts the release lacks); returns the cache. Texts already there are kept."""
    from mathlas_build.carry import carry

    assert recipe.carry_cache is not None and recipe.release
    carry(recipe.release["bundle"], recipe.encoder, recipe.carry_cache, quiet=quiet)
    return recipe.carry_cache


def chunk_size(recipe: Recipe) -> int:
    """Texts per embedding chunk (``[options] chunk``): embedded and saved to the cache at a time, and the
    unit shards are cut in."""
    from mathlas_build import embed

    chunk = int(recipe.options.get("chunk", embed.CHUNK))
    if chunk < 1:
        raise RecipeError(f"{recipe.path}: options.chunk must be a positive integer")
    return chunk


def write_recipe_bundle(recipe: Recipe, docs: list[Document], sources: dict[str, dict], texts: list[str],
                        names: list[str], vectors, out: Path, *, force: bool = False, quiet: bool = False) -> Path:
    """Write the bundle of a recipe: the one call a single-process build and a shard merge share.
    The manifest's ``recipe`` is the recipe as written, with ``encoder.from_release`` (the release and
    archive sha256 an ``[encoder] release`` resolved to); a ``[ranker]`` model is attached (``ltr.attach``:
    ``ranker/model.json`` and the manifest's ``ranker`` block) before the bundle is renamed into place."""
    from mathlas import __version__
    from mathlas_build.writer import lexical_manifest, write_bundle

    raw = dict(recipe.raw)
    if recipe.release:
        raw["encoder"] = {**raw["encoder"], "from_release": {
            "release": recipe.release["release"], "archive_sha256": recipe.release["sha256"]}}
    path = write_bundle(docs, texts, names, vectors, recipe.encoder, out, name=recipe.name,
                        version=recipe.version, sources=sources, description=recipe.description,
                        recipe=raw, builder=f"mathlas-build {__version__}",
                        lexical=lexical_manifest(recipe.options), fusion=recipe.raw.get("fusion"),
                        binary_codes=recipe.options.get("binary_codes", "sign"), reranker=recipe.reranker,
                        ranker=recipe.ranker.get("model"), force=force, quiet=quiet)
    return path


def check_paths(out: Path | None, *, force: bool = False, cache_dir: Path | None = None) -> None:
    """Refuse, before minutes of reading and embedding, an output the writer would refuse at the end
    (``writer.check_out``) and an embedding cache that cannot be a folder."""
    from mathlas_build.writer import check_folder, check_out

    if out is not None:
        check_out(out, force=force)
    if cache_dir is not None:
        check_folder(cache_dir, "--cache")


def build(recipe: Recipe, out: Path, *, threads: int | None = None, provider: str = "auto",
          batch_size: int | None = None, max_batch_tokens: int | None = None, cache_dir: Path | None = None,
          force: bool = False, quiet: bool = False) -> Path:
    """Single-process build: read, embed, write. The output and the cache are checked first (``check_paths``)."""
    check_paths(out, force=force, cache_dir=cache_dir)
    docs, sources = read_corpus(recipe, quiet)
    texts = [retrieval_text(d) for d in docs]
    names = [name_field(d) for d in docs]
    vectors = embed_texts(recipe, texts, threads=threads, provider=provider, batch_size=batch_size,
                          max_batch_tokens=max_batch_tokens, cache_dir=cache_dir, quiet=quiet)
    return write_recipe_bundle(recipe, docs, sources, texts, names, vectors, out, force=force, quiet=quiet)


def dry_run(recipe: Recipe, args: argparse.Namespace) -> str:
    """Read the recipe's corpus, measure its tokens per document, and plan the build without embedding."""
    from mathlas.encoder import Encoder
    from mathlas_build.plan import guess_model, make_plan, format_plan

    t0 = time.perf_counter()
    docs, _ = read_corpus(recipe, args.quiet)
    read_rate = len(docs) / max(time.perf_counter() - t0, 1e-9)
    sample = [retrieval_text(d) for d in docs[:: max(1, len(docs) // 2000)]]
    enc = Encoder(recipe.encoder)
    tokens = sum(map(len, enc.tokenize(sample, enc.config.document_prompt))) / len(sample)
    enc_bytes = sum(f.stat().st_size for f in recipe.encoder.iterdir()
                    if f.is_file() and f.name in ("encoder.json", "tokenizer.json", enc.model_file,
                                                  enc.model_file + "_data"))
    model = args.model or guess_model(enc.config.name)
    plan = make_plan(len(docs), model, gpus=args.gpus, gpu=args.gpu, dims=enc.config.out_dims,
                     tokens_per_doc=tokens, prompt_included=True, encoder_bytes=enc_bytes,
                     read_docs_per_s=read_rate, ranker=bool(recipe.ranker))
    return format_plan(plan, as_json=args.json)


def run_mathlas(*args: str, capture: bool = False, check: bool = True,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run the ``mathlas`` command: the build meets the runtime's installer through its command
    line, never its modules (the build/runtime contract, docs/bundle-format.md). ``check=False``:
    a failure is the caller's to read (stderr captured with stdout); ``env``: added to the environment."""
    import os

    proc = subprocess.run([sys.executable, "-m", "mathlas", *args], text=True,
                          stdout=subprocess.PIPE if capture else None,
                          stderr=subprocess.PIPE if capture and not check else None,
                          env={**os.environ, **env} if env else None)
    if proc.returncode != 0 and check:
        raise RecipeError(f"`mathlas {' '.join(args)}` failed (exit code {proc.returncode})")
    return proc


def install_bundle(bundle: Path, *, quiet: bool = False, archive: Path | None = None) -> None:
    """Install a built bundle with ``mathlas index install`` (replacing an installed bundle of the same
    name and version: the build just made it anew), from ``archive`` when ``--pack`` already made it,
    else from a release packed into a temporary folder beside the bundle and removed afterwards (it used
    to stay there, with a catalog.json, and ``--pack --install`` packed twice). The installed directory
    is printed on stdout by that command."""
    import tempfile

    from mathlas_build.release import pack

    flags = ["--force", *(["-q"] if quiet else [])]
    if archive is not None:
        run_mathlas("index", "install", str(archive), *flags)
        return
    with tempfile.TemporaryDirectory(prefix=f".{bundle.name}.install-", dir=bundle.parent) as tmp:
        packed, _ = pack(bundle, Path(tmp), quiet=quiet)
        run_mathlas("index", "install", str(packed), *flags)
