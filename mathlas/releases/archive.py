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
import json
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
from typing import IO, Any
from collections.abc import Iterator

import zstandard

from mathlas.bundle import MANIFEST, listed_path_problem
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

# A release unpacks to at most MAX_RATIO times its compressed size (the default bundle: 1.24 times;
# tar headers and padding make tiny archives the most compressible, hence the floor
# MIN_UNPACKED_ALLOWANCE) and never to more than MAX_UNPACKED_BYTES (the largest bundle in
# docs/scale.md unpacks to ~32 GB). $MATHLAS_MAX_UNPACKED (bytes, or with a K, M, G or T suffix)
# replaces the rule for an archive the user trusts. Decompression stops as soon as the output passes
# the limit, before the manifest (the last entry) is read; once it is read, the limit shrinks to
# what the manifest declares.
MAX_RATIO = 20
MIN_UNPACKED_ALLOWANCE = 64 << 20
MAX_UNPACKED_BYTES = 256 << 30
MAX_ENTRIES = 20_000  # archive entries; a bundle has tens (a multi-segment BM25 index: hundreds)
MAX_MANIFEST_BYTES = 16 << 20
# Compressed bytes per call into the decompressor. A zstd block regenerates at most 128 KiB from as
# little as 4 bytes (an RLE block), so one call yields at most (512 / 4 + 1) x 128 KiB ~ 16 MiB:
# memory stays bounded whatever the archive holds (a plain decompress() of 64 KiB of zero blocks
# returns 2 GiB at once). Costs ~0.3 s per 100 MB compressed over feeding 64 KiB at a time.
_FEED = 512
_NEAR = _FEED << 17  # closer to the limit than this, feed less
_SIZE = re.compile(r"\s*(\d+)\s*([KMGT]?)i?B?\s*", re.IGNORECASE)


def unpack_limit(compressed: int) -> int:
    """How many bytes an archive of ``compressed`` bytes may unpack to (see ``MAX_RATIO``)."""
    env = os.environ.get("MATHLAS_MAX_UNPACKED")
    if env:
        m = _SIZE.fullmatch(env)
        if not m:
            raise InstallError(f"MATHLAS_MAX_UNPACKED={env!r} is not a size in bytes (e.g. 64G); fix or unset it")
        return int(m.group(1)) << (10 * " KMGT".index(m.group(2).upper() or " "))
    return min(MAX_UNPACKED_BYTES, max(MIN_UNPACKED_ALLOWANCE, MAX_RATIO * compressed))


class _Truncated(Exception):
    pass


class _TooBig(Exception):
    pass


class _ZstdInput:
    """Decompressed view of a .zst file that, unlike ``stream_reader``, notices a stream cut short
    (reading past the end of the input before the frame's end raises ``_Truncated``) and that
    decompresses at most ``_FEED`` compressed bytes per call, counting the output: past ``limit``
    bytes in all it raises ``_TooBig``."""

    def __init__(self, raw: IO[bytes], limit: int):
        self._raw = raw
        self._d = zstandard.ZstdDecompressor().decompressobj()
        self._pending = memoryview(b"")  # compressed bytes read but not decompressed yet
        self._buf = bytearray()
        self._done = False
        self.limit = limit
        self.total = 0

    def _decompress(self, want: int) -> None:
        """Decompress pending input until ``want`` more bytes are buffered or it runs out, ``_FEED``
        compressed bytes per call at most; fewer near the limit, so that the output passes it by no
        more than ~128 KiB (4 bytes of input make at most 128 KiB)."""
        d, pending, buf = self._d, self._pending, self._buf
        pos, size, before, room = 0, len(pending), len(self._buf), self.limit - self.total
        goal = before + want
        while pos < size and len(buf) < goal:
            if d.eof:  # a multi-frame archive (pzstd): continue with the next frame
                rest = bytes(d.unused_data) + bytes(pending[pos:])
                pending, pos, size = memoryview(rest), 0, len(rest)
                d = self._d = zstandard.ZstdDecompressor().decompressobj()
                continue
            feed = _FEED if room >= _NEAR else max(4, room >> 17)
            out = d.decompress(pending[pos:pos + feed])
            pos += feed
            room -= len(out)
            if room < 0:
                raise _TooBig()
            buf += out
        self.total = self.limit - room
        if d.eof and d.unused_data:  # the next frame began inside the last piece
            pending, pos = memoryview(bytes(d.unused_data) + bytes(pending[pos:])), 0
            self._d = zstandard.ZstdDecompressor().decompressobj()
        self._pending = pending[pos:]

    def read(self, n: int = -1) -> bytes:
        while not self._done and (n < 0 or len(self._buf) < n):  # decompress no more than asked for
            if not self._pending:
                chunk = self._raw.read(_CHUNK)
                if not chunk:
                    if not self._d.eof:
                        raise _Truncated("the compressed stream ends before its end marker")
                    self._done = True
                    break
                self._pending = memoryview(chunk)
            self._decompress(1 << 20 if n < 0 else n - len(self._buf))
        n = len(self._buf) if n < 0 else min(n, len(self._buf))
        with memoryview(self._buf) as view:
            out = bytes(view[:n])
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


class _Members:
    """The member policy past the path checks: a bundle's archive holds its manifest's files and
    their directories, nothing else. The manifest is the last entry of a release, so the entries
    before it are held to the size limit only and checked against it once it is read; entries after
    it are checked as they come, before their bytes are written."""

    def __init__(self, label: str, stream: _ZstdInput):
        self.label, self.stream = label, stream
        self.files: dict[str, int] = {}  # relative path -> size, as unpacked so far
        self.dirs: set[str] = set()
        self.listed: dict[str, int] | None = None  # the manifest's files, once read
        self.entries = 0
        self.declared = 0  # sizes the tar headers announce, summed

    def refuse(self, what: str) -> InstallError:
        return InstallError(f"{self.label}: refusing archive: {what}; a release holds exactly the files its "
                            "manifest lists, nothing was installed")

    def admit(self, rel: str, m: tarfile.TarInfo) -> None:
        """Refuse ``m`` (at ``rel`` inside the top directory) before anything of it is written."""
        self.entries += 1
        if self.entries > MAX_ENTRIES:
            raise self.refuse(f"more than {MAX_ENTRIES:,} entries")
        if m.isdir():
            if self.listed is not None and not self._is_listed_dir(rel):
                raise self.refuse(f"directory {rel} holds no file of the manifest")
            self.dirs.add(rel)
            return
        if rel in self.files or (self.listed is not None and rel == MANIFEST):
            raise self.refuse(f"{rel} appears twice")
        self.declared += m.size
        if self.declared > self.stream.limit:
            raise self.refuse(f"its entries announce more than {self.stream.limit:,} bytes")
        if self.listed is not None and rel != MANIFEST:
            self._check_listed(rel, m.size)
        if rel != MANIFEST:
            self.files[rel] = m.size

    def read_manifest(self, data: bytes) -> None:
        """Hold the entries seen so far to the manifest in ``data``; unreadable: left to ``verify``."""
        try:
            listed = json.loads(data.decode("utf-8"))["files"]
            self.listed = {rel: int(e["size"]) for rel, e in listed.items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            self.listed = None
            return
        for rel in sorted(self.listed):
            why = listed_path_problem(rel)
            if why is not None:
                raise self.refuse(f"the manifest lists {rel!r}, which {why}")
        for rel, size in self.files.items():
            self._check_listed(rel, size)
        for rel in sorted(self.dirs):
            if not self._is_listed_dir(rel):
                raise self.refuse(f"directory {rel} holds no file of the manifest")
        # From here on only the listed files not seen yet may come, each with a header or three.
        rest = [s for rel, s in self.listed.items() if rel not in self.files]
        self.stream.limit = min(self.stream.limit, self.stream.total + sum(rest) + 4096 * len(rest) + (1 << 20))

    def _check_listed(self, rel: str, size: int) -> None:
        assert self.listed is not None
        if rel not in self.listed:
            raise self.refuse(f"{rel} is not in its manifest")
        if self.listed[rel] != size:
            raise self.refuse(f"{rel} has {size:,} bytes, its manifest says {self.listed[rel]:,}")

    def _is_listed_dir(self, rel: str) -> bool:
        assert self.listed is not None
        return any(f.startswith(rel + "/") for f in self.listed)


def unpack(archive: Path, dest: Path, *, label: str, quiet: bool, limit: int | None = None) -> Path:
    """Unpack a ``.tar.zst`` holding one top-level directory into ``dest``; returns that directory.

    Only regular files and directories are accepted, each inside the single top-level directory:
    absolute paths, ``..``, links and devices are refused, and so is every file its manifest does
    not list (``_Members``); tarfile's ``data`` filter checks each entry again behind that policy.
    Files are written by us (never by ``tarfile.extract``), streamed, with mode 0644, directories
    0755. At most ``limit`` bytes are decompressed (default ``unpack_limit`` of the archive's size).
    """
    dest.mkdir()
    top: str | None = None
    size = archive.stat().st_size
    limit = unpack_limit(size) if limit is None else limit
    data_filter = getattr(tarfile, "data_filter", None)  # Python 3.11.4+
    members: _Members | None = None
    try:
        with open(archive, "rb") as raw, progress(size, f"unpacking {archive.name}", quiet) as bar:
            counted = _CountingReader(raw, bar)
            stream = _ZstdInput(counted, limit)
            members = _Members(label, stream)
            with tarfile.open(fileobj=stream, mode="r|", bufsize=_CHUNK) as tar:  # type: ignore[call-overload]
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
                    if m.type not in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE):
                        kind = {tarfile.SYMTYPE: "symlink", tarfile.LNKTYPE: "hard link",
                                tarfile.CHRTYPE: "character device", tarfile.BLKTYPE: "block device",
                                tarfile.FIFOTYPE: "fifo"}.get(m.type, f"type {m.type!r}")
                        raise InstallError(f"{label}: refusing archive entry {m.name!r}: a {kind}, "
                                           "bundles hold only files and directories")
                    if len(parts) > 1:
                        members.admit("/".join(parts[1:]), m)
                    if data_filter is not None:  # a second line of defence behind the policy above
                        try:
                            data_filter(m, str(dest))
                        except tarfile.FilterError as e:
                            raise InstallError(f"{label}: refusing archive entry {m.name!r}: {e}") from None
                    path = dest.joinpath(*parts)
                    if m.isdir():
                        path.mkdir(parents=True, exist_ok=True)
                        continue
                    path.parent.mkdir(parents=True, exist_ok=True)
                    src = tar.extractfile(m)
                    assert src is not None
                    is_manifest = parts[1:] == (MANIFEST,)
                    if is_manifest and m.size > MAX_MANIFEST_BYTES:
                        raise members.refuse(f"its manifest has {m.size:,} bytes (at most {MAX_MANIFEST_BYTES:,})")
                    with open(path, "xb") as out:  # "x": a repeated entry is an error, not an overwrite
                        if is_manifest:
                            data = src.read()
                            out.write(data)
                            members.read_manifest(data)
                        else:
                            shutil.copyfileobj(src, out, _CHUNK)
            while stream.read(1 << 20):  # the tar end marker may come before the zstd end: check it
                pass
    except _TooBig:
        if members is not None and members.listed is not None:
            raise members.refuse("it unpacks to more than its manifest declares") from None
        raise InstallError(f"{label}: refusing archive: it unpacks to more than {limit:,} bytes "
                           f"({size:,} compressed), more than a mathlas release does; nothing was installed "
                           "(to install it anyway, set MATHLAS_MAX_UNPACKED to its unpacked size)") from None
    except (tarfile.TarError, zstandard.ZstdError, EOFError, _Truncated) as e:
        raise InstallError(f"archive truncated or corrupt: {label}: {e}") from None
    except FileExistsError as e:
        raise InstallError(f"archive truncated or corrupt: {label}: entry repeated: {e.filename}") from None
    except OSError as e:
        raise InstallError(f"could not unpack {label}: {e}") from None
    if top is None:
        raise InstallError(f"archive truncated or corrupt: {label}: the archive is empty")
    staged = dest / top
    for dirpath, _dirnames, filenames in os.walk(staged):
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
