"""Release archives: fetching them and unpacking them safely.

Fetching: a source is a local path, a ``file://`` URL or an ``http(s)://`` URL. Downloads go into a
``.part`` file that survives interruptions; the next attempt (in the same run, or a later one)
asks the server for the missing bytes with an HTTP ``Range`` request and appends them. A server
that ignores ``Range`` answers with the whole file, which simply starts the ``.part`` over.
Whether the bytes are right is the caller's sha256 check (``mathlas.releases.download``), which discards
a ``.part`` that does not match.

Unpacking: a ``.tar.zst`` holding one top-level directory. Only regular files and directories
inside that directory are accepted; absolute paths, ``..``, links and devices are refused, and a
stream cut short is an error (zstandard's ``stream_reader`` would silently stop).
"""
from __future__ import annotations

import http.client
import os
import re
import shutil
import sys
import tarfile
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO, Any, Iterator

import zstandard

from mathlas.errors import InstallError
from mathlas.releases.staging import talk

URL_SCHEMES = ("http", "https", "file")
ATTEMPTS = 4  # tries per download while each one makes progress; every retry resumes
TIMEOUT_S = 60
_CHUNK = 1 << 16
_BAR_MIN_BYTES = 8 << 20
_CONTENT_RANGE = re.compile(r"bytes\s+(?:(\d+)-(\d+)|\*)/(\d+|\*)")


# --------------------------------------------------------------------------------------- fetching

def is_url(text: str) -> bool:
    """True for ``scheme://...`` with a scheme of two letters or more (``C:\\x`` is a path)."""
    return "://" in text and len(urllib.parse.urlsplit(text).scheme) > 1


def parse_source(source: str | os.PathLike) -> tuple[str | None, Path | None]:
    """(url, None) for http(s) sources, (None, path) for local paths and ``file://`` URLs."""
    if isinstance(source, os.PathLike):
        return None, Path(source).expanduser()
    text = str(source).strip()
    if is_url(text):
        parts = urllib.parse.urlsplit(text)
        scheme = parts.scheme.lower()
        if scheme not in URL_SCHEMES:
            raise InstallError(f"cannot fetch {text}: only http, https, file URLs and local paths are supported")
        if scheme == "file":
            if parts.netloc not in ("", "localhost"):
                raise InstallError(f"cannot fetch {text}: file URLs must name a local file (file:///path)")
            return None, Path(urllib.request.url2pathname(parts.path))
        return text, None
    return None, Path(text).expanduser()


def fetch_small(location: str | os.PathLike, limit: int) -> bytes:
    """The bytes of a small file (a checksum, a catalog) at a path or URL; at most ``limit``.

    Raises ``FileNotFoundError`` for a missing file or an HTTP 404, ``InstallError`` otherwise."""
    url, local = parse_source(location)
    try:
        if url is None:
            assert local is not None
            with open(local, "rb") as f:
                data = f.read(limit + 1)
        else:
            with urllib.request.urlopen(url, timeout=TIMEOUT_S) as r:
                data = r.read(limit + 1)
    except urllib.error.HTTPError as e:
        if e.code == 404:
            raise FileNotFoundError(str(location)) from None
        raise InstallError(f"could not fetch {location}: HTTP {e.code} {e.reason}") from None
    except FileNotFoundError:
        raise
    except (OSError, http.client.HTTPException) as e:
        raise InstallError(f"could not fetch {location}: {e}") from None
    if len(data) > limit:
        raise InstallError(f"{location} is larger than {limit:,} bytes: not what mathlas expected there")
    return data


def download(url: str, dest: Path, *, quiet: bool) -> str:
    """Stream ``url`` into ``dest`` in one go (no resume); returns the sha256 of what arrived."""
    import hashlib

    h = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as r, open(dest, "wb") as out:
            expected = _int_header(r.headers.get("Content-Length"))
            got = 0
            with progress(expected, f"downloading {_url_name(url)}", quiet) as bar:
                while block := r.read(_CHUNK):
                    out.write(block)
                    h.update(block)
                    got += len(block)
                    bar.update(len(block))
            if expected is not None and got != expected:
                raise InstallError(f"download of {url} stopped after {got} of {expected} bytes; try again")
    except urllib.error.HTTPError as e:
        raise InstallError(f"could not fetch {url}: HTTP {e.code} {e.reason}") from None
    except (OSError, http.client.HTTPException) as e:
        raise InstallError(f"could not fetch {url}: {e}") from None
    return h.hexdigest()


def download_resumable(url: str, part: Path, *, size: int | None = None, quiet: bool = False) -> None:
    """Download ``url`` into ``part``, continuing whatever an earlier attempt left there.

    Each attempt asks only for the missing bytes (``Range: bytes=N-``). An attempt cut short is
    retried, resuming, while attempts make progress (``ATTEMPTS`` in all); then the ``.part``
    stays for the next run and ``InstallError`` says to run the command again. ``size`` (from a
    catalog) lets a complete ``.part`` skip the network and a wrong-sized file be refused early.
    The caller verifies the sha256 and must delete ``part`` when it does not match.
    """
    name = _url_name(url)
    reason = ""
    for attempt in range(1, ATTEMPTS + 1):
        before = _size(part)
        if size is not None and before >= size:
            if before == size:
                return
            part.unlink()  # longer than the release: not a prefix of it
            before = 0
        try:
            outcome = _transfer(url, part, before, size, name, quiet)
            reason = "the server closed the connection early"
        except urllib.error.HTTPError as e:
            raise InstallError(f"could not fetch {url}: HTTP {e.code} {e.reason}") from None
        except (OSError, http.client.HTTPException) as e:  # refused, reset, timed out
            outcome, reason = "short", str(e) or type(e).__name__
        if outcome == "done":
            return
        if outcome == "restart":
            reason = "the server did not send the part of the file asked for; starting over"
        elif _size(part) <= before:
            break  # no progress: retrying at once would not help
        if attempt < ATTEMPTS:
            talk(f"download of {name} interrupted at {_size(part):,} bytes ({reason}); resuming", quiet)
    got = _size(part)
    if got == 0:
        part.unlink(missing_ok=True)
        raise InstallError(f"could not fetch {url}: {reason}")
    of = f" of {size:,}" if size is not None else ""
    raise InstallError(f"download of {url} stopped at {got:,}{of} bytes ({reason}); the partial download "
                       "is kept: run the same command again to resume")


def _transfer(url: str, part: Path, have: int, size: int | None, name: str, quiet: bool) -> str:
    """One request appending to ``part`` (which holds ``have`` bytes): "done", "short" or "restart"."""
    request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
    try:
        response = urllib.request.urlopen(request, timeout=TIMEOUT_S)
    except urllib.error.HTTPError as e:
        if e.code != 416 or not have:
            raise
        total = _content_range(e.headers.get("Content-Range"))[1]
        e.close()
        if total == have:  # nothing is missing
            return "done"
        part.unlink()  # the part is longer than the file: it is not a prefix of it
        return "restart"
    with response:
        if have and response.status == 206:
            start, total = _content_range(response.headers.get("Content-Range"))
            if start != have:
                part.unlink()
                return "restart"
            mode = "ab"
        else:  # the whole file: first request, or a server that ignores Range
            have, mode = 0, "wb"
            total = _int_header(response.headers.get("Content-Length"))
        if total is not None and size is not None and total != size:
            part.unlink(missing_ok=True)
            raise InstallError(f"{url} is {total:,} bytes but the catalog says {size:,}: it is not the "
                               "release the catalog lists; nothing was installed")
        with open(part, mode) as out, progress(total, f"downloading {name}", quiet, initial=have) as bar:
            while block := response.read(_CHUNK):
                out.write(block)
                bar.update(len(block))
    return "done" if total is None or _size(part) >= total else "short"


def _content_range(value: str | None) -> tuple[int | None, int | None]:
    """(first byte, total size) of a ``Content-Range`` header; None where it does not say."""
    m = _CONTENT_RANGE.fullmatch((value or "").strip())
    if not m:
        return None, None
    first = int(m.group(1)) if m.group(1) is not None else None
    return first, int(m.group(3)) if m.group(3) != "*" else None


def _int_header(value: str | None) -> int | None:
    return int(value) if value and value.strip().isdigit() else None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _url_name(url: str) -> str:
    return urllib.parse.unquote(PurePosixPath(urllib.parse.urlsplit(url).path).name) or url


# --------------------------------------------------------------------------------------- unpacking

class _Truncated(Exception):
    pass


class _ZstdInput:
    """Decompressed view of a .zst file that, unlike ``stream_reader``, notices a stream cut short:
    reading past the end of the input before the frame's end raises ``_Truncated``."""

    def __init__(self, raw: IO[bytes]):
        self._raw = raw
        self._d = zstandard.ZstdDecompressor().decompressobj()
        self._buf = bytearray()
        self._done = False

    def _feed(self, data: bytes) -> None:
        while data:
            if self._d.eof:  # a multi-frame archive (pzstd): continue with the next frame
                self._d = zstandard.ZstdDecompressor().decompressobj()
            self._buf += self._d.decompress(data)
            data = self._d.unused_data if self._d.eof else b""

    def read(self, n: int = -1) -> bytes:
        while not self._done and (n < 0 or len(self._buf) < n):
            chunk = self._raw.read(_CHUNK)
            if not chunk:
                if not self._d.eof:
                    raise _Truncated("the compressed stream ends before its end marker")
                self._done = True
                break
            self._feed(chunk)
        n = len(self._buf) if n < 0 else min(n, len(self._buf))
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out


def _member_parts(m: tarfile.TarInfo, label: str) -> tuple[str, ...]:
    name = m.name
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name):
        raise InstallError(f"{label}: refusing archive entry with an absolute path: {name!r}")
    parts = tuple(p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", "."))
    if ".." in parts:
        raise InstallError(f"{label}: refusing archive entry that climbs out with '..': {name!r}")
    return parts


def unpack(archive: Path, dest: Path, *, label: str, quiet: bool) -> Path:
    """Unpack a ``.tar.zst`` holding one top-level directory into ``dest``; returns that directory.

    Only regular files and directories are accepted, each inside the single top-level directory:
    absolute paths, ``..``, links and devices are refused. Files are written by us (never by
    ``tarfile.extract``) with mode 0644, directories 0755.
    """
    dest.mkdir()
    top: str | None = None
    size = archive.stat().st_size
    try:
        with open(archive, "rb") as raw, progress(size, f"unpacking {archive.name}", quiet) as bar:
            counted = _CountingReader(raw, bar)
            stream = _ZstdInput(counted)
            with tarfile.open(fileobj=stream, mode="r|") as tar:  # type: ignore[call-overload]
                for m in tar:
                    parts = _member_parts(m, label)
                    if not parts:
                        if m.isdir():
                            continue
                        raise InstallError(f"{label}: refusing archive entry {m.name!r}")
                    if top is None:
                        top = parts[0]
                    if parts[0] != top or (len(parts) == 1 and not m.isdir()):
                        raise InstallError(f"{label}: archive must hold one top-level directory; "
                                           f"found {m.name!r} outside {top!r}")
                    path = dest.joinpath(*parts)
                    if m.isdir():
                        path.mkdir(parents=True, exist_ok=True)
                    elif m.type in (tarfile.REGTYPE, tarfile.AREGTYPE):
                        path.parent.mkdir(parents=True, exist_ok=True)
                        src = tar.extractfile(m)
                        assert src is not None
                        with open(path, "xb") as out:  # "x": a repeated entry is an error, not an overwrite
                            shutil.copyfileobj(src, out, _CHUNK)
                    else:
                        kind = {tarfile.SYMTYPE: "symlink", tarfile.LNKTYPE: "hard link",
                                tarfile.CHRTYPE: "character device", tarfile.BLKTYPE: "block device",
                                tarfile.FIFOTYPE: "fifo"}.get(m.type, f"type {m.type!r}")
                        raise InstallError(f"{label}: refusing archive entry {m.name!r}: a {kind}, "
                                           "bundles hold only files and directories")
            while stream.read(1 << 20):  # the tar end marker may come before the zstd end: check it
                pass
    except (tarfile.TarError, zstandard.ZstdError, EOFError, _Truncated) as e:
        raise InstallError(f"archive truncated or corrupt: {label}: {e}") from None
    except FileExistsError as e:
        raise InstallError(f"archive truncated or corrupt: {label}: entry repeated: {e.filename}") from None
    except OSError as e:
        raise InstallError(f"could not unpack {label}: {e}") from None
    if top is None:
        raise InstallError(f"archive truncated or corrupt: {label}: the archive is empty")
    staged = dest / top
    for dirpath, dirnames, filenames in os.walk(staged):
        os.chmod(dirpath, 0o755)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o644)
    return staged


class _CountingReader:
    def __init__(self, raw: IO[bytes], bar: Any):
        self._raw, self._bar = raw, bar

    def read(self, n: int = -1) -> bytes:
        block = self._raw.read(n)
        self._bar.update(len(block))
        return block


class _NoBar:
    def update(self, n: int) -> None:
        pass


@contextmanager
def progress(total: int | None, desc: str, quiet: bool, initial: int = 0) -> Iterator[Any]:
    """A tqdm byte counter on stderr: only when talk is wanted, stderr is a terminal, and the size is
    known and large enough to wait for. ``initial`` counts bytes already there (a resumed download)."""
    if quiet or total is None or total < _BAR_MIN_BYTES or not _is_tty(sys.stderr):
        yield _NoBar()
        return
    from tqdm import tqdm
    with tqdm(total=total, initial=initial, desc=desc, unit="B", unit_scale=True, unit_divisor=1024,
              file=sys.stderr, leave=False, mininterval=0.5) as bar:
        yield bar


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False
