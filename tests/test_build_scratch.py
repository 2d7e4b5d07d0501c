"""A build's temporary folders: a later build beside a killed one removes what it left, and only that."""
from __future__ import annotations

import os
import subprocess
import sys

from mathlas_build import scratch


def _dead_pid() -> int:
    """The pid of a process that has ended (waited for, so not a zombie)."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_sweep_removes_only_a_stopped_process_folders(tmp_path, capsys):
    host = scratch._host()
    dead = tmp_path / f".b-0.1.0.tmp-{host}-{_dead_pid()}-abc"
    live = tmp_path / f".b-0.1.0.tmp-{host}-{os.getpid()}-def"
    parent_alive = tmp_path / f".b-0.1.0.tmp-{host}-{os.getppid()}-ghi"
    other_host = tmp_path / f".b-0.1.0.tmp-{host}x-{_dead_pid()}-jkl"
    other_bundle = tmp_path / f".c-0.1.0.tmp-{host}-{_dead_pid()}-mno"
    old_style = tmp_path / ".b-0.1.0.tmp-k3j4h5"          # mkdtemp's name before: whose it is is unknown
    for d in (dead, live, parent_alive, other_host, other_bundle, old_style):
        d.mkdir()
        (d / "part").write_text("x")
    (tmp_path / f".b-0.1.0.tmp-{host}-{_dead_pid()}-file").write_text("a file, not a folder")
    removed = scratch.sweep(tmp_path, ".b-0.1.0.tmp-")
    assert removed == [dead] and not dead.exists()
    assert all(d.exists() for d in (live, parent_alive, other_host, other_bundle, old_style))
    assert f"removed 1 temporary folder(s) a stopped build left in {tmp_path}: {dead.name}" in capsys.readouterr().err
    assert scratch.sweep(tmp_path, ".b-0.1.0.tmp-", quiet=True) == []


def test_make_names_what_sweep_reads(tmp_path):
    d = scratch.make(tmp_path, ".x.tmp-")
    assert d.is_dir() and d.name.startswith(f".x.tmp-{scratch._host()}-{os.getpid()}-")
    assert scratch.sweep(tmp_path, ".x.tmp-", quiet=True) == [] and d.exists()   # this process: alive


def test_a_build_removes_what_a_killed_build_of_it_left(encoder_dir, tmp_path, capsys):
    # a real build of a two-document corpus, beside what a SIGKILLed build of the same bundle left
    # (.NAME.tmp-HOST-PID-*: its pid no longer runs) and what a live one is writing (this process' pid)
    from mathlas_build.cli import main

    (tmp_path / "toy.jsonl").write_text('{"id": "a", "statement": "every group of prime order is cyclic"}\n'
                                        '{"id": "b", "statement": "a compact metric space is complete"}\n',
                                        encoding="utf-8")
    recipe = tmp_path / "toy.toml"
    recipe.write_text(f'name = "toy"\nversion = "1"\n[encoder]\npath = "{encoder_dir.as_posix()}"\n[[sources]]\n'
                      f'reader = "generic"\npath = "{(tmp_path / "toy.jsonl").as_posix()}"\n'
                      'options = { source = "toy", license = "CC0" }\n', encoding="utf-8")
    out = tmp_path / "bundles" / "toy-1"
    out.parent.mkdir()
    stale = out.parent / f".toy-1.tmp-{scratch._host()}-{_dead_pid()}-zz"
    stale.mkdir()
    (stale / "documents.parquet").write_text("half written", encoding="utf-8")
    live = out.parent / f".toy-1.tmp-{scratch._host()}-{os.getpid()}-yy"
    live.mkdir()
    assert main([str(recipe), "--out", str(out), "--no-cache"]) == 0
    err = capsys.readouterr().err
    assert (out / "manifest.json").is_file() and not stale.exists() and live.exists()
    assert f"removed 1 temporary folder(s) a stopped build left in {out.parent}: {stale.name}" in err
    assert sorted(p.name for p in out.parent.iterdir()) == sorted(["toy-1", live.name])
