#!/usr/bin/env python3
"""Before and after, paired: two ``mathlas eval --json`` runs of the same query set (say, on a bundle
and on its rebuild) compared query by query.

    mathlas eval SET.jsonl --bundle OLD --json > before.json
    mathlas eval SET.jsonl --bundle NEW --json > after.json
    python scripts/compare_evals.py before.json after.json [--markdown] [--styles SET.jsonl]

For each mode both runs hold: P@1, Hit@10 and MRR@20 before and after, and the change in MRR@20 and
Hit@10 with its paired bootstrap 95% interval over queries (1,000 rounds, seed 0). A change whose
interval holds 0 is within the noise of the set. ``--styles`` adds the same per query style.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mathlas.retrieval_eval import metrics, paired_diff  # noqa: E402


def load(path: Path) -> dict:
    try:
        run = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SystemExit(f"compare_evals: cannot read {path}: {e}; give the output of mathlas eval --json") from None
    if "per_query" not in run:
        raise SystemExit(f"compare_evals: {path} has no per_query ranks; give the output of mathlas eval --json")
    return run


def compare(before: dict, after: dict, styles: dict[str, str] | None = None) -> list[dict]:
    """One row per mode (and per mode and style when ``styles`` maps query id -> style)."""
    ids_b = [q["id"] for q in before["per_query"]]
    ids_a = [q["id"] for q in after["per_query"]]
    if ids_b != ids_a:
        raise SystemExit("compare_evals: the two runs did not rank the same queries in the same order")
    modes = [m for m in before["per_query"][0] if m != "id" and m in after["per_query"][0]] if ids_b else []
    groups = {"all": list(range(len(ids_b)))}
    for i, qid in enumerate(ids_b):
        if styles and styles.get(qid):
            groups.setdefault(styles[qid], []).append(i)
    rows = []
    for mode in modes:
        for group, idx in groups.items():
            b = [before["per_query"][i][mode] for i in idx]
            a = [after["per_query"][i][mode] for i in idx]
            mb, ma = metrics(b), metrics(a)
            rows.append({"mode": mode, "group": group, "n": len(idx), "before": mb, "after": ma,
                         "d_mrr@20": paired_diff(a, b), "d_hit@10": paired_diff(a, b, at=10)})
    return rows


def _fmt(d: tuple[float, float, float]) -> str:
    return f"{d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}]"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--styles", type=Path, metavar="SET.jsonl",
                    help="also per query style, read from the query set")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    args = ap.parse_args(argv)
    before, after = load(args.before), load(args.after)
    styles = None
    if args.styles:
        styles = {}
        for line in Path(args.styles).read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                styles[q.get("id")] = q.get("style") or ""
    rows = compare(before, after, styles)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{before.get('bundle')} -> {after.get('bundle')}: {len(before['per_query'])} queries")
    head = ("mode", "group", "n", "P@1", "Hit@10", "MRR@20", "d MRR@20 [95%]", "d Hit@10 [95%]")
    lines = []
    for r in rows:
        b, a = r["before"], r["after"]
        lines.append((r["mode"], r["group"], str(r["n"]), f"{b['p@1']:.3f} -> {a['p@1']:.3f}",
                      f"{b['hit@10']:.3f} -> {a['hit@10']:.3f}", f"{b['mrr@20']:.3f} -> {a['mrr@20']:.3f}",
                      _fmt(r["d_mrr@20"]), _fmt(r["d_hit@10"])))
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for line in lines:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(x) for x in col) for col in zip(head, *lines)]
        for line in (head, *lines):
            print("  ".join(x.ljust(w) for x, w in zip(line, widths)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
