"""Proofs read as statements by the scaffold's splitter, measured over a whole bundle.

    python scripts/study_scaffold_proofs.py [--bundle informal] [--before REV] [--after REV] [--sample 10]
                                            [--sample-from proof|subject|changed] [--seed 0]

Every document's text is split as ``applicability_checklist`` reads it (``body``, else ``text``, cut at
``MAX_CHARS``) by ``mathlas/tools/latex_split.py`` of the working tree (or of git revision ``--after``),
and, with ``--before REV``, by the same file at git revision REV. Per source it counts the documents
whose conclusion mentions a proof (the word "proof"/"proofs" anywhere: a proof kept in the statement,
but also "a proof of $A$" in logic), whose conclusion or preconditions hold a proof heading
(``\\begin{proof}``, ``{\\bf Proof:}``, ``\\textit{Proof.}``, "Proof." after a sentence...), and, with
``--before``, the documents whose split changed (any character, and beyond markup: its words); and
those whose one precondition was read off the sentence's subject ("A finite integral domain is a field").
``--sample N`` prints N documents whose words changed (seeded), before and after, to read: among those
that kept a proof heading before (``--sample-from proof``, the default), those read off the subject after
only (``subject``) or all of them (``changed``).
docs/scaffold.md has what it measured.
"""
from __future__ import annotations

import argparse
import importlib.util
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPLITTER = "mathlas/tools/latex_split.py"

MENTIONS_PROOF = re.compile(r"\bproofs?\b", re.I)
# fixed here, not imported: the same yardstick for both revisions of the splitter
PROOF_HEADING = re.compile(r"\\begin\{proof\}|(?:\{\\(?:bf|it|em|sl|sc)\b\s*|\\(?:textbf|textit|emph|textsl)\{)"
                           r"(?:\\\w+\{?\s*)?proof\b|(?:^|[.:$)}]\s+|\\\\\s*)Proof\s*[.:]", re.I)


def load_splitter(rev: str | None):
    """``latex_split`` of the working tree, or of git revision ``rev``, as a fresh module."""
    if rev is None:
        path = ROOT / SPLITTER
    else:
        src = subprocess.run(["git", "show", f"{rev}:{SPLITTER}"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout
        path = Path(tempfile.mkdtemp()) / "latex_split.py"
        path.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("latex_split_" + re.sub(r"\W", "_", rev or "now"), path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def documents(bundle: str | None):
    """(id, source, statement text) of every document, as applicability_checklist reads it."""
    import pyarrow.parquet as pq

    from mathlas.bundle import META
    from mathlas.releases.install import resolve_bundle
    from mathlas.tools.scaffold import MAX_CHARS

    path = resolve_bundle(bundle, quiet=True)
    table = pq.read_table(path / META, columns=["id", "source", "body", "text"]).to_pylist()
    return path.name, [(r["id"], r["source"], (r["body"] or r["text"] or "")[:MAX_CHARS]) for r in table]


def words(split: tuple[list[str], str]) -> list[str]:
    """A split without its markup: what is left when commands, spaces and punctuation are removed
    (``{\\it groupoid}`` and ``groupoid``, ``$x\\,y$`` and ``$x y$`` are the same words)."""
    return [re.sub(r"\\[A-Za-z]+|[^A-Za-z0-9]", "", s) for s in split[0] + [split[1]]]


def split(module, text: str) -> tuple[tuple[list[str], str], bool]:
    """(preconditions' texts, conclusion), and whether the one precondition was read off the subject."""
    pre, conclusion, parts = module.split_statement(text)
    subject = len(pre) == 1 and not parts and pre[0].cue in getattr(module, "SUBJECT_CUES", ())
    return ([p.text for p in pre] + [q.text for part in parts for q in part.preconditions], conclusion), subject


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", default=None, help="bundle name or directory (default: the default bundle)")
    ap.add_argument("--before", default=None, help="git revision whose splitter to compare with")
    ap.add_argument("--after", default=None, help="git revision whose splitter to measure (default: the working tree)")
    ap.add_argument("--sample", type=int, default=10, help="changed documents to print (default 10)")
    ap.add_argument("--sample-from", choices=("proof", "subject", "changed"), default="proof",
                    help="which changed documents: a proof heading kept before (default), read off the "
                         "subject after only, or any whose words changed")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    name, docs = documents(args.bundle)
    versions = {"after": load_splitter(args.after)}
    if args.before:
        versions = {"before": load_splitter(args.before), **versions}
    splits = {v: {} for v in versions}
    flags = {v: {} for v in versions}
    count: Counter = Counter()
    for doc_id, source, text in docs:
        count[(source, "documents")] += 1
        for v, module in versions.items():
            (pre, conclusion), subject = split(module, text)
            splits[v][doc_id] = (pre, conclusion)
            heading = any(PROOF_HEADING.search(s) for s in pre + [conclusion])
            flags[v][doc_id] = {"proof": heading, "subject": subject}
            count[(source, v, "read off the subject")] += subject
            count[(source, v, "conclusion mentions proof")] += bool(MENTIONS_PROOF.search(conclusion))
            count[(source, v, "proof heading kept")] += heading
        if args.before:
            before, after = splits["before"][doc_id], splits["after"][doc_id]
            count[(source, "changed")] += before != after
            count[(source, "words changed")] += words(before) != words(after)

    print(f"bundle {name}: {len(docs)} documents")
    sources = sorted({s for s, *_ in count}, key=lambda s: -count[(s, "documents")])
    cols = [(v, what) for what in ("conclusion mentions proof", "proof heading kept", "read off the subject")
            for v in versions]
    print("| source | documents | " + " | ".join(f"{what} ({v})" for v, what in cols)
          + (" | split changed | its words changed |" if args.before else " |"))
    print("|---" * (2 + len(cols) + 2 * bool(args.before)) + "|")
    for s in sources + ["all"]:
        get = (lambda *k: sum(count[(x, *k)] for x in sources)) if s == "all" else (lambda *k, s=s: count[(s, *k)])
        row = [s, get("documents")] + [get(v, what) for v, what in cols] + ([get("changed"), get("words changed")]
                                                                            if args.before else [])
        print("| " + " | ".join(str(x) for x in row) + " |")
    if args.before and args.sample:
        changed = sorted(d for d in splits["after"] if words(splits["before"][d]) != words(splits["after"][d]))
        if args.sample_from == "proof":
            changed = [d for d in changed if flags["before"][d]["proof"]]
        elif args.sample_from == "subject":
            changed = [d for d in changed if flags["after"][d]["subject"] and not flags["before"][d]["subject"]]
        for doc_id in random.Random(args.seed).sample(changed, min(args.sample, len(changed))):
            print(f"\n== {doc_id}")
            for v in versions:
                pre, conclusion = splits[v][doc_id]
                print(f"  {v}: preconditions {[p[:90] for p in pre][:6]}")
                print(f"  {v}: conclusion {conclusion[:300]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
