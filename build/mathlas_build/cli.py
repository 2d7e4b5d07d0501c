"""``mathlas-build``: corpora -> bundle, and bundle -> release archive (docs/building.md).

    mathlas-build RECIPE.toml [--out DIR] [--corpora DIR] [--threads N] [--provider auto|cpu|cuda] ...
    mathlas-build RECIPE.toml --shard I/N [--shards-dir DIR]     # one resumable, checksummed shard
    mathlas-build merge RECIPE.toml [SHARD_DIR...] [--out DIR]   # shards -> one bundle
    mathlas-build ray RECIPE.toml --shards N [--gpus-per-shard 1] [--address ADDR]
    mathlas-build RECIPE.toml --dry-run [--gpus G --gpu h100]    # plan: time and bundle size
    mathlas-build plan --docs N --model qwen3-0.6b --gpus G [--gpu h100|h200|a100|cpu] [--dims D]
    mathlas-build pack BUNDLE_DIR [--out artifacts/]
    mathlas-build pairs RECIPE.toml | train-encoder RECIPE.toml  # training pairs, encoder (docs/training.md)
    mathlas-build train-reranker RECIPE.toml                     # the cross-encoder reranker (docs/training.md)
    mathlas-build add-reranker BUNDLE_DIR RERANKER_DIR [--top-n 40] [--default on|off]
    mathlas-build add-ranker BUNDLE_DIR MODEL_JSON [--version V] [--force]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mathlas.errors import MathlasError
from mathlas_build.pipeline import PROVIDERS, build, dry_run
from mathlas_build.recipe import Recipe, RecipeError, load_recipe


def count(minimum: int):
    """An argparse type: an integer >= ``minimum`` (``--batch-size 0`` is refused by the parser, before any work)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum} or more, not {value}")
        return value
    parse.__name__ = f"integer >= {minimum}"
    return parse


def _add_embed_options(b: argparse.ArgumentParser) -> None:
    b.add_argument("--corpora", type=Path, help="root of the corpora (default: $MATHLAS_CORPORA, else shared/corpora beside this checkout)")
    b.add_argument("--threads", type=count(0), help="onnxruntime threads for embedding (0: onnxruntime's choice)")
    b.add_argument("--provider", choices=PROVIDERS, default="auto",
                   help="onnxruntime provider for embedding: auto = CUDA when onnxruntime-gpu sees a GPU, else CPU")
    b.add_argument("--batch-size", type=count(1), help="most documents per batch (default: the recipe's, else 32)")
    b.add_argument("--max-batch-tokens", type=count(1), help="most padded tokens per batch (length buckets; GPU)")
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


COMMANDS = ("build", "merge", "ray", "plan", "pack", "lean", "pairs", "train-encoder", "train-reranker", "add-reranker",
            "add-ranker")
# Modules an optional extra provides (pyproject.toml): a command that meets one missing says which extra to install.
EXTRA_OF = {"torch": "build", "transformers": "build", "optimum": "build", "onnx": "build", "safetensors": "build",
            "ray": "ray"}
# Commands that cannot start without them: checked before any work, so the message comes first, not after reading.
NEEDS = {"train-encoder": ("torch", "transformers"), "train-reranker": ("torch", "transformers")}


def missing_extra(command: str, error: ImportError) -> str | None:
    """The one-line message for an import of an optional extra's module that failed, else None."""
    extra = EXTRA_OF.get((getattr(error, "name", None) or "").split(".")[0])
    return f"mathlas-build: {command} needs the {extra} extra: pip install 'mathlas[{extra}]'" if extra else None


def _require(command: str) -> None:
    import importlib

    for module in NEEDS.get(command, ()):
        try:
            importlib.import_module(module)
        except ImportError as e:
            if e.name is None:
                e.name = module
            raise


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
    b.add_argument("--install", action="store_true",
                   help="also install the bundle into the mathlas data directory (`mathlas index install`)")
    b.add_argument("--force", action="store_true", help="replace an existing bundle directory")
    b.set_defaults(func=_build)
    m = sub.add_parser("merge", help="check that shards cover the corpus exactly once and write the bundle")
    m.add_argument("recipe", type=Path)
    m.add_argument("shards", type=Path, nargs="*",
                   help="shard directories, or directories holding them (default: work/shards/<name>-<version>)")
    m.add_argument("--out", type=Path, help="bundle directory (default: work/bundles/<name>-<version>)")
    m.add_argument("--corpora", type=Path, help="root of the corpora (default: $MATHLAS_CORPORA, else shared/corpora beside this checkout)")
    m.add_argument("--pack", type=Path, metavar="DIR", help="also pack the bundle as a release into DIR")
    m.add_argument("--install", action="store_true", help="also install the bundle (`mathlas index install`)")
    m.add_argument("--force", action="store_true", help="replace an existing bundle directory")
    m.add_argument("-q", "--quiet", action="store_true")
    m.set_defaults(func=_merge)
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
    r.set_defaults(func=_ray)
    pl = sub.add_parser("plan", help="dry-run planner: expected embedding time and bundle size")
    _add_plan_options(pl, docs=True)
    pl.add_argument("--from-bundle", type=Path, help="take per-document index and metadata sizes from this bundle")
    pl.set_defaults(func=_plan)
    from mathlas_build.lean_build import add_lean_parser

    add_lean_parser(sub)
    from mathlas_build.training.cli import add_training_parsers

    add_training_parsers(sub)
    a = sub.add_parser("add-reranker", help="add a trained reranker (train-reranker's export) to a built bundle "
                                            "directory; the manifest lists its files and sha256")
    a.add_argument("bundle", type=Path, help="a bundle directory you built (not an installed one)")
    a.add_argument("reranker", type=Path, help="e.g. work/rerankers/<run>")
    a.add_argument("--top-n", type=int, default=40, help="fused hits it rescores (default 40)")
    a.add_argument("--default", choices=("on", "off"), default="off",
                   help="whether a search reranks when it does not say (default off)")
    a.add_argument("--force", action="store_true", help="replace the bundle's reranker")
    a.add_argument("-q", "--quiet", action="store_true")
    a.set_defaults(func=_add_reranker)
    a = sub.add_parser("add-ranker", help="attach a learned ranking model (scripts/train_ranker.py's file) to a "
                                          "built bundle directory, optionally as a new version of it")
    a.add_argument("bundle", type=Path, help="a bundle directory (a copy: it is changed in place)")
    a.add_argument("model", type=Path, help="e.g. artifacts/rankers/informal-ltr-1.json")
    a.add_argument("--version", help="the bundle becomes this version (a patch release: same documents and indexes)")
    a.add_argument("--force", action="store_true", help="replace the bundle's ranking model")
    a.add_argument("-q", "--quiet", action="store_true")
    a.set_defaults(func=_add_ranker)
    k = sub.add_parser("pack", help="pack a bundle directory as <name>-<version>.tar.zst + .sha256")
    k.add_argument("bundle", type=Path, help="a bundle directory you built")
    k.add_argument("--out", type=Path, default=Path("artifacts"),
                   help="folder for the archive, its .sha256 and catalog.json, whose entry it adds or replaces "
                        "(default: artifacts, in the current folder)")
    k.add_argument("-q", "--quiet", action="store_true", help="no progress line on stderr")
    k.set_defaults(func=_pack)
    args = p.parse_args(argv)
    try:
        return _run(args)
    except ImportError as e:
        message = missing_extra(args.command, e)
        if message is None:
            raise
        print(message, file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    """Every command the same way: its parser names its handler (``set_defaults(func=...)``), and
    the errors every handler may raise become one line and an exit code here."""
    try:
        _require(args.command)
        return args.func(args)
    except (RecipeError, ValueError) as e:
        print(f"mathlas-build: {e}", file=sys.stderr)
        return 2
    except MathlasError as e:
        print(f"mathlas-build: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        message, code = os_error_line(e)
        print(f"mathlas-build: {message}", file=sys.stderr)
        return code
    except KeyboardInterrupt:
        print("mathlas-build: interrupted; finished embedding chunks and shards are kept", file=sys.stderr)
        return 130


# A path the user gave that is wrong is bad input (2); the machine failing (disk full, I/O) is 1.
_BAD_PATH = (FileNotFoundError, IsADirectoryError, NotADirectoryError, FileExistsError, PermissionError)


def os_error_line(e: OSError) -> tuple[str, int]:
    """An ``OSError`` as one line saying what to do, and its exit code (docs/building.md)."""
    import errno

    code = 2 if isinstance(e, _BAD_PATH) else 1
    if e.errno is None:  # raised by the build with its own message (writer.check_out, ...)
        return str(e.args[0] if e.args else e), code
    where = e.filename if e.filename is not None else "a file"
    if isinstance(e, FileNotFoundError):
        step = f"{where} does not exist (a broken link?): check the path, or remove the link"
    elif isinstance(e, IsADirectoryError):
        step = f"{where} is a folder where a file belongs: pass a file, or rename the folder"
    elif isinstance(e, NotADirectoryError):
        step = f"a part of {where} is a file where a folder belongs: choose another path"
    elif isinstance(e, FileExistsError):
        step = f"{where} exists and is in the way: choose another path or move it away"
    elif isinstance(e, PermissionError):
        step = f"no permission for {where}: choose a path you may write (--out, --cache, --workdir)"
    elif e.errno == errno.ENOSPC:
        step = f"the disk is full writing {where}: free some space or choose another --out / --cache"
    elif e.errno == errno.EROFS:
        return f"{where} is on a read-only file system: choose another path", 2
    else:
        step = f"{e.strerror or e} ({where}): check the disk and the path, then run the same command again"
    return step, code


# ------------------------------------------------------------------------------ the commands

def _embed_options(args: argparse.Namespace) -> dict:
    """The embedding options of ``build`` and ``ray`` as keyword arguments."""
    return dict(threads=args.threads, provider=args.provider, batch_size=args.batch_size,
                max_batch_tokens=args.max_batch_tokens, cache_dir=None if args.no_cache else args.cache,
                quiet=args.quiet)


def _bundle_dir(recipe: Recipe, given: Path | None) -> Path:
    return given or Path("work/bundles") / f"{recipe.name}-{recipe.version}"


def _finish(path: Path, args: argparse.Namespace) -> int:
    """After a bundle is written: pack it and install it when asked, else print where it is."""
    archive = None
    if getattr(args, "pack", None):
        from mathlas_build.release import pack

        archive, _ = pack(path, args.pack, quiet=args.quiet)
        print(archive)
    if getattr(args, "install", False):
        from mathlas_build.pipeline import install_bundle

        install_bundle(path, quiet=args.quiet, archive=archive)   # the release --pack made, not a second
        return 0
    print(path)
    return 0


def _check_finish(args: argparse.Namespace) -> None:
    """Refuse, before any work, a ``--pack`` folder the build could not write."""
    if getattr(args, "pack", None):
        from mathlas_build.writer import check_folder

        check_folder(args.pack, "--pack")


def _build(args: argparse.Namespace) -> int:
    if args.shard:
        given = [flag for flag, on in (("--out", args.out), ("--pack", args.pack), ("--install", args.install),
                                       ("--force", args.force)) if on]
        if given:
            raise ValueError(f"--shard builds one shard into --shards-dir, not a bundle: {', '.join(given)} "
                             f"{'is' if len(given) == 1 else 'are'} for the merge (mathlas-build merge RECIPE ... {' '.join(given)})")
    recipe = load_recipe(args.recipe, args.corpora, quiet=args.quiet)
    _check_finish(args)
    if args.dry_run:
        print(dry_run(recipe, args))
        return 0
    if args.shard:
        from mathlas_build.shard import build_shard, parse_shard

        i, n = parse_shard(args.shard)
        path, _ = build_shard(recipe, _shards_dir(recipe, args.shards_dir), i, n, **_embed_options(args))
        print(path)
        return 0
    return _finish(build(recipe, _bundle_dir(recipe, args.out), force=args.force, **_embed_options(args)), args)


def _merge(args: argparse.Namespace) -> int:
    from mathlas_build.shard import merge_shards

    recipe = load_recipe(args.recipe, args.corpora, quiet=args.quiet)
    _check_finish(args)
    path = merge_shards(recipe, args.shards or [_shards_dir(recipe, None)], _bundle_dir(recipe, args.out),
                        force=args.force, quiet=args.quiet)
    return _finish(path, args)


def _ray(args: argparse.Namespace) -> int:
    from mathlas_build.ray_build import build_shards_with_ray
    from mathlas_build.shard import merge_shards

    recipe = load_recipe(args.recipe, args.corpora, quiet=args.quiet)
    if not args.no_merge:  # before the shards are embedded, not after
        from mathlas_build.pipeline import check_paths

        check_paths(_bundle_dir(recipe, args.out), force=args.force)
    root = _shards_dir(recipe, args.shards_dir).resolve()
    paths = build_shards_with_ray(args.recipe, args.corpora, root, args.shards, address=args.address,
                                  gpus_per_shard=args.gpus_per_shard, cpus_per_shard=args.cpus_per_shard,
                                  **_embed_options(args))
    if args.no_merge:
        print("\n".join(map(str, paths)))
        return 0
    path = merge_shards(recipe, paths or [_shards_dir(recipe, None)], _bundle_dir(recipe, args.out),
                        force=args.force, quiet=args.quiet)
    return _finish(path, args)


def _plan(args: argparse.Namespace) -> int:
    from mathlas_build.plan import format_plan, make_plan

    plan = make_plan(args.docs, args.model, gpus=args.gpus, gpu=args.gpu, dims=args.dims,
                     tokens_per_doc=args.tokens_per_doc, from_bundle=args.from_bundle,
                     read_docs_per_s=args.read_rate)
    print(format_plan(plan, as_json=args.json))
    return 0


def _pack(args: argparse.Namespace) -> int:
    from mathlas_build.release import pack
    from mathlas_build.writer import check_folder

    check_folder(args.out, "--out")
    archive, _sha = pack(args.bundle, args.out, quiet=args.quiet)
    print(archive)
    return 0


def _add_reranker(args: argparse.Namespace) -> int:
    from mathlas_build.writer import add_reranker

    block = add_reranker(args.bundle, args.reranker, top_n=args.top_n, default=args.default == "on",
                         force=args.force, quiet=args.quiet)
    print(json.dumps(block))
    return 0


def _add_ranker(args: argparse.Namespace) -> int:
    from mathlas_build.writer import add_ranker

    block = add_ranker(args.bundle, args.model, version=args.version, force=args.force, quiet=args.quiet)
    print(json.dumps({k: block[k] for k in ("file", "kind", "trees") if k in block}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
