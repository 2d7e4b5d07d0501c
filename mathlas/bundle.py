"""The mathlas bundle format (versions 1 and 2): the one contract between ``build/`` and the runtime.

A bundle is one immutable directory. A directory without ``manifest.json`` is not a bundle. This
module is the format only: it imports nothing of mathlas but ``errors``; opening a bundle for search
is ``mathlas.engine``'s.

=============================  =====================================================================
path                           what
=============================  =====================================================================
manifest.json                  ``Manifest`` below; written last, so its presence means "complete"
meta/documents.parquet         one row per document, columns ``META_COLUMNS``; row number = the
                               integer *key* every index uses
meta/documents.arrow           optional: the same table as an uncompressed Arrow IPC file, which the
                               runtime memory-maps instead of decompressing the parquet into RAM
                               (large bundles; older runtimes ignore it and read the parquet)
bm25/                          tantivy index; text fields ``LEXICAL_FIELDS`` plus ``source``/``kind``
                               (raw, for filters) and ``key`` (u64, stored + fast). One segment when it
                               fits the writer's heap (tantivy's doc id is then the key), else several
                               (a hit's key is then read from the ``key`` fast field).
vectors/binary.usearch         usearch HNSW, metric hamming, dtype b1, key = row: the binary codes
                               of (vector - center), ``BINARY_CODES``: sign bits, or thermometer
                               codes (format 2); centring makes the bits far more informative
vectors/center.npy             float32 (dims,): the corpus mean vector subtracted before the codes
vectors/thresholds.npy         thermometer codes only: float32 (dims,), the per-dimension threshold t
vectors/float.i8.npy           int8 document vectors, shape (n, dims), row-wise scaled
vectors/float.scale.npy        float32 per-row scale: vector ~= float.i8[row] * scale[row]
graph/dependencies.npz         formal bundles: the reference graph as CSR adjacency (``GRAPH``)
encoder/                       ``model.onnx`` (+ ``model.onnx_data``), ``tokenizer.json``,
                               ``encoder.json``: the query encoder that made the vectors
reranker/                      optional: ``model.onnx``, ``tokenizer.json``, ``reranker.json``: a
                               cross-encoder that rescores the first ``top_n`` fused hits
                               (``mathlas.rerank``), declared by the manifest's ``reranker`` block
=============================  =====================================================================

Document ids follow the stable-id table of DESIGN.md (``stacks:<TAG>``, ``planetmath:<name>``,
``hott:<label>``, ``openlogic:<path>#<label>``, ``napkin:<chapter>:<n>``, ``proofnet:<id>``, ...).

Lexical analysis is part of the format: the build indexes ``lexical_words(field)`` with tantivy's
``en_stem`` tokenizer and the runtime analyses queries the same way, so identifiers such as
``Nat.Prime.two_le`` or ``ModEq`` match "prime two le" and "mod eq". A bundle whose manifest says
``lexical.identifiers = "tokenizer"`` (formal bundles) indexes the text as it is instead: the
tokenizer already splits ``.`` and ``_``, and appending the parts again doubles the weight of every
identifier in a signature (measured in docs/formal.md).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mathlas.errors import BundleCorruptError, BundleNotFoundError, BundleVersionError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

# The newest bundle format this mathlas reads and writes, and the oldest it still reads. A bundle
# carries the lowest version that can read it: 2 only for what version 1 runtimes cannot search
# (thermometer binary codes), so bundles without it stay readable by older mathlas.
FORMAT_VERSION = 2
MIN_FORMAT_VERSION = 1


def readable_format(version: object) -> bool:
    """Whether this mathlas reads bundles of ``version``."""
    return isinstance(version, int) and not isinstance(version, bool) and MIN_FORMAT_VERSION <= version <= FORMAT_VERSION


def needed_format(vectors: dict) -> int:
    """The lowest format version that reads a bundle with this manifest ``vectors`` block."""
    return 2 if vectors.get("binary_codes", "sign") != "sign" else 1

MANIFEST = "manifest.json"
META = "meta/documents.parquet"
# Optional, additive (no format-version change): an uncompressed Arrow IPC copy of META, same rows and
# columns. Zero-copy when memory-mapped: 1M documents cost 0.16 GB of private memory instead of 2.4 GB.
META_ARROW = "meta/documents.arrow"
BM25_DIR = "bm25"
BINARY_INDEX = "vectors/binary.usearch"
FLOAT_VECTORS = "vectors/float.i8.npy"
FLOAT_SCALES = "vectors/float.scale.npy"
VECTOR_CENTER = "vectors/center.npy"
# Binary codes of the HNSW stage (manifest ``vectors.binary_codes``; absent = "sign"):
#   sign          1 bit per dimension: the sign of vector - centre (1,024 bits at 1,024 dims)
#   thermometer3  3 bits per dimension: [x > -t, x > 0, x > t] of x = vector - centre with a
#                 per-dimension threshold t (``VECTOR_THRESHOLDS``: 0.67 sd, so the 4 levels are
#                 about equally likely); hamming distance between two codes = L1 distance between
#                 the levels. Exhaustive hamming recall@10 on the Mathlib bundle (280k x 384) at
#                 pools 200 / 400 / 800: 0.982 / 0.994 / 0.999, against 0.920 / 0.955 / 0.971 for signs.
BINARY_CODES = ("sign", "thermometer3")
VECTOR_THRESHOLDS = "vectors/thresholds.npy"
THERMOMETER_SD = 0.67
ENCODER_DIR = "encoder"
ENCODER_CONFIG = "encoder/encoder.json"
# Formal bundles: the reference graph as CSR adjacency (uses / used_by), see mathlas.graph.
GRAPH = "graph/dependencies.npz"
# Optional, additive (no format-version change): a reranker, declared by the manifest's ``reranker``
# block ({"name", "license", "max_tokens", "top_n", "default"}); its files are listed in ``files``
# like every other file. Older runtimes ignore the block and the directory.
RERANKER_DIR = "reranker"
RERANKER_CONFIG = "reranker/reranker.json"
RERANKER_FILES = ("model.onnx", "tokenizer.json", "reranker.json")
DEFAULT_RERANK_TOP_N = 40

# Columns of meta/documents.parquet. Paper and formal fields are optional (present when known).
META_COLUMNS = ("id", "source", "kind", "name", "title", "body", "text", "slogan", "link", "license")
OPTIONAL_META_COLUMNS = (
    "paper_id", "paper_title", "authors", "year", "categories", "citations", "journal_ref",
    "module", "signature", "docstring", "dependencies",
    "pagerank", "stacks", "attributes", "generated", "generated_from", "derived_name",
    "label", "about",
)
# The paper fields paper filters read (mathlas.filters.PaperFilter); a bundle has them when a paper
# source (the TheoremSearch dataset) built it. authors and categories are lists of strings.
PAPER_COLUMNS = ("paper_id", "paper_title", "authors", "year", "categories", "citations", "journal_ref")

# tantivy text fields of bm25/. Which of them a query searches, and with what boost, is the
# manifest's ``lexical.boosts`` (a recipe choice): on informal statements the noisy label-word
# names hurt BM25 (docs/benchmarks.md), on Lean declarations the name is the best field.
LEXICAL_FIELDS = ("name", "title", "text")
DEFAULT_LEXICAL_BOOSTS = {"text": 1.0}
LEXICAL_TOKENIZER = "en_stem"
# manifest ``lexical.identifiers``: "split" (the default) indexes lexical_words(text); "tokenizer"
# indexes the text itself and leaves identifiers to the tokenizer's split on non-alphanumerics.
LEXICAL_IDENTIFIERS = ("split", "tokenizer")
# manifest ``lexical.symbols`` (optional): "lean" also searches a query's notation as Mathlib naming
# words (``symbol_words`` below)
LEXICAL_SYMBOLS = ("lean",)

# Reciprocal Rank Fusion defaults; a bundle's manifest ``fusion`` block (a recipe choice, measured
# on its dev queries) overrides them.
DEFAULT_FUSION = {"k_rrf": 10.0, "weights": {"lexical": 1.0, "dense": 1.0}}

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[._'][A-Za-z0-9]+)*")


def lexical_words(text: str, identifiers: str = "split") -> str:
    """Text as the lexical index sees it: identifiers also split on camelCase, ``.`` and ``_``.

    ``Nat.Prime.two_le`` -> ``Nat.Prime.two_le Nat Prime two le``; ``ModEq`` -> ``ModEq Mod Eq``.
    Plain words pass unchanged, so the function is cheap on prose. ``identifiers="tokenizer"``
    returns the text unchanged (see the module docstring).
    """
    if identifiers not in LEXICAL_IDENTIFIERS:
        raise ValueError(f"lexical identifiers must be one of {LEXICAL_IDENTIFIERS}, not {identifiers!r}")
    if identifiers == "tokenizer":
        return text
    extra: list[str] = []
    for m in _IDENT.finditer(text):
        tok = m.group(0)
        if "." in tok or "_" in tok or _CAMEL.search(tok):
            parts = [p for piece in re.split(r"[._']", tok) for p in _CAMEL.split(piece) if p]
            if len(parts) > 1:
                extra.extend(parts)
    return text if not extra else text + " " + " ".join(extra)


# ------------------------------------------------------------------------------ Lean notation words
# Mathlib names a lemma after its statement: ``a * b ∈ I`` becomes ``mul_mem``, ``a ≤ b → ...`` becomes
# ``..._of_le``, ``∑ i, f i`` becomes ``sum``. A word tokenizer drops symbols, so a query written in
# notation (``b ∈ I → a * b ∈ I``) would keep only the one-letter names. ``symbol_words`` turns the
# symbols of a text into those naming words, so the words of a query written in notation meet the words
# of the declaration names (which the lexical index splits on ``.``, ``_`` and camelCase). The table
# follows Mathlib's naming conventions. Both sides use it, so it is part of the format: the build for a
# declaration's signature, and at query time bundles whose manifest says ``lexical.symbols = "lean"``.

# Longest symbols first where one is a prefix of another (``→+*`` before ``→``).
SYMBOL_WORDS: dict[str, str] = {
    "→+*": "ring hom", "→*": "monoid hom", "→+": "add monoid hom", "→ₗ": "linear map",
    "→L": "continuous linear map", "→ₐ": "alg hom", "≃+*": "ring equiv", "≃*": "mul equiv",
    "≃+": "add equiv", "≃ₗ": "linear equiv", "≃ₜ": "homeomorph", "≃o": "order iso",
    "↪": "embedding", "≃": "equiv", "≅": "iso", "⟶": "hom",
    "↔": "iff", "→": "imp", "∀": "forall", "∃": "exists", "¬": "not", "∧": "and", "∨": "or",
    "≠": "ne", "=": "eq", "≤": "le", "<": "lt", "≥": "ge", ">": "gt",
    "∉": "not mem", "∈": "mem", "⊆": "subset", "⊂": "ssubset", "⊇": "superset",
    "∩": "inter", "∪": "union", "ᶜ": "compl", "⋃": "iUnion", "⋂": "iInter", "∅": "empty",
    "∑": "sum", "∏": "prod", "∫": "integral", "∂": "deriv",
    "+": "add", "*": "mul", "/": "div", "^": "pow", "•": "smul", "⁻¹": "inv", "∣": "dvd", "%": "mod",
    "√": "sqrt", "‖": "norm", "∘": "comp", "⊔": "sup", "⊓": "inf", "⨆": "iSup", "⨅": "iInf",
    "⊤": "top", "⊥": "bot", "⊗": "tensor product", "⊕": "sum", "×ˢ": "prod", "×": "prod",
    "ℕ": "nat", "ℤ": "int", "ℚ": "rat", "ℝ": "real", "ℂ": "complex", "π": "pi", "∞": "top",
    "!": "factorial", "∆": "symm diff", "⧸": "quotient", "⋆": "star", "†": "adjoint",
    "⟪": "inner", "ⁿ": "pow", "²": "sq", "√2": "sqrt two",
    # syntax, not notation: matched so that their characters are not read as = > : |
    "=>": "", "↦": "", ":=": "", "<|": "", "|>": "", "|>.": "",
}
_SYMBOLS = re.compile("|".join(re.escape(s) for s in sorted(SYMBOL_WORDS, key=len, reverse=True)))
# ``-`` is ``sub`` between operands and ``neg`` in front of one; arrows like ``->`` are ASCII ``→``.
_ASCII = {"->": "→", "<->": "↔", "<=": "≤", ">=": "≥", "!=": "≠"}
_ASCII_RE = re.compile(r"<->|->|<=|>=|!=")
_MINUS = re.compile(r"(?<![-<>!])-(?![->])")
_OPERAND_BEFORE = re.compile(r"[\w)\]}'⁻¹]\s*$")


def symbol_words(text: str) -> str:
    """The naming words for the notation in ``text``, in order (``"a * b ∈ I"`` -> ``"mul mem"``)."""
    if not text:
        return ""
    text = _ASCII_RE.sub(lambda m: _ASCII[m.group()], text)
    words: list[tuple[int, str]] = [(m.start(), SYMBOL_WORDS[m.group()]) for m in _SYMBOLS.finditer(text)
                                    if SYMBOL_WORDS[m.group()]]
    for m in _MINUS.finditer(text):
        binary = _OPERAND_BEFORE.search(text, max(0, m.start() - 8), m.start()) is not None
        words.append((m.start(), "sub" if binary else "neg"))
    words.sort()
    return " ".join(w for _, w in words)


def with_symbol_words(text: str) -> str:
    """``text`` followed by its symbol words (unchanged when it has none)."""
    extra = symbol_words(text)
    return f"{text} {extra}" if extra else text


def binary_codes(vectors: "np.ndarray", center: "np.ndarray", thresholds: "np.ndarray | None" = None) -> "np.ndarray":
    """Packed codes of ``vectors`` (one row each) for the binary index: sign bits without
    ``thresholds``, thermometer codes (3 bits per dimension, see ``BINARY_CODES``) with them."""
    import numpy as np

    if thresholds is None:
        return sign_bits(vectors, center)
    x = np.atleast_2d(vectors) - center
    return np.packbits(np.concatenate([x > -thresholds, x > 0, x > thresholds], axis=1), axis=1)


def usearch_index_class():
    """usearch's ``Index`` class, imported safely.

    Importing onnxruntime *after* usearch (2.26, with its numkong kernels) crashes the
    interpreter with a segmentation fault on Linux x86-64, so onnxruntime, when installed, is
    loaded first. Every usearch import in mathlas and its build pipeline goes through here (the build writes,
    the runtime reads the binary index with the same class).
    """
    try:
        import onnxruntime  # noqa: F401  (load order matters; see above)
    except ImportError:
        pass
    from usearch.index import Index

    return Index


def code_bits(dims: int, codes: str) -> int:
    """Bits per code of a bundle's binary index (the usearch ``ndim``)."""
    if codes not in BINARY_CODES:
        raise ValueError(f"binary codes must be one of {BINARY_CODES}, not {codes!r}")
    return dims * (3 if codes == "thermometer3" else 1)


def sign_bits(vectors: "np.ndarray", center: "np.ndarray") -> "np.ndarray":
    """The binary index's codes: packed sign bits of ``vectors - center`` (one row per vector)."""
    import numpy as np

    return np.packbits((np.atleast_2d(vectors) - center) > 0, axis=1)


@dataclass
class FileEntry:
    size: int
    sha256: str


@dataclass
class Manifest:
    """manifest.json. ``sources`` maps a source key to ``{"count", "license", "attribution"}``;
    ``encoder`` copies encoder.json; ``vectors`` gives ``dims`` and ``float_dtype``; ``lexical``
    gives the query-time field ``boosts``; ``fusion`` the default ``k_rrf`` and channel
    ``weights``; ``files`` maps every other file's path (relative, ``/``-separated) to its size
    and sha256; ``reranker`` (optional) declares ``reranker/``: its name, licence and
    ``max_tokens`` from reranker.json, ``top_n`` (how many fused hits it rescores) and ``default``
    (whether a search reranks when it does not say)."""

    name: str
    version: str
    created: str
    builder: str
    count: int
    sources: dict[str, dict[str, Any]]
    encoder: dict[str, Any]
    vectors: dict[str, Any]
    files: dict[str, FileEntry]
    format_version: int = FORMAT_VERSION
    description: str = ""
    recipe: dict[str, Any] = field(default_factory=dict)
    lexical: dict[str, Any] = field(default_factory=lambda: {"boosts": dict(DEFAULT_LEXICAL_BOOSTS)})
    fusion: dict[str, Any] = field(default_factory=dict)
    graph: dict[str, Any] = field(default_factory=dict)  # formal bundles: {"edges", "prior", "damping"}
    reranker: dict[str, Any] = field(default_factory=dict)  # optional: {"name", "top_n", "default", ...}

    def to_json(self) -> str:
        data = asdict(self)
        data = {"format_version": data.pop("format_version"), **data}
        return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"

    def summary(self) -> dict[str, Any]:
        """What a reader of the bundle needs to know, without the file list and the recipe: name,
        version, format, documents, each source's count, licence and attribution, the encoder."""
        enc = self.encoder or {}
        encoder = {k: enc[k] for k in ("name", "license", "dims", "pooling", "max_tokens", "quantization")
                   if enc.get(k) is not None}
        return {"name": self.name, "version": self.version, "format_version": self.format_version,
                "created": self.created, "description": self.description, "documents": self.count,
                "sources": self.sources, "encoder": encoder}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Manifest":
        files = {p: FileEntry(**e) for p, e in data.get("files", {}).items()}
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in data.items() if k in known and k != "files"}
        return cls(files=files, **kwargs)


def encoder_fingerprint(encoder: dict[str, Any]) -> str:
    """Which encoder made a bundle's vectors: a hash of its manifest ``encoder`` block. Bundles that
    share an encoder share the findings' vectors; another encoder's vectors are never mixed in."""
    block = json.dumps(encoder, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(block.encode("utf-8")).hexdigest()[:16]


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def list_files(root: Path) -> list[str]:
    """Every file under ``root`` except the manifest, as sorted ``/``-separated relative paths."""
    out = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            rel = Path(dirpath, n).relative_to(root).as_posix()
            if rel != MANIFEST:
                out.append(rel)
    return sorted(out)


def file_entries(root: Path) -> dict[str, FileEntry]:
    """Size and sha256 of every file of a bundle being written (the manifest's ``files``)."""
    return {rel: FileEntry(size=(root / rel).stat().st_size, sha256=sha256_file(root / rel))
            for rel in list_files(root)}


def write_manifest(root: Path, manifest: Manifest) -> None:
    """Write manifest.json into a finished bundle directory (the last file a build writes)."""
    tmp = root / (MANIFEST + ".tmp")
    tmp.write_text(manifest.to_json(), encoding="utf-8")
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, root / MANIFEST)


def read_manifest(root: Path) -> Manifest:
    """Read and version-check a bundle's manifest."""
    root = Path(root)
    path = root / MANIFEST
    if not root.is_dir():
        raise BundleNotFoundError(f"no bundle directory at {root}")
    if not path.is_file():
        raise BundleNotFoundError(f"{root} is not a bundle: it has no {MANIFEST} (an unfinished build?)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise BundleCorruptError(f"{path}: unreadable manifest ({e})") from None
    if not isinstance(data, dict):
        raise BundleCorruptError(f"{path}: manifest is not a JSON object")
    version = data.get("format_version")
    if not readable_format(version):
        hint = ("upgrade mathlas (pip install -U mathlas)" if isinstance(version, int) and version > FORMAT_VERSION
                else "rebuild or re-download the bundle")
        raise BundleVersionError(
            f"bundle {root.name} has format_version {version!r}; this mathlas reads format_version "
            f"{MIN_FORMAT_VERSION} to {FORMAT_VERSION}: {hint}")
    try:
        return Manifest.from_dict(data)
    except TypeError as e:
        raise BundleCorruptError(f"{path}: manifest is missing fields ({e})") from None


def verify(root: Path | str, *, checksums: bool = True) -> Manifest:
    """Check that every file the manifest lists exists with its size (and sha256 when ``checksums``).

    Raises ``BundleCorruptError`` naming the first bad file; returns the manifest when all is well.
    """
    root = Path(root)
    manifest = read_manifest(root)
    for rel, entry in manifest.files.items():
        path = root / rel
        if not path.is_file():
            raise BundleCorruptError(f"bundle {root.name}: file {rel} is missing; reinstall the bundle")
        size = path.stat().st_size
        if size != entry.size:
            raise BundleCorruptError(
                f"bundle {root.name}: file {rel} has {size} bytes, manifest says {entry.size}; reinstall the bundle")
        if checksums and sha256_file(path) != entry.sha256:
            raise BundleCorruptError(f"bundle {root.name}: file {rel} does not match its sha256; reinstall the bundle")
    return manifest
