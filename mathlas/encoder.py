"""The query/document encoder: onnxruntime + tokenizers, configured only by ``encoder.json``.

``encoder.json`` keys (all but ``pooling`` and ``dims`` optional):

    name, source, license        where the weights came from
    pooling                      "mean" | "cls" | "last_token"
    normalize                    L2-normalise the pooled vector (default true)
    max_tokens                   truncation length, prompt included (default 512)
    dims                         the model's output width
    truncate_dims                Matryoshka: keep the first d dimensions, then renormalise (null = all)
    query_prompt, document_prompt  text put before queries / documents ("query: ", an instruction...)
    append_token                 a token appended after truncation (e.g. "<|endoftext|>" for last-token models)
    padding_side                 "right" | "left" (default right)
    pad_token_id                 default: the tokenizer's [PAD]/<pad> id, else 0
    inputs                       graph input names (subset of input_ids, attention_mask, token_type_ids, position_ids)
    output                       graph output holding per-token states (default "last_hidden_state")
    model_file                   ONNX file name (default model.onnx)

Pooling happens here in numpy, never in the graph, so any exported transformer plugs in unchanged.

``pair_inputs`` is the other way a bundle's models read text: a reranker's (query, document) pairs
(``mathlas.ranking.rerank``). It lives here, beside the encoder's tokenisation, because the trainer
(``build/``) may import this module and must cut and join pairs exactly as search does.
"""
from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Sequence

import numpy as np

from mathlas.errors import EncoderError

_POOLINGS = ("mean", "cls", "last_token")


@dataclass
class EncoderConfig:
    pooling: str
    dims: int
    normalize: bool = True
    max_tokens: int = 512
    truncate_dims: int | None = None
    query_prompt: str = ""
    document_prompt: str = ""
    append_token: str | None = None
    padding_side: str = "right"
    pad_token_id: int | None = None
    inputs: list[str] = field(default_factory=lambda: ["input_ids", "attention_mask"])
    output: str = "last_hidden_state"
    model_file: str = "model.onnx"
    name: str = ""
    source: str = ""
    license: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def out_dims(self) -> int:
        return self.truncate_dims or self.dims

    @classmethod
    def load(cls, path: Path) -> EncoderConfig:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise EncoderError(f"cannot read encoder config {path}: {e}") from None
        known = set(cls.__dataclass_fields__) - {"extra"}
        cfg = cls(**{k: v for k, v in data.items() if k in known},
                  extra={k: v for k, v in data.items() if k not in known})
        if cfg.pooling not in _POOLINGS:
            raise EncoderError(f"{path}: pooling {cfg.pooling!r} is not one of {', '.join(_POOLINGS)}")
        if cfg.padding_side not in ("left", "right"):
            raise EncoderError(f"{path}: padding_side must be 'left' or 'right'")
        if cfg.truncate_dims is not None and not 0 < cfg.truncate_dims <= cfg.dims:
            raise EncoderError(f"{path}: truncate_dims {cfg.truncate_dims} outside 1..{cfg.dims}")
        return cfg


THREADS_ENV = "MATHLAS_ENCODER_THREADS"


def threads_from_env() -> int | None:
    """``$MATHLAS_ENCODER_THREADS``: the ONNX session's threads (unset: onnxruntime's default, one
    per core, spinning between runs, which is fastest for one caller at a time)."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or not 1 <= int(raw) <= 256:
        raise EncoderError(f"{THREADS_ENV} must be a whole number from 1 to 256, got {raw!r}")
    return int(raw)


def model_files(directory: Path, model_file: str, what: str):
    """(the ONNX model's path, its ``tokenizers.Tokenizer`` with padding and truncation off) of a model
    directory; ``EncoderError`` naming what is missing (``what``: "encoder", "reranker")."""
    try:
        import onnxruntime  # noqa: F401  (onnx_session's; missing: the message below)
        from tokenizers import Tokenizer
    except ImportError as e:  # pragma: no cover - runtime deps
        raise EncoderError(f"the {what} needs onnxruntime and tokenizers: {e}") from None
    model, tok_path = Path(directory) / model_file, Path(directory) / "tokenizer.json"
    for p in (model, tok_path):
        if not p.is_file():
            raise EncoderError(f"{what} file missing: {p}")
    tok = Tokenizer.from_file(str(tok_path))
    tok.no_padding()
    tok.no_truncation()
    return model, tok


def int8_kernel_saturates() -> bool:
    """Whether onnxruntime's fast int8 kernel is inexact on this CPU, so ``onnx_session`` asks for the
    exact one (``session.x64quantprecision``: uint8 x uint8 products).

    An int8 model multiplies uint8 activations by int8 weights. x86 CPUs without VNNI (AVX2; AVX-512
    before Cascade Lake) add pairs of those products in 16 bits, which saturate: the same query then
    gets another vector (cosine ~.99 to the exact one) and other hits than on a CPU with VNNI
    (tests/test_encoder_portable.py shows it on an emulated AVX2 CPU). Where VNNI makes the fast
    kernel exact already, the exact one only costs time (4.5 against 3.0 ms a query on an AVX-512 VNNI
    CPU, the same vectors), so it is asked for only where it is needed: numpy's CPUID reading says
    whether the CPU has AVX-512 VNNI. CPUs with only the 256-bit AVX-VNNI are not told apart and get
    the exact kernel too. The option is x86's; other architectures are left as onnxruntime runs them
    (not measured here)."""
    import platform

    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686", "x86"):
        return False
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # numpy < 2
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as features
        except ImportError:
            return True
    return not features.get("AVX512VNNI", False)


def onnx_session(model: Path, threads: int | None = None, providers: Sequence[str] = ("CPUExecutionProvider",)):
    """An onnxruntime session for a bundle's model (the encoder's, the reranker's): ``threads`` intra-op
    threads, else ``$MATHLAS_ENCODER_THREADS`` without spinning (a server's setting), else
    onnxruntime's default; the first of ``providers`` that is available, else the CPU."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    if int8_kernel_saturates():
        opts.add_session_config_entry("session.x64quantprecision", "1")
    shared = not threads and threads_from_env()
    threads = threads or shared
    if threads:
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
    if shared:
        # the setting of a process that serves concurrent callers (mathlas serve): threads
        # that spin waiting for the next run take the CPU the other requests need
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    available = set(ort.get_available_providers())
    chosen = [p for p in providers if p in available] or ["CPUExecutionProvider"]
    try:
        return ort.InferenceSession(str(model), sess_options=opts, providers=chosen)
    except Exception as e:  # onnxruntime raises its own exception types
        raise EncoderError(f"cannot load {model}: {e}") from None


class Encoder:
    """Turns text into unit vectors with the ONNX model of an ``encoder/`` directory.

    Thread-safe; the ONNX session is created on first use. ``providers`` picks onnxruntime
    execution providers (e.g. ``["CUDAExecutionProvider", "CPUExecutionProvider"]``).
    """

    def __init__(self, directory: str | os.PathLike, *, threads: int | None = None,
                 providers: Sequence[str] | None = None, model_file: str | None = None):
        self.directory = Path(directory)
        self.config = EncoderConfig.load(self.directory / "encoder.json")
        self.threads = threads
        self.providers = list(providers) if providers else ["CPUExecutionProvider"]
        self.model_file = model_file or self.config.model_file
        self._session = None
        self._tokenizer = None
        self._append_id: int | None = None
        self._lock = threading.Lock()

    # -- loading -------------------------------------------------------------------------
    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            model, tok = model_files(self.directory, self.model_file, "encoder")
            cfg = self.config
            if cfg.append_token is not None:
                self._append_id = tok.token_to_id(cfg.append_token)
                if self._append_id is None:
                    raise EncoderError(f"append_token {cfg.append_token!r} is not in the tokenizer vocabulary")
            if cfg.pad_token_id is None:
                for cand in ("[PAD]", "<pad>", "<|endoftext|>"):
                    if tok.token_to_id(cand) is not None:
                        cfg.pad_token_id = tok.token_to_id(cand)
                        break
                else:
                    cfg.pad_token_id = 0
            session = onnx_session(model, self.threads, self.providers)
            names = {i.name for i in session.get_inputs()}
            missing = [n for n in cfg.inputs if n not in names]
            if missing:
                raise EncoderError(f"{model} has no input(s) {missing}; it has {sorted(names)}")
            self._tokenizer = tok
            self._session = session

    @property
    def active_providers(self) -> list[str]:
        self._load()
        return self._session.get_providers()

    # -- encoding ------------------------------------------------------------------------
    def tokenize(self, texts: Sequence[str], prompt: str = "") -> list[list[int]]:
        """Token ids per text, prompt included, truncated to ``max_tokens``."""
        self._load()
        cfg = self.config
        limit = cfg.max_tokens - (1 if self._append_id is not None else 0)
        encs = self._tokenizer.encode_batch([prompt + t for t in texts])
        out = []
        for e in encs:
            ids = e.ids
            if len(ids) > limit:
                # keep the special token the post-processor put last (e.g. [SEP]), drop the middle
                special = e.special_tokens_mask
                ids = ids[:limit - 1] + [ids[-1]] if special and special[-1] else ids[:limit]
            if self._append_id is not None:
                ids = ids + [self._append_id]
            out.append(ids)
        return out

    def cut(self, text: str, prompt: str = "") -> tuple[int, int] | None:
        """Where ``tokenize`` cuts ``text`` (after ``prompt``): (the tokens it keeps, how many characters
        of ``text`` they cover); None when the whole text fits in ``max_tokens``. A text of fewer bytes
        than ``max_tokens`` less a few specials fits (a token covers at least one byte) and is not
        tokenized."""
        limit = self.config.max_tokens - (1 if self.config.append_token is not None else 0)
        if len((prompt + text).encode("utf-8")) + 8 <= limit:
            return None
        self._load()
        e = self._tokenizer.encode(prompt + text)
        if len(e.ids) <= limit:
            return None
        special = e.special_tokens_mask
        last = limit - 2 if special and special[-1] else limit - 1  # the last token kept that is not a special
        while last > 0 and special and special[last]:
            last -= 1
        end = max(0, e.offsets[last][1] - len(prompt))
        return limit + (1 if self.config.append_token is not None else 0), end

    def token_states(self, text: str, prompt: str = "") -> np.ndarray:
        """Per-token output states of one text (no padding): for checks against a reference model."""
        (ids,) = self.tokenize([text], prompt)
        hidden, _ = self._forward([ids])
        return hidden[0]

    def pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Pool (and normalise / truncate) per-token states as this encoder's config says."""
        return self._pool(np.asarray(hidden, dtype=np.float32), np.asarray(mask))

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        hidden, mask = self._forward(batch)
        return self._pool(hidden, mask)

    def _forward(self, batch: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        feeds, mask = self.batch_inputs(batch)
        try:
            (hidden,) = self._session.run([self.config.output], feeds)
        except Exception as e:
            raise EncoderError(f"encoder failed on a batch of {len(batch)}: {e}") from None
        return hidden.astype(np.float32, copy=False), mask

    def batch_inputs(self, batch: list[list[int]]) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The graph's input arrays for token-id lists (padded as configured), and the attention mask."""
        self._load()
        cfg = self.config
        n, width = len(batch), max(len(b) for b in batch)
        ids = np.full((n, width), cfg.pad_token_id, dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.int64)
        for i, b in enumerate(batch):
            if cfg.padding_side == "right":
                ids[i, :len(b)] = b
                mask[i, :len(b)] = 1
            else:
                ids[i, width - len(b):] = b
                mask[i, width - len(b):] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in cfg.inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        if "position_ids" in cfg.inputs:
            feeds["position_ids"] = np.clip(np.cumsum(mask, axis=1) - 1, 0, None)
        return {k: v for k, v in feeds.items() if k in cfg.inputs}, mask

    def _pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        cfg = self.config
        if cfg.pooling == "mean":
            m = mask[..., None].astype(np.float32)
            vec = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)
        elif cfg.pooling == "cls":
            first = mask.argmax(axis=1)  # first real token, whatever the padding side
            vec = hidden[np.arange(len(hidden)), first]
        else:  # last_token: last real token, whatever the padding side
            last = mask.shape[1] - 1 - mask[:, ::-1].argmax(axis=1)
            vec = hidden[np.arange(len(hidden)), last]
        if cfg.truncate_dims:
            vec = vec[:, :cfg.truncate_dims]
        if cfg.normalize or cfg.truncate_dims:
            vec = vec / np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12)
        return np.ascontiguousarray(vec, dtype=np.float32)

    def encode(self, texts: Sequence[str], *, prompt: str = "", batch_size: int = 32,
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Encode texts in length-sorted batches (less padding); rows come back in input order."""
        if not texts:
            return np.zeros((0, self.config.out_dims), dtype=np.float32)
        tokens = self.tokenize(texts, prompt)
        order = np.argsort([len(t) for t in tokens], kind="stable")
        out = np.zeros((len(texts), self.config.out_dims), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            out[idx] = self._run([tokens[i] for i in idx])
            if progress:
                progress(len(idx))
        return out

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        return self.encode(queries, prompt=self.config.query_prompt)

    def encode_documents(self, docs: Sequence[str], *, batch_size: int = 32,
                         progress: Callable[[int], None] | None = None) -> np.ndarray:
        return self.encode(docs, prompt=self.config.document_prompt, batch_size=batch_size, progress=progress)


# pair_inputs cuts texts at this many characters a token before tokenising
PAIR_CHARS_PER_TOKEN = 12


def pair_inputs(tokenizer, pairs: Sequence[tuple[str, str]], *, max_tokens: int, query_tokens: int,
                pad_id: int = 0) -> dict[str, np.ndarray]:
    """A cross-encoder's input arrays for (query, document) ``pairs``, one row each.

    A row is the tokenizer's pair template (``[CLS] query [SEP] document [SEP]`` for BERT, token
    type 1 on the document side), padded on the right to the longest row. The query is cut to
    ``query_tokens`` tokens and the document to what is left of ``max_tokens``, so a long document
    never pushes the query out. ``tokenizer`` is a ``tokenizers.Tokenizer`` with truncation and
    padding off. Texts are cut at ``PAIR_CHARS_PER_TOKEN`` characters a token before tokenising (a
    PlanetMath entry can run to 50,000 characters; no real token is that long). The reranker at
    search time and its trainer both read pairs through here.
    """
    queries = tokenizer.encode_batch([q[:PAIR_CHARS_PER_TOKEN * query_tokens] for q, _ in pairs],
                                     add_special_tokens=False)
    docs = tokenizer.encode_batch([d[:PAIR_CHARS_PER_TOKEN * max_tokens] for _, d in pairs], add_special_tokens=False)
    specials = tokenizer.num_special_tokens_to_add(True)
    rows = []
    for q, d in zip(queries, docs):
        q.truncate(query_tokens)
        d.truncate(max(max_tokens - len(q.ids) - specials, 1))
        e = tokenizer.post_process(q, d)
        rows.append((e.ids, e.type_ids))
    width = max((len(ids) for ids, _ in rows), default=0)
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    types = np.zeros((len(rows), width), dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for i, (x, t) in enumerate(rows):
        ids[i, :len(x)] = x
        types[i, :len(t)] = t
        mask[i, :len(x)] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
