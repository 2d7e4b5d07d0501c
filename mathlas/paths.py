"""Where mathlas keeps what it installs and saves: one data directory, ``$MATHLAS_DATA_DIR`` or the
platform's per-user data directory (bundles, findings, OEIS data, funsearch databases live under it;
what is made from a bundle once is cached under its ``cache/``: ``bundle_cache_file``, ``save_cache``)."""
from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """``$MATHLAS_DATA_DIR``, else the platform's per-user data directory for mathlas."""
    env = os.environ.get("MATHLAS_DATA_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("mathlas"))


def _named_dirs() -> list[tuple[str, str]]:
    """The directories a server shows by name, not by path: (directory, its name)."""
    dirs = [(str(data_dir()), "$MATHLAS_DATA_DIR")]
    oeis = os.environ.get("MATHLAS_OEIS_DIR")
    if oeis:
        dirs.append((str(Path(oeis).expanduser()), "$MATHLAS_OEIS_DIR"))
    dirs.append((os.path.expanduser("~"), "~"))
    return dirs


def without_local_paths(text: str) -> str:
    """``text`` with the data directory written as ``$MATHLAS_DATA_DIR`` (and ``$MATHLAS_OEIS_DIR``,
    the home directory as ``~``): what a server says to a client (``mathlas serve``'s REST errors and
    every MCP answer over HTTP) shows no layout of the server's disk. The longest directory first,
    so a data directory under the home directory reads ``$MATHLAS_DATA_DIR``."""
    import re

    pairs = []
    for path, shown in _named_dirs():
        pairs += [(str(Path(path).resolve()), shown), (path, shown)]
    pairs = [(path.rstrip("/\\"), shown) for path, shown in pairs]
    for path, shown in sorted((p for p in pairs if len(p[0]) > 1), key=lambda p: -len(p[0])):
        # a whole directory name only: a home of /home/u leaves /home/user alone
        text = re.sub(re.escape(path) + r"(?![\w.-])", lambda _: shown, text)
    return text


CACHE_DIR = "cache"   # under the data directory: what is made from a bundle once and read back by the next process


def checksums(files, names) -> list:
    """The sha256 a manifest's ``files`` (entries as ``FileEntry`` or as the manifest's JSON) lists
    for each of ``names``, None for a file it does not list."""
    return [getattr(files.get(f), "sha256", None) or (files.get(f) or {}).get("sha256") for f in names]


def bundle_cache_file(kind: str, bundle, files, rules, suffix: str, extra=()) -> Path | None:
    """Where what ``kind`` makes from ``bundle`` is kept between processes:
    ``<data dir>/cache/<kind>/<name>-<version>-<hash><suffix>``, the hash of the bundle's name and
    version, the sha256 its manifest lists for ``files``, the source of ``rules`` (the files of the
    modules that make it) and ``extra`` (JSON), so that a changed bundle or rule names another file
    and the old one is never read again. None when that cannot be said (none of ``files`` has a
    checksum, a rule's source cannot be read): no cache, never a failed search."""
    import hashlib
    import json

    try:
        m = bundle.manifest
        sums = checksums(m.files, files)
        if not any(sums):
            return None
        source = [hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in rules]
        h = hashlib.sha256(json.dumps([m.name, m.version, sums, source, list(extra)]).encode()).hexdigest()[:20]
        return data_dir() / CACHE_DIR / kind / f"{m.name}-{m.version}-{h}{suffix}"
    except Exception:  # noqa: BLE001 - no cache, never a failed search
        return None


def save_cache(path: Path, data: bytes | str) -> None:
    """``data`` as the cache file ``path`` (``bundle_cache_file``), written atomically (a reader never
    sees half of it); an OSError (a read-only data directory) leaves no cache: the next process
    makes it again. The same bundle's caches of that kind made by other rules (an older mathlas)
    are removed, so that an upgrade does not leave one more file behind each time."""
    from glob import escape as glob_escape

    from mathlas.atomic import atomic_write

    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data)
    except OSError:
        return
    stem, _, _ = path.name.rpartition("-")   # <name>-<version>, the hash after the last "-"
    for old in path.parent.glob(f"{glob_escape(stem)}-*{path.suffix}"):
        if old != path and old.name.rpartition("-")[0] == stem:
            try:
                old.unlink()
            except OSError:
                pass
