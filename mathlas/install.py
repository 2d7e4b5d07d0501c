"""Installed bundles: where they live, how a name becomes a directory, and installing a release.

A release is one bundle directory packed as ``<name>-<version>.tar.zst`` (a single top-level
directory) next to ``<name>-<version>.tar.zst.sha256`` (``<hex>  <filename>``, as ``sha256sum``
writes it). Installing one works like building one (STYLE.md, rule 3): fetch and check the archive,
unpack it into a temporary directory beside the bundles, verify every file against the manifest,
then ``os.rename`` the finished directory into place. Whatever fails on the way, nothing but the
complete bundle ever appears under ``bundles/``.

::

    <data_dir>/bundles/
        informal-1.0.0/          an installed bundle (it has manifest.json)
        .install.lock            flock'd by every install, so concurrent installs take turns
        .tmp-*  .old-*           work in progress; removed by the next install if a crash left them

Releases that ship with mathlas sit in an *artifacts* directory with a ``catalog.json``; asking for
such a bundle by name (the default bundle above all) installs it on first use.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

import platformdirs

from mathlas.archive import progress as _progress
from mathlas.archive import unpack as _unpack
from mathlas.bundle import FORMAT_VERSION, MANIFEST, Manifest, read_manifest, sha256_file, verify
from mathlas.errors import (BundleCorruptError, BundleNotFoundError, BundleVersionError,
                            InstallError, MathlasError, UsageError)

try:  # POSIX; on Windows installs are simply not serialised across processes
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

DEFAULT_BUNDLE = "informal"
BUNDLES = "bundles"
LOCK_FILE = ".install.lock"
CATALOG = "catalog.json"
ARCHIVE_SUFFIX = ".tar.zst"
SHA_SUFFIX = ".sha256"

_TMP_PREFIX = ".tmp-"
_OLD_PREFIX = ".old-"
_CHUNK = 1 << 16
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_URL_SCHEMES = ("http", "https", "file")


# --------------------------------------------------------------------------------------- places

def data_dir() -> Path:
    """``$MATHLAS_DATA_DIR``, else the platform's per-user data directory for mathlas."""
    env = os.environ.get("MATHLAS_DATA_DIR")
    return Path(env).expanduser() if env else Path(platformdirs.user_data_dir("mathlas"))


def bundles_dir() -> Path:
    """Where installed bundles live: ``data_dir()/bundles``."""
    return data_dir() / BUNDLES


def artifacts_dirs() -> list[Path]:
    """Directories holding releases that ship with mathlas (each may have a ``catalog.json``).

    ``$MATHLAS_ARTIFACTS`` (one or more paths, ``os.pathsep``-separated) when set; otherwise
    ``artifacts/`` inside the installed package (wheel) and at the root of a source checkout.
    """
    env = os.environ.get("MATHLAS_ARTIFACTS")
    if env is not None:
        candidates = [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    else:
        import mathlas
        here = Path(mathlas.__file__)
        candidates = [here.parent / "artifacts", here.resolve().parents[1] / "artifacts"]
    out: list[Path] = []
    for p in candidates:
        if p.is_dir() and p.resolve() not in {q.resolve() for q in out}:
            out.append(p)
    return out


def version_key(version: str) -> tuple:
    """Sort key comparing versions numerically by dot parts: ``1.10.0`` > ``1.9.2``."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in version.split("."))


# --------------------------------------------------------------------------------------- what is there

@dataclass
class InstalledBundle:
    """A complete bundle directory under ``bundles_dir()``. ``manifest`` is None (and ``problem``
    says why) when its manifest cannot be read by this mathlas, e.g. a newer format version."""

    name: str
    version: str
    path: Path
    manifest: Manifest | None
    problem: str | None = None


@dataclass
class ShippedRelease:
    """A packed release listed in an artifacts directory's ``catalog.json``."""

    name: str
    version: str
    archive: Path
    sha256: str
    size: int
    format_version: int


def installed() -> list[InstalledBundle]:
    """Every complete bundle in the bundles directory, sorted by name, then version."""
    root = bundles_dir()
    out: list[InstalledBundle] = []
    if not root.is_dir():
        return out
    for d in root.iterdir():
        if d.name.startswith(".") or not d.is_dir() or not (d / MANIFEST).is_file():
            continue
        try:
            m = read_manifest(d)
            out.append(InstalledBundle(m.name, m.version, d, m))
        except MathlasError as e:
            name, _, version = d.name.rpartition("-")
            try:  # a readable manifest of another format still names the bundle
                raw = json.loads((d / MANIFEST).read_text(encoding="utf-8"))
                name, version = str(raw["name"]), str(raw["version"])
            except Exception:
                pass
            out.append(InstalledBundle(name or d.name, version, d, None, str(e)))
    out.sort(key=lambda b: (b.name, version_key(b.version)))
    return out


def shipped() -> list[ShippedRelease]:
    """Releases that ship with mathlas, from every artifacts directory's ``catalog.json``
    (the first directory wins when two list the same name and version)."""
    out: dict[tuple[str, str], ShippedRelease] = {}
    for d in artifacts_dirs():
        path = d / CATALOG
        if not path.is_file():
            continue
        try:
            releases = json.loads(path.read_text(encoding="utf-8"))["releases"]
            for r in releases:
                rel = ShippedRelease(str(r["name"]), str(r["version"]), d / r["file"],
                                     str(r["sha256"]).lower(), int(r["size"]), int(r["format_version"]))
                out.setdefault((rel.name, rel.version), rel)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise InstallError(f"{path}: unreadable release catalog ({e!r}); reinstall mathlas") from None
    return sorted(out.values(), key=lambda r: (r.name, version_key(r.version)))


# --------------------------------------------------------------------------------------- name -> dir

def _looks_like_path(spec: str) -> bool:
    return os.sep in spec or "/" in spec or spec.startswith((".", "~"))


def resolve_bundle(spec: str | os.PathLike | None = None, *, quiet: bool = False) -> Path:
    """The directory of the bundle ``spec`` names.

    ``None`` means ``$MATHLAS_BUNDLE`` or ``DEFAULT_BUNDLE``. An existing directory is itself;
    ``name-version`` is that installed bundle; a bare ``name`` is its highest version among the
    installed and the shipped releases. A shipped release that is not installed yet is installed
    first (talk on stderr). Raises ``BundleNotFoundError`` listing what is installed otherwise.
    """
    if spec is None:
        spec = os.environ.get("MATHLAS_BUNDLE") or DEFAULT_BUNDLE
    if isinstance(spec, os.PathLike):
        path = Path(spec).expanduser()
        if path.is_dir():
            return path.resolve()
        raise BundleNotFoundError(f"no bundle directory at {path}")
    spec = str(spec).strip()
    if not spec:
        raise UsageError("empty bundle name; give a bundle name, name-version or directory")
    as_path = Path(spec).expanduser()
    if as_path.is_dir() and (_looks_like_path(spec) or (as_path / MANIFEST).is_file()):
        return as_path.resolve()
    if _looks_like_path(spec):
        raise BundleNotFoundError(f"no bundle directory at {as_path}")

    found = _find(spec, installed())
    if found is not None:
        return found
    release = _find_shipped(spec)
    if release is not None:
        return _install_shipped(release, quiet=quiet)
    if as_path.is_dir():  # a directory in cwd without a manifest: let the reader say what is wrong
        return as_path.resolve()
    raise BundleNotFoundError(_not_found_message(spec))


def _find(spec: str, bundles: list[InstalledBundle]) -> Path | None:
    """``spec`` as ``name-version`` or bare name among installed bundles (highest version),
    unless a shipped release of that name is newer (then None: it should be installed)."""
    for b in bundles:
        if f"{b.name}-{b.version}" == spec or b.path.name == spec:
            return b.path
    same = [b for b in bundles if b.name == spec]
    if not same:
        return None
    best = max(same, key=lambda b: version_key(b.version))
    newer = _find_shipped(spec)
    if newer is not None and version_key(newer.version) > version_key(best.version):
        return None
    return best.path


def _find_shipped(spec: str) -> ShippedRelease | None:
    releases = [r for r in shipped() if r.format_version == FORMAT_VERSION]
    exact = [r for r in releases if f"{r.name}-{r.version}" == spec]
    if exact:
        return exact[0]
    same = [r for r in releases if r.name == spec]
    return max(same, key=lambda r: version_key(r.version)) if same else None


def _install_shipped(release: ShippedRelease, *, quiet: bool) -> Path:
    root = bundles_dir()
    with _install_lock(root, quiet=quiet):
        # Another process may have installed it while we waited for the lock.
        for b in installed():
            if (b.name, b.version) == (release.name, release.version):
                return b.path
        what = "the default bundle" if release.name == DEFAULT_BUNDLE else "the shipped bundle"
        _talk(f"installing {what} {release.name}-{release.version} into {root}", quiet)
        return install(release.archive, expected_sha256=release.sha256, quiet=quiet, _announced=True)


def _not_found_message(spec: str) -> str:
    have = [f"{b.name}-{b.version}" for b in installed()]
    ship = sorted({r.name for r in shipped()})
    msg = f"no bundle named {spec!r}; installed: {', '.join(have) if have else 'none'}"
    if ship:
        msg += f"; shipped with mathlas: {', '.join(ship)}"
    return msg + "; install one with `mathlas index install PATH_OR_URL`, or pass a bundle directory"


# --------------------------------------------------------------------------------------- install

def install(source: str | os.PathLike, *, expected_sha256: str | None = None,
            force: bool = False, quiet: bool = False, _announced: bool = False) -> Path:
    """Install a release archive (local path, ``file://``, ``http://`` or ``https://`` URL).

    The archive's sha256 must match ``expected_sha256`` or the ``<archive>.sha256`` sidecar fetched
    from the same place; it is then unpacked safely, fully verified, and renamed into
    ``bundles/<name>-<version>``. Installing the same bundle again is a no-op; a different bundle
    of the same name and version is refused unless ``force`` (which also repairs a damaged install).
    Returns the installed directory. Raises ``InstallError`` and leaves nothing behind on failure.
    """
    if expected_sha256 is not None:
        expected_sha256 = expected_sha256.strip().lower()
        if not _HEX64.fullmatch(expected_sha256):
            raise UsageError(f"--sha256 must be 64 hex digits, got {expected_sha256!r}")
    url, local = _parse_source(source)
    label = url or str(local)
    if local is not None and not local.is_file():
        hint = (" (it is a bundle directory: use it in place, e.g. `--bundle DIR`)"
                if (local / MANIFEST).is_file() else "")
        raise InstallError(f"no release archive at {local}{hint}")
    root = bundles_dir()
    with _install_lock(root, quiet=quiet):
        try:
            work = Path(tempfile.mkdtemp(prefix=_TMP_PREFIX, dir=root))
        except OSError as e:
            raise InstallError(f"cannot write to {root}: {e}; set MATHLAS_DATA_DIR to a writable directory") from None
        try:
            if expected_sha256 is None:
                expected_sha256 = _sidecar_sha256(url, local)
            if url is not None:
                local = work / "archive.tar.zst"
                actual = _download(url, local, quiet=quiet)
            else:
                assert local is not None
                actual = sha256_file(local)
            if actual != expected_sha256:
                raise InstallError(f"{label}: sha256 mismatch: expected {expected_sha256}, got {actual}; "
                                   "the download is damaged or is not the release you meant")
            staged = _unpack(local, work / "unpacked", label=label, quiet=quiet)
            try:
                manifest = verify(staged, checksums=True)
            except BundleNotFoundError as e:
                raise InstallError(f"{label} does not hold a bundle: {e}") from None
            except BundleCorruptError as e:
                raise InstallError(f"archive truncated or corrupt: {label}: {e}") from None
            except BundleVersionError as e:
                raise BundleVersionError(f"{label}: {e}") from None
            for part in (manifest.name, manifest.version):
                if not _SAFE_NAME.fullmatch(part):
                    raise InstallError(f"{label}: bundle name/version {part!r} is not a safe directory name")
            return _commit(staged, root / f"{manifest.name}-{manifest.version}", force=force,
                           quiet=quiet or _announced)
        except OSError as e:  # disk full, permissions: still an install problem, still cleaned up
            raise InstallError(f"could not install {label} into {root}: {e}") from None
        finally:
            shutil.rmtree(work, ignore_errors=True)


def remove(name_or_dir: str | os.PathLike) -> Path:
    """Delete an installed bundle (by name, ``name-version`` or its directory); returns its path."""
    root = bundles_dir()
    path = Path(name_or_dir).expanduser()
    if not path.is_dir() or isinstance(name_or_dir, str) and not _looks_like_path(name_or_dir):
        found = _find(str(name_or_dir), installed())
        if found is None:
            raise BundleNotFoundError(_not_found_message(str(name_or_dir)))
        path = found
    path = path.resolve()
    if path.parent != root.resolve():
        raise UsageError(f"{path} is not an installed bundle (not directly under {root}); delete it yourself")
    with _install_lock(root, quiet=True):
        aside = root / f"{_OLD_PREFIX}{path.name}-{os.getpid()}"
        os.rename(path, aside)
        shutil.rmtree(aside, ignore_errors=True)
    return path


def _commit(staged: Path, target: Path, *, force: bool, quiet: bool) -> Path:
    """Rename the verified ``staged`` directory to ``target`` (atomically swapping when forced)."""
    if not target.exists():
        os.rename(staged, target)
        _talk(f"installed {target.name} into {target.parent}", quiet)
        return target
    same = _manifest_data(target) == _manifest_data(staged)
    if same and not force:
        _talk(f"{target.name} is already installed at {target}", quiet)
        return target
    if not force:
        raise InstallError(f"{target} already exists and holds a different bundle of the same name and "
                           "version; pass --force (force=True) to replace it")
    replace_dir(staged, target, _OLD_PREFIX)
    _talk(f"replaced {target.name} at {target}", quiet)
    return target


def replace_dir(staged: Path, target: Path, old_prefix: str = _OLD_PREFIX) -> None:
    """Rename ``staged`` to ``target``, moving an existing ``target`` aside first and deleting it
    after (processes that still map its files keep them: unlinked files live on while mapped)."""
    if not target.exists():
        os.rename(staged, target)
        return
    aside = target.parent / f"{old_prefix}{target.name}-{os.getpid()}"
    os.rename(target, aside)
    try:
        os.rename(staged, target)
    except OSError:
        os.rename(aside, target)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def _manifest_data(root: Path) -> Any:
    try:
        return json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# --------------------------------------------------------------------------------------- fetching

def _parse_source(source: str | os.PathLike) -> tuple[str | None, Path | None]:
    """(url, None) for http(s) sources, (None, path) for local paths and ``file://`` URLs."""
    if isinstance(source, os.PathLike):
        return None, Path(source).expanduser()
    text = str(source).strip()
    scheme = urllib.parse.urlsplit(text).scheme.lower()
    if len(scheme) > 1 and "://" in text:
        if scheme not in _URL_SCHEMES:
            raise InstallError(f"cannot fetch {text}: only http, https, file URLs and local paths are supported")
        if scheme == "file":
            parts = urllib.parse.urlsplit(text)
            if parts.netloc not in ("", "localhost"):
                raise InstallError(f"cannot fetch {text}: file URLs must name a local file (file:///path)")
            return None, Path(urllib.request.url2pathname(parts.path))
        return text, None
    return None, Path(text).expanduser()


def _sidecar_sha256(url: str | None, local: Path | None) -> str:
    """The hash in ``<archive>.sha256``; InstallError (never an unverified install) without one."""
    if url:
        parts = urllib.parse.urlsplit(url)
        where = urllib.parse.urlunsplit(parts._replace(path=parts.path + SHA_SUFFIX))
        archive_name = urllib.parse.unquote(PurePosixPath(parts.path).name)
    else:
        assert local is not None
        where, archive_name = str(local) + SHA_SUFFIX, local.name
    try:
        if url:
            with urllib.request.urlopen(where, timeout=60) as r:
                text = r.read(1 << 16).decode("utf-8", "replace")
        else:
            text = Path(where).read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, urllib.error.HTTPError) as e:
        if isinstance(e, urllib.error.HTTPError) and e.code != 404:
            raise InstallError(f"could not fetch checksum {where}: HTTP {e.code} {e.reason}") from None
        raise InstallError(f"no checksum file {where}; refusing to install an unverified archive. Pass the "
                           "expected hash with --sha256 HEX (install(..., expected_sha256=HEX))") from None
    except (OSError, urllib.error.URLError) as e:
        raise InstallError(f"could not fetch checksum {where}: {e}") from None
    lines = [ln.split() for ln in text.splitlines() if ln.strip()]
    if len(lines) > 1:  # a SHA256SUMS-style list: take our file's line
        lines = [ln for ln in lines if len(ln) > 1 and ln[1].lstrip("*") == archive_name] or lines[:0]
    digest = lines[0][0].lower() if lines else ""
    if not _HEX64.fullmatch(digest):
        raise InstallError(f"checksum file {where} does not hold a sha256 for {archive_name}")
    return digest


def _download(url: str, dest: Path, *, quiet: bool) -> str:
    """Stream ``url`` into ``dest``; returns the sha256 of what arrived."""
    h = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=60) as r, open(dest, "wb") as out:
            total = r.headers.get("Content-Length")
            expected = int(total) if total and total.isdigit() else None
            got = 0
            name = urllib.parse.unquote(PurePosixPath(urllib.parse.urlsplit(url).path).name)
            with _progress(expected, f"downloading {name}", quiet) as bar:
                while block := r.read(_CHUNK):
                    out.write(block)
                    h.update(block)
                    got += len(block)
                    bar.update(len(block))
            if expected is not None and got != expected:
                raise InstallError(f"download of {url} stopped after {got} of {expected} bytes; try again")
    except urllib.error.HTTPError as e:
        raise InstallError(f"could not fetch {url}: HTTP {e.code} {e.reason}") from None
    except (OSError, urllib.error.URLError) as e:
        raise InstallError(f"could not fetch {url}: {e}") from None
    return h.hexdigest()


# --------------------------------------------------------------------------------------- talk, lock

def _talk(message: str, quiet: bool) -> None:
    if not quiet:
        print(message, file=sys.stderr, flush=True)


_lock_guard = threading.RLock()
_held: dict[Path, list] = {}  # bundles dir -> [fd, depth]; the lock is re-entrant within a process


@contextmanager
def _install_lock(root: Path, *, quiet: bool) -> Iterator[None]:
    """Hold ``root/.install.lock`` (fcntl.flock) so installs of all processes take turns.

    On first acquisition, leftovers of crashed installs (``.tmp-*``, ``.old-*``) are removed:
    only a lock holder ever creates them, so none can be in use.
    """
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InstallError(f"cannot create {root}: {e}; set MATHLAS_DATA_DIR to a writable directory") from None
    key = root.resolve()
    with _lock_guard:
        entry = _held.get(key)
        if entry is None:
            try:
                fd = os.open(key / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as e:
                raise InstallError(f"cannot write to {key}: {e}; set MATHLAS_DATA_DIR to a writable "
                                   "directory") from None
            try:
                if fcntl is not None:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        _talk("waiting for another mathlas install to finish ...", quiet)
                        fcntl.flock(fd, fcntl.LOCK_EX)
                _clean_leftovers(key)
            except BaseException:
                os.close(fd)
                raise
            entry = _held[key] = [fd, 0]
        entry[1] += 1
        try:
            yield
        finally:
            entry[1] -= 1
            if entry[1] == 0:
                del _held[key]
                os.close(entry[0])  # closing the descriptor releases the flock


def _clean_leftovers(root: Path) -> None:
    for p in root.iterdir():
        if p.name.startswith((_TMP_PREFIX, _OLD_PREFIX)):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
