"""Safe unpacking of release archives (``.tar.zst`` holding one top-level directory).

Only regular files and directories inside the single top-level directory are accepted; absolute
paths, ``..``, links and devices are refused, and a stream cut short is an error (zstandard's
``stream_reader`` would silently stop). Used by ``mathlas.install``.
"""
from __future__ import annotations

import os
import re
import shutil
import sys
import tarfile
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO, Any, Iterator

import zstandard

from mathlas.errors import InstallError

_CHUNK = 1 << 16
_BAR_MIN_BYTES = 8 << 20


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
def progress(total: int | None, desc: str, quiet: bool) -> Iterator[Any]:
    """A tqdm byte counter on stderr when the size is known, large enough to wait for, and talk is wanted."""
    if quiet or total is None or total < _BAR_MIN_BYTES:
        yield _NoBar()
        return
    from tqdm import tqdm
    with tqdm(total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024,
              file=sys.stderr, leave=False, mininterval=0.5) as bar:
        yield bar
