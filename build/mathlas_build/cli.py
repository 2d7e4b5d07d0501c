"""``mathlas-build``: corpora -> bundle, and bundle -> release archive (docs/building.md).

    mathlas-build RECIPE.toml [--out DIR] [--corpora DIR] [--threads N] [--provider auto|cpu|cuda] ...
    mathlas-build RECIPE.toml --shard I/N [--shards-dir DIR]     # one resumable, checksummed shard
    mathlas-build merge RECIPE.toml [SHARD_DIR...] [--out DIR]   # shards -> one bundle
    mathlas-build ray RECIPE.toml --shards N [--gpus-per-shard 1] [--address ADDR]
    mathlas-build RECIPE.toml --dry-run [--gpus G --gpu h100]    # plan: time and bundle size
    mathlas-build plan --docs N --model qwen3-0.6b --gpus G [--gpu h100|a100|cpu] [--dims D]
    mathlas-build pack BUNDLE_DIR [--out artifacts/]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from mathlas.errors import MathlasError
from mathlas_build.document import Document
from mathlas_build.recipe import Recipe, RecipeError, load_recipe
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
        for doc in mod.read(spec.path, **spec.options):
            docs.append(doc)
            if spec.limit and len(docs) - n0 >= spec.limit:
                break
        got = docs[n0:]
        for d in got:
            entry = info.setdefault(d.source, {"count": 0, "license": d.license or mod.LICENSE,
                                               "attribution": spec.options.get("attribution", mod.ATTRIBUTION)})
            entry["count"] += 1
        if not quiet:
            print(f"[read] {spec.reader}: {len(got):,} documents in {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr, flush=True)
    return docs, info


def check_encoder(recipe: Recipe) -> None:
    """Refuse an encoder whose model file does not have the sha256 the recipe pins."""
    if recipe.encoder_sha256:
        from mathlas.bundle import sha256_file
        from mathlas.encoder import EncoderConfig

        model_file = EncoderConfig.load(recipe.encoder / "encoder.json").model_file
        got = sha256_file(recipe.encoder / model_file)
        if got != recipe.encoder_sha256:
            raise RecipeError(f"encoder model {recipe.encoder / model_file} has sha256 {got}, "
                              f"the recipe expects {recipe.encoder_sha256}: re-export it or update the recipe")


def read_corpus(recipe: Recipe, quiet: bool = False) -> tuple[list[Document], dict[str, dict]]:
    """The encoder check, then every document of the recipe in bundle row order (refuses an empty corpus)."""
    check_encoder(recipe)
    docs, sources = read_sources(recipe, quiet)
    if not docs:
        raise RecipeError(f"{recipe.path}: the sources yielded no documents")
    return docs, sources


def embed_texts(recipe: Recipe, texts: list[str], *, threads: int | None = None, provider: str = "auto",
                batch_size: int | None = None, max_batch_tokens: int | None = None,
                cache_dir: Path | None = None, quiet: bool = False):
    """Embed retrieval texts with the recipe's encoder and options; with ``cache_dir``, through the
    embedding cache (``textcache``: one vector per distinct text, only texts it lacks are embedded)."""
    from mathlas_build.embed import embed_documents

    return embed_documents(texts, recipe.encoder, cache_dir=cache_dir, chunk=chunk_size(recipe),
                           threads=threads or recipe.options.get("threads"), provider=provider,
                           batch_size=batch_size or int(recipe.options.get("batch_size", 32)),
                           max_batch_tokens=max_batch_tokens or recipe.options.get("max_batch_tokens"),
                           model_file=recipe.document_model, quiet=quiet)


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
    """Write the bundle of a recipe: the one call a single-process build and a shard merge share."""
    from mathlas import __version__
    from mathlas_build.writer import lexical_manifest, write_bundle

    return write_bundle(docs, texts, names, vectors, recipe.encoder, out, name=recipe.name,
                        version=recipe.version, sources=sources, description=recipe.description,
                        recipe=recipe.raw, builder=f"mathlas-build {__version__}",
                        lexical=lexical_manifest(recipe.options), fusion=recipe.raw.get("fusion"),
                        binary_codes=recipe.options.get("binary_codes", "sign"),
                        force=force, quiet=quiet)


def build(recipe: Recipe, out: Path, *, threads: int | None = None, provider: str = "auto",
          batch_size: int | None = None, max_batch_tokens: int | None = None, cache_dir: Path | None = None,
          force: bool = False, quiet: bool = False) -> Path:
    """Single-process build: read, embed, write."""
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
                     read_docs_per_s=read_rate)
    return format_plan(plan, as_json=args.json)


def _add_embed_options(b: argparse.ArgumentParser) -> None:
    b.add_argument("--corpora", type=Path, help="root of the corpora (default: $MATHLAS_CORPORA or ../shared/corpora)")
    b.add_argument("--threads", type=int, help="onnxruntime threads for embedding")
    b.add_argument("--provider", choices=PROVIDERS, default="auto",
                   help="onnxruntime provider for embedding: auto = CUDA when onnxruntime-gpu sees a GPU, else CPU")
    b.add_argument("--batch-size", type=int, help="most documents per batch (default: the recipe's, else 32)")
    b.add_argument("--max-batch-tokens", type=int, help="most padded tokens per batch (length buckets; GPU)")
    b.add_argument("--cache", type=Path, default=Path("work/embed-cache"),
                   help="embedding cache, one vector per distinct text under <cache>/texts/: an interrupted "
                        "build resumes, a rebuild embeds only changed texts (default: work/embed-cache)")
    b.add_argument("--no-cache", action="store_true")
    b.add_argument("-q", "--quiet", action="store_true")


def _add_plan_options(b: argparse.ArgumentParser, docs: bool) -> None:
    from mathlas_build.plan import GPUS, MODELS

    if docs:
        b.add_argument("--docs", type=int, required=True, help="number of documents")
        b.add_argument("--dims", type=int, help="stored vector dims (Matryoshka truncation; default: the model's)")
        b.add_argument("--tokens-per-doc", type=float, help="mean tokens per document (default: measured informal corpus)")
        b.add_argument("--read-rate", type=float, help="documents/s the readers turn out (default: measured informal LaTeX)")
    b.add_argument("--model", choices=sorted(MODELS), help="document encoder (default: guessed from the encoder)"
                   if not docs else "document encoder", required=docs)
    b.add_argument("--gpus", type=int, default=1, help="GPUs (or CPU machines) embedding in parallel")
    b.add_argument("--gpu", choices=sorted(GPUS), default="h100", help="device kind (cpu: this repo's 2-core measurement)")
    b.add_argument("--json", action="store_true", help="print the plan as JSON")


def _shards_dir(recipe: Recipe, given: Path | None) -> Path:
    return given or Path("work/shards") / f"{recipe.name}-{recipe.version}"


COMMANDS = ("build", "merge", "ray", "plan", "pack", "lean")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in (*COMMANDS, "-h", "--help"):
        argv.insert(0, "build")
    p = argparse.ArgumentParser(prog="mathlas-build", description="Build mathlas bundles from corpora.")
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build a bundle (or one shard of it) from a recipe (the default command)")
    b.add_argument("recipe", type=Path)
    b.add_argument("--out", type=Path, help="bundle directory (default: work/bundles/<name>-<version>)")
    _add_embed_options(b)
    b.add_argument("--shard", metavar="I/N", help="embed only shard I of N into --shards-dir (then run merge)")
    b.add_argument("--shards-dir", type=Path, help="where shards go (default: work/shards/<name>-<version>)")
    b.add_argument("--dry-run", action="store_true", help="read the corpus and print the plan: time and bundle size")
    _add_plan_options(b, docs=False)
    b.add_argument("--pack", type=Path, metavar="DIR", help="also pack the bundle as a release into DIR")
    b.add_argument("--force", action="store_true", help="replace an existing bundle directory")
    m = sub.add_parser("merge", help="check that shards cover the corpus exactly once and write the bundle")
    m.add_argument("recipe", type=Path)
    m.add_argument("shards", type=Path, nargs="*",
                   help="shard directories, or directories holding them (default: work/shards/<name>-<version>)")
    m.add_argument("--out", type=Path, help="bundle directory (default: work/bundles/<name>-<version>)")
    m.add_argument("--corpora", type=Path, help="root of the corpora (default: $MATHLAS_CORPORA or ../shared/corpora)")
    m.add_argument("--pack", type=Path, metavar="DIR", help="also pack the bundle as a release into DIR")
    m.add_argument("--force", action="store_true", help="replace an existing bundle directory")
    m.add_argument("-q", "--quiet", action="store_true")
    r = sub.add_parser("ray", help="embed N shards as Ray Data tasks (one per GPU or CPU worker), then merge")
    r.add_argument("recipe", type=Path)
    r.add_argument("--shards", type=int, required=True, help="number of shards N")
    r.add_argument("--gpus-per-shard", type=float, default=0.0, help="GPUs each shard task reserves (1 on GPU nodes)")
    r.add_argument("--cpus-per-shard", type=float, default=1.0)
    r.add_argument("--address", help="Ray cluster address (default: start a local Ray)")
    r.add_argument("--shards-dir", type=Path, help="shared directory for shards (default: work/shards/<name>-<version>)")
    r.add_argument("--out", type=Path, help="bundle directory (default: work/bundles/<name>-<version>)")
    r.add_argument("--no-merge", action="store_true", help="only build the shards")
    r.add_argument("--force", action="store_true", help="replace an existing bundle directory")
    _add_embed_options(r)
    pl = sub.add_parser("plan", help="dry-run planner: expected embedding time and bundle size")
    _add_plan_options(pl, docs=True)
    pl.add_argument("--from-bundle", type=Path, help="take per-document index and metadata sizes from this bundle")
    from mathlas_build.lean_build import add_lean_parser

    add_lean_parser(sub)
    k = sub.add_parser("pack", help="pack a bundle directory as <name>-<version>.tar.zst + .sha256")
    k.add_argument("bundle", type=Path)
    k.add_argument("--out", type=Path, default=Path("artifacts"))
    k.add_argument("-q", "--quiet", action="store_true")
    args = p.parse_args(argv)
    try:
        if args.command == "lean":
            return args.func(args)
        if args.command == "pack":
            from mathlas_build.release import pack

            archive, sha = pack(args.bundle, args.out)
            print(archive)
            return 0
        if args.command == "plan":
            from mathlas_build.plan import format_plan, make_plan

            plan = make_plan(args.docs, args.model, gpus=args.gpus, gpu=args.gpu, dims=args.dims,
                             tokens_per_doc=args.tokens_per_doc, from_bundle=args.from_bundle,
                             read_docs_per_s=args.read_rate)
            print(format_plan(plan, as_json=args.json))
            return 0
        recipe = load_recipe(args.recipe, args.corpora)
        out = args.out or Path("work/bundles") / f"{recipe.name}-{recipe.version}"
        cache = None if getattr(args, "no_cache", False) else getattr(args, "cache", None)
        embed_kw = {} if args.command == "merge" else dict(
            threads=args.threads, provider=args.provider, batch_size=args.batch_size,
            max_batch_tokens=args.max_batch_tokens, cache_dir=cache, quiet=args.quiet)
        if args.command == "build" and args.dry_run:
            print(dry_run(recipe, args))
            return 0
        if args.command == "build" and args.shard:
            from mathlas_build.shard import build_shard, parse_shard

            i, n = parse_shard(args.shard)
            path, _ = build_shard(recipe, _shards_dir(recipe, args.shards_dir), i, n, **embed_kw)
            print(path)
            return 0
        if args.command == "ray":
            from mathlas_build.ray_build import build_shards_with_ray

            root = _shards_dir(recipe, args.shards_dir).resolve()
            paths = build_shards_with_ray(args.recipe, args.corpora, root, args.shards, address=args.address,
                                          gpus_per_shard=args.gpus_per_shard, cpus_per_shard=args.cpus_per_shard,
                                          **embed_kw)
            if args.no_merge:
                print("\n".join(map(str, paths)))
                return 0
        if args.command in ("merge", "ray"):
            from mathlas_build.shard import merge_shards

            given = paths if args.command == "ray" else args.shards
            path = merge_shards(recipe, given or [_shards_dir(recipe, None)], out, force=args.force, quiet=args.quiet)
        else:
            path = build(recipe, out, force=args.force, **embed_kw)
        if getattr(args, "pack", None):
            from mathlas_build.release import pack

            archive, _ = pack(path, args.pack)
            print(archive)
        print(path)
        return 0
    except (RecipeError, FileExistsError, ValueError) as e:
        print(f"mathlas-build: {e}", file=sys.stderr)
        return 2
    except MathlasError as e:
        print(f"mathlas-build: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("mathlas-build: interrupted; finished embedding chunks and shards are kept", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
