#!/usr/bin/env python3
"""The ranking pipeline's own share of a repeated hybrid search, counted in instructions: a figure that
does not move with the machine's load, where timings on a shared machine do (docs/benchmarks.md, "The
ranking pipeline's own cost").

Runs itself twice under valgrind (cachegrind, no cache simulation): both runs open the bundle, load
the queries' vectors from a file made natively first (no encoder runs under valgrind), search every
query once (every lazy part made) and plan it; then one run searches every query ``--rounds`` times,
the other runs only the channels of the same plans as many times (``Pipeline.channel_rankings``). The
difference of the two totals, per search, is what the pipeline adds to its channels (planning,
fusion, stages, hits). Some minutes: valgrind runs Python some 50 times slower.

Every child runs with the same ``PYTHONHASHSEED`` (``--seed``): string hashing orders sets and dicts,
so another seed can walk another path through the same code. The count still moves between runs
(2-6% of the figure in docs/benchmarks.md, round 4: the channels-alone total changes by tens of
millions of instructions with nothing changed), so ``--repeats N`` runs the pair N times and prints
each figure, their median and their spread.

    python scripts/bench_pipeline_instructions.py [--bundle B] [--queries FILE] [--rounds 5] [--repeats 1]

PYTHONPATH=<another checkout> counts that checkout's pipeline the same way.
"""
from __future__ import annotations

import argparse
import pickle
import re
import shutil
import statistics
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# query vectors the bundle keeps (mathlas.ranking.query.QUERY_VECTORS_KEPT): more queries would encode again
MAX_QUERIES = 256


def queries_of(path: str) -> list[str]:
    from mathlas.retrieval_eval import load_queries

    return [q["query"] for q in load_queries(path)][:MAX_QUERIES]


def inner(mode: str, bundle: str | None, queries_file: str, vectors_file: str, rounds: int) -> None:
    """One run: ``save`` (natively: the query vectors to ``vectors_file``), ``full`` or ``channels``."""
    import mathlas
    from mathlas.ranking.pipeline import pipeline_for
    from mathlas.request import SearchRequest

    queries = queries_of(queries_file)
    b = mathlas.open_bundle(bundle)
    pipeline = pipeline_for(b)
    if mode == "save":
        for q in queries:
            b.search(q, k=10)
        Path(vectors_file).write_bytes(pickle.dumps(pipeline.vectors._kept.snapshot()))
        return
    pipeline.vectors._kept.seed(pickle.loads(Path(vectors_file).read_bytes()))
    plans = []
    for q in queries:  # warm, alike in both runs
        b.search(q, k=10)
        plans.append(pipeline.plan(SearchRequest.make(q, 10)))
    for _ in range(rounds):
        if mode == "full":
            for q in queries:
                b.search(q, k=10)
        else:
            for plan in plans:
                pipeline.channel_rankings(plan)


def _env(seed: int) -> dict[str, str]:
    return {**os.environ, "PYTHONHASHSEED": str(seed)}


def instructions(args: list[str], seed: int) -> int:
    """The instructions valgrind counted running this script with ``args``."""
    run = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                          sys.executable, __file__, *args], capture_output=True, text=True, env=_env(seed))
    found = re.search(r"I\s+refs:\s+([\d,]+)", run.stderr)
    if run.returncode or not found:
        raise SystemExit(f"bench_pipeline_instructions: valgrind failed:\n{run.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle")
    ap.add_argument("--queries", default=str(REPO.parent / "shared" / "eval" / "informal-dev.jsonl"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=1, help="runs of the pair (the spread is printed)")
    ap.add_argument("--seed", type=int, default=0, help="PYTHONHASHSEED of every child run")
    ap.add_argument("--inner", nargs=2, metavar=("MODE", "VECTORS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inner:
        inner(args.inner[0], args.bundle, args.queries, args.inner[1], args.rounds)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("bench_pipeline_instructions: needs valgrind (apt-get install valgrind)")
    n = len(queries_of(args.queries))
    common = ["--queries", args.queries, "--rounds", str(args.rounds)] + (["--bundle", args.bundle] if args.bundle else [])
    per_search = []
    with tempfile.TemporaryDirectory() as tmp:
        vectors = str(Path(tmp) / "vectors.pkl")
        subprocess.run([sys.executable, __file__, *common, "--inner", "save", vectors], check=True,
                       env=_env(args.seed))
        for _ in range(max(1, args.repeats)):
            full = instructions([*common, "--inner", "full", vectors], args.seed)
            channels = instructions([*common, "--inner", "channels", vectors], args.seed)
            per_search.append((full - channels) / (n * args.rounds) / 1e6)
            print(f"  searches {full:,}, their channels alone {channels:,}: "
                  f"{per_search[-1]:.3f} M instructions per search", flush=True)
    import mathlas

    print(f"mathlas at {Path(mathlas.__file__).parent}; {n} queries x {args.rounds} rounds, PYTHONHASHSEED={args.seed}")
    spread = (f" (min {min(per_search):.3f}, max {max(per_search):.3f} over {len(per_search)} repeats)"
              if len(per_search) > 1 else "")
    print(f"pipeline's own share: {statistics.median(per_search):.2f} M instructions per repeated search{spread}")


if __name__ == "__main__":
    main()
