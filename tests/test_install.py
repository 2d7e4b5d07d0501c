"""Releases end to end: pack a tiny bundle, install it every supported way, and refuse bad archives.

Everything runs against a temporary data directory (``MATHLAS_DATA_DIR``) and a temporary artifacts
directory (``MATHLAS_ARTIFACTS``); the HTTP tests talk to a real loopback server.
"""
from __future__ import annotations

import argparse
import hashlib
import http.server
import io
import json
import multiprocessing
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import threading
import urllib.parse
from pathlib import Path

import pytest
import zstandard

from mathlas.releases import archive as archive_mod
from mathlas.releases import catalog as catalog_mod
from mathlas.cli import index as cli_index
from mathlas.releases import install as inst
from mathlas.releases import staging
from mathlas.bundle import FORMAT_VERSION, Manifest, file_entries, verify, write_manifest
from mathlas.errors import BundleCorruptError, BundleNotFoundError, BundleVersionError, InstallError, UsageError
from mathlas_build.release import pack

pytestmark = pytest.mark.usefixtures("isolated")  # conftest.py: a scratch data directory, no proxy


# ------------------------------------------------------------------------------------------ helpers

_USEARCH: list[bytes] = []


def make_bundle(root: Path, name: str = "informal", version: str = "1.0.0", seed: int = 0, count: int = 3) -> Path:
    """A small bundle whose tables agree with its manifest (3 documents): a real parquet, real npy
    vectors, a real usearch index and a tantivy meta.json counting them; the rest is random bytes."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mathlas.bundle import usearch_index_class

    rng = random.Random(seed)
    for d in ("meta", "bm25", "vectors", "encoder"):
        (root / d).mkdir(parents=True)
    ids = [f"stacks:{i:04d}" for i in range(3)]
    pq.write_table(pa.table({"id": ids, "source": ["stacks", "stacks", "hott"], "kind": ["lemma"] * 3,
                             "body": [rng.randbytes(2_000).hex() for _ in ids]}), root / "meta" / "documents.parquet")
    (root / "bm25" / "meta.json").write_text('{"segments": [{"segment_id": "0001", "max_doc": 3, "deletes": null}]}\n')
    seg = root / "bm25" / "0001.idx"
    seg.write_bytes(rng.randbytes(20_000))
    seg.chmod(0o600)  # tantivy writes some files private; an install must still make them readable
    np.save(root / "vectors" / "float.i8.npy", np.zeros((3, 8), dtype=np.int8))
    np.save(root / "vectors" / "float.scale.npy", np.ones(3, dtype=np.float32))
    np.save(root / "vectors" / "center.npy", np.zeros(8, dtype=np.float32))
    if not _USEARCH:  # usearch's HNSW levels are random: make the index once, so equal seeds give equal bytes
        index = usearch_index_class()(ndim=8, metric="hamming", dtype="b1")
        index.add(np.arange(3), np.packbits(np.eye(3, 8, dtype=bool), axis=1))
        _USEARCH.append(bytes(index.save()))
    (root / "vectors" / "binary.usearch").write_bytes(_USEARCH[0])
    (root / "encoder" / "encoder.json").write_text('{"pooling": "mean", "dims": 8}\n')
    write_manifest(root, Manifest(
        name=name, version=version, created="2025-01-02T03:04:05Z", builder="test", count=count,
        sources={"stacks": {"count": 2, "license": "GFDL-1.2", "attribution": "The Stacks project"},
                 "hott": {"count": 1, "license": "CC-BY-SA-3.0", "attribution": "HoTT book authors"}},
        encoder={"name": "tiny-encoder", "pooling": "mean", "dims": 8},
        vectors={"dims": 8, "float_dtype": "i8"},
        files=file_entries(root)))
    return root


def leftovers() -> list[str]:
    """What is in the bundles directory besides the lock file."""
    root = inst.bundles_dir()
    return sorted(p.name for p in root.iterdir() if p.name != staging.LOCK_FILE) if root.exists() else []


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_sidecar(archive: Path) -> None:
    Path(str(archive) + ".sha256").write_text(f"{sha256(archive)}  {archive.name}\n")


def write_archive(path: Path, entries: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    """A hand-made .tar.zst (plus sidecar) holding exactly ``entries``."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in entries:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    path.write_bytes(zstandard.ZstdCompressor().compress(buf.getvalue()))
    write_sidecar(path)
    return path


def entry(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"x", linkname: str = "") -> tuple:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, linkname, 0o644
    return info, data


@pytest.fixture
def release(tmp_path) -> tuple[Path, Path]:
    """A packed informal-1.0.0 release: (archive, bundle source dir)."""
    src = make_bundle(tmp_path / "src")
    archive, _ = pack(src, tmp_path / "dist")
    return archive, src


# ------------------------------------------------------------------------------------------ pack

def test_pack_writes_archive_sidecar_and_catalog(release):
    archive, _ = release
    assert archive.name == "informal-1.0.0.tar.zst"
    digest, name = Path(str(archive) + ".sha256").read_text().split()
    assert (digest, name) == (sha256(archive), archive.name)
    catalog = json.loads((archive.parent / "catalog.json").read_text())
    assert catalog == {"releases": [{
        "name": "informal", "version": "1.0.0", "format_version": FORMAT_VERSION, "url": archive.name,
        "size": archive.stat().st_size, "sha256": digest,
        "encoder": {"name": "tiny-encoder", "dims": 8, "pooling": "mean"},
        "counts": {"documents": 3, "sources": {"hott": 1, "stacks": 2}}}]}
    with tarfile.open(fileobj=io.BytesIO(zstandard.ZstdDecompressor().stream_reader(
            archive.open("rb")).read()), mode="r:") as tar:
        members = tar.getmembers()
    assert {m.name.split("/")[0] for m in members} == {"informal-1.0.0"}
    assert members[-1].name == "informal-1.0.0/manifest.json"
    assert all((m.uid, m.gid, m.uname, m.gname) == (0, 0, "", "") for m in members)
    assert {m.mode for m in members if m.isreg()} == {0o644}
    assert {m.mode for m in members if m.isdir()} == {0o755}


def test_pack_is_deterministic(tmp_path, release):
    archive, src = release
    for p in src.rglob("*"):  # other mtimes and modes must not leak into the archive
        os.utime(p, (1_000_000, 1_000_000))
    (src / "meta" / "documents.parquet").chmod(0o600)
    (src / "stray.lock").write_text("not in the manifest")
    again, _ = pack(src, tmp_path / "dist2", level=19)
    assert again.read_bytes() == archive.read_bytes()


def test_pack_updates_catalog_entries(tmp_path, release):
    archive, _ = release
    pack(make_bundle(tmp_path / "v2", version="1.10.0"), archive.parent)
    pack(make_bundle(tmp_path / "v1b", version="1.0.0", seed=1), archive.parent)
    releases = json.loads((archive.parent / "catalog.json").read_text())["releases"]
    assert [r["version"] for r in releases] == ["1.0.0", "1.10.0"]
    assert releases[0]["sha256"] == sha256(archive)


# ------------------------------------------------------------------------------------------ install

def test_install_from_local_path(release):
    archive, src = release
    path = inst.install(archive, quiet=True)
    assert path == inst.bundles_dir() / "informal-1.0.0"
    assert verify(path).name == "informal"
    assert (path / "bm25" / "0001.idx").read_bytes() == (src / "bm25" / "0001.idx").read_bytes()
    assert (path / "bm25" / "0001.idx").stat().st_mode & 0o777 == 0o644
    assert path.stat().st_mode & 0o777 == 0o755
    assert leftovers() == ["informal-1.0.0"]
    assert [(b.name, b.version, b.path) for b in inst.installed()] == [("informal", "1.0.0", path)]


def test_install_from_file_url(release):
    archive, _ = release
    path = inst.install(archive.resolve().as_uri(), quiet=True)
    assert verify(path).version == "1.0.0"
    assert leftovers() == ["informal-1.0.0"]


def test_install_over_http(release, http_root):
    archive, _ = release
    www, base = http_root
    shutil.copy(archive, www)
    shutil.copy(str(archive) + ".sha256", www)
    path = inst.install(f"{base}/{archive.name}", quiet=True)
    assert verify(path).name == "informal"
    assert leftovers() == ["informal-1.0.0"]


def test_http_missing_sidecar_and_missing_archive(release, http_root):
    archive, _ = release
    www, base = http_root
    shutil.copy(archive, www)
    with pytest.raises(InstallError, match="--sha256"):
        inst.install(f"{base}/{archive.name}", quiet=True)
    with pytest.raises(InstallError, match="404"):
        inst.install(f"{base}/nothing.tar.zst", expected_sha256="0" * 64, quiet=True)
    assert leftovers() == []
    assert inst.install(f"{base}/{archive.name}", expected_sha256=sha256(archive), quiet=True).is_dir()


def test_the_library_is_silent_unless_logging_is_configured(release, capsys):
    # an application that embeds mathlas hears nothing it did not ask for: the library only logs
    import logging

    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("mathlas").handlers)
    archive, _ = release
    inst.install(archive)
    inst.install(archive)  # "already installed" is logged at INFO, not printed
    assert capsys.readouterr().err == ""


def test_reinstall_is_a_noop(release, capsys, cli_logging):
    archive, _ = release
    first = inst.install(archive, quiet=True)
    inode = first.stat().st_ino
    assert inst.install(archive) == first
    assert first.stat().st_ino == inode
    assert "already installed" in capsys.readouterr().err
    assert leftovers() == ["informal-1.0.0"]


def test_different_bundle_same_version_needs_force(tmp_path, release):
    archive, _ = release
    inst.install(archive, quiet=True)
    other, _ = pack(make_bundle(tmp_path / "other", seed=7), tmp_path / "other-dist")
    with pytest.raises(InstallError, match="--force"):
        inst.install(other, quiet=True)
    path = inst.install(other, force=True, quiet=True)
    assert (path / "meta" / "documents.parquet").read_bytes() == \
        (tmp_path / "other" / "meta" / "documents.parquet").read_bytes()
    assert leftovers() == ["informal-1.0.0"]


def test_tampered_archive_is_refused(tmp_path, release):
    archive, _ = release
    bad = tmp_path / "bad" / archive.name
    bad.parent.mkdir()
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(data)
    shutil.copy(str(archive) + ".sha256", str(bad) + ".sha256")
    with pytest.raises(InstallError, match="sha256 mismatch") as err:
        inst.install(bad, quiet=True)
    assert sha256(archive) in str(err.value) and sha256(bad) in str(err.value)
    assert leftovers() == []


@pytest.mark.parametrize("keep", ["half", "all but the last 2 bytes"])
def test_truncated_archive_is_refused(tmp_path, release, keep):
    archive, _ = release
    cut = tmp_path / "cut" / archive.name
    cut.parent.mkdir()
    data = archive.read_bytes()
    cut.write_bytes(data[: len(data) // 2] if keep == "half" else data[:-2])
    write_sidecar(cut)  # the hash matches the truncated bytes: only unpacking can notice
    with pytest.raises(InstallError, match="truncated or corrupt"):
        inst.install(cut, quiet=True)
    assert leftovers() == []


@pytest.mark.parametrize("entries, why", [
    ([entry("informal-1.0.0/", tarfile.DIRTYPE), entry("informal-1.0.0/../evil")], "'..'"),
    ([entry("../evil")], "'..'"),
    ([entry("/tmp/mathlas-evil-absolute")], "absolute"),
    ([entry("informal-1.0.0/", tarfile.DIRTYPE), entry("informal-1.0.0/link", tarfile.SYMTYPE, b"", "/etc/passwd")],
     "symlink"),
    ([entry("informal-1.0.0/a"), entry("informal-1.0.0/b", tarfile.LNKTYPE, b"", "informal-1.0.0/a")], "hard link"),
    ([entry("informal-1.0.0/dev", tarfile.CHRTYPE, b"")], "device"),
    ([entry("a/x"), entry("b/y")], "one top-level directory"),
    ([entry("loose-file")], "one top-level directory"),
])
def test_unsafe_archives_are_refused(tmp_path, entries, why):
    archive = write_archive(tmp_path / "evil.tar.zst", entries)
    with pytest.raises(InstallError, match=why):
        inst.install(archive, quiet=True)
    assert leftovers() == []
    assert not (tmp_path / "evil").exists() and not (inst.bundles_dir().parent / "evil").exists()
    assert not Path("/tmp/mathlas-evil-absolute").exists()


def test_archive_that_is_not_a_bundle_is_refused(tmp_path):
    archive = write_archive(tmp_path / "x-1.tar.zst", [entry("x-1/", tarfile.DIRTYPE), entry("x-1/readme")])
    with pytest.raises(InstallError, match="does not hold a bundle"):
        inst.install(archive, quiet=True)
    assert leftovers() == []


def test_missing_sidecar_is_refused(tmp_path, release):
    archive, _ = release
    lone = tmp_path / "lone" / archive.name
    lone.parent.mkdir()
    shutil.copy(archive, lone)
    with pytest.raises(InstallError, match="--sha256"):
        inst.install(lone, quiet=True)
    with pytest.raises(UsageError):
        inst.install(lone, expected_sha256="not-a-hash", quiet=True)
    assert leftovers() == []
    assert inst.install(lone, expected_sha256=sha256(archive).upper(), quiet=True).is_dir()


def test_verify_names_a_modified_file(release):
    archive, _ = release
    path = inst.install(archive, quiet=True)
    target = path / "meta" / "documents.parquet"
    data = bytearray(target.read_bytes())
    data[100] ^= 1
    target.write_bytes(data)
    verify(path, checksums=False)  # same size: only the checksum notices
    with pytest.raises(BundleCorruptError, match="meta/documents.parquet"):
        verify(path)


def test_stale_temp_dirs_are_cleaned_by_the_next_install(release):
    archive, _ = release
    inst.bundles_dir().mkdir(parents=True)
    (inst.bundles_dir() / ".tmp-crashed").mkdir()
    (inst.bundles_dir() / ".tmp-crashed" / "junk").write_text("x")
    assert inst.installed() == []
    inst.install(archive, quiet=True)
    assert leftovers() == ["informal-1.0.0"]


# ------------------------------------------------------------------------------------------ resolve

def test_resolve_by_name_version_and_path(tmp_path):
    for i, version in enumerate(["1.2.0", "1.10.0", "1.9.5"]):
        archive, _ = pack(make_bundle(tmp_path / version, version=version, seed=i), tmp_path / "dist")
        inst.install(archive, quiet=True)
    bundles = inst.bundles_dir()
    assert [b.version for b in inst.installed()] == ["1.2.0", "1.9.5", "1.10.0"]
    assert inst.resolve_bundle("informal") == bundles / "informal-1.10.0"
    assert inst.resolve_bundle("informal-1.2.0") == bundles / "informal-1.2.0"
    assert inst.resolve_bundle(tmp_path / "1.9.5") == (tmp_path / "1.9.5").resolve()
    assert inst.resolve_bundle(str(tmp_path / "1.9.5")) == (tmp_path / "1.9.5").resolve()
    os.environ["MATHLAS_BUNDLE"] = "informal-1.9.5"
    try:
        assert inst.resolve_bundle(None) == bundles / "informal-1.9.5"
    finally:
        del os.environ["MATHLAS_BUNDLE"]
    assert inst.resolve_bundle(None) == bundles / "informal-1.10.0"
    with pytest.raises(BundleNotFoundError) as err:
        inst.resolve_bundle("formal")
    assert "informal@1.10.0" in str(err.value) and "mathlas index install" in str(err.value)
    with pytest.raises(BundleNotFoundError, match="no bundle directory"):
        inst.resolve_bundle(str(tmp_path / "nowhere"))


def test_resolve_with_nothing_installed_says_how_to_install():
    with pytest.raises(BundleNotFoundError, match=r"installed: none.*mathlas index install"):
        inst.resolve_bundle(None)


def test_default_bundle_installs_itself_from_the_shipped_catalog(tmp_path, monkeypatch, capsys, cli_logging):
    art = tmp_path / "artifacts"
    pack(make_bundle(tmp_path / "src"), art)
    monkeypatch.setenv("MATHLAS_ARTIFACTS", str(art))
    path = inst.resolve_bundle(None)
    assert path == inst.bundles_dir() / "informal-1.0.0" and verify(path).name == "informal"
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"installing the default bundle informal-1.0.0 into {inst.bundles_dir()}"]
    assert inst.resolve_bundle("informal") == path
    assert capsys.readouterr().err == ""


def test_newer_shipped_release_wins_over_older_installed(tmp_path, monkeypatch):
    old, _ = pack(make_bundle(tmp_path / "old"), tmp_path / "old-dist")
    inst.install(old, quiet=True)
    art = tmp_path / "artifacts"
    pack(make_bundle(tmp_path / "new", version="1.1.0"), art)
    monkeypatch.setenv("MATHLAS_ARTIFACTS", str(art))
    assert inst.resolve_bundle("informal", quiet=True) == inst.bundles_dir() / "informal-1.1.0"
    assert inst.resolve_bundle("informal-1.0.0") == inst.bundles_dir() / "informal-1.0.0"


def _resolve_default_in_child(barrier, results):
    barrier.wait()
    try:
        results.put(str(inst.resolve_bundle(None, quiet=True)))
    except Exception as e:  # report, do not hang the parent
        results.put(f"error: {e!r}")


def _install_in_child(archive, barrier, results):
    barrier.wait()
    try:
        results.put(str(inst.install(archive, quiet=True)))
    except Exception as e:
        results.put(f"error: {e!r}")


def test_concurrent_installs_all_succeed(tmp_path, monkeypatch):
    art = tmp_path / "artifacts"
    archive, _ = pack(make_bundle(tmp_path / "src"), art)
    monkeypatch.setenv("MATHLAS_ARTIFACTS", str(art))
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=_resolve_default_in_child, args=(barrier, results)) for _ in range(2)]
    procs += [ctx.Process(target=_install_in_child, args=(archive, barrier, results)) for _ in range(2)]
    for p in procs:
        p.start()
    got = [results.get(timeout=30) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    assert got == [str(inst.bundles_dir() / "informal-1.0.0")] * 4
    assert leftovers() == ["informal-1.0.0"]


# ------------------------------------------------------------------------------------------ CLI

def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="mathlas")
    parser.add_argument("-q", "--quiet", action="store_true")
    cli_index.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return args.run(args)


def test_cli_install_list_info_verify_path(tmp_path, release, capsys, monkeypatch):
    archive, _ = release
    assert run_cli("-q", "index", "install", str(archive)) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path == inst.bundles_dir() / "informal-1.0.0"

    art = tmp_path / "artifacts"
    pack(make_bundle(tmp_path / "formal", name="formal", version="0.1.0"), art)
    monkeypatch.setenv("MATHLAS_ARTIFACTS", str(art))
    run_cli("index", "list", "--json")
    rows = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["status"], r["documents"], r["in_use"]) for r in rows] == \
        [("formal", "shipped", 3, True), ("informal", "installed", 3, True)]
    run_cli("index", "list")
    table = capsys.readouterr().out
    assert "informal" in table and "shipped, not installed" in table

    run_cli("index", "info", "informal", "--json")
    info = json.loads(capsys.readouterr().out)
    assert (info["name"], info["count"], info["path"]) == ("informal", 3, str(path))
    assert info["sources"]["stacks"]["license"] == "GFDL-1.2"
    run_cli("index", "info")
    text = capsys.readouterr().out
    assert "The Stacks project" in text and "tiny-encoder, 8 dims, mean pooling" in text

    assert run_cli("index", "verify", "informal-1.0.0") == 0
    assert capsys.readouterr().out.startswith("OK informal-1.0.0")
    assert run_cli("index", "path") == 0
    assert capsys.readouterr().out.strip() == str(path)

    (path / "encoder" / "encoder.json").write_text('{"pooling": "mean", "dims": 9}\n')
    capsys.readouterr()
    assert run_cli("index", "verify") == 1
    out = capsys.readouterr()
    assert out.out == "" and out.err == ("mathlas: bundle informal-1.0.0: file encoder/encoder.json does not match "
                                         "its sha256; reinstall the bundle\n")

    assert run_cli("index", "remove", "informal") == 0
    assert leftovers() == []


def test_sidecar_may_list_several_files(tmp_path, release):
    archive, _ = release
    sums = tmp_path / "sums" / archive.name
    sums.parent.mkdir()
    shutil.copy(archive, sums)
    Path(str(sums) + ".sha256").write_text(f"{'0' * 64}  other.tar.zst\n{sha256(archive)} *{archive.name}\n")
    assert inst.install(sums, quiet=True).is_dir()


def test_install_needs_an_archive_not_a_directory(release):
    _, src = release
    with pytest.raises(InstallError, match="bundle directory"):
        inst.install(src, quiet=True)
    with pytest.raises(InstallError, match="no release archive"):
        inst.install(src / "missing.tar.zst", quiet=True)
    with pytest.raises(InstallError, match="only http, https, file"):
        inst.install("ftp://example.org/x.tar.zst", quiet=True)


# ------------------------------------------------------------------------------------------ catalogs, resume

class ReleaseServer:
    """A real loopback HTTP server for release files that honours ``Range: bytes=N-`` (206, 416),
    logs every request's path and Range header, and can misbehave on purpose: drop the connection
    after ``drop_after`` bytes of an archive (``drops`` times), or ignore Range."""

    def __init__(self, root: Path):
        self.root, self.requests = root, []
        self.drop_after, self.drops, self.ignore_range = 6_000, 0, False
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                rng = self.headers.get("Range")
                owner.requests.append((self.path, rng))
                path = owner.root / urllib.parse.unquote(self.path.lstrip("/"))
                if not path.is_file():
                    self.send_error(404)
                    return
                data, start = path.read_bytes(), 0
                if rng and not owner.ignore_range:
                    start = int(re.fullmatch(r"bytes=(\d+)-", rng).group(1))
                    if start >= len(data):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(data)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                body = data[start:]
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if owner.drops and path.name.endswith(".tar.zst"):
                    owner.drops -= 1
                    body = body[:owner.drop_after]  # then the connection closes: a short body
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def archive_requests(self) -> list[tuple[str, str | None]]:
        return [r for r in self.requests if r[0].endswith(".tar.zst")]


@pytest.fixture
def server(tmp_path):
    www = tmp_path / "releases"
    www.mkdir()
    srv = ReleaseServer(www)
    thread = threading.Thread(target=srv.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.server.shutdown()
        srv.server.server_close()


@pytest.fixture
def published(tmp_path, server) -> Path:
    """informal 1.0.0 and 1.1.0 packed straight into the server's directory (with catalog.json)."""
    for i, version in enumerate(["1.0.0", "1.1.0"]):
        pack(make_bundle(tmp_path / f"pub-{version}", version=version, seed=10 + i), server.root)
    assert (server.root / "informal-1.0.0.tar.zst").stat().st_size > 3 * server.drop_after
    return server.root


def edit_catalog(root: Path, **changes) -> None:
    """Change fields of every entry of ``root/catalog.json``."""
    path = root / "catalog.json"
    data = json.loads(path.read_text())
    for r in data["releases"]:
        r.update(changes)
    path.write_text(json.dumps(data))


def test_read_catalog_resolves_urls_and_refuses_bad_entries(published, server):
    on_disk = catalog_mod.read_catalog(published)  # a directory means its catalog.json
    assert [r.url for r in on_disk] == [str(published / "informal-1.0.0.tar.zst"),
                                        str(published / "informal-1.1.0.tar.zst")]
    assert on_disk[0].archive == published / "informal-1.0.0.tar.zst"
    remote = catalog_mod.read_catalog(f"{server.url}/catalog.json")
    assert [r.url for r in remote] == [f"{server.url}/informal-1.0.0.tar.zst", f"{server.url}/informal-1.1.0.tar.zst"]
    assert remote[0].archive is None and remote[0].sha256 == on_disk[0].sha256
    data = json.loads((published / "catalog.json").read_text())
    data["releases"][0]["file"] = data["releases"][0].pop("url")  # catalogs from before "url"
    (published / "catalog.json").write_text(json.dumps(data))
    assert catalog_mod.read_catalog(published)[0].url == on_disk[0].url
    for bad in ({"version": "../up"}, {"sha256": "abc"}):
        edit_catalog(published, **bad)
        with pytest.raises(InstallError, match="unreadable release catalog"):
            catalog_mod.read_catalog(published)
    with pytest.raises(InstallError, match="no release catalog"):
        catalog_mod.read_catalog(published / "missing.json")


def test_catalog_module_does_not_import_install():
    code = "import sys, mathlas.releases.catalog; sys.exit('mathlas.releases.install' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_pack_base_url_and_register(tmp_path, release):
    archive, src = release
    catalog = json.loads((archive.parent / "catalog.json").read_text())
    (archive.parent / "catalog.json").unlink()
    from mathlas_build.release import register
    assert register(archive) == catalog["releases"][0]
    assert json.loads((archive.parent / "catalog.json").read_text()) == catalog
    pack(src, tmp_path / "hosted", base_url="https://example.org/dl/")
    entry = json.loads((tmp_path / "hosted" / "catalog.json").read_text())["releases"][0]
    assert entry["url"] == "https://example.org/dl/informal-1.0.0.tar.zst"


def test_interrupted_download_resumes_with_a_range_request(published, server):
    server.drops = 1
    path = inst.install_spec(f"{server.url}/informal-1.0.0.tar.zst", quiet=True)
    assert server.archive_requests() == [("/informal-1.0.0.tar.zst", None),
                                         ("/informal-1.0.0.tar.zst", f"bytes={server.drop_after}-")]
    assert verify(path).version == "1.0.0"
    assert leftovers() == ["informal-1.0.0"]


def test_interrupted_download_resumes_in_a_later_run(published, server, monkeypatch):
    monkeypatch.setattr(archive_mod, "ATTEMPTS", 1)  # as if the process died after the first try
    server.drops = 1
    catalog = f"{server.url}/catalog.json"
    with pytest.raises(InstallError, match="run the same command again to resume"):
        inst.install_spec("informal@1.0.0", catalog=catalog, quiet=True)
    assert leftovers() == [".downloads"]
    (part,) = (inst.bundles_dir() / ".downloads").iterdir()
    assert part.name.endswith(".part") and part.stat().st_size == server.drop_after
    path = inst.install_spec("informal@1.0.0", catalog=catalog, quiet=True)
    assert server.archive_requests()[-1] == ("/informal-1.0.0.tar.zst", f"bytes={server.drop_after}-")
    assert verify(path).version == "1.0.0"
    assert leftovers() == ["informal-1.0.0"]


def test_a_resumed_part_that_does_not_verify_is_discarded(published, server, monkeypatch):
    monkeypatch.setattr(archive_mod, "ATTEMPTS", 1)
    server.drops = 1
    catalog = f"{server.url}/catalog.json"
    with pytest.raises(InstallError, match="resume"):
        inst.install_spec("informal@1.0.0", catalog=catalog, quiet=True)
    (part,) = (inst.bundles_dir() / ".downloads").iterdir()
    part.write_bytes(random.Random(5).randbytes(server.drop_after))  # a damaged partial download
    with pytest.raises(InstallError, match="sha256 mismatch"):
        inst.install_spec("informal@1.0.0", catalog=catalog, quiet=True)
    assert server.archive_requests()[-1][1] == f"bytes={server.drop_after}-"
    assert leftovers() == []  # the .part went with the failed check
    assert inst.install_spec("informal@1.0.0", catalog=catalog, quiet=True).is_dir()
    assert server.archive_requests()[-1] == ("/informal-1.0.0.tar.zst", None)  # started over


def test_a_server_ignoring_range_starts_the_download_over(published, server):
    server.drops, server.ignore_range = 1, True
    path = inst.install_spec(f"{server.url}/informal-1.1.0.tar.zst", quiet=True)
    assert [r[1] for r in server.archive_requests()] == [None, f"bytes={server.drop_after}-"]
    assert verify(path).version == "1.1.0"
    assert leftovers() == ["informal-1.1.0"]


def test_tampered_archive_over_http_is_refused_and_leaves_nothing(published, server):
    archive = published / "informal-1.0.0.tar.zst"
    data = bytearray(archive.read_bytes())
    data[len(data) // 3] ^= 0x01
    archive.write_bytes(data)
    with pytest.raises(InstallError, match="sha256 mismatch"):
        inst.install_spec("informal@1.0.0", catalog=f"{server.url}/catalog.json", quiet=True)
    assert leftovers() == []
    with pytest.raises(InstallError, match="sha256 mismatch"):  # the sidecar route refuses it too
        inst.install_spec(f"{server.url}/informal-1.0.0.tar.zst", quiet=True)
    assert leftovers() == []


def test_truncated_archive_over_http_is_refused_and_leaves_nothing(published, server):
    archive = published / "informal-1.0.0.tar.zst"
    archive.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    with pytest.raises(InstallError, match="the catalog says"):  # served whole, but too short
        inst.install_spec("informal@1.0.0", catalog=f"{server.url}/catalog.json", quiet=True)
    assert leftovers() == []
    write_sidecar(archive)  # a sidecar that matches the cut bytes: only unpacking can notice
    with pytest.raises(InstallError, match="truncated or corrupt"):
        inst.install_spec(f"{server.url}/informal-1.0.0.tar.zst", quiet=True)
    assert leftovers() == []


def test_catalog_entry_of_a_newer_format_is_refused(published, server):
    newer = FORMAT_VERSION + 1
    edit_catalog(published, format_version=newer)
    catalog = f"{server.url}/catalog.json"
    for spec in ("informal@1.1.0", "informal"):
        with pytest.raises(BundleVersionError) as err:
            inst.install_spec(spec, catalog=catalog, quiet=True)
        msg = str(err.value)
        assert f"format_version {newer}" in msg and f"reads format_version 1 to {FORMAT_VERSION}" in msg
        assert "upgrade mathlas" in msg and "informal@1.1.0" in msg
    assert server.archive_requests() == [] and leftovers() == []


def test_newest_readable_release_is_chosen_over_a_newer_format(published, server, capsys, cli_logging):
    data = json.loads((published / "catalog.json").read_text())
    data["releases"][1]["format_version"] = FORMAT_VERSION + 1  # 1.1.0 needs a newer mathlas
    (published / "catalog.json").write_text(json.dumps(data))
    path = inst.install_spec("informal", catalog=f"{server.url}/catalog.json")
    assert path.name == "informal-1.0.0"
    assert "1.1.0 need another format version" in capsys.readouterr().err


def test_unknown_name_or_version_lists_what_the_catalog_has(published, server):
    catalog = f"{server.url}/catalog.json"
    with pytest.raises(BundleNotFoundError, match=r"informal@2\.0\.0 is not in .*available versions of "
                                                  r"informal: 1\.0\.0, 1\.1\.0"):
        inst.install_spec("informal@2.0.0", catalog=catalog, quiet=True)
    with pytest.raises(BundleNotFoundError, match=r"no release named 'formal'.*releases: informal"):
        inst.install_spec("formal", catalog=catalog, quiet=True)
    with pytest.raises(UsageError, match="NAME@VERSION"):
        inst.install_spec("informal@", catalog=catalog, quiet=True)
    with pytest.raises(UsageError, match="--sha256"):
        inst.install_spec("informal", catalog=catalog, expected_sha256="0" * 64, quiet=True)
    assert server.archive_requests() == [] and leftovers() == []


def test_catalog_that_misnames_its_archive_is_refused(published, server):
    data = json.loads((published / "catalog.json").read_text())
    data["releases"][1]["url"] = data["releases"][0]["url"]  # "1.1.0" points at 1.0.0's archive
    for key in ("size", "sha256"):
        data["releases"][1][key] = data["releases"][0][key]
    (published / "catalog.json").write_text(json.dumps(data))
    with pytest.raises(InstallError, match="catalog lists it as informal@1.1.0"):
        inst.install_spec("informal@1.1.0", catalog=f"{server.url}/catalog.json", quiet=True)
    assert leftovers() == []


def test_shipped_and_remote_catalogs_install_versions_side_by_side(tmp_path, published, server, monkeypatch):
    art = tmp_path / "artifacts"
    pack(make_bundle(tmp_path / "ship", version="1.0.0", seed=10), art)  # the same bytes as published 1.0.0
    monkeypatch.setenv("MATHLAS_ARTIFACTS", str(art))
    old = inst.install_spec("informal", quiet=True)  # only the shipped catalog: 1.0.0, from disk
    assert old.name == "informal-1.0.0" and server.requests == []
    monkeypatch.setenv("MATHLAS_CATALOG", f"{server.url}/catalog.json")
    assert inst.install_spec("informal@1.0.0", force=True, quiet=True) == old
    assert server.archive_requests() == []  # same sha256 in both catalogs: the shipped file wins
    new = inst.install_spec("informal", quiet=True)
    assert new.name == "informal-1.1.0" and server.archive_requests() == [("/informal-1.1.0.tar.zst", None)]
    assert inst.install_spec("informal@1.1.0", quiet=True) == new  # installed already: nothing fetched
    assert len(server.archive_requests()) == 1
    assert [(b.version, b.path) for b in inst.installed()] == [("1.0.0", old), ("1.1.0", new)]
    assert inst.resolve_bundle("informal") == new
    assert leftovers() == ["informal-1.0.0", "informal-1.1.0"]


def test_use_switches_what_a_bare_name_means(tmp_path, monkeypatch, capsys):
    for i, version in enumerate(["1.0.0", "1.10.0"]):
        inst.install(pack(make_bundle(tmp_path / version, version=version, seed=i), tmp_path / "dist")[0],
                     quiet=True)
    bundles = inst.bundles_dir()
    assert inst.resolve_bundle("informal") == bundles / "informal-1.10.0"
    assert inst.use("informal", "1.0.0", quiet=True) == bundles / "informal-1.0.0"
    assert json.loads((bundles / "in-use.json").read_text()) == {"informal": "1.0.0"}
    assert inst.resolve_bundle("informal") == inst.resolve_bundle(None) == bundles / "informal-1.0.0"
    assert inst.resolve_bundle("informal@1.10.0") == bundles / "informal-1.10.0"
    art = tmp_path / "artifacts"  # a newer shipped release does not override the choice
    pack(make_bundle(tmp_path / "2.0.0", version="2.0.0", seed=3), art)
    monkeypatch.setenv("MATHLAS_ARTIFACTS", str(art))
    assert inst.resolve_bundle("informal") == bundles / "informal-1.0.0"
    monkeypatch.delenv("MATHLAS_CATALOG", raising=False)
    with pytest.raises(BundleNotFoundError, match=r"informal@3\.0 is not installed.*1\.0\.0, 1\.10\.0") as e:
        inst.use("informal", "3.0", quiet=True)
    # not "install it first": `index install informal@3.0` would fail too (not in the catalog)
    assert str(e.value).endswith("the shipped catalog does not list it either (its versions of informal: 2.0.0); "
                                 "`mathlas index list` shows what there is")
    with pytest.raises(BundleNotFoundError, match=r"install it first with `mathlas index install informal@2\.0\.0`$"):
        inst.use("informal", "2.0.0", quiet=True)  # shipped, not installed

    assert run_cli("index", "list", "--json") == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["version"], r["status"], r["in_use"], r["chosen"]) for r in rows] == [
        ("1.0.0", "installed", True, True), ("1.10.0", "installed", False, False),
        ("2.0.0", "shipped", False, False)]
    run_cli("index", "list")
    table = capsys.readouterr().out.splitlines()
    assert table[1].startswith("*") and "informal" in table[1] and "1.0.0" in table[1]
    assert "index use" in table[1] and not table[2].startswith("*")

    assert run_cli("index", "use", "informal", "-q") == 0  # back to the highest: the shipped 2.0.0
    assert capsys.readouterr().out.strip() == str(bundles / "informal-2.0.0")
    assert json.loads((bundles / "in-use.json").read_text()) == {}
    assert run_cli("index", "use", "informal@1.10.0", "-q") == 0
    with pytest.raises(UsageError, match="several versions"):
        run_cli("index", "remove", "informal")
    assert run_cli("index", "remove", "informal@1.10.0") == 0  # removing the chosen one forgets it
    assert json.loads((bundles / "in-use.json").read_text()) == {}
    assert inst.resolve_bundle("informal") == bundles / "informal-2.0.0"


def test_a_chosen_version_that_vanished_says_how_to_fix_it(release):
    path = inst.install(release[0], quiet=True)
    inst.use("informal", "1.0.0", quiet=True)
    shutil.rmtree(path)  # deleted by hand, not with `index remove`
    with pytest.raises(BundleNotFoundError, match=r"set to version 1\.0\.0.*mathlas index install informal@1\.0\.0"):
        inst.resolve_bundle("informal")


def test_cli_installs_from_a_catalog_url(published, server, capsys):
    assert run_cli("index", "install", "informal@1.0.0", "--catalog", f"{server.url}/catalog.json", "-q") == 0
    assert capsys.readouterr().out.strip() == str(inst.bundles_dir() / "informal-1.0.0")
    run_cli("index", "list", "--json", "--catalog", f"{server.url}/catalog.json")
    rows = json.loads(capsys.readouterr().out)
    assert [(r["version"], r["status"], r["in_use"]) for r in rows] == [
        ("1.0.0", "installed", True), ("1.1.0", "available", False)]


@pytest.mark.parametrize("tty", [True, False])
def test_progress_bar_only_on_a_terminal(published, server, monkeypatch, tty, cli_logging):
    class Stderr(io.StringIO):
        def isatty(self):
            return tty

    monkeypatch.setattr(archive_mod, "_BAR_MIN_BYTES", 0)
    err = Stderr()
    monkeypatch.setattr(sys, "stderr", err)
    inst.install_spec(f"{server.url}/informal-1.0.0.tar.zst")
    shown = "downloading informal-1.0.0.tar.zst:" in err.getvalue()
    assert shown == tty
    assert "installed informal-1.0.0" in err.getvalue()
