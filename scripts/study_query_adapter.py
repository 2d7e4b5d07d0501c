"""A query-side linear adapter over the default bundle's fixed document vectors: measured, not taken.

    python scripts/study_query_adapter.py [--lam 0.1] [--epochs 3] [--ltr]

The adapter maps a query vector q to (q + qA) / |q + qA| (A: 384 x 384, starting at zero) and leaves
the documents' vectors as they are, so it would need no new embedding of any document. It is trained
on the collection's tune split with a softmax over *every* document of the bundle (the stored int8
vectors times their scales), each query's relevant ids (targets and judged equivalents) its positives,
with ``--lam`` times |A|^2 added. Printed, for the dense channel alone (exact scan, no HNSW): MRR@20,
Hit@10 and Hit@100 of the plain and adapted query vectors on tune (out of fold, ``--folds``), check and
informal-dev, with the paired MRR@20 change and its 95% bootstrap interval.

``--ltr`` also retrains the learned ranking stage (``scripts/train_ranker.py``, into a scratch
directory) on pools whose query vectors are adapted, tune's out of fold (cross-fitted, so the trees
never see an adapter trained on their own query), and prints the model's figures beside the same run
without the adapter. docs/training.md ("A query-side adapter") says what it measured and why it is not
shipped. Needs the build extra (torch).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "build"))


def fit_adapter(Q: np.ndarray, D: np.ndarray, positives: list[list[int]], *, lam: float = 0.1, epochs: int = 3,
                tau: float = 0.05, lr: float = 1e-3, batch: int = 32, seed: int = 0) -> np.ndarray:
    """A (dims x dims) minimising the softmax loss of each query's positives among all rows of D."""
    import torch

    torch.manual_seed(seed)
    Qt, Dt = torch.tensor(Q, dtype=torch.float32), torch.tensor(D, dtype=torch.float32)
    A = torch.zeros(Q.shape[1], Q.shape[1], requires_grad=True)
    opt = torch.optim.Adam([A], lr=lr)
    for _ in range(epochs):
        perm = torch.randperm(len(Qt))
        for a in range(0, len(Qt), batch):
            bi = perm[a:a + batch]
            mask = torch.zeros(len(bi), len(Dt), dtype=torch.bool)
            for r, j in enumerate(bi.tolist()):
                mask[r, positives[j]] = True
            q = Qt[bi] + Qt[bi] @ A
            logits = (q / q.norm(dim=1, keepdim=True)) @ Dt.T / tau
            loss = (torch.logsumexp(logits, 1) - torch.logsumexp(logits.masked_fill(~mask, -1e9), 1)).mean()
            loss = loss + lam * (A ** 2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return A.detach().numpy()


def adapt(Q: np.ndarray, A: np.ndarray) -> np.ndarray:
    q = Q + Q @ A
    return (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)


def dense_ranks(Q: np.ndarray, D: np.ndarray, positives: list[list[int]], depth: int = 100) -> list[int | None]:
    """The 0-based rank of each query's first positive in an exact scan of D (None past ``depth``)."""
    out = []
    for a in range(0, len(Q), 64):
        S = Q[a:a + 64] @ D.T
        top = np.argsort(-S, axis=1)[:, :depth]
        for row, pos in zip(top, positives[a:a + 64]):
            hit = np.flatnonzero(np.isin(row, pos))
            out.append(int(hit[0]) if len(hit) else None)
    return out


def summary(ranks: list[int | None]) -> dict[str, float]:
    n = max(len(ranks), 1)
    return {"mrr@20": sum(1 / (r + 1) for r in ranks if r is not None and r < 20) / n,
            "hit@10": sum(r is not None and r < 10 for r in ranks) / n,
            "hit@100": sum(r is not None for r in ranks) / n}


def paired(a: list[int | None], b: list[int | None], rounds: int = 2000) -> tuple[float, float, float]:
    rr = lambda r: 1 / (r + 1) if r is not None and r < 20 else 0.0  # noqa: E731
    d = np.array([rr(y) - rr(x) for x, y in zip(a, b)])
    rng = np.random.default_rng(0)
    means = [d[rng.integers(0, len(d), len(d))].mean() for _ in range(rounds)]
    return float(d.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lam", type=float, default=0.1)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--ltr", action="store_true", help="also retrain the learned stage with adapted vectors")
    a = ap.parse_args()

    import collection as S

    from mathlas.engine import open_bundle
    from mathlas.ranking.query import dense_text

    b = open_bundle(None)
    D = np.asarray(b.dense.vectors, dtype=np.float32) * np.asarray(b.dense.scales, dtype=np.float32)[:, None]
    key = {x: i for i, x in enumerate(b.column("id").to_pylist())}
    recs = [r for r in S.records() if r["relevant"]]
    texts = [dense_text(r["query"], b.manifest) for r in recs]  # what the dense channel encodes
    Q = b.encoder.encode_queries(texts)
    pos = [[key[x] for x in r["relevant"] if x in key] for r in recs]
    split = {s: [i for i, r in enumerate(recs) if r["split"] == s] for s in ("tune", "check", "dev")}
    tune = split["tune"]

    adapted = np.zeros_like(Q)
    for held in np.array_split(np.random.default_rng(0).permutation(tune), a.folds):
        rest = [i for i in tune if i not in set(held.tolist())]
        A = fit_adapter(Q[rest], D, [pos[i] for i in rest], lam=a.lam, epochs=a.epochs)
        adapted[held] = adapt(Q[held], A)
    A = fit_adapter(Q[tune], D, [pos[i] for i in tune], lam=a.lam, epochs=a.epochs)
    others = [i for i in range(len(recs)) if i not in set(tune)]
    adapted[others] = adapt(Q[others], A)
    print(f"dense channel alone, exact scan over {len(D):,} documents; adapter lam {a.lam}, {a.epochs} epochs "
          f"(tune out of {a.folds} folds); |A| {np.linalg.norm(A):.2f}")
    print("| split | n | plain: MRR@20 / Hit@10 / Hit@100 | adapted | MRR@20 change [95%] |")
    print("|---|---:|---|---|---|")
    for s, rows in split.items():
        r0 = dense_ranks(Q[rows], D, [pos[i] for i in rows])
        r1 = dense_ranks(adapted[rows], D, [pos[i] for i in rows])
        f = lambda m: " / ".join(f"{v:.3f}" for v in m.values())  # noqa: E731
        d, lo, hi = paired(r0, r1)
        print(f"| {s} | {len(rows)} | {f(summary(r0))} | {f(summary(r1))} | {d:+.3f} [{lo:+.3f}, {hi:+.3f}] |")
    if a.ltr:
        retrain(b, dict(zip(texts, adapted)), A)


def retrain(b, table: dict[str, np.ndarray], A: np.ndarray) -> None:
    """train_ranker.py twice in this process, plain and with the adapted vectors (``table``: the
    collection's dense texts, tune's out of fold; any other text adapted by ``A``); figures side by side."""
    import train_ranker

    from mathlas import encoder as E
    from mathlas.ranking.pipeline import pipeline_for

    plain = E.Encoder.encode_queries

    def encode_adapted(self, texts):
        q = adapt(plain(self, texts), A)
        for i, t in enumerate(texts):
            if t in table:
                q[i] = table[t]
        return q

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("plain", "adapted"):
            E.Encoder.encode_queries = plain if name == "plain" else encode_adapted
            pipeline_for(b).vectors.forget()  # the bundle keeps query vectors: none of the other run's
            path = Path(tmp) / f"{name}.json"
            sys.argv = ["train_ranker.py", "--out", str(path)]
            train_ranker.main()
            out[name] = json.loads(path.read_text(encoding="utf-8"))["measured"]
    E.Encoder.encode_queries = plain
    print("\nlearned stage, retrained (P@1 / Hit@10 / MRR@20 over judged relevant ids):")
    print("| split | RRF plain | RRF adapted | model plain | model adapted |")
    print("|---|---|---|---|---|")
    for s in ("tune", "check", "dev"):
        cells = [out[n][m][s] for m in ("rrf", "model") for n in ("plain", "adapted")]
        print(f"| {s} | " + " | ".join(f"{c['p@1']:.3f} / {c['hit@10']:.3f} / {c['mrr@20']:.3f}" for c in cells) + " |")


if __name__ == "__main__":
    main()
