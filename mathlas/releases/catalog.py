"""Release catalogs: which releases exist, and where their archives are.

A catalog is a ``catalog.json`` holding ``{"releases": [...]}`` (docs/releases.md); each entry has

=====================  ==========================================================================
field                  meaning
=====================  ==========================================================================
name, version          the bundle's manifest name and version; both must be safe directory names
format_version         the bundle format it needs (``mathlas.bundle.FORMAT_VERSION``)
url                    the archive: absolute, or relative to the catalog's own location (catalogs
                       written before ``url`` existed have ``file``)
size, sha256           of the archive (sha256: 64 hex digits); both checked before unpacking
encoder                a summary of the manifest's encoder block (name, dims, pooling, ...)
counts                 ``documents`` and per-source counts from the manifest
=====================  ==========================================================================

The catalogs in the *artifacts* directories (``artifacts_dirs``) list the releases that ship with
mathlas. A remote catalog (``--catalog URL`` or ``$MATHLAS_CATALOG``) may add more; it is read only
when installing by name and by ``index list``. Installing an entry is ``mathlas.releases.install``'s job.
"""
from __future__ import annotations

import json
import os
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mathlas.releases.archive import fetch_small, is_url, parse_source
from mathlas.bundle import FORMAT_VERSION, MIN_FORMAT_VERSION, readable_format
from mathlas.releases.download import SHA256_HEX
from mathlas.errors import BundleNotFoundError, BundleVersionError, InstallError
from mathlas.releases.staging import talk

CATALOG = "catalog.json"
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")  # a bundle name or version, safe in a directory name
_CATALOG_MAX_BYTES = 16 << 20


def artifacts_dirs() -> list[Path]:
    """Directories holding releases that ship with mathlas (each may have a ``catalog.json``).

    ``$MATHLAS_ARTIFACTS`` (one or more paths, ``os.pathsep``-separated) when set; otherwise
    ``artifacts/`` inside the installed package (wheel) and at the root of a source checkout.
    """
    env = os.environ.get("MATHLAS_ARTIFACTS")
    if env is not None:
        candidates = [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    else:
        package = Path(__file__).parent.parent  # mathlas/ (this file is mathlas/releases/catalog.py)
        candidates = [package / "artifacts", package.resolve().parent / "artifacts"]
    out: list[Path] = []
    for p in candidates:
        if p.is_dir() and p.resolve() not in {q.resolve() for q in out}:
            out.append(p)
    return out


def version_key(version: str) -> tuple:
    """Sort key for bundle versions, PEP 440's order (``packaging.version``): ``1.10.0`` > ``1.9.2``,
    ``1.2.0rc1`` < ``1.2.0``, ``0.20260101.0+8f9d9cff`` a local version of ``0.20260101.0``. A
    version PEP 440 cannot read sorts before every one it can, by its dot parts."""
    from packaging.version import InvalidVersion, Version

    try:
        return (1, Version(version))
    except InvalidVersion:
        return (0, tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in version.split(".")))


@dataclass
class Release:
    """One entry of a release catalog. ``url`` is absolute: a URL, or a local path for catalogs
    on disk; ``catalog`` says which catalog listed it."""

    name: str
    version: str
    url: str
    sha256: str
    size: int
    format_version: int
    encoder: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    catalog: str = ""

    @property
    def archive(self) -> Path | None:
        """The archive's local path, or None when it must be downloaded."""
        url, local = parse_source(self.url)
        return local if url is None else None


def read_catalog(location: str | os.PathLike) -> list[Release]:
    """The releases a ``catalog.json`` lists (``location``: its path, a directory holding it, or a
    URL). Relative ``url`` fields are resolved against the catalog's own location."""
    text = str(location)
    if not is_url(text) and Path(text).expanduser().is_dir():
        location = text = str(Path(text).expanduser() / CATALOG)
    try:
        raw = json.loads(fetch_small(location, _CATALOG_MAX_BYTES).decode("utf-8"))
        entries = raw["releases"]
        if not isinstance(entries, list):
            raise TypeError("'releases' is not a list")
        return [_release(e, text) for e in entries]
    except FileNotFoundError:
        raise InstallError(f"no release catalog at {text}") from None
    except (ValueError, KeyError, TypeError) as e:
        raise InstallError(f"{text}: unreadable release catalog ({e!r})") from None


def _release(e: dict[str, Any], catalog: str) -> Release:
    ref = str(e.get("url") or e["file"])  # "file": catalogs written before "url" existed
    if is_url(ref):
        url = ref
    elif is_url(catalog):
        url = urllib.parse.urljoin(catalog, urllib.parse.quote(ref) if "%" not in ref else ref)
    else:
        url = str(Path(catalog).expanduser().parent / ref)
    r = Release(str(e["name"]), str(e["version"]), url, str(e["sha256"]).lower(), int(e["size"]),
                int(e["format_version"]), dict(e.get("encoder") or {}), dict(e.get("counts") or {}), catalog)
    for part in (r.name, r.version):
        if not SAFE_NAME.fullmatch(part):
            raise ValueError(f"name/version {part!r} is not a safe directory name")
    if not SHA256_HEX.fullmatch(r.sha256):
        raise ValueError(f"{r.name}@{r.version}: sha256 {r.sha256!r} is not 64 hex digits")
    return r


def shipped() -> list[Release]:
    """Releases that ship with mathlas, from every artifacts directory's ``catalog.json``
    (the first directory wins when two list the same name and version)."""
    out: dict[tuple[str, str], Release] = {}
    for d in artifacts_dirs():
        if not (d / CATALOG).is_file():
            continue
        try:
            releases = read_catalog(d / CATALOG)
        except InstallError as e:
            raise InstallError(f"{e}; reinstall mathlas") from None
        for rel in releases:
            out.setdefault((rel.name, rel.version), rel)
    return sorted(out.values(), key=lambda r: (r.name, version_key(r.version)))


def readable_shipped() -> list[Release]:
    """The shipped releases whose format this mathlas reads."""
    return [r for r in shipped() if readable_format(r.format_version)]


def remote_catalog(catalog: str | None = None) -> str | None:
    """The remote catalog to consult: ``catalog``, else ``$MATHLAS_CATALOG``, else None."""
    return catalog or os.environ.get("MATHLAS_CATALOG") or None


def releases(catalog: str | None = None) -> list[Release]:
    """Every release known to the shipped catalogs and the remote one (``remote_catalog``).

    For a name and version listed in both, the shipped entry (no download) wins when its sha256
    is the same; otherwise the remote catalog, which the user named, wins."""
    out: dict[tuple[str, str], Release] = {}
    remote = remote_catalog(catalog)
    if remote:
        for r in read_catalog(remote):
            out.setdefault((r.name, r.version), r)
    for r in shipped():
        key = (r.name, r.version)
        if key not in out or out[key].sha256 == r.sha256:
            out[key] = r
    return sorted(out.values(), key=lambda r: (r.name, version_key(r.version)))


def find_release(name: str, version: str | None = None, *, catalog: str | None = None,
                 quiet: bool = False) -> Release:
    """The catalog entry for ``name`` (its highest readable version) or ``name@version``.

    Raises ``BundleNotFoundError`` listing what the catalogs hold, and ``BundleVersionError``
    naming both format versions when the entry is one this mathlas cannot read."""
    remote = remote_catalog(catalog)
    where = "the shipped catalog" + (f" and {remote}" if remote else " (pass --catalog URL or set MATHLAS_CATALOG "
                                                                     "to consult a remote one)")
    known = releases(catalog)
    same = [r for r in known if r.name == name]
    if not same:
        names = sorted({r.name for r in known})
        raise BundleNotFoundError(f"no release named {name!r} in {where}; releases: "
                                  f"{', '.join(names) if names else 'none'}")
    listed = ", ".join(r.version for r in same)
    if version is not None:
        exact = [r for r in same if r.version == version]
        if not exact:
            raise BundleNotFoundError(f"{name}@{version} is not in {where}; available versions of {name}: {listed}")
        _check_format(exact[0])
        return exact[0]
    readable = [r for r in same if readable_format(r.format_version)]
    if not readable:
        _check_format(same[-1])
    best = readable[-1]
    newer = [r.version for r in same if version_key(r.version) > version_key(best.version)]
    if newer:
        talk(f"note: {name} {', '.join(newer)} need another format version than this mathlas reads "
             f"({MIN_FORMAT_VERSION}-{FORMAT_VERSION}); using {name}@{best.version}", quiet)
    return best


def _check_format(r: Release) -> None:
    if not readable_format(r.format_version):
        fix = ("upgrade mathlas (pip install -U mathlas)" if r.format_version > FORMAT_VERSION
               else "pick a newer release of it")
        raise BundleVersionError(
            f"{r.name}@{r.version} (in {r.catalog}) has format_version {r.format_version}; this mathlas reads "
            f"format_version {MIN_FORMAT_VERSION} to {FORMAT_VERSION}: {fix}")
