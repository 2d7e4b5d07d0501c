"""Pack a finished bundle directory as a release: ``<name>-<version>.tar.zst`` plus ``.sha256``.

The archive is reproducible: the same bundle packs to the same bytes on any machine. Entries are
sorted (``manifest.json`` last, as it is written last), owned by uid/gid 0 with empty user and
group names, mode 0644 for files and 0755 for directories, and stamped with the manifest's
``created`` time. zstd's multi-threaded output does not depend on the number of workers, so the
compressor always runs with at least one worker thread.

Only the files the manifest lists (and the manifest) are packed, so a release carries exactly what
``verify`` checks; stray files in the build directory (a tantivy lock file) stay behind.

``out_dir/catalog.json`` lists every release packed there (docs/releases.md); ``mathlas.releases.catalog``
reads it to find shipped releases and, published next to the archives, as a remote catalog::

    {"releases": [{"name", "version", "format_version", "url", "size", "sha256",
                   "encoder": {"name", "dims", "pooling", ...}, "counts": {"documents", "sources"}}]}

``url`` is the archive's file name, which readers resolve against the catalog's own location, so
the directory can be published anywhere as it is; ``base_url`` writes absolute URLs instead, for
archives hosted apart from the catalog.

The other way round, for a build that takes a trained model out of a shipped release (a recipe's
``[encoder] release``, ``mathlas_build.recipe``): ``find_release`` picks a release from a catalog
(``name-version`` exactly, or ``name``: its newest version), and ``unpack`` checks the archive against
the catalog's sha256 and its ``.sha256`` sidecar and unpacks it once, verified file by file against
its manifest, into a directory named by that checksum.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tarfile
from datetime import datetime, UTC
from pathlib import Path
from typing import IO, Any

import zstandard

from mathlas.atomic import atomic_file, atomic_write
from mathlas.bundle import MANIFEST, Manifest, sha256_file, verify
from mathlas.errors import BundleCorruptError

ARCHIVE_SUFFIX = ".tar.zst"
SHA_SUFFIX = ".sha256"
CATALOG = "catalog.json"
_CHUNK = 1 << 20


def archive_name(manifest: Manifest) -> str:
    return f"{manifest.name}-{manifest.version}{ARCHIVE_SUFFIX}"


# What to do about a bundle directory whose files do not match its manifest: it was built here, so
# rebuild it (the runtime's own advice, "reinstall the bundle", is for installed bundles)
REBUILD = "rebuild the bundle (mathlas-build RECIPE --out DIR --force) or restore the changed file"


def pack(bundle_dir: Path, out_dir: Path, level: int = 19,
         base_url: str | None = None, *, quiet: bool = True) -> tuple[Path, Path]:
    """Verify ``bundle_dir`` and pack it into ``out_dir``; returns (archive, sha256 sidecar).

    Also adds (or replaces) the release's entry in ``out_dir/catalog.json``. Every file is written
    to a temporary name first and renamed, so an interrupted pack leaves no half archive. Unless
    ``quiet``, a line on stderr says what is being compressed (zstd 19 takes minutes on a large bundle).
    """
    bundle_dir, out_dir = Path(bundle_dir), Path(out_dir)
    # stray files stay behind (module docstring)
    manifest = verify(bundle_dir, checksums=True, exact=False, fix=REBUILD)
    out_dir.mkdir(parents=True, exist_ok=True)
    name = archive_name(manifest)
    archive = out_dir / name
    if not quiet:
        size = sum(e.size for e in manifest.files.values())
        print(f"[pack] {len(manifest.files):,} files, {size / 1e6:,.1f} MB -> {archive} (zstd {level})",
              file=sys.stderr, flush=True)
    sha_path = out_dir / (name + SHA_SUFFIX)

    with atomic_file(archive, fsync=True, tmp=out_dir / f".{name}.tmp-{os.getpid()}") as raw:
        hashing = _HashingWriter(raw)
        cctx = zstandard.ZstdCompressor(level=level, threads=max(1, os.cpu_count() or 1),
                                        write_checksum=True)
        with cctx.stream_writer(hashing, closefd=False) as zout:
            _write_tar(zout, bundle_dir, manifest)
    digest = hashing.hexdigest()
    _write_atomic(sha_path, f"{digest}  {name}\n")
    _update_catalog(out_dir, catalog_entry(manifest, archive, digest, base_url))
    return archive, sha_path


def catalog_entry(manifest: Manifest, archive: Path, sha256: str, base_url: str | None = None) -> dict[str, Any]:
    """The release catalog's entry for ``archive`` (which packs the bundle ``manifest`` describes)."""
    enc = manifest.encoder or {}
    encoder = {"name": enc.get("name") or enc.get("model") or enc.get("model_id"),
               "dims": enc.get("truncate_dims") or enc.get("dims") or (manifest.vectors or {}).get("dims")}
    encoder.update({k: enc[k] for k in ("pooling", "quantization", "license") if enc.get(k) is not None})
    counts = {"documents": manifest.count,
              "sources": {k: v.get("count") for k, v in sorted(manifest.sources.items())}}
    return {
        "name": manifest.name, "version": manifest.version, "format_version": manifest.format_version,
        "url": f"{base_url.rstrip('/')}/{archive.name}" if base_url else archive.name,
        "size": archive.stat().st_size, "sha256": sha256, "encoder": encoder, "counts": counts,
    }


def register(archive: Path, base_url: str | None = None) -> dict[str, Any]:
    """(Re)write the catalog entry of an already packed ``archive`` in its directory's catalog,
    from the manifest inside it and its bytes; its ``.sha256`` sidecar must agree. Returns it."""
    archive = Path(archive)
    digest = sha256_file(archive)
    sidecar = Path(str(archive) + SHA_SUFFIX)
    if sidecar.read_text(encoding="utf-8").split()[0].lower() != digest:
        raise ValueError(f"{sidecar} does not match {archive}: repack it")
    manifest = None
    with open(archive, "rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as z, \
            tarfile.open(fileobj=z, mode="r|") as tar:  # type: ignore[call-overload]
        for m in tar:
            if m.isreg() and m.name.count("/") == 1 and m.name.endswith("/" + MANIFEST):
                f = tar.extractfile(m)
                assert f is not None
                manifest = Manifest.from_dict(json.loads(f.read().decode("utf-8")))
                break
    if manifest is None or archive.name != archive_name(manifest):
        raise ValueError(f"{archive} is not a release archive packed by mathlas-build pack")
    entry = catalog_entry(manifest, archive, digest, base_url)
    _update_catalog(archive.parent, entry)
    return entry


def _write_tar(out: IO[bytes], root: Path, manifest: Manifest) -> None:
    top = f"{manifest.name}-{manifest.version}"
    mtime = _mtime(manifest.created)
    files = sorted(manifest.files)
    dirs = sorted({"/".join(rel.split("/")[:i]) for rel in files for i in range(1, rel.count("/") + 1)})

    def info(arcname: str, kind: bytes, size: int = 0) -> tarfile.TarInfo:
        ti = tarfile.TarInfo(arcname)
        ti.type, ti.size, ti.mtime = kind, size, mtime
        ti.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = ""
        return ti

    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:  # type: ignore[call-overload]
        tar.addfile(info(top, tarfile.DIRTYPE))
        for rel in sorted(dirs + files):
            arc = f"{top}/{rel}"
            if rel in manifest.files:
                with open(root / rel, "rb") as f:
                    tar.addfile(info(arc, tarfile.REGTYPE, manifest.files[rel].size), f)
            else:
                tar.addfile(info(arc, tarfile.DIRTYPE))
        with open(root / MANIFEST, "rb") as f:
            tar.addfile(info(f"{top}/{MANIFEST}", tarfile.REGTYPE, (root / MANIFEST).stat().st_size), f)


def _mtime(created: str) -> int:
    """The manifest's ``created`` (ISO 8601) as a Unix time; 0 when it cannot be read."""
    try:
        t = datetime.fromisoformat(str(created).replace("Z", "+00:00"))
    except ValueError:
        return 0
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return max(0, int(t.timestamp()))


class _HashingWriter:
    """A write-only file that hashes what passes through it."""

    def __init__(self, raw: IO[bytes]):
        self._raw, self._h = raw, hashlib.sha256()

    def write(self, data: Any) -> int:
        self._h.update(data)
        return self._raw.write(data)

    def flush(self) -> None:
        self._raw.flush()

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def _write_atomic(path: Path, text: str) -> None:
    atomic_write(path, text, tmp=path.with_name(f".{path.name}.tmp-{os.getpid()}"))


def _update_catalog(out_dir: Path, entry: dict[str, Any]) -> None:
    path = out_dir / CATALOG
    releases: list[dict[str, Any]] = []
    if path.is_file():
        releases = json.loads(path.read_text(encoding="utf-8")).get("releases", [])
    releases = [r for r in releases if (r.get("name"), r.get("version")) != (entry["name"], entry["version"])]
    releases.append(entry)
    releases.sort(key=lambda r: (r["name"], _version_key(r["version"])))
    _write_atomic(path, json.dumps({"releases": releases}, indent=2) + "\n")


def _version_key(version: str) -> tuple:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in version.split("."))


def find_release(catalog_dir: Path, wanted: str) -> tuple[dict[str, Any], Path]:
    """The entry of ``catalog_dir/catalog.json`` that ``wanted`` names and its local archive:
    ``"informal-1.3.0"`` that release, ``"informal"`` the newest version of that name. ``ValueError``
    (one line, listing what the catalog has) when there is none or its archive is not there."""
    catalog_dir = Path(catalog_dir)
    path = catalog_dir / CATALOG
    try:
        releases = json.loads(path.read_text(encoding="utf-8")).get("releases", [])
    except FileNotFoundError:
        raise ValueError(f"no release catalog at {path}") from None
    except (ValueError, AttributeError) as e:
        raise ValueError(f"{path} is not a release catalog ({e})") from None
    exact = [r for r in releases if f"{r.get('name')}-{r.get('version')}" == wanted]
    named = sorted((r for r in releases if r.get("name") == wanted), key=lambda r: _version_key(str(r["version"])))
    found = exact[-1] if exact else named[-1] if named else None
    if found is None:
        have = ", ".join(f"{r.get('name')}-{r.get('version')}" for r in releases) or "none"
        raise ValueError(f"release {wanted!r} is not in {path} (it has: {have})")
    url = str(found.get("url") or "")
    if "://" in url:
        raise ValueError(f"release {wanted!r} of {path} is hosted at {url}: a build reads local archives only "
                         f"(download it beside the catalog)")
    archive = catalog_dir / url
    if not archive.is_file():
        raise ValueError(f"{archive} (release {found['name']}-{found['version']} of {path}) is missing")
    return found, archive


def unpack(archive: Path, sha256: str, dest_root: Path, *, quiet: bool = False) -> Path:
    """The bundle inside the release ``archive``, unpacked into ``dest_root/<name>-<version>-<sha12>/``
    and returned. The archive must have ``sha256`` (the catalog's) and agree with its ``.sha256``
    sidecar; every file is checked against the manifest (``verify``) before the directory gets its
    name, so a directory of that name is a verified copy and is reused (sizes checked) on later calls;
    a copy damaged since (a file changed in size, or gone) is removed and unpacked again.
    Only plain files and folders under the archive's one top folder are unpacked."""
    archive, dest_root = Path(archive), Path(dest_root)
    got = sha256_file(archive)
    sidecar = Path(str(archive) + SHA_SUFFIX)
    if got != sha256 or (sidecar.is_file() and sidecar.read_text(encoding="utf-8").split()[0].lower() != got):
        raise ValueError(f"{archive} has sha256 {got}, its catalog or {sidecar.name} says otherwise "
                         f"({sha256}): the archive is damaged; restore it from the repository")
    top = archive.name[:-len(ARCHIVE_SUFFIX)] if archive.name.endswith(ARCHIVE_SUFFIX) else archive.stem
    dest = dest_root / f"{top}-{got[:12]}"
    if (dest / MANIFEST).is_file():
        try:
            verify(dest, checksums=False)
            return dest
        except (BundleCorruptError, ValueError, OSError) as e:   # a copy, not the release: made again
            if not quiet:
                print(f"[release] {dest} is damaged ({e}); unpacking {archive.name} again", file=sys.stderr,
                      flush=True)
            shutil.rmtree(dest)
    dest_root.mkdir(parents=True, exist_ok=True)
    tmp = dest_root / f".{dest.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    if not quiet:
        print(f"[release] unpacking {archive.name} into {dest}", file=sys.stderr, flush=True)
    try:
        with open(archive, "rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as z, \
                tarfile.open(fileobj=z, mode="r|") as tar:  # type: ignore[call-overload]
            for m in tar:
                rel = m.name[len(top) + 1:] if m.name.startswith(top + "/") else None
                if m.name == top and m.isdir():
                    continue
                parts = rel.split("/") if rel else []
                if not parts or any(p in ("", ".", "..") for p in parts) or not (m.isreg() or m.isdir()):
                    raise ValueError(f"{archive}: unexpected entry {m.name!r}: not a release packed by mathlas-build")
                target = tmp.joinpath(*parts)
                if m.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tar.extractfile(m)
                assert src is not None
                with open(target, "wb") as out:
                    shutil.copyfileobj(src, out, _CHUNK)
        verify(tmp, checksums=True)
        try:
            os.rename(tmp, dest)
        except OSError:  # another build unpacked the same archive first
            if not (dest / MANIFEST).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest
