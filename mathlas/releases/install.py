"""Installed bundles: where they live, how a name becomes a directory, and installing a release.

A release is one bundle directory packed as ``<name>-<version>.tar.zst`` (a single top-level
directory) next to ``<name>-<version>.tar.zst.sha256`` (``<hex>  <filename>``, as ``sha256sum``
writes it). Installing one works like building one (STYLE.md, rule 3): fetch and check the archive,
unpack it into a temporary directory beside the bundles (streamed, bounded: ``unpack`` stops at
what the manifest declares), verify the bundle in full (exactly the files its manifest lists, each
one's sha256, the document count against the tables: ``mathlas.bundle.verify``), then
``os.rename`` the finished directory into place. Whatever fails on the way, nothing but the
complete bundle ever appears under ``bundles/``.

::

    <data_dir>/bundles/
        informal-1.0.0/          an installed bundle (it has manifest.json); versions sit side by side
        informal-1.1.0/
        in-use.json              {"informal": "1.0.0"}: versions chosen with `mathlas index use`
        .install.lock            flock'd by every install, so concurrent installs take turns
        .downloads/*.part        interrupted downloads, resumed by the next install of the same release
        .tmp-*  .old-*           work in progress; removed by the next install if a crash left them

Which releases exist, and where their archives are, is ``mathlas.releases.catalog``'s: asking for a bundle
that ships with mathlas by name (the default bundle above all) installs it on first use, and a
remote catalog is read only by ``install_spec`` and ``index list``. Fetching an archive and checking
its sha256 is ``mathlas.releases.download``'s; the lock, the staging names and the atomic swap are
``mathlas.releases.staging``'s (shared with the OEIS tools).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mathlas.atomic import atomic_file
from mathlas.releases.archive import is_url, parse_source
from mathlas.releases.archive import unpack as _unpack
from mathlas.bundle import MANIFEST, Manifest, read_manifest, verify
from mathlas.releases.catalog import (SAFE_NAME, Release, find_release, readable_shipped, remote_catalog, shipped,
                                     version_key)
from mathlas.releases.download import SHA256_HEX, check_sha256, fetch_archive, sidecar_sha256
from mathlas.paths import data_dir
from mathlas.errors import (BundleCorruptError, BundleNotFoundError, BundleVersionError,
                            InstallError, MathlasError, UsageError)
from mathlas.releases.staging import DOWNLOADS, OLD_PREFIX, TMP_PREFIX, data_lock, replace_dir, talk

DEFAULT_BUNDLE = "informal"
BUNDLES = "bundles"
IN_USE = "in-use.json"
ARCHIVE_SUFFIX = ".tar.zst"



# --------------------------------------------------------------------------------------- places

def bundles_dir() -> Path:
    """Where installed bundles live: ``data_dir()/bundles``."""
    return data_dir() / BUNDLES


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


# --------------------------------------------------------------------------------------- versions in use

def in_use() -> dict[str, str]:
    """The versions chosen with ``use``: ``{name: version}`` from ``bundles/in-use.json``."""
    path = bundles_dir() / IN_USE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise InstallError(f"{path} is unreadable ({e}); delete it, then pick versions again with "
                           "`mathlas index use NAME@VERSION`") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} is not a JSON object; delete it, then pick versions again with "
                           "`mathlas index use NAME@VERSION`")
    return {str(k): str(v) for k, v in data.items()}


def use(name: str, version: str | None = None, *, quiet: bool = False) -> Path:
    """Make ``name@version`` the bundle a bare ``name`` means; with ``version`` None, go back to the
    highest installed version. The version must be installed. Returns the directory now in use."""
    for part in (name,) + ((version,) if version is not None else ()):
        if not SAFE_NAME.fullmatch(part):
            raise UsageError(f"{part!r} is not a bundle name or version; use NAME@VERSION")
    root = bundles_dir()
    with data_lock(root, quiet=quiet):
        same = [b for b in installed() if b.name == name]
        if version is not None and not any(b.version == version for b in same):
            have = ", ".join(b.version for b in same) or "none"
            raise BundleNotFoundError(f"{name}@{version} is not installed (installed versions of {name}: {have}); "
                                      + _how_to_install(name, version))
        _write_in_use(name, version)
    path = resolve_bundle(name, quiet=quiet)
    talk(f"{name} now means {path.name}" + ("" if version else " (the highest version)"), quiet)
    return path


def _how_to_install(name: str, version: str) -> str:
    """The next step for ``name@version``, not installed: the install command when a catalog may list
    it, else what the shipped catalog holds (a hint that leads to "not in the catalog" is a dead end).
    The remote catalog is not read here, only named."""
    listed = [r.version for r in shipped() if r.name == name]
    install = f"install it first with `mathlas index install {name}@{version}`"
    if version in listed:
        return install
    if remote_catalog():
        return f"{install} if {remote_catalog()} lists it"
    return (f"the shipped catalog does not list it either (its versions of {name}: {', '.join(listed) or 'none'}); "
            "`mathlas index list` shows what there is")


def _write_in_use(name: str, version: str | None) -> None:
    """Set or clear one entry of ``in-use.json`` (atomically; the caller holds the install lock)."""
    root = bundles_dir()
    data = in_use()
    if version is None:
        data.pop(name, None)
    else:
        data[name] = version
    # under TMP_PREFIX: a crash's leftover is swept by the next install (mathlas.releases.staging)
    with atomic_file(root / IN_USE, "w", fsync=True, tmp=root / f"{TMP_PREFIX}{IN_USE}-{os.getpid()}") as f:
        json.dump(dict(sorted(data.items())), f, indent=2)
        f.write("\n")


# --------------------------------------------------------------------------------------- name -> dir

def _looks_like_path(spec: str) -> bool:
    return os.sep in spec or "/" in spec or spec.startswith((".", "~"))


def split_spec(spec: str) -> tuple[str, str | None]:
    """``name@version`` -> (name, version); anything else -> (spec, None)."""
    name, at, version = spec.partition("@")
    if not at:
        return spec, None
    if not (SAFE_NAME.fullmatch(name) and SAFE_NAME.fullmatch(version)):
        raise UsageError(f"{spec!r} is not NAME@VERSION (e.g. {DEFAULT_BUNDLE}@1.0.0)")
    return name, version


def resolve_bundle(spec: str | os.PathLike | None = None, *, quiet: bool = False, install: bool = True) -> Path:
    """The directory of the bundle ``spec`` names.

    ``None`` means ``$MATHLAS_BUNDLE`` or ``DEFAULT_BUNDLE``. An existing directory is itself;
    ``name@version`` and ``name-version`` are that version; a bare ``name`` is the version chosen
    with ``use``, else its highest version among the installed and the shipped releases. A shipped
    release that is not installed yet is installed first (talk on stderr); remote catalogs are
    never consulted here. Raises ``BundleNotFoundError`` listing what is installed otherwise.
    ``install=False``: only an installed bundle (or a directory) answers; nothing is installed.
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
        raise UsageError("empty bundle name; give a bundle name, name@version or directory")
    as_path = Path(spec).expanduser()
    if as_path.is_dir() and (_looks_like_path(spec) or (as_path / MANIFEST).is_file()):
        return as_path.resolve()
    if _looks_like_path(spec):
        raise BundleNotFoundError(f"no bundle directory at {as_path}")

    found = _choose(spec, installed(), readable_shipped() if install else [])
    if isinstance(found, InstalledBundle):
        return found.path
    if found is not None:
        return _install_shipped(found, quiet=quiet)
    if as_path.is_dir():  # a directory in cwd without a manifest: let the reader say what is wrong
        return as_path.resolve()
    raise BundleNotFoundError(_not_found_message(spec))


def _choose(spec: str, bundles: list[InstalledBundle],
            ship: list[Release]) -> InstalledBundle | Release | None:
    """What ``spec`` (``name@version``, ``name-version`` or ``name``) means among the installed
    bundles and the shipped releases; an installed bundle wins over a shipped one."""
    name, version = split_spec(spec)
    if version is None:
        for b in bundles:
            if f"{b.name}-{b.version}" == spec or b.path.name == spec:
                return b
        for r in ship:
            if f"{r.name}-{r.version}" == spec:
                return r
        version = in_use().get(name)
        if version is not None:
            pinned = _choose(f"{name}@{version}", bundles, ship)
            if pinned is None:
                raise BundleNotFoundError(
                    f"{name} is set to version {version} (`mathlas index use`), but {name}@{version} is not "
                    f"installed; install it with `mathlas index install {name}@{version}` or pick another "
                    f"version with `mathlas index use {name}@VERSION` (installed: "
                    f"{', '.join(b.version for b in bundles if b.name == name) or 'none'})")
            return pinned
        same = [b for b in bundles if b.name == name]
        usable = [b for b in same if b.manifest is not None] or same
        best = max(usable, key=lambda b: version_key(b.version)) if usable else None
        newest = max((r for r in ship if r.name == name), key=lambda r: version_key(r.version), default=None)
        if newest is not None and (best is None or version_key(newest.version) > version_key(best.version)):
            return newest
        return best
    for b in bundles:
        if (b.name, b.version) == (name, version):
            return b
    return next((r for r in ship if (r.name, r.version) == (name, version)), None)


def in_use_version(name: str) -> str | None:
    """The version a bare ``name`` resolves to now (installed or shipped), without installing it."""
    try:
        found = _choose(name, installed(), readable_shipped())
    except MathlasError:
        return None
    return found.version if found is not None else None


def _install_shipped(release: Release, *, quiet: bool) -> Path:
    root = bundles_dir()
    with data_lock(root, quiet=quiet):
        # Another process may have installed it while we waited for the lock.
        for b in installed():
            if (b.name, b.version) == (release.name, release.version):
                return b.path
        what = "the default bundle" if release.name == DEFAULT_BUNDLE else "the shipped bundle"
        talk(f"installing {what} {release.name}-{release.version} into {root}", quiet)
        return install(release.url, expected_sha256=release.sha256, expected_size=release.size,
                       quiet=quiet, _announced=True, _expect=(release.name, release.version))


def _not_found_message(spec: str) -> str:
    have = [f"{b.name}@{b.version}" for b in installed()]
    ship = sorted({r.name for r in shipped()})
    msg = f"no bundle named {spec!r}; installed: {', '.join(have) if have else 'none'}"
    if ship:
        msg += f"; shipped with mathlas: {', '.join(ship)}"
    return msg + "; install one with `mathlas index install NAME[@VERSION] | URL | PATH`, or pass a bundle directory"


# --------------------------------------------------------------------------------------- install

def install_spec(spec: str, *, catalog: str | None = None, expected_sha256: str | None = None,
                 force: bool = False, quiet: bool = False) -> Path:
    """Install ``NAME[@VERSION]`` (through the catalogs, see ``mathlas.releases.catalog.find_release``), a URL or a path.

    A spec is a URL when it has a scheme, a path when it names an existing file, contains a
    slash or ends in ``.tar.zst``, and a catalog name otherwise."""
    spec = spec.strip()
    if not spec:
        raise UsageError("nothing to install; give NAME[@VERSION], a URL or a path to a .tar.zst")
    if is_url(spec) or _looks_like_path(spec) or spec.endswith(ARCHIVE_SUFFIX) or Path(spec).is_file():
        return install(spec, expected_sha256=expected_sha256, force=force, quiet=quiet)
    if expected_sha256 is not None:
        raise UsageError("--sha256 goes with a URL or a path; catalog entries carry their own sha256")
    name, version = split_spec(spec)
    if not SAFE_NAME.fullmatch(name):
        raise UsageError(f"{spec!r} is neither NAME[@VERSION], a URL nor an existing path")
    release = find_release(name, version, catalog=catalog, quiet=quiet)
    if not force:  # a release is immutable: no need to fetch what is already here
        for b in installed():
            if (b.name, b.version) == (release.name, release.version) and b.manifest is not None:
                talk(f"{b.name}@{b.version} is already installed at {b.path} (--force reinstalls it)", quiet)
                return b.path
    talk(f"installing {release.name}@{release.version} from {release.url}", quiet)
    return install(release.url, expected_sha256=release.sha256, expected_size=release.size, force=force,
                   quiet=quiet, _announced=False, _expect=(release.name, release.version))


def install(source: str | os.PathLike, *, expected_sha256: str | None = None,
            expected_size: int | None = None, force: bool = False, quiet: bool = False,
            _announced: bool = False, _expect: tuple[str, str] | None = None) -> Path:
    """Install a release archive (local path, ``file://``, ``http://`` or ``https://`` URL).

    The archive's sha256 must match ``expected_sha256`` or the ``<archive>.sha256`` sidecar fetched
    from the same place (and its size ``expected_size`` when given); downloads resume a ``.part``
    an interrupted earlier attempt left. The archive is then unpacked safely, fully verified, and
    renamed into ``bundles/<name>-<version>``. Installing the same bundle again is a no-op; a
    different bundle of the same name and version is refused unless ``force`` (which also repairs
    a damaged install). Returns the installed directory. Raises ``InstallError`` and leaves
    nothing behind on failure (except the ``.part`` of a download that was cut short).
    """
    if expected_sha256 is not None:
        expected_sha256 = expected_sha256.strip().lower()
        if not SHA256_HEX.fullmatch(expected_sha256):
            raise UsageError(f"--sha256 must be 64 hex digits, got {expected_sha256!r}")
    url, local = parse_source(source)
    label = url or str(local)
    if local is not None and not local.is_file():
        hint = (" (it is a bundle directory: use it in place, e.g. `--bundle DIR`)"
                if (local / MANIFEST).is_file() else "")
        raise InstallError(f"no release archive at {local}{hint}")
    root = bundles_dir()
    with data_lock(root, quiet=quiet):
        try:
            work = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=root))
        except OSError as e:
            raise InstallError(f"cannot write to {root}: {e}; set MATHLAS_DATA_DIR to a writable directory") from None
        try:
            if expected_sha256 is None:
                expected_sha256 = sidecar_sha256(url, local)
            if url is not None:
                local = fetch_archive(url, root / DOWNLOADS, work / "archive.tar.zst", expected_sha256, expected_size,
                                      quiet=quiet)
            else:
                assert local is not None
                check_sha256(label, local, expected_sha256, expected_size)
            staged = _unpack(local, work / "unpacked", label=label, quiet=quiet)
            try:  # the full check: exactly the listed files, their sha256, the counts against the tables
                manifest = verify(staged, checksums=True, fix="nothing was installed")
            except BundleNotFoundError as e:
                raise InstallError(f"{label} does not hold a bundle: {e}") from None
            except BundleCorruptError as e:
                raise InstallError(f"archive truncated, corrupt or hostile: {label}: {e}") from None
            except BundleVersionError as e:
                raise BundleVersionError(f"{label}: {e}") from None
            for part in (manifest.name, manifest.version):
                if not SAFE_NAME.fullmatch(part):
                    raise InstallError(f"{label}: bundle name/version {part!r} is not a safe directory name")
            if _expect is not None and (manifest.name, manifest.version) != _expect:
                raise InstallError(f"{label} holds {manifest.name}@{manifest.version}, but the catalog lists it as "
                                   f"{_expect[0]}@{_expect[1]}; the catalog is wrong, nothing was installed")
            return _commit(staged, root / f"{manifest.name}-{manifest.version}", force=force,
                           quiet=quiet or _announced)
        except OSError as e:  # disk full, permissions: still an install problem, still cleaned up
            raise InstallError(f"could not install {label} into {root}: {e}") from None
        finally:
            shutil.rmtree(work, ignore_errors=True)
            try:
                (root / DOWNLOADS).rmdir()  # only when no interrupted download waits there
            except OSError:
                pass


def remove(name_or_dir: str | os.PathLike) -> Path:
    """Delete an installed bundle (by ``name@version``, ``name-version``, a name installed in one
    version only, or its directory); returns its path. Forgets it in ``in-use.json``."""
    root = bundles_dir()
    path = Path(name_or_dir).expanduser()
    if not path.is_dir() or isinstance(name_or_dir, str) and not _looks_like_path(name_or_dir):
        spec = str(name_or_dir)
        bundles = installed()
        same = [b for b in bundles if b.name == spec]
        if len(same) > 1:
            raise UsageError(f"{spec} is installed in several versions ({', '.join(b.version for b in same)}); "
                             f"name one, e.g. `mathlas index remove {spec}@{same[-1].version}`")
        found = same[0] if same else _choose(spec, bundles, [])
        if not isinstance(found, InstalledBundle):
            raise BundleNotFoundError(_not_found_message(spec))
        path = found.path
    path = path.resolve()
    if path.parent != root.resolve():
        raise UsageError(f"{path} is not an installed bundle (not directly under {root}); delete it yourself")
    gone = next((b for b in installed() if b.path.resolve() == path), None)
    with data_lock(root, quiet=True):
        aside = root / f"{OLD_PREFIX}{path.name}-{os.getpid()}"
        os.rename(path, aside)
        shutil.rmtree(aside, ignore_errors=True)
        if gone is not None and in_use().get(gone.name) == gone.version:
            _write_in_use(gone.name, None)
    return path


def _commit(staged: Path, target: Path, *, force: bool, quiet: bool) -> Path:
    """Rename the verified ``staged`` directory to ``target`` (atomically swapping when forced)."""
    if not target.exists():
        os.rename(staged, target)
        talk(f"installed {target.name} into {target.parent}", quiet)
        return target
    same = _manifest_data(target) == _manifest_data(staged)
    if same and not force:
        talk(f"{target.name} is already installed at {target}", quiet)
        return target
    if not force:
        raise InstallError(f"{target} already exists and holds a different bundle of the same name and "
                           "version; pass --force (force=True) to replace it")
    replace_dir(staged, target, OLD_PREFIX)
    talk(f"replaced {target.name} at {target}", quiet)
    return target


def _manifest_data(root: Path) -> Any:
    try:
        return json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
