"""The findings store: results an agent found on the web, kept beside the bundles and searchable at once.

Files, under ``data_dir()/findings/``::

    findings.jsonl          one finding per line (JSON object, UTF-8, ``\\n``-terminated), append-only
    findings.vectors.npz    optional dense vectors: arrays ``ids`` (str), ``vectors`` (float32, one row
                            per id) and ``encoder`` (the encoder's fingerprint); replaced by one rename
    .lock                   held by every writer (append, remove, vectors; ``filelock``), so writers take turns

A finding line::

    {"id": "finding:<16 hex>", "statement": ..., "source_url": "https://...", "name": ..., "slogan": ...,
     "added": "2025-01-31T12:00:00Z", "provenance": "web_added"}

The id is the first 16 hex digits of the sha256 of the normalised statement (NFC, whitespace
collapsed), so the same statement is stored once whatever its URL or spacing.

Crash and concurrency design:

* A writer holds ``.lock`` (exclusive), then writes one whole line with a single
  ``os.write`` on an ``O_APPEND`` descriptor and ``fsync``s it. Readers take no lock.
* A crash mid-write can leave a *torn* last line (no newline, or bad JSON). Readers skip it with a
  logged warning and keep every earlier line; the next writer sees the missing newline under the
  lock and starts its line on a fresh one, so the torn fragment stays an isolated bad line that
  readers skip (``remove`` drops such lines when it rewrites the file).
* ``remove`` rewrites the file under the lock: temp file, fsync, rename, fsync of the directory.
* The vectors live in one ``.npz`` (not an ``.npy`` plus an ids file) because two files cannot be
  replaced together atomically: a reader must never pair new rows with old ids.

Reads are cached per version of the file, and a version is named by something a rename cannot
fake. ``remove`` replaces the file, and a filesystem may give the next temp file the inode number the
old file had, so "same inode, not smaller" does not mean "appended". The reader therefore (1) keeps
the parsed file's descriptor open (POSIX), so its inode number cannot be handed to another file while
the cache names it, and (2) keeps the sha256 of the bytes it parsed and, when the file has changed,
parses only the new tail if the file still starts with exactly those bytes, and the whole file
otherwise (a rewrite in place, by an editor or ``>``, keeps the inode). Searching is
``mathlas.findings.search``'s.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import unicodedata
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Iterator
from urllib.parse import urlparse

from mathlas.atomic import atomic_write
from mathlas.errors import MathlasError, UsageError

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import numpy as np

FINDINGS_DIR = "findings"
STORE = "findings.jsonl"
VECTORS = "findings.vectors.npz"
LOCK_FILE = ".lock"
PROVENANCE = "web_added"
ID_PREFIX = "finding:"
MAX_STATEMENT_CHARS = 20_000
MAX_FIELD_CHARS = 500        # name and slogan
MAX_URL_CHARS = 2_000


@dataclass
class Finding:
    """One stored finding (a line of ``findings.jsonl``)."""

    id: str
    statement: str
    source_url: str
    name: str
    slogan: str
    added: str
    provenance: str = PROVENANCE

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> Finding:
        if not isinstance(d, dict) or not str(d.get("id", "")).startswith(ID_PREFIX) or not isinstance(d.get("statement"), str):
            raise ValueError("not a finding")
        return cls(id=d["id"], statement=d["statement"], source_url=str(d.get("source_url") or ""),
                   name=str(d.get("name") or ""), slogan=str(d.get("slogan") or ""),
                   added=str(d.get("added") or ""), provenance=str(d.get("provenance") or PROVENANCE))

    @property
    def search_text(self) -> str:
        return " ".join(p for p in (self.name, self.slogan, self.statement) if p)


# ------------------------------------------------------------------------------ normalisation

def normalise_statement(statement: str) -> str:
    """The statement as hashed: Unicode NFC, runs of whitespace collapsed to one space, stripped."""
    return " ".join(unicodedata.normalize("NFC", statement).split())


def finding_id(statement: str) -> str:
    """``finding:`` + the first 16 hex digits of the sha256 of the normalised statement."""
    return ID_PREFIX + hashlib.sha256(normalise_statement(statement).encode("utf-8")).hexdigest()[:16]


def _optional(value, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise UsageError(f"{what} must be text, got {type(value).__name__}")
    value = " ".join(value.split())
    if len(value) > MAX_FIELD_CHARS:
        raise UsageError(f"{what} is {len(value):,} characters; keep it under {MAX_FIELD_CHARS}")
    return value


def validate(statement, source_url, name=None, slogan=None) -> tuple[str, str, str, str]:
    """Checked and tidied ``(statement, source_url, name, slogan)``; ``UsageError`` on bad input."""
    if not isinstance(statement, str) or not statement.strip():
        raise UsageError("the statement is empty; pass the result's statement as text (LaTeX welcome)")
    statement = statement.strip()
    if len(statement) > MAX_STATEMENT_CHARS:
        raise UsageError(f"the statement is {len(statement):,} characters; the limit is {MAX_STATEMENT_CHARS:,}")
    if not isinstance(source_url, str) or not source_url.strip():
        raise UsageError("source_url is required: the http(s) address where the result was found")
    source_url = source_url.strip()
    like = f"source_url must be an http(s) URL like https://arxiv.org/abs/2101.00001, got {source_url[:200]!r}"
    try:
        parsed = urlparse(source_url)  # ValueError for a bracket left open (http://[::1/x) or no IP inside
    except ValueError:
        raise UsageError(f"{like}; correct its host (an IPv6 address goes whole in brackets: "
                         "http://[2001:db8::1]/paper)") from None
    if (parsed.scheme.lower() not in ("http", "https") or not parsed.hostname or len(source_url) > MAX_URL_CHARS
            or any(c.isspace() for c in source_url)):
        raise UsageError(like)
    try:
        port = parsed.port  # ValueError for a port that is no number or past 65535
    except ValueError:
        port = 0
    if port == 0:
        raise UsageError(f"source_url's port must be a number from 1 to 65535, got {source_url[:200]!r}; "
                         "correct it or leave it out (https://host/path)")
    return statement, source_url, _optional(name, "name"), _optional(slogan, "slogan")


def _warn(message: str) -> None:
    log.warning("mathlas: findings: %s", message)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------ the store

class _OpenFile:
    """A descriptor kept open while a snapshot names its file: an inode in use cannot be reused, so
    a later file with the same (device, inode) is this very file. Closed when the snapshot goes."""

    def __init__(self, fd: int):
        self.fd = fd

    def __del__(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


@dataclass
class _Snapshot:
    key: tuple            # (dev, ino, size, mtime_ns) of the parsed version
    clean_end: int        # byte offset after the last newline
    digest: bytes         # sha256 of the bytes before clean_end
    findings: list[Finding]
    by_id: dict[str, Finding]
    derived: dict = field(default_factory=dict)  # what search builds from this snapshot (its BM25 index)
    held: _OpenFile | None = None                 # the parsed file, kept open (POSIX)


_EMPTY_DIGEST = hashlib.sha256(b"").digest()
# Windows cannot replace a file another handle holds open, and remove() must replace it there too
_HOLD_OPEN = os.name != "nt"


class FindingsStore:
    """The findings of one data directory. Cheap to make; reads are cached on the file's stat."""

    def __init__(self, root: str | os.PathLike | None = None):
        if root is None:
            from mathlas.paths import data_dir

            root = data_dir() / FINDINGS_DIR
        self.root = Path(root)
        self.path = self.root / STORE
        self.vectors_path = self.root / VECTORS
        self._snap: _Snapshot | None = None
        self._vec_cache: tuple | None = None
        self._mutex = threading.Lock()
        self._warned: set[tuple] = set()

    # -- locking -------------------------------------------------------------------------
    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the writers' lock (``.lock``, an exclusive ``filelock``; POSIX and Windows)."""
        from filelock import FileLock

        try:
            self.root.mkdir(parents=True, exist_ok=True)
            lock = FileLock(self.root / LOCK_FILE, thread_local=False)
            lock.acquire()
        except OSError as e:
            raise MathlasError(f"cannot write the findings store in {self.root}: {e}; "
                               "set MATHLAS_DATA_DIR to a writable directory") from None
        try:
            yield
        finally:
            lock.release()

    # -- reading -------------------------------------------------------------------------
    def _parse(self, data: bytes, base: int, ino_key: tuple, findings: list[Finding],
               by_id: dict[str, Finding]) -> int:
        """Append the good lines of ``data`` (which starts at file offset ``base``); returns the
        offset after the last newline. Bad or torn lines are skipped with a warning (once each)."""
        pos = 0
        while pos < len(data):
            nl = data.find(b"\n", pos)
            end = len(data) if nl < 0 else nl
            line = data[pos:end]
            if line.strip():
                try:
                    f = Finding.from_json(json.loads(line))
                except (ValueError, UnicodeDecodeError):
                    f = None
                    where = (ino_key, base + pos)
                    if where not in self._warned:
                        self._warned.add(where)
                        what = "an incomplete last line (a crash, or a write in progress)" if nl < 0 else "a damaged line"
                        _warn(f"skipped {what} at byte {base + pos} of {self.path}; earlier findings are intact")
                if f is not None and f.id not in by_id:
                    findings.append(f)
                    by_id[f.id] = f
            if nl < 0:
                break
            pos = nl + 1
        return base + (data.rfind(b"\n") + 1 if b"\n" in data else 0)

    def _snapshot(self) -> _Snapshot:
        with self._mutex:
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                if self._snap is None or self._snap.key != (None,):
                    self._snap = _Snapshot((None,), 0, _EMPTY_DIGEST, [], {})
                return self._snap
            except OSError as e:
                raise MathlasError(f"cannot read {self.path}: {e}") from None
            old = self._snap
            if old is not None and old.key == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) and \
                    (old.held is not None or not _HOLD_OPEN):
                return old  # the held descriptor keeps the inode ours: the same file, unchanged
            try:
                fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            except FileNotFoundError:  # removed between stat and open: read as missing next time
                self._snap = None
                return self._snapshot()
            except OSError as e:
                raise MathlasError(f"cannot read {self.path}: {e}") from None
            held = _OpenFile(fd)
            st = os.fstat(fd)  # the file we read, not the one stat saw
            key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            with open(fd, "rb", closefd=False) as fh:
                data = fh.read()
            ino_key = key[:2]
            prefix = hashlib.sha256(data[:old.clean_end]) if old is not None and len(data) >= old.clean_end else None
            if prefix is not None and prefix.digest() == old.digest:
                # the file still starts with the bytes parsed last time (appends only): parse the tail
                findings, by_id = list(old.findings), dict(old.by_id)
                clean_end = self._parse(data[old.clean_end:], old.clean_end, ino_key, findings, by_id)
                prefix.update(data[old.clean_end:clean_end])
            else:  # a new file, or one rewritten (remove, an editor): parse it all
                findings, by_id = [], {}
                clean_end = self._parse(data, 0, ino_key, findings, by_id)
                prefix = hashlib.sha256(data[:clean_end])
            self._snap = _Snapshot(key, clean_end, prefix.digest(), findings, by_id,
                                   held=held if _HOLD_OPEN else None)
            if not _HOLD_OPEN:
                del held  # closes it
            return self._snap

    def all(self) -> list[Finding]:
        """Every readable finding, oldest first."""
        return list(self._snapshot().findings)

    def __len__(self) -> int:
        return len(self._snapshot().findings)

    def get(self, fid: str) -> Finding:
        """The finding with this id (``UsageError`` when absent)."""
        f = self._snapshot().by_id.get(fid.strip() if isinstance(fid, str) else fid)
        if f is None:  # no path in the message: it reaches HTTP clients (mathlas serve)
            raise UsageError(f"no finding with id {fid!r}; `mathlas findings list` shows them")
        return f

    # -- writing -------------------------------------------------------------------------
    def add(self, statement: str, source_url: str, name: str | None = None,
            slogan: str | None = None) -> tuple[Finding, bool]:
        """Store a finding; returns ``(finding, added)``. A statement already stored (same id) is
        not stored again: the stored finding comes back with ``added=False``."""
        statement, source_url, name, slogan = validate(statement, source_url, name, slogan)
        fid = finding_id(statement)
        with self.lock():
            known = self._snapshot().by_id.get(fid)
            if known is not None:
                return known, False
            f = Finding(id=fid, statement=statement, source_url=source_url, name=name, slogan=slogan,
                        added=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
            line = json.dumps(f.to_json(), ensure_ascii=False).encode("utf-8") + b"\n"
            created = not self.path.exists()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                size = os.fstat(fd).st_size
                if size and not self._ends_with_newline(size):
                    line = b"\n" + line  # a torn line from a crash: start ours on a fresh line
                written = 0
                while written < len(line):  # one write in practice; loop only on a short write
                    written += os.write(fd, line[written:])
                os.fsync(fd)
            finally:
                os.close(fd)
            if created:
                _fsync_dir(self.root)
        return f, True

    def _ends_with_newline(self, size: int) -> bool:
        with open(self.path, "rb") as fh:
            fh.seek(size - 1)
            return fh.read(1) == b"\n"

    def remove(self, fid: str) -> Finding:
        """Delete a finding (and its vector): rewrite the file under the lock, atomically. Damaged
        lines are dropped by the rewrite. ``UsageError`` when the id is not stored."""
        if not isinstance(fid, str) or not fid.strip():
            raise UsageError("a finding id is required, e.g. finding:0123456789abcdef")
        fid = fid.strip()
        with self.lock():
            snap = self._snapshot()
            gone = snap.by_id.get(fid)
            if gone is None:
                raise UsageError(f"no finding with id {fid!r} in the findings store; `mathlas findings list` shows them")
            keep = [f for f in snap.findings if f.id != fid]
            data = b"".join(json.dumps(f.to_json(), ensure_ascii=False).encode("utf-8") + b"\n" for f in keep)
            self._replace(self.path, data)
            vec = self._read_vectors()
            if vec is not None and fid in vec[0]:
                ids, mat, enc = vec
                rows = [i for i, x in enumerate(ids) if x != fid]
                self._write_vectors([ids[i] for i in rows], mat[rows], enc)
        return gone

    def _replace(self, target: Path, data: bytes) -> None:
        atomic_write(target, data, fsync=True, prefix=".tmp-", suffix="")
        _fsync_dir(self.root)

    # -- vectors -------------------------------------------------------------------------
    def _read_vectors(self) -> tuple[list[str], np.ndarray, str] | None:
        import numpy as np

        try:
            st = os.stat(self.vectors_path)
        except FileNotFoundError:
            return None
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        if self._vec_cache is not None and self._vec_cache[0] == key:
            return self._vec_cache[1]
        try:
            with np.load(self.vectors_path, allow_pickle=False) as z:
                ids, mat, enc = [str(x) for x in z["ids"]], np.asarray(z["vectors"], dtype=np.float32), str(z["encoder"])
            if mat.ndim != 2 or len(ids) != len(mat):
                raise ValueError("ids and vectors differ in length")
        except Exception as e:  # noqa: BLE001 - a bad sidecar only costs the dense ranking
            _warn(f"ignoring {self.vectors_path} ({e}); `mathlas findings reindex` rebuilds it")
            return None
        value = (ids, mat, enc)
        self._vec_cache = (key, value)
        return value

    def _write_vectors(self, ids: list[str], mat: np.ndarray, encoder: str) -> None:
        import io

        import numpy as np

        buf = io.BytesIO()
        np.savez(buf, ids=np.array(ids, dtype=str), vectors=np.asarray(mat, dtype=np.float32),
                 encoder=np.array(encoder))
        self._replace(self.vectors_path, buf.getvalue())

    def vectors(self) -> tuple[list[str], np.ndarray, str] | None:
        """``(ids, vectors, encoder fingerprint)`` of the stored vectors, or None when there are none."""
        return self._read_vectors()

    def missing_vectors(self, encoder: str) -> list[Finding]:
        """Findings that have no vector from this encoder."""
        vec = self._read_vectors()
        have = set(vec[0]) if vec is not None and vec[2] == encoder else set()
        return [f for f in self.all() if f.id not in have]

    def embed(self, bundle: Any, findings: list[Finding] | None = None, *,
              batch_size: int = 32) -> int:
        """Embed findings with ``bundle``'s encoder and store their vectors (all findings lacking a
        vector from that encoder when ``findings`` is None; ``bundle``: an open ``mathlas.engine.Bundle``,
        read for its ``encoder`` and ``encoder_fingerprint`` only). Vectors from another encoder are
        replaced. Returns how many were embedded."""
        import numpy as np

        enc = bundle.encoder_fingerprint
        todo = self.missing_vectors(enc) if findings is None else findings
        if not todo:
            return 0
        new = bundle.encoder.encode_documents([f.search_text for f in todo], batch_size=batch_size)
        with self.lock():
            live = set(self._snapshot().by_id)
            vec = self._read_vectors()
            ids, mat = ([], np.zeros((0, new.shape[1]), np.float32)) if vec is None or vec[2] != enc else vec[:2]
            have = set(ids)
            rows = [i for i, f in enumerate(todo) if f.id in live and f.id not in have]
            if not rows:
                return 0
            keep = [i for i, x in enumerate(ids) if x in live]  # drop vectors of removed findings
            self._write_vectors([ids[i] for i in keep] + [todo[i].id for i in rows],
                                np.concatenate([mat[keep], new[rows]]), enc)
        return len(rows)


# ------------------------------------------------------------------------------ shared stores

_STORES: dict[str, FindingsStore] = {}
_STORES_LOCK = threading.Lock()


def open_store(root: str | os.PathLike | None = None) -> FindingsStore:
    """The process-wide store for ``root`` (default: ``data_dir()/findings``, read at each call so
    ``MATHLAS_DATA_DIR`` changes are honoured), sharing its read cache between calls."""
    if root is None:
        from mathlas.paths import data_dir

        root = data_dir() / FINDINGS_DIR
    key = str(Path(root).expanduser().absolute())
    with _STORES_LOCK:
        s = _STORES.get(key)
        if s is None:
            s = _STORES[key] = FindingsStore(key)
        return s
