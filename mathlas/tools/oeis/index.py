"""The on-disk OEIS index: its format, building it from ``stripped.gz`` + ``names.gz``, and lookups.

The OEIS bulk files (https://oeis.org/stripped.gz, https://oeis.org/names.gz) both open with ``#``
comment lines; then one sequence per line, in A-number order::

    A000045 ,0,1,1,2,3,5,8,13,...,          (stripped: the terms, canonical decimal, comma-wrapped)
    A000045 Fibonacci numbers: F(n) = ...    (names)

The index is one directory of flat files, memory-mapped when read, never a Python dict of terms::

    index-v1/
        anum.npy       int32[n]      A-number of sequence i (file order = A-number order)
        term_off.npy   uint64[n+1]   sequence i owns global terms term_off[i] .. term_off[i+1]-1
        blob_off.npy   uint64[n+1]   sequence i's terms are terms.bin[blob_off[i]:blob_off[i+1]]
        terms.bin      bytes         each sequence's terms as written in stripped.gz: "0,1,1,2"
        name_off.npy   uint64[n+1]   sequence i's name is names.bin[name_off[i]:name_off[i+1]]
        names.bin      bytes         UTF-8 names
        pair_hash.npy  uint32[p]     hash of each pair of consecutive terms, sorted
        pair_pos.npy   uint32[p]     global index of the pair's first term, ascending within a hash
        stamp.json     written last: index version, and size + mtime + sha256 of both data files

A lookup hashes every consecutive pair of the query, counts each pair's postings (binary search),
starts from the rarest pair's postings (candidate start = posting - pair position), intersects
with the next rarest pairs while many candidates remain, and then verifies each candidate against
the stored terms as exact Python ints, in A-number order, stopping after the requested number of
sequences. A hash collision therefore costs one verification, never a wrong match. Term values
enter the hash as ``int(term) mod (2**61 - 1)``, so arbitrarily large terms hash like small ones.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterator

import numpy as np

from mathlas.errors import MathlasError

INDEX_VERSION = 1
INDEX_DIR = f"index-v{INDEX_VERSION}"
STRIPPED = "stripped.gz"
NAMES = "names.gz"
STAMP = "stamp.json"
_ARRAYS = ("anum", "term_off", "blob_off", "name_off", "pair_hash", "pair_pos")

_P = (1 << 61) - 1  # term values enter the hash modulo this Mersenne prime
_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_K1 = np.uint64(0xBF58476D1CE4E5B9)
_K2 = np.uint64(0x94D049BB133111EB)
_K3 = np.uint64(0x9E3779B97F4A7C15)
_LINE = re.compile(rb"A(\d+)\s(.*)")
_CHUNK_LINES = 20000
# Intersect candidate lists while more than this many remain; then verify the rest one by one.
_VERIFY_DIRECT = 32
_BLOCK = 1024


class OeisDataError(MathlasError):
    """The OEIS files are not in the official format (or are damaged)."""


# ------------------------------------------------------------------------------ hashing

def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 arrays (wrapping arithmetic)."""
    x = (x ^ (x >> np.uint64(30))) * _K1
    x = (x ^ (x >> np.uint64(27))) * _K2
    return x ^ (x >> np.uint64(31))


def term_values(terms: list[int]) -> np.ndarray:
    """Each term modulo 2**61-1 as uint64: the input of the pair hash."""
    return np.array([t % _P for t in terms], dtype=np.uint64)


def pair_hashes(values: np.ndarray) -> np.ndarray:
    """uint32 hash of (values[i], values[i+1]) for every i."""
    with np.errstate(over="ignore"):
        h = _mix(_mix(values[:-1] + _K3) ^ (values[1:] * _K1))
    return (h >> np.uint64(32)).astype(np.uint32)


def _value(tok: bytes) -> int:
    try:
        return int(tok) % _P
    except ValueError:  # beyond Python's int/str digit limit, or junk: a stable hash still works
        return int.from_bytes(hashlib.blake2b(tok, digest_size=8).digest(), "little") % _P


# ------------------------------------------------------------------------------ data files

def file_stamp(path: Path) -> dict:
    """Size, mtime and sha256 of a data file, as the index's stamp records it."""
    st = path.stat()
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": h.hexdigest()}


def iter_lines(path: Path, what: str) -> Iterator[tuple[int, bytes]]:
    """(A-number, rest of line) for each data line of an OEIS bulk file; ``#`` lines skipped.

    Raises ``OeisDataError`` on a line that is not ``A<digits> <text>`` or on a damaged gzip stream.
    """
    try:
        with gzip.open(path, "rb") as f:
            for lineno, line in enumerate(f, start=1):
                if line.startswith(b"#") or not line.strip():
                    continue
                m = _LINE.fullmatch(line.rstrip(b"\r\n"))
                if m is None:
                    raise OeisDataError(f"{path}: line {lineno} is not an OEIS {what} line "
                                        f"(expected 'A000045 ...'): {line[:60]!r}")
                yield int(m.group(1)), m.group(2)
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise OeisDataError(f"{path}: not a complete gzip file ({e})") from None


def split_terms(rest: bytes) -> list[bytes]:
    """The term strings of a stripped.gz line's data part ``,0,1,1,2,``."""
    rest = rest.strip().strip(b",")
    return rest.split(b",") if rest else []


# ------------------------------------------------------------------------------ build

def build(data_dir: Path, out: Path, *, talk=lambda msg: None) -> dict:
    """Build the index of ``data_dir``'s stripped.gz (+ names.gz) into the new directory ``out``.

    ``stamp.json`` is written last; returns its content (with build statistics).
    """
    t0 = time.perf_counter()
    stripped, names = data_dir / STRIPPED, data_dir / NAMES
    stamp = {"index_version": INDEX_VERSION, STRIPPED: file_stamp(stripped),
             NAMES: file_stamp(names) if names.is_file() else None}
    out.mkdir(parents=True, exist_ok=True)
    os.chmod(out, 0o755)  # mkdtemp made it private; the index is as readable as the data
    anums: list[int] = []
    term_off = [0]
    blob_off = [0]
    hashes: list[np.ndarray] = []
    positions: list[np.ndarray] = []
    vals: list[int] = []
    firsts: list[int] = []  # global index of each chunk sequence's first term
    total = 0
    last = -1

    def flush() -> None:
        if not vals:
            return
        v = np.array(vals, dtype=np.uint64)
        h = pair_hashes(v) if len(v) > 1 else np.empty(0, np.uint32)
        base = firsts[0]
        pos = np.arange(base, base + len(v) - 1, dtype=np.uint64)
        # a pair must not straddle two sequences: drop pairs that start at a sequence's last term
        starts = np.array(firsts[1:], dtype=np.uint64)
        keep = np.ones(len(h), dtype=bool)
        keep[(starts - np.uint64(base + 1)).astype(np.int64)] = False
        hashes.append(h[keep])
        positions.append(pos[keep].astype(np.uint32))
        vals.clear()
        firsts.clear()

    talk(f"[oeis] indexing {stripped} ...")
    with open(out / "terms.bin", "wb") as blob:
        for a, rest in iter_lines(stripped, "stripped"):
            if a <= last:
                raise OeisDataError(f"{stripped}: A{a:06d} follows A{last:06d}: the file is not in A-number order")
            last = a
            toks = split_terms(rest)
            data = b",".join(toks)
            blob.write(data)
            anums.append(a)
            blob_off.append(blob_off[-1] + len(data))
            if toks:
                if total > 0xFFFFFFFF - len(toks):
                    raise OeisDataError(f"{stripped}: more than 2**32 terms; this index format cannot hold them")
                firsts.append(total)
                vals.extend(_value(t) for t in toks)
                total += len(toks)
            term_off.append(total)
            if len(firsts) >= _CHUNK_LINES:
                flush()
        flush()
    if not anums:
        raise OeisDataError(f"{stripped}: no sequences in it")
    anum = np.array(anums, dtype=np.int32)
    np.save(out / "anum.npy", anum)
    np.save(out / "term_off.npy", np.array(term_off, dtype=np.uint64))
    np.save(out / "blob_off.npy", np.array(blob_off, dtype=np.uint64))
    del anums, term_off, blob_off

    h = np.concatenate(hashes) if hashes else np.empty(0, np.uint32)
    p = np.concatenate(positions) if positions else np.empty(0, np.uint32)
    hashes.clear()  # the chunks' arrays: only the concatenation is needed from here on
    positions.clear()
    order = np.argsort(h, kind="stable")  # stable: postings stay in A-number order within a hash
    np.save(out / "pair_hash.npy", h[order])
    np.save(out / "pair_pos.npy", p[order])
    del h, p, order

    _build_names(names, anum, out, talk)
    stamp.update(sequences=int(len(anum)), terms=int(total),
                 pairs=int(np.load(out / "pair_hash.npy", mmap_mode="r").shape[0]),
                 build_seconds=round(time.perf_counter() - t0, 2),
                 bytes=sum(f.stat().st_size for f in out.iterdir()))
    with open(out / STAMP, "w", encoding="utf-8") as f:
        json.dump(stamp, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    talk(f"[oeis] indexed {len(anum):,} sequences, {total:,} terms in {stamp['build_seconds']} s "
         f"({stamp['bytes'] / 1e6:.1f} MB)")
    return stamp


def _build_names(names: Path, anum: np.ndarray, out: Path, talk) -> None:
    n = len(anum)
    by_seq: list[bytes] = [b""] * n
    if names.is_file():
        i = 0
        for a, text in iter_lines(names, "names"):
            # both files are in A-number order: walk them together, binary search when they disagree
            if i >= n or anum[i] != a:
                i = int(np.searchsorted(anum, a))
                if i >= n or anum[i] != a:
                    continue  # a name without terms
            by_seq[i] = text.strip()
            i += 1
    else:
        talk(f"[oeis] no {names}: sequences will have no names")
    off = np.zeros(n + 1, dtype=np.uint64)
    off[1:] = np.cumsum([len(b) for b in by_seq], dtype=np.uint64)
    with open(out / "names.bin", "wb") as f:
        f.write(b"".join(by_seq))
    np.save(out / "name_off.npy", off)


# ------------------------------------------------------------------------------ read

@dataclass
class Hit:
    """One verified occurrence: sequence ``seq`` holds the query from term ``offset`` on."""

    seq: int
    offset: int


class OeisIndex:
    """A built index, memory-mapped. ``find`` returns verified hits in A-number order."""

    def __init__(self, root: Path):
        self.root = root
        self.stamp = json.loads((root / STAMP).read_text(encoding="utf-8"))
        for name in _ARRAYS:
            setattr(self, name, np.load(root / f"{name}.npy", mmap_mode="r"))
        self.terms_blob = _mmap_bytes(root / "terms.bin")
        self.names_blob = _mmap_bytes(root / "names.bin")

    def __len__(self) -> int:
        return len(self.anum)

    def terms(self, seq: int) -> list[bytes]:
        """The stored term strings of sequence ``seq``."""
        raw = self.terms_blob[int(self.blob_off[seq]):int(self.blob_off[seq + 1])]
        return bytes(raw).split(b",") if len(raw) else []

    def name(self, seq: int) -> str:
        """The name of sequence ``seq`` ("" when names.gz had none)."""
        raw = self.names_blob[int(self.name_off[seq]):int(self.name_off[seq + 1])]
        return bytes(raw).decode("utf-8", "replace")

    def find(self, query: list[int], limit: int) -> tuple[list[Hit], bool]:
        """Sequences holding ``query`` (>= 2 terms) contiguously, the first ``limit`` by A-number,
        each at its first offset; and whether more sequences match."""
        ph = pair_hashes(term_values(query))
        lo = np.searchsorted(self.pair_hash, ph, side="left")
        hi = np.searchsorted(self.pair_hash, ph, side="right")
        counts = hi - lo
        if counts.min() == 0:
            return [], False
        order = np.argsort(counts, kind="stable")
        j0 = int(order[0])
        # candidate start of the match, as a global term index (can be negative before intersection)
        cand = self.pair_pos[lo[j0]:hi[j0]].astype(np.int64) - j0
        for j in order[1:]:
            if len(cand) <= _VERIFY_DIRECT:
                break
            j = int(j)
            other = self.pair_pos[lo[j]:hi[j]].astype(np.int64) - j
            cand = cand[np.isin(cand, other, assume_unique=True)]
        hits: list[Hit] = []
        seen: set[int] = set()
        want = [str(t).encode() for t in query]
        n = len(query)
        for g, s in self._located(cand, j0):
            if s in seen:
                continue
            first = int(self.term_off[s])
            off = g - first
            if off < 0 or off + n > int(self.term_off[s + 1]) - first:
                continue
            toks = self.terms(s)[off:off + n]
            if toks != want and to_ints(toks) != query:
                continue
            if len(hits) == limit:
                return hits, True
            seen.add(s)
            hits.append(Hit(s, off))
        return hits, False

    def _located(self, cand: np.ndarray, j0: int) -> Iterator[tuple[int, int]]:
        """(candidate start, sequence) pairs in A-number order, located a block at a time: a
        common query stops verifying long before the end of a posting list of a million."""
        for i in range(0, len(cand), _BLOCK):
            block = cand[i:i + _BLOCK]
            # the rarest pair's posting names the sequence; the start must then lie inside it
            seqs = np.searchsorted(self.term_off, (block + j0).astype(np.uint64), side="right") - 1
            yield from zip(block.tolist(), seqs.tolist())


def to_ints(toks: list[bytes]) -> list[int] | None:
    """Stored term strings as ints; None if one is not a decimal integer Python can read."""
    try:
        return [int(t) for t in toks]
    except ValueError:
        return None


def _mmap_bytes(path: Path):
    if path.stat().st_size == 0:
        return b""
    return np.memmap(path, dtype=np.uint8, mode="r")


# ------------------------------------------------------------------------------ build-or-open

def stamp_matches(index_dir: Path, data_dir: Path) -> bool:
    """Whether ``index_dir`` is a complete index of the current files in ``data_dir``."""
    try:
        stamp = json.loads((index_dir / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if stamp.get("index_version") != INDEX_VERSION:
        return False
    for name in (STRIPPED, NAMES):
        path = data_dir / name
        rec = stamp.get(name)
        if not path.is_file():
            if rec is not None:
                return False
            continue
        if rec is None:
            return False
        st = path.stat()
        if st.st_size != rec.get("size"):
            return False
        if st.st_mtime_ns != rec.get("mtime_ns") and file_stamp(path)["sha256"] != rec.get("sha256"):
            return False
    return True


def data_signature(data_dir: Path) -> tuple:
    """A cheap (stat-based) signature of the data files, to notice they changed under an open index."""
    sig = []
    for name in (STRIPPED, NAMES):
        try:
            st = (data_dir / name).stat()
            sig.append((st.st_size, st.st_mtime_ns, st.st_ino))
        except OSError:
            sig.append(None)
    return tuple(sig)


def staging_dir(parent: Path, prefix: str) -> Path:
    """A fresh temporary directory beside the final one."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
