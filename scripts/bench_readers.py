"""How long the build's source readers take to read their corpora (figures go in docs/benchmarks.md,
"Bundle size and build time"). A time depends on the machine and on what else runs on it, so it is
measured here, several rounds, and reported as a median, never asserted by a test
(tests/test_sources_stacks_planetmath_hott.py checks what Stacks reads, not how fast).

    python scripts/bench_readers.py                           # stacks, planetmath, hott; 3 rounds
    python scripts/bench_readers.py --source stacks --rounds 5
    python scripts/bench_readers.py --recipe build/recipes/informal.toml --source all

Each source is read as the recipe declares it (path under --corpora or $MATHLAS_CORPORA, the
recipe's options), as the build reads it. Progress goes to stderr, the markdown table to stdout.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "build"))

from mathlas_build.recipe import default_corpora  # noqa: E402
from mathlas_build.sources import reader  # noqa: E402

DEFAULT_SOURCES = ("stacks", "planetmath", "hott")


def sources_of(recipe: Path, corpora: Path) -> dict[str, tuple[Path, dict]]:
    """reader name -> (corpus path, the recipe's options for it)."""
    raw = tomllib.loads(recipe.read_text(encoding="utf-8"))
    out = {}
    for s in raw.get("sources", []):
        path = Path(s["path"])
        out[s["reader"]] = (path if path.is_absolute() else corpora / path, dict(s.get("options", {})))
    return out


def read_once(kind: str, path: Path, options: dict) -> tuple[int, float]:
    """(documents read, seconds) for one full read; the reader's own statistics lines are dropped."""
    mod = reader(kind)
    t = time.perf_counter()
    with contextlib.redirect_stderr(io.StringIO()):
        n = sum(1 for _ in mod.read(path, **options))
    return n, time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--recipe", type=Path, default=REPO / "build" / "recipes" / "informal.toml")
    p.add_argument("--corpora", type=Path, default=None, help="default: $MATHLAS_CORPORA or ../shared/corpora")
    p.add_argument("--source", action="append", help=f"a reader of the recipe, or all (default: {', '.join(DEFAULT_SOURCES)})")
    p.add_argument("--rounds", type=int, default=3, help="full reads per source (default 3)")
    args = p.parse_args(argv)
    corpora = args.corpora or default_corpora()
    declared = sources_of(args.recipe, corpora)
    wanted = list(declared) if args.source == ["all"] else (args.source or list(DEFAULT_SOURCES))
    unknown = [s for s in wanted if s not in declared]
    if unknown:
        p.error(f"{', '.join(unknown)}: not in {args.recipe.name} (it reads {', '.join(declared)})")
    missing = [str(declared[s][0]) for s in wanted if not declared[s][0].exists()]
    if missing:
        p.error(f"corpus not found: {', '.join(missing)} (set --corpora or MATHLAS_CORPORA)")
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    print("| source | documents | median s | min s | max s | documents/s | rounds |\n|---|---:|---:|---:|---:|---:|---:|")
    for kind in wanted:
        path, options = declared[kind]
        seconds, counts = [], set()
        for r in range(args.rounds):
            n, s = read_once(kind, path, options)
            counts.add(n)
            seconds.append(s)
            print(f"[{kind}] round {r + 1}/{args.rounds}: {n:,} documents in {s:.2f} s", file=sys.stderr, flush=True)
        med = statistics.median(seconds)
        n = max(counts)  # the same every round: a reader is deterministic
        print(f"| {kind} | {n:,} | {med:.2f} | {min(seconds):.2f} | {max(seconds):.2f} | {n / med:,.0f} | {args.rounds} |",
              flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nload average at the end: {load:.1f} on {os.cpu_count()} CPUs", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
