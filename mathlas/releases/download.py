"""Getting a release archive's bytes right: the checked download and the sha256 it must match.

The expected sha256 comes from a catalog entry, ``--sha256``, or the ``<archive>.sha256`` sidecar
beside the archive (``<hex>  <filename>``, as ``sha256sum`` writes it; a ``SHA256SUMS``-style list
works too). A download goes into a ``.part`` whose name carries the expected hash, so it only ever
resumes the very same bytes, and is dropped when the finished file does not match.
"""
from __future__ import annotations

import os
import re
import urllib.parse
from pathlib import Path, PurePosixPath

from mathlas.releases.archive import download_resumable, fetch_small
from mathlas.bundle import sha256_file
from mathlas.errors import InstallError

SHA_SUFFIX = ".sha256"
SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def fetch_archive(url: str, downloads: Path, dest: Path, sha256: str, size: int | None, *,
                  quiet: bool) -> Path:
    """Download ``url`` into ``downloads/<name>.<hash>.part`` (resuming what an earlier attempt
    left there), check it, and move it to ``dest``; returns ``dest``."""
    downloads.mkdir(exist_ok=True)
    name = urllib.parse.unquote(PurePosixPath(urllib.parse.urlsplit(url).path).name)
    # The hash in the name: a .part only ever continues the download of the very same bytes.
    part = downloads / f"{re.sub(r'[^A-Za-z0-9._+-]', '_', name)[:100]}.{sha256[:16]}.part"
    download_resumable(url, part, size=size, quiet=quiet)
    try:
        check_sha256(url, part, sha256, size)
    except InstallError:
        part.unlink(missing_ok=True)  # resuming it again could never give the right bytes
        raise
    os.replace(part, dest)
    return dest


def check_sha256(label: str, path: Path, expected: str, size: int | None) -> None:
    """InstallError unless ``path`` has ``size`` bytes (when given) and the sha256 ``expected``."""
    got_size = path.stat().st_size
    if size is not None and got_size != size:
        raise InstallError(f"{label}: size mismatch: expected {size:,} bytes, got {got_size:,}; the archive is "
                           "truncated or is not the release you meant")
    actual = sha256_file(path)
    if actual != expected:
        raise InstallError(f"{label}: sha256 mismatch: expected {expected}, got {actual}; "
                           "the download is damaged or is not the release you meant")


def sidecar_sha256(url: str | None, local: Path | None) -> str:
    """The hash in ``<archive>.sha256``; InstallError (never an unverified install) without one."""
    if url:
        parts = urllib.parse.urlsplit(url)
        where = urllib.parse.urlunsplit(parts._replace(path=parts.path + SHA_SUFFIX))
        archive_name = urllib.parse.unquote(PurePosixPath(parts.path).name)
    else:
        assert local is not None
        where, archive_name = str(local) + SHA_SUFFIX, local.name
    try:
        text = fetch_small(where if url else Path(where), 1 << 16).decode("utf-8", "replace")
    except FileNotFoundError:
        raise InstallError(f"no checksum file {where}; refusing to install an unverified archive. Pass the "
                           "expected hash with --sha256 HEX (install(..., expected_sha256=HEX))") from None
    except InstallError as e:
        raise InstallError(f"could not fetch checksum {where}: {e}") from None
    lines = [ln.split() for ln in text.splitlines() if ln.strip()]
    if len(lines) > 1:  # a SHA256SUMS-style list: take our file's line
        lines = [ln for ln in lines if len(ln) > 1 and ln[1].lstrip("*") == archive_name] or lines[:0]
    digest = lines[0][0].lower() if lines else ""
    if not SHA256_HEX.fullmatch(digest):
        raise InstallError(f"checksum file {where} does not hold a sha256 for {archive_name}")
    return digest
