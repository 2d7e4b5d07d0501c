"""``mathlas-build pairs RECIPE``, ``train-encoder RECIPE`` and ``train-reranker RECIPE`` (docs/training.md)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_training_parsers(sub) -> None:
    p = sub.add_parser("pairs", help="build training pairs, hard negatives and the data card from a training recipe")
    p.add_argument("recipe", type=Path)
    p.add_argument("--out", type=Path, help="output directory (default: work/pairs/<name>-<version>)")
    _common(p)
    p.set_defaults(func=_pairs)
    t = _run_parser(sub, "train-encoder", "fine-tune the encoder on the recipe's pairs (resumes), then export it",
                    "[train]")
    t.add_argument("--eval-checkpoint", nargs="?", const="", metavar="CKPT",
                   help="only run the proxy evaluation of a checkpoint (default: the newest) and exit")
    t.add_argument("--export-checkpoint", nargs="?", const="", metavar="CKPT",
                   help="export a checkpoint (default: the newest) of a run stopped early, as a finished run "
                        "exports (encoder.json says complete: false), and exit")
    t.set_defaults(func=_train)
    r = _run_parser(sub, "train-reranker", "train the cross-encoder reranker on the recipe's pairs (resumes), then "
                                           "export it (work/rerankers/<run>/)", "[rerank]")
    r.add_argument("--measure", type=int, metavar="STEPS",
                   help="only time STEPS optimizer steps of these settings (nothing kept) and print s/step")
    r.set_defaults(func=_train_reranker)


def _run_parser(sub, name: str, what: str, table: str) -> argparse.ArgumentParser:
    """A training command's parser: the recipe and the options of a resumable run."""
    t = sub.add_parser(name, help=what)
    t.add_argument("recipe", type=Path)
    t.add_argument("--run", help=f"run name (default: the recipe's {table} run): work/train/<run>/")
    t.add_argument("--pairs", type=Path, help="pairs.jsonl (default: work/pairs/<name>-<version>/pairs.jsonl)")
    t.add_argument("--threads", type=int, help="torch threads (default: the recipe's, else 1)")
    t.add_argument("--max-steps", type=int, help="stop after N steps in this call; rerun to resume")
    t.add_argument("--no-export", action="store_true", help="do not export when the run is complete")
    _common(t)
    return t


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpora", type=Path, help="root of the corpora (default: $MATHLAS_CORPORA or ../shared/corpora)")
    p.add_argument("--eval-dir", type=Path, help="the dev sets to exclude (default: $MATHLAS_EVAL or ../shared/eval)")
    p.add_argument("-q", "--quiet", action="store_true")


def _pairs(args) -> int:
    from mathlas_build.training.pairs import build_pairs
    from mathlas_build.training.recipe import load_training_recipe

    recipe = load_training_recipe(args.recipe, args.corpora, args.eval_dir)
    card = build_pairs(recipe, args.out, quiet=args.quiet)
    print(json.dumps({"pairs": card["pairs"], "kinds": {k: v["pairs"] for k, v in card["kinds"].items()},
                      "excluded": card["excluded"], "out": str(args.out or recipe.pairs_dir)}, indent=1))
    return 0


def _train(args) -> int:
    from mathlas_build.training.recipe import load_training_recipe
    from mathlas_build.training.train import evaluate_checkpoint, export_checkpoint, train_encoder

    recipe = load_training_recipe(args.recipe, args.corpora, args.eval_dir)
    if args.export_checkpoint is not None:
        out = export_checkpoint(recipe, run=args.run, checkpoint=Path(args.export_checkpoint)
                                if args.export_checkpoint else None, pairs_path=args.pairs, threads=args.threads,
                                quiet=args.quiet)
        print(json.dumps(out, indent=1))
        return 0
    if args.eval_checkpoint is not None:
        row = evaluate_checkpoint(recipe, run=args.run, checkpoint=Path(args.eval_checkpoint) if args.eval_checkpoint
                                  else None, pairs_path=args.pairs, threads=args.threads, quiet=args.quiet)
        print(json.dumps(row, indent=1))
        return 0
    return _resumable(lambda: train_encoder(recipe, run=args.run, pairs_path=args.pairs, max_steps=args.max_steps,
                                            threads=args.threads, export=not args.no_export, quiet=args.quiet))


def _resumable(train) -> int:
    """Run a training call and print its summary; an interrupt says how to resume."""
    try:
        summary = train()
    except KeyboardInterrupt:
        print("mathlas-build: interrupted; rerun the same command to resume from the last checkpoint",
              file=sys.stderr)
        return 130
    print(json.dumps(summary, indent=1))
    return 0


def _train_reranker(args) -> int:
    from mathlas_build.training.recipe import load_training_recipe
    from mathlas_build.training.rerank import measure_steps, train_reranker

    recipe = load_training_recipe(args.recipe, args.corpora, args.eval_dir)
    if args.measure:
        rate = measure_steps(recipe, args.measure, threads=args.threads, pairs_path=args.pairs)
        print(json.dumps({"steps": args.measure, "s_per_step": round(rate, 3)}))
        return 0
    return _resumable(lambda: train_reranker(recipe, run=args.run, pairs_path=args.pairs, max_steps=args.max_steps,
                                             threads=args.threads, export=not args.no_export, quiet=args.quiet))
