"""The optional reranker: a small cross-encoder that reads the query and a document together and
rescores the first ``top_n`` fused hits (docs/training.md, "Reranker").

A bundle may carry one in ``reranker/`` (``mathlas.bundle.RERANKER_DIR``): ``model.onnx`` (int8),
``tokenizer.json`` and ``reranker.json``, declared by the manifest's ``reranker`` block, which
also says how many hits it rescores (``top_n``) and whether a search reranks when it does not say
(``default``). ``SearchRequest.rerank`` (None: the bundle's default) turns it on or off per query.

``reranker.json`` keys (``max_tokens`` required):

    name, source, license        where the weights came from
    max_tokens                   a (query, document) pair is cut to this many tokens, specials included
    query_tokens                 the query's share at most (default max_tokens // 4); the document gets the rest
    inputs                       graph input names (default input_ids, attention_mask, token_type_ids)
    output                       graph output: one score per pair (default "scores")
    model_file                   ONNX file name (default model.onnx)
    pad_token_id                 default 0
    training                     how it was trained (recipe hash, data licences, measurements)

Pairs are tokenised by ``mathlas.encoder.pair_inputs``, the function its trainer used, and scored
in one ONNX run. The session loads on the first rerank, not when the bundle opens.
"""
from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Sequence

import numpy as np

from mathlas.errors import EncoderError
from mathlas.ranking.candidates import Candidates

CONFIG = "reranker.json"


@dataclass
class RerankerConfig:
    max_tokens: int
    query_tokens: int = 0
    inputs: list[str] = field(default_factory=lambda: ["input_ids", "attention_mask", "token_type_ids"])
    output: str = "scores"
    model_file: str = "model.onnx"
    pad_token_id: int = 0
    name: str = ""
    source: str = ""
    license: str = ""
    extra: dict = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> RerankerConfig:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            known = set(cls.__dataclass_fields__) - {"extra"}
            cfg = cls(**{k: v for k, v in data.items() if k in known},
                      extra={k: v for k, v in data.items() if k not in known})
        except (OSError, json.JSONDecodeError, TypeError) as e:
            raise EncoderError(f"cannot read reranker config {path}: {e}") from None
        if not isinstance(cfg.max_tokens, int) or cfg.max_tokens < 8:
            raise EncoderError(f"{path}: max_tokens must be an integer >= 8, got {cfg.max_tokens!r}")
        cfg.query_tokens = min(cfg.query_tokens or cfg.max_tokens // 4, cfg.max_tokens // 2)
        return cfg


class Reranker:
    """Scores (query, document) pairs with the ONNX cross-encoder of a ``reranker/`` directory.

    Thread-safe; the session is created on first use (``threads``: onnxruntime intra-op threads; as the
    encoder's, see ``mathlas.encoder.onnx_session``)."""

    def __init__(self, directory: str | os.PathLike, *, threads: int | None = None, model_file: str | None = None):
        self.directory = Path(directory)
        self.config = RerankerConfig.load(self.directory / CONFIG)
        self.threads = threads
        self.model_file = model_file or self.config.model_file
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            from mathlas.encoder import model_files, onnx_session

            model, tok = model_files(self.directory, self.model_file, "reranker")
            session = onnx_session(model, self.threads)
            missing = [n for n in self.config.inputs if n not in {i.name for i in session.get_inputs()}]
            if missing:
                raise EncoderError(f"{model} has no input(s) {missing}")
            self._tokenizer = tok
            self._session = session

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray:
        """One score per document for ``query`` (higher: more relevant), in one ONNX run."""
        return self.score_pairs([(query, d) for d in documents])

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """One score per (query, document) pair, in one ONNX run."""
        from mathlas.encoder import pair_inputs

        if not pairs:
            return np.zeros(0, dtype=np.float32)
        self._load()
        cfg = self.config
        feeds = pair_inputs(self._tokenizer, pairs, max_tokens=cfg.max_tokens, query_tokens=cfg.query_tokens,
                            pad_id=cfg.pad_token_id)
        try:
            (out,) = self._session.run([cfg.output], {k: v for k, v in feeds.items() if k in cfg.inputs})
        except Exception as e:
            raise EncoderError(f"reranker failed on {len(pairs)} pairs: {e}") from None
        return np.asarray(out, dtype=np.float32).reshape(len(pairs))


def reorder(pool: Candidates, scores: np.ndarray) -> Candidates:
    """The first ``len(scores)`` rows of ``pool`` in order of ``scores`` (ties keep the fused order),
    each with its reranker score as its score and its place as the mark ``rerank``; the rows after
    them follow in their fused order, with their fused scores and no ``rerank`` mark."""
    n = len(scores)
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    rows = np.concatenate([order, np.arange(n, len(pool))]).astype(np.int64)
    new_scores = pool.scores.copy()
    new_scores[:n] = np.asarray(scores, dtype=np.float64)
    place = np.zeros(len(pool), dtype=np.int64)
    place[:n] = np.arange(1, n + 1)  # after the reorder: row r is the r-th reranked
    return pool.rescored(new_scores).take(rows).marked("rerank", place)
