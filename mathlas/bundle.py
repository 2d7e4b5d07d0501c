"""The mathlas bundle format (versions 1 and 2): the one contract between ``build/`` and the runtime.

A bundle is one immutable directory. A directory without ``manifest.json`` is not a bundle. A bundle
holds exactly the files its manifest lists, inside itself, and the runtime reads no other
(``verify`` checks it, with the document count against the tables). This module is the format only:
it imports nothing of mathlas but ``errors`` and the leaf ``atomic`` (the manifest's atomic write);
opening a bundle for search is ``mathlas.engine``'s.

=============================  =====================================================================
path                           what
=============================  =====================================================================
manifest.json                  ``Manifest`` below; written last, so its presence means "complete"
meta/documents.parquet         one row per document, columns ``META_COLUMNS``; row number = the
                               integer *key* every index uses
meta/documents.arrow           optional: the same table as an uncompressed Arrow IPC file, which the
                               runtime memory-maps instead of decompressing the parquet into RAM
                               (large bundles; older runtimes ignore it and read the parquet); read
                               only when the manifest lists it, like every file
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
                               (``mathlas.ranking.rerank``), declared by the manifest's ``reranker`` block
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
    "label", "about", "aliases", "deprecated", "replaced_by", "alias_of",
)
# The paper fields paper filters read (mathlas.ranking.filters.PaperFilter); a bundle has them when a paper
# source (the TheoremSearch dataset) built it. authors and categories are lists of strings.
PAPER_COLUMNS = ("paper_id", "paper_title", "authors", "year", "categories", "citations", "journal_ref")

# tantivy text fields of bm25/. Which of them a query searches, and with what boost, is the
# manifest's ``lexical.boosts`` (a recipe choice): on informal statements the noisy label-word
# names hurt BM25 (docs/benchmarks.md), on Lean declarations the name is the best field.
LEXICAL_FIELDS = ("name", "title", "text", "alias", "context", "gloss")
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
    returns the text unchanged (see the module docstring). In both, a word with letters beyond ASCII
    is added once more in ASCII (``Gödel`` -> ``Gödel ... Godel``, ``Weierstraß`` -> ``Weierstrass``):
    a query typed either way meets a text written either way.
    """
    if identifiers not in LEXICAL_IDENTIFIERS:
        raise ValueError(f"lexical identifiers must be one of {LEXICAL_IDENTIFIERS}, not {identifiers!r}")
    if identifiers == "tokenizer":
        return text + _ascii_folds(text)
    extra: list[str] = []
    for m in _IDENT.finditer(text):
        tok = m.group(0)
        if "." in tok or "_" in tok or _CAMEL.search(tok):
            parts = [p for piece in re.split(r"[._']", tok) for p in _CAMEL.split(piece) if p]
            if len(parts) > 1:
                extra.extend(parts)
    return (text if not extra else text + " " + " ".join(extra)) + _ascii_folds(text)


_NON_ASCII_WORD = re.compile(r"\w*[^\W\x00-\x7f]\w*")
_LIGATURES = str.maketrans({"ß": "ss", "ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ł": "l",
                            "Ł": "L", "đ": "d", "Đ": "D", "ı": "i", "ȷ": "j", "þ": "th"})


def _ascii_folds(text: str) -> str:
    """`` Godel Weierstrass`` for a text that says ``Gödel`` and ``Weierstraß``: each word with letters
    beyond ASCII, once more in ASCII letters (accents dropped, ``ß`` as ``ss``), so that a query typed
    either way finds it; empty for an ASCII text (the common case, and cheap)."""
    if text.isascii():
        return ""
    import unicodedata

    folds = []
    for word in dict.fromkeys(_NON_ASCII_WORD.findall(text)):
        plain = "".join(c for c in unicodedata.normalize("NFKD", word.translate(_LIGATURES))
                        if not unicodedata.combining(c))
        if plain != word and plain.isascii() and plain.isalnum():
            folds.append(plain)
    return " " + " ".join(folds) if folds else ""


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


def binary_codes(vectors: np.ndarray, center: np.ndarray, thresholds: np.ndarray | None = None) -> np.ndarray:
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


def sign_bits(vectors: np.ndarray, center: np.ndarray) -> np.ndarray:
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
    ranker: dict[str, Any] = field(default_factory=dict)  # optional learned stage: {"file", "features", ...}

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
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        listed = data.get("files", {})
        if not isinstance(listed, dict) or not all(isinstance(e, dict) for e in listed.values()):
            raise TypeError("'files' must map each path to its size and sha256")
        files = {p: FileEntry(**e) for p, e in listed.items()}
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
    from mathlas.atomic import atomic_write

    atomic_write(root / MANIFEST, manifest.to_json(), fsync=True, tmp=root / (MANIFEST + ".tmp"))


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


def verify(root: Path | str, *, checksums: bool = True, exact: bool = True, fix: str | None = None) -> Manifest:
    """Check a bundle against its manifest; returns the manifest, or raises ``BundleCorruptError``
    naming the first problem (``problems`` lists them all).

    The full check (``checksums=True``: ``mathlas index verify`` and every install) enforces the rule
    "a bundle holds exactly the files its manifest lists, inside itself": every listed path is a
    plain relative path that stays inside the bundle, every listed file exists with its size and
    sha256, no file is there that the manifest does not list, the files every search reads are
    listed (``REQUIRED_FILES``), and the document count agrees with the tables (``check_counts``).
    ``checksums=False`` is the quick check of opening a bundle: paths, presence and sizes only (the
    runtime reads only listed files and checks each table's count as it loads it). ``exact=False``
    allows files the manifest does not list (packing a build directory, where only the listed files
    go into the release). ``fix`` replaces the next step each message ends with (an installer says
    "nothing was installed").
    """
    manifest, found = _problems(Path(root), checksums=checksums, exact=exact, first=True, fix=fix)
    if found:
        raise BundleCorruptError(found[0])
    return manifest


def problems(root: Path | str, *, checksums: bool = True, exact: bool = True,
             fix: str | None = None) -> tuple[Manifest, list[str]]:
    """(manifest, every problem ``verify`` would find, one line each ending with what to do). A
    missing or unreadable manifest raises as in ``read_manifest``."""
    return _problems(Path(root), checksums=checksums, exact=exact, first=False, fix=fix)


# The files every search of a bundle reads (besides the manifest): a manifest must list them.
REQUIRED_FILES = (META, BM25_DIR + "/meta.json", BINARY_INDEX, FLOAT_VECTORS, FLOAT_SCALES, VECTOR_CENTER,
                  ENCODER_CONFIG)
# At most this many unlisted files are named one by one; the rest are counted in one more line.
_UNLISTED_NAMED = 10
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
_REINSTALL = "reinstall the bundle"


def listed_path_problem(rel: object) -> str | None:
    """Why ``rel`` cannot be a path of a bundle's ``files`` (None when it can): it must be relative,
    ``/``-separated, without ``.``, ``..`` or empty parts, and not the manifest itself."""
    if not isinstance(rel, str) or not rel:
        return "is not a file name"
    if rel.startswith("/") or "\\" in rel or re.match(r"[A-Za-z]:", rel) or "\x00" in rel:
        return "is not a relative /-separated path inside the bundle"
    if any(part in ("", ".", "..") for part in rel.split("/")):
        return "has an empty, '.' or '..' part: it would name a file outside the bundle"
    if rel == MANIFEST:
        return "is the manifest itself"
    return None


def _problems(root: Path, *, checksums: bool, exact: bool, first: bool,
              fix: str | None) -> tuple[Manifest, list[str]]:
    manifest = read_manifest(root)
    name = root.name
    out: list[str] = []

    def say(problem: str, step: str = _REINSTALL) -> bool:
        """Record a problem; True when the caller should stop (``first``)."""
        out.append(f"bundle {name}: {problem}; {fix or step}")
        return first

    files = manifest.files
    inside = root.resolve()
    for rel, entry in files.items():
        why = listed_path_problem(rel)
        if why is None and not (isinstance(entry.size, int) and not isinstance(entry.size, bool) and entry.size >= 0
                                and isinstance(entry.sha256, str) and _SHA256_HEX.fullmatch(entry.sha256)):
            why = "has no valid size and sha256"
        if why is not None:
            if say(f"the manifest lists {rel!r}, which {why} (a damaged or hostile manifest)"):
                return manifest, out
            continue
        path = root / rel
        if not path.resolve().is_relative_to(inside):
            stop = say(f"file {rel} leads outside the bundle (a symbolic link)")
        elif not path.is_file():
            stop = say(f"file {rel} is missing")
        elif (size := path.stat().st_size) != entry.size:
            stop = say(f"file {rel} has {size} bytes, manifest says {entry.size}")
        elif checksums and sha256_file(path) != entry.sha256:
            stop = say(f"file {rel} does not match its sha256")
        else:
            stop = False
        if stop:
            return manifest, out
    if not checksums:
        return manifest, out
    unlisted = [rel for rel in _entries(root) if rel not in files] if exact else []
    for rel in unlisted[:_UNLISTED_NAMED]:
        if say(f"file {rel} is not in the manifest (a bundle holds exactly the files its manifest lists)",
               f"delete it or {_REINSTALL}"):
            return manifest, out
    if len(unlisted) > _UNLISTED_NAMED:
        say(f"{len(unlisted) - _UNLISTED_NAMED:,} more files are not in the manifest", f"delete them or {_REINSTALL}")
    required = list(REQUIRED_FILES) + (
        [VECTOR_THRESHOLDS] if (manifest.vectors or {}).get("binary_codes") == "thermometer3" else []) + (
        [f"{RERANKER_DIR}/{f}" for f in RERANKER_FILES] if manifest.reranker else [])
    for rel in required:
        if rel not in files and say(f"the manifest does not list {rel}, which every search reads"):
            return manifest, out
    if not out:  # counts are worth reading only from files that match their checksums
        for problem in check_counts(root, manifest):
            if say(problem, "the bundle is damaged or its manifest is wrong: reinstall or rebuild it"):
                break
    return manifest, out


def _entries(root: Path) -> list[str]:
    """Every entry under ``root`` but the manifest and directories (a symbolic link to a directory
    counts: it is not a directory of the bundle), as sorted ``/``-separated relative paths."""
    out = []
    for dirpath, dirnames, names in os.walk(root):
        links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        dirnames[:] = [d for d in dirnames if d not in links]
        for n in names + links:
            rel = Path(dirpath, n).relative_to(root).as_posix()
            if rel != MANIFEST:
                out.append(rel)
    return sorted(out)


def check_counts(root: Path, manifest: Manifest) -> list[str]:
    """Where a table disagrees with the manifest's document ``count`` (one phrase each): the rows of
    the metadata (and of its Arrow copy), the float vectors and their scales (and their ``dims``),
    the binary index, the BM25 index's documents and the dependency graph, for the files listed."""
    import numpy as np

    files, n = manifest.files, manifest.count
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        return [f"manifest count {n!r} is not a number of documents"]
    dims = (manifest.vectors or {}).get("dims")
    found: dict[str, object] = {}

    def measure(rel: str, how) -> None:
        if rel in files:
            try:
                found[rel] = how(root / rel)
            except Exception as e:  # each reader raises its own types; any of them means unreadable
                found[rel] = f"unreadable ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"

    def arrow_rows(path: Path) -> int:
        import pyarrow as pa

        with pa.memory_map(str(path)) as f:
            return pa.ipc.open_file(f).count_rows()

    def parquet_rows(path: Path) -> int:
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).metadata.num_rows

    def npy_shape(path: Path) -> tuple:
        return tuple(np.load(path, mmap_mode="r").shape)

    def usearch_rows(path: Path) -> int:
        meta = usearch_index_class().metadata(str(path))
        if meta is None:
            raise ValueError("not a usearch index")
        return int(meta["count_present"])

    def bm25_docs(path: Path) -> int:
        segments = json.loads(path.read_text(encoding="utf-8"))["segments"]
        return sum(int(s["max_doc"]) - int((s.get("deletes") or {}).get("num_deleted_docs", 0)) for s in segments)

    def graph_rows(path: Path) -> int:
        with np.load(path) as z:
            sizes = {len(z[k]) - 1 for k in z.files if k.endswith("_indptr")}
        if len(sizes) != 1:
            raise ValueError("indptr arrays disagree")
        return sizes.pop()

    measure(META, parquet_rows)
    measure(META_ARROW, arrow_rows)
    measure(FLOAT_VECTORS, npy_shape)
    measure(FLOAT_SCALES, npy_shape)
    measure(BINARY_INDEX, usearch_rows)
    measure(BM25_DIR + "/meta.json", bm25_docs)
    measure(GRAPH, graph_rows)
    want: dict[str, object] = {META: n, META_ARROW: n, BINARY_INDEX: n, BM25_DIR + "/meta.json": n, GRAPH: n,
                               FLOAT_VECTORS: (n, dims) if isinstance(dims, int) else None, FLOAT_SCALES: (n,)}
    out = []
    for rel, got in found.items():
        expected = want[rel]
        if isinstance(got, str):
            out.append(f"{rel} is {got}")
        elif expected is None:
            if not (isinstance(got, tuple) and got[:1] == (n,)):
                out.append(f"{rel} has shape {got}, the manifest counts {n:,} documents")
        elif got != expected:
            what = f"shape {got}" if isinstance(got, tuple) else f"{got:,} documents"
            says = f"shape {expected}" if isinstance(expected, tuple) else f"{expected:,}"
            out.append(f"{rel} holds {what}, the manifest says {says}")
    return out
