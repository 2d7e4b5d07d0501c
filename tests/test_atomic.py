"""mathlas.atomic (a file written to a temporary name and renamed) and the per-bundle cache files of
mathlas.paths (``bundle_cache_file``, ``save_cache``) that the name cores and the groups are kept in."""
from __future__ import annotations

import os
import sys
from types import SimpleNamespace

import pytest

from mathlas.atomic import atomic_file, atomic_write
from mathlas.bundle import FileEntry
from mathlas.paths import bundle_cache_file, save_cache


class Boom(Exception):
    pass


@pytest.mark.parametrize("named_tmp", [False, True])
def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path, named_tmp):
    target = tmp_path / "state.json"
    target.write_text("old", encoding="utf-8")
    tmp = tmp_path / "state.json.tmp" if named_tmp else None
    with pytest.raises(Boom), atomic_file(target, "w", fsync=True, tmp=tmp) as f:
        f.write("half of the new")
        raise Boom
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]
    atomic_write(target, "new", tmp=tmp)
    assert target.read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_the_temporary_file_is_beside_the_target_and_fsynced_when_asked(tmp_path, monkeypatch):
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    target = tmp_path / "a.bin"
    with atomic_file(target, prefix=".a-", suffix=".part") as f:
        seen = [p.name for p in tmp_path.iterdir()]
        f.write(b"\x00\x01")
    assert len(seen) == 1 and seen[0].startswith(".a-") and seen[0].endswith(".part")
    assert target.read_bytes() == b"\x00\x01" and not synced
    atomic_write(target, b"\x02", fsync=True)
    assert target.read_bytes() == b"\x02" and len(synced) == 1
    with pytest.raises(ValueError):
        with atomic_file(target, "a"):
            pass


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_permissions_as_mkstemp_or_as_open(tmp_path):
    umask = os.umask(0o022)
    try:
        atomic_write(tmp_path / "private", b"x")                              # mkstemp's 0600
        atomic_write(tmp_path / "shared", b"x", tmp=tmp_path / "shared.tmp")  # open()'s 0666 & ~umask
    finally:
        os.umask(umask)
    assert (tmp_path / "private").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "shared").stat().st_mode & 0o777 == 0o644


def _bundle(meta_sha: str | None, name: str = "b", version: str = "1.0"):
    files = {"meta/documents.parquet": FileEntry(size=1, sha256=meta_sha)} if meta_sha else {}
    return SimpleNamespace(manifest=SimpleNamespace(name=name, version=version, files=files))


def test_a_bundle_cache_file_changes_with_the_bundle_and_its_rules(tmp_path, monkeypatch):
    monkeypatch.setenv("MATHLAS_DATA_DIR", str(tmp_path / "data"))
    rules = tmp_path / "rules.py"
    rules.write_text("RULE = 1\n", encoding="utf-8")
    files = ("meta/documents.parquet", "meta/documents.arrow")

    def where(bundle, extra=()):
        return bundle_cache_file("things", bundle, files, [rules], ".txt", extra)

    first = where(_bundle("a" * 64))
    assert first is not None and first.parent == tmp_path / "data" / "cache" / "things"
    assert first.name.startswith("b-1.0-") and first.suffix == ".txt"
    assert where(_bundle("a" * 64)) == first                    # the same bundle and rules: the same file
    assert where(_bundle("b" * 64)) != first                    # another checksum
    assert where(_bundle("a" * 64, version="1.1")) != first
    assert where(_bundle("a" * 64), extra=["partner", "2.0"]) != first
    manifest_json = SimpleNamespace(manifest=SimpleNamespace(   # entries as the manifest's JSON holds them
        name="b", version="1.0", files={"meta/documents.parquet": {"size": 1, "sha256": "a" * 64}}))
    assert where(manifest_json) == first
    rules.write_text("RULE = 2\n", encoding="utf-8")
    assert where(_bundle("a" * 64)) not in (None, first)        # a changed rule
    assert where(_bundle(None)) is None                         # no checksum: no cache
    rules.unlink()
    assert where(_bundle("a" * 64)) is None                     # a rule's source unreadable: no cache


def test_save_cache_writes_or_leaves_no_cache(tmp_path):
    path = tmp_path / "cache" / "things" / "b-1.0-x.txt"
    save_cache(path, "cores\n")
    assert path.read_text(encoding="utf-8") == "cores\n"
    blocked = tmp_path / "file"
    blocked.write_text("", encoding="utf-8")
    save_cache(blocked / "things" / "b.npz", b"x")             # the directory cannot be made: no error
    assert blocked.read_text(encoding="utf-8") == ""


def test_save_cache_removes_the_same_bundles_older_caches_of_that_kind(tmp_path):
    from mathlas.paths import save_cache

    kind = tmp_path / "cache" / "shapes"
    kind.mkdir(parents=True)
    old = kind / "mathlib-1.6.0+8f9d9cff-aaaa.npz"
    other_version = kind / "mathlib-1.6.0+8f9d9cff-rc1-bbbb.npz"   # another version whose name extends it
    other_bundle = kind / "toy-0.1.0-cccc.npz"
    other_kind = kind / "mathlib-1.6.0+8f9d9cff-dddd.txt"
    for f in (old, other_version, other_bundle, other_kind):
        f.write_bytes(b"x")
    new = kind / "mathlib-1.6.0+8f9d9cff-eeee.npz"
    save_cache(new, b"new")
    assert new.read_bytes() == b"new" and not old.exists()
    assert other_version.exists() and other_bundle.exists() and other_kind.exists()
