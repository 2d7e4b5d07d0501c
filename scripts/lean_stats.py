"""Run the Lean source reader over Mathlib4 (+ Archive, Counterexamples) and Batteries in the corpora
folder and print what it emits: documents per kind, generated names per kind, dependency edges, time,
peak RSS, and how many formal-dev targets resolve to an emitted id.

    python scripts/lean_stats.py [--corpora ../shared/corpora] [--eval ../shared/eval/formal-dev.jsonl]

Defaults follow MATHLAS_CORPORA / MATHLAS_EVAL, else ../shared/{corpora,eval} beside the repository.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "build"))

from mathlas_build.sources import lean  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", type=Path,
                    default=Path(os.environ.get("MATHLAS_CORPORA", REPO.parent / "shared" / "corpora")))
    ap.add_argument("--eval", type=Path, default=Path(os.environ.get(
        "MATHLAS_EVAL", REPO.parent / "shared" / "eval")) / "formal-dev.jsonl")
    ap.add_argument("--projects", default="mathlib4,lean4-batteries")
    args = ap.parse_args()
    kinds: Counter = Counter()
    generated: Counter = Counter()
    ids: set[str] = set()
    edges = 0
    no_deps = 0
    derived = 0
    t0 = time.time()
    for project in args.projects.split(","):
        root = args.corpora / project
        if not root.is_dir():
            print(f"skipping {project}: not found at {root}", file=sys.stderr)
            continue
        for d in lean.read(root):
            if d.id in ids:
                generated["cross-project duplicate"] += 1
                continue
            ids.add(d.id)
            kinds[d.kind] += 1
            generated[d.extra.get("generated", "declared")] += 1
            deps = d.extra.get("dependencies", [])
            edges += len(deps)
            no_deps += not deps
            derived += bool(d.extra.get("derived_name"))
    elapsed = time.time() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"documents: {len(ids)}  time: {elapsed:.1f} s  peak RSS: {rss:.0f} MiB")
    print("kinds:", dict(kinds.most_common()))
    print("generated:", dict(generated.most_common()), f"derived instance names: {derived}")
    print(f"dependency edges: {edges}  documents without dependencies: {no_deps}")
    if args.eval.is_file():
        targets = [t for line in args.eval.open() if line.strip() for t in json.loads(line)["targets"]
                   if t.startswith("lean:")]
        missing = [t for t in targets if t not in ids]
        print(f"formal-dev targets resolved: {len(targets) - len(missing)}/{len(targets)}"
              + (f"  missing: {missing}" if missing else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
