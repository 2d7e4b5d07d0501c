"""``mathlas-build``: corpora -> bundle, and bundle -> release archive.

    mathlas-build RECIPE.toml [--out DIR] [--corpora DIR] [--threads N] [--provider cpu|cuda] ...
    mathlas-build pack BUNDLE_DIR [--out artifacts/]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from mathlas_build.document import Document
from mathlas_build.recipe import Recipe, RecipeError, load_recipe
from mathlas_build.retrieval_text import name_field, retrieval_text
from mathlas_build.sources import reader

PROVIDERS = {"cpu": ["CPUExecutionProvider"], "cuda": ["CUDAExecutionProvider", "CPUExecutionProvider"]}


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


def build(recipe: Recipe, out: Path, *, threads: int | None = None, provider: str = "cpu",
          batch_size: int | None = None, cache_dir: Path | None = None, force: bool = False,
          quiet: bool = False) -> Path:
    from mathlas import __version__
    from mathlas.bundle import sha256_file
    from mathlas_build.embed import embed_documents
    from mathlas_build.writer import write_bundle

    if recipe.encoder_sha256:
        from mathlas.encoder import EncoderConfig

        model_file = EncoderConfig.load(recipe.encoder / "encoder.json").model_file
        got = sha256_file(recipe.encoder / model_file)
        if got != recipe.encoder_sha256:
            raise RecipeError(f"encoder model {recipe.encoder / model_file} has sha256 {got}, "
                              f"the recipe expects {recipe.encoder_sha256}: re-export it or update the recipe")
    docs, sources = read_sources(recipe, quiet)
    if not docs:
        raise RecipeError(f"{recipe.path}: the sources yielded no documents")
    texts = [retrieval_text(d) for d in docs]
    names = [name_field(d) for d in docs]
    vectors = embed_documents(
        texts, recipe.encoder, cache_dir=cache_dir, threads=threads or recipe.options.get("threads"),
        providers=PROVIDERS[provider], batch_size=batch_size or int(recipe.options.get("batch_size", 32)),
        model_file=recipe.document_model, quiet=quiet)
    return write_bundle(docs, texts, names, vectors, recipe.encoder, out, name=recipe.name,
                        version=recipe.version, sources=sources, description=recipe.description,
                        recipe=recipe.raw, builder=f"mathlas-build {__version__}",
                        lexical_boosts=recipe.options.get("lexical_boosts"), fusion=recipe.raw.get("fusion"),
                        force=force, quiet=quiet)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in ("build", "pack", "-h", "--help"):
        argv.insert(0, "build")
    p = argparse.ArgumentParser(prog="mathlas-build", description="Build mathlas bundles from corpora.")
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build a bundle from a recipe (the default command)")
    b.add_argument("recipe", type=Path)
    b.add_argument("--out", type=Path, help="bundle directory (default: work/bundles/<name>-<version>)")
    b.add_argument("--corpora", type=Path, help="root of the corpora (default: $MATHLAS_CORPORA or ../shared/corpora)")
    b.add_argument("--threads", type=int, help="onnxruntime threads for embedding")
    b.add_argument("--provider", choices=sorted(PROVIDERS), default="cpu", help="execution provider for embedding")
    b.add_argument("--batch-size", type=int)
    b.add_argument("--cache", type=Path, default=Path("work/embed-cache"),
                   help="embedding chunk cache, makes rebuilds resumable (default: work/embed-cache)")
    b.add_argument("--no-cache", action="store_true")
    b.add_argument("--pack", type=Path, metavar="DIR", help="also pack the bundle as a release into DIR")
    b.add_argument("--force", action="store_true", help="replace an existing bundle directory")
    b.add_argument("-q", "--quiet", action="store_true")
    k = sub.add_parser("pack", help="pack a bundle directory as <name>-<version>.tar.zst + .sha256")
    k.add_argument("bundle", type=Path)
    k.add_argument("--out", type=Path, default=Path("artifacts"))
    k.add_argument("-q", "--quiet", action="store_true")
    args = p.parse_args(argv)
    try:
        if args.command == "pack":
            from mathlas_build.release import pack

            archive, sha = pack(args.bundle, args.out)
            print(archive)
            return 0
        recipe = load_recipe(args.recipe, args.corpora)
        out = args.out or Path("work/bundles") / f"{recipe.name}-{recipe.version}"
        path = build(recipe, out, threads=args.threads, provider=args.provider, batch_size=args.batch_size,
                     cache_dir=None if args.no_cache else args.cache, force=args.force, quiet=args.quiet)
        if args.pack:
            from mathlas_build.release import pack

            archive, _ = pack(path, args.pack)
            print(archive)
        print(path)
        return 0
    except (RecipeError, FileExistsError, ValueError) as e:
        print(f"mathlas-build: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mathlas-build: interrupted; finished embedding chunks are cached", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
