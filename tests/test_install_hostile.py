"""Hostile archives and bundles (issue 20, items 6 and 7): a zstd bomb, files the manifest does not
list, a manifest naming files outside the bundle, a document count that disagrees with the tables.

The rule under test (docs/bundle-format.md): a bundle holds exactly the files its manifest lists,
inside itself; an archive unpacks to no more than its manifest declares. Every attack here was
accepted before the rule existed. The bombs use a small cap (``MATHLAS_MAX_UNPACKED``) so they stay
fast: 64 MiB of zeros against 8 MiB.
"""
from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import zstandard

from mathlas import bundle as fmt
from mathlas.bundle import file_entries, read_manifest, verify, write_manifest
from mathlas.errors import BundleCorruptError, InstallError
from mathlas.releases import archive as archive_mod
from mathlas.releases import install as inst
from mathlas_build.release import pack
from test_install import leftovers, make_bundle, run_cli, write_sidecar

pytestmark = pytest.mark.usefixtures("isolated")  # conftest.py: a scratch data directory, no proxy

CAP = 8 << 20
BOMB = 64 << 20


class _Zeros(io.RawIOBase):
    """``n`` zero bytes, read in pieces (a bomb is never held in memory by the test either)."""

    def __init__(self, n: int):
        self.left = n

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        k = min(len(b), self.left, 1 << 20)
        b[:k] = bytes(k)
        self.left -= k
        return k


def _tar_bytes(archive: Path) -> bytes:
    with open(archive, "rb") as f:
        return zstandard.ZstdDecompressor().stream_reader(f).read()


def _write_zst(path: Path, *pieces) -> Path:
    """Compress ``pieces`` (bytes, or a number of zero bytes) into ``path`` as one zstd stream, with
    a matching sidecar: the attacker controls the archive and its checksum alike."""
    with open(path, "wb") as raw, zstandard.ZstdCompressor(level=3).stream_writer(raw, closefd=False) as z:
        for piece in pieces:
            if isinstance(piece, int):
                shutil.copyfileobj(_Zeros(piece), z, 1 << 20)
            else:
                z.write(piece)
    write_sidecar(path)
    return path


def _retar(src: Path, path: Path, *, top: str = "informal-1.0.0", extra: dict[str, bytes] | None = None,
           manifest: dict | None = None) -> Path:
    """A release of the bundle directory ``src`` packed by hand: every file under it (listed or not)
    plus ``extra`` files, the manifest (``manifest`` replacing it) last, as mathlas-build packs."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        entries = {p.relative_to(src).as_posix(): p.read_bytes() for p in sorted(src.rglob("*"))
                   if p.is_file() and p.name != fmt.MANIFEST}
        entries.update(extra or {})
        data = json.dumps(manifest).encode() if manifest is not None else (src / fmt.MANIFEST).read_bytes()
        for rel, body in [*sorted(entries.items()), (fmt.MANIFEST, data)]:
            info = tarfile.TarInfo(f"{top}/{rel}")
            info.size, info.mode = len(body), 0o644
            tar.addfile(info, io.BytesIO(body))
    return _write_zst(path, buf.getvalue())


# ----------------------------------------------------------------------------------- 6: zstd bombs

def _member_bomb(tmp_path: Path) -> Path:
    """One member announcing and holding 64 MiB of zeros (a few KB compressed)."""
    path = tmp_path / "bomb" / "informal-1.0.0.tar.zst"
    path.parent.mkdir()
    with open(path, "wb") as raw, zstandard.ZstdCompressor(level=3).stream_writer(raw, closefd=False) as z, \
            tarfile.open(fileobj=z, mode="w|") as tar:  # type: ignore[call-overload]
        top = tarfile.TarInfo("informal-1.0.0")
        top.type, top.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(top)
        info = tarfile.TarInfo("informal-1.0.0/meta/documents.parquet")
        info.size, info.mode = BOMB, 0o644
        tar.addfile(info, _Zeros(BOMB))
    write_sidecar(path)
    return path


def _trailing_bomb(tmp_path: Path) -> Path:
    """A tar with nothing announced in it, then 64 MiB of zeros after its end, in the same stream."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        top = tarfile.TarInfo("informal-1.0.0")
        top.type = tarfile.DIRTYPE
        tar.addfile(top)
    (tmp_path / "bomb").mkdir()
    return _write_zst(tmp_path / "bomb" / "informal-1.0.0.tar.zst", buf.getvalue(), BOMB)


def _release_then_bomb(tmp_path: Path) -> Path:
    """A real release, its manifest and all, followed by 64 MiB of zeros."""
    archive, _ = pack(make_bundle(tmp_path / "src"), tmp_path / "dist")
    (tmp_path / "bomb").mkdir()
    return _write_zst(tmp_path / "bomb" / archive.name, _tar_bytes(archive), BOMB)


_INSTALL_AND_MEASURE = """
import resource, sys
from mathlas.releases import install as inst
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    inst.install(sys.argv[1], quiet=True)
    print("installed")
except Exception as e:
    print(f"{type(e).__name__}: {e}")
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)  # MiB
"""


@pytest.mark.parametrize("make, refusal", [
    (_member_bomb, "entries announce more than 8,388,608 bytes"),
    (_trailing_bomb, "unpacks to more than 8,388,608 bytes"),
    (_release_then_bomb, "unpacks to more than its manifest declares"),
])
def test_a_zstd_bomb_is_refused_in_bounded_memory_and_leaves_nothing(tmp_path, monkeypatch, make, refusal):
    archive = make(tmp_path)
    assert archive.stat().st_size < 64 << 10  # 64 MiB of zeros: a few KB
    monkeypatch.setenv("MATHLAS_MAX_UNPACKED", str(CAP))
    p = subprocess.run([sys.executable, "-c", _INSTALL_AND_MEASURE, str(archive)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    message, grew = p.stdout.strip().splitlines()
    assert message.startswith("InstallError: ") and refusal in message and "nothing was installed" in message
    assert int(grew) < 40, f"the install grew by {grew} MiB of memory"  # unbounded: 64 MiB and more
    assert leftovers() == []


def test_the_unpacked_size_rule(monkeypatch):
    monkeypatch.delenv("MATHLAS_MAX_UNPACKED", raising=False)
    assert archive_mod.unpack_limit(1_000) == archive_mod.MIN_UNPACKED_ALLOWANCE
    assert archive_mod.unpack_limit(1 << 30) == archive_mod.MAX_RATIO << 30
    assert archive_mod.unpack_limit(1 << 40) == archive_mod.MAX_UNPACKED_BYTES
    monkeypatch.setenv("MATHLAS_MAX_UNPACKED", "2G")
    assert archive_mod.unpack_limit(1_000) == 2 << 30
    monkeypatch.setenv("MATHLAS_MAX_UNPACKED", "lots")
    with pytest.raises(InstallError, match="MATHLAS_MAX_UNPACKED"):
        archive_mod.unpack_limit(1_000)


def test_a_release_in_several_zstd_frames_still_installs(tmp_path):
    # pzstd writes one frame per block; the bounded decompressor must carry on across frames
    archive, _ = pack(make_bundle(tmp_path / "src"), tmp_path / "dist")
    tar = _tar_bytes(archive)
    cut = [0, 700, 701, len(tar) // 2, len(tar)]  # frames of 700, 1 and thousands of bytes
    frames = b"".join(zstandard.ZstdCompressor(write_checksum=True).compress(tar[a:b]) for a, b in zip(cut, cut[1:]))
    (tmp_path / "frames").mkdir()
    multi = tmp_path / "frames" / archive.name
    multi.write_bytes(frames)
    write_sidecar(multi)
    assert verify(inst.install(multi, quiet=True)).name == "informal"
    truncated = tmp_path / "frames" / "informal-1.0.1.tar.zst"
    truncated.write_bytes(frames[:-3])
    write_sidecar(truncated)
    with pytest.raises(InstallError, match="truncated or corrupt"):
        inst.install(truncated, quiet=True)


# --------------------------------------------------------------- 7: the files a bundle may hold

def _arrow_with(table, path: Path) -> None:
    import pyarrow as pa

    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as out:
        out.write_table(table)


def test_an_unlisted_arrow_copy_fails_verify_and_is_never_read(tiny_bundle_dir, tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    import mathlas

    b = tmp_path / "tiny"
    shutil.copytree(tiny_bundle_dir, b)
    table = pq.read_table(b / fmt.META)
    doc_id, body = table.column("id")[0].as_py(), table.column("body")[0].as_py()
    altered = table.set_column(table.schema.get_field_index("body"), "body",
                               pa.array(["ALTERED: every ring is a field"] + table.column("body").to_pylist()[1:]))
    _arrow_with(altered, b / fmt.META_ARROW)  # not in the manifest
    with pytest.raises(BundleCorruptError, match="meta/documents.arrow is not in the manifest"):
        verify(b)
    assert run_cli("index", "verify", str(b)) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [f"mathlas: bundle tiny: file {fmt.META_ARROW} is not in the manifest (a bundle holds exactly the "
                   "files its manifest lists); delete it or reinstall the bundle"]
    opened = mathlas.open_bundle(b, shared=False)
    assert opened.meta_file == fmt.META and opened.get(doc_id).body == body  # the runtime reads what is verified


def test_an_archive_with_an_unlisted_arrow_copy_is_refused(tmp_path):
    src = make_bundle(tmp_path / "src")
    archive = _retar(src, tmp_path / "evil.tar.zst", extra={fmt.META_ARROW: b"ARROW1" + bytes(100)})
    with pytest.raises(InstallError, match="meta/documents.arrow is not in its manifest") as err:
        inst.install(archive, quiet=True)
    assert "\n" not in str(err.value) and "nothing was installed" in str(err.value)
    assert leftovers() == []


@pytest.mark.parametrize("small, blob, refusal", [
    (1_000, 0, "junk/00000.txt is not in its manifest"),
    (0, 4 << 20, "vectors/blob.bin is not in its manifest"),
    (0, 256 << 20, "its entries announce more than 67,108,864 bytes"),  # refused before a byte of it is written
])
def test_unlisted_files_are_refused_and_leave_nothing(tmp_path, monkeypatch, small, blob, refusal):
    monkeypatch.delenv("MATHLAS_MAX_UNPACKED", raising=False)
    src = make_bundle(tmp_path / "src")
    extra = {f"junk/{i:05d}.txt": b"x" for i in range(small)}
    if blob:
        extra["vectors/blob.bin"] = bytes(blob)
    archive = _retar(src, tmp_path / "junk.tar.zst", extra=extra)
    del extra
    with pytest.raises(InstallError, match=refusal) as err:
        inst.install(archive, quiet=True)
    assert "\n" not in str(err.value) and leftovers() == []


@pytest.mark.parametrize("where", ["absolute", "climbing"])
def test_a_manifest_naming_files_outside_the_bundle_is_refused(tmp_path, where):
    src = make_bundle(tmp_path / "src")
    # a file outside, with the size and sha256 the manifest claims: before the rule, it installed
    outside = inst.bundles_dir().parent / "outside.txt"
    outside.parent.mkdir(parents=True, exist_ok=True)
    outside.write_text("not part of any bundle\n")
    rel = str(outside) if where == "absolute" else "../../../../outside.txt"
    manifest = json.loads((src / fmt.MANIFEST).read_text())
    manifest["files"][rel] = {"size": outside.stat().st_size, "sha256": fmt.sha256_file(outside)}
    archive = _retar(src, tmp_path / "outside.tar.zst", manifest=manifest)
    with pytest.raises(InstallError, match="the manifest lists") as err:
        inst.install(archive, quiet=True)
    assert rel in str(err.value) and leftovers() == []
    # and a bundle directory with such a manifest does not verify
    write_manifest(src, fmt.Manifest.from_dict(manifest))
    with pytest.raises(BundleCorruptError, match="the manifest lists") as err:
        verify(src, checksums=False)
    assert rel in str(err.value)


def test_a_listed_file_that_is_a_link_out_of_the_bundle_fails_verify(tmp_path):
    src = make_bundle(tmp_path / "src")
    elsewhere = tmp_path / "elsewhere.bin"
    shutil.move(src / "bm25" / "0001.idx", elsewhere)
    (src / "bm25" / "0001.idx").symlink_to(elsewhere)
    with pytest.raises(BundleCorruptError, match="bm25/0001.idx leads outside the bundle"):
        verify(src, checksums=False)


def test_a_document_count_off_by_one_is_refused_at_install_and_verify(tmp_path):
    src = make_bundle(tmp_path / "src", count=4)  # the tables hold 3 documents
    archive = _retar(src, tmp_path / "informal-1.0.0.tar.zst")
    with pytest.raises(InstallError, match="meta/documents.parquet holds 3 documents, the manifest says 4"):
        inst.install(archive, quiet=True)
    assert leftovers() == []
    _, found = fmt.problems(src)
    assert found == [
        f"bundle src: {rel} holds {what}, the manifest says {says}; the bundle is damaged or its manifest is wrong: "
        "reinstall or rebuild it" for rel, what, says in [
            (fmt.META, "3 documents", "4"), (fmt.FLOAT_VECTORS, "shape (3, 8)", "shape (4, 8)"),
            (fmt.FLOAT_SCALES, "shape (3,)", "shape (4,)"), (fmt.BINARY_INDEX, "3 documents", "4"),
            (fmt.BM25_DIR + "/meta.json", "3 documents", "4")]]


def test_a_real_bundle_with_a_wrong_count_fails_verify(tiny_bundle_dir, tmp_path):
    b = tmp_path / "tiny"
    shutil.copytree(tiny_bundle_dir, b)
    m = read_manifest(b)
    m.count += 1
    write_manifest(b, m)
    with pytest.raises(BundleCorruptError, match=f"{fmt.META} holds {m.count - 1:,} documents"):
        verify(b)


def test_verify_says_every_problem_once_per_line(tmp_path, capsys):
    src = make_bundle(tmp_path / "src")
    (src / "stray.txt").write_text("x")
    (src / "bm25" / "meta.json").write_text('{"segments": [{"segment_id": "0001", "max_doc": 4, "deletes": null}]}\n')
    for i in range(12):
        (src / "meta" / f"junk{i:02d}").write_text("x")
    assert run_cli("index", "verify", str(src)) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "mathlas: bundle src: file bm25/meta.json does not match its sha256; reinstall the bundle",
        *[f"mathlas: bundle src: file meta/junk{i:02d} is not in the manifest (a bundle holds exactly the files its "
          "manifest lists); delete it or reinstall the bundle" for i in range(10)],
        "mathlas: bundle src: 3 more files are not in the manifest; delete them or reinstall the bundle"]


def test_a_bundle_that_lists_its_arrow_copy_still_verifies_and_uses_it(tmp_path):
    import pyarrow.parquet as pq

    src = make_bundle(tmp_path / "src")
    _arrow_with(pq.read_table(src / fmt.META), src / fmt.META_ARROW)
    m = read_manifest(src)
    m.files = file_entries(src)
    write_manifest(src, m)
    assert verify(src).files[fmt.META_ARROW].size > 0
    archive, _ = pack(src, tmp_path / "dist")
    assert (inst.install(archive, quiet=True) / fmt.META_ARROW).is_file()


def test_the_tar_data_filter_stands_behind_the_member_policy(tmp_path, monkeypatch):
    # were the member policy to let '..' through, tarfile's data filter still refuses the entry
    if not hasattr(tarfile, "data_filter"):
        pytest.skip("tarfile.data_filter needs Python 3.11.4+")
    from pathlib import PurePosixPath

    monkeypatch.setattr(archive_mod, "_member_parts",
                        lambda m, label: tuple(p for p in PurePosixPath(m.name).parts if p not in ("", ".")))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, kind in [("informal-1.0.0", tarfile.DIRTYPE), ("informal-1.0.0/../../../evil", tarfile.REGTYPE)]:
            info = tarfile.TarInfo(name)
            info.type, info.size = kind, 1 if kind == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(b"x") if kind == tarfile.REGTYPE else None)
    archive = _write_zst(tmp_path / "climb.tar.zst", buf.getvalue())
    with pytest.raises(InstallError, match="outside the destination|is outside"):
        inst.install(archive, quiet=True)
    assert not (inst.bundles_dir() / "evil").exists() and not (inst.bundles_dir().parent / "evil").exists()
    assert leftovers() == []
