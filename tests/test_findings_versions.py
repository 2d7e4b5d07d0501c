"""A reader that caches the findings store sees every version of the file another process writes.

``remove`` rewrites the file through a temp file and a rename, and a filesystem may hand that temp
file the inode number the reader had cached; a rewrite in place keeps the inode. Either way the
reader must not take the new file for the old one grown by appends (issue 31, item 1: a running
``mathlas serve`` served removed findings and answered 404 for stored ones).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# A writer in another process, driven line by line on stdin: "add TEXT", "remove ID", "quit".
WRITER = textwrap.dedent("""
    import sys
    from mathlas.findings.store import FindingsStore
    store = FindingsStore(sys.argv[1])
    for line in sys.stdin:
        op, _, arg = line.rstrip("\\n").partition(" ")
        if op == "add":
            f, _ = store.add(arg, "https://example.org/" + str(len(arg)))
            print(f.id, flush=True)
        elif op == "remove":
            store.remove(arg)
            print("removed", flush=True)
        else:
            break
""")


class Writer:
    def __init__(self, root: Path):
        self.proc = subprocess.Popen([sys.executable, "-c", WRITER, str(root)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def _do(self, line: str) -> str:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        out = self.proc.stdout.readline().strip()
        assert out, f"the writer died on {line!r}"
        return out

    def add(self, statement: str) -> str:
        return self._do("add " + statement)

    def remove(self, fid: str) -> None:
        assert self._do("remove " + fid) == "removed"

    def close(self) -> None:
        self.proc.stdin.write("quit\n")
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0


def statement(i: int) -> str:
    return f"Statement number {i}: every widget of order {i} is a gadget of rank {i % 7}."


def on_disk(root: Path) -> list[str]:
    return [json.loads(x)["id"] for x in (root / "findings.jsonl").read_text().splitlines() if x.strip()]


def test_a_cached_reader_follows_removes_rewrites_and_appends_of_another_process(tmp_path):
    from mathlas.findings.store import FindingsStore

    root = tmp_path / "findings"
    reader = FindingsStore(root)  # one long-lived reader, as in mathlas serve or mathlas mcp
    writer = Writer(root)
    try:
        ids = [writer.add(statement(i)) for i in range(20)]
        assert [f.id for f in reader.all()] == ids
        n = 20
        # the sequence, then more rounds of it: remove two, add three, read
        for round_ in range(12):
            a, b = ids[round_ % len(ids)], ids[(round_ * 5 + 3) % len(ids)]
            for gone in dict.fromkeys((a, b)):
                writer.remove(gone)
                ids.remove(gone)
            for _ in range(3):
                ids.append(writer.add(statement(n)))
                n += 1
            assert on_disk(root) == ids
            seen = [f.id for f in reader.all()]
            assert seen == ids, f"round {round_}: the reader has {len(seen)} findings, the file {len(ids)}"
            for gone in (a, b):
                with pytest.raises(Exception, match="no finding with id"):
                    reader.get(gone)
            assert all(reader.get(fid).id == fid for fid in ids)
    finally:
        writer.close()


def test_a_rewrite_in_place_that_grows_the_file_is_read_whole(tmp_path):
    """Same inode, a larger file, other bytes before the cached end: not an append."""
    from mathlas.findings.store import FindingsStore

    root = tmp_path / "findings"
    store = FindingsStore(root)
    first = [store.add(statement(i), "https://example.org/a")[0].id for i in range(3)]
    reader = FindingsStore(root)
    assert [f.id for f in reader.all()] == first
    path = root / "findings.jsonl"
    ino = path.stat().st_ino
    lines = path.read_bytes().splitlines(keepends=True)
    other = FindingsStore(tmp_path / "other")
    extra = [other.add(statement(100 + i), "https://example.org/b")[0] for i in range(2)]
    rewritten = lines[2] + b"".join(json.dumps(f.to_json()).encode() + b"\n" for f in extra)
    rewritten += b" " * max(0, len(b"".join(lines)) - len(rewritten) + 1)  # larger than before
    with open(path, "r+b") as fh:  # what an editor that writes in place does
        fh.write(rewritten)
        fh.truncate()
    assert path.stat().st_ino == ino and path.stat().st_size > len(b"".join(lines))
    assert [f.id for f in reader.all()] == [first[2], *(f.id for f in extra)]


def test_the_descriptor_of_the_cached_version_is_held(tmp_path):
    """While the reader caches a version, its inode number cannot go to the next temp file."""
    from mathlas.findings.store import FindingsStore

    if os.name == "nt":
        pytest.skip("Windows cannot replace a file that is held open")
    root = tmp_path / "findings"
    store = FindingsStore(root)
    ids = [store.add(statement(i), "https://example.org/a")[0].id for i in range(4)]
    reader = FindingsStore(root)
    reader.all()
    cached = (root / "findings.jsonl").stat().st_ino
    for fid in ids[:3]:  # each remove makes a temp file; none may get the cached inode
        store.remove(fid)
        assert (root / "findings.jsonl").stat().st_ino != cached
    assert [f.id for f in reader.all()] == ids[3:]


# ------------------------------------------------------------------------------ the server of the issue

@pytest.mark.slow
def test_a_running_server_serves_the_findings_on_disk(tiny_bundle_dir, tmp_path):
    """mathlas serve + findings added, read, removed and added by other processes (the issue's steps)."""
    from test_web_serve import WebServer, assert_clean

    root = tmp_path / "findings"
    server = WebServer("--bundle", str(tiny_bundle_dir),
                       env={"MATHLAS_DATA_DIR": str(tmp_path), "MATHLAS_FORMAL_BUNDLE": str(tmp_path / "none")})
    writer = Writer(root)
    try:
        ids = [writer.add(statement(i)) for i in range(20)]
        text = dict(zip(ids, map(statement, range(20))))
        n = 20
        for round_ in range(6):  # the steps, repeated: whether an inode comes back is the filesystem's choice
            a, b = ids[0], ids[1]
            assert server.get(f"/api/doc/{a}").status_code == 200  # the server caches this version
            assert server.get("/api/search", params={"q": text[a], "k": 3}).json()["hits"][0]["id"] == a
            writer.remove(a)
            writer.remove(b)
            for _ in range(3):
                ids.append(writer.add(statement(n)))
                text[ids[-1]] = statement(n)
                n += 1
            ids = ids[2:]
            assert on_disk(root) == ids
            assert server.get(f"/api/doc/{a}").status_code == 404, f"round {round_}: a removed finding is served"
            assert server.get(f"/api/doc/{b}").status_code == 404, f"round {round_}: a removed finding is served"
            missing = [fid for fid in ids if server.get(f"/api/doc/{fid}").status_code != 200]
            assert missing == [], f"round {round_}: stored findings answer 404"
            hits = server.get("/api/search", params={"q": text[a], "k": 5}).json()["hits"]
            assert a not in [h["id"] for h in hits]
    finally:
        writer.close()
        server.stop()
    assert_clean(server)
